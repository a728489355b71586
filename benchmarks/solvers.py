"""Hand-written solvers against maintained libraries, on this project's own problems (issue 30).

Four solvers, each run beside its maintained alternative on the problems bayesmv gives it:

* ``box_qp`` (MVL-SVM's dual: a box-constrained QP; Mehrotra interior point, then projected
  Newton) against clarabel, OSQP and DAQP through ``qpsolvers``: MVL-SVM (simplex coding) and
  MVL-binSVM on mfeat, every QP the fits solve recorded and re-solved by each solver;
* ``simplex_qp`` (MKC's per-row QPs over the simplex: FISTA with the exact sort-based
  projection, 25 warm-started iterations per outer step, jitted and vmapped) against the same
  ``qpsolvers`` back-ends, called per row through ``jax.pure_callback``: MKC (``embd_ht``) on the
  TOY data of the MKC paper and on mfeat kernels with missing rows;
* ``_gcg`` (MVL-LS by conjugate gradients in the ``G``-inner product, ``mvl_ls_cg``) against
  ``jax.scipy.sparse.linalg.cg`` on the equivalent symmetric positive definite system
  ``(G H G + λ G) a = G rhs`` with the same blocked kernel–vector products;
* ``sphere_lstsq`` (MVL-LS-optC's c-step: least squares on a sphere by the secular equation)
  against ``scipy.optimize.minimize`` (SLSQP, with ``‖c‖² = r²`` as an equality constraint),
  MVL-LS-optC on mfeat.

For each: wall time of the solver calls and the ratio library / hand-written, objective gap
(library − hand-written, relative to |hand-written|; > 0: the library's point is worse) and
constraint violation of each, and the downstream accuracy (or MKC's ARE) with each solver
plugged into the estimator. A library solver is "as good" when its time is within 1.2× and the
downstream figure equal.

    python benchmarks/solvers.py            # all parts (a few minutes on 2 cores)
    python benchmarks/solvers.py --quick    # small shapes, seconds
    python benchmarks/solvers.py --parts box simplex --cg-sizes 5000 50000

The CG part at n = 50,000 needs hours of kernel–vector products on a 2-core CPU; run it where
there is an accelerator (``--cg-sizes 50000``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import bayesmv  # noqa: F401  (float64)

try:
    import qpsolvers  # noqa: F401
except ImportError:
    sys.exit("benchmarks/solvers.py needs the bench extra: pip install '.[bench]'")

sys.path.insert(0, str(Path(__file__).resolve().parent))

QP_SOLVERS = ("clarabel", "osqp", "daqp")
# High-accuracy settings: OSQP's defaults (1e-3) would lose on accuracy by construction.
QP_OPTIONS = {
    "clarabel": {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10},
    "osqp": {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iter": 100000, "polish": True},
    "daqp": {"primal_tol": 1e-10},
}


def line(cells, widths):
    return "  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))


def print_table(title, header, rows):
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print(f"\n{title}")
    print(line(header, widths))
    for r in rows:
        print(line(r, widths))


def summary_line(name, hand, rows, solver_i, ratio_i, result_i):
    """The ``SUMMARY`` line of one part: the library whose worst time ratio over the problems is
    smallest, and whether every library row's downstream figure equals its hand-written row's."""
    worst, equal, reference = {}, True, None
    for r in rows:
        if r[solver_i] == hand:
            reference = r[result_i]
            continue
        try:
            ratio = float(r[ratio_i])
        except ValueError:  # a failed solver
            worst[r[solver_i]] = float("inf")
            continue
        worst[r[solver_i]] = max(worst.get(r[solver_i], 0.0), ratio)
        equal &= r[result_i] == reference
    best = min(worst, key=worst.get)
    verdict = "library as good" if worst[best] <= 1.2 and equal else "hand-written kept"
    print(
        f"SUMMARY solvers {name}: {verdict}; best library {best} at worst {worst[best]:.2f}x the time of {hand}; "
        f"downstream figures {'all equal' if equal else 'differ'}"
    )


def rel_gap(f_lib, f_hand):
    return (f_lib - f_hand) / max(abs(f_hand), 1e-300)


# ---------------------------------------------------------------- box QP (MVL-SVM on mfeat)


def library_box_qp(solver):
    """``bayesmv.mvl.svm.box_qp``'s interface, solved by ``qpsolvers`` with ``solver``."""
    import qpsolvers

    from bayesmv.mvl import svm

    def box_qp(H, q, lo, hi, x0=None, tol=1e-8, max_iter=500, warm_start="ipm", shifted_solver=None):
        n = q.shape[0]
        lo = np.broadcast_to(np.asarray(lo, dtype=float), (n,)).copy()
        hi = np.broadcast_to(np.asarray(hi, dtype=float), (n,)).copy()
        x = qpsolvers.solve_qp(H, -q, lb=lo, ub=hi, solver=solver, **QP_OPTIONS[solver])
        if x is None:
            raise RuntimeError(f"{solver} found no solution")
        g = H @ x - q
        return x, {
            "n_iter": 0,
            "kkt": svm._kkt_violation(H, q, lo, hi, np.clip(x, lo, hi), g),
            "objective": [0.0],
        }

    return box_qp


def box_violation(x, lo, hi):
    return float(max(np.max(lo - x, initial=0.0), np.max(x - hi, initial=0.0)))


def mfeat_task(n_train, n_test, views, seed):
    from bayesmv.datasets import load_mfeat, standardize_views

    Xs, digits = load_mfeat(list(views))
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(digits))[: n_train + n_test]
    Xs = standardize_views([X[idx] for X in Xs])
    y = digits[idx]
    return [X[:n_train] for X in Xs], y[:n_train], [X[n_train:] for X in Xs], y[n_train:]


def part_box(args):
    rows = [r for n_labeled in args.n_svm for r in box_rows(n_labeled)]
    summary_line("box QP", "box_qp", rows, 1, 5, 8)


def timed_box_qp(solve, log):
    """``box_qp``'s interface: ``solve`` called as the estimator calls it, each call's problem,
    solution and seconds appended to ``log``."""

    def box_qp(H, q, lo, hi, **kw):
        t0 = time.perf_counter()
        x, info = solve(H, q, lo, hi, **kw)
        log.append((H, q, lo, hi, x, time.perf_counter() - t0))
        return x, info

    return box_qp


def box_rows(n_labeled):
    """One MVL-SVM fit per loss and solver; every QP of the fit timed where the estimator calls it
    (the duals do not depend on the solver, so the fits solve the same QPs)."""
    from bayesmv import mvl
    from bayesmv.mvl import svm

    hand = svm.box_qp
    Xtr, ytr, Xte, yte = mfeat_task(n_labeled, 500, ("fou", "kar", "zer"), 0)
    gammas = [{"gamma": 1.0 / X.shape[1]} for X in Xtr]
    rows = []
    for loss in ("simplex_hinge", "hinge"):
        reference = None
        for solver in ("box_qp", *QP_SOLVERS):
            log = []
            svm.box_qp = timed_box_qp(hand if solver == "box_qp" else library_box_qp(solver), log)
            try:
                est = mvl.MVLClassifier(loss=loss, kernel_params=gammas, gamma_A=1e-4).fit(Xtr, ytr)
                acc = est.score(Xte, yte)
            except Exception as err:  # a solver that fails is reported, not hidden
                rows.append([loss, solver, "", "", "failed", "", "", "", type(err).__name__])
                continue
            finally:
                svm.box_qp = hand
            f = [0.5 * x @ H @ x - q @ x for H, q, _, _, x, _ in log]
            seconds = sum(entry[-1] for entry in log)
            viol = max(box_violation(x, lo, hi) for _, _, lo, hi, x, _ in log)
            if reference is None:
                reference = f, seconds
            gap = max(rel_gap(a, b) for a, b in zip(f, reference[0]))
            rows.append(
                [loss, solver, len(log), sum(entry[1].shape[0] for entry in log), f"{seconds:.3f}",
                 f"{seconds / reference[1]:.2f}", f"{gap:.1e}", f"{viol:.1e}", f"{acc:.4f}"]
            )  # fmt: skip
    print_table(
        f"box QP: MVL-SVM duals on mfeat (fou+kar+zer, {n_labeled} labelled, 500 test; time = the QP solves only)",
        ["loss", "solver", "QPs", "variables", "time s", "ratio", "max rel gap", "bound viol", "test acc"],
        rows,
    )
    return rows


# ---------------------------------------------------------------- simplex QP (MKC)


def library_solve_S(solver):
    """``bayesmv.mkc.solver._solve_S``'s interface: every row's simplex QP by ``qpsolvers`` on the host."""
    import jax
    import qpsolvers

    def solve_rows(G, B):
        G, B = np.asarray(G), np.asarray(B)
        M = B.shape[0]
        out = np.zeros_like(B)
        for i in range(M):
            free = np.arange(M) != i
            P = 2.0 * G[i][np.ix_(free, free)]
            P = 0.5 * (P + P.T)
            k = int(free.sum())
            x = qpsolvers.solve_qp(
                P, -2.0 * B[i, free], A=np.ones((1, k)), b=np.ones(1), lb=np.zeros(k), ub=np.ones(k),
                solver=solver, **QP_OPTIONS[solver],
            )  # fmt: skip
            if x is None:
                raise RuntimeError(f"{solver} found no solution")
            out[i, free] = x
        return out

    def _solve_S(G, B, S0, n_iter=25):
        return jax.pure_callback(solve_rows, jax.ShapeDtypeStruct(B.shape, B.dtype), G, B)

    return _solve_S


def recording_solve_S(hand, problems):
    """``_solve_S`` that records each call's ``(G, B, S0)`` (host callback) and solves as ``hand``."""
    import jax

    def record(G, B, S0):
        problems.append((np.asarray(G).copy(), np.asarray(B).copy(), np.asarray(S0).copy()))
        return np.zeros((), np.float64)

    def _solve_S(G, B, S0, n_iter=25):
        token = jax.pure_callback(record, jax.ShapeDtypeStruct((), B.dtype), G, B, S0)
        return hand(G, B, S0 + 0.0 * token, n_iter)

    return _solve_S


def simplex_objective(G, B, S):
    """``Σ_rows sᵀ G s − 2 bᵀ s`` of a row-wise simplex QP."""
    return float(np.einsum("mi,mij,mj->", S, G, S) - 2.0 * np.sum(B * S))


def simplex_violation(S):
    M = S.shape[0]
    off = ~np.eye(M, dtype=bool)
    return float(max(np.max(-S, initial=0.0), np.max(np.abs(S.sum(axis=1) - 1.0)), np.max(np.abs(S[~off]))))


def mkc_cases(quick):
    from mkc_toy import induce_missing, masked

    from bayesmv.datasets import drop_views, load_mfeat, make_mkc_toy

    rng = np.random.default_rng(0)
    Ks, _ = make_mkc_toy("TOYG1", n_samples=100, random_state=0)
    obs = induce_missing(100, 5, 0.3, 1, rng)
    cases = [("TOYG1, 30% of samples miss 1 view", Ks, masked(Ks, obs), obs)]
    if not quick:
        from bayesmv.kernels import rbf_kernel

        Xs, _ = load_mfeat(["fou", "kar", "zer", "mor"])
        idx = np.random.default_rng(1).permutation(len(Xs[0]))[:150]
        Xs = [(X[idx] - X[idx].mean(0)) / (X[idx].std(0) + 1e-12) for X in Xs]
        Kt = [np.asarray(rbf_kernel(X, X, gamma=1.0 / X.shape[1])) for X in Xs]
        dropped = drop_views(Xs, 0.3, random_state=2)
        observed = np.array([~np.isnan(X).all(axis=1) for X in dropped])
        cases.append(("mfeat fou+kar+zer+mor, 150 samples, 30% missing", Kt, masked(Kt, observed), observed))
    return cases


def part_simplex(args):
    import jax

    from bayesmv import mkc
    from bayesmv.metrics import multiview_are
    from bayesmv.mkc import solver as mkc_solver

    hand = mkc_solver._solve_S
    rows = []
    for name, Kt, Kin, obs in mkc_cases(args.quick):

        def fit():
            """The fit with the current ``_solve_S`` and its time, compilation excluded."""
            jax.clear_caches()  # the patched _solve_S is traced anew
            est = mkc.MKC(method="embd_ht", lambda1=1.0, lambda2=1e-3, max_iter=args.mkc_iter)
            est.fit(Kin)
            t0 = time.perf_counter()
            return est.fit(Kin), time.perf_counter() - t0

        problems = []
        mkc_solver._solve_S = recording_solve_S(hand, problems)
        try:
            est, _ = fit()
        finally:
            mkc_solver._solve_S = hand
        del problems[len(problems) // 2 :]  # fit() fits twice
        are_hand = multiview_are(Kt, est.completed_kernels_, obs)
        _, t_fit_hand = fit()
        hand_jit = jax.jit(hand)
        S_hand = [np.asarray(hand_jit(G, B, S0)) for G, B, S0 in problems[:1]]  # compile
        t0 = time.perf_counter()
        S_hand = [np.asarray(hand_jit(G, B, S0)) for G, B, S0 in problems]
        t_hand = time.perf_counter() - t0
        f_hand = [simplex_objective(G, B, S) for (G, B, _), S in zip(problems, S_hand)]
        v_hand = max(simplex_violation(S) for S in S_hand)
        n_rows = problems[0][1].shape[0]
        rows.append([name, "simplex_qp", len(problems) * n_rows, f"{t_hand:.3f}", "1.00", "0", f"{v_hand:.1e}",
                     f"{t_fit_hand:.1f}", f"{are_hand:.3f}"])  # fmt: skip
        for solver in QP_SOLVERS:
            lib = library_solve_S(solver)
            try:
                t0 = time.perf_counter()
                S_lib = [np.asarray(lib(G, B, S0)) for G, B, S0 in problems]
                t_lib = time.perf_counter() - t0
                gaps = [
                    rel_gap(simplex_objective(G, B, S), fh)
                    for (G, B, _), S, fh in zip(problems, S_lib, f_hand)
                ]
                v_lib = max(simplex_violation(S) for S in S_lib)
                mkc_solver._solve_S = lib
                est, t_fit = fit()
            except Exception as err:
                rows.append([name, solver, "", "failed", "", "", "", "", type(err).__name__])
                continue
            finally:
                mkc_solver._solve_S = hand
            are = multiview_are(Kt, est.completed_kernels_, obs)
            gap = f"{min(gaps):.1e}..{max(gaps):.1e}"
            rows.append([name, solver, len(problems) * n_rows, f"{t_lib:.3f}", f"{t_lib / t_hand:.1f}", gap,
                         f"{v_lib:.1e}", f"{t_fit:.1f}", f"{are:.3f}"])  # fmt: skip
        jax.clear_caches()
    print_table(
        f"simplex QP: MKC embd_ht row QPs ({args.mkc_iter} iterations; time = re-solving every recorded QP; "
        "gap < 0: the library's point is better)",
        ["problem", "solver", "row QPs", "time s", "ratio", "rel gap", "simplex viol", "MKC fit s", "ARE %"],
        rows,
    )
    summary_line("simplex QP", "simplex_qp", rows, 1, 4, 8)


# ---------------------------------------------------------------- CG (MVL-LS, matrix-free)


def library_mvl_ls_cg(kernels, Xs, Y, c, gamma_A, tol, max_iter, block_size=1024):
    """MVL-LS (γ_B = γ_W = 0) by ``jax.scipy.sparse.linalg.cg`` on ``(G H G + λ G) a = G rhs``,
    with ``mvl_ls_cg``'s kernel–vector products; returns ``(A, n_matvecs)``."""
    import jax
    import jax.numpy as jnp
    from jax.scipy.sparse.linalg import cg

    from bayesmv.mvl import least_squares

    m, N = len(Xs), Xs[0].shape[0]
    Y = np.asarray(Y, dtype=float).reshape(len(Y), -1)
    ell = Y.shape[0]
    cj = jnp.asarray(c, dtype=float)
    G = least_squares._ViewMatvec(kernels, Xs, block_size)
    Jmask = (jnp.arange(N) < ell).astype(float)[None, :, None]
    lam = ell * gamma_A

    def apply_H(F):
        Fb = F.reshape(m, N, -1)
        return (cj[:, None, None] * (Jmask * jnp.einsum("v,vid->id", cj, Fb)[None])).reshape(F.shape)

    @jax.jit
    def solve(rhs):
        def op(a):
            Ga = G(a)
            return G(apply_H(Ga)) + lam * Ga

        return cg(op, G(rhs), tol=tol, maxiter=max_iter)[0]

    rhs = jnp.asarray(least_squares._targets_c(Y, np.asarray(c), N))
    return np.asarray(solve(rhs)).reshape(m, N, -1)


def ls_residual(kernels, Xs, Y, c, gamma_A, A):
    """``‖(H G + λ I) a − rhs‖ / ‖rhs‖`` of MVL-LS's system (γ_B = γ_W = 0)."""
    import jax.numpy as jnp

    from bayesmv.mvl import least_squares

    m, N = len(Xs), Xs[0].shape[0]
    Y = np.asarray(Y, dtype=float).reshape(len(Y), -1)
    ell = Y.shape[0]
    G = least_squares._ViewMatvec(kernels, Xs, 1024)
    a = jnp.asarray(A.reshape(m * N, -1))
    F = np.asarray(G(a)).reshape(m, N, -1)
    cf = np.einsum("v,vid->id", c, F)
    HF = c[:, None, None] * ((np.arange(N) < ell)[None, :, None] * cf[None])
    rhs = least_squares._targets_c(Y, np.asarray(c), N)
    return float(
        np.linalg.norm(HF.reshape(m * N, -1) + ell * gamma_A * np.asarray(a) - rhs) / np.linalg.norm(rhs)
    )


def part_cg(args):
    import jax
    from kernel_memory import _data

    from bayesmv import mvl
    from bayesmv.kernels import get_kernel

    rows = []
    for n in args.cg_sizes:
        Xs, y = _data(n + 1000, seed=0)
        Xtr, Xte = [X[:n] for X in Xs], [X[n:] for X in Xs]
        ytr, yte = y[:n], y[n:]
        Yb = np.where(ytr == 1, 1.0, -1.0)
        kernels = tuple(get_kernel("rbf", gamma=1.0 / X.shape[1]) for X in Xtr)
        c = np.full(len(Xtr), 1.0 / len(Xtr))
        gamma_A = 1e-4

        def accuracy(A):
            F = sum(c[v] * np.asarray(kernels[v](Xte[v], Xtr[v])) @ A[v] for v in range(len(Xtr)))
            return float(np.mean((F[:, 0] > 0) == (yte == 1)))

        t_hand = None
        for solver, tol in (("_gcg", 1e-6), ("jax cg", 1e-6), ("jax cg", 1e-12)):
            jax.clear_caches()
            t0 = time.perf_counter()
            if solver == "_gcg":
                A, k, _ = mvl.mvl_ls_cg(kernels, Xtr, Yb, c, gamma_A, tol=tol, max_iter=args.cg_iter)
                info = f"{k} iterations"
            else:
                A = library_mvl_ls_cg(kernels, Xtr, Yb, c, gamma_A, tol=tol, max_iter=args.cg_iter)
                info = ""
            t = time.perf_counter() - t0
            t_hand = t if t_hand is None else t_hand
            res = ls_residual(kernels, Xtr, Yb, c, gamma_A, A)
            rows.append(
                [n, solver, tol, f"{t:.1f}", f"{t / t_hand:.2f}", f"{res:.1e}", f"{accuracy(A):.4f}", info]
            )
    print_table(
        f"CG: MVL-LS (2 views, RBF, γ_A = 1e-4, at most {args.cg_iter} iterations), kernel_memory.py's data, "
        "1000 test points; time includes compilation; residual of (H G + λ I) a = rhs (jax cg's tol is on the "
        "G-premultiplied system)",
        ["n", "solver", "tol", "time s", "ratio", "rel residual", "test acc", ""],
        rows,
    )
    summary_line("CG", "_gcg", rows, 1, 4, 6)


# ---------------------------------------------------------------- sphere least squares (MVL-LS-optC)


def scipy_sphere_lstsq(A, b, radius=1.0, rtol=1e-12):
    """``min ‖A x − b‖`` s.t. ``‖x‖ = radius`` by SLSQP from the scaled least-squares solution."""
    from scipy.optimize import minimize

    x0 = np.linalg.lstsq(A, b, rcond=None)[0]
    x0 = radius * x0 / max(np.linalg.norm(x0), 1e-300)
    AtA, Atb = A.T @ A, A.T @ b
    res = minimize(
        lambda x: (x @ AtA @ x - 2 * Atb @ x, 2 * (AtA @ x - Atb)),
        x0,
        jac=True,
        method="SLSQP",
        constraints=[{"type": "eq", "fun": lambda x: x @ x - radius**2, "jac": lambda x: 2 * x}],
        options={"ftol": 1e-14, "maxiter": 1000},
    )
    return res.x, np.nan


def part_sphere(args):
    from bayesmv import mvl
    from bayesmv.mvl import fitting

    hand = fitting.sphere_lstsq
    rows = []
    for views in (("fou", "kar", "zer"), ("fac", "pix", "mor", "fou", "kar", "zer")):
        Xtr, ytr, Xte, yte = mfeat_task(args.n_svm[0], 500, views, 1)
        gammas = [{"gamma": 1.0 / X.shape[1]} for X in Xtr]
        problems = []

        def recording(A, b, radius=1.0, rtol=1e-12):
            problems.append((A, b, radius))
            return hand(A, b, radius, rtol)

        fitting.sphere_lstsq = recording
        try:
            acc_hand = mvl.MVLClassifier(optimize_c=True, kernel_params=gammas).fit(Xtr, ytr).score(Xte, yte)
        finally:
            fitting.sphere_lstsq = hand
        t_hand = f_hand = None
        for name, solve in (("sphere_lstsq", hand), ("scipy SLSQP", scipy_sphere_lstsq)):
            t0 = time.perf_counter()
            xs = [solve(A, b, r)[0] for A, b, r in problems]
            t = time.perf_counter() - t0
            t_hand = t if t_hand is None else t_hand
            f = [np.sum((A @ x - b) ** 2) for (A, b, _), x in zip(problems, xs)]
            f_hand = f if f_hand is None else f_hand
            viol = max(abs(np.linalg.norm(x) - r) for (_, _, r), x in zip(problems, xs))
            if name == "sphere_lstsq":
                acc = acc_hand
            else:
                fitting.sphere_lstsq = solve
                try:
                    acc = (
                        mvl.MVLClassifier(optimize_c=True, kernel_params=gammas).fit(Xtr, ytr).score(Xte, yte)
                    )
                finally:
                    fitting.sphere_lstsq = hand
            gap = max(rel_gap(a, h) for a, h in zip(f, f_hand))
            rows.append(["+".join(views), name, len(problems), f"{t * 1e3:.1f}", f"{t / t_hand:.1f}", f"{gap:.1e}",
                         f"{viol:.1e}", f"{acc:.4f}"])  # fmt: skip
    print_table(
        f"sphere least squares: MVL-LS-optC c-steps on mfeat ({args.n_svm[0]} labelled, 500 test)",
        ["views", "solver", "problems", "time ms", "ratio", "max rel gap", "norm viol", "test acc"],
        rows,
    )
    summary_line("sphere least squares", "sphere_lstsq", rows, 1, 4, 7)


PARTS = {"box": part_box, "simplex": part_simplex, "cg": part_cg, "sphere": part_sphere}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small shapes (seconds)")
    ap.add_argument("--parts", nargs="+", choices=list(PARTS), default=list(PARTS))
    ap.add_argument(
        "--n-svm", type=int, nargs="+", default=[200, 500], help="labelled mfeat samples of the MVL fits"
    )
    ap.add_argument("--mkc-iter", type=int, default=200, help="MKC iterations")
    ap.add_argument("--cg-sizes", type=int, nargs="+", default=[5000])
    ap.add_argument("--cg-iter", type=int, default=2000)
    args = ap.parse_args(argv)
    if args.quick:
        args.n_svm, args.mkc_iter, args.cg_sizes, args.cg_iter = [60], 30, [500], 200
    for part in args.parts:
        PARTS[part](args)


if __name__ == "__main__":
    main()
