"""MVL on mfeat (paper 001, §7 protocol adapted): 10 classes, six views, few labels.

Rows: each single view's kernel ridge (one-vs-rest ±1 targets), the average-kernel ridge, and the
MVL methods (MVL-LS, MVL-LS-optC, MVL-binSVM, MVL-SVM), supervised and semi-supervised
(5 unlabelled samples per class entering only the manifold terms). Columns: 1, 5, 10, 20
labelled samples per class; accuracy on a fixed held-out test set (1000 samples), mean ± sd
over random draws of the labelled set (fixed seeds). Gaussian kernels on standardised views,
median-heuristic bandwidths. Hyper-parameters are chosen per label count on a validation split
of the pool (never the test set) from small grids; the within-view graph is the symmetric 3-NN
graph of each view's kernel (``graph="knn"``).

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/mvl_mfeat.py [--quick]``
"""

from __future__ import annotations

import argparse
import itertools
import os
import time

import numpy as np

import bayesmv  # noqa: F401
from bayesmv.datasets import MultiViewStandardScaler, load_mfeat, train_test_split_views
from bayesmv.kernels import gamma_from_bandwidth, median_heuristic, rbf_kernel
from bayesmv.mvl import MVLClassifier

VIEWS = ("fou", "fac", "kar", "pix", "zer", "mor")


def _grams(Xp, Xt):
    sc = MultiViewStandardScaler().fit(Xp)
    Xp, Xt = sc.transform(Xp), sc.transform(Xt)
    gam = [gamma_from_bandwidth(median_heuristic(X)) for X in Xp]
    Kp = [np.asarray(rbf_kernel(X, gamma=g)) for X, g in zip(Xp, gam)]
    Kt = [np.asarray(rbf_kernel(A, B, gamma=g)) for A, B, g in zip(Xt, Xp, gam)]
    return Kp, Kt, Xp, Xt, gam


def _draw(yp, n_lab, seed, n_unl=5):
    rng = np.random.default_rng(seed)
    lab, unl = [], []
    for k in np.unique(yp):
        idx = rng.permutation(np.flatnonzero(yp == k))
        lab += list(idx[:n_lab])
        unl += list(idx[n_lab:n_lab + n_unl])
    return np.array(lab), np.array(unl)


def _krr_acc(K, Kte, ytr, yte, lam):
    Y = np.where(ytr[:, None] == np.arange(10)[None], 1.0, -1.0)
    a = np.linalg.solve(K + lam * len(ytr) * np.eye(len(ytr)), Y)
    return float(np.mean(np.argmax(Kte @ a, axis=1) == yte))


def _mvl(Kp, Kt, lab, unl, yp, yte, semi, **params):
    tr = np.concatenate([lab, unl]) if semi else lab
    Ktr = [K[np.ix_(tr, tr)] for K in Kp]
    t0 = time.perf_counter()
    clf = MVLClassifier(kernel="precomputed", graph="knn", n_neighbors=3, **params).fit(Ktr, yp[lab])
    fit_s = time.perf_counter() - t0
    acc = float(np.mean(clf.predict([K[:, tr] for K in Kt]) == yte))
    return acc, fit_s


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="seconds-long smoke run")
    args = ap.parse_args(argv)
    quick = args.quick

    Xs, y = load_mfeat()
    Xp, Xt, yp, yt = train_test_split_views(Xs, y, test_size=0.5, seed=0)  # pool 1000 / test 1000
    if quick:
        Xt, yt = [X[:300] for X in Xt], yt[:300]
    Kp, Kt, _, _, _ = _grams(Xp, Xt)
    labels = (1, 5) if quick else (1, 5, 10, 20)
    seeds = (0,) if quick else (0, 1, 2, 3, 4)
    lam_grid = (1e-3,) if quick else (1e-4, 1e-3, 1e-2)
    ls_grid = [(1e-4, 1e-5, 1e-3)] if quick else list(itertools.product((1e-5, 1e-4, 1e-3), (0.0, 1e-5, 1e-4),
                                                                         (0.0, 1e-4, 1e-3, 1e-2)))
    svm_gA = (1e-4,) if quick else (1e-4, 1e-3)

    rows = {}
    fit_times = {}
    chosen = {}

    def add(name, nl, acc):
        rows.setdefault(name, {}).setdefault(nl, []).append(acc)

    for nl in labels:
        # ---- validation split of the pool (seed 1000 + nl), never the test set
        vlab, vunl = _draw(yp, nl, 1000 + nl)
        val = np.setdiff1d(np.arange(len(yp)), np.concatenate([vlab, vunl]))
        Kv = [K[val] for K in Kp]
        pick = {}
        pick["view"] = [max(lam_grid, key=lambda lm: _krr_acc(K[np.ix_(vlab, vlab)], K[np.ix_(val, vlab)],
                                                              yp[vlab], yp[val], lm)) for K in Kp]
        Kavg = sum(Kp) / len(Kp)
        pick["avg"] = max(lam_grid, key=lambda lm: _krr_acc(Kavg[np.ix_(vlab, vlab)], Kavg[np.ix_(val, vlab)],
                                                            yp[vlab], yp[val], lm))
        for semi in (False, True):
            best = max(ls_grid, key=lambda g: _mvl(Kp, Kv, vlab, vunl, yp, yp[val], semi, gamma_A=g[0],
                                                   gamma_B=g[1], gamma_W=g[2])[0])
            pick[("ls", semi)] = best
            pick[("svm", semi)] = max(svm_gA, key=lambda gA: _mvl(Kp, Kv, vlab, vunl, yp, yp[val], semi,
                                                                  loss="simplex_hinge", gamma_A=gA,
                                                                  gamma_B=best[1], gamma_W=best[2])[0])
            pick[("bin", semi)] = max(svm_gA, key=lambda gA: _mvl(Kp, Kv, vlab, vunl, yp, yp[val], semi,
                                                                  loss="hinge", gamma_A=gA,
                                                                  gamma_B=best[1], gamma_W=best[2])[0])
        chosen[nl] = pick
        # ---- evaluation on the fixed test set
        for seed in seeds:
            lab, unl = _draw(yp, nl, seed)
            for v, (K, Kte) in enumerate(zip(Kp, Kt)):
                add(f"KRR view {VIEWS[v]}", nl, _krr_acc(K[np.ix_(lab, lab)], Kte[:, lab], yp[lab], yt,
                                                         pick["view"][v]))
            add("KRR average kernel", nl, _krr_acc(Kavg[np.ix_(lab, lab)], (sum(Kt) / len(Kt))[:, lab],
                                                   yp[lab], yt, pick["avg"]))
            for semi in (False, True):
                tag = " +unl" if semi else ""
                gA, gB, gW = pick[("ls", semi)]
                for name, kw in (("MVL-LS", dict(gamma_A=gA)),
                                 ("MVL-LS-optC", dict(gamma_A=gA, optimize_c=True, max_iter=10, tol=1e-4)),
                                 ("MVL-binSVM", dict(loss="hinge", gamma_A=pick[("bin", semi)])),
                                 ("MVL-SVM", dict(loss="simplex_hinge", gamma_A=pick[("svm", semi)]))):
                    acc, fs = _mvl(Kp, Kt, lab, unl, yp, yt, semi, gamma_B=gB, gamma_W=gW, **kw)
                    add(name + tag, nl, acc)
                    fit_times.setdefault((name + tag, nl), []).append(fs)

    # ---- table
    hdr = f"{'method':<26}" + "".join(f"{f'{nl}/class':>16}" for nl in labels)
    print(f"mfeat, test n={len(yt)}, draws={len(seeds)}, threads={os.environ.get('OPENBLAS_NUM_THREADS', 'default')}")
    print(hdr)
    print("-" * len(hdr))
    for name, d in rows.items():
        print(f"{name:<26}" + "".join(f"{np.mean(d[nl]):>10.3f}±{np.std(d[nl]):.3f}" for nl in labels))
    best_single = {nl: max(np.mean(rows[f"KRR view {v}"][nl]) for v in VIEWS) for nl in labels}
    print("-" * len(hdr))
    for name in ("MVL-LS", "MVL-LS +unl"):
        print(f"{name + ' / best view':<26}" + "".join(f"{np.mean(rows[name][nl]) / best_single[nl]:>16.3f}"
                                                       for nl in labels))
        print(f"{name + ' / avg kernel':<26}" + "".join(
            f"{np.mean(rows[name][nl]) / np.mean(rows['KRR average kernel'][nl]):>16.3f}" for nl in labels))
    nmax = labels[-1]
    print(f"\nmax fit time (s) at {nmax}/class (precomputed Grams, incl. graph, solve, QP):")
    for (name, nl), ts in fit_times.items():
        if nl == nmax:
            print(f"  {name:<24} {max(ts):6.2f}")
    print("\nselected hyper-parameters (validation split of the pool):")
    for nl, p in chosen.items():
        print(f"  {nl}/class: KRR views lam={p['view']}, avg lam={p['avg']}, "
              f"LS (gA,gB,gW) sup={p[('ls', False)]} semi={p[('ls', True)]}, "
              f"binSVM gA sup/semi={p[('bin', False)]}/{p[('bin', True)]}, "
              f"SVM gA sup/semi={p[('svm', False)]}/{p[('svm', True)]}")
    ls = {nl: np.mean(rows["MVL-LS +unl"][nl]) for nl in labels}
    avg = {nl: np.mean(rows["KRR average kernel"][nl]) for nl in labels}
    wins = sum(ls[nl] > max(best_single[nl], avg[nl]) for nl in labels)
    tmax = max(max(ts) for (n, nl), ts in fit_times.items() if nl == nmax)
    print(f"SUMMARY mvl_mfeat: MVL-LS(+unl) acc {' / '.join(f'{ls[nl]:.3f}' for nl in labels)} at "
          f"{'/'.join(map(str, labels))} labels/class; beats best view & avg kernel at {wins}/{len(labels)}; "
          f"max fit {tmax:.1f}s at {nmax}/class")


if __name__ == "__main__":
    main()
