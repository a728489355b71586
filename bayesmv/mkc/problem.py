"""The problem MKC's solver is handed: validated kernels and masks, per-view scaling, the
between-view weights, the starting point (a joint ridge self-representation) and the random
basis of ``"rnd"``, and the completed kernels read back from a solution."""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from ..datasets import reject_sparse
from .solver import _psd_project, _reconstruct

__all__ = ["CompletionProblem", "completed_kernels", "completion_problem"]


def _check_inputs(Ks, observed):
    reject_sparse(Ks, "Ks")
    if isinstance(Ks, np.ndarray) and Ks.ndim in (2, 3):
        Ks = list(Ks) if Ks.ndim == 3 else [Ks]  # one 2-D array is one view's kernel
    if not isinstance(Ks, (list, tuple)) or len(Ks) == 0:
        raise ValueError("Ks must be a non-empty list of (n, n) kernel matrices, one per view")
    mats = []
    for m, K in enumerate(Ks):
        K = np.asarray(K)
        if K.dtype.kind == "c":
            raise ValueError(f"Ks[{m}] has complex dtype {K.dtype}: Complex data not supported")
        if K.dtype.kind not in "biuf":
            raise TypeError(f"Ks[{m}] has dtype {K.dtype}; kernels must be real numeric")
        K = K.astype(np.float64)
        if K.ndim != 2 or K.shape[0] != K.shape[1]:
            raise ValueError(f"Ks[{m}] must be a square (n, n) matrix, got shape {K.shape}")
        if np.isinf(K).any():
            raise ValueError(f"Ks[{m}] contains inf")
        mats.append(K)
    n = mats[0].shape[0]
    if n == 0:
        raise ValueError("Ks holds empty (0, 0) kernels; need at least 2 samples")
    if any(K.shape[0] != n for K in mats):
        raise ValueError(f"all kernels in Ks must have the same size; got {[K.shape for K in mats]}")
    M = len(mats)
    if M < 2:
        raise ValueError(f"Ks has {M} view; multi-view kernel completion needs at least 2 views")
    if observed is None:
        obs = np.stack([~np.isnan(np.diag(K)) for K in mats])
    else:
        obs = np.asarray(observed)
        if obs.dtype != bool:
            raise TypeError(f"observed must be a boolean (n_views, n) mask, got dtype {obs.dtype}")
        if obs.shape != (M, n):
            raise ValueError(f"observed must have shape (n_views, n) = {(M, n)}, got {obs.shape}")
    for m, K in enumerate(mats):
        o = obs[m]
        block = K[np.ix_(o, o)]
        if np.isnan(block).any():
            raise ValueError(
                f"Ks[{m}] has NaN inside its observed block; missing samples must be whole NaN "
                "rows/columns (or pass an explicit observed mask)"
            )
        if not np.allclose(block, block.T, atol=1e-8 * max(1.0, np.abs(block).max(initial=0.0))):
            raise ValueError(f"Ks[{m}] is not symmetric on its observed block")
        if o.sum() < 2:
            raise ValueError(f"Ks[{m}] observes {int(o.sum())} sample(s); MKC needs at least 2 per view")
    if (~obs).all(axis=0).any():
        bad = np.flatnonzero((~obs).all(axis=0))
        raise ValueError(f"samples {bad.tolist()[:10]} are missing from every view; they cannot be completed")
    return mats, obs


def _prepare(Ks, obs):
    """Zero-filled, per-view scaled kernels and masks."""
    M, n = obs.shape
    scale = np.empty(M)
    Kz = np.zeros((M, n, n))
    common = obs.all(axis=0)
    for m, K in enumerate(Ks):
        o = obs[m]
        # scale on the samples seen in every view when there are some (same samples for all views)
        d = np.diag(K)[common] if common.sum() >= 2 else np.diag(K)[o]
        s = float(np.mean(d))
        if not s > 0:
            raise ValueError(f"Ks[{m}] has a non-positive mean observed diagonal ({s}); is it a kernel?")
        scale[m] = s
        Kz[m] = np.where(np.outer(o, o), np.nan_to_num(K) / s, 0.0)
    W = (obs[:, :, None] & obs[:, None, :]).astype(np.float64)
    return Kz, W, obs.astype(np.float64), scale


def _joint_self_representation(Kz, obs, dict_mask, ridge, leave_out=True):
    """Multi-view start for A: each sample's feature maps, in the views observing it, regressed
    jointly (one weight vector for all those views) on a dictionary of samples seen in every view.

    ``c_t = (Σ_{m∋t} K^(m)_DD + εI)^{-1} Σ_{m∋t} K^(m)_Dt`` with ``t`` left out of ``D`` (so the
    weights are a genuine reconstruction, not the identity). Weights found this way are shared by
    the views and supported on rows observed everywhere, so they transfer to views missing ``t``.
    Returns ``(n, n)`` with rows in ``D``.
    """
    import scipy.linalg as sla

    M, n, _ = Kz.shape
    D = np.flatnonzero(dict_mask)
    C = np.zeros((n, n))
    patterns = {}
    for t in range(n):
        patterns.setdefault(tuple(obs[:, t]), []).append(t)
    for pat, cols in patterns.items():
        views = np.flatnonzero(pat)
        Ksum = Kz[views].sum(axis=0)
        KDD = Ksum[np.ix_(D, D)]
        eps = ridge * max(np.trace(KDD) / len(D), 1e-12)
        for t in cols:
            keep = D[D != t] if leave_out else D
            Kk = Ksum[np.ix_(keep, keep)] + eps * np.eye(len(keep))
            cf = sla.cho_factor(Kk, lower=True)
            C[keep, t] = sla.cho_solve(cf, Ksum[keep, t])
    return C


def _initial_point(method, Kz, obs, rowmask, ridge):
    M, n, _ = Kz.shape
    if method == "sdp":
        num = Kz.sum(axis=0)
        cnt = (obs[:, :, None] & obs[:, None, :]).sum(axis=0)
        fill = np.where(cnt > 0, num / np.maximum(cnt, 1), 0.0)
        K0 = np.where(obs[:, :, None] & obs[:, None, :], Kz, fill[None])
        return np.asarray(_psd_project(jnp.asarray(K0)))
    dict_mask = rowmask.all(axis=0)
    if dict_mask.sum() < 2:  # too few samples seen everywhere: those seen in the most views
        cnt = rowmask.sum(axis=0)
        dict_mask = cnt >= np.sort(cnt)[-min(n, max(2, n // 4))]
    # a fixed random basis (rnd) represents itself; otherwise leave t out of its own dictionary
    C = _joint_self_representation(Kz, obs, dict_mask, ridge, leave_out=method != "rnd")
    if method == "embd_hm":
        return C
    return np.broadcast_to(C, (M, n, n)) * rowmask[:, :, None]


def _random_basis(obs, n_basis, rng):
    M, n = obs.shape
    n_obs = obs.sum(axis=0)
    order = rng.permutation(n)
    # prefer samples seen in every view, then in most views (ties broken at random)
    order = order[np.argsort(-n_obs[order], kind="stable")]
    basis = np.sort(order[:n_basis])
    rowmask = np.zeros((M, n), bool)
    rowmask[:, basis] = True
    return rowmask & obs


class CompletionProblem(NamedTuple):
    """Everything the solver needs (NumPy): the scaled kernels ``Kz`` with missing entries 0, the
    pair weights ``W`` and ``P``, the per-view ``scale``, the ``observed`` mask, the rows the
    reconstruction weights may use (``rowmask``: the basis of ``"rnd"``, the samples any view
    observes for ``"embd_hm"``), and the starting point ``theta0``, ``S0``.

    Built by :func:`completion_problem` and handed to
    :func:`~bayesmv.mkc.solver.solve_completion`; ``M`` is the number of views and ``n`` the
    number of samples.

    Parameters
    ----------
    Kz : ndarray of shape (M, n, n)
        The kernel of each view divided by its ``scale``, with the entries of missing samples
        set to 0.
    W : ndarray of shape (M, n, n)
        The weights of the within-view fit: 1 where the view observes both samples of the
        pair, 0 elsewhere.
    P : ndarray of shape (M, n)
        The observed mask as floats (1 observed, 0 missing), weighting the rows of the
        between-view term.
    scale : ndarray of shape (M,)
        The scale of each view: the mean of its observed diagonal (over the samples seen in
        every view, when there are at least 2).
    observed : ndarray of shape (M, n), dtype=bool
        The mask of the samples each view observes.
    rowmask : ndarray of shape (M, n) or (n,), dtype=bool
        The rows the reconstruction weights may use: per view, the observed samples of the
        random basis for ``"rnd"`` and the observed samples otherwise; for ``"embd_hm"``, one
        row mask of the samples any view observes.
    theta0 : ndarray of shape (M, n, n) or (n, n)
        The starting point: the reconstruction weights (one ``(n, n)`` matrix shared by the
        views for ``"embd_hm"``), or the kernels themselves for ``"sdp"``.
    S0 : ndarray of shape (M, M)
        The starting between-view weights: uniform, ``1 / (M - 1)`` off the diagonal and 0 on
        it.
    """

    Kz: np.ndarray
    W: np.ndarray
    P: np.ndarray
    scale: np.ndarray
    observed: np.ndarray
    rowmask: np.ndarray
    theta0: np.ndarray
    S0: np.ndarray


def completion_problem(method, Ks, obs, seed, n_basis, ridge):
    """The :class:`CompletionProblem` of ``method`` on validated kernels and mask.

    Per-view scaling, the random basis of ``"rnd"``, the ridge self-representation start and
    uniform between-view weights.

    Parameters
    ----------
    method : {"embd_ht", "embd_hm", "app", "sdp", "rnd"}
        The completion variant.
    Ks : list of ndarray of shape (n, n)
        The validated kernel of each view (missing entries NaN).
    obs : ndarray of shape (n_views, n), dtype=bool
        The validated mask of observed samples.
    seed : int
        Seeds the draw of the random basis of ``"rnd"``.
    n_basis : int or None
        The size of the random basis of ``"rnd"``; None: half the samples.
    ridge : float
        The relative ridge of the self-representation start.

    Returns
    -------
    problem : CompletionProblem
        The problem handed to :func:`~bayesmv.mkc.solver.solve_completion`.

    Raises
    ------
    ValueError
        If a view has a non-positive mean observed diagonal.
    """
    Kz, W, P, scale = _prepare(Ks, obs)
    M, n = obs.shape
    if method == "rnd":
        nb = int(n_basis) if n_basis is not None else max(2, int(round(0.5 * n)))
        rowmask = _random_basis(obs, min(nb, n), np.random.default_rng(seed))
    else:
        rowmask = obs.copy()
    theta0 = _initial_point(method, Kz, obs, rowmask, ridge)
    S0 = (np.ones((M, M)) - np.eye(M)) / (M - 1)
    solver_rows = obs.any(axis=0) if method == "embd_hm" else rowmask
    return CompletionProblem(Kz, W, P, scale, obs, solver_rows, theta0, S0)


def completed_kernels(method, theta, problem):
    """The completed kernels of a solution, symmetrised and scaled back.

    Parameters
    ----------
    method : {"embd_ht", "embd_hm", "app", "sdp", "rnd"}
        The completion variant.
    theta : array-like
        The solution: the reconstruction weights, or the kernels themselves for ``"sdp"``.
    problem : CompletionProblem
        The problem it solves.

    Returns
    -------
    kernels : ndarray of shape (n_views, n, n)
        The completed kernels.
    """
    Kz = jnp.asarray(problem.Kz)
    if method == "sdp":
        Khat = np.asarray(theta)
    elif method == "embd_hm":
        Khat = np.asarray(_reconstruct(jnp.asarray(theta)[None], Kz))
    else:
        Khat = np.asarray(_reconstruct(jnp.asarray(theta), Kz))
    Khat = 0.5 * (Khat + np.swapaxes(Khat, -1, -2))
    return Khat * problem.scale[:, None, None]
