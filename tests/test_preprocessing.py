"""ViewTransformer: one scikit-learn transformer per view."""

import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.exceptions import NotFittedError
from sklearn.preprocessing import StandardScaler

from bayesmv import MultiViewArray
from bayesmv.preprocessing import ViewTransformer


def _views(n=20, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(3.0, 2.0, (n, 3)), rng.normal(-1.0, 10.0, (n, 5))]


def test_each_view_gets_its_own_fitted_transformer():
    Xs = _views()
    step = ViewTransformer(StandardScaler()).fit(Xs)
    assert len(step.transformers_) == 2 and step.transformers_[0] is not step.transformers_[1]
    out = step.transform(Xs)
    assert isinstance(out, list)
    for X, Z in zip(Xs, out):
        np.testing.assert_allclose(Z, (X - X.mean(0)) / X.std(0), rtol=1e-12)
    again = ViewTransformer(StandardScaler()).fit_transform(MultiViewArray(Xs))
    assert isinstance(again, MultiViewArray)  # the input's kind comes back
    for Z, W in zip(out, again.views):
        np.testing.assert_allclose(W, Z, rtol=1e-12)


def test_one_transformer_per_view_and_missing_views():
    Xs = _views()
    Xs[1][[3, 8]] = np.nan  # sample 3 and 8 miss view 1
    out = ViewTransformer([StandardScaler(), PCA(2)]).fit_transform([Xs[0], Xs[0]])
    assert [Z.shape for Z in out] == [(20, 3), (20, 2)]
    scaled = ViewTransformer(StandardScaler()).fit(Xs).transform(Xs)
    assert np.isnan(scaled[1][[3, 8]]).all() and not np.isnan(np.delete(scaled[1], [3, 8], axis=0)).any()
    observed = np.delete(Xs[1], [3, 8], axis=0)
    np.testing.assert_allclose(np.nanmean(scaled[1], axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(scaled[1][0], (Xs[1][0] - observed.mean(0)) / observed.std(0), rtol=1e-12)


def test_errors():
    Xs = _views()
    with pytest.raises(ValueError, match="2 entries for 3 views"):
        ViewTransformer([StandardScaler(), StandardScaler()]).fit(Xs + [Xs[0]])
    with pytest.raises(NotFittedError):
        ViewTransformer(StandardScaler()).transform(Xs)
    step = ViewTransformer(StandardScaler()).fit(Xs)
    with pytest.raises(ValueError, match="features"):
        step.transform([Xs[0], Xs[1][:, :2]])
