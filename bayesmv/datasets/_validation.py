"""Input validation shared by every estimator: one multi-view format, clear errors."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy.sparse.csgraph import connected_components
from sklearn.utils.validation import column_or_1d

from ._multiview_array import MultiViewArray

__all__ = [
    "SEED_DEPRECATED",
    "check_label_vector",
    "check_positive",
    "check_random_seed",
    "check_targets",
    "check_views",
    "is_view_list",
    "observed_mask",
    "reject_sparse",
]


def _as_numeric(arr, what):
    try:
        out = np.asarray(arr)
    except Exception as exc:  # ragged nested lists and the like
        raise ValueError(f"{what} could not be converted to an array: {exc}") from exc
    if out.dtype.kind == "O":
        try:
            out = out.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"{what} has dtype object with non-numeric entries ({exc}); it must be numeric"
            ) from exc
    if out.dtype.kind in "USV" or out.dtype.kind in "mM":
        raise TypeError(f"{what} has dtype {out.dtype}; it must be numeric (convert strings first)")
    if out.dtype.kind == "c":
        raise ValueError(f"{what} has complex dtype {out.dtype}: Complex data not supported; it must be real")
    return out


def is_view_list(Xs):
    """Whether ``Xs`` is a list (or tuple) of views, each 2-D, rather than one view's rows.

    Parameters
    ----------
    Xs : object
        A candidate multi-view data set.

    Returns
    -------
    is_list : bool
        True when ``Xs`` is a non-empty list or tuple whose first entry is 2-D; False for one
        2-D array or a list of rows (a single view).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.datasets import is_view_list
    >>> is_view_list([np.zeros((2, 3)), np.zeros((2, 1))])
    True
    >>> is_view_list(np.zeros((2, 3))), is_view_list([[1, 2], [3, 4]])
    (False, False)
    """
    return isinstance(Xs, (list, tuple)) and len(Xs) > 0 and _ndim(Xs[0]) == 2


def reject_sparse(X, what="X"):
    """Reject a scipy.sparse matrix or array: every method here needs dense arrays.

    Parameters
    ----------
    X : object
        The input to check; anything with a ``tocsr`` method counts as sparse.
    what : str, default="X"
        The input's name, for the message.

    Raises
    ------
    TypeError
        If ``X`` is a scipy.sparse matrix or array.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import sparse
    >>> from bayesmv.datasets import reject_sparse
    >>> reject_sparse(np.eye(2))  # dense: nothing happens
    >>> reject_sparse(sparse.eye(2))
    Traceback (most recent call last):
        ...
    TypeError: sparse input is not supported; X must be dense (use .toarray())
    """
    if hasattr(X, "tocsr"):
        raise TypeError(f"sparse input is not supported; {what} must be dense (use .toarray())")


def _is_single_view(Xs):
    """One view given as one table: a 2-D array (NumPy, pandas) or a list of rows."""
    reject_sparse(Xs)
    if isinstance(Xs, (list, tuple)):
        return len(Xs) > 0 and all(_ndim(row) <= 1 for row in Xs)
    return True


def _ndim(obj):
    try:
        return np.ndim(obj)
    except ValueError:  # a ragged nested sequence: at least two levels deep
        return 2


def check_views(
    Xs,
    y=None,
    allow_missing=False,
    n_features=None,
    min_views=1,
    dtype=np.float64,
    name="Xs",
    owner="the estimator",
):
    """Validate a multi-view data set and return it as a list of float arrays (and ``y``).

    Every estimator checks its input with this function: one multi-view format, one set of
    errors. Each view must be numeric, real, 2-D, with at least one sample and one feature, and
    all views must have the same number of samples.

    Parameters
    ----------
    Xs : list of array-like of shape (n_samples, n_features_v), MultiViewArray or array-like
        The views; one 2-D array (or a list of rows, as scikit-learn passes it) is a single view.
        A sample missing from a view is an all-NaN row of that view (only with
        ``allow_missing=True``).
    y : array-like of shape (n_samples,), default=None
        Labels or targets; must be finite when numeric. A column vector is raveled with a
        warning (:func:`check_label_vector`).
    allow_missing : bool, default=False
        Whether all-NaN rows (missing views) are allowed. Partially-NaN rows, ``inf``, a sample
        missing from every view and a view missing for every sample are always errors.
    n_features : sequence of int, default=None
        Expected feature count of each view (pass the fitted estimator's counts at predict time).
    min_views : int, default=1
        Minimum number of views the caller needs.
    dtype : data-type, default=np.float64
        The dtype of the returned views.
    name : str, default="Xs"
        The name of ``Xs`` in the messages.
    owner : str, default="the estimator"
        Who checks, for the messages (the estimator's class name).

    Returns
    -------
    views : list of ndarray of shape (n_samples, n_features_v)
        The views as arrays of ``dtype``.
    y : ndarray of shape (n_samples,)
        ``y`` as a 1-D array; returned (after ``views``, as a tuple) only when ``y`` is given.

    Raises
    ------
    ValueError
        If a view is not 2-D, is empty, ragged or complex, contains ``inf`` or NaN that is not
        a whole missing row (or any NaN without ``allow_missing``), if the views differ in their number of
        samples, if there are fewer than ``min_views`` views or a different number of views or
        features than ``n_features``, if a sample is missing from every view or a view from
        every sample, or if ``y`` is not 1-D, has another length or holds NaN or inf.
    TypeError
        If ``Xs`` is sparse or a view is not numeric (strings, dates, objects).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.datasets import check_views
    >>> views, y = check_views([[[1, 2], [3, 4]], np.ones((2, 1))], [0, 1])
    >>> [X.shape for X in views], views[0].dtype, y
    ([(2, 2), (2, 1)], dtype('float64'), array([0, 1]))
    >>> check_views([np.ones((2, 2)), np.ones((3, 1))])
    Traceback (most recent call last):
        ...
    ValueError: all views in Xs must have the same number of samples, got [2, 3]
    """
    single = not isinstance(Xs, MultiViewArray) and _is_single_view(Xs)
    if isinstance(Xs, MultiViewArray):
        Xs = Xs.views
    elif single:
        try:
            table = np.asarray(Xs)
        except Exception:  # ragged rows: _as_numeric names the problem
            table = Xs
        if getattr(table, "ndim", 2) not in (1, 2):
            raise ValueError(
                f"{name} must be a list of 2-D arrays, one per view (n_samples, n_features_v), or one 2-D "
                f"array (a single view); got {type(Xs).__name__} with ndim={table.ndim}. For "
                "scikit-learn's model selection use bayesmv.MultiViewArray(Xs)."
            )
        X = _as_numeric(table, "X" if name == "Xs" else name)
        if X.ndim == 1:
            raise ValueError(
                f"Expected a 2-D array (n_samples, n_features) as the single view, got a 1-D array of shape "
                f"{X.shape}. Reshape your data with X.reshape(-1, 1) for one feature or X.reshape(1, -1) "
                "for one sample, or pass a list of 2-D views."
            )
        Xs = [X]
    if len(Xs) < min_views:
        raise ValueError(f"{name} has {len(Xs)} view(s); this method needs at least {min_views}")
    if n_features is not None and len(Xs) != len(n_features):
        raise ValueError(f"{name} has {len(Xs)} views but the estimator was fitted with {len(n_features)}")
    views = []
    for v, X in enumerate(Xs):
        what = ("X" if name == "Xs" else name) if single else f"{name}[{v}]"
        X = _as_numeric(X, what)
        if X.ndim != 2:
            raise ValueError(
                f"{what} must be 2-D (n_samples, n_features), got ndim={X.ndim} with shape {X.shape}"
            )
        if X.shape[0] == 0:
            raise ValueError(f"{what} has 0 samples; need at least 1")
        if X.shape[1] == 0:
            raise ValueError(
                f"{what} is an empty view: 0 feature(s) (shape={X.shape}) while a minimum of 1 is required."
            )
        if n_features is not None and X.shape[1] != n_features[v]:
            raise ValueError(
                f"{what} has {X.shape[1]} features, but {owner} is expecting {n_features[v]} features as input"
            )
        X = X.astype(dtype, copy=False)
        if np.isinf(X).any():
            raise ValueError(f"{what} contains inf; views must be finite (NaN rows mark missing views)")
        nan = np.isnan(X)
        if nan.any():
            if not allow_missing:
                raise ValueError(
                    f"{what} contains NaN; this estimator does not support missing views "
                    "(impute them, e.g. with bayesmv.MKC, or drop the samples)"
                )
            partial = nan.any(axis=1) & ~nan.all(axis=1)
            if partial.any():
                raise ValueError(
                    f"{what} has partially-NaN rows (first: sample {int(np.argmax(partial))}); "
                    "a missing view must be an all-NaN row"
                )
            if nan.all():
                raise ValueError(f"{what} is missing for every sample")
        views.append(X)
    n = {X.shape[0] for X in views}
    if len(n) != 1:
        counts = [X.shape[0] for X in views]
        raise ValueError(f"all views in {name} must have the same number of samples, got {counts}")
    n = n.pop()
    if allow_missing:
        observed = observed_mask(views)
        if not observed.any(axis=0).all():
            first = int(np.argmin(observed.any(axis=0)))
            raise ValueError(f"sample {first} of {name} is missing from every view")
    if y is None:
        return views
    y = np.asarray(y) if _is_label_array(y) else _as_numeric(y, "y")
    y = check_label_vector(y)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but {name} has {n} samples")
    if y.dtype.kind in "fc" and not np.isfinite(y).all():
        raise ValueError("y contains NaN or inf")
    return views, y


def _is_label_array(y):
    """Strings and objects are class labels, checked by the classifier (``encode_labels``)."""
    return np.asarray(y).dtype.kind in "USO"


def check_label_vector(y):
    """``y`` as a 1-D array: a column vector is raveled with scikit-learn's ``DataConversionWarning``.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, 1)
        Labels or targets.

    Returns
    -------
    y : ndarray of shape (n_samples,)
        ``y`` as a 1-D array.

    Raises
    ------
    ValueError
        If ``y`` has any other shape (the message names ``y``).

    Warns
    -----
    DataConversionWarning
        If ``y`` is a column vector ``(n_samples, 1)``.

    Examples
    --------
    >>> from bayesmv.datasets import check_label_vector
    >>> check_label_vector([1, 0, 1])
    array([1, 0, 1])
    >>> check_label_vector([[1, 0], [0, 1]])
    Traceback (most recent call last):
        ...
    ValueError: y must be 1-D (n_samples,), got shape (2, 2)
    """
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        return column_or_1d(y, warn=True)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (n_samples,), got shape {y.shape}")
    return y


def check_targets(Y, name="y"):
    """Regression targets as a float array ``(n,)`` or ``(n, n_outputs)``: numeric, real, finite.

    Parameters
    ----------
    Y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        The targets; a numeric dtype (not object).
    name : str, default="y"
        The targets' name, for the messages.

    Returns
    -------
    Y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        The targets as float64.

    Raises
    ------
    ValueError
        If ``Y`` is complex, not numeric (strings, objects), not 1-D or 2-D, or holds NaN or inf.

    Examples
    --------
    >>> from bayesmv.datasets import check_targets
    >>> check_targets([1, 2])
    array([1., 2.])
    >>> check_targets([[1, 2], [3, 4]]).shape
    (2, 2)
    """
    Y = np.asarray(Y)
    if Y.dtype.kind == "c":
        raise ValueError(
            f"{name} has complex dtype {Y.dtype}: Complex data not supported; targets must be real"
        )
    if Y.dtype.kind not in "biuf":
        raise ValueError(f"Unknown label type: {name} must be numeric targets, got dtype {Y.dtype}")
    if Y.ndim not in (1, 2):
        raise ValueError(f"{name} must be (n_samples,) or (n_samples, n_outputs), got shape {Y.shape}")
    Y = Y.astype(np.float64)
    if not np.isfinite(Y).all():
        raise ValueError(f"{name} contains NaN or inf")
    return Y


def observed_mask(Xs):
    """Which samples each view observes: True where the sample's row is not all NaN.

    Parameters
    ----------
    Xs : list of array-like of shape (n_samples, n_features_v)
        The views; a missing sample is an all-NaN row of its view.

    Returns
    -------
    observed : ndarray of bool of shape (n_views, n_samples)
        True where the sample is observed in the view.

    Raises
    ------
    ValueError
        If a view is not 2-D or is complex.
    TypeError
        If a view is not numeric.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.datasets import observed_mask
    >>> X0 = np.array([[1.0, 2.0], [np.nan, np.nan]])
    >>> observed_mask([X0, np.ones((2, 1))])
    array([[ True, False],
           [ True,  True]])
    """
    masks = []
    for v, X in enumerate(Xs):
        X = _as_numeric(X, f"Xs[{v}]")
        if X.ndim != 2:
            raise ValueError(f"Xs[{v}] must be 2-D (n_samples, n_features), got shape {X.shape}")
        masks.append(~np.isnan(X.astype(float, copy=False)).all(axis=1))
    return np.stack(masks)


def coobserved_view_groups(observed, min_samples=1):
    """The views grouped by the samples they observe together.

    Two views are linked when at least ``min_samples`` samples observe both; the groups are the
    connected components of those links. A model that relates the views only through samples
    they share (M3LAK's shared latent, without the labels) cannot relate views of different
    groups.

    Parameters
    ----------
    observed : array-like of bool of shape (n_views, n_samples)
        Which samples each view observes (:func:`observed_mask`).
    min_samples : int, default=1
        The number of samples two views must both observe to be linked.

    Returns
    -------
    groups : list of tuple of int
        The views of each group, in the order of their first view.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.datasets import coobserved_view_groups
    >>> observed = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [0, 1, 1, 0]], bool)
    >>> coobserved_view_groups(observed)
    [(0, 1, 2)]
    >>> coobserved_view_groups(observed[:2])
    [(0,), (1,)]
    """
    observed = np.asarray(observed, dtype=bool).astype(np.int64)
    linked = observed @ observed.T >= min_samples
    n_groups, labels = connected_components(linked, directed=False)
    return [tuple(int(v) for v in np.flatnonzero(labels == k)) for k in range(n_groups)]


def check_positive(name, value, allow_zero=False, integer=False):
    """Raise ``ValueError`` naming ``name`` unless ``value`` is a finite positive (or >= 0) number.

    Parameters
    ----------
    name : str
        The parameter's name, for the message.
    value : object
        The value to check; booleans are not numbers here.
    allow_zero : bool, default=False
        Whether 0 is allowed (``>= 0`` instead of ``> 0``).
    integer : bool, default=False
        Whether ``value`` must be an integer.

    Returns
    -------
    value : int or float
        ``value``, unchanged.

    Raises
    ------
    ValueError
        If ``value`` is not a finite number (an integer with ``integer=True``), or is negative,
        or is 0 without ``allow_zero``.

    Examples
    --------
    >>> from bayesmv.datasets import check_positive
    >>> check_positive("n_samples", 3, integer=True)
    3
    >>> check_positive("noise", 0.0)
    Traceback (most recent call last):
        ...
    ValueError: noise must be > 0, got 0.0
    """
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind) or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite {'integer' if integer else 'number'}, got {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value!r}")
    return value


#: Default of the deprecated ``seed`` parameters (scikit-learn's marker for a renamed parameter).
SEED_DEPRECATED = "deprecated"


def check_random_seed(random_state, seed=SEED_DEPRECATED, owner="random_state"):
    """The integer seed behind scikit-learn's ``random_state``.

    An int ``>= 0`` is returned as it is, a ``np.random.RandomState`` or ``Generator`` gives a
    draw from it, and ``None`` fresh entropy. ``seed``, the old name, is used instead when given,
    with a ``FutureWarning``.

    Parameters
    ----------
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None
        scikit-learn's ``random_state``.
    seed : int, numpy.random.RandomState, numpy.random.Generator or None, default="deprecated"
        The deprecated old name of ``random_state``; ``"deprecated"`` (:data:`SEED_DEPRECATED`)
        means not given.
    owner : str, default="random_state"
        Who asks, for the warning (the function or estimator's name).

    Returns
    -------
    seed : int
        A seed ``>= 0`` (below ``2**31 - 1`` when drawn from a generator).

    Raises
    ------
    ValueError
        If ``random_state`` (or ``seed``) is of another type (a bool included) or negative.

    Warns
    -----
    FutureWarning
        If ``seed`` is given.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.datasets import check_random_seed
    >>> check_random_seed(7)
    7
    >>> 0 <= check_random_seed(np.random.default_rng(0)) < 2**31
    True
    """
    if not (isinstance(seed, str) and seed == SEED_DEPRECATED):
        warnings.warn(
            f"{owner}: 'seed' is deprecated and will be removed; use 'random_state'",
            FutureWarning,
            stacklevel=3,
        )
        random_state = seed
    if random_state is None:
        return int(np.random.SeedSequence().generate_state(1)[0] >> 1)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2**31 - 1))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2**31 - 1))
    if isinstance(random_state, (bool, np.bool_)) or not isinstance(random_state, numbers.Integral):
        raise ValueError(
            f"random_state must be an int, None, a np.random.RandomState or Generator; got {random_state!r}"
        )
    if random_state < 0:
        raise ValueError(f"random_state must be >= 0, got {random_state!r}")
    return int(random_state)
