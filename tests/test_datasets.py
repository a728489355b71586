"""Bundled data, the shared view validator, splits and the papers' generators."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.svm import SVC

from bayesmv import datasets as D
from bayesmv import kernels as K


def test_load_mfeat_views_and_labels():
    Xs, y = D.load_mfeat()
    assert [X.shape for X in Xs] == [(2000, 76), (2000, 216), (2000, 64), (2000, 240), (2000, 47), (2000, 6)]
    assert all(X.dtype == np.float64 for X in Xs)
    assert y.dtype == np.int64 and np.array_equal(np.bincount(y), np.full(10, 200))
    sub, y2 = D.load_mfeat(["kar", 0])
    np.testing.assert_array_equal(sub[0], Xs[2])
    np.testing.assert_array_equal(sub[1], Xs[0])
    np.testing.assert_array_equal(y, y2)
    with pytest.raises(ValueError, match="unknown mfeat view"):
        D.load_mfeat(["nope"])
    with pytest.raises(ValueError, match="at least one view"):
        D.load_mfeat([])


def _views():
    rng = np.random.default_rng(0)
    return [rng.random((6, 3)), rng.random((6, 2))]


@pytest.mark.parametrize(
    "make, kwargs, exc, match",
    [
        (lambda v: np.stack([v[0], v[0]]), {}, ValueError, "list of 2-D arrays"),
        (lambda v: v[0][:, 0], {}, ValueError, "Reshape your data"),
        (lambda v: v[0].astype(complex), {}, ValueError, "Complex data not supported"),
        (lambda v: v[0].reshape(6, 3, 1)[:, :, 0] * np.nan, {}, ValueError, r"^X contains NaN"),
        (lambda v: [], {}, ValueError, "at least 1"),
        (lambda v: [v[0], v[1][:5]], {}, ValueError, r"same number of samples, got \[6, 5\]"),
        (lambda v: [v[0], v[1][:, 0]], {}, ValueError, r"Xs\[1\] must be 2-D"),
        (lambda v: [v[0], np.empty((6, 0))], {}, ValueError, r"Xs\[1\] is an empty view"),
        (lambda v: [np.empty((0, 3))], {}, ValueError, r"Xs\[0\] has 0 samples"),
        (lambda v: [v[0], np.where(np.eye(6, 2) > 0, np.nan, v[1])], {}, ValueError, r"Xs\[1\] contains NaN"),
        (
            lambda v: [v[0], np.where(np.eye(6, 2) > 0, np.inf, v[1])],
            {"allow_missing": True},
            ValueError,
            "inf",
        ),
        (
            lambda v: [v[0], np.where(np.eye(6, 2) > 0, np.nan, v[1])],
            {"allow_missing": True},
            ValueError,
            "partially-NaN",
        ),
        (
            lambda v: [np.full((6, 3), np.nan), v[1]],
            {"allow_missing": True},
            ValueError,
            "missing for every sample",
        ),
        (lambda v: [np.array([["a", "b"]] * 6)], {}, TypeError, "numeric"),
        (lambda v: [np.array([[object()]] * 6)], {}, TypeError, "numeric"),
        (
            lambda v: v,
            {"n_features": (3, 4)},
            ValueError,
            r"Xs\[1\] has 2 features, but the estimator is expecting 4 features as input",
        ),
        (lambda v: v, {"n_features": (3,)}, ValueError, "fitted with 1"),
        (lambda v: v, {"min_views": 3}, ValueError, "at least 3"),
    ],
)
def test_check_views_errors_name_the_problem(make, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        D.check_views(make(_views()), **kwargs)


def test_check_views_missing_samples_and_labels():
    v = _views()
    v[0][2] = np.nan
    v[1][4] = np.nan
    out, y = D.check_views(v, np.arange(6), allow_missing=True)
    assert len(out) == 2 and y.shape == (6,)
    np.testing.assert_array_equal(D.observed_mask(out), [[1, 1, 0, 1, 1, 1], [1, 1, 1, 1, 0, 1]])
    v[1][2] = np.nan
    with pytest.raises(ValueError, match="sample 2 of Xs is missing from every view"):
        D.check_views(v, allow_missing=True)
    with pytest.raises(ValueError, match="y has 5 entries"):
        D.check_views(_views(), np.arange(5))
    with pytest.raises(ValueError, match="y contains NaN"):
        D.check_views(_views(), np.array([0, 1, np.nan, 1, 0, 1]))
    with pytest.raises(ValueError, match="y must be 1-D"):
        D.check_views(_views(), np.zeros((6, 2)))
    _, ys = D.check_views(_views(), np.array(list("abcabc")))
    assert ys.dtype.kind == "U"


def test_check_positive():
    assert D.check_positive("C", 2.0) == 2.0
    assert D.check_positive("n", 0, allow_zero=True, integer=True) == 0
    for bad in (0, -1, np.nan, np.inf, "1", True, None):
        with pytest.raises(ValueError, match="C must be"):
            D.check_positive("C", bad)
    with pytest.raises(ValueError, match="integer"):
        D.check_positive("n", 1.5, integer=True)


def test_split_and_standardize_views():
    Xs, y = D.load_mfeat(["fou", "mor"])
    tr, te, ytr, yte = D.train_test_split_views(Xs, y, test_size=0.25, random_state=1)
    assert tr[0].shape == (1500, 76) and te[1].shape == (500, 6) and len(ytr) == 1500
    assert np.array_equal(np.bincount(yte), np.full(10, 50))  # stratified
    # rows stay aligned across views
    idx = np.flatnonzero((Xs[0] == te[0][0]).all(1))
    assert len(idx) == 1 and np.array_equal(Xs[1][idx[0]], te[1][0])
    s_tr, s_te = D.standardize_views(tr, te)
    np.testing.assert_allclose(s_tr[0].mean(0), 0, atol=1e-10)
    nonconst = tr[1].std(0) > 0
    np.testing.assert_allclose(s_tr[1].std(0)[nonconst], 1, atol=1e-10)
    np.testing.assert_allclose(s_te[0], (te[0] - tr[0].mean(0)) / tr[0].std(0), atol=1e-10)
    miss = D.drop_views(tr, 0.3, random_state=0)
    scaled = D.MultiViewStandardScaler().fit_transform(miss)
    assert np.isnan(scaled[0]).all(1).sum() == np.isnan(miss[0]).all(1).sum()
    np.testing.assert_allclose(np.nanmean(scaled[0], 0), 0, atol=1e-10)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        D.MultiViewStandardScaler().transform(tr)


def test_drop_views_keeps_one_view_per_sample():
    Xs = [np.random.default_rng(v).random((200, 3)) for v in range(4)]
    out = D.drop_views(Xs, 0.5, random_state=3, n_missing=3)
    obs = D.observed_mask(out)
    assert obs.any(0).all()
    assert (obs.sum(0) == 1).sum() == 100 and (obs.sum(0) == 4).sum() == 100
    assert not np.isnan(Xs[0]).any()  # input untouched
    np.testing.assert_array_equal(D.drop_views(Xs, 0.5, random_state=3, n_missing=3)[2], out[2])
    with pytest.raises(ValueError, match="n_missing"):
        D.drop_views(Xs, 0.5, n_missing=4)
    with pytest.raises(ValueError, match="fraction"):
        D.drop_views(Xs, 1.5)


def _groups_by_search(observed, min_samples):
    """The views' groups by a depth-first search over every pair's count of shared samples."""
    V = observed.shape[0]
    shared = [[int(np.sum(observed[a] & observed[b])) for b in range(V)] for a in range(V)]
    groups, seen = [], set()
    for start in range(V):
        if start in seen:
            continue
        group, stack = set(), [start]
        while stack:
            a = stack.pop()
            if a not in group:
                group.add(a)
                stack += [b for b in range(V) if shared[a][b] >= min_samples and b not in group]
        seen |= group
        groups.append(tuple(sorted(group)))
    return groups


def test_coobserved_view_groups_match_a_search_over_pairs():
    """Random masks of 2–6 views (each sample keeping at least one): the groups equal a
    depth-first search's over the pairs' shared-sample counts, for thresholds 1, 3 and 14;
    two views with every sample losing one (``drop_views`` at fraction 1: half of the view blocks,
    the held-out benchmark's 50 % missing) leave no sample with both (two groups)."""
    rng = np.random.default_rng(0)
    n_split = 0
    for trial in range(60):
        V = int(rng.integers(2, 7))
        observed = rng.uniform(size=(V, 40)) < rng.uniform(0.05, 0.6)
        observed[rng.integers(0, V, size=40), np.arange(40)] = True
        for min_samples in (1, 3, 14):
            groups = D.coobserved_view_groups(observed, min_samples=min_samples)
            assert groups == _groups_by_search(observed, min_samples)
            n_split += len(groups) > 1
    assert n_split > 20  # both outcomes were exercised
    Xs, _ = D.make_latent_views(n_samples=30, n_features=3, random_state=0)
    assert D.coobserved_view_groups(D.observed_mask(Xs)) == [(0, 1)]
    assert D.coobserved_view_groups(D.observed_mask(D.drop_views(Xs, 1.0, random_state=0))) == [(0,), (1,)]


def test_make_latent_views_is_nonlinear():
    Xs, y = D.make_latent_views(n_samples=400, n_views=2, n_features=8, random_state=0)
    Z = np.hstack(Xs)
    lin = cross_val_score(LogisticRegression(max_iter=2000), Z, y, cv=5).mean()
    rbf = cross_val_score(SVC(kernel="rbf", gamma="scale"), Z, y, cv=5).mean()
    assert lin < 0.65 and rbf > 0.85, (lin, rbf)
    Xs2, y2 = D.make_latent_views(n_samples=50, n_views=3, n_features=[3, 4, 5], rule="xor", random_state=1)
    assert [X.shape[1] for X in Xs2] == [3, 4, 5] and set(np.unique(y2)) == {0, 1}
    with pytest.raises(ValueError, match="rule"):
        D.make_latent_views(rule="spiral")


def test_make_latent_views_cosines_rule():
    """Labels are Σ_k cos(a_kᵀh) above its median (h regenerated from the seed, and the one
    ``return_latent`` gives); the default has a slow and a fast wave; a bad frequency array is
    refused."""
    Xs, y = D.make_latent_views(n_samples=500, rule="cosines", random_state=3)
    H = np.random.default_rng(3).standard_normal((500, 2))  # the generator's first draw
    Xs_again, y_again, H_returned = D.make_latent_views(
        n_samples=500, rule="cosines", random_state=3, return_latent=True
    )
    np.testing.assert_array_equal(H_returned, H)
    np.testing.assert_array_equal(y_again, y)
    for X, X_again in zip(Xs, Xs_again):
        np.testing.assert_array_equal(X, X_again)
    score = np.cos(0.5 * H[:, 0]) + np.cos(4.0 * H[:, 1])
    np.testing.assert_array_equal(y, score > np.median(score))
    _, y3 = D.make_latent_views(
        n_samples=200, n_latent=3, rule="cosines", frequencies=[[0, 0, 2.0]], random_state=4
    )
    H3 = np.random.default_rng(4).standard_normal((200, 3))
    np.testing.assert_array_equal(y3, np.cos(2 * H3[:, 2]) > np.median(np.cos(2 * H3[:, 2])))
    with pytest.raises(ValueError, match="frequencies"):
        D.make_latent_views(n_latent=3, rule="cosines")


def test_make_mvml_toy_second_view_is_shear_then_rotation():
    (X1, X2), y = D.make_mvml_toy(n_samples=60, shear=1.5, angle=0.7, random_state=0)
    S = np.array([[1.0, 1.5], [0.0, 1.0]])
    R = np.array([[np.cos(0.7), -np.sin(0.7)], [np.sin(0.7), np.cos(0.7)]])
    np.testing.assert_allclose(X2, X1 @ (R @ S).T, atol=1e-12)
    assert np.bincount(y).tolist() == [30, 30]


@pytest.mark.parametrize("name", ["TOYL", "TOYG1", "TOYG0.1", "TOYLG1"])
def test_make_mkc_toy_structure(name):
    Ks, Xs = D.make_mkc_toy(name, random_state=0)
    assert len(Ks) == 5 and all(K_.shape == (100, 100) for K_ in Ks)
    assert [X.shape[1] for X in Xs] == [5, 5, 10, 10, 10]
    assert all(np.abs(X[:10]).max() <= 1 for X in Xs)
    # views 3-5 share one combination matrix of their 10 basis points (unique in 10-D)
    A = np.linalg.solve(Xs[2][:10].T, Xs[2][10:].T).T
    assert A.min() >= 0 and A.max() <= 1
    np.testing.assert_allclose(Xs[3][10:], A @ Xs[3][:10], atol=1e-8)
    np.testing.assert_allclose(Xs[4][10:], A @ Xs[4][:10], atol=1e-8)
    for K_ in Ks:
        assert np.linalg.eigvalsh(K_).min() > -1e-8
    if name == "TOYL":
        np.testing.assert_allclose(Ks[0], Xs[0] @ Xs[0].T, atol=1e-12)
        assert np.linalg.matrix_rank(Ks[2]) == 10
    if name == "TOYG0.1":
        np.testing.assert_allclose(Ks[3], np.asarray(K.rbf_kernel(Xs[3], gamma=50.0)), atol=1e-12)
    with pytest.raises(ValueError, match="name"):
        D.make_mkc_toy("TOY?")


def test_make_mkc_toy_groups_set_which_views_share_A():
    """Views of one group share A (recovered from views 3-5, whose bases are 10 x 10); the default
    groups keep views 1-2 independent of it, ``groups=((0, 1, 2, 3, 4),)`` ties them to it."""

    def residual_on_views_1_2(Xs):
        A = np.linalg.solve(Xs[2][:10].T, Xs[2][10:].T).T
        return max(np.abs(Xs[m][10:] - A @ Xs[m][:10]).max() for m in (0, 1))

    _, Xs = D.make_mkc_toy("TOYL", random_state=1)
    assert residual_on_views_1_2(Xs) > 0.1
    Ks, Xs = D.make_mkc_toy("TOYL", random_state=1, groups=((0, 1, 2, 3, 4),))
    assert residual_on_views_1_2(Xs) < 1e-8
    np.testing.assert_allclose(Ks[0], D.mkc_toy_kernel("linear", Xs[0]), atol=1e-12)
    for bad in (((0, 1), (2, 3)), ((0, 1, 2), (2, 3, 4)), ((0, 1, 2, 3, 4, 5),)):
        with pytest.raises(ValueError, match="groups"):
            D.make_mkc_toy("TOYL", groups=bad)


def test_make_multitask_outputs_are_linear_in_phi():
    X, Y = D.make_multitask(n_samples=300, n_tasks=4, random_state=2)
    assert X.shape == (300, 20) and Y.shape == (300, 4) and X.min() >= 0 and X.max() <= 1
    x1, x2, x3, x4, x5 = X[:, :5].T
    phi = np.stack([x1**2, x4**2, x1 * x2, x3 * x5, x2, x4, np.ones(300)], 1)
    W, res, *_ = np.linalg.lstsq(phi, Y, rcond=None)
    np.testing.assert_allclose(phi @ W, Y, atol=1e-10)
    # task weights w^i ~ N(0, diag(0.5, 0.25, 0.1, 0.05, 0.15, 0.1, 0.15)): recover them per task
    X, Y = D.make_multitask(n_samples=30, n_tasks=4000, random_state=0)
    x1, x2, x3, x4, x5 = X[:, :5].T
    phi = np.stack([x1**2, x4**2, x1 * x2, x3 * x5, x2, x4, np.ones(30)], 1)
    W = np.linalg.lstsq(phi, Y, rcond=None)[0]
    np.testing.assert_allclose(W.var(axis=1), [0.5, 0.25, 0.1, 0.05, 0.15, 0.1, 0.15], rtol=0.1)
    np.testing.assert_allclose(W.mean(axis=1), 0, atol=0.05)


def test_is_view_list_tells_views_from_rows():
    v = _views()
    assert D.is_view_list(v) and D.is_view_list(tuple(v))
    assert not D.is_view_list(v[0]) and not D.is_view_list(v[0].tolist()) and not D.is_view_list([])
    assert D.is_view_list([[[1.0, 2.0], [3.0]], v[1]])  # a ragged first view is still a view, not a row


def test_check_label_vector_ravels_a_column_with_a_warning():
    from sklearn.exceptions import DataConversionWarning

    with pytest.warns(DataConversionWarning, match="column-vector y"):
        y = D.check_label_vector(np.arange(4)[:, None])
    np.testing.assert_array_equal(y, np.arange(4))
    with pytest.raises(ValueError, match=r"y must be 1-D \(n_samples,\), got shape \(4, 2\)"):
        D.check_label_vector(np.zeros((4, 2)))
