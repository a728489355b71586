"""Multi-view kernel completion (MKC; Bhadra, Kaski & Rousu 2017, paper ``002_…``).

Completes per-view kernel matrices whose rows/columns are missing for some samples
(NaN rows/columns, or an ``(n_views, n)`` boolean mask), with no view needing to be complete.

Variants (paper §4):

* ``"embd_ht"`` (eq. 24) – per-view reconstruction weights ``A^(m)`` (``K̂ = A_Iᵀ K_II A_I``,
  eq. 1) tied across views by a convex combination ``A^(m) ≈ Σ_l s_ml A^(l)`` (eq. 11–12);
* ``"embd_hm"`` (eq. 23) – one reconstruction matrix shared by every view (eq. 10);
* ``"app"`` (eq. 25) – per-view ``A^(m)``, between-view loss on kernel values (eq. 7–8);
* ``"sdp"`` (eq. 22) – the completed kernels themselves, PSD-constrained, between-view loss
  on kernel values;
* ``"rnd"`` – ``embd_ht`` with the basis fixed to a uniformly drawn subset (§6.1.3).

Solvers (§5, Algorithms 1–3): block-coordinate descent. The A-block (all views at once) takes
one proximal-gradient step with backtracking line search per outer iteration, the prox being
the row-wise group soft-threshold of the ℓ2,1 norm (eq. 26–27, 31–32); the SDP block takes a
projected-gradient step onto the PSD cone (eigh clip) with the same line search (eq. 29). Each
row of S is the simplex-constrained QP (28, 30, 33), solved exactly enough by accelerated
projected gradient with the exact sort-based Euclidean projection onto the simplex.

All arithmetic is float64 (quartic objectives in A; completion errors of 1e-4 % are reported).
The whole fit is one jitted ``lax.while_loop`` and is ``vmap``-able over ``(λ1, λ2)`` — the
benchmark tunes a whole λ grid in one call.

Deviations / choices (documented in the report):

* each view is divided by the mean of its diagonal over the samples seen in every view (all its
  observed samples if fewer than two are seen everywhere) before completion and multiplied
  back afterwards (makes one λ fit views with different kernel scales; §2.2 speaks of normalised
  kernels for the between-view combination);
* ``A`` is initialised by a joint ridge self-representation: each sample's feature maps in the
  views that observe it are regressed, with one weight vector shared by those views, on the
  samples seen in every view (itself left out, so the start is not the identity; ``rnd``: on its
  random basis). This is the authors' "non-diagonal self-representative" start made multi-view;
  it makes the weights of missing samples transferable from the first iteration.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from sklearn.base import BaseEstimator

from .base import PersistenceMixin
from .datasets import (
    SEED_DEPRECATED,
    MultiViewArray,
    check_positive,
    check_random_seed,
    check_views,
    reject_sparse,
)
from .diagnostics import FitTrace
from .kernels import get_kernel, nystrom_from_columns

jax.config.update("jax_enable_x64", True)

__all__ = [
    "MKC",
    "METHODS",
    "complete_views",
    "kernel_features",
    "knn_complete",
    "mkc_lambda_grid",
    "project_simplex",
    "prox_l21_rows",
    "simplex_qp",
]

#: The completion variants accepted by ``MKC(method=...)``.
METHODS = ("embd_ht", "embd_hm", "app", "sdp", "rnd")
_BIG = 1e30


# --------------------------------------------------------------------------------------------
# pure building blocks
# --------------------------------------------------------------------------------------------
@jax.jit
def project_simplex(v, mask=None):
    """Exact Euclidean projection of ``v`` onto ``{s ≥ 0, Σ s = 1, s_i = 0 where ~mask}``.

    Sort-based (Held et al. / Duchi et al.): ``s = max(v − τ, 0)`` with the threshold ``τ`` from
    the largest ``ρ`` with ``v_(ρ) − (Σ_{j≤ρ} v_(j) − 1)/ρ > 0``.
    """
    v = jnp.asarray(v)
    if mask is not None:
        v = jnp.where(mask, v, -_BIG)
    u = -jnp.sort(-v)
    css = jnp.cumsum(jnp.where(u > -_BIG / 2, u, 0.0))
    j = jnp.arange(1, v.shape[-1] + 1, dtype=v.dtype)
    cond = (u - (css - 1.0) / j > 0) & (u > -_BIG / 2)
    rho = jnp.max(jnp.where(cond, jnp.arange(v.shape[-1]), 0))
    tau = (css[rho] - 1.0) / (rho + 1.0)
    out = jnp.maximum(v - tau, 0.0)
    return out if mask is None else jnp.where(mask, out, 0.0)


@partial(jax.jit, static_argnames=("n_iter",))
def simplex_qp(G, b, mask, n_iter=200, s0=None):
    """``argmin_s sᵀ G s − 2 bᵀ s`` over the simplex on the coordinates in ``mask`` (eq. 28/30/33).

    ``G`` is PSD (a Gram matrix). Accelerated projected gradient (FISTA) with step ``1/(2‖G‖₂)``
    and the exact simplex projection; for the few views of MKC 200 iterations reach machine
    precision on well-conditioned rows.

    Kept over the maintained QP solvers (``benchmarks/solvers.py``, 2026-11-26, MKC ``embd_ht``
    on TOYG1 and on mfeat kernels, 25 warm-started iterations per outer step): re-solving the
    recorded row QPs through ``qpsolvers`` takes 4.4–5.0× its time with DAQP and 32–45× with
    clarabel or OSQP; a whole fit with DAQP through ``jax.pure_callback`` takes 0.8× (TOY) to
    1.33× (mfeat) and ties the loop to the host (no ``vmap`` over a λ grid, no accelerator). The
    libraries' exact row optima are lower by at most a relative 8.5e-5 and move the ARE by 0.003
    points.
    """
    G = jnp.asarray(G)
    Gm = G * (mask[:, None] & mask[None, :])
    L = 2.0 * jnp.maximum(jnp.linalg.eigvalsh(Gm)[-1], 1e-300)
    s0 = project_simplex(jnp.zeros_like(b) if s0 is None else s0, mask)

    def body(_, carry):
        s, z, t = carry
        s_new = project_simplex(z - (2.0 * (Gm @ z) - 2.0 * b) / L, mask)
        t_new = 0.5 * (1.0 + jnp.sqrt(1.0 + 4.0 * t * t))
        z_new = s_new + ((t - 1.0) / t_new) * (s_new - s)
        return s_new, z_new, t_new

    s, _, _ = lax.fori_loop(0, n_iter, body, (s0, s0, jnp.asarray(1.0, G.dtype)))
    return s


def _solve_S(G, B, S0, n_iter=25):
    """Row-wise simplex QPs (warm-started at ``S0``): ``G`` (M, M, M) per-row Gram, ``B`` (M, M)."""
    M = B.shape[0]
    masks = ~jnp.eye(M, dtype=bool)
    return jax.vmap(lambda g, b, m, s: simplex_qp(g, b, m, n_iter, s))(G, B, masks, S0)


def prox_l21_rows(A, t):
    """Prox of ``t Σ_i ‖A_i·‖₂`` (row-wise group soft-threshold, eq. 27/32); batched over leading axes."""
    nrm = jnp.sqrt(jnp.sum(A * A, axis=-1, keepdims=True))
    return A * jnp.maximum(0.0, 1.0 - t / jnp.maximum(nrm, 1e-300))


def _l21(A):
    return jnp.sum(jnp.sqrt(jnp.sum(A * A, axis=-1)))


def _psd_project(K):
    """Nearest PSD matrix in Frobenius norm (symmetrise, eigh, clip); batched."""
    K = 0.5 * (K + jnp.swapaxes(K, -1, -2))
    w, U = jnp.linalg.eigh(K)
    return (U * jnp.maximum(w, 0.0)[..., None, :]) @ jnp.swapaxes(U, -1, -2)


def _reconstruct(A, Kz):
    """``K̂^(m) = A^(m)ᵀ K_z^(m) A^(m)`` (eq. 1); ``Kz`` has the unobserved rows/cols zeroed."""
    return jnp.swapaxes(A, -1, -2) @ Kz @ A


# --------------------------------------------------------------------------------------------
# objectives: smooth part f(theta, S, lam1), nonsmooth weight lam2 on the l21 norm
# --------------------------------------------------------------------------------------------
def _within(Khat, Kz, W):
    return jnp.sum((W * (Khat - Kz)) ** 2)


def _smooth(method, theta, S, Kz, W, P, lam1):
    if method in ("embd_ht", "rnd"):
        Khat = _reconstruct(theta, Kz)
        D = theta - jnp.einsum("ml,lij->mij", S, theta)
        return _within(Khat, Kz, W) + lam1 * jnp.sum((P[:, :, None] * D) ** 2)
    if method == "embd_hm":
        Khat = _reconstruct(theta[None], Kz)
        return _within(Khat, Kz, W)
    Khat = _reconstruct(theta, Kz) if method == "app" else theta
    D = Khat - jnp.einsum("ml,lij->mij", S, Khat)
    return _within(Khat, Kz, W) + lam1 * jnp.sum(D**2)


def _grad_smooth(method, theta, S, Kz, W, P, lam1):
    """Closed-form gradient of ``_smooth`` (checked against ``jax.grad`` in the tests).

    Within-view: ``∇_A ‖W∘(AᵀKA − K)‖² = 4 K A E`` with ``E = W∘(AᵀKA − K)``; between-view with
    residual ``D = X − S·X``: ``∇_X λ1‖D‖² = 2λ1 (D − Sᵀ·D)`` (masked by ``P`` for the weights),
    pulled back through ``K̂ = AᵀKA`` as ``2 K A G`` for ``app``.
    """
    if method == "sdp":
        D = theta - jnp.einsum("ml,lij->mij", S, theta)
        return 2.0 * W * (theta - Kz) + 2.0 * lam1 * (D - jnp.einsum("ml,mij->lij", S, D))
    A = theta[None] if method == "embd_hm" else theta
    KA = Kz @ A
    Khat = jnp.swapaxes(A, -1, -2) @ KA
    E = W * (Khat - Kz)
    if method == "embd_hm":
        return 4.0 * jnp.sum(KA @ E, axis=0)
    if method in ("embd_ht", "rnd"):
        D = P[:, :, None] * (A - jnp.einsum("ml,lij->mij", S, A))
        return 4.0 * KA @ E + 2.0 * lam1 * (D - jnp.einsum("ml,mij->lij", S, D))
    D = Khat - jnp.einsum("ml,lij->mij", S, Khat)
    GK = 2.0 * lam1 * (D - jnp.einsum("ml,mij->lij", S, D))
    return KA @ (4.0 * E + 2.0 * GK)


def _update_S(method, theta, S, Kz, P):
    if method == "embd_hm":
        return S
    if method in ("embd_ht", "rnd"):
        # G[m, l, k] = Σ_i P_mi <A_l[i], A_k[i]>,  B[m, l] = G[m, m, l]
        R = jnp.einsum("lij,kij->ikl", theta, theta)  # (n, M, M) per-row inner products
        G = jnp.einsum("mi,ilk->mlk", P, R)
    else:
        Khat = _reconstruct(theta, Kz) if method == "app" else theta
        G0 = jnp.einsum("lij,kij->lk", Khat, Khat)
        G = jnp.broadcast_to(G0, (S.shape[0],) + G0.shape)
    M = S.shape[0]
    B = G[jnp.arange(M), jnp.arange(M), :]
    return _solve_S(G, B, S)


def _prox(method, theta, t, rowmask):
    if method == "sdp":
        return _psd_project(theta)
    return prox_l21_rows(theta, t) * rowmask[..., None]


def _penalty(method, theta):
    return 0.0 if method == "sdp" else _l21(theta)


def _hist_len(max_iter):
    """History buffer length: a power of two ≥ max_iter (few distinct compiled shapes)."""
    return max(256, 1 << (int(max_iter) - 1).bit_length())


@partial(jax.jit, static_argnames=("method", "hist_len", "max_backtrack"))
def _mkc_solve(method, theta0, S0, Kz, W, P, rowmask, lam1, lam2, tol, max_iter, hist_len, max_backtrack=40):
    """Block-coordinate descent of one MKC variant; returns ``(theta, S, objective, n_iter, converged)``.

    One A (or K̂) proximal/projected-gradient step with backtracking line search, then an exact
    row-wise S update, per iteration. ``objective`` holds the full objective after each
    iteration (NaN-padded past ``n_iter``).
    """
    f = lambda th, S: _smooth(method, th, S, Kz, W, P, lam1)  # noqa: E731
    F = lambda th, S: f(th, S) + lam2 * _penalty(method, th)  # noqa: E731
    grad_f = lambda th, S: _grad_smooth(method, th, S, Kz, W, P, lam1)  # noqa: E731
    dtype = Kz.dtype
    obj_hist = jnp.full((hist_len,), jnp.nan, dtype)

    def ls_step(theta, S, step):
        f0 = f(theta, S)
        g = grad_f(theta, S)

        def cand(st):
            th_new = _prox(method, theta - st * g, st * lam2, rowmask)
            d = th_new - theta
            ok = f(th_new, S) <= f0 + jnp.sum(g * d) + jnp.sum(d * d) / (2.0 * st) + 1e-12 * jnp.abs(f0)
            return th_new, ok

        def cond(c):
            _, ok, _, k = c
            return (~ok) & (k < max_backtrack)

        def body(c):
            _, _, st, k = c
            st = 0.5 * st
            th_new, ok = cand(st)
            return th_new, ok, st, k + 1

        th1, ok1 = cand(step)
        th_new, _, st, _ = lax.while_loop(cond, body, (th1, ok1, step, 0))
        return th_new, st

    def cond(state):
        _, _, _, k, _, done, _ = state
        return (k < max_iter) & (~done)

    def body(state):
        theta, S, step, k, hist, _, prev = state
        theta, step = ls_step(theta, S, step)
        S = _update_S(method, theta, S, Kz, P)
        obj = F(theta, S)
        hist = hist.at[k].set(obj)
        done = jnp.abs(prev - obj) <= tol * jnp.maximum(jnp.abs(obj), 1e-12)
        return theta, S, jnp.minimum(2.0 * step, 1e6), k + 1, hist, done, obj

    S0 = _update_S(method, theta0, S0, Kz, P) if method != "embd_hm" else S0
    init = (theta0, S0, jnp.asarray(1.0, dtype), 0, obj_hist, jnp.asarray(False), F(theta0, S0))
    theta, S, _, k, hist, done, _ = lax.while_loop(cond, body, init)
    return theta, S, hist, k, done


# --------------------------------------------------------------------------------------------
# preprocessing / initialisation (numpy, then handed to the jitted solver)
# --------------------------------------------------------------------------------------------
def _check_inputs(Ks, observed):
    reject_sparse(Ks, "Ks")
    if isinstance(Ks, np.ndarray) and Ks.ndim in (2, 3):
        Ks = list(Ks) if Ks.ndim == 3 else [Ks]  # one 2-D array is one view's kernel
    if not isinstance(Ks, (list, tuple)) or len(Ks) == 0:
        raise ValueError("Ks must be a non-empty list of (n, n) kernel matrices, one per view")
    mats = []
    for m, K in enumerate(Ks):
        K = np.asarray(K)
        if K.dtype.kind == "c":
            raise ValueError(f"Ks[{m}] has complex dtype {K.dtype}: Complex data not supported")
        if K.dtype.kind not in "biuf":
            raise TypeError(f"Ks[{m}] has dtype {K.dtype}; kernels must be real numeric")
        K = K.astype(np.float64)
        if K.ndim != 2 or K.shape[0] != K.shape[1]:
            raise ValueError(f"Ks[{m}] must be a square (n, n) matrix, got shape {K.shape}")
        if np.isinf(K).any():
            raise ValueError(f"Ks[{m}] contains inf")
        mats.append(K)
    n = mats[0].shape[0]
    if n == 0:
        raise ValueError("Ks holds empty (0, 0) kernels; need at least 2 samples")
    if any(K.shape[0] != n for K in mats):
        raise ValueError(f"all kernels in Ks must have the same size; got {[K.shape for K in mats]}")
    M = len(mats)
    if M < 2:
        raise ValueError(f"Ks has {M} view; multi-view kernel completion needs at least 2 views")
    if observed is None:
        obs = np.stack([~np.isnan(np.diag(K)) for K in mats])
    else:
        obs = np.asarray(observed)
        if obs.dtype != bool:
            raise TypeError(f"observed must be a boolean (n_views, n) mask, got dtype {obs.dtype}")
        if obs.shape != (M, n):
            raise ValueError(f"observed must have shape (n_views, n) = {(M, n)}, got {obs.shape}")
    for m, K in enumerate(mats):
        o = obs[m]
        block = K[np.ix_(o, o)]
        if np.isnan(block).any():
            raise ValueError(
                f"Ks[{m}] has NaN inside its observed block; missing samples must be whole NaN "
                "rows/columns (or pass an explicit observed mask)"
            )
        if not np.allclose(block, block.T, atol=1e-8 * max(1.0, np.abs(block).max(initial=0.0))):
            raise ValueError(f"Ks[{m}] is not symmetric on its observed block")
        if o.sum() < 2:
            raise ValueError(f"Ks[{m}] observes {int(o.sum())} sample(s); MKC needs at least 2 per view")
    if (~obs).all(axis=0).any():
        bad = np.flatnonzero((~obs).all(axis=0))
        raise ValueError(f"samples {bad.tolist()[:10]} are missing from every view; they cannot be completed")
    return mats, obs


def _prepare(Ks, obs):
    """Zero-filled, per-view scaled kernels and masks."""
    M, n = obs.shape
    scale = np.empty(M)
    Kz = np.zeros((M, n, n))
    common = obs.all(axis=0)
    for m, K in enumerate(Ks):
        o = obs[m]
        # scale on the samples seen in every view when there are some (same samples for all views)
        d = np.diag(K)[common] if common.sum() >= 2 else np.diag(K)[o]
        s = float(np.mean(d))
        if not s > 0:
            raise ValueError(f"Ks[{m}] has a non-positive mean observed diagonal ({s}); is it a kernel?")
        scale[m] = s
        Kz[m] = np.where(np.outer(o, o), np.nan_to_num(K) / s, 0.0)
    W = (obs[:, :, None] & obs[:, None, :]).astype(np.float64)
    return Kz, W, obs.astype(np.float64), scale


def _joint_self_representation(Kz, obs, dict_mask, ridge, leave_out=True):
    """Multi-view start for A: each sample's feature maps, in the views observing it, regressed
    jointly (one weight vector for all those views) on a dictionary of samples seen in every view.

    ``c_t = (Σ_{m∋t} K^(m)_DD + εI)^{-1} Σ_{m∋t} K^(m)_Dt`` with ``t`` left out of ``D`` (so the
    weights are a genuine reconstruction, not the identity). Weights found this way are shared by
    the views and supported on rows observed everywhere, so they transfer to views missing ``t``.
    Returns ``(n, n)`` with rows in ``D``.
    """
    import scipy.linalg as sla

    M, n, _ = Kz.shape
    D = np.flatnonzero(dict_mask)
    C = np.zeros((n, n))
    patterns = {}
    for t in range(n):
        patterns.setdefault(tuple(obs[:, t]), []).append(t)
    for pat, cols in patterns.items():
        views = np.flatnonzero(pat)
        Ksum = Kz[views].sum(axis=0)
        KDD = Ksum[np.ix_(D, D)]
        eps = ridge * max(np.trace(KDD) / len(D), 1e-12)
        for t in cols:
            keep = D[D != t] if leave_out else D
            Kk = Ksum[np.ix_(keep, keep)] + eps * np.eye(len(keep))
            cf = sla.cho_factor(Kk, lower=True)
            C[keep, t] = sla.cho_solve(cf, Ksum[keep, t])
    return C


def _initial_point(method, Kz, obs, rowmask, ridge):
    M, n, _ = Kz.shape
    if method == "sdp":
        num = Kz.sum(axis=0)
        cnt = (obs[:, :, None] & obs[:, None, :]).sum(axis=0)
        fill = np.where(cnt > 0, num / np.maximum(cnt, 1), 0.0)
        K0 = np.where(obs[:, :, None] & obs[:, None, :], Kz, fill[None])
        return np.asarray(_psd_project(jnp.asarray(K0)))
    dict_mask = rowmask.all(axis=0)
    if dict_mask.sum() < 2:  # too few samples seen everywhere: those seen in the most views
        cnt = rowmask.sum(axis=0)
        dict_mask = cnt >= np.sort(cnt)[-min(n, max(2, n // 4))]
    # a fixed random basis (rnd) represents itself; otherwise leave t out of its own dictionary
    C = _joint_self_representation(Kz, obs, dict_mask, ridge, leave_out=method != "rnd")
    if method == "embd_hm":
        return C
    return np.broadcast_to(C, (M, n, n)) * rowmask[:, :, None]


def _random_basis(obs, n_basis, rng):
    M, n = obs.shape
    n_obs = obs.sum(axis=0)
    order = rng.permutation(n)
    # prefer samples seen in every view, then in most views (ties broken at random)
    order = order[np.argsort(-n_obs[order], kind="stable")]
    basis = np.sort(order[:n_basis])
    rowmask = np.zeros((M, n), bool)
    rowmask[:, basis] = True
    return rowmask & obs


def _fit_arrays(method, Ks, obs, lam1, lam2, max_iter, tol, seed, n_basis, ridge):
    """Prepare, initialise and return everything ``_mkc_solve`` needs (numpy)."""
    Kz, W, P, scale = _prepare(Ks, obs)
    M, n = obs.shape
    if method == "rnd":
        nb = int(n_basis) if n_basis is not None else max(2, int(round(0.5 * n)))
        rowmask = _random_basis(obs, min(nb, n), np.random.default_rng(seed))
    else:
        rowmask = obs.copy()
    theta0 = _initial_point(method, Kz, obs, rowmask, ridge)
    S0 = (np.ones((M, M)) - np.eye(M)) / (M - 1)
    return Kz, W, P, scale, rowmask, theta0, S0


def _completed(method, theta, Kz, scale):
    if method == "sdp":
        Khat = np.asarray(theta)
    elif method == "embd_hm":
        Khat = np.asarray(_reconstruct(jnp.asarray(theta)[None], jnp.asarray(Kz)))
    else:
        Khat = np.asarray(_reconstruct(jnp.asarray(theta), jnp.asarray(Kz)))
    Khat = 0.5 * (Khat + np.swapaxes(Khat, -1, -2))
    return Khat * scale[:, None, None]


# --------------------------------------------------------------------------------------------
# estimator
# --------------------------------------------------------------------------------------------
class MKC(PersistenceMixin, BaseEstimator):
    """Multi-view kernel completion (paper 002, §4–5).

    Parameters
    ----------
    method : {"embd_ht", "embd_hm", "app", "sdp", "rnd"}
        Variant: eq. 24, 23, 25, 22, or ``embd_ht`` with a random fixed basis.
    lambda1 : float
        Weight of the between-view loss (λ1 in eq. 22, 24, 25; unused by ``embd_hm``).
    lambda2 : float
        Weight of the ℓ2,1 norm on the reconstruction weights (λ2; λ of eq. 23; unused by ``sdp``).
    max_iter, tol : int, float
        Outer block-coordinate iterations; stop when the relative objective change ≤ ``tol``.
    random_state : int, RandomState, Generator or None
        Seed of the random basis (``rnd``; the int used is ``random_seed_``); ``seed`` is its
        deprecated old name.
    n_basis : int or None
        Basis size for ``rnd`` (default 50 % of the samples, drawn among those seen in every view first).
    ridge : float
        Relative ridge of the self-representation used as the starting point.

    Attributes
    ----------
    completed_kernels_ : list of (n, n) arrays — PSD completed kernels.
    observed_ : (n_views, n) bool mask used.
    between_view_weights_ : (n_views, n_views) S (rows on the simplex, zero diagonal; ``None`` for embd_hm).
    reconstruction_weights_ : (n_views, n, n) A^(m) (``(n, n)`` shared for embd_hm; ``None`` for sdp),
        on the scaled kernels ``K^(m) / kernel_scale_[m]``.
    basis_ : list of index arrays — samples with non-zero reconstruction rows per view.
    kernel_scale_ : per-view scale (mean observed diagonal).
    fit_trace_ : ``FitTrace`` with the objective per iteration.
    n_iter_, converged_ .
    """

    def __init__(
        self,
        method="embd_ht",
        lambda1=1.0,
        lambda2=0.1,
        max_iter=500,
        tol=1e-7,
        random_state=0,
        n_basis=None,
        ridge=1e-9,
        seed=SEED_DEPRECATED,
    ):
        self.method = method
        self.lambda1 = lambda1
        self.lambda2 = lambda2
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.seed = seed
        self.n_basis = n_basis
        self.ridge = ridge

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = True  # kernel matrices in, kernel matrices out
        tags.input_tags.allow_nan = True  # a missing sample is a NaN row and column
        return tags

    def _check_params(self):
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        check_positive("lambda1", self.lambda1, allow_zero=True)
        check_positive("lambda2", self.lambda2, allow_zero=True)
        check_positive("max_iter", self.max_iter, integer=True)
        check_positive("tol", self.tol, allow_zero=True)
        check_positive("ridge", self.ridge)
        if self.n_basis is not None:
            check_positive("n_basis", self.n_basis, integer=True)

    def fit(self, Ks, observed=None):
        """Complete ``Ks`` (list of (n, n) kernels; missing samples = NaN rows/columns or ``observed``)."""
        self._check_params()
        self.random_seed_ = check_random_seed(self.random_state, self.seed, type(self).__name__)
        mats, obs = _check_inputs(Ks, observed)
        method = self.method
        Kz, W, P, scale, rowmask, theta0, S0 = _fit_arrays(
            method,
            mats,
            obs,
            self.lambda1,
            self.lambda2,
            self.max_iter,
            self.tol,
            self.random_seed_,
            self.n_basis,
            self.ridge,
        )
        theta, S, hist, k, done = _mkc_solve(
            method,
            jnp.asarray(theta0),
            jnp.asarray(S0),
            jnp.asarray(Kz),
            jnp.asarray(W),
            jnp.asarray(P),
            jnp.asarray(rowmask, dtype=jnp.float64)
            if method != "embd_hm"
            else jnp.asarray(obs.any(axis=0), dtype=jnp.float64),
            float(self.lambda1),
            float(self.lambda2),
            float(self.tol),
            int(self.max_iter),
            hist_len=_hist_len(self.max_iter),
        )
        k = int(k)
        hist = np.asarray(hist)[:k]
        if not np.all(np.isfinite(hist)):
            raise FloatingPointError("MKC objective became non-finite; check the kernels' scale")
        Khat = _completed(method, theta, Kz, scale)
        theta = np.asarray(theta)
        self.observed_ = obs
        self.kernel_scale_ = scale
        self.completed_kernels_ = [K for K in Khat]
        self.between_view_weights_ = None if method == "embd_hm" else np.asarray(S)
        if method == "sdp":
            self.reconstruction_weights_ = None
            self.basis_ = None
        else:
            self.reconstruction_weights_ = theta
            A = (
                theta
                if theta.ndim == 3
                else np.broadcast_to(theta, (len(mats),) + theta.shape) * obs[:, :, None]
            )
            rn = np.sqrt((A**2).sum(axis=-1))
            self.basis_ = [np.flatnonzero(r > 1e-8 * max(r.max(initial=0.0), 1e-300)) for r in rn]
        self.n_iter_ = k
        self.converged_ = bool(done)
        est = {"between_view_weights": np.asarray(S)}
        self.fit_trace_ = FitTrace(
            estimates=est, traces={"objective": hist}, converged=self.converged_, method=f"MKC_{method}"
        )
        return self

    def fit_transform(self, Ks, observed=None):
        """``fit`` and return ``completed_kernels_``."""
        return self.fit(Ks, observed=observed).completed_kernels_


def mkc_lambda_grid(
    Ks,
    lambdas,
    method="embd_ht",
    observed=None,
    max_iter=500,
    tol=1e-7,
    random_state=0,
    n_basis=None,
    ridge=1e-9,
    seed=SEED_DEPRECATED,
):
    """Completed kernels for many ``(λ1, λ2)`` pairs in one vmapped solve (for tuning).

    ``lambdas`` is an ``(L, 2)`` array. Returns an ``(L, n_views, n, n)`` array; every pair starts
    from the same point as ``MKC(...).fit`` and gives the same result.
    """
    seed = check_random_seed(random_state, seed, "mkc_lambda_grid")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    lambdas = np.asarray(lambdas, dtype=np.float64)
    if lambdas.ndim != 2 or lambdas.shape[1] != 2 or not np.all(lambdas >= 0):
        raise ValueError("lambdas must be an (L, 2) array of non-negative (lambda1, lambda2) pairs")
    mats, obs = _check_inputs(Ks, observed)
    Kz, W, P, scale, rowmask, theta0, S0 = _fit_arrays(
        method, mats, obs, 0, 0, max_iter, tol, seed, n_basis, ridge
    )
    rm = rowmask if method != "embd_hm" else obs.any(axis=0)
    solve = jax.vmap(
        lambda l1, l2: _mkc_solve(
            method,
            jnp.asarray(theta0),
            jnp.asarray(S0),
            jnp.asarray(Kz),
            jnp.asarray(W),
            jnp.asarray(P),
            jnp.asarray(rm, dtype=jnp.float64),
            l1,
            l2,
            float(tol),
            int(max_iter),
            hist_len=_hist_len(max_iter),
        )[0]
    )
    thetas = np.asarray(solve(jnp.asarray(lambdas[:, 0]), jnp.asarray(lambdas[:, 1])))
    return np.stack([_completed(method, th, Kz, scale) for th in thetas])


def complete_views(
    Xs, kernel="rbf", kernel_params=None, method="embd_ht", return_estimator=False, **mkc_params
):
    """Kernels of raw views with missing samples (all-NaN rows), completed by MKC.

    ``kernel`` is one kernel name/callable or one per view; ``kernel_params`` one dict or one per
    view. Kernels are evaluated on each view's observed rows only; the result (a list of
    complete (n, n) PSD kernels) can be fed to any kernel method (e.g. MVML). With
    ``return_estimator=True`` returns ``(kernels, fitted MKC)``.
    """
    Xs = check_views(Xs, allow_missing=True, min_views=2)
    M = len(Xs)
    kernels = list(kernel) if isinstance(kernel, (list, tuple)) else [kernel] * M
    if len(kernels) != M:
        raise ValueError(f"kernel lists {len(kernels)} kernels for {M} views")
    if kernel_params is None:
        params = [{}] * M
    elif isinstance(kernel_params, dict):
        params = [kernel_params] * M
    else:
        params = list(kernel_params)
        if len(params) != M:
            raise ValueError(f"kernel_params lists {len(params)} dicts for {M} views")
    n = Xs[0].shape[0]
    Ks = []
    for X, kern, par in zip(Xs, kernels, params):
        o = ~np.isnan(X).all(axis=1)
        K = np.full((n, n), np.nan)
        K[np.ix_(o, o)] = np.asarray(get_kernel(kern, **par)(X[o]))
        Ks.append(K)
    est = MKC(method=method, **mkc_params).fit(Ks)
    return (est.completed_kernels_, est) if return_estimator else est.completed_kernels_


def kernel_features(Ks):
    """Features ``Φ_m`` with ``Φ_m Φ_mᵀ = K_m`` for PSD kernels, as a
    :class:`~bayesmv.MultiViewArray`: the Nyström factors with every sample a landmark,
    ``Φ = K (K^+)^{1/2}`` (:func:`~bayesmv.kernels.nystrom_from_columns`).

    MKC is transductive: it completes the kernels of one fixed set of samples, without labels.
    To cross-validate what comes after it, complete over all samples once, then split these
    features as scikit-learn splits any ``X`` and use ``kernel="linear"`` downstream: the linear
    kernel of ``Φ`` is the completed kernel, on every fold's train x train and test x train blocks.
    """
    feats = []
    for m, K in enumerate(Ks):
        K = np.asarray(K, dtype=np.float64)
        if K.ndim != 2 or K.shape[0] != K.shape[1] or not np.isfinite(K).all():
            raise ValueError(f"Ks[{m}] must be a finite square kernel matrix, got shape {K.shape}")
        feats.append(np.asarray(nystrom_from_columns(K, np.arange(K.shape[0])).U))
    return MultiViewArray(feats)


# --------------------------------------------------------------------------------------------
# baselines (§6.1.3)
# --------------------------------------------------------------------------------------------
def knn_complete(Ks, observed=None, k=3, weighted=False):
    """kNN / weighted-kNN imputation of missing kernel rows (paper §6.1.3), in feature space.

    Distances: for samples ``t`` and ``j``, the mean over the views observing both of the
    kernel-induced squared distance ``K_tt + K_jj − 2 K_tj``, each view divided by its mean
    pairwise squared distance (so views of different scale count alike). For a sample ``t``
    missing from view ``m``, its feature map is imputed as the (inverse-distance weighted, if
    ``weighted``) average of its ``k`` nearest neighbours observed in ``m``:
    ``φ̂_t = Σ_j w_tj φ_j``; hence ``K̂ = Aᵀ K_II A`` with ``A`` holding ``e_t`` for observed
    samples and ``w_t`` for imputed ones (PSD, observed block kept exactly).
    Returns the list of completed kernels.
    """
    mats, obs = _check_inputs(Ks, observed)
    check_positive("k", k, integer=True)
    M, n = obs.shape
    D = np.zeros((n, n))
    C = np.zeros((n, n))
    for m, K in enumerate(mats):
        o = obs[m]
        d = np.diag(K)
        D2 = d[:, None] + d[None, :] - 2.0 * K
        both = np.outer(o, o)
        D2 = np.where(both, np.maximum(D2, 0.0), 0.0)
        off = both & ~np.eye(n, dtype=bool)
        mean = D2[off].mean() if off.any() else 1.0
        D += np.where(both, D2 / max(mean, 1e-300), 0.0)
        C += both
    with np.errstate(invalid="ignore", divide="ignore"):
        dist = np.sqrt(np.where(C > 0, D / np.maximum(C, 1), np.inf))
    out = []
    for m, K in enumerate(mats):
        o = obs[m]
        A = np.diag(o.astype(float))
        cand = np.flatnonzero(o)
        for t in np.flatnonzero(~o):
            dt = dist[t, cand]
            order = np.argsort(dt, kind="stable")[: min(k, len(cand))]
            nb = cand[order]
            if weighted:
                w = 1.0 / np.maximum(dt[order], 1e-12)
                w = np.where(np.isfinite(dt[order]), w, 0.0)
                w = w / w.sum() if w.sum() > 0 else np.full(len(nb), 1.0 / len(nb))
            else:
                w = np.full(len(nb), 1.0 / len(nb))
            A[nb, t] = w
        Kz = np.where(np.outer(o, o), np.nan_to_num(K), 0.0)
        out.append(A.T @ Kz @ A)
    return out
