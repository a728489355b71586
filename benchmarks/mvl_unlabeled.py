"""MVL with unlabelled data at its defaults: does adding ``Xs_unlabeled`` ever make it worse?

Protocol (issue 28): mfeat, ``--labels`` labelled samples per class and ``--unlabeled`` unlabelled
samples drawn at random (seed ``1000 + draw``), tested on every remaining sample; each view
standardised with the labelled rows; RBF kernels with ``gamma = 1 / n_features``. Per draw:

- ``supervised``: ``MVLClassifier(kernel_params=...)`` fitted on the labelled samples (``"auto"``
  weights without unlabelled points are the earlier defaults, 1e-6 on the kernel graph);
- ``semi``: the same estimator with ``Xs_unlabeled`` (``gamma_B = gamma_W = "auto"``: that
  supervised fit unless the exact leave-one-out over the labelled points prefers a fit with the
  unlabelled points by more than one standard error; with one label per class the fit whose
  labelling has the smallest normalised cut on the views' k-NN graphs);
- ``prev semi``: the earlier defaults (``gamma_B = gamma_W = 1e-6``, kernel graph) with the
  unlabelled samples.

The leave-one-out rule was designed on draws 0-9 of kar+zer+mor, fou+fac+pix, fou+kar+zer and
fac+pix+mor at 5 labels per class (``--split tuning``); the normalised-cut rule for one label per
class on draws 0-9 of kar+zer+mor and fou+fac+pix at 1 label per class and on
``benchmarks/mvl_mfeat.py``'s 1-label draws. ``--split held-out`` runs draws 10-19 of the four
view sets and draws 0-9 of view sets never looked at while designing either rule. Printed: mean
accuracies, the paired difference semi - supervised with its standard error, in how many draws
the automatic choice kept the unlabelled points, the longest semi-supervised fit.

``--loss hinge`` / ``simplex_hinge``: the same for MVL-binSVM / MVL-SVM (whose ``"auto"`` weights
come from the MVL-LS leave-one-out).

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/mvl_unlabeled.py [--split held-out] [--labels 5]
[--loss squared]``
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import bayesmv  # noqa: F401
from bayesmv.datasets import load_mfeat
from bayesmv.mvl import MVLClassifier

TUNING = ("kar+zer+mor", "fou+fac+pix", "fou+kar+zer", "fac+pix+mor")
UNSEEN = ("fou+zer+mor", "fac+kar+pix", "kar+pix", "fou+fac+kar+pix+zer+mor")


def _draw(y, per_class, n_unl, seed):
    rng = np.random.default_rng(1000 + seed)
    lab = np.concatenate([rng.choice(np.flatnonzero(y == k), per_class, replace=False) for k in np.unique(y)])
    rest = np.setdiff1d(np.arange(len(y)), lab)
    unl = rng.choice(rest, n_unl, replace=False)
    return lab, unl, np.setdiff1d(rest, unl)


def run_draw(Xs, y, per_class, n_unl, seed, loss="squared"):
    """Test accuracies ``(supervised, semi, previous semi)``, whether the
    automatic choice kept the unlabelled points, and the semi-supervised fit time for one draw."""
    lab, unl, test = _draw(y, per_class, n_unl, seed)
    Z = [(X - X[lab].mean(0)) / (X[lab].std(0) + 1e-12) for X in Xs]
    kw = dict(kernel_params=[{"gamma": 1.0 / X.shape[1]} for X in Xs], loss=loss)
    L, U, T = ([X[i] for X in Z] for i in (lab, unl, test))
    sup = MVLClassifier(**kw).fit(L, y[lab]).score(T, y[test])
    t0 = time.perf_counter()
    semi = MVLClassifier(**kw).fit(L, y[lab], Xs_unlabeled=U)
    fit_s = time.perf_counter() - t0
    prev = MVLClassifier(**kw, gamma_B=1e-6, gamma_W=1e-6, graph="kernel", n_neighbors=10)
    prev_semi = prev.fit(L, y[lab], Xs_unlabeled=U).score(T, y[test])
    uses_unlabeled = bool(np.any(semi.dual_coef_[:, len(lab) :]))
    return sup, semi.score(T, y[test]), prev_semi, uses_unlabeled, fit_s


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=("tuning", "held-out"), default="tuning")
    ap.add_argument("--labels", type=int, default=5, help="labelled samples per class")
    ap.add_argument("--unlabeled", type=int, default=500)
    ap.add_argument("--draws", type=int, default=10)
    ap.add_argument("--loss", default="squared", choices=("squared", "hinge", "simplex_hinge"))
    ap.add_argument("--views", default=None, help="comma-separated view sets (overrides --split)")
    args = ap.parse_args(argv)
    if args.views:
        cases = [(v, range(args.draws)) for v in args.views.split(",")]
    elif args.split == "tuning":
        cases = [(v, range(args.draws)) for v in TUNING]
    else:
        cases = [(v, range(10, 10 + args.draws)) for v in TUNING] + [(v, range(args.draws)) for v in UNSEEN]
    print(
        f"mfeat, {args.labels} labels/class, {args.unlabeled} unlabelled, "
        f"{'views given' if args.views else 'split ' + args.split}, loss {args.loss}, "
        f"threads={os.environ.get('OPENBLAS_NUM_THREADS', 'default')}"
    )
    cols = ("supervised", 12), ("semi", 9), ("semi - sup", 18), ("prev semi", 10)
    print(
        f"{'views':<26}{'draws':>7}"
        + "".join(f"{c:>{w}}" for c, w in cols)
        + f"{'uses unl.':>10}{'fit s':>8}"
    )
    gains = []
    for views, seeds in cases:
        Xs, y = load_mfeat(views.split("+"))
        rows = [run_draw(Xs, y, args.labels, args.unlabeled, s, args.loss) for s in seeds]
        sup, semi, prev_semi = (np.array([r[i] for r in rows]) for i in range(3))
        d = semi - sup
        se = d.std(ddof=1) / np.sqrt(d.size)
        kept = sum(r[3] for r in rows)
        gains.append(d.mean())
        print(
            f"{views:<26}{f'{seeds[0]}-{seeds[-1]}':>7}{sup.mean():>12.4f}{semi.mean():>9.4f}"
            f"{d.mean():>+11.4f}±{se:.4f}{prev_semi.mean():>10.4f}"
            f"{f'{kept}/{len(rows)}':>10}{max(r[4] for r in rows):>8.2f}",
            flush=True,
        )
    print(
        f"SUMMARY mvl_unlabeled ({'views given' if args.views else args.split}, {args.labels}/class, "
        f"{args.loss}): semi - supervised from "
        f"{min(gains):+.4f} to {max(gains):+.4f} over {len(cases)} view sets"
    )


if __name__ == "__main__":
    main()
