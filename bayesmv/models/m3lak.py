"""M3LAK generative model (Du et al. 2018, §2) as NumPyro model functions.

Model, views ``i = 1..V``, samples ``n = 1..N`` (``docs/m3lak_sampler.md``):

* ``h_n ~ N(0, I_m)``, ``u_n^i ~ N(0, I_K)``, ``x_n^i ~ N(W_i h_n + V_i u_n^i, τ_i^{-1} I)`` (beyond
  the paper, ``noise="feature"``: ``N(…, diag(τ_i)^{-1})``, one precision per feature, as in factor
  analysis);
* ARD: columns of ``W_i`` ~ ``N(0, r_ij^{-1} I)``, ``r_ij ~ Γ(a_r, b_r)``; columns of ``V_i`` ~
  ``N(0, η^{-1} I)``; ``τ_i`` (or every ``τ_id``) ``~ Γ(a_τ, b_τ)`` (shape/rate);
* random Fourier features ``φ̃(h) = (M^{-1/2}[cos Ωh, sin Ωh], 1)`` with ``ω_j`` drawn from a DP
  Gaussian mixture (NIW base, stick-breaking; truncated at ``dp_capacity`` in the model function,
  exact slice sampling in the Gibbs kernel) or from a fixed Gaussian spectrum;
* ``β ~ N(0, v^{-1} I_{2M+1})`` (``v`` fixed or ``Γ(a_v, b_v)``);
* hinge pseudo-likelihood ``exp(-2C max(0, 1 - y_n βᵀφ̃(h_n)))``, either marginal or
  data-augmented with ``λ_n`` (Polson & Scott 2011; paper eq. before (1)), or, beyond the
  paper (``likelihood="logistic"``), the proper likelihood ``P(y_n | h_n) = σ(y_n βᵀφ̃(h_n))``,
  its log weighted by ``C`` as the hinge's is (``C = 1``: the proper likelihood; ``C > 1`` counts
  each label ``C`` times against the latent variable model).

Missing views (all-NaN rows) drop their likelihood terms ``x_n^i`` (and ``u_n^i`` is then pure
prior). Everything is float64 (``import bayesmv`` enables x64).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from jax.custom_derivatives import SymbolicZero
from numpyro.distributions import constraints

from ..kernels.random_features import cos_sin, random_fourier_features
from .m3lak_config import M3LAKConfig

__all__ = [
    "M3LAKConfig",
    "augmented_hinge_log_factor",
    "decision_values",
    "feature_map",
    "hinge_log_pseudo_likelihood",
    "hinge_model",
    "latent_variable_model",
    "logistic_log_likelihood",
    "m3lak_model",
    "mirror_frequencies",
    "noise_by_view",
    "pointwise_log_likelihood",
    "spectral_prior_model",
    "view_frequencies",
    "view_inputs",
]

# The seed of the fixed key from which view_frequencies draws the views' frequencies.
_VIEW_FREQUENCY_SEED = 0


# ----------------------------------------------------------------------------------------------
# Pure pieces shared with the sampler
# ----------------------------------------------------------------------------------------------
def noise_by_view(tau, n_features):
    """Each view's noise precisions from ``tau`` (last axis).

    Parameters
    ----------
    tau : array of shape (..., V) or (..., Σ_i D_i)
        The noise precisions: one per view (``noise="view"``) or one per feature
        (``noise="feature"``), on the last axis. With one feature per view the two coincide.
    n_features : sequence of int
        Each view's number of features ``D_i``.

    Returns
    -------
    taus : list of array
        Per view: a scalar per view (shape ``(...)``) when ``tau`` holds one per view, the
        view's ``(..., D_i)`` slice when it holds one per feature.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> from bayesmv.models import noise_by_view
    >>> [t.shape for t in noise_by_view(jnp.array([1.0, 2.0]), [3, 2])]
    [(), ()]
    >>> [t.shape for t in noise_by_view(jnp.arange(5.0), [3, 2])]
    [(3,), (2,)]
    """
    if tau.shape[-1] == len(n_features):
        return [tau[..., i] for i in range(len(n_features))]
    ends = np.cumsum(n_features)
    return [tau[..., end - D : end] for D, end in zip(n_features, ends)]


def feature_map(H, omega):
    """Random Fourier features with a bias, ``φ̃(h) = (M^{-1/2}[cos(Ωh), sin(Ωh)], 1)``.

    The feature map of Du et al. 2018, §2.2.

    Parameters
    ----------
    H : array of shape (N, m)
        The latent points ``h_n``, one per row.
    omega : array of shape (M, m)
        The frequencies ``Ω``, one ``ω_j`` per row.

    Returns
    -------
    features : array of shape (N, 2M + 1)
        ``φ̃(h_n)`` per row: the ``M`` cosines, the ``M`` sines, then 1.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> from bayesmv.models import feature_map
    >>> feature_map(jnp.zeros((4, 2)), jnp.ones((3, 2))).shape
    (4, 7)
    """
    phi = random_fourier_features(H, omega)
    return jnp.concatenate([phi, jnp.ones(phi.shape[:-1] + (1,), dtype=phi.dtype)], axis=-1)


def view_frequencies(n_features, config: M3LAKConfig):
    """The fixed frequencies of the views' random features (``view_features="rff"``).

    View ``i``'s ``n_view_frequencies`` frequencies are columns of ``N(0, I/ℓ_i²)``,
    ``ℓ_i = view_lengthscale · √D_i`` (standardised features: the typical distance between two
    points of the view is ``√(2 D_i)``), drawn from a fixed key, so that every fit and every
    prediction uses the same ones.

    Parameters
    ----------
    n_features : sequence of int
        Each view's number of features ``D_i``.
    config : M3LAKConfig
        The settings (``n_view_frequencies``, ``view_lengthscale``).

    Returns
    -------
    omegas : list of array of shape (D_i, n_view_frequencies)
        Per view, its frequencies as columns.
    """
    key = jax.random.PRNGKey(_VIEW_FREQUENCY_SEED)
    return [
        jax.random.normal(jax.random.fold_in(key, i), (D, config.n_view_frequencies))
        / (config.view_lengthscale * np.sqrt(D))
        for i, D in enumerate(n_features)
    ]


def view_inputs(Xs, observed, config: M3LAKConfig):
    """The classifier's inputs ``z`` from the views themselves (``view_features``).

    ``"linear"``: the views side by side over ``√D`` (``D = Σ_i D_i``); ``"rff"``: each view's
    random Fourier features ``[cos(x_iᵀΩ_i), sin(x_iᵀΩ_i)]`` (:func:`view_frequencies`) side by
    side over ``√(V M_v)``. Either way a missing view's part is zero, and ``‖z‖² ≈ 1`` for a
    point that every view observes, as ``‖φ̃(h)‖²`` is for the latent's random features.

    Parameters
    ----------
    Xs : sequence of array of shape (N, D_i)
        The (standardised) views; the rows of a missing view are not read (NaN or zeros).
    observed : array of bool of shape (N, V)
        Whether view ``i`` of sample ``n`` is observed.
    config : M3LAKConfig
        The settings (``view_features``, and for ``"rff"`` ``n_view_frequencies`` and
        ``view_lengthscale``).

    Returns
    -------
    z : array of shape (N, D) or (N, 2 V M_v)
        The classifier's inputs from the views.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.models import M3LAKConfig, view_inputs
    >>> Xs = [np.array([[1.0, 1.0], [np.nan, np.nan]]), np.array([[2.0], [2.0]])]
    >>> observed = np.array([[True, True], [False, True]])
    >>> view_inputs(Xs, observed, M3LAKConfig.from_settings(view_features="linear")).round(3)
    Array([[0.577, 0.577, 1.155],
           [0.   , 0.   , 1.155]], dtype=float64)
    >>> view_inputs(Xs, observed, M3LAKConfig()).shape  # "rff", 500 frequencies per view
    (2, 2000)
    """
    observed = jnp.asarray(observed)
    Xs = [jnp.where(observed[:, i : i + 1], jnp.asarray(X), 0.0) for i, X in enumerate(Xs)]
    if config.view_features == "linear":
        Z = jnp.concatenate(Xs, axis=-1)
        return Z / np.sqrt(Z.shape[-1])
    omegas = view_frequencies([X.shape[1] for X in Xs], config)
    parts = [
        random_fourier_features(X, om.T) * observed[:, i : i + 1] for i, (X, om) in enumerate(zip(Xs, omegas))
    ]
    return jnp.concatenate(parts, axis=-1) / np.sqrt(len(Xs))


def mirror_frequencies(omega, beta, signs):
    """Flip the sign of chosen frequencies: ``(s_j ω_j, β)``, each sine weight ``β_{sin,j}`` times ``s_j``.

    The features of ``-ω_j`` are those of ``ω_j`` with the sine negated, so every decision
    value ``βᵀφ̃(h)``, and ``β``'s norm, stay as they were.

    Parameters
    ----------
    omega : array of shape (M, m)
        The frequencies ``ω_j``, one per row.
    beta : array of shape (2M + 1,)
        The weights ``β``: ``M`` cosine weights, ``M`` sine weights, the bias.
    signs : array of shape (M,)
        The signs ``s_j = ±1``.

    Returns
    -------
    omega : array of shape (M, m)
        ``s_j ω_j``.
    beta : array of shape (2M + 1,)
        ``β`` with each sine weight ``β_{sin,j}`` times ``s_j``.
    """
    M = omega.shape[0]
    return signs[:, None] * omega, beta.at[M : 2 * M].multiply(signs)


@jax.custom_jvp
def decision_values(H, omega, beta):
    """The decision values ``f(h_n) = βᵀφ̃(h_n)`` for every row of ``H``, without forming ``φ̃``.

    The classifier's discriminant of Du et al. 2018, §2.2.
    Its JVP reuses the forward pass's ``cos``/``sin`` (``∂f/∂(Ωh)_j = M^{-1/2}(β_{s,j} cos -
    β_{c,j} sin)``), so an HMC gradient evaluates them once per point. Writing it through
    :func:`~bayesmv.kernels.random_fourier_features` (concatenated, scaled φ) instead is slower
    per sweep, hence the separate cos/sin here.

    Parameters
    ----------
    H : array of shape (N, m)
        The latent points ``h_n``, one per row.
    omega : array of shape (M, m)
        The frequencies ``Ω``.
    beta : array of shape (2M + 1,)
        The weights ``β``: ``M`` cosine weights, ``M`` sine weights, the bias.

    Returns
    -------
    f : array of shape (N,)
        ``βᵀφ̃(h_n)`` per row of ``H``, as ``feature_map(H, omega) @ beta``.
    """
    return _decision_parts(H, omega, beta)[0]


def _decision_parts(H, omega, beta):
    M = omega.shape[0]
    cos, sin = cos_sin(H @ omega.T)
    scale = 1.0 / np.sqrt(M)
    b_cos, b_sin = beta[:M] * scale, beta[M : 2 * M] * scale
    return cos @ b_cos + sin @ b_sin + beta[2 * M], cos, sin, b_cos, b_sin


def _decision_values_jvp(primals, tangents):
    H, omega, beta = primals
    dH, domega, dbeta = (None if isinstance(t, SymbolicZero) else t for t in tangents)
    M = omega.shape[0]
    f, cos, sin, b_cos, b_sin = _decision_parts(H, omega, beta)
    df = jnp.zeros_like(f)
    if dH is not None or domega is not None:
        dproj = (0.0 if dH is None else dH @ omega.T) + (0.0 if domega is None else H @ domega.T)
        df = df + jnp.sum((cos * b_sin - sin * b_cos) * dproj, -1)
    if dbeta is not None:
        df = df + (cos @ dbeta[:M] + sin @ dbeta[M : 2 * M]) / np.sqrt(M) + dbeta[2 * M]
    return f, df


decision_values.defjvp(_decision_values_jvp, symbolic_zeros=True)


def hinge_log_pseudo_likelihood(decision, y, C):
    """Per-sample hinge log pseudo-likelihood ``-2C max(0, 1 - y f)`` (marginal form).

    Parameters
    ----------
    decision : array of shape (N,)
        The decision values ``f``.
    y : array of shape (N,)
        The labels, ±1.
    C : float
        The regularisation constant ``C``.

    Returns
    -------
    log_lik : array of shape (N,)
        ``-2C max(0, 1 - y_n f_n)`` per sample.
    """
    return -2.0 * C * jnp.maximum(0.0, 1.0 - y * decision)


def logistic_log_likelihood(decision, y):
    """Per-sample logistic log-likelihood ``log σ(y f) = -softplus(-y f)`` (``likelihood="logistic"``).

    Parameters
    ----------
    decision : array of shape (N,)
        The decision values ``f`` (logits).
    y : array of shape (N,)
        The labels, ±1.

    Returns
    -------
    log_lik : array of shape (N,)
        ``log σ(y_n f_n)`` per sample (not weighted by ``C``).
    """
    return -jax.nn.softplus(-y * decision)


def pointwise_log_likelihood(decision, y, config: M3LAKConfig):
    """``log p(y_n | f_n)`` per sample under ``config.likelihood``, in NumPy (for stored draws).

    Under ``"logistic"``, ``C`` × :func:`logistic_log_likelihood` (the factor the posterior
    holds; a proper likelihood at ``C = 1``); under ``"hinge"``, the λ-marginal
    :func:`hinge_log_pseudo_likelihood`. The hinge's is not normalised over ``y``: its PSIS-LOO
    compares hinge fits with one another, not with logistic ones; likewise logistic fits with
    different ``C``.

    Parameters
    ----------
    decision : array-like of shape (..., N)
        The decision values ``f`` (any leading axes: chains, draws).
    y : array-like of shape (N,)
        The labels, ±1.
    config : M3LAKConfig
        The model's settings: ``likelihood`` and ``C``.

    Returns
    -------
    log_lik : ndarray of shape (..., N)
        The log-likelihood of each sample under each draw.

    Examples
    --------
    >>> from bayesmv.models import M3LAKConfig, pointwise_log_likelihood
    >>> pointwise_log_likelihood([0.5, -0.5], [1, 1], M3LAKConfig.paper())  # the hinge
    array([-1., -3.])
    >>> pointwise_log_likelihood([0.0], [1], M3LAKConfig(likelihood="logistic")).round(4)
    array([-0.6931])
    """
    margin = np.asarray(y) * np.asarray(decision)
    if config.likelihood == "logistic":
        return -config.C * np.logaddexp(0.0, -margin)
    return -2.0 * config.C * np.maximum(0.0, 1.0 - margin)


def augmented_hinge_log_factor(decision, y, lam, C):
    """Per-sample augmented hinge factor ``log ℓ(y_n, λ_n | ·) = -(λ + Cζ)²/(2λ) - ½ log(2πλ)``.

    With ``ζ = 1 - y f``. Integrating ``exp`` of this over ``λ > 0`` gives
    ``exp(-2C max(0, ζ))`` (Polson and Scott 2011).

    Parameters
    ----------
    decision : array of shape (N,)
        The decision values ``f``.
    y : array of shape (N,)
        The labels, ±1.
    lam : array of shape (N,)
        The augmentation variables ``λ_n > 0``.
    C : float
        The regularisation constant ``C``.

    Returns
    -------
    log_factor : array of shape (N,)
        ``log ℓ(y_n, λ_n | ·)`` per sample.
    """
    zeta = 1.0 - y * decision
    return -((lam + C * zeta) ** 2) / (2.0 * lam) - 0.5 * jnp.log(2.0 * jnp.pi * lam)


# ----------------------------------------------------------------------------------------------
# NumPyro model functions
# ----------------------------------------------------------------------------------------------
def _nan_mask(X):
    X = jnp.asarray(X)
    obs = ~jnp.all(jnp.isnan(X), axis=1)
    return jnp.where(obs[:, None], X, 0.0), obs


def latent_variable_model(Xs, config: M3LAKConfig, n_samples=None, n_features=None):
    """Multi-view latent variable model (Du et al. 2018, §2.1) as a NumPyro model.

    Samples the sites ``h``, ``tau``, ``r`` and, per view ``i``, ``W_i``, ``V_i``, ``u_i`` and
    ``X_i`` (observed when ``Xs`` is given). NaN rows are missing views: their likelihood terms
    are masked out.

    Parameters
    ----------
    Xs : list of array of shape (N, D_i) or None
        The views; ``None`` for prior simulation (give ``n_samples`` and ``n_features``).
    config : M3LAKConfig
        The model's settings (sizes, priors, likelihood).
    n_samples : int, default=None
        ``N`` when ``Xs`` is None (read from ``Xs`` otherwise).
    n_features : sequence of int, default=None
        Each view's ``D_i`` when ``Xs`` is None (read from ``Xs`` otherwise).

    Returns
    -------
    H : array of shape (N, m)
        The shared latent points.
    """
    m, K = config.n_latent, config.n_view_latent
    if Xs is not None:
        n_samples = Xs[0].shape[0]
        n_features = [X.shape[1] for X in Xs]
    V = len(n_features)
    H = numpyro.sample("h", dist.Normal(0.0, 1.0).expand([n_samples, m]).to_event(2))
    n_tau = sum(n_features) if config.noise == "feature" else V
    tau = numpyro.sample("tau", dist.Gamma(config.a_tau, config.b_tau).expand([n_tau]).to_event(1))
    taus = noise_by_view(tau, n_features)
    r = numpyro.sample("r", dist.Gamma(config.a_r, config.b_r).expand([V, m]).to_event(2))
    for i, D in enumerate(n_features):
        W = numpyro.sample(f"W_{i}", dist.Normal(0.0, 1.0 / jnp.sqrt(r[i])).expand([D, m]).to_event(2))
        Vi = numpyro.sample(f"V_{i}", dist.Normal(0.0, 1.0 / np.sqrt(config.eta)).expand([D, K]).to_event(2))
        U = numpyro.sample(f"u_{i}", dist.Normal(0.0, 1.0).expand([n_samples, K]).to_event(2))
        loc = H @ W.T + U @ Vi.T
        scale = 1.0 / jnp.sqrt(taus[i])
        if Xs is None:
            numpyro.sample(f"X_{i}", dist.Normal(loc, scale).to_event(2))
        else:
            X, obs = _nan_mask(Xs[i])
            with numpyro.handlers.mask(mask=obs):
                numpyro.sample(f"X_{i}", dist.Normal(loc, scale).to_event(1), obs=X)
    return H


def spectral_prior_model(config: M3LAKConfig):
    """Prior on the frequencies ``Ω``: a DP Gaussian mixture or a fixed Gaussian, as a NumPyro model.

    Under ``spectral_prior="dp"``, a DP Gaussian mixture (NIW base, stick-breaking, truncated at
    ``dp_capacity`` with the assignments summed out; sites ``dp_nu``, ``dp_weights``,
    ``dp_precision``, ``dp_mu`` and, with ``niw_psi0_prior``, ``niw_psi0``); under
    ``"gaussian"``, i.i.d. ``N(0, omega_scale²)`` entries. The site of ``Ω`` is ``omega``.

    Parameters
    ----------
    config : M3LAKConfig
        The model's settings (sizes, priors, likelihood).

    Returns
    -------
    omega : array of shape (M, m)
        The frequencies ``Ω``, one ``ω_j`` per row.
    """
    m, M = config.n_latent, config.n_frequencies
    if config.spectral_prior == "gaussian":
        return numpyro.sample("omega", dist.Normal(0.0, config.omega_scale).expand([M, m]).to_event(2))
    Kc = config.dp_capacity
    nu = numpyro.sample("dp_nu", dist.Beta(1.0, config.alpha).expand([Kc - 1]).to_event(1))
    log_rest = jnp.concatenate([jnp.zeros(1), jnp.cumsum(jnp.log1p(-nu))])
    weights = jnp.exp(log_rest) * jnp.concatenate([nu, jnp.ones(1)])  # last stick takes the rest
    numpyro.deterministic("dp_weights", weights)
    # NIW: Σ_k ~ IW(Ψ0, ν0)  <=>  Σ_k^{-1} ~ Wishart(ν0, Ψ0^{-1});  μ_k ~ N(μ0, Σ_k / κ0); Ψ0 = ψ I
    if config.niw_psi0_prior is not None:
        psi = numpyro.sample("niw_psi0", dist.Gamma(*config.niw_psi0_prior))
    else:
        psi = config.niw_psi0
    prec = numpyro.sample(
        "dp_precision",
        dist.Wishart(config.nu0, scale_matrix=jnp.eye(m) / psi).expand([Kc]).to_event(1),
    )
    mu = numpyro.sample(
        "dp_mu",
        dist.MultivariateNormal(
            config.niw_mu0 * jnp.ones(m), precision_matrix=config.niw_kappa0 * prec
        ).to_event(1),
    )
    mix = dist.MixtureSameFamily(
        dist.Categorical(probs=weights), dist.MultivariateNormal(mu, precision_matrix=prec)
    )
    return numpyro.sample("omega", mix.expand([M]).to_event(1))


def hinge_model(features, y, config: M3LAKConfig, augmented=None, inputs=None):
    """Fixed-kernel classifier as a NumPyro model: ``β ~ N(0, v^{-1}I)`` and a likelihood.

    On given features ``φ̃``, the hinge pseudo-likelihood (marginal or augmented with ``λ``) or,
    with ``config.likelihood="logistic"``, a Bernoulli likelihood with logits ``βᵀφ̃``, scaled
    by ``C``. ``v`` is fixed or, with ``config.v_prior``, ``Γ(a_v, b_v)``. With ``inputs``
    (``view_features``), the decision value is ``βᵀφ̃ + γᵀz``, ``γ ~ N(0, v_view^{-1}I)``, or
    with ``view_span="training"`` and fewer samples than inputs ``γ = A c`` (the deterministic
    site ``gamma``), ``c ~ N(0, v_view^{-1}I)`` (the site ``gamma_span``) and ``A`` the inputs'
    row space from their thin SVD.

    Parameters
    ----------
    features : array of shape (N, 2M + 1)
        The features ``φ̃(h_n)`` (:func:`feature_map`).
    y : array of shape (N,) or None
        The labels, ±1; None adds no likelihood (prior simulation).
    config : M3LAKConfig
        The model's settings (sizes, priors, likelihood).
    augmented : bool, default=None
        Whether the hinge is data-augmented (λ sites with an improper flat base measure plus the
        augmented factor) or marginal; None follows ``config.augmented``.
    inputs : array of shape (N, D) or None, default=None
        The classifier's inputs ``z`` from the views (:func:`view_inputs`), weighted by the
        site ``gamma``; None: the decision value is ``βᵀφ̃`` alone.

    Returns
    -------
    decision : array of shape (N,)
        The decision values ``βᵀφ̃ (+ γᵀz)`` (the deterministic site ``decision``).
    """
    augmented = config.augmented if augmented is None else augmented
    P = features.shape[-1]
    if config.v_prior is not None:
        v = numpyro.sample("v", dist.Gamma(*config.v_prior))
    else:
        v = config.v
    beta = numpyro.sample("beta", dist.Normal(0.0, 1.0 / jnp.sqrt(v)).expand([P]).to_event(1))
    decision = features @ beta
    if inputs is not None:
        v_view = config.v_view
        if config.v_view_prior is not None:
            v_view = numpyro.sample("v_view", dist.Gamma(*config.v_view_prior))
        scale = 1.0 / jnp.sqrt(v_view)
        n, n_inputs = inputs.shape
        if config.view_span == "training" and n < n_inputs:  # γ = A c in the inputs' row space
            _, _, rows = jnp.linalg.svd(inputs, full_matrices=False)
            c = numpyro.sample("gamma_span", dist.Normal(0.0, scale).expand([n]).to_event(1))
            gamma = numpyro.deterministic("gamma", rows.T @ c)
        else:
            gamma = numpyro.sample("gamma", dist.Normal(0.0, scale).expand([n_inputs]).to_event(1))
        decision = decision + inputs @ gamma
    decision = numpyro.deterministic("decision", decision)
    if y is not None:
        if config.likelihood == "logistic":
            with numpyro.handlers.scale(scale=config.C):
                numpyro.sample("y", dist.Bernoulli(logits=decision), obs=(y > 0).astype(jnp.int32))
        elif augmented:
            lam = numpyro.sample("lam", dist.ImproperUniform(constraints.positive, (), (features.shape[0],)))
            numpyro.factor("hinge", augmented_hinge_log_factor(decision, y, lam, config.C).sum())
        else:
            numpyro.factor("hinge", hinge_log_pseudo_likelihood(decision, y, config.C).sum())
    return decision


def m3lak_model(
    Xs, y=None, config: M3LAKConfig = M3LAKConfig(), n_samples=None, n_features=None, augmented=None
):
    """The full M3LAK post-data posterior ``p0(Ω, Θ) p(X | Ω) ℓ(y | H, Θ)`` as a NumPyro model.

    :func:`latent_variable_model`, :func:`spectral_prior_model` and :func:`hinge_model` on the
    features :func:`feature_map` of the latent points.

    Parameters
    ----------
    Xs : list of array of shape (N, D_i) or None
        The views, NaN rows for missing views; ``None`` for prior simulation (give
        ``n_samples`` and ``n_features``).
    y : array-like of shape (N,), default=None
        The labels, ±1. With ``y=None`` no pseudo-likelihood is added (prior simulation).
    config : M3LAKConfig, default=M3LAKConfig()
        The model's settings (sizes, priors, likelihood).
    n_samples : int, default=None
        ``N`` when ``Xs`` is None.
    n_features : sequence of int, default=None
        Each view's ``D_i`` when ``Xs`` is None.
    augmented : bool, default=None
        None follows ``config.augmented`` (λ sites with an improper flat base measure plus the
        augmented factor, or the marginal hinge factor).

    Returns
    -------
    decision : array of shape (N,)
        The decision values ``βᵀφ̃(h_n)`` (``+ γᵀz_n`` with ``view_features``).

    Raises
    ------
    ValueError
        With ``view_features``, if ``Xs`` is None (the classifier's inputs are the views).
    """
    if config.view_features is not None and Xs is None:
        raise ValueError("view_features: the classifier's inputs are the views; give Xs")
    H = latent_variable_model(Xs, config, n_samples=n_samples, n_features=n_features)
    omega = spectral_prior_model(config)
    inputs = None
    if config.view_features is not None:
        inputs = view_inputs(Xs, jnp.stack([_nan_mask(X)[1] for X in Xs], axis=1), config)
    return hinge_model(
        feature_map(H, omega),
        None if y is None else jnp.asarray(y),
        config,
        augmented=augmented,
        inputs=inputs,
    )
