"""Slice sampling: univariate (Neal 2003, §4: stepping out and shrinkage) and elliptical
(Murray, Adams & MacKay 2010) for a Gaussian prior times a likelihood.

Each function is one transition that leaves its target invariant, written with
``lax.while_loop`` so it is jit-able and vmappable.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ._random import loop_key

__all__ = ["elliptical_slice_step", "slice_step"]


def slice_step(key, x0, logpdf, width=1.0, max_steps=32):
    """One univariate slice-sampling transition from ``x0`` for ``exp(logpdf(x))`` (unnormalised).

    The slice level is ``logpdf(x0) - Exp(1)``; an interval of ``width`` placed at random around
    ``x0`` is stepped out at most ``max_steps`` widths in total (Neal 2003, Fig. 3, the step
    budget split at random between the sides), then shrunk towards ``x0`` until a point on the
    slice is drawn (Fig. 5). ``logpdf(x0)`` must be finite.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    x0 : float or jax.Array of shape ()
        The current point.
    logpdf : callable
        The target's log density up to a constant, a scalar function of a scalar.
    width : float, default=1.0
        The width of the initial interval, and of each step out.
    max_steps : int, default=32
        The most widths the stepped-out interval spans.

    Returns
    -------
    x : jax.Array of shape ()
        The new point.
    """
    k_level, k_place, k_split, k_shrink = jax.random.split(key, 4)
    dtype = jnp.result_type(x0, float)
    level = logpdf(x0) - jax.random.exponential(k_level, (), dtype)
    left = x0 - width * jax.random.uniform(k_place, (), dtype)
    right = left + width
    n_left = jnp.floor(max_steps * jax.random.uniform(k_split, (), dtype))
    n_right = max_steps - 1 - n_left

    def step_out(edge, budget, direction):
        def cond(state):
            e, b = state
            return (b > 0) & (logpdf(e) > level)

        def body(state):
            e, b = state
            return e + direction * width, b - 1

        return jax.lax.while_loop(cond, body, (edge, budget))[0]

    left = step_out(left, n_left, -1.0)
    right = step_out(right, n_right, 1.0)

    def shrink_cond(state):
        return ~state[3]

    def shrink_body(state):
        key, lo, hi, _, _ = state
        key, k = jax.random.split(key)
        x1 = lo + (hi - lo) * jax.random.uniform(k, (), dtype)
        on_slice = logpdf(x1) > level
        lo = jnp.where(~on_slice & (x1 < x0), x1, lo)
        hi = jnp.where(~on_slice & (x1 >= x0), x1, hi)
        return key, lo, hi, on_slice, x1

    return jax.lax.while_loop(
        shrink_cond, shrink_body, (loop_key(k_shrink), left, right, jnp.zeros((), bool), x0)
    )[4]


def elliptical_slice_step(key, x0, log_likelihood):
    """One elliptical slice-sampling transition (Murray, Adams & MacKay 2010, Fig. 2).

    For a target ``N(x; 0, I) exp(log_likelihood(x))``: ``x`` moves on the ellipse through ``x0``
    and an auxiliary prior draw, the angle bracket shrinking until a point above the slice level
    is found. Leaves that target invariant; any array shape.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    x0 : jax.Array
        The current point, any shape.
    log_likelihood : callable
        The log-likelihood, a scalar function of an array of ``x0``'s shape.

    Returns
    -------
    x : jax.Array of the shape of ``x0``
        The new point.
    """
    k_nu, k_level, k_angle, k_shrink = jax.random.split(key, 4)
    dtype = x0.dtype
    nu = jax.random.normal(k_nu, x0.shape, dtype)
    level = log_likelihood(x0) - jax.random.exponential(k_level, (), dtype)
    theta = 2.0 * jnp.pi * jax.random.uniform(k_angle, (), dtype)

    def propose(t):
        return x0 * jnp.cos(t) + nu * jnp.sin(t)

    def cond(state):
        return ~state[4]

    def body(state):
        key, lo, hi, theta, _, x = state
        x = propose(theta)
        ok = log_likelihood(x) > level
        lo = jnp.where(~ok & (theta < 0), theta, lo)
        hi = jnp.where(~ok & (theta >= 0), theta, hi)
        key, k = jax.random.split(key)
        new_theta = jnp.where(ok, theta, lo + (hi - lo) * jax.random.uniform(k, (), dtype))
        return key, lo, hi, new_theta, ok, x

    init = (loop_key(k_shrink), theta - 2.0 * jnp.pi, theta, theta, jnp.zeros((), bool), x0)
    return jax.lax.while_loop(cond, body, init)[5]
