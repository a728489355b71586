"""A multi-view data set that scikit-learn's model selection can index over samples."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["MultiViewArray"]


class MultiViewArray:
    """Views of the same samples, indexed over samples as scikit-learn's tools index ``X``.

    ``MultiViewArray(Xs)`` wraps a list of views ``(n_samples, n_features_v)`` (no copy);
    ``.views`` gives the list back. ``len(X)`` and ``X.shape[0]`` are the number of samples
    (``X.shape[1]`` the features of all views), and ``X[key]`` takes the same rows of every view
    for an integer array, a boolean mask, a slice or one integer (kept 2-D), so
    ``cross_val_score``, ``GridSearchCV`` and ``train_test_split`` split it like an array. Missing
    views (all-NaN rows) stay missing. Columns are not indexed: take them from ``.views``.
    ``np.asarray(X)`` gives the views side by side. Every bayesmv estimator accepts it wherever it
    accepts a list of views.

    Parameters
    ----------
    views : list of array-like of shape (n_samples, n_features_v) or MultiViewArray
        The views, one 2-D array per view, all with the same number of samples (a list or a
        tuple). A ``MultiViewArray`` is wrapped again with the same views.

    Attributes
    ----------
    views : list of ndarray of shape (n_samples, n_features_v)
        The views.
    n_views : int
        Number of views.
    n_features_per_view : tuple of int
        Number of features of each view.
    shape : tuple of int
        ``(n_samples, total number of features)``, as for the views side by side.
    ndim : int
        2: scikit-learn's splitters see a samples × features array.

    Raises
    ------
    TypeError
        If ``views`` is a NumPy array or not a list or tuple.
    ValueError
        If there is no view, a view is not 2-D, or the views have different numbers of
        samples.

    See Also
    --------
    MultiViewArray.from_columns : The views from the column blocks of one 2-D array.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.datasets import MultiViewArray
    >>> X = MultiViewArray([np.zeros((4, 2)), np.ones((4, 3))])
    >>> len(X), X.shape, X.n_features_per_view
    (4, (4, 5), (2, 3))
    >>> X[[0, 2]]
    MultiViewArray(n_samples=2, n_features_per_view=(2, 3))
    >>> np.asarray(X[1]).shape
    (1, 5)
    """

    __slots__ = ("_views",)

    def __init__(self, views):
        if isinstance(views, MultiViewArray):
            views = views.views
        if isinstance(views, np.ndarray) or not isinstance(views, (list, tuple)):
            raise TypeError(
                f"MultiViewArray takes a list of 2-D arrays, one per view; got {type(views).__name__}"
            )
        if not views:
            raise ValueError("MultiViewArray needs at least one view")
        arrays = [np.asarray(X) for X in views]
        for v, X in enumerate(arrays):
            if X.ndim != 2:
                raise ValueError(f"view {v} must be 2-D (n_samples, n_features), got shape {X.shape}")
        counts = [X.shape[0] for X in arrays]
        if len(set(counts)) != 1:
            raise ValueError(f"all views must have the same number of samples, got {counts}")
        self._views = tuple(arrays)

    @classmethod
    def from_columns(cls, X, n_features_per_view):
        """Split a 2-D array's columns into consecutive views of ``n_features_per_view``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The views side by side.
        n_features_per_view : sequence of int
            Number of columns of each view, in order; positive, summing to ``n_features``.

        Returns
        -------
        X_views : MultiViewArray
            The views, each a block of consecutive columns of ``X``.

        Raises
        ------
        ValueError
            If ``X`` is not 2-D, or the sizes are not positive or do not sum to its number of
            columns.

        Examples
        --------
        >>> import numpy as np
        >>> from bayesmv.datasets import MultiViewArray
        >>> X = MultiViewArray.from_columns(np.arange(10.0).reshape(2, 5), [2, 3])
        >>> X.n_features_per_view
        (2, 3)
        >>> X.views[1]
        array([[2., 3., 4.],
               [7., 8., 9.]])
        """
        X = np.asarray(X)
        sizes = [int(d) for d in n_features_per_view]
        if X.ndim != 2 or any(d <= 0 for d in sizes) or sum(sizes) != X.shape[1]:
            raise ValueError(
                f"n_features_per_view {sizes} must be positive and sum to the {X.shape[-1]} columns of X"
            )
        return cls(np.split(X, np.cumsum(sizes)[:-1], axis=1))

    @property
    def views(self):
        """The views, a list of ``(n_samples, n_features_v)`` arrays."""
        return list(self._views)

    @property
    def n_views(self):
        """Number of views."""
        return len(self._views)

    @property
    def n_features_per_view(self):
        """Number of features of each view, a tuple."""
        return tuple(X.shape[1] for X in self._views)

    @property
    def shape(self):
        """``(n_samples, total number of features)``, as for the views side by side."""
        return (self._views[0].shape[0], sum(self.n_features_per_view))

    @property
    def ndim(self):
        """2: scikit-learn's splitters see a samples × features array."""
        return 2

    def __len__(self):
        return self._views[0].shape[0]

    def __getitem__(self, key):
        if isinstance(key, tuple):  # scikit-learn indexes rows as X[key, ...]
            if len(key) != 2 or key[1] is not Ellipsis:
                raise IndexError("a MultiViewArray is indexed over samples only; take columns from .views")
            key = key[0]
        if isinstance(key, (numbers.Integral, np.integer)) and not isinstance(key, (bool, np.bool_)):
            key = [key]
        return MultiViewArray([X[key] for X in self._views])

    def __array__(self, dtype=None, copy=None):
        if copy is False:  # NumPy's protocol: joining the views always copies
            raise ValueError("a MultiViewArray cannot be turned into one array without a copy")
        return np.concatenate([np.asarray(X, dtype=dtype) for X in self._views], axis=1)

    def __repr__(self):
        return f"MultiViewArray(n_samples={len(self)}, n_features_per_view={self.n_features_per_view})"
