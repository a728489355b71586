"""``M3LAKClassifier``: input validation, one ``run_m3lak`` per one-vs-rest problem, and the
calls into :mod:`bayesmv.m3lak.posterior` and :mod:`bayesmv.m3lak.predictive`."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError

from ..base import (
    MultiViewMixin,
    encode_labels,
    labels_from_scores,
    one_vs_rest_targets,
    warn_sampler_trouble,
)
from ..datasets import check_positive, check_random_seed, coobserved_view_groups, observed_mask
from ..diagnostics import check_convergence, to_inference_data
from ..models.m3lak import view_inputs
from ..models.m3lak_config import M3LAKConfig, M3LAKPriors, M3LAKSampler
from .posterior import (
    Continuation,
    appended_draws,
    continued_problems,
    extension_can_converge,
    posterior_outputs,
    sample_problems,
    thinned_draws,
)
from .predictive import (
    class_probabilities,
    kernel_band,
    predictive_log_odds,
    predictive_probabilities,
    problem_decisions,
)
from .settings import (
    LEGACY_PARAMETERS,
    MODEL_PARAMETERS,
    SETTINGS_CLASSES,
    check_settings,
    moved_parameters,
    resolved,
    run_options,
    standardized,
    view_standardization,
)

__all__ = ["M3LAKClassifier"]

_DEFAULT = M3LAKConfig()  # the one source of the model's defaults


def _warn_unlinked_views(observed, config: M3LAKConfig, owner):
    """Warn (``UserWarning``) when the cut model cannot align the views' latents.

    With ``label_feedback=False`` the latents are fitted to the views alone, which tie two views
    together only through the samples that observe both. Views that share fewer than
    ``n_latent`` training samples with every other group (:func:`coobserved_view_groups`) leave
    the groups' relative orientation in the latent space unidentified: the classifier then sees
    the groups' points in a relative rotation that the chains wander over. Silent for the joint
    model, whose labels align them.

    Parameters
    ----------
    observed : ndarray of bool of shape (n_views, n_samples)
        Which training samples each view observes.
    config : M3LAKConfig
        The fit's settings.
    owner : str
        Who fits, for the message (the estimator's class name).
    """
    if config.label_feedback:
        return
    groups = coobserved_view_groups(observed, min_samples=config.n_latent)
    if len(groups) > 1:
        warnings.warn(
            f"{owner}: with M3LAKPriors(label_feedback=False) the latents tie views together only "
            f"through samples that observe both, and the view groups {groups} share fewer than "
            f"n_latent = {config.n_latent} training samples: their latents are not aligned. The "
            "classifier sees the groups' points in a relative rotation that the data leave free and "
            "the chains wander over, so its decision values mix slowly unless the views' own "
            "features (view_features, on by default) carry the labels. The joint model "
            "(label_feedback=True) aligns them through the labels.",
            UserWarning,
            stacklevel=4,
        )


class M3LAKClassifier(ClassifierMixin, MultiViewMixin, BaseEstimator):
    """Bayesian multi-view classifier with an adaptive random-feature kernel (M3LAK).

    A shared latent ``h`` of every view and a latent ``u^i`` of each view explain the views
    linearly (``x^i = W_i h + V_i u^i + noise``); a classifier on random Fourier features of
    ``h``, whose frequencies have a Dirichlet-process Gaussian-mixture prior, explains the
    labels, so the kernel's spectrum is learned. The posterior is sampled by a hybrid
    Gibbs/HMC sampler (Algorithm 1 of the paper, with the blocks of "How M3LAK is sampled" in
    the documentation); a new point is classified through ``h* | x*`` with ``u*`` integrated
    out, so views may be missing (all-NaN rows) in fit and predict. Binary labels give one
    posterior, more classes one per class (one-vs-rest).

    The defaults go beyond the paper where held-out benchmarks said so: the logistic
    likelihood, ``m = 14``, ``M = 25``, a Gaussian spectrum (an RBF kernel on the latent; the
    paper's DP spectrum is ``spectral_prior="dp"``), a classifier that sees each point through
    its latent's mean given its views and through 500 random features of each view, with the
    labels kept out of the latents (:class:`~bayesmv.models.M3LAKPriors`), and the sampler's
    defaults (:class:`~bayesmv.models.M3LAKSampler`), which extend the chains until the
    training decision values converge. :meth:`paper` gives the paper's setting.

    Parameters
    ----------
    n_latent : int, default=14
        ``m``, the dimension of the shared latent ``h`` (the paper: 20). Keep it well below the
        number of features of the views that carry the signal.
    n_frequencies : int, default=25
        ``M``, the number of random Fourier frequencies (the paper: 100).
    C : float, default=1.0
        The weight of each label's log-likelihood against the views' (the paper's ``C`` for the
        hinge; with the logistic likelihood, 1 is the proper likelihood).
    likelihood : {"logistic", "hinge"}, default="logistic"
        ``P(y | f) = σ(y f)`` with ``f = βᵀφ̃(h) + γᵀz`` (not in the paper; ``predict_proba`` is
        the posterior mean of ``σ(f*)``), or the paper's hinge pseudo-likelihood
        ``exp(-2C max(0, 1 - y f))`` with ``f = βᵀφ̃(h)`` (``predict_proba`` is the share of
        draws with ``f* > 0``; with ``priors=M3LAKPriors(view_features=None)``, or :meth:`paper`).
    spectral_prior : {"gaussian", "dp"}, default="gaussian"
        The frequencies' prior: a fixed Gaussian (an RBF kernel, length-scale
        ``priors.lengthscale``) or the paper's DP Gaussian mixture (a learned kernel).
    noise : {"view", "feature"}, default="view"
        One noise precision per view (the paper) or one per feature (factor analysis).
    num_warmup : int, default=1000
        Warm-up sweeps per chain (discarded; the HMC step sizes adapt).
    num_samples : int, default=2000
        Draws per chain; up to ``sampler.max_extensions`` (default 4) times as many more where
        the training decision values have not converged.
    num_chains : int, default=4
        Chains per one-vs-rest problem (r̂ needs two or more).
    chain_method : {"processes", "sequential", "vectorized", "parallel"}, default="processes"
        How the chains run: in worker processes, one per CPU (in this process where there is
        one CPU or one chain, on an accelerator, or with sharded data); one after another; as
        one vectorised program; or one per JAX device. Under ``jax.distributed`` (without
        sharded data) the chains are split over the processes, and each gets all of them
        (``docs/scaling.md``).
    progress_bar : bool, default=True
        Show one bar per chain with the sweeps done (warm-up, then sampling), also for chains in
        worker processes. The draws are the same without it.
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=0
        Fixes the fit and the predictive draws: the same int gives the same predictions (where
        ``"processes"`` and ``"sequential"`` run on one CPU per process).
    standardize : bool, default=True
        Centre and scale each view's features by their training means and standard deviations
        (over the observed rows).
    priors : M3LAKPriors or None, default=None
        The hyper-priors (:class:`~bayesmv.models.M3LAKPriors`); None: its defaults.
    sampler : M3LAKSampler or None, default=None
        The sampler's settings (:class:`~bayesmv.models.M3LAKSampler`); None: its defaults.
    **deprecated_params
        The previous release's names of the fields of ``priors`` and ``sampler`` (and ``seed``
        for ``random_state``), accepted with a ``FutureWarning`` until the next release.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    n_views_ : int
        Number of views seen in ``fit``.
    n_features_per_view_ : list of int
        Features of each view.
    view_means_, view_scales_ : list of ndarray
        Each view's standardisation (zeros and ones without ``standardize``).
    random_seed_ : int
        The integer seed used (from ``random_state``).
    config_ : M3LAKConfig
        The model the chains sampled: the parameters with ``priors`` and ``sampler`` resolved
        (None as the defaults of the release that fitted it). Predictions read it, so a saved fit
        predicts as it was fitted under a later release's defaults.
    posterior_draws_ : list of dict
        Per one-vs-rest problem (one for binary labels), the draws the predictive needs,
        flattened over chains: ``"W_i"``, ``"V_i"``, ``"tau"``, ``"beta"``, ``"omega"``.
    raw_posterior_ : list of dict
        Per one-vs-rest problem, every kept draw as the sampler made it, ``(chain, draw, ...)``.
    thinning_ : int
        One draw in ``thinning_`` kept: 1 unless the fit extended its chains past
        ``2 num_samples`` draws (``M3LAKSampler.max_extensions``).
    inference_data_ : xarray.DataTree
        The ArviZ posterior with named dimensions: posterior (``W_i``, ``omega`` and ``r``
        rotated to one orientation of the latent space by :func:`align_latent_axes`), sample
        statistics, ``observed_data``, ``log_likelihood`` (``az.loo`` runs; read its Pareto k),
        ``posterior_predictive`` and ``constant_data`` (the mask of observed views). With more
        than two classes every variable gains an ``ovr_class`` dimension.

    See Also
    --------
    bayesmv.models.M3LAKPriors, bayesmv.models.M3LAKSampler : the settings objects.
    bayesmv.check_convergence : r̂ and ESS of a posterior.

    Notes
    -----
    Check :meth:`convergence_report` before trusting a fit, and continue the chains with
    :meth:`sample_more`. A fit whose training decision values have not converged after
    ``num_samples`` draws (r̂ > 1.01 or ESS < 400) runs its chains ``num_samples`` draws longer,
    up to ``sampler.max_extensions`` times (default 4; 0 stops the chains at ``num_samples``),
    thinning the kept draws by 2 (then 4, ...) past ``2 num_samples`` per chain. Accuracy,
    convergence and fit times on the project's tasks are on the benchmarks page of the
    documentation.

    References
    ----------
    .. [1] C. Du, J. He, C. Du, F. Zhuang, Q. He and G. Long, "Efficient and Adaptive
       Kernelization for Nonlinear Max-margin Multi-view Learning", ECML-PKDD 2018,
       arXiv:1910.05250.

    Examples
    --------
    >>> from bayesmv import M3LAKClassifier
    >>> from bayesmv.datasets import make_latent_views
    >>> Xs, y = make_latent_views(n_samples=40, n_features=4, random_state=0)
    >>> clf = M3LAKClassifier(n_latent=2, n_frequencies=4, num_warmup=20, num_samples=20,
    ...                       num_chains=2, chain_method="sequential")
    >>> clf.set_params(sampler__warmup_tempering=None).fit(Xs, y).predict_proba(Xs).shape
    (40, 2)
    """

    _allow_missing = True
    _min_views = 1
    _persistence_exclude = ("_continuation",)  # sampler states: live JAX arrays, refit to continue
    _deprecated_parameters = frozenset(LEGACY_PARAMETERS) | {"seed"}

    def __init__(
        self,
        *,
        n_latent=_DEFAULT.n_latent,
        n_frequencies=_DEFAULT.n_frequencies,
        C=_DEFAULT.C,
        likelihood=_DEFAULT.likelihood,
        spectral_prior=_DEFAULT.spectral_prior,
        noise=_DEFAULT.noise,
        num_warmup=1000,
        num_samples=2000,
        num_chains=4,
        chain_method="processes",
        progress_bar=True,
        random_state=0,
        standardize=True,
        priors=None,
        sampler=None,
        **deprecated_params,
    ):
        if deprecated_params:
            moved = moved_parameters(
                type(self).__name__, deprecated_params, {"priors": priors, "sampler": sampler}
            )
            priors = moved.get("priors", priors)
            sampler = moved.get("sampler", sampler)
            random_state = moved.get("random_state", random_state)
        self.n_latent = n_latent
        self.n_frequencies = n_frequencies
        self.C = C
        self.likelihood = likelihood
        self.spectral_prior = spectral_prior
        self.noise = noise
        self.num_warmup = num_warmup
        self.num_samples = num_samples
        self.num_chains = num_chains
        self.chain_method = chain_method
        self.progress_bar = progress_bar
        self.random_state = random_state
        self.standardize = standardize
        self.priors = priors
        self.sampler = sampler

    @staticmethod
    def _upgrade_saved_params(params):
        """The parameters of a saved fit as this release reads them (``bayesmv.load``): a file of
        the flat layout (the previous release's names, no ``priors``) was written before the
        classifier saw the views and before the cut model, so its priors keep those off."""
        if "priors" in params:
            return params
        return {**params, "priors": M3LAKPriors(view_features=None, label_feedback=True)}

    @classmethod
    def paper(cls, **params):
        """The estimator in the setting of Du et al. (2018).

        ``m = 20``, ``M = 100``, the hinge, the DP spectrum, ``ν0 = m``
        (:meth:`M3LAKPriors.paper <bayesmv.models.M3LAKPriors.paper>`), every block once per sweep
        (:meth:`M3LAKSampler.paper <bayesmv.models.M3LAKSampler.paper>`) and 800 + 200 sweeps per
        chain, not extended.

        Parameters
        ----------
        **params
            Any parameter of the estimator, changing the paper's value.

        Returns
        -------
        M3LAKClassifier
            An unfitted estimator.

        See Also
        --------
        bayesmv.models.M3LAKConfig.paper : The same setting as a model config.

        Examples
        --------
        >>> from bayesmv import M3LAKClassifier
        >>> clf = M3LAKClassifier.paper(num_chains=2)
        >>> clf.likelihood, clf.n_frequencies, clf.sampler.kernel_passes, clf.priors.niw_nu0
        ('hinge', 100, 1, 20.0)
        """
        config = M3LAKConfig.paper(**{name: params[name] for name in MODEL_PARAMETERS if name in params})
        paper = {name: getattr(config, name) for name in MODEL_PARAMETERS}
        paper.update(num_warmup=800, num_samples=200, priors=config.priors, sampler=M3LAKSampler.paper())
        return cls(**{**paper, **params})

    def set_params(self, **params):
        """Set the estimator's parameters, as scikit-learn's ``set_params`` does.

        ``priors__v=…`` and ``sampler__hmc_steps_joint=…`` replace one field of the (frozen)
        settings objects (their defaults when they are None); the previous release's names move
        there with a ``FutureWarning``.

        Parameters
        ----------
        **params
            Parameters by name, nested ones as ``priors__<field>`` / ``sampler__<field>``.

        Returns
        -------
        self : M3LAKClassifier
            The estimator.
        """
        legacy = {name: params.pop(name) for name in list(params) if name in self._deprecated_parameters}
        if legacy:
            current = {part: params.get(part, getattr(self, part)) for part in SETTINGS_CLASSES}
            params.update(moved_parameters(type(self).__name__, legacy, current))
        nested = {}
        for key in list(params):
            part, _, name = key.partition("__")
            if name and part in SETTINGS_CLASSES:
                nested.setdefault(part, {})[name] = params.pop(key)
        super().set_params(**params)
        for part, changes in nested.items():
            base = getattr(self, part)
            setattr(self, part, (SETTINGS_CLASSES[part]() if base is None else base).replace(**changes))
        return self

    # ---------------------------------------------------------------- fit
    def fit(self, Xs, y):
        """Sample the posterior: one for binary labels, one per class (one-vs-rest) otherwise.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_i)
            The views; a sample missing from a view is an all-NaN row of it.
        y : array-like of shape (n_samples,)
            Labels, with at least two classes.

        Returns
        -------
        self : M3LAKClassifier
            The fitted estimator.

        Raises
        ------
        KeyboardInterrupt
            On Ctrl-C (``SIGINT``, a notebook's "interrupt kernel"), within a few seconds in
            every chain method: the worker processes are ended, and in this process the
            compilation or the chunk of sweeps under way finishes in the background
            (``"parallel"``: NumPyro's loop under way). The estimator is left as it was before
            ``fit`` (unfitted, if it was), as after any error of the fit.
        """
        before = dict(self.__dict__)
        try:
            return self._fit(Xs, y)
        except BaseException:  # an error or Ctrl-C: the estimator as it was before the fit
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    def _fit(self, Xs, y):
        params = self.get_params(deep=False)
        config = check_settings(params)
        self.random_seed_ = check_random_seed(self.random_state, owner=type(self).__name__)
        views, y = self._validate_fit(Xs, y)
        classes, codes = encode_labels(y)
        self.view_means_, self.view_scales_ = view_standardization(views, self.standardize)
        Zs = self._standardize(views)
        _warn_unlinked_views(observed_mask(Zs), config, type(self).__name__)
        targets = one_vs_rest_targets(codes, len(classes))
        run_kwargs = run_options(params)
        seeds = [self._problem_seed(k) for k in range(targets.shape[1])]
        runs, notes = sample_problems(Zs, targets, config, self.num_samples, run_kwargs, random_states=seeds)
        self.classes_ = classes
        self.config_ = config
        self.raw_posterior_ = [run.samples for run in runs]
        self._sample_stats = [run.stats for run in runs]
        self._draws_run, self.thinning_ = self.num_samples, 1
        self._continuation = Continuation(Zs, targets, config, run_kwargs, [run.state for run in runs], notes)
        self._extend_until_converged(resolved(params, "sampler").max_extensions)
        self._set_posterior()
        return self

    def _extend_until_converged(self, max_extensions):
        """Run every chain ``num_samples`` draws longer while the training decision values have
        not converged and the longest run allowed could converge them
        (:func:`~bayesmv.m3lak.posterior.extension_can_converge`), at most ``max_extensions``
        times; the kept draws thinned by 2 whenever they pass ``2 num_samples`` per chain. Judged
        on the raw decision values (which no rotation of the latent axes changes), so that the
        posterior is built once, after."""
        for left in range(max_extensions, 0, -1):
            decisions = np.stack([draws["decision"] for draws in self.raw_posterior_], axis=-1)
            report = check_convergence(to_inference_data({"decision": decisions}))
            if not report.failed or not extension_can_converge(
                report, self._draws_run, left * self.num_samples
            ):
                return
            self._append(*continued_problems(self._continuation, self.num_samples))
            if self.raw_posterior_[0]["decision"].shape[1] > 2 * self.num_samples:
                self.raw_posterior_ = thinned_draws(self.raw_posterior_, 2)
                self._sample_stats = thinned_draws(self._sample_stats, 2)
                self.thinning_ *= 2

    def _append(self, runs, continuation):
        """Append the draws of ``runs`` (continued chains) at the kept draws' thinning."""
        start = -self._draws_run % self.thinning_  # the first new draw a multiple of the thinning
        self.raw_posterior_ = appended_draws(
            self.raw_posterior_, [run.samples for run in runs], self.thinning_, start
        )
        self._sample_stats = appended_draws(
            self._sample_stats, [run.stats for run in runs], self.thinning_, start
        )
        self._draws_run += runs[0].samples["decision"].shape[1]
        self._continuation = continuation

    def sample_more(self, num_samples=None):
        """Continue every chain from where it stopped, as NumPyro's ``post_warmup_state`` does.

        No new warm-up, and with the fit's ``num_samples`` no new compilation. The draws are
        appended to ``raw_posterior_``, ``posterior_draws_`` and ``inference_data_`` (re-aligned);
        with the same ``random_state``, ``fit`` then ``sample_more(n)`` gives the draws of one fit
        with ``n`` more. Where ``fit`` thinned the kept draws (it extended its chains past
        ``2 num_samples``: ``M3LAKSampler.max_extensions``), the new draws are kept at the same
        spacing.

        Parameters
        ----------
        num_samples : int or None, default=None
            Draws to run per chain; None: the fit's ``num_samples``.

        Returns
        -------
        self : M3LAKClassifier
            The estimator with the longer chains.
        """
        self._check_is_fitted()
        if not hasattr(self, "_continuation"):
            raise RuntimeError(
                "sample_more needs the sampler states of this session's fit; a loaded estimator keeps "
                "only its draws: fit it again to continue its chains"
            )
        n = self.num_samples if num_samples is None else num_samples
        check_positive("num_samples", n, integer=True)
        self._append(*continued_problems(self._continuation, n))
        self._set_posterior()
        return self

    def _set_posterior(self):
        """``posterior_draws_`` and ``inference_data_`` from ``raw_posterior_``
        (:func:`posterior_outputs`); warns on sampler trouble."""
        cont = self._continuation
        self.posterior_draws_, self.inference_data_ = posterior_outputs(
            self.raw_posterior_,
            self._sample_stats,
            cont.Zs,
            cont.targets,
            cont.config,
            self.likelihood,
            self.random_seed_,
            self.classes_,
        )
        warn_sampler_trouble(
            self.inference_data_, type(self).__name__, var_names=["decision"], notes=cont.notes, stacklevel=4
        )

    def _fitted_config(self):
        """``config_``; a file saved before fits kept it gets the model its parameters name."""
        return self.config_ if hasattr(self, "config_") else check_settings(self.get_params(deep=False))

    def _problem_seed(self, k):
        return int(np.random.default_rng([self.random_seed_, int(k)]).integers(2**31 - 1))

    def _standardize(self, views):
        return standardized(views, self.view_means_, self.view_scales_)

    def _problem_decisions(self, Zs):
        """Predictive decision draws at the standardised views ``Zs``: with ``view_features`` the
        classifier's inputs from them, and ``h*`` drawn, or its mean with ``label_feedback=False``
        (as the classifier saw the training points' latents)."""
        config = self._fitted_config()
        inputs = None if config.view_features is None else view_inputs(Zs, observed_mask(Zs).T, config)
        latent = "draw" if config.label_feedback else "mean"
        return problem_decisions(self.posterior_draws_, Zs, self.random_seed_, inputs, latent)

    # ---------------------------------------------------------------- predict
    def _check_is_fitted(self):
        self._check_fitted()
        if not hasattr(self, "posterior_draws_"):
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet; call 'fit' first.")

    def predictive_decisions(self, Xs):
        """Posterior predictive draws of the decision values ``f* = βᵀφ̃(h*)``.

        One ``h*`` is drawn given the observed views of each point per posterior draw (with
        ``M3LAKPriors(label_feedback=False)`` its mean ``E[h* | x*]``, as the classifier saw the
        training points' latents).

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_i)
            The views; a sample missing from a view is an all-NaN row of it.

        Returns
        -------
        ndarray of shape (n_problems, n_draws, n_samples)
            One problem for binary labels, one per class otherwise.
        """
        self._check_is_fitted()
        Zs = self._standardize(self._validate_predict(Xs))
        return self._problem_decisions(Zs)

    def decision_function(self, Xs):
        """Posterior predictive log-odds of each one-vs-rest problem.

        ``log P(y* = c | x*) / P(y* ≠ c | x*)``; its sign (its arg-max) gives :meth:`predict`, and
        it orders the points as :meth:`predict_proba` does. Logistic likelihood: from the mean of
        ``σ(f*)``, computed in log space; hinge: from the share of draws with ``f* > 0``, counting
        half a draw on each side.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_i)
            The views; a sample missing from a view is an all-NaN row of it.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Two classes: positive means ``classes_[1]``.
        """
        log_odds = predictive_log_odds(self.predictive_decisions(Xs), self.likelihood)  # (n_problems, n)
        return log_odds[0] if len(self.classes_) == 2 else log_odds.T

    def predict_proba(self, Xs):
        """Class probabilities, averaged over the posterior predictive draws.

        Logistic likelihood: the posterior mean of ``σ(f*)``. Hinge (a pseudo-likelihood, no
        ``P(y | f)``): the share of draws with ``f* > 0``. More classes: the one-vs-rest
        probabilities normalised to sum to one (uniform where every problem gives 0).

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_i)
            The views; a sample missing from a view is an all-NaN row of it.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        return class_probabilities(predictive_probabilities(self.predictive_decisions(Xs), self.likelihood))

    def predict(self, Xs):
        """The most probable class under :meth:`predict_proba`.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_i)
            The views; a sample missing from a view is an all-NaN row of it.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_`` (ties go to ``classes_[0]``).
        """
        scores = self.decision_function(Xs)  # raises NotFittedError before fit
        return labels_from_scores(self.classes_, scores)

    # ---------------------------------------------------------------- diagnostics
    def learned_kernel(self, t, direction=None, interval=0.9, ovr_index=0):
        """Posterior of the learned shift-invariant kernel ``k(t) = mean_j cos(ω_jᵀt)``.

        Parameters
        ----------
        t : array-like of shape (k, n_latent) or (k,)
            Lags in the latent space, or distances along ``direction``.
        direction : array-like of shape (n_latent,) or None, default=None
            The direction of scalar lags; None: the unit diagonal ``1/√m``.
        interval : float, default=0.9
            Mass of the equal-tailed credible band over the draws.
        ovr_index : int, default=0
            The one-vs-rest problem (0 for binary labels).

        Returns
        -------
        KernelBand
            ``(t, mean, lower, upper)``.
        """
        self._check_is_fitted()
        if not 0 <= ovr_index < len(self.posterior_draws_):
            raise ValueError(f"ovr_index must be in [0, {len(self.posterior_draws_) - 1}], got {ovr_index!r}")
        return kernel_band(self.posterior_draws_[ovr_index]["omega"], t, direction, interval)

    def _chain_decisions(self, Zs):
        """The predictive decision draws at ``Zs`` chain by chain, ``(n_problems, n_chains,
        n_draws, n)`` (the flattened draws are stored chain after chain)."""
        f = self._problem_decisions(Zs)
        n_chains = self.raw_posterior_[0]["decision"].shape[0]
        return f.reshape(f.shape[0], n_chains, -1, f.shape[-1])

    def chain_predict_proba(self, Xs):
        """Class probabilities of each chain alone, read as :meth:`predict_proba` reads them all.

        Chains that settled in different modes of quantities the convergence report checks (τ's
        allocations of the latent columns to the views, for example) may still predict alike:
        compare their probabilities on held-out points before discarding a fit, or after it
        passes. With binary labels their mean over the chains is :meth:`predict_proba`.

        Parameters
        ----------
        Xs : list of array-like of shape (n_samples, n_features_i)
            The views; a sample missing from a view is an all-NaN row of it.

        Returns
        -------
        ndarray of shape (n_chains, n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        self._check_is_fitted()
        Zs = self._standardize(self._validate_predict(Xs))
        p = predictive_probabilities(self._chain_decisions(Zs), self.likelihood)  # (problem, chain, n)
        return np.stack([class_probabilities(p[:, c]) for c in range(p.shape[1])])

    def chain_training_accuracy(self):
        """Each chain's accuracy on the training labels, in-sample and from the views alone.

        ``in_sample`` uses the training decision values the chain drew, whose latents the labels
        move too; ``from_views`` draws each training point's latent given its views alone, as for a
        new point. A chain much lower from the views fits the labels through latent columns that no
        view uses: a mode of its own. Needs the training views, which a loaded estimator lacks.

        Returns
        -------
        in_sample, from_views : ndarray of shape (n_problems, n_chains)
            Accuracies, probabilities read as in :meth:`predict_proba`.
        """
        self._check_is_fitted()
        if not hasattr(self, "_continuation"):
            raise ValueError(
                "chain_training_accuracy needs the training views: refit (a loaded estimator has none)"
            )
        labels = self._continuation.targets > 0  # (n, n_problems)
        f = self._chain_decisions(self._continuation.Zs)

        def accuracy(decision, k):  # (chain, draw, n) -> (chain,)
            return np.mean(
                (predictive_probabilities(decision, self.likelihood) > 0.5) == labels[:, k], axis=-1
            )

        in_sample = np.stack([accuracy(raw["decision"], k) for k, raw in enumerate(self.raw_posterior_)])
        return in_sample, np.stack([accuracy(f[k], k) for k in range(len(f))])

    def convergence_report(self, var_names=("decision", "tau"), rhat_max=1.01, ess_min=400):
        """r̂, ESS and divergences of the identifiable quantities against thresholds.

        ``bayesmv.check_convergence`` on the training decision values and the noise precisions
        (β, Ω and W are identified only up to symmetries). When it fails and the training views are
        at hand, the report also lists :meth:`chain_training_accuracy`.

        Parameters
        ----------
        var_names : sequence of str, default=("decision", "tau")
            Posterior variables to check.
        rhat_max : float, default=1.01
            Largest r̂ that passes.
        ess_min : float, default=400
            Smallest bulk and tail ESS that pass.

        Returns
        -------
        ConvergenceReport
            ``report.passed``, and a readable table as ``str(report)``.
        """
        self._check_is_fitted()
        report = check_convergence(
            self.inference_data_, rhat_max=rhat_max, ess_min=ess_min, var_names=list(var_names)
        )
        if not report.passed:
            if hasattr(self, "_continuation"):
                in_sample, from_views = self.chain_training_accuracy()
                for k, (inside, outside) in enumerate(zip(in_sample, from_views)):
                    where = "" if len(in_sample) == 1 else f" (one-vs-rest problem {k})"
                    pairs = ", ".join(f"{a:.2f} / {b:.2f}" for a, b in zip(inside, outside))
                    report.info.append(
                        f"training accuracy per chain{where}, in-sample / latents from the views alone: "
                        f"{pairs} (a chain much lower from the views has fitted the labels through latent "
                        "columns that no view uses)"
                    )
            report.info.append(
                "to extend every chain from where it stopped (no new warm-up, no recompilation): "
                "clf.sample_more(num_samples), then check again; or fit with a larger "
                "M3LAKSampler(max_extensions=...) to extend further until the decision values converge"
            )
        return report
