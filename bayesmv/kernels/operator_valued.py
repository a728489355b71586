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

    ``T`` is given as a nested tuple or array; ``kernel``/``kernel_params`` select ``k``.
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
        """Block Gram ``kron(k(X, Y), T)``: shape ``(n d, m d)``."""
        Kx = self.scalar_kernel(X, Y)
        return jnp.kron(Kx, self.T_matrix.astype(Kx.dtype))


@dataclass(frozen=True)
class SumOfSeparableKernels:
    """``K(x, x') = Σ_l weights_l k_l(x, x') T_l`` — e.g. ONORMA's non-separable kernel."""

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
        """The block Gram matrix ``Σ_j w_j K_j(X, Y) ⊗ T_j`` between ``X`` and ``Y`` (``X`` if None)."""
        return sum(w * k.gram(X, Y) for w, k in zip(self.weights, self.kernels))


def nonseparable_kernel(mu: float, output_dim: int) -> SumOfSeparableKernels:
    """ONORMA §5: ``K(x, x') = μ <x, x'> 1 + (1 - μ) <x, x'>^2 I`` (``1``: all-ones ``d x d``)."""
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
    views, each ``(n, d_v)``.
    """

    kernels: tuple = ()

    @property
    def output_dim(self) -> int:
        """Number of outputs: one per view."""
        return len(self.kernels)

    def view_grams(self, Xs, Ys=None):
        """The Gram matrix of each view's kernel between ``Xs`` and ``Ys`` (``Xs`` if None)."""
        Ys = Xs if Ys is None else Ys
        if len(Xs) != len(self.kernels) or len(Ys) != len(self.kernels):
            raise ValueError(f"expected {len(self.kernels)} views, got {len(Xs)} and {len(Ys)}")
        return [k(X, Y) for k, X, Y in zip(self.kernels, Xs, Ys)]

    def gram(self, Xs, Ys=None):
        """Sample-major block Gram: block ``(i, j)`` is ``diag_v K_v[i, j]``; shape ``(n m, n' m)``."""
        Ks = jnp.stack(self.view_grams(Xs, Ys))  # (m, n, n')
        m, n, n2 = Ks.shape
        eye = jnp.eye(m, dtype=Ks.dtype)
        return jnp.einsum("vij,vw->ivjw", Ks, eye).reshape(n * m, n2 * m)


def mvml_kernel(Ks, A):
    """MVML's multi-view block kernel ``H A H`` with ``H = blockdiag(K_1, ..., K_V)`` (eq. 5).

    ``Ks``: list of ``n x n`` Gram matrices; ``A``: the ``nV x nV`` metric (view-major blocks).
    """
    H = jsl.block_diag(*[jnp.asarray(K) for K in Ks])
    return H @ jnp.asarray(A) @ H


def block_gram_to_tensor(G, d):
    """Reshape a sample-major ``(n d, m d)`` block Gram into ``(n, m, d, d)`` blocks."""
    n, m = G.shape[0] // d, G.shape[1] // d
    return G.reshape(n, d, m, d).transpose(0, 2, 1, 3)
