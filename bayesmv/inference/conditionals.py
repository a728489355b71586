"""Conjugate Gibbs conditionals of M3LAK (paper eqs. 1, 2, 10–14 with the errata of ``docs/m3lak_sampler.md``).

Each function is pure and jit-able: ``sample_*_conditional(key, ...) -> draw``. Precision
matrices are factorised with one Cholesky each (the per-feature ``[W V]`` draw and the collapsed
noise densities: one eigendecomposition per view for all features); no explicit inverses.
float64 throughout.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy.linalg import cho_solve, solve_triangular

from . import _random
from .slice import elliptical_slice_step, slice_step

__all__ = [
    "gaussian_from_precision",
    "latent_moments_given_views",
    "noise_weighted",
    "sample_beta_conditional",
    "sample_inverse_gaussian",
    "sample_lambda_conditional",
    "sample_r_conditional",
    "collapsed_precision_log_density",
    "sample_feature_noise_collapsed",
    "sample_precisions_collapsed",
    "sample_tau_conditional",
    "sample_u_collapsed",
    "u_collapsed_log_likelihood",
    "sample_u_conditional",
    "sample_v_conditional",
    "sample_wv_conditional",
    "view_precision_terms",
]


def noise_weighted(tau, A):
    """``diag(τ) A``: the rows of ``A`` (one per feature) scaled by their noise precisions.

    Parameters
    ----------
    tau : float or jax.Array of shape (D,)
        The noise precision: a scalar (one per view) or one per feature.
    A : jax.Array of shape (D, k)
        One row per feature.

    Returns
    -------
    weighted : jax.Array of shape (D, k)
        ``diag(τ) A``.
    """
    return jnp.reshape(tau, (-1, 1)) * A


def gaussian_from_precision(key, precision, rhs):
    """Draw ``N(P^{-1} rhs, P^{-1})`` from a precision matrix ``P`` without inverting it.

    One Cholesky ``P = L Lᵀ``; the noise is ``L^{-T} ε``.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    precision : jax.Array of shape (p, p)
        The precision matrix ``P`` (symmetric positive definite).
    rhs : jax.Array of shape (p,) or (p, k)
        The right-hand side; with ``k`` columns, ``k`` independent draws sharing ``P``.

    Returns
    -------
    draw : jax.Array of the shape of ``rhs``
        The draw(s), one per column of ``rhs``.
    """
    L = jnp.linalg.cholesky(precision)
    mean = cho_solve((L, True), rhs)
    eps = jax.random.normal(key, rhs.shape, dtype=rhs.dtype)
    return mean + solve_triangular(L.T, eps, lower=False)


def view_precision_terms(W, V, tau):
    """One view's terms of the latent ``h``'s conditional given the view, its own latent ``u``
    integrated out.

    ``A = WᵀΣ⁻¹W`` and ``Σ⁻¹W`` with ``Σ = VVᵀ + T⁻¹`` (``T = τI``, or ``diag(τ)`` with one
    precision per feature), by Woodbury: ``Σ⁻¹ = T − TV G⁻¹ VᵀT``, ``G = I + VᵀTV`` (one
    ``K x K`` Cholesky). A point's own term is ``xᵀΣ⁻¹W``.

    Parameters
    ----------
    W : jax.Array of shape (D, m)
        The view's loadings of the shared latent.
    V : jax.Array of shape (D, K)
        The view's loadings of its own latent.
    tau : float or jax.Array of shape (D,)
        The noise precision: one for the view or one per feature.

    Returns
    -------
    A : jax.Array of shape (m, m)
        ``WᵀΣ⁻¹W`` (symmetrised).
    SW : jax.Array of shape (D, m)
        ``Σ⁻¹W``.
    """
    K = V.shape[1]
    TW, TV = noise_weighted(tau, W), noise_weighted(tau, V)
    G = jnp.eye(K, dtype=W.dtype) + V.T @ TV
    Lg = jnp.linalg.cholesky(G)
    Q = cho_solve((Lg, True), TV.T @ W)  # G⁻¹VᵀTW, (K, m)
    A = W.T @ TW - (W.T @ TV) @ Q
    return 0.5 * (A + A.T), TW - TV @ Q


def latent_moments_given_views(Ws, Vs, taus, Xs, obs):
    """Mean and precision factor of each point's latent ``h_n`` given its observed views alone.

    ``h_n | x_n ~ N(P_n⁻¹ b_n, P_n⁻¹)`` with the views' own latents integrated out:
    ``P_n = I + Σ_{observed i} W_iᵀΣ_i⁻¹W_i`` and ``b_n = Σ_{observed i} W_iᵀΣ_i⁻¹x_n^i``
    (:func:`view_precision_terms`); one ``m x m`` Cholesky per point.

    Parameters
    ----------
    Ws, Vs : sequence of jax.Array of shape (D_i, m) and (D_i, K)
        Per view, the loadings of the shared and of its own latent.
    taus : sequence of float or jax.Array of shape (D_i,)
        Per view, its noise precision(s).
    Xs : sequence of jax.Array of shape (N, D_i)
        The views, zero on the rows a view does not observe.
    obs : jax.Array of bool of shape (N, V)
        Whether view ``i`` observes point ``n``.

    Returns
    -------
    mean : jax.Array of shape (N, m)
        ``E[h_n | x_n]``.
    L : jax.Array of shape (N, m, m)
        The lower Cholesky factor of the precision ``P_n``.
    """
    obs = jnp.asarray(obs)
    m, n = Ws[0].shape[1], Xs[0].shape[0]
    P = jnp.broadcast_to(jnp.eye(m, dtype=Ws[0].dtype), (n, m, m))
    b = jnp.zeros((n, m), dtype=Ws[0].dtype)
    for i, (W, V, tau, X) in enumerate(zip(Ws, Vs, taus, Xs)):
        A, SW = view_precision_terms(W, V, tau)
        o = obs[:, i].astype(W.dtype)
        P = P + o[:, None, None] * A
        b = b + o[:, None] * (X @ SW)
    L = jnp.linalg.cholesky(P)
    mean = jax.vmap(lambda Ln, bn: cho_solve((Ln, True), bn))(L, b)
    return mean, L


def sample_beta_conditional(key, features, y, lam, C, v):
    """Draw the weights ``β | λ, H, Ω, y`` from their Gaussian conditional (eq. 1).

    ``Σ^{-1} = vI + C² Σ_n φ̃_n φ̃_nᵀ/λ_n``, ``μ = Σ Σ_n C y_n (λ_n + C)/λ_n φ̃_n``.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    features : jax.Array of shape (N, P)
        The random Fourier features ``φ̃_n``, one row per sample (``P = 2M + 1``).
    y : jax.Array of shape (N,)
        The labels ``y_n = ±1``.
    lam : jax.Array of shape (N,)
        The augmentation variables ``λ_n``.
    C : float
        The weight ``C`` of the labels' pseudo-likelihood.
    v : float or jax.Array of shape ()
        The prior precision ``v`` of ``β``.

    Returns
    -------
    beta : jax.Array of shape (P,)
        The draw of ``β``.
    """
    P = features.shape[1]
    G = features * (C / jnp.sqrt(lam))[:, None]  # GᵀG = C² Σ φ̃φ̃ᵀ/λ; measured faster than (Fw)ᵀF
    prec = v * jnp.eye(P, dtype=features.dtype) + G.T @ G
    rhs = features.T @ (C * y * (lam + C) / lam)
    return gaussian_from_precision(key, prec, rhs)


def sample_inverse_gaussian(key, mean, shape=1.0):
    """Inverse-Gaussian ``IG(mean, shape)`` draws (Michael, Schucany & Haas 1976).

    Written in the cancellation-free form ``x1 = μ / (1 + a + sqrt(2a + a²))``,
    ``a = μ χ²₁ / (2 shape)``, which stays exact as ``mean -> ∞`` (where ``x -> shape/χ²₁``).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    mean : float or jax.Array
        The mean ``μ`` of each draw, any shape.
    shape : float or jax.Array, default=1.0
        The shape parameter, broadcast against ``mean``.

    Returns
    -------
    draws : jax.Array of the shape of ``mean``
        One draw per entry of ``mean``.
    """
    k1, k2 = jax.random.split(key)
    nu = jax.random.normal(k1, jnp.shape(mean), dtype=jnp.result_type(mean)) ** 2
    a = mean * nu / (2.0 * shape)
    x1 = mean / (1.0 + a + jnp.sqrt(a * (2.0 + a)))
    u = jax.random.uniform(k2, jnp.shape(mean), dtype=jnp.result_type(mean))
    return jnp.where(u <= mean / (mean + x1), x1, mean**2 / x1)


def sample_lambda_conditional(key, decision, y, C):
    """Draw the augmentation variables ``λ_n | · ~ GIG(½, 1, C²ζ_n²)``, ``ζ_n = 1 - y_n f_n`` (eq. 2).

    Drawn as ``1/λ_n ~ IG(1/(C|ζ_n|), 1)`` (Polson & Scott 2011). ``|ζ|`` is floored at 1e-150
    (``λ`` then follows its ``ζ = 0`` limit ``χ²₁`` to double precision).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    decision : jax.Array of shape (N,)
        The decision values ``f_n``.
    y : jax.Array of shape (N,)
        The labels ``y_n = ±1``.
    C : float
        The weight ``C`` of the hinge pseudo-likelihood.

    Returns
    -------
    lam : jax.Array of shape (N,)
        The draws of ``λ_n``.
    """
    zeta = jnp.abs(1.0 - y * decision)
    mean = 1.0 / (C * jnp.maximum(zeta, 1e-150))
    inv_lam = sample_inverse_gaussian(key, mean, 1.0)
    return 1.0 / inv_lam


def sample_u_conditional(key, X, H, W, V, tau, obs):
    """Draw the view's own latent ``u_n^i | ·`` from its Gaussian conditional (eq. 10).

    ``N((I + VᵀTV)^{-1} VᵀT(x_n - W h_n), (I + VᵀTV)^{-1})``, ``T = τ I`` (or ``diag(τ)`` with
    one precision per feature), for observed rows; prior ``N(0, I)`` for rows whose view is
    missing (``obs`` False). One K×K Cholesky.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    X : jax.Array of shape (N, D)
        The view's data, its missing rows zero-filled.
    H : jax.Array of shape (N, m)
        The shared latent ``H``, one row ``h_n`` per sample.
    W : jax.Array of shape (D, m)
        The view's loadings ``W_i`` on ``H``.
    V : jax.Array of shape (D, K)
        The view's loadings ``V_i`` on ``U_i``.
    tau : float or jax.Array of shape (D,)
        The view's noise precision: a scalar (one per view) or one per feature.
    obs : jax.Array of shape (N,), dtype bool
        True where the view is observed.

    Returns
    -------
    U : jax.Array of shape (N, K)
        The draw of ``U_i``.
    """
    K = V.shape[1]
    TV = noise_weighted(tau, V)
    prec = jnp.eye(K, dtype=V.dtype) + V.T @ TV
    L = jnp.linalg.cholesky(prec)
    rhs = X @ TV - H @ (W.T @ TV)  # (N, K), without forming the (N, D) residual
    mean = cho_solve((L, True), rhs.T).T
    eps = jax.random.normal(key, mean.shape, dtype=mean.dtype)
    noise = solve_triangular(L.T, eps.T, lower=False).T
    return jnp.where(obs[:, None], mean + noise, eps)


def u_collapsed_log_likelihood(U, X, H, W, tau, eta, obs):
    """``log p(X_i | U_i, H, W_i, τ_i)`` + const with ``V_i`` integrated out.

    ``V``'s rows are ``N(0, I/η)``. The residual columns ``R_d = x_d - W_d h`` (observed rows) are
    ``N(0, τ⁻¹I + U Uᵀ/η)``; with ``S = UᵀU`` (K×K), by the determinant lemma and Woodbury:
    ``-(D/2) log|I + (τ/η) S| + (τ²/2) Σ_d (UᵀR_d)ᵀ (ηI + τS)⁻¹ (UᵀR_d)`` (U-free terms dropped);
    with one precision per feature, ``τ_d`` in column ``d``'s term.

    Parameters
    ----------
    U : jax.Array of shape (N, K)
        The view's own latent ``U_i``, one row ``u_n`` per sample.
    X : jax.Array of shape (N, D)
        The view's data, its missing rows zero-filled.
    H : jax.Array of shape (N, m)
        The shared latent ``H``, one row ``h_n`` per sample.
    W : jax.Array of shape (D, m)
        The view's loadings ``W_i`` on ``H``.
    tau : float or jax.Array of shape (D,)
        The view's noise precision: a scalar (one per view) or one per feature.
    eta : float
        The prior precision ``η`` of the rows of ``V_i``.
    obs : jax.Array of shape (N,), dtype bool
        True where the view is observed.

    Returns
    -------
    log_likelihood : jax.Array of shape ()
        The log-likelihood, up to terms free of ``U``.
    """
    return _u_log_likelihood(U, (X - H @ W.T) * obs[:, None], tau, eta, obs)


def _u_log_likelihood(U, R, tau, eta, obs):
    """:func:`u_collapsed_log_likelihood` given the masked residual ``R = (X - H Wᵀ) · obs``."""
    K, D = U.shape[1], R.shape[1]
    Uo = U * obs[:, None]
    S = Uo.T @ Uo
    G = Uo.T @ R  # (K, D)
    eye = jnp.eye(K, dtype=U.dtype)
    if jnp.ndim(tau) == 0:  # one Cholesky shared by the columns
        L = jnp.linalg.cholesky(eta * eye + tau * S)
        logdet = 2.0 * jnp.sum(jnp.log(jnp.diagonal(L))) - K * jnp.log(eta)  # log|I + (τ/η) S|
        return -0.5 * D * logdet + 0.5 * tau**2 * jnp.sum(solve_triangular(L, G, lower=True) ** 2)
    L = jnp.linalg.cholesky(eta * eye + tau[:, None, None] * S)  # (D, K, K), one per column
    logdet = 2.0 * jnp.sum(jnp.log(jnp.diagonal(L, axis1=1, axis2=2))) - D * K * jnp.log(eta)
    quad = jax.vmap(lambda Ld, g: jnp.sum(solve_triangular(Ld, g, lower=True) ** 2))(L, G.T)
    return -0.5 * logdet + 0.5 * jnp.sum(tau**2 * quad)


def sample_u_collapsed(key, X, H, W, U, tau, eta, obs):
    """Move the view's own latent ``U_i | H, W_i, τ_i`` with ``V_i`` integrated out.

    One elliptical slice step from the current ``U`` (prior ``N(0, I)``; rows of missing views
    move under the prior alone). The ``U``-``V`` pair, where ``V``'s prior (precision η) keeps it
    small, otherwise moves slowly and holds τ back. Valid before a step that integrates ``V`` out
    or draws it anew (``[W V]`` in the sweep).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    X : jax.Array of shape (N, D)
        The view's data, its missing rows zero-filled.
    H : jax.Array of shape (N, m)
        The shared latent ``H``, one row ``h_n`` per sample.
    W : jax.Array of shape (D, m)
        The view's loadings ``W_i`` on ``H``.
    U : jax.Array of shape (N, K)
        The current ``U_i``, the step's starting point.
    tau : float or jax.Array of shape (D,)
        The view's noise precision: a scalar (one per view) or one per feature.
    eta : float
        The prior precision ``η`` of the rows of ``V_i``.
    obs : jax.Array of shape (N,), dtype bool
        True where the view is observed.

    Returns
    -------
    U : jax.Array of shape (N, K)
        The new ``U_i``.
    """
    R = (X - H @ W.T) * obs[:, None]  # free of U: once per step, not per ellipse point
    return elliptical_slice_step(key, U, lambda Uc: _u_log_likelihood(Uc, R, tau, eta, obs))


def sample_wv_conditional(key, X, H, U, r, eta, tau, obs):
    """Draw the loadings ``[W_i V_i] | ·`` jointly (eqs. 11–12, erratum 1 of ``docs/m3lak_sampler.md``).

    The rows of ``B = [W V]`` are independent ``N(P_d^{-1} τ_d Zᵀ x_{·d}, P_d^{-1})`` with
    ``P_d = diag(r, η·1) + τ_d ZᵀZ``, ``Z = [H U]`` over the observed rows; ``tau`` a scalar (one
    Cholesky for all rows) or ``(D,)`` (one precision per feature, all from one
    eigendecomposition: :func:`_feature_gaussians`).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    X : jax.Array of shape (N, D)
        The view's data, its missing rows zero-filled.
    H : jax.Array of shape (N, m)
        The shared latent ``H``, one row ``h_n`` per sample.
    U : jax.Array of shape (N, K)
        The view's own latent ``U_i``, one row ``u_n`` per sample.
    r : jax.Array of shape (m,)
        The ARD precisions ``r_i`` of ``W_i``'s columns.
    eta : float
        The prior precision ``η`` of the rows of ``V_i``.
    tau : float or jax.Array of shape (D,)
        The view's noise precision: a scalar (one per view) or one per feature.
    obs : jax.Array of shape (N,), dtype bool
        True where the view is observed.

    Returns
    -------
    W : jax.Array of shape (D, m)
        The draw of ``W_i``.
    V : jax.Array of shape (D, K)
        The draw of ``V_i``.
    """
    m = H.shape[1]
    Z = jnp.concatenate([H, U], axis=1) * obs[:, None]
    prior = jnp.concatenate([r, jnp.full((U.shape[1],), eta, dtype=H.dtype)])
    ZtZ, ZtX = Z.T @ Z, Z.T @ X  # (m+K, m+K), (m+K, D); X rows of missing views are zero
    if jnp.ndim(tau) == 0:
        B = gaussian_from_precision(key, jnp.diag(prior) + tau * ZtZ, tau * ZtX).T  # (D, m+K)
    else:
        B = _feature_gaussians(key, prior, ZtZ, ZtX, tau)
    return B[:, :m], B[:, m:]


def _feature_gaussians(key, prior, ZtZ, ZtX, tau):
    """One draw per column ``d`` of ``N(P_d⁻¹ τ_d Zᵀx_d, P_d⁻¹)``, ``P_d = diag(prior) + τ_d ZᵀZ``,
    as ``(D, p)``. With ``S = diag(prior)^½`` and ``S⁻¹ZᵀZS⁻¹ = QΛQᵀ``, ``P_d = SQ(I + τ_dΛ)QᵀS``:
    one ``p × p`` eigendecomposition for every feature instead of one Cholesky each."""
    s = jnp.sqrt(prior)
    lam, Q = jnp.linalg.eigh(ZtZ / jnp.outer(s, s))
    lam = jnp.maximum(lam, 0.0)  # ZᵀZ is positive semi-definite; clip round-off below zero
    shrink = 1.0 / (1.0 + tau[None, :] * lam[:, None])  # (p, D): (I + τ_dΛ)⁻¹ per column
    proj = Q.T @ (ZtX / s[:, None])  # Qᵀ S⁻¹ Zᵀx_d
    eps = jax.random.normal(key, proj.shape, dtype=proj.dtype)
    return ((Q @ (shrink * tau * proj + jnp.sqrt(shrink) * eps)) / s[:, None]).T


def sample_r_conditional(key, W, a_r, b_r):
    """Draw the ARD precisions ``r_ij | W_i ~ Γ(a_r + D_i/2, b_r + ½‖w_{i,·j}‖²)`` (eq. 13, corrected rate).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    W : jax.Array of shape (D, m)
        The view's loadings ``W_i`` on ``H``.
    a_r : float
        The shape of the ARD precisions' Gamma prior (eq. 13).
    b_r : float
        The rate of the ARD precisions' Gamma prior.

    Returns
    -------
    r : jax.Array of shape (m,)
        One precision per column of ``W_i``.
    """
    D = W.shape[0]
    rate = b_r + 0.5 * jnp.sum(W**2, axis=0)
    return _random.gamma(key, a_r + 0.5 * D, rate.shape, W.dtype) / rate


def sample_tau_conditional(key, X, H, U, W, V, obs, a_tau, b_tau, per_feature=False, temper=1.0):
    """Draw the view's noise precision ``τ_i`` from its Gamma conditional (eq. 14).

    ``τ_i | · ~ Γ(a_τ + N_i D_i/2, b_τ + ½ Σ_{n observed} ‖x_n - W h_n - V u_n‖²)``, or with
    ``per_feature`` one precision per feature, ``τ_id | · ~ Γ(a_τ + N_i/2, b_τ + ½ Σ_n r_nd²)``;
    with the view's likelihood raised to ``temper``, both likelihood terms times ``temper``.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    X : jax.Array of shape (N, D)
        The view's data, its missing rows zero-filled.
    H : jax.Array of shape (N, m)
        The shared latent ``H``, one row ``h_n`` per sample.
    U : jax.Array of shape (N, K)
        The view's own latent ``U_i``, one row ``u_n`` per sample.
    W : jax.Array of shape (D, m)
        The view's loadings ``W_i`` on ``H``.
    V : jax.Array of shape (D, K)
        The view's loadings ``V_i`` on ``U_i``.
    obs : jax.Array of shape (N,), dtype bool
        True where the view is observed.
    a_tau : float
        The shape of the noise precision's Gamma prior (eq. 14).
    b_tau : float
        The rate of the noise precision's Gamma prior.
    per_feature : bool, default=False
        One precision per feature (``noise="feature"``) instead of one per view.
    temper : float, default=1.0
        The power the view's likelihood is raised to (1: the posterior).

    Returns
    -------
    tau : jax.Array of shape () or (D,)
        One precision for the view, or one per feature with ``per_feature``.
    """
    D = X.shape[1]
    resid = (X - H @ W.T - U @ V.T) * obs[:, None]
    n_obs = temper * jnp.sum(obs)
    if per_feature:
        rate = b_tau + 0.5 * temper * jnp.sum(resid**2, axis=0)
        return _random.gamma(key, a_tau + 0.5 * n_obs, (D,), X.dtype) / rate
    rate = b_tau + 0.5 * temper * jnp.sum(resid**2)
    return _random.gamma(key, a_tau + 0.5 * n_obs * D, (), X.dtype) / rate


def _collapsed_statistics(X, H, U, obs):
    """``(ZᵀZ, ZᵀX, ‖X‖², N_o D)`` with ``Z = [H U]`` over the observed rows (missing rows of X are 0)."""
    Z = jnp.concatenate([H, U], axis=1) * obs[:, None]
    return Z.T @ Z, Z.T @ X, jnp.sum(X**2), jnp.sum(obs) * X.shape[1]


def _collapsed_precision_cholesky(r, tau, eta, ZtZ):
    """Lower Cholesky factor of ``P = diag(r, η·1) + τZᵀZ``, the precision of a row of ``[W V]``."""
    K = ZtZ.shape[0] - r.shape[0]
    return jnp.linalg.cholesky(jnp.diag(jnp.concatenate([r, jnp.full((K,), eta, r.dtype)])) + tau * ZtZ)


def _collapsed_log_density(log_r, log_tau, stats, eta, a_r, b_r, a_tau, b_tau):
    """``log p(log r_i, log τ_i | H, U_i, X_i)`` + const with ``[W_i V_i]`` integrated out.

    Each column ``x_d ~ N(0, τ⁻¹I + Z A⁻¹ Zᵀ)``, ``A = diag(r, η·1)``; with ``P = A + τ ZᵀZ = L Lᵀ``
    (determinant lemma and Woodbury) ``log p(X | r, τ) = (N_o D/2) log τ + (D/2) log|A|
    - (D/2) log|P| - ½τ‖X‖² + ½τ² ‖L⁻¹ZᵀX‖²``; Gamma priors and the Jacobians of the log scale
    included."""
    ZtZ, ZtX, sq, n_entries = stats
    D = ZtX.shape[1]
    r, tau = jnp.exp(log_r), jnp.exp(log_tau)
    L = _collapsed_precision_cholesky(r, tau, eta, ZtZ)
    quad = jnp.sum(solve_triangular(L, ZtX, lower=True) ** 2)
    loglik = (
        0.5 * n_entries * log_tau
        + 0.5 * D * jnp.sum(log_r)
        - D * jnp.sum(jnp.log(jnp.diagonal(L)))
        - 0.5 * tau * (sq - tau * quad)
    )
    return loglik + jnp.sum(a_r * log_r - b_r * r) + a_tau * log_tau - b_tau * tau


def collapsed_precision_log_density(r, tau, X, H, U, eta, obs, a_r, b_r, a_tau, b_tau):
    """``log p(r_i, τ_i | H, U_i, X_i)`` + const with ``[W_i V_i]`` integrated out.

    A density in ``(r, τ)``; the Gamma priors of eqs. 13–14 included.

    Parameters
    ----------
    r : jax.Array of shape (m,)
        The ARD precisions ``r_i`` of ``W_i``'s columns.
    tau : float or jax.Array of shape ()
        The view's noise precision ``τ_i`` (one per view).
    X : jax.Array of shape (N, D)
        The view's data, its missing rows zero-filled.
    H : jax.Array of shape (N, m)
        The shared latent ``H``, one row ``h_n`` per sample.
    U : jax.Array of shape (N, K)
        The view's own latent ``U_i``, one row ``u_n`` per sample.
    eta : float
        The prior precision ``η`` of the rows of ``V_i``.
    obs : jax.Array of shape (N,), dtype bool
        True where the view is observed.
    a_r : float
        The shape of the ARD precisions' Gamma prior (eq. 13).
    b_r : float
        The rate of the ARD precisions' Gamma prior.
    a_tau : float
        The shape of the noise precision's Gamma prior (eq. 14).
    b_tau : float
        The rate of the noise precision's Gamma prior.

    Returns
    -------
    log_density : jax.Array of shape ()
        The log density, up to a constant.
    """
    stats = _collapsed_statistics(X, H, U, obs)
    log_r, log_tau = jnp.log(r), jnp.log(tau)
    log_dens = _collapsed_log_density(log_r, log_tau, stats, eta, a_r, b_r, a_tau, b_tau)
    return log_dens - jnp.sum(log_r) - log_tau


def _ard_coordinate_log_density(j, log_r, tau, stats, eta, a_r, b_r):
    """``s ↦ log p(log r_j = s | the rest)`` + const of :func:`_collapsed_log_density`, in closed
    form. With ``P = A + τZᵀZ`` and ``c(r_j) = r_j + t`` the Schur complement of ``P``'s entry
    ``j`` (``t`` free of ``r_j``): ``log|P| = log c + const`` and ``‖L⁻¹ZᵀX‖² = k / c + const``
    with ``k = c² ‖(P⁻¹ZᵀX)_j‖²``; from ``u = P⁻¹e_j`` (one Cholesky at the current ``r``),
    ``c = 1 / u_j`` and ``(P⁻¹ZᵀX)_j = uᵀZᵀX``."""
    ZtZ, ZtX, _, _ = stats
    D = ZtX.shape[1]
    r = jnp.exp(log_r)
    L = _collapsed_precision_cholesky(r, tau, eta, ZtZ)
    u = cho_solve((L, True), (jnp.arange(ZtZ.shape[0]) == j).astype(r.dtype))
    c = 1.0 / u[j]
    t = jnp.maximum(c - r[j], 0.0)
    k = c**2 * jnp.sum((u @ ZtX) ** 2)

    def log_density(s):
        schur = jnp.exp(s) + t
        return 0.5 * D * (s - jnp.log(schur)) + 0.5 * tau**2 * k / schur + a_r * s - b_r * jnp.exp(s)

    return log_density


def _noise_spectrum(log_r, stats, eta):
    """``(λ, C)`` of the collapsed densities of the noise precision: ``A^{-1/2}ZᵀZA^{-1/2} =
    Q diag(λ) Qᵀ`` (``A = diag(r, η·1)``) and ``C = (QᵀA^{-1/2}ZᵀX)²`` elementwise, ``(m+K, D)``."""
    ZtZ, ZtX, _, _ = stats
    K = ZtZ.shape[0] - log_r.shape[0]
    scale = jnp.exp(-0.5 * jnp.concatenate([log_r, jnp.full((K,), jnp.log(eta), log_r.dtype)]))
    lam, Q = jnp.linalg.eigh(scale[:, None] * ZtZ * scale[None, :])
    return jnp.maximum(lam, 0.0), (Q.T @ (scale[:, None] * ZtX)) ** 2


def _closed_noise_log_density(lam, c, sq, n_entries, n_columns, a_tau, b_tau):
    """``s ↦ log p(log τ = s | ·)`` + const for ``n_columns`` columns that share ``τ``: with
    ``log|P| = Σ_k log(1 + τλ_k) + const`` and ``‖L⁻¹ZᵀX‖² = Σ_k c_k / (1 + τλ_k)``, ``c`` the
    columns' summed ``C``, ``sq`` their ``‖X‖²``, ``n_entries`` their observed entries."""

    def log_density(s):
        tau = jnp.exp(s)
        quad = jnp.sum(c / (1.0 + tau * lam))
        return (
            0.5 * n_entries * s
            - 0.5 * n_columns * jnp.sum(jnp.log1p(tau * lam))
            - 0.5 * tau * (sq - tau * quad)
            + a_tau * s
            - b_tau * tau
        )

    return log_density


def _noise_log_density(log_r, stats, eta, a_tau, b_tau):
    """``s ↦ log p(log τ = s | r)`` + const of :func:`_collapsed_log_density` (one ``τ`` per view),
    in closed form from one eigendecomposition (:func:`_noise_spectrum`)."""
    _, ZtX, sq, n_entries = stats
    lam, C = _noise_spectrum(log_r, stats, eta)
    return _closed_noise_log_density(lam, jnp.sum(C, axis=1), sq, n_entries, ZtX.shape[1], a_tau, b_tau)


def _feature_noise_log_densities(log_r, stats, eta, a_tau, b_tau, sq, n_obs):
    """One ``s ↦ log p(log τ_d = s | r, H, U_i, x_d)`` + const per feature, as
    ``(density, columns)``: one precision per feature (``noise="feature"``) with ``[W_i V_i]``
    integrated out, each column ``x_d ~ N(0, τ_d⁻¹I + Z A⁻¹ Zᵀ)`` on its own (``sq`` the columns'
    ``‖x_d‖²``, ``n_obs`` the observed rows), all from one eigendecomposition; eq. 14's Gamma prior
    included. ``density(c_d, sq_d)`` is feature d's density from ``columns = (C.T, sq)``, so that
    a vmap over the features hands each its own column once."""
    lam, C = _noise_spectrum(log_r, stats, eta)

    def density(c_d, sq_d):
        return _closed_noise_log_density(lam, c_d, sq_d, n_obs, 1, a_tau, b_tau)

    return density, (C.T, sq)


def sample_feature_noise_collapsed(key, X, H, U, r, tau, eta, obs, a_tau, b_tau):
    """Move the per-feature noise precisions ``τ_i | H, U_i, r_i, X_i`` with ``[W_i V_i]`` integrated out.

    One precision per feature: a slice step in each ``log τ_id`` from the current value (the
    features are independent given ``r``, so all at once). Follow it by
    :func:`sample_wv_conditional` at the new ``τ_i``: together a draw of ``(τ_i, W_i, V_i)`` given
    ``r_i``.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    X : jax.Array of shape (N, D)
        The view's data, its missing rows zero-filled.
    H : jax.Array of shape (N, m)
        The shared latent ``H``, one row ``h_n`` per sample.
    U : jax.Array of shape (N, K)
        The view's own latent ``U_i``, one row ``u_n`` per sample.
    r : jax.Array of shape (m,)
        The ARD precisions ``r_i`` of ``W_i``'s columns.
    tau : jax.Array of shape (D,)
        The current precisions ``τ_id``, the slice steps' starting points.
    eta : float
        The prior precision ``η`` of the rows of ``V_i``.
    obs : jax.Array of shape (N,), dtype bool
        True where the view is observed.
    a_tau : float
        The shape of the noise precision's Gamma prior (eq. 14).
    b_tau : float
        The rate of the noise precision's Gamma prior.

    Returns
    -------
    tau : jax.Array of shape (D,)
        The new precisions.
    """
    stats = _collapsed_statistics(X, H, U, obs)
    density, (C_t, sq) = _feature_noise_log_densities(
        jnp.log(r), stats, eta, a_tau, b_tau, jnp.sum(X**2, axis=0), jnp.sum(obs)
    )

    def one(k, c_d, sq_d, log_tau_d):
        return slice_step(k, log_tau_d, density(c_d, sq_d))

    keys = jax.random.split(key, X.shape[1])
    return jnp.exp(jax.vmap(one)(keys, C_t, sq, jnp.log(tau)))


def sample_precisions_collapsed(key, X, H, U, r, tau, eta, obs, a_r, b_r, a_tau, b_tau):
    """Move ``(r_i, τ_i) | H, U_i, X_i`` by slice steps with ``[W_i V_i]`` integrated out.

    One slice-sampling step in each of ``log r_i1 … log r_im, log τ_i`` in turn, from the current
    values (an MCMC move that leaves this marginal invariant, not an independent draw). Follow it
    by :func:`sample_wv_conditional` at the new values: together a joint move of
    ``(r_i, τ_i, W_i, V_i)``. Each coordinate's density is closed-form in that coordinate (one
    ``(m+K)``-dim Cholesky and one solve per ``r_ij``, one eigendecomposition for ``τ_i``), so a
    slice step's evaluations cost O(1) (``log r_j``) or O(m+K) (``log τ``).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    X : jax.Array of shape (N, D)
        The view's data, its missing rows zero-filled.
    H : jax.Array of shape (N, m)
        The shared latent ``H``, one row ``h_n`` per sample.
    U : jax.Array of shape (N, K)
        The view's own latent ``U_i``, one row ``u_n`` per sample.
    r : jax.Array of shape (m,)
        The current ARD precisions ``r_i``.
    tau : float or jax.Array of shape ()
        The current noise precision ``τ_i`` (one per view).
    eta : float
        The prior precision ``η`` of the rows of ``V_i``.
    obs : jax.Array of shape (N,), dtype bool
        True where the view is observed.
    a_r : float
        The shape of the ARD precisions' Gamma prior (eq. 13).
    b_r : float
        The rate of the ARD precisions' Gamma prior.
    a_tau : float
        The shape of the noise precision's Gamma prior (eq. 14).
    b_tau : float
        The rate of the noise precision's Gamma prior.

    Returns
    -------
    r : jax.Array of shape (m,)
        The new ARD precisions.
    tau : jax.Array of shape ()
        The new noise precision.
    """
    stats = _collapsed_statistics(X, H, U, obs)
    m = r.shape[0]

    def ard_coordinate(j, carry):
        log_r, key = carry
        key, k = jax.random.split(key)
        log_density = _ard_coordinate_log_density(j, log_r, tau, stats, eta, a_r, b_r)
        return log_r.at[j].set(slice_step(k, log_r[j], log_density)), key

    log_r, key = jax.lax.fori_loop(0, m, ard_coordinate, (jnp.log(r), key))
    _, k = jax.random.split(key)
    log_tau = slice_step(k, jnp.log(tau), _noise_log_density(log_r, stats, eta, a_tau, b_tau))
    return jnp.exp(log_r), jnp.exp(log_tau)


def sample_v_conditional(key, beta, a_v, b_v):
    """Draw ``β``'s prior precision ``v | β ~ Γ(a_v + P/2, b_v + ½‖β‖²)`` (its conjugate Gamma prior).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    beta : jax.Array of shape (P,)
        The weights ``β``.
    a_v : float
        The shape of ``v``'s Gamma prior.
    b_v : float
        The rate of ``v``'s Gamma prior.

    Returns
    -------
    v : jax.Array of shape ()
        The draw of ``v``.
    """
    P = beta.shape[0]
    return _random.gamma(key, a_v + 0.5 * P, (), beta.dtype) / (b_v + 0.5 * jnp.sum(beta**2))
