"""The ``*CV`` estimators against ``GridSearchCV`` over their base estimator: same grid, same folds.

mfeat (10 classes), standardised views, 5 stratified folds, the ``*CV`` estimator's default grid.
For each method the table gives both fit times (each including the refit on all the training
data; the shortest of ``--repeat`` fits, as ``timeit``, since the machine's load varies), their
ratio, whether both chose the same candidate, the largest difference between their mean fold
scores, and both accuracies on held-out samples.

- MVL (``MVLClassifierCV`` vs ``GridSearchCV(MVLClassifier(solver="dense"))``): the few-label
  setting of paper 001 §7, ``--per-class`` labelled samples per class plus 5 unlabelled ones per
  class (``Xs_unlabeled``, given to both), the six views, 36 candidates
  (6 ``gamma_A`` x 3 ``gamma_W`` x 2 graphs); test on 1000 held-out samples.
- MVML (``MVMLClassifierCV`` vs ``GridSearchCV(MVMLClassifier())``): ``--mvml-train`` training
  samples of the views ``--mvml-views``, 12 candidates (4 ``lmbda`` x 3 ``eta``), full path
  (``nystrom=1``) and block-Nyström (``--mvml-nystrom``); test on 1000 held-out samples.

The draw of the training set changes the problem: run several ``--seed`` values.

Run: ``python benchmarks/search_cv.py [--seed 0] [--per-class 20] [--mvml-train 300]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold

import bayesmv  # noqa: F401
from bayesmv import MultiViewArray
from bayesmv.datasets import MultiViewStandardScaler, load_mfeat, train_test_split_views
from bayesmv.mvl import MVLClassifier, MVLClassifierCV
from bayesmv.mvml import MVMLClassifier, MVMLClassifierCV


def _split(views, seed):
    Xs, y = load_mfeat(views)
    Xp, Xt, yp, yt = train_test_split_views(Xs, y, test_size=1000, random_state=seed)
    scaler = MultiViewStandardScaler().fit(Xp)
    return scaler.transform(Xp), scaler.transform(Xt), yp, yt


def _best_time(fit, repeat):
    """The fitted object and the shortest of ``repeat`` wall-clock fit times (as ``timeit``)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fitted = fit()
        times.append(time.perf_counter() - t0)
    return fitted, min(times)


def _compare(label, cv_est, base, grid, folds, train, test, repeat, fit_params=None):
    fit_params = fit_params or {}
    (Xl, yl), (Xt, yt) = train, test
    cv_est, t_cv = _best_time(lambda: clone(cv_est).fit(Xl, yl, **fit_params), repeat)
    search, t_gs = _best_time(
        lambda: GridSearchCV(base, grid, cv=folds).fit(MultiViewArray(Xl), yl, **fit_params), repeat
    )
    diff = np.max(np.abs(cv_est.cv_results_["mean_test_score"] - search.cv_results_["mean_test_score"]))
    print(
        f"{label:<34} {len(search.cv_results_['params']):>5} {t_cv:8.2f} {t_gs:8.2f} {t_gs / t_cv:7.1f}x "
        f"{str(cv_est.best_params_ == search.best_params_):>5} {diff:9.1e} "
        f"{cv_est.score(Xt, yt):6.3f} {search.score(MultiViewArray(Xt), yt):6.3f}  {cv_est.best_params_}"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--per-class", type=int, default=20)
    ap.add_argument("--mvml-train", type=int, default=300)
    ap.add_argument("--mvml-views", nargs="+", default=["fou", "kar"])
    ap.add_argument("--mvml-nystrom", type=float, default=0.3)
    ap.add_argument("--repeat", type=int, default=3, help="fit times are the shortest of this many fits")
    args = ap.parse_args()
    folds = StratifiedKFold(5, shuffle=True, random_state=args.seed)
    print(
        f"{'method (seed ' + str(args.seed) + ')':<34} {'cands':>5} {'*CV [s]':>8} {'grid [s]':>8} {'ratio':>8} "
        f"{'same':>5} {'max|dS|':>9} {'accCV':>6} {'accGS':>6}  choice"
    )

    Xp, Xt, yp, yt = _split(None, args.seed)
    rng = np.random.default_rng(args.seed)
    lab, unl = [], []
    for k in np.unique(yp):
        idx = rng.permutation(np.flatnonzero(yp == k))
        lab += list(idx[: args.per_class])
        unl += list(idx[args.per_class : args.per_class + 5])
    cv_est = MVLClassifierCV(cv=folds)
    grid = {
        "gamma_A": list(cv_est.gamma_As),
        "gamma_B": list(cv_est.gamma_Bs),
        "gamma_W": list(cv_est.gamma_Ws),
        "graph": list(cv_est.graphs),
    }
    _compare(
        f"MVL, 6 views, {len(lab)} lab + {len(unl)} unl",
        cv_est,
        MVLClassifier(solver="dense"),
        grid,
        folds,
        ([X[lab] for X in Xp], yp[lab]),
        (Xt, yt),
        args.repeat,
        {"Xs_unlabeled": [X[unl] for X in Xp]},
    )

    Xp, Xt, yp, yt = _split(args.mvml_views, args.seed)
    tr = np.random.default_rng(args.seed).permutation(len(yp))[: args.mvml_train]
    for nystrom in (1.0, args.mvml_nystrom):
        cv_est = MVMLClassifierCV(nystrom=nystrom, cv=folds)
        grid = {"lmbda": list(cv_est.lmbdas), "eta": list(cv_est.etas)}
        _compare(
            f"MVML, {'+'.join(args.mvml_views)}, n={len(tr)}, nystrom={nystrom:g}",
            cv_est,
            MVMLClassifier(nystrom=nystrom),
            grid,
            folds,
            ([X[tr] for X in Xp], yp[tr]),
            (Xt, yt),
            args.repeat,
        )


if __name__ == "__main__":
    main()
