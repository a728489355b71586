"""Splitting and per-view standardisation for lists of views."""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import train_test_split

from ._validation import SEED_DEPRECATED, check_random_seed, check_views

__all__ = ["MultiViewStandardScaler", "drop_views", "standardize_views", "train_test_split_views"]


def train_test_split_views(Xs, y, test_size=0.25, random_state=0, stratify=True, seed=SEED_DEPRECATED):
    """Split every view and ``y`` with one shared random partition (stratified by ``y`` by default).

    Returns ``Xs_train, Xs_test, y_train, y_test``.
    """
    seed = check_random_seed(random_state, seed, "train_test_split_views")
    Xs, y = check_views(Xs, y, allow_missing=True)
    idx = np.arange(len(y))
    tr, te = train_test_split(idx, test_size=test_size, random_state=seed, stratify=y if stratify else None)
    return [X[tr] for X in Xs], [X[te] for X in Xs], y[tr], y[te]


class MultiViewStandardScaler:
    """Per-view, per-feature standardisation fitted on observed rows (NaN rows are left NaN)."""

    def fit(self, Xs):
        """Per-view feature means and standard deviations over the observed rows of ``Xs``
        (a constant feature keeps scale 1); returns ``self``.
        """
        Xs = check_views(Xs, allow_missing=True)
        self.mean_ = [np.nanmean(X, axis=0) for X in Xs]
        scale = [np.nanstd(X, axis=0) for X in Xs]
        self.scale_ = [np.where(s > 0, s, 1.0) for s in scale]
        return self

    def transform(self, Xs):
        """Each view centred and scaled by the fitted statistics; missing rows stay NaN."""
        if not hasattr(self, "mean_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("MultiViewStandardScaler is not fitted; call fit first")
        Xs = check_views(Xs, allow_missing=True, n_features=[m.shape[0] for m in self.mean_])
        return [(X - m) / s for X, m, s in zip(Xs, self.mean_, self.scale_)]

    def fit_transform(self, Xs):
        """``fit(Xs)``, then ``transform(Xs)``."""
        return self.fit(Xs).transform(Xs)


def standardize_views(Xs_train, Xs_test=None):
    """Standardise each view with the training means/scales; returns train (and test) views."""
    scaler = MultiViewStandardScaler().fit(Xs_train)
    out = scaler.transform(Xs_train)
    return out if Xs_test is None else (out, scaler.transform(Xs_test))


def drop_views(Xs, fraction, random_state=0, n_missing=1, seed=SEED_DEPRECATED):
    """Remove ``n_missing`` whole views from a random ``fraction`` of the samples (NaN rows).

    Every sample keeps at least one view (``n_missing < n_views``). Returns new arrays.
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
