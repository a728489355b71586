"""The MVL estimators: input validation, the calls into :mod:`bayesmv.mvl.fitting` and
:mod:`bayesmv.mvl.selection`, and the fitted state (Minh, Bazzani & Murino 2016, Algorithms 1-2)."""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MultiOutputMixin,
    RegressorMixin,
    clone,
    is_classifier,
    is_regressor,
)
from sklearn.metrics import accuracy_score, r2_score

from ..base import MultiViewMixin, SearchCVMixin, encode_labels, labels_from_scores, require_targets
from ..datasets import check_label_vector, check_positive, check_targets, check_views
from ..kernels import DiagonalMultiViewKernel
from .fitting import (
    _blocked_gram,
    bind_kernels,
    check_precomputed_grams,
    choose_solver,
    combination_weights,
    fit_least_squares,
    fit_least_squares_cg,
    fit_svm,
    train_grams,
    view_outputs,
)
from .graphs import view_laplacians
from .least_squares import mvl_ls_path, psd_sqrt
from .selection import choose_manifold, supervised_manifold
from .svm import simplex_coding

__all__ = ["MVLClassifier", "MVLClassifierCV", "MVLRegressor", "MVLRegressorCV", "ls_path"]


class _MVLBase(MultiViewMixin, BaseEstimator):
    _min_views = 1

    def _check_params(self):
        check_positive("gamma_A", self.gamma_A)
        for name in ("gamma_B", "gamma_W"):
            value = getattr(self, name)
            if isinstance(value, str):
                if value != "auto":
                    raise ValueError(f"{name}={value!r}; use a number >= 0 or 'auto'")
            else:
                check_positive(name, value, allow_zero=True)
        for name in ("max_iter", "n_neighbors", "cg_max_iter", "laplacian_power"):
            check_positive(name, getattr(self, name), integer=True)
        check_positive("tol", self.tol)
        check_positive("cg_tol", self.cg_tol)
        if self.graph not in ("kernel", "knn"):
            raise ValueError(f"graph={self.graph!r}; use 'kernel' (kernel weights, §7.1) or 'knn'")
        if self.laplacian not in ("unnormalized", "normalized"):
            raise ValueError(f"laplacian={self.laplacian!r}; use 'unnormalized' (D - W) or 'normalized'")
        if self.solver not in ("auto", "dense", "cg"):
            raise ValueError(f"solver={self.solver!r}; use 'auto', 'dense' or 'cg'")

    def _views_and_kernels(self, Xs, n_labeled, Xs_unlabeled):
        """Validated training views (labelled then unlabelled) and the diagonal multi-view kernel
        (None, and the Gram matrices as views, for ``kernel="precomputed"``); records the views,
        ``kernels_`` and ``X_fit_``."""
        if isinstance(self.kernel, str) and self.kernel == "precomputed":
            if Xs_unlabeled is not None:
                raise ValueError(
                    "with kernel='precomputed' pass Gram matrices over labelled+unlabelled "
                    "points (labelled first) as Xs and leave Xs_unlabeled=None"
                )
            Ks = check_precomputed_grams(Xs, n_labeled, self._min_views)
            self._record_views(Ks)
            self.kernels_ = self.X_fit_ = None
            return Ks, None
        views = check_views(Xs, min_views=self._min_views, owner=type(self).__name__)
        if views[0].shape[0] != n_labeled:
            raise ValueError(f"y has {n_labeled} entries but Xs has {views[0].shape[0]} samples")
        self._record_views(views)
        if Xs_unlabeled is not None:
            unl = check_views(Xs_unlabeled, n_features=self.n_features_per_view_, name="Xs_unlabeled")
            views = [np.vstack([X, U]) for X, U in zip(views, unl)]
        self.kernels_ = bind_kernels(self.kernel, self.kernel_params, views)
        self.X_fit_ = views
        return views, DiagonalMultiViewKernel(self.kernels_)

    def _laplacians(self, Ks, graph):
        """Per-view Laplacians of ``graph`` with this estimator's ``n_neighbors``, ``laplacian``
        and ``laplacian_power``."""
        return view_laplacians(Ks, graph, self.n_neighbors, self.laplacian, self.laplacian_power)

    def _fit_core(self, Xs, Y, Xs_unlabeled, loss, codes=None, n_classes=None):
        self._check_params()
        t0 = time.perf_counter()
        ell = Y.shape[0]
        data, gkernel = self._views_and_kernels(Xs, ell, Xs_unlabeled)
        m, N = self.n_views_, data[0].shape[0]
        c = combination_weights(self.c, m)
        if self.optimize_c and loss != "squared":
            raise ValueError("optimize_c=True is only for loss='squared' (MVL-LS-optC, §6; Remark 18)")
        self.n_labeled_, self.n_unlabeled_ = ell, N - ell
        self.gamma_B_, self.gamma_W_, self.graph_ = supervised_manifold(
            self.gamma_B, self.gamma_W, self.graph
        )
        self.manifold_selection_ = None
        auto = isinstance(self.gamma_B, str) or isinstance(self.gamma_W, str)
        auto = auto and N > ell  # without unlabelled points "auto" is the supervised value
        graph = (self.graph_, self.laplacian, self.laplacian_power)
        solver = choose_solver(self.solver, loss, N * m, auto, gkernel is None, self.optimize_c, *graph)
        manifold = (self.gamma_A, self.gamma_B_, self.gamma_W_)
        if solver == "cg":
            A, self.fit_trace_, self.n_iter_ = fit_least_squares_cg(
                self.kernels_, data, Y, c, *manifold, self.cg_tol, self.cg_max_iter
            )
        else:
            Ks = train_grams(self.kernels_, data)
            if auto:
                score = "squared" if is_regressor(self) else "accuracy"
                weights = (self.gamma_A, self.gamma_B, self.gamma_W, self.graph)
                choice = choose_manifold(Ks, Y, c, *weights, self._laplacians, self.n_neighbors, score)
                Ks, Ps, Ls, self.gamma_B_, self.gamma_W_, self.graph_, self.manifold_selection_ = choice
                manifold = (self.gamma_A, self.gamma_B_, self.gamma_W_)
            else:
                Ps = [psd_sqrt(K) for K in Ks]
                Ls = self._laplacians(Ks, self.graph_) if self.gamma_W_ else None
            if loss == "squared":
                A, c, self.fit_trace_, self.c_history_ = fit_least_squares(
                    Ks, Y, c, *manifold, Ls, Ps, self.optimize_c, self.max_iter, self.tol
                )
                self.n_iter_ = len(self.c_history_)
            else:
                qp = (loss, self.qp_tol, self.qp_max_iter)
                A, self.dual_alpha_, self.fit_trace_, self.n_iter_ = fit_svm(
                    Ps, Ls, codes, n_classes, c, *manifold, *qp
                )
            if not np.all(np.isfinite(A)):
                raise FloatingPointError("MVL produced non-finite coefficients; increase gamma_A")
        if A.shape[1] < N:  # the supervised fit kept by "auto": no weight on the unlabelled points
            A = np.concatenate([A, np.zeros((m, N - A.shape[1], A.shape[2]))], axis=1)
        self.dual_coef_, self.c_ = A, c
        self.fit_time_ = time.perf_counter() - t0
        return self

    def _test_views(self, Xs):
        self._check_fitted()
        if self.kernels_ is not None:
            return self._validate_predict(Xs)
        N = self.dual_coef_.shape[1]
        Ks = check_views(Xs)
        if len(Ks) != self.n_views_:
            raise ValueError(f"Xs has {len(Ks)} views but the estimator was fitted with {self.n_views_}")
        for v, K in enumerate(Ks):
            if K.shape[1] != N:
                raise ValueError(
                    f"Xs[{v}] must be a (n_test, {N}) kernel matrix against the training "
                    f"points with kernel='precomputed', got shape {K.shape}"
                )
        return Ks

    def per_view_output(self, Xs):
        """Per-view outputs ``f^v(x) = k^v(x, X) A[v]`` (the output of Algorithm 1).

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The views to predict, with as many views and features as in ``fit``. With
            ``kernel="precomputed"``, the ``(n_samples, N)`` kernels against the ``N`` training
            points (labelled, then unlabelled).

        Returns
        -------
        outputs : ndarray of shape (n_samples, n_views, n_outputs)
            The output of each view's function ``f^v``, before the combination ``c``.
        """
        views = self._test_views(Xs)
        return view_outputs(self.dual_coef_, views, self.kernels_, self.X_fit_)

    def combined_output(self, Xs):
        """Combined output ``C f(x) = Σ_v c_v f^v(x)`` (eq. 52).

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The views to predict, with as many views and features as in ``fit``. With
            ``kernel="precomputed"``, the ``(n_samples, N)`` kernels against the ``N`` training
            points (labelled, then unlabelled).

        Returns
        -------
        output : ndarray of shape (n_samples, n_outputs)
            The per-view outputs weighted by the combination weights ``c_``.
        """
        return np.einsum("v,nvd->nd", self.c_, self.per_view_output(Xs))


class MVLRegressor(RegressorMixin, MultiOutputMixin, _MVLBase):
    """Multi-view learning in vector-valued RKHS: least-squares regression (MVL-LS).

    Fits one function ``f^v`` per view in a vector-valued RKHS and predicts their combination
    ``C f(x) = Σ_v c_v f^v(x)`` (Algorithm 1 and Theorem 10 of [1]_), with between-view
    co-regularisation and within-view manifold regularisation over labelled and unlabelled
    points. ``optimize_c`` also learns the combination (MVL-LS-optC, §6). Targets may have
    several outputs.

    Parameters
    ----------
    kernel : str, callable, Kernel or list, default="rbf"
        The scalar kernel ``k^v`` of each view, ``G = diag(k^1, ..., k^m)`` (eq. 93): a name, a
        callable, a :class:`bayesmv.kernels.Kernel`, or a list of these (one per view).
        ``"precomputed"``: ``Xs`` holds Gram matrices (see :meth:`fit`).
    kernel_params : dict, list of dict or None, default=None
        Parameters of the kernel, one dict for every view or one per view. Without ``gamma``,
        RBF and Laplacian kernels use the median heuristic, ``"chi2"`` 1 / median χ² distance.
    gamma_A : float, default=1e-5
        Weight of the RKHS norm ``||f||²`` (ridge regularisation); must be positive.
    gamma_B : float or "auto", default="auto"
        Weight of the between-view term (eq. 57), which pulls the views' outputs together
        (co-regularisation). ``"auto"``: chosen from the data (see Notes).
    gamma_W : float or "auto", default="auto"
        Weight of the within-view manifold term (eq. 63) on the graph ``graph`` over labelled
        and unlabelled points. ``"auto"``: chosen from the data (see Notes).
    c : array-like of shape (n_views,) or None, default=None
        The views' combination weights, ``C f(x) = Σ_v c_v f^v(x)`` (eq. 52); None: ``1/m``
        each. With ``optimize_c``, the starting point, whose norm fixes the sphere's radius.
    optimize_c : bool, default=False
        Also learn ``c``, alternating with ``f`` on the sphere ``||c|| = const`` (MVL-LS-optC,
        §6); only with the squared loss.
    graph : {"knn", "kernel"}, default="knn"
        The within-view graph of each view: its Gram matrix sparsified to the symmetric
        ``n_neighbors``-nearest neighbours, or the Gram matrix itself (§7.1).
    n_neighbors : int, default=3
        Number of neighbours of each point in the ``"knn"`` graph.
    max_iter : int, default=20
        Maximum number of rounds of the alternating minimisation of ``optimize_c``.
    tol : float, default=1e-4
        The rounds of ``optimize_c`` stop once the objective changes by at most ``tol``
        (relative) over a round.
    solver : {"auto", "dense", "cg"}, default="auto"
        Dense Cholesky solve, or matrix-free conjugate gradients (MVL-LS at fixed ``c`` on the
        unnormalised ``"kernel"`` graph only; memory ``O(block · N)``, in one process on one
        machine: not distributed). ``"auto"``: CG where it applies and ``m N > 6000``.
    cg_tol : float, default=1e-8
        Relative residual at which conjugate gradients stop.
    cg_max_iter : int, default=5000
        Maximum number of conjugate-gradient iterations.
    laplacian : {"unnormalized", "normalized"}, default="unnormalized"
        The graph Laplacian: ``D - W`` (§4.2) or ``D^{-1/2} (D - W) D^{-1/2}``, whose spectrum
        lies in [0, 2] whatever the number of points (one ``gamma_W`` scale for all sizes).
    laplacian_power : int, default=1
        Use the iterated Laplacian ``L^p`` of each view.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (n_views, N, n_outputs)
        The coefficients ``A`` of ``f^v(x) = k^v(x, X) A[v]`` over the ``N`` training points
        (labelled, then unlabelled).
    c_ : ndarray of shape (n_views,)
        The combination weights used (learned with ``optimize_c``).
    gamma_B_ : float
        The between-view weight used (the choice of ``"auto"``).
    gamma_W_ : float
        The within-view weight used (the choice of ``"auto"``).
    graph_ : str
        The within-view graph used.
    manifold_selection_ : dict of ndarray or None
        With ``"auto"`` weights and unlabelled points, the leave-one-out table of the candidate
        fits (``gamma_B``, ``gamma_W``, ``uses_unlabeled``, ``loo_score``, ...); else None.
    n_labeled_ : int
        Number of labelled training points.
    n_unlabeled_ : int
        Number of unlabelled training points.
    kernels_ : tuple of callable or None
        The per-view kernels with their parameters bound (None for ``"precomputed"``).
    X_fit_ : list of ndarray or None
        The training views, labelled then unlabelled points (None for ``"precomputed"``).
    fit_trace_ : bayesmv.diagnostics.FitTrace
        The objective (or CG residual) of the fit and whether it converged.
    n_iter_ : int
        Number of iterations of the solver.
    c_history_ : ndarray of shape (n_steps, n_views)
        The combination weights after each step (dense least squares only).
    fit_time_ : float
        Wall-clock seconds of the last fit.
    n_views_ : int
        Number of views seen in :meth:`fit`.
    n_features_per_view_ : tuple of int
        Number of features of each view.
    n_features_in_ : int
        Total number of features over the views.

    See Also
    --------
    MVLClassifier : The classifiers of the same framework.
    MVLRegressorCV : ``gamma_A``, ``gamma_B``, ``gamma_W`` and ``graph`` by cross-validation.

    Notes
    -----
    ``gamma_B="auto"`` and ``gamma_W="auto"`` without unlabelled points give the supervised fit
    of ``SUPERVISED_MANIFOLD`` (1e-6 each, kernel graph). With unlabelled points, that fit is
    kept unless a fit that uses them, with ``gamma_B`` in ``AUTO_GAMMA_B`` and ``gamma_W`` in
    ``AUTO_GAMMA_W`` on ``graph`` (a number given for either stays fixed), beats it in the exact
    leave-one-out squared error of MVL-LS over the labelled points by more than one standard
    error (:func:`bayesmv.mvl.selection.choose_by_loo`). So the unlabelled points enter only
    where the labels support the graph. The choice takes up to 9 dense leave-one-out solves, so
    it needs the dense solver. ``gamma_B_``, ``gamma_W_``, ``graph_`` and
    ``manifold_selection_`` hold the outcome.

    References
    ----------
    .. [1] H. Q. Minh, L. Bazzani and V. Murino, "A Unifying Framework in Vector-valued
       Reproducing Kernel Hilbert Spaces for Manifold Regularization and Co-Regularized
       Multi-view Learning", Journal of Machine Learning Research, 17(25):1-72, 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv import MVLRegressor
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(30, 3)), rng.normal(size=(30, 2))]
    >>> y = np.sin(Xs[0][:, 0]) + Xs[1][:, 1]
    >>> reg = MVLRegressor(gamma_A=1e-3).fit(Xs, y)
    >>> y_pred, per_view = reg.predict(Xs, return_views=True)
    >>> y_pred.shape, per_view.shape
    ((30,), (30, 2))
    >>> reg.c_  # uniform combination weights
    array([0.5, 0.5])
    """

    def __init__(
        self,
        kernel="rbf",
        kernel_params=None,
        gamma_A=1e-5,
        gamma_B="auto",
        gamma_W="auto",
        c=None,
        optimize_c=False,
        graph="knn",
        n_neighbors=3,
        max_iter=20,
        tol=1e-4,
        solver="auto",
        cg_tol=1e-8,
        cg_max_iter=5000,
        laplacian="unnormalized",
        laplacian_power=1,
    ):
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.gamma_A = gamma_A
        self.gamma_B = gamma_B
        self.gamma_W = gamma_W
        self.c = c
        self.optimize_c = optimize_c
        self.graph = graph
        self.n_neighbors = n_neighbors
        self.laplacian = laplacian
        self.laplacian_power = laplacian_power
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.cg_tol = cg_tol
        self.cg_max_iter = cg_max_iter

    def fit(self, Xs, y, Xs_unlabeled=None):
        """Fit MVL-LS (or MVL-LS-optC with ``optimize_c``) on labelled and unlabelled views.

        Parameters
        ----------
        Xs : list of array-like of shape (n_labeled, n_features_v)
            The labelled training views, one array per view with the same samples in the same
            rows. With ``kernel="precomputed"``, one ``(N, N)`` Gram matrix per view over the
            labelled points first, then the unlabelled ones (``N >= n_labeled``).
        y : array-like of shape (n_labeled,) or (n_labeled, n_outputs)
            The real targets of the labelled points.
        Xs_unlabeled : list of array-like of shape (n_unlabeled, n_features_v) or None, \
                default=None
            Unlabelled points of the same views (semi-supervised learning); they enter only the
            manifold terms. Leave None with ``kernel="precomputed"``.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        Y, _ = self._targets(y)
        return self._fit_core(Xs, Y, Xs_unlabeled, "squared")

    def _targets(self, y):
        """``Y`` ``(l, d)`` (and no class codes); records ``y_1d_``."""
        require_targets(self, y)
        Y = check_targets(y)
        self.y_1d_ = Y.ndim == 1
        if Y.shape[0] == 0:
            raise ValueError("y is empty (0 samples); need targets for at least 1 sample")
        return Y.reshape(Y.shape[0], -1), None

    def predict(self, Xs, return_views=False):
        """Predict the combined output ``C f(x)`` (eq. 52).

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The views to predict, with as many views and features as in ``fit``. With
            ``kernel="precomputed"``, the ``(n_samples, N)`` kernels against the ``N`` training
            points (labelled, then unlabelled).
        return_views : bool, default=False
            Also return the prediction of each view.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            The predictions, shaped as the ``y`` given to ``fit``.
        view_predictions : ndarray of shape (n_samples, n_views) or \
                (n_samples, n_views, n_outputs)
            Each view's prediction ``f^v(x)``; only returned when ``return_views`` is True.
        """
        V = self.per_view_output(Xs)
        out = self._predict_from_views(V)
        return (out, V[..., 0] if self.y_1d_ else V) if return_views else out

    def _predict_from_views(self, V):
        out = np.einsum("v,nvd->nd", self.c_, V)
        return out[:, 0] if self.y_1d_ else out


class MVLClassifier(ClassifierMixin, _MVLBase):
    """Multi-view learning in vector-valued RKHS: multi-class classification (MVL-LS, MVL-SVM).

    Fits one function ``f^v`` per view in a vector-valued RKHS and scores the classes with
    their combination ``C f(x) = Σ_v c_v f^v(x)`` [1]_, with between-view co-regularisation and
    within-view manifold regularisation over labelled and unlabelled points. ``loss`` chooses
    MVL-LS (least squares, Algorithm 1), MVL-binSVM or MVL-SVM (Algorithm 2).

    Parameters
    ----------
    kernel : str, callable, Kernel or list, default="rbf"
        The scalar kernel ``k^v`` of each view, ``G = diag(k^1, ..., k^m)`` (eq. 93): a name, a
        callable, a :class:`bayesmv.kernels.Kernel`, or a list of these (one per view).
        ``"precomputed"``: ``Xs`` holds Gram matrices (see :meth:`fit`).
    kernel_params : dict, list of dict or None, default=None
        Parameters of the kernel, one dict for every view or one per view. Without ``gamma``,
        RBF and Laplacian kernels use the median heuristic, ``"chi2"`` 1 / median χ² distance.
    loss : {"squared", "hinge", "simplex_hinge"}, default="squared"
        MVL-LS on ±1 one-vs-rest targets (§7.1), MVL-binSVM (one-vs-all hinge, Corollary 8),
        or MVL-SVM with simplex coding (Theorems 6, 7 and 13, Algorithm 2).
    gamma_A : float, default=1e-5
        Weight of the RKHS norm ``||f||²`` (ridge regularisation); must be positive.
    gamma_B : float or "auto", default="auto"
        Weight of the between-view term (eq. 57), which pulls the views' outputs together
        (co-regularisation). ``"auto"``: chosen from the data (see Notes).
    gamma_W : float or "auto", default="auto"
        Weight of the within-view manifold term (eq. 63) on the graph ``graph`` over labelled
        and unlabelled points. ``"auto"``: chosen from the data (see Notes).
    c : array-like of shape (n_views,) or None, default=None
        The views' combination weights, ``C f(x) = Σ_v c_v f^v(x)`` (eq. 52); None: ``1/m``
        each. With ``optimize_c``, the starting point, whose norm fixes the sphere's radius.
    optimize_c : bool, default=False
        Also learn ``c``, alternating with ``f`` on the sphere ``||c|| = const`` (MVL-LS-optC,
        §6); only with the squared loss.
    graph : {"knn", "kernel"}, default="knn"
        The within-view graph of each view: its Gram matrix sparsified to the symmetric
        ``n_neighbors``-nearest neighbours, or the Gram matrix itself (§7.1).
    n_neighbors : int, default=3
        Number of neighbours of each point in the ``"knn"`` graph.
    max_iter : int, default=20
        Maximum number of rounds of the alternating minimisation of ``optimize_c``.
    tol : float, default=1e-4
        The rounds of ``optimize_c`` stop once the objective changes by at most ``tol``
        (relative) over a round.
    solver : {"auto", "dense", "cg"}, default="auto"
        Dense Cholesky solve, or matrix-free conjugate gradients (MVL-LS at fixed ``c`` on the
        unnormalised ``"kernel"`` graph only; memory ``O(block · N)``, in one process on one
        machine: not distributed). ``"auto"``: CG where it applies and ``m N > 6000``.
    cg_tol : float, default=1e-8
        Relative residual at which conjugate gradients stop.
    cg_max_iter : int, default=5000
        Maximum number of conjugate-gradient iterations.
    qp_tol : float, default=1e-7
        Tolerance on the KKT conditions of the box-constrained QP of the SVM losses.
    qp_max_iter : int, default=500
        Maximum number of iterations of that QP.
    laplacian : {"unnormalized", "normalized"}, default="unnormalized"
        The graph Laplacian: ``D - W`` (§4.2) or ``D^{-1/2} (D - W) D^{-1/2}``, whose spectrum
        lies in [0, 2] whatever the number of points (one ``gamma_W`` scale for all sizes).
    laplacian_power : int, default=1
        Use the iterated Laplacian ``L^p`` of each view.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    dual_coef_ : ndarray of shape (n_views, N, n_outputs)
        The coefficients ``A`` of ``f^v(x) = k^v(x, X) A[v]`` over the ``N`` training points
        (labelled, then unlabelled); ``n_outputs`` is ``n_classes``, ``n_classes - 1`` for
        ``"simplex_hinge"`` and 1 for the hinge with two classes.
    c_ : ndarray of shape (n_views,)
        The combination weights used (learned with ``optimize_c``).
    gamma_B_ : float
        The between-view weight used (the choice of ``"auto"``).
    gamma_W_ : float
        The within-view weight used (the choice of ``"auto"``).
    graph_ : str
        The within-view graph used.
    manifold_selection_ : dict of ndarray or None
        With ``"auto"`` weights and unlabelled points, the leave-one-out table of the candidate
        fits (``gamma_B``, ``gamma_W``, ``uses_unlabeled``, ``loo_score``, ...); else None.
    n_labeled_ : int
        Number of labelled training points.
    n_unlabeled_ : int
        Number of unlabelled training points.
    kernels_ : tuple of callable or None
        The per-view kernels with their parameters bound (None for ``"precomputed"``).
    X_fit_ : list of ndarray or None
        The training views, labelled then unlabelled points (None for ``"precomputed"``).
    fit_trace_ : bayesmv.diagnostics.FitTrace
        The objective (or CG residual) of the fit and whether it converged.
    n_iter_ : int
        Number of iterations of the solver.
    dual_alpha_ : ndarray
        The dual variables (SVM losses only).
    c_history_ : ndarray of shape (n_steps, n_views)
        The combination weights after each step (dense least squares only).
    fit_time_ : float
        Wall-clock seconds of the last fit.
    n_views_ : int
        Number of views seen in :meth:`fit`.
    n_features_per_view_ : tuple of int
        Number of features of each view.
    n_features_in_ : int
        Total number of features over the views.

    See Also
    --------
    MVLRegressor : The least-squares regressor of the same framework.
    MVLClassifierCV : ``gamma_A``, ``gamma_B``, ``gamma_W`` and ``graph`` by cross-validation.

    Notes
    -----
    ``gamma_B="auto"`` and ``gamma_W="auto"`` without unlabelled points give the supervised fit
    of ``SUPERVISED_MANIFOLD`` (1e-6 each, kernel graph). With unlabelled points, that fit is
    kept unless a fit that uses them, with ``gamma_B`` in ``AUTO_GAMMA_B`` and ``gamma_W`` in
    ``AUTO_GAMMA_W`` on ``graph`` (a number given for either stays fixed), classifies more of
    the labelled points right in the exact leave-one-out of MVL-LS, by more than one standard
    error (:func:`bayesmv.mvl.selection.choose_by_loo`; the SVM losses are judged by the same
    MVL-LS criterion). So the unlabelled points enter only where the labels support the graph.
    With a single label in some class, which no leave-one-out can judge, the fit whose
    labelling of the training points has the smallest normalized cut on the views' k-NN graphs
    is kept. The choice takes up to 9 dense leave-one-out solves, so it needs the dense solver.
    ``gamma_B_``, ``gamma_W_``, ``graph_`` and ``manifold_selection_`` hold the outcome.

    References
    ----------
    .. [1] H. Q. Minh, L. Bazzani and V. Murino, "A Unifying Framework in Vector-valued
       Reproducing Kernel Hilbert Spaces for Manifold Regularization and Co-Regularized
       Multi-view Learning", Journal of Machine Learning Research, 17(25):1-72, 2016.

    Examples
    --------
    >>> from bayesmv import MVLClassifier
    >>> from bayesmv.datasets import make_latent_views
    >>> Xs, y = make_latent_views(n_samples=30, n_features=4, random_state=0)
    >>> labeled, unlabeled = [X[:20] for X in Xs], [X[20:] for X in Xs]
    >>> clf = MVLClassifier().fit(labeled, y[:20], Xs_unlabeled=unlabeled)
    >>> clf.classes_
    array([0, 1])
    >>> clf.n_labeled_, clf.n_unlabeled_
    (20, 10)
    >>> clf.per_view_decision_function(Xs).shape  # two classes: one score per view
    (30, 2)
    """

    def __init__(
        self,
        kernel="rbf",
        kernel_params=None,
        loss="squared",
        gamma_A=1e-5,
        gamma_B="auto",
        gamma_W="auto",
        c=None,
        optimize_c=False,
        graph="knn",
        n_neighbors=3,
        max_iter=20,
        tol=1e-4,
        solver="auto",
        cg_tol=1e-8,
        cg_max_iter=5000,
        qp_tol=1e-7,
        qp_max_iter=500,
        laplacian="unnormalized",
        laplacian_power=1,
    ):
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.loss = loss
        self.gamma_A = gamma_A
        self.gamma_B = gamma_B
        self.gamma_W = gamma_W
        self.c = c
        self.optimize_c = optimize_c
        self.graph = graph
        self.n_neighbors = n_neighbors
        self.laplacian = laplacian
        self.laplacian_power = laplacian_power
        self.max_iter = max_iter
        self.tol = tol
        self.solver = solver
        self.cg_tol = cg_tol
        self.cg_max_iter = cg_max_iter
        self.qp_tol = qp_tol
        self.qp_max_iter = qp_max_iter

    def fit(self, Xs, y, Xs_unlabeled=None):
        """Fit the classifier of ``loss`` on labelled and unlabelled views.

        Parameters
        ----------
        Xs : list of array-like of shape (n_labeled, n_features_v)
            The labelled training views, one array per view with the same samples in the same
            rows. With ``kernel="precomputed"``, one ``(N, N)`` Gram matrix per view over the
            labelled points first, then the unlabelled ones (``N >= n_labeled``).
        y : array-like of shape (n_labeled,)
            The class labels of the labelled points (at least two classes).
        Xs_unlabeled : list of array-like of shape (n_unlabeled, n_features_v) or None, \
                default=None
            Unlabelled points of the same views (semi-supervised learning); they enter only the
            manifold terms. Leave None with ``kernel="precomputed"``.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        if self.loss not in ("squared", "hinge", "simplex_hinge"):
            raise ValueError(f"loss={self.loss!r}; use 'squared', 'hinge' or 'simplex_hinge'")
        check_positive("qp_tol", self.qp_tol)
        check_positive("qp_max_iter", self.qp_max_iter, integer=True)
        Y, codes = self._targets(y)
        return self._fit_core(Xs, Y, Xs_unlabeled, self.loss, codes=codes, n_classes=Y.shape[1])

    def _targets(self, y):
        """±1 one-vs-rest targets ``(l, n_classes)`` and the class codes; records ``classes_``."""
        require_targets(self, y)
        y = check_label_vector(y)
        if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or inf")
        self.classes_, codes = encode_labels(y)
        P = len(self.classes_)
        return np.where(codes[:, None] == np.arange(P)[None, :], 1.0, -1.0), codes

    def _scores(self, out):
        if self.loss == "simplex_hinge":
            out = out @ simplex_coding(len(self.classes_))  # <s_k, C f(x)>, eq. (82)
        if len(self.classes_) == 2:
            if self.loss == "hinge":
                return out[..., 0]
            return out[..., 1] - out[..., 0]
        return out

    def decision_function(self, Xs, return_views=False):
        """Class scores of the combined output ``C f(x)``.

        For ``loss="simplex_hinge"`` the scores are ``S^T C f(x)`` (eq. 82), with ``S`` the
        simplex coding.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The views to predict, with as many views and features as in ``fit``. With
            ``kernel="precomputed"``, the ``(n_samples, N)`` kernels against the ``N`` training
            points (labelled, then unlabelled).
        return_views : bool, default=False
            Also return each view's scores (as :meth:`per_view_decision_function`).

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            For two classes one score per sample, positive for ``classes_[1]``; otherwise one
            score per class, the largest giving the predicted class.
        view_scores : ndarray of shape (n_samples, n_views) or (n_samples, n_views, n_classes)
            The scores of each view's output ``f^v(x)``; only returned when ``return_views`` is
            True.
        """
        V = self.per_view_output(Xs)
        out = self._decision_from_views(V)
        return (out, self._scores(V)) if return_views else out

    def _decision_from_views(self, V):
        return self._scores(np.einsum("v,nvd->nd", self.c_, V))

    def per_view_decision_function(self, Xs):
        """Class scores of each view's output ``f^v(x)``, as :meth:`decision_function` scores
        the combined one.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The views to predict, with as many views and features as in ``fit``. With
            ``kernel="precomputed"``, the ``(n_samples, N)`` kernels against the ``N`` training
            points (labelled, then unlabelled).

        Returns
        -------
        view_scores : ndarray of shape (n_samples, n_views) or (n_samples, n_views, n_classes)
            One score per view for two classes (positive for ``classes_[1]``), else one per
            view and class.
        """
        return self._scores(self.per_view_output(Xs))

    def predict(self, Xs):
        """Predict class labels: the class of the largest combined score.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The views to predict, with as many views and features as in ``fit``. With
            ``kernel="precomputed"``, the ``(n_samples, N)`` kernels against the ``N`` training
            points (labelled, then unlabelled).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predicted class labels.
        """
        return self._predict_from_views(self.per_view_output(Xs))

    def _predict_from_views(self, V):
        return labels_from_scores(self.classes_, self._decision_from_views(V))


def ls_path(est, Xs, y, Xs_unlabeled, gamma_As, shared):
    """Fit the MVL estimator ``est`` at each of ``gamma_As`` in turn (a generator).

    MVL-LS at the fixed combination ``c`` from one eigendecomposition
    (:func:`~bayesmv.mvl.least_squares.mvl_ls_path`), the same coefficients as ``fit`` with
    ``loss="squared"``.

    Parameters
    ----------
    est : MVLClassifier or MVLRegressor
        The estimator to fit, with numeric ``gamma_B`` and ``gamma_W``; it is updated in place.
    Xs : list of array-like
        The labelled training views.
    y : array-like of shape (n_samples,) or (n_samples, n_outputs)
        The targets.
    Xs_unlabeled : list of array-like or None
        The unlabelled views, or None.
    gamma_As : sequence of float
        The values of ``gamma_A``, each positive.
    shared : dict
        Filled by the first call: keeps the kernels, Gram matrices and their square roots for
        further calls on the same training data that change only ``graph``, ``n_neighbors``
        or ``gamma_W``.

    Yields
    ------
    est : MVLClassifier or MVLRegressor
        ``est`` itself, fitted at the next value of ``gamma_As``.

    Raises
    ------
    ValueError
        If ``gamma_B`` or ``gamma_W`` is ``"auto"``, or the kernels are precomputed.
    FloatingPointError
        If the coefficients are not finite.
    """
    est._check_params()
    if isinstance(est.gamma_B, str) or isinstance(est.gamma_W, str):
        raise ValueError("the cross-validated path needs numeric gamma_B and gamma_W, not 'auto'")
    Y, _ = est._targets(y)
    if not shared:
        data, gkernel = est._views_and_kernels(Xs, Y.shape[0], Xs_unlabeled)
        if gkernel is None:
            raise ValueError("the cross-validated path needs kernels, not kernel='precomputed'")
        Ks = train_grams(est.kernels_, data)
        fitted = ("n_views_", "n_features_per_view_", "n_features_in_", "kernels_", "X_fit_")
        shared.update(Ks=Ks, Ps=[psd_sqrt(K) for K in Ks], fitted={a: getattr(est, a) for a in fitted})
    est.__dict__.update(shared["fitted"])
    Ks, Ps = shared["Ks"], shared["Ps"]
    Ls = est._laplacians(Ks, est.graph) if est.gamma_W else None
    c = combination_weights(est.c, est.n_views_)
    est.n_labeled_, est.n_unlabeled_ = Y.shape[0], Ks[0].shape[0] - Y.shape[0]
    est.gamma_B_, est.gamma_W_, est.graph_ = est.gamma_B, est.gamma_W, est.graph
    est.manifold_selection_ = None
    for gamma_A, A in zip(gamma_As, mvl_ls_path(Ks, Y, c, gamma_As, est.gamma_B, est.gamma_W, Ls, Ps)):
        if not np.all(np.isfinite(A)):
            raise FloatingPointError("MVL produced non-finite coefficients; increase gamma_A")
        est.gamma_A, est.dual_coef_, est.c_ = gamma_A, A, c
        yield est


class _MVLPathSearch(SearchCVMixin):
    """Cross-validated ``(gamma_A, gamma_B, gamma_W, graph)`` of MVL-LS: per fold one kernel
    evaluation, one set of square roots ``P_v = (K^v)^{1/2}``, one test-vs-train kernel per view
    and, per ``(gamma_B, gamma_W, graph)``, one eigendecomposition for the whole ``gamma_A`` grid
    (:func:`mvl_ls_path`). With ``gamma_W = 0`` the graph does not enter the problem, so those
    candidates share one path and its scores.
    ``fit(Xs, y, Xs_unlabeled=None)``: the unlabelled views join the training data of every fold
    (as a fit parameter of ``GridSearchCV`` would)."""

    _grid = {"gamma_As": "gamma_A", "gamma_Bs": "gamma_B", "gamma_Ws": "gamma_W", "graphs": "graph"}
    _base_fixed = {"solver": "dense", "optimize_c": False}

    def _fold_scores(self, base, views, y, train, test, candidates, fit_params):
        Xtr, Xte = [V[train] for V in views], [V[test] for V in views]
        families = {}
        for i, cand in enumerate(candidates):
            manifold = {k: v for k, v in cand.items() if k != "gamma_A" and (k != "graph" or cand["gamma_W"])}
            families.setdefault(tuple(sorted(manifold.items())), []).append(i)
        scores, shared = np.empty(len(candidates)), {}
        metric = accuracy_score if is_classifier(base) else r2_score  # the estimators' ``score``
        for manifold, idx in families.items():
            est = clone(base).set_params(**dict(manifold))
            by_gamma_A = {}  # the graphs of a gamma_W = 0 family repeat each gamma_A
            for i in idx:
                by_gamma_A.setdefault(candidates[i]["gamma_A"], []).append(i)
            path = ls_path(est, Xtr, y[train], fit_params.get("Xs_unlabeled"), list(by_gamma_A), shared)
            for same, fitted in zip(by_gamma_A.values(), path):
                if "test_grams" not in shared:  # k^v(x_test, X_train), once per fold
                    tests = fitted._validate_predict(Xte)
                    shared["test_grams"] = [
                        _blocked_gram(k, X, T) for k, X, T in zip(fitted.kernels_, tests, fitted.X_fit_)
                    ]
                V = np.stack([K @ A for K, A in zip(shared["test_grams"], fitted.dual_coef_)], axis=1)
                scores[same] = metric(y[test], fitted._predict_from_views(V))
        return scores


class MVLRegressorCV(RegressorMixin, MultiOutputMixin, _MVLPathSearch, MultiViewMixin, BaseEstimator):
    """MVL-LS regression with its regularisation chosen by cross-validation.

    Scores every candidate of the grid on the folds of ``cv`` and refits the best on all the
    data, with the choice that ``GridSearchCV`` would make::

        GridSearchCV(MVLRegressor(solver="dense"), {"gamma_A": gamma_As, "gamma_B": gamma_Bs,
                     "gamma_W": gamma_Ws, "graph": graphs}, cv=cv)

    The fits are MVL-LS [1]_ at fixed ``c`` with the dense solver. Per fold,
    each ``(gamma_B, gamma_W, graph)`` takes one eigendecomposition for the whole ``gamma_A``
    grid.

    Parameters
    ----------
    kernel : str, callable, Kernel or list, default="rbf"
        The scalar kernel of each view, as in :class:`MVLRegressor` (not ``"precomputed"``).
    kernel_params : dict, list of dict or None, default=None
        Parameters of the kernel, one dict for every view or one per view.
    gamma_As : sequence of float, default=(1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2)
        The candidate values of ``gamma_A`` (RKHS norm weight).
    gamma_Bs : sequence of float, default=(1e-6,)
        The candidate values of ``gamma_B`` (between-view weight, eq. 57).
    gamma_Ws : sequence of float, default=(0.0, 1e-6, 1e-4)
        The candidate values of ``gamma_W`` (within-view weight, eq. 63).
    graphs : sequence of {"kernel", "knn"}, default=("kernel", "knn")
        The candidate within-view graphs (shared by the candidates with ``gamma_W = 0``, where
        the graph does not enter the problem).
    c : array-like of shape (n_views,) or None, default=None
        The views' combination weights (eq. 52); None: ``1/m`` each.
    n_neighbors : int, default=10
        Number of neighbours of each point in the ``"knn"`` graph.
    laplacian : {"unnormalized", "normalized"}, default="unnormalized"
        The graph Laplacian: ``D - W`` or the symmetric normalised one.
    laplacian_power : int, default=1
        Use the iterated Laplacian ``L^p`` of each view.
    cv : int, cross-validation generator or iterable, default=5
        The folds, as in ``GridSearchCV``: an int gives that many ``KFold`` folds.

    Attributes
    ----------
    best_params_ : dict
        The chosen ``gamma_A``, ``gamma_B``, ``gamma_W`` and ``graph``.
    best_score_ : float
        Their mean test score over the folds (R²).
    best_index_ : int
        Their index in ``cv_results_["params"]``.
    cv_results_ : dict of ndarray
        The test scores of every candidate, with the keys of ``GridSearchCV.cv_results_``
        (``params``, ``split<k>_test_score``, ``mean_test_score``, ``rank_test_score``, ...).
    best_estimator_ : MVLRegressor
        The best candidate refitted on all the data; ``predict`` uses it.
    n_splits_ : int
        The number of folds.
    n_views_ : int
        Number of views seen in :meth:`fit`.

    See Also
    --------
    MVLRegressor : The estimator at fixed regularisation weights.

    Notes
    -----
    Unlabelled views passed as ``fit(Xs, y, Xs_unlabeled=...)`` join the training data of every
    fold, as a fit parameter of ``GridSearchCV`` would. ``benchmarks/search_cv.py`` compares its
    time with ``GridSearchCV``'s.

    References
    ----------
    .. [1] H. Q. Minh, L. Bazzani and V. Murino, "A Unifying Framework in Vector-valued
       Reproducing Kernel Hilbert Spaces for Manifold Regularization and Co-Regularized
       Multi-view Learning", Journal of Machine Learning Research, 17(25):1-72, 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv import MVLRegressorCV
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(30, 3)), rng.normal(size=(30, 2))]
    >>> y = np.sin(Xs[0][:, 0]) + Xs[1][:, 1]
    >>> search = MVLRegressorCV(gamma_As=(1e-5, 1e-3), gamma_Ws=(0.0,), graphs=("kernel",), cv=3)
    >>> sorted(search.fit(Xs, y).best_params_)
    ['gamma_A', 'gamma_B', 'gamma_W', 'graph']
    >>> search.cv_results_["mean_test_score"].shape
    (2,)
    >>> search.predict(Xs).shape
    (30,)
    """

    _base = MVLRegressor

    def __init__(
        self,
        kernel="rbf",
        kernel_params=None,
        gamma_As=(1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2),
        gamma_Bs=(1e-6,),
        gamma_Ws=(0.0, 1e-6, 1e-4),
        graphs=("kernel", "knn"),
        c=None,
        n_neighbors=10,
        laplacian="unnormalized",
        laplacian_power=1,
        cv=5,
    ):
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.gamma_As = gamma_As
        self.gamma_Bs = gamma_Bs
        self.gamma_Ws = gamma_Ws
        self.graphs = graphs
        self.c = c
        self.n_neighbors = n_neighbors
        self.laplacian = laplacian
        self.laplacian_power = laplacian_power
        self.cv = cv


class MVLClassifierCV(ClassifierMixin, _MVLPathSearch, MultiViewMixin, BaseEstimator):
    """MVL-LS classification with its regularisation chosen by cross-validation.

    Scores every candidate of the grid on the folds of ``cv`` and refits the best on all the
    data, with the choice that ``GridSearchCV`` would make::

        GridSearchCV(MVLClassifier(solver="dense"), {"gamma_A": gamma_As, "gamma_B": gamma_Bs,
                     "gamma_W": gamma_Ws, "graph": graphs}, cv=cv)

    The fits are MVL-LS [1]_ at fixed ``c`` with the dense solver (``loss="squared"``). Per fold,
    each ``(gamma_B, gamma_W, graph)`` takes one eigendecomposition for the whole ``gamma_A``
    grid.

    Parameters
    ----------
    kernel : str, callable, Kernel or list, default="rbf"
        The scalar kernel of each view, as in :class:`MVLClassifier` (not ``"precomputed"``).
    kernel_params : dict, list of dict or None, default=None
        Parameters of the kernel, one dict for every view or one per view.
    gamma_As : sequence of float, default=(1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2)
        The candidate values of ``gamma_A`` (RKHS norm weight).
    gamma_Bs : sequence of float, default=(1e-6,)
        The candidate values of ``gamma_B`` (between-view weight, eq. 57).
    gamma_Ws : sequence of float, default=(0.0, 1e-6, 1e-4)
        The candidate values of ``gamma_W`` (within-view weight, eq. 63).
    graphs : sequence of {"kernel", "knn"}, default=("kernel", "knn")
        The candidate within-view graphs (shared by the candidates with ``gamma_W = 0``, where
        the graph does not enter the problem).
    c : array-like of shape (n_views,) or None, default=None
        The views' combination weights (eq. 52); None: ``1/m`` each.
    n_neighbors : int, default=10
        Number of neighbours of each point in the ``"knn"`` graph.
    laplacian : {"unnormalized", "normalized"}, default="unnormalized"
        The graph Laplacian: ``D - W`` or the symmetric normalised one.
    laplacian_power : int, default=1
        Use the iterated Laplacian ``L^p`` of each view.
    cv : int, cross-validation generator or iterable, default=5
        The folds, as in ``GridSearchCV``: an int gives that many ``StratifiedKFold`` folds.

    Attributes
    ----------
    best_params_ : dict
        The chosen ``gamma_A``, ``gamma_B``, ``gamma_W`` and ``graph``.
    best_score_ : float
        Their mean test score over the folds (accuracy).
    best_index_ : int
        Their index in ``cv_results_["params"]``.
    cv_results_ : dict of ndarray
        The test scores of every candidate, with the keys of ``GridSearchCV.cv_results_``
        (``params``, ``split<k>_test_score``, ``mean_test_score``, ``rank_test_score``, ...).
    best_estimator_ : MVLClassifier
        The best candidate refitted on all the data; ``predict`` uses it.
    n_splits_ : int
        The number of folds.
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    n_views_ : int
        Number of views seen in :meth:`fit`.

    See Also
    --------
    MVLClassifier : The estimator at fixed regularisation weights.

    Notes
    -----
    Unlabelled views passed as ``fit(Xs, y, Xs_unlabeled=...)`` join the training data of every
    fold, as a fit parameter of ``GridSearchCV`` would. ``benchmarks/search_cv.py`` compares its
    time with ``GridSearchCV``'s.

    References
    ----------
    .. [1] H. Q. Minh, L. Bazzani and V. Murino, "A Unifying Framework in Vector-valued
       Reproducing Kernel Hilbert Spaces for Manifold Regularization and Co-Regularized
       Multi-view Learning", Journal of Machine Learning Research, 17(25):1-72, 2016.

    Examples
    --------
    >>> from bayesmv import MVLClassifierCV
    >>> from bayesmv.datasets import make_latent_views
    >>> Xs, y = make_latent_views(n_samples=30, n_features=4, random_state=0)
    >>> search = MVLClassifierCV(gamma_As=(1e-5, 1e-3), gamma_Ws=(0.0,), graphs=("kernel",), cv=3)
    >>> sorted(search.fit(Xs, y).best_params_)
    ['gamma_A', 'gamma_B', 'gamma_W', 'graph']
    >>> search.classes_
    array([0, 1])
    >>> search.predict(Xs).shape
    (30,)
    """

    _base = MVLClassifier
    _base_fixed = {**_MVLPathSearch._base_fixed, "loss": "squared"}

    __init__ = MVLRegressorCV.__init__
