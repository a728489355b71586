"""Pipeline steps over multi-view data."""

from __future__ import annotations

from sklearn.base import BaseEstimator, TransformerMixin, clone

from .base import MultiViewMixin
from .datasets import MultiViewArray, is_view_list

__all__ = ["ViewTransformer"]


class ViewTransformer(TransformerMixin, MultiViewMixin, BaseEstimator):
    """One scikit-learn transformer per view, as a step of a ``Pipeline`` over multi-view data.

    ``make_pipeline(ViewTransformer(StandardScaler()), MVMLClassifier())`` scales each view with
    its own scaler fitted on the training views. ``transformer``: one transformer, cloned for
    every view, or a list with one per view. Takes a list of views, a
    :class:`~bayesmv.MultiViewArray` or one 2-D array (a single view) and returns the same kind.
    Missing views (all-NaN rows) are passed to the transformers, which decide: scikit-learn's
    scalers ignore NaN in ``fit`` and keep it in ``transform``.

    Attributes: ``transformers_`` (the fitted clones, one per view), ``n_views_``,
    ``n_features_per_view_``.
    """

    _allow_missing = True

    def __init__(self, transformer):
        self.transformer = transformer

    def fit(self, Xs, y=None):
        """Fit a clone of ``transformer`` (or of its entry for that view) on each view; returns ``self``."""
        views = self._validate_fit(Xs)
        if isinstance(self.transformer, (list, tuple)):
            if len(self.transformer) != len(views):
                raise ValueError(f"transformer has {len(self.transformer)} entries for {len(views)} views")
            templates = list(self.transformer)
        else:
            templates = [self.transformer] * len(views)
        self.transformers_ = [clone(t).fit(X, y) for t, X in zip(templates, views)]
        return self

    def transform(self, Xs):
        """Each view transformed by its fitted transformer, as a list of views (one 2-D array for a
        single view, a ``MultiViewArray`` for a ``MultiViewArray``).
        """
        views = self._validate_predict(Xs)
        out = [t.transform(X) for t, X in zip(self.transformers_, views)]
        if isinstance(Xs, MultiViewArray):
            return MultiViewArray(out)
        return out if is_view_list(Xs) else out[0]
