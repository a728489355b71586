"""Does M3LAK's DP spectrum adapt? The DP mixture against the fixed Gaussian spectrum on a task
whose best spectrum has two well-separated modes.

Data: ``make_latent_views(rule="cosines")``, a shared 2-D latent ``h``, two views of 10 noisy
linear features each (``--n-features``), and labels ``cos(0.5 h_1) + cos(4 h_2)`` above their
median: a slow and a fast wave, so the frequencies that fit them sit near ±(0.5, 0) and ±(0, 4)
in the latent space. ``N_TRAIN`` training and ``N_TEST`` test points per split; every split draws
new data (its own seed).

For each split: ``M3LAKClassifier`` at its defaults except ``n_latent`` (``--n-latent``, default
``N_LATENT = 5``) and its classifier, which sees the latent alone, the labels informing it
(``M3LAKPriors(view_features=None, label_feedback=True)``: the spectrum alone fits the waves),
once with ``spectral_prior="dp"`` and once with ``"gaussian"``; test accuracy and Brier score; for
the DP, the distribution of the number of active components over the draws and its r̂ / bulk ESS
over the chains. Then the mean paired accuracy difference (DP − Gaussian) with its standard error
over the splits, and whether it exceeds 2 standard errors; the same for the Brier score.

Why not the estimator's ``n_latent=14``: each view has 10 features, and with 10 or more shared
columns the latent model can explain all of a view, so its noise precision τ is not identified.
Measured on split 1 only (4 × (2000 + 2000); splits 0 and 2–4 were not looked at before the
choice): τ r̂ 1.53–1.61 at m = 14 in three sampler settings, 1.001–1.002 at m = 5; at m = 14
with the fixed NIW scale the DP also missed the fast wave (accuracy 0.480, 0.939 at m = 5).

For the DP, also the largest r̂ and smallest bulk ESS of the training decision values and τ,
and each chain's own test accuracy (its draws' mean of σ(f)): a chain at chance whose training
decision values still fit every label has fitted the labels through latent columns that no view
uses, which the test points' latents, inferred from their views, cannot follow.
``--hmc-steps-joint`` overrides the leapfrog steps of the joint (β, Ω) move
(``M3LAKSampler.hmc_steps_joint``), the move that limits how fast the frequencies, and so the
components, mix. ``--niw-psi0-prior A B`` puts a Gamma(A, B) prior on the NIW scale ψ
(``M3LAKPriors.niw_psi0_prior``); the DP rows then print ψ's posterior mean;
``--niw-psi0-warmup-hold F`` holds ψ at the prior mean over the first fraction ``F`` of the DP's
warm-up (``M3LAKSampler.niw_psi0_warmup_hold``). ``--no-spectral-scale-moves``
turns off the estimator's move of the spectrum's overall scale ``(Ω, ψ)`` (on by default),
``--dp-relocation-moves`` turns on its relocation of single frequencies between the DP's
components, ``--dp-sign-moves`` its draw of each frequency's sign with its slot. ``--num-warmup`` and
``--num-samples`` set both spectra's chain lengths (the estimator's defaults otherwise).

``--n-features D`` gives each view ``D`` features (default ``N_FEATURES = 10``): with ``D = 30``
the estimator's own ``n_latent=14`` is below every view's feature count, so ``--n-features 30
--n-latent 14`` runs the estimator at its defaults on a well-posed task. ``--fast-frequency F``
moves the fast wave to ``cos(F h_2)`` (default 4).

Run: ``python benchmarks/m3lak_spectrum.py [--splits 5] [--n-latent m] [--n-features D]
[--fast-frequency F] [--hmc-steps-joint N] [--niw-psi0-prior A B] [--niw-psi0-warmup-hold F]
[--no-spectral-scale-moves]
[--dp-relocation-moves] [--dp-sign-moves] [--num-warmup W] [--num-samples S] [--quick]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import arviz as az
import numpy as np

import bayesmv  # noqa: F401  (float64)
from bayesmv import M3LAKClassifier, M3LAKPriors, M3LAKSampler
from bayesmv.datasets import make_latent_views
from bayesmv.m3lak.predictive import predictive_probabilities

N_TRAIN, N_TEST = 300, 1000
N_FEATURES = 10  # per view
N_LATENT = 5  # below the views' 10 features (module docstring)


def _split(seed, fast_frequency, n_features):
    Xs, y = make_latent_views(
        n_samples=N_TRAIN + N_TEST,
        n_views=2,
        n_latent=2,
        n_features=n_features,
        noise=0.1,
        rule="cosines",
        frequencies=((0.5, 0.0), (0.0, fast_frequency)),
        random_state=seed,
    )
    return [X[:N_TRAIN] for X in Xs], [X[N_TRAIN:] for X in Xs], y[:N_TRAIN], y[N_TRAIN:]


def _worst_rhat_ess(draws):
    """Largest r̂ and smallest bulk ESS over the entries of ``(chain, draw, ...)`` draws."""
    ds = az.convert_to_dataset({"x": draws})
    return float(az.rhat(ds)["x"].max()), float(az.ess(ds)["x"].min())


def _estimator(**params):
    """The estimator of flat parameters: the fields of ``M3LAKPriors`` and ``M3LAKSampler`` among
    them (``niw_psi0_prior``, ``hmc_steps_joint``, ...) set on ``priors`` and ``sampler``."""
    priors = {"view_features": None, "label_feedback": True}  # the latent alone: see the docstring
    priors.update({k: params.pop(k) for k in M3LAKPriors().get_params() if k in params})
    sampler = {k: params.pop(k) for k in M3LAKSampler().get_params() if k in params}
    return M3LAKClassifier(**params, priors=M3LAKPriors(**priors), sampler=M3LAKSampler(**sampler))


def _fit(spectral_prior, n_latent, seed, data, sampler):
    Xtr, Xte, ytr, yte = data
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = _estimator(
            spectral_prior=spectral_prior, n_latent=n_latent, progress_bar=False, random_state=seed, **sampler
        )
        clf.fit(Xtr, ytr)
    seconds = time.perf_counter() - t0
    f = clf.predictive_decisions(Xte)[0]  # (chains · draws, n), chain by chain
    p = predictive_probabilities(f, clf.likelihood)
    row = {"acc": float(np.mean((p > 0.5) == yte)), "brier": float(np.mean((p - yte) ** 2)), "s": seconds}
    if spectral_prior == "dp":
        chain_p = predictive_probabilities(f.reshape(clf.num_chains, -1, f.shape[-1]), clf.likelihood)
        row["chain_acc"] = "/".join(f"{np.mean((q > 0.5) == yte):.2f}" for q in chain_p)
        posterior = clf.inference_data_.posterior
        active = posterior["dp_n_active"].values.astype(float)
        row.update(
            active_mean=float(active.mean()), active_min=int(active.min()), active_max=int(active.max())
        )
        row["active_rhat"], row["active_ess"] = _worst_rhat_ess(active)
        row["decision_rhat"], row["decision_ess"] = _worst_rhat_ess(posterior["decision"].values)
        row["tau_rhat"], row["tau_ess"] = _worst_rhat_ess(posterior["tau"].values)
        row["psi"] = float(posterior["niw_psi0"].mean()) if "niw_psi0" in posterior else None
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--n-latent", type=int, default=N_LATENT)
    ap.add_argument("--hmc-steps-joint", type=int, default=None, help="leapfrog steps of the (β, Ω) move")
    ap.add_argument(
        "--niw-psi0-prior", type=float, nargs=2, default=None, help="Gamma prior on the NIW scale"
    )
    ap.add_argument("--niw-psi0-warmup-hold", type=float, default=None, help="warm-up fraction with ψ held")
    ap.add_argument(
        "--no-spectral-scale-moves", action="store_true", help="do not move the spectrum's scale (Ω, ψ)"
    )
    ap.add_argument(
        "--dp-relocation-moves", action="store_true", help="relocate frequencies between DP components"
    )
    ap.add_argument(
        "--dp-sign-moves", action="store_true", help="draw each frequency's sign with its DP slot"
    )
    ap.add_argument("--n-features", type=int, default=N_FEATURES, help="features per view")
    ap.add_argument("--fast-frequency", type=float, default=4.0, help="the fast wave's frequency")
    ap.add_argument("--num-warmup", type=int, default=None, help="warm-up sweeps per chain")
    ap.add_argument("--num-samples", type=int, default=None, help="kept sweeps per chain")
    ap.add_argument("--quick", action="store_true", help="one split, 2 short chains (a smoke run)")
    args = ap.parse_args()
    splits = 1 if args.quick else args.splits
    sampler = dict(num_warmup=100, num_samples=100, num_chains=2) if args.quick else {}
    for name in ("hmc_steps_joint", "num_warmup", "num_samples"):
        if getattr(args, name) is not None:
            sampler[name] = getattr(args, name)
    if args.niw_psi0_prior is not None:
        sampler["niw_psi0_prior"] = tuple(args.niw_psi0_prior)
    dp_only = {"spectral_scale_moves": False} if args.no_spectral_scale_moves else {}
    if args.niw_psi0_warmup_hold is not None:
        dp_only["niw_psi0_warmup_hold"] = args.niw_psi0_warmup_hold
    if args.dp_relocation_moves:
        dp_only["dp_relocation_moves"] = True
    if args.dp_sign_moves:
        dp_only["dp_sign_moves"] = True
    print(
        f"cosines task (fast wave {args.fast_frequency:g}, {args.n_features} features per view), "
        f"{N_TRAIN} train / {N_TEST} test, n_latent={args.n_latent}, "
        f"{sampler or 'estimator defaults'} otherwise" + (f"; DP {dp_only}" if dp_only else "")
    )
    print(
        "split | DP acc  Brier  active mean [min,max] r̂ ESS  decision r̂ ESS  τ r̂ ESS   s "
        "| Gaussian acc  Brier   s"
    )
    diffs, brier_diffs = [], []
    for split in range(splits):
        data = _split(1000 + split, args.fast_frequency, args.n_features)
        dp = _fit("dp", args.n_latent, split, data, {**sampler, **dp_only})
        ga = _fit("gaussian", args.n_latent, split, data, sampler)
        diffs.append(dp["acc"] - ga["acc"])
        brier_diffs.append(dp["brier"] - ga["brier"])
        print(
            f"{split:5d} | {dp['acc']:.3f}  {dp['brier']:.4f}  {dp['active_mean']:.2f} "
            f"[{dp['active_min']},{dp['active_max']}] {dp['active_rhat']:.3f} {dp['active_ess']:.0f}  "
            f"{dp['decision_rhat']:.3f} {dp['decision_ess']:.0f}  {dp['tau_rhat']:.3f} {dp['tau_ess']:.0f}  "
            f"{dp['s']:.0f} | "
            f"{ga['acc']:.3f}  {ga['brier']:.4f}  {ga['s']:.0f}"
            + f" | DP chains' acc {dp['chain_acc']}"
            + ("" if dp["psi"] is None else f" | psi {dp['psi']:.2f}"),
            flush=True,
        )
    summary = []
    for name, d in (("accuracy", np.array(diffs)), ("Brier", np.array(brier_diffs))):
        se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else np.nan
        print(f"DP - Gaussian {name}: mean {d.mean():+.4f}, SE {se:.4f}, {d.mean() / se:+.1f} SE")
        summary.append(f"DP - Gaussian {name} {d.mean():+.4f} ({d.mean() / se:+.1f} SE)")
    d = np.array(diffs)
    met = len(d) > 1 and d.mean() > 2 * d.std(ddof=1) / np.sqrt(len(d))
    print(f"target: DP accuracy above the Gaussian's by more than 2 SE: {'met' if met else 'MISSED'}")
    print("SUMMARY m3lak_spectrum: " + "; ".join(summary))


if __name__ == "__main__":
    main()
