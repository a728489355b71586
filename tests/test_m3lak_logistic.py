"""The logistic likelihood and its joint (β, Ω) HMC move against brute-force references.

1. The move's potential, in whitened coordinates, equals minus the log posterior density of
   (β, Ω) written from the model equations, up to a constant (exact, to rounding).
2. Invariance: exact posterior draws of (β, Ω) | H, DP, y (rejection from the prior) pushed
   through three transitions must keep their distribution. Compared with an independent set of
   exact draws by z-scores of ~50 test-function means, Bonferroni-corrected at a family-wise 1 %
   (fixed seeds). The same test with a wrong move (likelihood raised to the power 1.3) must fail (power).
3. A long chain of the move agrees with NumPyro NUTS on the same posterior: every decision
   value's mean and sd within 5 combined Monte-Carlo standard errors.

Each test runs on ``(β, Ω)`` alone, and with the views' own inputs (``view_features``), where
the decision value is ``βᵀφ̃(h) + γᵀz`` and ``γ ~ N(0, 1/v_γ)`` moves with them; with more inputs
than samples also under ``view_span="training"``, where ``γ = A c`` lies in the inputs' row space
and ``c ~ N(0, 1/v_γ)``.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats as st

import bayesmv  # noqa: F401  (x64)
from bayesmv.inference import sample_niw
from bayesmv.inference.dp import DPState
from bayesmv.inference.m3lak_sampler import joint_beta_omega_step
from bayesmv.inference.m3lak_sampler import sweep as sampler_sweep
from bayesmv.m3lak.settings import model_config
from bayesmv.models import M3LAKConfig, decision_values, logistic_log_likelihood

N, m, M = 5, 2, 3
P = 2 * M + 1
RNG = np.random.default_rng(5)
H = jnp.asarray(RNG.normal(size=(N, m)))
Y = jnp.asarray(np.where(RNG.normal(size=N) + np.asarray(H[:, 0]) > 0, 1.0, -1.0))
VALID = jnp.ones(N, bool)
V_BETA = 0.7
INPUTS = jnp.asarray(RNG.normal(size=(N, 2)))  # z, the views' own inputs (view_features)
V_GAMMA = 1.3
# more inputs than samples: the move runs in their row space and draws γ's null-space part
WIDE_INPUTS = jnp.asarray(RNG.normal(size=(N, 8)))
_U, _S, _VT = jnp.linalg.svd(WIDE_INPUTS, full_matrices=False)
WIDE_SVD = (_U * _S, _VT.T)
# the same wide inputs under view_span="training": γ = A c in their row space (told apart by identity)
SPANNED_INPUTS = jnp.array(WIDE_INPUTS, copy=True)
WITH_INPUTS = pytest.mark.parametrize(
    "inputs",
    [None, INPUTS, WIDE_INPUTS, SPANNED_INPUTS],
    ids=["beta-omega", "with-view-inputs", "with-wide-view-inputs", "with-wide-view-inputs-in-their-span"],
)


def _svd(inputs):
    """The inputs' row space as the sampler gets it (``M3LAKData.inputs_svd``): for wide inputs."""
    return WIDE_SVD if inputs is WIDE_INPUTS or inputs is SPANNED_INPUTS else None


def _view_span(inputs):
    """γ's part outside the row space: drawn from its prior (``"full"``), or zero (``"training"``)."""
    return "training" if inputs is SPANNED_INPUTS else "full"


def _n_weights(inputs):
    return P if inputs is None else P + inputs.shape[1]


def _decision(beta, omega, inputs):
    """βᵀφ̃(h) for every row of H, plus γᵀz with inputs (γ: the weights after β's P)."""
    f = decision_values(H, omega, beta[:P])
    return f if inputs is None else f + inputs @ beta[P:]


def _prior_precisions(inputs):
    return jnp.concatenate([jnp.full(P, V_BETA), jnp.full(_n_weights(inputs) - P, V_GAMMA)])


@functools.cache  # built on first use, not while pytest collects the module
def _dp_state():
    """Two NIW components (general, non-triangular precision square roots), ω_j assigned 0, 1, 1."""
    k = jax.random.PRNGKey(11)
    psi = jnp.broadcast_to(jnp.array([[1.0, 0.3], [0.3, 0.8]]), (2, m, m))
    mu, G, logdet = sample_niw(k, jnp.array([[0.2, -0.1], [-0.3, 0.4]]), jnp.ones(2), jnp.full(2, 5.0), psi)
    return DPState(
        nu=jnp.array([0.5, 0.5]),
        mu=mu,
        prec_sqrt=G,
        logdet_prec=logdet,
        z=jnp.array([0, 1, 1], jnp.int32),
        overflow=jnp.zeros((), bool),
    )


def _log_posterior(beta, omega, C=1.0, inputs=None):
    """log p(β, Ω (, γ) | H, DP, y) + const, written from the model: β ~ N(0, 1/v), γ ~ N(0, 1/v_γ),
    ω_j ~ N(μ_z, Σ_z), each label's log-likelihood weighted by ``C``."""
    dp = _dp_state()
    prec = jnp.einsum("jik,jlk->jil", dp.prec_sqrt, dp.prec_sqrt)[dp.z]  # Σ^{-1} = G Gᵀ
    d = omega - dp.mu[dp.z]
    log_prior = -0.5 * jnp.sum(_prior_precisions(inputs) * beta**2) - 0.5 * jnp.einsum(
        "ji,jil,jl->", d, prec, d
    )
    return log_prior + C * jnp.sum(logistic_log_likelihood(_decision(beta, omega, inputs), Y))


def _exact_draws(key, n, inputs=None):
    """Exact posterior draws by rejection from the prior (the likelihood is ≤ 1)."""
    dp = _dp_state()
    k1, k2, k3 = jax.random.split(key, 3)
    beta = jax.random.normal(k1, (n, _n_weights(inputs))) / jnp.sqrt(_prior_precisions(inputs))
    if inputs is SPANNED_INPUTS:  # γ = A c, c ~ N(0, 1/v_γ): the first N coordinates, turned into γ
        axes = WIDE_SVD[1]
        beta = jnp.concatenate([beta[:, :P], beta[:, P : P + N] @ axes.T], axis=1)
    e = jax.random.normal(k2, (n, M, m))
    G = dp.prec_sqrt[dp.z]
    omega = dp.mu[dp.z] + jnp.linalg.solve(jnp.swapaxes(G, -1, -2)[None], e[..., None])[..., 0]
    loglik = jax.vmap(lambda b, o: jnp.sum(logistic_log_likelihood(_decision(b, o, inputs), Y)))(beta, omega)
    keep = np.asarray(jnp.log(jax.random.uniform(k3, (n,))) < loglik)
    return beta[keep], omega[keep]


def _test_functions(beta, omega, inputs=None):
    f = jax.vmap(lambda b, o: _decision(b, o, inputs))(beta, omega)
    om = omega.reshape(omega.shape[0], -1)
    return np.concatenate([beta, beta**2, om, om**2, f, f**2], axis=1)


def _joint_step(key, omega, beta, step_size, n_steps, C, inputs):
    return joint_beta_omega_step(
        key,
        H,
        omega,
        beta,
        V_BETA,
        _dp_state(),
        Y,
        VALID,
        step_size,
        n_steps,
        C,
        inputs=inputs,
        v_inputs=V_GAMMA,
        inputs_svd=_svd(inputs),
        view_span=_view_span(inputs),
    )


@pytest.mark.parametrize("inputs", [None, INPUTS], ids=["beta-omega", "with-view-inputs"])
@pytest.mark.parametrize("C", [1.0, 2.5])
def test_potential_is_minus_log_posterior(C, inputs):
    """Potential differences between random points equal log-posterior differences (with the
    labels' weight ``C``: a move that ignored it would fail at 2.5). Wide inputs are moved in their
    row space, whose potential leaves γ's null-space part out: the invariance and NUTS tests
    cover them."""
    captured = {}

    def spy(key, x, potential, step_size, n_steps, jitter=0.2):
        captured["potential"] = potential
        return x, jnp.ones(()), jnp.zeros((), bool)

    rng = np.random.default_rng(0)
    points = [
        (jnp.asarray(rng.normal(size=_n_weights(inputs))), jnp.asarray(rng.normal(size=(M, m))))
        for _ in range(4)
    ]
    dp = _dp_state()
    G = dp.prec_sqrt[dp.z]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sampler_sweep, "joint_hmc_step", spy)
        for beta, omega in points:
            b, o, _, _ = _joint_step(None, omega, beta, 0.1, 1, C, inputs)
            np.testing.assert_array_equal(b, beta)  # nothing moved: the old values exactly
            np.testing.assert_array_equal(o, omega)
            x = jnp.concatenate(
                [
                    jnp.sqrt(_prior_precisions(inputs)) * beta,
                    jnp.einsum("jki,jk->ji", G, omega - dp.mu[dp.z]).ravel(),
                ]
            )
            captured.setdefault("pairs", []).append(
                (float(captured["potential"](x)), float(_log_posterior(beta, omega, C, inputs)))
            )
    u, lp = np.array(captured["pairs"]).T
    np.testing.assert_allclose(u - u[0], -(lp - lp[0]), rtol=1e-10, atol=1e-10)


def _invariance_z(inputs, move_sweeps=3, step_size=0.25, n_steps=8):
    start_b, start_o = _exact_draws(jax.random.PRNGKey(1), 300_000, inputs)
    ref_b, ref_o = _exact_draws(jax.random.PRNGKey(2), 300_000, inputs)

    @jax.jit
    def push(keys, beta, omega):
        def one(k, b, o):
            for kk in jax.random.split(k, move_sweeps):
                b, o, _, _ = _joint_step(kk, o, b, step_size, n_steps, 1.0, inputs)
            return b, o

        return jax.vmap(one)(keys, beta, omega)

    b, o = push(jax.random.split(jax.random.PRNGKey(3), start_b.shape[0]), start_b, start_o)
    g1, g0 = _test_functions(b, o, inputs), _test_functions(ref_b, ref_o, inputs)
    z = (g1.mean(0) - g0.mean(0)) / np.sqrt(g1.var(0) / len(g1) + g0.var(0) / len(g0))
    crit = st.norm.ppf(1 - 0.01 / (2 * z.size))
    return z, crit


@pytest.mark.slow
@WITH_INPUTS
def test_joint_move_keeps_exact_posterior_draws_exact(inputs):
    z, crit = _invariance_z(inputs)
    assert np.max(np.abs(z)) < crit, (np.argmax(np.abs(z)), np.max(np.abs(z)), crit)


@pytest.mark.slow
@WITH_INPUTS
def test_invariance_check_detects_a_wrong_move(monkeypatch, inputs):
    monkeypatch.setattr(
        sampler_sweep, "logistic_log_likelihood", lambda f, y: 1.3 * logistic_log_likelihood(f, y)
    )
    z, crit = _invariance_z(inputs)
    assert np.max(np.abs(z)) > crit


@pytest.mark.slow
def test_invariance_check_detects_a_null_space_drawn_in_the_span(monkeypatch):
    """Under ``view_span="training"`` a move that drew γ's null-space part from the prior (the
    ``"full"`` span's move) leaves the posterior: the invariance check sees it (power)."""
    monkeypatch.setitem(globals(), "_view_span", lambda inputs: "full")
    z, crit = _invariance_z(SPANNED_INPUTS)
    assert np.max(np.abs(z)) > crit


@pytest.mark.slow
@WITH_INPUTS
def test_joint_move_agrees_with_nuts(inputs):
    """(β, Ω) | H under the Gaussian spectrum: the joint move's chain and NumPyro NUTS on the same
    NumPyro model agree on every decision value's mean and sd (5 combined MC standard errors)."""
    import arviz as az
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS

    from bayesmv.inference.m3lak_sampler.sweep import _gaussian_dp_state

    cfg = M3LAKConfig.paper(n_latent=m, n_frequencies=M, spectral_prior="gaussian", lengthscale=1.0, v=V_BETA)

    def model():
        beta = numpyro.sample("beta", dist.Normal(0.0, 1.0 / np.sqrt(V_BETA)).expand([P]).to_event(1))
        omega = numpyro.sample("omega", dist.Normal(0.0, cfg.omega_scale).expand([M, m]).to_event(2))
        f = decision_values(H, omega, beta)
        if inputs is SPANNED_INPUTS:  # γ = A c
            c = numpyro.sample("c", dist.Normal(0.0, 1.0 / np.sqrt(V_GAMMA)).expand([N]))
            f = f + inputs @ (WIDE_SVD[1] @ c)
        elif inputs is not None:
            gamma = numpyro.sample(
                "gamma", dist.Normal(0.0, 1.0 / np.sqrt(V_GAMMA)).expand([inputs.shape[1]])
            )
            f = f + inputs @ gamma
        f = numpyro.deterministic("decision", f)
        numpyro.sample("y", dist.Bernoulli(logits=f), obs=(Y > 0).astype(jnp.int32))

    nuts = MCMC(NUTS(model), num_warmup=1000, num_samples=4000, progress_bar=False)
    nuts.run(jax.random.PRNGKey(0))
    f_nuts = np.asarray(nuts.get_samples()["decision"])

    dp = _gaussian_dp_state(cfg)

    def step(carry, k):
        b, o = carry
        b, o, _, _ = joint_beta_omega_step(
            k,
            H,
            o,
            b,
            V_BETA,
            dp,
            Y,
            VALID,
            0.3,
            10,
            1.0,
            inputs=inputs,
            v_inputs=V_GAMMA,
            inputs_svd=_svd(inputs),
            view_span=_view_span(inputs),
        )
        return (b, o), _decision(b, o, inputs)

    init = (jnp.zeros(_n_weights(inputs)), jnp.asarray(np.random.default_rng(1).normal(size=(M, m))))
    _, f_move = jax.lax.scan(jax.jit(step), init, jax.random.split(jax.random.PRNGKey(4), 11000))
    f_move = np.asarray(f_move[1000:])

    def mean_sd_se(f):
        ess = np.array([float(az.ess(f[None, :, i])) for i in range(f.shape[1])])
        mean, sd = f.mean(0), f.std(0)
        return mean, sd, sd / np.sqrt(ess), sd / np.sqrt(2 * ess)

    m1, s1, se_m1, se_s1 = mean_sd_se(f_nuts)
    m2, s2, se_m2, se_s2 = mean_sd_se(f_move)
    np.testing.assert_array_less(np.abs(m1 - m2), 5 * np.hypot(se_m1, se_m2))
    np.testing.assert_array_less(np.abs(s1 - s2), 5 * np.hypot(se_s1, se_s2))


def test_config_rejects_bad_likelihood_settings():
    with pytest.raises(ValueError, match="likelihood"):
        M3LAKConfig.paper(likelihood="probit").validate()
    with pytest.raises(ValueError, match="augmented"):
        M3LAKConfig.paper(likelihood="logistic", augmented=True).validate()
    with pytest.raises(ValueError, match="fixed_blocks"):
        M3LAKConfig.paper(fixed_blocks=("tau",)).validate()
    from bayesmv import M3LAKClassifier
    from bayesmv.models import M3LAKSampler

    with pytest.raises(ValueError, match="fixed_blocks"):
        model_config(
            M3LAKClassifier(sampler=M3LAKSampler(fixed_blocks="H")).get_params()
        )  # a string: no names
    assert M3LAKConfig.paper(fixed_blocks=["H"]).validate().fixed_blocks == ("H",)  # a list: a tuple
    assert model_config(
        M3LAKClassifier().set_params(sampler__fixed_blocks=["H"]).get_params()
    ).fixed_blocks == ("H",)


@pytest.mark.slow
@pytest.mark.parametrize("passes", [1, 2])
def test_fixed_blocks_stay_at_their_initial_values(tiny_problem, passes):
    """Also in the extra passes of H and the latent variable model (``h_lvm_passes``) and of Ω
    and the DP (``kernel_passes``), where a fixed H reports acceptance 1."""
    from bayesmv.inference import run_m3lak

    y = np.where(tiny_problem["y"] > 0, 1.0, -1.0)
    kw = dict(n_latent=2, n_frequencies=3, likelihood="logistic", h_lvm_passes=passes, kernel_passes=passes)
    cfg = M3LAKConfig.paper(**kw, fixed_blocks=("lvm", "omega"))
    post = run_m3lak(tiny_problem["Xs"], y, cfg, num_warmup=4, num_samples=4, random_state=0)
    for name in ("W_0", "V_1", "tau", "r", "omega", "beta"):
        draws = np.asarray(post.samples[name])[0]
        np.testing.assert_array_equal(draws, np.broadcast_to(draws[0], draws.shape), err_msg=name)
    assert np.ptp(np.asarray(post.samples["decision"])[0], axis=0).max() > 0  # H still moves
    if passes == 1:
        return
    cfg = M3LAKConfig.paper(**kw, fixed_blocks=("H",))
    post = run_m3lak(tiny_problem["Xs"], y, cfg, num_warmup=4, num_samples=4, random_state=0)
    np.testing.assert_array_equal(np.asarray(post.extra_stats["accept_prob_H"]), 1.0)
    assert np.ptp(np.asarray(post.samples["tau"])[0], axis=0).max() > 0  # the LVM still moves
    acc_omega = np.asarray(post.extra_stats["accept_prob_omega"])  # the mean over the two passes
    assert np.all((acc_omega >= 0) & (acc_omega <= 1)) and np.ptp(acc_omega) > 0
    assert np.ptp(np.asarray(post.samples["omega"])[0], axis=0).max() > 0  # Ω still moves


@pytest.mark.slow
def test_logistic_predict_proba_is_mean_of_sigmoid(tiny_problem):
    from scipy.special import expit

    from bayesmv import M3LAKClassifier

    est = M3LAKClassifier(
        n_latent=2,
        n_frequencies=5,
        spectral_prior="gaussian",  # the test is about the likelihood; compiles 2x faster
        num_warmup=20,
        num_samples=20,
        num_chains=1,
        random_state=0,
        likelihood="logistic",
    ).fit(tiny_problem["Xs"], tiny_problem["y"])
    proba = est.predict_proba(tiny_problem["Xs"])
    f = est.predictive_decisions(tiny_problem["Xs"])[0]
    np.testing.assert_allclose(proba[:, 1], expit(f).mean(0), rtol=1e-12)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    assert 0 < proba[:, 1].min() and proba[:, 1].max() < 1  # not a vote
    with pytest.raises(ValueError, match="likelihood"):
        M3LAKClassifier(likelihood="probit").fit(tiny_problem["Xs"], tiny_problem["y"])


@pytest.mark.parametrize("C", [1.0, 2.5])
def test_label_weight_scales_every_logistic_log_likelihood(C):
    """``C`` weighs each label's log σ(y f): in H's potential, in the stored pointwise
    log-likelihood (ArviZ's), and in the NumPyro model's ``y`` site."""
    import numpyro
    from scipy.special import log_expit

    from bayesmv.models import hinge_model, pointwise_log_likelihood

    config = M3LAKConfig.paper(likelihood="logistic", C=C, n_latent=m, n_frequencies=M)
    f = jnp.asarray(np.random.default_rng(3).normal(size=N) * 3.0)
    expected = C * log_expit(np.asarray(Y * f))
    np.testing.assert_allclose(-sampler_sweep._label_energy(f, Y, None, config), expected, rtol=1e-12)
    np.testing.assert_allclose(pointwise_log_likelihood(f, Y, config), expected, rtol=1e-12)
    features = jnp.asarray(np.random.default_rng(4).normal(size=(N, P)))
    beta = jnp.asarray(np.random.default_rng(5).normal(size=P))
    with numpyro.handlers.trace() as tr, numpyro.handlers.substitute(data={"beta": beta}):
        hinge_model(features, Y, config)
    site = tr["y"]
    got = site["scale"] * site["fn"].log_prob(site["value"])
    np.testing.assert_allclose(got, C * log_expit(np.asarray(Y * (features @ beta))), rtol=1e-12)
