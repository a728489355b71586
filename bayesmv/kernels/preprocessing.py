"""Bandwidth heuristics, kernel centering and normalisation."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..datasets._validation import SEED_DEPRECATED, check_random_seed
from .pairwise import squared_euclidean_distances

__all__ = [
    "center_kernel",
    "gamma_from_bandwidth",
    "mean_heuristic",
    "median_heuristic",
    "normalize_kernel",
]


def _pairwise_distances_offdiag(X, max_samples, seed):
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] < 2:
        raise ValueError(
            f"X must be a 2-D array with at least 2 samples, got shape {X.shape} (n_samples={len(X)})"
        )
    if X.dtype.kind not in "biuf":
        raise TypeError(f"X has dtype {X.dtype}; it must be a real numeric array")
    if not np.isfinite(X).all():
        raise ValueError("X contains NaN or inf")
    if X.shape[0] > max_samples:
        idx = np.random.default_rng(seed).choice(X.shape[0], max_samples, replace=False)
        X = X[idx]
    D = np.sqrt(np.asarray(squared_euclidean_distances(X)))
    return D[np.triu_indices(X.shape[0], k=1)]


def median_heuristic(X, max_samples=2000, random_state=0, seed=SEED_DEPRECATED) -> float:
    """Median Euclidean distance between distinct samples (random subset above ``max_samples``)."""
    seed = check_random_seed(random_state, seed, "median_heuristic")
    return float(np.median(_pairwise_distances_offdiag(X, max_samples, seed)))


def mean_heuristic(X, max_samples=2000, random_state=0, seed=SEED_DEPRECATED) -> float:
    """Mean Euclidean distance between distinct samples (the bandwidth MVML uses)."""
    seed = check_random_seed(random_state, seed, "mean_heuristic")
    return float(np.mean(_pairwise_distances_offdiag(X, max_samples, seed)))


def gamma_from_bandwidth(sigma) -> float:
    """RBF ``gamma = 1 / (2 sigma^2)`` for a bandwidth ``sigma > 0``."""
    if not (sigma > 0 and np.isfinite(sigma)):
        raise ValueError(f"bandwidth sigma must be a finite number > 0, got {sigma}")
    return 1.0 / (2.0 * sigma**2)


def center_kernel(K, K_test=None):
    """Centre a Gram matrix in feature space, ``(I - 11'/n) K (I - 11'/n)``.

    With ``K_test`` (shape ``(m, n)``: test rows against the ``n`` training samples) return the
    test kernel centred with the training means instead.
    """
    K = jnp.asarray(K)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square (n, n) Gram matrix, got shape {K.shape}")
    if K_test is not None and (jnp.ndim(K_test) != 2 or jnp.shape(K_test)[1] != K.shape[0]):
        raise ValueError(f"K_test must have shape (m, {K.shape[0]}), got {jnp.shape(K_test)}")
    col_mean = K.mean(axis=0)
    total = col_mean.mean()
    if K_test is None:
        return K - col_mean[None, :] - col_mean[:, None] + total
    K_test = jnp.asarray(K_test)
    return K_test - col_mean[None, :] - K_test.mean(axis=1, keepdims=True) + total


def normalize_kernel(K, diag_x=None, diag_y=None):
    """Cosine-normalise ``K_ij / sqrt(K_ii K_jj)``.

    For a rectangular ``K`` pass the self-similarities ``diag_x`` (rows) and ``diag_y`` (columns).
    """
    K = jnp.asarray(K)
    if diag_x is None:
        if K.shape[0] != K.shape[1]:
            raise ValueError("normalize_kernel needs diag_x and diag_y for a non-square K")
        diag_x = diag_y = jnp.diag(K)
    for name, d in (("diag_x", diag_x), ("diag_y", diag_y)):
        d = jnp.asarray(d)
        if not isinstance(d, jax.core.Tracer) and not bool(jnp.all(d > 0)):
            raise ValueError(f"normalize_kernel: {name} (the kernel's self-similarities) must be > 0")
    dx = jnp.sqrt(jnp.asarray(diag_x))
    dy = jnp.sqrt(jnp.asarray(diag_y))
    return K / (dx[:, None] * dy[None, :])
