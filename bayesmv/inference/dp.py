"""Slice sampler for the DP Gaussian mixture prior on the frequencies ω (paper eqs. 5–9;
Walker 2007, Kalli, Griffin & Walker 2011) with Normal-Inverse-Wishart conjugate updates.

JAX needs static shapes, so the (infinite) stick-breaking representation lives in a table of
``capacity`` slots. A sweep given the assignments ``z``:

1. sticks ``ν_k ~ Beta(1 + s_k, α + Σ_{l>k} s_l)`` and component parameters ``(μ_k, Σ_k)`` from
   their NIW posterior, for every slot (empty slots: prior draws — the slots beyond the last
   occupied one are exactly the fresh stick-breaking extensions of eq. 6);
2. slices ``t_j ~ U(0, ϖ_{z_j})`` (eq. 5);
3. ``z_j ∝ 1(ϖ_k > t_j) N(ω_j | μ_k, Σ_k)`` (eq. 7).

Every component that can receive an assignment has ``ϖ_k > min_j t_j``; if the stick mass left
after the last slot is still ``≥ min_j t_j`` a component outside the table could, so the sampler
sets the ``overflow`` flag and the driver raises (never a silent truncation).

A component is stored by its mean ``μ`` and a square-root ``G`` of its precision
(``Σ^{-1} = G Gᵀ``) with ``log det Σ^{-1}``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from . import _random

__all__ = [
    "DPState",
    "component_counts",
    "component_log_density",
    "dp_prior_draw",
    "dp_slice_update",
    "sample_niw",
]


class DPState(NamedTuple):
    nu: jnp.ndarray  # (Kc,) stick proportions
    mu: jnp.ndarray  # (Kc, m)
    prec_sqrt: jnp.ndarray  # (Kc, m, m), Σ_k^{-1} = G Gᵀ
    logdet_prec: jnp.ndarray  # (Kc,)
    z: jnp.ndarray  # (M,) int32 assignments
    overflow: jnp.ndarray  # () bool


def component_counts(state: DPState):
    """The number of frequencies assigned to each component slot, ``(Kc,)`` int32."""
    return jnp.zeros(state.nu.shape[0], jnp.int32).at[state.z].add(1)


def stick_weights(nu):
    """``ϖ_k = ν_k Π_{l<k}(1 - ν_l)`` and the mass left after the last slot."""
    log1m = jnp.log1p(-jnp.clip(nu, 0.0, 1.0 - 1e-16))
    log_before = jnp.concatenate([jnp.zeros(1, nu.dtype), jnp.cumsum(log1m)[:-1]])
    weights = nu * jnp.exp(log_before)
    remaining = jnp.exp(jnp.sum(log1m))
    return weights, remaining


def _solve_upper_batched(U, B):
    """``U^{-1} B`` for a batch of small upper-triangular ``U`` (K, m, m), ``B`` (K, m, r), by
    back substitution vectorised over the batch: m fused steps instead of K LAPACK calls."""
    m = U.shape[-1]

    def row(k, X):
        i = m - 1 - k  # rows > i are solved, rows ≤ i of X are still zero
        x_i = (B[:, i, :] - jnp.einsum("kj,kjr->kr", U[:, i, :], X)) / U[:, i, i, None]
        return X.at[:, i, :].set(x_i)

    return jax.lax.fori_loop(0, m, row, jnp.zeros(B.shape, jnp.result_type(U, B)))


def sample_niw(key, mu_n, kappa_n, nu_n, psi_n, log_chi2=None):
    """Draws ``Σ_k ~ IW(Ψ_k, ν_k)``, ``μ_k | Σ_k ~ N(μ_k', Σ_k/κ_k)`` for a batch of ``k``
    (leading axis), returned as ``(μ, G, log det Σ^{-1})`` with ``Σ^{-1} = G Gᵀ`` (Bartlett).

    ``Ψ = C Cᵀ``; Bartlett ``A`` (lower, ``A_ii² ~ χ²(ν - i)``, ``A_ij ~ N(0,1)``) gives
    ``Σ^{-1} = C^{-T} A Aᵀ C^{-1} ~ Wishart(Ψ^{-1}, ν)``, so ``G = C^{-T} A`` and
    ``Σ^{1/2} = C A^{-T}``. ``log_chi2`` (``log A_ii²``, shape ``(K, m)``) may be passed in so
    that the caller can batch all its Gamma draws into one rejection loop."""
    Kb, m = mu_n.shape
    dtype = mu_n.dtype
    k1, k2, k3 = jax.random.split(key, 3)
    if log_chi2 is None:
        dof = nu_n[:, None] - jnp.arange(m, dtype=dtype)[None, :]
        log_chi2 = jnp.log(2.0) + _random.log_gamma(k1, dof / 2.0, None, dtype)
    diag = jnp.exp(0.5 * log_chi2)
    lower = jnp.tril(jax.random.normal(k2, (Kb, m, m), dtype=dtype), -1)
    A = lower + diag[:, :, None] * jnp.eye(m, dtype=dtype)[None]
    Cf = jnp.linalg.cholesky(psi_n)
    G = _solve_upper_batched(jnp.swapaxes(Cf, -1, -2), A)  # C^{-T} A
    logdet_prec = jnp.sum(log_chi2, -1) - 2.0 * jnp.sum(jnp.log(jnp.diagonal(Cf, axis1=-2, axis2=-1)), -1)
    eps = jax.random.normal(k3, (Kb, m, 1), dtype=dtype)
    z = _solve_upper_batched(jnp.swapaxes(A, -1, -2), eps)  # A^{-T} ε
    mu = mu_n + (Cf @ z)[..., 0] / jnp.sqrt(kappa_n)[:, None]
    return mu, G, logdet_prec


def component_log_density(omega, mu, prec_sqrt, logdet_prec):
    """``log N(ω_j | μ_k, Σ_k)`` for all ``j, k``: shape ``(M, Kc)``."""
    m = omega.shape[-1]
    diff = omega[:, None, :] - mu[None, :, :]  # (M, Kc, m)
    q = jnp.einsum("jki,kil->jkl", diff, prec_sqrt)
    return -0.5 * jnp.sum(q**2, -1) + 0.5 * logdet_prec[None, :] - 0.5 * m * jnp.log(2 * jnp.pi)


def _niw_posterior_params(omega, onehot, mu0, kappa0, nu0, psi0):
    counts = onehot.sum(0)  # (Kc,)
    sums = onehot.T @ omega  # (Kc, m)
    mean = sums / jnp.maximum(counts, 1.0)[:, None]
    diff = omega[:, None, :] - mean[None, :, :]  # (M, Kc, m)
    scatter = jnp.einsum("jk,jki,jkl->kil", onehot, diff, diff)
    kappa_n = kappa0 + counts
    nu_n = nu0 + counts
    mu_n = (kappa0 * mu0[None, :] + sums) / kappa_n[:, None]
    dm = mean - mu0[None, :]
    psi_n = (
        psi0[None] + scatter + (kappa0 * counts / kappa_n)[:, None, None] * (dm[:, :, None] * dm[:, None, :])
    )
    return counts, mu_n, kappa_n, nu_n, psi_n


def dp_slice_update(key, state: DPState, omega, alpha, mu0, kappa0, nu0, psi0):
    """One slice-sampler sweep (eqs. 5–9) given the frequencies ``omega`` (M, m)."""
    Kc = state.nu.shape[0]
    k_nu, k_niw, k_t, k_z = jax.random.split(key, 4)
    onehot = jax.nn.one_hot(state.z, Kc, dtype=omega.dtype)
    counts, mu_n, kappa_n, nu_n, psi_n = _niw_posterior_params(omega, onehot, mu0, kappa0, nu0, psi0)
    # sticks (equivalent to eq. 9's Dirichlet on the instantiated weights plus the α remainder)
    after = jnp.cumsum(counts[::-1])[::-1] - counts
    m = omega.shape[1]
    dof = nu_n[:, None] - jnp.arange(m, dtype=omega.dtype)[None, :]
    # one rejection loop for every Gamma variate of the sweep: sticks (two per slot) and Bartlett
    shapes = jnp.concatenate([1.0 + counts, alpha + after, (dof / 2.0).ravel()])
    lg = _random.log_gamma(k_nu, shapes, None, omega.dtype)
    nu = jax.nn.sigmoid(lg[:Kc] - lg[Kc : 2 * Kc])
    log_chi2 = jnp.log(2.0) + lg[2 * Kc :].reshape(Kc, m)
    mu, G, logdet = sample_niw(k_niw, mu_n, kappa_n, nu_n, psi_n, log_chi2)
    weights, remaining = stick_weights(nu)
    # slices (eq. 5) and assignments (eq. 7)
    t = jax.random.uniform(k_t, state.z.shape, dtype=omega.dtype) * weights[state.z]
    overflow = state.overflow | (remaining >= jnp.min(t))
    logp = component_log_density(omega, mu, G, logdet)
    allowed = weights[None, :] > t[:, None]
    logits = jnp.where(allowed, logp, -jnp.inf)
    z = jax.random.categorical(k_z, logits, axis=-1).astype(state.z.dtype)
    return DPState(nu, mu, G, logdet, z, overflow)


def dp_prior_draw(key, capacity, n_frequencies, alpha, mu0, kappa0, nu0, psi0):
    """Draw the DP state and ``Ω`` from the prior truncated to ``capacity`` slots: sticks, NIW
    components, ``z_j ~ Cat(ϖ)`` renormalised over the table and ``ω_j ~ N(μ_{z_j}, Σ_{z_j})``.
    ``overflow`` is set when the stick mass left after the table exceeds 1e-6 (the truncation
    is then not negligible: increase ``capacity``)."""
    m = mu0.shape[0]
    k_nu, k_niw, k_z, k_w = jax.random.split(key, 4)
    dtype = mu0.dtype
    nu = _random.beta(k_nu, 1.0, alpha, (capacity,), dtype)
    ones = jnp.ones(capacity, dtype)
    mu, G, logdet = sample_niw(
        k_niw,
        jnp.broadcast_to(mu0, (capacity, m)),
        kappa0 * ones,
        nu0 * ones,
        jnp.broadcast_to(psi0, (capacity, m, m)),
    )
    weights, remaining = stick_weights(nu)
    z = jax.random.categorical(k_z, jnp.log(weights), shape=(n_frequencies,)).astype(jnp.int32)
    eps = jax.random.normal(k_w, (n_frequencies, m), dtype=dtype)
    # ω = μ + Σ^{1/2} ε with Σ^{1/2} = G^{-T}
    omega = mu[z] + jax.vmap(lambda g, e: jnp.linalg.solve(g.T, e))(G[z], eps)
    overflow = remaining > 1e-6
    return DPState(nu, mu, G, logdet, z, overflow), omega
