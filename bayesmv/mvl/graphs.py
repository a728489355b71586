"""MVL's manifold regularisers: between-view (eq. 54-57) and within-view graph Laplacians
(eq. 60-64), their view-major operator ``M``, and the normalised cut that judges a labelling."""

from __future__ import annotations

import numpy as np

from ..datasets import check_positive

__all__ = ["between_view_matrix", "graph_laplacian", "knn_graph", "normalized_cut", "view_laplacians"]


def between_view_matrix(n_views):
    """The between-view matrix ``M_m = m I_m - 1 1^T``.

    Minh, Bazzani & Murino 2016, eq. 54: ``a^T M_m a = sum_{j<k} (a_j - a_k)^2`` (eq. 55).

    Parameters
    ----------
    n_views : int
        The number of views ``m``.

    Returns
    -------
    M_m : ndarray of shape (m, m)
        The between-view matrix.
    """
    m = int(n_views)
    return m * np.eye(m) - np.ones((m, m))


def graph_laplacian(W, normalized=False, power=1):
    """Graph Laplacian of a symmetric non-negative weight matrix.

    Minh, Bazzani & Murino 2016, §4.2, eq. 60-64. Unnormalised ``L = D - W``
    (``a^T L a = sum_{j<k} W_jk (a_j - a_k)^2``; self-loops cancel) or, with
    ``normalized=True``, the symmetric normalised ``D^{-1/2} (D - W) D^{-1/2}`` of the graph
    without self-loops (eigenvalues in ``[0, 2]`` whatever the number of points and the
    degrees; isolated vertices get a zero row).

    Parameters
    ----------
    W : array-like of shape (N, N)
        The symmetric non-negative weight matrix.
    normalized : bool, default=False
        Return the symmetric normalised Laplacian instead of ``D - W``.
    power : int, default=1
        ``power = p`` returns ``L^p`` (iterated Laplacian, still symmetric PSD, so a valid
        ``M_W`` block of eq. 63).

    Returns
    -------
    L : ndarray of shape (N, N)
        The (iterated) Laplacian, symmetric.

    Raises
    ------
    ValueError
        If ``W`` is not square or ``power`` is not a positive integer.
    """
    W = np.array(W, dtype=float)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"W must be a square weight matrix, got shape {W.shape}")
    check_positive("power", power, integer=True)
    if normalized:
        np.fill_diagonal(W, 0.0)
        deg = W.sum(axis=1)
        s = np.where(deg > 0, 1.0 / np.sqrt(np.where(deg > 0, deg, 1.0)), 0.0)
        L = np.diag((deg > 0).astype(float)) - s[:, None] * W * s[None, :]
    else:
        L = np.diag(W.sum(axis=1)) - W
    L = 0.5 * (L + L.T)
    if power > 1:
        w, V = np.linalg.eigh(L)
        L = (V * np.clip(w, 0.0, None) ** int(power)) @ V.T
    return L


def knn_graph(K, n_neighbors=10):
    """Symmetric k-NN weight matrix from a similarity (Gram) matrix.

    ``W_ij = K_ij`` when ``j`` is among the ``n_neighbors`` most similar points of ``i`` or
    vice versa, else 0 (no self-loops).

    Parameters
    ----------
    K : array-like of shape (N, N)
        The similarity (Gram) matrix.
    n_neighbors : int, default=10
        The number of neighbours of each point (at most ``N - 1`` are used).

    Returns
    -------
    W : ndarray of shape (N, N)
        The symmetric weight matrix, with a zero diagonal.
    """
    K = np.asarray(K, dtype=float)
    n = K.shape[0]
    k = min(int(n_neighbors), n - 1)
    S = K.copy()
    np.fill_diagonal(S, -np.inf)
    W = np.zeros_like(K)
    if k > 0:
        idx = np.argpartition(-S, k - 1, axis=1)[:, :k]
        rows = np.repeat(np.arange(n), k)
        W[rows, idx.ravel()] = K[rows, idx.ravel()]
    W = np.maximum(W, W.T)
    np.fill_diagonal(W, 0.0)
    return W


def view_laplacians(Ks, graph="kernel", n_neighbors=10, laplacian="unnormalized", power=1):
    """Within-view Laplacians (``M_W`` blocks), one per view, from its Gram matrix.

    The blocks of ``M_W`` (Minh, Bazzani & Murino 2016, eq. 63), built by
    :func:`graph_laplacian`.

    Parameters
    ----------
    Ks : sequence of array-like of shape (N, N)
        The Gram matrix of each view.
    graph : {"kernel", "knn"}, default="kernel"
        The weights: the Gram itself (``"kernel"``, §7.1) or its symmetric k-NN
        sparsification (``"knn"``, :func:`knn_graph`).
    n_neighbors : int, default=10
        The number of neighbours of the k-NN graph.
    laplacian : {"unnormalized", "normalized"}, default="unnormalized"
        Unnormalised ``D - W`` or the symmetric normalised Laplacian.
    power : int, default=1
        The power of the (iterated) Laplacian.

    Returns
    -------
    Ls : list of ndarray of shape (N, N)
        The Laplacian of each view.
    """
    return [
        graph_laplacian(
            knn_graph(K, n_neighbors) if graph == "knn" else K,
            normalized=laplacian == "normalized",
            power=power,
        )
        for K in Ks
    ]


def _manifold_matrix(Ls, gamma_B, gamma_W):
    """View-major ``gamma_B (M_m ⊗ I_N) + gamma_W blockdiag(L^v)`` (eq. 57, 63)."""
    m = len(Ls)
    N = Ls[0].shape[0]
    M = gamma_B * np.kron(between_view_matrix(m), np.eye(N)) if gamma_B else np.zeros((m * N, m * N))
    if gamma_W:
        for v, L in enumerate(Ls):
            M[v * N : (v + 1) * N, v * N : (v + 1) * N] += gamma_W * np.asarray(L)
    return M


def normalized_cut(W, labels):
    """Normalised cut ``sum_k cut(C_k, rest) / vol(C_k)`` of a labelling (Shi & Malik 2000).

    Small when the classes follow the graph's clusters, about 1 for a class squeezed onto one
    point.

    Parameters
    ----------
    W : array-like of shape (N, N)
        The symmetric non-negative weights of the graph.
    labels : array-like of shape (N,)
        The labelling.

    Returns
    -------
    ncut : float
        The normalised cut.
    """
    W = np.asarray(W, dtype=float)
    labels = np.asarray(labels)
    deg = W.sum(axis=1)
    total = 0.0
    for k in np.unique(labels):
        inside = labels == k
        vol = deg[inside].sum()
        total += W[np.ix_(inside, ~inside)].sum() / vol if vol > 0 else 1.0
    return float(total)
