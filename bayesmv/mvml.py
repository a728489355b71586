"""MVML: multi-view metric learning in vector-valued kernel spaces (Huusari, Kadri, Capponi).

Paper ``000_…`` (Algorithm 1, eqs. 6–18). The multi-view kernel is ``K = H A H`` (eq. 5) with
``H = blockdiag(K_1..K_V)`` and a learned block metric ``A``. With the change of variable
``g = A H c`` the problem becomes (7)/(13)

    min_{g, A, w}  ||y - (w' ⊗ I_n) U g||² + λ <g, A⁺ g> + η ||A||_F²      (A ≻ 0)

and MVML alternates a g-step (8/15), an optional w-step (10/17) and an A-step: a gradient
step (9/16) or, for the block-sparse variant (11)/(14), a proximal group-lasso step on the
view-pair blocks (12/18).

One engine serves both of the paper's versions, written in terms of per-view feature blocks
``U_v`` (``n x q``) and a metric ``Ã`` (``Vq x Vq``, view-major blocks):

* full path (Algorithm 1a), used when the Nyström level is ``p = n`` (``nystrom=1.0``):
  ``U_v = K_v`` (the Gram matrix itself) and ``Ã = A``, so (13) *is* (7);
* block-Nyström path (Algorithm 1b, ``p < n``): ``U_v = K_v[:, S] (K_v[S, S]⁺)^{1/2}`` with
  one shared landmark set ``S`` (``bayesmv.kernels.block_nystrom``) and ``Ã = U' A U``. Only
  ``n x p`` kernel columns are ever formed.

Numerics (float64 NumPy/SciPy throughout, LAPACK Cholesky and ``eigh``): MVML is a short host-side
loop of dense factorisations whose per-shape XLA compilation would cost more than the whole
fit (26 compiles, ~1.9 s, against a 0.03 s fit at n = 500), so it is not jitted; the kernels come
from ``bayesmv.kernels`` on NumPy arrays, which evaluates them eagerly. For the fixed and block-sparse
metrics the g-step is solved in
whichever of two equivalent forms is smaller — the dual ``c = (M Ã M' + λI)⁻¹ y``,
``g = Ã M' c`` (an ``n x n`` Cholesky) or the primal ``g = L h``, ``(λI + L' M'M L) h = L' M' y``
with ``Ã = L L'`` from ``eigh`` (an ``N x N`` Cholesky, ``N = Vq``); ``M = (w' ⊗ I_n) U``. Both
give ``Ã⁺ g = M' r / λ`` with the
residual ``r``, so the A-step (9/16) needs no inverse at all. No explicit inverse anywhere;
pseudo-inverses by ``eigh``. For the learned metric nothing is factorised per step: after ``k``
A-steps (9)/(16) ``Ã = α Ã0 + Z diag(β) Z'`` (one column ``z`` per step), so ``M Ã M' + λI`` is the
starting kernel ``α M Ã0 M' + λI`` plus a rank-``k`` term. One thin eigendecomposition
``M Ã0 M' = Q diag(s) Q'`` per weight vector (``eigh`` when ``n <= N``, else the SVD of its
``n x N`` factor) puts every trial step in that eigenbasis: a Woodbury solve for ``Q'c`` and the
objective ``λ c'y + η||Ã||²`` in ``O(r k²)``; ``z = M'c`` and ``g = Ãz`` are formed only for an
accepted step. The solver shares the decomposition across outputs (one-vs-rest) and across the
``(λ, η)`` candidates of ``MVMLClassifierCV``, and runs them all in one lockstep batch.

Note (paper §3.5): on the Nyström path the Frobenius regulariser acts on ``Ã``, not on ``A``,
so for ``metric="learn"``/``"sparse"`` a block-Nyström fit with ``p = n`` is a different (equally
valid) problem from the full path; for fixed metrics (``"cov"``, ``"identity"``) the two
coincide. ``nystrom=1.0`` therefore runs the exact full path (as the reference implementation).

Step size: the A-step starts from ``μ0`` (default as the reference implementation:
``0.5``, or ``0.45/η`` when ``η >= 1``; ``μ0 η < ½`` is enforced so ``(1 - 2μη) > 0`` and the
update keeps ``Ã`` symmetric positive definite) and halves ``μ`` until the objective (7)/(13)
— evaluated after the following exact g-step — does not increase. Hence the recorded
objective never increases.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
import scipy.linalg as sla
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone, is_classifier
from sklearn.metrics import accuracy_score, r2_score

from .base import MultiViewMixin, SearchCVMixin, encode_labels, labels_from_scores, one_vs_rest_targets
from .datasets import SEED_DEPRECATED, check_positive, check_random_seed, check_targets
from .diagnostics import FitTrace
from .kernels import block_nystrom, get_kernel, n_landmarks

__all__ = [
    "MVMLClassifier",
    "MVMLClassifierCV",
    "MVMLRegressor",
    "MVMLRegressorCV",
    "a_step",
    "default_step_size",
    "g_step",
    "group_norms",
    "initial_metric",
    "mvml_objective",
    "plot_metric",
    "prox_group_lasso",
    "sparse_a_step",
    "w_step",
]

METRICS = ("learn", "sparse", "cov", "identity")
_RCOND = 1e-12  # relative eigenvalue cut-off of the eigh pseudo-inverses


# ----------------------------------------------------------------------------------------
# small pure functions (U: (V, n, q) feature blocks, A: (Vq, Vq) metric, g: (Vq,), w: (V,))
# ----------------------------------------------------------------------------------------


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


class _BaseKernel(NamedTuple):
    """Thin eigendecomposition ``M Ã0 M' = Q diag(s) Q'`` (``Q``: ``n x r``) of the starting
    metric's multi-view kernel under the weights ``w``, and ``W = Q'MM'Q`` (``r x r``)."""

    Q: np.ndarray
    s: np.ndarray
    W: np.ndarray
    w: np.ndarray


class _LowRankMetric(NamedTuple):
    """``Ã = α Ã0 + Z diag(β) Z'`` for a batch of ``B`` problems, the learned metric after the
    A-steps (eq. 9/16 add one ``zz'`` each, in slots of a fixed capacity ``K``; ``β = 0`` in unused
    slots), as the trial steps need it: ``T = Q'M Z``, ``Z``'s image in the base kernel's
    eigenbasis, and ``sq = ||Ã||_F²`` (``Z`` itself is kept apart). Shapes ``α, sq: (B,)``,
    ``β: (B, K)``, ``T: (B, r, K)``."""

    alpha: np.ndarray
    beta: np.ndarray
    T: np.ndarray
    sq: np.ndarray


def _base_kernel(U, w, full, with_W=True):
    """``M Ã0 M'`` for the block-diagonal start of the learned metric (``Σ_v w_v² U_v U_v'`` full,
    ``Σ_v w_v² (U_v U_v')²`` Nyström): ``eigh`` of the ``n x n`` kernel when ``n <= Vq``, else the
    thin SVD of its ``n x Vq`` factor ``[w_v U_v (U_v'U_v)^{1/2}]`` (no ``n x n`` matrix). ``W``
    only ``with_W`` (the fixed-weight path uses it; after a w-step it would be wasted)."""
    V, n, q = U.shape
    if n <= V * q:
        s, Q = sla.eigh(_blockdiag_gram(U, w, full), driver="evd", check_finite=False)  # divide and conquer
        s = np.maximum(s, 0.0)
    else:
        F = np.concatenate([wv * Uv @ _sqrt_factor(Uv.T @ Uv) for Uv, wv in zip(U, w)], axis=1)
        Q, sigma, _ = sla.svd(F, full_matrices=False, check_finite=False)
        s = sigma * sigma
    if not with_W:
        return _BaseKernel(Q, s, None, w)
    QM = _apply_Mt(U, w, Q.T)  # (M'Q)' = Q'M
    return _BaseKernel(Q, s, _symmetric(QM @ QM.T), w)


def _eigen_solve(base, metric, QY, lmbda):
    """``x = Q'c`` with ``c = (M Ã M' + λI)⁻¹ y`` per row, from ``Q'y`` alone: in the eigenbasis
    ``M Ã M' = α diag(s) + T diag(β) T'`` (``MZ`` lies in the range of ``Q``, the range of ``M``),
    so Woodbury costs ``O(r K²)``. The capacitance ``I + √β T'S⁻¹T √β`` has eigenvalues ``>= 1``
    (a batched LU solve is exact enough)."""
    S = metric.alpha[:, None] * base.s + lmbda[:, None]
    if not metric.beta.shape[1]:
        return QY / S
    root, TS = np.sqrt(metric.beta), metric.T / S[:, :, None]
    cap = np.eye(root.shape[1]) + root[:, :, None] * (np.swapaxes(metric.T, 1, 2) @ TS) * root[:, None, :]
    u = root * np.linalg.solve(cap, (root * np.einsum("brk,br->bk", TS, QY))[:, :, None])[:, :, 0]
    return (QY - np.einsum("brk,bk->br", metric.T, u)) / S


def _objective_rows(x, QY, y_perp, lmbda, eta, sq):
    """Objective (7)/(13) after the g-step: ``λ c'y + η||Ã||²`` with ``c'y = x'Q'y + ||y_⊥||²/λ``
    (``y_perp = ||y_⊥||²``, ``y`` outside the range of ``Q``); ``inf`` where not finite."""
    J = lmbda * np.sum(x * QY, axis=1) + y_perp + eta * sq
    return np.where(np.isfinite(J), J, np.inf)


def _metric_times(A0, alpha, beta, Zc, z):
    """``g = Ã z = α Ã0 z + Z diag(β) Z'z`` per row (``A0 = None``: ``Ã0 = I``)."""
    A0z = z if A0 is None else z @ A0
    return alpha[:, None] * A0z + np.einsum("bnk,bk->bn", Zc, beta * np.einsum("bnk,bn->bk", Zc, z))


def _a_step_rows(metric, slot, Qz, zz, zg, mu, lmbda, eta):
    """A-step (9/16) ``Ã' = aÃ + b zz'`` (``a = 1 - 2μη``, ``b = μλ``; ``Qz = Q'Mz``, ``zz = z'z``,
    ``zg = z'Ãz``) into column ``slot`` of each row; ``||Ã'||² = a²||Ã||² + 2ab z'Ãz + b²||z||⁴``.
    Returns the metric and the mask ``a > 0`` (otherwise ``Ã'`` leaves the PD cone; such rows
    keep ``a = 1``). Writes the new column into ``metric.T``: pass rows taken with :func:`_take`."""
    ok = 1.0 - 2.0 * mu * eta > 0.0
    a = np.where(ok, 1.0 - 2.0 * mu * eta, 1.0)
    b = mu * lmbda
    rows = np.arange(a.size)
    beta, T = a[:, None] * metric.beta, metric.T
    beta[rows, slot], T[rows, :, slot] = b, Qz
    return _LowRankMetric(
        a * metric.alpha, beta, T, a * a * metric.sq + 2.0 * a * b * zg + b * b * zz * zz
    ), ok


def _take(metric, rows):
    """A copy of the ``rows`` of a batch (integer or boolean index)."""
    return _LowRankMetric(*(x[rows] for x in metric))


def _put(metric, rows, other):
    for x, y in zip(metric, other):
        x[rows] = y


def _dense_metric(A0, alpha, beta, Zc):
    """``Ã = α Ã0 + Z diag(β) Z'`` of one problem as a matrix."""
    return _symmetric(alpha * A0 + (Zc * beta) @ Zc.T)


def _as_float(*arrays):
    return tuple(np.asarray(a, dtype=np.float64) for a in arrays)


# ---------------------------------------------------------------------------- public steps


def g_step(U, A, w, y, lmbda, form="auto"):
    """g-step, eq. (8) / (15): ``g = (M'M + λ Ã⁺)⁻¹ M' y`` with ``M = (w' ⊗ I_n) U``.

    ``U``: ``(V, n, q)`` feature blocks (``K_v`` on the full path, Nyström factors otherwise);
    ``A``: ``(Vq, Vq)`` symmetric PSD metric; ``y``: ``(n,)``. ``form``: ``"dual"``
    (``n x n`` Cholesky of ``M Ã M' + λI``), ``"primal"`` (``Vq x Vq`` Cholesky after ``eigh``
    of ``A``) or ``"auto"`` (the smaller). ``g`` is restricted to the range of ``Ã`` (the
    pseudo-inverse convention). Returns ``(g, z, fit)`` with ``z = M'(y - Mg)/λ`` (``= Ã⁺g`` for
    PD ``Ã``; always ``Ã z = g``) and ``fit = ||y - Mg||² + λ <g, Ã⁺g>``.
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
    """w-step, eq. (10) / (17): least squares ``w = (Z'Z)⁺ Z'y``, ``Z[:, v] = U_v g_v`` (eigh pseudo-inverse)."""
    U, g, y = _as_float(U, g, y)
    V, _, q = U.shape
    Z = (U @ g.reshape(V, q)[:, :, None])[:, :, 0].T
    return _pinv_eigh(Z.T @ Z) @ (Z.T @ y)


def a_step(A, z, mu, lmbda, eta):
    """A-step, eq. (9) / (16): ``Ã ← (1 - 2μη) Ã + μλ (Ã⁺g)(Ã⁺g)'`` with ``z = Ã⁺ g``.

    With ``μη < ½`` a symmetric positive definite ``Ã`` stays symmetric positive definite.
    """
    A, z = _as_float(A, z)
    return _a_step(A, z, mu, lmbda, eta)


def group_norms(A, n_views):
    """Frobenius norms of the view-pair groups ``γ = {(s,t), (t,s)}`` of ``Ã`` (``V x V``, symmetric)."""
    return _group_norms(A, n_views)


def prox_group_lasso(T, n_views, threshold):
    """Proximal operator of ``threshold · Σ_γ ||T_γ||_F`` over view-pair groups (eq. 12 / 18):
    group ``γ`` is scaled by ``(1 - threshold / ||T_γ||_F)_+``."""
    return _prox(np.asarray(T, dtype=np.float64), n_views, threshold)


def sparse_a_step(A, z, mu, lmbda, eta, n_views):
    """Block-sparse A-step, eq. (12) / (18): the proximal gradient step
    ``prox_{μη Σ_γ ||·||_F}(Ã + μλ (Ã⁺g)(Ã⁺g)')`` (the paper prints the threshold as η; the
    proximal operator of the step-``μ`` problem thresholds at ``μη``)."""
    A, z = _as_float(A, z)
    return _prox(A + (mu * lmbda) * np.outer(z, z), n_views, mu * eta)


def metric_penalty(A, eta, metric, n_views):
    """The A-regulariser of (7)/(13) (``η||Ã||_F²``) or (11)/(14) (``η Σ_γ ||Ã_γ||_F``); 0 for fixed metrics."""
    return float(_penalty(np.asarray(A, dtype=np.float64), eta, metric, n_views))


def mvml_objective(U, A, g, w, y, lmbda, eta, metric="learn"):
    """Objective (7)/(13) (``metric="learn"``) or (11)/(14) (``"sparse"``), computed directly with
    ``Ã⁺`` from ``eigh``: ``||y - M g||² + λ <g, Ã⁺ g> + penalty(Ã)``."""
    U, A, g, w, y = _as_float(U, A, g, w, y)
    r = y - _apply_M(U, w, g)
    return float(r @ r + lmbda * g @ (_pinv_eigh(A) @ g)) + metric_penalty(A, eta, metric, U.shape[0])


def default_step_size(eta):
    """Initial A-step size ``μ0``: ``0.5``, or ``0.45/η`` when ``0.5 η >= ½`` (so ``μ0 η < ½``)."""
    return 0.5 if 0.5 * eta < 0.5 else 0.45 / eta


def initial_metric(U, metric, full):
    """Starting / fixed metric ``Ã`` (view-major ``Vq x Vq``).

    In the original space: ``A = I`` (learn, sparse), ``A_lm = I`` for all view pairs (MVML_Cov,
    kernel blocks ``K_l K_m``), ``A = blockdiag(K_v⁺)`` (MVML_I, kernel ``blockdiag(K_v)``).
    Full path (``U_v = K_v``): these matrices; Nyström path: ``Ã = U' A U``, i.e.
    ``blockdiag(U_v'U_v)``, ``[U_l'U_m]`` and ``I``.
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


# ----------------------------------------------------------------------------------------
# the alternating solver (Algorithm 1) for one output column
# ----------------------------------------------------------------------------------------


def _check_finite(J):
    """``J``, or a named error when an objective is not finite."""
    if not np.all(np.isfinite(J)):
        raise FloatingPointError(
            "the MVML g-step produced a non-finite objective (ill-conditioned kernels?); "
            "increase lmbda or lower the nystrom level"
        )
    return J


def _learned_metric_fits(U, A0, base, Y, lmbda, eta, mu0, max_iter, tol, max_backtrack, full, learn_weights):
    """Algorithm 1 with the learned metric for the rows of ``Y`` (``B x n``; ``lmbda``, ``eta``,
    ``mu0``: ``(B,)``), in lockstep: each round every unfinished row tries its step size ``μ``;
    a row whose objective (7)/(13) does not increase takes the step, the others halve ``μ``
    (``max_backtrack`` halvings without a decrease: a stationary point).

    Everything runs in the base kernel's eigenbasis, on ``x = Q'c``: with ``z = M'c = M'Qx``,
    ``Q'Mz = Wx``, ``z'z = x'Wx`` and ``z'Ãz = α x'diag(s)x + Σ_j β_j (T_j'x)²``, so a trial step
    costs ``O(r K²)`` and a step ``O(r²)``; ``g = Ãz`` is formed at the end, the ``z`` columns of
    ``Ã`` only when ``metric_of(b)`` asks for row ``b``'s ``Ã``. ``full``: ``Ã0 = I`` (the full
    path). ``learn_weights``: the w-step (10/17) before each A-step (one row): the kernel is
    decomposed again for the new weights and ``z``, ``Ãz`` and the columns are kept explicitly.
    Returns ``(metric_of, G, w, objectives, step sizes, converged)``."""
    B, N, K = Y.shape[0], A0.shape[0], max_iter
    r = base.Q.shape[1]
    metric = _LowRankMetric(np.ones(B), np.zeros((B, K)), np.zeros((B, r, K)), np.full(B, np.sum(A0 * A0)))
    cols = np.zeros((B, N if learn_weights else r, K))  # the steps' z (learned weights) or x = Q'c
    everyone = np.arange(B)

    def project(base):
        QY = Y @ base.Q
        return QY, np.maximum(np.sum(Y * Y, axis=1) - np.sum(QY * QY, axis=1), 0.0)

    def z_of(rows):  # z = M'Qx, in the basis x was computed in
        return _apply_Mt(U, x_base.w, x[rows] @ x_base.Q.T)

    def g_of(rows, z):  # g = Ãz with explicit columns (learned weights)
        return _metric_times(None if full else A0, metric.alpha[rows], metric.beta[rows], cols[rows], z)

    QY, y_perp = project(base)
    x, x_base = _eigen_solve(base, metric, QY, lmbda), base
    J = _check_finite(_objective_rows(x, QY, y_perp, lmbda, eta, metric.sq))
    objective, steps = [[j] for j in J], [[] for _ in range(B)]
    n_steps, n_halved, mu = np.zeros(B, int), np.zeros(B, int), mu0.copy()
    active, converged = np.full(B, K > 0), np.zeros(B, bool)
    Qz, zz, zg = np.zeros_like(QY), np.zeros(B), np.zeros(B)
    z_now = np.zeros((B, N)) if learn_weights else None

    def start_iteration(rows):
        nonlocal base, metric, QY, y_perp
        if not learn_weights:
            Qz[rows] = x[rows] @ base.W
            zz[rows] = np.sum(x[rows] * Qz[rows], axis=1)
            Tx = np.einsum("brk,br->bk", metric.T[rows], x[rows])
            zg[rows] = metric.alpha[rows] * np.sum(base.s * x[rows] ** 2, axis=1) + np.sum(
                metric.beta[rows] * Tx**2, 1
            )
            return
        z = z_of(rows)  # w-step, then the kernel and the metric's image for the new weights
        g = g_of(rows, z)
        base = _base_kernel(U, w_step(U, g[0], Y[0]), full, with_W=False)
        QY, y_perp = project(base)
        metric = metric._replace(T=np.swapaxes(_apply_M(U, base.w, np.swapaxes(cols, 1, 2)) @ base.Q, 1, 2))
        z_now[rows], Qz[rows] = z, _apply_M(U, base.w, z) @ base.Q
        zz[rows], zg[rows] = np.sum(z * z, axis=1), np.sum(z * g, axis=1)

    if K:
        start_iteration(everyone)
    while active.any():
        rows = np.flatnonzero(active)
        trial, ok = _a_step_rows(
            _take(metric, rows), n_steps[rows], Qz[rows], zz[rows], zg[rows], mu[rows], lmbda[rows], eta[rows]
        )
        x_t = _eigen_solve(base, trial, QY[rows], lmbda[rows])
        J_t = _objective_rows(x_t, QY[rows], y_perp[rows], lmbda[rows], eta[rows], trial.sq)
        took = ok & (J_t <= J[rows])
        acc, rej = rows[took], rows[~took]
        _put(metric, acc, _take(trial, took))
        cols[acc, :, n_steps[acc]] = z_now[acc] if learn_weights else x[acc]
        x[acc] = x_t[took]
        if acc.size:
            x_base = base
        for b, j in zip(acc, J_t[took]):
            objective[b].append(j)
            steps[b].append(mu[b])
        small = J[acc] - J_t[took] <= tol * np.maximum(np.abs(J_t[took]), 1e-300)
        J[acc] = J_t[took]
        n_steps[acc] += 1
        converged[acc[small]] = True
        active[acc[small | (n_steps[acc] == K)]] = False
        mu[acc], n_halved[acc] = mu0[acc], 0
        mu[rej] *= 0.5
        n_halved[rej] += 1
        stuck = rej[n_halved[rej] == max_backtrack]
        converged[stuck], active[stuck] = True, False
        if (nxt := acc[active[acc]]).size:
            start_iteration(nxt)
    if learn_weights:
        G = g_of(everyone, z_of(everyone))

        def metric_of(b):
            return _dense_metric(A0, metric.alpha[b], metric.beta[b], cols[b])

    else:  # g = α Ã0 z + M'Q X (β ∘ T'x) (z_j'z = T_j'x, z_j = M'Q x_j); Z on demand
        mixed = np.einsum("brk,bk->br", cols, metric.beta * np.einsum("brk,br->bk", metric.T, x))
        if full:
            G = _apply_Mt(U, base.w, (metric.alpha[:, None] * x + mixed) @ base.Q.T)
        else:
            G = metric.alpha[:, None] * (z_of(everyone) @ A0) + _apply_Mt(U, base.w, mixed @ base.Q.T)

        def metric_of(b):
            return _dense_metric(
                A0, metric.alpha[b], metric.beta[b], _apply_Mt(U, base.w, cols[b].T @ base.Q.T).T
            )

    objective = [np.asarray(o) for o in objective]
    return metric_of, G, base.w, objective, [np.asarray(m) for m in steps], converged


class _Solver:
    """Algorithm 1 on fixed features ``U``: the starting metric and kernel (``M Ã0 M'``'s thin
    eigendecomposition for the learned metric, else ``U'U`` or ``M Ã M'``) are computed once and
    shared by every output and every ``(λ, η)`` the solver is asked for."""

    def __init__(self, U, metric, full, learn_weights, max_iter, tol, max_backtrack=30):
        self.U = U
        self.V, self.n, self.q = U.shape
        self.N = self.V * self.q
        self.metric, self.full = metric, full
        self.learn_weights = learn_weights
        self.max_iter, self.tol, self.max_backtrack = int(max_iter), float(tol), int(max_backtrack)
        self.form = "dual" if self.n <= self.N else "primal"
        self.A0 = initial_metric(U, metric, full)
        self.w0 = np.full(self.V, 1.0 / self.V)
        if metric == "learn":
            self.aux0 = _base_kernel(U, self.w0, full, with_W=not learn_weights)
        elif self.form == "primal":
            self.aux0 = _feature_gram(U)
        elif metric == "sparse":  # block-diagonal start: M Ã M' = Σ_v w_v² U_v Ã_vv U_v'
            self.aux0 = _blockdiag_gram(U, self.w0, full)
        else:
            self.aux0 = _mv_gram(U, self.w0, self.A0)
        self._pen_metric = metric if metric in ("learn", "sparse") else "fixed"

    def fit(self, Y, penalties):
        """Algorithm 1 for every column of ``Y`` (``n x C``) under every ``(λ, η, μ0)`` of
        ``penalties``; results in penalty-major order. The learned metric with fixed weights runs
        all of them in one lockstep batch."""
        Y = np.asarray(Y, dtype=np.float64)
        pen = np.repeat(np.asarray(penalties, dtype=np.float64), Y.shape[1], axis=0)
        rows = np.tile(Y.T, (len(penalties), 1))
        if self.metric != "learn":
            return [self._fit_generic(y, *p) for y, p in zip(rows, pen)]
        if self.learn_weights:
            return [r for y, p in zip(rows, pen) for r in self._fit_learned(y[None], p[None])]
        return self._fit_learned(rows, pen)

    def _fit_learned(self, rows, pen):
        metric_of, G, w, objective, steps, converged = _learned_metric_fits(
            self.U,
            self.A0,
            self.aux0,
            rows,
            *pen.T,
            self.max_iter,
            self.tol,
            self.max_backtrack,
            self.full,
            self.learn_weights,
        )
        return [
            {
                "A": functools.partial(metric_of, b),
                "g": G[b],
                "w": w,
                "objective": objective[b],
                "step_size": steps[b],
                "converged": bool(converged[b]),
            }
            for b in range(len(rows))
        ]

    def metric_matrix(self, result):
        """The fitted ``Ã`` of one result of :meth:`fit` as a matrix."""
        A = result["A"]
        return A() if callable(A) else A

    def _fit_generic(self, y, lmbda, eta, mu0):
        """Algorithm 1 for the sparse (12/18) and fixed metrics, one output."""
        sparse = self.metric == "sparse"
        A, w, aux = self.A0, self.w0, self.aux0
        zero = np.zeros(self.N)
        _, aux, g, z, J = _trial(self.U, A, aux, zero, w, y, 0.0, lmbda, eta, self._pen_metric, self.form)
        J = _check_finite(float(J))
        objective, steps = [J], []
        converged = not sparse and not self.learn_weights
        for _ in range(0 if converged else self.max_iter):
            if self.learn_weights:  # w-step (10)/(17); then M Ã M' for the new w
                w = w_step(self.U, g, y)
                if self.form == "dual":
                    aux = _mv_gram(self.U, w, A)
            if not sparse:  # fixed metric: alternate g- and w-steps only
                _, aux, g, z, J_new = _trial(
                    self.U, A, aux, zero, w, y, 0.0, lmbda, eta, self._pen_metric, self.form
                )
                J_new = _check_finite(float(J_new))
                steps.append(0.0)
            else:
                mu, accepted = mu0, False
                for _bt in range(self.max_backtrack):
                    A_t, aux_t, g_t, z_t, J_t = _trial(
                        self.U, A, aux, z, w, y, mu, lmbda, eta, self.metric, self.form
                    )
                    J_t = float(J_t)
                    if J_t <= J:
                        accepted = True
                        break
                    mu *= 0.5
                if not accepted:  # no step size decreases the objective: stationary point
                    converged = True
                    break
                A, aux, g, z, J_new = A_t, aux_t, g_t, z_t, J_t
                steps.append(mu)
            decrease = J - J_new
            J = J_new
            objective.append(J)
            if decrease <= self.tol * max(abs(J), 1e-300):
                converged = True
                break
        return {
            "A": A,
            "g": g,
            "w": w,
            "objective": np.asarray(objective),
            "step_size": np.asarray(steps),
            "converged": bool(converged),
        }


# ----------------------------------------------------------------------------------------
# plotting (the paper's Figure 3)
# ----------------------------------------------------------------------------------------


def plot_metric(A, n_views, ax=None, view_names=None, log=True, title=None):
    """Image of ``|Ã|`` with the view-pair block grid (the paper's Figure 3). Returns the axes."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    A = np.abs(np.asarray(A, dtype=float))
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] % n_views:
        raise ValueError(f"A must be a square (V q, V q) matrix for {n_views} views, got shape {A.shape}")
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 4))
    q = A.shape[0] // n_views
    positive = A[A > 0]
    norm = None
    if log and positive.size:
        lo = max(positive.min(), positive.max() * 1e-8)
        norm = LogNorm(vmin=lo, vmax=positive.max())
        A = np.where(A > 0, np.maximum(A, lo), np.nan)
    im = ax.imshow(A, cmap="viridis", norm=norm, interpolation="nearest")
    for b in range(1, n_views):
        ax.axhline(b * q - 0.5, color="w", lw=1)
        ax.axvline(b * q - 0.5, color="w", lw=1)
    centers = [(v + 0.5) * q - 0.5 for v in range(n_views)]
    names = list(view_names) if view_names is not None else [f"view {v}" for v in range(n_views)]
    ax.set_xticks(centers, names)
    ax.set_yticks(centers, names)
    ax.set_title(title or "learned metric |Ã| (view-pair blocks)")
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    return ax


# ----------------------------------------------------------------------------------------
# estimators
# ----------------------------------------------------------------------------------------


def _decision_values(Ut, g, w):
    """``Σ_v w_v U_test_v g_v`` per output (``g``: ``(C, Vq)`` or ``(Vq,)``, ``w`` likewise) -> ``(m, C)``."""
    V, _, q = Ut.shape
    G = np.asarray(g).reshape(-1, V, q) * np.asarray(w).reshape(-1, V)[:, :, None]
    return sum(Ut[v] @ G[:, v, :].T for v in range(V))


def _gram(kernel, X, Y=None):
    """``kernel(X, Y)`` on host arrays (NumPy in, NumPy out: nothing to compile), symmetrised when ``Y`` is None."""
    K = np.asarray(kernel(np.asarray(X), None if Y is None else np.asarray(Y)), dtype=np.float64)
    return _symmetric(K) if Y is None else K


class _MVMLBase(MultiViewMixin, BaseEstimator):
    def __init__(
        self,
        lmbda=0.1,
        eta=1.0,
        kernel="rbf",
        kernel_params=None,
        nystrom=1.0,
        metric="learn",
        learn_weights=False,
        max_iter=6,
        tol=1e-4,
        random_state=0,
        step_size=None,
        seed=SEED_DEPRECATED,
    ):
        self.lmbda = lmbda
        self.eta = eta
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.nystrom = nystrom
        self.metric = metric
        self.learn_weights = learn_weights
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.seed = seed
        self.step_size = step_size

    # -- parameter checks
    def _check_params(self, n_views):
        check_positive("lmbda", self.lmbda)
        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {self.metric!r}")
        learn = self.metric in ("learn", "sparse")
        check_positive("eta", self.eta, allow_zero=not learn)
        check_positive("max_iter", self.max_iter, allow_zero=True, integer=True)
        check_positive("tol", self.tol, allow_zero=True)
        if not isinstance(self.learn_weights, (bool, np.bool_)):
            raise ValueError(f"learn_weights must be True or False, got {self.learn_weights!r}")
        self.random_seed_ = check_random_seed(self.random_state, self.seed, type(self).__name__)
        if self.step_size is None:
            mu0 = default_step_size(float(self.eta)) if learn else 0.0
        else:
            mu0 = check_positive("step_size", self.step_size)
            if self.metric == "learn" and mu0 * self.eta >= 0.5:
                raise ValueError(
                    f"step_size * eta must be < 1/2 to keep the metric positive definite (eq. 9); "
                    f"got step_size={mu0!r}, eta={self.eta!r}"
                )
        kernels = self._kernel_list(n_views)
        params = self._params_list(n_views)
        return float(mu0), kernels, params

    def _kernel_list(self, V):
        k = self.kernel
        if isinstance(k, (list, tuple)):
            if len(k) != V:
                raise ValueError(
                    f"kernel has {len(k)} entries but Xs has {V} views; give one kernel per view"
                )
            ks = list(k)
        else:
            ks = [k] * V
        if any(isinstance(x, str) and x == "precomputed" for x in ks) and not all(
            isinstance(x, str) and x == "precomputed" for x in ks
        ):
            raise ValueError("kernel='precomputed' must apply to every view")
        if ks[0] != "precomputed":
            for x in ks:
                get_kernel(x)  # raises a clear ValueError for unknown names
        return ks

    def _params_list(self, V):
        kp = self.kernel_params
        if kp is None:
            return [{}] * V
        if isinstance(kp, dict):
            return [dict(kp)] * V
        if isinstance(kp, (list, tuple)):
            if len(kp) != V:
                raise ValueError(f"kernel_params has {len(kp)} entries but Xs has {V} views")
            out = []
            for p in kp:
                if p is not None and not isinstance(p, dict):
                    raise TypeError(f"kernel_params entries must be dicts or None, got {type(p).__name__}")
                out.append(dict(p or {}))
            return out
        raise TypeError(f"kernel_params must be a dict, a list of dicts or None, got {type(kp).__name__}")

    # -- features
    def _train_features(self, Xs, kernels, params):
        n = Xs[0].shape[0]
        pre = kernels[0] == "precomputed"
        if pre:
            for v, K in enumerate(Xs):
                if K.shape != (n, n):
                    raise ValueError(
                        f"with kernel='precomputed', Xs[{v}] must be a square (n_samples, n_samples) Gram "
                        f"matrix, got shape {K.shape}"
                    )
                if not np.allclose(K, K.T, rtol=1e-8, atol=1e-10 * max(1.0, np.abs(K).max())):
                    raise ValueError(f"precomputed kernel Xs[{v}] is not symmetric")
        p = n_landmarks(self.nystrom, n)
        self.n_landmarks_ = p
        if p == n:  # full path (Algorithm 1a): U_v = K_v
            self.nystrom_ = False
            self.landmarks_ = np.arange(n)
            self.nystrom_factors_ = None
            self.landmark_views_ = None if pre else [np.asarray(X) for X in Xs]
            if pre:
                U = np.stack([np.asarray(K, dtype=np.float64) for K in Xs])
            else:
                U = np.stack([_gram(get_kernel(k, **kp), X) for X, k, kp in zip(Xs, kernels, params)])
        else:  # block-Nyström path (Algorithm 1b), shared landmarks; only n x p kernel columns
            bound = "rbf" if pre else [get_kernel(k, **kp) for k, kp in zip(kernels, params)]
            bn = block_nystrom(
                [np.asarray(X, dtype=np.float64) for X in Xs],
                kernels=bound,
                n_components=p,
                random_state=self.random_seed_,
                precomputed=pre,
            )
            U = np.stack(bn.U)
            self.nystrom_ = True
            self.landmarks_ = np.asarray(bn.landmarks)
            self.nystrom_factors_ = np.stack([f.W_pinv_sqrt for f in bn.factors])
            self.landmark_views_ = None if pre else [np.asarray(X)[self.landmarks_] for X in Xs]
        if not np.isfinite(U).all():
            raise ValueError("the kernel matrices contain NaN or inf; check the kernel and its parameters")
        return U

    def _test_features(self, Xs):
        """Test features ``U_test_v``: the kernel columns ``k_v(X, X_train)`` (full path) or the Nyström
        extension ``k_v(X, landmarks) (W_v⁺)^{1/2}`` (MVML §3.5); precomputed: test-vs-train kernels."""
        kernels = self._kernel_list(self.n_views_)
        params = self._params_list(self.n_views_)
        if kernels[0] == "precomputed":
            Qs = [np.asarray(K, dtype=np.float64)[:, self.landmarks_] for K in Xs]
        else:
            Qs = [
                _gram(get_kernel(k, **kp), X, L)
                for X, L, k, kp in zip(Xs, self.landmark_views_, kernels, params)
            ]
        if self.nystrom_:
            Qs = [Q @ W for Q, W in zip(Qs, self.nystrom_factors_)]
        return np.stack(Qs)

    # -- fit / predict core
    def fit(self, Xs, y):
        """Learn the metric and the coefficients from the views ``Xs`` (kernels with
        ``kernel="precomputed"``) and the class labels or real targets ``y``; returns ``self``."""
        Xs, y = self._validate_fit(Xs, y)
        return self._fit_targets(Xs, self._targets(y))

    def predict(self, Xs):
        """Class labels (classifier) or real predictions (regressor) for the views ``Xs``."""
        return self._predict_from_decision(self._decision(Xs))

    def _fit_targets(self, Xs, Y):
        """Run Algorithm 1 for each column of ``Y`` (``n x n_outputs``); one-vs-rest is per column."""
        mu0, kernels, params = self._check_params(len(Xs))
        solver = self._solver(self._train_features(Xs, kernels, params))
        return self._record(solver, solver.fit(Y, [(self.lmbda, self.eta, mu0)]))

    def _solver(self, U):
        """Algorithm 1 on the training features ``U`` (``V x n x q``) with this estimator's settings."""
        return _Solver(U, self.metric, not self.nystrom_, bool(self.learn_weights), self.max_iter, self.tol)

    def _record(self, solver, results):
        """Record the fitted attributes from the solver's results (one per output)."""
        V = solver.V
        A = [solver.metric_matrix(r) for r in results]
        norms = [_group_norms(a, V) for a in A]
        single = len(results) == 1
        stack = (
            (lambda xs: np.asarray(xs[0])) if single else (lambda xs: np.stack([np.asarray(x) for x in xs]))
        )
        self.solver_form_ = solver.form
        self.A_ = stack(A)
        self.g_ = stack([r["g"] for r in results])
        self.weights_ = stack([r["w"] for r in results])
        self.block_norms_ = stack(norms)
        self.fit_traces_ = [
            FitTrace(
                estimates={"weights": np.asarray(r["w"]), "block_norms": nv},
                traces={"objective": r["objective"], "step_size": r["step_size"]},
                converged=r["converged"],
                method=f"MVML ({self.metric}, {f'Nyström p={self.n_landmarks_}' if self.nystrom_ else 'full'})",
            )
            for r, nv in zip(results, norms)
        ]
        # Outputs are independent problems: the joint objective is the sum (padded with final values).
        T = max(len(r["objective"]) for r in results)
        total = sum(np.pad(r["objective"], (0, T - len(r["objective"])), mode="edge") for r in results)
        self.n_iter_ = T - 1
        self.fit_trace_ = FitTrace(
            estimates={"weights": self.weights_, "block_norms": self.block_norms_},
            traces={"objective": total},
            converged=all(r["converged"] for r in results),
            method=self.fit_traces_[0].method,
        )
        return self

    def _decision(self, Xs):
        return _decision_values(self._test_features(self._validate_predict(Xs)), self.g_, self.weights_)

    def plot_metric(self, ax=None, output=0, view_names=None, log=True):
        """Plot the learned metric's block structure (|Ã|, view-pair grid; the paper's Figure 3)."""
        self._check_fitted()
        A = self.A_ if self.A_.ndim == 2 else self.A_[output]
        return plot_metric(A, self.n_views_, ax=ax, view_names=view_names, log=log)


class MVMLClassifier(ClassifierMixin, _MVMLBase):
    """MVML classifier (binary, or one-vs-rest for several classes) — paper ``000_…``, Algorithm 1.

    Parameters
    ----------
    lmbda : float > 0
        λ, weight of ``<g, Ã⁺ g>`` (eq. 7).
    eta : float
        η, weight of ``||Ã||_F²`` (learn) or of the group lasso (sparse).
    kernel : str, callable, list (one per view) or ``"precomputed"``
        Per-view scalar kernels (``bayesmv.kernels.get_kernel`` names). With ``"precomputed"``,
        ``fit`` takes ``n x n`` Gram matrices and ``predict`` the ``m x n`` test-vs-train kernels.
    kernel_params : dict or list of dicts
        Kernel parameters (e.g. ``{"gamma": 0.1}``); RBF's default γ is ``1/n_features``.
    nystrom : float in (0, 1] or int
        Block-Nyström level (fraction of samples or landmark count ``p``). ``p = n`` runs the
        exact full path (Algorithm 1a); ``p < n`` Algorithm 1b.
    metric : {"learn", "sparse", "cov", "identity"}
        Learned ``A`` (eq. 9/16), block-sparse ``A`` (eq. 12/18), fixed MVML_Cov, fixed MVML_I.
    learn_weights : bool
        Learn the view weights ``w`` (eq. 10/17); otherwise ``w = 1/V``.
    max_iter : int
        Number of A-steps (outer iterations of Algorithm 1; the reference's ``n_loops``).
    tol : float
        Stop when the relative objective decrease falls below ``tol``.
    random_state : int, RandomState, Generator or None
        Seed of the shared Nyström sample ordering (the int used is ``random_seed_``); ``seed``
        is its deprecated old name.
    step_size : float, optional
        Initial A-step size ``μ0`` (default ``0.5``, or ``0.45/η`` for ``η >= 1``); ``μ0 η < ½``.

    Attributes
    ----------
    A_ : metric ``Ã`` (``Vq x Vq``; ``q = n`` on the full path, where ``Ã = A``), one per class
        for more than two classes. ``g_``, ``weights_``: solution and view weights.
    block_norms_ : Frobenius norms of the view-pair blocks of ``A_``.
    fit_trace_ : ``bayesmv.diagnostics.FitTrace`` with the objective per iteration.
    classes_ : the class labels.
    """

    def _targets(self, y):
        """±1 targets, one column per one-vs-rest problem; records ``classes_``."""
        self.classes_, codes = encode_labels(y)
        return one_vs_rest_targets(codes, len(self.classes_))

    def decision_function(self, Xs):
        """Scores ``Σ_v w_v U_v(x) g_v``: ``(m,)`` for two classes (> 0 means ``classes_[1]``), else ``(m, C)``."""
        return self._class_scores(self._decision(Xs))

    def _class_scores(self, F):
        return F[:, 0] if len(self.classes_) == 2 else F

    def _predict_from_decision(self, F):
        return labels_from_scores(self.classes_, self._class_scores(F))


class MVMLRegressor(RegressorMixin, _MVMLBase):
    """MVML regressor (square loss, eq. 7) — same parameters and attributes as ``MVMLClassifier``."""

    @staticmethod
    def _targets(y):
        return check_targets(y)[:, None]

    @staticmethod
    def _predict_from_decision(F):
        return F[:, 0]


class _MVMLSearch(SearchCVMixin):
    """Cross-validated ``(lmbda, eta)`` of MVML: per fold the training and test features (kernel
    or block-Nyström) and Algorithm 1's starting point are computed once and shared by every
    candidate; Algorithm 1 runs as in ``fit`` for every candidate and output (the learned metric:
    all of them in one lockstep batch), so the fold scores are ``GridSearchCV``'s."""

    _grid = {"lmbdas": "lmbda", "etas": "eta"}

    def _fold_scores(self, base, views, y, train, test, candidates, fit_params):
        est = clone(base)
        Xtr, ytr = est._validate_fit([V[train] for V in views], y[train])
        Y = est._targets(ytr)
        _, kernels, params = est._check_params(len(Xtr))
        solver = est._solver(est._train_features(Xtr, kernels, params))
        Ut = est._test_features(est._validate_predict([V[test] for V in views]))
        penalties = []
        for candidate in candidates:
            mu0, _, _ = est.set_params(**candidate)._check_params(len(Xtr))
            penalties.append((est.lmbda, est.eta, mu0))
        results = solver.fit(Y, penalties)
        C = Y.shape[1]
        metric = accuracy_score if is_classifier(base) else r2_score  # the estimators' ``score``
        return np.array(
            [
                metric(
                    y[test],
                    est._predict_from_decision(
                        _decision_values(Ut, [r["g"] for r in rs], [r["w"] for r in rs])
                    ),
                )
                for rs in (results[i * C : (i + 1) * C] for i in range(len(candidates)))
            ]
        )


_MVML_CV_DOC = """

    Parameters as ``{base}`` (without ``lmbda``, ``eta``), plus ``lmbdas``, ``etas``: the grid;
    ``cv``: folds as in ``GridSearchCV`` (an int gives ``{folds}``). The same choice as
    ``GridSearchCV({base}(), {{"lmbda": lmbdas, "eta": etas}}, cv=cv)`` (tested); the speed ratio
    on mfeat is printed by ``benchmarks/search_cv.py``.
    """


class MVMLRegressorCV(RegressorMixin, _MVMLSearch, MultiViewMixin, BaseEstimator):
    __doc__ = "MVML regression with ``(lmbda, eta)`` chosen by cross-validation." + _MVML_CV_DOC.format(
        base="MVMLRegressor", folds="KFold"
    )
    _base = MVMLRegressor

    def __init__(
        self,
        lmbdas=(1e-3, 1e-2, 0.1, 1.0),
        etas=(0.1, 1.0, 10.0),
        kernel="rbf",
        kernel_params=None,
        nystrom=1.0,
        metric="learn",
        learn_weights=False,
        max_iter=6,
        tol=1e-4,
        random_state=0,
        step_size=None,
        cv=5,
    ):
        self.lmbdas = lmbdas
        self.etas = etas
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.nystrom = nystrom
        self.metric = metric
        self.learn_weights = learn_weights
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.step_size = step_size
        self.cv = cv


class MVMLClassifierCV(ClassifierMixin, _MVMLSearch, MultiViewMixin, BaseEstimator):
    __doc__ = "MVML classification with ``(lmbda, eta)`` chosen by cross-validation." + _MVML_CV_DOC.format(
        base="MVMLClassifier", folds="StratifiedKFold"
    )
    _base = MVMLClassifier

    __init__ = MVMLRegressorCV.__init__
