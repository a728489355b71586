"""MVL: vector-valued multi-view learning with multi-view manifold regularisation.

Minh, Bazzani & Murino (JMLR 2016), paper ``001_…`` §3–7. Problem (9)::

    min_f  1/l sum_i V(y_i, C f(x_i)) + gamma_A ||f||_K^2 + <f, (gamma_B M_B + gamma_W M_W) f>

with the diagonal multi-view kernel ``G(x, t) = diag(k^1, ..., k^m)`` of §7.1 (eq. 93),
``K = G ⊗ R`` with ``R = I`` (the paper's experiments), the combination operator
``C = c^T ⊗ I`` (eq. 52), ``M_B = I ⊗ (M_m ⊗ I)`` (eq. 57, ``M_m = m I - 1 1^T``) and
``M_W = L ⊗ I`` (eq. 63, per-view graph Laplacians).

Notation used throughout: ``N = l + u`` training points (labelled first), ``m`` views, ``d``
outputs. Because ``G`` is diagonal, the coefficient vector ``a`` of Theorem 2 splits per view:
``f^v(x) = k^v(x, X) A[v]`` with ``A`` of shape ``(m, N, d)``. Vectors of length ``m N`` are
stacked *view-major* (block ``v`` holds the ``N`` samples of view ``v``); the paper's
sample-major ordering of eq. (68) is a permutation of it (the tests check eq. (13) literally).

Special case (tested): with ``gamma_B = gamma_W = 0`` the combined output ``C f = sum_v c_v f^v``
ranges over the RKHS of ``sum_v c_v^2 k^v`` with ``||C f||^2 = min sum_v ||f^v||^2`` over the
splits, so MVL-LS is kernel ridge regression with that kernel; for uniform ``c = 1/m`` it is the
average-kernel ridge with ``lam = m gamma_A``. Any gain over the average kernel comes from
``M_B``, ``M_W`` (eq. 57, 63) or a non-uniform ``c``.

Solvers
-------
* Least squares (Theorem 10, eq. 67-68, R = I): ``(H G + l gamma_A I) a = y_C`` with
  ``G = blockdiag(K^v)`` and the symmetric ``H = c c^T ⊗ J + l gamma_B M_m ⊗ I + l gamma_W
  blockdiag(L^v)``. The non-symmetric system is solved without any inverse through the push-through
  identity ``(H G + λ I)^{-1} = (I - H P (P H P + λ I)^{-1} P) / λ`` with ``P = G^{1/2}``
  (per-view ``eigh``): one Cholesky of the symmetric positive definite ``P H P + λ I``. A general
  symmetric output matrix ``R`` (eq. 67 ``B A R + l gamma_A A = Y_C``) is handled by the
  eigen-decomposition of ``R`` (one solve per eigenvalue). For large ``N`` the ``solver="cg"``
  path runs conjugate gradients in the ``G``-inner product (``H G + λ I`` is self-adjoint and
  positive there) using only kernel–vector products (``bayesmv.kernels.kernel_matvec``), never
  an ``N x N`` matrix.
* SVM (Theorems 6/7, 11-13, Corollary 8): ``a = -1/2 (M G + gamma_A I)^{-1} b`` (eq. 22, 77)
  with ``b`` built from the dual variables; the dual Gram is ``Q = 1/2 (J ⊗ c)^T T (J ⊗ c) ⊗ S^T S``
  with ``T = G (M G + gamma_A I)^{-1} = P (P M P + gamma_A I)^{-1} P`` (eq. 25, 78; the factor
  1/2 is fixed by the single-view special case eq. 28). The box-constrained QP (eq. 26/34/36)
  is solved exactly by projected Newton (Bertsekas 1982: Newton step with a Cholesky of the free
  block, scaled gradient on the binding variables, Armijo search along the projection arc),
  warm-started by a Mehrotra interior-point method (for the simplex dual its Newton systems use
  the structure ``S^T S = κ (I - 1 1^T/P)``: one small Cholesky per class + an ``l x l`` Woodbury
  term), instead of the paper's SMO (Appendix A.4); tests check it against L-BFGS-B and via
  strong duality (primal objective (14) = dual optimum).
* Combination operator (§6, eq. 84-92): alternating minimisation; the ``c``-step is the
  sphere-constrained least squares of §6.1 solved by the SVD and the secular equation (89) by
  bisection, covering Theorem 15, both cases of Theorem 16 and the degenerate "hard case".
"""

from __future__ import annotations

import time
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg as sla
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MultiOutputMixin,
    RegressorMixin,
    clone,
    is_classifier,
    is_regressor,
)
from sklearn.metrics import accuracy_score, r2_score

from .base import MultiViewMixin, SearchCVMixin, encode_labels, labels_from_scores, require_targets
from .datasets import check_label_vector, check_positive, check_targets, check_views
from .diagnostics import FitTrace
from .kernels import (
    DiagonalMultiViewKernel,
    Kernel,
    additive_chi2_kernel,
    gamma_from_bandwidth,
    get_kernel,
    kernel_matvec,
    median_heuristic,
)

__all__ = [
    "MVLClassifier",
    "MVLClassifierCV",
    "MVLRegressor",
    "MVLRegressorCV",
    "between_view_matrix",
    "box_qp",
    "choose_by_loo",
    "graph_laplacian",
    "knn_graph",
    "mvl_ls_cg",
    "mvl_ls_loo",
    "mvl_ls_objective",
    "mvl_ls_path",
    "mvl_ls_solve",
    "mvl_svm_dual_gram",
    "mvl_svm_solve",
    "normalized_cut",
    "psd_sqrt",
    "simplex_coding",
    "sphere_lstsq",
    "view_laplacians",
]


# --------------------------------------------------------------------------------------------
# building blocks
# --------------------------------------------------------------------------------------------


def simplex_coding(n_classes):
    """Simplex code matrix ``S`` of shape ``(P-1, P)`` (§3.3): unit columns, ``<s_j, s_k> = -1/(P-1)``,
    columns summing to zero. ``P = 2`` gives ``S = [1, -1]``."""
    P = int(n_classes)
    if P < 2:
        raise ValueError(f"n_classes must be >= 2, got {n_classes}")
    # centred, rescaled standard basis of R^P, expressed in an orthonormal basis of 1^perp
    E = np.eye(P) - 1.0 / P
    E *= np.sqrt(P / (P - 1.0))
    U, s, _ = np.linalg.svd(E)
    B = U[:, : P - 1]  # orthonormal basis of 1^perp
    S = B.T @ E
    # deterministic sign: first row starts positive (P = 2 -> [1, -1])
    S *= np.where(S[:, :1] < 0, -1.0, 1.0)
    return S


def between_view_matrix(n_views):
    """``M_m = m I_m - 1 1^T`` (eq. 54): ``a^T M_m a = sum_{j<k} (a_j - a_k)^2`` (eq. 55)."""
    m = int(n_views)
    return m * np.eye(m) - np.ones((m, m))


def graph_laplacian(W, normalized=False, power=1):
    """Graph Laplacian of a symmetric non-negative weight matrix (§4.2, eq. 60-64).

    Unnormalised ``L = D - W`` (``a^T L a = sum_{j<k} W_jk (a_j - a_k)^2``; self-loops cancel) or,
    with ``normalized=True``, the symmetric normalised ``D^{-1/2} (D - W) D^{-1/2}`` of the
    graph without self-loops (eigenvalues in ``[0, 2]`` whatever the number of points and the
    degrees; isolated vertices get a zero row). ``power = p`` returns ``L^p`` (iterated
    Laplacian, still symmetric PSD, so a valid ``M_W`` block of eq. 63)."""
    W = np.array(W, dtype=float)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"W must be a square weight matrix, got shape {W.shape}")
    check_positive("power", power, integer=True)
    if normalized:
        np.fill_diagonal(W, 0.0)
        deg = W.sum(axis=1)
        s = np.where(deg > 0, 1.0 / np.sqrt(np.where(deg > 0, deg, 1.0)), 0.0)
        L = np.diag((deg > 0).astype(float)) - s[:, None] * W * s[None, :]
    else:
        L = np.diag(W.sum(axis=1)) - W
    L = 0.5 * (L + L.T)
    if power > 1:
        w, V = np.linalg.eigh(L)
        L = (V * np.clip(w, 0.0, None) ** int(power)) @ V.T
    return L


def knn_graph(K, n_neighbors=10):
    """Symmetric k-NN weight matrix from a similarity (Gram) matrix: ``W_ij = K_ij`` when ``j`` is
    among the ``n_neighbors`` most similar points of ``i`` or vice versa, else 0 (no self-loops)."""
    K = np.asarray(K, dtype=float)
    n = K.shape[0]
    k = min(int(n_neighbors), n - 1)
    S = K.copy()
    np.fill_diagonal(S, -np.inf)
    W = np.zeros_like(K)
    if k > 0:
        idx = np.argpartition(-S, k - 1, axis=1)[:, :k]
        rows = np.repeat(np.arange(n), k)
        W[rows, idx.ravel()] = K[rows, idx.ravel()]
    W = np.maximum(W, W.T)
    np.fill_diagonal(W, 0.0)
    return W


def view_laplacians(Ks, graph="kernel", n_neighbors=10, laplacian="unnormalized", power=1):
    """Within-view Laplacians (``M_W`` blocks, eq. 63), one per view, from its Gram matrix: the
    Gram itself as weights (``graph="kernel"``, §7.1) or its symmetric k-NN sparsification
    (``"knn"``), unnormalised ``D - W`` or ``laplacian="normalized"``, to the power ``power``."""
    return [
        graph_laplacian(
            knn_graph(K, n_neighbors) if graph == "knn" else K,
            normalized=laplacian == "normalized",
            power=power,
        )
        for K in Ks
    ]


def psd_sqrt(K):
    """Symmetric square root of a PSD matrix by ``eigh`` (negative round-off eigenvalues -> 0)."""
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


def _manifold_matrix(Ls, gamma_B, gamma_W):
    """View-major ``gamma_B (M_m ⊗ I_N) + gamma_W blockdiag(L^v)`` (eq. 57, 63)."""
    m = len(Ls)
    N = Ls[0].shape[0]
    M = gamma_B * np.kron(between_view_matrix(m), np.eye(N)) if gamma_B else np.zeros((m * N, m * N))
    if gamma_W:
        for v, L in enumerate(Ls):
            M[v * N : (v + 1) * N, v * N : (v + 1) * N] += gamma_W * np.asarray(L)
    return M


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


# --------------------------------------------------------------------------------------------
# least squares: Theorem 10 / Algorithm 1
# --------------------------------------------------------------------------------------------


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
    """MVL-LS coefficients (Theorem 10): solve ``B A R + l gamma_A A = Y_C`` (eq. 67-68).

    ``Ks``: ``m`` Gram matrices ``(N, N)`` over labelled-then-unlabelled points; ``Y``: ``(l, d)``
    targets of the first ``l`` points; ``c``: ``(m,)``; ``Ls``: ``m`` graph Laplacians ``(N, N)``
    (needed when ``gamma_W > 0``); ``R``: optional symmetric PSD ``(d, d)`` output matrix
    (default identity); ``Ps``: optional precomputed ``psd_sqrt(K)`` per view; ``PMP``: optional
    cached ``P (l gamma_B M_B + l gamma_W M_W) P`` (view-major; reused across the alternating
    ``c``-updates of MVL-LS-optC, only the rank-``l`` term ``P (c c^T ⊗ J) P`` is rebuilt).
    Returns ``A`` of shape ``(m, N, d)`` (``f^v(x) = k^v(x, X) A[v]``).
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
    """MVL-LS coefficients (Theorem 10, ``R = I``) for several ``gamma_A`` at fixed ``c``,
    ``gamma_B``, ``gamma_W`` (a regularisation path, e.g. for validation grids).

    The push-through system ``(P H P + l gamma_A I) z = P Y_C`` of ``mvl_ls_solve`` changes with
    ``gamma_A`` only by the shift. ``method="eigh"``: one ``eigh`` of the symmetric
    ``P H P = V diag(w) V^T`` serves every value, ``z = V diag(1 / (w + l gamma_A)) V^T P Y_C``.
    ``"cholesky"``: ``P H P`` is formed once and factorised per value, the arithmetic of
    ``mvl_ls_solve`` (bit-for-bit the same coefficients). Then ``a = (Y_C - H P z) / (l gamma_A)``.
    Returns a list of ``(m, N, d)`` arrays, one per ``gamma_A``, equal to ``mvl_ls_solve`` at each value.
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
    """Exact leave-one-out outputs ``(l, d)`` of MVL-LS (Theorem 10, ``R = I``): row ``i`` is
    ``C f(x_i)`` of the fit whose objective (10) drops the loss of point ``i``, which stays in
    the training set as an unlabelled point (its graph edges and ``M_B`` term remain).

    The labelled outputs are linear in the targets, ``C f(x_L) = S Y`` with the symmetric hat
    matrix ``S = B' P (P H P + l gamma_A I)^{-1} P B`` (``B = c ⊗ J``, so ``0 <= S_ii < 1``), the
    same for every output column. Replacing ``y_i`` by the left-out prediction leaves the left-out
    fit optimal, hence ``f_{-i}(x_i) = (C f(x_i) - S_ii y_i) / (1 - S_ii)``: one solve with ``l``
    right-hand sides instead of ``l`` refits. The loss keeps its ``1/l`` weight. With
    ``return_coef`` also the coefficients ``(m, N, d)`` of the full fit (those of
    :func:`mvl_ls_solve`)."""
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


def normalized_cut(W, labels):
    """Normalised cut ``sum_k cut(C_k, rest) / vol(C_k)`` (Shi & Malik 2000) of the labelling
    ``labels`` ``(N,)`` on the graph with symmetric non-negative weights ``W`` ``(N, N)``: small
    when the classes follow the graph's clusters, about 1 for a class squeezed onto one point."""
    W = np.asarray(W, dtype=float)
    labels = np.asarray(labels)
    deg = W.sum(axis=1)
    total = 0.0
    for k in np.unique(labels):
        inside = labels == k
        vol = deg[inside].sum()
        total += W[np.ix_(inside, ~inside)].sum() / vol if vol > 0 else 1.0
    return float(total)


SUPERVISED_MANIFOLD = {"gamma_B": 1e-6, "gamma_W": 1e-6, "graph": "kernel"}
AUTO_GAMMA_B = (0.0, 1e-6)
AUTO_GAMMA_W = (0.0, 1e-6, 1e-4, 1e-2)


def choose_by_loo(Y, loos, score="accuracy"):
    """Index of the fit to keep among leave-one-out outputs ``loos`` (each ``(l, d)``, e.g. from
    :func:`mvl_ls_loo`) of the same labelled points; ``loos[0]`` is the fallback.

    Per point, a fit scores 1 for the right class (``score="accuracy"``: argmax of the outputs
    against the argmax of the ±1 targets ``Y``) or minus its squared error (``"squared"``). Another
    fit is taken only when its mean paired gain over the fallback exceeds one standard error, the
    largest such gain winning (ties: the smaller squared error). With one label per class no
    point is predicted right once left out, so the fallback stays.

    Returns ``(index, table)``; ``table`` holds per fit ``loo_score`` (mean per-point score),
    ``gain`` and ``gain_se`` (paired, against the fallback) and ``loo_mse``."""
    if score not in ("accuracy", "squared"):
        raise ValueError(f"score must be 'accuracy' or 'squared', got {score!r}")
    Y = np.asarray(Y, dtype=float)
    Y = Y[:, None] if Y.ndim == 1 else Y
    sq = [np.sum((np.reshape(loo, Y.shape) - Y) ** 2, axis=1) for loo in loos]
    if score == "accuracy":
        hits = [(np.argmax(np.reshape(loo, Y.shape), 1) == np.argmax(Y, 1)).astype(float) for loo in loos]
    else:
        hits = [-e for e in sq]
    diffs = [h - hits[0] for h in hits]
    gain = np.array([d.mean() for d in diffs])
    se = np.array([d.std(ddof=1) / np.sqrt(d.size) if d.size > 1 else np.inf for d in diffs])
    mse = np.array([e.mean() for e in sq])
    ok = np.flatnonzero(gain > se)
    best = 0 if ok.size == 0 else int(ok[np.lexsort((mse[ok], -gain[ok]))[0]])
    table = {"loo_score": np.array([h.mean() for h in hits]), "gain": gain, "gain_se": se, "loo_mse": mse}
    return best, table


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
    """Objective (10)/(84) at coefficients ``A`` (``(m, N, d)``), with ``R = I``."""
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

    Kept over ``jax.scipy.sparse.linalg.cg`` (``benchmarks/solvers.py``, 2026-11-26, MVL-LS at
    n = 5,000): a library CG has only the Euclidean inner product, so it has to solve the
    symmetric ``(G H G + lam G) a = G rhs``, whose condition number is squared; it stops at its
    2,000 iterations (134 s, 52× the time) with relative residual 0.24, against 4.2e-5 after 58
    iterations (2.6 s) here; at n = 20,000 (capped at 300 iterations) 352 s (10.7×) and residual
    0.39, against 7.1e-5 after 55 iterations (33 s). Test accuracy is the same (0.966, 0.963).
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
    """Matrix-free MVL-LS (Theorem 10, R = I) by CG in the ``G``-inner product.

    Uses only kernel–vector products ``K^v @ V`` computed in row blocks (memory ``O(block N)``);
    the within-view Laplacians are the kernel-weighted ones of §7.1, ``L^v V = deg^v * V - K^v V``.
    Returns ``(A, n_iter, relative_residual)`` with ``A`` of shape ``(m, N, d)``.
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


# --------------------------------------------------------------------------------------------
# combination operator on the sphere: §6.1, Theorems 15-16
# --------------------------------------------------------------------------------------------


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
    """Global minimiser of ``||A x - b||`` subject to ``||x|| = radius`` (eq. 86; Theorems 15-16).

    ``A = U Σ V^T``; with ``c = U^T b`` the secular function ``s(γ) = Σ σ_i² c_i² / (σ_i² + γ)²``
    (eq. 89) decreases on ``(-σ_min², ∞)``; its root ``γ*`` by bisection gives
    ``x = (A^T A + γ* I)^{-1} A^T b`` (eq. 90, case I). When no root exists there (rank deficient
    with ``Σ_{i<=r} c_i²/σ_i² < radius²``, case II, eq. 91-92; ``A^T b = 0``, Theorem 15; or the
    degenerate case with ``c_i = 0`` on the smallest singular value) the solution is
    ``γ* = -σ_min²``: the components outside the bottom eigenspace are ``σ_i c_i / (σ_i² - σ_min²)``
    and the rest of the norm goes to a bottom eigenvector (the first such ``v``; the solution is
    then not unique). Returns ``(x, γ*)``.

    Kept over ``scipy.optimize.minimize`` (SLSQP with ``‖x‖² = radius²`` as a constraint;
    ``benchmarks/solvers.py``, 2026-11-26, MVL-LS-optC's c-steps on mfeat): SLSQP takes 2.9–7.5×
    the time for the same objective (relative gap ≤ 4e-14) and test accuracy, and is a local
    method where this is the global minimiser.
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


# --------------------------------------------------------------------------------------------
# SVM: Theorems 6/7, 11-13, Corollary 8; box-constrained QP
# --------------------------------------------------------------------------------------------


def _kkt_violation(H, q, lo, hi, x, g=None):
    g = H @ x - q if g is None else g
    v = np.where(x <= lo, np.minimum(g, 0.0), np.where(x >= hi, np.maximum(g, 0.0), g))
    return float(np.max(np.abs(v), initial=0.0))


def _dense_shifted_solver(H):
    """Default ``dvec -> solve`` factory for ``(H + diag(dvec)) x = r`` (dense Cholesky)."""

    def factory(dvec):
        Hd = H.copy()
        Hd[np.diag_indices_from(Hd)] += dvec
        fac = sla.cho_factor(Hd, lower=True, check_finite=False)
        return lambda r: sla.cho_solve(fac, r, check_finite=False)

    return factory


def _simplex_shifted_solver(Qx, codes, n_classes, idx_i, idx_k):
    """Structured ``(H + diag(d))^{-1}`` for the simplex-SVM dual Hessian
    ``H = 1/2 Q_x ⊗ S^T S`` restricted to ``{(i, k): k != y_i}``. With ``S^T S = κ (I - 1 1^T / P)``,
    ``κ = P/(P-1)``: ``H = κ/2 [blockdiag_k Q_x[I_k, I_k] - E Q_x E^T / P]`` (``E`` sums over
    ``k``), so one small Cholesky per class plus an ``l x l`` Woodbury capacitance replace the
    ``(P-1) l`` Cholesky."""
    P = int(n_classes)
    kappa = P / (P - 1.0)
    w, V = np.linalg.eigh(0.5 * (Qx + Qx.T))
    Lq = V * np.sqrt(np.clip(w, 0.0, None))  # Q_x = Lq Lq^T
    groups = [np.flatnonzero(idx_k == k) for k in range(P)]
    beta = kappa / (2.0 * P)
    W = Lq[idx_i]  # E Lq, rows (i, k)

    def factory(dvec):
        facs = []
        for g in groups:
            B = 0.5 * kappa * Qx[np.ix_(idx_i[g], idx_i[g])]
            B[np.diag_indices_from(B)] += dvec[g]
            facs.append(sla.cho_factor(B, lower=True, check_finite=False))

        def solve_A(R):
            out = np.empty_like(R)
            for g, f in zip(groups, facs):
                out[g] = sla.cho_solve(f, R[g], check_finite=False)
            return out

        AW = solve_A(W)
        C = np.eye(W.shape[1]) - beta * (W.T @ AW)
        cf = sla.cho_factor(C, lower=True, check_finite=False)

        def solve(r):
            Ar = solve_A(r)
            return Ar + beta * AW @ sla.cho_solve(cf, W.T @ Ar, check_finite=False)

        return solve

    return factory


def _box_qp_ipm(H, q, lo, hi, tol=1e-10, max_iter=100, shifted_solver=None):
    """Mehrotra predictor-corrector interior point for the box QP (one Cholesky per iteration);
    returns an interior near-optimal point used to warm-start the exact projected Newton."""
    n = q.shape[0]
    shifted_solver = _dense_shifted_solver(H) if shifted_solver is None else shifted_solver
    width = hi - lo
    x = lo + 0.5 * width
    z = np.ones(n)
    w = np.ones(n)
    scale = max(1.0, np.abs(q).max(initial=0.0))
    floor = 1e-15 * width
    for _ in range(max_iter):
        s, t = np.maximum(x - lo, floor), np.maximum(hi - x, floor)
        rd = H @ x - q - z + w
        mu = (z @ s + w @ t) / (2 * n)
        if np.abs(rd).max() <= tol * scale and mu <= tol * tol * scale:
            break
        solve = shifted_solver(z / s + w / t)

        def direction(r_zs, r_wt):
            dx = solve(-rd + r_zs / s - r_wt / t)
            return dx, (r_zs - z * dx) / s, (r_wt + w * dx) / t

        def max_step(v, dv):
            neg = dv < 0
            return min(1.0, float(np.min(-v[neg] / dv[neg]))) if neg.any() else 1.0

        dx, dz, dw = direction(-z * s, -w * t)
        ap = min(max_step(s, dx), max_step(t, -dx))
        ad = min(max_step(z, dz), max_step(w, dw))
        mu_aff = ((z + ad * dz) @ (s + ap * dx) + (w + ad * dw) @ (t - ap * dx)) / (2 * n)
        sigma = (mu_aff / mu) ** 3
        dx, dz, dw = direction(sigma * mu - z * s - dx * dz, sigma * mu - w * t + dx * dw)
        ap = 0.99 * min(max_step(s, dx), max_step(t, -dx))
        ad = 0.99 * min(max_step(z, dz), max_step(w, dw))
        x = np.clip(x + ap * dx, lo, hi)
        z = z + ad * dz
        w = w + ad * dw
    return x


def box_qp(H, q, lo, hi, x0=None, tol=1e-8, max_iter=500, warm_start="ipm", shifted_solver=None):
    """Exact box-constrained convex QP ``min 1/2 x^T H x - q^T x`` s.t. ``lo <= x <= hi``.

    Projected Newton (Bertsekas 1982): at each iteration the variables at (or within ``eps`` of)
    a bound with the gradient pushing outwards are held by a diagonally scaled gradient step, the
    rest take the exact Newton step of the quadratic (Cholesky of the free block), and an Armijo
    search along the projection arc keeps feasibility and descent. On a quadratic the method
    terminates with the exact optimum once the active set is identified (typically 5-30
    iterations). By default it starts from a Mehrotra interior-point solution (``warm_start="ipm"``,
    ~15-25 Cholesky factorisations), which identifies the active set of large SVM duals quickly;
    ``shifted_solver(dvec)`` may supply a structured solver for ``H + diag(dvec)``.
    Returns ``(x, info)``, ``info = {"n_iter", "kkt", "objective"}`` (objective per
    iteration; KKT = largest projected-gradient entry).

    Kept over the maintained QP solvers (``benchmarks/solvers.py``, 2026-11-26, MVL-SVM duals on
    mfeat as the estimator solves them, the same objective to a relative 4e-10 and the same test
    accuracy): the simplex-coded dual with 500 labelled points (4,500 variables, this structured
    ``shifted_solver``) takes 3.1 s, DAQP 14.4×, clarabel 4.6×, OSQP 16.6× that; with 200, DAQP
    0.95×, OSQP 1.85×, clarabel 2.7×. On the one-vs-all duals (no structure) DAQP is as fast or
    faster (0.96× at 500, 0.21× of 0.065 s at 200), but it would add a dependency beside this
    solver, not replace it.
    """
    H = np.asarray(H, dtype=float)
    q = np.asarray(q, dtype=float)
    n = q.shape[0]
    lo = np.broadcast_to(np.asarray(lo, dtype=float), (n,)).copy()
    hi = np.broadcast_to(np.asarray(hi, dtype=float), (n,)).copy()
    if np.any(lo > hi):
        raise ValueError("box_qp: lower bounds exceed upper bounds")
    if not (np.all(np.isfinite(H)) and np.all(np.isfinite(q))):
        raise ValueError("box_qp: H and q must be finite")
    diag = np.clip(np.diag(H).copy(), 1e-12 * max(np.abs(np.diag(H)).max(initial=0.0), 1e-300), None)
    ridge = 1e-13 * max(np.abs(np.diag(H)).max(initial=0.0), 1e-300)
    if x0 is None and warm_start == "ipm" and np.all(hi > lo):
        x0 = _box_qp_ipm(H, q, lo, hi, tol=min(tol, 1e-8), shifted_solver=shifted_solver)
    x = np.clip(np.zeros(n) if x0 is None else np.asarray(x0, dtype=float), lo, hi)
    g = H @ x - q
    fx = 0.5 * x @ (g - q)
    objs = [fx]
    it = 0
    for it in range(1, max_iter + 1):
        if _kkt_violation(H, q, lo, hi, x, g) <= tol:
            it -= 1
            break
        w = np.linalg.norm(x - np.clip(x - g, lo, hi))
        eps = np.minimum(w, 1e-3 * (hi - lo))
        binding = ((x <= lo + eps) & (g > 0)) | ((x >= hi - eps) & (g < 0))
        F = np.flatnonzero(~binding)
        d = -g / diag
        if F.size:
            HF = H[np.ix_(F, F)]
            HF[np.diag_indices_from(HF)] += ridge
            try:
                d[F] = -sla.cho_solve(
                    sla.cho_factor(HF, lower=True, check_finite=False), g[F], check_finite=False
                )
            except np.linalg.LinAlgError:
                d[F] = -np.linalg.lstsq(HF, g[F], rcond=None)[0]
        t = 1.0
        while True:
            xn = np.clip(x + t * d, lo, hi)
            gn = H @ xn - q
            fn = 0.5 * xn @ (gn - q)
            if fn <= fx + 1e-4 * (g @ (xn - x)) or t < 1e-10:
                break
            t *= 0.5
        if not fn < fx:  # no progress along the arc: exact projected-gradient step instead
            L = max(np.linalg.norm(H, 1), 1e-300)
            xn = np.clip(x - g / L, lo, hi)
            gn = H @ xn - q
            fn = 0.5 * xn @ (gn - q)
            if not fn < fx:
                break
        x, g, fx = xn, gn, fn
        objs.append(fx)
    viol = _kkt_violation(H, q, lo, hi, x, g)
    return x, {"n_iter": int(it), "kkt": viol, "objective": np.asarray(objs, dtype=float)}


def mvl_svm_dual_gram(Ps, c, n_labeled, M, gamma_A):
    """``Q_x = (J ⊗ c)^T T (J ⊗ c)`` (``l x l``) with ``T = P (P M P + gamma_A I)^{-1} P``
    (``= G (M G + gamma_A I)^{-1}``, eq. 25/78), ``M`` view-major ``gamma_B M_B + gamma_W M_W``."""
    m = len(Ps)
    N = Ps[0].shape[0]
    ell = n_labeled
    PMP = _block_apply(Ps, M) if np.any(M) else np.zeros((m * N, m * N))
    PMP[np.diag_indices_from(PMP)] += gamma_A
    # (J ⊗ c) in view-major: column i has c_v at row (v, i)
    E = np.zeros((m, N, ell))
    E[:, np.arange(ell), np.arange(ell)] = np.asarray(c, dtype=float)[:, None]
    PE = _pblock(Ps, E.reshape(m * N, ell))
    Z = sla.cho_solve(sla.cho_factor(PMP, lower=True, check_finite=False), PE, check_finite=False)
    Q = PE.T @ Z
    return 0.5 * (Q + Q.T)


def mvl_svm_solve(Ps, codes, n_classes, c, gamma_A, M=None, loss="simplex_hinge", tol=1e-8, max_iter=500):
    """MVL-SVM (simplex coding, Theorems 6/7/13) or MVL-binSVM (one-vs-all, Corollary 8).

    ``Ps``: per-view ``psd_sqrt(K^v)`` over ``N`` training points (labelled first); ``codes``:
    integer labels of the ``l`` labelled points; ``M``: view-major manifold matrix
    (``_manifold_matrix``) or None. Returns ``(A, alphas, infos)``: ``A`` ``(m, N, d)``
    coefficients (``d = P - 1`` for simplex, ``P`` columns of one-vs-all scores for hinge, one
    column for two-class hinge), the dual variables and the QP infos.
    """
    m = len(Ps)
    N = Ps[0].shape[0]
    codes = np.asarray(codes)
    ell = codes.shape[0]
    P = int(n_classes)
    c = np.asarray(c, dtype=float)
    M = np.zeros((m * N, m * N)) if M is None else M
    Qx = mvl_svm_dual_gram(Ps, c, ell, M, gamma_A)
    lam = gamma_A
    E = np.zeros((m, N, ell))
    E[:, np.arange(ell), np.arange(ell)] = c[:, None]
    E = E.reshape(m * N, ell)  # (J ⊗ c)

    def coef(B):  # a = -1/2 (M G + gamma_A I)^{-1} (J ⊗ c) B, B (l, d)
        rhs = E @ B
        if np.any(M):
            return -0.5 * _push_through_solve(Ps, M, lam, rhs)
        return -0.5 * rhs / lam

    infos = []
    if loss == "simplex_hinge":
        S = simplex_coding(P)
        SS = S.T @ S
        # variables alpha_{k,i}, k != y_i (Theorem 7): index (i, k)
        idx_i, idx_k = np.nonzero(np.arange(P)[None, :] != codes[:, None])
        Hq = 0.5 * Qx[np.ix_(idx_i, idx_i)] * SS[np.ix_(idx_k, idx_k)]
        qv = np.full(idx_i.size, 1.0 / (P - 1))
        x, info = box_qp(
            Hq,
            qv,
            0.0,
            1.0 / ell,
            tol=tol,
            max_iter=max_iter,
            shifted_solver=_simplex_shifted_solver(Qx, codes, P, idx_i, idx_k),
        )
        infos.append(info)
        alpha = np.zeros((ell, P))
        alpha[idx_i, idx_k] = x
        A = coef(alpha @ S.T)  # b_i = c ⊗ S alpha_i
        return A.reshape(m, N, P - 1), alpha, infos
    if loss == "hinge":
        targets = np.where(codes[:, None] == np.arange(P)[None, :], 1.0, -1.0)
        if P == 2:
            targets = targets[:, 1:]
        B = np.zeros_like(targets)
        for j in range(targets.shape[1]):
            y = targets[:, j]
            # binary simplex code: alpha_i on the code -y_i, S alpha_i = -y_i alpha_i (eq. 36-39)
            Hq = 0.5 * Qx * np.outer(y, y)
            x, info = box_qp(Hq, np.ones(ell), 0.0, 1.0 / ell, tol=tol, max_iter=max_iter)
            infos.append(info)
            B[:, j] = -y * x
        A = coef(B)
        return A.reshape(m, N, B.shape[1]), B, infos
    raise ValueError(f"loss={loss!r} is not an SVM loss; use 'hinge' or 'simplex_hinge'")


# --------------------------------------------------------------------------------------------
# estimators
# --------------------------------------------------------------------------------------------


def _blocked_gram(kernel, X, Y, block=256):
    """Gram matrix in row blocks (memory-bounded for kernels with ``O(n m d)`` intermediates)."""
    X = np.asarray(X)
    Y = X if Y is None else np.asarray(Y)
    out = np.empty((X.shape[0], Y.shape[0]))
    for s in range(0, X.shape[0], block):
        out[s : s + block] = np.asarray(kernel(X[s : s + block], Y))
    return out


def _default_kernel(name, params, X):
    """Bind data-driven defaults: RBF/Laplacian ``gamma`` from the median heuristic,
    ``chi2`` ``gamma = 1 / median chi² distance``."""
    params = dict(params)
    if name in ("rbf", "laplacian") and params.get("gamma") is None:
        params["gamma"] = gamma_from_bandwidth(median_heuristic(X))
    if name == "chi2" and params.get("gamma") is None:
        Xs = X[np.random.default_rng(0).choice(X.shape[0], min(X.shape[0], 500), replace=False)]
        D = -_blocked_gram(additive_chi2_kernel, Xs, Xs, block=64)
        med = np.median(D[np.triu_indices(D.shape[0], 1)])
        params["gamma"] = 1.0 / med if med > 0 else 1.0
    return get_kernel(name, **params)


class _MVLBase(MultiViewMixin, BaseEstimator):
    _min_views = 1

    # ---- validation --------------------------------------------------------------------
    def _check_params(self):
        for name in ("gamma_A",):
            check_positive(name, getattr(self, name))
        for name in ("gamma_B", "gamma_W"):
            value = getattr(self, name)
            if isinstance(value, str):
                if value != "auto":
                    raise ValueError(f"{name}={value!r}; use a number >= 0 or 'auto'")
            else:
                check_positive(name, value, allow_zero=True)
        check_positive("max_iter", self.max_iter, integer=True)
        check_positive("tol", self.tol)
        check_positive("n_neighbors", self.n_neighbors, integer=True)
        check_positive("cg_tol", self.cg_tol)
        check_positive("cg_max_iter", self.cg_max_iter, integer=True)
        if self.graph not in ("kernel", "knn"):
            raise ValueError(f"graph={self.graph!r}; use 'kernel' (kernel weights, §7.1) or 'knn'")
        if self.laplacian not in ("unnormalized", "normalized"):
            raise ValueError(f"laplacian={self.laplacian!r}; use 'unnormalized' (D - W) or 'normalized'")
        check_positive("laplacian_power", self.laplacian_power, integer=True)
        if self.solver not in ("auto", "dense", "cg"):
            raise ValueError(f"solver={self.solver!r}; use 'auto', 'dense' or 'cg'")

    def _views_and_kernels(self, Xs, n_labeled_y, Xs_unlabeled):
        """Validated training views (labelled then unlabelled), bound kernels, Gram matrices."""
        pre = isinstance(self.kernel, str) and self.kernel == "precomputed"
        if pre:
            if Xs_unlabeled is not None:
                raise ValueError(
                    "with kernel='precomputed' pass Gram matrices over labelled+unlabelled "
                    "points (labelled first) as Xs and leave Xs_unlabeled=None"
                )
            Ks = check_views(Xs, min_views=self._min_views)
            N = Ks[0].shape[0]
            for v, K in enumerate(Ks):
                if K.shape != (N, N):
                    raise ValueError(
                        f"Xs[{v}] must be a square (N, N) Gram matrix with kernel='precomputed', "
                        f"got shape {K.shape}"
                    )
                if not np.allclose(K, K.T, atol=1e-8 * max(1.0, np.abs(K).max())):
                    raise ValueError(f"Xs[{v}] (precomputed Gram) is not symmetric")
            if n_labeled_y > N:
                raise ValueError(f"y has {n_labeled_y} entries but the Gram matrices have only {N} rows")
            self._record_views(Ks)
            self.kernels_ = None
            self.X_fit_ = None
            return Ks, None
        views = check_views(Xs, min_views=self._min_views, owner=type(self).__name__)
        if views[0].shape[0] != n_labeled_y:
            raise ValueError(f"y has {n_labeled_y} entries but Xs has {views[0].shape[0]} samples")
        self._record_views(views)
        if Xs_unlabeled is not None:
            unl = check_views(Xs_unlabeled, n_features=self.n_features_per_view_, name="Xs_unlabeled")
            views = [np.vstack([X, U]) for X, U in zip(views, unl)]
        m = len(views)
        kern = self.kernel if isinstance(self.kernel, (list, tuple)) else [self.kernel] * m
        params = (
            self.kernel_params if isinstance(self.kernel_params, (list, tuple)) else [self.kernel_params] * m
        )
        if len(kern) != m or len(params) != m:
            raise ValueError(
                f"kernel and kernel_params must be single values or lists of length {m} (one per view)"
            )
        bound = []
        for v, (k, p) in enumerate(zip(kern, params)):
            p = {} if p is None else dict(p)
            if isinstance(k, str):
                if k == "precomputed":
                    raise ValueError("kernel='precomputed' must apply to all views")
                bound.append(_default_kernel(k, p, views[v]))
            elif isinstance(k, Kernel) or callable(k):
                bound.append(get_kernel(k, **p))
            else:
                raise TypeError(
                    f"kernel[{v}] must be a name, a callable or a bayesmv Kernel, got {type(k).__name__}"
                )
        self.kernels_ = tuple(bound)
        self.X_fit_ = views
        return views, DiagonalMultiViewKernel(tuple(bound))

    def _plain_kernel_graph(self):
        """The matrix-free CG path supports only the §7.1 graph ``L^v = D^v - K^v``."""
        return self.graph_ == "kernel" and self.laplacian == "unnormalized" and self.laplacian_power == 1

    def _laplacians(self, Ks, graph):
        """Per-view Laplacians of ``graph`` with this estimator's ``n_neighbors``, ``laplacian``
        and ``laplacian_power``."""
        return view_laplacians(Ks, graph, self.n_neighbors, self.laplacian, self.laplacian_power)

    def _combination(self, m):
        if self.c is None:
            return np.full(m, 1.0 / m)
        c = np.asarray(self.c, dtype=float).ravel()
        if c.shape != (m,) or not np.all(np.isfinite(c)):
            raise ValueError(f"c must be a finite vector of length n_views={m}, got {self.c!r}")
        if not np.any(c):
            raise ValueError("c must not be the zero vector")
        return c

    # ---- core fit ------------------------------------------------------------------------
    def _fit_core(self, Xs, Y, Xs_unlabeled, loss, codes=None, n_classes=None):
        self._check_params()
        t0 = time.perf_counter()
        ell = Y.shape[0]
        data, gkernel = self._views_and_kernels(Xs, ell, Xs_unlabeled)
        m = self.n_views_
        c = self._combination(m)
        if self.optimize_c and loss != "squared":
            raise ValueError(
                "optimize_c=True is only defined for loss='squared' (MVL-LS-optC, §6; Remark 18)"
            )
        N = data[0].shape[0]
        self.n_labeled_ = ell
        self.n_unlabeled_ = N - ell
        self.gamma_B_, self.gamma_W_, self.graph_ = self._supervised_manifold()
        self.manifold_selection_ = None
        auto = self._auto_manifold() and N > ell  # without unlabelled points "auto" is the supervised value
        if auto and self.solver == "cg":
            raise ValueError(
                "gamma_B / gamma_W = 'auto' with unlabelled points are chosen by exact leave-one-out, "
                "which needs the dense solver; give numbers with solver='cg'"
            )
        use_cg = self.solver == "cg" or (
            self.solver == "auto"
            and not auto
            and gkernel is not None
            and N * m > 6000
            and loss == "squared"
            and self._plain_kernel_graph()
            and not self.optimize_c
        )
        if use_cg:
            if gkernel is None or loss != "squared" or not self._plain_kernel_graph() or self.optimize_c:
                raise ValueError(
                    "solver='cg' needs real kernels (not 'precomputed'), loss='squared', "
                    "graph='kernel' with laplacian='unnormalized', laplacian_power=1, "
                    "and optimize_c=False"
                )
            A, k, res = mvl_ls_cg(
                self.kernels_,
                data,
                Y,
                c,
                self.gamma_A,
                self.gamma_B_,
                self.gamma_W_,
                tol=self.cg_tol,
                max_iter=self.cg_max_iter,
            )
            if not np.all(np.isfinite(A)):
                raise FloatingPointError("MVL-LS CG produced non-finite coefficients; increase gamma_A")
            self.dual_coef_ = A
            self.c_ = c
            self.fit_trace_ = FitTrace(
                estimates={"c": c},
                traces={"residual": np.array([res])},
                converged=bool(res <= self.cg_tol),
                method="mvl-ls-cg",
            )
            self.n_iter_ = k
            self.fit_time_ = time.perf_counter() - t0
            return self
        Ks = self._train_grams(data, gkernel)
        if auto:
            Ks, Ps, Ls = self._choose_manifold(Ks, Y, c, "squared" if is_regressor(self) else "accuracy")
        else:
            Ps = [psd_sqrt(K) for K in Ks]
            Ls = self._laplacians(Ks, self.graph_) if self.gamma_W_ else None
        gamma_B, gamma_W = self.gamma_B_, self.gamma_W_
        if loss == "squared":
            objs, cs = [], []
            converged = True
            n_iter = 1 if not self.optimize_c else self.max_iter
            radius = float(np.linalg.norm(c))
            if self.optimize_c:
                fixed = _FixedManifoldLS(Ps, Ls, ell, self.gamma_A, gamma_B, gamma_W)

                def solve(c):
                    return fixed.solve(c, Y)
            else:

                def solve(c):
                    return mvl_ls_solve(Ks, Y, c, self.gamma_A, gamma_B, gamma_W, Ls, Ps=Ps)

            for it in range(n_iter):
                A = solve(c)
                objs.append(mvl_ls_objective(Ks, Y, c, A, self.gamma_A, gamma_B, gamma_W, Ls))
                cs.append(c.copy())
                if not self.optimize_c:
                    break
                # c-step (eq. 85): F[(i, k), v] = f^v(x_i)_k over labelled points
                F = np.stack([Ks[v][:ell] @ A[v] for v in range(m)], axis=-1).reshape(-1, m)
                c_new, _ = sphere_lstsq(F, Y.ravel(), radius)
                obj_c = mvl_ls_objective(Ks, Y, c_new, A, self.gamma_A, gamma_B, gamma_W, Ls)
                objs.append(obj_c)
                cs.append(c_new.copy())
                c = c_new
                if len(objs) >= 3 and abs(objs[-3] - objs[-1]) <= self.tol * max(1.0, abs(objs[-1])):
                    A = solve(c)
                    objs.append(mvl_ls_objective(Ks, Y, c, A, self.gamma_A, gamma_B, gamma_W, Ls))
                    break
            else:
                if self.optimize_c:
                    converged = False
                    A = solve(c)
                    objs.append(mvl_ls_objective(Ks, Y, c, A, self.gamma_A, gamma_B, gamma_W, Ls))
            self.n_iter_ = len(cs)
            self.fit_trace_ = FitTrace(
                estimates={"c": c},
                traces={"objective": np.asarray(objs)},
                converged=converged,
                method="mvl-ls-optc" if self.optimize_c else "mvl-ls",
            )
            self.c_history_ = np.asarray(cs)
        else:
            n_fit = Ks[0].shape[0]
            M = _manifold_matrix(Ls if Ls is not None else [np.zeros((n_fit, n_fit))] * m, gamma_B, gamma_W)
            A, alpha, infos = mvl_svm_solve(
                Ps,
                codes,
                n_classes,
                c,
                self.gamma_A,
                M,
                loss=loss,
                tol=self.qp_tol,
                max_iter=self.qp_max_iter,
            )
            self.dual_alpha_ = alpha
            kkt = max(i["kkt"] for i in infos)
            traces = {"objective": np.concatenate([i["objective"] for i in infos])}
            self.fit_trace_ = FitTrace(
                estimates={"c": c, "kkt_violation": np.array(kkt)},
                traces=traces,
                converged=bool(kkt <= 10 * self.qp_tol),
                method=f"mvl-{loss}-box-qp",
            )
            self.n_iter_ = int(sum(i["n_iter"] for i in infos))
        if not np.all(np.isfinite(A)):
            raise FloatingPointError("MVL produced non-finite coefficients; increase gamma_A")
        if A.shape[1] < N:  # the supervised fit kept by "auto": no weight on the unlabelled points
            A = np.concatenate([A, np.zeros((m, N - A.shape[1], A.shape[2]))], axis=1)
        self.dual_coef_ = A
        self.c_ = c
        self.fit_time_ = time.perf_counter() - t0
        return self

    def _auto_manifold(self):
        """Whether ``gamma_B`` or ``gamma_W`` is ``"auto"`` (the other may be a number)."""
        return any(isinstance(g, str) for g in (self.gamma_B, self.gamma_W))

    def _supervised_manifold(self):
        """``(gamma_B, gamma_W, graph)`` of the supervised fit: ``SUPERVISED_MANIFOLD`` where a
        weight is ``"auto"`` (its graph with an ``"auto"`` ``gamma_W``), the given values elsewhere."""
        auto_B, auto_W = (isinstance(g, str) for g in (self.gamma_B, self.gamma_W))
        return (
            SUPERVISED_MANIFOLD["gamma_B"] if auto_B else self.gamma_B,
            SUPERVISED_MANIFOLD["gamma_W"] if auto_W else self.gamma_W,
            SUPERVISED_MANIFOLD["graph"] if auto_W else self.graph,
        )

    def _choose_manifold(self, Ks, Y, c, score):
        """``"auto"`` ``gamma_B`` / ``gamma_W`` with unlabelled points: the supervised fit
        (:meth:`_supervised_manifold` on the labelled points alone) unless a fit with the
        unlabelled points on ``graph``, at a pair of ``AUTO_GAMMA_B x AUTO_GAMMA_W`` (a numeric
        value fixed), beats it by :func:`choose_by_loo`. A classifier with a single label in some
        class, where no leave-one-out can judge, keeps instead the fit whose classes (labelled
        points as given, the others by the fit) have the smallest :func:`normalized_cut` on the
        graph counting the views in which two points are ``n_neighbors``-nearest neighbours.
        Records ``gamma_B_``, ``gamma_W_``, ``graph_``, ``manifold_selection_``; returns the Gram
        matrices, square roots and Laplacians of the problem to solve (``l x l`` for the
        supervised fit)."""
        ell = Y.shape[0]
        sup_B, sup_W, sup_graph = self._supervised_manifold()
        KL = [K[:ell, :ell] for K in Ks]
        PL = [psd_sqrt(K) for K in KL]
        LL = self._laplacians(KL, sup_graph) if sup_W else None
        Ps = [psd_sqrt(K) for K in Ks]
        pairs = [
            (gB, gW)
            for gB in (AUTO_GAMMA_B if isinstance(self.gamma_B, str) else (self.gamma_B,))
            for gW in (AUTO_GAMMA_W if isinstance(self.gamma_W, str) else (self.gamma_W,))
        ]
        Ls = self._laplacians(Ks, self.graph) if any(gW for _, gW in pairs) else None
        # (leave-one-out outputs, coefficients); the supervised fit's span the labelled points only
        fits = [mvl_ls_loo(KL, Y, c, self.gamma_A, sup_B, sup_W, LL, PL, return_coef=True)]
        fits += [
            mvl_ls_loo(Ks, Y, c, self.gamma_A, gB, gW, Ls if gW else None, Ps, return_coef=True)
            for gB, gW in pairs
        ]
        best, table = choose_by_loo(Y, [loo for loo, _ in fits], score)
        cuts = np.full(len(fits), np.nan)
        if score == "accuracy":
            # the labelled points keep their classes; each unlabelled point takes its fitted class
            graph = sum(knn_graph(K, self.n_neighbors) > 0 for K in Ks).astype(float)
            label_of = np.argmax(Y, axis=1)
            fitted = [sum(cv * K[ell:, : A.shape[1]] @ Av for cv, K, Av in zip(c, Ks, A)) for _, A in fits]
            cuts = np.array([normalized_cut(graph, np.r_[label_of, np.argmax(F, 1)]) for F in fitted])
            if np.bincount(label_of).min() < 2:
                best = int(np.argmin(cuts))  # first (the supervised fit) among equals
        pairs = [(sup_B, sup_W)] + pairs
        self.manifold_selection_ = {
            "gamma_B": np.array([p[0] for p in pairs]),
            "gamma_W": np.array([p[1] for p in pairs]),
            "uses_unlabeled": np.arange(len(pairs)) > 0,
            **table,
            "normalized_cut": cuts,
        }
        if best == 0:
            return KL, PL, LL
        self.gamma_B_, self.gamma_W_, self.graph_ = *pairs[best], self.graph
        return Ks, Ps, Ls if self.gamma_W_ else None

    def _train_grams(self, data, gkernel):
        """Training Gram matrices: ``data`` itself for ``kernel="precomputed"``, else ``kernels_``."""
        Ks = [
            np.asarray(K, dtype=float)
            for K in (
                data if gkernel is None else [_blocked_gram(k, X, None) for k, X in zip(self.kernels_, data)]
            )
        ]
        for v, K in enumerate(Ks):
            if not np.all(np.isfinite(K)):
                raise ValueError(f"the Gram matrix of view {v} contains NaN/inf")
        return Ks

    def _ls_path(self, Xs, y, Xs_unlabeled, gamma_As, shared):
        """This estimator fitted at each of ``gamma_As`` in turn (a generator): MVL-LS at the fixed
        combination ``c`` from one eigendecomposition (:func:`mvl_ls_path`), the same coefficients
        as ``fit`` with ``loss="squared"``. ``shared`` (a dict, filled by the first call) keeps the
        kernels, Gram matrices and their square roots for further calls on the same training data
        that change only ``graph``, ``n_neighbors`` or ``gamma_W``."""
        self._check_params()
        if isinstance(self.gamma_B, str) or isinstance(self.gamma_W, str):
            raise ValueError("the cross-validated path needs numeric gamma_B and gamma_W, not 'auto'")
        Y, _ = self._targets(y)
        if not shared:
            data, gkernel = self._views_and_kernels(Xs, Y.shape[0], Xs_unlabeled)
            if gkernel is None:
                raise ValueError("the cross-validated path needs kernels, not kernel='precomputed'")
            Ks = self._train_grams(data, gkernel)
            fitted = ("n_views_", "n_features_per_view_", "n_features_in_", "kernels_", "X_fit_")
            shared.update(Ks=Ks, Ps=[psd_sqrt(K) for K in Ks], fitted={a: getattr(self, a) for a in fitted})
        self.__dict__.update(shared["fitted"])
        Ks, Ps = shared["Ks"], shared["Ps"]
        Ls = None
        if self.gamma_W:
            Ls = self._laplacians(Ks, self.graph)
        c = self._combination(self.n_views_)
        self.n_labeled_, self.n_unlabeled_ = Y.shape[0], Ks[0].shape[0] - Y.shape[0]
        self.gamma_B_, self.gamma_W_, self.graph_ = self.gamma_B, self.gamma_W, self.graph
        self.manifold_selection_ = None
        for gamma_A, A in zip(gamma_As, mvl_ls_path(Ks, Y, c, gamma_As, self.gamma_B, self.gamma_W, Ls, Ps)):
            if not np.all(np.isfinite(A)):
                raise FloatingPointError("MVL produced non-finite coefficients; increase gamma_A")
            self.gamma_A, self.dual_coef_, self.c_ = gamma_A, A, c
            yield self

    # ---- prediction ----------------------------------------------------------------------
    def _test_views(self, Xs):
        self._check_fitted()
        if self.kernels_ is None:
            N = self.dual_coef_.shape[1]
            Ks = check_views(Xs)
            if len(Ks) != self.n_views_:
                raise ValueError(f"Xs has {len(Ks)} views but the estimator was fitted with {self.n_views_}")
            for v, K in enumerate(Ks):
                if K.shape[1] != N:
                    raise ValueError(
                        f"Xs[{v}] must be a (n_test, {N}) kernel matrix against the training "
                        f"points with kernel='precomputed', got shape {K.shape}"
                    )
            return Ks
        return self._validate_predict(Xs)

    def per_view_output(self, Xs):
        """Per-view outputs ``f^v(x) = k^v(x, X) A[v]``: array ``(n, m, d)`` (Algorithm 1 output)."""
        views = self._test_views(Xs)
        A = self.dual_coef_
        if self.kernels_ is None:
            return np.stack([np.asarray(K) @ A[v] for v, K in enumerate(views)], axis=1)
        return np.stack(
            [
                np.asarray(kernel_matvec(X, A[v], Y=Xt, kernel=k))
                for v, (k, X, Xt) in enumerate(zip(self.kernels_, views, self.X_fit_))
            ],
            axis=1,
        )

    def combined_output(self, Xs):
        """``C f(x) = sum_v c_v f^v(x)``: array ``(n, d)``."""
        return np.einsum("v,nvd->nd", self.c_, self.per_view_output(Xs))


class MVLRegressor(RegressorMixin, MultiOutputMixin, _MVLBase):
    """MVL-LS / MVL-LS-optC regression (Algorithm 1, Theorem 10; §6 for ``optimize_c``).

    Parameters
    ----------
    kernel : str, callable, ``Kernel``, ``"precomputed"`` or list of these (one per view)
        Per-view scalar kernels ``k^v`` of ``G = diag(k^1..k^m)`` (eq. 93). RBF/Laplacian without
        ``gamma`` use the median heuristic; ``chi2`` without ``gamma`` uses 1/median χ² distance.
        With ``"precomputed"``, ``Xs`` are ``(N, N)`` Grams over labelled-then-unlabelled points
        (``len(y) = l <= N``) and prediction takes ``(n_test, N)`` kernels.
    kernel_params : dict or list of dicts
    gamma_A : float
        RKHS regularisation.
    gamma_B, gamma_W : float or "auto"
        Between-view (eq. 57) and within-view (eq. 63) regularisation. ``"auto"`` (default)
        without unlabelled points: the value of ``SUPERVISED_MANIFOLD`` (1e-6, on the kernel graph
        of the labelled points). With unlabelled points: that supervised fit, unless a fit that
        uses them, with ``gamma_B`` in ``AUTO_GAMMA_B = (0, 1e-6)`` and ``gamma_W`` in
        ``AUTO_GAMMA_W = (0, 1e-6, 1e-4, 1e-2)`` on ``graph`` (a numeric value stays fixed), beats
        it in the exact leave-one-out of MVL-LS over the labelled points by more than one
        standard error (:func:`mvl_ls_loo`, :func:`choose_by_loo`; correct classes for the
        classifier, squared error for the regressor; the SVM losses use the same MVL-LS
        criterion). So unlabelled points enter only where the labels support the graph. A
        classifier with a single label in some class, which no leave-one-out can judge, keeps the
        fit whose labelling of the training points has the smallest :func:`normalized_cut` on the
        k-NN graphs of the views. Cost: up to 9 dense leave-one-out solves (a Cholesky of order
        ``m N`` each), so with unlabelled points not with ``solver="cg"``. Fitted: ``gamma_B_``,
        ``gamma_W_``, ``graph_`` and the table ``manifold_selection_`` (``None`` without
        unlabelled points).
    c : array (m,), optional
        Combination weights (eq. 52); uniform ``1/m`` by default. With ``optimize_c`` it is the
        starting point and its norm the sphere radius.
    optimize_c : bool
        Alternating minimisation over ``f`` and ``c`` on the sphere (MVL-LS-optC, §6).
    graph : {"knn", "kernel"}
        Within-view graph weights: the symmetric k-NN sparsification of the Gram matrices
        (``n_neighbors``, default 3) or the Gram matrices themselves (§7.1), per view, over the
        labelled and unlabelled training points.
    laplacian : {"unnormalized", "normalized"}
        ``D - W`` (§4.2) or the symmetric normalised ``D^{-1/2} (D - W) D^{-1/2}`` (scale-free:
        spectrum in ``[0, 2]`` whatever the number of points, so one ``gamma_W`` grid fits all
        training-set sizes).
    laplacian_power : int
        Use ``L^p`` per view (iterated Laplacian).
    solver : {"auto", "dense", "cg"}
        Dense push-through Cholesky or matrix-free CG (``auto``: CG when ``m N > 6000`` on the
        unnormalised kernel graph, ``"auto"`` weights without unlabelled points included).
    """

    def __init__(
        self,
        kernel="rbf",
        kernel_params=None,
        gamma_A=1e-5,
        gamma_B="auto",
        gamma_W="auto",
        c=None,
        optimize_c=False,
        graph="knn",
        n_neighbors=3,
        max_iter=20,
        tol=1e-4,
        solver="auto",
        cg_tol=1e-8,
        cg_max_iter=5000,
        laplacian="unnormalized",
        laplacian_power=1,
    ):
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.gamma_A = gamma_A
        self.gamma_B = gamma_B
        self.gamma_W = gamma_W
        self.c = c
        self.optimize_c = optimize_c
        self.graph = graph
        self.n_neighbors = n_neighbors
        self.laplacian = laplacian
        self.laplacian_power = laplacian_power
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.cg_tol = cg_tol
        self.cg_max_iter = cg_max_iter

    def fit(self, Xs, y, Xs_unlabeled=None):
        """Fit on labelled views ``Xs`` with targets ``y`` ``(l,)`` or ``(l, d)``; ``Xs_unlabeled``
        (same views) enter only the manifold terms."""
        Y, _ = self._targets(y)
        return self._fit_core(Xs, Y, Xs_unlabeled, "squared")

    def _targets(self, y):
        """``Y`` ``(l, d)`` (and no class codes); records ``y_1d_``."""
        require_targets(self, y)
        Y = check_targets(y)
        self.y_1d_ = Y.ndim == 1
        if Y.shape[0] == 0:
            raise ValueError("y is empty (0 samples); need targets for at least 1 sample")
        return Y.reshape(Y.shape[0], -1), None

    def predict(self, Xs, return_views=False):
        """``C f(x)`` (eq. 52); with ``return_views`` also the per-view outputs ``(n, m[, d])``."""
        V = self.per_view_output(Xs)
        out = self._predict_from_views(V)
        return (out, V[..., 0] if self.y_1d_ else V) if return_views else out

    def _predict_from_views(self, V):
        out = np.einsum("v,nvd->nd", self.c_, V)
        return out[:, 0] if self.y_1d_ else out


class MVLClassifier(ClassifierMixin, _MVLBase):
    """Multi-class multi-view classifier: MVL-LS (``loss="squared"``, ±1 one-vs-rest targets,
    §7.1), MVL-binSVM (``"hinge"``, one-vs-all, Corollary 8) or MVL-SVM (``"simplex_hinge"``,
    simplex coding, Theorems 6/7/13, Algorithm 2). Parameters as ``MVLRegressor`` plus ``loss``,
    ``qp_tol`` (KKT tolerance of the box QP) and ``qp_max_iter``.

    ``decision_function`` returns the class scores of the combined output ``C f(x)`` (for the
    simplex loss ``S^T C f(x)``, eq. 82); ``per_view_decision_function`` the same per view.
    Two classes give 1-D scores (positive means ``classes_[1]``).
    """

    def __init__(
        self,
        kernel="rbf",
        kernel_params=None,
        loss="squared",
        gamma_A=1e-5,
        gamma_B="auto",
        gamma_W="auto",
        c=None,
        optimize_c=False,
        graph="knn",
        n_neighbors=3,
        max_iter=20,
        tol=1e-4,
        solver="auto",
        cg_tol=1e-8,
        cg_max_iter=5000,
        qp_tol=1e-7,
        qp_max_iter=500,
        laplacian="unnormalized",
        laplacian_power=1,
    ):
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.loss = loss
        self.gamma_A = gamma_A
        self.gamma_B = gamma_B
        self.gamma_W = gamma_W
        self.c = c
        self.optimize_c = optimize_c
        self.graph = graph
        self.n_neighbors = n_neighbors
        self.laplacian = laplacian
        self.laplacian_power = laplacian_power
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.cg_tol = cg_tol
        self.cg_max_iter = cg_max_iter
        self.qp_tol = qp_tol
        self.qp_max_iter = qp_max_iter

    def fit(self, Xs, y, Xs_unlabeled=None):
        """Fit on labelled views ``Xs`` and labels ``y``; ``Xs_unlabeled`` enter only the
        manifold terms (semi-supervised)."""
        if self.loss not in ("squared", "hinge", "simplex_hinge"):
            raise ValueError(f"loss={self.loss!r}; use 'squared', 'hinge' or 'simplex_hinge'")
        check_positive("qp_tol", self.qp_tol)
        check_positive("qp_max_iter", self.qp_max_iter, integer=True)
        Y, codes = self._targets(y)
        return self._fit_core(Xs, Y, Xs_unlabeled, self.loss, codes=codes, n_classes=Y.shape[1])

    def _targets(self, y):
        """±1 one-vs-rest targets ``(l, n_classes)`` and the class codes; records ``classes_``."""
        require_targets(self, y)
        y = check_label_vector(y)
        if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or inf")
        self.classes_, codes = encode_labels(y)
        P = len(self.classes_)
        return np.where(codes[:, None] == np.arange(P)[None, :], 1.0, -1.0), codes

    def _scores(self, out):
        if self.loss == "simplex_hinge":
            out = out @ simplex_coding(len(self.classes_))  # <s_k, C f(x)>, eq. (82)
        if len(self.classes_) == 2:
            if self.loss == "hinge":
                return out[..., 0]
            return out[..., 1] - out[..., 0]
        return out

    def decision_function(self, Xs, return_views=False):
        """Class scores from ``C f(x)`` ``(n, P)`` (``(n,)`` for two classes); with
        ``return_views`` also the per-view scores ``(n, m, P)``."""
        V = self.per_view_output(Xs)
        out = self._decision_from_views(V)
        return (out, self._scores(V)) if return_views else out

    def _decision_from_views(self, V):
        return self._scores(np.einsum("v,nvd->nd", self.c_, V))

    def per_view_decision_function(self, Xs):
        """Per-view class scores ``(n, m, P)`` (``(n, m)`` for two classes)."""
        return self._scores(self.per_view_output(Xs))

    def predict(self, Xs):
        """Class labels for the views ``Xs``: the class of the largest combined score."""
        return self._predict_from_views(self.per_view_output(Xs))

    def _predict_from_views(self, V):
        return labels_from_scores(self.classes_, self._decision_from_views(V))


class _MVLPathSearch(SearchCVMixin):
    """Cross-validated ``(gamma_A, gamma_B, gamma_W, graph)`` of MVL-LS: per fold one kernel
    evaluation, one set of square roots ``P_v = (K^v)^{1/2}``, one test-vs-train kernel per view
    and, per ``(gamma_B, gamma_W, graph)``, one eigendecomposition for the whole ``gamma_A`` grid
    (:func:`mvl_ls_path`). With ``gamma_W = 0`` the graph does not enter the problem, so those
    candidates share one path and its scores.
    ``fit(Xs, y, Xs_unlabeled=None)``: the unlabelled views join the training data of every fold
    (as a fit parameter of ``GridSearchCV`` would)."""

    _grid = {"gamma_As": "gamma_A", "gamma_Bs": "gamma_B", "gamma_Ws": "gamma_W", "graphs": "graph"}
    _base_fixed = {"solver": "dense", "optimize_c": False}

    def _fold_scores(self, base, views, y, train, test, candidates, fit_params):
        Xtr, Xte = [V[train] for V in views], [V[test] for V in views]
        families = {}
        for i, cand in enumerate(candidates):
            manifold = {k: v for k, v in cand.items() if k != "gamma_A" and (k != "graph" or cand["gamma_W"])}
            families.setdefault(tuple(sorted(manifold.items())), []).append(i)
        scores, shared = np.empty(len(candidates)), {}
        metric = accuracy_score if is_classifier(base) else r2_score  # the estimators' ``score``
        for manifold, idx in families.items():
            est = clone(base).set_params(**dict(manifold))
            by_gamma_A = {}  # the graphs of a gamma_W = 0 family repeat each gamma_A
            for i in idx:
                by_gamma_A.setdefault(candidates[i]["gamma_A"], []).append(i)
            path = est._ls_path(Xtr, y[train], fit_params.get("Xs_unlabeled"), list(by_gamma_A), shared)
            for same, fitted in zip(by_gamma_A.values(), path):
                if "test_grams" not in shared:  # k^v(x_test, X_train), once per fold
                    tests = fitted._validate_predict(Xte)
                    shared["test_grams"] = [
                        _blocked_gram(k, X, T) for k, X, T in zip(fitted.kernels_, tests, fitted.X_fit_)
                    ]
                V = np.stack([K @ A for K, A in zip(shared["test_grams"], fitted.dual_coef_)], axis=1)
                scores[same] = metric(y[test], fitted._predict_from_views(V))
        return scores


_MVL_CV_DOC = """

    Parameters as ``{base}`` (``loss="squared"``, fixed ``c``, dense solver), plus
    ``gamma_As``, ``gamma_Bs``, ``gamma_Ws``, ``graphs``: the grid (``gamma_Bs`` holds 1e-6 alone
    unless given); ``cv``: folds as in ``GridSearchCV``
    (an int gives ``{folds}``). The same choice as ``GridSearchCV({base}(solver="dense"),
    {{"gamma_A": gamma_As, "gamma_B": gamma_Bs, "gamma_W": gamma_Ws, "graph": graphs}}, cv=cv)``
    (tested); the speed ratio on mfeat is printed by ``benchmarks/search_cv.py``.
    """


class MVLRegressorCV(RegressorMixin, MultiOutputMixin, _MVLPathSearch, MultiViewMixin, BaseEstimator):
    __doc__ = "MVL-LS regression with ``(gamma_A, gamma_W, graph)`` chosen by cross-validation." + (
        _MVL_CV_DOC.format(base="MVLRegressor", folds="KFold")
    )
    _base = MVLRegressor

    def __init__(
        self,
        kernel="rbf",
        kernel_params=None,
        gamma_As=(1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2),
        gamma_Bs=(1e-6,),
        gamma_Ws=(0.0, 1e-6, 1e-4),
        graphs=("kernel", "knn"),
        c=None,
        n_neighbors=10,
        laplacian="unnormalized",
        laplacian_power=1,
        cv=5,
    ):
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.gamma_As = gamma_As
        self.gamma_Bs = gamma_Bs
        self.gamma_Ws = gamma_Ws
        self.graphs = graphs
        self.c = c
        self.n_neighbors = n_neighbors
        self.laplacian = laplacian
        self.laplacian_power = laplacian_power
        self.cv = cv


class MVLClassifierCV(ClassifierMixin, _MVLPathSearch, MultiViewMixin, BaseEstimator):
    __doc__ = "MVL-LS classification with ``(gamma_A, gamma_W, graph)`` chosen by cross-validation." + (
        _MVL_CV_DOC.format(base="MVLClassifier", folds="StratifiedKFold")
    )
    _base = MVLClassifier
    _base_fixed = {**_MVLPathSearch._base_fixed, "loss": "squared"}

    __init__ = MVLRegressorCV.__init__
