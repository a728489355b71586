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
    """``jax.numpy`` if any argument is a JAX array or tracer, else ``numpy``."""
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
    """Matrix of ``||x_i - y_j||^2`` via the expansion ``|x|^2 + |y|^2 - 2 x.y``, clipped at 0."""
    X, Y, xp = _as_pair(X, Y)
    xx = xp.sum(X * X, axis=1)[:, None]
    yy = xp.sum(Y * Y, axis=1)[None, :]
    return xp.maximum(xx + yy - 2.0 * X @ Y.T, 0.0)


def linear_kernel(X, Y=None):
    """``k(x, y) = x.y``."""
    X, Y, _ = _as_pair(X, Y)
    return X @ Y.T


def polynomial_kernel(X, Y=None, degree=3, gamma=None, coef0=1.0):
    """``k(x, y) = (gamma x.y + coef0)^degree``."""
    X, Y, _ = _as_pair(X, Y)
    return (_default_gamma(gamma, X) * (X @ Y.T) + coef0) ** degree


def rbf_kernel(X, Y=None, gamma=None):
    """Gaussian kernel ``exp(-gamma ||x - y||^2)``."""
    X, Y, xp = _as_pair(X, Y)
    return xp.exp(-_default_gamma(gamma, X) * squared_euclidean_distances(X, Y))


def _l1_distances(X, Y, xp):
    return xp.sum(xp.abs(X[:, None, :] - Y[None, :, :]), axis=-1)


def laplacian_kernel(X, Y=None, gamma=None):
    """Laplacian kernel ``exp(-gamma ||x - y||_1)``."""
    X, Y, xp = _as_pair(X, Y)
    return xp.exp(-_default_gamma(gamma, X) * _l1_distances(X, Y, xp))


def additive_chi2_kernel(X, Y=None):
    """``k(x, y) = -sum_i (x_i - y_i)^2 / (x_i + y_i)`` for non-negative data (0/0 terms are 0)."""
    X, Y, xp = _as_pair(X, Y)
    diff = X[:, None, :] - Y[None, :, :]
    total = X[:, None, :] + Y[None, :, :]
    safe = xp.where(total > 0, total, 1.0)
    return -xp.sum(xp.where(total > 0, diff * diff / safe, 0.0), axis=-1)


def chi2_kernel(X, Y=None, gamma=1.0):
    """Exponential chi-squared kernel ``exp(gamma * additive_chi2(x, y))``."""
    _default_gamma(gamma, None)
    K = additive_chi2_kernel(X, Y)
    return array_namespace(K).exp(gamma * K)


def cosine_kernel(X, Y=None):
    """Cosine similarity ``x.y / (|x| |y|)``; zero vectors give 0 (as scikit-learn)."""
    X, Y, xp = _as_pair(X, Y)

    def unit(Z):
        norm = xp.linalg.norm(Z, axis=1, keepdims=True)
        return Z / xp.where(norm > 0, norm, 1.0)

    return unit(X) @ unit(Y).T


def jaccard_kernel(X, Y=None):
    """Jaccard (Tanimoto) similarity of binary rows: ``|x AND y| / |x OR y|``.

    Non-zero entries count as 1. Two all-zero rows have similarity 1 (``1 - scipy`` Jaccard
    distance), which keeps the Gram matrix positive semi-definite.
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
    every new but equal instance.
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
    """Return a callable ``k(X, Y=None)`` for a kernel name (see ``KERNELS``) or callable, with ``params`` bound.

    Raises ``ValueError`` naming the valid choices for an unknown name.
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
    """Gram matrix of ``kernel`` (name or callable) between the rows of ``X`` and ``Y``."""
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
    """``K(X, Y) @ V`` computed in row blocks of ``X``: memory ``O(block_size * m)``, never ``n x m``.

    ``V`` has shape ``(m,)`` or ``(m, k)``. ``kernel`` is a name, callable or ``Kernel``;
    ``params`` are its parameters.
    """
    X, Y, _ = _as_pair(X, Y)
    fn = get_kernel(kernel, **params)
    return _blocked_matvec(X, Y, jnp.asarray(V, dtype=X.dtype), fn, int(block_size))
