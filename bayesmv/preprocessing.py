"""Pipeline steps over multi-view data."""

from __future__ import annotations

from sklearn.base import BaseEstimator, TransformerMixin, clone

from .base import MultiViewMixin
from .datasets import MultiViewArray, is_view_list

__all__ = ["ViewTransformer"]


class ViewTransformer(TransformerMixin, MultiViewMixin, BaseEstimator):
    """One scikit-learn transformer per view, as a step of a ``Pipeline`` over multi-view data.

    ``make_pipeline(ViewTransformer(StandardScaler()), MVMLClassifier())`` scales each view with
    its own scaler fitted on the training views. Takes a list of views, a
    :class:`~bayesmv.MultiViewArray` or one 2-D array (a single view) and returns the same kind.
    Missing views (all-NaN rows) are passed to the transformers, which decide: scikit-learn's
    scalers ignore NaN in ``fit`` and keep it in ``transform``.

    Parameters
    ----------
    transformer : transformer or list of transformers
        One scikit-learn transformer, cloned for every view, or a list with one per view.

    Attributes
    ----------
    transformers_ : list of transformers
        The fitted clones, one per view.
    n_views_ : int
        Number of views seen in :meth:`fit`.
    n_features_per_view_ : tuple of int
        Number of features of each view seen in :meth:`fit`.
    n_features_in_ : int
        Total number of features of the views seen in :meth:`fit`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.preprocessing import StandardScaler
    >>> from bayesmv.preprocessing import ViewTransformer
    >>> Xs = [np.array([[0.0], [2.0]]), np.array([[1.0, 5.0], [3.0, 5.0]])]
    >>> scaled = ViewTransformer(StandardScaler()).fit_transform(Xs)
    >>> scaled[0]
    array([[-1.],
           [ 1.]])
    >>> scaled[1]
    array([[-1.,  0.],
           [ 1.,  0.]])
    """

    _allow_missing = True

    def __init__(self, transformer):
        self.transformer = transformer

    def fit(self, Xs, y=None):
        """Fit a clone of ``transformer`` (or of its entry for that view) on each view; returns ``self``.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v), MultiViewArray or ndarray
            The training views, or one 2-D array (a single view).
        y : array-like of shape (n_samples,), default=None
            Targets, passed to each transformer's ``fit``.

        Returns
        -------
        self : object
            The fitted transformer.

        Raises
        ------
        ValueError
            If the views are invalid, or ``transformer`` is a list whose length differs from the
            number of views.
        """
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
        """Each view transformed by its fitted transformer, as a list of views.

        One 2-D array for a single view, a ``MultiViewArray`` for a ``MultiViewArray``.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v), MultiViewArray or ndarray
            The views, with as many views and features as in :meth:`fit`, or one 2-D array
            (a single view).

        Returns
        -------
        Xs_new : list of ndarray, MultiViewArray or ndarray
            The transformed views, of the same kind as ``Xs``.
        """
        views = self._validate_predict(Xs)
        out = [t.transform(X) for t, X in zip(self.transformers_, views)]
        if isinstance(Xs, MultiViewArray):
            return MultiViewArray(out)
        return out if is_view_list(Xs) else out[0]
