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
    """The state of an estimator before its first stream step: the kernels' separable terms
    (``_terms``, their ``w_l T_l`` stacked as ``_TW``, the kernel of each as ``_groups``) and
    whether their inputs are multi-view, an empty coefficient buffer (capacity ``truncation``,
    else 64, growing), kernel weights ``1/m`` (``adapt``, MONORMA) and empty per-step records.
    Kernels whose output dimension is not ``n_outputs``, or that mix single- and multi-view
    inputs, raise."""
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
        """Consume one stream chunk (state carries over between calls)."""
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
        """Learn from the whole stream ``(X, y)`` in order (shuffled first if ``shuffle``)."""
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
        """``f_T(x)`` for the rows of ``X`` (``(n, d)``), ``f_T`` the function after the last step."""
        self._check_fitted()
        Xa, _, _ = _prepare_inputs(X, self._multiview, self.n_features_per_view_, owner=type(self).__name__)
        # the whole buffer (empty slots hold zero coefficients): its power-of-two size keeps compiles rare
        return _predict_rows(self.X_buffer_, self.coef_, self._TW, self.delta_, Xa, self._static())

    def predict(self, X):
        """Vector-valued predictions (``loss='squared'``) or class labels (hinge losses)."""
        F = self.decision_function(X)
        if self.loss == "squared":
            return F[:, 0] if getattr(self, "_y_1d", False) else F
        return self.classes_[labels_from_scores(F)]

    def score(self, X, y):
        """R² averaged over outputs (regression) or accuracy (classification)."""
        from sklearn.metrics import accuracy_score, r2_score

        pred = self.predict(X)
        if self.loss == "squared":
            return r2_score(np.asarray(y, dtype=float).reshape(pred.shape), pred)
        return accuracy_score(y, pred)


class ONORMA(_OnlineOVK):
    """Online learning with an operator-valued kernel (Algorithm 1, eqs. 1–4).

    Parameters
    ----------
    kernel : operator-valued kernel from ``bayesmv.kernels`` (``SeparableKernel``,
        ``SumOfSeparableKernels``, ``nonseparable_kernel(mu, d)``, ``DiagonalMultiViewKernel``);
        ``None``: a Gaussian kernel times the identity (independent outputs).
    lam : float, λ >= 0 (regulariser; decay ``1 - η_t λ``, needs ``η_t λ < 1``).
    eta0 : float, η in the schedule.
    schedule : ``"invsqrt"`` (η_t = η/√t, §5), ``"constant"`` or a callable mapping the 1-based
        step array ``t`` to rates.
    truncation : None or int ``s``: keep only the last ``s`` coefficients (ring buffer).
    loss : ``"squared"`` (½||z - y||², vector-valued regression), ``"hinge"`` (Crammer–Singer
        multi-class hinge, one output per class) or ``"ovr_hinge"`` (one-vs-rest hinge on ±1
        targets; one output for two classes).
    shuffle, random_state : ``fit`` permutes the stream with ``random_state`` (an int, a
        ``np.random.RandomState`` / ``Generator`` or ``None``; ``seed`` is its deprecated old
        name) when ``shuffle`` is True.
    block_size : steps per compiled block (performance only).

    Fitted: ``coef_`` / ``X_buffer_`` / ``support_times_`` (the coefficient ring buffer),
    ``online_predictions_`` (f_{t-1}(x_t)), ``errors_``, ``cumulative_error_`` (online MSE),
    ``rkhs_norms_sq_`` (||f_t||² by eq. 6, of the untruncated expansion), ``fit_trace_``.
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
    """Online multiple operator-valued kernel learning (Algorithm 2, eqs. 5–6).

    The coefficients α are shared by the kernels ``K^1..K^m``; ``f_t = Σ_j δ_t^j g_t^j`` with
    ``g_t^j = Σ_i K^j(x_i, ·) α_{i,t}``. ``γ_t^j = ||g_t^j||²`` follows the O(d²) recursion (6) and
    the weights follow eq. (5) with ``Σ_j (δ^j)^r = 1`` (δ_0 = 1/m). With ``truncation`` the
    recursion tracks the norm of the untruncated expansion, as in the paper.

    Fitted: as ``ONORMA`` plus ``n_kernels_`` (m), ``delta_`` (final weights) and
    ``kernel_weights_`` (``(n_steps, m)``: δ_t after each step).

    Parameters
    ----------
    kernels : list of OperatorValuedKernel or None, default=None
        The kernels ``K^1..K^m`` (any kernel ``ONORMA`` takes), all with the same output dimension
        and all single-view or all multi-view. ``None``: three Gaussian separable kernels
        ``SeparableKernel("rbf", I_d, (("gamma", g),))``, ``I_d`` the identity over the ``d``
        outputs (independent outputs, as ``ONORMA``'s default), at ``g = 0.1 / p``, ``1 / p`` and
        ``10 / p`` (``p`` = ``n_features_in_``; ``1 / p`` is the RBF kernel's usual default
        bandwidth), in that order in ``delta_``. Single-view inputs only.
    r : float > 0, default=1.0
        The weights' norm: ``Σ_j (δ^j)^r = 1``.
    lam, eta0, schedule, truncation, loss, shuffle, random_state, block_size, seed
        As in ``ONORMA``.
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
