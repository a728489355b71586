"""Conjugate Gibbs conditionals of M3LAK (paper eqs. 1, 2, 10–14 with the DESIGN §5 errata).

Each function is pure and jit-able: ``sample_*_conditional(key, ...) -> draw``. Precision
matrices are factorised with one Cholesky each; no explicit inverses. float64 throughout.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy.linalg import cho_solve, solve_triangular

from . import _random
from .slice import slice_step

__all__ = [
    "gaussian_from_precision",
    "sample_beta_conditional",
    "sample_inverse_gaussian",
    "sample_lambda_conditional",
    "sample_r_conditional",
    "sample_tau_collapsed",
    "sample_tau_conditional",
    "tau_collapsed_log_density",
    "sample_u_conditional",
    "sample_v_conditional",
    "sample_wv_conditional",
]


def gaussian_from_precision(key, precision, rhs):
    """Draw ``N(P^{-1} rhs, P^{-1})``; ``rhs`` is ``(p,)`` or ``(p, k)`` (k independent columns
    sharing ``P``). One Cholesky ``P = L Lᵀ``; the noise is ``L^{-T} ε``."""
    L = jnp.linalg.cholesky(precision)
    mean = cho_solve((L, True), rhs)
    eps = jax.random.normal(key, rhs.shape, dtype=rhs.dtype)
    return mean + solve_triangular(L.T, eps, lower=False)


def sample_beta_conditional(key, features, y, lam, C, v):
    """β | λ, H, Ω, y (eq. 1): ``Σ^{-1} = vI + C² Σ_n φ̃_n φ̃_nᵀ/λ_n``,
    ``μ = Σ Σ_n C y_n (λ_n + C)/λ_n φ̃_n``."""
    P = features.shape[1]
    G = features * (C / jnp.sqrt(lam))[:, None]  # GᵀG = C² Σ φ̃φ̃ᵀ/λ; measured faster than (Fw)ᵀF
    prec = v * jnp.eye(P, dtype=features.dtype) + G.T @ G
    rhs = features.T @ (C * y * (lam + C) / lam)
    return gaussian_from_precision(key, prec, rhs)


def sample_inverse_gaussian(key, mean, shape=1.0):
    """Inverse-Gaussian ``IG(mean, shape)`` draws (Michael, Schucany & Haas 1976), written in the
    cancellation-free form ``x1 = μ / (1 + a + sqrt(2a + a²))``, ``a = μ χ²₁ / (2 shape)``, which
    stays exact as ``mean -> ∞`` (where ``x -> shape/χ²₁``)."""
    k1, k2 = jax.random.split(key)
    nu = jax.random.normal(k1, jnp.shape(mean), dtype=jnp.result_type(mean)) ** 2
    a = mean * nu / (2.0 * shape)
    x1 = mean / (1.0 + a + jnp.sqrt(a * (2.0 + a)))
    u = jax.random.uniform(k2, jnp.shape(mean), dtype=jnp.result_type(mean))
    return jnp.where(u <= mean / (mean + x1), x1, mean**2 / x1)


def sample_lambda_conditional(key, decision, y, C):
    """λ_n | · ~ GIG(½, 1, C²ζ_n²), ζ_n = 1 - y_n f_n (eq. 2), via 1/λ_n ~ IG(1/(C|ζ_n|), 1).

    ``|ζ|`` is floored at 1e-150 (λ then follows its ζ = 0 limit χ²₁ to double precision)."""
    zeta = jnp.abs(1.0 - y * decision)
    mean = 1.0 / (C * jnp.maximum(zeta, 1e-150))
    inv_lam = sample_inverse_gaussian(key, mean, 1.0)
    return 1.0 / inv_lam


def sample_u_conditional(key, X, H, W, V, tau, obs):
    """u_n^i | · (eq. 10): ``N((I + τVᵀV)^{-1} τVᵀ(x_n - W h_n), (I + τVᵀV)^{-1})`` for observed
    rows; prior ``N(0, I)`` for rows whose view is missing (``obs`` False). One K×K Cholesky."""
    K = V.shape[1]
    prec = jnp.eye(K, dtype=V.dtype) + tau * V.T @ V
    L = jnp.linalg.cholesky(prec)
    rhs = tau * (X @ V - H @ (W.T @ V))  # (N, K), without forming the (N, D) residual
    mean = cho_solve((L, True), rhs.T).T
    eps = jax.random.normal(key, mean.shape, dtype=mean.dtype)
    noise = solve_triangular(L.T, eps.T, lower=False).T
    return jnp.where(obs[:, None], mean + noise, eps)


def sample_wv_conditional(key, X, H, U, r, eta, tau, obs):
    """[W_i V_i] | · jointly (DESIGN §5, replaces eqs. 11–12): the rows of ``B = [W V]`` are
    independent ``N(P^{-1} τ Zᵀ x_{·d}, P^{-1})`` with ``P = diag(r, η·1) + τ ZᵀZ``,
    ``Z = [H U]`` over the observed rows. Returns ``(W, V)``."""
    m = H.shape[1]
    Z = jnp.concatenate([H, U], axis=1) * obs[:, None]
    prior = jnp.concatenate([r, jnp.full((U.shape[1],), eta, dtype=H.dtype)])
    prec = jnp.diag(prior) + tau * Z.T @ Z
    rhs = tau * Z.T @ X  # (m+K, D); X rows of missing views are zero
    B = gaussian_from_precision(key, prec, rhs).T  # (D, m+K)
    return B[:, :m], B[:, m:]


def sample_r_conditional(key, W, a_r, b_r):
    """r_ij | W_i ~ Γ(a_r + D_i/2, b_r + ½‖w_{i,·j}‖²) (eq. 13, corrected rate)."""
    D = W.shape[0]
    rate = b_r + 0.5 * jnp.sum(W**2, axis=0)
    return _random.gamma(key, a_r + 0.5 * D, rate.shape, W.dtype) / rate


def sample_tau_conditional(key, X, H, U, W, V, obs, a_tau, b_tau):
    """τ_i | · ~ Γ(a_τ + N_i D_i/2, b_τ + ½ Σ_{n observed} ‖x_n - W h_n - V u_n‖²) (eq. 14)."""
    D = X.shape[1]
    resid = (X - H @ W.T - U @ V.T) * obs[:, None]
    n_obs = jnp.sum(obs)
    rate = b_tau + 0.5 * jnp.sum(resid**2)
    return _random.gamma(key, a_tau + 0.5 * n_obs * D, (), X.dtype) / rate


def _collapsed_tau_terms(X, H, U, r, eta, obs):
    """Sufficient statistics of ``p(X_i | τ_i, H, U_i, r_i)`` with ``[W_i V_i]`` integrated out.

    With ``Z = [H U]`` (observed rows), ``A = diag(r, η·1)`` and ``A^{-1/2} ZᵀZ A^{-1/2} = Q Λ Qᵀ``,
    each column ``x_d ~ N(0, τ^{-1}I + Z A^{-1} Zᵀ)``; by the determinant lemma and Woodbury
    ``log p(X | τ) = (D N_o/2) log τ - (D/2) Σ_k log(1 + τλ_k) - ½τ‖X‖² + ½τ² Σ_k c_k/(1 + τλ_k)``
    with ``c = Σ_d (Qᵀ A^{-1/2} Zᵀ x_d)²``. Returns ``(λ, c, ‖X‖², N_o D)``."""
    Z = jnp.concatenate([H, U], axis=1) * obs[:, None]
    prior = jnp.concatenate([r, jnp.full((U.shape[1],), eta, dtype=H.dtype)])
    Zs = Z / jnp.sqrt(prior)
    lam, Q = jnp.linalg.eigh(Zs.T @ Zs)
    c = jnp.sum((Q.T @ (Zs.T @ X)) ** 2, axis=1)
    return jnp.maximum(lam, 0.0), c, jnp.sum(X**2), jnp.sum(obs) * X.shape[1]


def _collapsed_log_tau_density(log_tau, terms, a_tau, b_tau, D):
    """``log p(log τ | H, U, r, X)`` + const from :func:`_collapsed_tau_terms` (Gamma prior and
    the Jacobian of ``τ = exp(log τ)`` included)."""
    lam, c, sq, n_entries = terms
    tau = jnp.exp(log_tau)
    fit = sq - jnp.sum(c * tau / (1.0 + tau * lam))  # ‖X‖² - τ Σ c/(1+τλ) ≥ 0: the ridge residual
    return (
        (a_tau + 0.5 * n_entries) * log_tau
        - b_tau * tau
        - 0.5 * D * jnp.sum(jnp.log1p(tau * lam))
        - 0.5 * tau * fit
    )


def tau_collapsed_log_density(tau, X, H, U, r, eta, obs, a_tau, b_tau):
    """``log p(τ_i | H, U_i, r_i, X_i)`` + const with ``[W_i V_i]`` integrated out (a density in
    ``τ``; the Gamma(a_τ, b_τ) prior included)."""
    terms = _collapsed_tau_terms(X, H, U, r, eta, obs)
    log_tau = jnp.log(tau)
    return _collapsed_log_tau_density(log_tau, terms, a_tau, b_tau, X.shape[1]) - log_tau


def sample_tau_collapsed(key, X, H, U, r, eta, tau, obs, a_tau, b_tau):
    """τ_i | H, U_i, r_i with ``[W_i V_i]`` integrated out: one slice-sampling step in ``log τ``
    from the current ``tau`` (an MCMC move, not an independent draw). Follow it by
    :func:`sample_wv_conditional` at the new τ: together a joint move of ``(τ_i, W_i, V_i)``."""
    terms = _collapsed_tau_terms(X, H, U, r, eta, obs)
    D = X.shape[1]
    log_tau = slice_step(key, jnp.log(tau), lambda s: _collapsed_log_tau_density(s, terms, a_tau, b_tau, D))
    return jnp.exp(log_tau)


def sample_v_conditional(key, beta, a_v, b_v):
    """v | β ~ Γ(a_v + P/2, b_v + ½‖β‖²) (conjugate Gamma prior on β's precision)."""
    P = beta.shape[0]
    return _random.gamma(key, a_v + 0.5 * P, (), beta.dtype) / (b_v + 0.5 * jnp.sum(beta**2))
