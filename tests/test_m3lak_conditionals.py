"""Each M3LAK conjugate conditional against a brute-force reference on a tiny problem.

Gaussian conditionals: the exact mean/covariance is computed independently from the
unnormalised joint log density written from the model equations (its Hessian and gradient at
0: exact for a Gaussian), and compared with the moments of 20,000 draws (fixed seed; tolerance
5 Monte-Carlo standard errors). Scalar non-Gaussian conditionals (λ, r, τ, v): the unnormalised
density is normalised on a fine grid and compared with the draws by a Kolmogorov–Smirnov test
(fixed seed; fails if p < 1e-3).
"""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats as st

import bayesmv  # noqa: F401  (x64)
from bayesmv.inference import (
    DPCapacityError,
    rowwise_hmc_step,
    run_m3lak,
    sample_beta_conditional,
    sample_inverse_gaussian,
    sample_lambda_conditional,
    sample_niw,
    sample_r_conditional,
    sample_tau_conditional,
    sample_u_conditional,
    sample_v_conditional,
    sample_wv_conditional,
)
from bayesmv.inference.conditionals import collapsed_precision_log_density, u_collapsed_log_likelihood
from bayesmv.inference.slice import elliptical_slice_step, slice_step
from bayesmv.models import M3LAKConfig, augmented_hinge_log_factor, feature_map

NDRAW = 20000
KEYS = jax.random.split(jax.random.PRNGKey(123), NDRAW)
# noise precision of the tiny problem's view: one per view, or one per feature (noise="feature")
NOISE = pytest.mark.parametrize("tau", [1.7, np.array([1.7, 0.6, 3.1])], ids=["per_view", "per_feature"])


def _gaussian_reference(logp, dim):
    """Mean and covariance of the Gaussian ``exp(logp)`` from its Hessian and gradient at 0."""
    x0 = jnp.zeros(dim)
    Hs = jax.hessian(logp)(x0)
    g = jax.grad(logp)(x0)
    cov = np.linalg.inv(-np.asarray(Hs))
    return cov @ np.asarray(g), cov


def _check_moments(draws, mean, cov, n_se=5.0):
    draws = np.asarray(draws).reshape(draws.shape[0], -1)
    n = draws.shape[0]
    sd = np.sqrt(np.diag(cov))
    np.testing.assert_array_less(np.abs(draws.mean(0) - mean), n_se * sd / np.sqrt(n))
    emp = np.cov(draws.T)
    # se of a covariance entry ≈ sqrt((Σ_ii Σ_jj + Σ_ij²)/n)
    se = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov**2) / n)
    np.testing.assert_array_less(np.abs(emp - cov), n_se * se)


def _grid_ks(draws, logdens, lo, hi, n=200001):
    """KS test of positive draws against ``exp(logdens)`` normalised on a log-spaced grid
    (trapezoid rule in ``log x``, so integrable singularities at 0 are resolved)."""
    grid = np.geomspace(lo, hi, n)
    lp = np.asarray(logdens(grid)) + np.log(grid)  # density of log x
    p = np.exp(lp - lp.max())
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (p[1:] + p[:-1]) * np.diff(np.log(grid)))])
    cdf /= cdf[-1]
    pval = st.kstest(np.asarray(draws), lambda x: np.interp(x, grid, cdf)).pvalue
    assert pval > 1e-3, pval
    return pval


@pytest.fixture(scope="module")
def tiny():
    rng = np.random.default_rng(0)
    N, m, K, D, M = 6, 2, 1, 3, 2
    H = rng.normal(size=(N, m))
    U = rng.normal(size=(N, K))
    W = rng.normal(size=(D, m))
    V = 0.5 * rng.normal(size=(D, K))
    X = rng.normal(size=(N, D))
    obs = np.array([True, True, False, True, True, True])
    omega = rng.normal(size=(M, m))
    y = np.array([1.0, -1, 1, 1, -1, -1])
    lam = rng.gamma(1.0, 1.0, size=N) + 0.05
    return dict(
        N=N,
        m=m,
        K=K,
        D=D,
        M=M,
        H=H,
        U=U,
        W=W,
        V=V,
        X=X * obs[:, None],
        obs=obs,
        omega=omega,
        y=y,
        lam=lam,
        tau=1.7,
        r=np.array([0.8, 2.5]),
        eta=3.0,
    )


@pytest.mark.slow
def test_beta_conditional_matches_joint(tiny):
    C, v = 0.7, 0.5
    feats = feature_map(jnp.asarray(tiny["H"]), jnp.asarray(tiny["omega"]))
    y, lam = jnp.asarray(tiny["y"]), jnp.asarray(tiny["lam"])

    def logp(beta):  # prior + augmented factor of the model (eq. 1 left-hand side)
        return -0.5 * v * beta @ beta + jnp.sum(augmented_hinge_log_factor(feats @ beta, y, lam, C))

    mean, cov = _gaussian_reference(logp, feats.shape[1])
    draws = jax.vmap(lambda k: sample_beta_conditional(k, feats, y, lam, C, v))(KEYS)
    _check_moments(draws, mean, cov)


@pytest.mark.parametrize("decision,y", [(0.3, 1.0), (2.5, 1.0), (0.4, -1.0), (1.0 - 1e-13, 1.0)])
def test_lambda_conditional_matches_grid(decision, y):
    C = 1.3
    draws = jax.vmap(lambda k: sample_lambda_conditional(k, jnp.asarray(decision), jnp.asarray(y), C))(
        KEYS[:5000]
    )
    assert np.all(np.asarray(draws) > 0)

    def logdens(lam):  # the augmented factor as a function of λ (eq. 2)
        return np.asarray(augmented_hinge_log_factor(decision, y, jnp.asarray(lam), C))

    _grid_ks(draws, logdens, 1e-14, 60.0)


def test_inverse_gaussian_sampler():
    for mean, shape in [(0.5, 1.0), (3.0, 2.0), (1e6, 1.0)]:
        x = jax.vmap(lambda k: sample_inverse_gaussian(k, jnp.asarray(mean), shape))(KEYS[:5000])
        ref = st.invgauss(mean / shape, scale=shape)
        assert st.kstest(np.asarray(x), ref.cdf).pvalue > 1e-3


@NOISE
def test_u_conditional_matches_joint_and_prior_for_missing(tiny, tau):
    t = tiny
    n = 0  # an observed row

    def logp(u):
        r = t["X"][n] - t["W"] @ t["H"][n] - t["V"] @ u
        return -0.5 * u @ u - 0.5 * r @ (tau * r)

    mean, cov = _gaussian_reference(logp, t["K"])
    draws = jax.vmap(
        lambda k: sample_u_conditional(
            k,
            jnp.asarray(t["X"]),
            jnp.asarray(t["H"]),
            jnp.asarray(t["W"]),
            jnp.asarray(t["V"]),
            jnp.asarray(tau),
            jnp.asarray(t["obs"]),
        )
    )(KEYS)
    _check_moments(draws[:, n], mean, cov)
    _check_moments(draws[:, 2], np.zeros(t["K"]), np.eye(t["K"]))  # missing row: prior


@pytest.mark.slow
@NOISE
def test_wv_conditional_is_joint_gaussian(tiny, tau):
    t = tiny
    m, K, D = t["m"], t["K"], t["D"]
    obs = t["obs"]

    def logp(b):
        B = b.reshape(D, m + K)
        W, V = B[:, :m], B[:, m:]
        resid = (t["X"] - t["H"] @ W.T - t["U"] @ V.T)[obs]
        return (
            -0.5 * jnp.sum(t["r"] * jnp.sum(W**2, 0))
            - 0.5 * t["eta"] * jnp.sum(V**2)
            - 0.5 * jnp.sum(tau * resid**2)
        )

    mean, cov = _gaussian_reference(logp, D * (m + K))
    assert np.abs(cov[0, m]) > 1e-3  # W and V really are correlated: the joint update matters

    def draw(k):
        W, V = sample_wv_conditional(
            k,
            jnp.asarray(t["X"]),
            jnp.asarray(t["H"]),
            jnp.asarray(t["U"]),
            jnp.asarray(t["r"]),
            t["eta"],
            jnp.asarray(tau),
            jnp.asarray(obs),
        )
        return jnp.concatenate([W, V], 1).ravel()

    _check_moments(jax.vmap(draw)(KEYS), mean, cov)


def test_r_conditional_matches_grid(tiny):
    W = jnp.asarray(tiny["W"])
    a_r, b_r = 0.1, 1e-5
    draws = jax.vmap(lambda k: sample_r_conditional(k, W, a_r, b_r))(KEYS[:5000])
    for j in range(W.shape[1]):
        w = np.asarray(W[:, j])

        def logdens(r):  # Gamma prior × N(w_j | 0, r^{-1} I)
            return st.gamma(a_r, scale=1 / b_r).logpdf(r) + st.norm(0, 1 / np.sqrt(r)).logpdf(w[:, None]).sum(
                0
            )

        _grid_ks(draws[:, j], logdens, 1e-6, 40.0)


def test_tau_conditional_matches_grid(tiny):
    t = tiny
    a_t, b_t = 0.01, 1e-5
    draws = jax.vmap(
        lambda k: sample_tau_conditional(
            k,
            jnp.asarray(t["X"]),
            jnp.asarray(t["H"]),
            jnp.asarray(t["U"]),
            jnp.asarray(t["W"]),
            jnp.asarray(t["V"]),
            jnp.asarray(t["obs"]),
            a_t,
            b_t,
        )
    )(KEYS[:5000])
    resid = (t["X"] - t["H"] @ t["W"].T - t["U"] @ t["V"].T)[t["obs"]].ravel()

    def logdens(tau):
        return st.gamma(a_t, scale=1 / b_t).logpdf(tau) + st.norm(0, 1 / np.sqrt(tau)).logpdf(
            resid[:, None]
        ).sum(0)

    _grid_ks(draws, logdens, 1e-6, 5.0)


def test_per_feature_tau_conditional_matches_grid(tiny):
    """noise="feature": each τ_d from its own Gamma conditional, given feature d's residuals only."""
    t = tiny
    a_t, b_t = 0.01, 1e-5
    args = [jnp.asarray(t[k]) for k in ("X", "H", "U", "W", "V", "obs")]
    draws = jax.vmap(lambda k: sample_tau_conditional(k, *args, a_t, b_t, per_feature=True))(KEYS[:5000])
    assert draws.shape == (5000, t["D"])
    resid = (t["X"] - t["H"] @ t["W"].T - t["U"] @ t["V"].T)[t["obs"]]
    for d in range(t["D"]):

        def logdens(tau):
            prior = st.gamma(a_t, scale=1 / b_t).logpdf(tau)
            return prior + st.norm(0, 1 / np.sqrt(tau)).logpdf(resid[:, d, None]).sum(0)

        _grid_ks(draws[:, d], logdens, 1e-6, 50.0)


def test_v_conditional_matches_grid():
    beta = jnp.asarray(np.random.default_rng(1).normal(size=5))
    draws = jax.vmap(lambda k: sample_v_conditional(k, beta, 2.0, 0.5))(KEYS[:5000])

    def logdens(v):
        return st.gamma(2.0, scale=2.0).logpdf(v) + st.norm(0, 1 / np.sqrt(v)).logpdf(
            np.asarray(beta)[:, None]
        ).sum(0)

    _grid_ks(draws, logdens, 1e-6, 20.0)


def test_niw_draws_match_scipy_moments():
    """E[Σ] = Ψ/(ν - m - 1), E[Σ^{-1}] = ν Ψ^{-1}, E[μ] = μ_n, Cov[μ] = E[Σ]/κ."""
    m, nu, kappa = 2, 7.0, 2.0
    psi = np.array([[2.0, 0.3], [0.3, 0.5]])
    mu_n = np.array([0.4, -1.0])
    n = 20000
    mu, G, logdet = sample_niw(
        jax.random.PRNGKey(5),
        jnp.broadcast_to(mu_n, (n, m)),
        kappa * jnp.ones(n),
        nu * jnp.ones(n),
        jnp.broadcast_to(psi, (n, m, m)),
    )
    prec = np.asarray(G @ jnp.swapaxes(G, -1, -2))
    Sigma = np.linalg.inv(prec)
    np.testing.assert_allclose(np.linalg.slogdet(prec)[1], np.asarray(logdet), atol=1e-8)
    np.testing.assert_allclose(prec.mean(0), nu * np.linalg.inv(psi), rtol=0.03)
    np.testing.assert_allclose(Sigma.mean(0), psi / (nu - m - 1), rtol=0.05, atol=0.01)
    np.testing.assert_allclose(np.asarray(mu).mean(0), mu_n, atol=0.02)
    np.testing.assert_allclose(np.cov(np.asarray(mu).T), psi / (nu - m - 1) / kappa, rtol=0.06, atol=0.01)
    # same law as scipy's inverse Wishart (first coordinate's variance; KS on Σ_11)
    ref = st.invwishart(df=nu, scale=psi).rvs(size=20000, random_state=0)
    assert st.ks_2samp(Sigma[:, 0, 0], ref[:, 0, 0]).pvalue > 1e-3


def test_decision_values_and_their_derivatives_match_the_feature_map():
    from bayesmv.models import decision_values

    k = jax.random.split(jax.random.PRNGKey(5), 3)
    H, om, b = (
        jax.random.normal(k[0], (6, 3)),
        2 * jax.random.normal(k[1], (4, 3)),
        jax.random.normal(k[2], (9,)),
    )

    def reference(H, om, b):
        return feature_map(H, om) @ b

    np.testing.assert_allclose(decision_values(H, om, b), reference(H, om, b), atol=1e-14)
    for jac in (jax.jacrev, jax.jacfwd):  # reverse mode (HMC gradients) and forward mode
        got = jax.jit(jac(decision_values, (0, 1, 2)))(H, om, b)
        want = jax.jit(jac(reference, (0, 1, 2)))(H, om, b)
        for g, w in zip(got, want):  # with respect to H, Ω and β
            np.testing.assert_allclose(g, w, atol=1e-13)


def test_batched_back_substitution_matches_scipy():
    from bayesmv.inference.dp import _solve_upper_batched

    rng = np.random.default_rng(0)
    U = np.triu(rng.normal(size=(7, 5, 5))) + 3 * np.eye(5)
    B = rng.normal(size=(7, 5, 2))
    ref = np.stack([np.linalg.solve(u, b) for u, b in zip(U, B)])
    np.testing.assert_allclose(_solve_upper_batched(jnp.asarray(U), jnp.asarray(B)), ref, atol=1e-13)


def test_rowwise_hmc_targets_each_row():
    """Rows with different Gaussian targets (means μ_n, precision P) are sampled correctly."""
    mus = jnp.array([[0.0, 0.0], [3.0, -1.0], [-2.0, 5.0]])
    P = jnp.array([[4.0, 1.0], [1.0, 2.0]])

    def pot(x):
        d = x - mus
        return 0.5 * jnp.sum((d @ P) * d, -1)

    def step(x, k):
        x, acc, _ = rowwise_hmc_step(k, x, pot, 0.4, 5)
        return x, x

    _, xs = jax.lax.scan(step, mus, jax.random.split(jax.random.PRNGKey(0), 20000))
    xs = np.asarray(xs[1000:])
    np.testing.assert_allclose(xs.mean(0), np.asarray(mus), atol=0.05)
    cov = np.linalg.inv(np.asarray(P))
    for n in range(3):
        np.testing.assert_allclose(np.cov(xs[:, n].T), cov, atol=0.04)


# ---------------------------------------------------------------------------------------------
# driver contract
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_run():
    rng = np.random.default_rng(0)
    N = 40
    H = rng.normal(size=(N, 2))
    Xs = [
        H @ rng.normal(size=(2, 3)) + 0.3 * rng.normal(size=(N, 3)),
        H @ rng.normal(size=(2, 4)) + 0.3 * rng.normal(size=(N, 4)),
    ]
    Xs[1][:5] = np.nan
    y = np.where(H[:, 0] > 0, 1.0, -1.0)
    cfg = M3LAKConfig.paper(n_latent=3, n_frequencies=4, dp_capacity=20, v_prior=(1.0, 1.0))
    post = run_m3lak(Xs, y, cfg, num_warmup=30, num_samples=20, num_chains=2, random_state=0)
    return Xs, y, cfg, post


@pytest.mark.slow
def test_run_m3lak_contract(small_run):
    Xs, y, cfg, post = small_run
    s = post.samples
    C_, S_ = 2, 20
    assert s["beta"].shape == (C_, S_, 2 * 4 + 1)
    assert s["omega"].shape == (C_, S_, 4, 3)
    assert s["W_0"].shape == (C_, S_, 3, 3) and s["W_1"].shape == (C_, S_, 4, 3)
    assert s["V_0"].shape == (C_, S_, 3, 1) and s["V_1"].shape == (C_, S_, 4, 1)
    assert s["tau"].shape == (C_, S_, 2) and s["r"].shape == (C_, S_, 2, 3)
    assert s["decision"].shape == (C_, S_, 40)
    assert s["dp_weights"].shape == (C_, S_, 20) and s["dp_assignments"].shape == (C_, S_, 4)
    assert s["dp_n_active"].shape == (C_, S_) and s["v"].shape == (C_, S_)
    assert np.all(s["dp_n_active"] >= 1)
    for k in ("accept_prob_H", "accept_prob_omega", "diverging", "diverging_H", "diverging_omega"):
        assert post.extra_stats[k].shape == (C_, S_)
    assert all(np.all(np.isfinite(np.asarray(v))) for v in s.values())
    # decision is βᵀφ̃ consistent with the stored β (last entry = bias)
    assert np.mean(np.sign(np.asarray(s["decision"]).mean((0, 1))) == y) > 0.8
    # the two chains differ
    assert not np.allclose(s["beta"][0], s["beta"][1])


@pytest.mark.slow
def test_divergences_are_flagged_per_block(small_run):
    """A step size of 5 for the Ω block (no warm-up to adapt it) makes its trajectories
    diverge; the H block keeps its own step size. ``diverging`` is the union of the per-block
    flags, and the convergence report counts them by block."""

    from bayesmv.diagnostics import check_convergence, to_inference_data

    Xs, y, cfg, _ = small_run
    cfg = M3LAKConfig.from_settings(cfg, init_step_size=5.0)
    post = run_m3lak(Xs, y, cfg, num_warmup=0, num_samples=10, random_state=0)
    stats = {k: np.asarray(v) for k, v in post.extra_stats.items()}
    assert stats["diverging_omega"].sum() >= 5
    np.testing.assert_array_equal(stats["diverging"], stats["diverging_H"] | stats["diverging_omega"])
    idata = to_inference_data(post.samples, extra_sample_stats=post.extra_stats)
    report = check_convergence(idata, var_names=["tau"])
    n_H, n_omega = int(stats["diverging_H"].sum()), int(stats["diverging_omega"].sum())
    assert f"divergent transitions by block: H {n_H}, omega {n_omega}" in report.info


@pytest.mark.slow
def test_run_m3lak_equals_numpyro_mcmc_and_refits_without_recompiling(small_run):
    """The cached driver gives NumPyro's own multi-chain draws, and a second run of the same
    shapes reuses the compiled loop (one cache entry, no new compile)."""
    from numpyro.infer import MCMC

    from bayesmv.diagnostics import to_inference_data
    from bayesmv.inference.m3lak_sampler import EXTRA_FIELDS, M3LAKKernel, prepare_data
    from bayesmv.inference.m3lak_sampler.run import _clear_compiled_chains, _draw_chain, _init_chain

    Xs, y, cfg, post = small_run
    mcmc = MCMC(
        M3LAKKernel(cfg),
        num_warmup=30,
        num_samples=20,
        num_chains=2,
        chain_method="sequential",
        progress_bar=False,
        jit_model_args=True,
    )
    mcmc.run(jax.random.PRNGKey(0), prepare_data(Xs, y), extra_fields=EXTRA_FIELDS)
    ref = mcmc.get_samples(group_by_chain=True)
    for name in ("beta", "omega", "tau", "decision", "dp_weights"):
        np.testing.assert_array_equal(post.samples[name], ref[name], err_msg=name)
    np.testing.assert_array_equal(
        post.extra_stats["diverging"], mcmc.get_extra_fields(group_by_chain=True)["diverging"]
    )

    # one draw program serves the warm-up and the draws (chunks of gcd(30, 20) = 10 sweeps), and a
    # refit with other data of the same shapes compiles nothing
    _clear_compiled_chains()
    again = run_m3lak(
        [X + 0.01 for X in Xs], y, cfg, num_warmup=30, num_samples=20, num_chains=2, random_state=1
    )
    assert (_init_chain._cache_size(), _draw_chain._cache_size()) == (1, 1)
    run_m3lak([X - 0.01 for X in Xs], y, cfg, num_warmup=30, num_samples=20, num_chains=2, random_state=2)
    assert (_init_chain._cache_size(), _draw_chain._cache_size()) == (1, 1)
    assert not np.allclose(again.samples["beta"], post.samples["beta"])

    idata = to_inference_data(post.samples, extra_sample_stats=post.extra_stats)
    assert "beta" in idata.posterior and "accept_prob_H" in idata.sample_stats
    assert idata.posterior["decision"].shape[:2] == (2, 20)


@pytest.mark.slow
def test_run_m3lak_equals_numpyro_mcmc_when_sweeps_do_not_chunk(small_run):
    """num_warmup = 3, num_samples = 2 (gcd 1): the warm-up is one call and the draws another;
    the draws still equal NumPyro's single ``MCMC.run``."""
    from numpyro.infer import MCMC

    from bayesmv.inference.m3lak_sampler import EXTRA_FIELDS, M3LAKKernel, prepare_data

    Xs, y, cfg, _ = small_run
    post = run_m3lak(Xs, y, cfg, num_warmup=3, num_samples=2, random_state=0)
    mcmc = MCMC(M3LAKKernel(cfg), num_warmup=3, num_samples=2, progress_bar=False, jit_model_args=True)
    mcmc.run(jax.random.PRNGKey(0), prepare_data(Xs, y), extra_fields=EXTRA_FIELDS)
    for name in ("beta", "omega", "tau", "decision"):
        np.testing.assert_array_equal(post.samples[name][0], mcmc.get_samples()[name], err_msg=name)


@pytest.mark.slow
def test_vectorized_chains_are_valid_and_distinct(small_run):
    """``chain_method="vectorized"``: the same contract (shapes, finite draws, distinct chains)."""
    Xs, y, cfg, post = small_run
    vec = run_m3lak(
        Xs, y, cfg, num_warmup=30, num_samples=20, num_chains=2, chain_method="vectorized", random_state=0
    )
    for name, value in post.samples.items():
        assert vec.samples[name].shape == value.shape, name
        assert np.all(np.isfinite(np.asarray(vec.samples[name]))), name
    assert not np.allclose(vec.samples["beta"][0], vec.samples["beta"][1])
    assert np.mean(np.sign(np.asarray(vec.samples["decision"]).mean((0, 1))) == y) > 0.8
    # continued by 20 draws, the vectorized chains equal one run of 40 (chunks of 10 sweeps)
    kw = dict(num_warmup=30, num_chains=2, chain_method="vectorized", random_state=0)
    more = run_m3lak(Xs, y, cfg, num_samples=20, init_state=vec.chain_states, **kw)
    once = run_m3lak(Xs, y, cfg, num_samples=40, **kw)
    for name in ("beta", "omega", "tau", "decision"):
        joined = np.concatenate([vec.samples[name], more.samples[name]], axis=1)
        np.testing.assert_array_equal(joined, once.samples[name], err_msg=name)


@pytest.mark.slow
def test_process_chains_equal_sequential_chains(small_run, monkeypatch):
    """``chain_method="processes"``: 3 chains over 2 worker processes (whatever the machine's
    CPU count) give the draws, sampler statistics and last states of ``"sequential"`` exactly
    (at these small shapes XLA's thread count does not change the arithmetic; see
    :func:`test_process_chains_equal_one_cpu_sequential_chains`),
    and a continuation from those states equals the sequential continuation. (Under the suite's
    persistent compilation cache each worker compiles its programs; see the next test.)"""
    from bayesmv.inference.m3lak_sampler import run

    monkeypatch.setattr(run, "cpu_count", lambda: 2)
    Xs, y, cfg, _ = small_run
    kw = dict(num_warmup=30, num_samples=20, num_chains=3, random_state=4)
    seq = run_m3lak(Xs, y, cfg, **kw)
    proc = run_m3lak(Xs, y, cfg, chain_method="processes", **kw)
    for group in ("samples", "extra_stats"):
        for name, value in getattr(seq, group).items():
            np.testing.assert_array_equal(getattr(proc, group)[name], value, err_msg=name)
    jax.tree.map(np.testing.assert_array_equal, proc.chain_states, seq.chain_states)
    more_seq = run_m3lak(Xs, y, cfg, init_state=seq.chain_states, **kw)
    more_proc = run_m3lak(Xs, y, cfg, chain_method="processes", init_state=proc.chain_states, **kw)
    for name in ("beta", "omega", "tau", "decision"):
        np.testing.assert_array_equal(more_proc.samples[name], more_seq.samples[name], err_msg=name)
    assert not np.allclose(more_seq.samples["beta"], seq.samples["beta"])
    shown = run_m3lak(Xs, y, cfg, chain_method="processes", progress_bar=True, **kw)  # bars from the workers
    np.testing.assert_array_equal(shown.samples["decision"], proc.samples["decision"])


@pytest.mark.slow
def test_process_chains_read_their_programs_from_the_persistent_cache(small_run, monkeypatch, tmp_path):
    """Under JAX's persistent compilation cache (on in this suite), ``"processes"`` compiles the
    chain programs here, into the cache, under the keys its workers look up: the programs enter
    the cache before any worker starts (the init and the one draw program: 2 entries), and the
    fit's 2 workers then add none (workers that compiled their own programs, under other keys,
    would add entries). Run on a cache of its own, empty at the start, and with worker processes
    started on it: the suite's cache may hold these programs already, and the pool's workers may
    have started on another cache."""

    from jax.experimental.compilation_cache import compilation_cache
    from joblib.externals.loky import get_reusable_executor

    from bayesmv.inference.m3lak_sampler import prepare_data, run

    if not (jax.config.jax_enable_compilation_cache and jax.config.jax_compilation_cache_dir):
        pytest.skip("the persistent compilation cache is off (BAYESMV_TEST_NO_JAX_CACHE)")
    monkeypatch.setattr(run, "cpu_count", lambda: 2)
    Xs, y, cfg, _ = small_run
    cfg = M3LAKConfig.from_settings(cfg, C=0.77)  # programs that no other test compiles (nor holds in memory)
    settings = run._RunSettings(cfg, None, None, 30, 20, 1)
    cache = tmp_path / "jax-cache"

    def use_cache(path):  # this process, and worker processes started from now on
        os.environ["JAX_COMPILATION_CACHE_DIR"] = str(path)
        compilation_cache.set_cache_dir(str(path))
        compilation_cache.reset_cache()
        get_reusable_executor(kill_workers=True).shutdown(wait=True)

    def entries():  # the chain programs' entries (other programs of this process may enter too)
        names = os.listdir(cache) if cache.is_dir() else []
        return {name for name in names if name.startswith(("jit__init_chain", "jit__draw_chain"))}

    suite_cache = jax.config.jax_compilation_cache_dir
    use_cache(cache)
    try:
        assert not entries()
        assert run._serialized_programs(settings, prepare_data(Xs, y), jax.random.PRNGKey(4), True) is None
        compiled = entries()
        assert len(compiled) == 2
        run_m3lak(
            Xs, y, cfg, num_warmup=30, num_samples=20, num_chains=2, random_state=4, chain_method="processes"
        )
        assert entries() == compiled
    finally:
        use_cache(suite_cache)


_PROCESSES_CHILD = """
import logging, sys
import jax, numpy as np
from bayesmv.inference import run_m3lak
from bayesmv.inference.m3lak_sampler import prepare_data, run
from bayesmv.models import M3LAKConfig

run.cpu_count = lambda: 2
saved = np.load(sys.argv[1])
Xs, y = [saved["X0"], saved["X1"]], saved["y"]
cfg = M3LAKConfig.paper(n_latent=3, n_frequencies=4, dp_capacity=20, v_prior=(1.0, 1.0))
settings = run._RunSettings(cfg, None, None, 30, 20, 1)
init, draws = run._serialized_programs(settings, prepare_data(Xs, y), jax.random.PRNGKey(4), True)
assert init is not None and set(draws) == {settings._replace(num_samples=10)}, "not serialized"
kw = dict(num_warmup=30, num_samples=20, num_chains=3, random_state=4, chain_method="processes")
proc = run_m3lak(Xs, y, cfg, **kw)
messages = []
class Collect(logging.Handler):
    def emit(self, record):
        messages.append(record.getMessage())
for name in ("jax._src.dispatch", "jax._src.interpreters.pxla"):
    logging.getLogger(name).addHandler(Collect(level=logging.DEBUG))
jax.config.update("jax_log_compiles", True)  # not the context: the compilation runs in a thread
more = run_m3lak(Xs, y, cfg, init_state=proc.chain_states, **kw)
assert not any("_draw_chain" in message for message in messages), messages
for name in ("beta", "omega", "tau", "decision"):
    np.testing.assert_array_equal(proc.samples[name], saved[name], err_msg=name)
    np.testing.assert_array_equal(more.samples[name], saved["more_" + name], err_msg=name)
print("equal")
"""


@pytest.mark.slow
def test_process_chains_run_programs_compiled_once(small_run, tmp_path):
    """Without a persistent compilation cache (a fresh Python process), ``"processes"`` compiles
    the chain programs once, in the calling process, and its 2 workers load them: the programs
    serialize, a continuation compiles nothing (it finds the fit's programs), and the draws of
    the fit and of its continuation equal ``"sequential"`` ones (run here)."""
    import os
    import subprocess
    import sys

    Xs, y, cfg, _ = small_run
    kw = dict(num_warmup=30, num_samples=20, num_chains=3, random_state=4)
    seq = run_m3lak(Xs, y, cfg, **kw)
    more = run_m3lak(Xs, y, cfg, init_state=seq.chain_states, **kw)
    names = ("beta", "omega", "tau", "decision")
    draws = {**{n: seq.samples[n] for n in names}, **{"more_" + n: more.samples[n] for n in names}}
    np.savez(tmp_path / "data.npz", X0=Xs[0], X1=Xs[1], y=y, **draws)
    env = {k: v for k, v in os.environ.items() if k != "JAX_COMPILATION_CACHE_DIR"}
    child = subprocess.run(
        [sys.executable, "-c", _PROCESSES_CHILD, str(tmp_path / "data.npz")],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert child.returncode == 0, child.stderr[-3000:]
    assert child.stdout.strip().endswith("equal")


_PIN_CHILD = """
import os, threading
from bayesmv.inference._threads import pin_to_one_cpu

allowed = sorted(os.sched_getaffinity(0))
done = threading.Event()
worker = threading.Thread(target=done.wait)
worker.start()
pin_to_one_cpu(len(allowed) + 1)
cpus = {tid: os.sched_getaffinity(int(tid)) for tid in os.listdir("/proc/self/task")}
done.set()
worker.join()
want = {allowed[(len(allowed) + 1) % len(allowed)]}
assert len(cpus) >= 2 and all(c == want for c in cpus.values()), (cpus, want)
print("pinned")
"""


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this OS")
def test_process_workers_pin_every_thread_to_one_cpu():
    """A ``"processes"`` worker (``pin_to_one_cpu(slot)``) restricts all of its threads, those
    already running included, to the ``slot``-th of its allowed CPUs, modulo their number (run in
    a child process, so that this one keeps its CPUs)."""
    import subprocess
    import sys

    child = subprocess.run([sys.executable, "-c", _PIN_CHILD], capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-3000:]
    assert child.stdout.strip() == "pinned"


_ONE_CPU_SEQUENTIAL_CHILD = """
import sys
from bayesmv.inference._threads import pin_to_one_cpu

pin_to_one_cpu(0)  # before JAX starts its backend: a one-thread XLA pool, as in a worker
import numpy as np
from bayesmv.inference import run_m3lak
from bayesmv.models import M3LAKConfig

saved = np.load(sys.argv[1])
cfg = M3LAKConfig.paper(n_latent=2, n_frequencies=3, likelihood="logistic", precision_update="collapsed")
post = run_m3lak([saved["X0"], saved["X1"]], saved["y"], cfg, num_warmup=20, num_samples=20, num_chains=2)
np.save(sys.argv[2], post.samples["decision"])
"""


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this OS")
def test_process_chains_equal_one_cpu_sequential_chains(tmp_path, monkeypatch):
    """At N = 400 and 40 features per view, XLA:CPU's sums round differently with one thread
    than with two, so ``"sequential"`` draws depend on the CPUs of the process that runs them.
    ``"processes"`` workers run on one CPU each: their draws equal ``"sequential"`` ones in a
    child process pinned to one CPU, whatever this machine's CPU count."""
    import subprocess
    import sys

    from bayesmv.inference.m3lak_sampler import run

    monkeypatch.setattr(run, "cpu_count", lambda: 2)
    rng = np.random.default_rng(0)
    H = rng.normal(size=(400, 2))
    Xs = [H @ rng.normal(size=(2, 40)) + 0.3 * rng.normal(size=(400, 40)) for _ in range(2)]
    y = np.where(H[:, 0] > 0, 1.0, -1.0)
    np.savez(tmp_path / "data.npz", X0=Xs[0], X1=Xs[1], y=y)
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            _ONE_CPU_SEQUENTIAL_CHILD,
            str(tmp_path / "data.npz"),
            str(tmp_path / "seq.npy"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert child.returncode == 0, child.stderr[-3000:]
    cfg = M3LAKConfig.paper(n_latent=2, n_frequencies=3, likelihood="logistic", precision_update="collapsed")
    proc = run_m3lak(Xs, y, cfg, num_warmup=20, num_samples=20, num_chains=2, chain_method="processes")
    np.testing.assert_array_equal(proc.samples["decision"], np.load(tmp_path / "seq.npy"))


def test_process_count_falls_back_to_this_process(monkeypatch):
    """``"processes"`` uses one worker per CPU up to the chains, on the CPU backend without a data
    mesh; with one chain, on an accelerator backend or with a mesh it runs in this process (1)."""
    from bayesmv.inference.m3lak_sampler import run

    monkeypatch.setattr(run, "cpu_count", lambda: 3)
    plain = run._RunSettings(M3LAKConfig.paper(), None, None, 10, 10, 1)
    meshed = plain._replace(mesh=object())
    assert run._process_count(plain, "processes", 4) == 3
    assert run._process_count(plain, "processes", 2) == 2
    assert run._process_count(plain, "processes", 1) == 1
    assert run._process_count(plain, "sequential", 4) == 1
    assert run._process_count(meshed, "processes", 4) == 1
    monkeypatch.setattr(run.jax, "default_backend", lambda: "gpu")
    assert run._process_count(plain, "processes", 4) == 1


@pytest.mark.slow
def test_initial_dp_table_holds_every_frequency_in_one_component(small_run):
    """The start's DP table: every ω in slot 0, its stick ν_0 ~ Beta(1 + M, α) and its mean
    μ_0 ~ N((κ0 μ0 + Σ ω) / (κ0 + M), ·) given the start's own ω (checked over 400 keys against
    these closed-form means, 5 standard errors), the other slots' sticks Beta(1, α)."""
    from bayesmv.inference.m3lak_sampler import initial_latent, prepare_data

    Xs, y, cfg, _ = small_run
    data = prepare_data([(X - np.nanmean(X, 0)) / np.nanstd(X, 0) for X in Xs], y)
    keys = jax.random.split(jax.random.PRNGKey(7), 400)
    latent = jax.jit(jax.vmap(lambda k: initial_latent(k, data, cfg)))(keys)
    dp, M, alpha = latent.dp, cfg.n_frequencies, cfg.alpha
    assert np.all(np.asarray(dp.z) == 0) and not np.any(dp.overflow)
    for nu, a in ((np.asarray(dp.nu[:, 0]), 1.0 + M), (np.asarray(dp.nu[:, 1:]).ravel(), 1.0)):
        mean = a / (a + alpha)
        assert abs(nu.mean() - mean) < 5 * nu.std() / np.sqrt(nu.size), (nu.mean(), mean)
    post_mean = (cfg.niw_kappa0 * cfg.niw_mu0 + np.asarray(latent.omega).sum(1)) / (cfg.niw_kappa0 + M)
    gap = np.asarray(dp.mu[:, 0]) - post_mean
    assert np.all(np.abs(gap.mean(0)) < 5 * gap.std(0) / np.sqrt(len(keys))), gap.mean(0)
    assert np.all(gap.std(0) < 0.5 * np.asarray(dp.mu[:, 1]).std(0))  # tighter than an empty slot


@pytest.mark.slow
def test_capacity_overflow_raises(small_run):
    Xs, y, cfg, _ = small_run

    tiny_cap = M3LAKConfig.from_settings(cfg, dp_capacity=1, alpha=5.0)
    with pytest.raises(DPCapacityError, match="dp_capacity"):
        run_m3lak(Xs, y, tiny_cap, num_warmup=2, num_samples=2, random_state=0)


def test_bad_input_raises():
    cfg = M3LAKConfig.paper(n_latent=2, n_frequencies=2)
    X = np.ones((4, 2))
    with pytest.raises(ValueError, match="y"):
        run_m3lak([X], np.array([0, 1, 0, 1.0]), cfg, num_warmup=1, num_samples=1)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="partially-NaN"):
        run_m3lak([bad], np.array([1, -1, 1, -1.0]), cfg, num_warmup=1, num_samples=1)
    with pytest.raises(ValueError, match="n_latent"):
        run_m3lak([X], np.array([1, -1, 1, -1.0]), M3LAKConfig.paper(n_latent=0), num_warmup=1, num_samples=1)


# ---------------------------------------------------------------------------------------------
# r and τ with [W V] integrated out (precision_update="collapsed")
# ---------------------------------------------------------------------------------------------
def test_collapsed_precision_density_matches_brute_force(tiny):
    """log p(r, τ | H, U, X) from the determinant lemma / Woodbury form equals, up to one constant,
    the Gamma priors plus the explicit Gaussian marginal ``x_d ~ N(0, τ⁻¹I + Z A⁻¹ Zᵀ)``."""
    t = tiny
    a_r, b_r, a_t, b_t, eta = 0.7, 0.3, 0.5, 0.2, 3.0
    o = t["obs"]
    Z = np.concatenate([t["H"], t["U"]], axis=1)[o]
    points = [(np.array(r), tau) for r in ([0.8, 2.5], [0.05, 40.0], [3.0, 0.2]) for tau in (0.05, 1.0, 25.0)]

    def brute(r, tau):
        cov = np.eye(o.sum()) / tau + Z @ np.diag(1.0 / np.concatenate([r, [eta]])) @ Z.T
        prior = st.gamma(a_t, scale=1 / b_t).logpdf(tau) + st.gamma(a_r, scale=1 / b_r).logpdf(r).sum()
        return prior + st.multivariate_normal(np.zeros(o.sum()), cov).logpdf(t["X"][o].T).sum()

    args = [jnp.asarray(t[k]) for k in ("X", "H", "U")]
    ours = [
        float(
            collapsed_precision_log_density(
                jnp.asarray(r), tau, *args, eta, jnp.asarray(o), a_r, b_r, a_t, b_t
            )
        )
        for r, tau in points
    ]
    np.testing.assert_allclose(
        np.diff(ours), np.diff([brute(r, tau) for r, tau in points]), rtol=1e-9, atol=1e-9
    )


@pytest.mark.parametrize("r0", [[0.8, 2.5], [3e-3, 4e6]], ids=["moderate", "extreme"])
def test_collapsed_coordinate_densities_match_the_joint_density(tiny, r0):
    """The slice steps' closed-form densities of one coordinate (``log r_j`` by the Schur
    complement, ``log τ`` by an eigendecomposition) differ between any two values of it exactly
    as the joint collapsed density does (plus the log-scale Jacobian), also where an ARD
    precision is switched off (r = 4e6) or nearly free (r = 3e-3)."""
    from bayesmv.inference.conditionals import (
        _ard_coordinate_log_density,
        _collapsed_statistics,
        _noise_log_density,
    )

    t = tiny
    a_r, b_r, a_t, b_t, eta, tau0 = 0.7, 0.3, 0.5, 0.2, 3.0, 1.7
    X, H, U, o = (jnp.asarray(t[k]) for k in ("X", "H", "U", "obs"))
    stats = _collapsed_statistics(X, H, U, o)
    log_r0 = jnp.log(jnp.asarray(r0))
    values = jnp.log(jnp.array([1e-4, 0.05, 1.0, 30.0, 1e7]))

    def joint(log_r, log_tau):  # the density of (log r, log τ)
        r, tau = jnp.exp(log_r), jnp.exp(log_tau)
        dens = collapsed_precision_log_density(r, tau, X, H, U, eta, o, a_r, b_r, a_t, b_t)
        return float(dens + jnp.sum(log_r) + log_tau)

    for j in range(t["m"]):
        ours = _ard_coordinate_log_density(j, log_r0, tau0, stats, eta, a_r, b_r)
        got = [float(ours(s)) for s in values]
        want = [joint(log_r0.at[j].set(s), jnp.log(tau0)) for s in values]
        np.testing.assert_allclose(np.diff(got), np.diff(want), rtol=1e-9, atol=1e-7)
    ours = _noise_log_density(log_r0, stats, eta, a_t, b_t)
    got = [float(ours(s)) for s in values]
    want = [joint(log_r0, s) for s in values]
    np.testing.assert_allclose(np.diff(got), np.diff(want), rtol=1e-9, atol=1e-7)


def _feature_noise_brute_log_density(t, r, eta, a_t, b_t, d):
    """``log p(τ_d | r, H, U, x_d)`` + const with ``[w_d v_d]`` integrated out, by the dense
    Gaussian ``x_d ~ N(0, τ_d⁻¹I + Z A⁻¹ Zᵀ)`` over the observed rows."""
    o = t["obs"]
    Z = np.concatenate([t["H"], t["U"]], axis=1)[o]
    prior_cov = Z @ np.diag(1.0 / np.concatenate([r, [eta]])) @ Z.T

    def logdens(taus):
        return np.array(
            [
                st.gamma(a_t, scale=1 / b_t).logpdf(tau)
                + st.multivariate_normal(np.zeros(o.sum()), np.eye(o.sum()) / tau + prior_cov).logpdf(
                    t["X"][o, d]
                )
                for tau in np.atleast_1d(taus)
            ]
        )

    return logdens


@pytest.mark.parametrize("r0", [[0.8, 2.5], [3e-3, 4e6]], ids=["moderate", "extreme"])
def test_collapsed_feature_noise_densities_match_brute_force(tiny, r0):
    """noise="feature" with ``[W V]`` integrated out: the closed-form density of each ``log τ_d``
    (one eigendecomposition for all features) differs between any two values as the dense
    Gaussian marginal of feature d's column does (plus the log-scale Jacobian)."""
    from bayesmv.inference.conditionals import _collapsed_statistics, _feature_noise_log_densities

    t = tiny
    a_t, b_t, eta = 0.5, 0.2, 3.0
    X, H, U, o = (jnp.asarray(t[k]) for k in ("X", "H", "U", "obs"))
    stats = _collapsed_statistics(X, H, U, o)
    density, (C_t, sq) = _feature_noise_log_densities(
        jnp.log(jnp.asarray(r0)), stats, eta, a_t, b_t, jnp.sum(X**2, 0), jnp.sum(o)
    )
    values = np.log([1e-4, 0.05, 1.0, 30.0, 1e4])
    for d in range(t["D"]):
        brute = _feature_noise_brute_log_density(t, np.asarray(r0), eta, a_t, b_t, d)
        got = [float(density(C_t[d], sq[d])(s)) for s in values]
        want = brute(np.exp(values)) + values
        np.testing.assert_allclose(np.diff(got), np.diff(want), rtol=1e-9, atol=1e-7)


@pytest.mark.slow
def test_collapsed_feature_noise_step_keeps_its_conditional():
    """One ``sample_feature_noise_collapsed`` step from exact draws of ``τ | r, H, U, X`` (each
    feature by inverse CDF on a grid of the brute-force density) leaves every feature's
    marginal as it was (KS test against the grid, p > 1e-3), and moves the draws."""
    from bayesmv.inference.conditionals import sample_feature_noise_collapsed

    rng = np.random.default_rng(11)
    N, m, K, D = 8, 2, 1, 3
    H, U = rng.normal(size=(N, m)), rng.normal(size=(N, K))
    X = H @ rng.normal(size=(D, m)).T + rng.normal(size=(N, D)) / np.array([0.5, 1.0, 3.0])
    t = dict(X=X, H=H, U=U, obs=np.ones(N, bool), D=D)
    r, eta, a_t, b_t = np.array([0.8, 2.5]), 3.0, 2.0, 1.0
    grid = np.geomspace(1e-3, 60.0, 4001)
    start = np.empty((4000, D))
    for d in range(D):
        lp = _feature_noise_brute_log_density(t, r, eta, a_t, b_t, d)(grid) + np.log(grid)
        p = np.exp(lp - lp.max())
        cdf = np.concatenate([[0.0], np.cumsum(0.5 * (p[1:] + p[:-1]) * np.diff(np.log(grid)))])
        start[:, d] = np.interp(rng.uniform(size=4000), cdf / cdf[-1], grid)
    args = [jnp.asarray(a) for a in (X, H, U, r)]
    step = jax.jit(
        jax.vmap(
            lambda k, tau: sample_feature_noise_collapsed(
                k, *args[:3], args[3], tau, eta, jnp.ones(N, bool), a_t, b_t
            )
        )
    )
    moved = np.asarray(step(KEYS[:4000], jnp.asarray(start)))
    assert np.mean(moved != start) > 0.99
    for d in range(D):
        _grid_ks(moved[:, d], _feature_noise_brute_log_density(t, r, eta, a_t, b_t, d), 1e-3, 60.0, n=4001)


def test_slice_step_keeps_exact_draws_exact():
    """Exact Gamma(3, 2) draws of log x stay distributed as that density after one slice step each
    (KS test, p > 1e-3); the step moves every draw; and it corrects a wrong start: from a point
    mass at the 5 % quantile one step puts most draws above it."""
    dist = st.gamma(3.0, scale=0.5)

    def log_density(s):  # density of s = log x
        return 3.0 * s - 2.0 * jnp.exp(s)

    start = np.log(dist.rvs(size=5000, random_state=np.random.default_rng(4)))
    moved = np.asarray(jax.vmap(lambda k, s: slice_step(k, s, log_density))(KEYS[:5000], jnp.asarray(start)))
    assert np.mean(moved != start) > 0.99
    assert st.kstest(np.exp(moved), dist.cdf).pvalue > 1e-3
    q05 = np.log(dist.ppf(0.05))
    fixed = np.asarray(jax.vmap(lambda k: slice_step(k, q05, log_density))(KEYS[:5000]))
    assert np.mean(fixed > q05) > 0.5


def test_loops_under_vmap_with_the_sweeps_rbg_keys():
    """The sweep draws with ``rbg`` keys (``_random.fast_key``); vectorized chains vmap it. Rbg
    draws inside a vmapped ``while_loop`` repeat once one batch member has left it, which hung
    the Gamma rejection sampler and biased the slice step's shrinkage. With the loops' own
    threefry keys: 2000 vmapped Gamma(1) variates (20 per key, rejections in some members
    only) and 5000 vmapped slice steps from exact Gamma(3, 2) draws pass KS tests (p > 1e-3)."""
    from bayesmv.inference import _random

    rbg = jax.vmap(_random.fast_key)(KEYS[:5000])
    lg = jax.jit(jax.vmap(lambda k: _random.log_gamma(k, jnp.ones(20))))(rbg[:100])
    assert st.kstest(np.exp(np.asarray(lg)).ravel(), st.expon.cdf).pvalue > 1e-3
    dist = st.gamma(3.0, scale=0.5)
    start = np.log(dist.rvs(size=5000, random_state=np.random.default_rng(5)))
    step = jax.jit(jax.vmap(lambda k, s: slice_step(k, s, lambda x: 3.0 * x - 2.0 * jnp.exp(x))))
    moved = np.asarray(step(rbg, jnp.asarray(start)))
    assert st.kstest(np.exp(moved), dist.cdf).pvalue > 1e-3


@NOISE
def test_u_collapsed_log_likelihood_matches_brute_force(tiny, tau):
    """log p(X | U, H, W, τ) with V integrated out equals, up to one constant in U, the explicit
    Gaussian marginal of the residual columns ``R_d ~ N(0, τ_d⁻¹I + U Uᵀ/η)`` (observed rows)."""
    t = tiny
    eta = 3.0
    o = t["obs"]
    R = (t["X"] - t["H"] @ t["W"].T)[o]
    rng = np.random.default_rng(8)
    Us = [rng.normal(size=(t["N"], t["K"])) * s for s in (0.3, 1.0, 2.5)]

    taus = np.broadcast_to(tau, (t["D"],))

    def brute(U):
        covs = [np.eye(o.sum()) / tau_d + U[o] @ U[o].T / eta for tau_d in taus]
        return sum(st.multivariate_normal(np.zeros(o.sum()), c).logpdf(R[:, d]) for d, c in enumerate(covs))

    args = [jnp.asarray(t[k]) for k in ("X", "H", "W")]
    ours = [
        float(u_collapsed_log_likelihood(jnp.asarray(U), *args, jnp.asarray(tau), eta, jnp.asarray(o)))
        for U in Us
    ]
    np.testing.assert_allclose(np.diff(ours), np.diff([brute(U) for U in Us]), rtol=1e-9, atol=1e-9)


@pytest.mark.slow
def test_elliptical_slice_step_keeps_exact_draws_exact():
    """Prior N(0, I₂) times a Gaussian likelihood: exact posterior draws stay exact after one
    elliptical slice step (mean and covariance within 5 MC standard errors), and the step moves."""
    A = jnp.array([[1.0, 0.5], [-0.3, 2.0], [0.7, 0.1]])
    obs_y = jnp.array([0.4, -1.0, 2.0])
    noise = 0.5
    prec = np.eye(2) + np.asarray(A.T @ A) / noise**2
    cov = np.linalg.inv(prec)
    mean = cov @ np.asarray(A.T @ obs_y) / noise**2

    def log_lik(x):
        return -0.5 * jnp.sum((obs_y - A @ x) ** 2) / noise**2

    start = np.random.default_rng(2).multivariate_normal(mean, cov, size=NDRAW)
    moved = jax.vmap(lambda k, x: elliptical_slice_step(k, x, log_lik))(KEYS, jnp.asarray(start))
    assert np.mean(np.any(np.asarray(moved) != start, axis=1)) > 0.99
    _check_moments(moved, mean, cov)


# ---------------------------------------------------------------------------------------------
# the tempered warm-up: the views' likelihood raised to a power t < 1
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("temper", [0.05, 0.4])
def test_tempered_tau_conditional_matches_grid(tiny, temper):
    """τ | · under the likelihood raised to ``temper``: the Gamma prior times the Gaussian
    likelihood's density to that power, normalised on a grid (KS test)."""
    t = tiny
    a_t, b_t = 0.5, 0.2
    args = [jnp.asarray(t[k]) for k in ("X", "H", "U", "W", "V", "obs")]
    draws = jax.vmap(lambda k: sample_tau_conditional(k, *args, a_t, b_t, temper=temper))(KEYS[:5000])
    resid = (t["X"] - t["H"] @ t["W"].T - t["U"] @ t["V"].T)[t["obs"]].ravel()

    def logdens(tau):
        loglik = st.norm(0, 1 / np.sqrt(tau)).logpdf(resid[:, None]).sum(0)
        return st.gamma(a_t, scale=1 / b_t).logpdf(tau) + temper * loglik

    _grid_ks(draws, logdens, 1e-6, 40.0)


@pytest.mark.parametrize("temper", [0.05, 0.4, 1.0])
def test_tempered_collapsed_noise_density_matches_brute_force(tiny, temper):
    """With [W V] integrated out of the tempered joint ``p(X | Z, W, V, τ)^t p(W, V | r)``, the
    density of ``log τ'``, ``τ' = tτ``, that the collapsed step samples (the closed form with
    :func:`_tempered_noise_prior`'s Gamma) differs between values as the brute-force one does:
    ``∫ exp(−tτ‖x − Zw‖²/2) N(w; 0, A⁻¹) dw = (2π/(tτ))^{n/2} N(x; 0, (tτ)⁻¹I + ZA⁻¹Zᵀ)`` per
    column, times ``(τ/2π)^{tn/2}`` and the Gamma prior of ``τ``."""
    from bayesmv.inference.conditionals import _collapsed_statistics, _noise_log_density
    from bayesmv.inference.m3lak_sampler.sweep import _tempered_noise_prior

    t = tiny
    a_t, b_t, eta = 0.5, 0.2, 3.0
    r = np.array([0.8, 2.5])
    o = t["obs"]
    n = o.sum() * t["D"]
    Z = np.concatenate([t["H"], t["U"]], axis=1)[o]
    prior_cov = Z @ np.diag(1.0 / np.concatenate([r, [eta]])) @ Z.T

    def brute(log_tau_eff):  # the density of s = log τ' under the tempered joint
        tau = np.exp(log_tau_eff) / temper
        cov = np.eye(o.sum()) / (temper * tau) + prior_cov
        gauss = st.multivariate_normal(np.zeros(o.sum()), cov).logpdf(t["X"][o].T).sum()
        lik = (
            0.5 * temper * n * np.log(tau / (2 * np.pi))
            + 0.5 * n * np.log(2 * np.pi / (temper * tau))
            + gauss
        )
        return lik + st.gamma(a_t, scale=1 / b_t).logpdf(tau) + np.log(tau)

    config = M3LAKConfig.paper(a_tau=a_t, b_tau=b_t)
    a_eff, b_eff = _tempered_noise_prior(config, temper, n)
    X, H, U = (jnp.asarray(t[k]) for k in ("X", "H", "U"))
    ours = _noise_log_density(jnp.log(r), _collapsed_statistics(X, H, U, jnp.asarray(o)), eta, a_eff, b_eff)
    values = np.log([1e-3, 0.05, 1.0, 30.0])
    got = [float(ours(s)) for s in values]
    np.testing.assert_allclose(np.diff(got), np.diff([brute(s) for s in values]), rtol=1e-9, atol=1e-7)


def test_warmup_tempering_schedule():
    """The power of the views' likelihood rises geometrically from ``warmup_tempering`` to 1 over
    the first half of warm-up and is exactly 1 after it (and without tempering)."""
    from bayesmv.inference.m3lak_sampler.kernel import M3LAKKernel

    kernel = M3LAKKernel(M3LAKConfig.paper(warmup_tempering=0.01))
    kernel._num_warmup = 100
    got = np.array([float(kernel._temper(jnp.asarray(i))) for i in (0, 25, 49, 50, 99, 100, 5000)])
    np.testing.assert_allclose(got[:3], 0.01 ** (1 - np.array([0, 25, 49]) / 50), rtol=1e-12)
    assert np.all(got[3:] == 1.0)
    assert M3LAKKernel(M3LAKConfig.paper())._temper(jnp.asarray(0)) == 1.0
    for bad in (0.0, 1.5, -0.1):
        with pytest.raises(ValueError, match="warmup_tempering"):
            M3LAKConfig.paper(warmup_tempering=bad).validate()


@pytest.mark.slow
def test_tempering_changes_the_warm_up_only(small_run):
    """A tempered warm-up gives other draws than an untempered one from the same key; continued
    from its chains' states (no warm-up), the tempered and untempered kernels draw the same."""

    Xs, y, cfg, post = small_run
    tempered = M3LAKConfig.from_settings(cfg, warmup_tempering=0.05)
    run = run_m3lak(Xs, y, tempered, num_warmup=30, num_samples=20, num_chains=2, random_state=0)
    assert np.all(np.isfinite(run.samples["tau"]))
    assert not np.allclose(run.samples["tau"], post.samples["tau"])
    more = [
        run_m3lak(Xs, y, c, num_warmup=0, num_samples=10, num_chains=2, init_state=run.chain_states).samples
        for c in (tempered, cfg)
    ]
    for name in ("tau", "decision", "beta", "W_0"):
        np.testing.assert_array_equal(more[0][name], more[1][name])


@pytest.mark.slow
def test_niw_scale_warmup_hold_schedule():
    """ψ is held over the first ``⌊niw_psi0_warmup_hold · num_warmup⌋`` sweeps and learned from
    then on (always, as the static True, without a hold); the hold needs a learned ψ."""
    from bayesmv.inference.m3lak_sampler.kernel import M3LAKKernel

    kernel = M3LAKKernel(M3LAKConfig.paper(niw_psi0_prior=(1.0, 0.1), niw_psi0_warmup_hold=0.3))
    kernel._num_warmup = 100
    got = [bool(kernel._learn_niw_scale(jnp.asarray(i))) for i in (0, 29, 30, 99, 100, 5000)]
    assert got == [False, False, True, True, True, True]
    assert M3LAKKernel(M3LAKConfig.paper(niw_psi0_prior=(1.0, 0.1)))._learn_niw_scale(jnp.asarray(0)) is True
    for bad in (-0.1, 1.0, float("nan"), True, "0.5", 0.5j):
        with pytest.raises(ValueError, match="niw_psi0_warmup_hold"):
            M3LAKConfig.paper(niw_psi0_prior=(1.0, 0.1), niw_psi0_warmup_hold=bad).validate()
    with pytest.raises(ValueError, match="needs M3LAKPriors.niw_psi0_prior"):
        M3LAKConfig.paper(niw_psi0_warmup_hold=0.5).validate()


@pytest.mark.slow
@NOISE
def test_h_without_label_feedback_is_its_views_only_conditional(tiny, tau):
    """``label_feedback=False``: each row of ``H`` is drawn from ``p(h_n | x_n, u_n, W, V, τ)``,
    the Gaussian of the views alone, whatever the labels and the classifier (here a label weight
    ``C = 50`` and large ``β``); a row missing a view sees the other only. Power: the same draws
    fail against the conditional that reads a missing view's zero-filled row as data."""
    from bayesmv.inference.m3lak_sampler import M3LAKData, M3LAKLatent
    from bayesmv.inference.m3lak_sampler.sweep import _gaussian_dp_state, _update_h

    t = tiny
    rng = np.random.default_rng(1)
    W1, V1 = rng.normal(size=(2, t["m"])), 0.5 * rng.normal(size=(2, t["K"]))
    U1, X1 = rng.normal(size=(t["N"], t["K"])), rng.normal(size=(t["N"], 2))
    obs = np.stack([t["obs"], np.array([True, False, True, True, False, True])], axis=1)
    taus = [tau, 0.9] if np.ndim(tau) == 0 else [tau, np.array([0.9, 2.0])]
    cfg = M3LAKConfig.from_settings(
        n_latent=t["m"], n_frequencies=t["M"], spectral_prior="gaussian", label_feedback=False, C=50.0
    )
    latent = M3LAKLatent(
        H=jnp.asarray(t["H"]),
        Us=(jnp.asarray(t["U"]), jnp.asarray(U1)),
        Ws=(jnp.asarray(t["W"]), jnp.asarray(W1)),
        Vs=(jnp.asarray(t["V"]), jnp.asarray(V1)),
        tau=jnp.concatenate([jnp.atleast_1d(jnp.asarray(t, float)) for t in taus]),
        r=jnp.ones((2, t["m"])),
        omega=jnp.asarray(t["omega"]),
        beta=jnp.asarray(rng.normal(size=2 * t["M"] + 1) * 5.0),
        lam=jnp.ones(t["N"]),
        v=jnp.asarray(1.0),
        dp=_gaussian_dp_state(cfg),
    )
    Xs = (jnp.asarray(t["X"]) * obs[:, :1], jnp.asarray(X1) * obs[:, 1:])
    data = M3LAKData(Xs, jnp.asarray(obs), jnp.asarray(t["y"]))

    def draw(config):
        one = lambda k: _update_h(k, latent, data, config, jnp.ones(t["N"], bool), 0.3, 0, 1.0)[0].H  # noqa: E731
        return jax.jit(jax.vmap(one))(KEYS)

    draws = draw(cfg)
    for n in (0, 1, 2):  # both views; view 0 only; view 1 only
        views = [
            (np.asarray(X[n]), np.asarray(W), np.asarray(V), np.asarray(U[n]), T)
            for X, W, V, U, T, o in zip(Xs, latent.Ws, latent.Vs, latent.Us, taus, obs[n])
            if o
        ]

        def logp(h, views=views):
            out = -0.5 * h @ h
            for x, W, V, u, T in views:
                r = x - W @ h - V @ u
                out = out - 0.5 * r @ (T * r)
            return out

        mean, cov = _gaussian_reference(logp, t["m"])
        _check_moments(draws[:, n], mean, cov)
        if n == 1:  # power: view 1's zero-filled row of sample 1 read as data
            x, W, V, u, T = np.zeros(2), *(np.asarray(a) for a in (W1, V1, U1[n])), taus[1]
            wrong = lambda h: logp(h) - 0.5 * (x - W @ h - V @ u) @ (T * (x - W @ h - V @ u))  # noqa: E731
            with pytest.raises(AssertionError):
                _check_moments(draws[:, n], *_gaussian_reference(wrong, t["m"]))
