"""MKC's block-coordinate descent as one jitted ``lax.while_loop`` (Bhadra, Kaski & Rousu 2017 §5,
Algorithms 1-3): the simplex projection and row-wise simplex QPs of the S-block, the ℓ2,1
proximal and PSD-projected steps of the A / K̂ block, and the objectives (22)-(25)."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
from jax import lax

__all__ = ["METHODS", "project_simplex", "prox_l21_rows", "simplex_qp", "solve_completion"]

#: The completion variants accepted by ``MKC(method=...)``.
METHODS = ("embd_ht", "embd_hm", "app", "sdp", "rnd")
_BIG = 1e30


@jax.jit
def project_simplex(v, mask=None):
    """Exact Euclidean projection of ``v`` onto ``{s ≥ 0, Σ s = 1, s_i = 0 where ~mask}``.

    Sort-based (Held et al. / Duchi et al.): ``s = max(v − τ, 0)`` with the threshold ``τ`` from
    the largest ``ρ`` with ``v_(ρ) − (Σ_{j≤ρ} v_(j) − 1)/ρ > 0``.

    Parameters
    ----------
    v : array-like of shape (n,)
        The vector to project.
    mask : array-like of shape (n,), dtype=bool, default=None
        The coordinates the projection may use; the others are 0. None: all of them.

    Returns
    -------
    s : jax.Array of shape (n,)
        The projection.
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
    """``argmin_s sᵀ G s − 2 bᵀ s`` over the simplex on the coordinates in ``mask``.

    The row QPs of the S-block (Bhadra, Kaski & Rousu 2017, eq. 28/30/33). Accelerated
    projected gradient (FISTA) with step ``1/(2‖G‖₂)`` and the exact simplex projection
    (:func:`project_simplex`); it stays inside the jitted loop, so a fit can be ``vmap``-ed
    over a λ grid and run on an accelerator.

    Parameters
    ----------
    G : array-like of shape (n, n)
        A PSD matrix (a Gram matrix).
    b : array-like of shape (n,)
        The linear term.
    mask : array-like of shape (n,), dtype=bool
        The coordinates the solution may use; the others are 0.
    n_iter : int, default=200
        The number of iterations; for the few views of MKC 200 iterations reach machine
        precision on well-conditioned rows.
    s0 : array-like of shape (n,) or None, default=None
        The starting point (projected onto the simplex); None: the projection of zero.

    Returns
    -------
    s : jax.Array of shape (n,)
        The minimiser.
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
    """Prox of ``t Σ_i ‖A_i·‖₂``: the row-wise group soft-threshold.

    Bhadra, Kaski & Rousu 2017, eq. 27/32; batched over the leading axes.

    Parameters
    ----------
    A : array-like of shape (..., n_rows, n_cols)
        The matrix (or batch of matrices) to threshold.
    t : float
        The threshold.

    Returns
    -------
    A_prox : jax.Array of shape (..., n_rows, n_cols)
        Each row ``A_i·`` scaled by ``max(0, 1 - t / ‖A_i·‖₂)``.
    """
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


def solve_completion(method, problem, lam1, lam2, tol, max_iter):
    """Block-coordinate descent of ``method`` on a completion problem.

    One A (or K̂) proximal/projected-gradient step with backtracking line search, then an exact
    row-wise S update, per iteration (Bhadra, Kaski & Rousu 2017, §5, Algorithms 1-3), as
    :func:`_mkc_solve`.

    Parameters
    ----------
    method : {"embd_ht", "embd_hm", "app", "sdp", "rnd"}
        The completion variant.
    problem : CompletionProblem
        The :class:`~bayesmv.mkc.problem.CompletionProblem` to solve.
    lam1 : float or jax.Array
        The weight λ1 of the between-view loss; may be traced, e.g. under ``vmap``.
    lam2 : float or jax.Array
        The weight λ2 of the ℓ2,1 norm; may be traced, e.g. under ``vmap``.
    tol : float
        The relative change of the objective at which the descent stops.
    max_iter : int
        The maximum number of iterations.

    Returns
    -------
    theta : jax.Array
        The solution: reconstruction weights, or the kernels for ``"sdp"``.
    S : jax.Array of shape (n_views, n_views)
        The between-view weights.
    objective : jax.Array of shape (hist_len,)
        The full objective after each iteration (NaN-padded past ``n_iter``).
    n_iter : jax.Array
        The number of iterations run.
    converged : jax.Array
        Whether the relative change of the objective fell to ``tol``.
    """
    arrays = (problem.theta0, problem.S0, problem.Kz, problem.W, problem.P)
    return _mkc_solve(
        method,
        *(jnp.asarray(a) for a in arrays),
        jnp.asarray(problem.rowmask, dtype=jnp.float64),
        lam1,
        lam2,
        float(tol),
        int(max_iter),
        hist_len=_hist_len(max_iter),
    )
