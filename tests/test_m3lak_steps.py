"""M3LAKClassifier's steps as functions (bayesmv.m3lak.settings, .posterior, .predictive):
settings, checked draws and the predictive summaries against closed forms."""

from types import SimpleNamespace

import numpy as np
import pytest
from scipy.special import expit

import bayesmv  # noqa: F401  (float64)
from bayesmv import M3LAKClassifier
from bayesmv.m3lak.posterior import checked_samples, dp_overflow_notes
from bayesmv.m3lak.predictive import (
    class_probabilities,
    kernel_band,
    predictive_log_odds,
    predictive_probabilities,
)
from bayesmv.m3lak.settings import (
    check_settings,
    model_config,
    sharding_kwargs,
    standardized,
    view_standardization,
)
from bayesmv.models import NIW_NU0_PER_LATENT, M3LAKPriors, M3LAKSampler


def test_check_settings_and_model_config():
    params = M3LAKClassifier().get_params(deep=False)
    check_settings(params)
    check_settings({**params, "chain_method": "sequential"})
    check_settings({**params, "sampler": M3LAKSampler(shard_data=2)})  # "processes" runs it in this process
    config = model_config(params)
    assert config.nu0 == NIW_NU0_PER_LATENT * params["n_latent"] and config.n_frequencies == 25
    priors = M3LAKPriors(niw_nu0=15.0, v_prior=[1, 2])
    assert model_config({**params, "priors": priors}).v_prior == (1, 2)
    for bad, match in [
        ({"n_latent": 0}, "M3LAKConfig.n_latent"),
        ({"sampler": M3LAKSampler(target_accept=1.0)}, "M3LAKSampler.target_accept"),
        ({"priors": M3LAKPriors(niw_nu0=5.0)}, "niw_nu0 must exceed"),
        ({"priors": M3LAKPriors(v_prior=(1.0,))}, "M3LAKPriors.v_prior"),
        ({"chain_method": "threads"}, "M3LAKClassifier.chain_method"),
        ({"sampler": M3LAKSampler(shard_data=True), "chain_method": "parallel"}, "cannot be combined"),
        ({"standardize": "yes"}, "M3LAKClassifier.standardize"),
        ({"num_warmup": -1}, "M3LAKClassifier.num_warmup"),
    ]:
        with pytest.raises(ValueError, match=match):
            check_settings({**params, **bad})
    assert sharding_kwargs(None, False) == {}
    assert sharding_kwargs(None, 2) == {"mesh": None, "shard_data": 2}


def test_predictive_log_odds_and_probabilities():
    f = np.array([[[-2.0, 30.0], [1.0, 40.0], [0.5, 800.0]]])  # (problems, draws, points)
    p = predictive_probabilities(f, "logistic")
    np.testing.assert_allclose(p, expit(f).mean(axis=1))
    odds = predictive_log_odds(f, "logistic")
    np.testing.assert_allclose(odds[:, 0], np.log(p[:, 0] / (1 - p[:, 0])), rtol=1e-12)
    assert np.isfinite(odds).all() and odds[0, 1] > 25  # log space: finite where 1 - p underflows
    np.testing.assert_array_equal(predictive_probabilities(f, "hinge"), [[2 / 3, 1.0]])
    np.testing.assert_allclose(predictive_log_odds(f, "hinge"), np.log([[2.5 / 1.5, 3.5 / 0.5]]))


def test_class_probabilities():
    binary = class_probabilities(np.array([[0.2, 0.9]]))
    np.testing.assert_allclose(binary, [[0.8, 0.2], [0.1, 0.9]])
    p = np.array([[0.2, 0.0], [0.6, 0.0], [0.2, 0.0]])  # 3 problems, 2 points; the second all zero
    np.testing.assert_allclose(class_probabilities(p), [[0.2, 0.6, 0.2], [1 / 3, 1 / 3, 1 / 3]])


def test_view_standardization_skips_missing_rows():
    X = np.array([[1.0, 5.0], [np.nan, np.nan], [3.0, 5.0]])  # second feature constant
    other = np.zeros((3, 1))  # sample 1 is observed in this view only
    means, scales = view_standardization([X, other])
    np.testing.assert_allclose(means[0], [2.0, 5.0])
    np.testing.assert_allclose(scales[0], [1.0, 1.0])  # std 1; a constant feature keeps scale 1
    Z = standardized([X], means, scales)[0]
    np.testing.assert_allclose(Z[[0, 2]], [[-1.0, 0.0], [1.0, 0.0]])
    assert np.isnan(Z[1]).all()
    means, scales = view_standardization([X, other], standardize=False)
    np.testing.assert_array_equal(np.concatenate(means), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(np.concatenate(scales), [1.0, 1.0, 1.0])


def test_kernel_band_against_direct_cosines():
    omega = np.random.default_rng(0).normal(size=(40, 6, 2))
    band = kernel_band(omega, [0.0, 0.5, 1.0], direction=[1.0, 0.0], interval=0.8)
    k = np.cos(np.einsum("sjm,km->skj", omega, np.array([[0.0, 0], [0.5, 0], [1.0, 0]]))).mean(-1)
    np.testing.assert_allclose(band.mean, k.mean(0), rtol=1e-12)
    np.testing.assert_allclose(band.lower, np.quantile(k, 0.1, axis=0), rtol=1e-12)
    assert band.mean[0] == 1.0
    with pytest.raises(ValueError, match="interval"):
        kernel_band(omega, [1.0], interval=1.0)
    with pytest.raises(ValueError, match="direction"):
        kernel_band(omega, [1.0], direction=[0.0, 0.0])
    with pytest.raises(ValueError, match="shape"):
        kernel_band(omega, np.ones((2, 3)))


def test_checked_samples_and_dp_notes():
    good = SimpleNamespace(samples={"beta": np.ones((1, 3, 2))})
    assert checked_samples(good, 0)["beta"].shape == (1, 3, 2)
    with pytest.raises(FloatingPointError, match="'beta' \\(one-vs-rest problem 2\\)"):
        checked_samples(SimpleNamespace(samples={"beta": np.array([[1.0, np.nan]])}), 2)

    def run(overflow):
        return SimpleNamespace(
            last_state=SimpleNamespace(latent=SimpleNamespace(dp=SimpleNamespace(overflow=overflow)))
        )

    assert dp_overflow_notes(run(np.array([False, False])), 0, 1, 50) == []
    (note,) = dp_overflow_notes(run(np.array([False, True])), 1, 3, 50)
    assert "dp_capacity=50" in note and "problem 1" in note
