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
    X, omega = jnp.asarray(X), jnp.asarray(omega)
    if omega.ndim != 2 or X.ndim < 1 or X.shape[-1] != omega.shape[1]:
        raise ValueError(
            f"omega must be (M, d) with d = the last axis of X; got X {X.shape} and omega {omega.shape}"
        )
    proj = X @ omega.T
    return jnp.concatenate([jnp.cos(proj), jnp.sin(proj)], axis=-1) / jnp.sqrt(omega.shape[0])


def sample_gaussian_frequencies(key, n_frequencies, dim, gamma=None, dtype=None):
    """Frequencies of the RBF kernel ``exp(-gamma |x - x'|^2)``: ``ω ~ N(0, 2 gamma I)``.

    ``gamma=None`` means ``1 / dim``, as for ``rbf_kernel``.
    """
    import numbers

    for name, value in (("n_frequencies", n_frequencies), ("dim", dim)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if gamma is not None and isinstance(gamma, numbers.Real) and not (gamma > 0 and gamma < float("inf")):
        raise ValueError(f"gamma must be a finite number > 0, got {gamma!r}")
    gamma = 1.0 / dim if gamma is None else gamma
    dtype = dtype or jnp.result_type(float)
    return jnp.sqrt(2.0 * gamma) * jax.random.normal(key, (n_frequencies, dim), dtype=dtype)


def implied_kernel(T, omega):
    """Kernel implied by frequencies ``omega`` at lags ``T`` (shape ``(k, d)``): ``mean_j cos(ω_j' t)``."""
    T, omega = jnp.asarray(T), jnp.asarray(omega)
    if omega.ndim != 2 or T.ndim < 1 or T.shape[-1] != omega.shape[1]:
        raise ValueError(f"omega must be (M, d) with d = the last axis of T; got T {T.shape} and omega {omega.shape}")
    return jnp.mean(jnp.cos(T @ omega.T), axis=-1)
