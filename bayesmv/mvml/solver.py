"""Algorithm 1 on fixed features: the learned metric's lockstep fits in the base kernel's
eigenbasis, and the solver that shares its starting point across outputs and ``(λ, η)``."""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
import scipy.linalg as sla

from .steps import (
    _apply_M,
    _apply_Mt,
    _blockdiag_gram,
    _feature_gram,
    _mv_gram,
    _sqrt_factor,
    _symmetric,
    _trial,
    initial_metric,
    w_step,
)

__all__ = ["MVMLSolver"]


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


class MVMLSolver:
    """Algorithm 1 on fixed features ``U``: the starting metric and kernel (``M Ã0 M'``'s thin
    eigendecomposition for the learned metric, else ``U'U`` or ``M Ã M'``) are computed once and
    shared by every output and every ``(λ, η)`` the solver is asked for.

    The MVML estimators build one from their training features and settings (Huusari, Kadri &
    Capponi 2018).

    Parameters
    ----------
    U : ndarray of shape (V, n, q)
        The per-view feature blocks (``q = n`` on the full path, ``q = p`` on the Nyström
        path).
    metric : {"learn", "sparse", "cov", "identity"}
        The metric: learned (eq. 9/16), learned block-sparse (eq. 12/18), or fixed (MVML_Cov,
        MVML_I).
    full : bool
        True on the full path (``U_v = K_v``), False on the Nyström path.
    learn_weights : bool
        Whether to learn the view weights ``w`` (eq. 10/17); otherwise every view weighs
        ``1/V``.
    max_iter : int
        Maximum number of iterations of Algorithm 1 per fit.
    tol : float
        A fit stops once an iteration decreases the objective by at most ``tol`` times its
        value.
    max_backtrack : int, default=30
        Maximum number of halvings of the step size in one metric update; when none decreases
        the objective, the fit stops at a stationary point.

    Attributes
    ----------
    V : int
        Number of views.
    n : int
        Number of training samples.
    q : int
        Number of features of each view's block.
    N : int
        Size ``V q`` of the metric.
    form : {"dual", "primal"}
        ``"dual"`` when ``n <= N``, else ``"primal"``.
    A0 : ndarray of shape (N, N)
        The starting (or fixed) metric ``Ã``, view-major.
    w0 : ndarray of shape (V,)
        The starting view weights, ``1/V`` each.
    aux0 : object
        The starting kernel: ``M Ã0 M'``'s thin eigendecomposition for the learned metric,
        else ``U'U`` (primal form) or ``M Ã M'``.
    """

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
        """Algorithm 1 for every column of ``Y`` under every ``(λ, η, μ0)`` of ``penalties``.

        ``Y`` is ``n x C``; the results are in penalty-major order. The learned metric with fixed
        weights runs all of them in one lockstep batch.

        Parameters
        ----------
        Y : array-like of shape (n, C)
            The targets, one column per output.
        penalties : sequence of tuple of float
            The ``(λ, η, μ0)`` triples: the weight λ of ``<g, Ã⁺ g>``, the weight η of the
            metric's penalty and the initial step size ``μ0`` of the metric updates.

        Returns
        -------
        results : list of dict
            One result per penalty and output (``len(penalties) * C``, penalty-major), with
            the keys ``"A"`` (the fitted metric ``Ã``, or a callable that computes it; see
            :meth:`metric_matrix`), ``"g"`` (the coefficients, shape ``(N,)``), ``"w"`` (the
            view weights, shape ``(V,)``), ``"objective"`` (the objective at the start and
            after each iteration), ``"step_size"`` (the step size of each iteration) and
            ``"converged"`` (bool).
        """
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
        """The fitted ``Ã`` of one result of :meth:`fit` as a matrix.

        Parameters
        ----------
        result : dict
            One result of :meth:`fit`.

        Returns
        -------
        A : ndarray of shape (N, N)
            The metric ``Ã``, view-major.
        """
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
