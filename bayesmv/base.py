"""Shared estimator plumbing: multi-view input checks and label encoding (DESIGN §3)."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.exceptions import NotFittedError

from .datasets import check_views

__all__ = [
    "MultiViewMixin",
    "PersistenceMixin",
    "SamplerWarning",
    "encode_labels",
    "one_vs_rest_targets",
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
    ``var_names`` above ``rhat_max`` (default ``RHAT_WARN``; needs >= 2 chains) and the caller's
    extra ``notes`` (e.g. a DP capacity overflow). Returns the report; silent when all is well.
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
    try:
        y = np.asarray(y)
    except Exception as exc:  # ragged nested sequences
        raise ValueError(f"y could not be converted to an array of labels: {exc}") from exc
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (n_samples,), got shape {y.shape}")
    if y.shape[0] == 0:
        raise ValueError("y is empty; need labels for at least 2 samples")
    if y.dtype.kind == "c":
        raise TypeError(f"y has complex dtype {y.dtype}; class labels must be real numbers or strings")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError("y contains NaN or inf")
    if y.dtype.kind == "f" and not np.all(y == np.round(y)):
        raise ValueError("y has non-integer float values; a classifier needs class labels (use a regressor?)")
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
        raise ValueError(f"y has a single class ({classes[0]!r}); classification needs at least 2 classes")
    return classes, codes


def one_vs_rest_targets(codes, n_classes):
    """±1 targets: one column for two classes (+1 = ``classes_[1]``), else one per class."""
    codes = np.asarray(codes)
    if n_classes == 2:
        return np.where(codes == 1, 1.0, -1.0)[:, None]
    return np.where(codes[:, None] == np.arange(n_classes)[None, :], 1.0, -1.0)
