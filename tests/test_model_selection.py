"""scikit-learn's model selection on multi-view data: every estimator, through MultiViewArray.

For each estimator, ``cross_val_score``, ``cross_validate``, ``GridSearchCV`` and a ``Pipeline``
with a per-view scaler give the numbers of the same fits written out by hand over the same folds.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from bayesmv import (
    MONORMA,
    ONORMA,
    M3LAKClassifier,
    MultiViewArray,
    MVLClassifier,
    MVLRegressor,
    MVMLClassifier,
    MVMLRegressor,
    OVKRidge,
)
from bayesmv.datasets import make_latent_views
from bayesmv.kernels import DiagonalMultiViewKernel, SeparableKernel, get_kernel
from bayesmv.mkc import complete_views, kernel_features
from bayesmv.preprocessing import ViewTransformer

N_SAMPLES = 36  # 3 folds of 12: every fold fits the same shapes (one compile per shape)
FOLDS = KFold(3, shuffle=True, random_state=0)


def _views(offsets=(0.0, 5.0)):
    """Two views on different scales (so that per-view scaling matters), binary labels and a
    continuous target."""
    Xs, y = make_latent_views(
        n_samples=N_SAMPLES, n_views=2, n_features=[3, 4], rule="circle", random_state=2
    )
    Xs = [X * (1.0 + 9.0 * v) + offsets[v] for v, X in enumerate(Xs)]
    target = Xs[0][:, 0] - 0.1 * Xs[1][:, 1]
    return Xs, y, target


def _two_outputs(target):
    return np.stack([target, -target], axis=1)


def _diagonal_kernel(gamma=0.3):
    """A multi-view operator-valued kernel: an RBF on view 0 and a linear kernel on view 1."""
    return DiagonalMultiViewKernel((get_kernel("rbf", gamma=gamma), get_kernel("linear")))


ESTIMATORS = {
    "MVMLClassifier": (lambda: MVMLClassifier(max_iter=2), "label", "lmbda", [0.1, 1.0]),
    "MVMLRegressor": (lambda: MVMLRegressor(max_iter=2), "target", "lmbda", [0.1, 1.0]),
    "MVLClassifier": (lambda: MVLClassifier(max_iter=5), "label", "gamma_A", [1e-3, 1e-1]),
    "MVLRegressor": (lambda: MVLRegressor(), "target", "gamma_A", [1e-3, 1e-1]),
    "M3LAKClassifier": (
        lambda: M3LAKClassifier(  # the Gaussian spectrum compiles 2x faster than the DP's
            n_latent=2, n_frequencies=4, spectral_prior="gaussian", num_warmup=6, num_samples=6, num_chains=1
        ),
        "label",
        "random_state",
        [0, 1],
    ),
    "ONORMA": (lambda: ONORMA(_diagonal_kernel(), shuffle=True), "two outputs", "lam", [0.01, 0.1]),
    "MONORMA": (
        lambda: MONORMA([_diagonal_kernel(), _diagonal_kernel(3.0)]),
        "two outputs",
        "lam",
        [0.01, 0.1],
    ),
    "OVKRidge": (lambda: OVKRidge(_diagonal_kernel()), "two outputs", "lam", [0.01, 0.1]),
}
# M3LAK compiles its sampler for every shape (tens of seconds): its cases are slow, outside the
# inner loop (-m "not slow")
NAMES = [pytest.param(n, marks=pytest.mark.slow) if n == "M3LAKClassifier" else n for n in ESTIMATORS]


def _case(name):
    make, target_kind, param, grid = ESTIMATORS[name]
    Xs, labels, target = _views()
    y = {"label": labels, "target": target, "two outputs": _two_outputs(target)}[target_kind]
    return make(), Xs, y, param, grid


def _by_hand(estimator, Xs, y, scale=False):
    """The test-fold scores of ``estimator`` fitted on each training fold of ``FOLDS``."""
    scores = []
    for train, test in FOLDS.split(Xs[0]):
        train_views, test_views = [X[train] for X in Xs], [X[test] for X in Xs]
        if scale:
            scalers = [StandardScaler().fit(X) for X in train_views]
            train_views = [s.transform(X) for s, X in zip(scalers, train_views)]
            test_views = [s.transform(X) for s, X in zip(scalers, test_views)]
        fitted = clone(estimator).fit(train_views, y[train])
        scores.append(fitted.score(test_views, y[test]))
    return np.array(scores)


@pytest.fixture(autouse=True)
def _quiet_samplers():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # short M3LAK chains warn about r̂; not what is tested here
        yield


@pytest.mark.parametrize("name", NAMES)
def test_cross_validation_equals_the_loop_by_hand(name):
    estimator, Xs, y, _, _ = _case(name)
    X = MultiViewArray(Xs)
    expected = _by_hand(estimator, Xs, y)
    np.testing.assert_allclose(cross_val_score(estimator, X, y, cv=FOLDS), expected, rtol=1e-10, atol=1e-12)
    result = cross_validate(clone(estimator), X, y, cv=FOLDS, return_train_score=True)
    np.testing.assert_allclose(result["test_score"], expected, rtol=1e-10, atol=1e-12)
    assert np.all(np.isfinite(result["train_score"]))


@pytest.mark.parametrize("name", NAMES)
def test_grid_search_equals_the_loop_by_hand(name):
    estimator, Xs, y, param, grid = _case(name)
    search = GridSearchCV(estimator, {param: grid}, cv=FOLDS).fit(MultiViewArray(Xs), y)
    means = [_by_hand(clone(estimator).set_params(**{param: value}), Xs, y).mean() for value in grid]
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], means, rtol=1e-10, atol=1e-12)
    assert search.best_params_ == {param: grid[int(np.argmax(means))]}
    refit = clone(estimator).set_params(**search.best_params_).fit(Xs, y)
    np.testing.assert_allclose(search.predict(MultiViewArray(Xs)), refit.predict(Xs), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_pipeline_with_a_per_view_scaler(name):
    estimator, Xs, y, _, _ = _case(name)
    pipeline = make_pipeline(ViewTransformer(StandardScaler()), estimator)
    expected = _by_hand(estimator, Xs, y, scale=True)
    np.testing.assert_allclose(
        cross_val_score(pipeline, MultiViewArray(Xs), y, cv=FOLDS), expected, rtol=1e-10, atol=1e-12
    )
    fitted = clone(pipeline).fit(Xs, y)  # a plain list of views goes through the pipeline too
    assert fitted.predict(Xs).shape[0] == N_SAMPLES


def test_single_view_kernels_refuse_several_views():
    Xs, _, target = _views()
    for X in (Xs, MultiViewArray(Xs)):
        with pytest.raises(ValueError, match="single-view"):
            OVKRidge(SeparableKernel("rbf", np.eye(2))).fit(X, _two_outputs(target))


def test_completed_kernels_cross_validate_through_their_features():
    """MKC completes once over all samples; ``kernel_features`` gives Φ with ΦΦᵀ = K, so a
    ``kernel="linear"`` MVML on Φ is the ``kernel="precomputed"`` MVML on the completed kernels."""
    Xs, y, _ = _views()
    Xs = [X.copy() for X in Xs]
    Xs[1][:5] = np.nan  # 5 samples miss view 1
    Ks = complete_views(Xs, kernel_params={"gamma": 0.1}, max_iter=20)
    Phi = kernel_features(Ks)
    for K, F in zip(Ks, Phi.views):
        np.testing.assert_allclose(F @ F.T, K, atol=1e-8 * np.abs(K).max())
    linear = MVMLClassifier(kernel="linear", max_iter=2)
    scores = cross_val_score(linear, Phi, y, cv=FOLDS)
    for (train, test), score in zip(FOLDS.split(Xs[0]), scores):
        pre = MVMLClassifier(kernel="precomputed", max_iter=2).fit(
            [K[np.ix_(train, train)] for K in Ks], y[train]
        )
        test_kernels = [K[np.ix_(test, train)] for K in Ks]
        lin = clone(linear).fit(Phi[train], y[train])
        np.testing.assert_allclose(
            lin.decision_function(Phi[test]), pre.decision_function(test_kernels), rtol=1e-6, atol=1e-8
        )
        assert pre.score(test_kernels, y[test]) == score
    with pytest.raises(ValueError, match="square"):
        kernel_features([np.zeros((3, 2))])


def test_unlabelled_views_reach_every_fold_whole():
    Xs, y, _ = _views()
    unlabelled = [X + 0.1 for X in _views(offsets=(1.0, -2.0))[0]]
    estimator = MVLClassifier(max_iter=5, gamma_B=1e-2)
    scores = cross_val_score(estimator, MultiViewArray(Xs), y, cv=FOLDS, params={"Xs_unlabeled": unlabelled})
    expected = []
    for train, test in FOLDS.split(Xs[0]):
        fitted = clone(estimator).fit([X[train] for X in Xs], y[train], Xs_unlabeled=unlabelled)
        expected.append(fitted.score([X[test] for X in Xs], y[test]))
    np.testing.assert_allclose(scores, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_every_method_takes_a_multiview_array(name):
    estimator, Xs, y, _, _ = _case(name)
    X = MultiViewArray(Xs)
    from_list, from_array = clone(estimator).fit(Xs, y), clone(estimator).fit(X, y)
    methods = [m for m in ("predict", "predict_proba", "decision_function") if hasattr(estimator, m)]
    for method in methods:
        expected = getattr(from_list, method)(Xs)
        np.testing.assert_allclose(getattr(from_array, method)(X), expected, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(getattr(from_list, method)(X), expected, rtol=1e-10, atol=1e-12)
    assert from_array.score(X, y) == pytest.approx(from_list.score(Xs, y), abs=1e-12)
