"""M3LAK's settings: the model (:class:`M3LAKConfig`), its hyper-priors (:class:`M3LAKPriors`) and
its sampler (:class:`M3LAKSampler`), with one table of constraints that every check reads.

The three are frozen dataclasses. Their field defaults are M3LAK's defaults, the estimator's
included (``M3LAKClassifier`` reads its defaults from here); ``paper()`` gives the setting of Du et
al. (2018). How each block is sampled, and what each sampler option changes, is described in the
documentation page "How M3LAK is sampled" (``docs/m3lak_sampler.md``).
"""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass

import numpy as np

__all__ = [
    "CONSTRAINTS",
    "EXECUTION_FIELDS",
    "FIXABLE_BLOCKS",
    "NIW_NU0_PER_LATENT",
    "M3LAKConfig",
    "M3LAKPriors",
    "M3LAKSampler",
    "check_values",
]

#: ν0 of the DP's Normal-Inverse-Wishart base per latent dimension when ``niw_nu0=None``
#: (the paper's ν0 = m is 1 per dimension, under which the components' covariance has no mean).
NIW_NU0_PER_LATENT = 2
#: Sampler blocks that ``M3LAKSampler.fixed_blocks`` can hold fixed: H; Ω (hinge) or the joint
#: (β, Ω) move (logistic); the DP table; λ and β (hinge); the latent variable model U, [W V], r, τ.
FIXABLE_BLOCKS = ("H", "omega", "dp", "lambda_beta", "lvm")
#: Fields of ``M3LAKSampler`` that change none of the sweeps (where the data live, how far the
#: chains are extended): the model's config holds them at their defaults
#: (:meth:`M3LAKSampler.without_execution`).
EXECUTION_FIELDS = ("shard_data", "mesh", "max_extensions")


# ----------------------------------------------------------------------------------------------
# The constraints table: one entry per setting, read by every check
# ----------------------------------------------------------------------------------------------
def _is_integer(value):
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_real(value):
    return (
        isinstance(value, (numbers.Real, np.floating, np.integer))
        and not isinstance(value, (bool, np.bool_))
        and bool(np.isfinite(value))
    )


def _positive_pair(value):
    return isinstance(value, tuple) and len(value) == 2 and all(_is_real(x) and x > 0 for x in value)


def _is_mesh(value):
    from jax.sharding import Mesh

    return isinstance(value, Mesh)


def _one_of(*options):
    return (lambda x: x in options, f"one of {options}")


_POSITIVE_INTEGER = (lambda x: _is_integer(x) and x >= 1, "a positive integer")
_NON_NEGATIVE_INTEGER = (lambda x: _is_integer(x) and x >= 0, "a non-negative integer")
_POSITIVE_REAL = (lambda x: _is_real(x) and x > 0, "a finite positive number")
_OPTIONAL_POSITIVE_REAL = (lambda x: x is None or (_is_real(x) and x > 0), "None or a finite positive number")
_OPTIONAL_PAIR = (lambda x: x is None or _positive_pair(x), "None or a pair (shape, rate) > 0")
_BOOLEAN = (lambda x: isinstance(x, (bool, np.bool_)), "True or False")

#: setting name -> (test, what it must be). The estimator's own settings (draws, chains) are here
#: too, so that the estimator and the config check with the same words.
CONSTRAINTS = {
    # model size, likelihood, spectrum, noise
    "n_latent": _POSITIVE_INTEGER,
    "n_frequencies": _POSITIVE_INTEGER,
    "n_view_latent": _POSITIVE_INTEGER,
    "C": _POSITIVE_REAL,
    "likelihood": _one_of("hinge", "logistic"),
    "spectral_prior": _one_of("dp", "gaussian"),
    "noise": _one_of("view", "feature"),
    "view_features": _one_of(None, "linear", "rff"),
    # hyper-priors
    "eta": _POSITIVE_REAL,
    "alpha": _POSITIVE_REAL,
    "a_r": _POSITIVE_REAL,
    "b_r": _POSITIVE_REAL,
    "a_tau": _POSITIVE_REAL,
    "b_tau": _POSITIVE_REAL,
    "v": _POSITIVE_REAL,
    "v_prior": _OPTIONAL_PAIR,
    "v_view": _POSITIVE_REAL,
    "v_view_prior": _OPTIONAL_PAIR,
    "n_view_frequencies": _POSITIVE_INTEGER,
    "view_lengthscale": _POSITIVE_REAL,
    "view_span": _one_of("training", "full"),
    "label_feedback": _BOOLEAN,
    "niw_kappa0": _POSITIVE_REAL,
    "niw_nu0": _OPTIONAL_POSITIVE_REAL,
    "niw_mu0": (_is_real, "a finite number"),
    "niw_psi0": _POSITIVE_REAL,
    "niw_psi0_prior": _OPTIONAL_PAIR,
    "lengthscale": _OPTIONAL_POSITIVE_REAL,
    # sampler
    "precision_update": _one_of("conditional", "collapsed"),
    "dp_update": _one_of("collapsed", "slice"),
    "dp_split_merge": _NON_NEGATIVE_INTEGER,
    "dp_capacity": _POSITIVE_INTEGER,
    "augmented": _BOOLEAN,
    "hmc_steps_h": _POSITIVE_INTEGER,
    "hmc_steps_omega": _POSITIVE_INTEGER,
    "hmc_steps_joint": _POSITIVE_INTEGER,
    "target_accept": (lambda x: _is_real(x) and 0 < x < 1, "in (0, 1)"),
    "init_step_size": _POSITIVE_REAL,
    "h_lvm_passes": _POSITIVE_INTEGER,
    "kernel_passes": _POSITIVE_INTEGER,
    "warmup_tempering": (lambda x: x is None or (_is_real(x) and 0 < x <= 1), "None or in (0, 1]"),
    "niw_psi0_warmup_hold": (lambda x: _is_real(x) and 0 <= x < 1, "in [0, 1)"),
    "spectral_scale_moves": _BOOLEAN,
    "latent_axis_moves": _BOOLEAN,
    "dp_relocation_moves": _BOOLEAN,
    "dp_sign_moves": _BOOLEAN,
    "fixed_blocks": (
        lambda x: isinstance(x, tuple) and set(x) <= set(FIXABLE_BLOCKS),
        f"a tuple of names in {FIXABLE_BLOCKS}",
    ),
    "shard_data": (
        lambda x: isinstance(x, (bool, np.bool_)) or (_is_integer(x) and x >= 1),
        "True, False or a positive number of devices",
    ),
    "mesh": (lambda x: x is None or _is_mesh(x), "None or a jax.sharding.Mesh"),
    "max_extensions": _NON_NEGATIVE_INTEGER,
    # the estimator's run
    "num_warmup": _NON_NEGATIVE_INTEGER,
    "num_samples": _POSITIVE_INTEGER,
    "num_chains": _POSITIVE_INTEGER,
    "chain_method": _one_of("processes", "sequential", "vectorized", "parallel"),
    "progress_bar": _BOOLEAN,
    "standardize": _BOOLEAN,
}


def check_values(owner, values):
    """Check settings against :data:`CONSTRAINTS`.

    Parameters
    ----------
    owner : str
        The name the messages give the settings' holder (``"M3LAKSampler"``).
    values : dict
        Setting name to value; every name must be a key of :data:`CONSTRAINTS`.

    Returns
    -------
    None
        When every value meets its constraint.

    Raises
    ------
    ValueError
        For the first value that fails: ``owner.name``, what it must be and the value given.

    Examples
    --------
    >>> from bayesmv.models.m3lak_config import check_values
    >>> check_values("M3LAKSampler", {"target_accept": 0.9})
    >>> check_values("M3LAKSampler", {"target_accept": 1.5})
    Traceback (most recent call last):
    ...
    ValueError: M3LAKSampler.target_accept must be in (0, 1); got 1.5
    """
    for name, value in values.items():
        test, must_be = CONSTRAINTS[name]
        if not test(value):
            raise ValueError(f"{owner}.{name} must be {must_be}; got {value!r}")


class _Settings:
    """What the settings dataclasses share: a short repr, scikit-learn's nested parameters, and
    ``replace``."""

    def __post_init__(self):
        for f in dataclasses.fields(self):  # lists (from set_params, JSON) as tuples: hashable
            if isinstance(getattr(self, f.name), list):
                object.__setattr__(self, f.name, tuple(getattr(self, f.name)))

    def __repr__(self):
        changed = [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in dataclasses.fields(self)
            if f.repr and getattr(self, f.name) != f.default
        ]
        return f"{type(self).__name__}({', '.join(changed)})"

    def get_params(self, deep=True):
        """Every field by name, as scikit-learn's ``get_params`` (``priors__v`` reads through it).

        Parameters
        ----------
        deep : bool, default=True
            Unused: the fields hold no estimators.

        Returns
        -------
        dict
            Field name to value.
        """
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def __sklearn_clone__(self):
        return self  # frozen: a clone may share it

    def replace(self, **changes):
        """A copy with some fields changed.

        Parameters
        ----------
        **changes
            New values by field name.

        Returns
        -------
        object
            A new settings object of the same class.

        Raises
        ------
        ValueError
            If a name is not a field; the message lists the valid ones.
        """
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise ValueError(
                f"invalid parameter(s) {unknown} for {type(self).__name__}; valid: "
                f"{sorted(f.name for f in dataclasses.fields(self))}"
            )
        return dataclasses.replace(self, **changes)

    def validate(self):
        """Check every field against :data:`CONSTRAINTS`.

        Returns
        -------
        self
            The settings, unchanged.

        Raises
        ------
        ValueError
            Naming the first field that fails, what it must be and the value given.
        """
        check_values(type(self).__name__, self.get_params())
        return self


@dataclass(frozen=True, repr=False)
class M3LAKPriors(_Settings):
    """The hyper-priors of M3LAK, the size of each view's own latent and what the classifier sees of the views.

    Defaults are the paper's (Du et al. 2018, §4.1) except ``niw_nu0``, the noise precisions'
    prior and what the classifier sees: at the defaults, chosen on held-out tasks
    (``docs/benchmarks.md``), ``τ ~ Γ(2, 1)``, the labels do not inform the latents
    (``label_feedback=False``, a cut model) and the classifier also sees 500 random Fourier
    features of each view (``view_features="rff"``, ``v_view=0.002``).
    :meth:`paper` gives the paper's priors. Pass one to ``M3LAKClassifier(priors=...)``, or set
    one field with ``set_params(priors__v=0.1)``.

    Parameters
    ----------
    n_view_latent : int, default=1
        ``K_i``, the dimension of each view's own latent ``u^i``; its loadings ``V_i`` have
        ``N(0, η⁻¹ I)`` columns.
    eta : float, default=1e3
        ``η``, the prior precision of the columns of ``V_i``.
    alpha : float, default=1.0
        Concentration of the Dirichlet process over the spectrum's components.
    a_r, b_r : float, default=0.1, 1e-5
        Gamma prior (shape, rate) of the ARD precisions ``r_ij`` of the columns of ``W_i``.
    a_tau, b_tau : float, default=2.0, 1.0
        Gamma prior (shape, rate) of the noise precisions ``τ`` of the standardised views (the
        paper's ``Γ(0.01, 10⁻⁵)`` is vague and lets a view's ``τ`` run off where the latents
        explain it whole, a Heywood case, and its chains disagree).
    v : float, default=0.01
        Prior precision of the classifier's weights ``β``.
    v_prior : (float, float) or None, default=None
        A Gamma prior (shape, rate) on ``v`` instead of the fixed value (not in the paper).
    view_features : {None, "linear", "rff"}, default="rff"
        What the classifier sees besides the shared latent ``h`` (not in the paper): None,
        ``h`` alone (the paper); else also the standardised views themselves, the decision
        value ``βᵀφ̃(h) + γᵀz`` with ``γ ~ N(0, v_view⁻¹ I)`` (in the span of the training
        points with ``view_span="training"``) and ``z`` the views side by side
        (``"linear"``) or their random Fourier features (``"rff"``), zero where a view is
        missing (:func:`~bayesmv.models.m3lak.view_inputs`). Needs the logistic likelihood.
    v_view : float, default=0.002
        Prior precision of the weights ``γ`` of the views' own features in the classifier
        (``view_features``; not in the paper).
    v_view_prior : (float, float) or None, default=None
        A Gamma prior (shape, rate) on ``v_view`` instead of the fixed value, so that the
        scale of the view term is learned.
    n_view_frequencies : int, default=500
        ``M_v``, the random Fourier frequencies of each view with ``view_features="rff"``.
    view_lengthscale : float, default=1.0
        The length-scale of the views' random features relative to ``√D_i``: their
        frequencies are ``N(0, I/(view_lengthscale² D_i))`` (``view_features="rff"``).
    view_span : {"training", "full"}, default="training"
        Where the view weights ``γ`` live (``view_features``; not in the paper). ``"full"``:
        ``γ ~ N(0, v_view⁻¹ I)`` in every direction of the inputs. ``"training"``: ``γ = A c``,
        ``c ~ N(0, v_view⁻¹ I)``, with ``A`` an orthonormal basis of the row space of the
        training inputs ``Z`` (the span of the training points, as in the representer theorem):
        the training points' view terms ``Zγ`` have the same prior ``N(0, ZZᵀ/v_view)``, and a
        test point's is that of its projection on the span, without the prior variance
        ``‖z*‖²/v_view`` in the directions that no training point has, which left the
        predictive probabilities underconfident on the held-out benchmark
        (``docs/m3lak_sampler.md``). Only with fewer training points than inputs (``N < P``,
        as with 500 random features of each view); otherwise ``γ`` is not restricted.
    label_feedback : bool, default=False
        Whether the labels inform the latents: True is the joint posterior (the paper). False
        gives a cut model (Plummer 2015; not in the paper): the latent variable model is fitted to the
        views alone, and the classifier sees each training point through ``E[h_n | x_n]``, its
        latent's mean given its observed views, as the predictive sees a test point's
        (``docs/m3lak_sampler.md``). Not with ``M3LAKSampler.latent_axis_moves``. The views'
        latents are then aligned only through samples that observe several views: ``fit`` warns
        when some views share fewer than ``n_latent`` training samples with the others
        (for example two views, each sample missing one).
    niw_kappa0 : float, default=1.0
        ``κ0`` of the DP's Normal-Inverse-Wishart base ``μ_k ~ N(μ0·1, Σ_k/κ0)``,
        ``Σ_k ~ IW(ψ I, ν0)``.
    niw_nu0 : float or None, default=None
        ``ν0``; None is ``2 m`` (``NIW_NU0_PER_LATENT``), under which the components' covariance
        has a finite mean (the paper's ``m`` does not). Must exceed ``m - 1``.
    niw_mu0 : float, default=0.01
        ``μ0``, each coordinate of the base's mean.
    niw_psi0 : float, default=1.0
        ``ψ``, the scale of the base's ``Ψ0 = ψ I``.
    niw_psi0_prior : (float, float) or None, default=None
        A Gamma prior (shape, rate) on the NIW scale ``ψ`` (not in the paper), so that the
        kernel's length-scales are learned; ``niw_psi0`` is then unused.
    lengthscale : float or None, default=None
        ``ℓ`` of the fixed Gaussian spectrum ``ω ~ N(0, I/ℓ²)`` (``spectral_prior="gaussian"``);
        None is ``√m``.

    See Also
    --------
    M3LAKSampler : The sampler's settings.

    Examples
    --------
    >>> from bayesmv.models import M3LAKPriors
    >>> M3LAKPriors(v=0.1)
    M3LAKPriors(v=0.1)
    >>> M3LAKPriors.paper(n_latent=20).niw_nu0
    20.0
    """

    n_view_latent: int = 1
    eta: float = 1e3
    alpha: float = 1.0
    a_r: float = 0.1
    b_r: float = 1e-5
    a_tau: float = 2.0
    b_tau: float = 1.0
    v: float = 0.01
    v_prior: tuple | None = None
    view_features: str | None = "rff"
    v_view: float = 0.002
    v_view_prior: tuple | None = None
    n_view_frequencies: int = 500
    view_lengthscale: float = 1.0
    view_span: str = "training"
    label_feedback: bool = False
    niw_kappa0: float = 1.0
    niw_nu0: float | None = None
    niw_mu0: float = 0.01
    niw_psi0: float = 1.0
    niw_psi0_prior: tuple | None = None
    lengthscale: float | None = None

    @classmethod
    def paper(cls, n_latent=20, **changes):
        """The paper's priors: ``ν0 = m``, ``τ ~ Γ(0.01, 10⁻⁵)``, the labels informing the latents
        (``label_feedback=True``) and a classifier that sees the shared latent alone
        (``view_features=None``).

        Parameters
        ----------
        n_latent : int, default=20
            ``m``, the dimension of the shared latent.
        **changes
            Fields changed from the paper's values.

        Returns
        -------
        M3LAKPriors
            The paper's priors.
        """
        paper = dict(niw_nu0=float(n_latent), a_tau=0.01, b_tau=1e-5, view_features=None, label_feedback=True)
        return cls(**paper).replace(**changes)


@dataclass(frozen=True, repr=False)
class M3LAKSampler(_Settings):
    """How M3LAK's posterior is sampled: the hybrid Gibbs/HMC sweep's blocks and their tuning.

    Every option leaves the posterior unchanged; they trade time per sweep against mixing. The
    defaults were chosen on held-out mfeat tasks (see the benchmarks page); ``paper()`` gives
    Algorithm 1 of the paper (every block once per sweep). Moves marked *experimental* are exact
    (their tests check the stationary distribution) but off by default: measured, they did not
    help at the defaults. See "How M3LAK is sampled" in the documentation for each block.

    Parameters
    ----------
    precision_update : {"collapsed", "conditional"}, default="collapsed"
        ``"conditional"``: the ARD and noise precisions from their Gamma conditionals (the
        paper's eqs. 13–14). ``"collapsed"``: by slice steps with ``[W_i V_i]`` integrated out.
    dp_update : {"collapsed", "slice"}, default="collapsed"
        The DP assignments: collapsed Gibbs with split–merge proposals (Neal 2000; Dahl 2005),
        or the paper's slice sampler (eqs. 5–9).
    dp_split_merge : int, default=5
        Split–merge proposals per sweep (``dp_update="collapsed"``).
    dp_capacity : int, default=50
        Most mixture components the DP table holds (a fit reports it if reached).
    augmented : bool, default=False
        Hinge only: update ``H`` and ``Ω`` given the augmentation ``λ`` as the paper does, rather
        than under the λ-marginal hinge (same posterior, fewer divergences).
    hmc_steps_h, hmc_steps_omega, hmc_steps_joint : int, default=5, 10, 30
        Leapfrog steps of the HMC moves of ``H`` (per row), of ``Ω`` (hinge) and of the joint
        ``(β, Ω)`` move (logistic).
    target_accept : float, default=0.9
        Dual-averaging target of the HMC step sizes (NumPyro's NUTS: 0.8).
    init_step_size : float, default=0.05
        Initial HMC step size.
    h_lvm_passes, kernel_passes : int, default=2, 2
        Passes per sweep of ``H`` with the latent variable model, and of ``Ω`` (with ``β``) with
        the DP spectrum.
    warmup_tempering : float or None, default=0.02
        Over the first half of the warm-up the views' likelihood is raised to a power rising
        from this value to 1; None: no tempering. Needs a warm-up of about 100 sweeps or more.
    niw_psi0_warmup_hold : float, default=0.0
        With ``M3LAKPriors.niw_psi0_prior``: the fraction of the warm-up over which ``ψ`` stays
        at its prior mean before it is learned.
    spectral_scale_moves : bool, default=True
        A slice step in the DP spectrum's overall scale, ``(Ω, ψ) → (e^t Ω, e^{2t} ψ)``; ignored
        with the Gaussian spectrum.
    latent_axis_moves : bool, default=False
        *Experimental.* Moves of the latent axes' scale and shear that leave the likelihood
        unchanged.
    dp_relocation_moves : bool, default=False
        *Experimental.* A Metropolis–Hastings jump of each frequency to another component of
        the spectrum (needs the DP spectrum and the logistic likelihood).
    dp_sign_moves : bool, default=False
        *Experimental.* Each frequency's sign drawn with its component (needs the DP spectrum
        and ``dp_update="collapsed"``).
    fixed_blocks : tuple of str, default=()
        A diagnostic: blocks held at their initial values (names in ``FIXABLE_BLOCKS``).
    shard_data : bool or int, default=False
        Split the sample axis over every device (True) or the first ``k`` (an int); draws equal
        the unsharded run's up to rounding. Not with ``chain_method="parallel"``.
    mesh : jax.sharding.Mesh or None, default=None
        Split the sample axis over this mesh's devices instead.
    max_extensions : int, default=4
        Where the training decision values have not converged after ``num_samples`` draws
        (r̂ > 1.01 or a bulk or tail ESS < 400, as ``convergence_report``), every chain runs
        ``num_samples`` draws longer (no new compilation), up to this many times; not where
        even the longest run allowed would not bring the ESS to 200 at the rate so far, nor
        with one chain or fewer than 400 draws over the chains. Past ``2 num_samples`` draws
        the kept draws are thinned by 2 (then 4, ...): a fit holds at most ``2 num_samples``
        draws per chain, twice the memory of an unextended one. 0 (the paper's setting): the
        chains stop at ``num_samples``.

    See Also
    --------
    M3LAKPriors : The hyper-priors.

    Examples
    --------
    >>> from bayesmv.models import M3LAKSampler
    >>> M3LAKSampler(hmc_steps_joint=20)
    M3LAKSampler(hmc_steps_joint=20)
    >>> M3LAKSampler.paper().kernel_passes
    1
    """

    precision_update: str = "collapsed"
    dp_update: str = "collapsed"
    dp_split_merge: int = 5
    dp_capacity: int = 50
    augmented: bool = False
    hmc_steps_h: int = 5
    hmc_steps_omega: int = 10
    hmc_steps_joint: int = 30
    target_accept: float = 0.9
    init_step_size: float = 0.05
    h_lvm_passes: int = 2
    kernel_passes: int = 2
    warmup_tempering: float | None = 0.02
    niw_psi0_warmup_hold: float = 0.0
    spectral_scale_moves: bool = True
    latent_axis_moves: bool = False
    dp_relocation_moves: bool = False
    dp_sign_moves: bool = False
    fixed_blocks: tuple = ()
    shard_data: bool | int = False
    mesh: object = None
    max_extensions: int = 4

    @classmethod
    def paper(cls, **changes):
        """Algorithm 1 of the paper: every block once per sweep.

        The precisions from their conditionals, no tempering, no move beyond the paper's blocks,
        and chains of the length asked for (no extensions).

        Parameters
        ----------
        **changes
            Fields changed from the paper's values.

        Returns
        -------
        M3LAKSampler
            The paper's sampler settings.
        """
        return cls(
            precision_update="conditional",
            hmc_steps_h=10,
            target_accept=0.8,
            h_lvm_passes=1,
            kernel_passes=1,
            warmup_tempering=None,
            spectral_scale_moves=False,
            max_extensions=0,
        ).replace(**changes)

    def without_execution(self):
        """These settings with ``shard_data``, ``mesh`` and ``max_extensions`` at their defaults.

        Where the data live changes no draw, and how far the chains are extended changes none of
        the sweeps, so the model's config does not hold them.

        Returns
        -------
        M3LAKSampler
            The same sweep's settings, unsharded and with the default extensions.
        """
        return self.replace(**{name: getattr(M3LAKSampler, name) for name in EXECUTION_FIELDS})


_PRIOR_FIELDS = frozenset(f.name for f in dataclasses.fields(M3LAKPriors))
_SAMPLER_FIELDS = frozenset(f.name for f in dataclasses.fields(M3LAKSampler))


@dataclass(frozen=True, repr=False)
class M3LAKConfig(_Settings):
    """Every setting of one M3LAK posterior and its sampler: the model's size, likelihood,
    spectrum and noise, its :class:`M3LAKPriors` and its :class:`M3LAKSampler`.

    The fields of ``priors`` and ``sampler`` read as the config's own (``config.a_r`` is
    ``config.priors.a_r``). The defaults are ``M3LAKClassifier``'s; :meth:`paper` gives the
    paper's setting and :meth:`from_settings` builds a config from any fields by name.

    Parameters
    ----------
    n_latent : int, default=14
        ``m``, the dimension of the shared latent ``h``.
    n_frequencies : int, default=25
        ``M``, the random Fourier frequencies (``2M + 1`` features with the bias).
    C : float, default=1.0
        The weight of each label's log-likelihood against the views (the hinge: the paper's
        regularisation constant; the logistic likelihood is proper at 1).
    likelihood : {"logistic", "hinge"}, default="logistic"
        ``P(y | f) = σ(y f)`` (not in the paper), or the paper's hinge pseudo-likelihood
        ``exp(-2C max(0, 1 - y f))``.
    spectral_prior : {"gaussian", "dp"}, default="gaussian"
        The frequencies' prior: one Gaussian (an RBF kernel, length-scale ``priors.lengthscale``)
        or a DP Gaussian mixture (an adaptive kernel, the paper's).
    noise : {"view", "feature"}, default="view"
        One noise precision per view (the paper) or per feature (factor analysis).
    priors : M3LAKPriors, default=M3LAKPriors()
        The hyper-priors.
    sampler : M3LAKSampler, default=M3LAKSampler()
        The sampler's settings (without ``shard_data``, ``mesh`` and ``max_extensions``, which
        change no sweep).

    Examples
    --------
    >>> from bayesmv.models import M3LAKConfig
    >>> config = M3LAKConfig.from_settings(n_latent=3, v=0.5, kernel_passes=1).validate()
    >>> config.v, config.sampler.kernel_passes, config.nu0
    (0.5, 1, 6.0)
    """

    n_latent: int = 14
    n_frequencies: int = 25
    C: float = 1.0
    likelihood: str = "logistic"
    spectral_prior: str = "gaussian"
    noise: str = "view"
    priors: M3LAKPriors = M3LAKPriors()
    sampler: M3LAKSampler = M3LAKSampler()

    def __getattr__(self, name):
        # called only for names that are not the config's own fields: those of priors / sampler
        if not name.startswith("_"):
            for part, names in (("priors", _PRIOR_FIELDS), ("sampler", _SAMPLER_FIELDS)):
                if name in names and part in self.__dict__:
                    return getattr(self.__dict__[part], name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @classmethod
    def from_settings(cls, base=None, **settings):
        """A config from ``base`` with any fields of the config, its priors or its sampler changed.

        Parameters
        ----------
        base : M3LAKConfig or None, default=None
            The config to start from; None: ``M3LAKConfig()``.
        **settings
            New values by field name (``n_latent=…``, ``v=…``, ``kernel_passes=…``).

        Returns
        -------
        M3LAKConfig
            The new config (not validated: call :meth:`validate`).
        """
        base = cls() if base is None else base
        own = {k: v for k, v in settings.items() if k not in _PRIOR_FIELDS | _SAMPLER_FIELDS}
        priors = {k: v for k, v in settings.items() if k in _PRIOR_FIELDS}
        sampler = {k: v for k, v in settings.items() if k in _SAMPLER_FIELDS}
        return base.replace(
            **own, priors=base.priors.replace(**priors), sampler=base.sampler.replace(**sampler)
        )

    @classmethod
    def paper(cls, **settings):
        """The paper's setting (Du et al. 2018, §4.1 and Algorithm 1).

        ``m = 20``, ``M = 100``, the hinge, the DP spectrum, ``ν0 = m``
        (:meth:`M3LAKPriors.paper`) and :meth:`M3LAKSampler.paper`.

        Parameters
        ----------
        **settings
            Fields of the config, its priors or its sampler changed by name, as in
            :meth:`from_settings`; ``ν0`` follows ``n_latent``.

        Returns
        -------
        M3LAKConfig
            The paper's config (not validated).
        """
        n_latent = settings.get("n_latent", 20)
        base = cls(
            n_latent=20,
            n_frequencies=100,
            likelihood="hinge",
            spectral_prior="dp",
            priors=M3LAKPriors.paper(n_latent),
            sampler=M3LAKSampler.paper().without_execution(),
        )
        return cls.from_settings(base, **settings)

    @property
    def precision_priors(self) -> tuple:
        """``(a_r, b_r, a_τ, b_τ)``: the Gamma priors of the ARD and noise precisions."""
        return self.a_r, self.b_r, self.a_tau, self.b_tau

    @property
    def nu0(self) -> float:
        """The NIW prior's degrees of freedom ν0: ``niw_nu0``, or ``NIW_NU0_PER_LATENT · m``."""
        return float(NIW_NU0_PER_LATENT * self.n_latent if self.niw_nu0 is None else self.niw_nu0)

    @property
    def omega_scale(self) -> float:
        """Standard deviation of ω under the fixed ``"gaussian"`` spectrum."""
        ell = np.sqrt(self.n_latent) if self.lengthscale is None else self.lengthscale
        return float(1.0 / ell)

    def validate(self):
        """Check every setting against :data:`CONSTRAINTS`, and the rules between settings.

        Returns
        -------
        self
            The config, unchanged.

        Raises
        ------
        ValueError
            Naming the first setting that fails.
        """
        own = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        for part, kind in (("priors", M3LAKPriors), ("sampler", M3LAKSampler)):
            if not isinstance(own.pop(part), kind):
                raise ValueError(f"M3LAKConfig.{part} must be a {kind.__name__}; got {getattr(self, part)!r}")
        check_values("M3LAKConfig", own)
        self.priors.validate()
        self.sampler.validate()
        rules = [
            (
                self.nu0 > self.n_latent - 1,
                f"M3LAKPriors.niw_nu0 must exceed n_latent - 1 = {self.n_latent - 1} (Inverse-Wishart "
                f"degrees of freedom); got {self.nu0}; None is {NIW_NU0_PER_LATENT} n_latent",
            ),
            (
                not self.niw_psi0_warmup_hold or self.niw_psi0_prior is not None,
                "M3LAKSampler.niw_psi0_warmup_hold needs M3LAKPriors.niw_psi0_prior (a learned ψ)",
            ),
            (
                not self.dp_relocation_moves
                or (self.spectral_prior == "dp" and self.likelihood == "logistic"),
                "M3LAKSampler.dp_relocation_moves needs spectral_prior='dp' and likelihood='logistic'",
            ),
            (
                not self.dp_sign_moves or (self.spectral_prior == "dp" and self.dp_update == "collapsed"),
                "M3LAKSampler.dp_sign_moves needs spectral_prior='dp' and dp_update='collapsed'",
            ),
            (
                self.view_features is None or self.likelihood == "logistic",
                f"M3LAKPriors.view_features={self.view_features!r} needs likelihood='logistic' (γ moves "
                "with (β, Ω) in their joint HMC); with the hinge, set M3LAKPriors(view_features=None) "
                "or start from the paper's setting (M3LAKConfig.paper(), M3LAKClassifier.paper())",
            ),
            (
                self.v_view_prior is None or self.view_features is not None,
                "M3LAKPriors.v_view_prior needs view_features",
            ),
            (
                self.view_features is None or not self.dp_relocation_moves,
                f"M3LAKPriors.view_features={self.view_features!r} does not combine with "
                "M3LAKSampler.dp_relocation_moves; set M3LAKPriors(view_features=None)",
            ),
            (
                self.label_feedback or not self.latent_axis_moves,
                "M3LAKPriors.label_feedback=False does not combine with M3LAKSampler.latent_axis_moves "
                "(they move H with Ω); set M3LAKPriors(label_feedback=True)",
            ),
            (
                not self.augmented or self.likelihood == "hinge",
                "M3LAKSampler.augmented=True needs the hinge likelihood (λ augments the hinge)",
            ),
        ]
        for holds, message in rules:
            if not holds:
                raise ValueError(message)
        return self
