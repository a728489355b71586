"""Shared estimator plumbing: multi-view input checks and label encoding (DESIGN §3)."""

from __future__ import annotations

import numpy as np
from sklearn.exceptions import NotFittedError

from .datasets import check_views

__all__ = ["MultiViewMixin", "PersistenceMixin", "encode_labels", "one_vs_rest_targets"]


class PersistenceMixin:
    """``est.save(path)``; read back with ``bayesmv.load(path)`` (no pickle, see ``bayesmv.persistence``).

    Attributes named in the class attribute ``_persistence_exclude`` are not saved.
    """

    _persistence_exclude: tuple = ()

    def save(self, path):
        from .persistence import save

        return save(self, path)


class MultiViewMixin(PersistenceMixin):
    """Fit/predict-time validation of a list of views for scikit-learn style estimators.

    ``fit`` calls ``_validate_fit(Xs, y)``, which records ``n_views_`` and
    ``n_features_per_view_``; ``predict`` calls ``_validate_predict(Xs)``, which raises
    ``NotFittedError`` before ``fit`` and ``ValueError`` for a different number of views or
    features than at fit time.
    """

    _allow_missing = False
    _min_views = 1

    def _validate_fit(self, Xs, y=None):
        out = check_views(Xs, y, allow_missing=self._allow_missing, min_views=self._min_views)
        views = out[0] if y is not None else out
        self.n_views_ = len(views)
        self.n_features_per_view_ = tuple(X.shape[1] for X in views)
        return out

    def _check_fitted(self):
        if not hasattr(self, "n_views_"):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet; call 'fit' before using it."
            )

    def _validate_predict(self, Xs):
        self._check_fitted()
        return check_views(Xs, allow_missing=self._allow_missing, n_features=self.n_features_per_view_)


def encode_labels(y):
    """``classes_`` (sorted unique labels) and integer codes; at least two classes required."""
    y = np.asarray(y)
    if y.dtype.kind == "f" and not np.all(y == np.round(y)):
        raise ValueError("y has non-integer float values; a classifier needs class labels (use a regressor?)")
    classes, codes = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(f"y has a single class ({classes[0]!r}); classification needs at least 2 classes")
    return classes, codes


def one_vs_rest_targets(codes, n_classes):
    """±1 targets: one column for two classes (+1 = ``classes_[1]``), else one per class."""
    codes = np.asarray(codes)
    if n_classes == 2:
        return np.where(codes == 1, 1.0, -1.0)[:, None]
    return np.where(codes[:, None] == np.arange(n_classes)[None, :], 1.0, -1.0)
