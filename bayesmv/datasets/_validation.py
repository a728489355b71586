"""Input validation shared by every estimator: one multi-view format, clear errors."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from ._multiview_array import MultiViewArray

__all__ = ["SEED_DEPRECATED", "check_positive", "check_random_seed", "check_views", "observed_mask"]


def _as_numeric(arr, what):
    try:
        out = np.asarray(arr)
    except Exception as exc:  # ragged nested lists and the like
        raise ValueError(f"{what} could not be converted to an array: {exc}") from exc
    if out.dtype.kind in "OUSV" or out.dtype.kind == "M":
        raise TypeError(f"{what} has dtype {out.dtype}; it must be numeric (convert strings/objects first)")
    if out.dtype.kind == "c":
        raise TypeError(f"{what} has complex dtype {out.dtype}; it must be real")
    return out


def check_views(
    Xs,
    y=None,
    allow_missing=False,
    n_features=None,
    min_views=1,
    dtype=np.float64,
    name="Xs",
):
    """Validate a multi-view data set and return it as a list of float arrays (and ``y``).

    Parameters
    ----------
    Xs : list of array-like, each ``(n_samples, n_features_v)``, or a ``MultiViewArray``
        The views. A sample missing from a view is an all-NaN row of that view (only with
        ``allow_missing=True``).
    y : array-like of shape ``(n_samples,)``, optional
        Labels or targets; must be finite when numeric.
    allow_missing : bool
        Whether all-NaN rows (missing views) are allowed. Partially-NaN rows, ``inf``, a sample
        missing from every view and a view missing for every sample are always errors.
    n_features : sequence of int, optional
        Expected feature count of each view (pass the fitted estimator's counts at predict time).
    min_views : int
        Minimum number of views the caller needs.

    Returns
    -------
    Xs : list of ``np.ndarray`` of ``dtype``; and ``y`` as ``np.ndarray`` if given.
    """
    if isinstance(Xs, MultiViewArray):
        Xs = Xs.views
    if isinstance(Xs, np.ndarray) or not isinstance(Xs, (list, tuple)):
        raise ValueError(
            f"{name} must be a list of 2-D arrays, one per view (n_samples, n_features_v); "
            f"got {type(Xs).__name__}. Wrap a single view as [X]; for scikit-learn's model selection "
            "use bayesmv.MultiViewArray(Xs)."
        )
    if len(Xs) < min_views:
        raise ValueError(f"{name} has {len(Xs)} view(s); this method needs at least {min_views}")
    if n_features is not None and len(Xs) != len(n_features):
        raise ValueError(f"{name} has {len(Xs)} views but the estimator was fitted with {len(n_features)}")
    views = []
    for v, X in enumerate(Xs):
        X = _as_numeric(X, f"{name}[{v}]")
        if X.ndim != 2:
            raise ValueError(
                f"{name}[{v}] must be 2-D (n_samples, n_features), got ndim={X.ndim} with shape {X.shape}"
            )
        if X.shape[0] == 0:
            raise ValueError(f"{name}[{v}] has 0 samples; need at least 1")
        if X.shape[1] == 0:
            raise ValueError(f"{name}[{v}] is an empty view (0 features)")
        if n_features is not None and X.shape[1] != n_features[v]:
            raise ValueError(
                f"{name}[{v}] has {X.shape[1]} features but the estimator was fitted with {n_features[v]}"
            )
        X = X.astype(dtype, copy=False)
        if np.isinf(X).any():
            raise ValueError(f"{name}[{v}] contains inf; views must be finite (NaN rows mark missing views)")
        nan = np.isnan(X)
        if nan.any():
            if not allow_missing:
                raise ValueError(
                    f"{name}[{v}] contains NaN; this estimator does not support missing views "
                    "(impute them, e.g. with bayesmv.MKC, or drop the samples)"
                )
            partial = nan.any(axis=1) & ~nan.all(axis=1)
            if partial.any():
                raise ValueError(
                    f"{name}[{v}] has partially-NaN rows (first: sample {int(np.argmax(partial))}); "
                    "a missing view must be an all-NaN row"
                )
            if nan.all():
                raise ValueError(f"{name}[{v}] is missing for every sample")
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
    y = _as_numeric(y, "y") if not _is_label_array(y) else np.asarray(y)
    if y.ndim != 1:
        y = np.squeeze(y) if y.ndim == 2 and 1 in y.shape else y
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D (n_samples,), got shape {y.shape}")
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but {name} has {n} samples")
    if y.dtype.kind in "fc" and not np.isfinite(y).all():
        raise ValueError("y contains NaN or inf")
    return views, y


def _is_label_array(y):
    """String labels are fine for classifiers' ``y`` (but not object arrays of mixed junk)."""
    arr = np.asarray(y)
    return arr.dtype.kind in "US"


def observed_mask(Xs):
    """Boolean ``(n_views, n_samples)``: True where the sample is observed in the view."""
    masks = []
    for v, X in enumerate(Xs):
        X = _as_numeric(X, f"Xs[{v}]")
        if X.ndim != 2:
            raise ValueError(f"Xs[{v}] must be 2-D (n_samples, n_features), got shape {X.shape}")
        masks.append(~np.isnan(X.astype(float, copy=False)).all(axis=1))
    return np.stack(masks)


def check_positive(name, value, allow_zero=False, integer=False):
    """Raise ``ValueError`` naming ``name`` unless ``value`` is a finite positive (or >= 0) number."""
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind) or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite {'integer' if integer else 'number'}, got {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value!r}")
    return value


#: Default of the deprecated ``seed`` parameters (scikit-learn's marker for a renamed parameter).
SEED_DEPRECATED = "deprecated"


def check_random_seed(random_state, seed=SEED_DEPRECATED, owner="random_state"):
    """The integer seed behind scikit-learn's ``random_state``: an int ``>= 0`` as it is, a draw
    from a ``np.random.RandomState`` or ``Generator``, fresh entropy for ``None``. ``seed``, the
    old name, is used instead when given, with a ``FutureWarning``."""
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
