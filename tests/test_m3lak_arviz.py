"""M3LAK's posterior as an ArviZ object: pointwise log-likelihood (LOO, WAIC, compare), named
dims, posterior predictive replicates, latent axes aligned across draws, and chains continued by
``sample_more``.

Two small logistic fits (N = 40, two views, 2 chains) that differ in ``n_latent`` and in the
spectrum (the default Gaussian, and the paper's DP) are shared by most tests (module-scoped:
one compile each).
"""

import warnings

import arviz as az
import numpy as np
import pytest
from scipy.special import expit, log_expit, logsumexp

import bayesmv  # noqa: F401  (float64)
from bayesmv import M3LAKClassifier, M3LAKPriors, M3LAKSampler
from bayesmv.datasets import make_latent_views

SETTINGS = dict(
    n_frequencies=8, num_warmup=60, num_samples=60, num_chains=2, random_state=1, likelihood="logistic"
)


def _task():
    return make_latent_views(
        n_samples=40, n_views=2, n_latent=2, n_features=6, noise=0.3, rule="circle", random_state=0
    )


def _fit(Xs_y=None, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short chains: the sampler-trouble warning is expected
        return M3LAKClassifier(**{**SETTINGS, **params}).fit(*(Xs_y or _task()))


@pytest.fixture(scope="module")
def fits():
    return _fit(n_latent=2), _fit(n_latent=3, spectral_prior="dp")


@pytest.mark.slow
def test_log_likelihood_is_log_sigmoid_of_the_decision_values(fits):
    idata = fits[0].inference_data_
    ll = idata.log_likelihood["y"].values
    f = idata.posterior["decision"].values
    y = idata.observed_data["y"].values
    assert ll.shape == f.shape == (2, 60, 40)
    np.testing.assert_allclose(ll, log_expit(y * f), rtol=1e-12)


def test_hinge_log_likelihood_is_the_pseudo_likelihood(fitted_estimator):
    est = fitted_estimator("M3LAKClassifier")
    idata = est.inference_data_
    f, y = idata.posterior["decision"].values, idata.observed_data["y"].values
    expected = -2.0 * est.C * np.maximum(0.0, 1.0 - y * f)
    np.testing.assert_allclose(idata.log_likelihood["y"].values, expected, rtol=1e-12)


@pytest.mark.slow
def test_loo_and_compare_agree_with_the_pointwise_log_likelihood(fits):
    """PSIS-LOO on the stored log-likelihood: finite, one term per training point, its effective
    number of parameters ``p`` the in-sample lppd minus elpd (lppd from the draws by hand), and
    close to WAIC (written out here: ArviZ 1.x has no ``waic``) on this well-behaved posterior."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Pareto-k warnings on 120 draws
        loo = az.loo(fits[0].inference_data_, pointwise=True)
        table = az.compare({"m=2": fits[0].inference_data_, "m=3": fits[1].inference_data_})
    assert np.isfinite(loo.elpd) and np.isfinite(loo.se) and loo.elpd_i.shape == (40,)
    assert loo.elpd < 0  # a sum of log-probabilities of 40 binary labels
    ll = fits[0].inference_data_.log_likelihood["y"].values.reshape(-1, 40)
    lppd_i = logsumexp(ll, axis=0) - np.log(ll.shape[0])
    np.testing.assert_allclose(float(loo.p), lppd_i.sum() - float(loo.elpd), rtol=1e-9)
    elpd_waic = np.sum(lppd_i - ll.var(axis=0, ddof=1))
    assert abs(float(loo.elpd) - elpd_waic) < float(loo.se), (float(loo.elpd), elpd_waic, float(loo.se))
    assert list(table.index) and np.isfinite(table["elpd"].to_numpy(dtype=float)).all()
    assert set(table.index) == {"m=2", "m=3"}


@pytest.mark.slow
def test_every_axis_has_a_name_and_coordinates(fits):
    est = fits[0]
    idata = est.inference_data_
    post = idata.posterior
    assert post["W_0"].dims == ("chain", "draw", "feature_0", "latent")
    assert post["V_1"].dims == ("chain", "draw", "feature_1", "view_latent")
    assert post["omega"].dims == ("chain", "draw", "frequency", "latent")
    assert post["r"].dims == ("chain", "draw", "view", "latent")
    dp_post = fits[1].inference_data_.posterior  # the DP spectrum's own variables
    assert dp_post["dp_assignments"].dims == ("chain", "draw", "frequency")
    assert dp_post["dp_weights"].dims[:2] == ("chain", "draw") and "dp_assignments" not in post
    for group in ("posterior", "log_likelihood", "observed_data"):
        ds = idata[group]
        assert ds["decision" if group == "posterior" else "y"].dims[-1] == "obs_id", group
        generic = [d for v in ds.data_vars for d in ds[v].dims if "_dim_" in d]
        assert not generic, (group, generic)
    M = est.n_frequencies
    labels = post["beta"].coords["rff_feature"].values
    assert [labels[0], labels[M], labels[2 * M]] == ["cos_0", "sin_0", "bias"]
    np.testing.assert_array_equal(post.coords["obs_id"], np.arange(40))
    assert post.sizes["feature_0"] == est.n_features_per_view_[0]
    table = az.summary(idata, var_names=["tau", "beta"], kind="diagnostics")
    assert {"tau[0]", "tau[1]", "beta[bias]", "beta[cos_0]"} <= set(table.index)


@pytest.mark.slow
def test_posterior_predictive_replicates_follow_the_likelihood(fits, fitted_estimator):
    """Logistic: replicates are +1 with probability σ(f); over 2 x 60 draws x 40 points the
    frequency of +1 matches the mean of σ(f) within 4 binomial standard errors. Hinge: sign(f)."""
    idata = fits[0].inference_data_
    rep = idata.posterior_predictive["y"].values
    f = idata.posterior["decision"].values
    assert idata.posterior_predictive["y"].dims == ("chain", "draw", "obs_id")
    assert set(np.unique(rep)) <= {-1.0, 1.0}
    p = 1.0 / (1.0 + np.exp(-f))
    se = np.sqrt(np.sum(p * (1 - p))) / p.size
    assert abs(np.mean(rep == 1.0) - p.mean()) < 4 * se, (np.mean(rep == 1.0), p.mean(), se)
    hinge = fitted_estimator("M3LAKClassifier").inference_data_
    np.testing.assert_array_equal(
        hinge.posterior_predictive["y"].values, np.where(hinge.posterior["decision"].values > 0, 1.0, -1.0)
    )


@pytest.mark.slow
def test_alignment_rotates_w_and_omega_together(fits):
    """Aligned draws are the raw draws times one orthogonal Q per draw, for every W_i and Ω alike,
    so the predictive latent mean turns by Q and the decision values it gives do not change."""
    from bayesmv.m3lak import align_latent_axes, predictive_latent_moments
    from bayesmv.models import decision_values

    est = fits[1]
    raw = est.raw_posterior_[0]
    aligned, Q = align_latent_axes(raw, 2)
    m = est.n_latent
    np.testing.assert_allclose(
        np.einsum("cdij,cdik->cdjk", Q, Q), np.broadcast_to(np.eye(m), Q.shape), atol=1e-12
    )
    post = est.inference_data_.posterior
    for name in ("W_0", "W_1", "omega"):
        np.testing.assert_allclose(post[name].values, raw[name] @ Q, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(aligned[name], post[name].values, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(post["decision"].values, raw["decision"])
    Xs, _ = make_latent_views(n_samples=5, n_views=2, n_latent=2, n_features=6, noise=0.3, random_state=7)
    obs = np.ones((2, 5), bool)
    for c, d in ((0, 0), (1, 59)):
        tau, beta = raw["tau"][c, d], raw["beta"][c, d]
        Vs = [raw["V_0"][c, d], raw["V_1"][c, d]]
        mean_raw, _ = predictive_latent_moments([raw["W_0"][c, d], raw["W_1"][c, d]], Vs, tau, Xs, obs)
        mean_al, _ = predictive_latent_moments([aligned["W_0"][c, d], aligned["W_1"][c, d]], Vs, tau, Xs, obs)
        np.testing.assert_allclose(mean_al, np.asarray(mean_raw) @ Q[c, d], rtol=1e-9, atol=1e-12)
        f_raw = decision_values(mean_raw, raw["omega"][c, d], beta)
        f_al = decision_values(mean_al, aligned["omega"][c, d], beta)
        np.testing.assert_allclose(f_al, f_raw, rtol=1e-9, atol=1e-12)


def test_alignment_undoes_a_signed_permutation():
    """Two draws that differ by a signed permutation P of the latent axes: after alignment they
    coincide, Ω turns with W, and r is permuted with the columns."""
    from bayesmv.m3lak import align_latent_axes

    rng = np.random.default_rng(0)
    P = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    W0, W1, omega, r = (
        rng.normal(size=(4, 3)),
        rng.normal(size=(5, 3)),
        rng.normal(size=(6, 3)),
        rng.gamma(2.0, size=(2, 3)),
    )
    samples = {
        "W_0": np.stack([W0, W0 @ P])[None],
        "W_1": np.stack([W1, W1 @ P])[None],
        "omega": np.stack([omega, omega @ P])[None],
        "r": np.stack([r, r[:, [1, 0, 2]]])[None],
        "tau": np.ones((1, 2, 2)),
    }
    aligned, Q = align_latent_axes(samples, 2)
    for name in ("W_0", "W_1", "omega", "r"):
        np.testing.assert_allclose(aligned[name][0, 0], aligned[name][0, 1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.abs(Q[0, 0] @ Q[0, 1].T), np.abs(P), atol=1e-12)
    np.testing.assert_array_equal(aligned["tau"], samples["tau"])


def _max_rhat(draws):
    return float(np.max(az.rhat(az.convert_to_dataset(np.asarray(draws)))["x"].values))


@pytest.mark.slow
def test_aligned_loadings_converge_with_the_decision_values():
    """A well-identified synthetic task (N = 200, two views of 10 features, m = 2, noise 0.3;
    4 chains of 300 + 300, untempered warm-up): after alignment the largest r̂ over every W_i is
    within 0.02 of the decision values' r̂. Without the latent-axis moves the same check fails:
    the chains then disagree on the scale and shear of the latent axes, which a rotation cannot
    align. (With the default tempered warm-up the gaps were -0.014 and 0.091.) The joint model,
    with the labels informing the latents (the latent-axis moves turn H with Ω), and the paper's
    τ prior, as measured."""
    Xs, y = make_latent_views(n_samples=200, n_views=2, n_latent=2, n_features=10, noise=0.3, random_state=0)
    gaps = {}
    for moves in (True, False):
        est = _fit(
            n_latent=2,
            n_frequencies=25,
            num_warmup=300,
            num_samples=300,
            num_chains=4,
            random_state=0,
            priors=M3LAKPriors(a_tau=0.01, b_tau=1e-5, view_features=None, label_feedback=True),
            sampler=M3LAKSampler(latent_axis_moves=moves, warmup_tempering=None),
            Xs_y=(Xs, y),
        )
        post = est.inference_data_.posterior
        loadings = max(_max_rhat(post[f"W_{i}"].values) for i in range(2))
        gaps[moves] = loadings - _max_rhat(post["decision"].values)
    assert abs(gaps[True]) <= 0.02, gaps
    assert gaps[False] > 0.1, gaps


def _compile_messages(fn):
    """Run ``fn`` with JAX's compile log on; return the messages of the compilations it caused."""
    import logging

    import jax

    records = []

    class Collect(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    handler = Collect(level=logging.DEBUG)
    loggers = [logging.getLogger(name) for name in ("jax._src.dispatch", "jax._src.interpreters.pxla")]
    for logger in loggers:
        logger.addHandler(handler)
    previous = jax.config.jax_log_compiles
    jax.config.update("jax_log_compiles", True)  # not the context: the chains run in a thread
    try:
        fn()
    finally:
        jax.config.update("jax_log_compiles", previous)
        for logger in loggers:
            logger.removeHandler(handler)
    return [msg for msg in records if "ompil" in msg]


@pytest.mark.slow
def test_sample_more_continues_the_chains_without_recompiling():
    """fit with 2 x 30 draws then sample_more(30) equals one fit with 60 draws (same seed),
    compiles nothing, and appends the draws in every group. The chains run in this process,
    whose compilations the log records (the default "processes" compiles in its workers)."""
    params = dict(n_latent=2, num_warmup=30, num_samples=30, chain_method="sequential")
    once = _fit(**{**params, "num_samples": 60})
    est = _fit(**params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = _compile_messages(lambda: est.sample_more(30))
    assert compiled == [], compiled
    for name in ("beta", "omega", "tau", "W_0", "decision"):
        np.testing.assert_array_equal(est.raw_posterior_[0][name], once.raw_posterior_[0][name], err_msg=name)
    idata = est.inference_data_
    assert idata.posterior.sizes["draw"] == 60 and idata.sample_stats.sizes["draw"] == 60
    assert idata.log_likelihood["y"].shape == (2, 60, 40)
    np.testing.assert_array_equal(
        idata.sample_stats["diverging"].values, once.inference_data_.sample_stats["diverging"].values
    )
    assert est.posterior_draws_[0]["beta"].shape[0] == 120
    np.testing.assert_allclose(est.predict_proba(_task()[0]), once.predict_proba(_task()[0]))
    with warnings.catch_warnings():  # the log does record compilations: a new length compiles
        warnings.simplefilter("ignore")
        assert any("_draw_chain" in msg for msg in _compile_messages(lambda: est.sample_more(7)))
    assert est.inference_data_.posterior.sizes["draw"] == 67


@pytest.mark.slow
def test_convergence_report_names_sample_more(fits):
    report = fits[0].convergence_report(ess_min=10_000)  # cannot pass: 120 draws
    assert not report.passed
    assert "sample_more" in str(report)


@pytest.mark.slow
def test_chain_training_accuracy_against_the_draws(fits, tmp_path):
    """In-sample: each chain's mean of σ(f) over its stored training decision values; from the
    views: the same over that chain's share of ``predictive_decisions`` on the training views."""
    est = fits[0]
    Xs, y = _task()
    in_sample, from_views = est.chain_training_accuracy()
    assert in_sample.shape == from_views.shape == (1, 2)
    labels = y == est.classes_[1]
    f = est.inference_data_.posterior["decision"].values  # (chain, draw, n)
    expected = np.mean((expit(f).mean(1) > 0.5) == labels, axis=-1)
    np.testing.assert_array_equal(in_sample[0], expected)
    g = est.predictive_decisions(Xs)[0].reshape(2, 60, -1)
    np.testing.assert_array_equal(from_views[0], np.mean((expit(g).mean(1) > 0.5) == labels, axis=-1))
    assert np.all(in_sample >= 0.75)  # the easy task is fitted in-sample
    report = est.convergence_report(ess_min=10_000)
    assert "in-sample / latents from the views alone: " + ", ".join(
        f"{a:.2f} / {b:.2f}" for a, b in zip(in_sample[0], from_views[0])
    ) in str(report)
    est.save(tmp_path / "fit.bmv")
    loaded = bayesmv.load(tmp_path / "fit.bmv")
    with pytest.raises(ValueError, match="training views"):
        loaded.chain_training_accuracy()
    assert "in-sample" not in str(loaded.convergence_report(ess_min=10_000))


@pytest.mark.slow
def test_chain_predict_proba_against_the_draws(fits, tmp_path):
    """Each chain's probabilities: the mean of σ(f*) over that chain's share of
    ``predictive_decisions``, as the columns of ``predict_proba``; their mean over the chains is
    ``predict_proba`` (binary labels); a loaded fit gives the same."""
    est = fits[0]
    Xs, _ = _task()
    per_chain = est.chain_predict_proba(Xs)
    assert per_chain.shape == (2, len(Xs[0]), 2)
    g = est.predictive_decisions(Xs)[0].reshape(2, 60, -1)
    np.testing.assert_allclose(per_chain[..., 1], expit(g).mean(1), rtol=1e-12)
    np.testing.assert_allclose(per_chain[..., 0], 1.0 - expit(g).mean(1), rtol=1e-12)
    np.testing.assert_allclose(per_chain.mean(0), est.predict_proba(Xs), rtol=1e-12)
    assert np.abs(per_chain[0] - per_chain[1]).max() > 1e-6  # two chains, not one pooled twice
    est.save(tmp_path / "fit.bmv")
    np.testing.assert_array_equal(bayesmv.load(tmp_path / "fit.bmv").chain_predict_proba(Xs), per_chain)


@pytest.mark.slow
def test_a_pymc_fit_and_bayesmv_fits_share_one_arviz(fits):
    """bayesmv and PyMC 6 install into one environment (the test extra asks for both) and one
    ArviZ 1.x reads both libraries' posteriors: ``az.summary`` on a bayesmv fit and on a tiny
    PyMC fit of a normal mean, whose posterior mean matches the conjugate answer within 5 Monte
    Carlo standard errors (``az.compare`` on two bayesmv fits: the LOO test above)."""
    import pymc as pm
    from packaging.version import Version

    assert Version(pm.__version__) >= Version("6") and Version(az.__version__) >= Version("1.1")
    y = np.random.default_rng(0).normal(1.5, 1.0, 30)
    with pm.Model(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mu = pm.Normal("mu", 0.0, 10.0)
        pm.Normal("y", mu, 1.0, observed=y)
        pymc_idata = pm.sample(
            draws=500,
            tune=500,
            chains=2,
            cores=1,
            random_seed=0,
            progressbar=False,
            compute_convergence_checks=False,
        )
    pymc_table = az.summary(pymc_idata, var_names=["mu"], round_to="none")
    conjugate_mean = y.sum() / (len(y) + 1e-2)  # prior N(0, 10^2), unit noise
    assert abs(pymc_table.loc["mu", "mean"] - conjugate_mean) < 5 * pymc_table.loc["mu", "mcse_mean"]
    ours = az.summary(fits[0].inference_data_, var_names=["tau"], round_to="none")
    assert list(ours.columns) == list(pymc_table.columns)
