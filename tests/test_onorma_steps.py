"""The functions around ONORMA's online pass and OVKRidge's fit (bayesmv.onorma.online,
bayesmv.onorma.ridge), against closed forms and the estimators that call them."""

import numpy as np
import pytest

import bayesmv  # noqa: F401  (float64)
from bayesmv import OVKRidge
from bayesmv.kernels import SeparableKernel
from bayesmv.onorma.online import (
    encode_stream_targets,
    grow_buffer,
    labels_from_scores,
    learning_rates,
    online_trace,
    step_errors,
    step_losses,
)
from bayesmv.onorma.ridge import cross_validated_mse, gram_terms
from bayesmv.onorma.terms import _static_terms, kernel_terms


def test_learning_rates():
    np.testing.assert_allclose(learning_rates("invsqrt", 2.0, 0.1, 3, 2), [2 / 2.0, 2 / np.sqrt(5)])
    np.testing.assert_array_equal(learning_rates("constant", 0.5, 0.1, 7, 3), [0.5] * 3)
    np.testing.assert_array_equal(learning_rates(lambda t: 1.0 / t, 1.0, 0.0, 0, 2), [1.0, 0.5])
    with pytest.raises(ValueError, match="one rate per step"):
        learning_rates(lambda t: 1.0, 1.0, 0.0, 0, 2)
    with pytest.raises(ValueError, match="eta_t > 0"):
        learning_rates(lambda t: -t, 1.0, 0.0, 0, 2)
    with pytest.raises(ValueError, match="eta_t \\* lam must be < 1"):
        learning_rates("constant", 2.0, 0.5, 0, 2)


def test_encode_stream_targets():
    Y, classes = encode_stream_targets("hinge", np.array(["b", "a", "c"]), 3)
    assert classes.tolist() == ["a", "b", "c"]
    np.testing.assert_array_equal(Y, np.eye(3)[[1, 0, 2]])
    Y, classes = encode_stream_targets("ovr_hinge", np.array([0, 1, 1]), 3)
    np.testing.assert_array_equal(Y, [[-1.0], [1.0], [1.0]])
    Y, classes = encode_stream_targets("ovr_hinge", np.array([2, 0]), 2, classes=[0, 1, 2])
    np.testing.assert_array_equal(Y, [[-1.0, -1.0, 1.0], [1.0, -1.0, -1.0]])
    Y, classes = encode_stream_targets("squared", np.arange(3.0), 3)
    assert classes is None and Y.shape == (3, 1)
    with pytest.raises(ValueError, match="not in classes_"):
        encode_stream_targets("hinge", np.array([0, 3]), 2, classes=[0, 1])
    with pytest.raises(ValueError, match="1-D labels of length 2"):
        encode_stream_targets("hinge", np.zeros((2, 2)), 2)
    with pytest.raises(ValueError, match="NaN"):
        encode_stream_targets("ovr_hinge", np.array([0.0, np.nan]), 2)


def test_grow_buffer_to_the_next_power_of_two():
    X, A, t = np.ones((64, 2)), np.ones((64, 3)), np.arange(64)
    assert grow_buffer(X, A, t, 64)[0] is X
    X2, A2, t2 = grow_buffer(X, A, t, 65)
    assert X2.shape == (128, 2) and A2.shape == (128, 3) and t2.shape == (128,)
    np.testing.assert_array_equal(A2[:64], A)
    assert not A2[64:].any() and not t2[64:].any()


def test_step_errors_losses_and_labels():
    F = np.array([[0.5, -1.0, 2.0], [1.0, 0.2, 0.0]])
    onehot = np.eye(3)[[2, 1]]
    np.testing.assert_array_equal(labels_from_scores(F), [2, 0])
    np.testing.assert_array_equal(labels_from_scores(np.array([[0.3], [-0.1]])), [1, 0])
    np.testing.assert_array_equal(step_errors("hinge", F, onehot), [0.0, 1.0])
    np.testing.assert_allclose(step_errors("squared", F, onehot), np.sum((F - onehot) ** 2, axis=1))
    np.testing.assert_allclose(step_losses("squared", F, onehot), 0.5 * np.sum((F - onehot) ** 2, axis=1))
    # Crammer–Singer: max(0, 1 - z_y + max_{r != y} z_r)
    np.testing.assert_allclose(
        step_losses("hinge", F, onehot), [max(0, 1 - 2.0 + 0.5), max(0, 1 - 0.2 + 1.0)]
    )
    pm = 2 * onehot - 1
    np.testing.assert_allclose(step_losses("ovr_hinge", F, pm), np.sum(np.maximum(0, 1 - pm * F), axis=1))


def test_online_trace_is_the_running_regularised_risk():
    losses, errors = np.array([1.0, 0.5, 0.25]), np.array([1.0, 0.0, 1.0])
    norms = np.array([[1.0, 2.0], [3.0, 0.0], [1.0, 1.0]])
    weights = np.array([[0.5, 0.5], [0.6, 0.4], [0.7, 0.3]])
    trace = online_trace(
        losses, errors, norms, 0.2, np.ones((4, 1)), np.array([1, 2, 0, 3]), "M", weights, weights[-1]
    )
    expected = np.cumsum([1.0 + 0.0, 0.5 + 0.1 * 3.0, 0.25 + 0.1 * 3.0]) / np.arange(1, 4)
    np.testing.assert_allclose(trace.traces["objective"], expected, rtol=1e-14)
    np.testing.assert_allclose(trace.traces["cumulative_error"], [1.0, 0.5, 2 / 3])
    np.testing.assert_array_equal(trace.traces["kernel_weight_1"], weights[:, 1])
    assert trace.estimates["coef"].shape == (3, 1) and trace.method == "M"


def test_cross_validated_mse_matches_ridge_fits_on_the_folds():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(24, 3))
    Y = X @ rng.normal(size=(3, 2)) + 0.1 * rng.normal(size=(24, 2))
    kernel = SeparableKernel("rbf", np.eye(2), (("gamma", 1.0),))
    terms, _, _ = kernel_terms(kernel)
    kfns, cols = _static_terms(terms, ((0, 3),), 1)
    static = dict(kfns=kfns, cols=cols, groups=(0,), n_groups=1)
    lams = [1e-3, 1e-1]
    mse = cross_validated_mse(X, Y, np.stack([T for _, T, _ in terms]), static, lams, 4, "auto", 5)
    folds = np.array_split(np.random.default_rng(5).permutation(24), 4)
    for lam, value in zip(lams, mse):
        sq = 0.0
        for te in folds:
            tr = np.setdiff1d(np.arange(24), te)
            sq += np.sum((OVKRidge(kernel, lam=lam).fit(X[tr], Y[tr]).predict(X[te]) - Y[te]) ** 2)
        np.testing.assert_allclose(value, sq / 24, rtol=1e-9)
    tuned = OVKRidge(kernel, lam=lams, cv=4, random_state=5).fit(X, Y)
    np.testing.assert_allclose(tuned.cv_results_["mean_squared_error"], mse, rtol=1e-12)
    np.testing.assert_allclose(
        gram_terms(X, X[:5], static)[0], np.exp(-((X[:, None] - X[None, :5]) ** 2).sum(-1))
    )
