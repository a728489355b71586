"""Evaluation metrics shared by the estimators."""

from __future__ import annotations

import numpy as np

__all__ = ["average_relative_error", "multiview_are"]


def average_relative_error(K_true, K_pred, missing):
    """Average relative error (ARE, %) of the predicted rows of one view's kernel.

    ``100 / n_t · Σ_{t missing} ‖k̂_t − k_t‖₂ / ‖k_t‖₂`` over the ``n_t`` rows ``t`` in
    ``missing``, each row taken over all ``n`` columns (MKC paper, eq. 34; Bhadra et al. 2017).

    Parameters
    ----------
    K_true : array-like of shape (n, n)
        The true kernel matrix.
    K_pred : array-like of shape (n, n)
        The predicted (completed) kernel matrix.
    missing : array-like of int or bool
        The rows to evaluate: indices, or a boolean mask of shape ``(n,)``.

    Returns
    -------
    are : float
        The ARE in percent; NaN when no row is missing.

    Raises
    ------
    ValueError
        If ``K_true`` and ``K_pred`` are not 2-D of equal shape, are not finite on the
        evaluated rows, or if an evaluated true row has zero norm.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.metrics import average_relative_error
    >>> K = np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 1.0], [0.0, 1.0, 2.0]])
    >>> K_pred = K.copy()
    >>> K_pred[1, 2] = 1.5
    >>> round(average_relative_error(K, K_pred, [1]), 3)  # 100 * 0.5 / sqrt(6)
    20.412
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
    """Mean ARE (eq. 34) over the views that miss at least one sample.

    Each view's ARE is :func:`average_relative_error` over its missing rows; views with no
    missing row are left out of the mean, as Table 1 of the MKC paper averages over views
    (Bhadra et al. 2017).

    Parameters
    ----------
    Ks_true : list of array-like of shape (n, n)
        The true kernel matrix of each view.
    Ks_pred : list of array-like of shape (n, n)
        The predicted (completed) kernel matrix of each view.
    observed : array-like of bool of shape (n_views, n)
        ``observed[v, i]`` is True when sample ``i`` of view ``v`` was observed.

    Returns
    -------
    are : float
        The mean ARE in percent; NaN when no view misses a sample.

    Raises
    ------
    ValueError
        If a view's matrices are not 2-D of equal shape, not finite on its missing rows, or
        a missing true row has zero norm.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.metrics import multiview_are
    >>> K = np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 1.0], [0.0, 1.0, 2.0]])
    >>> K_pred = K.copy()
    >>> K_pred[1, 2] = 1.5
    >>> observed = np.array([[True, False, True], [True, True, True]])  # view 2 is complete
    >>> round(multiview_are([K, K], [K_pred, K], observed), 3)
    20.412
    """
    observed = np.asarray(observed, dtype=bool)
    vals = [average_relative_error(Kt, Kp, ~o) for Kt, Kp, o in zip(Ks_true, Ks_pred, observed) if (~o).any()]
    return float(np.mean(vals)) if vals else float("nan")
