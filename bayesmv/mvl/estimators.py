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
        """Per-view outputs ``f^v(x) = k^v(x, X) A[v]``: array ``(n, m, d)`` (Algorithm 1 output)."""
        views = self._test_views(Xs)
        return view_outputs(self.dual_coef_, views, self.kernels_, self.X_fit_)

    def combined_output(self, Xs):
        """``C f(x) = sum_v c_v f^v(x)``: array ``(n, d)``."""
        return np.einsum("v,nvd->nd", self.c_, self.per_view_output(Xs))


class MVLRegressor(RegressorMixin, MultiOutputMixin, _MVLBase):
    """MVL-LS / MVL-LS-optC regression (Algorithm 1, Theorem 10; §6 for ``optimize_c``).

    Parameters
    ----------
    kernel : str, callable, ``Kernel``, ``"precomputed"`` or list of these (one per view)
        Per-view scalar kernels ``k^v`` of ``G = diag(k^1..k^m)`` (eq. 93). RBF/Laplacian without
        ``gamma`` use the median heuristic; ``chi2`` without ``gamma`` uses 1/median χ² distance.
        With ``"precomputed"``, ``Xs`` are ``(N, N)`` Grams over labelled-then-unlabelled points
        (``len(y) = l <= N``) and prediction takes ``(n_test, N)`` kernels.
    kernel_params : dict or list of dicts
    gamma_A : float
        RKHS regularisation.
    gamma_B, gamma_W : float or "auto"
        Between-view (eq. 57) and within-view (eq. 63) regularisation. ``"auto"`` (default)
        without unlabelled points: the value of ``SUPERVISED_MANIFOLD`` (1e-6, on the kernel graph
        of the labelled points). With unlabelled points: that supervised fit, unless a fit that
        uses them, with ``gamma_B`` in ``AUTO_GAMMA_B = (0, 1e-6)`` and ``gamma_W`` in
        ``AUTO_GAMMA_W = (0, 1e-6, 1e-4, 1e-2)`` on ``graph`` (a numeric value stays fixed), beats
        it in the exact leave-one-out of MVL-LS over the labelled points by more than one
        standard error (:func:`mvl_ls_loo`, :func:`choose_by_loo`; correct classes for the
        classifier, squared error for the regressor; the SVM losses use the same MVL-LS
        criterion). So unlabelled points enter only where the labels support the graph. A
        classifier with a single label in some class, which no leave-one-out can judge, keeps the
        fit whose labelling of the training points has the smallest :func:`normalized_cut` on the
        k-NN graphs of the views. Cost: up to 9 dense leave-one-out solves (a Cholesky of order
        ``m N`` each), so with unlabelled points not with ``solver="cg"``. Fitted: ``gamma_B_``,
        ``gamma_W_``, ``graph_`` and the table ``manifold_selection_`` (``None`` without
        unlabelled points).
    c : array (m,), optional
        Combination weights (eq. 52); uniform ``1/m`` by default. With ``optimize_c`` it is the
        starting point and its norm the sphere radius.
    optimize_c : bool
        Alternating minimisation over ``f`` and ``c`` on the sphere (MVL-LS-optC, §6).
    graph : {"knn", "kernel"}
        Within-view graph weights: the symmetric k-NN sparsification of the Gram matrices
        (``n_neighbors``, default 3) or the Gram matrices themselves (§7.1), per view, over the
        labelled and unlabelled training points.
    laplacian : {"unnormalized", "normalized"}
        ``D - W`` (§4.2) or the symmetric normalised ``D^{-1/2} (D - W) D^{-1/2}`` (scale-free:
        spectrum in ``[0, 2]`` whatever the number of points, so one ``gamma_W`` grid fits all
        training-set sizes).
    laplacian_power : int
        Use ``L^p`` per view (iterated Laplacian).
    solver : {"auto", "dense", "cg"}
        Dense push-through Cholesky or matrix-free CG (``auto``: CG when ``m N > 6000`` on the
        unnormalised kernel graph, ``"auto"`` weights without unlabelled points included).
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
        """Fit on labelled views ``Xs`` with targets ``y`` ``(l,)`` or ``(l, d)``; ``Xs_unlabeled``
        (same views) enter only the manifold terms."""
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
        """``C f(x)`` (eq. 52); with ``return_views`` also the per-view outputs ``(n, m[, d])``."""
        V = self.per_view_output(Xs)
        out = self._predict_from_views(V)
        return (out, V[..., 0] if self.y_1d_ else V) if return_views else out

    def _predict_from_views(self, V):
        out = np.einsum("v,nvd->nd", self.c_, V)
        return out[:, 0] if self.y_1d_ else out


class MVLClassifier(ClassifierMixin, _MVLBase):
    """Multi-class multi-view classifier: MVL-LS (``loss="squared"``, ±1 one-vs-rest targets,
    §7.1), MVL-binSVM (``"hinge"``, one-vs-all, Corollary 8) or MVL-SVM (``"simplex_hinge"``,
    simplex coding, Theorems 6/7/13, Algorithm 2). Parameters as ``MVLRegressor`` plus ``loss``,
    ``qp_tol`` (KKT tolerance of the box QP) and ``qp_max_iter``.

    ``decision_function`` returns the class scores of the combined output ``C f(x)`` (for the
    simplex loss ``S^T C f(x)``, eq. 82); ``per_view_decision_function`` the same per view.
    Two classes give 1-D scores (positive means ``classes_[1]``).
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
        """Fit on labelled views ``Xs`` and labels ``y``; ``Xs_unlabeled`` enter only the
        manifold terms (semi-supervised)."""
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
        """Class scores from ``C f(x)`` ``(n, P)`` (``(n,)`` for two classes); with
        ``return_views`` also the per-view scores ``(n, m, P)``."""
        V = self.per_view_output(Xs)
        out = self._decision_from_views(V)
        return (out, self._scores(V)) if return_views else out

    def _decision_from_views(self, V):
        return self._scores(np.einsum("v,nvd->nd", self.c_, V))

    def per_view_decision_function(self, Xs):
        """Per-view class scores ``(n, m, P)`` (``(n, m)`` for two classes)."""
        return self._scores(self.per_view_output(Xs))

    def predict(self, Xs):
        """Class labels for the views ``Xs``: the class of the largest combined score."""
        return self._predict_from_views(self.per_view_output(Xs))

    def _predict_from_views(self, V):
        return labels_from_scores(self.classes_, self._decision_from_views(V))


def ls_path(est, Xs, y, Xs_unlabeled, gamma_As, shared):
    """The MVL estimator ``est`` fitted at each of ``gamma_As`` in turn (a generator): MVL-LS at the fixed
    combination ``c`` from one eigendecomposition (:func:`mvl_ls_path`), the same coefficients
    as ``fit`` with ``loss="squared"``. ``shared`` (a dict, filled by the first call) keeps the
    kernels, Gram matrices and their square roots for further calls on the same training data
    that change only ``graph``, ``n_neighbors`` or ``gamma_W``."""
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


_MVL_CV_DOC = """

    Parameters as ``{base}`` (``loss="squared"``, fixed ``c``, dense solver), plus
    ``gamma_As``, ``gamma_Bs``, ``gamma_Ws``, ``graphs``: the grid (``gamma_Bs`` holds 1e-6 alone
    unless given); ``cv``: folds as in ``GridSearchCV``
    (an int gives ``{folds}``). The same choice as ``GridSearchCV({base}(solver="dense"),
    {{"gamma_A": gamma_As, "gamma_B": gamma_Bs, "gamma_W": gamma_Ws, "graph": graphs}}, cv=cv)``
    (tested); the speed ratio on mfeat is printed by ``benchmarks/search_cv.py``.
    """


class MVLRegressorCV(RegressorMixin, MultiOutputMixin, _MVLPathSearch, MultiViewMixin, BaseEstimator):
    __doc__ = "MVL-LS regression with ``(gamma_A, gamma_W, graph)`` chosen by cross-validation." + (
        _MVL_CV_DOC.format(base="MVLRegressor", folds="KFold")
    )
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
    __doc__ = "MVL-LS classification with ``(gamma_A, gamma_W, graph)`` chosen by cross-validation." + (
        _MVL_CV_DOC.format(base="MVLClassifier", folds="StratifiedKFold")
    )
    _base = MVLClassifier
    _base_fixed = {**_MVLPathSearch._base_fixed, "loss": "squared"}

    __init__ = MVLRegressorCV.__init__
