"""MVML's feature blocks, decision values and fitted attributes as functions
(bayesmv.mvml.features), against kernels evaluated directly and the estimators that call them."""

import numpy as np
import pytest

import bayesmv  # noqa: F401  (float64)
from bayesmv.kernels import rbf_kernel
from bayesmv.mvml import MVMLClassifier, MVMLRegressor, default_step_size
from bayesmv.mvml.features import (
    decision_values,
    fitted_attributes,
    kernel_list,
    kernel_params_list,
    out_of_sample_features,
    train_features,
)
from bayesmv.mvml.solver import MVMLSolver


def _views(n=30, seed=0):
    rng = np.random.default_rng(seed)
    h = rng.normal(size=(n, 2))
    Xs = [h @ rng.normal(size=(2, 3 + v)) + 0.3 * rng.normal(size=(n, 3 + v)) for v in range(2)]
    return Xs, h[:, 0] + 0.3 * h[:, 1]


def test_kernel_and_parameter_lists():
    assert kernel_list("rbf", 3) == ["rbf"] * 3
    assert kernel_params_list(None, 2) == [{}, {}]
    assert kernel_params_list({"gamma": 0.5}, 2) == [{"gamma": 0.5}] * 2
    assert kernel_params_list([None, {"gamma": 2.0}], 2) == [{}, {"gamma": 2.0}]
    with pytest.raises(ValueError, match="one kernel per view"):
        kernel_list(["rbf"], 2)
    with pytest.raises(ValueError, match="every view"):
        kernel_list(["rbf", "precomputed"], 2)
    with pytest.raises(ValueError):
        kernel_list("no-such-kernel", 2)
    with pytest.raises(ValueError, match="3 entries"):
        kernel_params_list([{}, {}, {}], 2)
    with pytest.raises(TypeError, match="dicts or None"):
        kernel_params_list([{}, 1.0], 2)
    with pytest.raises(TypeError, match="a list of dicts"):
        kernel_params_list(1.0, 2)


def test_full_path_features_are_the_gram_matrices():
    Xs, _ = _views()
    params = [{"gamma": 0.3}, {"gamma": 0.2}]
    U, fmap = train_features(Xs, ["rbf", "rbf"], params, 1.0, 0)
    assert not fmap.nystrom and fmap.n_landmarks == 30 and fmap.nystrom_factors is None
    for Uv, X, p in zip(U, Xs, params):
        np.testing.assert_allclose(Uv, rbf_kernel(X, gamma=p["gamma"]), rtol=1e-12)
    T = [X[:4] + 0.05 for X in Xs]
    Ut = out_of_sample_features(T, ["rbf", "rbf"], params, fmap)
    for Utv, t, X, p in zip(Ut, T, Xs, params):
        np.testing.assert_allclose(Utv, rbf_kernel(t, X, gamma=p["gamma"]), rtol=1e-12)


def test_nystrom_extension_at_the_training_points_gives_the_training_features():
    """Block Nyström: ``k_v(X, S) (W_v⁺)^{1/2}`` evaluated at the training views is ``U`` itself,
    for kernels and for precomputed Gram matrices (the test kernels then the training ones)."""
    Xs, _ = _views()
    params = [{"gamma": 0.3}, {"gamma": 0.2}]
    U, fmap = train_features(Xs, ["rbf", "rbf"], params, 0.4, 1)
    assert fmap.nystrom and fmap.n_landmarks == 12 and U.shape == (2, 30, 12)
    np.testing.assert_allclose(out_of_sample_features(Xs, ["rbf", "rbf"], params, fmap), U, atol=1e-10)
    Ks = [np.asarray(rbf_kernel(X, gamma=p["gamma"])) for X, p in zip(Xs, params)]
    Up, fmap_p = train_features(Ks, ["precomputed"] * 2, [{}, {}], 0.4, 1)
    assert fmap_p.landmark_views is None
    np.testing.assert_allclose(
        out_of_sample_features(Ks, ["precomputed"] * 2, [{}, {}], fmap_p), Up, atol=1e-10
    )
    with pytest.raises(ValueError, match="not symmetric"):
        train_features([Ks[0] + np.triu(Ks[0], 1), Ks[1]], ["precomputed"] * 2, [{}, {}], 1.0, 0)


def test_decision_values_and_fitted_attributes_match_the_estimators():
    Xs, y = _views()
    est = MVMLRegressor(lmbda=0.1, eta=1.0, max_iter=4).fit(Xs, y)
    Ut = est._test_features(Xs)
    np.testing.assert_allclose(decision_values(Ut, est.g_, est.weights_)[:, 0], est.predict(Xs), rtol=1e-12)
    # three one-vs-rest outputs: the joint objective is the sum of the per-output traces, each
    # padded with its final value
    labels = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    clf = MVMLClassifier(lmbda=0.1, eta=1.0, max_iter=4).fit(Xs, labels)
    U, _ = train_features(Xs, ["rbf"] * 2, [{}, {}], 1.0, 0)
    solver = MVMLSolver(U, "learn", True, False, 4, 1e-4)
    Y = np.where(labels[:, None] == np.arange(3), 1.0, -1.0)
    attrs = fitted_attributes(solver, solver.fit(Y, [(0.1, 1.0, default_step_size(1.0))]), "label")
    np.testing.assert_allclose(attrs["A_"], clf.A_, rtol=1e-12)
    np.testing.assert_allclose(attrs["g_"], clf.g_, rtol=1e-12)
    traces = [t.traces["objective"] for t in attrs["fit_traces_"]]
    T = max(len(t) for t in traces)
    padded = sum(np.concatenate([t, np.full(T - len(t), t[-1])]) for t in traces)
    np.testing.assert_allclose(attrs["fit_trace_"].traces["objective"], padded, rtol=1e-14)
    assert attrs["n_iter_"] == T - 1 == clf.n_iter_ and attrs["A_"].shape[0] == 3
    assert attrs["fit_trace_"].method == "label" and attrs["solver_form_"] == clf.solver_form_
