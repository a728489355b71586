"""The steps of an MVL fit as functions (bayesmv.mvl.fitting, bayesmv.mvl.selection), each
against the solver it wraps or the estimator that calls it."""

import numpy as np
import pytest

import bayesmv  # noqa: F401  (float64)
from bayesmv.kernels import rbf_kernel
from bayesmv.mvl import MVLClassifier, MVLRegressor, mvl_ls_solve, psd_sqrt, view_laplacians
from bayesmv.mvl.fitting import (
    bind_kernels,
    check_precomputed_grams,
    choose_solver,
    combination_weights,
    fit_least_squares,
    fit_svm,
    train_grams,
    view_outputs,
)
from bayesmv.mvl.selection import SUPERVISED_MANIFOLD, choose_manifold, supervised_manifold


def _views(n=24, seed=0):
    rng = np.random.default_rng(seed)
    H = rng.normal(size=(n, 2))
    Xs = [H @ rng.normal(size=(2, p)) + 0.3 * rng.normal(size=(n, p)) for p in (3, 4)]
    return Xs, (H[:, 0] > 0).astype(int), H[:, 0] + 0.5 * H[:, 1]


@pytest.mark.parametrize(
    "kwargs, expected",
    [
        (dict(solver="auto", n_rows=6001), "cg"),
        (dict(solver="auto", n_rows=6000), "dense"),
        (dict(solver="auto", n_rows=10**5, auto=True), "dense"),
        (dict(solver="auto", n_rows=10**5, loss="hinge"), "dense"),
        (dict(solver="auto", n_rows=10**5, graph="knn"), "dense"),
        (dict(solver="dense", n_rows=10**5), "dense"),
        (dict(solver="cg", n_rows=10), "cg"),
    ],
)
def test_choose_solver(kwargs, expected):
    args = dict(loss="squared", auto=False, precomputed=False, optimize_c=False, graph="kernel")
    args.update(laplacian="unnormalized", laplacian_power=1)
    assert choose_solver(**{**args, **kwargs}) == expected


@pytest.mark.parametrize(
    "bad, message",
    [
        (dict(auto=True), "leave-one-out"),
        (dict(precomputed=True), "real kernels"),
        (dict(optimize_c=True), "optimize_c=False"),
        (dict(laplacian_power=2), "laplacian_power=1"),
    ],
)
def test_choose_solver_refuses_impossible_cg(bad, message):
    args = dict(solver="cg", loss="squared", n_rows=10, auto=False, precomputed=False, optimize_c=False)
    args.update(graph="kernel", laplacian="unnormalized", laplacian_power=1)
    with pytest.raises(ValueError, match=message):
        choose_solver(**{**args, **bad})


def test_kernels_grams_and_outputs_match_the_estimator():
    """bind_kernels + train_grams give the Gram matrices of the bound kernels (median-heuristic
    RBF per view), and view_outputs the estimator's per-view outputs, from views or from the
    precomputed test Gram matrices."""
    Xs, _, y = _views()
    kernels = bind_kernels("rbf", None, Xs)
    Ks = train_grams(kernels, Xs)
    for k, X, K in zip(kernels, Xs, Ks):
        np.testing.assert_allclose(K, rbf_kernel(X, gamma=dict(k.params)["gamma"]), rtol=1e-12)
    est = MVLRegressor(gamma_B=0.0, gamma_W=0.0).fit(Xs, y)
    T = [X[:5] + 0.1 for X in Xs]
    expected = est.per_view_output(T)
    np.testing.assert_allclose(
        view_outputs(est.dual_coef_, T, est.kernels_, est.X_fit_), expected, rtol=1e-12
    )
    Kt = [np.asarray(rbf_kernel(t, X, gamma=dict(k.params)["gamma"])) for k, t, X in zip(kernels, T, Xs)]
    np.testing.assert_allclose(view_outputs(est.dual_coef_, Kt), expected, rtol=1e-10)


def test_input_checks_of_the_steps():
    Xs, _, _ = _views()
    with pytest.raises(ValueError, match="lists of length 2"):
        bind_kernels(["rbf"] * 3, None, Xs)
    with pytest.raises(TypeError, match="kernel\\[1\\]"):
        bind_kernels(["rbf", 3.0], None, Xs)
    with pytest.raises(ValueError, match="must apply to all views"):
        bind_kernels(["rbf", "precomputed"], None, Xs)
    K = np.asarray(rbf_kernel(Xs[0]))
    with pytest.raises(ValueError, match="not symmetric"):
        check_precomputed_grams([K + np.triu(K, 1)], 5)
    with pytest.raises(ValueError, match="only 24 rows"):
        check_precomputed_grams([K], 30)
    with pytest.raises(ValueError, match="NaN"):
        train_grams(None, [np.where(np.eye(3) > 0, np.nan, 1.0)])
    np.testing.assert_array_equal(combination_weights(None, 4), np.full(4, 0.25))
    with pytest.raises(ValueError, match="length n_views=2"):
        combination_weights([1.0, 2.0, 3.0], 2)
    with pytest.raises(ValueError, match="zero vector"):
        combination_weights([0.0, 0.0], 2)


def test_fit_least_squares_is_the_solve_and_optc_lowers_the_objective():
    Xs, _, y = _views()
    Ks = train_grams(bind_kernels("rbf", None, Xs), Xs)
    Ps = [psd_sqrt(K) for K in Ks]
    Ls = view_laplacians(Ks)
    Y, c = y[:, None], np.array([0.5, 0.5])
    A, c_out, trace, history = fit_least_squares(Ks, Y, c, 1e-3, 1e-4, 1e-4, Ls, Ps)
    np.testing.assert_allclose(A, mvl_ls_solve(Ks, Y, c, 1e-3, 1e-4, 1e-4, Ls), rtol=1e-10)
    assert c_out is c and history.shape == (1, 2) and trace.method == "mvl-ls"
    A, c_opt, trace, history = fit_least_squares(Ks, Y, c, 1e-3, 1e-4, 1e-4, Ls, Ps, optimize_c=True)
    objective = trace.traces["objective"]
    assert trace.converged and trace.method == "mvl-ls-optc"
    assert np.all(np.diff(objective[:-1]) <= 1e-12 * abs(objective[0]))  # alternating minimisation
    np.testing.assert_allclose(np.linalg.norm(c_opt), np.linalg.norm(c), rtol=1e-12)
    np.testing.assert_array_equal(history[-1], c_opt)


def test_fit_svm_matches_the_classifier():
    Xs, labels, _ = _views()
    est = MVLClassifier(loss="simplex_hinge", gamma_B=1e-4, gamma_W=1e-4, graph="kernel").fit(Xs, labels)
    Ks = train_grams(est.kernels_, est.X_fit_)
    A, alpha, trace, n_iter = fit_svm(
        [psd_sqrt(K) for K in Ks], view_laplacians(Ks), labels, 2, est.c_, 1e-5, 1e-4, 1e-4, "simplex_hinge"
    )
    np.testing.assert_allclose(A, est.dual_coef_, atol=1e-12)
    np.testing.assert_allclose(alpha, est.dual_alpha_, atol=1e-12)
    assert trace.converged and n_iter == est.n_iter_ > 0


def test_choose_manifold_follows_its_table():
    """The kept problem is the table's winner: the supervised one on the ``l`` labelled points
    at ``SUPERVISED_MANIFOLD`` unless a candidate gains more than one standard error in
    leave-one-out accuracy, then the largest gain on all ``N`` points; for labels that follow
    the views and for labels drawn independently of them."""
    Xs, labels, _ = _views(n=40)
    Ks = train_grams(bind_kernels("rbf", None, Xs), Xs)
    ell, N = 16, 40
    random_labels = np.random.default_rng(3).integers(0, 2, ell)
    for codes in (labels[:ell], random_labels):
        Y = np.where(codes[:, None] == np.arange(2), 1.0, -1.0)
        choice = choose_manifold(
            Ks, Y, np.full(2, 0.5), 1e-3, "auto", "auto", "knn", view_laplacians, 3, "accuracy"
        )
        table = choice.table
        assert table["uses_unlabeled"].tolist() == [False] + [True] * 8
        ok = np.flatnonzero(table["gain"] > table["gain_se"])
        if ok.size == 0:
            assert (choice.gamma_B, choice.gamma_W, choice.graph) == tuple(SUPERVISED_MANIFOLD.values())
            assert choice.Ks[0].shape == choice.Ls[0].shape == (ell, ell)
        else:
            best = ok[np.argmax(table["gain"][ok])]
            assert (choice.gamma_B, choice.gamma_W) == (table["gamma_B"][best], table["gamma_W"][best])
            assert choice.graph == "knn" and choice.Ks[0].shape == (N, N)
    assert supervised_manifold("auto", "auto", "knn") == (1e-6, 1e-6, "kernel")
    assert supervised_manifold(0.1, "auto", "knn") == (0.1, 1e-6, "kernel")
    assert supervised_manifold("auto", 0.2, "knn") == (1e-6, 0.2, "knn")
