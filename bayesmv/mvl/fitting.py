"""The steps of an MVL fit as functions: kernels bound to the views, training Gram matrices,
the least-squares (Algorithm 1, with MVL-LS-optC's alternation, §6), SVM (Algorithm 2) and
matrix-free CG fits, and the per-view outputs ``f^v(x) = k^v(x, X) A[v]``. The estimators in
:mod:`bayesmv.mvl.estimators` validate their input, call these and store the results."""

from __future__ import annotations

import numpy as np

from ..datasets import check_views
from ..diagnostics import FitTrace
from ..kernels import (
    Kernel,
    additive_chi2_kernel,
    gamma_from_bandwidth,
    get_kernel,
    kernel_matvec,
    median_heuristic,
)
from .combination import sphere_lstsq
from .graphs import _manifold_matrix
from .least_squares import _FixedManifoldLS, mvl_ls_cg, mvl_ls_objective, mvl_ls_solve
from .svm import mvl_svm_solve

__all__ = [
    "bind_kernels",
    "check_precomputed_grams",
    "choose_solver",
    "combination_weights",
    "fit_least_squares",
    "fit_least_squares_cg",
    "fit_svm",
    "train_grams",
    "view_outputs",
]


def _blocked_gram(kernel, X, Y, block=256):
    """Gram matrix in row blocks (memory-bounded for kernels with ``O(n m d)`` intermediates)."""
    X = np.asarray(X)
    Y = X if Y is None else np.asarray(Y)
    out = np.empty((X.shape[0], Y.shape[0]))
    for s in range(0, X.shape[0], block):
        out[s : s + block] = np.asarray(kernel(X[s : s + block], Y))
    return out


def _default_kernel(name, params, X):
    """Bind data-driven defaults: RBF/Laplacian ``gamma`` from the median heuristic,
    ``chi2`` ``gamma = 1 / median chi² distance``."""
    params = dict(params)
    if name in ("rbf", "laplacian") and params.get("gamma") is None:
        params["gamma"] = gamma_from_bandwidth(median_heuristic(X))
    if name == "chi2" and params.get("gamma") is None:
        Xs = X[np.random.default_rng(0).choice(X.shape[0], min(X.shape[0], 500), replace=False)]
        D = -_blocked_gram(additive_chi2_kernel, Xs, Xs, block=64)
        med = np.median(D[np.triu_indices(D.shape[0], 1)])
        params["gamma"] = 1.0 / med if med > 0 else 1.0
    return get_kernel(name, **params)


def bind_kernels(kernel, kernel_params, views):
    """One bound scalar kernel ``k^v`` per view (Minh, Bazzani & Murino 2016, eq. 93).

    Names get their data-driven defaults from the training ``views`` (:func:`_default_kernel`:
    RBF/Laplacian ``gamma`` from the median heuristic, ``chi2`` ``gamma = 1 / median chi²
    distance``).

    Parameters
    ----------
    kernel : str, callable, Kernel or list
        One kernel (a name, a callable or a bayesmv ``Kernel``) for every view, or one per view.
    kernel_params : dict, list of dict or None
        The kernel parameters: one value for every view, or one per view.
    views : sequence of array-like
        The training views.

    Returns
    -------
    kernels : tuple of callable
        The bound kernel of each view.

    Raises
    ------
    ValueError
        If a list of kernels or parameters does not have one entry per view, or
        ``"precomputed"`` is given for some views only.
    TypeError
        If a kernel is neither a name, a callable nor a bayesmv ``Kernel``.
    """
    m = len(views)
    kern = kernel if isinstance(kernel, (list, tuple)) else [kernel] * m
    params = kernel_params if isinstance(kernel_params, (list, tuple)) else [kernel_params] * m
    if len(kern) != m or len(params) != m:
        raise ValueError(
            f"kernel and kernel_params must be single values or lists of length {m} (one per view)"
        )
    bound = []
    for v, (k, p) in enumerate(zip(kern, params)):
        p = {} if p is None else dict(p)
        if isinstance(k, str):
            if k == "precomputed":
                raise ValueError("kernel='precomputed' must apply to all views")
            bound.append(_default_kernel(k, p, views[v]))
        elif isinstance(k, Kernel) or callable(k):
            bound.append(get_kernel(k, **p))
        else:
            raise TypeError(
                f"kernel[{v}] must be a name, a callable or a bayesmv Kernel, got {type(k).__name__}"
            )
    return tuple(bound)


def check_precomputed_grams(Xs, n_labeled, min_views=1):
    """Validate the training Gram matrices of ``kernel="precomputed"``.

    Parameters
    ----------
    Xs : sequence of array-like of shape (N, N)
        The Gram matrix of each view, labelled points first.
    n_labeled : int
        The number of labelled points.
    min_views : int, default=1
        The least number of views.

    Returns
    -------
    Ks : list of ndarray of shape (N, N)
        The validated Gram matrices.

    Raises
    ------
    ValueError
        If there are too few views, a matrix is not square ``(N, N)`` or not symmetric, or
        ``N < n_labeled``.
    """
    Ks = check_views(Xs, min_views=min_views)
    N = Ks[0].shape[0]
    for v, K in enumerate(Ks):
        if K.shape != (N, N):
            raise ValueError(
                f"Xs[{v}] must be a square (N, N) Gram matrix with kernel='precomputed', got shape {K.shape}"
            )
        if not np.allclose(K, K.T, atol=1e-8 * max(1.0, np.abs(K).max())):
            raise ValueError(f"Xs[{v}] (precomputed Gram) is not symmetric")
    if n_labeled > N:
        raise ValueError(f"y has {n_labeled} entries but the Gram matrices have only {N} rows")
    return Ks


def train_grams(kernels, data):
    """Training Gram matrices (float64).

    Parameters
    ----------
    kernels : sequence of callable or None
        The bound kernel of each view; None for ``kernel="precomputed"``.
    data : sequence of array-like
        The training views, or the Gram matrices themselves when ``kernels`` is None.

    Returns
    -------
    Ks : list of ndarray of shape (N, N)
        ``data`` itself when ``kernels`` is None, else ``k^v(X^v, X^v)`` per view.

    Raises
    ------
    ValueError
        If a Gram matrix contains NaN or inf.
    """
    grams = data if kernels is None else [_blocked_gram(k, X, None) for k, X in zip(kernels, data)]
    Ks = [np.asarray(K, dtype=float) for K in grams]
    for v, K in enumerate(Ks):
        if not np.all(np.isfinite(K)):
            raise ValueError(f"the Gram matrix of view {v} contains NaN/inf")
    return Ks


def combination_weights(c, n_views):
    """The combination operator's weights (Minh, Bazzani & Murino 2016, eq. 52).

    Parameters
    ----------
    c : array-like of shape (n_views,) or None
        The weights to check; None: uniform.
    n_views : int
        The number of views ``m``.

    Returns
    -------
    c : ndarray of shape (n_views,)
        ``c`` checked, or uniform ``1/m``.

    Raises
    ------
    ValueError
        If ``c`` is not a finite vector of length ``n_views``, or is the zero vector.
    """
    if c is None:
        return np.full(n_views, 1.0 / n_views)
    out = np.asarray(c, dtype=float).ravel()
    if out.shape != (n_views,) or not np.all(np.isfinite(out)):
        raise ValueError(f"c must be a finite vector of length n_views={n_views}, got {c!r}")
    if not np.any(out):
        raise ValueError("c must not be the zero vector")
    return out


def choose_solver(solver, loss, n_rows, auto, precomputed, optimize_c, graph, laplacian, laplacian_power):
    """Resolve the ``solver`` parameter to ``"cg"`` or ``"dense"``.

    The matrix-free CG (:func:`mvl_ls_cg`) handles MVL-LS with real kernels at fixed ``c`` on
    the unnormalised kernel graph (Minh, Bazzani & Murino 2016, §7.1); with ``solver="auto"``
    it is taken when the system has more than 6000 rows (``n_rows = m N``) and the manifold
    weights are not chosen by leave-one-out (``auto``).

    Parameters
    ----------
    solver : {"auto", "dense", "cg"}
        The requested solver.
    loss : str
        The loss; CG needs ``"squared"``.
    n_rows : int
        The rows of the system, ``m N``.
    auto : bool
        Whether the manifold weights are chosen by leave-one-out.
    precomputed : bool
        Whether the kernels are precomputed.
    optimize_c : bool
        Whether ``c`` is optimised (MVL-LS-optC).
    graph : str
        The graph of the within-view Laplacians; CG needs ``"kernel"``.
    laplacian : str
        The Laplacian; CG needs ``"unnormalized"``.
    laplacian_power : int
        The Laplacian's power; CG needs 1.

    Returns
    -------
    solver : {"cg", "dense"}
        The solver to run.

    Raises
    ------
    ValueError
        If ``solver="cg"`` is impossible: with leave-one-out manifold weights, or without real
        kernels, the squared loss, the unnormalised kernel graph to the power 1 and fixed ``c``.
    """
    if auto and solver == "cg":
        raise ValueError(
            "gamma_B / gamma_W = 'auto' with unlabelled points are chosen by exact leave-one-out, "
            "which needs the dense solver; give numbers with solver='cg'"
        )
    cg_ready = (
        not precomputed
        and loss == "squared"
        and not optimize_c
        and graph == "kernel"
        and laplacian == "unnormalized"
        and laplacian_power == 1
    )
    if solver == "cg" and not cg_ready:
        raise ValueError(
            "solver='cg' needs real kernels (not 'precomputed'), loss='squared', "
            "graph='kernel' with laplacian='unnormalized', laplacian_power=1, and optimize_c=False"
        )
    return (
        "cg" if solver == "cg" or (solver == "auto" and not auto and cg_ready and n_rows > 6000) else "dense"
    )


def fit_least_squares(Ks, Y, c, gamma_A, gamma_B, gamma_W, Ls, Ps, optimize_c=False, max_iter=20, tol=1e-4):
    """Fit MVL-LS at fixed ``c``, or MVL-LS-optC.

    MVL-LS at fixed ``c`` (Minh, Bazzani & Murino 2016, Theorem 10), or MVL-LS-optC (§6):
    alternate the coefficients and the ``c``-step on the sphere of radius ``||c||``
    (eq. 85-86, :func:`sphere_lstsq`) until the objective changes by at most ``tol``
    (relative) over a round, at most ``max_iter`` rounds.

    Parameters
    ----------
    Ks : sequence of ndarray of shape (N, N)
        The Gram matrices, labelled points first.
    Y : ndarray of shape (l, d)
        The targets of the labelled points.
    c : ndarray of shape (m,)
        The (starting) combination weights.
    gamma_A : float
        The weight of the RKHS norm.
    gamma_B : float
        The weight of the between-view term.
    gamma_W : float
        The weight of the within-view term.
    Ls : sequence of ndarray of shape (N, N) or None
        The within-view Laplacians; None: no within-view term.
    Ps : sequence of ndarray of shape (N, N)
        The ``psd_sqrt(K^v)`` of each view.
    optimize_c : bool, default=False
        Run MVL-LS-optC instead of a fit at fixed ``c``.
    max_iter : int, default=20
        The maximum number of rounds of MVL-LS-optC.
    tol : float, default=1e-4
        The relative change of the objective over a round at which MVL-LS-optC stops.

    Returns
    -------
    A : ndarray of shape (m, N, d)
        The coefficients.
    c : ndarray of shape (m,)
        The combination weights.
    fit_trace : FitTrace
        The objective after each step.
    c_history : ndarray of shape (n_steps, m)
        The combination weights at each step.
    """
    m, ell = len(Ks), Y.shape[0]
    objs, cs = [], []
    converged = True
    radius = float(np.linalg.norm(c))
    if optimize_c:
        fixed = _FixedManifoldLS(Ps, Ls, ell, gamma_A, gamma_B, gamma_W)

        def solve(c):
            return fixed.solve(c, Y)
    else:

        def solve(c):
            return mvl_ls_solve(Ks, Y, c, gamma_A, gamma_B, gamma_W, Ls, Ps=Ps)

    def objective(c, A):
        return mvl_ls_objective(Ks, Y, c, A, gamma_A, gamma_B, gamma_W, Ls)

    for _ in range(max_iter if optimize_c else 1):
        A = solve(c)
        objs.append(objective(c, A))
        cs.append(c.copy())
        if not optimize_c:
            break
        # c-step (eq. 85): F[(i, k), v] = f^v(x_i)_k over labelled points
        F = np.stack([Ks[v][:ell] @ A[v] for v in range(m)], axis=-1).reshape(-1, m)
        c, _ = sphere_lstsq(F, Y.ravel(), radius)
        objs.append(objective(c, A))
        cs.append(c.copy())
        if len(objs) >= 3 and abs(objs[-3] - objs[-1]) <= tol * max(1.0, abs(objs[-1])):
            A = solve(c)
            objs.append(objective(c, A))
            break
    else:
        if optimize_c:
            converged = False
            A = solve(c)
            objs.append(objective(c, A))
    trace = FitTrace(
        estimates={"c": c},
        traces={"objective": np.asarray(objs)},
        converged=converged,
        method="mvl-ls-optc" if optimize_c else "mvl-ls",
    )
    return A, c, trace, np.asarray(cs)


def fit_svm(Ps, Ls, codes, n_classes, c, gamma_A, gamma_B, gamma_W, loss, tol=1e-7, max_iter=500):
    """Fit MVL-SVM / MVL-binSVM on the manifold ``gamma_B M_B + gamma_W M_W``.

    Algorithm 2 of Minh, Bazzani & Murino 2016, through :func:`mvl_svm_solve`.

    Parameters
    ----------
    Ps : sequence of ndarray of shape (N, N)
        The ``psd_sqrt(K^v)`` of each view, labelled points first.
    Ls : sequence of ndarray of shape (N, N) or None
        The within-view Laplacians; None: no within-view term.
    codes : array-like of shape (l,)
        The integer labels of the labelled points.
    n_classes : int
        The number of classes.
    c : ndarray of shape (m,)
        The combination weights.
    gamma_A : float
        The weight of the RKHS norm.
    gamma_B : float
        The weight of the between-view term.
    gamma_W : float
        The weight of the within-view term.
    loss : {"simplex_hinge", "hinge"}
        Simplex coding (MVL-SVM) or one-vs-all (MVL-binSVM).
    tol : float, default=1e-7
        The KKT tolerance of the QPs.
    max_iter : int, default=500
        The iteration cap of each QP.

    Returns
    -------
    A : ndarray of shape (m, N, d)
        The coefficients.
    alpha : ndarray
        The dual variables.
    fit_trace : FitTrace
        The objective of the QPs and the largest KKT violation.
    n_iter : int
        The iterations of all the QPs together.
    """
    m, N = len(Ps), Ps[0].shape[0]
    M = _manifold_matrix(Ls if Ls is not None else [np.zeros((N, N))] * m, gamma_B, gamma_W)
    A, alpha, infos = mvl_svm_solve(
        Ps, codes, n_classes, c, gamma_A, M, loss=loss, tol=tol, max_iter=max_iter
    )
    kkt = max(i["kkt"] for i in infos)
    trace = FitTrace(
        estimates={"c": c, "kkt_violation": np.array(kkt)},
        traces={"objective": np.concatenate([i["objective"] for i in infos])},
        converged=bool(kkt <= 10 * tol),
        method=f"mvl-{loss}-box-qp",
    )
    return A, alpha, trace, int(sum(i["n_iter"] for i in infos))


def fit_least_squares_cg(kernels, views, Y, c, gamma_A, gamma_B, gamma_W, tol=1e-8, max_iter=5000):
    """Fit matrix-free MVL-LS (:func:`mvl_ls_cg`) with its fit trace.

    Parameters
    ----------
    kernels : sequence of callable
        The bound kernel of each view.
    views : sequence of array-like of shape (N, n_features)
        The training views, labelled points first.
    Y : ndarray of shape (l, d)
        The targets of the labelled points.
    c : ndarray of shape (m,)
        The combination weights.
    gamma_A : float
        The weight of the RKHS norm.
    gamma_B : float
        The weight of the between-view term.
    gamma_W : float
        The weight of the within-view term.
    tol : float, default=1e-8
        The relative residual at which CG stops.
    max_iter : int, default=5000
        The maximum number of CG iterations.

    Returns
    -------
    A : ndarray of shape (m, N, d)
        The coefficients.
    fit_trace : FitTrace
        The relative residual reached.
    n_iter : int
        The number of CG iterations.

    Raises
    ------
    FloatingPointError
        If the coefficients are not finite.
    """
    A, k, res = mvl_ls_cg(kernels, views, Y, c, gamma_A, gamma_B, gamma_W, tol=tol, max_iter=max_iter)
    if not np.all(np.isfinite(A)):
        raise FloatingPointError("MVL-LS CG produced non-finite coefficients; increase gamma_A")
    trace = FitTrace(
        estimates={"c": c},
        traces={"residual": np.array([res])},
        converged=bool(res <= tol),
        method="mvl-ls-cg",
    )
    return A, trace, k


def view_outputs(A, test_views, kernels=None, X_fit=None):
    """Per-view outputs ``f^v(x) = k^v(x, X) A[v]`` (Algorithm 1's output).

    Parameters
    ----------
    A : ndarray of shape (m, N, d)
        The coefficients.
    test_views : sequence of array-like
        The test-vs-training Gram matrices ``(n, N)`` when ``kernels`` is None, else the test
        views.
    kernels : sequence of callable or None, default=None
        The bound kernel of each view; None: precomputed kernels.
    X_fit : sequence of array-like or None, default=None
        The training views the test views are evaluated against (by ``kernel_matvec``).

    Returns
    -------
    F : ndarray of shape (n, m, d)
        The output of each view at each test point.
    """
    if kernels is None:
        return np.stack([np.asarray(K) @ A[v] for v, K in enumerate(test_views)], axis=1)
    return np.stack(
        [
            np.asarray(kernel_matvec(X, A[v], Y=Xt, kernel=k))
            for v, (k, X, Xt) in enumerate(zip(kernels, test_views, X_fit))
        ],
        axis=1,
    )
