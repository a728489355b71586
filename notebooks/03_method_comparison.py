# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Method comparison on mfeat
#
# Every estimator of bayesmv on the same binary mfeat tasks (views `fou` + `kar`, standardised on the
# training split) next to scikit-learn baselines on the concatenated views:
#
# | method | estimator |
# |---|---|
# | M3LAK | `bayesmv.M3LAKClassifier` at its defaults (Bayesian, posterior predictive probabilities) |
# | MVML learn / sparse / cov / identity | `bayesmv.MVMLClassifier(metric=...)` |
# | MVL-LS, MVL-SVM | `bayesmv.MVLClassifier(loss="squared" / "simplex_hinge")` |
# | SVC, kernel ridge | `sklearn.svm.SVC` with Platt scaling (`CalibratedClassifierCV(method="sigmoid", ensemble=False)`), `sklearn.kernel_ridge.KernelRidge` on ±1 targets |
#
# The Brier score uses `predict_proba` where an estimator has one (M3LAK, SVC); for the others it uses
# `clip((f + 1)/2, 0, 1)` of the decision value `f` (the methods fit ±1 targets) — a crude score, not a
# calibrated probability. Fit times are wall-clock on the project's 2-core machine and include JAX
# compilation (the first fit of a shape compiles).

# %% [markdown]
# **Parameters.** `BAYESMV_QUICK=1` (set by the test suite) shrinks data and chains so the notebook runs in seconds; the stored outputs come from the full mode.

# %%
import os

QUICK = os.environ.get("BAYESMV_QUICK") == "1"
N_SUBSET = 80 if QUICK else 400  # per task: half train, half test
TASKS = {"even vs odd": lambda d: d % 2, "0-4 vs 5-9": lambda d: (d >= 5).astype(int)}
if QUICK:
    TASKS = {"even vs odd": TASKS["even vs odd"]}
# full mode: the estimator's defaults (m = 14, M = 25, 4 chains x (1000 + 2000) sweeps)
M3LAK_PARAMS = dict(progress_bar=False, random_state=0)
if QUICK:
    M3LAK_PARAMS.update(n_latent=3, n_frequencies=8, num_warmup=15, num_samples=10, num_chains=1)
SAVE_FIGURE = not QUICK  # docs/figure_method_comparison.png

# %%
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.calibration import CalibratedClassifierCV
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics import accuracy_score, brier_score_loss
from sklearn.svm import SVC

import bayesmv
from bayesmv.datasets import load_mfeat, standardize_views, train_test_split_views

Xs_all, digits = load_mfeat(["fou", "kar"])
idx = np.random.default_rng(0).choice(len(digits), N_SUBSET, replace=False)


def pseudo_proba(f):
    return np.clip((np.asarray(f) + 1.0) / 2.0, 0.0, 1.0)


def methods(gammas):
    # name -> (estimator factory, input kind)
    mv = dict(kernel="rbf", kernel_params=gammas, lmbda=0.1)
    out = {"M3LAK": (lambda: bayesmv.M3LAKClassifier(**M3LAK_PARAMS), "views")}
    for metric in ("learn", "sparse", "cov", "identity"):
        out[f"MVML {metric}"] = (lambda metric=metric: bayesmv.MVMLClassifier(metric=metric, **mv), "views")
    out["MVL-LS"] = (
        lambda: bayesmv.MVLClassifier(loss="squared", kernel="rbf", kernel_params=gammas),
        "views",
    )
    out["MVL-SVM"] = (
        lambda: bayesmv.MVLClassifier(loss="simplex_hinge", kernel="rbf", kernel_params=gammas),
        "views",
    )
    g = 1.0 / sum(1.0 / p["gamma"] for p in gammas)
    out["SVC (concat)"] = (
        lambda: CalibratedClassifierCV(SVC(kernel="rbf", gamma=g, C=1.0), method="sigmoid", ensemble=False),
        "concat",
    )
    out["KernelRidge (concat)"] = (lambda: KernelRidge(kernel="rbf", gamma=g, alpha=0.1), "ridge")
    return out


# %%
rows = []
for task, label_fn in TASKS.items():
    y = label_fn(digits[idx])
    Xtr, Xte, ytr, yte = train_test_split_views([X[idx] for X in Xs_all], y, test_size=0.5, random_state=0)
    Xtr, Xte = standardize_views(Xtr, Xte)
    gammas = [{"gamma": 1.0 / X.shape[1]} for X in Xtr]
    Ctr, Cte = np.hstack(Xtr), np.hstack(Xte)
    for name, (make, kind) in methods(gammas).items():
        est = make()
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if kind == "views":
                est.fit(Xtr, ytr)
            elif kind == "concat":
                est.fit(Ctr, ytr)
            else:
                est.fit(Ctr, 2.0 * ytr - 1.0)
        fit_time = time.perf_counter() - t0
        if name == "M3LAK" or kind == "concat":
            p = est.predict_proba(Xte if kind == "views" else Cte)[:, 1]
            pred = (p > 0.5).astype(int)
        elif kind == "ridge":
            f = est.predict(Cte)
            p, pred = pseudo_proba(f), (f > 0).astype(int)
        else:
            f = est.decision_function(Xte)
            p, pred = pseudo_proba(f), (f > 0).astype(int)
        rows.append(
            {
                "task": task,
                "method": name,
                "accuracy": accuracy_score(yte, pred),
                "Brier": brier_score_loss(yte, p),
                "fit time [s]": fit_time,
            }
        )
        print(
            f"{task:>12} | {name:<22} acc {rows[-1]['accuracy']:.3f}  Brier {rows[-1]['Brier']:.3f}  "
            f"fit {fit_time:6.1f} s"
        )

table = pd.DataFrame(rows).set_index(["task", "method"])
table.round(3)

# %%
acc = table["accuracy"].unstack("task")
brier = table["Brier"].unstack("task")
times = table["fit time [s]"].unstack("task")
order = list(methods([{"gamma": 1.0}, {"gamma": 1.0}]).keys())
acc, brier, times = acc.loc[order], brier.loc[order], times.loc[order]

fig, axes = plt.subplots(1, 3, figsize=(15, 4.8), sharey=True)
ypos = np.arange(len(order))
width = 0.8 / acc.shape[1]
for j, task in enumerate(acc.columns):
    off = (j - (acc.shape[1] - 1) / 2) * width
    axes[0].barh(ypos + off, acc[task], height=width, label=task)
    axes[1].barh(ypos + off, brier[task], height=width, label=task)
    axes[2].barh(ypos + off, times[task], height=width, label=task)
axes[0].set(
    yticks=ypos, yticklabels=order, xlabel="test accuracy", xlim=(max(0.0, acc.values.min() - 0.1), 1.0)
)
axes[1].set(xlabel="Brier score (lower is better)")
axes[2].set(xlabel="fit time [s] (log scale, incl. JIT compile)", xscale="log")
axes[0].invert_yaxis()
axes[2].legend(loc="lower right")  # the time panel has room there
fig.suptitle(f"bayesmv on mfeat (fou + kar), {N_SUBSET // 2} train / {N_SUBSET // 2} test samples per task")
fig.tight_layout()
if SAVE_FIGURE:
    os.makedirs("../docs", exist_ok=True)
    fig.savefig("../docs/figure_method_comparison.png", dpi=110, bbox_inches="tight")
