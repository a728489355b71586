"""MVL-SVM and MVL-binSVM (Theorems 6/7, 11-13, Corollary 8): simplex coding, the dual Gram
and the box-constrained QP solved by projected Newton after a Mehrotra interior-point start."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from .least_squares import _block_apply, _pblock, _push_through_solve

__all__ = ["box_qp", "mvl_svm_dual_gram", "mvl_svm_solve", "simplex_coding"]


def simplex_coding(n_classes):
    """Simplex code matrix ``S`` (Minh, Bazzani & Murino 2016, §3.3).

    Unit columns, ``<s_j, s_k> = -1/(P-1)``, columns summing to zero. ``P = 2`` gives
    ``S = [1, -1]``.

    Parameters
    ----------
    n_classes : int
        The number of classes ``P``, at least 2.

    Returns
    -------
    S : ndarray of shape (P - 1, P)
        The simplex code of each class, one per column.

    Raises
    ------
    ValueError
        If ``n_classes < 2``.
    """
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
    terminates with the exact optimum once the active set is identified. By default it starts
    from a Mehrotra interior-point solution (one Cholesky factorisation per interior-point
    iteration), which identifies the active set of large SVM duals quickly.

    Parameters
    ----------
    H : array-like of shape (n, n)
        The symmetric positive semi-definite Hessian; must be finite.
    q : array-like of shape (n,)
        The linear term; must be finite.
    lo : float or array-like of shape (n,)
        The lower bounds.
    hi : float or array-like of shape (n,)
        The upper bounds.
    x0 : array-like of shape (n,) or None, default=None
        The starting point (clipped to the box); None: the interior-point solution with
        ``warm_start="ipm"`` (when every ``hi > lo``), else zero.
    tol : float, default=1e-8
        The largest projected-gradient entry (KKT violation) at which the method stops.
    max_iter : int, default=500
        The maximum number of projected Newton iterations.
    warm_start : {"ipm", None}, default="ipm"
        ``"ipm"``: start from the Mehrotra interior-point solution when ``x0`` is None; any
        other value: start from zero.
    shifted_solver : callable or None, default=None
        ``shifted_solver(dvec)`` returns a solver ``r -> (H + diag(dvec))^{-1} r``, a
        structured one for the interior-point start; None: a dense Cholesky.

    Returns
    -------
    x : ndarray of shape (n,)
        The minimiser.
    info : dict
        ``{"n_iter", "kkt", "objective"}``: the iterations run, the KKT violation (largest
        projected-gradient entry) and the objective per iteration.

    Raises
    ------
    ValueError
        If a lower bound exceeds its upper bound, or ``H`` or ``q`` is not finite.
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
    """The MVL-SVM dual Gram ``Q_x = (J ⊗ c)^T T (J ⊗ c)``.

    ``T = P (P M P + gamma_A I)^{-1} P`` (``= G (M G + gamma_A I)^{-1}``, Minh, Bazzani &
    Murino 2016, eq. 25/78).

    Parameters
    ----------
    Ps : sequence of ndarray of shape (N, N)
        The ``psd_sqrt(K^v)`` of each view over the ``N`` training points (labelled first).
    c : array-like of shape (m,)
        The combination weights.
    n_labeled : int
        The number of labelled points ``l``.
    M : ndarray of shape (mN, mN)
        The view-major manifold matrix ``gamma_B M_B + gamma_W M_W``.
    gamma_A : float
        The weight of the RKHS norm.

    Returns
    -------
    Q_x : ndarray of shape (l, l)
        The symmetric dual Gram.
    """
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
    """Fit MVL-SVM or MVL-binSVM by their box-constrained duals.

    MVL-SVM with simplex coding (Minh, Bazzani & Murino 2016, Theorems 6/7/13) or MVL-binSVM
    (one-vs-all, Corollary 8); each dual is solved by :func:`box_qp`.

    Parameters
    ----------
    Ps : sequence of ndarray of shape (N, N)
        The ``psd_sqrt(K^v)`` of each view over the ``N`` training points (labelled first).
    codes : array-like of shape (l,)
        The integer labels of the ``l`` labelled points.
    n_classes : int
        The number of classes ``P``.
    c : array-like of shape (m,)
        The combination weights.
    gamma_A : float
        The weight of the RKHS norm.
    M : ndarray of shape (mN, mN) or None, default=None
        The view-major manifold matrix (``_manifold_matrix``); None: zero.
    loss : {"simplex_hinge", "hinge"}, default="simplex_hinge"
        Simplex coding (MVL-SVM) or one-vs-all (MVL-binSVM).
    tol : float, default=1e-8
        The KKT tolerance of :func:`box_qp`.
    max_iter : int, default=500
        The iteration cap of :func:`box_qp`.

    Returns
    -------
    A : ndarray of shape (m, N, d)
        The coefficients: ``d = P - 1`` for simplex, ``P`` columns of one-vs-all scores for
        hinge, one column for two-class hinge.
    alphas : ndarray
        The dual variables: ``(l, P)`` for simplex, ``(l, d)`` for hinge.
    infos : list of dict
        The :func:`box_qp` info of each QP solved.

    Raises
    ------
    ValueError
        If ``loss`` is not ``"hinge"`` or ``"simplex_hinge"``.
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
