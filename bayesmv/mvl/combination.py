"""The combination operator's ``c``-step on the sphere (§6.1, eq. 86-92, Theorems 15-16)."""

from __future__ import annotations

import numpy as np

from ..datasets import check_positive

__all__ = ["sphere_lstsq"]


def _secular_bisect(fun, lo, hi, target, n_iter=200):
    """Root of the decreasing ``fun`` on ``(lo, hi)`` with ``fun = target`` by bisection (Remark 17)."""
    for _ in range(n_iter):
        mid = 0.5 * (lo + hi)
        if fun(mid) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * max(1.0, abs(lo), abs(hi)):
            break
    return 0.5 * (lo + hi)


def sphere_lstsq(A, b, radius=1.0, rtol=1e-12):
    """Global minimiser of ``||A x - b||`` subject to ``||x|| = radius``.

    Minh, Bazzani & Murino 2016, eq. 86, Theorems 15-16. ``A = U Σ V^T``; with ``c = U^T b``
    the secular function ``s(γ) = Σ σ_i² c_i² / (σ_i² + γ)²`` (eq. 89) decreases on
    ``(-σ_min², ∞)``; its root ``γ*`` by bisection gives ``x = (A^T A + γ* I)^{-1} A^T b``
    (eq. 90, case I). When no root exists there (rank deficient with
    ``Σ_{i<=r} c_i²/σ_i² < radius²``, case II, eq. 91-92; ``A^T b = 0``, Theorem 15; or the
    degenerate case with ``c_i = 0`` on the smallest singular value) the solution is
    ``γ* = -σ_min²``: the components outside the bottom eigenspace are
    ``σ_i c_i / (σ_i² - σ_min²)`` and the rest of the norm goes to a bottom eigenvector (the
    first such ``v``; the solution is then not unique).

    Parameters
    ----------
    A : array-like of shape (n, m)
        The matrix of the least squares.
    b : array-like of shape (n,)
        The right-hand side.
    radius : float, default=1.0
        The norm of the solution; must be positive.
    rtol : float, default=1e-12
        Relative tolerance below which the components ``σ_i c_i`` count as zero and the
        eigenvalues ``σ_i²`` as equal to the smallest.

    Returns
    -------
    x : ndarray of shape (m,)
        The minimiser, of norm ``radius``.
    gamma : float
        The multiplier ``γ*``.

    Raises
    ------
    ValueError
        If ``radius`` is not a finite positive number.

    Notes
    -----
    This is the global minimiser, where a generic constrained optimiser (SLSQP with
    ``‖x‖² = radius²`` as a constraint) is a local method; ``benchmarks/solvers.py`` compares
    the two.
    """
    A = np.asarray(A, dtype=float)
    b = np.asarray(b, dtype=float).ravel()
    n, m = A.shape
    check_positive("radius", radius)
    if n < m:  # zero rows change nothing but give a complete V from the thin SVD
        A = np.vstack([A, np.zeros((m - n, m))])
        b = np.concatenate([b, np.zeros(m - n)])
    U, sig, Vt = np.linalg.svd(A, full_matrices=False)
    mu = np.zeros(m)
    mu[: len(sig)] = sig**2  # eigenvalues of A^T A, decreasing
    d = np.zeros(m)
    d[: len(sig)] = sig * (U[:, : len(sig)].T @ b)  # V^T A^T b = σ_i c_i
    scale = max(mu.max(initial=0.0), 1e-300)
    small = np.abs(d) <= rtol * max(np.abs(d).max(initial=0.0), 1e-300)
    d = np.where(small, 0.0, d)
    mu_min = mu.min()
    bottom = mu <= mu_min + rtol * scale
    r2 = radius**2

    nz = d != 0.0

    def s(g):
        return float(np.sum(d[nz] ** 2 / (mu[nz] + g) ** 2))

    lo = -mu_min
    hard = np.all(d[bottom] == 0.0)
    if hard:
        # s is finite at γ = -μ_min: value from the non-bottom part only
        s_lo = float(np.sum(d[~bottom] ** 2 / (mu[~bottom] - mu_min) ** 2)) if np.any(~bottom) else 0.0
        if s_lo <= r2:
            y = np.zeros(m)
            y[~bottom] = d[~bottom] / (mu[~bottom] - mu_min)
            rest = max(r2 - s_lo, 0.0)
            j = int(np.flatnonzero(bottom)[0])
            y[j] = np.sqrt(rest)
            return Vt.T @ y, float(lo)
    hi = np.sqrt(np.sum(d**2) / r2) + 1.0
    while s(hi) > r2:
        hi *= 2.0
    lo_open = lo + 1e-300 if not hard else lo
    g = _secular_bisect(s, lo_open, hi, r2)
    y = np.where(nz, d / np.where(nz, mu + g, 1.0), 0.0)
    x = Vt.T @ y
    return x * (radius / np.linalg.norm(x)), float(g)
