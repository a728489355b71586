"""The choice of ``gamma_B`` / ``gamma_W`` by exact leave-one-out when they are ``"auto"``."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .graphs import knn_graph, normalized_cut
from .least_squares import mvl_ls_loo, psd_sqrt

__all__ = [
    "AUTO_GAMMA_B",
    "AUTO_GAMMA_W",
    "SUPERVISED_MANIFOLD",
    "ManifoldChoice",
    "choose_by_loo",
    "choose_manifold",
    "supervised_manifold",
]


#: The manifold weights and graph of the supervised fit that ``"auto"`` falls back to.
SUPERVISED_MANIFOLD = {"gamma_B": 1e-6, "gamma_W": 1e-6, "graph": "kernel"}
#: The ``gamma_B`` candidates of ``gamma_B="auto"`` with unlabelled points.
AUTO_GAMMA_B = (0.0, 1e-6)
#: The ``gamma_W`` candidates of ``gamma_W="auto"`` with unlabelled points.
AUTO_GAMMA_W = (0.0, 1e-6, 1e-4, 1e-2)


def choose_by_loo(Y, loos, score="accuracy"):
    """Index of the fit to keep among the leave-one-out outputs of several fits.

    Per point, a fit scores 1 for the right class (``score="accuracy"``: argmax of the outputs
    against the argmax of the ±1 targets ``Y``) or minus its squared error (``"squared"``).
    Another fit than the fallback ``loos[0]`` is taken only when its mean paired gain over the
    fallback exceeds one standard error, the largest such gain winning (ties: the smaller
    squared error). With one label per class no point is predicted right once left out, so the
    fallback stays.

    Parameters
    ----------
    Y : array-like of shape (l, d) or (l,)
        The targets of the labelled points (±1 one-vs-rest codes for ``"accuracy"``).
    loos : sequence of array-like of shape (l, d)
        The leave-one-out outputs of each fit on the same labelled points (e.g. from
        :func:`mvl_ls_loo`); ``loos[0]`` is the fallback.
    score : {"accuracy", "squared"}, default="accuracy"
        The per-point score.

    Returns
    -------
    index : int
        The index of the fit to keep.
    table : dict of ndarray
        Per fit: ``loo_score`` (mean per-point score), ``gain`` and ``gain_se`` (paired,
        against the fallback) and ``loo_mse``.

    Raises
    ------
    ValueError
        If ``score`` is not ``"accuracy"`` or ``"squared"``.
    """
    if score not in ("accuracy", "squared"):
        raise ValueError(f"score must be 'accuracy' or 'squared', got {score!r}")
    Y = np.asarray(Y, dtype=float)
    Y = Y[:, None] if Y.ndim == 1 else Y
    sq = [np.sum((np.reshape(loo, Y.shape) - Y) ** 2, axis=1) for loo in loos]
    if score == "accuracy":
        hits = [(np.argmax(np.reshape(loo, Y.shape), 1) == np.argmax(Y, 1)).astype(float) for loo in loos]
    else:
        hits = [-e for e in sq]
    diffs = [h - hits[0] for h in hits]
    gain = np.array([d.mean() for d in diffs])
    se = np.array([d.std(ddof=1) / np.sqrt(d.size) if d.size > 1 else np.inf for d in diffs])
    mse = np.array([e.mean() for e in sq])
    ok = np.flatnonzero(gain > se)
    best = 0 if ok.size == 0 else int(ok[np.lexsort((mse[ok], -gain[ok]))[0]])
    table = {"loo_score": np.array([h.mean() for h in hits]), "gain": gain, "gain_se": se, "loo_mse": mse}
    return best, table


def supervised_manifold(gamma_B, gamma_W, graph):
    """The manifold weights and graph of the supervised fit.

    ``SUPERVISED_MANIFOLD`` where a weight is ``"auto"`` (its graph with an ``"auto"``
    ``gamma_W``), the given values elsewhere.

    Parameters
    ----------
    gamma_B : float or "auto"
        The between-view weight.
    gamma_W : float or "auto"
        The within-view weight.
    graph : str
        The graph of the within-view Laplacians.

    Returns
    -------
    gamma_B : float
        The between-view weight of the supervised fit.
    gamma_W : float
        The within-view weight of the supervised fit.
    graph : str
        Its graph.
    """
    auto_B, auto_W = isinstance(gamma_B, str), isinstance(gamma_W, str)
    return (
        SUPERVISED_MANIFOLD["gamma_B"] if auto_B else gamma_B,
        SUPERVISED_MANIFOLD["gamma_W"] if auto_W else gamma_W,
        SUPERVISED_MANIFOLD["graph"] if auto_W else graph,
    )


class ManifoldChoice(NamedTuple):
    """The problem :func:`choose_manifold` keeps: Gram matrices, their square roots and the
    Laplacians (``l x l`` for the supervised fit), its weights and graph, and the table of
    every candidate.

    ``N`` is the number of points of the fit kept: the ``l`` labelled points for the
    supervised fit, all points (labelled first) for a fit with the unlabelled points.

    Parameters
    ----------
    Ks : list of ndarray of shape (N, N)
        The Gram matrix of each view over the points of the fit kept.
    Ps : list of ndarray of shape (N, N)
        Their PSD square roots.
    Ls : list of ndarray of shape (N, N) or None
        The within-view Laplacians on ``graph``; None when ``gamma_W`` is 0.
    gamma_B : float
        The between-view weight of the fit kept.
    gamma_W : float
        The within-view weight of the fit kept.
    graph : str
        The graph of its within-view Laplacians.
    table : dict of ndarray
        Per candidate fit, the supervised fit first: ``gamma_B``, ``gamma_W``,
        ``uses_unlabeled``, the leave-one-out scores of :func:`choose_by_loo` (``loo_score``,
        ``gain``, ``gain_se``, ``loo_mse``) and ``normalized_cut`` (NaN unless
        ``score="accuracy"``).
    """

    Ks: list
    Ps: list
    Ls: list | None
    gamma_B: float
    gamma_W: float
    graph: str
    table: dict


def choose_manifold(Ks, Y, c, gamma_A, gamma_B, gamma_W, graph, laplacians, n_neighbors, score):
    """Choose ``"auto"`` ``gamma_B`` / ``gamma_W`` with unlabelled points.

    Keeps the supervised fit (:func:`supervised_manifold` on the labelled points alone) unless
    a fit with the unlabelled points on ``graph``, at a pair of ``AUTO_GAMMA_B x AUTO_GAMMA_W``
    (a numeric value fixed), beats it by :func:`choose_by_loo`. A classifier
    (``score="accuracy"``) with a single label in some class, where no leave-one-out can judge,
    keeps instead the fit whose classes (labelled points as given, the others by the fit) have
    the smallest :func:`normalized_cut` on the graph counting the views in which two points are
    ``n_neighbors``-nearest neighbours.

    Parameters
    ----------
    Ks : sequence of ndarray of shape (N, N)
        The Gram matrices over the ``l`` labelled points first, then the unlabelled ones.
    Y : ndarray of shape (l, d)
        The targets of the labelled points.
    c : array-like of shape (m,)
        The combination weights.
    gamma_A : float
        The weight of the RKHS norm.
    gamma_B : float or "auto"
        The between-view weight.
    gamma_W : float or "auto"
        The within-view weight.
    graph : str
        The graph of the within-view Laplacians of the fits with unlabelled points.
    laplacians : callable
        ``laplacians(Ks, graph)`` gives the per-view Laplacians.
    n_neighbors : int
        The neighbours of the graph of the normalised cut.
    score : {"accuracy", "squared"}
        The per-point score of :func:`choose_by_loo`.

    Returns
    -------
    choice : ManifoldChoice
        The problem kept and the table of every candidate.
    """
    ell = Y.shape[0]
    sup_B, sup_W, sup_graph = supervised_manifold(gamma_B, gamma_W, graph)
    KL = [K[:ell, :ell] for K in Ks]
    PL = [psd_sqrt(K) for K in KL]
    LL = laplacians(KL, sup_graph) if sup_W else None
    Ps = [psd_sqrt(K) for K in Ks]
    pairs = [
        (gB, gW)
        for gB in (AUTO_GAMMA_B if isinstance(gamma_B, str) else (gamma_B,))
        for gW in (AUTO_GAMMA_W if isinstance(gamma_W, str) else (gamma_W,))
    ]
    Ls = laplacians(Ks, graph) if any(gW for _, gW in pairs) else None
    # (leave-one-out outputs, coefficients); the supervised fit's span the labelled points only
    fits = [mvl_ls_loo(KL, Y, c, gamma_A, sup_B, sup_W, LL, PL, return_coef=True)]
    fits += [
        mvl_ls_loo(Ks, Y, c, gamma_A, gB, gW, Ls if gW else None, Ps, return_coef=True) for gB, gW in pairs
    ]
    best, table = choose_by_loo(Y, [loo for loo, _ in fits], score)
    cuts = np.full(len(fits), np.nan)
    if score == "accuracy":
        # the labelled points keep their classes; each unlabelled point takes its fitted class
        knn = sum(knn_graph(K, n_neighbors) > 0 for K in Ks).astype(float)
        label_of = np.argmax(Y, axis=1)
        fitted = [sum(cv * K[ell:, : A.shape[1]] @ Av for cv, K, Av in zip(c, Ks, A)) for _, A in fits]
        cuts = np.array([normalized_cut(knn, np.r_[label_of, np.argmax(F, 1)]) for F in fitted])
        if np.bincount(label_of).min() < 2:
            best = int(np.argmin(cuts))  # first (the supervised fit) among equals
    pairs = [(sup_B, sup_W)] + pairs
    table = {
        "gamma_B": np.array([p[0] for p in pairs]),
        "gamma_W": np.array([p[1] for p in pairs]),
        "uses_unlabeled": np.arange(len(pairs)) > 0,
        **table,
        "normalized_cut": cuts,
    }
    if best == 0:
        return ManifoldChoice(KL, PL, LL, sup_B, sup_W, sup_graph, table)
    gB, gW = pairs[best]
    return ManifoldChoice(Ks, Ps, Ls if gW else None, gB, gW, graph, table)
