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
  is drawn from its Gaussian conditional, for every ordered pair in turn.

Under the fixed Gaussian spectrum (``ω ~ N(0, σ² I)``) the DP terms are replaced by the density
of ``Ω`` itself: ``−M t_j − ½ e^{−2t_j} Σ_k ω_kj² / σ²`` and ``−½ ‖ω_j − ε ω_k‖² / σ²``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from .dp import DPState
from .slice import slice_step

__all__ = [
    "AxisPrior",
    "latent_scale_log_density",
    "move_latent_axes",
    "scale_latent_axes",
    "shear_latent_axes",
]


class AxisPrior(NamedTuple):
    """The prior constants the moves need: ARD ``Γ(a_r, b_r)``; ``spectrum`` ``"dp"`` with the
    NIW base ``(κ₀, ν₀, ψ, μ₀ (m,))``, or ``"gaussian"`` with ``σ``."""

    a_r: float
    b_r: float
    spectrum: str
    kappa0: float = 1.0
    nu0: float = 1.0
    psi: float = 1.0
    mu0: jnp.ndarray | None = None
    sigma: float = 1.0


def _in_use(dp: DPState):
    return jnp.zeros(dp.nu.shape[0], jnp.int32).at[dp.z].add(1) > 0


def _rows(H, rows):
    """The rows of ``H`` the maps act on, as weights: all, or those of ``rows`` (the padding rows
    of a sharded run are prior draws that nothing else sees, and are left alone)."""
    return jnp.ones(H.shape[0], H.dtype) if rows is None else rows.astype(H.dtype)


def latent_scale_log_density(t, H, r, omega, dp: DPState, prior: AxisPrior, rows=None):
    """Log density (up to a constant) of the log-scales ``t`` (m,) given the state (module
    docstring); ``rows``: the rows of ``H`` that move (bool, default all)."""
    s = jnp.exp(2.0 * t)
    w = _rows(H, rows)
    out = jnp.sum(jnp.sum(w) * t - 0.5 * s * (w @ H**2))
    out += jnp.sum(2.0 * prior.a_r * r.shape[0] * t - prior.b_r * s * jnp.sum(r, 0))
    if prior.spectrum == "gaussian":
        ssq = jnp.sum(omega**2, 0) / prior.sigma**2
        return out + jnp.sum(-omega.shape[0] * t - 0.5 * jnp.exp(-2.0 * t) * ssq)
    used = _in_use(dp).astype(t.dtype)
    precision = dp.prec_sqrt @ jnp.swapaxes(dp.prec_sqrt, -1, -2)
    diag = jnp.diagonal(precision, axis1=-2, axis2=-1)  # (Kc, m)
    out += jnp.sum(used) * prior.nu0 * jnp.sum(t) - 0.5 * prior.psi * jnp.sum(used[:, None] * diag * s)
    diff = dp.mu - jnp.exp(t) * prior.mu0
    quad = jnp.einsum("ki,kij,kj->k", diff, precision, diff)
    return out - 0.5 * prior.kappa0 * jnp.sum(used * quad)


def scale_latent_axes(key, H, Ws, r, omega, dp: DPState, prior: AxisPrior, rows=None, width=0.25):
    """The scale move: each ``t_j`` in turn by a slice step from 0, then the map. Returns
    ``(H, Ws, r, omega, dp)``."""
    m = H.shape[1]

    def axis(j, t):
        def logpdf(x):
            return latent_scale_log_density(t.at[j].set(x), H, r, omega, dp, prior, rows)

        return t.at[j].set(slice_step(jax.random.fold_in(key, j), t[j], logpdf, width))

    t = jax.lax.fori_loop(0, m, axis, jnp.zeros(m, H.dtype))
    d = jnp.exp(t)
    if prior.spectrum == "dp":
        used = _in_use(dp)
        dp = dp._replace(
            mu=jnp.where(used[:, None], dp.mu / d, dp.mu),
            prec_sqrt=jnp.where(used[:, None, None], d[:, None] * dp.prec_sqrt, dp.prec_sqrt),
            logdet_prec=jnp.where(used, dp.logdet_prec + 2.0 * jnp.sum(t), dp.logdet_prec),
        )
    H = jnp.where(_rows(H, rows)[:, None] > 0, H * d, H)
    return H, tuple(W / d for W in Ws), r * d**2, omega / d, dp


def shear_conditional(j, k, H, Ws, r, omega, dp: DPState, prior: AxisPrior, rows=None):
    """``(precision, linear)`` of the Gaussian conditional of the shear ``ε`` of axis ``k`` along
    ``j``: log density ``−½ precision ε² + linear ε`` (module docstring)."""
    hj = _rows(H, rows) * H[:, j]
    precision = hj @ hj
    linear = -(hj @ H[:, k])
    for i, W in enumerate(Ws):
        precision += r[i, j] * (W[:, k] @ W[:, k])
        linear += r[i, j] * (W[:, j] @ W[:, k])
    if prior.spectrum == "gaussian":
        scale = prior.sigma**2
        return precision + omega[:, k] @ omega[:, k] / scale, linear + omega[:, j] @ omega[:, k] / scale
    used = _in_use(dp).astype(H.dtype)
    row_j = jnp.einsum("cl,cml->cm", dp.prec_sqrt[:, j, :], dp.prec_sqrt)  # (Σ_c⁻¹)_{j·}
    mu0_k = prior.mu0[k]
    diag = jnp.sum(used * row_j[:, j])
    precision += (prior.psi + prior.kappa0 * mu0_k**2) * diag
    linear += -prior.psi * jnp.sum(used * row_j[:, k])
    linear += prior.kappa0 * mu0_k * jnp.sum(used * jnp.sum(row_j * (dp.mu - prior.mu0), -1))
    return precision, linear


def shear_latent_axes(key, H, Ws, r, omega, dp: DPState, prior: AxisPrior, rows=None):
    """The shear move over every ordered pair ``(j, k)``, ``j ≠ k``, in turn. Returns
    ``(H, Ws, r, omega, dp)`` (``r`` unchanged)."""
    m = H.shape[1]
    used = _in_use(dp)
    w = _rows(H, rows)

    def pair(p, state):
        H, Ws, omega, dp = state
        j = p // (m - 1)
        k = p % (m - 1)
        k = k + (k >= j)
        precision, linear = shear_conditional(j, k, H, Ws, r, omega, dp, prior, rows)
        z = jax.random.normal(jax.random.fold_in(key, p), (), H.dtype)
        eps = linear / precision + z / jnp.sqrt(precision)
        H = H.at[:, k].add(eps * w * H[:, j])
        Ws = tuple(W.at[:, j].add(-eps * W[:, k]) for W in Ws)
        omega = omega.at[:, j].add(-eps * omega[:, k])
        if prior.spectrum == "dp":
            mu = dp.mu.at[:, j].add(-eps * dp.mu[:, k])
            G = dp.prec_sqrt.at[:, k, :].add(eps * dp.prec_sqrt[:, j, :])
            dp = dp._replace(
                mu=jnp.where(used[:, None], mu, dp.mu),
                prec_sqrt=jnp.where(used[:, None, None], G, dp.prec_sqrt),
            )
        return H, Ws, omega, dp

    if m < 2:
        return H, Ws, r, omega, dp
    H, Ws, omega, dp = jax.lax.fori_loop(0, m * (m - 1), pair, (H, tuple(Ws), omega, dp))
    return H, Ws, r, omega, dp


def move_latent_axes(key, H, Ws, r, omega, dp: DPState, prior: AxisPrior, rows=None):
    """The scale move, then the shear move, on the rows ``rows`` of ``H`` (bool, default all).
    Returns ``(H, Ws, r, omega, dp)``."""
    k_scale, k_shear = jax.random.split(key)
    state = scale_latent_axes(k_scale, H, Ws, r, omega, dp, prior, rows)
    return shear_latent_axes(k_shear, *state, prior, rows)
