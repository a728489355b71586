"""M3LAK accuracy benchmark (issue 3 item 5).

Part A — synthetic ``make_latent_views`` data whose label is a nonlinear function of the shared
latent ``h`` ("circle": ``|h|²`` above its median; "xor": ``sign(h1 h2)``). M3LAK (DP spectrum)
against its own linear-kernel counterpart: the *same* latent model and sampler with a fixed
Gaussian spectrum of tiny scale (``spectral_prior="gaussian"``, ``lengthscale=100``, so
``ω ~ N(0, 1e-4 I)``) and a nearly flat prior on β (``v=1e-5``). Then ``sin(ωᵀh) ≈ ωᵀh`` and
``cos(ωᵀh) ≈ 1``, so ``βᵀφ̃(h)`` is linear in ``h`` up to terms of relative size ``ε² ≈ 1e-4``
(a quadratic term would need |β| ~ 30 prior standard deviations): this is the small-frequency
limit in which the random-feature kernel becomes the linear kernel, while nothing else about
the model or the sampler changes. A logistic regression on the concatenated views is printed as
a second linear reference.

Part B — binary tasks of the bundled mfeat digits (even vs odd; 0–4 vs 5–9) with two views
(fou + kar) and all six, 5 random stratified splits with ``N_TRAIN`` training samples and the
rest as test set: M3LAK (4 chains) vs ``sklearn.svm.SVC`` (RBF; C and gamma by 5-fold grid
search; ``probability=True`` for the Brier score) on the concatenated standardised views.
Reports mean test accuracy, Brier score, their ratios, and the worst r̂ of the training decision
values (4 chains).

Run: ``python benchmarks/m3lak_accuracy.py [--quick]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import os

import jax
import numpy as np

import bayesmv  # noqa: F401  (float64)

# Every fit with the same shapes and settings compiles the same sweep: a persistent compilation
# cache lets the 5 splits (and the 4 chains) share one compile.
jax.config.update("jax_compilation_cache_dir", os.environ.get("BAYESMV_JAX_CACHE", "/tmp/bayesmv_jax_cache"))
from bayesmv import M3LAKClassifier
from bayesmv.datasets import load_mfeat, make_latent_views, standardize_views, train_test_split_views
from bayesmv.diagnostics import check_convergence

FULL = dict(
    n_train=300, splits=5, num_warmup=500, num_samples=250, num_chains=4,
    synth_n_train=200, synth_n_test=500, synth_warmup=500, synth_samples=250, synth_chains=2,
    tasks=("even_odd", "low_high"), view_sets=(("fou", "kar"), None),
)
QUICK = dict(
    n_train=60, splits=1, num_warmup=30, num_samples=30, num_chains=4,
    synth_n_train=60, synth_n_test=100, synth_warmup=30, synth_samples=30, synth_chains=2,
    tasks=("even_odd",), view_sets=(("fou", "kar"),),
)


def _m3lak(cfg, seed, warmup, samples, chains, **kw):
    params = dict(n_latent=20, n_frequencies=100, C=1.0, num_warmup=warmup, num_samples=samples,
                  num_chains=chains, seed=seed)
    params.update(kw)
    return M3LAKClassifier(**params)


def _brier(proba_pos, y01):
    return float(np.mean((proba_pos - y01) ** 2))


def _rhat_decision(model):
    rep = check_convergence(model.inference_data_, var_names=["decision"], ess_min=0)
    return rep.variables[0].r_hat


def part_a(cfg):
    from sklearn.linear_model import LogisticRegression

    rows = []
    for rule in ("circle", "xor"):
        n = cfg["synth_n_train"] + cfg["synth_n_test"]
        Xs, y = make_latent_views(n_samples=n, n_views=2, n_latent=2, n_features=10, noise=0.3, rule=rule, seed=1)
        Xtr, Xte, ytr, yte = train_test_split_views(Xs, y, test_size=cfg["synth_n_test"], seed=0)
        res = {}
        for name, kw in [("M3LAK (DP spectrum)", {}),
                         ("M3LAK linear (ℓ=100, v=1e-5)", dict(spectral_prior="gaussian", lengthscale=100.0, v=1e-5))]:
            t0 = time.perf_counter()
            model = _m3lak(cfg, 0, cfg["synth_warmup"], cfg["synth_samples"], cfg["synth_chains"],
                           n_latent=2, **kw).fit(Xtr, ytr)
            proba = model.predict_proba(Xte)[:, 1]
            res[name] = (float(np.mean((proba > 0.5) == yte)), _brier(proba, yte), time.perf_counter() - t0)
        Ztr, Zte = standardize_views(Xtr, Xte)
        lr = LogisticRegression(max_iter=2000).fit(np.hstack(Ztr), ytr)
        p = lr.predict_proba(np.hstack(Zte))[:, 1]
        res["logistic regression (views)"] = (float(np.mean((p > 0.5) == yte)), _brier(p, yte), 0.0)
        rows.append((rule, res))
    print(f"\nA. make_latent_views (2 views x 10 features, latent dim 2, noise 0.3), "
          f"{cfg['synth_n_train']} train / {cfg['synth_n_test']} test; M3LAK n_latent=2, M=100, "
          f"{cfg['synth_chains']} chains x ({cfg['synth_warmup']}+{cfg['synth_samples']})")
    print(f"{'rule':<7} {'method':<32} {'accuracy':>8} {'Brier':>7} {'time s':>7}")
    for rule, res in rows:
        for name, (acc, br, t) in res.items():
            print(f"{rule:<7} {name:<32} {acc:>8.3f} {br:>7.3f} {t:>7.1f}")
        a_dp = res["M3LAK (DP spectrum)"][0]
        a_lin = res["M3LAK linear (ℓ=100, v=1e-5)"][0]
        print(f"{rule:<7} {'ratio accuracy DP / linear':<32} {a_dp / a_lin:>8.3f}")
    return rows


def _svc(Xtr, ytr, seed):
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import SVC

    d = Xtr.shape[1]
    grid = {"C": [0.1, 1.0, 10.0, 100.0], "gamma": [g / d for g in (0.1, 0.3, 1.0, 3.0)]}
    cv = StratifiedKFold(5, shuffle=True, random_state=seed)
    search = GridSearchCV(SVC(kernel="rbf"), grid, cv=cv, n_jobs=1).fit(Xtr, ytr)
    best = SVC(kernel="rbf", probability=True, random_state=seed, **search.best_params_).fit(Xtr, ytr)
    return best, search.best_params_


def part_b(cfg):
    tasks = {"even_odd": lambda d: d % 2, "low_high": lambda d: (d >= 5).astype(int)}
    out = []
    for task in cfg["tasks"]:
        for views in cfg["view_sets"]:
            Xs, digits = load_mfeat(views)
            y = tasks[task](digits)
            acc_m, br_m, acc_s, br_s, rh, t_m = [], [], [], [], [], []
            for split in range(cfg["splits"]):
                Xtr, Xte, ytr, yte = train_test_split_views(Xs, y, test_size=len(y) - cfg["n_train"], seed=split)
                t0 = time.perf_counter()
                model = _m3lak(cfg, split, cfg["num_warmup"], cfg["num_samples"], cfg["num_chains"]).fit(Xtr, ytr)
                proba = model.predict_proba(Xte)[:, 1]
                t_m.append(time.perf_counter() - t0)
                acc_m.append(np.mean((proba > 0.5) == yte))
                br_m.append(_brier(proba, yte))
                rh.append(_rhat_decision(model))
                Ztr, Zte = standardize_views(Xtr, Xte)
                svc, _ = _svc(np.hstack(Ztr), ytr, split)
                Zte = np.hstack(Zte)
                acc_s.append(np.mean(svc.predict(Zte) == yte))
                br_s.append(_brier(svc.predict_proba(Zte)[:, 1], yte))
                print(f"  {task} {'+'.join(views) if views else 'all6'} split {split}: M3LAK acc {acc_m[-1]:.3f} "
                      f"Brier {br_m[-1]:.3f} rhat {rh[-1]:.3f} ({t_m[-1]:.0f} s) | SVC acc {acc_s[-1]:.3f} "
                      f"Brier {br_s[-1]:.3f}", flush=True)
            out.append(dict(task=task, views="+".join(views) if views else "all 6",
                            acc_m=np.mean(acc_m), sd_m=np.std(acc_m), br_m=np.mean(br_m),
                            acc_s=np.mean(acc_s), sd_s=np.std(acc_s), br_s=np.mean(br_s),
                            rhat=np.max(rh), rhat_med=np.median(rh), t=np.mean(t_m)))
    print(f"\nB. mfeat binary tasks, {cfg['n_train']} train / {2000 - cfg['n_train']} test, "
          f"{cfg['splits']} splits; M3LAK m=20, M=100, C=1, {cfg['num_chains']} chains x "
          f"({cfg['num_warmup']}+{cfg['num_samples']}); SVC RBF, (C, gamma) by 5-fold grid search")
    hdr = (f"{'task':<9} {'views':<8} {'M3LAK acc':>10} {'SVC acc':>10} {'ratio':>6} {'M3LAK Brier':>11} "
           f"{'SVC Brier':>9} {'ratio':>6} {'max rhat':>8} {'med rhat':>8} {'fit s':>6}")
    print(hdr)
    for r in out:
        print(f"{r['task']:<9} {r['views']:<8} {r['acc_m']:>6.3f}±{r['sd_m']:.2f} {r['acc_s']:>6.3f}±{r['sd_s']:.2f} "
              f"{r['acc_m'] / r['acc_s']:>6.3f} {r['br_m']:>11.4f} {r['br_s']:>9.4f} {r['br_m'] / r['br_s']:>6.3f} "
              f"{r['rhat']:>8.3f} {r['rhat_med']:>8.3f} {r['t']:>6.1f}")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="seconds-long smoke run")
    parser.add_argument("--skip-synthetic", action="store_true")
    parser.add_argument("--skip-mfeat", action="store_true")
    parser.add_argument("--splits", type=int, default=None, help="mfeat splits (default 5; quick 1)")
    args = parser.parse_args(argv)
    cfg = dict(QUICK if args.quick else FULL)
    if args.splits is not None:
        cfg["splits"] = args.splits
    t0 = time.perf_counter()
    warnings.filterwarnings("ignore")
    synth = [] if args.skip_synthetic else part_a(cfg)
    mfeat = [] if args.skip_mfeat else part_b(cfg)
    heads = []
    for rule, res in synth:
        a = res["M3LAK (DP spectrum)"][0] / res["M3LAK linear (ℓ=100, v=1e-5)"][0]
        heads.append(f"{rule} DP/linear acc x{a:.2f}")
    if mfeat:
        acc_ratio = np.mean([r["acc_m"] / r["acc_s"] for r in mfeat])
        br_ratio = np.mean([r["br_m"] / r["br_s"] for r in mfeat])
        heads.append(f"mfeat acc/SVC x{acc_ratio:.3f}, Brier/SVC x{br_ratio:.2f}, "
                     f"max rhat {max(r['rhat'] for r in mfeat):.3f}")
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    print("SUMMARY m3lak_accuracy: " + "; ".join(heads))


if __name__ == "__main__":
    main()
