"""MultiViewArray: a list of views that scikit-learn's model selection indexes over samples."""

import numpy as np
import pytest
from sklearn.model_selection import KFold, train_test_split
from sklearn.utils import _safe_indexing, check_consistent_length

from bayesmv import MultiViewArray
from bayesmv.datasets import check_views


def _views(n=12, dims=(3, 2, 4), seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((n, d)) for d in dims]


def _assert_views_equal(got, expected):
    assert isinstance(got, MultiViewArray)
    assert got.n_features_per_view == tuple(X.shape[1] for X in expected)
    for A, B in zip(got.views, expected):
        np.testing.assert_array_equal(A, B)


def test_holds_the_views_and_their_boundaries():
    Xs = _views()
    X = MultiViewArray(Xs)
    assert len(X) == 12 and X.shape == (12, 9) and X.ndim == 2 and X.n_views == 3
    assert X.n_features_per_view == (3, 2, 4)
    assert all(A is B for A, B in zip(X.views, Xs))  # wrapped, not copied
    np.testing.assert_array_equal(np.asarray(X), np.hstack(Xs))
    with pytest.raises(ValueError, match="without a copy"):
        np.array(X, copy=False)
    _assert_views_equal(MultiViewArray.from_columns(np.hstack(Xs), (3, 2, 4)), Xs)
    _assert_views_equal(MultiViewArray(X), Xs)
    assert "n_features_per_view=(3, 2, 4)" in repr(X)


@pytest.mark.parametrize(
    "key",
    [np.array([5, 0, 5, 11]), np.arange(12) % 3 == 0, slice(2, 9, 3), [1, 2], 7, np.int64(4)],
    ids=["int array", "bool mask", "slice", "list", "int", "numpy int"],
)
def test_indexes_every_view_over_samples(key):
    Xs = _views()
    rows = [key] if np.isscalar(key) or isinstance(key, np.integer) else key
    expected = [X[rows] for X in Xs]
    X = MultiViewArray(Xs)
    _assert_views_equal(X[key], expected)
    _assert_views_equal(X[key, ...], expected)  # the form scikit-learn's _safe_indexing uses


def test_refuses_column_indexing_and_bad_input():
    X = MultiViewArray(_views())
    with pytest.raises(IndexError, match="samples only"):
        X[:, 0]
    with pytest.raises(IndexError):
        X[np.ones(5, dtype=bool)]  # a mask of the wrong length
    with pytest.raises(TypeError, match="list of 2-D arrays"):
        MultiViewArray(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="same number of samples"):
        MultiViewArray([np.zeros((4, 3)), np.zeros((5, 3))])
    with pytest.raises(ValueError, match="2-D"):
        MultiViewArray([np.zeros(4)])
    with pytest.raises(ValueError, match="at least one view"):
        MultiViewArray([])
    with pytest.raises(ValueError, match="sum to the 9 columns"):
        MultiViewArray.from_columns(np.zeros((4, 9)), (3, 3))


def test_missing_views_survive_indexing():
    Xs = _views()
    Xs[1][[2, 7]] = np.nan
    X = MultiViewArray(Xs)[np.array([7, 0, 2])]
    assert np.isnan(X.views[1][[0, 2]]).all() and not np.isnan(X.views[1][1]).any()
    assert not np.isnan(X.views[0]).any() and not np.isnan(X.views[2]).any()
    views = check_views(X, allow_missing=True)  # the estimators' validation reads it as its views
    assert [V.shape for V in views] == [(3, 3), (3, 2), (3, 4)]


def test_scikit_learn_splits_it_like_an_array():
    Xs, y = _views(), np.arange(12)
    X = MultiViewArray(Xs)
    check_consistent_length(X, y)
    idx = np.array([3, 1, 10])
    _assert_views_equal(_safe_indexing(X, idx), [V[idx] for V in Xs])
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=4, random_state=0)
    _assert_views_equal(X_train, [V[y_train] for V in Xs])
    _assert_views_equal(X_test, [V[y_test] for V in Xs])
    for train, test in KFold(3).split(X, y):
        _assert_views_equal(_safe_indexing(X, test), [V[test] for V in Xs])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        check_consistent_length(X, y[:5])
