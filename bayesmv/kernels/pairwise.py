"""Scalar pairwise kernels, written once for NumPy and JAX.

Every kernel takes ``X`` of shape ``(n, d)`` and optionally ``Y`` of shape ``(m, d)`` and
returns the ``(n, m)`` Gram matrix in the inputs' floating dtype (float32 stays float32,
float64 stays float64). Parameters and defaults follow ``sklearn.metrics.pairwise``:
``gamma=None`` means ``1 / n_features`` for the polynomial, RBF and Laplacian kernels.

The array namespace follows the inputs (as scikit-learn's array-API support does): JAX
arrays and tracers are computed with ``jax.numpy`` (pure, jit-able, vmappable; ``gamma``,
``degree`` and ``coef0`` are plain numbers), NumPy arrays and nested lists with NumPy, so
host-side solvers get their Gram matrices eagerly with nothing to compile.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "KERNELS",
    "Kernel",
    "additive_chi2_kernel",
    "chi2_kernel",
    "cosine_kernel",
    "get_kernel",
    "jaccard_kernel",
    "kernel_matvec",
    "laplacian_kernel",
    "linear_kernel",
    "pairwise_kernel",
    "polynomial_kernel",
    "rbf_kernel",
    "squared_euclidean_distances",
]


def _is_traced(A):
    return isinstance(A, jax.core.Tracer)


def array_namespace(*arrays):
    """Return the array namespace of the arguments: ``jax.numpy`` or ``numpy``.

    ``jax.numpy`` if any argument is a JAX array or tracer, else ``numpy`` (NumPy arrays,
    nested lists, scalars and ``None``). The kernels of this package use it to compute in the
    namespace of their inputs.

    Parameters
    ----------
    *arrays : array-like or None
        The arrays to inspect.

    Returns
    -------
    xp : module
        ``jax.numpy`` or ``numpy``.

    Examples
    --------
    >>> import numpy as np
    >>> import jax.numpy as jnp
    >>> from bayesmv.kernels import array_namespace
    >>> array_namespace(np.ones(2), None).__name__
    'numpy'
    >>> array_namespace(np.ones(2), jnp.ones(2)).__name__
    'jax.numpy'
    """
    return jnp if any(isinstance(a, jax.Array) for a in arrays) else np


def _check_input(A, name):
    """Shape/dtype checks (static, also under ``jit``) and a finiteness check on concrete inputs,
    so that bad data gives a ``ValueError``/``TypeError`` naming ``X``/``Y``, not a NaN Gram."""
    if not isinstance(A, jax.Array):
        try:
            arr = np.asarray(A)
        except Exception as exc:  # ragged nested lists and the like
            raise ValueError(f"{name} could not be converted to an array: {exc}") from exc
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{name} has dtype {arr.dtype}; kernels need a real numeric array")
        A = arr
    if A.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {tuple(A.shape)}")
    if not _is_traced(A) and A.size and not bool(np.isfinite(np.asarray(A)).all()):
        raise ValueError(f"{name} contains NaN or inf")
    return A


def _as_pair(X, Y):
    """Checked ``(X, Y, xp)``: ``Y = X`` when ``None``, a common floating dtype, the namespace ``xp``."""
    xp = array_namespace(X, Y)
    X = xp.asarray(_check_input(X, "X"))
    if not xp.issubdtype(X.dtype, xp.floating):
        X = X.astype(jnp.result_type(float))
    if Y is None:
        return X, X, xp
    Y = xp.asarray(_check_input(Y, "Y"), dtype=X.dtype)
    if Y.shape[1] != X.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}; they must match")
    return X, Y, xp


def _default_gamma(gamma, X):
    if gamma is None:
        return 1.0 / X.shape[1]
    if isinstance(gamma, (int, float, np.number)) and not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(f"gamma must be a finite number > 0, got {gamma!r}")
    return gamma


def squared_euclidean_distances(X, Y=None):
    """Squared Euclidean distances between the rows of ``X`` and ``Y``.

    Entry ``(i, j)`` is ``||x_i - y_j||^2``, computed via the expansion
    ``|x|^2 + |y|^2 - 2 x.y`` and clipped at 0.

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
        Input samples: a NumPy or JAX array, or a nested list.
    Y : array-like of shape (n_samples_Y, n_features), default=None
        Second set of samples; ``None`` uses ``Y = X``.

    Returns
    -------
    D : ndarray of shape (n_samples_X, n_samples_Y)
        The squared distances, in the inputs' floating dtype; a ``jax.Array`` for JAX inputs,
        else a ``numpy.ndarray``.

    Raises
    ------
    ValueError
        If ``X`` or ``Y`` is not 2-D, cannot be converted to an array, contains NaN or inf, or
        if their numbers of features differ.
    TypeError
        If ``X`` or ``Y`` does not have a real numeric dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import squared_euclidean_distances
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    >>> squared_euclidean_distances(X)
    array([[0., 1., 5.],
           [1., 0., 2.],
           [5., 2., 0.]])
    """
    X, Y, xp = _as_pair(X, Y)
    xx = xp.sum(X * X, axis=1)[:, None]
    yy = xp.sum(Y * Y, axis=1)[None, :]
    return xp.maximum(xx + yy - 2.0 * X @ Y.T, 0.0)


def linear_kernel(X, Y=None):
    """Linear kernel ``k(x, y) = x.y``.

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
        Input samples: a NumPy or JAX array, or a nested list.
    Y : array-like of shape (n_samples_Y, n_features), default=None
        Second set of samples; ``None`` uses ``Y = X``.

    Returns
    -------
    K : ndarray of shape (n_samples_X, n_samples_Y)
        The Gram matrix, in the inputs' floating dtype; a ``jax.Array`` for JAX
        inputs, else a ``numpy.ndarray``.

    Raises
    ------
    ValueError
        If ``X`` or ``Y`` is not 2-D, cannot be converted to an array, contains NaN or inf, or
        if their numbers of features differ.
    TypeError
        If ``X`` or ``Y`` does not have a real numeric dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import linear_kernel
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    >>> linear_kernel(X)
    array([[1., 1., 0.],
           [1., 2., 2.],
           [0., 2., 4.]])
    """
    X, Y, _ = _as_pair(X, Y)
    return X @ Y.T


def polynomial_kernel(X, Y=None, degree=3, gamma=None, coef0=1.0):
    """Polynomial kernel ``k(x, y) = (gamma x.y + coef0)^degree``.

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
        Input samples: a NumPy or JAX array, or a nested list.
    Y : array-like of shape (n_samples_Y, n_features), default=None
        Second set of samples; ``None`` uses ``Y = X``.
    degree : float, default=3
        Exponent of the kernel.
    gamma : float, default=None
        Scale of the inner product; ``None`` means ``1 / n_features``.
    coef0 : float, default=1.0
        Constant added to the scaled inner product.

    Returns
    -------
    K : ndarray of shape (n_samples_X, n_samples_Y)
        The Gram matrix, in the inputs' floating dtype; a ``jax.Array`` for JAX
        inputs, else a ``numpy.ndarray``.

    Raises
    ------
    ValueError
        If ``X`` or ``Y`` is not 2-D, cannot be converted to an array or contains NaN or inf,
        if their numbers of features differ, or if ``gamma`` is not a finite number > 0.
    TypeError
        If ``X`` or ``Y`` does not have a real numeric dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import polynomial_kernel
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    >>> polynomial_kernel(X, degree=2)  # gamma = 1 / 2
    array([[2.25, 2.25, 1.  ],
           [2.25, 4.  , 4.  ],
           [1.  , 4.  , 9.  ]])
    """
    X, Y, _ = _as_pair(X, Y)
    return (_default_gamma(gamma, X) * (X @ Y.T) + coef0) ** degree


def rbf_kernel(X, Y=None, gamma=None):
    """Gaussian (RBF) kernel ``k(x, y) = exp(-gamma ||x - y||^2)``.

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
        Input samples: a NumPy or JAX array, or a nested list.
    Y : array-like of shape (n_samples_Y, n_features), default=None
        Second set of samples; ``None`` uses ``Y = X``.
    gamma : float, default=None
        Inverse squared length scale; ``None`` means ``1 / n_features``. For a bandwidth
        ``sigma``, ``gamma = 1 / (2 sigma^2)`` (see :func:`gamma_from_bandwidth`).

    Returns
    -------
    K : ndarray of shape (n_samples_X, n_samples_Y)
        The Gram matrix, in the inputs' floating dtype; a ``jax.Array`` for JAX
        inputs, else a ``numpy.ndarray``.

    Raises
    ------
    ValueError
        If ``X`` or ``Y`` is not 2-D, cannot be converted to an array or contains NaN or inf,
        if their numbers of features differ, or if ``gamma`` is not a finite number > 0.
    TypeError
        If ``X`` or ``Y`` does not have a real numeric dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import rbf_kernel
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    >>> rbf_kernel(X, gamma=0.5).round(3)
    array([[1.   , 0.607, 0.082],
           [0.607, 1.   , 0.368],
           [0.082, 0.368, 1.   ]])
    """
    X, Y, xp = _as_pair(X, Y)
    return xp.exp(-_default_gamma(gamma, X) * squared_euclidean_distances(X, Y))


def _l1_distances(X, Y, xp):
    return xp.sum(xp.abs(X[:, None, :] - Y[None, :, :]), axis=-1)


def laplacian_kernel(X, Y=None, gamma=None):
    """Laplacian kernel ``k(x, y) = exp(-gamma ||x - y||_1)``.

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
        Input samples: a NumPy or JAX array, or a nested list.
    Y : array-like of shape (n_samples_Y, n_features), default=None
        Second set of samples; ``None`` uses ``Y = X``.
    gamma : float, default=None
        Inverse length scale of the L1 distance; ``None`` means ``1 / n_features``.

    Returns
    -------
    K : ndarray of shape (n_samples_X, n_samples_Y)
        The Gram matrix, in the inputs' floating dtype; a ``jax.Array`` for JAX
        inputs, else a ``numpy.ndarray``.

    Raises
    ------
    ValueError
        If ``X`` or ``Y`` is not 2-D, cannot be converted to an array or contains NaN or inf,
        if their numbers of features differ, or if ``gamma`` is not a finite number > 0.
    TypeError
        If ``X`` or ``Y`` does not have a real numeric dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import laplacian_kernel
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    >>> laplacian_kernel(X).round(3)  # gamma = 1 / 2
    array([[1.   , 0.607, 0.223],
           [0.607, 1.   , 0.368],
           [0.223, 0.368, 1.   ]])
    """
    X, Y, xp = _as_pair(X, Y)
    return xp.exp(-_default_gamma(gamma, X) * _l1_distances(X, Y, xp))


def additive_chi2_kernel(X, Y=None):
    """Additive chi-squared kernel ``k(x, y) = -sum_i (x_i - y_i)^2 / (x_i + y_i)``.

    For non-negative data; terms with ``x_i + y_i = 0`` (0/0) count as 0.

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
        Non-negative input samples: a NumPy or JAX array, or a nested list.
    Y : array-like of shape (n_samples_Y, n_features), default=None
        Second set of non-negative samples; ``None`` uses ``Y = X``.

    Returns
    -------
    K : ndarray of shape (n_samples_X, n_samples_Y)
        The Gram matrix, in the inputs' floating dtype; a ``jax.Array`` for JAX
        inputs, else a ``numpy.ndarray``.

    Raises
    ------
    ValueError
        If ``X`` or ``Y`` is not 2-D, cannot be converted to an array, contains NaN or inf, or
        if their numbers of features differ.
    TypeError
        If ``X`` or ``Y`` does not have a real numeric dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import additive_chi2_kernel
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    >>> additive_chi2_kernel(X).round(3)
    array([[-0.   , -1.   , -3.   ],
           [-1.   , -0.   , -1.333],
           [-3.   , -1.333, -0.   ]])
    """
    X, Y, xp = _as_pair(X, Y)
    diff = X[:, None, :] - Y[None, :, :]
    total = X[:, None, :] + Y[None, :, :]
    safe = xp.where(total > 0, total, 1.0)
    return -xp.sum(xp.where(total > 0, diff * diff / safe, 0.0), axis=-1)


def chi2_kernel(X, Y=None, gamma=1.0):
    """Exponential chi-squared kernel ``k(x, y) = exp(gamma * additive_chi2(x, y))``.

    ``additive_chi2`` is :func:`additive_chi2_kernel`; for non-negative data.

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
        Non-negative input samples: a NumPy or JAX array, or a nested list.
    Y : array-like of shape (n_samples_Y, n_features), default=None
        Second set of non-negative samples; ``None`` uses ``Y = X``.
    gamma : float, default=1.0
        Scale of the additive chi-squared kernel in the exponent.

    Returns
    -------
    K : ndarray of shape (n_samples_X, n_samples_Y)
        The Gram matrix, in the inputs' floating dtype; a ``jax.Array`` for JAX
        inputs, else a ``numpy.ndarray``.

    Raises
    ------
    ValueError
        If ``X`` or ``Y`` is not 2-D, cannot be converted to an array or contains NaN or inf,
        if their numbers of features differ, or if ``gamma`` is not a finite number > 0.
    TypeError
        If ``X`` or ``Y`` does not have a real numeric dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import chi2_kernel
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    >>> chi2_kernel(X).round(3)
    array([[1.   , 0.368, 0.05 ],
           [0.368, 1.   , 0.264],
           [0.05 , 0.264, 1.   ]])
    """
    _default_gamma(gamma, None)
    K = additive_chi2_kernel(X, Y)
    return array_namespace(K).exp(gamma * K)


def cosine_kernel(X, Y=None):
    """Cosine similarity ``k(x, y) = x.y / (|x| |y|)``.

    A zero vector has similarity 0 with every row (as in scikit-learn).

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
        Input samples: a NumPy or JAX array, or a nested list.
    Y : array-like of shape (n_samples_Y, n_features), default=None
        Second set of samples; ``None`` uses ``Y = X``.

    Returns
    -------
    K : ndarray of shape (n_samples_X, n_samples_Y)
        The Gram matrix, in the inputs' floating dtype; a ``jax.Array`` for JAX
        inputs, else a ``numpy.ndarray``.

    Raises
    ------
    ValueError
        If ``X`` or ``Y`` is not 2-D, cannot be converted to an array, contains NaN or inf, or
        if their numbers of features differ.
    TypeError
        If ``X`` or ``Y`` does not have a real numeric dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import cosine_kernel
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    >>> cosine_kernel(X).round(3)
    array([[1.   , 0.707, 0.   ],
           [0.707, 1.   , 0.707],
           [0.   , 0.707, 1.   ]])
    """
    X, Y, xp = _as_pair(X, Y)

    def unit(Z):
        norm = xp.linalg.norm(Z, axis=1, keepdims=True)
        return Z / xp.where(norm > 0, norm, 1.0)

    return unit(X) @ unit(Y).T


def jaccard_kernel(X, Y=None):
    """Jaccard (Tanimoto) similarity of binary rows: ``|x AND y| / |x OR y|``.

    Non-zero entries count as 1. Two all-zero rows have similarity 1 (``1 - scipy`` Jaccard
    distance), which keeps the Gram matrix positive semi-definite.

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
        Input samples, read as binary (non-zero is 1): a NumPy or JAX array, or a nested list.
    Y : array-like of shape (n_samples_Y, n_features), default=None
        Second set of samples, read as binary; ``None`` uses ``Y = X``.

    Returns
    -------
    K : ndarray of shape (n_samples_X, n_samples_Y)
        The Gram matrix, in the inputs' floating dtype; a ``jax.Array`` for JAX
        inputs, else a ``numpy.ndarray``.

    Raises
    ------
    ValueError
        If ``X`` or ``Y`` is not 2-D, cannot be converted to an array, contains NaN or inf, or
        if their numbers of features differ.
    TypeError
        If ``X`` or ``Y`` does not have a real numeric dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import jaccard_kernel
    >>> X = np.array([[1, 0, 1], [1, 1, 0], [0, 0, 0]])
    >>> jaccard_kernel(X).round(3)
    array([[1.   , 0.333, 0.   ],
           [0.333, 1.   , 0.   ],
           [0.   , 0.   , 1.   ]])
    """
    X, Y, xp = _as_pair(X, Y)
    Xb = (X != 0).astype(X.dtype)
    Yb = (Y != 0).astype(X.dtype)
    inter = Xb @ Yb.T
    union = xp.sum(Xb, 1)[:, None] + xp.sum(Yb, 1)[None, :] - inter
    return xp.where(union > 0, inter / xp.where(union > 0, union, 1.0), 1.0)


#: The scalar kernels by name, as accepted by ``kernel=`` and :func:`get_kernel`.
KERNELS: dict[str, Callable] = {
    "linear": linear_kernel,
    "poly": polynomial_kernel,
    "polynomial": polynomial_kernel,
    "rbf": rbf_kernel,
    "gaussian": rbf_kernel,
    "laplacian": laplacian_kernel,
    "additive_chi2": additive_chi2_kernel,
    "chi2": chi2_kernel,
    "cosine": cosine_kernel,
    "jaccard": jaccard_kernel,
}


@dataclass(frozen=True)
class Kernel:
    """A scalar kernel with bound parameters: ``Kernel(rbf_kernel, (("gamma", 0.5),))(X, Y)``.

    Hashable by value, so it can be a static argument of ``jax.jit`` without recompiling for
    every new but equal instance. Calling it, ``k(X, Y=None)``, gives the Gram matrix
    ``fn(X, Y, **dict(params))``. :func:`get_kernel` builds one from a name or a callable.

    Parameters
    ----------
    fn : callable
        The kernel function ``fn(X, Y, **params)``, returning the Gram matrix between the rows
        of ``X`` and ``Y`` (``X`` when ``Y`` is None).
    params : tuple of (str, object) pairs, default=()
        The bound parameters, as ``(name, value)`` pairs (sorted by name when built by
        :func:`get_kernel`).

    Attributes
    ----------
    name : str
        The kernel's registered name (``"rbf"``, ...), or its function's name.

    See Also
    --------
    get_kernel : A kernel with bound parameters, by name or callable.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import Kernel, rbf_kernel
    >>> k = Kernel(rbf_kernel, (("gamma", 0.5),))
    >>> k.name
    'rbf'
    >>> k(np.array([[0.0, 1.0], [1.0, 1.0]])).round(3)
    array([[1.   , 0.607],
           [0.607, 1.   ]])
    >>> k == Kernel(rbf_kernel, (("gamma", 0.5),))
    True
    """

    fn: Callable
    params: tuple = ()

    def __call__(self, X, Y=None):
        return self.fn(X, Y, **dict(self.params))

    @property
    def name(self) -> str:
        """The kernel's registered name (``"rbf"``, ...), or its function's name."""
        return next((k for k, v in KERNELS.items() if v is self.fn), getattr(self.fn, "__name__", "kernel"))


def get_kernel(kernel="rbf", **params) -> Kernel:
    """Return a scalar kernel with its parameters bound, as a callable ``k(X, Y=None)``.

    Parameters
    ----------
    kernel : str, callable or Kernel, default="rbf"
        A name in ``KERNELS`` (``"linear"``, ``"poly"``/``"polynomial"``,
        ``"rbf"``/``"gaussian"``, ``"laplacian"``, ``"additive_chi2"``, ``"chi2"``,
        ``"cosine"``, ``"jaccard"``), a callable ``f(X, Y, **params)``, or a :class:`Kernel`,
        whose bound parameters are updated by ``params``.
    **params
        Parameters of the kernel (``gamma``, ``degree``, ``coef0``, ...), bound by keyword.

    Returns
    -------
    kernel : Kernel
        The bound kernel; hashable by value, so it can be a static argument of ``jax.jit``.

    Raises
    ------
    ValueError
        If ``kernel`` is neither a known name nor a callable; the message names the valid
        choices.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import get_kernel
    >>> k = get_kernel("gaussian", gamma=0.5)
    >>> k.name, k.params
    ('rbf', (('gamma', 0.5),))
    >>> k(np.array([[0.0, 1.0], [1.0, 1.0]])).round(3)
    array([[1.   , 0.607],
           [0.607, 1.   ]])
    """
    if isinstance(kernel, Kernel):
        return Kernel(kernel.fn, tuple(sorted({**dict(kernel.params), **params}.items())))
    if isinstance(kernel, str) and kernel in KERNELS:
        fn = KERNELS[kernel]
    elif callable(kernel):
        fn = kernel
    else:
        raise ValueError(
            f"kernel={kernel!r} is not a known kernel; use one of {sorted(KERNELS)} or a callable"
        )
    return Kernel(fn, tuple(sorted(params.items())))


def pairwise_kernel(X, Y=None, kernel="rbf", **params):
    """Gram matrix of a kernel, given by name or callable, between the rows of ``X`` and ``Y``.

    Shorthand for ``get_kernel(kernel, **params)(X, Y)``.

    Parameters
    ----------
    X : array-like of shape (n_samples_X, n_features)
        Input samples: a NumPy or JAX array, or a nested list.
    Y : array-like of shape (n_samples_Y, n_features), default=None
        Second set of samples; ``None`` uses ``Y = X``.
    kernel : str, callable or Kernel, default="rbf"
        The kernel, as accepted by :func:`get_kernel`.
    **params
        Parameters of the kernel (``gamma``, ``degree``, ``coef0``, ...).

    Returns
    -------
    K : ndarray of shape (n_samples_X, n_samples_Y)
        The Gram matrix, in the inputs' floating dtype; a ``jax.Array`` for JAX
        inputs, else a ``numpy.ndarray``.

    Raises
    ------
    ValueError
        If ``kernel`` is not a known name nor a callable, or if the kernel rejects the inputs
        or the parameters (see the kernel's own documentation).
    TypeError
        If ``X`` or ``Y`` does not have a real numeric dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import pairwise_kernel
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    >>> pairwise_kernel(X, X[:2], kernel="rbf", gamma=0.5).round(3)
    array([[1.   , 0.607],
           [0.607, 1.   ],
           [0.082, 0.368]])
    """
    return get_kernel(kernel, **params)(X, Y)


@partial(jax.jit, static_argnames=("kernel_fn", "block_size"))
def _blocked_matvec(X, Y, V, kernel_fn, block_size):
    n = X.shape[0]
    n_blocks = -(-n // block_size)
    pad = n_blocks * block_size - n
    Xp = jnp.pad(X, ((0, pad), (0, 0))).reshape(n_blocks, block_size, X.shape[1])
    out = jax.lax.map(lambda xb: kernel_fn(xb, Y) @ V, Xp)
    return out.reshape(n_blocks * block_size, *V.shape[1:])[:n]


def kernel_matvec(X, V, Y=None, kernel="rbf", block_size=1024, **params):
    """Kernel matrix-vector product ``K(X, Y) @ V``, computed in row blocks of ``X``.

    Memory is ``O(block_size * m)``: the ``n x m`` kernel matrix is never formed. The product
    is a jitted JAX computation (``jax.lax.map`` over the blocks).

    Parameters
    ----------
    X : array-like of shape (n, n_features)
        Rows of the kernel matrix.
    V : array-like of shape (m,) or (m, k)
        The vector or matrix to multiply; cast to the dtype of ``X``.
    Y : array-like of shape (m, n_features), default=None
        Columns of the kernel matrix; ``None`` uses ``Y = X``.
    kernel : str, callable or Kernel, default="rbf"
        The kernel, as accepted by :func:`get_kernel`.
    block_size : int, default=1024
        Number of rows of ``X`` per block.
    **params
        Parameters of the kernel (``gamma``, ``degree``, ``coef0``, ...).

    Returns
    -------
    KV : jax.Array of shape (n,) or (n, k)
        The product ``K(X, Y) @ V``.

    Raises
    ------
    ValueError
        If ``X`` or ``Y`` is not 2-D, contains NaN or inf, if their numbers of features
        differ, or if ``kernel`` is not a known name nor a callable.
    TypeError
        If ``X`` or ``Y`` does not have a real numeric dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import kernel_matvec, rbf_kernel
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    >>> KV = kernel_matvec(X, np.ones(3), kernel="rbf", block_size=2, gamma=0.5)
    >>> np.allclose(KV, rbf_kernel(X, gamma=0.5) @ np.ones(3))
    True
    """
    X, Y, _ = _as_pair(X, Y)
    fn = get_kernel(kernel, **params)
    return _blocked_matvec(X, Y, jnp.asarray(V, dtype=X.dtype), fn, int(block_size))
