"""Shared estimator plumbing: multi-view input checks and label encoding."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy.stats import rankdata
from sklearn.base import clone, is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import ParameterGrid, check_cv
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import type_of_target

from .datasets import check_label_vector, check_views

__all__ = [
    "MultiViewMixin",
    "PersistenceMixin",
    "SearchCVMixin",
    "SamplerWarning",
    "encode_labels",
    "labels_from_scores",
    "one_vs_rest_targets",
    "require_targets",
    "warn_sampler_trouble",
]

#: r̂ above this (with >= 2 chains) makes ``warn_sampler_trouble`` warn. Looser than the 1.01 of
#: ``check_convergence``: the warning flags chains that clearly disagree, not a short run.
RHAT_WARN = 1.1


class SamplerWarning(UserWarning):
    """An MCMC fit had trouble: divergent transitions, non-finite draws, r̂ above threshold or a
    DP truncation overflow. ``.report`` holds the ``bayesmv.diagnostics.ConvergenceReport``."""

    report = None


def warn_sampler_trouble(idata, owner, var_names=None, rhat_max=None, notes=(), stacklevel=3):
    """Warn (``SamplerWarning``, carrying the convergence report) if an MCMC fit had trouble.

    Checked: divergent transitions (``sample_stats.diverging``), non-finite draws, r̂ of
    ``var_names`` above ``rhat_max`` (needs >= 2 chains) and the caller's extra ``notes``
    (e.g. a DP capacity overflow). Silent when all is well. The effective sample size is not
    checked.

    Parameters
    ----------
    idata : xarray.DataTree
        The fit's ArviZ posterior (with ``sample_stats``).
    owner : str
        Who fitted, for the message (the estimator's class name).
    var_names : list of str, default=None
        The variables whose r̂ is checked; None checks every variable of the posterior.
    rhat_max : float, default=None
        r̂ above this warns; None means ``RHAT_WARN`` (1.1, looser than the 1.01 of
        ``check_convergence``: the warning flags chains that clearly disagree, not a short run).
    notes : sequence of str, default=()
        The caller's own problems (e.g. a DP capacity overflow), added to the report's notes.
    stacklevel : int, default=3
        Passed to ``warnings.warn``.

    Returns
    -------
    report : bayesmv.diagnostics.ConvergenceReport
        The convergence report, with ``notes`` added to its notes.

    Raises
    ------
    ValueError
        If a name of ``var_names`` is not in the posterior.

    Warns
    -----
    SamplerWarning
        If any problem is found; its ``report`` attribute holds the report.
    """
    from .diagnostics import check_convergence

    rhat_max = RHAT_WARN if rhat_max is None else rhat_max
    report = check_convergence(idata, rhat_max=rhat_max, ess_min=0, var_names=var_names)
    problems = []
    if report.divergences:
        total = report.n_chains * report.n_draws
        problems.append(f"{report.divergences} divergent transition(s) in {total} draw(s)")
    high = [
        f"{v.name} ({v.r_hat:.3g})" for v in report.variables if np.isfinite(v.r_hat) and v.r_hat > rhat_max
    ]
    if high:
        problems.append(f"r_hat above {rhat_max}: {', '.join(high)}")
    problems.extend(report.notes)
    problems.extend(notes)
    report.notes.extend(notes)
    if problems:
        w = SamplerWarning(
            f"{owner}: sampler trouble: {'; '.join(problems)}. Run longer chains / more chains, or "
            f"check the data scaling and priors.\n{report}"
        )
        w.report = report
        warnings.warn(w, stacklevel=stacklevel)
    return report


class PersistenceMixin:
    """``est.save(path)``; read back with ``bayesmv.load(path)`` (no pickle, see ``bayesmv.persistence``).

    Attributes named in the class attribute ``_persistence_exclude`` are not saved.
    """

    _persistence_exclude: tuple = ()

    def save(self, path):
        """Write the estimator to ``path``, to be read back with :func:`bayesmv.load`.

        Parameters
        ----------
        path : str or os.PathLike
            The file to write (see :func:`bayesmv.persistence.save`).

        Returns
        -------
        path : str or os.PathLike
            The path written.
        """
        from .persistence import save

        return save(self, path)


class MultiViewMixin(PersistenceMixin):
    """Fit/predict-time validation of a list of views for scikit-learn style estimators.

    ``fit`` calls ``_validate_fit(Xs, y)``, which records ``n_views_``, ``n_features_per_view_``
    and ``n_features_in_`` (their sum, the width of ``np.asarray(MultiViewArray(Xs))``);
    ``predict`` calls ``_validate_predict(Xs)``, which raises
    ``NotFittedError`` before ``fit`` and ``ValueError`` for a different number of views or
    features than at fit time.
    """

    _allow_missing = False
    _min_views = 1

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # scikit-learn's only missing-data tag: here NaN is allowed as all-NaN rows (missing views)
        tags.input_tags.allow_nan = self._allow_missing
        return tags

    def _validate_fit(self, Xs, y=None):
        require_targets(self, y)
        out = check_views(
            Xs, y, allow_missing=self._allow_missing, min_views=self._min_views, owner=type(self).__name__
        )
        self._record_views(out[0] if y is not None else out)
        return out

    def _record_views(self, views):
        self.n_views_ = len(views)
        self.n_features_per_view_ = tuple(X.shape[1] for X in views)
        self.n_features_in_ = sum(self.n_features_per_view_)

    def _check_fitted(self):
        if not hasattr(self, "n_views_"):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet; call 'fit' before using it."
            )

    def _validate_predict(self, Xs):
        self._check_fitted()
        return check_views(
            Xs,
            allow_missing=self._allow_missing,
            n_features=self.n_features_per_view_,
            owner=type(self).__name__,
        )


class SearchCVMixin:
    """Hyper-parameters chosen by cross-validation, as ``GridSearchCV`` chooses them: the folds of
    ``check_cv(cv, y, classifier=...)``, the candidates in ``ParameterGrid`` order, the best mean
    test score of the estimator's ``score`` (ties go to the first candidate), then a refit on all
    the data (``best_estimator_``). What differs is the cost: ``_fold_scores`` scores every
    candidate of one fold together, sharing what the candidates share.

    Subclasses set ``_base`` (the estimator class), ``_grid`` (this class's grid parameters ->
    the base's parameter names), ``_base_fixed`` (base parameters the shared computation needs)
    and define ``_fold_scores(base, views, y, train, test, candidates, fit_params)``, which returns
    one test score per candidate.

    Attributes: ``best_params_``, ``best_score_``, ``best_index_``, ``cv_results_`` (the keys of
    ``GridSearchCV.cv_results_`` for test scores), ``best_estimator_``, ``n_splits_``.
    """

    _base = None
    _grid: dict = {}
    _base_fixed: dict = {}

    def _base_estimator(self):
        params = {name: getattr(self, name) for name in self._base._get_param_names() if hasattr(self, name)}
        return self._base(**{**params, **self._base_fixed})

    def _param_grid(self):
        grid = {}
        for name, target in self._grid.items():
            values = getattr(self, name)
            values = (
                [values] if isinstance(values, str) else list(np.atleast_1d(np.asarray(values, dtype=object)))
            )
            if not values:
                raise ValueError(f"{name} must hold at least one value")
            grid[target] = values
        return grid

    def fit(self, Xs, y, **fit_params):
        """Score every candidate of the grid on the folds of ``cv``, then refit the best on all the data.

        Sets ``cv_results_``, ``best_params_``, ``best_score_``, ``best_index_``,
        ``best_estimator_`` and ``n_splits_`` as ``GridSearchCV`` does.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The training views, one array per view with the same samples in the same rows.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Class labels (classifier; the folds are stratified by them) or real targets.
        **fit_params : dict
            Passed to every fit of the underlying estimator (e.g. ``Xs_unlabeled`` for MVL).

        Returns
        -------
        self : object
            The fitted search.
        """
        require_targets(self, y)
        base = self._base_estimator()
        views = check_views(Xs, min_views=base._min_views, owner=type(self).__name__)
        classifier = is_classifier(self)
        y = check_label_vector(y) if classifier else np.asarray(y)
        if classifier:
            type_of_target(y, input_name="y", raise_unknown=True)  # the folds are stratified by y
        if len(y) != views[0].shape[0]:
            raise ValueError(f"y has {len(y)} entries but Xs has {views[0].shape[0]} samples")
        cv = check_cv(self.cv, y, classifier=classifier)
        folds = list(cv.split(views[0], encode_labels(y)[1] if classifier else y))
        candidates = list(ParameterGrid(self._param_grid()))
        scores = np.array(
            [self._fold_scores(base, views, y, train, test, candidates, fit_params) for train, test in folds]
        )
        mean = scores.mean(axis=0)
        self.cv_results_ = {
            "params": candidates,
            **{f"param_{k}": np.array([c[k] for c in candidates], dtype=object) for k in candidates[0]},
            **{f"split{k}_test_score": scores[k] for k in range(len(folds))},
            "mean_test_score": mean,
            "std_test_score": scores.std(axis=0),
            "rank_test_score": rankdata(-mean, method="min").astype(np.int32),
        }
        self.n_splits_ = len(folds)
        self.best_index_ = int(np.argmin(self.cv_results_["rank_test_score"]))
        self.best_params_ = candidates[self.best_index_]
        self.best_score_ = float(mean[self.best_index_])
        self.best_estimator_ = clone(base).set_params(**self.best_params_).fit(Xs, y, **fit_params)
        for name in ("n_views_", "n_features_per_view_", "n_features_in_", "classes_", "n_iter_"):
            if hasattr(self.best_estimator_, name):
                setattr(self, name, getattr(self.best_estimator_, name))
        return self

    def predict(self, Xs):
        """Predict with the best candidate refitted on all the data (``best_estimator_``).

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The views to predict, with as many views and features as in ``fit``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            The predicted class labels or targets.
        """
        self._check_fitted()
        return self.best_estimator_.predict(Xs)

    @available_if(lambda self: hasattr(self._base, "decision_function"))
    def decision_function(self, Xs):
        """Class scores of the best candidate refitted on all the data (``best_estimator_``).

        Available when the underlying estimator has ``decision_function``.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The views to score, with as many views and features as in ``fit``.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            ``best_estimator_.decision_function(Xs)``.
        """
        self._check_fitted()
        return self.best_estimator_.decision_function(Xs)


def require_targets(estimator, y):
    """Raise scikit-learn's error for a supervised estimator fitted without targets.

    Parameters
    ----------
    estimator : estimator instance
        The estimator being fitted; its tags say whether it needs targets
        (``target_tags.required``).
    y : array-like or None
        The targets passed to ``fit``.

    Raises
    ------
    ValueError
        If ``y`` is None and the estimator requires targets.
    """
    if y is None and estimator.__sklearn_tags__().target_tags.required:
        raise ValueError(f"{type(estimator).__name__} requires y to be passed, but the target y is None")


def encode_labels(y):
    """Encode class labels as integers: the sorted unique labels and each sample's code.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels: integers, integer-valued floats or strings (one type for all).

    Returns
    -------
    classes : ndarray of shape (n_classes,)
        The sorted unique labels (an estimator's ``classes_``).
    codes : ndarray of shape (n_samples,)
        Each sample's index into ``classes``.

    Raises
    ------
    ValueError
        If ``y`` cannot be made an array, is not 1-D, is empty, is complex, holds NaN, inf or
        None, non-integer floats (continuous targets), or fewer than two classes.
    TypeError
        If ``y`` mixes label types (e.g. numbers and strings) or its labels cannot be sorted.

    Examples
    --------
    >>> from bayesmv.base import encode_labels
    >>> classes, codes = encode_labels(["b", "a", "b"])
    >>> classes.tolist(), codes
    (['a', 'b'], array([1, 0, 1]))
    """
    try:
        y = np.asarray(y)
    except Exception as exc:  # ragged nested sequences
        raise ValueError(f"y could not be converted to an array of labels: {exc}") from exc
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (n_samples,), got shape {y.shape}")
    if y.shape[0] == 0:
        raise ValueError("y is empty; need labels for at least 2 samples")
    if y.dtype.kind == "c":
        raise ValueError(
            f"y has complex dtype {y.dtype}: Complex data not supported; labels must be real or strings"
        )
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError("y contains NaN or inf")
    if y.dtype.kind == "f" and not np.all(y == np.round(y)):
        raise ValueError(
            "Unknown label type: continuous. y has non-integer float values; a classifier needs class labels "
            "(use a regressor?)"
        )
    if y.dtype.kind == "O":
        if any(v is None or (isinstance(v, float) and not np.isfinite(v)) for v in y.tolist()):
            raise ValueError("y contains None or NaN labels")
        values = y.tolist()
        numeric = all(isinstance(v, numbers.Number) and not isinstance(v, complex) for v in values)
        if not (numeric or all(isinstance(v, str) for v in values)):
            raise TypeError("y mixes label types (e.g. numbers and strings); use one type for all labels")
    try:
        classes, codes = np.unique(y, return_inverse=True)
    except TypeError as exc:
        raise TypeError(
            f"y labels cannot be sorted ({exc}); use one label type (numbers or strings)"
        ) from exc
    codes = np.asarray(codes).reshape(-1)
    if len(classes) < 2:
        raise ValueError(
            f"y has a single class ({classes[0]!r}): 1 class, but classification needs at least 2 classes"
        )
    return classes, codes


def labels_from_scores(classes, scores):
    """Class labels from decision scores.

    Parameters
    ----------
    classes : ndarray of shape (n_classes,)
        The class labels (an estimator's ``classes_``).
    scores : array-like of shape (n_samples,) or (n_samples, n_classes)
        ``(n,)`` scores pick ``classes[1]`` where positive (else ``classes[0]``);
        ``(n, n_classes)`` scores pick their arg-max (ties go to the first class).

    Returns
    -------
    labels : ndarray of shape (n_samples,)
        The predicted labels, taken from ``classes``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.base import labels_from_scores
    >>> labels_from_scores(np.array(["a", "b"]), [0.5, -1.0]).tolist()
    ['b', 'a']
    >>> labels_from_scores(np.array([0, 1, 2]), [[1, 1, 0], [0, 0, 3]])
    array([0, 2])
    """
    scores = np.asarray(scores)
    return classes[(scores > 0).astype(int) if scores.ndim == 1 else np.argmax(scores, axis=1)]


def one_vs_rest_targets(codes, n_classes):
    """±1 targets of the one-vs-rest problems: one column for two classes, else one per class.

    Parameters
    ----------
    codes : array-like of shape (n_samples,)
        Integer class codes (:func:`encode_labels`).
    n_classes : int
        Number of classes.

    Returns
    -------
    targets : ndarray of shape (n_samples, 1) or (n_samples, n_classes)
        For two classes one column, +1 for ``classes_[1]`` (code 1); otherwise column ``c`` is +1
        for class ``c`` and -1 for the rest.

    Examples
    --------
    >>> from bayesmv.base import one_vs_rest_targets
    >>> one_vs_rest_targets([0, 1, 1], 2).ravel()
    array([-1.,  1.,  1.])
    >>> one_vs_rest_targets([0, 2, 1], 3)
    array([[ 1., -1., -1.],
           [-1., -1.,  1.],
           [-1.,  1., -1.]])
    """
    codes = np.asarray(codes)
    if n_classes == 2:
        return np.where(codes == 1, 1.0, -1.0)[:, None]
    return np.where(codes[:, None] == np.arange(n_classes)[None, :], 1.0, -1.0)
