"""Random Fourier features (Rahimi & Recht 2007) for any spectral sample ω (M3LAK §2.2)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

__all__ = ["random_fourier_features", "sample_gaussian_frequencies", "implied_kernel"]


def random_fourier_features(X, omega):
    """``φ(x) = M^{-1/2} [cos(ω x), sin(ω x)]`` for frequencies ``omega`` of shape ``(M, d)``.

    Returns ``(n, 2M)``; ``φ(x)'φ(x') = M^{-1} Σ_j cos(ω_j'(x - x'))`` is an unbiased estimate
    of the shift-invariant kernel whose spectral density ω was drawn from.
    """
    proj = jnp.asarray(X) @ jnp.asarray(omega).T
    return jnp.concatenate([jnp.cos(proj), jnp.sin(proj)], axis=-1) / jnp.sqrt(omega.shape[0])


def sample_gaussian_frequencies(key, n_frequencies, dim, gamma=None, dtype=None):
    """Frequencies of the RBF kernel ``exp(-gamma |x - x'|^2)``: ``ω ~ N(0, 2 gamma I)``.

    ``gamma=None`` means ``1 / dim``, as for ``rbf_kernel``.
    """
    gamma = 1.0 / dim if gamma is None else gamma
    dtype = dtype or jnp.result_type(float)
    return jnp.sqrt(2.0 * gamma) * jax.random.normal(key, (n_frequencies, dim), dtype=dtype)


def implied_kernel(T, omega):
    """Kernel implied by frequencies ``omega`` at lags ``T`` (shape ``(k, d)``): ``mean_j cos(ω_j' t)``."""
    return jnp.mean(jnp.cos(jnp.asarray(T) @ jnp.asarray(omega).T), axis=-1)
