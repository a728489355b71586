"""Small HMC building blocks for the non-conjugate M3LAK blocks (paper eqs. 3–4).

* :func:`rowwise_hmc_step` — vectorised HMC over the rows of a matrix whose rows are
  conditionally independent (``H``): one trajectory and one Metropolis test per row, a shared
  mass matrix ``M = L Lᵀ`` and a shared step size, jittered per row.
* :func:`joint_hmc_step` — plain HMC on one joint block (``Ω``), identity mass.

Both return the new position, the acceptance probabilities and a divergence flag; they never
return a non-finite position (a non-finite proposal has acceptance probability 0).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy.linalg import solve_triangular

__all__ = ["joint_hmc_step", "rowwise_hmc_step", "DIVERGENCE_THRESHOLD"]

DIVERGENCE_THRESHOLD = 1000.0


def rowwise_hmc_step(key, x, potential_rows, step_size, n_steps, mass_chol=None, jitter=0.2):
    """One HMC transition for every row of ``x`` (N, d) targeting ``∏_n exp(-U_n(x_n))``.

    ``potential_rows(x) -> (N,)``; the gradient of its sum is the per-row gradient because the
    rows do not interact. ``mass_chol`` is the lower Cholesky factor ``L`` of a mass matrix
    shared by all rows (momentum ``p = L ε``, velocity ``M^{-1} p``).
    """
    N, d = x.shape
    k_eps, k_p, k_u = jax.random.split(key, 3)
    eps = step_size * (1.0 + jitter * (2.0 * jax.random.uniform(k_eps, (N, 1), dtype=x.dtype) - 1.0))
    grad_fn = jax.grad(lambda z: jnp.sum(potential_rows(z)))
    e = jax.random.normal(k_p, x.shape, dtype=x.dtype)
    if mass_chol is None:
        p0 = e

        def velocity(p):
            return p

        def kinetic(p):
            return 0.5 * jnp.sum(p**2, -1)
    else:
        p0 = e @ mass_chol.T

        def velocity(p):  # M^{-1} p for each row
            w = solve_triangular(mass_chol, p.T, lower=True)
            return solve_triangular(mass_chol.T, w, lower=False).T

        def kinetic(p):
            w = solve_triangular(mass_chol, p.T, lower=True)
            return 0.5 * jnp.sum(w**2, 0)

    def body(_, carry):
        z, p, g = carry
        p = p - 0.5 * eps * g
        z = z + eps * velocity(p)
        g = grad_fn(z)
        p = p - 0.5 * eps * g
        return z, p, g

    z, p, _ = jax.lax.fori_loop(0, n_steps, body, (x, p0, grad_fn(x)))
    delta = potential_rows(z) + kinetic(p) - potential_rows(x) - kinetic(p0)
    delta = jnp.where(jnp.isfinite(delta), delta, jnp.inf)
    accept_prob = jnp.exp(jnp.minimum(0.0, -delta))
    u = jax.random.uniform(k_u, (N,), dtype=x.dtype)
    accept = jnp.log(u) < -delta
    new = jnp.where(accept[:, None], z, x)
    return new, accept_prob, delta > DIVERGENCE_THRESHOLD


def joint_hmc_step(key, x, potential, step_size, n_steps, jitter=0.2):
    """One HMC transition (identity mass, jittered step size) on the whole array ``x``."""
    k_eps, k_p, k_u = jax.random.split(key, 3)
    eps = step_size * (1.0 + jitter * (2.0 * jax.random.uniform(k_eps, (), dtype=x.dtype) - 1.0))
    grad_fn = jax.grad(potential)
    p0 = jax.random.normal(k_p, x.shape, dtype=x.dtype)

    def body(_, carry):
        z, p, g = carry
        p = p - 0.5 * eps * g
        z = z + eps * p
        g = grad_fn(z)
        p = p - 0.5 * eps * g
        return z, p, g

    z, p, _ = jax.lax.fori_loop(0, n_steps, body, (x, p0, grad_fn(x)))
    delta = potential(z) + 0.5 * jnp.sum(p**2) - potential(x) - 0.5 * jnp.sum(p0**2)
    delta = jnp.where(jnp.isfinite(delta), delta, jnp.inf)
    accept_prob = jnp.exp(jnp.minimum(0.0, -delta))
    accept = jnp.log(jax.random.uniform(k_u, (), dtype=x.dtype)) < -delta
    return jnp.where(accept, z, x), accept_prob, delta > DIVERGENCE_THRESHOLD
