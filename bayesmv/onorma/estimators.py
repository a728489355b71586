"""ONORMA and MONORMA: stream validation, the calls into :mod:`bayesmv.onorma.online`, and the
fitted state (Audiffren & Kadri 2013, Algorithms 1-2)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, MultiOutputMixin
from sklearn.exceptions import NotFittedError

from ..base import PersistenceMixin, require_targets
from ..datasets import (
    SEED_DEPRECATED,
    MultiViewArray,
    check_positive,
    check_random_seed,
    check_views,
    is_view_list,
)
from ..kernels import SeparableKernel
from .online import (
    LOSSES,
    SCHEDULES,
    _predict_rows,
    encode_stream_targets,
    grow_buffer,
    labels_from_scores,
    learning_rates,
    online_trace,
    run_stream,
    step_errors,
    step_losses,
)
from .terms import _prepare_inputs, _static_terms, kernel_terms

__all__ = ["MONORMA", "ONORMA", "initial_state"]

#: MONORMA's default kernels: RBF bandwidths as multiples of the RBF default ``1 / n_features``
_DEFAULT_GAMMA_FACTORS = (0.1, 1.0, 10.0)


def initial_state(kernels, n_outputs, n_features, truncation, adapt):
    """The state of an online estimator before its first stream step.

    Parameters
    ----------
    kernels : sequence of operator-valued kernels
        The ``m`` kernels (one for ONORMA), each with output dimension ``n_outputs``.
    n_outputs : int
        The output dimension ``d`` (the number of classes or of target columns).
    n_features : int
        The number of input columns (all views together).
    truncation : int or None
        The budget ``s`` of the coefficient buffer; None: no truncation.
    adapt : bool
        Whether the kernel weights are learned (MONORMA).

    Returns
    -------
    state : dict
        The kernels' separable terms (``_terms``, their ``w_l T_l`` stacked as ``_TW``, the
        kernel of each as ``_groups``) and whether their inputs are multi-view, an empty
        coefficient buffer (capacity ``truncation``, else 64, growing), kernel weights ``1/m``
        (``adapt``, MONORMA) and empty per-step records.

    Raises
    ------
    ValueError
        If a kernel's output dimension is not ``n_outputs``, or the kernels mix single- and
        multi-view inputs.
    """
    terms, groups, multiview = [], [], None
    for j, K in enumerate(kernels):
        tj, dj, mvj = kernel_terms(K)
        if dj != n_outputs:
            raise ValueError(
                f"kernel {j} has output dimension {dj} but the targets need {n_outputs} (n_classes or Y columns)"
            )
        if multiview is not None and mvj != multiview:
            raise ValueError("kernels must be all single-view or all multi-view")
        multiview = mvj
        terms += tj
        groups += [j] * len(tj)
    m = len(kernels)
    cap = int(truncation) if truncation is not None else 64
    state = {
        "_multiview": multiview,
        "n_outputs_": n_outputs,
        "n_kernels_": m,
        "_TW": np.stack([T for _, T, _ in terms]),
        "_terms": terms,
        "_groups": tuple(groups),
        "X_buffer_": np.zeros((cap, n_features)),
        "coef_": np.zeros((cap, n_outputs)),
        "support_times_": np.zeros(cap, dtype=np.int64),
        "n_steps_": 0,
        "delta_": np.full(m, 1.0 / m) if adapt else np.ones(1),
        "gamma_": np.zeros(m),
        "online_predictions_": np.zeros((0, n_outputs)),
        "errors_": np.zeros(0),
        "losses_": np.zeros(0),
        "rkhs_norms_sq_": np.zeros((0, m)),
    }
    if adapt:
        state["kernel_weights_"] = np.zeros((0, m))
    return state


class _OnlineOVK(PersistenceMixin, MultiOutputMixin, BaseEstimator):
    """Shared machinery of ONORMA and MONORMA (one or several kernels sharing the coefficients)."""

    _adapt = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True  # a regressor or a classifier, as ``loss`` says
        return tags

    def _kernel_list(self, d, n_features=None):
        raise NotImplementedError

    def _check_params(self):
        check_positive("lam", self.lam, allow_zero=True)
        check_positive("eta0", self.eta0)
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        if not (callable(self.schedule) or self.schedule in SCHEDULES):
            raise ValueError(
                f"schedule must be one of {SCHEDULES} or a callable t -> eta_t, got {self.schedule!r}"
            )
        if self.truncation is not None:
            check_positive("truncation", self.truncation, integer=True)
        check_positive("block_size", self.block_size, integer=True)

    def _static(self):
        kfns, cols = _static_terms(self._terms, self._ranges, len(self.n_features_per_view_))
        return dict(kfns=kfns, cols=cols, groups=self._groups, n_groups=self.n_kernels_)

    def partial_fit(self, X, y, classes=None):
        """Learn from one chunk of the stream, continuing from the state of earlier calls.

        The first call sets up the kernels and the coefficient buffer; later calls carry on
        from the last step, as if the chunks had come as one stream.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or list of array-like
            The inputs, one row per stream step in order; a list of views (one 2-D array per
            view, or a :class:`~bayesmv.MultiViewArray`) for a multi-view kernel.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Real targets for ``loss="squared"``; class labels for the hinge losses.
        classes : array-like of shape (n_classes,), default=None
            Every label the stream may hold (hinge losses); give it on the first call when the
            first chunk lacks some class. Ignored on later calls and for ``loss="squared"``.

        Returns
        -------
        self : object
            The estimator, updated by the chunk.
        """
        require_targets(self, y)
        first = not hasattr(self, "n_steps_")
        if first:
            self._check_params()
        mv = self._multiview if not first else kernel_terms(self._kernel_list(None)[0])[2]
        fitted = None if first else self.n_features_per_view_
        Xa, sizes, ranges = _prepare_inputs(X, mv, fitted, owner=type(self).__name__)
        n = Xa.shape[0]
        Y, classes = encode_stream_targets(
            self.loss, y, n, classes if first else getattr(self, "classes_", None)
        )
        if first:
            if classes is not None:
                self.classes_ = classes
            self._y_1d = self.loss == "squared" and np.ndim(y) == 1
            self.n_features_per_view_, self.n_features_in_, self._ranges = sizes, sum(sizes), ranges
            vars(self).update(
                initial_state(
                    self._kernel_list(Y.shape[1], Xa.shape[1]),
                    Y.shape[1],
                    Xa.shape[1],
                    self.truncation,
                    self._adapt,
                )
            )
        elif Y.shape[1] != self.n_outputs_:
            raise ValueError(f"Y has {Y.shape[1]} outputs but earlier chunks had {self.n_outputs_}")
        etas = learning_rates(self.schedule, self.eta0, self.lam, self.n_steps_, n)
        if self.truncation is None:  # capacity: the stream length rounded up to a power of two
            self.X_buffer_, self.coef_, self.support_times_ = grow_buffer(
                self.X_buffer_, self.coef_, self.support_times_, self.n_steps_ + n
            )
        state = (self.X_buffer_, self.coef_, self.support_times_, self.n_steps_, self.delta_, self.gamma_)
        state, F, D, Gam = run_stream(
            state,
            self._TW,
            self.lam,
            getattr(self, "r", 1.0),
            Xa,
            Y,
            etas,
            loss=self.loss,
            adapt=self._adapt,
            truncation=self.truncation,
            block_size=self.block_size,
            static=self._static(),
            owner=type(self).__name__,
        )
        self.X_buffer_, self.coef_, self.support_times_, t_end, self.delta_, self.gamma_ = state
        self.n_steps_ = int(t_end)
        self.online_predictions_ = np.concatenate([self.online_predictions_, F])
        self.errors_ = np.concatenate([self.errors_, step_errors(self.loss, F, Y)])
        self.losses_ = np.concatenate([self.losses_, step_losses(self.loss, F, Y)])
        self.rkhs_norms_sq_ = np.concatenate([self.rkhs_norms_sq_, Gam])
        weights = None
        if self._adapt:
            self.kernel_weights_ = weights = np.concatenate([self.kernel_weights_, D])
        self.fit_trace_ = online_trace(
            self.losses_,
            self.errors_,
            self.rkhs_norms_sq_,
            self.lam,
            self.coef_,
            self.support_times_,
            type(self).__name__,
            weights,
            self.delta_,
        )
        return self

    def fit(self, X, y, classes=None):
        """Learn from the whole stream ``(X, y)``, starting afresh.

        The rows are taken in order (permuted first when ``shuffle`` is True); the state of any
        earlier fit or :meth:`partial_fit` is discarded.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or list of array-like
            The inputs, one row per stream step in order; a list of views (one 2-D array per
            view, or a :class:`~bayesmv.MultiViewArray`) for a multi-view kernel.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Real targets for ``loss="squared"``; class labels for the hinge losses.
        classes : array-like of shape (n_classes,), default=None
            The class labels (hinge losses); None: the labels found in ``y``. Ignored for
            ``loss="squared"``.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        require_targets(self, y)
        for attr in ("n_steps_", "classes_"):
            if hasattr(self, attr):
                delattr(self, attr)
        self.random_seed_ = check_random_seed(self.random_state, self.seed, type(self).__name__)
        if isinstance(X, MultiViewArray):
            X = X.views
        if self.shuffle:
            views = check_views(X, name="X")  # one 2-D array is one view
            perm = np.random.default_rng(self.random_seed_).permutation(len(views[0]))
            X = [V[perm] for V in views] if is_view_list(X) else views[0][perm]
            y = np.asarray(y)[perm]
        return self.partial_fit(X, y, classes)

    @property
    def cumulative_error_(self):
        """Running mean of the per-step error ``||f_{t-1}(x_t) - y_t||²`` (online MSE, §5); for
        classification losses the running mistake rate."""
        self._check_fitted()
        return np.cumsum(self.errors_) / np.arange(1, len(self.errors_) + 1)

    def _check_fitted(self):
        if not hasattr(self, "n_steps_"):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet; call 'fit' or 'partial_fit' first."
            )

    def decision_function(self, X):
        """Evaluate the function learnt after the last stream step, ``f_T``, on ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or list of array-like
            The inputs, laid out as in :meth:`fit` (one 2-D array, or a list of views).

        Returns
        -------
        scores : ndarray of shape (n_samples, n_outputs)
            ``f_T(x)`` for each row: the predicted targets (``loss="squared"``) or one score per
            output of the hinge losses.
        """
        self._check_fitted()
        Xa, _, _ = _prepare_inputs(X, self._multiview, self.n_features_per_view_, owner=type(self).__name__)
        # the whole buffer (empty slots hold zero coefficients): its power-of-two size keeps compiles rare
        return _predict_rows(self.X_buffer_, self.coef_, self._TW, self.delta_, Xa, self._static())

    def predict(self, X):
        """Predict targets (``loss="squared"``) or class labels (hinge losses) for ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or list of array-like
            The inputs, laid out as in :meth:`fit` (one 2-D array, or a list of views).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            ``f_T(x)`` (1-D when ``y`` was 1-D), or the label of ``classes_`` with the highest
            score (the sign of the score for one output).
        """
        F = self.decision_function(X)
        if self.loss == "squared":
            return F[:, 0] if getattr(self, "_y_1d", False) else F
        return self.classes_[labels_from_scores(F)]

    def score(self, X, y):
        """Score the predictions for ``X`` against ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or list of array-like
            The inputs, laid out as in :meth:`fit` (one 2-D array, or a list of views).
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            The true targets or class labels.

        Returns
        -------
        score : float
            R² averaged uniformly over the outputs (``loss="squared"``), else the accuracy.
        """
        from sklearn.metrics import accuracy_score, r2_score

        pred = self.predict(X)
        if self.loss == "squared":
            return r2_score(np.asarray(y, dtype=float).reshape(pred.shape), pred)
        return accuracy_score(y, pred)


class ONORMA(_OnlineOVK):
    """Online learning with an operator-valued kernel (ONORMA).

    Learns a vector-valued function from a stream of samples, one stochastic gradient step in
    the kernel's RKHS per sample (Audiffren and Kadri [1]_, Algorithm 1): after step ``t`` the
    function is ``f_t = Σ_i K(x_i, ·) α_{i,t}`` (eq. 4), the new coefficient is ``-η_t`` times
    the loss gradient at ``f_{t-1}(x_t)`` and the earlier ones shrink by ``1 - η_t λ`` (eq. 3).
    :meth:`partial_fit` continues the stream chunk by chunk; :meth:`fit` learns from one whole
    stream. The loss makes it a multi-output regressor or a multi-class classifier.

    Parameters
    ----------
    kernel : operator-valued kernel or None, default=None
        A kernel of :mod:`bayesmv.kernels` (``SeparableKernel``, ``SumOfSeparableKernels``,
        ``nonseparable_kernel(mu, d)``, ``DiagonalMultiViewKernel`` for a list of views) with
        ``n_outputs_`` outputs; None: a Gaussian kernel times the identity (independent outputs).
    lam : float, default=0.01
        The regularisation λ >= 0: each step shrinks the earlier coefficients by ``1 - η_t λ``
        (eq. 3), so the rates must keep ``η_t λ < 1``.
    eta0 : float, default=1.0
        The step size η of the learning-rate schedule.
    schedule : {"invsqrt", "constant"} or callable, default="invsqrt"
        The learning rates: ``η_t = eta0 / √t`` (as in the paper's experiments), ``η_t = eta0``,
        or a callable mapping the array of 1-based steps ``t`` to one rate per step.
    truncation : int or None, default=None
        Keep only the coefficients of the last ``truncation`` steps (a ring buffer), which
        bounds the cost of a step and of a prediction on long streams; None keeps every step.
    loss : {"squared", "hinge", "ovr_hinge"}, default="squared"
        ``"squared"``: ½||f(x) - y||², vector-valued regression; ``"hinge"``: the Crammer-Singer
        multi-class hinge, one output per class; ``"ovr_hinge"``: one-vs-rest hinge on ±1 targets.
    shuffle : bool, default=False
        Whether :meth:`fit` permutes the stream (with ``random_state``) before learning from it;
        :meth:`partial_fit` never shuffles.
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=0
        Seeds the permutation of ``shuffle`` (the integer used is stored as ``random_seed_``).
    block_size : int, default=64
        Stream steps per compiled block; it changes speed and memory, not the result (up to
        rounding).
    seed : int, numpy.random.RandomState, numpy.random.Generator or None, default="deprecated"
        Deprecated alias of ``random_state``; when given it replaces ``random_state`` with a
        ``FutureWarning``.

    Attributes
    ----------
    n_outputs_ : int
        The outputs of ``f``: the target columns, the classes (``"hinge"``, and ``"ovr_hinge"``
        with three or more classes) or 1 (``"ovr_hinge"`` with two classes).
    classes_ : ndarray of shape (n_classes,)
        The class labels (hinge losses only).
    n_features_in_ : int
        Number of input features (summed over the views).
    n_features_per_view_ : tuple of int
        The features of each view (one entry for single-view inputs).
    n_steps_ : int
        The stream steps learnt so far.
    coef_ : ndarray of shape (n_buffer, n_outputs)
        The coefficients ``α_{i,t}`` of the buffered inputs (eq. 4); unused slots hold zeros.
        ``n_buffer`` is ``truncation``, else the steps so far rounded up to a power of two (>= 64).
    X_buffer_ : ndarray of shape (n_buffer, n_features_in)
        The inputs ``x_i`` the coefficients belong to.
    support_times_ : ndarray of shape (n_buffer,)
        The stream step (from 1) at which each buffered input arrived; 0 for an unused slot.
    online_predictions_ : ndarray of shape (n_steps, n_outputs)
        The prediction ``f_{t-1}(x_t)`` made at each step before learning from it.
    errors_ : ndarray of shape (n_steps,)
        The error of each online prediction: ``||f_{t-1}(x_t) - y_t||²``, or a 0/1 mistake for
        the hinge losses.
    losses_ : ndarray of shape (n_steps,)
        The loss ``ℓ(f_{t-1}(x_t), y_t)`` of each step.
    cumulative_error_ : ndarray of shape (n_steps,)
        The running mean of ``errors_`` (the online MSE, or the running mistake rate).
    rkhs_norms_sq_ : ndarray of shape (n_steps, 1)
        ``||f_t||²`` after each step (eq. 6), of the expansion without truncation.
    n_kernels_ : int
        The number of kernels (1).
    fit_trace_ : FitTrace
        The running regularised risk, the losses, the running error and the norms per step
        (:class:`~bayesmv.diagnostics.FitTrace`).
    random_seed_ : int
        The integer seed used by :meth:`fit` (from ``random_state``).

    See Also
    --------
    MONORMA : Online learning with several operator-valued kernels and learnt kernel weights.
    OVKRidge : The batch counterpart (regularised least squares on the whole data).

    References
    ----------
    .. [1] J. Audiffren and H. Kadri, "Online Learning with Multiple Operator-valued Kernels",
       arXiv:1311.0222, 2013.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv import ONORMA
    >>> from bayesmv.datasets import make_multitask
    >>> X, Y = make_multitask(n_samples=200, n_tasks=3, n_features=5)
    >>> reg = ONORMA(lam=0.01).fit(X, Y)
    >>> reg.predict(X[:2]).shape, reg.n_steps_
    ((2, 3), 200)
    >>> y = np.where(X[:, 0] > 0.5, "high", "low")
    >>> clf = ONORMA(loss="hinge").fit(X, y)
    >>> clf.classes_
    array(['high', 'low'], dtype='<U4')
    """

    def __init__(
        self,
        kernel=None,
        lam=0.01,
        eta0=1.0,
        schedule="invsqrt",
        truncation=None,
        loss="squared",
        shuffle=False,
        random_state=0,
        block_size=64,
        seed=SEED_DEPRECATED,
    ):
        self.kernel = kernel
        self.lam = lam
        self.eta0 = eta0
        self.schedule = schedule
        self.truncation = truncation
        self.loss = loss
        self.shuffle = shuffle
        self.random_state = random_state
        self.seed = seed
        self.block_size = block_size

    def _kernel_list(self, d, n_features=None):
        if self.kernel is None:
            return [SeparableKernel("rbf", np.eye(d if d is not None else 1))]
        return [self.kernel]


class MONORMA(_OnlineOVK):
    """Online learning with multiple operator-valued kernels (MONORMA).

    ONORMA with several kernels ``K^1..K^m`` that share the coefficients ``α`` and whose
    weights are learnt along the stream (Audiffren and Kadri [1]_, Algorithm 2): the function
    is ``f_t = Σ_j δ_t^j g_t^j`` with ``g_t^j = Σ_i K^j(x_i, ·) α_{i,t}``. The squared norms
    ``γ_t^j = ||g_t^j||²`` follow the O(d²) recursion (6) and the weights follow eq. (5) with
    ``Σ_j (δ^j)^r = 1``, starting from ``δ_0 = 1/m``. With ``truncation`` the recursion tracks
    the norm of the expansion without truncation, as in the paper.

    Parameters
    ----------
    kernels : list of operator-valued kernels or None, default=None
        The kernels ``K^1..K^m`` (any kernel ``ONORMA`` takes), all with the same outputs and all
        single-view or all multi-view. None: three Gaussian kernels times the identity, ``gamma``
        = 0.1/p, 1/p and 10/p in this order (p = ``n_features_in_``; single-view inputs only).
    r : float, default=1.0
        The norm of the kernel weights, ``Σ_j (δ^j)^r = 1`` (eq. 5): ``r = 1`` makes them sum to
        one; a larger ``r`` spreads the weight more evenly over the kernels.
    lam : float, default=0.01
        The regularisation λ >= 0: each step shrinks the earlier coefficients by ``1 - η_t λ``
        (eq. 3), so the rates must keep ``η_t λ < 1``.
    eta0 : float, default=1.0
        The step size η of the learning-rate schedule.
    schedule : {"invsqrt", "constant"} or callable, default="invsqrt"
        The learning rates: ``η_t = eta0 / √t`` (as in the paper's experiments), ``η_t = eta0``,
        or a callable mapping the array of 1-based steps ``t`` to one rate per step.
    truncation : int or None, default=None
        Keep only the coefficients of the last ``truncation`` steps (a ring buffer), which
        bounds the cost of a step and of a prediction on long streams; None keeps every step.
    loss : {"squared", "hinge", "ovr_hinge"}, default="squared"
        ``"squared"``: ½||f(x) - y||², vector-valued regression; ``"hinge"``: the Crammer-Singer
        multi-class hinge, one output per class; ``"ovr_hinge"``: one-vs-rest hinge on ±1 targets.
    shuffle : bool, default=False
        Whether :meth:`fit` permutes the stream (with ``random_state``) before learning from it;
        :meth:`partial_fit` never shuffles.
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=0
        Seeds the permutation of ``shuffle`` (the integer used is stored as ``random_seed_``).
    block_size : int, default=64
        Stream steps per compiled block; it changes speed and memory, not the result (up to
        rounding).
    seed : int, numpy.random.RandomState, numpy.random.Generator or None, default="deprecated"
        Deprecated alias of ``random_state``; when given it replaces ``random_state`` with a
        ``FutureWarning``.

    Attributes
    ----------
    n_outputs_ : int
        The outputs of ``f``: the target columns, the classes (``"hinge"``, and ``"ovr_hinge"``
        with three or more classes) or 1 (``"ovr_hinge"`` with two classes).
    classes_ : ndarray of shape (n_classes,)
        The class labels (hinge losses only).
    n_features_in_ : int
        Number of input features (summed over the views).
    n_features_per_view_ : tuple of int
        The features of each view (one entry for single-view inputs).
    n_steps_ : int
        The stream steps learnt so far.
    coef_ : ndarray of shape (n_buffer, n_outputs)
        The coefficients ``α_{i,t}`` of the buffered inputs (eq. 4); unused slots hold zeros.
        ``n_buffer`` is ``truncation``, else the steps so far rounded up to a power of two (>= 64).
    X_buffer_ : ndarray of shape (n_buffer, n_features_in)
        The inputs ``x_i`` the coefficients belong to.
    support_times_ : ndarray of shape (n_buffer,)
        The stream step (from 1) at which each buffered input arrived; 0 for an unused slot.
    online_predictions_ : ndarray of shape (n_steps, n_outputs)
        The prediction ``f_{t-1}(x_t)`` made at each step before learning from it.
    errors_ : ndarray of shape (n_steps,)
        The error of each online prediction: ``||f_{t-1}(x_t) - y_t||²``, or a 0/1 mistake for
        the hinge losses.
    losses_ : ndarray of shape (n_steps,)
        The loss ``ℓ(f_{t-1}(x_t), y_t)`` of each step.
    cumulative_error_ : ndarray of shape (n_steps,)
        The running mean of ``errors_`` (the online MSE, or the running mistake rate).
    rkhs_norms_sq_ : ndarray of shape (n_steps, n_kernels)
        ``γ_t^j = ||g_t^j||²`` after each step (eq. 6), of the expansion without truncation.
    n_kernels_ : int
        The number of kernels ``m``.
    delta_ : ndarray of shape (n_kernels,)
        The kernel weights ``δ`` after the last step.
    kernel_weights_ : ndarray of shape (n_steps, n_kernels)
        The kernel weights ``δ_t`` after each step.
    fit_trace_ : FitTrace
        The running regularised risk, the losses, the running error, the norms and the kernel
        weights per step (:class:`~bayesmv.diagnostics.FitTrace`).
    random_seed_ : int
        The integer seed used by :meth:`fit` (from ``random_state``).

    See Also
    --------
    ONORMA : Online learning with one operator-valued kernel.
    OVKRidge : The batch counterpart with one kernel.

    References
    ----------
    .. [1] J. Audiffren and H. Kadri, "Online Learning with Multiple Operator-valued Kernels",
       arXiv:1311.0222, 2013.

    Examples
    --------
    >>> from bayesmv import MONORMA
    >>> from bayesmv.datasets import make_multitask
    >>> X, Y = make_multitask(n_samples=200, n_tasks=3, n_features=5)
    >>> est = MONORMA().fit(X, Y)  # three Gaussian kernels of different widths
    >>> est.predict(X[:2]).shape
    (2, 3)
    >>> est.delta_.shape, est.kernel_weights_.shape
    ((3,), (200, 3))
    """

    _adapt = True

    def __init__(
        self,
        kernels=None,
        r=1.0,
        lam=0.01,
        eta0=1.0,
        schedule="invsqrt",
        truncation=None,
        loss="squared",
        shuffle=False,
        random_state=0,
        block_size=64,
        seed=SEED_DEPRECATED,
    ):
        self.kernels = kernels
        self.r = r
        self.lam = lam
        self.eta0 = eta0
        self.schedule = schedule
        self.truncation = truncation
        self.loss = loss
        self.shuffle = shuffle
        self.random_state = random_state
        self.seed = seed
        self.block_size = block_size

    def _check_params(self):
        super()._check_params()
        check_positive("r", self.r)
        if self.kernels is not None and (
            isinstance(self.kernels, (str, bytes)) or len(list(self.kernels)) == 0
        ):
            raise ValueError("kernels must be None or a non-empty list of operator-valued kernels")

    def _kernel_list(self, d, n_features=None):
        if self.kernels is None:  # see the class docstring; d, n_features unknown: only probed for views
            eye = np.eye(d if d is not None else 1)
            scale = 1.0 / n_features if n_features else 1.0
            return [SeparableKernel("rbf", eye, (("gamma", f * scale),)) for f in _DEFAULT_GAMMA_FACTORS]
        return list(self.kernels)
