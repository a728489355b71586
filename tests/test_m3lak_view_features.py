"""The classifier's view inputs (``view_features="linear"``): the decision value
``βᵀφ̃(h) + γᵀz``, ``z`` the standardised views side by side over ``√D`` (zero where a view is
missing).

The sampler's exactness with them is tested with the other blocks: the joint (β, γ, Ω) move in
``test_m3lak_logistic.py`` (potential, invariance with its power twin, NUTS), the whole sweep
in ``test_m3lak_sampler.py`` (Geweke, configuration ``logistic-view-inputs``). Here: the
inputs themselves, the predictive's term, the NumPyro model, the settings' rules, and a fit.
"""

import jax
import numpy as np
import pytest
from numpyro.handlers import seed, trace

import bayesmv  # noqa: F401  (x64)
from bayesmv import M3LAKClassifier
from bayesmv.datasets import make_latent_views
from bayesmv.m3lak import sample_predictive_decisions
from bayesmv.models import (
    M3LAKConfig,
    M3LAKPriors,
    decision_values,
    m3lak_model,
    view_frequencies,
    view_inputs,
)


def _views(rng, n=4):
    X0, X1 = rng.normal(size=(n, 3)), rng.normal(size=(n, 2))
    X1[2] = np.nan
    return [X0, X1], np.stack([~np.isnan(X0).all(1), ~np.isnan(X1).all(1)], axis=1)


def test_linear_view_inputs_are_the_views_side_by_side_over_root_d_zero_where_missing():
    (X0, X1), observed = _views(np.random.default_rng(0))
    z = np.asarray(view_inputs([X0, X1], observed, M3LAKConfig.from_settings(view_features="linear")))
    expected = np.concatenate([X0, np.where(np.isnan(X1), 0.0, X1)], axis=1) / np.sqrt(5)
    np.testing.assert_allclose(z, expected, rtol=1e-15)


def test_rff_view_inputs_are_each_views_random_fourier_features():
    """Written out from the definition: per view, ``[cos(xᵀω_j), sin(xᵀω_j)]_j / √M_v``, the
    frequencies ``N(0, I/(ℓ² D_i))`` (their scale checked on many draws), zero where the view
    is missing, the views side by side over ``√V``; the same frequencies on every call."""
    (X0, X1), observed = _views(np.random.default_rng(1))
    config = M3LAKConfig.from_settings(view_features="rff", n_view_frequencies=7, view_lengthscale=0.5)
    z = np.asarray(view_inputs([X0, X1], observed, config))
    omegas = [np.asarray(o) for o in view_frequencies([3, 2], config)]
    parts = []
    for X, om, obs in zip((X0, X1), omegas, observed.T):
        proj = np.where(obs[:, None], X, 0.0) @ om
        parts.append(
            np.where(obs[:, None], np.concatenate([np.cos(proj), np.sin(proj)], axis=1), 0.0) / np.sqrt(7)
        )
    np.testing.assert_allclose(z, np.concatenate(parts, axis=1) / np.sqrt(2), rtol=1e-12, atol=1e-15)
    assert np.all(z[2, 14:] == 0) and np.all(z[2, :14] != 0)
    np.testing.assert_array_equal(z, np.asarray(view_inputs([X0, X1], observed, config)))
    wide = M3LAKConfig.from_settings(view_features="rff", n_view_frequencies=20_000, view_lengthscale=0.5)
    for om, D in zip(view_frequencies([3, 2], wide), (3, 2)):
        np.testing.assert_allclose(np.std(np.asarray(om)), 1.0 / (0.5 * np.sqrt(D)), rtol=0.01)


def _draws(rng, S, M=3, m=2, dims=(3, 2), with_gamma=True):
    draws = {
        "tau": rng.gamma(3.0, 1.0, (S, len(dims))),
        "beta": rng.normal(size=(S, 2 * M + 1)),
        "omega": rng.normal(size=(S, M, m)),
    }
    for i, D in enumerate(dims):
        draws[f"W_{i}"] = rng.normal(size=(S, D, m))
        draws[f"V_{i}"] = 0.1 * rng.normal(size=(S, D, 1))
    if with_gamma:
        draws["gamma"] = rng.normal(size=(S, sum(dims)))
    return draws


def test_predictive_adds_the_view_term_to_each_draw():
    """With the same key the latent draws h* are the same, so the decision values with γ differ
    from those without by exactly ``γ_sᵀz*`` for every draw s and test point."""
    rng = np.random.default_rng(1)
    draws = _draws(rng, S=6)
    Xs = [rng.normal(size=(5, 3)), rng.normal(size=(5, 2))]
    Xs[1][[1, 3]] = np.nan
    Xs[0][4] = np.nan
    without = sample_predictive_decisions(
        {k: v for k, v in draws.items() if k != "gamma"}, Xs, jax.random.PRNGKey(2), chunk_size=4
    )
    inputs = rng.normal(size=(5, 5))
    with_view = sample_predictive_decisions(draws, Xs, jax.random.PRNGKey(2), chunk_size=4, inputs=inputs)
    expected = draws["gamma"] @ inputs.T
    np.testing.assert_allclose(with_view - without, expected, rtol=1e-10, atol=1e-10)
    assert np.abs(expected).min() > 0  # the check has something to see at every point
    with pytest.raises(ValueError, match="give their test inputs"):
        sample_predictive_decisions(draws, Xs, jax.random.PRNGKey(2))


@pytest.mark.slow  # compiles the NumPyro model's potential (22 s in the inner loop)
def test_numpyro_model_weights_the_view_inputs_by_gamma():
    rng = np.random.default_rng(3)
    Xs = [rng.normal(size=(4, 3)), rng.normal(size=(4, 2))]
    y = np.array([1.0, -1.0, 1.0, -1.0])
    Xs[1][0] = np.nan
    config = M3LAKConfig.from_settings(
        n_latent=2, n_frequencies=3, view_features="rff", n_view_frequencies=100, v_view_prior=(2.0, 1.0)
    ).validate()
    tr = trace(seed(m3lak_model, 0)).get_trace(Xs, y, config)
    gamma = tr["gamma"]["value"]
    assert gamma.shape == (400,) and tr["v_view"]["type"] == "sample"
    observed = np.array([[True, False], [True, True], [True, True], [True, True]])
    h_part = tr["decision"]["value"] - np.asarray(view_inputs(Xs, observed, config)) @ np.asarray(gamma)
    np.testing.assert_allclose(
        h_part, decision_values(tr["h"]["value"], tr["omega"]["value"], tr["beta"]["value"])
    )
    with pytest.raises(ValueError, match="give Xs"):
        m3lak_model(None, None, config, n_samples=4, n_features=[3, 2])
    # view_span="training" (the default) and 4 samples < 400 inputs: γ = A c in the inputs' row
    # space, c the sample site; "full": γ itself is sampled, with a part outside the row space
    inputs = np.asarray(view_inputs(Xs, observed, config))
    axes = np.linalg.svd(inputs, full_matrices=False)[2].T
    assert tr["gamma"]["type"] == "deterministic" and tr["gamma_span"]["value"].shape == (4,)
    np.testing.assert_allclose(gamma, axes @ (axes.T @ np.asarray(gamma)), atol=1e-12)
    full = trace(seed(m3lak_model, 0)).get_trace(Xs, y, M3LAKConfig.from_settings(config, view_span="full"))
    assert full["gamma"]["type"] == "sample" and "gamma_span" not in full
    outside = np.asarray(full["gamma"]["value"]) - axes @ (axes.T @ np.asarray(full["gamma"]["value"]))
    assert np.sum(outside**2) > 0.5 * 396 / full["v_view"]["value"]  # ≈ (P - N)/v_view (chi-square, 396 dof)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"view_features": "linear", "likelihood": "hinge"}, "needs likelihood='logistic'"),
        ({"view_features": "linear", "dp_relocation_moves": True}, "dp_relocation_moves"),
        ({"view_features": "quadratic"}, "view_features"),
        ({"view_features": "linear", "v_view": 0.0}, "v_view"),
        ({"view_features": None, "v_view_prior": (1.0, 1.0)}, "v_view_prior needs view_features"),
    ],
)
def test_settings_refuse_view_features_where_they_do_not_apply(settings, message):
    with pytest.raises(ValueError, match=message):
        M3LAKConfig.from_settings(**settings).validate()


def test_estimator_refuses_view_features_with_the_hinge():
    with pytest.raises(ValueError, match="needs likelihood='logistic'"):
        M3LAKClassifier(likelihood="hinge", priors=M3LAKPriors(view_features="linear")).fit(
            [np.ones((4, 2))], [0, 1, 0, 1]
        )


@pytest.mark.slow
def test_fit_with_view_inputs_stores_gamma_and_beats_the_latent_alone_on_a_linear_label():
    """A label that is a linear rule of one view's own feature the views' latent does not carry
    well: with the view inputs the classifier reads it directly. Accuracies of a short fit on
    held-out points, fixed seeds; the posterior has ``gamma`` on the ``view_input`` axis."""
    Xs, _ = make_latent_views(n_samples=240, n_features=4, random_state=0)
    rng = np.random.default_rng(0)
    noise_feature = rng.normal(size=(240, 1))
    Xs = [np.concatenate([Xs[0], noise_feature], axis=1), Xs[1]]
    y = (noise_feature[:, 0] > 0).astype(int)
    train, test = slice(0, 160), slice(160, 240)
    accuracy = {}
    for view_features in (None, "linear", "rff"):
        clf = M3LAKClassifier(
            n_latent=2,
            n_frequencies=5,
            spectral_prior="gaussian",  # the test is about the view inputs; compiles 2x faster
            num_warmup=200,
            num_samples=200,
            num_chains=2,
            chain_method="sequential",
            progress_bar=False,
            priors=M3LAKPriors(view_features=view_features, n_view_frequencies=10),
        ).fit([X[train] for X in Xs], y[train])
        accuracy[view_features] = (clf.predict([X[test] for X in Xs]) == y[test]).mean()
        if view_features:
            gamma = clf.inference_data_.posterior["gamma"]
            assert gamma.dims == ("chain", "draw", "view_input")
            names = list(gamma["view_input"].values)
        if view_features == "linear":
            assert len(names) == 5 + 4 and names[4:6] == ["0:4", "1:0"]
        if view_features == "rff":
            assert len(names) == 2 * 2 * 10 and names[19:21] == ["0:sin_9", "1:cos_0"]
    assert accuracy["linear"] >= 0.9, accuracy
    assert accuracy["linear"] > accuracy[None] + 0.1, accuracy


@pytest.mark.slow  # a fit
@pytest.mark.filterwarnings("ignore::bayesmv.base.SamplerWarning")  # 2 chains of 20 draws
def test_view_weights_stay_in_the_span_of_the_training_inputs():
    """``view_span="training"`` (the default) with fewer training points than inputs (30 points,
    2 × 2 × 20 random features): every draw of ``γ`` lies in the row space of the training inputs,
    up to rounding. (``"full"`` draws the part outside it: the joint model's Geweke configuration
    with view inputs, ``tests/test_m3lak_sampler.py``, fails without it.)"""
    Xs, y = make_latent_views(n_samples=30, n_features=3, random_state=1)
    clf = M3LAKClassifier(
        n_latent=2,
        n_frequencies=3,
        spectral_prior="gaussian",  # the test is about γ; compiles 2x faster
        num_warmup=10,
        num_samples=20,
        num_chains=2,
        chain_method="sequential",
        progress_bar=False,
        priors=M3LAKPriors(n_view_frequencies=20, v_view=0.5),
    ).fit(Xs, y)
    Zs = clf._standardize(clf._validate_predict(Xs))
    inputs = np.asarray(view_inputs(Zs, np.ones((30, 2), bool), clf._fitted_config()))
    axes = np.linalg.svd(inputs, full_matrices=False)[2].T  # (P, N)
    gamma = np.asarray(clf.posterior_draws_[0]["gamma"])  # (40, P)
    assert gamma.shape == (40, 80) and np.abs(gamma).max() > 0.1
    np.testing.assert_allclose(gamma - (gamma @ axes) @ axes.T, 0.0, atol=1e-10 * np.abs(gamma).max())


@pytest.mark.slow  # compiles the sampler's initialisation (11 s in the inner loop)
def test_the_sampler_asks_for_the_inputs_when_the_data_lacks_them():
    from bayesmv.inference.m3lak_sampler import initial_latent, prepare_data

    data = prepare_data([np.ones((4, 2)), np.zeros((4, 3))], [1.0, -1.0, 1.0, -1.0])
    config = M3LAKConfig.from_settings(n_latent=2, n_frequencies=3, view_features="linear").validate()
    with pytest.raises(ValueError, match="inputs=view_inputs"):
        initial_latent(jax.random.PRNGKey(0), data, config)
