"""The frequency relocation move (``dp_relocation_moves``) against brute-force references.

1. Its Laplace proposal of ``β_j`` is the mode and curvature of ``p(β_j | ω_j, rest)``: the
   gradient of the log density vanishes at the mean, and the precision equals a finite-difference
   Hessian.
2. Invariance: exact draws of ``(z, β, Ω) | H, sticks, components, y`` (rejection from the prior)
   pushed through two relocation sweeps keep their distribution: z-scores of ~60 test-function
   means against an independent set of exact draws, Bonferroni-corrected at a family-wise 1 %
   (fixed seeds); the move must accept often enough to matter. The same check with a wrong
   acceptance ratio (the proposal densities of ``β_j`` left out) must fail (power).
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
from bayesmv.inference.m3lak_sampler import relocate
from bayesmv.models import M3LAKConfig, decision_values, logistic_log_likelihood

N, m, M = 6, 2, 3
P = 2 * M + 1
RNG = np.random.default_rng(8)
H = jnp.asarray(RNG.normal(size=(N, m)))
Y = jnp.asarray(np.where(np.cos(2.0 * np.asarray(H[:, 1])) + 0.3 * RNG.normal(size=N) > 0, 1.0, -1.0))
VALID = jnp.ones(N, bool)
V_BETA = 0.5


@functools.cache  # built on first use, not while pytest collects the module
def _dp_state():
    """Three NIW components, one of them far from the others; sticks whose weights fill the table."""
    psi = jnp.broadcast_to(jnp.array([[0.3, 0.1], [0.1, 0.4]]), (3, m, m))
    mu, G, logdet = sample_niw(
        jax.random.PRNGKey(3),
        jnp.array([[0.0, 0.2], [0.1, 2.0], [-1.0, -0.5]]),
        jnp.ones(3),
        jnp.full(3, 6.0),
        psi,
    )
    return DPState(
        nu=jnp.array([0.5, 0.6, 1.0]),  # weights 0.5, 0.3, 0.2, nothing beyond the table
        mu=mu,
        prec_sqrt=G,
        logdet_prec=logdet,
        z=jnp.zeros(M, jnp.int32),
        overflow=jnp.zeros((), bool),
    )


WEIGHTS = np.array([0.5, 0.3, 0.2])


def _exact_draws(key, n, C=1.0):
    """Exact draws of (z, β, Ω) | H, DP, y by rejection from the prior (the likelihood, weighted
    by ``C``, is ≤ 1)."""
    dp = _dp_state()
    k0, k1, k2, k3 = jax.random.split(key, 4)
    z = jax.random.categorical(k0, jnp.log(jnp.asarray(WEIGHTS)), shape=(n, M))
    beta = jax.random.normal(k1, (n, P)) / np.sqrt(V_BETA)
    e = jax.random.normal(k2, (n, M, m))
    G = dp.prec_sqrt[z]
    omega = dp.mu[z] + jnp.linalg.solve(jnp.swapaxes(G, -1, -2), e[..., None])[..., 0]
    loglik = jax.vmap(lambda b, o: C * jnp.sum(logistic_log_likelihood(decision_values(H, o, b), Y)))(
        beta, omega
    )
    keep = np.asarray(jnp.log(jax.random.uniform(k3, (n,))) < loglik)
    return z[keep], beta[keep], omega[keep]


def _test_functions(z, beta, omega):
    f = jax.vmap(lambda b, o: decision_values(H, o, b))(beta, omega)
    om = omega.reshape(omega.shape[0], -1)
    onehot = np.asarray(z[..., None] == jnp.arange(3)).reshape(z.shape[0], -1)
    return np.concatenate([beta, beta**2, om, om**2, f, f**2, onehot], axis=1)


@pytest.mark.parametrize("C", [1.0, 2.5])
def test_weights_proposal_is_the_laplace_approximation(C):
    rng = np.random.default_rng(7)
    x = jnp.asarray(rng.normal(size=(N, 2)))
    f_rest = jnp.asarray(rng.normal(size=N))

    def log_density(b):
        return C * jnp.sum(logistic_log_likelihood(f_rest + x @ b, Y)) - 0.5 * V_BETA * b @ b

    mean, chol = relocate.weights_proposal(x, f_rest, Y, VALID, V_BETA, C)
    np.testing.assert_allclose(jax.grad(log_density)(mean), 0.0, atol=1e-8)
    h = 1e-4
    hess = np.array(
        [
            [
                (
                    log_density(mean + h * (ei + ej))
                    - log_density(mean + h * (ei - ej))
                    - log_density(mean - h * (ei - ej))
                    + log_density(mean - h * (ei + ej))
                )
                / (4 * h * h)
                for ej in np.eye(2)
            ]
            for ei in np.eye(2)
        ]
    )
    np.testing.assert_allclose(chol @ chol.T, -hess, rtol=1e-5)


def _invariance_z(sweeps=2, C=1.0):
    dp = _dp_state()
    start = _exact_draws(jax.random.PRNGKey(1), 400_000, C)
    ref = _exact_draws(jax.random.PRNGKey(2), 400_000, C)

    @jax.jit
    def push(keys, z, beta, omega):
        def one(k, z, b, o):
            acc = 0.0
            for kk in jax.random.split(k, sweeps):
                o, b, z, a = relocate.relocate_frequencies(kk, H, o, b, V_BETA, dp._replace(z=z), Y, VALID, C)
                acc = acc + a / sweeps
            return z, b, o, acc

        return jax.vmap(one)(keys, z, beta, omega)

    z, b, o, acc = push(jax.random.split(jax.random.PRNGKey(3), start[0].shape[0]), *start)
    g1, g0 = _test_functions(z, b, o), _test_functions(*ref)
    zs = (g1.mean(0) - g0.mean(0)) / np.sqrt(g1.var(0) / len(g1) + g0.var(0) / len(g0))
    return zs, st.norm.ppf(1 - 0.01 / (2 * zs.size)), float(np.mean(acc))


@pytest.mark.slow
@pytest.mark.parametrize("C", [1.0, 0.5])
def test_relocation_keeps_exact_draws_exact(C):
    """Exact draws stay exact, with the labels' log-likelihood weighted by ``C`` too (0.5: the
    rejection sampler keeps ~26,000 of its 400,000 prior draws; at 2.5 it would keep 48)."""
    z, crit, acceptance = _invariance_z(C=C)
    assert np.max(np.abs(z)) < crit, (np.argmax(np.abs(z)), np.max(np.abs(z)), crit)
    assert acceptance > 0.2, acceptance


@pytest.mark.slow
def test_relocation_check_detects_an_ignored_label_weight(monkeypatch):
    """Power: a move that targets C = 1 while the draws are exact at C = 0.5 fails (max |z| ~22)."""
    move = relocate.relocate_frequencies
    monkeypatch.setattr(relocate, "relocate_frequencies", lambda *args: move(*args[:-1], 1.0))
    z, crit, _ = _invariance_z(C=0.5)
    assert np.max(np.abs(z)) > crit


@pytest.mark.slow
def test_relocation_check_detects_a_wrong_acceptance(monkeypatch):
    monkeypatch.setattr(relocate, "_gaussian_log_density", lambda x, mean, chol: 0.0)
    z, crit, _ = _invariance_z()
    assert np.max(np.abs(z)) > crit


def test_relocation_needs_the_logistic_dp_model():
    from bayesmv import M3LAKClassifier
    from bayesmv.m3lak.settings import model_config

    for bad in (dict(spectral_prior="gaussian"), dict(likelihood="hinge")):
        with pytest.raises(ValueError, match="dp_relocation_moves"):
            M3LAKConfig.paper(**{"likelihood": "logistic", **bad, "dp_relocation_moves": True}).validate()
    from bayesmv.models import M3LAKPriors, M3LAKSampler

    moves = M3LAKSampler(dp_relocation_moves=True)
    # the default spectrum, then the default view term
    with pytest.raises(ValueError, match="dp_relocation_moves needs spectral_prior='dp'"):
        model_config(M3LAKClassifier(sampler=moves).get_params())
    with pytest.raises(ValueError, match="set M3LAKPriors\\(view_features=None\\)"):
        model_config(M3LAKClassifier(spectral_prior="dp", sampler=moves).get_params())
    latent_only = M3LAKPriors(view_features=None)
    params = M3LAKClassifier(spectral_prior="dp", priors=latent_only, sampler=moves).get_params()
    assert model_config(params).dp_relocation_moves
