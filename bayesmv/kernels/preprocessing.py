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
    """Median Euclidean distance between distinct samples, a bandwidth for the RBF kernel.

    Over a random subset of ``max_samples`` samples when ``X`` has more; pass the result to
    :func:`gamma_from_bandwidth` for the RBF ``gamma``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Samples, at least 2, real-valued and finite.
    max_samples : int, default=2000
        Above this many samples the distances are taken over a random subset of
        ``max_samples`` samples.
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=0
        Seed of the random subset (used only above ``max_samples`` samples).
    seed : int, numpy.random.RandomState, numpy.random.Generator or None, default="deprecated"
        Deprecated alias of ``random_state``; when given it replaces ``random_state`` with a
        ``FutureWarning``.

    Returns
    -------
    sigma : float
        The median of ``||x_i - x_j||`` over the pairs ``i < j``.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, has fewer than 2 samples, or contains NaN or inf.
    TypeError
        If ``X`` does not have a real numeric dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import median_heuristic
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    >>> round(median_heuristic(X), 4)  # distances 1, sqrt(2), sqrt(5)
    1.4142
    """
    seed = check_random_seed(random_state, seed, "median_heuristic")
    return float(np.median(_pairwise_distances_offdiag(X, max_samples, seed)))


def mean_heuristic(X, max_samples=2000, random_state=0, seed=SEED_DEPRECATED) -> float:
    """Mean Euclidean distance between distinct samples (the bandwidth MVML uses).

    Over a random subset of ``max_samples`` samples when ``X`` has more; pass the result to
    :func:`gamma_from_bandwidth` for the RBF ``gamma``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Samples, at least 2, real-valued and finite.
    max_samples : int, default=2000
        Above this many samples the distances are taken over a random subset of
        ``max_samples`` samples.
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=0
        Seed of the random subset (used only above ``max_samples`` samples).
    seed : int, numpy.random.RandomState, numpy.random.Generator or None, default="deprecated"
        Deprecated alias of ``random_state``; when given it replaces ``random_state`` with a
        ``FutureWarning``.

    Returns
    -------
    sigma : float
        The mean of ``||x_i - x_j||`` over the pairs ``i < j``.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, has fewer than 2 samples, or contains NaN or inf.
    TypeError
        If ``X`` does not have a real numeric dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import mean_heuristic
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    >>> round(mean_heuristic(X), 4)  # (1 + sqrt(2) + sqrt(5)) / 3
    1.5501
    """
    seed = check_random_seed(random_state, seed, "mean_heuristic")
    return float(np.mean(_pairwise_distances_offdiag(X, max_samples, seed)))


def gamma_from_bandwidth(sigma) -> float:
    """RBF ``gamma = 1 / (2 sigma^2)`` for a bandwidth ``sigma > 0``.

    Parameters
    ----------
    sigma : float
        The bandwidth (length scale) of the RBF kernel ``exp(-||x - y||^2 / (2 sigma^2))``.

    Returns
    -------
    gamma : float
        The matching ``gamma`` of :func:`rbf_kernel`.

    Raises
    ------
    ValueError
        If ``sigma`` is not a finite number > 0.

    Examples
    --------
    >>> from bayesmv.kernels import gamma_from_bandwidth
    >>> gamma_from_bandwidth(2.0)
    0.125
    """
    if not (sigma > 0 and np.isfinite(sigma)):
        raise ValueError(f"bandwidth sigma must be a finite number > 0, got {sigma}")
    return 1.0 / (2.0 * sigma**2)


def center_kernel(K, K_test=None):
    """Centre a Gram matrix in feature space, ``(I - 11'/n) K (I - 11'/n)``.

    With ``K_test`` (shape ``(m, n)``: test rows against the ``n`` training samples) return the
    test kernel centred with the training means instead.

    Parameters
    ----------
    K : array-like of shape (n, n)
        Training Gram matrix.
    K_test : array-like of shape (m, n), default=None
        Kernel between ``m`` test samples and the ``n`` training samples.

    Returns
    -------
    K_centered : jax.Array of shape (n, n) or (m, n)
        The centred training kernel, or the centred test kernel when ``K_test`` is given.

    Raises
    ------
    ValueError
        If ``K`` is not square, or ``K_test`` does not have shape ``(m, n)``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import center_kernel, linear_kernel
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    >>> Kc = center_kernel(linear_kernel(X))
    >>> Kc.shape, bool(np.allclose(Kc.sum(axis=0), 0.0))
    ((3, 3), True)
    >>> center_kernel(linear_kernel(X), linear_kernel(X[:1], X)).shape
    (1, 3)
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
    """Cosine-normalise a kernel matrix, ``K_ij / sqrt(K_ii K_jj)``.

    For a rectangular ``K`` pass the self-similarities ``diag_x`` (rows) and ``diag_y``
    (columns).

    Parameters
    ----------
    K : array-like of shape (n, m)
        The kernel matrix.
    diag_x : array-like of shape (n,), default=None
        Self-similarities ``k(x_i, x_i)`` of the rows; ``None`` takes the diagonal of a
        square ``K`` (and ignores ``diag_y``).
    diag_y : array-like of shape (m,), default=None
        Self-similarities ``k(y_j, y_j)`` of the columns; needed with ``diag_x``.

    Returns
    -------
    K_normalized : jax.Array of shape (n, m)
        The normalised kernel; a square ``K`` gets a unit diagonal.

    Raises
    ------
    ValueError
        If ``K`` is not square and ``diag_x`` is not given, or if a self-similarity is not
        > 0 (checked on concrete arrays, not under ``jit``).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.kernels import linear_kernel, normalize_kernel
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    >>> np.asarray(normalize_kernel(linear_kernel(X))).round(3)
    array([[1.   , 0.707, 0.   ],
           [0.707, 1.   , 0.707],
           [0.   , 0.707, 1.   ]])
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
