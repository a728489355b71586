"""MVL on mfeat (paper 001, §7 protocol adapted): 10 classes, six views, few labels.

Rows: each single view's kernel ridge (one-vs-rest ±1 targets), the average-kernel ridge, and the
MVL methods (MVL-LS, MVL-LS-optC, MVL-binSVM, MVL-SVM), supervised and semi-supervised
(5 unlabelled samples per class entering only the manifold terms). ``MVL-LS defaults`` rows:
``MVLClassifier()`` untuned (its own choice of ``gamma_B``, ``gamma_W``: leave-one-out, or the
normalised cut with one label per class), without and with the unlabelled samples, with their
paired difference. Columns: 1, 5, 10, 20
labelled samples per class; accuracy on a fixed held-out test set (1000 samples), mean ± sd
over random draws of the labelled set (fixed seeds). Gaussian kernels on standardised views,
median-heuristic bandwidths, shared by every method.

With uniform ``c`` and ``gamma_B = gamma_W = 0`` MVL-LS *is* the average-kernel ridge with
``lam = m gamma_A`` (``||sum_v c_v f^v||`` over the sum RKHS), so any gap between the two rows
comes from the manifold terms alone; the table therefore also prints the paired difference
MVL-LS − average kernel (same draws) with its standard error.

Hyper-parameters are chosen per label count on validation draws of the pool (never the test
set): ``--val-draws`` draws of labelled/unlabelled points with seeds disjoint from the test
draws, each scored on the rest of the pool, accuracy averaged over the draws. Every ridge
baseline searches ``lam`` on the same log grid (half-decades, 1e-5 .. 10) that MVL-LS searches
through ``lam = m gamma_A``, so neither side gets a finer or wider ridge grid (at 1 label per
class the selected ``lam`` is 0.3 - 1, outside the grids used before). MVL-LS additionally searches
the within-view graph (per view, symmetric k-NN of the kernel: k = 3 with the unnormalised
``D - W`` or the normalised Laplacian, k = 10 normalised), ``gamma_W`` (1e-4 .. 1 and 0) and ``gamma_B`` (0, 1e-5;
larger values lowered validation accuracy at every label count); the whole ``gamma_A`` path
of each setting comes from one ``eigh`` (``mvl_ls_path``). The kernel-weighted graph of §7.1
is not searched: with median-bandwidth Gaussians its weights are nearly uniform and it did not
change validation accuracy. MVL-LS-optC, MVL-binSVM and MVL-SVM reuse the LS graph and
``gamma_B`` and search their own ``(gamma_A, gamma_W)``: ``gamma_W`` in (0, 1e-3, 1e-2, 1e-1),
``gamma_A`` in 1e-5 .. 1e-2 (SVMs) or 0.1, 1, 10 × the LS ``gamma_A`` (optC). Reusing the LS
``gamma_W`` left the semi-supervised SVMs far below the supervised ones at 1 label per class.

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/mvl_mfeat.py [--quick] [--draws 10] [--val-draws 5]``
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import scipy.linalg as sla

import bayesmv  # noqa: F401
from bayesmv.datasets import MultiViewStandardScaler, load_mfeat, train_test_split_views
from bayesmv.kernels import gamma_from_bandwidth, median_heuristic, rbf_kernel
from bayesmv.mvl import MVLClassifier, mvl_ls_path, view_laplacians

VIEWS = ("fou", "fac", "kar", "pix", "zer", "mor")


def _grams(Xp, Xt):
    sc = MultiViewStandardScaler().fit(Xp)
    Xp, Xt = sc.transform(Xp), sc.transform(Xt)
    gam = [gamma_from_bandwidth(median_heuristic(X)) for X in Xp]
    Kp = [np.asarray(rbf_kernel(X, gamma=g)) for X, g in zip(Xp, gam)]
    Kt = [np.asarray(rbf_kernel(A, B, gamma=g)) for A, B, g in zip(Xt, Xp, gam)]
    return Kp, Kt


def _draw(yp, n_lab, seed, n_unl=5):
    rng = np.random.default_rng(seed)
    lab, unl = [], []
    for k in np.unique(yp):
        idx = rng.permutation(np.flatnonzero(yp == k))
        lab += list(idx[:n_lab])
        unl += list(idx[n_lab : n_lab + n_unl])
    return np.array(lab), np.array(unl)


def _validation_draws(yp, n_lab, n_draws):
    """``(labelled, unlabelled, validation)`` pool indices: draws with seeds ``1000 + 100 n_lab + j``
    (disjoint from the test draws' seeds), validated on the rest of the pool."""
    out = []
    for j in range(n_draws):
        lab, unl = _draw(yp, n_lab, 1000 + 100 * n_lab + j)
        out.append((lab, unl, np.setdiff1d(np.arange(len(yp)), np.concatenate([lab, unl]))))
    return out


def _select(grid, score, draws):
    """Grid point with the best accuracy ``score(g, lab, unl, val)`` averaged over the draws."""
    return max(grid, key=lambda g: np.mean([score(g, *d) for d in draws]))


def _krr_acc(K, Kte, ytr, yte, lam):
    Y = np.where(ytr[:, None] == np.arange(10)[None], 1.0, -1.0)
    a = sla.cho_solve(sla.cho_factor(K + lam * len(ytr) * np.eye(len(ytr)), lower=True), Y)
    return float(np.mean(np.argmax(Kte @ a, axis=1) == yte))


def _krr_score(K, yp):
    """Validation score of kernel ridge on the pool Gram ``K``: ``(lam, lab, unl, val) -> acc``."""
    return lambda lam, lab, unl, val: _krr_acc(
        K[np.ix_(lab, lab)], K[np.ix_(val, lab)], yp[lab], yp[val], lam
    )


OPTC = dict(optimize_c=True, max_iter=10, tol=1e-4)
GRAPHS = {
    "knn3": dict(n_neighbors=3, laplacian="unnormalized"),
    "knn3-norm": dict(n_neighbors=3, laplacian="normalized"),
    "knn10-norm": dict(n_neighbors=10, laplacian="normalized"),
}


def _mvl(Kp, Kt, lab, unl, yp, yte, semi, graph="knn3", **params):
    tr = np.concatenate([lab, unl]) if semi else lab
    Ktr = [K[np.ix_(tr, tr)] for K in Kp]
    t0 = time.perf_counter()
    clf = MVLClassifier(kernel="precomputed", graph="knn", **GRAPHS[graph], **params).fit(Ktr, yp[lab])
    fit_s = time.perf_counter() - t0
    acc = float(np.mean(clf.predict([K[:, tr] for K in Kt]) == yte))
    return acc, fit_s


def _mvl_defaults(Kp, Kt, lab, unl, yp, yte, semi):
    """Test accuracy of ``MVLClassifier`` at its defaults (``gamma_A = 1e-5``, ``"auto"``
    ``gamma_B`` and ``gamma_W``, k-NN graph with k = 3): no validation draws."""
    tr = np.concatenate([lab, unl]) if semi else lab
    clf = MVLClassifier(kernel="precomputed").fit([K[np.ix_(tr, tr)] for K in Kp], yp[lab])
    return float(np.mean(clf.predict([K[:, tr] for K in Kt]) == yte))


def _mvl_score(Kp, yp, semi, params):
    """Validation score of an MVL fit on the pool: ``(g, lab, unl, val) -> acc``; ``params(g)``
    maps the grid point to estimator keywords."""
    return lambda g, lab, unl, val: _mvl(Kp, [K[val] for K in Kp], lab, unl, yp, yp[val], semi, **params(g))[
        0
    ]


def _ls_path_scores(Kp, yp, semi, lams, gB_grid, gW_grid, draws):
    """Validation accuracy of MVL-LS (uniform c) for every (graph, gamma_B, gamma_W, lam) with
    ``gamma_A = lam / m``, averaged over the draws; one ``mvl_ls_path`` (one eigh) per setting.
    The estimator is the same model (tests: path == Theorem 10 solve == estimator)."""
    m = len(Kp)
    scores = {}
    for lab, unl, val in draws:
        tr = np.concatenate([lab, unl]) if semi else lab
        Ks = [K[np.ix_(tr, tr)] for K in Kp]
        Kv = [K[np.ix_(val, tr)] for K in Kp]
        Y = np.where(yp[lab][:, None] == np.arange(10)[None], 1.0, -1.0)
        c = np.full(m, 1.0 / m)
        laps = {g: view_laplacians(Ks, "knn", **opt) for g, opt in GRAPHS.items()}  # once per draw
        settings = [("knn3", 0.0, 0.0)] + [
            (g, gB, gW) for g in GRAPHS for gB in gB_grid for gW in gW_grid if gW
        ]
        for g, gB, gW in settings:
            for lam, A in zip(
                lams, mvl_ls_path(Ks, Y, c, np.asarray(lams) / m, gB, gW, laps[g] if gW else None)
            ):
                out = sum(c[v] * Kv[v] @ A[v] for v in range(m))
                key = (g, float(lam / m), gB, gW)
                scores[key] = scores.get(key, 0.0) + float(np.mean(np.argmax(out, 1) == yp[val])) / len(draws)
    return scores


def _diff_se(a, b):
    """Paired difference ``a - b`` over the same draws: ``(mean, standard error)``."""
    d = np.subtract(a, b)
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else 0.0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="seconds-long smoke run")
    ap.add_argument("--draws", type=int, default=10, help="random draws of the labelled set per label count")
    ap.add_argument(
        "--val-draws", type=int, default=5, help="pool draws scored in the hyper-parameter search"
    )
    args = ap.parse_args(argv)
    quick = args.quick

    Xs, y = load_mfeat()
    Xp, Xt, yp, yt = train_test_split_views(Xs, y, test_size=0.5, random_state=0)  # pool 1000 / test 1000
    if quick:
        Xt, yt = [X[:300] for X in Xt], yt[:300]
    Kp, Kt = _grams(Xp, Xt)
    Kp_avg, Kt_avg = sum(Kp) / len(Kp), sum(Kt) / len(Kt)
    labels = (1, 5) if quick else (1, 5, 10, 20)
    seeds = range(1 if quick else args.draws)
    n_val = 1 if quick else args.val_draws
    # one ridge grid for everything: KRR lam and MVL-LS lam = m gamma_A (half-decades)
    lam_grid = tuple(float(x) for x in np.logspace(-5, 1, 13)) if not quick else (1e-3, 1e-1)
    gB_grid = (0.0, 1e-5)
    gW_grid = (0.0, 1e-4, 1e-3, 1e-2, 1e-1, 1.0) if not quick else (0.0, 1e-2)
    svm_gA = (1e-4,) if quick else (1e-5, 1e-4, 1e-3, 1e-2)
    own_gW = (0.0, 1e-2) if quick else (0.0, 1e-3, 1e-2, 1e-1)

    t_start = time.perf_counter()
    rows = {}
    fit_times = {}
    chosen = {}

    def add(name, nl, acc):
        rows.setdefault(name, {}).setdefault(nl, []).append(acc)

    for nl in labels:
        # ---- hyper-parameters from validation draws of the pool, never the test set
        vdraws = _validation_draws(yp, nl, n_val)
        pick = {
            "view": [_select(lam_grid, _krr_score(K, yp), vdraws) for K in Kp],
            "avg": _select(lam_grid, _krr_score(Kp_avg, yp), vdraws),
        }
        for semi in (False, True):
            sc = _ls_path_scores(Kp, yp, semi, lam_grid, gB_grid, gW_grid, vdraws)
            ls = max(sc, key=sc.get)  # (graph, gamma_A, gamma_B, gamma_W)
            pick[("ls", semi)] = ls
            pick[("ls-val", semi)] = (sc[ls], sc[("knn3", ls[1], 0.0, 0.0)])
            # every other MVL row searches its own (gamma_A, gamma_W) on the LS graph with the LS
            # gamma_B: the hinge losses and the optimised combination want other strengths than LS
            for key, grid_A, kw in (
                ("optc", tuple(ls[1] * f for f in (0.1, 1.0, 10.0)), OPTC),
                ("bin", svm_gA, dict(loss="hinge")),
                ("svm", svm_gA, dict(loss="simplex_hinge")),
            ):
                grid = [(gA, gW) for gA in grid_A for gW in own_gW]
                pick[(key, semi)] = _select(
                    grid,
                    _mvl_score(
                        Kp,
                        yp,
                        semi,
                        lambda g, kw=kw: dict(graph=ls[0], gamma_A=g[0], gamma_B=ls[2], gamma_W=g[1], **kw),
                    ),
                    vdraws,
                )
            print(
                f"  [{nl}/class {'semi' if semi else 'sup'}] selected {pick[('ls', semi)]}, "
                f"optC {pick[('optc', semi)]}, bin {pick[('bin', semi)]}, svm {pick[('svm', semi)]} "
                f"({time.perf_counter() - t_start:.0f}s)",
                flush=True,
            )
        chosen[nl] = pick
        # ---- evaluation on the fixed test set
        for seed in seeds:
            lab, unl = _draw(yp, nl, seed)
            for v, (K, Kte) in enumerate(zip(Kp, Kt)):
                add(
                    f"KRR view {VIEWS[v]}",
                    nl,
                    _krr_acc(K[np.ix_(lab, lab)], Kte[:, lab], yp[lab], yt, pick["view"][v]),
                )
            add(
                "KRR average kernel",
                nl,
                _krr_acc(Kp_avg[np.ix_(lab, lab)], Kt_avg[:, lab], yp[lab], yt, pick["avg"]),
            )
            for semi in (False, True):
                tag = " +unl" if semi else ""
                add("MVL-LS defaults" + tag, nl, _mvl_defaults(Kp, Kt, lab, unl, yp, yt, semi))
                graph, gA, gB, gW = pick[("ls", semi)]
                for name, key, kw in (
                    ("MVL-LS", "ls", dict(gamma_A=gA, gamma_W=gW)),
                    ("MVL-LS-optC", "optc", OPTC),
                    ("MVL-binSVM", "bin", dict(loss="hinge")),
                    ("MVL-SVM", "svm", dict(loss="simplex_hinge")),
                ):
                    if key != "ls":
                        kw = dict(kw, gamma_A=pick[(key, semi)][0], gamma_W=pick[(key, semi)][1])
                    acc, fs = _mvl(Kp, Kt, lab, unl, yp, yt, semi, graph=graph, gamma_B=gB, **kw)
                    add(name + tag, nl, acc)
                    fit_times.setdefault((name + tag, nl), []).append(fs)

    # ---- table
    hdr = f"{'method':<26}" + "".join(f"{f'{nl}/class':>16}" for nl in labels)
    print(
        f"mfeat, test n={len(yt)}, draws={len(seeds)}, validation draws={n_val}, "
        f"threads={os.environ.get('OPENBLAS_NUM_THREADS', 'default')}"
    )
    print(hdr)
    print("-" * len(hdr))
    for name, d in rows.items():
        print(f"{name:<26}" + "".join(f"{np.mean(d[nl]):>10.3f}±{np.std(d[nl]):.3f}" for nl in labels))
    best_view = {nl: max(VIEWS, key=lambda v: np.mean(rows[f"KRR view {v}"][nl])) for nl in labels}
    print("-" * len(hdr) + "\npaired differences over the same draws (mean ± standard error):")
    wins = {}
    for name in ("MVL-LS", "MVL-LS +unl"):
        for ref, col in (
            ("best view", lambda nl: rows[f"KRR view {best_view[nl]}"][nl]),
            ("avg kernel", lambda nl: rows["KRR average kernel"][nl]),
        ):
            diffs = {nl: _diff_se(rows[name][nl], col(nl)) for nl in labels}
            print(f"{name + ' - ' + ref:<26}" + "".join(f"{m:>+10.4f}±{se:.4f}" for m, se in diffs.values()))
            # a win is a paired gain of more than two standard errors (a tie like +0.0001 ± 0.00005,
            # i.e. one test point in 10 draws, is not one)
            wins[name] = wins.get(name, set(labels)) & {nl for nl, (m, se) in diffs.items() if m > 2.0 * se}
    diffs = {nl: _diff_se(rows["MVL-LS defaults +unl"][nl], rows["MVL-LS defaults"][nl]) for nl in labels}
    print(f"{'defaults +unl - sup':<26}" + "".join(f"{m:>+10.4f}±{se:.4f}" for m, se in diffs.values()))
    n1 = labels[0]
    semi_wins = []
    for name in ("MVL-LS", "MVL-LS-optC", "MVL-binSVM", "MVL-SVM"):
        m, se = _diff_se(rows[name + " +unl"][n1], rows[name][n1])
        print(f"{name + ' +unl - sup':<26}{m:>+10.4f}±{se:.4f}  (at {n1}/class)")
        semi_wins += [name] if m > 2.0 * se else []
    nmax = labels[-1]
    print(f"\nmax fit time (s) at {nmax}/class over the draws (precomputed Grams, incl. graph, solve, QP):")
    for (name, nl), ts in fit_times.items():
        if nl == nmax:
            print(f"  {name:<24} {max(ts):6.2f}")
    print("\nselected hyper-parameters (validation draws of the pool):")
    for nl, p in chosen.items():
        print(
            f"  {nl}/class: KRR views lam={p['view']}, avg lam={p['avg']}, "
            f"LS (graph,gA,gB,gW) sup={p[('ls', False)]} semi={p[('ls', True)]} "
            f"(val acc {p[('ls-val', False)][0]:.4f} vs {p[('ls-val', False)][1]:.4f} / "
            f"{p[('ls-val', True)][0]:.4f} vs {p[('ls-val', True)][1]:.4f} without manifold terms), "
            f"(gA, gW) sup/semi: optC {p[('optc', False)]}/{p[('optc', True)]}, "
            f"binSVM {p[('bin', False)]}/{p[('bin', True)]}, SVM {p[('svm', False)]}/{p[('svm', True)]}"
        )
    ls = {nl: np.mean(rows["MVL-LS +unl"][nl]) for nl in labels}
    tmax = max(max(ts) for (n, nl), ts in fit_times.items() if nl == nmax)
    print(
        f"SUMMARY mvl_mfeat: MVL-LS(+unl) acc {' / '.join(f'{ls[nl]:.3f}' for nl in labels)} at "
        f"{'/'.join(map(str, labels))} labels/class; above best view & avg kernel by > 2 SE at "
        + ", ".join(f"{len(w)}/{len(labels)} ({name})" for name, w in wins.items())
        + f"; semi-supervised above supervised by > 2 SE at {n1}/class for {len(semi_wins)}/4 methods"
        + f"; max fit {tmax:.1f}s at {nmax}/class; at the defaults +unl - sup "
        + " / ".join(f"{m:+.4f}" for m, _ in diffs.values())
    )


if __name__ == "__main__":
    main()
