"""MVML's feature blocks ``U_v``: the Gram matrices on the full path (Algorithm 1a) or the
block-Nyström factors ``K_v[:, S] (K_v[S, S]⁺)^{1/2}`` (Algorithm 1b, §3.5), their test-time
extension, the decision values, and the fitted attributes recorded from a solver's results."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..diagnostics import FitTrace
from ..kernels import block_nystrom, get_kernel, n_landmarks
from .steps import _group_norms, _symmetric

__all__ = [
    "FeatureMap",
    "decision_values",
    "fitted_attributes",
    "kernel_list",
    "kernel_params_list",
    "out_of_sample_features",
    "train_features",
]


def kernel_list(kernel, n_views):
    """One kernel (name, callable or ``"precomputed"``) per view.

    Parameters
    ----------
    kernel : str, callable or list
        One kernel for every view, or a list of one kernel per view.
    n_views : int
        The number of views.

    Returns
    -------
    kernels : list of length n_views
        The kernel of each view.

    Raises
    ------
    ValueError
        If a list of kernels does not have ``n_views`` entries, if a kernel name is unknown,
        or if ``"precomputed"`` does not apply to every view.
    """
    if isinstance(kernel, (list, tuple)):
        if len(kernel) != n_views:
            raise ValueError(
                f"kernel has {len(kernel)} entries but Xs has {n_views} views; give one kernel per view"
            )
        ks = list(kernel)
    else:
        ks = [kernel] * n_views
    precomputed = [isinstance(k, str) and k == "precomputed" for k in ks]
    if any(precomputed) and not all(precomputed):
        raise ValueError("kernel='precomputed' must apply to every view")
    if not precomputed[0]:
        for k in ks:
            get_kernel(k)  # raises a clear ValueError for unknown names
    return ks


def kernel_params_list(kernel_params, n_views):
    """One parameter dict per view.

    Parameters
    ----------
    kernel_params : dict, list of dict or None
        ``None`` (no parameters), one dict for every view, or a list of one dict (or None)
        per view.
    n_views : int
        The number of views.

    Returns
    -------
    params : list of dict of length n_views
        The kernel parameters of each view.

    Raises
    ------
    ValueError
        If a list does not have ``n_views`` entries.
    TypeError
        If ``kernel_params`` or one of its entries has another type.
    """
    if kernel_params is None:
        return [{}] * n_views
    if isinstance(kernel_params, dict):
        return [dict(kernel_params)] * n_views
    if isinstance(kernel_params, (list, tuple)):
        if len(kernel_params) != n_views:
            raise ValueError(f"kernel_params has {len(kernel_params)} entries but Xs has {n_views} views")
        out = []
        for p in kernel_params:
            if p is not None and not isinstance(p, dict):
                raise TypeError(f"kernel_params entries must be dicts or None, got {type(p).__name__}")
            out.append(dict(p or {}))
        return out
    raise TypeError(
        f"kernel_params must be a dict, a list of dicts or None, got {type(kernel_params).__name__}"
    )


def _gram(kernel, X, Y=None):
    """``kernel(X, Y)`` on host arrays (NumPy in, NumPy out: nothing to compile), symmetrised when ``Y`` is None."""
    K = np.asarray(kernel(np.asarray(X), None if Y is None else np.asarray(Y)), dtype=np.float64)
    return _symmetric(K) if Y is None else K


class FeatureMap(NamedTuple):
    """What a test point needs besides the kernels: the landmark count ``n_landmarks`` (``n``
    on the full path), whether the Nyström path ran, the landmark indices, the per-view
    ``(W_v⁺)^{1/2}`` factors (None on the full path) and the landmark rows of the views (None
    for precomputed kernels).

    Returned by :func:`train_features` and used by :func:`out_of_sample_features`; the MVML
    estimators store its fields as fitted attributes (``n_landmarks_``, ``nystrom_``, ...).

    Parameters
    ----------
    n_landmarks : int
        The number of landmarks ``p`` (``n`` on the full path).
    nystrom : bool
        Whether the block-Nyström path ran.
    landmarks : ndarray of int of shape (p,)
        The indices of the landmark samples (all ``n`` samples, in order, on the full path).
    nystrom_factors : ndarray of shape (V, p, p) or None
        The ``(W_v⁺)^{1/2}`` factor of each view on the Nyström path; None on the full path.
    landmark_views : list of ndarray of shape (p, n_features_v) or None
        The landmark rows of each view (the training views on the full path); None for
        precomputed kernels.
    """

    n_landmarks: int
    nystrom: bool
    landmarks: np.ndarray
    nystrom_factors: np.ndarray | None
    landmark_views: list | None


def train_features(Xs, kernels, params, nystrom, random_state):
    """Training feature blocks ``U`` and their :class:`FeatureMap`.

    ``U_v = K_v`` when the Nyström level ``nystrom`` gives ``p = n`` landmarks (Algorithm 1a of
    Huusari, Kadri & Capponi 2018), else the block-Nyström factors on one shared landmark set
    drawn with ``random_state`` (Algorithm 1b; only ``n x p`` kernel columns are formed).

    Parameters
    ----------
    Xs : list of array-like
        The training views, each ``(n, n_features)``; with precomputed kernels, the
        ``(n, n)`` Gram matrices.
    kernels : list
        One kernel per view, as returned by :func:`kernel_list`.
    params : list of dict
        One parameter dict per view, as returned by :func:`kernel_params_list`.
    nystrom : float or int
        The Nyström level: a fraction in (0, 1] of the samples or a number of landmarks.
    random_state : int, RandomState instance, Generator or None
        Draws the landmarks.

    Returns
    -------
    U : ndarray of shape (V, n, q)
        The feature blocks (``q = n`` on the full path, ``q = p`` otherwise).
    fmap : FeatureMap
        What :func:`out_of_sample_features` needs to extend them to new points.

    Raises
    ------
    ValueError
        If a precomputed Gram matrix is not square ``(n, n)`` or not symmetric, or if the
        kernel matrices contain NaN or inf.
    """
    n = Xs[0].shape[0]
    pre = kernels[0] == "precomputed"
    if pre:
        for v, K in enumerate(Xs):
            if K.shape != (n, n):
                raise ValueError(
                    f"with kernel='precomputed', Xs[{v}] must be a square (n_samples, n_samples) Gram "
                    f"matrix, got shape {K.shape}"
                )
            if not np.allclose(K, K.T, rtol=1e-8, atol=1e-10 * max(1.0, np.abs(K).max())):
                raise ValueError(f"precomputed kernel Xs[{v}] is not symmetric")
    p = n_landmarks(nystrom, n)
    if p == n:  # full path (Algorithm 1a): U_v = K_v
        if pre:
            U = np.stack([np.asarray(K, dtype=np.float64) for K in Xs])
        else:
            U = np.stack([_gram(get_kernel(k, **kp), X) for X, k, kp in zip(Xs, kernels, params)])
        fmap = FeatureMap(p, False, np.arange(n), None, None if pre else [np.asarray(X) for X in Xs])
    else:  # block-Nyström path (Algorithm 1b), shared landmarks; only n x p kernel columns
        bn = block_nystrom(
            [np.asarray(X, dtype=np.float64) for X in Xs],
            kernels="rbf" if pre else [get_kernel(k, **kp) for k, kp in zip(kernels, params)],
            n_components=p,
            random_state=random_state,
            precomputed=pre,
        )
        U = np.stack(bn.U)
        landmarks = np.asarray(bn.landmarks)
        factors = np.stack([f.W_pinv_sqrt for f in bn.factors])
        fmap = FeatureMap(
            p, True, landmarks, factors, None if pre else [np.asarray(X)[landmarks] for X in Xs]
        )
    if not np.isfinite(U).all():
        raise ValueError("the kernel matrices contain NaN or inf; check the kernel and its parameters")
    return U, fmap


def out_of_sample_features(Xs, kernels, params, fmap):
    """Test features ``U_test_v`` of new points.

    The kernel columns ``k_v(X, X_train)`` (full path) or the Nyström extension
    ``k_v(X, landmarks) (W_v⁺)^{1/2}`` (Huusari, Kadri & Capponi 2018, §3.5).

    Parameters
    ----------
    Xs : list of array-like
        The test views, each ``(m, n_features)``; with precomputed kernels, the test-vs-train
        kernels, each ``(m, n)``.
    kernels : list
        One kernel per view, as in training.
    params : list of dict
        One parameter dict per view, as in training.
    fmap : FeatureMap
        The feature map returned by :func:`train_features`.

    Returns
    -------
    U_test : ndarray of shape (V, m, q)
        The test feature blocks.
    """
    if kernels[0] == "precomputed":
        Qs = [np.asarray(K, dtype=np.float64)[:, fmap.landmarks] for K in Xs]
    else:
        Qs = [
            _gram(get_kernel(k, **kp), X, L) for X, L, k, kp in zip(Xs, fmap.landmark_views, kernels, params)
        ]
    if fmap.nystrom:
        Qs = [Q @ W for Q, W in zip(Qs, fmap.nystrom_factors)]
    return np.stack(Qs)


def decision_values(Ut, g, w):
    """Decision values ``Σ_v w_v U_test_v g_v``, one column per output.

    Parameters
    ----------
    Ut : ndarray of shape (V, m, q)
        The test feature blocks (:func:`out_of_sample_features`).
    g : array-like of shape (C, Vq) or (Vq,)
        The fitted ``g`` of each output.
    w : array-like of shape (C, V) or (V,)
        The view weights of each output.

    Returns
    -------
    F : ndarray of shape (m, C)
        The decision values.
    """
    V, _, q = Ut.shape
    G = np.asarray(g).reshape(-1, V, q) * np.asarray(w).reshape(-1, V)[:, :, None]
    return sum(Ut[v] @ G[:, v, :].T for v in range(V))


def fitted_attributes(solver, results, method):
    """The fitted attributes of an MVML estimator from a solver's results.

    Parameters
    ----------
    solver : MVMLSolver
        The :class:`~bayesmv.mvml.solver.MVMLSolver` that produced ``results``.
    results : list of dict
        One result of ``solver.fit`` per output.
    method : str
        The method name recorded in the fit traces.

    Returns
    -------
    attributes : dict
        ``A_``, ``g_``, ``weights_``, ``block_norms_`` (stacked over outputs when there are
        several), ``solver_form_``, ``fit_traces_`` (one per output), ``n_iter_`` and
        ``fit_trace_``, whose objective is the sum over the outputs (independent problems;
        shorter traces padded with their final values).
    """
    A = [solver.metric_matrix(r) for r in results]
    norms = [_group_norms(a, solver.V) for a in A]

    def stack(xs):
        return np.asarray(xs[0]) if len(results) == 1 else np.stack([np.asarray(x) for x in xs])

    out = {
        "solver_form_": solver.form,
        "A_": stack(A),
        "g_": stack([r["g"] for r in results]),
        "weights_": stack([r["w"] for r in results]),
        "block_norms_": stack(norms),
    }
    out["fit_traces_"] = [
        FitTrace(
            estimates={"weights": np.asarray(r["w"]), "block_norms": nv},
            traces={"objective": r["objective"], "step_size": r["step_size"]},
            converged=r["converged"],
            method=method,
        )
        for r, nv in zip(results, norms)
    ]
    T = max(len(r["objective"]) for r in results)
    out["n_iter_"] = T - 1
    out["fit_trace_"] = FitTrace(
        estimates={"weights": out["weights_"], "block_norms": out["block_norms_"]},
        traces={
            "objective": sum(
                np.pad(r["objective"], (0, T - len(r["objective"])), mode="edge") for r in results
            )
        },
        converged=all(r["converged"] for r in results),
        method=method,
    )
    return out
