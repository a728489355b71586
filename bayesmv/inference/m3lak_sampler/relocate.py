"""Relocation of single frequencies between DP components (not in the paper), for the logistic
likelihood: frequency ``j`` jumps to a fresh draw from a component, its two weights ``β_j``
refitted to it.

The joint (β, Ω) HMC moves each frequency only as far as its gradient leads; a frequency that
fits the labels' slow wave does not cross to a fast one through the region between, where it fits
nothing. This Metropolis–Hastings move proposes, for each ``j`` in turn, given the DP's sticks
``ϖ`` and components ``(μ_k, Σ_k)`` and everything else:

1. a component ``c' ~ ϖ_{c'} / Σ_k ϖ_k`` over the table and ``ω_j' ~ N(μ_{c'}, Σ_{c'})``;
2. ``β_j' = (β_{cos,j}', β_{sin,j}') ~ N(b(ω_j'), A(ω_j')^{-1})``, the Laplace approximation of
   ``p(β_j | ω_j', rest)``: a fixed number of Newton steps from ``0`` on ``log N(β_j | 0, I/v) +
   C Σ_n log σ(y_n f_n)``, and ``A`` its negative Hessian at the last step.

The target's factor ``ϖ_{z_j} N(ω_j | μ_{z_j}, Σ_{z_j})`` cancels against step 1, so the
acceptance ratio is ``N(β_j' | 0, I/v) L(ω_j', β_j') q(β_j | ω_j) / (N(β_j | 0, I/v) L(ω_j,
β_j) q(β_j' | ω_j'))`` with ``L = Π_n σ(y_n f_n)^C`` and ``q`` the Gaussian of step 2 (a
deterministic function of ``ω_j`` and the other frequencies' part of ``f``, so the reverse move's
density is exact).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ...kernels import random_fourier_features
from ...models.m3lak import feature_map, logistic_log_likelihood
from ..dp import DPState, sample_from_components, stick_weights

__all__ = ["relocate_frequencies", "weights_proposal"]

NEWTON_STEPS = 4


def _by_frequency(phi):
    """Random Fourier features ``φ`` ``(N, 2M)`` (cosines, then sines) as ``M^{-1/2}(cos(Hω_j),
    sin(Hω_j))`` for every frequency ``j``, shape ``(M, N, 2)``."""
    return jnp.moveaxis(phi.reshape(phi.shape[0], 2, phi.shape[1] // 2), -1, 0)


def weights_proposal(x, f_rest, y, valid, v, C):
    """The Laplace approximation of one frequency's weights ``p(β_j | ·)``, the proposal of step 2.

    ``p(β_j | ·) ∝ N(β_j | 0, I/v) Π_n σ(y_n (f_rest,n + x_nᵀβ_j))^C`` for features ``x``:
    ``NEWTON_STEPS`` Newton steps from 0, ``A`` the negative Hessian at the result.

    Parameters
    ----------
    x : jax.Array of shape (N, 2)
        The frequency's cosine and sine features.
    f_rest : jax.Array of shape (N,)
        The decision values without this frequency's terms.
    y : jax.Array of shape (N,)
        The labels ``y_n = ±1``.
    valid : jax.Array of shape (N,), dtype bool
        The rows whose label counts (False only on the padding rows of a sharded run).
    v : float or jax.Array of shape ()
        The prior precision ``v`` of ``β``.
    C : float
        The weight of each label's log-likelihood.

    Returns
    -------
    mean : jax.Array of shape (2,)
        The approximation's mean ``b``.
    chol : jax.Array of shape (2, 2)
        The lower Cholesky factor of its precision ``A``.
    """
    w = C * valid.astype(x.dtype)

    def grad_hess(b):
        s = jax.nn.sigmoid(-y * (f_rest + x @ b))  # 1 - σ(y f)
        g = -v * b + x.T @ (w * y * s)
        A = v * jnp.eye(2, dtype=x.dtype) + (x * (w * s * (1.0 - s))[:, None]).T @ x
        return g, A

    def newton(_, b):
        g, A = grad_hess(b)
        return b + jnp.linalg.solve(A, g)

    b = jax.lax.fori_loop(0, NEWTON_STEPS, newton, jnp.zeros(2, x.dtype))
    return b, jnp.linalg.cholesky(grad_hess(b)[1])


def _gaussian_log_density(x, mean, chol_prec):
    """``log N(x | mean, (L Lᵀ)^{-1})`` for ``chol_prec = L``."""
    q = chol_prec.T @ (x - mean)
    return jnp.sum(jnp.log(jnp.diag(chol_prec))) - 0.5 * q @ q - 0.5 * x.shape[0] * jnp.log(2 * jnp.pi)


def relocate_frequencies(key, H, omega, beta, v, dp: DPState, y, valid, C):
    """One relocation proposal per frequency, in order ``j = 0..M-1`` (module docstring).

    The proposals of step 1 and the random numbers are drawn up front; the Laplace fits and the
    accept tests run in turn. ``dp``'s sticks and components are unchanged.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    H : jax.Array of shape (N, m)
        The shared latent ``H``.
    omega : jax.Array of shape (M, m)
        The current frequencies ``Ω``.
    beta : jax.Array of shape (2M + 1,)
        The current weights ``β`` (cosines, then sines, then the bias).
    v : float or jax.Array of shape ()
        The prior precision ``v`` of ``β``.
    dp : DPState
        The DP table: sticks, components and assignments.
    y : jax.Array of shape (N,)
        The labels ``y_n = ±1``.
    valid : jax.Array of shape (N,), dtype bool
        The rows whose label counts (False only on the padding rows of a sharded run).
    C : float
        The weight of each label's log-likelihood.

    Returns
    -------
    omega : jax.Array of shape (M, m)
        The new frequencies.
    beta : jax.Array of shape (2M + 1,)
        The new weights.
    z : jax.Array of shape (M,)
        The new assignments.
    acceptance_rate : jax.Array of shape ()
        The fraction of the ``M`` proposals accepted.
    """
    M = omega.shape[0]
    k_comp, k_omega, k_beta, k_u = jax.random.split(key, 4)
    proposed_z, proposed = sample_from_components(
        k_comp, k_omega, stick_weights(dp.nu)[0], dp.mu, dp.prec_sqrt, M
    )
    eps_beta = jax.random.normal(k_beta, (M, 2), omega.dtype)
    log_u = jnp.log(jax.random.uniform(k_u, (M,), omega.dtype))
    features = feature_map(H, omega)  # (N, 2M + 1), the last column the bias's
    f = features @ beta
    x_old, x_new = _by_frequency(features[:, :-1]), _by_frequency(random_fourier_features(H, proposed))

    def log_likelihood(f_all):
        return C * jnp.sum(jnp.where(valid, logistic_log_likelihood(f_all, y), 0.0))

    def one(j, carry):
        omega, beta, z, f, log_lik, accepted = carry
        b_old = jnp.stack([beta[j], beta[M + j]])
        f_rest = f - x_old[j] @ b_old
        mean_new, chol_new = weights_proposal(x_new[j], f_rest, y, valid, v, C)
        mean_old, chol_old = weights_proposal(x_old[j], f_rest, y, valid, v, C)
        # β_j' = b + A^{-1/2} ε for A = L Lᵀ: solve Lᵀ(β_j' - b) = ε
        b_new = mean_new + jax.scipy.linalg.solve_triangular(chol_new.T, eps_beta[j], lower=False)
        f_new = f_rest + x_new[j] @ b_new
        log_lik_new = log_likelihood(f_new)
        log_ratio = (
            log_lik_new
            - log_lik
            - 0.5 * v * (b_new @ b_new - b_old @ b_old)
            + _gaussian_log_density(b_old, mean_old, chol_old)
            - _gaussian_log_density(b_new, mean_new, chol_new)
        )
        accept = log_u[j] < log_ratio
        omega = jnp.where(accept, omega.at[j].set(proposed[j]), omega)
        beta = jnp.where(accept, beta.at[j].set(b_new[0]).at[M + j].set(b_new[1]), beta)
        z = jnp.where(accept, z.at[j].set(proposed_z[j]), z)
        f = jnp.where(accept, f_new, f)
        log_lik = jnp.where(accept, log_lik_new, log_lik)
        return omega, beta, z, f, log_lik, accepted + accept

    carry = (omega, beta, dp.z, f, log_likelihood(f), jnp.zeros((), jnp.int32))
    omega, beta, z, _, _, accepted = jax.lax.fori_loop(0, M, one, carry)
    return omega, beta, z, accepted / M
