"""MVL-LS (Theorem 10, eq. 67-68): dense push-through solves, the ``gamma_A`` path, exact
leave-one-out outputs, the objective, repeated solves over the combination ``c`` (MVL-LS-optC)
and the matrix-free CG in the ``G``-inner product."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg as sla

from ..datasets import check_positive
from ..kernels import kernel_matvec
from .graphs import _manifold_matrix, between_view_matrix

__all__ = ["mvl_ls_cg", "mvl_ls_loo", "mvl_ls_objective", "mvl_ls_path", "mvl_ls_solve", "psd_sqrt"]


def psd_sqrt(K):
    """Symmetric square root of a PSD matrix by ``eigh``.

    Negative round-off eigenvalues are set to 0.

    Parameters
    ----------
    K : array-like of shape (N, N)
        A symmetric positive semi-definite matrix (only its symmetric part is used).

    Returns
    -------
    P : ndarray of shape (N, N)
        The symmetric PSD ``P`` with ``P P = K``.
    """
    K = np.asarray(K, dtype=float)
    w, V = np.linalg.eigh(0.5 * (K + K.T))
    return (V * np.sqrt(np.clip(w, 0.0, None))) @ V.T


def _block_apply(Ps, H):
    """``P H P`` for ``P = blockdiag(Ps)`` and ``H`` view-major of shape ``(m N, m N)`` (block matmuls)."""
    m = len(Ps)
    N = Ps[0].shape[0]
    out = np.empty_like(H, dtype=float)
    for v in range(m):
        PH = [Ps[v] @ H[v * N : (v + 1) * N, w * N : (w + 1) * N] for w in range(m)]
        for w in range(m):
            out[v * N : (v + 1) * N, w * N : (w + 1) * N] = PH[w] @ Ps[w]
    return out


def _pblock(Ps, V):
    """``blockdiag(Ps) @ V`` for ``V`` of shape ``(m N, d)``."""
    m = len(Ps)
    N = Ps[0].shape[0]
    return np.einsum("vij,vjd->vid", np.stack(Ps), V.reshape(m, N, -1)).reshape(m * N, -1)


def _push_through_solve(Ps, H, lam, rhs, PHP=None):
    """Solve ``(H G + lam I) a = rhs`` with ``G = P P``, ``P = blockdiag(Ps)`` symmetric PSD and
    ``H`` symmetric PSD, via ``a = (rhs - H P z) / lam``, ``(P H P + lam I) z = P rhs`` (Cholesky).
    ``PHP`` may be passed precomputed (it is overwritten)."""
    PHP = _block_apply(Ps, H) if PHP is None else PHP
    PHP[np.diag_indices_from(PHP)] += lam
    z = sla.cho_solve(
        sla.cho_factor(PHP, lower=True, check_finite=False), _pblock(Ps, rhs), check_finite=False
    )
    return (rhs - H @ _pblock(Ps, z)) / lam


def _ls_operator(c, n_labeled, Ls, gamma_B, gamma_W):
    """View-major symmetric ``H = c c^T ⊗ J + l gamma_B M_m ⊗ I + l gamma_W blockdiag(L^v)``
    (the bracket of eq. 68 before multiplication by ``G[x]``)."""
    c = np.asarray(c, dtype=float)
    N = Ls[0].shape[0]
    ell = n_labeled
    J = np.zeros(N)
    J[:ell] = 1.0
    H = ell * _manifold_matrix(Ls, gamma_B, gamma_W)
    H += np.kron(np.outer(c, c), np.diag(J))
    return H


def _targets_c(Y, c, N):
    """View-major ``Y_C`` (eq. 67): block ``v`` rows ``i <= l`` are ``c_v y_i``, the rest 0."""
    Y = np.asarray(Y, dtype=float)
    ell, d = Y.shape
    out = np.zeros((len(c), N, d))
    out[:, :ell, :] = np.asarray(c, dtype=float)[:, None, None] * Y[None]
    return out.reshape(len(c) * N, d)


def _ls_problem(Ks, Y, c, gamma_B, gamma_W, Ls, Ps):
    """The pieces of Theorem 10's system shared by ``mvl_ls_solve`` and ``mvl_ls_path``:
    ``(m, N, l, d, Ps, H, Y_C)`` with ``Ps = psd_sqrt(K^v)`` unless given and zero Laplacians
    when ``Ls`` is None."""
    Ks = [np.asarray(K, dtype=float) for K in Ks]
    m, N = len(Ks), Ks[0].shape[0]
    Y = np.asarray(Y, dtype=float)
    Y = Y[:, None] if Y.ndim == 1 else Y
    ell, d = Y.shape
    Ls = [np.zeros((N, N))] * m if Ls is None else Ls
    Ps = [psd_sqrt(K) for K in Ks] if Ps is None else Ps
    return m, N, ell, d, Ps, _ls_operator(c, ell, Ls, gamma_B, gamma_W), _targets_c(Y, c, N)


def mvl_ls_solve(Ks, Y, c, gamma_A, gamma_B=0.0, gamma_W=0.0, Ls=None, R=None, Ps=None, PMP=None):
    """MVL-LS coefficients: solve ``B A R + l gamma_A A = Y_C``.

    Minh, Bazzani & Murino 2016, Theorem 10, eq. 67-68.

    Parameters
    ----------
    Ks : sequence of array-like of shape (N, N)
        The ``m`` Gram matrices over the labelled-then-unlabelled points.
    Y : array-like of shape (l, d) or (l,)
        The targets of the first ``l`` points.
    c : array-like of shape (m,)
        The combination weights.
    gamma_A : float
        The weight of the RKHS norm.
    gamma_B : float, default=0.0
        The weight of the between-view term ``M_B``.
    gamma_W : float, default=0.0
        The weight of the within-view term ``M_W``.
    Ls : sequence of array-like of shape (N, N) or None, default=None
        The ``m`` graph Laplacians (needed when ``gamma_W > 0``); None: zero.
    R : array-like of shape (d, d) or None, default=None
        A symmetric PSD output matrix; None: the identity.
    Ps : sequence of ndarray of shape (N, N) or None, default=None
        The precomputed ``psd_sqrt(K)`` of each view; None: computed here.
    PMP : ndarray of shape (mN, mN) or None, default=None
        The cached ``P (l gamma_B M_B + l gamma_W M_W) P`` (view-major; reused across the
        alternating ``c``-updates of MVL-LS-optC, only the rank-``l`` term
        ``P (c c^T ⊗ J) P`` is rebuilt).

    Returns
    -------
    A : ndarray of shape (m, N, d)
        The coefficients: ``f^v(x) = k^v(x, X) A[v]``.
    """
    m, N, ell, d, Ps, H, Yc = _ls_problem(Ks, Y, c, gamma_B, gamma_W, Ls, Ps)
    lam = ell * gamma_A
    if R is None:
        PHP = None
        if PMP is not None:
            E = np.zeros((m, N, ell))
            E[:, np.arange(ell), np.arange(ell)] = np.asarray(c, dtype=float)[:, None]
            W = _pblock(Ps, E.reshape(m * N, ell))
            PHP = PMP + W @ W.T
        A = _push_through_solve(Ps, H, lam, Yc, PHP=PHP)
    else:
        # B A R + lam A = Yc with R = V diag(r) V^T:  (r_i B + lam I) (A V)_i = (Yc V)_i
        r, V = np.linalg.eigh(np.asarray(R, dtype=float))
        YV = Yc @ V
        AV = np.empty_like(YV)
        for i in range(d):
            if r[i] <= 1e-14 * max(1.0, abs(r).max()):
                AV[:, i] = YV[:, i] / lam
            else:
                AV[:, i] = _push_through_solve(Ps, r[i] * H, lam, YV[:, i : i + 1])[:, 0]
        A = AV @ V.T
    return A.reshape(m, N, d)


def mvl_ls_path(Ks, Y, c, gamma_As, gamma_B=0.0, gamma_W=0.0, Ls=None, Ps=None, method="eigh"):
    """MVL-LS coefficients for several ``gamma_A`` at fixed ``c``, ``gamma_B``, ``gamma_W``.

    A regularisation path (Minh, Bazzani & Murino 2016, Theorem 10, ``R = I``), e.g. for
    validation grids. The push-through system ``(P H P + l gamma_A I) z = P Y_C`` of
    :func:`mvl_ls_solve` changes with ``gamma_A`` only by the shift. Then
    ``a = (Y_C - H P z) / (l gamma_A)``.

    Parameters
    ----------
    Ks : sequence of array-like of shape (N, N)
        The ``m`` Gram matrices over the labelled-then-unlabelled points.
    Y : array-like of shape (l, d) or (l,)
        The targets of the first ``l`` points.
    c : array-like of shape (m,)
        The combination weights.
    gamma_As : float or sequence of float
        The values of ``gamma_A``, each positive.
    gamma_B : float, default=0.0
        The weight of the between-view term ``M_B``.
    gamma_W : float, default=0.0
        The weight of the within-view term ``M_W``.
    Ls : sequence of array-like of shape (N, N) or None, default=None
        The ``m`` graph Laplacians (needed when ``gamma_W > 0``); None: zero.
    Ps : sequence of ndarray of shape (N, N) or None, default=None
        The precomputed ``psd_sqrt(K)`` of each view; None: computed here.
    method : {"eigh", "cholesky"}, default="eigh"
        ``"eigh"``: one ``eigh`` of the symmetric ``P H P = V diag(w) V^T`` serves every value,
        ``z = V diag(1 / (w + l gamma_A)) V^T P Y_C``. ``"cholesky"``: ``P H P`` is formed once
        and factorised per value, the arithmetic of :func:`mvl_ls_solve` (bit-for-bit the
        same coefficients).

    Returns
    -------
    coefs : list of ndarray of shape (m, N, d)
        One array per ``gamma_A``, equal to :func:`mvl_ls_solve` at each value.

    Raises
    ------
    ValueError
        If ``method`` is not ``"eigh"`` or ``"cholesky"``, or a ``gamma_A`` is not positive.
    """
    if method not in ("eigh", "cholesky"):
        raise ValueError(f"method must be 'eigh' or 'cholesky', got {method!r}")
    gamma_As = [check_positive("gamma_A", float(g)) for g in np.atleast_1d(gamma_As)]
    m, N, ell, d, Ps, H, Yc = _ls_problem(Ks, Y, c, gamma_B, gamma_W, Ls, Ps)
    PHP = _block_apply(Ps, H)
    if method == "cholesky":
        return [_push_through_solve(Ps, H, ell * gA, Yc, PHP=PHP.copy()).reshape(m, N, d) for gA in gamma_As]
    w, V = np.linalg.eigh(0.5 * (PHP + PHP.T))
    w = np.clip(w, 0.0, None)  # P H P is PSD; round-off negatives would only perturb the shift
    VtPY = V.T @ _pblock(Ps, Yc)
    out = []
    for gA in gamma_As:
        lam = ell * gA
        z = V @ (VtPY / (w + lam)[:, None])
        out.append(((Yc - H @ _pblock(Ps, z)) / lam).reshape(m, N, d))
    return out


def mvl_ls_loo(Ks, Y, c, gamma_A, gamma_B=0.0, gamma_W=0.0, Ls=None, Ps=None, return_coef=False):
    """Exact leave-one-out outputs of MVL-LS.

    Minh, Bazzani & Murino 2016, Theorem 10, ``R = I``. Row ``i`` is ``C f(x_i)`` of the fit
    whose objective (10) drops the loss of point ``i``, which stays in the training set as an
    unlabelled point (its graph edges and ``M_B`` term remain).

    The labelled outputs are linear in the targets, ``C f(x_L) = S Y`` with the symmetric hat
    matrix ``S = B' P (P H P + l gamma_A I)^{-1} P B`` (``B = c ⊗ J``, so ``0 <= S_ii < 1``), the
    same for every output column. Replacing ``y_i`` by the left-out prediction leaves the
    left-out fit optimal, hence ``f_{-i}(x_i) = (C f(x_i) - S_ii y_i) / (1 - S_ii)``: one solve
    with ``l`` right-hand sides instead of ``l`` refits. The loss keeps its ``1/l`` weight.

    Parameters
    ----------
    Ks : sequence of array-like of shape (N, N)
        The ``m`` Gram matrices over the labelled-then-unlabelled points.
    Y : array-like of shape (l, d) or (l,)
        The targets of the first ``l`` points.
    c : array-like of shape (m,)
        The combination weights.
    gamma_A : float
        The weight of the RKHS norm.
    gamma_B : float, default=0.0
        The weight of the between-view term ``M_B``.
    gamma_W : float, default=0.0
        The weight of the within-view term ``M_W``.
    Ls : sequence of array-like of shape (N, N) or None, default=None
        The ``m`` graph Laplacians (needed when ``gamma_W > 0``); None: zero.
    Ps : sequence of ndarray of shape (N, N) or None, default=None
        The precomputed ``psd_sqrt(K)`` of each view; None: computed here.
    return_coef : bool, default=False
        Also return the coefficients of the full fit (those of :func:`mvl_ls_solve`).

    Returns
    -------
    loo : ndarray of shape (l, d)
        The leave-one-out outputs.
    coef : ndarray of shape (m, N, d)
        The coefficients of the full fit; only when ``return_coef`` is True.

    Raises
    ------
    FloatingPointError
        If the hat matrix is singular (``S_ii >= 1`` or non-finite); increase ``gamma_A``.
    """
    Y = np.asarray(Y, dtype=float)
    Y = Y[:, None] if Y.ndim == 1 else Y
    ell = Y.shape[0]
    A = mvl_ls_solve(Ks, np.eye(ell), c, gamma_A, gamma_B, gamma_W, Ls, Ps=Ps)  # (m, N, l)
    S = sum(cv * np.asarray(K)[:ell] @ Av for cv, K, Av in zip(np.asarray(c, dtype=float), Ks, A))
    h = np.diag(S)
    if not np.all(np.isfinite(S)) or np.any(h >= 1.0):
        raise FloatingPointError("leave-one-out hat matrix is singular (S_ii >= 1); increase gamma_A")
    loo = (S @ Y - h[:, None] * Y) / (1.0 - h)[:, None]
    return (loo, A @ Y) if return_coef else loo


class _FixedManifoldLS:
    """MVL-LS solves for many combination vectors ``c`` (MVL-LS-optC, §6) with everything else
    fixed. With ``A0 = P (l M) P + l gamma_A I`` (Cholesky once) and ``W_c = P (c ⊗ J) = Σ_v c_v W_v``,
    the push-through system ``(A0 + W_c W_c^T) z = W_c Y`` is solved by Woodbury from the
    precomputed ``Z_v = A0^{-1} W_v``: each new ``c`` costs ``O(m N l d + l^3)``."""

    def __init__(self, Ps, Ls, n_labeled, gamma_A, gamma_B, gamma_W):
        m, N, ell = len(Ps), Ps[0].shape[0], n_labeled
        self.Ps, self.m, self.N, self.ell = Ps, m, N, ell
        self.lam = ell * gamma_A
        self.Hm = ell * _manifold_matrix(Ls if Ls is not None else [np.zeros((N, N))] * m, gamma_B, gamma_W)
        A0 = _block_apply(Ps, self.Hm)
        A0[np.diag_indices_from(A0)] += self.lam
        fac = sla.cho_factor(A0, lower=True, check_finite=False)
        self.Pl = np.stack([P[:, :ell] for P in Ps])  # (m, N, l): block v of W_v
        Z = []
        for v in range(m):
            Wv = np.zeros((m * N, ell))
            Wv[v * N : (v + 1) * N] = self.Pl[v]
            Z.append(sla.cho_solve(fac, Wv, check_finite=False))
        self.Z = np.stack(Z)  # (m, m N, l)
        Zb = self.Z.reshape(m, m, N, ell)  # [w, v-block]
        self.WZ = np.einsum("vnl,wvnk->vwlk", self.Pl, Zb, optimize=True)  # W_v^T Z_w

    def solve(self, c, Y):
        c = np.asarray(c, dtype=float)
        m, N, ell = self.m, self.N, self.ell
        Zc = np.einsum("v,vnl->nl", c, self.Z)
        C = np.eye(ell) + np.einsum("v,w,vwlk->lk", c, c, self.WZ)
        u = Zc @ Y
        Wu = np.einsum("v,vnl,vnd->ld", c, self.Pl, u.reshape(m, N, -1))
        z = u - Zc @ sla.cho_solve(sla.cho_factor(C, lower=True, check_finite=False), Wu, check_finite=False)
        Pz = _pblock(self.Ps, z)
        HPz = self.Hm @ Pz
        mix = np.einsum("w,wid->id", c, Pz.reshape(m, N, -1)[:, :ell])
        HPz = HPz.reshape(m, N, -1)
        HPz[:, :ell] += c[:, None, None] * mix[None]
        A = (_targets_c(Y, c, N) - HPz.reshape(m * N, -1)) / self.lam
        return A.reshape(m, N, -1)


def mvl_ls_objective(Ks, Y, c, A, gamma_A, gamma_B=0.0, gamma_W=0.0, Ls=None):
    """The MVL-LS objective at the coefficients ``A``, with ``R = I``.

    Objective (10)/(84) of Minh, Bazzani & Murino 2016.

    Parameters
    ----------
    Ks : sequence of array-like of shape (N, N)
        The ``m`` Gram matrices over the labelled-then-unlabelled points.
    Y : array-like of shape (l, d) or (l,)
        The targets of the first ``l`` points.
    c : array-like of shape (m,)
        The combination weights.
    A : ndarray of shape (m, N, d)
        The coefficients.
    gamma_A : float
        The weight of the RKHS norm.
    gamma_B : float, default=0.0
        The weight of the between-view term ``M_B``.
    gamma_W : float, default=0.0
        The weight of the within-view term ``M_W``.
    Ls : sequence of array-like of shape (N, N) or None, default=None
        The ``m`` graph Laplacians; None: no within-view term.

    Returns
    -------
    objective : float
        The value of the objective.
    """
    Ks = [np.asarray(K, dtype=float) for K in Ks]
    Y = np.asarray(Y, dtype=float).reshape(len(Y), -1)
    ell = Y.shape[0]
    F = np.stack([K @ A[v] for v, K in enumerate(Ks)])  # (m, N, d)
    g = np.einsum("v,vid->id", np.asarray(c, dtype=float), F[:, :ell])
    obj = np.sum((Y - g) ** 2) / ell
    obj += gamma_A * sum(np.sum(A[v] * F[v]) for v in range(len(Ks)))
    if gamma_B:
        m = len(Ks)
        obj += gamma_B * np.einsum("vid,vw,wid->", F, between_view_matrix(m), F)
    if gamma_W and Ls is not None:
        obj += gamma_W * sum(np.sum(F[v] * (Ls[v] @ F[v])) for v in range(len(Ks)))
    return float(obj)


@partial(jax.jit, static_argnames=("matvec_G", "max_iter"))
def _gcg(matvec_G, apply_H, rhs, lam, tol, max_iter):
    """Batched CG for ``(H G + lam I) a = rhs`` in the ``G``-inner product (columns independent).

    Kept over ``jax.scipy.sparse.linalg.cg`` (``benchmarks/solvers.py``; its figures are on the
    benchmarks page): a library CG has only the Euclidean inner product, so it has to solve the
    symmetric ``(G H G + lam G) a = G rhs``, whose condition number is squared.
    """
    a = jnp.zeros_like(rhs)
    r = rhs
    Gr = matvec_G(r)
    p, Gp = r, Gr
    rho = jnp.sum(r * Gr, axis=0)
    rho0 = jnp.maximum(rho, 1e-300)

    def cond(state):
        k, a, r, p, Gp, rho = state
        return (k < max_iter) & jnp.any(rho > tol**2 * rho0)

    def body(state):
        k, a, r, p, Gp, rho = state
        Tp = apply_H(Gp) + lam * p
        den = jnp.sum(Gp * Tp, axis=0)
        alpha = jnp.where(den > 0, rho / jnp.where(den > 0, den, 1.0), 0.0)
        a = a + alpha * p
        r = r - alpha * Tp
        Gr = matvec_G(r)
        rho_new = jnp.sum(r * Gr, axis=0)
        beta = jnp.where(rho > 0, rho_new / jnp.where(rho > 0, rho, 1.0), 0.0)
        return k + 1, a, r, r + beta * p, Gr + beta * Gp, rho_new

    k, a, r, p, Gp, rho = jax.lax.while_loop(cond, body, (0, a, r, p, Gp, rho))
    return a, k, jnp.sqrt(jnp.max(rho / rho0))


class _ViewMatvec:
    """Hashable ``G @ V`` (view-major blocks) through ``kernel_matvec`` — never an ``N x N`` matrix."""

    def __init__(self, kernels, Xs, block_size=1024):
        self.kernels = tuple(kernels)
        self.Xs = tuple(jnp.asarray(X) for X in Xs)
        self.block_size = block_size

    def __call__(self, V):
        m = len(self.kernels)
        Vb = V.reshape(m, -1, V.shape[-1])
        return jnp.concatenate(
            [
                kernel_matvec(X, Vb[v], kernel=k, block_size=self.block_size)
                for v, (k, X) in enumerate(zip(self.kernels, self.Xs))
            ]
        ).reshape(V.shape)


def mvl_ls_cg(kernels, Xs, Y, c, gamma_A, gamma_B=0.0, gamma_W=0.0, tol=1e-8, max_iter=2000, block_size=1024):
    """Matrix-free MVL-LS by conjugate gradients in the ``G``-inner product.

    Minh, Bazzani & Murino 2016, Theorem 10, ``R = I``. Uses only kernel–vector products
    ``K^v @ V`` computed in row blocks (memory ``O(block N)``); the within-view Laplacians are
    the kernel-weighted ones of §7.1, ``L^v V = deg^v * V - K^v V``.

    Parameters
    ----------
    kernels : sequence of callable
        The bound scalar kernel ``k^v`` of each view.
    Xs : sequence of array-like of shape (N, n_features)
        The ``m`` views, labelled points first.
    Y : array-like of shape (l, d) or (l,)
        The targets of the first ``l`` points.
    c : array-like of shape (m,)
        The combination weights.
    gamma_A : float
        The weight of the RKHS norm.
    gamma_B : float, default=0.0
        The weight of the between-view term ``M_B``.
    gamma_W : float, default=0.0
        The weight of the within-view term ``M_W``.
    tol : float, default=1e-8
        The relative residual (in the ``G``-norm) at which CG stops.
    max_iter : int, default=2000
        The maximum number of CG iterations.
    block_size : int, default=1024
        The row block of the kernel–vector products.

    Returns
    -------
    A : ndarray of shape (m, N, d)
        The coefficients.
    n_iter : int
        The number of CG iterations run.
    relative_residual : float
        The relative residual reached.
    """
    m = len(Xs)
    N = Xs[0].shape[0]
    Y = np.asarray(Y, dtype=float).reshape(len(Y), -1)
    ell, d = Y.shape
    c = jnp.asarray(c, dtype=float)
    G = _ViewMatvec(kernels, Xs, block_size)
    deg = G(jnp.ones((m * N, 1))).reshape(m, N, 1) if gamma_W else jnp.zeros((m, N, 1))
    Jmask = (jnp.arange(N) < ell).astype(float)[None, :, None]
    Mm = jnp.asarray(between_view_matrix(m))

    def apply_H(F):  # F = G a, view-major (m N, d)
        Fb = F.reshape(m, N, -1)
        out = c[:, None, None] * (Jmask * jnp.einsum("v,vid->id", c, Fb)[None])
        if gamma_B:
            out = out + ell * gamma_B * jnp.einsum("vw,wid->vid", Mm, Fb)
        if gamma_W:
            out = out + ell * gamma_W * (deg * Fb - G(F).reshape(m, N, -1))
        return out.reshape(F.shape)

    rhs = jnp.asarray(_targets_c(Y, np.asarray(c), N))
    a, k, res = _gcg(G, jax.tree_util.Partial(apply_H), rhs, float(ell * gamma_A), float(tol), int(max_iter))
    return np.asarray(a).reshape(m, N, d), int(k), float(res)
