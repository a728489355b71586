"""The completion baselines of the paper's experiments (§6.1.3)."""

from __future__ import annotations

import numpy as np

from ..datasets import check_positive
from .problem import _check_inputs

__all__ = ["knn_complete"]


def knn_complete(Ks, observed=None, k=3, weighted=False):
    """Impute missing kernel rows by kNN or weighted kNN, in feature space.

    The baseline of Bhadra, Kaski & Rousu 2017, §6.1.3. Distances: for samples ``t`` and ``j``,
    the mean over the views observing both of the kernel-induced squared distance
    ``K_tt + K_jj − 2 K_tj``, each view divided by its mean pairwise squared distance (so views
    of different scale count alike). For a sample ``t`` missing from view ``m``, its feature map
    is imputed as the (inverse-distance weighted, if ``weighted``) average of its ``k`` nearest
    neighbours observed in ``m``: ``φ̂_t = Σ_j w_tj φ_j``; hence ``K̂ = Aᵀ K_II A`` with ``A``
    holding ``e_t`` for observed samples and ``w_t`` for imputed ones (PSD, observed block kept
    exactly).

    Parameters
    ----------
    Ks : list of array-like of shape (n, n)
        One kernel matrix per view (at least two views), or an array of shape
        ``(n_views, n, n)``; a sample missing from a view is a NaN row and column.
    observed : array-like of shape (n_views, n), dtype=bool, default=None
        True where a sample is seen in a view; None: a sample is missing where its diagonal
        entry is NaN.
    k : int, default=3
        The number of neighbours.
    weighted : bool, default=False
        Weight the neighbours by their inverse distance instead of equally.

    Returns
    -------
    completed : list of ndarray of shape (n, n)
        The completed kernel of each view.

    Raises
    ------
    ValueError
        If the kernels or the mask are invalid (see :class:`MKC`), or ``k`` is not a positive
        integer.
    TypeError
        If a kernel is not real numeric or ``observed`` is not boolean.
    """
    mats, obs = _check_inputs(Ks, observed)
    check_positive("k", k, integer=True)
    M, n = obs.shape
    D = np.zeros((n, n))
    C = np.zeros((n, n))
    for m, K in enumerate(mats):
        o = obs[m]
        d = np.diag(K)
        D2 = d[:, None] + d[None, :] - 2.0 * K
        both = np.outer(o, o)
        D2 = np.where(both, np.maximum(D2, 0.0), 0.0)
        off = both & ~np.eye(n, dtype=bool)
        mean = D2[off].mean() if off.any() else 1.0
        D += np.where(both, D2 / max(mean, 1e-300), 0.0)
        C += both
    with np.errstate(invalid="ignore", divide="ignore"):
        dist = np.sqrt(np.where(C > 0, D / np.maximum(C, 1), np.inf))
    out = []
    for m, K in enumerate(mats):
        o = obs[m]
        A = np.diag(o.astype(float))
        cand = np.flatnonzero(o)
        for t in np.flatnonzero(~o):
            dt = dist[t, cand]
            order = np.argsort(dt, kind="stable")[: min(k, len(cand))]
            nb = cand[order]
            if weighted:
                w = 1.0 / np.maximum(dt[order], 1e-12)
                w = np.where(np.isfinite(dt[order]), w, 0.0)
                w = w / w.sum() if w.sum() > 0 else np.full(len(nb), 1.0 / len(nb))
            else:
                w = np.full(len(nb), 1.0 / len(nb))
            A[nb, t] = w
        Kz = np.where(np.outer(o, o), np.nan_to_num(K), 0.0)
        out.append(A.T @ Kz @ A)
    return out
