"""The MVML estimators: input validation, the calls into :mod:`bayesmv.mvml.features` and
:class:`~bayesmv.mvml.solver.MVMLSolver`, and the fitted state (Huusari, Kadri & Capponi 2018, Algorithm 1)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone, is_classifier
from sklearn.metrics import accuracy_score, r2_score

from ..base import MultiViewMixin, SearchCVMixin, encode_labels, labels_from_scores, one_vs_rest_targets
from ..datasets import SEED_DEPRECATED, check_positive, check_random_seed, check_targets
from .features import (
    FeatureMap,
    decision_values,
    fitted_attributes,
    kernel_list,
    kernel_params_list,
    out_of_sample_features,
    train_features,
)
from .plotting import plot_metric
from .solver import MVMLSolver
from .steps import METRICS, default_step_size

__all__ = ["MVMLClassifier", "MVMLClassifierCV", "MVMLRegressor", "MVMLRegressorCV"]


class _MVMLBase(MultiViewMixin, BaseEstimator):
    def __init__(
        self,
        lmbda=0.1,
        eta=1.0,
        kernel="rbf",
        kernel_params=None,
        nystrom=1.0,
        metric="learn",
        learn_weights=False,
        max_iter=6,
        tol=1e-4,
        random_state=0,
        step_size=None,
        seed=SEED_DEPRECATED,
    ):
        self.lmbda = lmbda
        self.eta = eta
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.nystrom = nystrom
        self.metric = metric
        self.learn_weights = learn_weights
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.seed = seed
        self.step_size = step_size

    def _check_params(self, n_views):
        """The initial step size ``μ0`` and the per-view kernels and their parameters; records
        ``random_seed_``."""
        check_positive("lmbda", self.lmbda)
        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {self.metric!r}")
        learn = self.metric in ("learn", "sparse")
        check_positive("eta", self.eta, allow_zero=not learn)
        check_positive("max_iter", self.max_iter, allow_zero=True, integer=True)
        check_positive("tol", self.tol, allow_zero=True)
        if not isinstance(self.learn_weights, (bool, np.bool_)):
            raise ValueError(f"learn_weights must be True or False, got {self.learn_weights!r}")
        self.random_seed_ = check_random_seed(self.random_state, self.seed, type(self).__name__)
        if self.step_size is None:
            mu0 = default_step_size(float(self.eta)) if learn else 0.0
        else:
            mu0 = check_positive("step_size", self.step_size)
            if self.metric == "learn" and mu0 * self.eta >= 0.5:
                raise ValueError(
                    f"step_size * eta must be < 1/2 to keep the metric positive definite (eq. 9); "
                    f"got step_size={mu0!r}, eta={self.eta!r}"
                )
        return float(mu0), kernel_list(self.kernel, n_views), kernel_params_list(self.kernel_params, n_views)

    def _train_features(self, Xs, kernels, params):
        """The training feature blocks; records the feature map (``n_landmarks_``, ``nystrom_``,
        ``landmarks_``, ``nystrom_factors_``, ``landmark_views_``)."""
        U, fmap = train_features(Xs, kernels, params, self.nystrom, self.random_seed_)
        for name, value in fmap._asdict().items():
            setattr(self, f"{name}_", value)
        return U

    def _test_features(self, Xs):
        fmap = FeatureMap(*(getattr(self, f"{name}_") for name in FeatureMap._fields))
        V = self.n_views_
        return out_of_sample_features(
            Xs, kernel_list(self.kernel, V), kernel_params_list(self.kernel_params, V), fmap
        )

    def fit(self, Xs, y):
        """Learn the metric and the coefficients from the views ``Xs`` (kernels with
        ``kernel="precomputed"``) and the class labels or real targets ``y``; returns ``self``."""
        Xs, y = self._validate_fit(Xs, y)
        Y = self._targets(y)
        mu0, kernels, params = self._check_params(len(Xs))
        solver = self._solver(self._train_features(Xs, kernels, params))
        results = solver.fit(Y, [(self.lmbda, self.eta, mu0)])
        path = f"Nyström p={self.n_landmarks_}" if self.nystrom_ else "full"
        vars(self).update(fitted_attributes(solver, results, f"MVML ({self.metric}, {path})"))
        return self

    def predict(self, Xs):
        """Class labels (classifier) or real predictions (regressor) for the views ``Xs``."""
        return self._predict_from_decision(self._decision(Xs))

    def _solver(self, U):
        """Algorithm 1 on the training features ``U`` (``V x n x q``) with this estimator's settings."""
        return MVMLSolver(
            U, self.metric, not self.nystrom_, bool(self.learn_weights), self.max_iter, self.tol
        )

    def _decision(self, Xs):
        return decision_values(self._test_features(self._validate_predict(Xs)), self.g_, self.weights_)

    def plot_metric(self, ax=None, output=0, view_names=None, log=True):
        """Plot the learned metric's block structure (|Ã|, view-pair grid; the paper's Figure 3)."""
        self._check_fitted()
        A = self.A_ if self.A_.ndim == 2 else self.A_[output]
        return plot_metric(A, self.n_views_, ax=ax, view_names=view_names, log=log)


class MVMLClassifier(ClassifierMixin, _MVMLBase):
    """MVML classifier (binary, or one-vs-rest for several classes) — Huusari, Kadri & Capponi 2018, Algorithm 1.

    Parameters
    ----------
    lmbda : float > 0
        λ, weight of ``<g, Ã⁺ g>`` (eq. 7).
    eta : float
        η, weight of ``||Ã||_F²`` (learn) or of the group lasso (sparse).
    kernel : str, callable, list (one per view) or ``"precomputed"``
        Per-view scalar kernels (``bayesmv.kernels.get_kernel`` names). With ``"precomputed"``,
        ``fit`` takes ``n x n`` Gram matrices and ``predict`` the ``m x n`` test-vs-train kernels.
    kernel_params : dict or list of dicts
        Kernel parameters (e.g. ``{"gamma": 0.1}``); RBF's default γ is ``1/n_features``.
    nystrom : float in (0, 1] or int
        Block-Nyström level (fraction of samples or landmark count ``p``). ``p = n`` runs the
        exact full path (Algorithm 1a); ``p < n`` Algorithm 1b.
    metric : {"learn", "sparse", "cov", "identity"}
        Learned ``A`` (eq. 9/16), block-sparse ``A`` (eq. 12/18), fixed MVML_Cov, fixed MVML_I.
    learn_weights : bool
        Learn the view weights ``w`` (eq. 10/17); otherwise ``w = 1/V``.
    max_iter : int
        Number of A-steps (outer iterations of Algorithm 1; the reference's ``n_loops``).
    tol : float
        Stop when the relative objective decrease falls below ``tol``.
    random_state : int, RandomState, Generator or None
        Seed of the shared Nyström sample ordering (the int used is ``random_seed_``); ``seed``
        is its deprecated old name.
    step_size : float, optional
        Initial A-step size ``μ0`` (default ``0.5``, or ``0.45/η`` for ``η >= 1``); ``μ0 η < ½``.

    Attributes
    ----------
    A_ : metric ``Ã`` (``Vq x Vq``; ``q = n`` on the full path, where ``Ã = A``), one per class
        for more than two classes. ``g_``, ``weights_``: solution and view weights.
    block_norms_ : Frobenius norms of the view-pair blocks of ``A_``.
    fit_trace_ : ``bayesmv.diagnostics.FitTrace`` with the objective per iteration.
    classes_ : the class labels.
    """

    def _targets(self, y):
        """±1 targets, one column per one-vs-rest problem; records ``classes_``."""
        self.classes_, codes = encode_labels(y)
        return one_vs_rest_targets(codes, len(self.classes_))

    def decision_function(self, Xs):
        """Scores ``Σ_v w_v U_v(x) g_v``: ``(m,)`` for two classes (> 0 means ``classes_[1]``), else ``(m, C)``."""
        return self._class_scores(self._decision(Xs))

    def _class_scores(self, F):
        return F[:, 0] if len(self.classes_) == 2 else F

    def _predict_from_decision(self, F):
        return labels_from_scores(self.classes_, self._class_scores(F))


class MVMLRegressor(RegressorMixin, _MVMLBase):
    """MVML regressor (square loss, eq. 7) — same parameters and attributes as ``MVMLClassifier``."""

    @staticmethod
    def _targets(y):
        return check_targets(y)[:, None]

    @staticmethod
    def _predict_from_decision(F):
        return F[:, 0]


class _MVMLSearch(SearchCVMixin):
    """Cross-validated ``(lmbda, eta)`` of MVML: per fold the training and test features (kernel
    or block-Nyström) and Algorithm 1's starting point are computed once and shared by every
    candidate; Algorithm 1 runs as in ``fit`` for every candidate and output (the learned metric:
    all of them in one lockstep batch), so the fold scores are ``GridSearchCV``'s."""

    _grid = {"lmbdas": "lmbda", "etas": "eta"}

    def _fold_scores(self, base, views, y, train, test, candidates, fit_params):
        est = clone(base)
        Xtr, ytr = est._validate_fit([V[train] for V in views], y[train])
        Y = est._targets(ytr)
        _, kernels, params = est._check_params(len(Xtr))
        solver = est._solver(est._train_features(Xtr, kernels, params))
        Ut = est._test_features(est._validate_predict([V[test] for V in views]))
        penalties = []
        for candidate in candidates:
            mu0, _, _ = est.set_params(**candidate)._check_params(len(Xtr))
            penalties.append((est.lmbda, est.eta, mu0))
        results = solver.fit(Y, penalties)
        C = Y.shape[1]
        metric = accuracy_score if is_classifier(base) else r2_score  # the estimators' ``score``
        return np.array(
            [
                metric(
                    y[test],
                    est._predict_from_decision(
                        decision_values(Ut, [r["g"] for r in rs], [r["w"] for r in rs])
                    ),
                )
                for rs in (results[i * C : (i + 1) * C] for i in range(len(candidates)))
            ]
        )


_MVML_CV_DOC = """

    Parameters as ``{base}`` (without ``lmbda``, ``eta``), plus ``lmbdas``, ``etas``: the grid;
    ``cv``: folds as in ``GridSearchCV`` (an int gives ``{folds}``). The same choice as
    ``GridSearchCV({base}(), {{"lmbda": lmbdas, "eta": etas}}, cv=cv)`` (tested); the speed ratio
    on mfeat is printed by ``benchmarks/search_cv.py``.
    """


class MVMLRegressorCV(RegressorMixin, _MVMLSearch, MultiViewMixin, BaseEstimator):
    __doc__ = "MVML regression with ``(lmbda, eta)`` chosen by cross-validation." + _MVML_CV_DOC.format(
        base="MVMLRegressor", folds="KFold"
    )
    _base = MVMLRegressor

    def __init__(
        self,
        lmbdas=(1e-3, 1e-2, 0.1, 1.0),
        etas=(0.1, 1.0, 10.0),
        kernel="rbf",
        kernel_params=None,
        nystrom=1.0,
        metric="learn",
        learn_weights=False,
        max_iter=6,
        tol=1e-4,
        random_state=0,
        step_size=None,
        cv=5,
    ):
        self.lmbdas = lmbdas
        self.etas = etas
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.nystrom = nystrom
        self.metric = metric
        self.learn_weights = learn_weights
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.step_size = step_size
        self.cv = cv


class MVMLClassifierCV(ClassifierMixin, _MVMLSearch, MultiViewMixin, BaseEstimator):
    __doc__ = "MVML classification with ``(lmbda, eta)`` chosen by cross-validation." + _MVML_CV_DOC.format(
        base="MVMLClassifier", folds="StratifiedKFold"
    )
    _base = MVMLClassifier

    __init__ = MVMLRegressorCV.__init__
