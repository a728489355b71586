"""M3LAK accuracy benchmark.

Part A — synthetic ``make_latent_views`` data whose label is a nonlinear function of the shared
latent ``h`` ("circle": ``|h|²`` above its median; "xor": ``sign(h1 h2)``). M3LAK (DP spectrum)
against its own linear-kernel counterpart: the *same* latent model and sampler with a fixed
Gaussian spectrum of tiny scale (``spectral_prior="gaussian"``, ``lengthscale=1e4``, so
``ω ~ N(0, 1e-8 I)``) and a nearly flat prior on β (``v=1e-7``). Then ``sin(ωᵀh) ≈ ωᵀh`` and
``cos(ωᵀh) ≈ 1 − (ωᵀh)²/2``: this is the small-frequency limit in which the random-feature kernel
becomes the linear kernel, while nothing else about the model or the sampler changes. Ω and β are
sampled, so the limit must hold in the *posterior*, not just the prior: with the earlier
``lengthscale=100, v=1e-5`` the posterior moved to max|ω| ≈ 0.09 and max|β| ≈ 2.6e3 (8 prior
standard deviations) and used the cosines' curvature — both rules here are quadratic in h — so
that "linear" counterpart reached 0.93 / 0.89. The table therefore prints, for every fit,
``curv``: a bound, over the worst posterior draw, on the non-affine part of ``βᵀφ̃(h)`` for
``‖h‖ ≤ 3`` (``|1 − cos x| ≤ x²/2``, ``|sin x − x| ≤ |x|³/6``). For the linear counterpart it must
be far below the O(1) scale of the decision values. A logistic regression on the concatenated
views is printed as a second linear reference.

Part B — binary tasks of the bundled mfeat digits (even vs odd; 0–4 vs 5–9) with two views
(fou + kar) and all six, 5 random stratified splits with ``N_TRAIN`` training samples and the
rest as test set: M3LAK (4 chains) vs ``sklearn.svm.SVC`` (RBF; C and gamma by 5-fold grid
search; Platt-scaled probabilities from ``CalibratedClassifierCV(method="sigmoid", ensemble=False)``
for the Brier score) on the concatenated standardised views. Reports mean test accuracy, Brier
score, their ratios, and the worst r̂ of the training decision values (4 chains).

Latent check (column ``latent SVC``): the same tuned SVC trained on M3LAK's own predictive latent
mean ``E[h* | x*, W, V, τ]`` (u integrated out; one posterior draw per chain, the last, accuracy
averaged over the chains). M3LAK sees a test point only through ``h* | x*``, so this column shows
how much of the label the paper's latent model keeps: when it is below the SVC on the raw views,
no classifier on ``h`` (whatever C, M or spectrum) closes the gap.

Run: ``python benchmarks/m3lak_accuracy.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import jax
import numpy as np

import bayesmv  # noqa: F401  (float64)
from bayesmv import M3LAKClassifier
from bayesmv.datasets import (
    load_mfeat,
    make_latent_views,
    observed_mask,
    standardize_views,
    train_test_split_views,
)
from bayesmv.diagnostics import check_convergence
from bayesmv.m3lak import predictive_latent_moments

# Every fit with the same shapes and settings compiles the same sweep: a persistent compilation
# cache lets the 5 splits (and the 4 chains) share one compile.
jax.config.update("jax_compilation_cache_dir", os.environ.get("BAYESMV_JAX_CACHE", "/tmp/bayesmv_jax_cache"))

FULL = dict(
    n_train=300,
    splits=5,
    num_warmup=500,
    num_samples=250,
    num_chains=4,
    synth_n_train=200,
    synth_n_test=500,
    synth_warmup=500,
    synth_samples=250,
    synth_chains=2,
    tasks=("even_odd", "low_high"),
    view_sets=(("fou", "kar"), None),
)
QUICK = dict(
    n_train=60,
    splits=1,
    num_warmup=30,
    num_samples=30,
    num_chains=4,
    synth_n_train=60,
    synth_n_test=100,
    synth_warmup=30,
    synth_samples=30,
    synth_chains=2,
    tasks=("even_odd",),
    view_sets=(("fou", "kar"),),
)


def _m3lak(cfg, seed, warmup, samples, chains, **kw):
    params = dict(
        n_latent=20,
        n_frequencies=100,
        C=1.0,
        num_warmup=warmup,
        num_samples=samples,
        num_chains=chains,
        seed=seed,
    )
    params.update(kw)
    return M3LAKClassifier(**params)


LINEAR = "M3LAK linear (ℓ=1e4, v=1e-7)"


def _curvature_bound(model, radius=3.0):
    """Bound on the non-affine part of ``βᵀφ̃(h)`` over ``‖h‖ ≤ radius``, worst posterior draw:
    ``M^{-1/2} Σ_j (|β_cos,j| ‖ω_j‖² r²/2 + |β_sin,j| ‖ω_j‖³ r³/6)`` (``|1 − cos x| ≤ x²/2``,
    ``|sin x − x| ≤ |x|³/6``)."""
    draws = model.posterior_draws_[0]
    omega, beta = np.asarray(draws["omega"]), np.asarray(draws["beta"])
    M = omega.shape[1]
    norm = np.sqrt(np.sum(omega**2, -1))
    terms = (
        np.abs(beta[:, :M]) * (norm * radius) ** 2 / 2 + np.abs(beta[:, M : 2 * M]) * (norm * radius) ** 3 / 6
    )
    return float(np.max(np.sum(terms, -1)) / np.sqrt(M))


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
        Xs, y = make_latent_views(
            n_samples=n, n_views=2, n_latent=2, n_features=10, noise=0.3, rule=rule, seed=1
        )
        Xtr, Xte, ytr, yte = train_test_split_views(Xs, y, test_size=cfg["synth_n_test"], seed=0)
        res = {}
        for name, kw in [
            ("M3LAK (DP spectrum)", {}),
            (LINEAR, dict(spectral_prior="gaussian", lengthscale=1e4, v=1e-7)),
        ]:
            t0 = time.perf_counter()
            model = _m3lak(
                cfg, 0, cfg["synth_warmup"], cfg["synth_samples"], cfg["synth_chains"], n_latent=2, **kw
            ).fit(Xtr, ytr)
            proba = model.predict_proba(Xte)[:, 1]
            res[name] = (
                float(np.mean((proba > 0.5) == yte)),
                _brier(proba, yte),
                time.perf_counter() - t0,
                _curvature_bound(model),
            )
        Ztr, Zte = standardize_views(Xtr, Xte)
        lr = LogisticRegression(max_iter=2000).fit(np.hstack(Ztr), ytr)
        p = lr.predict_proba(np.hstack(Zte))[:, 1]
        res["logistic regression (views)"] = (float(np.mean((p > 0.5) == yte)), _brier(p, yte), 0.0, 0.0)
        rows.append((rule, res))
    print(
        f"\nA. make_latent_views (2 views x 10 features, latent dim 2, noise 0.3), "
        f"{cfg['synth_n_train']} train / {cfg['synth_n_test']} test; M3LAK n_latent=2, M=100, "
        f"{cfg['synth_chains']} chains x ({cfg['synth_warmup']}+{cfg['synth_samples']})"
    )
    print(f"{'rule':<7} {'method':<32} {'accuracy':>8} {'Brier':>7} {'time s':>7} {'curv':>9}")
    for rule, res in rows:
        for name, (acc, br, t, curv) in res.items():
            print(f"{rule:<7} {name:<32} {acc:>8.3f} {br:>7.3f} {t:>7.1f} {curv:>9.2e}")
        a_dp = res["M3LAK (DP spectrum)"][0]
        a_lin = res[LINEAR][0]
        print(f"{rule:<7} {'ratio accuracy DP / linear':<32} {a_dp / a_lin:>8.3f}")
    return rows


def _svc(Xtr, ytr, seed):
    """RBF SVC with (C, gamma) by 5-fold grid search, refitted with Platt-scaled probabilities."""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import SVC

    d = Xtr.shape[1]
    grid = {"C": [0.1, 1.0, 10.0, 100.0], "gamma": [g / d for g in (0.1, 0.3, 1.0, 3.0)]}
    cv = StratifiedKFold(5, shuffle=True, random_state=seed)
    search = GridSearchCV(SVC(kernel="rbf"), grid, cv=cv, n_jobs=1).fit(Xtr, ytr)
    best = CalibratedClassifierCV(
        SVC(kernel="rbf", **search.best_params_), method="sigmoid", cv=cv, ensemble=False
    ).fit(Xtr, ytr)
    return best, search.best_params_


def _latent_svc_accuracy(model, Xtr, ytr, Xte, yte, seed):
    """Test accuracy of the tuned SVC on M3LAK's predictive latent mean ``E[h* | x*]``, averaged
    over one posterior draw per chain (the last of each)."""
    draws = model.posterior_draws_[0]
    n_views = len(Xtr)
    per_chain = draws["beta"].shape[0] // model.num_chains
    scale = lambda views: [(X - mu) / s for X, mu, s in zip(views, model.view_means_, model.view_scales_)]  # noqa: E731
    Ztr, Zte = scale(Xtr), scale(Xte)
    accs = []
    for c in range(model.num_chains):
        s = (c + 1) * per_chain - 1
        Ws = [draws[f"W_{i}"][s] for i in range(n_views)]
        Vs = [draws[f"V_{i}"][s] for i in range(n_views)]
        htr, _ = predictive_latent_moments(Ws, Vs, draws["tau"][s], Ztr, observed_mask(Ztr))
        hte, _ = predictive_latent_moments(Ws, Vs, draws["tau"][s], Zte, observed_mask(Zte))
        svc, _ = _svc(np.asarray(htr), ytr, seed)
        accs.append(np.mean(svc.predict(np.asarray(hte)) == yte))
    return float(np.mean(accs))


def part_b(cfg):
    tasks = {"even_odd": lambda d: d % 2, "low_high": lambda d: (d >= 5).astype(int)}
    out = []
    for task in cfg["tasks"]:
        for views in cfg["view_sets"]:
            Xs, digits = load_mfeat(views)
            y = tasks[task](digits)
            acc_m, br_m, acc_s, br_s, acc_h, rh, t_m = [], [], [], [], [], [], []
            for split in range(cfg["splits"]):
                Xtr, Xte, ytr, yte = train_test_split_views(
                    Xs, y, test_size=len(y) - cfg["n_train"], seed=split
                )
                t0 = time.perf_counter()
                model = _m3lak(cfg, split, cfg["num_warmup"], cfg["num_samples"], cfg["num_chains"]).fit(
                    Xtr, ytr
                )
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
                acc_h.append(_latent_svc_accuracy(model, Xtr, ytr, Xte, yte, split))
                print(
                    f"  {task} {'+'.join(views) if views else 'all6'} split {split}: M3LAK acc {acc_m[-1]:.3f} "
                    f"Brier {br_m[-1]:.3f} rhat {rh[-1]:.3f} ({t_m[-1]:.0f} s) | SVC acc {acc_s[-1]:.3f} "
                    f"Brier {br_s[-1]:.3f} | latent SVC acc {acc_h[-1]:.3f}",
                    flush=True,
                )
            out.append(
                dict(
                    task=task,
                    views="+".join(views) if views else "all 6",
                    acc_m=np.mean(acc_m),
                    sd_m=np.std(acc_m),
                    br_m=np.mean(br_m),
                    acc_s=np.mean(acc_s),
                    sd_s=np.std(acc_s),
                    br_s=np.mean(br_s),
                    acc_h=np.mean(acc_h),
                    rhat=np.max(rh),
                    rhat_med=np.median(rh),
                    t=np.mean(t_m),
                )
            )
    print(
        f"\nB. mfeat binary tasks, {cfg['n_train']} train / {2000 - cfg['n_train']} test, "
        f"{cfg['splits']} splits; M3LAK m=20, M=100, C=1, {cfg['num_chains']} chains x "
        f"({cfg['num_warmup']}+{cfg['num_samples']}); SVC RBF, (C, gamma) by 5-fold grid search"
    )
    hdr = (
        f"{'task':<9} {'views':<8} {'M3LAK acc':>10} {'SVC acc':>10} {'ratio':>6} {'M3LAK Brier':>11} "
        f"{'SVC Brier':>9} {'ratio':>6} {'latent SVC':>10} {'max rhat':>8} {'med rhat':>8} {'fit s':>6}"
    )
    print(hdr)
    for r in out:
        print(
            f"{r['task']:<9} {r['views']:<8} {r['acc_m']:>6.3f}±{r['sd_m']:.2f} {r['acc_s']:>6.3f}±{r['sd_s']:.2f} "
            f"{r['acc_m'] / r['acc_s']:>6.3f} {r['br_m']:>11.4f} {r['br_s']:>9.4f} {r['br_m'] / r['br_s']:>6.3f} "
            f"{r['acc_h']:>10.3f} "
            f"{r['rhat']:>8.3f} {r['rhat_med']:>8.3f} {r['t']:>6.1f}"
        )
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
        a = res["M3LAK (DP spectrum)"][0] / res[LINEAR][0]
        heads.append(f"{rule} DP/linear acc x{a:.2f}")
    if mfeat:
        acc_ratio = np.mean([r["acc_m"] / r["acc_s"] for r in mfeat])
        br_ratio = np.mean([r["br_m"] / r["br_s"] for r in mfeat])
        lat_ratio = np.mean([r["acc_h"] / r["acc_s"] for r in mfeat])
        heads.append(
            f"mfeat acc/SVC x{acc_ratio:.3f}, Brier/SVC x{br_ratio:.2f}, latent-SVC/SVC x{lat_ratio:.3f}, "
            f"max rhat {max(r['rhat'] for r in mfeat):.3f}"
        )
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    print("SUMMARY m3lak_accuracy: " + "; ".join(heads))


if __name__ == "__main__":
    main()
