"""Splitting and per-view standardisation for lists of views."""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import train_test_split

from ._validation import SEED_DEPRECATED, check_random_seed, check_views

__all__ = ["MultiViewStandardScaler", "drop_views", "standardize_views", "train_test_split_views"]


def train_test_split_views(Xs, y, test_size=0.25, random_state=0, stratify=True, seed=SEED_DEPRECATED):
    """Split every view and ``y`` with one shared random partition (stratified by ``y`` by default).

    The samples are split by scikit-learn's ``train_test_split``; missing views (all-NaN rows)
    are allowed.

    Parameters
    ----------
    Xs : list of array-like of shape (n_samples, n_features_v)
        The views.
    y : array-like of shape (n_samples,)
        Labels or targets.
    test_size : float or int, default=0.25
        The test share (float) or number of test samples (int), as in ``train_test_split``.
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=0
        Seed of the partition (:func:`check_random_seed`).
    stratify : bool, default=True
        Whether to stratify the partition by ``y``.
    seed : int, numpy.random.RandomState, numpy.random.Generator or None, default="deprecated"
        Deprecated old name of ``random_state``, used instead of it when given (with a
        ``FutureWarning``).

    Returns
    -------
    Xs_train : list of ndarray of shape (n_train, n_features_v)
        The training rows of every view.
    Xs_test : list of ndarray of shape (n_test, n_features_v)
        The test rows of every view.
    y_train : ndarray of shape (n_train,)
        The training labels.
    y_test : ndarray of shape (n_test,)
        The test labels.

    Raises
    ------
    ValueError
        If the views or ``y`` are invalid (:func:`check_views`), or ``train_test_split``
        rejects the split.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.datasets import train_test_split_views
    >>> Xs = [np.arange(12.0).reshape(6, 2), np.arange(6.0).reshape(6, 1)]
    >>> Xs_train, Xs_test, y_train, y_test = train_test_split_views(Xs, [0, 1] * 3, test_size=2)
    >>> [X.shape for X in Xs_train], [X.shape for X in Xs_test], y_test
    ([(4, 2), (4, 1)], [(2, 2), (2, 1)], array([0, 1]))
    """
    seed = check_random_seed(random_state, seed, "train_test_split_views")
    Xs, y = check_views(Xs, y, allow_missing=True)
    idx = np.arange(len(y))
    tr, te = train_test_split(idx, test_size=test_size, random_state=seed, stratify=y if stratify else None)
    return [X[tr] for X in Xs], [X[te] for X in Xs], y[tr], y[te]


class MultiViewStandardScaler:
    """Per-view, per-feature standardisation fitted on observed rows (NaN rows are left NaN).

    Each feature of each view is centred by its mean and divided by its standard deviation over
    the observed rows of the training views; a constant feature keeps scale 1.

    Attributes
    ----------
    mean_ : list of ndarray of shape (n_features_v,)
        Each view's feature means over its observed rows.
    scale_ : list of ndarray of shape (n_features_v,)
        Each view's feature standard deviations over its observed rows (1 for a constant
        feature).

    See Also
    --------
    standardize_views : Standardise training and test views with the training statistics.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.datasets import MultiViewStandardScaler
    >>> Xs = [np.array([[0.0, 1.0], [2.0, 1.0], [np.nan, np.nan]]), np.array([[1.0], [3.0], [5.0]])]
    >>> scaler = MultiViewStandardScaler().fit(Xs)
    >>> scaler.mean_[0], scaler.scale_[0]
    (array([1., 1.]), array([1., 1.]))
    >>> scaler.transform(Xs)[0]
    array([[-1.,  0.],
           [ 1.,  0.],
           [nan, nan]])
    """

    def fit(self, Xs):
        """Per-view feature means and standard deviations over the observed rows of ``Xs``.

        A constant feature keeps scale 1.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The training views; missing views are all-NaN rows.

        Returns
        -------
        self : object
            The fitted scaler.

        Raises
        ------
        ValueError
            If the views are invalid (:func:`check_views`).
        """
        Xs = check_views(Xs, allow_missing=True)
        self.mean_ = [np.nanmean(X, axis=0) for X in Xs]
        scale = [np.nanstd(X, axis=0) for X in Xs]
        self.scale_ = [np.where(s > 0, s, 1.0) for s in scale]
        return self

    def transform(self, Xs):
        """Each view centred and scaled by the fitted statistics; missing rows stay NaN.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The views, with the feature counts of the views seen in :meth:`fit`.

        Returns
        -------
        Xs_scaled : list of ndarray of shape (n_samples, n_features_v)
            The standardised views.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the scaler is not fitted.
        ValueError
            If the views are invalid (:func:`check_views`) or their feature counts differ from
            the fitted ones.
        """
        if not hasattr(self, "mean_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("MultiViewStandardScaler is not fitted; call fit first")
        Xs = check_views(Xs, allow_missing=True, n_features=[m.shape[0] for m in self.mean_])
        return [(X - m) / s for X, m, s in zip(Xs, self.mean_, self.scale_)]

    def fit_transform(self, Xs):
        """``fit(Xs)``, then ``transform(Xs)``.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The training views; missing views are all-NaN rows.

        Returns
        -------
        Xs_scaled : list of ndarray of shape (n_samples, n_features_v)
            The standardised training views.
        """
        return self.fit(Xs).transform(Xs)


def standardize_views(Xs_train, Xs_test=None):
    """Standardise each view with the training views' means and scales.

    The statistics are those of :class:`MultiViewStandardScaler` fitted on ``Xs_train``: per
    feature, over the observed rows (missing rows stay NaN; a constant feature keeps scale 1).

    Parameters
    ----------
    Xs_train : list of array-like of shape (n_train, n_features_v)
        The training views, which give the means and scales.
    Xs_test : list of array-like of shape (n_test, n_features_v), default=None
        Views standardised with the training statistics.

    Returns
    -------
    Xs_train : list of ndarray of shape (n_train, n_features_v)
        The standardised training views; alone when ``Xs_test`` is None.
    Xs_test : list of ndarray of shape (n_test, n_features_v)
        The standardised test views; returned (as a tuple after ``Xs_train``) only when
        ``Xs_test`` is given.

    Raises
    ------
    ValueError
        If the views are invalid (:func:`check_views`) or the test views have other feature
        counts than the training views.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.datasets import standardize_views
    >>> Xs = [np.array([[0.0, 1.0], [2.0, 3.0]]), np.array([[1.0], [3.0]])]
    >>> train, test = standardize_views(Xs, [np.ones((1, 2)), np.ones((1, 1))])
    >>> train[0]
    array([[-1., -1.],
           [ 1.,  1.]])
    >>> test[1]
    array([[-1.]])
    """
    scaler = MultiViewStandardScaler().fit(Xs_train)
    out = scaler.transform(Xs_train)
    return out if Xs_test is None else (out, scaler.transform(Xs_test))


def drop_views(Xs, fraction, random_state=0, n_missing=1, seed=SEED_DEPRECATED):
    """Remove ``n_missing`` whole views from a random ``fraction`` of the samples (NaN rows).

    Every sample keeps at least one view (``n_missing < n_views``): a chosen sample already
    missing views loses at most all but one of those it has.

    Parameters
    ----------
    Xs : list of array-like of shape (n_samples, n_features_v)
        The views; all-NaN rows (missing views) are allowed.
    fraction : float
        The share of samples, in [0, 1], that lose views (``round(fraction * n_samples)``
        samples).
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=0
        Seed of the choice of samples and views (:func:`check_random_seed`).
    n_missing : int, default=1
        How many views each chosen sample loses, in ``[1, n_views - 1]``.
    seed : int, numpy.random.RandomState, numpy.random.Generator or None, default="deprecated"
        Deprecated old name of ``random_state``, used instead of it when given (with a
        ``FutureWarning``).

    Returns
    -------
    Xs : list of ndarray of shape (n_samples, n_features_v)
        New arrays (the inputs are not changed), the removed views as all-NaN rows.

    Raises
    ------
    ValueError
        If the views are invalid (:func:`check_views`), ``fraction`` lies outside [0, 1] or
        ``n_missing`` outside ``[1, n_views - 1]``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.datasets import drop_views, observed_mask
    >>> Xs = [np.ones((6, 2)), np.ones((6, 1))]
    >>> observed = observed_mask(drop_views(Xs, fraction=0.5, random_state=0))
    >>> observed.sum(axis=1), bool(observed.any(axis=0).all())
    (array([3, 6]), True)
    """
    seed = check_random_seed(random_state, seed, "drop_views")
    Xs = check_views(Xs, allow_missing=True)
    V, n = len(Xs), Xs[0].shape[0]
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must lie in [0, 1], got {fraction}")
    if not 1 <= n_missing < V:
        raise ValueError(f"n_missing must be in [1, n_views - 1] = [1, {V - 1}], got {n_missing}")
    rng = np.random.default_rng(seed)
    out = [X.copy() for X in Xs]
    observed = np.stack([~np.isnan(X).all(axis=1) for X in Xs])
    chosen = rng.choice(n, int(round(fraction * n)), replace=False)
    for i in chosen:
        present = np.flatnonzero(observed[:, i])
        k = min(n_missing, len(present) - 1)
        for v in rng.choice(present, k, replace=False):
            out[v][i] = np.nan
    return out
