"""Latent-axis moves: generalised Gibbs steps (Liu & Sabatti 2000) along groups of linear maps of
the shared latent space under which M3LAK's likelihood is invariant.

``A ∈ GL(m)`` acts by ``H → H A``, ``W_i → W_i A⁻ᵀ``, ``Ω → Ω A⁻ᵀ`` and, on every DP component in
use, ``μ_c → A⁻¹ μ_c``, ``Σ_c⁻¹ → Aᵀ Σ_c⁻¹ A``: ``W_i h_n`` and ``Ω h_n`` (so the decision
values) do not change, nor (with the Jacobian) does the density of ``Ω`` given its components.
Only the priors of ``H``, ``W_i`` (ARD), ``r`` and the NIW prior of the components in use see
``A``. The prior pins the latent axes' scale and shear only to about ``1/√(2N)``, and the other
blocks of the sweep move them by far smaller steps, so two one-parameter families are moved
here, each from the identity with Haar measure:

* **scale** of axis ``j``, ``A = diag(…, e^{t_j}, …)``, with ``r_ij → r_ij e^{2t_j}`` as well (the
  ARD prior keeps its form). With ``s_j = e^{2t_j}``, ``ψ I`` the NIW scale matrix and ``K`` the
  number of components in use, the log density of ``t`` is

      Σ_j [ N t_j − ½ s_j Σ_n h_nj² + 2 a_r V t_j − b_r s_j Σ_i r_ij
            + ν₀ K t_j − ½ ψ s_j Σ_c (Σ_c⁻¹)_jj ] − ½ κ₀ Σ_c (μ_c − e^t ⊙ μ₀)ᵀ Σ_c⁻¹ (μ_c − e^t ⊙ μ₀);

  each ``t_j`` in turn by a slice step;
* **shear** of axis ``k`` along ``j ≠ k``, ``A = I + ε e_j e_kᵀ`` (``h_k += ε h_j``,
  ``w_ij -= ε w_ik``, ``ω_j -= ε ω_k``): ``det A = 1`` and every term is quadratic in ``ε``, so ``ε``
  is drawn from its Gaussian conditional, for ordered pairs chosen at random.

Under the fixed Gaussian spectrum (``ω ~ N(0, σ² I)``) the DP terms are replaced by the density
of ``Ω`` itself: ``−M t_j − ½ e^{−2t_j} Σ_k ω_kj² / σ²`` and ``−½ ‖ω_j − ε ω_k‖² / σ²``.

Both densities need only ``m × m`` Gram matrices of the state (:class:`AxisStatistics`); the
draws update those, and the composed map is applied to the state once.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .dp import DPState, component_counts
from .slice import slice_step

__all__ = [
    "AxisPrior",
    "AxisStatistics",
    "apply_axis_map",
    "axis_statistics",
    "draw_scales",
    "draw_shears",
    "latent_scale_log_density",
    "move_latent_axes",
    "shear_conditional",
]


class AxisPrior(NamedTuple):
    """The prior constants the moves need: ARD ``Γ(a_r, b_r)``; ``spectrum`` ``"dp"`` with the
    NIW base ``(κ₀, ν₀, ψ, μ₀ (m,))``, or ``"gaussian"`` with ``σ``.

    Parameters
    ----------
    a_r : float
        The shape of the ARD precisions' Gamma prior.
    b_r : float
        The rate of the ARD precisions' Gamma prior.
    spectrum : {"dp", "gaussian"}
        The frequencies' prior: the DP Gaussian mixture, or the fixed Gaussian
        ``ω ~ N(0, σ² I)``.
    kappa0 : float, default=1.0
        ``κ₀`` of the NIW base (``"dp"``).
    nu0 : float, default=1.0
        ``ν₀``, the NIW base's degrees of freedom (``"dp"``).
    psi : float or jax.Array of shape (), default=1.0
        ``ψ``, the NIW scale matrix being ``ψ I`` (``"dp"``).
    mu0 : jax.Array of shape (m,) or None, default=None
        ``μ₀``, the NIW base's mean (``"dp"``); None under ``"gaussian"``.
    sigma : float, default=1.0
        ``σ``, the standard deviation of the fixed Gaussian spectrum (``"gaussian"``).
    """

    a_r: float
    b_r: float
    spectrum: str
    kappa0: float = 1.0
    nu0: float = 1.0
    psi: float = 1.0
    mu0: jnp.ndarray | None = None
    sigma: float = 1.0


class AxisStatistics(NamedTuple):
    """What the moves' densities need from the state (:func:`axis_statistics`).

    ``m`` is the dimension of the latent space, ``V`` the number of views and ``Kc`` the number
    of slots of the DP table.

    Parameters
    ----------
    n_rows : jax.Array of shape ()
        The number of rows of ``H`` that move.
    h_gram : jax.Array of shape (m, m)
        ``Σ_n h_n h_nᵀ`` over those rows.
    w_grams : jax.Array of shape (V, m, m)
        ``W_iᵀ W_i`` for each view.
    r : jax.Array of shape (V, m)
        The ARD precisions ``r_ij``.
    n_frequencies : jax.Array of shape ()
        ``M``, the number of frequencies.
    omega_gram : jax.Array of shape (m, m)
        ``ΩᵀΩ``.
    in_use : jax.Array of shape (Kc,)
        1.0 for the DP components with a frequency, else 0.0.
    precision : jax.Array of shape (Kc, m, m)
        The components' precisions ``Σ_c⁻¹``.
    mu : jax.Array of shape (Kc, m)
        The components' means ``μ_c``.
    """

    n_rows: jnp.ndarray  # () rows of H that move
    h_gram: jnp.ndarray  # (m, m) Σ_n h_n h_nᵀ over those rows
    w_grams: jnp.ndarray  # (V, m, m) W_iᵀ W_i
    r: jnp.ndarray  # (V, m)
    n_frequencies: jnp.ndarray  # () M
    omega_gram: jnp.ndarray  # (m, m) ΩᵀΩ
    in_use: jnp.ndarray  # (Kc,) 1.0 for the DP components with a frequency, else 0.0
    precision: jnp.ndarray  # (Kc, m, m) Σ_c⁻¹
    mu: jnp.ndarray  # (Kc, m)


def _row_weights(H, rows):
    """The rows of ``H`` the maps act on, as 0/1 weights: all, or those of ``rows`` (the padding
    rows of a sharded run are prior draws that nothing else sees, and are left alone)."""
    return jnp.ones(H.shape[0], H.dtype) if rows is None else rows.astype(H.dtype)


def axis_statistics(H, Ws, r, omega, dp: DPState, rows=None) -> AxisStatistics:
    """The :class:`AxisStatistics` of a state: what the moves' densities need from it.

    Parameters
    ----------
    H : jax.Array of shape (N, m)
        The shared latent ``H``.
    Ws : sequence of jax.Array of shape (D_i, m)
        The loadings ``W_i`` of each view.
    r : jax.Array of shape (V, m)
        The ARD precisions ``r_ij``.
    omega : jax.Array of shape (M, m)
        The frequencies ``Ω``.
    dp : DPState
        The DP table (its components in use move with the map).
    rows : jax.Array of shape (N,), dtype bool, or None, default=None
        The rows of ``H`` that move; None: all.

    Returns
    -------
    stats : AxisStatistics
        The Gram matrices, ARD precisions and DP components of the state.
    """
    w = _row_weights(H, rows)
    return AxisStatistics(
        n_rows=jnp.sum(w),
        h_gram=(H * w[:, None]).T @ H,
        w_grams=jnp.stack([W.T @ W for W in Ws]),
        r=r,
        n_frequencies=jnp.asarray(omega.shape[0], H.dtype),
        omega_gram=omega.T @ omega,
        in_use=(component_counts(dp) > 0).astype(H.dtype),
        precision=dp.prec_sqrt @ jnp.swapaxes(dp.prec_sqrt, -1, -2),
        mu=dp.mu,
    )


def latent_scale_log_density(t, stats: AxisStatistics, prior: AxisPrior):
    """The log density, up to a constant, of the latent axes' log-scales ``t``.

    The density of the scale move, given in the module docstring
    (:mod:`bayesmv.inference.latent_axes`).

    Parameters
    ----------
    t : jax.Array of shape (m,)
        The log-scales ``t_j``, one per axis.
    stats : AxisStatistics
        The state's statistics (:func:`axis_statistics`).
    prior : AxisPrior
        The prior constants.

    Returns
    -------
    log_density : jax.Array of shape ()
        The log density of ``t``, up to a constant.
    """
    s = jnp.exp(2.0 * t)
    out = jnp.sum(stats.n_rows * t - 0.5 * s * jnp.diagonal(stats.h_gram))
    out += jnp.sum(2.0 * prior.a_r * stats.r.shape[0] * t - prior.b_r * s * jnp.sum(stats.r, 0))
    if prior.spectrum == "gaussian":
        ssq = jnp.diagonal(stats.omega_gram) / prior.sigma**2
        return out + jnp.sum(-stats.n_frequencies * t - 0.5 * jnp.exp(-2.0 * t) * ssq)
    used = stats.in_use
    diag = jnp.diagonal(stats.precision, axis1=-2, axis2=-1)  # (Kc, m)
    out += jnp.sum(used) * prior.nu0 * jnp.sum(t) - 0.5 * prior.psi * jnp.sum(used[:, None] * diag * s)
    diff = stats.mu - jnp.exp(t) * prior.mu0
    quad = jnp.einsum("ki,kij,kj->k", diff, stats.precision, diff)
    return out - 0.5 * prior.kappa0 * jnp.sum(used * quad)


def draw_scales(key, stats: AxisStatistics, prior: AxisPrior, width=0.25):
    """The scale move's log-scales ``t``: each ``t_j`` in turn by a slice step from 0.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    stats : AxisStatistics
        The state's statistics (:func:`axis_statistics`).
    prior : AxisPrior
        The prior constants.
    width : float, default=0.25
        The width of each slice step's initial interval.

    Returns
    -------
    t : jax.Array of shape (m,)
        The log-scales ``t_j``.
    """
    m = stats.h_gram.shape[0]

    def axis(j, t):
        def logpdf(x):
            return latent_scale_log_density(t.at[j].set(x), stats, prior)

        return t.at[j].set(slice_step(jax.random.fold_in(key, j), t[j], logpdf, width))

    return jax.lax.fori_loop(0, m, axis, jnp.zeros(m, stats.h_gram.dtype))


def _scaled(stats: AxisStatistics, d) -> AxisStatistics:
    """The statistics after the scale map ``diag(d)``."""
    return stats._replace(
        h_gram=stats.h_gram * jnp.outer(d, d),
        w_grams=stats.w_grams / jnp.outer(d, d),
        r=stats.r * d**2,
        omega_gram=stats.omega_gram / jnp.outer(d, d),
        precision=stats.precision * jnp.outer(d, d),
        mu=stats.mu / d,
    )


def shear_conditional(j, k, stats: AxisStatistics, prior: AxisPrior):
    """The Gaussian conditional of the shear ``ε`` of axis ``k`` along ``j``.

    Its log density is ``−½ precision ε² + linear ε`` (module docstring).

    Parameters
    ----------
    j : int
        The axis that ``k`` is sheared along.
    k : int
        The sheared axis, ``k ≠ j``.
    stats : AxisStatistics
        The state's statistics (:func:`axis_statistics`).
    prior : AxisPrior
        The prior constants.

    Returns
    -------
    precision : jax.Array of shape ()
        The precision of ``ε``.
    linear : jax.Array of shape ()
        The linear coefficient: ``ε`` has mean ``linear / precision``.
    """
    precision = stats.h_gram[j, j] + stats.r[:, j] @ stats.w_grams[:, k, k]
    linear = -stats.h_gram[j, k] + stats.r[:, j] @ stats.w_grams[:, j, k]
    if prior.spectrum == "gaussian":
        scale = prior.sigma**2
        return precision + stats.omega_gram[k, k] / scale, linear + stats.omega_gram[j, k] / scale
    used, row_j = stats.in_use, stats.precision[:, j, :]  # (Σ_c⁻¹)_{j·}
    mu0_k = prior.mu0[k]
    precision += (prior.psi + prior.kappa0 * mu0_k**2) * (used @ row_j[:, j])
    linear += -prior.psi * (used @ row_j[:, k])
    linear += prior.kappa0 * mu0_k * (used @ jnp.sum(row_j * (stats.mu - prior.mu0), -1))
    return precision, linear


def _sheared(stats: AxisStatistics, j, k, eps) -> AxisStatistics:
    """The statistics after the shear ``A = I + ε e_j e_kᵀ`` (``A⁻¹ = I − ε e_j e_kᵀ``): Gram
    matrices ``Aᵀ S A`` (H, Σ_c⁻¹) or ``A⁻¹ S A⁻ᵀ`` (W_i, Ω), means ``A⁻¹ μ_c``."""

    def congruent(S):  # Aᵀ S A: column k += ε column j, then row k += ε row j
        S = S.at[..., :, k].add(eps * S[..., :, j])
        return S.at[..., k, :].add(eps * S[..., j, :])

    def inverse_congruent(S):  # A⁻¹ S A⁻ᵀ: row j -= ε row k, then column j -= ε column k
        S = S.at[..., j, :].add(-eps * S[..., k, :])
        return S.at[..., :, j].add(-eps * S[..., :, k])

    return stats._replace(
        h_gram=congruent(stats.h_gram),
        w_grams=inverse_congruent(stats.w_grams),
        omega_gram=inverse_congruent(stats.omega_gram),
        precision=congruent(stats.precision),
        mu=stats.mu.at[:, j].add(-eps * stats.mu[:, k]),
    )


def draw_shears(key, stats: AxisStatistics, prior: AxisPrior, n_pairs=None):
    """The shear move: shears of ordered pairs of axes, each ``ε`` from its Gaussian conditional.

    ``n_pairs`` ordered pairs ``(j, k)``, ``j ≠ k``, drawn uniformly at random (every pair in turn
    when None), each ``ε`` from its conditional given the shears before it.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    stats : AxisStatistics
        The state's statistics (:func:`axis_statistics`).
    prior : AxisPrior
        The prior constants.
    n_pairs : int or None, default=None
        The number of pairs drawn; None: every ordered pair once, in turn.

    Returns
    -------
    A : jax.Array of shape (m, m)
        The composed map.
    A_inv : jax.Array of shape (m, m)
        Its inverse ``A⁻¹``.
    """
    m = stats.h_gram.shape[0]
    eye = jnp.eye(m, dtype=stats.h_gram.dtype)
    k_pairs, k_eps = jax.random.split(key)
    n = m * (m - 1) if n_pairs is None else n_pairs
    pairs = jnp.arange(n) if n_pairs is None else jax.random.randint(k_pairs, (n,), 0, m * (m - 1))

    def shear(p, carry):
        stats, A, A_inv = carry
        j = pairs[p] // (m - 1)
        k = pairs[p] % (m - 1)
        k = k + (k >= j)
        precision, linear = shear_conditional(j, k, stats, prior)
        z = jax.random.normal(jax.random.fold_in(k_eps, p), (), stats.h_gram.dtype)
        eps = linear / precision + z / jnp.sqrt(precision)
        A = A.at[:, k].add(eps * A[:, j])  # A · (I + ε e_j e_kᵀ)
        A_inv = A_inv.at[j, :].add(-eps * A_inv[k, :])  # (I − ε e_j e_kᵀ) · A⁻¹
        return _sheared(stats, j, k, eps), A, A_inv

    _, A, A_inv = jax.lax.fori_loop(0, n, shear, (stats, eye, eye))
    return A, A_inv


def apply_axis_map(A, A_inv, log_det, r_scale, H, Ws, r, omega, dp: DPState, rows=None, spectrum="dp"):
    """The group's action (module docstring) of ``A`` on a state, with ``r → r ⊙ r_scale``.

    The DP table changes in the components in use only, and not at all under the Gaussian
    spectrum.

    Parameters
    ----------
    A : jax.Array of shape (m, m)
        The map.
    A_inv : jax.Array of shape (m, m)
        Its inverse.
    log_det : float or jax.Array of shape ()
        ``log |det A|``.
    r_scale : jax.Array of shape (m,)
        The factor of each axis' ARD precisions.
    H : jax.Array of shape (N, m)
        The shared latent ``H``.
    Ws : sequence of jax.Array of shape (D_i, m)
        The loadings ``W_i`` of each view.
    r : jax.Array of shape (V, m)
        The ARD precisions ``r_ij``.
    omega : jax.Array of shape (M, m)
        The frequencies ``Ω``.
    dp : DPState
        The DP table (its components in use move with the map).
    rows : jax.Array of shape (N,), dtype bool, or None, default=None
        The rows of ``H`` that move; None: all.
    spectrum : {"dp", "gaussian"}, default="dp"
        The spectral prior; under ``"gaussian"`` the DP table is left unchanged.

    Returns
    -------
    H : jax.Array of shape (N, m)
        The mapped ``H``.
    Ws : tuple of jax.Array of shape (D_i, m)
        The mapped loadings.
    r : jax.Array of shape (V, m)
        The mapped ARD precisions.
    omega : jax.Array of shape (M, m)
        The mapped frequencies.
    dp : DPState
        The mapped DP table.
    """
    H = jnp.where(_row_weights(H, rows)[:, None] > 0, H @ A, H)
    if spectrum == "dp":
        used = component_counts(dp) > 0
        dp = dp._replace(
            mu=jnp.where(used[:, None], dp.mu @ A_inv.T, dp.mu),
            prec_sqrt=jnp.where(used[:, None, None], A.T @ dp.prec_sqrt, dp.prec_sqrt),
            logdet_prec=jnp.where(used, dp.logdet_prec + 2.0 * log_det, dp.logdet_prec),
        )
    return H, tuple(W @ A_inv.T for W in Ws), r * r_scale, omega @ A_inv.T, dp


def move_latent_axes(key, H, Ws, r, omega, dp: DPState, prior: AxisPrior, rows=None):
    """The latent-axis moves: the scale move on every axis, then the shear move on ``m`` random pairs.

    The shear move draws ``m`` random ordered pairs (each pair about once in ``m - 1`` sweeps),
    on the rows ``rows`` of ``H``.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    H : jax.Array of shape (N, m)
        The shared latent ``H``.
    Ws : sequence of jax.Array of shape (D_i, m)
        The loadings ``W_i`` of each view.
    r : jax.Array of shape (V, m)
        The ARD precisions ``r_ij``.
    omega : jax.Array of shape (M, m)
        The frequencies ``Ω``.
    dp : DPState
        The DP table (its components in use move with the map).
    prior : AxisPrior
        The prior constants.
    rows : jax.Array of shape (N,), dtype bool, or None, default=None
        The rows of ``H`` that move; None: all.

    Returns
    -------
    H : jax.Array of shape (N, m)
        The mapped ``H``.
    Ws : tuple of jax.Array of shape (D_i, m)
        The mapped loadings.
    r : jax.Array of shape (V, m)
        The mapped ARD precisions.
    omega : jax.Array of shape (M, m)
        The mapped frequencies.
    dp : DPState
        The mapped DP table.
    """
    k_scale, k_shear = jax.random.split(key)
    stats = axis_statistics(H, Ws, r, omega, dp, rows)
    t = draw_scales(k_scale, stats, prior)
    d = jnp.exp(t)
    A, A_inv = draw_shears(k_shear, _scaled(stats, d), prior, n_pairs=H.shape[1])
    A, A_inv = d[:, None] * A, A_inv / d[None, :]  # diag(d) · shears (det 1), and its inverse
    return apply_axis_map(A, A_inv, jnp.sum(t), d**2, H, Ws, r, omega, dp, rows, prior.spectrum)
