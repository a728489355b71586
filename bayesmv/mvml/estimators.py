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
        """Learn the metric, the view weights and the coefficients (Algorithm 1).

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The training views, one array per view with the same samples in the same rows. With
            ``kernel="precomputed"``, one ``(n_samples, n_samples)`` Gram matrix per view.
        y : array-like of shape (n_samples,)
            Class labels (classifier) or real targets (regressor).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        Xs, y = self._validate_fit(Xs, y)
        Y = self._targets(y)
        mu0, kernels, params = self._check_params(len(Xs))
        solver = self._solver(self._train_features(Xs, kernels, params))
        results = solver.fit(Y, [(self.lmbda, self.eta, mu0)])
        path = f"Nyström p={self.n_landmarks_}" if self.nystrom_ else "full"
        vars(self).update(fitted_attributes(solver, results, f"MVML ({self.metric}, {path})"))
        return self

    def predict(self, Xs):
        """Predict class labels (classifier) or real targets (regressor).

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The views to predict, with as many views and features as in ``fit``. With
            ``kernel="precomputed"``, the ``(n_samples, n_train)`` test-vs-training kernels.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The predicted class labels or targets.
        """
        return self._predict_from_decision(self._decision(Xs))

    def _solver(self, U):
        """Algorithm 1 on the training features ``U`` (``V x n x q``) with this estimator's settings."""
        return MVMLSolver(
            U, self.metric, not self.nystrom_, bool(self.learn_weights), self.max_iter, self.tol
        )

    def _decision(self, Xs):
        return decision_values(self._test_features(self._validate_predict(Xs)), self.g_, self.weights_)

    def plot_metric(self, ax=None, output=0, view_names=None, log=True):
        """Plot the learned metric ``|Ã|`` with its grid of view-pair blocks (the paper's Figure 3).

        Needs matplotlib.

        Parameters
        ----------
        ax : matplotlib.axes.Axes or None, default=None
            The axes to draw in; None opens a new figure.
        output : int, default=0
            The one-vs-rest problem whose metric to show, when there are more than two classes
            (``A_`` then holds one metric per class); ignored otherwise.
        view_names : list of str or None, default=None
            Tick labels of the views; None gives ``"view 0"``, ``"view 1"``, ...
        log : bool, default=True
            Logarithmic colour scale, which shows small off-diagonal blocks.

        Returns
        -------
        ax : matplotlib.axes.Axes
            The axes with the image.
        """
        self._check_fitted()
        A = self.A_ if self.A_.ndim == 2 else self.A_[output]
        return plot_metric(A, self.n_views_, ax=ax, view_names=view_names, log=log)


class MVMLClassifier(ClassifierMixin, _MVMLBase):
    """Multi-view metric learning classifier (MVML).

    Learns a kernel classifier on several views together with a metric ``A`` that weighs the
    views and their pairs (Algorithm 1 of [1]_), with the square loss on ±1 targets. Two
    classes give one problem; more give one one-vs-rest problem per class.

    Parameters
    ----------
    lmbda : float, default=0.1
        Regularisation weight λ of the term ``<g, Ã⁺ g>`` of the objective (eq. 7); must be
        positive. Larger values give smoother predictors.
    eta : float, default=1.0
        Weight η of the metric's penalty: ``||Ã||_F²`` for ``metric="learn"``, the group lasso
        over view pairs for ``"sparse"`` (must then be positive); unused by the fixed metrics.
    kernel : str, callable or list, default="rbf"
        The scalar kernel of each view: a name known to :func:`bayesmv.kernels.get_kernel`, a
        callable ``k(X, Y)``, or a list of these (one per view). ``"precomputed"``: ``Xs`` holds
        Gram matrices (see :meth:`fit` and :meth:`predict`).
    kernel_params : dict, list of dict or None, default=None
        Parameters of the kernel (e.g. ``{"gamma": 0.1}``): one dict for every view or one per
        view. The RBF kernel's default ``gamma`` is ``1 / n_features`` of the view.
    nystrom : float or int, default=1.0
        Block-Nyström level: a fraction in (0, 1] of the training samples or a number of
        landmarks ``p``. ``p = n`` solves the exact problem (Algorithm 1a); ``p < n`` the
        block-Nyström approximation (Algorithm 1b, §3.5), which is cheaper for large ``n``
        (memory ``O(n p)``, in one process on one machine: not distributed).
    metric : {"learn", "sparse", "cov", "identity"}, default="learn"
        The metric ``A`` between views: learned (eq. 9/16), learned block-sparse (eq. 12/18), or
        fixed as in the paper's baselines MVML_Cov (``"cov"``) and MVML_I (``"identity"``).
    learn_weights : bool, default=False
        Learn the view weights ``w`` (eq. 10/17); otherwise every view weighs ``1/V``.
    max_iter : int, default=6
        Maximum number of outer iterations of Algorithm 1 (metric and weight updates); 0 keeps
        the starting metric.
    tol : float, default=1e-4
        Stop early once an iteration decreases the objective by less than ``tol`` times its
        value.
    random_state : int, RandomState instance, Generator or None, default=0
        Draws the Nyström landmarks (one set shared by the views). Pass an int for reproducible
        fits; the int used is stored in ``random_seed_``.
    step_size : float or None, default=None
        Initial step size ``μ0`` of the metric updates. None: 0.5, or ``0.45 / η`` when
        ``η >= 1``. With ``metric="learn"``, ``μ0 η < 1/2`` keeps ``A`` positive definite (eq. 9).
    seed : int, RandomState instance, Generator or None, optional
        Deprecated alias of ``random_state``; setting it warns with a ``FutureWarning``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    A_ : ndarray of shape (V*q, V*q) or (n_classes, V*q, V*q)
        The metric ``Ã`` in feature space, view-major (``q = n`` without Nyström, where
        ``Ã = A``); one per class for more than two classes, as are ``g_``, ``weights_``, ...
    g_ : ndarray of shape (V*q,) or (n_classes, ...)
        The coefficients of the predictor.
    weights_ : ndarray of shape (V,) or (n_classes, ...)
        The view weights ``w``.
    block_norms_ : ndarray of shape (V, V) or (n_classes, ...)
        Frobenius norms of the view-pair blocks of ``A_``.
    n_iter_ : int
        Number of iterations run.
    fit_trace_ : bayesmv.diagnostics.FitTrace
        The objective per iteration (summed over the outputs) and whether the fit converged;
        ``fit_traces_`` holds one trace per output.
    solver_form_ : {"dual", "primal"}
        The form of the problem solved (dual when ``n <= V q``).
    n_landmarks_ : int
        The number of landmarks ``q`` (``n`` without Nyström); ``landmarks_`` holds their
        indices in the training set.
    random_seed_ : int
        The integer seed drawn from ``random_state``.
    n_views_ : int
        Number of views seen in :meth:`fit`.
    n_features_per_view_ : tuple of int
        Number of features of each view.
    n_features_in_ : int
        Total number of features over the views.

    See Also
    --------
    MVMLRegressor : The same model for real targets.
    MVMLClassifierCV : ``lmbda`` and ``eta`` chosen by cross-validation.

    References
    ----------
    .. [1] R. Huusari, H. Kadri and C. Capponi, "Multi-view Metric Learning in Vector-valued
       Kernel Spaces", Proceedings of the 21st International Conference on Artificial
       Intelligence and Statistics (AISTATS), 2018, arXiv:1803.07821.

    Examples
    --------
    >>> from bayesmv import MVMLClassifier
    >>> from bayesmv.datasets import make_mvml_toy
    >>> Xs, y = make_mvml_toy(n_samples=40, random_state=0)
    >>> clf = MVMLClassifier(lmbda=0.1, max_iter=3).fit(Xs, y)
    >>> clf.classes_
    array([0, 1])
    >>> clf.predict([X[:3] for X in Xs]).shape
    (3,)
    >>> clf.A_.shape  # two views of 40 training points
    (80, 80)
    """

    def _targets(self, y):
        """±1 targets, one column per one-vs-rest problem; records ``classes_``."""
        self.classes_, codes = encode_labels(y)
        return one_vs_rest_targets(codes, len(self.classes_))

    def decision_function(self, Xs):
        """Class scores ``Σ_v w_v U_v(x) g_v`` of the views ``Xs``.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_v)
            The views to score, as in :meth:`predict`.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            For two classes one score per sample, positive for ``classes_[1]``; otherwise one
            one-vs-rest score per class, the largest giving the predicted class.
        """
        return self._class_scores(self._decision(Xs))

    def _class_scores(self, F):
        return F[:, 0] if len(self.classes_) == 2 else F

    def _predict_from_decision(self, F):
        return labels_from_scores(self.classes_, self._class_scores(F))


class MVMLRegressor(RegressorMixin, _MVMLBase):
    """Multi-view metric learning regressor (MVML).

    Learns a kernel regressor on several views together with a metric ``A`` that weighs the
    views and their pairs (Algorithm 1 of [1]_), with the square loss (eq. 7).

    Parameters
    ----------
    lmbda : float, default=0.1
        Regularisation weight λ of the term ``<g, Ã⁺ g>`` of the objective (eq. 7); must be
        positive. Larger values give smoother predictors.
    eta : float, default=1.0
        Weight η of the metric's penalty: ``||Ã||_F²`` for ``metric="learn"``, the group lasso
        over view pairs for ``"sparse"`` (must then be positive); unused by the fixed metrics.
    kernel : str, callable or list, default="rbf"
        The scalar kernel of each view: a name known to :func:`bayesmv.kernels.get_kernel`, a
        callable ``k(X, Y)``, or a list of these (one per view). ``"precomputed"``: ``Xs`` holds
        Gram matrices (see :meth:`fit` and :meth:`predict`).
    kernel_params : dict, list of dict or None, default=None
        Parameters of the kernel (e.g. ``{"gamma": 0.1}``): one dict for every view or one per
        view. The RBF kernel's default ``gamma`` is ``1 / n_features`` of the view.
    nystrom : float or int, default=1.0
        Block-Nyström level: a fraction in (0, 1] of the training samples or a number of
        landmarks ``p``. ``p = n`` solves the exact problem (Algorithm 1a); ``p < n`` the
        block-Nyström approximation (Algorithm 1b, §3.5), which is cheaper for large ``n``
        (memory ``O(n p)``, in one process on one machine: not distributed).
    metric : {"learn", "sparse", "cov", "identity"}, default="learn"
        The metric ``A`` between views: learned (eq. 9/16), learned block-sparse (eq. 12/18), or
        fixed as in the paper's baselines MVML_Cov (``"cov"``) and MVML_I (``"identity"``).
    learn_weights : bool, default=False
        Learn the view weights ``w`` (eq. 10/17); otherwise every view weighs ``1/V``.
    max_iter : int, default=6
        Maximum number of outer iterations of Algorithm 1 (metric and weight updates); 0 keeps
        the starting metric.
    tol : float, default=1e-4
        Stop early once an iteration decreases the objective by less than ``tol`` times its
        value.
    random_state : int, RandomState instance, Generator or None, default=0
        Draws the Nyström landmarks (one set shared by the views). Pass an int for reproducible
        fits; the int used is stored in ``random_seed_``.
    step_size : float or None, default=None
        Initial step size ``μ0`` of the metric updates. None: 0.5, or ``0.45 / η`` when
        ``η >= 1``. With ``metric="learn"``, ``μ0 η < 1/2`` keeps ``A`` positive definite (eq. 9).
    seed : int, RandomState instance, Generator or None, optional
        Deprecated alias of ``random_state``; setting it warns with a ``FutureWarning``.

    Attributes
    ----------
    A_ : ndarray of shape (V*q, V*q)
        The metric ``Ã`` in feature space, view-major (``q = n`` without Nyström, where
        ``Ã = A``).
    g_ : ndarray of shape (V*q,)
        The coefficients of the predictor.
    weights_ : ndarray of shape (V,)
        The view weights ``w``.
    block_norms_ : ndarray of shape (V, V)
        Frobenius norms of the view-pair blocks of ``A_``.
    n_iter_ : int
        Number of iterations run.
    fit_trace_ : bayesmv.diagnostics.FitTrace
        The objective per iteration (summed over the outputs) and whether the fit converged;
        ``fit_traces_`` holds one trace per output.
    solver_form_ : {"dual", "primal"}
        The form of the problem solved (dual when ``n <= V q``).
    n_landmarks_ : int
        The number of landmarks ``q`` (``n`` without Nyström); ``landmarks_`` holds their
        indices in the training set.
    random_seed_ : int
        The integer seed drawn from ``random_state``.
    n_views_ : int
        Number of views seen in :meth:`fit`.
    n_features_per_view_ : tuple of int
        Number of features of each view.
    n_features_in_ : int
        Total number of features over the views.

    See Also
    --------
    MVMLClassifier : The same model for class labels.
    MVMLRegressorCV : ``lmbda`` and ``eta`` chosen by cross-validation.

    References
    ----------
    .. [1] R. Huusari, H. Kadri and C. Capponi, "Multi-view Metric Learning in Vector-valued
       Kernel Spaces", Proceedings of the 21st International Conference on Artificial
       Intelligence and Statistics (AISTATS), 2018, arXiv:1803.07821.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv import MVMLRegressor
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(30, 3)), rng.normal(size=(30, 2))]
    >>> y = np.sin(Xs[0][:, 0]) + Xs[1][:, 1]
    >>> reg = MVMLRegressor(max_iter=3).fit(Xs, y)
    >>> reg.predict(Xs).shape
    (30,)
    >>> reg.weights_  # learn_weights=False: equal weights
    array([0.5, 0.5])
    """

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


class MVMLRegressorCV(RegressorMixin, _MVMLSearch, MultiViewMixin, BaseEstimator):
    """MVML regression with ``lmbda`` and ``eta`` chosen by cross-validation.

    Scores every ``(lmbda, eta)`` pair of the grid on the folds of ``cv`` and refits the best
    on all the data, as ``GridSearchCV(MVMLRegressor(), {"lmbda": lmbdas, "eta": etas}, cv=cv)``
    would, with the same choice. Each fold's kernels (or Nyström features) and the starting point
    of Algorithm 1 of [1]_ are computed once and shared by every candidate.

    Parameters
    ----------
    lmbdas : sequence of float, default=(1e-3, 1e-2, 0.1, 1.0)
        The candidate values of ``lmbda`` (λ, eq. 7).
    etas : sequence of float, default=(0.1, 1.0, 10.0)
        The candidate values of ``eta`` (η, the metric's penalty weight).
    kernel : str, callable or list, default="rbf"
        The scalar kernel of each view, as in :class:`MVMLRegressor`.
    kernel_params : dict, list of dict or None, default=None
        Parameters of the kernel, one dict for every view or one per view.
    nystrom : float or int, default=1.0
        Block-Nyström level: a fraction in (0, 1] of the training samples or a number of
        landmarks (1.0: the exact problem).
    metric : {"learn", "sparse", "cov", "identity"}, default="learn"
        The metric between views: learned, learned block-sparse, or fixed (MVML_Cov, MVML_I).
    learn_weights : bool, default=False
        Learn the view weights; otherwise every view weighs ``1/V``.
    max_iter : int, default=6
        Maximum number of outer iterations of Algorithm 1 per fit.
    tol : float, default=1e-4
        Relative decrease of the objective below which a fit stops.
    random_state : int, RandomState instance, Generator or None, default=0
        Draws the Nyström landmarks; pass an int for reproducible fits.
    step_size : float or None, default=None
        Initial step size ``μ0`` of the metric updates; None: chosen from each ``eta``.
    cv : int, cross-validation generator or iterable, default=5
        The folds, as in ``GridSearchCV``: an int gives that many ``KFold`` folds.

    Attributes
    ----------
    best_params_ : dict
        The chosen ``lmbda`` and ``eta``.
    best_score_ : float
        Their mean test score over the folds (R²).
    best_index_ : int
        Their index in ``cv_results_["params"]``.
    cv_results_ : dict of ndarray
        The test scores of every candidate, with the keys of ``GridSearchCV.cv_results_``
        (``params``, ``split<k>_test_score``, ``mean_test_score``, ``rank_test_score``, ...).
    best_estimator_ : MVMLRegressor
        The best candidate refitted on all the data; ``predict`` uses it.
    n_splits_ : int
        The number of folds.
    n_views_ : int
        Number of views seen in :meth:`fit`.

    See Also
    --------
    MVMLRegressor : The estimator at fixed ``lmbda`` and ``eta``.

    Notes
    -----
    ``benchmarks/search_cv.py`` compares its time with ``GridSearchCV``'s.

    References
    ----------
    .. [1] R. Huusari, H. Kadri and C. Capponi, "Multi-view Metric Learning in Vector-valued
       Kernel Spaces", Proceedings of the 21st International Conference on Artificial
       Intelligence and Statistics (AISTATS), 2018, arXiv:1803.07821.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv import MVMLRegressorCV
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(30, 3)), rng.normal(size=(30, 2))]
    >>> y = np.sin(Xs[0][:, 0]) + Xs[1][:, 1]
    >>> search = MVMLRegressorCV(lmbdas=(0.01, 0.1), etas=(1.0,), max_iter=3, cv=3).fit(Xs, y)
    >>> sorted(search.best_params_)
    ['eta', 'lmbda']
    >>> search.cv_results_["mean_test_score"].shape
    (2,)
    >>> search.predict(Xs).shape
    (30,)
    """

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
    """MVML classification with ``lmbda`` and ``eta`` chosen by cross-validation.

    Scores every ``(lmbda, eta)`` pair of the grid on the folds of ``cv`` and refits the best
    on all the data, as ``GridSearchCV(MVMLClassifier(), {"lmbda": lmbdas, "eta": etas}, cv=cv)``
    would, with the same choice. Each fold's kernels (or Nyström features) and the starting point
    of Algorithm 1 of [1]_ are computed once and shared by every candidate.

    Parameters
    ----------
    lmbdas : sequence of float, default=(1e-3, 1e-2, 0.1, 1.0)
        The candidate values of ``lmbda`` (λ, eq. 7).
    etas : sequence of float, default=(0.1, 1.0, 10.0)
        The candidate values of ``eta`` (η, the metric's penalty weight).
    kernel : str, callable or list, default="rbf"
        The scalar kernel of each view, as in :class:`MVMLClassifier`.
    kernel_params : dict, list of dict or None, default=None
        Parameters of the kernel, one dict for every view or one per view.
    nystrom : float or int, default=1.0
        Block-Nyström level: a fraction in (0, 1] of the training samples or a number of
        landmarks (1.0: the exact problem).
    metric : {"learn", "sparse", "cov", "identity"}, default="learn"
        The metric between views: learned, learned block-sparse, or fixed (MVML_Cov, MVML_I).
    learn_weights : bool, default=False
        Learn the view weights; otherwise every view weighs ``1/V``.
    max_iter : int, default=6
        Maximum number of outer iterations of Algorithm 1 per fit.
    tol : float, default=1e-4
        Relative decrease of the objective below which a fit stops.
    random_state : int, RandomState instance, Generator or None, default=0
        Draws the Nyström landmarks; pass an int for reproducible fits.
    step_size : float or None, default=None
        Initial step size ``μ0`` of the metric updates; None: chosen from each ``eta``.
    cv : int, cross-validation generator or iterable, default=5
        The folds, as in ``GridSearchCV``: an int gives that many ``StratifiedKFold`` folds.

    Attributes
    ----------
    best_params_ : dict
        The chosen ``lmbda`` and ``eta``.
    best_score_ : float
        Their mean test score over the folds (accuracy).
    best_index_ : int
        Their index in ``cv_results_["params"]``.
    cv_results_ : dict of ndarray
        The test scores of every candidate, with the keys of ``GridSearchCV.cv_results_``
        (``params``, ``split<k>_test_score``, ``mean_test_score``, ``rank_test_score``, ...).
    best_estimator_ : MVMLClassifier
        The best candidate refitted on all the data; ``predict`` uses it.
    n_splits_ : int
        The number of folds.
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    n_views_ : int
        Number of views seen in :meth:`fit`.

    See Also
    --------
    MVMLClassifier : The estimator at fixed ``lmbda`` and ``eta``.

    Notes
    -----
    ``benchmarks/search_cv.py`` compares its time with ``GridSearchCV``'s.

    References
    ----------
    .. [1] R. Huusari, H. Kadri and C. Capponi, "Multi-view Metric Learning in Vector-valued
       Kernel Spaces", Proceedings of the 21st International Conference on Artificial
       Intelligence and Statistics (AISTATS), 2018, arXiv:1803.07821.

    Examples
    --------
    >>> from bayesmv import MVMLClassifierCV
    >>> from bayesmv.datasets import make_latent_views
    >>> Xs, y = make_latent_views(n_samples=30, n_features=4, random_state=0)
    >>> search = MVMLClassifierCV(lmbdas=(0.01, 0.1), etas=(1.0,), max_iter=3, cv=3).fit(Xs, y)
    >>> sorted(search.best_params_)
    ['eta', 'lmbda']
    >>> search.classes_
    array([0, 1])
    >>> search.predict(Xs).shape
    (30,)
    """

    _base = MVMLClassifier

    __init__ = MVMLRegressorCV.__init__
