"""The ``*CV`` estimators choose what ``GridSearchCV`` chooses, on the same grid and folds."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold

from bayesmv import (
    MultiViewArray,
    MVLClassifier,
    MVLClassifierCV,
    MVLRegressor,
    MVLRegressorCV,
    MVMLClassifier,
    MVMLClassifierCV,
    MVMLRegressor,
    MVMLRegressorCV,
)
from bayesmv.mvl import mvl_ls_path, mvl_ls_solve, psd_sqrt

GRID = {
    "gamma_As": (1e-4, 1e-3, 1e-2),
    "gamma_Bs": (0.0, 1e-3),
    "gamma_Ws": (0.0, 1e-3),
    "graphs": ("kernel", "knn"),
}


def _data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    Xs = [rng.standard_normal((n, 4)), rng.standard_normal((n, 3))]
    y = (Xs[0][:, 0] + Xs[1][:, 1] > 0).astype(int) + (Xs[0][:, 1] > 0.8)
    unl = [rng.standard_normal((15, 4)), rng.standard_normal((15, 3))]
    return Xs, y, unl


def _grid_search(base, folds):
    grid = {
        "gamma_A": list(GRID["gamma_As"]),
        "gamma_B": list(GRID["gamma_Bs"]),
        "gamma_W": list(GRID["gamma_Ws"]),
        "graph": list(GRID["graphs"]),
    }
    return GridSearchCV(base, grid, cv=folds)


@pytest.mark.slow
@pytest.mark.parametrize("unlabeled", [False, True])
def test_mvl_classifier_cv_chooses_as_grid_search(unlabeled):
    Xs, y, unl = _data()
    fit_params = {"Xs_unlabeled": unl} if unlabeled else {}
    folds = StratifiedKFold(3, shuffle=True, random_state=1)
    cv_est = MVLClassifierCV(**GRID, n_neighbors=5, cv=folds).fit(Xs, y, **fit_params)
    search = _grid_search(MVLClassifier(solver="dense", n_neighbors=5), folds)
    search.fit(MultiViewArray(Xs), y, **fit_params)
    assert cv_est.best_params_ == search.best_params_
    assert cv_est.best_index_ == search.best_index_
    assert cv_est.cv_results_["params"] == search.cv_results_["params"]
    for key in ("mean_test_score", "std_test_score", "split0_test_score", "split2_test_score"):
        np.testing.assert_allclose(cv_est.cv_results_[key], search.cv_results_[key], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(
        cv_est.cv_results_["rank_test_score"], search.cv_results_["rank_test_score"]
    )
    np.testing.assert_array_equal(cv_est.cv_results_["param_graph"], search.cv_results_["param_graph"])
    assert cv_est.best_score_ == pytest.approx(search.best_score_, abs=1e-12)
    np.testing.assert_allclose(
        cv_est.decision_function(Xs), search.decision_function(MultiViewArray(Xs)), rtol=1e-10, atol=1e-12
    )
    np.testing.assert_array_equal(cv_est.predict(Xs), search.predict(MultiViewArray(Xs)))
    assert list(cv_est.classes_) == [0, 1, 2] and cv_est.n_features_in_ == 7


@pytest.mark.slow
@pytest.mark.parametrize("multi_output", [False, True])
def test_mvl_regressor_cv_chooses_as_grid_search(multi_output):
    Xs, _, unl = _data(seed=3)
    rng = np.random.default_rng(4)
    y = np.sin(Xs[0][:, 0]) + 0.5 * Xs[1][:, 2] + 0.1 * rng.standard_normal(len(Xs[0]))
    if multi_output:
        y = np.column_stack([y, Xs[0][:, 1] ** 2])
    folds = KFold(4, shuffle=True, random_state=2)
    cv_est = MVLRegressorCV(**GRID, n_neighbors=5, cv=folds).fit(Xs, y, Xs_unlabeled=unl)
    search = _grid_search(MVLRegressor(solver="dense", n_neighbors=5), folds)
    search.fit(MultiViewArray(Xs), y, Xs_unlabeled=unl)
    assert cv_est.best_params_ == search.best_params_
    # R² from the eigh path (CV) and from Cholesky solves (GridSearchCV): with gamma_B = gamma_W = 0
    # P H P has rank l, and the two differ by up to 1.5e-12 (measured), not by 1e-16
    np.testing.assert_allclose(
        cv_est.cv_results_["mean_test_score"], search.cv_results_["mean_test_score"], rtol=0, atol=1e-11
    )
    np.testing.assert_allclose(cv_est.predict(Xs), search.predict(MultiViewArray(Xs)), rtol=1e-10, atol=1e-12)
    assert cv_est.score(Xs, y) == pytest.approx(search.score(MultiViewArray(Xs), y), abs=1e-12)


def test_graph_does_not_matter_without_graph_term():
    Xs, y, _ = _data()
    est = MVLClassifierCV(**GRID, cv=3).fit(Xs, y)
    res = est.cv_results_
    zero = np.array([p["gamma_W"] == 0.0 for p in res["params"]])
    by_graph = {g: res["mean_test_score"][zero & (res["param_graph"] == g)] for g in GRID["graphs"]}
    np.testing.assert_array_equal(by_graph["kernel"], by_graph["knn"])


@pytest.mark.parametrize("method", ["eigh", "cholesky"])
def test_ls_path_equals_the_solve_at_every_gamma(method):
    Xs, y, _ = _data(n=30)
    Ks = [np.exp(-0.5 * np.sum((X[:, None] - X[None]) ** 2, axis=-1)) for X in Xs]
    Ls = [np.diag(K.sum(1)) - K for K in Ks]
    Y = np.where(y[:24, None] == np.arange(3), 1.0, -1.0)
    c = np.array([0.6, 0.4])
    gammas = [1e-4, 1e-2, 1.0]
    path = mvl_ls_path(Ks, Y, c, gammas, 1e-3, 1e-2, Ls, Ps=[psd_sqrt(K) for K in Ks], method=method)
    for g, A in zip(gammas, path):
        ref = mvl_ls_solve(Ks, Y, c, g, 1e-3, 1e-2, Ls)
        if method == "cholesky":  # the same arithmetic as the solve
            np.testing.assert_array_equal(A, ref)
        else:
            np.testing.assert_allclose(A, ref, rtol=1e-7, atol=1e-9 * np.abs(ref).max())
    with pytest.raises(ValueError, match="method"):
        mvl_ls_path(Ks, Y, c, gammas, method="lu")


@pytest.mark.parametrize(
    "params, match",
    [
        ({"gamma_As": ()}, "gamma_As must hold at least one value"),
        ({"gamma_As": (-1.0,)}, "gamma_A"),
        ({"kernel": "precomputed"}, "precomputed"),
        ({"graphs": ("ring",)}, "graph"),
    ],
)
def test_cv_errors_name_the_problem(params, match):
    Xs, y, _ = _data()
    with pytest.raises(ValueError, match=match):
        MVLClassifierCV(**{**GRID, "gamma_Ws": (1e-3,), **params}, cv=3).fit(Xs, y)


def test_cv_estimators_need_fit_first():
    Xs, y, _ = _data()
    with pytest.raises(NotFittedError):
        MVLRegressorCV().predict(Xs)
    with pytest.raises(NotFittedError):
        MVLClassifierCV().decision_function(Xs)


@pytest.mark.parametrize("classifier", [True, False])
@pytest.mark.parametrize("nystrom", [1.0, 0.5])
def test_mvml_cv_chooses_as_grid_search(classifier, nystrom):
    Xs, y, _ = _data(n=48, seed=5)
    if not classifier:
        y = Xs[0][:, 0] - np.cos(Xs[1][:, 1])
    folds = (StratifiedKFold if classifier else KFold)(3, shuffle=True, random_state=0)
    grid = {"lmbdas": (1e-2, 0.1, 1.0), "etas": (0.5, 2.0)}
    Est, Base = (MVMLClassifierCV, MVMLClassifier) if classifier else (MVMLRegressorCV, MVMLRegressor)
    cv_est = Est(**grid, nystrom=nystrom, cv=folds).fit(Xs, y)
    search = GridSearchCV(
        Base(nystrom=nystrom), {"lmbda": list(grid["lmbdas"]), "eta": list(grid["etas"])}, cv=folds
    )
    search.fit(MultiViewArray(Xs), y)
    assert cv_est.best_params_ == search.best_params_
    np.testing.assert_allclose(
        cv_est.cv_results_["mean_test_score"], search.cv_results_["mean_test_score"], rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(cv_est.predict(Xs), search.predict(MultiViewArray(Xs)), rtol=1e-10, atol=1e-12)
