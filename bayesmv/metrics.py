"""Evaluation metrics shared by the estimators."""

from __future__ import annotations

import numpy as np

__all__ = ["average_relative_error", "multiview_are"]


def average_relative_error(K_true, K_pred, missing):
    """ARE (%) of the predicted rows of one view (MKC paper, eq. 34).

    ``100 / n_t · Σ_{t missing} ‖k̂_t − k_t‖₂ / ‖k_t‖₂`` over the rows ``t`` in ``missing``
    (indices or a boolean mask), each row taken over all ``n`` columns. NaN when no row is missing.
    """
    K_true = np.asarray(K_true, dtype=np.float64)
    K_pred = np.asarray(K_pred, dtype=np.float64)
    if K_true.shape != K_pred.shape or K_true.ndim != 2:
        raise ValueError(
            f"K_true and K_pred must be 2-D of equal shape, got {K_true.shape} and {K_pred.shape}"
        )
    missing = np.asarray(missing)
    rows = np.flatnonzero(missing) if missing.dtype == bool else missing.astype(int)
    if rows.size == 0:
        return float("nan")
    if not (np.isfinite(K_true[rows]).all() and np.isfinite(K_pred[rows]).all()):
        raise ValueError("K_true and K_pred must be finite on the evaluated rows")
    num = np.linalg.norm(K_pred[rows] - K_true[rows], axis=1)
    den = np.linalg.norm(K_true[rows], axis=1)
    if np.any(den == 0):
        raise ValueError("a true kernel row has zero norm; ARE is undefined for it")
    return float(100.0 * np.mean(num / den))


def multiview_are(Ks_true, Ks_pred, observed):
    """Mean of eq. (34) over the views that miss at least one sample (Table 1 averages over views)."""
    observed = np.asarray(observed, dtype=bool)
    vals = [average_relative_error(Kt, Kp, ~o) for Kt, Kp, o in zip(Ks_true, Ks_pred, observed) if (~o).any()]
    return float(np.mean(vals)) if vals else float("nan")
