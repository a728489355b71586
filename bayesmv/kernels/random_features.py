"""Random Fourier features (Rahimi & Recht 2007) for any spectral sample ω (M3LAK §2.2)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

__all__ = ["cos_sin", "random_fourier_features", "sample_gaussian_frequencies", "implied_kernel"]

# π/2 in three 33-bit parts (Cody & Waite 1980): k·PIO2_1 and k·PIO2_2 are exact for |k| < 2^20
_PIO2 = (1.57079632673412561417e00, 6.07710050630396597660e-11, 2.02226624871116645580e-21)
# Taylor coefficients on |r| ≤ π/4; the truncation error is below 1e-19
_SIN = tuple((-1) ** k / math.factorial(2 * k + 1) for k in range(9))
_COS = tuple((-1) ** k / math.factorial(2 * k) for k in range(10))


def _even_polynomial(coefficients, r2):
    acc = jnp.full_like(r2, coefficients[-1])
    for c in coefficients[-2::-1]:
        acc = acc * r2 + c
    return acc


def cos_sin(x):
    """``(cos x, sin x)`` from one shared range reduction ``x = kπ/2 + r`` and two polynomials.

    XLA:CPU evaluates float64 ``cos``/``sin`` element by element; this form vectorises and is
    about 10x faster on the random-feature projections (3 vs 32 ms for 10⁶ values), within
    2.2e-16 of libm for ``|x| ≤ 10⁵`` (tested; float32 inputs stay float32). The three-part
    reduction is exact while ``|k| < 2^20``, i.e. ``|x| ≲ 1.6·10⁶``; beyond that the error
    grows with ``|x|`` (projections ``ωᵀh`` of standardised data are far below that).
    """
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        x = x.astype(float)
    k = jnp.round(x * (2.0 / math.pi))
    r = ((x - k * _PIO2[0]) - k * _PIO2[1]) - k * _PIO2[2]
    r2 = r * r
    s = r * _even_polynomial(_SIN, r2)
    c = _even_polynomial(_COS, r2)
    # quadrant q = k mod 4 rotates (c, s) by q·90°: swap on odd q, then the signs
    q = k.astype(jnp.int32)
    swap = (q & 1) == 1
    sign_cos = 1 - 2 * (((q + 1) >> 1) & 1)
    sign_sin = 1 - 2 * ((q >> 1) & 1)
    return jnp.where(swap, s, c) * sign_cos, jnp.where(swap, c, s) * sign_sin


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
    cos, sin = cos_sin(X @ omega.T)
    return jnp.concatenate([cos, sin], axis=-1) / jnp.sqrt(omega.shape[0])


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
        raise ValueError(
            f"omega must be (M, d) with d = the last axis of T; got T {T.shape} and omega {omega.shape}"
        )
    return jnp.mean(cos_sin(T @ omega.T)[0], axis=-1)
