# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.7
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # M3LAK: Bayesian posterior analysis on mfeat
#
# `bayesmv.M3LAKClassifier` (Du et al., M3LAK, paper `003_…`) is a Bayesian multi-view latent variable
# classifier: shared latents `h`, per-view latents `u`, a likelihood on `βᵀφ̃(h)` with random Fourier
# features whose frequencies `ω` have a Gaussian prior by default (an RBF kernel on `h`), or the paper's
# Dirichlet-process Gaussian-mixture prior (`spectral_prior="dp"`, a *learned* shift-invariant kernel). Its defaults (logistic likelihood, `m = 14` latents, `M = 25` frequencies, one noise
# precision per view) were chosen by held-out Brier score in `benchmarks/m3lak_defaults.py`; beyond the paper,
# and chosen on the held-out benchmark `benchmarks/m3lak_heldout.py`, the labels are kept out of the latents
# (a cut model), the classifier sees each point through its latent's mean given its views and through 500
# random features of each view, the noise precisions have a `Γ(2, 1)` prior, and a fit whose training decision
# values have not converged extends its chains (up to 4 times). The paper's hinge
# pseudo-likelihood is `likelihood="hinge"` with `priors=M3LAKPriors(view_features=None, label_feedback=True)`. We fit it with four chains on a binary mfeat task (even vs
# odd digits, views `fou` + `kar`, standardised inside the estimator), then use ArviZ to check the sampler,
# compare likelihoods and noise models by PSIS-LOO (`az.compare`) against held-out accuracy, find the training
# points PSIS-LOO cannot handle (Pareto `k`), and look at the posterior predictive (accuracy, calibration
# with ArviZ's PAV-adjusted reliability diagram), the kernel `k(t)` of the posterior's frequencies, and
# whether a learned (DP) spectrum finds the frequencies a task needs.

# %% [markdown]
# **Parameters.** `BAYESMV_QUICK=1` (set by the test suite) shrinks data and chains so the notebook runs in seconds; the stored outputs come from the full mode.

# %%
import os

from bayesmv import M3LAKClassifier

QUICK = os.environ.get("BAYESMV_QUICK") == "1"
N_SUBSET = 80 if QUICK else 600  # mfeat samples used: half train, half test
SIZES = dict(n_latent=3, n_frequencies=8) if QUICK else {}  # full mode: the estimator's defaults
DEFAULTS = M3LAKClassifier()  # full mode: its chain lengths and number of chains
# quick: 2 x 15 draws, about the fewest on which ArviZ 1.x's PSIS-LOO can fit its Pareto tail (>= 5 draws)
WARMUP, SAMPLES, CHAINS = (
    (15, 15, 2) if QUICK else (DEFAULTS.num_warmup, DEFAULTS.num_samples, DEFAULTS.num_chains)
)
# quick: the chains one after the other in this process (no worker processes to start beside the test suite)
CHAIN_METHOD = "sequential" if QUICK else DEFAULTS.chain_method

# %%
import time
import warnings

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
from sklearn.calibration import calibration_curve
from sklearn.metrics import accuracy_score, brier_score_loss

import bayesmv
from bayesmv.datasets import load_mfeat, train_test_split_views

Xs, digits = load_mfeat(["fou", "kar"])
y = digits % 2  # 0 = even, 1 = odd
idx = np.random.default_rng(0).choice(len(y), N_SUBSET, replace=False)
Xtr, Xte, ytr, yte = train_test_split_views([X[idx] for X in Xs], y[idx], test_size=0.5, random_state=0)
print("train", [X.shape for X in Xtr], "test", [X.shape for X in Xte], "class balance", ytr.mean().round(2))


def fit(views=None, labels=None, **params):
    """One M3LAK fit with the notebook's chain lengths (on the mfeat training split unless
    ``views``/``labels`` are given); returns the estimator and its fit time."""
    est = bayesmv.M3LAKClassifier(
        **{**SIZES, **params},
        num_warmup=WARMUP,
        num_samples=SAMPLES,
        num_chains=CHAINS,
        chain_method=CHAIN_METHOD,
        progress_bar=False,
        random_state=0,
    )
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(Xtr if views is None else views, ytr if labels is None else labels)
    return est, time.perf_counter() - t0


# %% [markdown]
# ## Fit with four chains

# %%
est, seconds = fit()
shown = ("likelihood", "n_latent", "n_frequencies", "noise")
print(
    f"fit: {seconds:.0f} s;",
    {
        **{k: v for k, v in est.get_params().items() if k in shown},
        "precision_update": (est.sampler or bayesmv.M3LAKSampler()).precision_update,  # None: the defaults
    },
)
idata = est.inference_data_
idata

# %% [markdown]
# ## Trace and rank plots
#
# `τ` (view noise precisions) and the decision values `βᵀφ̃(h_n)` of a few training points are identified quantities (β, Ω and W are only identified up to symmetries, so
# their raw traces are not meaningful for mixing).

# %%
coords = {"obs_id": [0, 1, 2]}
az.plot_trace_dist(
    idata,
    var_names=["tau", "decision"],
    coords=coords,
    compact=True,
    backend="matplotlib",
    figure_kwargs={"figsize": (10, 6)},
);

# %%
az.plot_rank(
    idata,
    var_names=["tau", "decision"],
    coords=coords,
    backend="matplotlib",
    figure_kwargs={"figsize": (12, 6)},
);

# %% [markdown]
# ## Summary with r̂ / ESS and the convergence report

# %%
bayesmv.summary(idata, var_names=["tau", "decision"], coords={"obs_id": list(range(5))})

# %%
report = est.convergence_report()
print(report)

# %% [markdown]
# The thresholds (r̂ ≤ 1.01, bulk/tail ESS ≥ 400 over every training decision value and `τ`) are the
# strict modern ones. Read the report as it prints: where it fails, the chains have not agreed on every
# decision value or noise precision, and `sample_more` below is the first thing to try.
# `report.to_dataframe()` gives the same numbers as a table:

# %%
report.to_dataframe()

# %% [markdown]
# ## Continue the chains
#
# `sample_more(n)` extends every chain from where it stopped, as NumPyro's `MCMC.post_warmup_state` does:
# no new warm-up, and with the fit's `num_samples` the compiled sampling loop is reused. The new draws are
# appended to `inference_data_`.

# %%
t0 = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    est.sample_more(SAMPLES)
idata = est.inference_data_
print(f"sample_more: {time.perf_counter() - t0:.1f} s; draws per chain now {idata.posterior.sizes['draw']}")
print(est.convergence_report())


# %% [markdown]
# ## Aligned summaries of the loadings
#
# The posterior is invariant under a joint rotation of the latent axes (H, every `W_i` and Ω turn together),
# so raw summaries of `W_i` mix chains that sit in different orientations. `inference_data_` holds each draw
# turned to one orientation (orthogonal Procrustes of the stacked loadings; the decision values do not
# change); the sampler's own draws stay in `est.raw_posterior_`. The scale and shear of the latent axes
# are no symmetry (the prior pins them, weakly), so the alignment leaves them alone;
# `sampler=M3LAKSampler(latent_axis_moves=True)` moves them directly, so that chains agree on them (off by
# default: on some mfeat splits the chains then settled with different numbers of active latent columns).
# What remains of `W_0`'s r̂ after the alignment is slow mixing: chains that differ in the scale or shear of
# the latent axes, or that switch off different latent columns.

# %%
def worst_rhat(draws):
    return float(az.rhat(az.convert_to_dataset({"x": draws}))["x"].max())


raw = est.raw_posterior_[0]
print(
    f"max r̂ of W_0: raw draws {worst_rhat(raw['W_0']):.2f}, aligned {worst_rhat(idata.posterior['W_0'].values):.2f}; "
    f"decision values {worst_rhat(idata.posterior['decision'].values):.2f}"
)
az.summary(idata, var_names=["W_0"], coords={"feature_0": [0, 1]}, kind="diagnostics")

# %% [markdown]
# ## Comparing models by PSIS-LOO, and against held-out data
#
# `inference_data_` has a `log_likelihood` group, `log σ(y f)` per training point and draw for the logistic
# likelihood, so ArviZ's PSIS-LOO ranks fits by their expected log predictive density. Three logistic fits:
# the default (one noise precision per view), one noise precision per feature (`noise="feature"`, a
# factor-analysis noise model) and the paper's `M = 100` frequencies. The paper's hinge is a
# pseudo-likelihood, `-2C max(0, 1 - y f)`, not normalised over `y`: its "LOO" is on another scale, so it
# enters only the held-out comparison below. `diag_elpd` flags a fit whose PSIS-LOO is unreliable: Pareto
# `k` above ArviZ's threshold on some points (next section).

# %%
candidates = {"logistic, noise per view (default)": (est, seconds)}
candidates["logistic, noise per feature"] = fit(
    noise="feature", sampler=bayesmv.M3LAKSampler(precision_update="conditional")
)
# (quick mode: the default fit's M, so that this fit reuses its compiled sampler)
candidates["logistic, M = 100"] = fit(n_frequencies=100 if not QUICK else SIZES["n_frequencies"])
candidates["hinge (paper), held out only"] = fit(  # the paper's classifier: the latent alone, DP spectrum
    likelihood="hinge",
    spectral_prior="dp",
    priors=bayesmv.M3LAKPriors(view_features=None, label_feedback=True),
    sampler=bayesmv.M3LAKSampler(precision_update="conditional"),
)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    comparison = az.compare({k: e.inference_data_ for k, (e, _) in candidates.items() if "hinge" not in k})
comparison[["rank", "elpd", "p", "elpd_diff", "dse", "diag_elpd"]]

# %%
rows = []
for name, (e, s) in candidates.items():
    p = e.predict_proba(Xte)[:, 1]
    elpd = comparison["elpd"].get(name, np.nan)
    rows.append((name, elpd, accuracy_score(yte, (p > 0.5).astype(int)), brier_score_loss(yte, p), s))
print(f"{'model':<36} {'elpd_loo':>9} {'test acc':>8} {'Brier':>7} {'fit s':>6}")
for name, elpd, a, b, s in rows:
    print(f"{name:<36} {elpd:>9.1f} {a:>8.3f} {b:>7.4f} {s:>6.0f}")
best_loo = comparison.index[0]
best_brier = min((r for r in rows if "hinge" not in r[0]), key=lambda r: r[3])[0]
print(
    f"PSIS-LOO prefers '{best_loo}', the held-out Brier score '{best_brier}':",
    "they agree" if best_loo == best_brier else "they disagree",
)

# %% [markdown]
# PSIS-LOO is computed on the training points only, held-out figures on 300 test points: the two can
# disagree where the differences are within `dse` (the standard error of the difference). The library's
# defaults were chosen on held-out Brier scores over several tasks and splits
# (`benchmarks/m3lak_defaults.py`), not on one split like this: there, over four mfeat tasks and view pairs
# that this notebook does not use, one noise precision per feature scored a Brier score of 0.0411 against
# 0.0375 with one per view at m = 10, and 0.0343 against 0.0315 at today's m = 14; `M = 100` scored 0.0375
# against 0.0367 with `M = 25` (m = 10).

# %% [markdown]
# ## Which training points PSIS-LOO cannot handle: Pareto k
#
# PSIS-LOO reweights the posterior draws to leave one point out; the shape `k` of the Pareto tail fitted to
# each point's weights says whether that works. Points above ArviZ's threshold (`0.7` for long chains, lower
# for few draws) are those whose removal would change the posterior much; their LOO terms are not to be
# trusted. `az.loo(..., pointwise=True)` keeps `k` per point; `az.plot_khat` draws them.

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    loo = az.loo(idata, pointwise=True)
k_hat = np.asarray(loo.pareto_k)
print(loo)
print(f"{np.sum(k_hat > loo.good_k)} of {k_hat.size} training points have k above {loo.good_k:.2f}")
az.plot_khat(loo, backend="matplotlib", figure_kwargs={"figsize": (8, 3.5)});

# %% [markdown]
# Read the count before the elpd. In M3LAK every training point has its own latent `h_n` (and per-view
# latents), which only that point's views and label inform: leaving the point out changes the posterior of
# its own latents a lot, and PSIS cannot reweight draws made with the label into draws made without it. Where
# most points have `k` above the threshold, as on this fit, PSIS-LOO's elpd and the `az.compare` ranking above
# (its `diag_elpd` column counts the same points) are not reliable, and the held-out figures next to them are
# the ones to go by. On this split the two happened to pick the same model.

# %% [markdown]
# ## Posterior predictive: accuracy and calibration

# %%
proba = est.predict_proba(Xte)[:, 1]  # posterior predictive mean of σ(f*)
f_draws = est.predictive_decisions(Xte)[0]  # (draws, test points): β_sᵀφ̃(h*_s)
acc_per_draw = ((f_draws > 0).astype(int) == yte).mean(axis=1)
acc = accuracy_score(yte, (proba > 0.5).astype(int))
print(f"posterior predictive accuracy {acc:.3f}, Brier score {brier_score_loss(yte, proba):.3f}")
print(
    f"single-draw accuracy: mean {acc_per_draw.mean():.3f}, 5-95% [{np.quantile(acc_per_draw, 0.05):.3f}, "
    f"{np.quantile(acc_per_draw, 0.95):.3f}]"
)

fig, axes = plt.subplots(1, 2, figsize=(11, 4))
frac_pos, mean_pred = calibration_curve(yte, proba, n_bins=5 if QUICK else 8, strategy="uniform")
axes[0].plot([0, 1], [0, 1], "k:", label="perfect calibration")
axes[0].plot(mean_pred, frac_pos, "o-", label="M3LAK")
axes[0].set(xlabel="predicted P(odd)", ylabel="observed frequency of odd", title="Reliability diagram")
axes[0].legend()
axes[1].hist(acc_per_draw, bins=15, alpha=0.7, label="one posterior draw")
axes[1].axvline(acc, color="C3", label="posterior predictive")
axes[1].set(xlabel="test accuracy", ylabel="draws", title="Accuracy of single posterior draws")
axes[1].legend()
plt.tight_layout();

# %% [markdown]
# ArviZ 1.x draws a calibration check with a band: the PAV-adjusted reliability diagram (`plot_ppc_pava`:
# the isotonic regression of the observed labels on the predicted probabilities, with the band that the
# model's own replicated labels give). Here on the held-out points: the test labels against replicates
# `y* ~ Bernoulli(σ(f*_s))`, one per posterior draw and test point (ArviZ reads binary labels as 0/1). Its
# leave-one-out twin on the training points, `az.plot_loo_pava`, rests on the PSIS weights whose Pareto `k`
# failed above, so it is not shown.

# %%
rng = np.random.default_rng(0)
held_out = az.from_dict(
    {
        "posterior_predictive": {"y": (rng.random(f_draws.shape) < 1 / (1 + np.exp(-f_draws)))[None] * 1.0},
        "observed_data": {"y": yte * 1.0},
    },
    dims={"y": ["test_point"]},
)
az.plot_ppc_pava(held_out, backend="matplotlib", figure_kwargs={"figsize": (6, 3.5)});

# %% [markdown]
# ## The kernel of the posterior's frequencies
#
# `k(t) = mean_j cos(ω_jᵀt)` along the diagonal direction of the latent space, posterior mean and 90 %
# band, against the RBF kernel of the prior (`ω ~ N(0, I/m)`, i.e. `exp(-t²/(2m))`). Under the default
# Gaussian spectrum the frequencies move only as far as the labels pull them from that prior; the DP
# spectrum (`spectral_prior="dp"`) can gather them into components of its own (next section).

# %%
m = est.n_latent
t = np.linspace(0.0, 4.0 * np.sqrt(m), 60)
band = est.learned_kernel(t, interval=0.9)
plt.figure(figsize=(6, 4))
plt.fill_between(band.t, band.lower, band.upper, alpha=0.3, label="posterior 90% band")
plt.plot(band.t, band.mean, label="k(t), posterior mean")
plt.plot(t, np.exp(-(t**2) / (2 * m)), "k--", label="the prior's RBF, ℓ = √m")
plt.xlabel("lag |t| along the diagonal of the latent space")
plt.ylabel("k(t)")
plt.legend()
plt.title("Kernel of the posterior's frequencies");

# %% [markdown]
# ## Does the spectrum adapt? Components against known frequencies
#
# On mfeat nobody knows which frequencies the labels need. `bayesmv.datasets.make_latent_views(rule="cosines")`
# builds a task where we do: a 2-D latent `h`, two views of 30 noisy linear features of it, and labels
# `cos(0.5 h₁) + cos(4 h₂)` above their median, a slow and a fast wave. Features `cos(ωᵀh)` that fit them
# need frequencies near `±(0.5, 0)` and `±(0, 4)`. We fit three spectra at the estimator's defaults
# (`m = 14` model latents, fewer than each view's 30 features, so that a view's noise precision is
# identified: with as many latents as a view has features the latent model can explain all of it): the DP
# spectrum (`spectral_prior="dp"`) as it is by default, whose NIW base has the fixed scale `Ψ0 = ψ I` with
# `ψ = 1`; the DP spectrum with that scale learned (`priors=M3LAKPriors(niw_psi0_prior=(1, 0.1))`, a Gamma
# prior on `ψ`); and the fixed Gaussian spectrum (the default, `ω ~ N(0, I/m)`). We then express each draw's
# frequencies in the data's latent coordinates: the model's latent means satisfy
# `h_model ≈ A_s h` (least squares over the training points, per draw `s`), so `ωᵀh_model ≈ (A_sᵀω)ᵀh`.
# `return_latent=True` hands us the data's `h`.

# %%
from bayesmv.datasets import make_latent_views
from bayesmv.m3lak import predictive_latent_moments

N_COSINES = 100 if QUICK else 300  # training points; 1000 test points
Xc, yc, Hc = make_latent_views(
    n_samples=N_COSINES + 1000,
    n_latent=2,
    n_features=30,
    rule="cosines",
    random_state=1000,
    return_latent=True,
)
Xc_tr, Xc_te = [X[:N_COSINES] for X in Xc], [X[N_COSINES:] for X in Xc]
SPECTRA = {
    "DP, ψ = 1": dict(spectral_prior="dp"),
    "DP, learned ψ": dict(spectral_prior="dp", priors=bayesmv.M3LAKPriors(niw_psi0_prior=(1.0, 0.1))),
    "Gaussian": dict(spectral_prior="gaussian"),
}
spectra = {name: fit(Xc_tr, yc[:N_COSINES], **params)[0] for name, params in SPECTRA.items()}


def frequencies_in_data_latent(est, n_draws=200):
    """``(draws, M, 2)``: ``A_sᵀω_j`` for ``n_draws`` evenly spaced draws, and their indices."""
    d = est.posterior_draws_[0]
    Zs = [(X - mu) / sd for X, mu, sd in zip(Xc_tr, est.view_means_, est.view_scales_)]
    observed = np.ones((len(Zs), N_COSINES), dtype=bool)
    picked = np.linspace(0, len(d["omega"]) - 1, n_draws).astype(int)
    out = []
    for s in picked:
        latent_mean, _ = predictive_latent_moments(
            [d[f"W_{i}"][s] for i in range(len(Zs))],
            [d[f"V_{i}"][s] for i in range(len(Zs))],
            d["tau"][s],
            Zs,
            observed,
        )
        At = np.linalg.lstsq(Hc[:N_COSINES], np.asarray(latent_mean), rcond=None)[0]  # means ≈ H A_sᵀ
        out.append(d["omega"][s] @ At.T)  # A_sᵀω_j, every j
    return np.array(out), picked


fig, axes = plt.subplots(1, 3, figsize=(15, 4.5), sharex=True, sharey=True)
for ax, (name, e) in zip(axes, spectra.items()):
    freqs, picked = frequencies_in_data_latent(e)
    p = e.predict_proba(Xc_te)[:, 1]
    if e.spectral_prior == "dp":  # colour each frequency by the size rank of its DP component in that draw
        z = e.raw_posterior_[0]["dp_assignments"].reshape(-1, freqs.shape[1])[picked]
        rank = np.array([np.argsort(np.argsort(-np.bincount(zs, minlength=z.max() + 1)))[zs] for zs in z])
        for r, colour, label in (
            (2, "0.6", "other components"),
            (1, "C1", "second largest"),
            (0, "C0", "largest"),
        ):
            sel = rank >= 2 if r == 2 else rank == r
            ax.scatter(freqs[sel, 0], freqs[sel, 1], s=2, alpha=0.3, color=colour, label=label)
    else:
        ax.scatter(freqs[..., 0], freqs[..., 1], s=2, alpha=0.3, color="0.4", label="frequencies")
    a = np.array([[0.5, 0.0], [0.0, 4.0], [-0.5, 0.0], [0.0, -4.0]])
    ax.plot(a[:, 0], a[:, 1], "rx", ms=11, mew=3, label="the data's frequencies ±a_k")
    near_fast = np.mean(np.abs(freqs[..., 1]) > 2.0)
    ax.set(
        xlabel="frequency along h₁",
        title=f"{name}: test accuracy {np.mean((p > 0.5) == yc[N_COSINES:]):.3f}, "
        f"{near_fast:.0%} of ω with |ω₂| > 2",
    )
    legend = ax.legend(loc="lower right", fontsize=8)
    for handle in legend.legend_handles[:-1]:  # the scatters' dots, drawn larger and opaque
        handle.set_sizes([20])
        handle.set_alpha(1.0)
axes[0].set_ylabel("frequency along h₂")
plt.tight_layout()
for name in ("DP, ψ = 1", "DP, learned ψ"):
    print(name, spectra[name].convergence_report(), sep="\n")
az.summary(spectra["DP, learned ψ"].inference_data_, var_names=["dp_n_active", "niw_psi0"])

# %% [markdown]
# In this fit the DP spectrum at `ψ = 1` moves 23 % of its frequencies out to the fast wave, `|ω₂| ≈ 4`, where
# the labels need them, keeps the rest near the origin for the slow wave (`cos(ωᵀh)` is even in `ω`, so `±a` are
# one mode for the features), and scores 0.802 on the test points. The Gaussian spectrum, the default (standard
# deviation `1/√14 ≈ 0.27`), stays near the origin (1 % of its frequencies past `|ω₂| = 2`): 0.748, above chance
# only because the classifier also sees random features of the views themselves (the default
# `view_features="rff"`). With `ψ` learned the chains disagree on `ψ` (posterior mean 0.2, r̂ 1.87): where it falls
# towards 0 the frequencies collapse onto the origin, and only one chain of four fits every training label (the
# others 0.88–0.89); the fit scores 0.774. At the fixed `ψ = 1` the NIW base gives each component
# `E[Σ] = ψ I/(m - 1)`, about 0.28 per coordinate at `m = 14`, and whether a chain reaches the wave, and with how
# many frequencies, changes from chain to chain and from run to run: read the reports above. The DP's chains do
# not agree on the decision values (r̂ 1.56 at `ψ = 1` although every chain fits every training label, ESS 7), nor,
# with `ψ` learned, on `ψ` or the number of active components. The chains sit in different modes, no move of the
# sampler joins them, and r̂ is right to fail; `fit` does not extend such chains (at ESS 7 no run allowed would
# reach an ESS of 200). The relocation move (`sampler=M3LAKSampler(dp_relocation_moves=True)`) brings the chains
# that reach the wave to agree on how many frequencies sit there, but it frees no stuck chain. Over five splits
# with their own data, under the earlier defaults (the joint model; `benchmarks/m3lak_spectrum.py --n-features 30
# --n-latent 14`), the DP with `ψ = 1` scored 0.498–0.947 and the Gaussian spectrum 0.485–0.525. So where the labels
# need frequencies far from the prior's, the learned spectrum can find them, at the price of chains that do not
# agree; on the held-out mfeat tasks (`benchmarks/m3lak_heldout.py`) the Gaussian spectrum predicted about as well
# (Brier 0.5–3.7 % higher) with chains that converged in 43 of 45 fits against the DP's 33, which made it the
# default.
