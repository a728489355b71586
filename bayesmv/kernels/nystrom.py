"""Nyström approximation (plain and block-wise across views), MVML §3.5.

A kernel matrix ``K`` is approximated as ``Q W^+ Q' = U U'`` with ``Q = K[:, S]``,
``W = K[S, S]`` for ``p`` landmark samples ``S`` chosen by a seeded random ordering, and
``U = Q (W^+)^{1/2}``. Test rows extend the approximation as ``K_test ≈ Q_test (W^+)^{1/2} U'``,
i.e. test features ``U_test = Q_test (W^+)^{1/2}``. With ``p = n`` the approximation is exact.
As for the pairwise kernels, NumPy inputs are computed with NumPy and JAX inputs with
``jax.numpy``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from ..datasets._validation import SEED_DEPRECATED, check_random_seed
from .pairwise import array_namespace, get_kernel

__all__ = [
    "BlockNystrom",
    "NystromFactors",
    "block_nystrom",
    "n_landmarks",
    "nystrom",
    "nystrom_from_columns",
    "nystrom_ordering",
    "nystrom_transform",
    "pinv_sqrt",
]


def nystrom_ordering(n_samples: int, random_state=0, seed=SEED_DEPRECATED) -> np.ndarray:
    """The random ordering of the samples (a permutation); its first ``p`` entries are the landmarks."""
    seed = check_random_seed(random_state, seed, "nystrom_ordering")
    return np.random.default_rng(seed).permutation(n_samples)


def n_landmarks(nystrom, n_samples: int) -> int:
    """Number of landmarks for a level given as a fraction in (0, 1] or an integer count."""
    if isinstance(nystrom, (bool, np.bool_)):
        raise ValueError(f"nystrom must be a fraction in (0, 1] or an integer >= 1, got {nystrom!r}")
    if isinstance(nystrom, (int, np.integer)):
        p = int(nystrom)
    elif isinstance(nystrom, (float, np.floating)) and 0.0 < nystrom <= 1.0:
        p = max(1, int(round(float(nystrom) * n_samples)))
    else:
        raise ValueError(f"nystrom must be a fraction in (0, 1] or an integer >= 1, got {nystrom!r}")
    if not 1 <= p <= n_samples:
        raise ValueError(f"nystrom={nystrom!r} gives {p} landmarks; need 1 <= p <= n_samples={n_samples}")
    return p


def pinv_sqrt(W, rcond=None):
    """``(W^+)^{1/2}`` of a symmetric PSD matrix by eigen-decomposition (small eigenvalues dropped)."""
    xp = array_namespace(W)
    W = xp.asarray(W)
    W = 0.5 * (W + W.T)
    evals, evecs = xp.linalg.eigh(W)
    if rcond is None:
        rcond = W.shape[0] * xp.finfo(W.dtype).eps
    keep = evals > rcond * xp.max(xp.abs(evals))
    inv_sqrt = xp.where(keep, 1.0 / xp.sqrt(xp.where(keep, evals, 1.0)), 0.0)
    return (evecs * inv_sqrt[None, :]) @ evecs.T


class NystromFactors(NamedTuple):
    """Nyström factors of one kernel: ``K ≈ U U'``."""

    landmarks: np.ndarray  # indices S of the p landmark samples
    W_pinv_sqrt: np.ndarray | jnp.ndarray  # (p, p): (K[S, S]^+)^{1/2}
    U: np.ndarray | jnp.ndarray  # (n, p)


def nystrom_from_columns(Q, landmarks, rcond=None) -> NystromFactors:
    """Factors from the kernel columns ``Q = K[:, landmarks]`` (shape ``(n, p)``)."""
    Q = array_namespace(Q).asarray(Q)
    landmarks = np.asarray(landmarks)
    W_pinv_sqrt = pinv_sqrt(Q[landmarks], rcond)
    return NystromFactors(landmarks, W_pinv_sqrt, Q @ W_pinv_sqrt)


def nystrom_transform(Q_test, factors: NystromFactors):
    """Test-time extension (MVML §3.5): ``U_test = Q_test (W^+)^{1/2}`` so ``K_test ≈ U_test U'``."""
    return array_namespace(Q_test).asarray(Q_test) @ factors.W_pinv_sqrt


def nystrom(
    X, kernel="rbf", n_components=1.0, random_state=0, seed=SEED_DEPRECATED, **kernel_params
) -> NystromFactors:
    """Nyström factors of ``kernel`` on ``X`` with ``n_components`` landmarks (fraction or count)."""
    seed = check_random_seed(random_state, seed, "nystrom")
    X = array_namespace(X).asarray(X)
    p = n_landmarks(n_components, X.shape[0])
    landmarks = nystrom_ordering(X.shape[0], seed)[:p]
    k = get_kernel(kernel, **kernel_params)
    return nystrom_from_columns(k(X, X[landmarks]), landmarks)


class BlockNystrom(NamedTuple):
    """Block-wise Nyström over views with one shared landmark set (MVML §3.5)."""

    landmarks: np.ndarray
    factors: list  # one NystromFactors per view
    kernels: list  # one bound kernel per view (None when precomputed)
    landmark_views: list  # the landmark rows of each view (None when precomputed)

    @property
    def U(self):
        """The per-view factors ``U_v``; ``blockdiag(U_1..U_V)`` approximates ``H``'s square root."""
        return [f.U for f in self.factors]

    def transform(self, Xs):
        """Test factors ``U_test_v`` for new views ``Xs`` (raw data; not for precomputed kernels)."""
        if self.kernels[0] is None:
            raise ValueError("this BlockNystrom was built from precomputed kernels; use transform_columns")
        return [
            nystrom_transform(k(X, L), f)
            for X, k, L, f in zip(Xs, self.kernels, self.landmark_views, self.factors)
        ]

    def transform_columns(self, Qs_test):
        """Test factors from test-vs-landmark kernel columns ``Q_test_v`` (shape ``(m, p)``)."""
        return [nystrom_transform(Q, f) for Q, f in zip(Qs_test, self.factors)]


def block_nystrom(
    Xs,
    kernels="rbf",
    n_components=1.0,
    random_state=0,
    kernel_params=None,
    precomputed=False,
    seed=SEED_DEPRECATED,
):
    """Block-wise Nyström of several views with the same random sample ordering for all views.

    ``kernels`` is one kernel (name/callable) or one per view, ``kernel_params`` one dict or
    one per view. With ``precomputed=True``, ``Xs`` are full ``n x n`` Gram matrices.
    """
    seed = check_random_seed(random_state, seed, "block_nystrom")
    V = len(Xs)
    n = Xs[0].shape[0]
    p = n_landmarks(n_components, n)
    landmarks = nystrom_ordering(n, seed)[:p]
    if precomputed:
        factors = [nystrom_from_columns(array_namespace(K).asarray(K)[:, landmarks], landmarks) for K in Xs]
        return BlockNystrom(landmarks, factors, [None] * V, [None] * V)
    kernels = list(kernels) if isinstance(kernels, (list, tuple)) else [kernels] * V
    kernel_params = kernel_params or {}
    params = list(kernel_params) if isinstance(kernel_params, (list, tuple)) else [kernel_params] * V
    bound = [get_kernel(k, **(kp or {})) for k, kp in zip(kernels, params)]
    views = [array_namespace(X).asarray(X) for X in Xs]
    marks = [X[landmarks] for X in views]
    factors = [nystrom_from_columns(k(X, L), landmarks) for k, X, L in zip(bound, views, marks)]
    return BlockNystrom(landmarks, factors, bound, marks)
