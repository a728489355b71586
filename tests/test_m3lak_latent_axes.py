"""The latent-axis scale and shear moves (``bayesmv.inference.latent_axes``) against brute force.

A generalised Gibbs step along a group of maps ``T`` is exact when the density it draws from is
``π(T x) |det ∂T/∂x|`` up to a constant. Here ``π`` is the prior part of the joint, written out
term by term with SciPy (H, W | r, r, Ω | components, NIW for the components in use), and the
Jacobian is the determinant of ``jax.jacfwd`` of the map on every coordinate it moves (the
precision matrices as their upper triangles): the moves' log densities must equal that
difference for any scale or shear. The likelihood's invariance is checked on the maps the moves
apply; the sweep with the moves passes the Geweke tests in ``test_m3lak_sampler.py``.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats as st

import bayesmv  # noqa: F401  (x64)
from bayesmv.inference.dp import DPState
from bayesmv.inference.latent_axes import (
    AxisPrior,
    axis_statistics,
    draw_shears,
    latent_scale_log_density,
    move_latent_axes,
    shear_conditional,
)

N, DS, M, KC = 4, (2, 3), 5, 3
Z = np.array([0, 2, 2, 0, 2])  # component 1 is not in use
MU0 = np.array([0.3, -0.5])
DP_PRIOR = AxisPrior(a_r=1.5, b_r=0.7, spectrum="dp", kappa0=1.3, nu0=4.0, psi=0.8, mu0=jnp.asarray(MU0))
GAUSS_PRIOR = AxisPrior(a_r=1.5, b_r=0.7, spectrum="gaussian", sigma=0.6)


def _state(seed=0):
    rng = np.random.default_rng(seed)
    m = 2
    G = rng.normal(size=(KC, m, m)) + 2 * np.eye(m)
    dp = DPState(
        nu=jnp.full(KC, 0.5),
        mu=jnp.asarray(rng.normal(size=(KC, m))),
        prec_sqrt=jnp.asarray(G),
        logdet_prec=jnp.asarray(np.linalg.slogdet(G @ np.swapaxes(G, 1, 2))[1]),
        z=jnp.asarray(Z, jnp.int32),
        overflow=jnp.zeros((), bool),
    )
    H = jnp.asarray(rng.normal(size=(N, m)))
    Ws = tuple(jnp.asarray(rng.normal(size=(D, m))) for D in DS)
    r = jnp.asarray(rng.gamma(2.0, 1.0, size=(len(DS), m)))
    omega = jnp.asarray(rng.normal(size=(M, m)))
    return H, Ws, r, omega, dp


def _precisions(dp):
    G = np.asarray(dp.prec_sqrt)
    return G @ np.swapaxes(G, 1, 2)


def _log_prior(H, Ws, r, omega, mu, P, prior):
    """Brute force: every prior term that a map of the latent axes can change."""
    H, r, omega, mu, P = (np.asarray(a) for a in (H, r, omega, mu, P))
    out = st.norm.logpdf(H).sum()
    for i, W in enumerate(Ws):
        out += st.norm.logpdf(np.asarray(W), scale=1 / np.sqrt(r[i])).sum()
        out += st.gamma.logpdf(r[i], prior.a_r, scale=1 / prior.b_r).sum()
    if prior.spectrum == "gaussian":
        return out + st.norm.logpdf(omega, scale=prior.sigma).sum()
    m = H.shape[1]
    for k, c in enumerate(Z):
        out += st.multivariate_normal.logpdf(omega[k], mu[c], np.linalg.inv(P[c]))
    for c in np.unique(Z):
        out += st.multivariate_normal.logpdf(mu[c], MU0, np.linalg.inv(prior.kappa0 * P[c]))
        out += st.wishart.logpdf(P[c], df=prior.nu0, scale=np.eye(m) / prior.psi)
    return out


def _apply(A, H, Ws, r, omega, mu, P, r_scale=None):
    """The group's action as the module docstring states it, on the precision matrices."""
    A_inv = jnp.linalg.inv(A)
    used = np.isin(np.arange(KC), Z)[:, None]
    mu = jnp.where(used, mu @ A_inv.T, mu)
    P = jnp.where(used[:, :, None], jnp.einsum("ji,cjk,kl->cil", A, P, A), P)
    r = r if r_scale is None else r * r_scale
    return H @ A, tuple(W @ A_inv.T for W in Ws), r, omega @ A_inv.T, mu, P


def _log_jacobian(A, state, prior, r_scale=None):
    """log |det| of the map's Jacobian over the coordinates it moves (P by upper triangles)."""
    H, Ws, r, omega, mu, P = state
    used = np.unique(Z)
    iu = np.triu_indices(H.shape[1])

    def flat(H, Ws, r, omega, mu, P):
        parts = [H, *Ws, r, omega] if prior.spectrum == "gaussian" else [H, *Ws, r, omega, mu[used]]
        parts = parts + ([] if prior.spectrum == "gaussian" else [P[c][iu] for c in used])
        return jnp.concatenate([jnp.ravel(p) for p in parts])

    def unflat(x):
        sizes = [H.size, *(W.size for W in Ws), r.size, omega.size]
        out, pos = [], 0
        for s in sizes:
            out.append(x[pos : pos + s])
            pos += s
        H2 = out[0].reshape(H.shape)
        Ws2 = tuple(o.reshape(W.shape) for o, W in zip(out[1 : 1 + len(Ws)], Ws))
        r2, om2 = out[-2].reshape(r.shape), out[-1].reshape(omega.shape)
        if prior.spectrum == "gaussian":
            return H2, Ws2, r2, om2, mu, P
        m = H.shape[1]
        mu2 = mu.at[used].set(x[pos : pos + used.size * m].reshape(used.size, m))
        pos += used.size * m
        P2 = P
        for c in used:
            upper = jnp.zeros((m, m)).at[iu].set(x[pos : pos + iu[0].size])
            P2 = P2.at[c].set(upper + jnp.triu(upper, 1).T)
            pos += iu[0].size
        return H2, Ws2, r2, om2, mu2, P2

    def mapped(x):
        return flat(*_apply(A, *unflat(x), r_scale=r_scale))

    J = jax.jacfwd(mapped)(flat(H, Ws, r, omega, mu, P))
    return np.linalg.slogdet(np.asarray(J))[1]


@pytest.mark.slow
@pytest.mark.parametrize("prior", [DP_PRIOR, GAUSS_PRIOR], ids=["dp", "gaussian"])
@pytest.mark.parametrize("t", [(0.3, -0.2), (-0.45, 0.1)])
def test_scale_log_density_is_the_prior_ratio_times_the_jacobian(prior, t):
    H, Ws, r, omega, dp = _state()
    P, t = jnp.asarray(_precisions(dp)), jnp.asarray(t)
    state = (H, Ws, r, omega, dp.mu, P)
    A, r_scale = jnp.diag(jnp.exp(t)), jnp.exp(2 * t)
    expected = (
        _log_prior(*_apply(A, *state, r_scale=r_scale), prior)
        + _log_jacobian(A, state, prior, r_scale)
        - _log_prior(*state, prior)
    )
    stats = axis_statistics(H, Ws, r, omega, dp)
    got = latent_scale_log_density(t, stats, prior) - latent_scale_log_density(jnp.zeros(2), stats, prior)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("prior", [DP_PRIOR, GAUSS_PRIOR], ids=["dp", "gaussian"])
@pytest.mark.parametrize("pair", [(0, 1), (1, 0)])
def test_shear_conditional_is_the_prior_ratio_and_the_map_keeps_volume(prior, pair):
    H, Ws, r, omega, dp = _state(1)
    P = jnp.asarray(_precisions(dp))
    state = (H, Ws, r, omega, dp.mu, P)
    j, k = pair
    precision, linear = shear_conditional(j, k, axis_statistics(H, Ws, r, omega, dp), prior)
    for eps in (0.37, -0.8):
        A = jnp.eye(2).at[j, k].set(eps)
        assert abs(_log_jacobian(A, state, prior)) < 1e-12
        expected = _log_prior(*_apply(A, *state), prior) - _log_prior(*state, prior)
        np.testing.assert_allclose(-0.5 * precision * eps**2 + linear * eps, expected, rtol=1e-9, atol=1e-9)


def _invariants(H, Ws, omega):
    return [np.asarray(H @ W.T) for W in Ws] + [np.asarray(H @ omega.T)]


@pytest.mark.slow
@pytest.mark.parametrize("prior", [DP_PRIOR, GAUSS_PRIOR], ids=["dp", "gaussian"])
def test_move_applies_the_group_action_and_keeps_the_likelihood(prior):
    """The composed move is one map ``A = diag(d) · shears`` with ``r → r d²``: every block equals
    the docstring's action of that ``A`` (recovered from H), ``det A = Π d``, both shears moved,
    the rows outside ``rows`` (padding) and the components not in use stay, W h and Ω h stay."""
    H, Ws, r, omega, dp = _state(2)
    rows = jnp.array([True, True, True, False])
    H2, Ws2, r2, omega2, dp2 = move_latent_axes(jax.random.PRNGKey(3), H, Ws, r, omega, dp, prior, rows)
    A = np.linalg.lstsq(np.asarray(H[:3]), np.asarray(H2[:3]), rcond=None)[0]
    r_scale = np.asarray(r2 / r)
    np.testing.assert_allclose(r_scale, np.broadcast_to(r_scale[0], r_scale.shape), rtol=1e-12)
    np.testing.assert_allclose(np.linalg.det(A) ** 2, np.prod(r_scale[0]), rtol=1e-10)
    assert np.all(np.abs(np.log(r_scale[0])) > 1e-6) and abs(A[0, 1]) > 1e-6 and abs(A[1, 0]) > 1e-6
    np.testing.assert_array_equal(np.asarray(H2[3]), np.asarray(H[3]))
    want = _apply(jnp.asarray(A), H, Ws, r, omega, dp.mu, jnp.asarray(_precisions(dp)), r_scale=r_scale)
    got = (H2, Ws2, r2, omega2, dp2.mu, _precisions(dp2))
    n = 6 if prior.spectrum == "dp" else 4  # the Gaussian spectrum has no components to move
    for a, b in zip(jax.tree.leaves(got[:n]), jax.tree.leaves(want[:n])):
        np.testing.assert_allclose(np.asarray(a)[:3], np.asarray(b)[:3], rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(dp2.logdet_prec, np.linalg.slogdet(_precisions(dp2))[1], rtol=1e-10)
    if prior.spectrum == "gaussian":
        np.testing.assert_array_equal(np.asarray(dp2.prec_sqrt), np.asarray(dp.prec_sqrt))
    unused = ~np.isin(np.arange(KC), Z)
    np.testing.assert_array_equal(np.asarray(dp2.prec_sqrt)[unused], np.asarray(dp.prec_sqrt)[unused])
    for a, b in zip(_invariants(H2[:3], Ws2, omega2), _invariants(H[:3], Ws, omega)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_shears_compose_to_a_unit_determinant_map_and_its_inverse():
    H, Ws, r, omega, dp = _state(4)
    A, A_inv = draw_shears(jax.random.PRNGKey(0), axis_statistics(H, Ws, r, omega, dp), DP_PRIOR)
    np.testing.assert_allclose(np.linalg.det(A), 1.0, rtol=1e-12)
    np.testing.assert_allclose(A @ A_inv, np.eye(2), atol=1e-12)
