"""Operator-valued (matrix-valued) kernels and their block Gram matrices.

Block Gram matrices of an operator-valued kernel ``K: X x X -> R^{d x d}`` are sample-major:
block ``(i, j)`` (rows ``i*d:(i+1)*d``, columns ``j*d:(j+1)*d``) is ``K(x_i, y_j)``.
MVML's multi-view kernel ``H A H`` is view-major, as in the paper (eq. 5).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np

from .pairwise import Kernel, get_kernel

__all__ = [
    "DiagonalMultiViewKernel",
    "SeparableKernel",
    "SumOfSeparableKernels",
    "block_gram_to_tensor",
    "mvml_kernel",
    "nonseparable_kernel",
]


@dataclass(frozen=True)
class SeparableKernel:
    """Separable kernel ``K(x, x') = k(x, x') T`` with a PSD ``d x d`` matrix ``T``.

    ``T`` is given as a nested tuple or array; ``kernel``/``kernel_params`` select ``k``. The
    instance is frozen and hashable: ``T`` is stored as a nested tuple and ``kernel_params`` as
    a sorted tuple of ``(name, value)`` pairs.

    Parameters
    ----------
    kernel : str, callable or Kernel, default="rbf"
        The scalar kernel ``k``, as accepted by :func:`~bayesmv.kernels.get_kernel`.
    T : array-like of shape (d, d), default=((1.0,),)
        The output matrix: symmetric, positive semi-definite.
    kernel_params : dict or tuple of (str, object) pairs, default=()
        Parameters of the scalar kernel (``gamma``, ...).

    Attributes
    ----------
    output_dim : int
        Number of outputs (the size of ``T``).
    scalar_kernel : Kernel
        The scalar kernel ``k`` as a :class:`~bayesmv.kernels.Kernel`.
    T_matrix : jax.Array of shape (d, d)
        The output operator ``T`` as a JAX array.

    Raises
    ------
    ValueError
        If ``T`` is not a square matrix or not symmetric.

    See Also
    --------
    SumOfSeparableKernels : A weighted sum of separable kernels.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import SeparableKernel
    >>> K = SeparableKernel("linear", T=[[2.0, 1.0], [1.0, 2.0]])
    >>> X = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]])
    >>> K.output_dim, K.gram(X).shape  # sample-major blocks
    (2, (6, 6))
    >>> np.asarray(K(X[0], X[1]))  # k(x, y) = <x, y> = 1
    array([[2., 1.],
           [1., 2.]])
    """

    kernel: object = "rbf"
    T: tuple = ((1.0,),)
    kernel_params: tuple = ()

    def __post_init__(self):
        T = np.asarray(self.T, dtype=float)
        if T.ndim != 2 or T.shape[0] != T.shape[1]:
            raise ValueError(f"T must be a square matrix, got shape {T.shape}")
        if not np.allclose(T, T.T):
            raise ValueError("T must be symmetric")
        object.__setattr__(self, "T", tuple(map(tuple, T.tolist())))
        params = self.kernel_params
        object.__setattr__(self, "kernel_params", tuple(sorted(dict(params).items())))

    @property
    def output_dim(self) -> int:
        """Number of outputs (the size of ``T``)."""
        return len(self.T)

    @property
    def scalar_kernel(self) -> Kernel:
        """The scalar kernel ``k`` as a :class:`Kernel`."""
        return get_kernel(self.kernel, **dict(self.kernel_params))

    @property
    def T_matrix(self):
        """The output operator ``T`` as a JAX array."""
        return jnp.asarray(self.T)

    def __call__(self, x, y):
        """``K(x, y)`` for single points (1-D arrays): a ``d x d`` matrix."""
        k = self.scalar_kernel(jnp.atleast_2d(x), jnp.atleast_2d(y))[0, 0]
        return k * self.T_matrix.astype(k.dtype)

    def gram(self, X, Y=None):
        """Block Gram ``kron(k(X, Y), T)``: shape ``(n d, m d)``.

        Parameters
        ----------
        X : array-like of shape (n, n_features)
            The first samples.
        Y : array-like of shape (m, n_features), default=None
            The second samples; ``None`` uses ``Y = X``.

        Returns
        -------
        G : jax.Array of shape (n d, m d)
            The sample-major block Gram matrix: block ``(i, j)`` is ``k(x_i, y_j) T``.
        """
        Kx = self.scalar_kernel(X, Y)
        return jnp.kron(Kx, self.T_matrix.astype(Kx.dtype))


@dataclass(frozen=True)
class SumOfSeparableKernels:
    """``K(x, x') = Σ_l weights_l k_l(x, x') T_l`` — e.g. ONORMA's non-separable kernel.

    The instance is frozen and hashable; :func:`nonseparable_kernel` builds ONORMA's.

    Parameters
    ----------
    kernels : tuple of SeparableKernel, default=()
        The terms ``k_l(x, x') T_l``; at least one, all with the same ``output_dim``.
    weights : tuple of float, default=()
        The non-negative weight of each term; empty: 1 for every term.

    Attributes
    ----------
    output_dim : int
        Number of outputs, shared by the terms.

    Raises
    ------
    ValueError
        If there is no kernel, the number of weights differs from the number of kernels, the
        kernels have different output dimensions or a weight is negative.

    See Also
    --------
    SeparableKernel : One term ``k(x, x') T``.
    nonseparable_kernel : ONORMA's non-separable kernel.
    """

    kernels: tuple = field(default_factory=tuple)
    weights: tuple = ()

    def __post_init__(self):
        kernels = tuple(self.kernels)
        weights = tuple(float(w) for w in (self.weights or (1.0,) * len(kernels)))
        if not kernels or len(weights) != len(kernels):
            raise ValueError("need at least one kernel and one weight per kernel")
        dims = {k.output_dim for k in kernels}
        if len(dims) != 1:
            raise ValueError(f"all kernels must share one output dimension, got {sorted(dims)}")
        if any(w < 0 for w in weights):
            raise ValueError(f"weights must be non-negative, got {weights}")
        object.__setattr__(self, "kernels", kernels)
        object.__setattr__(self, "weights", weights)

    @property
    def output_dim(self) -> int:
        """Number of outputs, shared by the terms."""
        return self.kernels[0].output_dim

    def __call__(self, x, y):
        return sum(w * k(x, y) for w, k in zip(self.weights, self.kernels))

    def gram(self, X, Y=None):
        """The block Gram matrix ``Σ_j w_j K_j(X, Y) ⊗ T_j`` between ``X`` and ``Y`` (``X`` if None).

        Parameters
        ----------
        X : array-like of shape (n, n_features)
            The first samples.
        Y : array-like of shape (m, n_features), default=None
            The second samples; ``None`` uses ``Y = X``.

        Returns
        -------
        G : jax.Array of shape (n d, m d)
            The sample-major block Gram matrix, ``d`` being ``output_dim``.
        """
        return sum(w * k.gram(X, Y) for w, k in zip(self.weights, self.kernels))


def nonseparable_kernel(mu: float, output_dim: int) -> SumOfSeparableKernels:
    """ONORMA's non-separable kernel ``K(x, x') = μ <x, x'> 1 + (1 - μ) <x, x'>^2 I``.

    ``1`` is the all-ones ``d x d`` matrix and ``I`` the identity (ONORMA §5; Audiffren & Kadri
    2013): a :class:`SumOfSeparableKernels` of a linear kernel with output matrix ``1`` and
    weight ``μ``, and a homogeneous quadratic kernel with output matrix ``I`` and weight
    ``1 - μ``.

    Parameters
    ----------
    mu : float
        Weight ``μ`` in [0, 1] of the linear term.
    output_dim : int
        Number of outputs ``d``.

    Returns
    -------
    kernel : SumOfSeparableKernels
        The operator-valued kernel, with ``output_dim == d``.

    Raises
    ------
    ValueError
        If ``mu`` does not lie in [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import nonseparable_kernel
    >>> K = nonseparable_kernel(0.5, output_dim=2)
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0]])
    >>> np.asarray(K(X[0], X[1]))  # <x, x'> = 1: 0.5 * ones + 0.5 * I
    array([[1. , 0.5],
           [0.5, 1. ]])
    >>> K.gram(X).shape  # sample-major blocks
    (4, 4)
    """
    if not 0.0 <= mu <= 1.0:
        raise ValueError(f"mu must lie in [0, 1], got {mu}")
    d = int(output_dim)
    ones = SeparableKernel("linear", np.ones((d, d)))
    quad = SeparableKernel("polynomial", np.eye(d), (("degree", 2), ("gamma", 1.0), ("coef0", 0.0)))
    return SumOfSeparableKernels((ones, quad), (mu, 1.0 - mu))


@dataclass(frozen=True)
class DiagonalMultiViewKernel:
    """MVL §7.1: ``G(x, t) = diag(k^1(x^1, t^1), ..., k^m(x^m, t^m))`` on multi-view inputs.

    ``kernels`` holds one bound scalar kernel per view (see ``get_kernel``). Inputs are lists of
    views, each ``(n, d_v)``. The instance is frozen and hashable.

    Parameters
    ----------
    kernels : tuple of Kernel, default=()
        One bound scalar kernel per view, as returned by :func:`~bayesmv.kernels.get_kernel`.

    Attributes
    ----------
    output_dim : int
        Number of outputs: one per view.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import DiagonalMultiViewKernel, get_kernel
    >>> G = DiagonalMultiViewKernel((get_kernel("linear"), get_kernel("rbf", gamma=0.5)))
    >>> Xs = [np.ones((3, 2)), np.zeros((3, 4))]
    >>> G.output_dim, G.gram(Xs).shape  # sample-major blocks
    (2, (6, 6))
    >>> [K.shape for K in G.view_grams(Xs, [X[:1] for X in Xs])]
    [(3, 1), (3, 1)]
    """

    kernels: tuple = ()

    @property
    def output_dim(self) -> int:
        """Number of outputs: one per view."""
        return len(self.kernels)

    def view_grams(self, Xs, Ys=None):
        """The Gram matrix of each view's kernel between ``Xs`` and ``Ys`` (``Xs`` if None).

        Parameters
        ----------
        Xs : list of array-like of shape (n, d_v)
            The first samples, one array per view.
        Ys : list of array-like of shape (n2, d_v), default=None
            The second samples, one array per view; ``None`` uses ``Ys = Xs``.

        Returns
        -------
        Ks : list of array-like of shape (n, n2)
            The Gram matrix ``k^v(Xs[v], Ys[v])`` of each view.

        Raises
        ------
        ValueError
            If ``Xs`` or ``Ys`` does not have one array per kernel.
        """
        Ys = Xs if Ys is None else Ys
        if len(Xs) != len(self.kernels) or len(Ys) != len(self.kernels):
            raise ValueError(f"expected {len(self.kernels)} views, got {len(Xs)} and {len(Ys)}")
        return [k(X, Y) for k, X, Y in zip(self.kernels, Xs, Ys)]

    def gram(self, Xs, Ys=None):
        """Sample-major block Gram: block ``(i, j)`` is ``diag_v K_v[i, j]``; shape ``(n m, n' m)``.

        Parameters
        ----------
        Xs : list of array-like of shape (n, d_v)
            The first samples, one array per view.
        Ys : list of array-like of shape (n2, d_v), default=None
            The second samples, one array per view; ``None`` uses ``Ys = Xs``.

        Returns
        -------
        G : jax.Array of shape (n m, n2 m)
            The block Gram matrix, ``m`` being the number of views.

        Raises
        ------
        ValueError
            If ``Xs`` or ``Ys`` does not have one array per kernel.
        """
        Ks = jnp.stack(self.view_grams(Xs, Ys))  # (m, n, n')
        m, n, n2 = Ks.shape
        eye = jnp.eye(m, dtype=Ks.dtype)
        return jnp.einsum("vij,vw->ivjw", Ks, eye).reshape(n * m, n2 * m)


def mvml_kernel(Ks, A):
    """MVML's multi-view block kernel ``H A H`` with ``H = blockdiag(K_1, ..., K_V)`` (eq. 5).

    The blocks are view-major, as in the paper (Huusari et al. 2018, eq. 5).

    Parameters
    ----------
    Ks : list of array-like of shape (n, n)
        The ``V`` Gram matrices, one per view.
    A : array-like of shape (n V, n V)
        The metric between the views, in view-major blocks.

    Returns
    -------
    HAH : jax.Array of shape (n V, n V)
        The multi-view kernel ``H A H``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import mvml_kernel
    >>> Ks = [np.eye(2), 2.0 * np.eye(2)]
    >>> np.asarray(mvml_kernel(Ks, np.eye(4)))
    array([[1., 0., 0., 0.],
           [0., 1., 0., 0.],
           [0., 0., 4., 0.],
           [0., 0., 0., 4.]])
    """
    H = jsl.block_diag(*[jnp.asarray(K) for K in Ks])
    return H @ jnp.asarray(A) @ H


def block_gram_to_tensor(G, d):
    """Reshape a sample-major block Gram matrix into its ``d x d`` blocks.

    Parameters
    ----------
    G : array-like of shape (n d, m d)
        Sample-major block Gram matrix: block ``(i, j)`` (rows ``i*d:(i+1)*d``, columns
        ``j*d:(j+1)*d``) is ``K(x_i, y_j)``.
    d : int
        Size of the blocks (the number of outputs).

    Returns
    -------
    blocks : array of shape (n, m, d, d)
        ``blocks[i, j] = K(x_i, y_j)``, in the namespace of ``G``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import block_gram_to_tensor
    >>> G = np.arange(16.0).reshape(4, 4)  # n = m = 2 samples, d = 2 outputs
    >>> block_gram_to_tensor(G, 2)[0, 1]
    array([[2., 3.],
           [6., 7.]])
    """
    n, m = G.shape[0] // d, G.shape[1] // d
    return G.reshape(n, d, m, d).transpose(0, 2, 1, 3)
