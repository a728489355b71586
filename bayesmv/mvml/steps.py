"""MVML's steps as small pure functions (Huusari, Kadri & Capponi 2018, eqs. 8-18): the g-step (8/15), w-step
(10/17), A-step (9/16) and its block-sparse proximal form (12/18), the objective (7)/(11)/(13)/(14)
and the starting metric; ``U``: ``(V, n, q)`` feature blocks, ``A``: ``(Vq, Vq)`` metric,
``g``: ``(Vq,)``, ``w``: ``(V,)``."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

__all__ = [
    "METRICS",
    "a_step",
    "default_step_size",
    "g_step",
    "group_norms",
    "initial_metric",
    "metric_penalty",
    "mvml_objective",
    "prox_group_lasso",
    "sparse_a_step",
    "w_step",
]


#: The metrics MVML fits: learned (eq. 9/16), block-sparse (eq. 12/18), fixed MVML_Cov, fixed MVML_I.
METRICS = ("learn", "sparse", "cov", "identity")
_RCOND = 1e-12  # relative eigenvalue cut-off of the eigh pseudo-inverses


def _design(U, w):
    """``M = (w' ⊗ I_n) U`` as an ``n x Vq`` matrix (view-major columns)."""
    V, n, q = U.shape
    return np.transpose(U * w[:, None, None], (1, 0, 2)).reshape(n, V * q)


def _apply_M(U, w, g):
    """``M g = Σ_v w_v U_v g_v``; ``g``: ``(..., Vq)`` -> ``(..., n)``."""
    V, _, q = U.shape
    G = g.reshape(*g.shape[:-1], V, q)
    return sum(w[v] * (G[..., v, :] @ U[v].T) for v in range(V))


def _apply_Mt(U, w, c):
    """``M' c``: block ``v`` is ``w_v U_v' c``; ``c``: ``(..., n)`` -> ``(..., Vq)``."""
    return np.concatenate([w[v] * (c @ U[v]) for v in range(U.shape[0])], axis=-1)


def _symmetric(K):
    return 0.5 * (K + K.T)


def _mv_gram(U, w, A):
    """``M Ã M'``: the w-weighted multi-view kernel ``(w'⊗I) U Ã U' (w⊗I)`` on the training set."""
    M = _design(U, w)
    return _symmetric(M @ (A @ M.T))


def _feature_gram(U):
    """``U' U`` (unweighted, ``Vq x Vq``); the primal form's ``M'M`` is its ``w w'`` block scaling."""
    M = _design(U, np.ones(U.shape[0], U.dtype))
    return _symmetric(M.T @ M)


def _blockdiag_gram(U, w, full):
    """``M Ã0 M'`` for the block-diagonal start ``A = I``: ``Σ_v w_v² U_v U_v'`` (full path) or
    ``Σ_v w_v² (U_v U_v')²`` (Nyström path, ``Ã0 = blockdiag(U_v'U_v)``)."""
    K = np.zeros((U.shape[1], U.shape[1]), U.dtype)
    for Uv, wv in zip(U, w):
        Kv = Uv @ Uv.T
        K += wv * wv * (Kv if full else Kv @ Kv)
    return _symmetric(K)


def _weight_blocks(G, w, q):
    ww = np.repeat(w, q)
    return G * ww[:, None] * ww[None, :]


def _eigh_kept(A):
    """``eigh`` of the symmetric part of ``A`` and the mask of eigenvalues above the relative cut-off."""
    lam, Q = sla.eigh(_symmetric(A), check_finite=False)
    return lam, Q, lam > _RCOND * max(float(np.max(np.abs(lam))), 1e-300)


def _sqrt_factor(A):
    """``L`` with ``A = L L'`` (``A`` symmetric PSD) from ``eigh``; tiny/negative eigenvalues dropped."""
    lam, Q, keep = _eigh_kept(A)
    return Q * np.where(keep, np.sqrt(np.where(keep, lam, 0.0)), 0.0)[None, :]


def _pinv_eigh(A):
    """``A⁺`` of a symmetric PSD matrix from ``eigh``."""
    lam, Q, keep = _eigh_kept(A)
    return (Q * np.where(keep, 1.0 / np.where(keep, lam, 1.0), 0.0)[None, :]) @ Q.T


def _cho_solve_shifted(P, lmbda, b):
    """``(P + λI)⁻¹ b`` by Cholesky; NaN when the factorisation fails (the caller's objective is then
    non-finite and the step is rejected, or the fit stops with a named error)."""
    try:
        factor = sla.cho_factor(P + lmbda * np.eye(P.shape[0], dtype=P.dtype), lower=True, check_finite=False)
    except (np.linalg.LinAlgError, ValueError):
        return np.full_like(b, np.nan)
    return sla.cho_solve(factor, b, check_finite=False)


def _solve_dual(U, A, Kw, w, y, lmbda):
    """Dual g-step: ``c = (M Ã M' + λI)⁻¹ y`` (Cholesky), ``z = M'c = Ã⁺g``, ``g = Ã z``."""
    c = _cho_solve_shifted(Kw, lmbda, y)
    r = lmbda * c
    z = _apply_Mt(U, w, c)
    return A @ z, z, r @ r + lmbda * (c @ (y - r))  # ||r||² + λ c'Kw c


def _solve_primal(U, A, G, w, y, lmbda):
    """Primal g-step: ``g = L h``, ``(λI + L'M'M L) h = L'M'y`` (Cholesky), ``A = L L'`` (eigh)."""
    V, _, q = U.shape
    L = _sqrt_factor(A)
    h = _cho_solve_shifted(_symmetric(L.T @ _weight_blocks(G, w, q) @ L), lmbda, L.T @ _apply_Mt(U, w, y))
    g = L @ h
    r = y - _apply_M(U, w, g)
    return g, _apply_Mt(U, w, r) / lmbda, r @ r + lmbda * (h @ h)


def _group_norms(A, n_views):
    A = np.asarray(A)
    q = A.shape[0] // n_views
    sq = np.sum(A.reshape(n_views, q, n_views, q) ** 2, axis=(1, 3))
    return np.sqrt(np.where(np.eye(n_views, dtype=bool), sq, sq + sq.T))


def _penalty(A, eta, metric, n_views):
    if metric == "learn":
        return eta * np.sum(A * A)
    if metric == "sparse":
        return eta * np.sum(np.triu(_group_norms(A, n_views)))
    return 0.0


def _a_step(A, z, mu, lmbda, eta):
    return (1.0 - 2.0 * mu * eta) * A + (mu * lmbda) * np.outer(z, z)


def _prox(T, n_views, threshold):
    N = T.shape[0]
    q = N // n_views
    norms = _group_norms(T, n_views)
    scale = np.where(norms > threshold, 1.0 - threshold / np.where(norms > 0, norms, 1.0), 0.0)
    return (T.reshape(n_views, q, n_views, q) * scale[:, None, :, None]).reshape(N, N)


def _finite_or_inf(J):
    J = float(J)
    return J if np.isfinite(J) else np.inf


def _trial(U, A, aux, z, w, y, mu, lmbda, eta, metric, form):
    """One A-step with step ``mu`` (eq. 9/16, or 12/18 for ``"sparse"``; none for ``"fixed"``) followed
    by the g-step. Returns ``(Ã', aux', g, z, J)``; ``J = inf`` if the step left the PSD cone.
    ``aux`` is ``M Ã M'`` (dual form) or ``U'U`` (primal form)."""
    V = U.shape[0]
    ok = True
    if metric == "fixed":
        A_try = A
    elif metric == "learn":
        A_try = _a_step(A, z, mu, lmbda, eta)
    else:
        A_try = _prox(A + (mu * lmbda) * np.outer(z, z), V, mu * eta)
        lam_min = sla.eigvalsh(_symmetric(A_try), subset_by_index=[0, 0], check_finite=False)[0]
        ok = lam_min >= -1e-10 * A.shape[0] * max(float(np.max(np.abs(A_try))), 1e-300)
    if form == "dual" and metric != "fixed":
        aux = _mv_gram(U, w, A_try)
    solve = _solve_dual if form == "dual" else _solve_primal
    g, z_new, fit = solve(U, A_try, aux, w, y, lmbda)
    J = _finite_or_inf(fit + _penalty(A_try, eta, metric, V)) if ok else np.inf
    return A_try, aux, g, z_new, J


def _as_float(*arrays):
    return tuple(np.asarray(a, dtype=np.float64) for a in arrays)


def g_step(U, A, w, y, lmbda, form="auto"):
    """Solve the g-step of MVML (Huusari, Kadri & Capponi 2018, eq. 8 / 15).

    Computes ``g = (M'M + λ Ã⁺)⁻¹ M' y`` with ``M = (w' ⊗ I_n) U``. ``g`` is restricted to the
    range of ``Ã`` (the pseudo-inverse convention).

    Parameters
    ----------
    U : array-like of shape (V, n, q)
        The per-view feature blocks: ``K_v`` on the full path, the Nyström factors otherwise.
    A : array-like of shape (Vq, Vq)
        The metric ``Ã``, symmetric positive semi-definite.
    w : array-like of shape (V,)
        The view weights.
    y : array-like of shape (n,)
        The targets.
    lmbda : float
        The regularisation weight ``λ``.
    form : {"auto", "dual", "primal"}, default="auto"
        ``"dual"``: an ``n x n`` Cholesky of ``M Ã M' + λI``; ``"primal"``: a ``Vq x Vq``
        Cholesky after ``eigh`` of ``A``; ``"auto"``: the smaller of the two.

    Returns
    -------
    g : ndarray of shape (Vq,)
        The solution of the g-step.
    z : ndarray of shape (Vq,)
        ``z = M'(y - Mg)/λ``; ``z = Ã⁺g`` for a positive definite ``Ã``, and always ``Ã z = g``.
    fit : float
        ``||y - Mg||² + λ <g, Ã⁺g>``.

    Raises
    ------
    ValueError
        If ``form`` is not ``"auto"``, ``"dual"`` or ``"primal"``.
    """
    U, A, w, y = _as_float(U, A, w, y)
    V, n, q = U.shape
    if form == "auto":
        form = "dual" if n <= V * q else "primal"
    if form not in ("dual", "primal"):
        raise ValueError(f"form must be 'auto', 'dual' or 'primal', got {form!r}")
    aux = _mv_gram(U, w, A) if form == "dual" else _feature_gram(U)
    solve = _solve_dual if form == "dual" else _solve_primal
    return solve(U, A, aux, w, y, float(lmbda))


def w_step(U, g, y):
    """Solve the w-step of MVML (Huusari, Kadri & Capponi 2018, eq. 10 / 17).

    The least squares ``w = (Z'Z)⁺ Z'y`` with ``Z[:, v] = U_v g_v``; the pseudo-inverse comes
    from ``eigh``.

    Parameters
    ----------
    U : array-like of shape (V, n, q)
        The per-view feature blocks.
    g : array-like of shape (Vq,)
        The current ``g`` (view-major blocks ``g_v``).
    y : array-like of shape (n,)
        The targets.

    Returns
    -------
    w : ndarray of shape (V,)
        The view weights.
    """
    U, g, y = _as_float(U, g, y)
    V, _, q = U.shape
    Z = (U @ g.reshape(V, q)[:, :, None])[:, :, 0].T
    return _pinv_eigh(Z.T @ Z) @ (Z.T @ y)


def a_step(A, z, mu, lmbda, eta):
    """Take the gradient A-step of MVML (Huusari, Kadri & Capponi 2018, eq. 9 / 16).

    ``Ã ← (1 - 2μη) Ã + μλ (Ã⁺g)(Ã⁺g)'`` with ``z = Ã⁺ g``. With ``μη < ½`` a symmetric
    positive definite ``Ã`` stays symmetric positive definite.

    Parameters
    ----------
    A : array-like of shape (Vq, Vq)
        The current metric ``Ã``.
    z : array-like of shape (Vq,)
        ``Ã⁺ g``, as returned by :func:`g_step`.
    mu : float
        The step size ``μ``.
    lmbda : float
        The regularisation weight ``λ``.
    eta : float
        The weight ``η`` of the Frobenius penalty on the metric.

    Returns
    -------
    A_new : ndarray of shape (Vq, Vq)
        The updated metric.
    """
    A, z = _as_float(A, z)
    return _a_step(A, z, mu, lmbda, eta)


def group_norms(A, n_views):
    """Frobenius norms of the view-pair groups ``γ = {(s,t), (t,s)}`` of ``Ã``.

    Parameters
    ----------
    A : array-like of shape (Vq, Vq)
        The metric ``Ã`` (view-major blocks).
    n_views : int
        The number of views ``V``.

    Returns
    -------
    norms : ndarray of shape (V, V)
        The symmetric matrix of the group norms; entry ``(s, t)`` is the norm of the group
        made of the blocks ``(s, t)`` and ``(t, s)``.
    """
    return _group_norms(A, n_views)


def prox_group_lasso(T, n_views, threshold):
    """Proximal operator of ``threshold · Σ_γ ||T_γ||_F`` over the view-pair groups.

    Huusari, Kadri & Capponi 2018, eq. 12 / 18: group ``γ`` is scaled by
    ``(1 - threshold / ||T_γ||_F)_+``.

    Parameters
    ----------
    T : array-like of shape (Vq, Vq)
        The matrix to threshold (view-major blocks).
    n_views : int
        The number of views ``V``.
    threshold : float
        The threshold of the group soft-thresholding.

    Returns
    -------
    T_prox : ndarray of shape (Vq, Vq)
        ``T`` with each view-pair group scaled.
    """
    return _prox(np.asarray(T, dtype=np.float64), n_views, threshold)


def sparse_a_step(A, z, mu, lmbda, eta, n_views):
    """Take the block-sparse A-step of MVML (Huusari, Kadri & Capponi 2018, eq. 12 / 18).

    The proximal gradient step ``prox_{μη Σ_γ ||·||_F}(Ã + μλ (Ã⁺g)(Ã⁺g)')`` (the paper prints
    the threshold as η; the proximal operator of the step-``μ`` problem thresholds at ``μη``).

    Parameters
    ----------
    A : array-like of shape (Vq, Vq)
        The current metric ``Ã``.
    z : array-like of shape (Vq,)
        ``Ã⁺ g``, as returned by :func:`g_step`.
    mu : float
        The step size ``μ``.
    lmbda : float
        The regularisation weight ``λ``.
    eta : float
        The weight ``η`` of the group-lasso penalty on the metric.
    n_views : int
        The number of views ``V``.

    Returns
    -------
    A_new : ndarray of shape (Vq, Vq)
        The updated metric.
    """
    A, z = _as_float(A, z)
    return _prox(A + (mu * lmbda) * np.outer(z, z), n_views, mu * eta)


def metric_penalty(A, eta, metric, n_views):
    """The metric's regulariser in MVML's objective.

    ``η||Ã||_F²`` for the learned metric (Huusari, Kadri & Capponi 2018, eq. 7 / 13) or
    ``η Σ_γ ||Ã_γ||_F`` for the block-sparse one (eq. 11 / 14); 0 for the fixed metrics.

    Parameters
    ----------
    A : array-like of shape (Vq, Vq)
        The metric ``Ã``.
    eta : float
        The penalty weight ``η``.
    metric : {"learn", "sparse", "cov", "identity"}
        The metric kind (see ``METRICS``); any other value counts as a fixed metric.
    n_views : int
        The number of views ``V``.

    Returns
    -------
    penalty : float
        The value of the regulariser.
    """
    return float(_penalty(np.asarray(A, dtype=np.float64), eta, metric, n_views))


def mvml_objective(U, A, g, w, y, lmbda, eta, metric="learn"):
    """MVML's objective, computed directly with ``Ã⁺`` from ``eigh``.

    ``||y - M g||² + λ <g, Ã⁺ g> + penalty(Ã)``: objective (7)/(13) of Huusari, Kadri &
    Capponi 2018 for ``metric="learn"``, or (11)/(14) for ``"sparse"``.

    Parameters
    ----------
    U : array-like of shape (V, n, q)
        The per-view feature blocks.
    A : array-like of shape (Vq, Vq)
        The metric ``Ã``.
    g : array-like of shape (Vq,)
        The current ``g``.
    w : array-like of shape (V,)
        The view weights.
    y : array-like of shape (n,)
        The targets.
    lmbda : float
        The regularisation weight ``λ``.
    eta : float
        The weight ``η`` of the metric's penalty (see :func:`metric_penalty`).
    metric : {"learn", "sparse", "cov", "identity"}, default="learn"
        The metric kind; the fixed metrics have no penalty.

    Returns
    -------
    objective : float
        The value of the objective.
    """
    U, A, g, w, y = _as_float(U, A, g, w, y)
    r = y - _apply_M(U, w, g)
    return float(r @ r + lmbda * g @ (_pinv_eigh(A) @ g)) + metric_penalty(A, eta, metric, U.shape[0])


def default_step_size(eta):
    """Initial A-step size ``μ0``.

    ``0.5``, or ``0.45/η`` when ``0.5 η >= ½`` (so that ``μ0 η < ½``).

    Parameters
    ----------
    eta : float
        The weight ``η`` of the metric's penalty.

    Returns
    -------
    mu0 : float
        The initial step size.
    """
    return 0.5 if 0.5 * eta < 0.5 else 0.45 / eta


def initial_metric(U, metric, full):
    """Starting or fixed metric ``Ã`` (view-major ``Vq x Vq``).

    In the original space: ``A = I`` (learn, sparse), ``A_lm = I`` for all view pairs (MVML_Cov,
    kernel blocks ``K_l K_m``), ``A = blockdiag(K_v⁺)`` (MVML_I, kernel ``blockdiag(K_v)``).
    Full path (``U_v = K_v``): these matrices; Nyström path: ``Ã = U' A U``, i.e.
    ``blockdiag(U_v'U_v)``, ``[U_l'U_m]`` and ``I``.

    Parameters
    ----------
    U : array-like of shape (V, n, q)
        The per-view feature blocks.
    metric : {"learn", "sparse", "cov", "identity"}
        The metric kind (see ``METRICS``).
    full : bool
        True on the full path (``U_v = K_v``), False on the Nyström path.

    Returns
    -------
    A : ndarray of shape (Vq, Vq)
        The metric.

    Raises
    ------
    ValueError
        If ``metric`` is not one of ``METRICS``.
    """
    (U,) = _as_float(U)
    V, n, q = U.shape
    N = V * q
    if metric in ("learn", "sparse"):
        return np.eye(N) if full else sla.block_diag(*[_symmetric(Uv.T @ Uv) for Uv in U])
    if metric == "cov":
        return np.kron(np.ones((V, V)), np.eye(q)) if full else _feature_gram(U)
    if metric == "identity":
        return sla.block_diag(*[_pinv_eigh(Uv) for Uv in U]) if full else np.eye(N)
    raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
