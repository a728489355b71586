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

#: A trajectory whose energy error exceeds this is counted as divergent (NumPyro's value).
DIVERGENCE_THRESHOLD = 1000.0


def _value_and_row_grads(potential_rows):
    def f(z):
        values, pullback = jax.vjp(potential_rows, z)
        return values, pullback(jnp.ones_like(values))[0]

    return f


def _leapfrog(value_and_grad, velocity, x, p0, eps, n_steps):
    """``n_steps`` leapfrog steps; returns the end point, momentum and potential there."""
    u0, g0 = value_and_grad(x)

    def body(_, carry):
        z, p, _, g = carry
        p = p - 0.5 * eps * g
        z = z + eps * velocity(p)
        u, g = value_and_grad(z)
        p = p - 0.5 * eps * g
        return z, p, u, g

    z, p, u, _ = jax.lax.fori_loop(0, n_steps, body, (x, p0, u0, g0))
    return z, p, u, u0


def _metropolis(key, x, z, delta):
    delta = jnp.where(jnp.isfinite(delta), delta, jnp.inf)
    accept = jnp.log(jax.random.uniform(key, delta.shape, dtype=x.dtype)) < -delta
    new = jnp.where(jnp.reshape(accept, accept.shape + (1,) * (x.ndim - accept.ndim)), z, x)
    return new, jnp.exp(jnp.minimum(0.0, -delta)), delta > DIVERGENCE_THRESHOLD


def rowwise_hmc_step(key, x, potential_rows, step_size, n_steps, mass_chol=None, jitter=0.2):
    """One HMC transition for every row of ``x`` (N, d), targeting ``∏_n exp(-U_n(x_n))``.

    One trajectory and one Metropolis test per row. One reverse pass of ``potential_rows``
    gives every row's gradient because the rows do not interact. The momentum is ``p = L ε``;
    the velocity ``M^{-1} p`` uses the d×d inverse ``L^{-T} L^{-1}`` formed once per call by
    triangular solves (d is small, N is large). A non-finite proposal has acceptance
    probability 0: it is never returned.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    x : jax.Array of shape (N, d)
        The current position, one row per independent target.
    potential_rows : callable
        ``x ↦ (U_n(x_n))_n``, the rows' potentials, shape ``(N,)``.
    step_size : float or jax.Array of shape ()
        The leapfrog step size, shared by the rows.
    n_steps : int
        The number of leapfrog steps.
    mass_chol : jax.Array of shape (d, d) or None, default=None
        The lower Cholesky factor ``L`` of a mass matrix ``M = L Lᵀ`` shared by all rows; None:
        the identity.
    jitter : float, default=0.2
        Each row's step size is drawn uniformly in ``step_size · (1 ± jitter)``.

    Returns
    -------
    x : jax.Array of shape (N, d)
        The new position.
    accept_prob : jax.Array of shape (N,)
        Each row's acceptance probability.
    diverging : jax.Array of shape (N,), dtype bool
        Whether each row's energy error exceeded :data:`DIVERGENCE_THRESHOLD`.
    """
    N, d = x.shape
    k_eps, k_p, k_u = jax.random.split(key, 3)
    eps = step_size * (1.0 + jitter * (2.0 * jax.random.uniform(k_eps, (N, 1), dtype=x.dtype) - 1.0))
    e = jax.random.normal(k_p, x.shape, dtype=x.dtype)
    if mass_chol is None:
        p0, inv_mass = e, None
    else:
        p0 = e @ mass_chol.T
        inv_chol = solve_triangular(mass_chol, jnp.eye(d, dtype=x.dtype), lower=True)  # L^{-1}
        inv_mass = inv_chol.T @ inv_chol

    def velocity(p):
        return p if inv_mass is None else p @ inv_mass

    z, p, u_end, u_start = _leapfrog(_value_and_row_grads(potential_rows), velocity, x, p0, eps, n_steps)
    delta = u_end + 0.5 * jnp.sum(p * velocity(p), -1) - u_start - 0.5 * jnp.sum(e**2, -1)
    return _metropolis(k_u, x, z, delta)


def joint_hmc_step(key, x, potential, step_size, n_steps, jitter=0.2):
    """One HMC transition (identity mass, jittered step size) on the whole array ``x``.

    A non-finite proposal has acceptance probability 0: it is never returned.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    x : jax.Array
        The current position, any shape.
    potential : callable
        ``x ↦ U(x)``, the potential (negative log density), a scalar.
    step_size : float or jax.Array of shape ()
        The leapfrog step size.
    n_steps : int
        The number of leapfrog steps.
    jitter : float, default=0.2
        The step size is drawn uniformly in ``step_size · (1 ± jitter)``.

    Returns
    -------
    x : jax.Array of the shape of ``x``
        The new position.
    accept_prob : jax.Array of shape ()
        The acceptance probability.
    diverging : jax.Array of shape (), dtype bool
        Whether the energy error exceeded :data:`DIVERGENCE_THRESHOLD`.
    """
    k_eps, k_p, k_u = jax.random.split(key, 3)
    eps = step_size * (1.0 + jitter * (2.0 * jax.random.uniform(k_eps, (), dtype=x.dtype) - 1.0))
    p0 = jax.random.normal(k_p, x.shape, dtype=x.dtype)
    z, p, u_end, u_start = _leapfrog(jax.value_and_grad(potential), lambda q: q, x, p0, eps, n_steps)
    delta = u_end + 0.5 * jnp.sum(p**2) - u_start - 0.5 * jnp.sum(p0**2)
    return _metropolis(k_u, x, z, delta)
