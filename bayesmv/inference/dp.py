"""Samplers for the DP Gaussian mixture prior on the frequencies ω with Normal-Inverse-Wishart
conjugate updates: the paper's slice sampler (eqs. 5–9; Walker 2007, Kalli, Griffin & Walker
2011), and collapsed assignments (:func:`dp_collapsed_update`): split–merge proposals (Dahl 2005)
and single-site updates (Neal 2000, Algorithm 3) of ``z`` with the sticks and components
integrated out, then the sticks and components given ``z``. A fresh NIW draw rarely fits any
frequency at m = 20, so the slice sampler seldom opens a component there; the collapsed moves
offer the NIW predictive instead, and split a component's frequencies in one move.

JAX needs static shapes, so the (infinite) stick-breaking representation lives in a table of
``capacity`` slots. A slice-sampler sweep given the assignments ``z``:

1. sticks ``ν_k ~ Beta(1 + s_k, α + Σ_{l>k} s_l)`` and component parameters ``(μ_k, Σ_k)`` from
   their NIW posterior, for every slot (empty slots: prior draws — the slots beyond the last
   occupied one are exactly the fresh stick-breaking extensions of eq. 6);
2. slices ``t_j ~ U(0, ϖ_{z_j})`` (eq. 5);
3. ``z_j ∝ 1(ϖ_k > t_j) N(ω_j | μ_k, Σ_k)`` (eq. 7).

Every component that can receive an assignment has ``ϖ_k > min_j t_j``; if the stick mass left
after the last slot is still ``≥ min_j t_j`` a component outside the table could, so the sampler
sets the ``overflow`` flag and the driver raises (never a silent truncation); the collapsed
update sets it when a frequency picks the mass beyond the table.

A component is stored by its mean ``μ`` and a square-root ``G`` of its precision
(``Σ^{-1} = G Gᵀ``) with ``log det Σ^{-1}``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from . import _random
from .slice import slice_step

__all__ = [
    "DPState",
    "component_counts",
    "component_log_density",
    "assignment_logits",
    "collapsed_assignments",
    "dp_collapsed_update",
    "dp_prior_draw",
    "dp_slice_update",
    "log_assignment_joint",
    "niw_predictive_log_density",
    "niw_scale_log_density",
    "sample_from_components",
    "sample_niw_scale",
    "sample_spectral_scale",
    "signed_assignments",
    "spectral_scale_log_density",
    "split_merge_step",
    "sample_niw",
    "sticks_and_components",
]


class DPState(NamedTuple):
    """The DP mixture's table of ``Kc`` (``capacity``) slots and the assignments of the ``M``
    frequencies (of dimension ``m``) to them.

    A component is stored by its mean ``μ_k`` and a square-root ``G_k`` of its precision
    (``Σ_k^{-1} = G_k G_kᵀ``) with ``log det Σ_k^{-1}``. The stick weights are
    ``ϖ_k = ν_k Π_{l<k}(1 - ν_l)`` (:func:`stick_weights`).

    Parameters
    ----------
    nu : jax.Array of shape (Kc,)
        The stick proportions ``ν_k``.
    mu : jax.Array of shape (Kc, m)
        The components' means ``μ_k``.
    prec_sqrt : jax.Array of shape (Kc, m, m)
        The square roots ``G_k`` of the components' precisions, ``Σ_k^{-1} = G_k G_kᵀ``.
    logdet_prec : jax.Array of shape (Kc,)
        ``log det Σ_k^{-1}``.
    z : jax.Array of shape (M,), dtype int32
        The slot each frequency is assigned to.
    overflow : jax.Array of shape (), dtype bool
        Whether a component outside the table could receive a frequency (the slice sampler) or
        one did (the collapsed update): the table is too small, and ``run_m3lak`` raises by
        default.
    """

    nu: jnp.ndarray  # (Kc,) stick proportions
    mu: jnp.ndarray  # (Kc, m)
    prec_sqrt: jnp.ndarray  # (Kc, m, m), Σ_k^{-1} = G Gᵀ
    logdet_prec: jnp.ndarray  # (Kc,)
    z: jnp.ndarray  # (M,) int32 assignments
    overflow: jnp.ndarray  # () bool


def component_counts_from(z, n_slots):
    """The number of frequencies in each of ``n_slots`` slots given the assignments ``z``."""
    return jnp.zeros(n_slots, jnp.int32).at[z].add(1)


def component_counts(state: DPState):
    """The number of frequencies assigned to each component slot.

    Parameters
    ----------
    state : DPState
        The DP state: its assignments ``z`` and its table of ``Kc`` slots.

    Returns
    -------
    counts : jax.Array of shape (Kc,), dtype int32
        The number of frequencies in each slot.
    """
    return component_counts_from(state.z, state.nu.shape[0])


def _count_after(counts):
    """``Σ_{l>k} s_l`` for every slot ``k``: the frequencies in the slots after it."""
    return jnp.cumsum(counts[::-1])[::-1] - counts


def _sum_before(x):
    """``Σ_{l<k} x_l`` for every slot ``k``."""
    return jnp.concatenate([jnp.zeros(1, x.dtype), jnp.cumsum(x)[:-1]])


def stick_weights(nu):
    """``ϖ_k = ν_k Π_{l<k}(1 - ν_l)`` and the mass left after the last slot."""
    log1m = jnp.log1p(-jnp.clip(nu, 0.0, 1.0 - 1e-16))
    log_before = _sum_before(log1m)
    weights = nu * jnp.exp(log_before)
    remaining = jnp.exp(jnp.sum(log1m))
    return weights, remaining


def _solve_upper_batched(U, B):
    """``U^{-1} B`` for a batch of small upper-triangular ``U`` (K, m, m), ``B`` (K, m, r), by
    back substitution vectorised over the batch: m fused steps instead of K LAPACK calls."""
    m = U.shape[-1]

    def row(k, X):
        i = m - 1 - k  # rows > i are solved, rows ≤ i of X are still zero
        x_i = (B[:, i, :] - jnp.einsum("kj,kjr->kr", U[:, i, :], X)) / U[:, i, i, None]
        return X.at[:, i, :].set(x_i)

    return jax.lax.fori_loop(0, m, row, jnp.zeros(B.shape, jnp.result_type(U, B)))


def sample_niw(key, mu_n, kappa_n, nu_n, psi_n, log_chi2=None):
    """Draw Normal-Inverse-Wishart components for a batch of slots (Bartlett decomposition).

    Draws ``Σ_k ~ IW(Ψ_k, ν_k)``, ``μ_k | Σ_k ~ N(μ_k', Σ_k/κ_k)`` for a batch of ``k`` (leading
    axis), returned as ``(μ, G, log det Σ^{-1})`` with ``Σ^{-1} = G Gᵀ``. With ``Ψ = C Cᵀ``,
    Bartlett's ``A`` (lower, ``A_ii² ~ χ²(ν - i)``, ``A_ij ~ N(0,1)``) gives
    ``Σ^{-1} = C^{-T} A Aᵀ C^{-1} ~ Wishart(Ψ^{-1}, ν)``, so ``G = C^{-T} A`` and
    ``Σ^{1/2} = C A^{-T}``.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    mu_n : jax.Array of shape (K, m)
        The mean ``μ_k'`` of each component's mean.
    kappa_n : jax.Array of shape (K,)
        The scaling ``κ_k`` of each mean's covariance ``Σ_k/κ_k``.
    nu_n : jax.Array of shape (K,)
        The degrees of freedom ``ν_k`` of each Inverse-Wishart.
    psi_n : jax.Array of shape (K, m, m)
        The scale matrix ``Ψ_k`` of each Inverse-Wishart.
    log_chi2 : jax.Array of shape (K, m) or None, default=None
        ``log A_ii²``, passed in so that the caller can batch all its Gamma draws into one
        rejection loop; None: drawn here.

    Returns
    -------
    mu : jax.Array of shape (K, m)
        The means ``μ_k``.
    prec_sqrt : jax.Array of shape (K, m, m)
        ``G_k``, a square root of each precision: ``Σ_k^{-1} = G_k G_kᵀ``.
    logdet_prec : jax.Array of shape (K,)
        ``log det Σ_k^{-1}``.
    """
    Kb, m = mu_n.shape
    dtype = mu_n.dtype
    k1, k2, k3 = jax.random.split(key, 3)
    if log_chi2 is None:
        dof = nu_n[:, None] - jnp.arange(m, dtype=dtype)[None, :]
        log_chi2 = jnp.log(2.0) + _random.log_gamma(k1, dof / 2.0, None, dtype)
    diag = jnp.exp(0.5 * log_chi2)
    lower = jnp.tril(jax.random.normal(k2, (Kb, m, m), dtype=dtype), -1)
    A = lower + diag[:, :, None] * jnp.eye(m, dtype=dtype)[None]
    Cf = jnp.linalg.cholesky(psi_n)
    G = _solve_upper_batched(jnp.swapaxes(Cf, -1, -2), A)  # C^{-T} A
    logdet_prec = jnp.sum(log_chi2, -1) - 2.0 * jnp.sum(jnp.log(jnp.diagonal(Cf, axis1=-2, axis2=-1)), -1)
    eps = jax.random.normal(k3, (Kb, m, 1), dtype=dtype)
    z = _solve_upper_batched(jnp.swapaxes(A, -1, -2), eps)  # A^{-T} ε
    mu = mu_n + (Cf @ z)[..., 0] / jnp.sqrt(kappa_n)[:, None]
    return mu, G, logdet_prec


def component_log_density(omega, mu, prec_sqrt, logdet_prec):
    """``log N(ω_j | μ_k, Σ_k)`` for every frequency ``j`` and every component ``k``.

    Parameters
    ----------
    omega : jax.Array of shape (M, m)
        The frequencies ``ω_j``, one per row.
    mu : jax.Array of shape (Kc, m)
        The components' means ``μ_k``.
    prec_sqrt : jax.Array of shape (Kc, m, m)
        ``G_k`` with ``Σ_k^{-1} = G_k G_kᵀ``.
    logdet_prec : jax.Array of shape (Kc,)
        ``log det Σ_k^{-1}``.

    Returns
    -------
    log_density : jax.Array of shape (M, Kc)
        ``log N(ω_j | μ_k, Σ_k)`` in row ``j``, column ``k``.
    """
    m = omega.shape[-1]
    diff = omega[:, None, :] - mu[None, :, :]  # (M, Kc, m)
    q = jnp.einsum("jki,kil->jkl", diff, prec_sqrt)
    return -0.5 * jnp.sum(q**2, -1) + 0.5 * logdet_prec[None, :] - 0.5 * m * jnp.log(2 * jnp.pi)


def _slot_moments(omega, onehot):
    """Each slot's count ``(Kc,)``, sum and mean ``(Kc, m)`` and scatter ``Σ (ω − ω̄)(ω − ω̄)ᵀ``
    ``(Kc, m, m)`` of the frequencies assigned to it."""
    counts = onehot.sum(0)
    sums = onehot.T @ omega
    mean = sums / jnp.maximum(counts, 1.0)[:, None]
    diff = omega[:, None, :] - mean[None, :, :]  # (M, Kc, m)
    return counts, sums, mean, jnp.einsum("jk,jki,jkl->kil", onehot, diff, diff)


def _niw_posterior_params(omega, onehot, mu0, kappa0, nu0, psi0):
    counts, sums, mean, scatter = _slot_moments(omega, onehot)
    kappa_n = kappa0 + counts
    nu_n = nu0 + counts
    mu_n = (kappa0 * mu0[None, :] + sums) / kappa_n[:, None]
    dm = mean - mu0[None, :]
    psi_n = (
        psi0[None] + scatter + (kappa0 * counts / kappa_n)[:, None, None] * (dm[:, :, None] * dm[:, None, :])
    )
    return counts, mu_n, kappa_n, nu_n, psi_n


def sticks_and_components(key, z, omega, n_slots, alpha, mu0, kappa0, nu0, psi0):
    """Draw the sticks and the components of every slot given the assignments.

    ``(ν, μ, G, log det Σ^{-1}) | z, Ω``: sticks ``ν_k ~ Beta(1 + s_k, α + Σ_{l>k} s_l)``
    (eq. 9's Dirichlet on the instantiated weights plus the α remainder) and each component from
    its NIW posterior (empty slots: prior draws).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    z : jax.Array of shape (M,), dtype int
        The slot of each frequency.
    omega : jax.Array of shape (M, m)
        The frequencies ``Ω``, one per row.
    n_slots : int
        The number of slots ``Kc`` of the table.
    alpha : float
        The DP concentration ``α``.
    mu0 : jax.Array of shape (m,)
        The NIW base mean ``μ0``.
    kappa0 : float
        The NIW prior's mean scaling ``κ0`` (``μ_k | Σ_k ~ N(μ0, Σ_k/κ0)``).
    nu0 : float
        The NIW prior's degrees of freedom ``ν0``.
    psi0 : jax.Array of shape (m, m)
        The NIW scale matrix ``Ψ0`` (``Σ_k ~ IW(Ψ0, ν0)``).

    Returns
    -------
    nu : jax.Array of shape (Kc,)
        The stick proportions ``ν_k``.
    mu : jax.Array of shape (Kc, m)
        The components' means ``μ_k``.
    prec_sqrt : jax.Array of shape (Kc, m, m)
        ``G_k`` with ``Σ_k^{-1} = G_k G_kᵀ``.
    logdet_prec : jax.Array of shape (Kc,)
        ``log det Σ_k^{-1}``.
    """
    k_nu, k_niw = jax.random.split(key)
    onehot = jax.nn.one_hot(z, n_slots, dtype=omega.dtype)
    counts, mu_n, kappa_n, nu_n, psi_n = _niw_posterior_params(omega, onehot, mu0, kappa0, nu0, psi0)
    after = _count_after(counts)
    m = omega.shape[1]
    dof = nu_n[:, None] - jnp.arange(m, dtype=omega.dtype)[None, :]
    # one rejection loop for every Gamma variate: sticks (two per slot) and Bartlett diagonals
    shapes = jnp.concatenate([1.0 + counts, alpha + after, (dof / 2.0).ravel()])
    lg = _random.log_gamma(k_nu, shapes, None, omega.dtype)
    nu = jax.nn.sigmoid(lg[:n_slots] - lg[n_slots : 2 * n_slots])
    log_chi2 = jnp.log(2.0) + lg[2 * n_slots :].reshape(n_slots, m)
    mu, G, logdet = sample_niw(k_niw, mu_n, kappa_n, nu_n, psi_n, log_chi2)
    return nu, mu, G, logdet


def dp_slice_update(key, state: DPState, omega, alpha, mu0, kappa0, nu0, psi0):
    """One sweep of the paper's DP slice sampler (eqs. 5–9) given the frequencies.

    The sticks and components given ``z`` (:func:`sticks_and_components`), the slices
    ``t_j ~ U(0, ϖ_{z_j})`` (eq. 5), then the assignments ``z_j ∝ 1(ϖ_k > t_j) N(ω_j | μ_k, Σ_k)``
    (eq. 7). ``overflow`` is set when the stick mass left after the table is ``≥ min_j t_j`` (a
    component outside the table could then receive a frequency).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    state : DPState
        The current state; its assignments ``z`` and ``overflow`` flag are read.
    omega : jax.Array of shape (M, m)
        The frequencies ``Ω``, one per row.
    alpha : float
        The DP concentration ``α``.
    mu0 : jax.Array of shape (m,)
        The NIW base mean ``μ0``.
    kappa0 : float
        The NIW prior's mean scaling ``κ0`` (``μ_k | Σ_k ~ N(μ0, Σ_k/κ0)``).
    nu0 : float
        The NIW prior's degrees of freedom ``ν0``.
    psi0 : jax.Array of shape (m, m)
        The NIW scale matrix ``Ψ0`` (``Σ_k ~ IW(Ψ0, ν0)``).

    Returns
    -------
    state : DPState
        The new sticks, components and assignments; ``overflow`` is the old flag or'ed with this
        update's.
    """
    Kc = state.nu.shape[0]
    k_draw, k_t, k_z = jax.random.split(key, 3)
    nu, mu, G, logdet = sticks_and_components(k_draw, state.z, omega, Kc, alpha, mu0, kappa0, nu0, psi0)
    weights, remaining = stick_weights(nu)
    # slices (eq. 5) and assignments (eq. 7)
    t = jax.random.uniform(k_t, state.z.shape, dtype=omega.dtype) * weights[state.z]
    overflow = state.overflow | (remaining >= jnp.min(t))
    logp = component_log_density(omega, mu, G, logdet)
    allowed = weights[None, :] > t[:, None]
    logits = jnp.where(allowed, logp, -jnp.inf)
    z = jax.random.categorical(k_z, logits, axis=-1).astype(state.z.dtype)
    return DPState(nu, mu, G, logdet, z, overflow)


def expected_log_weights(counts, alpha):
    """``log E[ϖ_k | z]`` for every slot and ``log E[Π_k (1 - ν_k) | z]``, the mass beyond the
    table, under the sticks' independent Beta posteriors (``counts`` = ``s_k``, eq. 6)."""
    after = _count_after(counts)
    a, b = 1.0 + counts, alpha + after
    log_nu = jnp.log(a) - jnp.log(a + b)
    log_rest = jnp.log(b) - jnp.log(a + b)
    return log_nu + _sum_before(log_rest), jnp.sum(log_rest)


class NIWStatistics(NamedTuple):
    """The NIW posterior of each slot given the frequencies in it: ``n_k``, ``μ_n``,
    ``Ψ_n^{-1}`` and ``log det Ψ_n`` (``κ_n = κ0 + n_k``, ``ν_n = ν0 + n_k``)."""

    counts: jnp.ndarray  # (Kc,)
    mean: jnp.ndarray  # (Kc, m)
    psi_inv: jnp.ndarray  # (Kc, m, m)
    logdet_psi: jnp.ndarray  # (Kc,)


def niw_statistics(z, omega, n_slots, mu0, kappa0, nu0, psi0) -> NIWStatistics:
    """The NIW posterior of every slot, from scratch (Cholesky of each ``Ψ_n``)."""
    onehot = jax.nn.one_hot(z, n_slots, dtype=omega.dtype)
    counts, mean, _, _, psi_n = _niw_posterior_params(omega, onehot, mu0, kappa0, nu0, psi0)
    L = jnp.linalg.cholesky(psi_n)
    eye = jnp.broadcast_to(jnp.eye(omega.shape[1], dtype=omega.dtype), psi_n.shape)
    L_inv = jax.lax.linalg.triangular_solve(L, eye, left_side=True, lower=True)
    logdet = 2.0 * jnp.sum(jnp.log(jnp.diagonal(L, axis1=-2, axis2=-1)), -1)
    return NIWStatistics(counts, mean, jnp.swapaxes(L_inv, -1, -2) @ L_inv, logdet)


def niw_predictive_log_density(x, stats: NIWStatistics, kappa0, nu0):
    """The NIW posterior predictive ``log p(x | ω's in slot k)`` of a point, for every slot.

    A multivariate t with ``ν_n - m + 1`` degrees of freedom, computed as the ratio of marginal
    likelihoods ``Γ((ν_n+1)/2) / Γ((ν_n+1-m)/2) π^{-m/2} c^{m/2} |Ψ_n|^{-1/2}
    (1 + c uᵀΨ_n^{-1}u)^{-(ν_n+1)/2}`` with ``c = κ_n / (κ_n + 1)``, ``u = x - μ_n``.

    Parameters
    ----------
    x : jax.Array of shape (m,)
        The point (a frequency).
    stats : NIWStatistics
        Each slot's NIW posterior: its count ``n_k``, ``μ_n``, ``Ψ_n^{-1}`` and ``log det Ψ_n``.
    kappa0 : float
        The NIW prior's mean scaling ``κ0`` (``κ_n = κ0 + n_k``).
    nu0 : float
        The NIW prior's degrees of freedom ``ν0`` (``ν_n = ν0 + n_k``).

    Returns
    -------
    log_density : jax.Array of shape (Kc,)
        ``log p(x | ω's in slot k)`` for each slot ``k``.
    """
    m = x.shape[-1]
    u = x - stats.mean
    q = jnp.einsum("ki,kil,kl->k", u, stats.psi_inv, u)
    kappa_n, nu_n = kappa0 + stats.counts, nu0 + stats.counts
    c = kappa_n / (kappa_n + 1.0)
    return (
        jax.scipy.special.gammaln((nu_n + 1.0) / 2.0)
        - jax.scipy.special.gammaln((nu_n + 1.0 - m) / 2.0)
        - 0.5 * m * jnp.log(jnp.pi)
        + 0.5 * m * jnp.log(c)
        - 0.5 * stats.logdet_psi
        - 0.5 * (nu_n + 1.0) * jnp.log1p(c * q)
    )


def _rank_one(stats: NIWStatistics, k, x, sign, kappa0):
    """Add (``sign = 1``) or remove (``-1``) the frequency ``x`` in slot ``k``:
    ``Ψ_{n+1} = Ψ_n + κ_n/(κ_n+1) (x - μ_n)(x - μ_n)ᵀ``, its inverse by Sherman–Morrison and its
    log-determinant by the matrix determinant lemma."""
    kappa = kappa0 + stats.counts[k]
    mean = (kappa * stats.mean[k] + sign * x) / (kappa + sign)
    u = x - jnp.where(sign > 0, stats.mean[k], mean)  # x minus the mean without x
    c = sign * jnp.where(sign > 0, kappa / (kappa + 1.0), (kappa - 1.0) / kappa)
    Au = stats.psi_inv[k] @ u
    denom = 1.0 + c * (u @ Au)
    return NIWStatistics(
        stats.counts.at[k].add(sign),
        stats.mean.at[k].set(mean),
        stats.psi_inv.at[k].add(-c * jnp.outer(Au, Au) / denom),
        stats.logdet_psi.at[k].add(jnp.log(denom)),
    )


def assignment_logits(x, stats: NIWStatistics, log_prior_pred, alpha, kappa0, nu0):
    """The collapsed assignment logits of one frequency, ``log p(z_j = k | z_{-j}, Ω) + const``.

    For the ``Kc`` slots and, last, for the mass beyond the table:
    ``log E[ϖ_k | z_{-j}] + log p(ω_j | ω's in slot k)``, with the sticks and the components
    integrated out.

    Parameters
    ----------
    x : jax.Array of shape (m,)
        The frequency ``ω_j``.
    stats : NIWStatistics
        The slots' NIW posteriors without ``ω_j``.
    log_prior_pred : float or jax.Array of shape ()
        The prior predictive log density of ``ω_j`` (the term of the mass beyond the table).
    alpha : float
        The DP concentration ``α``.
    kappa0 : float
        The NIW prior's mean scaling ``κ0``.
    nu0 : float
        The NIW prior's degrees of freedom ``ν0``.

    Returns
    -------
    logits : jax.Array of shape (Kc + 1,)
        The unnormalised log probabilities of the slots, then of the mass beyond the table.
    """
    log_w, log_rest = expected_log_weights(stats.counts, alpha)
    log_pred = niw_predictive_log_density(x, stats, kappa0, nu0)
    return jnp.concatenate([log_w + log_pred, (log_rest + log_prior_pred)[None]])


def _assignment_scan(key, z, omega, n_slots, alpha, mu0, kappa0, nu0, psi0, signed):
    """One systematic scan of ``z_j | z_{-j}, Ω`` (``signed``: of ``(s_j, z_j)``, ``ω_j`` read as
    ``s_j ω_j``) with the sticks and the components integrated out. Returns ``(z, signs,
    overflow)``."""
    stats = niw_statistics(z, omega, n_slots, mu0, kappa0, nu0, psi0)
    prior = niw_statistics(jnp.zeros(0, jnp.int32), omega[:0], 1, mu0, kappa0, nu0, psi0)
    prior_pred = jax.vmap(lambda x: niw_predictive_log_density(x, prior, kappa0, nu0)[0])
    log_prior_pred = prior_pred(omega)
    mirror_prior_pred = prior_pred(-omega) if signed else None
    keys = jax.random.split(key, z.shape[0])

    def visit(j, carry):
        z, s, stats, overflow = carry
        stats = _rank_one(stats, z[j], omega[j], -1.0, kappa0)
        logits = assignment_logits(omega[j], stats, log_prior_pred[j], alpha, kappa0, nu0)
        if signed:  # slots for +ω_j, then for -ω_j
            mirror = assignment_logits(-omega[j], stats, mirror_prior_pred[j], alpha, kappa0, nu0)
            logits = jnp.concatenate([logits, mirror])
        pick = jax.random.categorical(keys[j], logits)
        sign = jnp.where(pick > n_slots, -1.0, 1.0).astype(omega.dtype)
        k = pick % (n_slots + 1)
        overflow = overflow | (k == n_slots)
        k = jnp.minimum(k, n_slots - 1).astype(z.dtype)
        stats = _rank_one(stats, k, sign * omega[j], 1.0, kappa0)
        return z.at[j].set(k), s.at[j].set(sign), stats, overflow

    start = (z, jnp.ones(z.shape, omega.dtype), stats, jnp.zeros((), bool))
    z, s, _, overflow = jax.lax.fori_loop(0, z.shape[0], visit, start)
    return z, s, overflow


def collapsed_assignments(key, z, omega, n_slots, alpha, mu0, kappa0, nu0, psi0):
    """One collapsed Gibbs scan of the assignments (Neal 2000, Algorithm 3).

    One systematic scan of ``z_j | z_{-j}, Ω`` with the sticks and the components integrated
    out, on the labelled stick-breaking table:
    ``p(z_j = k | ·) ∝ E[ϖ_k | z_{-j}] · p(ω_j | ω's in slot k)``, the NIW predictive, so an
    empty slot offers the prior predictive rather than one fresh NIW draw. Choosing the mass
    beyond the table sets the returned ``overflow`` flag (the frequency then goes to the last slot).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    z : jax.Array of shape (M,), dtype int
        The slot of each frequency.
    omega : jax.Array of shape (M, m)
        The frequencies ``Ω``, one per row.
    n_slots : int
        The number of slots ``Kc`` of the table.
    alpha : float
        The DP concentration ``α``.
    mu0 : jax.Array of shape (m,)
        The NIW base mean ``μ0``.
    kappa0 : float
        The NIW prior's mean scaling ``κ0`` (``μ_k | Σ_k ~ N(μ0, Σ_k/κ0)``).
    nu0 : float
        The NIW prior's degrees of freedom ``ν0``.
    psi0 : jax.Array of shape (m, m)
        The NIW scale matrix ``Ψ0`` (``Σ_k ~ IW(Ψ0, ν0)``).

    Returns
    -------
    z : jax.Array of shape (M,)
        The new assignments, of ``z``'s dtype.
    overflow : jax.Array of shape (), dtype bool
        Whether a frequency chose the mass beyond the table.
    """
    z, _, overflow = _assignment_scan(key, z, omega, n_slots, alpha, mu0, kappa0, nu0, psi0, False)
    return z, overflow


def signed_assignments(key, z, omega, n_slots, alpha, mu0, kappa0, nu0, psi0):
    """One collapsed Gibbs scan of the assignments that draws each frequency's sign with its slot.

    As :func:`collapsed_assignments`, but each visit draws the sign ``s_j`` of ``ω_j`` with its
    slot: ``p(s_j, z_j = k | ·) ∝ E[ϖ_k | z_{-j}] · p(s_j ω_j | ω's in slot k)`` over
    ``s_j = ±1``. Not in the paper: the random Fourier features of ``-ω_j`` are those of ``ω_j``
    with the sine negated, so flipping ``ω_j`` with its sine weight ``β_{sin,j}`` changes neither
    the labels' likelihood nor ``β``'s zero-mean Gaussian prior, only the DP's density of ``ω_j``;
    the draw is then the Gibbs conditional of ``(s_j, z_j)`` on that two-point orbit. A frequency
    whose mirror image sits in another component can join it without crossing the origin.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    z : jax.Array of shape (M,), dtype int
        The slot of each frequency.
    omega : jax.Array of shape (M, m)
        The frequencies ``Ω``, one per row.
    n_slots : int
        The number of slots ``Kc`` of the table.
    alpha : float
        The DP concentration ``α``.
    mu0 : jax.Array of shape (m,)
        The NIW base mean ``μ0``.
    kappa0 : float
        The NIW prior's mean scaling ``κ0`` (``μ_k | Σ_k ~ N(μ0, Σ_k/κ0)``).
    nu0 : float
        The NIW prior's degrees of freedom ``ν0``.
    psi0 : jax.Array of shape (m, m)
        The NIW scale matrix ``Ψ0`` (``Σ_k ~ IW(Ψ0, ν0)``).

    Returns
    -------
    z : jax.Array of shape (M,)
        The new assignments, of ``z``'s dtype.
    signs : jax.Array of shape (M,)
        ``s_j = ±1``, of ``omega``'s dtype: apply them to the rows of ``Ω`` and to the sine
        weights of ``β``.
    overflow : jax.Array of shape (), dtype bool
        Whether a frequency chose the mass beyond the table (it then goes to the last slot).
    """
    return _assignment_scan(key, z, omega, n_slots, alpha, mu0, kappa0, nu0, psi0, True)


def _log_labelled_prior(counts, alpha):
    """``log p(z)`` under the stick-breaking prior, sticks integrated out:
    ``Σ_k log B(1 + s_k, α + Σ_{l>k} s_l) - log B(1, α)`` (eq. 6)."""
    after = _count_after(counts)
    betaln = jax.scipy.special.betaln
    return jnp.sum(betaln(1.0 + counts, alpha + after) - betaln(1.0, alpha))


def _log_evidence(stats: NIWStatistics, m, kappa0, nu0, psi0):
    """Each slot's ``log p(ω's in slot k)``, ``(μ, Σ)`` integrated out:
    ``π^{-nm/2} Γ_m(ν_n/2)/Γ_m(ν0/2) |Ψ0|^{ν0/2}/|Ψ_n|^{ν_n/2} (κ0/κ_n)^{m/2}`` (0 if empty)."""
    n = stats.counts
    mgl = jax.scipy.special.multigammaln
    return (
        -0.5 * n * m * jnp.log(jnp.pi)
        + mgl((nu0 + n) / 2.0, m)
        - mgl(jnp.asarray(nu0, n.dtype) / 2.0, m)
        + 0.5 * nu0 * jnp.linalg.slogdet(psi0)[1]
        - 0.5 * (nu0 + n) * stats.logdet_psi
        + 0.5 * m * (jnp.log(kappa0) - jnp.log(kappa0 + n))
    )


def log_assignment_joint(z, omega, n_slots, alpha, mu0, kappa0, nu0, psi0):
    """``log p(z, Ω)`` on the table with the sticks and the components integrated out.

    The target of the collapsed and split–merge moves.

    Parameters
    ----------
    z : jax.Array of shape (M,), dtype int
        The slot of each frequency.
    omega : jax.Array of shape (M, m)
        The frequencies ``Ω``, one per row.
    n_slots : int
        The number of slots ``Kc`` of the table.
    alpha : float
        The DP concentration ``α``.
    mu0 : jax.Array of shape (m,)
        The NIW base mean ``μ0``.
    kappa0 : float
        The NIW prior's mean scaling ``κ0`` (``μ_k | Σ_k ~ N(μ0, Σ_k/κ0)``).
    nu0 : float
        The NIW prior's degrees of freedom ``ν0``.
    psi0 : jax.Array of shape (m, m)
        The NIW scale matrix ``Ψ0`` (``Σ_k ~ IW(Ψ0, ν0)``).

    Returns
    -------
    log_joint : jax.Array of shape ()
        ``log p(z, Ω)``.
    """
    stats = niw_statistics(z, omega, n_slots, mu0, kappa0, nu0, psi0)
    log_evidence = _log_evidence(stats, omega.shape[1], kappa0, nu0, psi0)
    return _log_labelled_prior(stats.counts, alpha) + jnp.sum(log_evidence)


def niw_scale_log_density(z, omega, n_slots, mu0, kappa0, nu0, prior):
    """The log density of the NIW scale ``t = log ψ`` given ``z`` and ``Ω``, the components integrated out.

    ``t ↦ log p(t | z, Ω)`` up to a constant, for ``t = log ψ`` of the NIW scale matrix
    ``Ψ0 = ψ I`` under ``ψ ~ Gamma(a, b)``, with every component integrated out. The
    ``ψ``-dependent part of each occupied slot's evidence (:func:`log_assignment_joint`) is
    ``(ν0 m/2) t − (ν_{n,k}/2) log|e^t I + S_k|`` with ``S_k = Ψ_{n,k} − Ψ0`` (its scatter and
    mean terms), so the eigenvalues of ``S_k`` are computed once; an empty slot's two terms cancel.

    Parameters
    ----------
    z : jax.Array of shape (M,), dtype int
        The slot of each frequency.
    omega : jax.Array of shape (M, m)
        The frequencies ``Ω``, one per row.
    n_slots : int
        The number of slots ``Kc`` of the table.
    mu0 : jax.Array of shape (m,)
        The NIW base mean ``μ0``.
    kappa0 : float
        The NIW prior's mean scaling ``κ0`` (``μ_k | Σ_k ~ N(μ0, Σ_k/κ0)``).
    nu0 : float
        The NIW prior's degrees of freedom ``ν0``.
    prior : tuple of (float, float)
        ``(a, b)``, the shape and rate of the Gamma prior of ``ψ``.

    Returns
    -------
    log_density : callable
        The function ``t ↦ log p(t | z, Ω) + const`` of a scalar ``t``.
    """
    m = omega.shape[1]
    onehot = jax.nn.one_hot(z, n_slots, dtype=omega.dtype)
    no_scale = jnp.zeros((m, m), omega.dtype)
    counts, _, _, nu_n, S = _niw_posterior_params(omega, onehot, mu0, kappa0, nu0, no_scale)
    eig = jnp.maximum(jnp.linalg.eigvalsh(S), 0.0)  # (Kc, m); S_k is positive semi-definite
    a, b = prior

    def log_density(t):
        slots = 0.5 * nu0 * m * t - 0.5 * nu_n * jnp.sum(jnp.log(jnp.exp(t) + eig), -1)
        return a * t - b * jnp.exp(t) + jnp.sum(jnp.where(counts > 0, slots, 0.0))  # Jacobian e^t

    return log_density


def sample_niw_scale(key, scale, z, omega, n_slots, mu0, kappa0, nu0, prior, width=1.0):
    """One slice step of the NIW scale ``ψ`` (in ``log ψ``) given ``z`` and ``Ω``.

    The components are integrated out (:func:`niw_scale_log_density`). The caller must redraw
    the components given the new ``ψ`` before anything conditions on them (both DP updates start
    by doing so).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    scale : float or jax.Array of shape ()
        The current ``ψ`` (``Ψ0 = ψ I``).
    z : jax.Array of shape (M,), dtype int
        The slot of each frequency.
    omega : jax.Array of shape (M, m)
        The frequencies ``Ω``, one per row.
    n_slots : int
        The number of slots ``Kc`` of the table.
    mu0 : jax.Array of shape (m,)
        The NIW base mean ``μ0``.
    kappa0 : float
        The NIW prior's mean scaling ``κ0`` (``μ_k | Σ_k ~ N(μ0, Σ_k/κ0)``).
    nu0 : float
        The NIW prior's degrees of freedom ``ν0``.
    prior : tuple of (float, float)
        ``(a, b)``, the shape and rate of the Gamma prior of ``ψ``.
    width : float, default=1.0
        The width, in ``log ψ``, of the slice step's initial interval.

    Returns
    -------
    scale : jax.Array of shape ()
        The new ``ψ``.
    """
    log_density = niw_scale_log_density(z, omega, n_slots, mu0, kappa0, nu0, prior)
    return jnp.exp(slice_step(key, jnp.log(scale), log_density, width))


def spectral_scale_log_density(z, omega, n_slots, mu0, kappa0, nu0, psi, prior, log_likelihood):
    """The log density of the spectrum's overall log-scale ``t``, for a generalised Gibbs step.

    ``t ↦ log`` density of the scaled spectrum ``(e^t Ω, e^{2t} ψ)`` up to a constant, for a
    generalised Gibbs step (Liu & Sabatti 2000) along the kernel's overall length-scale: the label
    term ``log_likelihood(e^t Ω)``, ``log p(e^t Ω | z, Ψ0 = e^{2t} ψ I)`` with the components
    integrated out (the ``t``-dependent part of :func:`log_assignment_joint`), the Gamma
    ``prior = (a, b)`` of ``ψ`` and the Jacobian ``e^{(Mm + 2)t}``. With ``prior=None`` ``ψ`` is
    fixed and only ``Ω`` scales (Jacobian ``e^{Mm t}``). Along this direction the joint (β, Ω)
    move, whitened by the current components, and ``ψ | z, Ω`` hold each other; this step moves
    it at once.

    With ``c = e^t`` and ``ψ_t`` the scaled (or fixed) ``ψ``, an occupied slot's
    ``Ψ_n = ψ_t I + c² S + w (c ω̄ − μ0)(c ω̄ − μ0)ᵀ`` (``S`` its scatter, ``w = κ0 n/(κ0 + n)``),
    so its log-determinant follows from the eigenvalues of ``S``, computed once, and the
    determinant lemma: each evaluation costs ``O(Kc m)``.

    Parameters
    ----------
    z : jax.Array of shape (M,), dtype int
        The slot of each frequency.
    omega : jax.Array of shape (M, m)
        The frequencies ``Ω``, one per row.
    n_slots : int
        The number of slots ``Kc`` of the table.
    mu0 : jax.Array of shape (m,)
        The NIW base mean ``μ0``.
    kappa0 : float
        The NIW prior's mean scaling ``κ0`` (``μ_k | Σ_k ~ N(μ0, Σ_k/κ0)``).
    nu0 : float
        The NIW prior's degrees of freedom ``ν0``.
    psi : float or jax.Array of shape ()
        The current NIW scale ``ψ`` (``Ψ0 = ψ I``).
    prior : tuple of (float, float) or None
        ``(a, b)``, the shape and rate of the Gamma prior of ``ψ``; None: ``ψ`` fixed.
    log_likelihood : callable
        The labels' log-likelihood as a function of the frequencies ``(M, m)``, a scalar.

    Returns
    -------
    log_density : callable
        The function ``t ↦ log p(t | ·) + const`` of a scalar ``t``.
    """
    M, m = omega.shape
    counts, _, mean, scatter = _slot_moments(omega, jax.nn.one_hot(z, n_slots, dtype=omega.dtype))
    eig, vecs = jnp.linalg.eigh(scatter)
    eig = jnp.maximum(eig, 0.0)  # S is positive semi-definite
    mean_rot = jnp.einsum("kil,ki->kl", vecs, mean)  # Qᵀω̄ per slot
    mu0_rot = jnp.einsum("kil,i->kl", vecs, mu0)
    w = kappa0 * counts / (kappa0 + counts)
    nu_n = nu0 + counts

    def log_density(t):
        scale = jnp.exp(t)
        psi_t = psi * scale**2 if prior is not None else psi
        d = psi_t + scale**2 * eig  # eigenvalues of ψ_t I + c² S
        shift = jnp.sum((scale * mean_rot - mu0_rot) ** 2 / d, -1)
        logdet = jnp.sum(jnp.log(d), -1) + jnp.log1p(w * shift)
        slots = 0.5 * nu0 * m * jnp.log(psi_t) - 0.5 * nu_n * logdet
        out = log_likelihood(scale * omega) + M * m * t + jnp.sum(jnp.where(counts > 0, slots, 0.0))
        if prior is not None:
            a, b = prior
            out = out + 2.0 * a * t - b * psi_t
        return out

    return log_density


def sample_spectral_scale(key, omega, psi, z, n_slots, mu0, kappa0, nu0, prior, log_likelihood, width=0.1):
    """One slice step of the spectrum's overall scale: ``(Ω, ψ) → (e^t Ω, e^{2t} ψ)``.

    A slice step of ``t`` under :func:`spectral_scale_log_density` from ``t = 0``. The caller must
    redraw the DP components given the new ``(Ω, ψ)`` before anything conditions on them.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    omega : jax.Array of shape (M, m)
        The frequencies ``Ω``, one per row.
    psi : float or jax.Array of shape ()
        The current NIW scale ``ψ`` (``Ψ0 = ψ I``).
    z : jax.Array of shape (M,), dtype int
        The slot of each frequency.
    n_slots : int
        The number of slots ``Kc`` of the table.
    mu0 : jax.Array of shape (m,)
        The NIW base mean ``μ0``.
    kappa0 : float
        The NIW prior's mean scaling ``κ0`` (``μ_k | Σ_k ~ N(μ0, Σ_k/κ0)``).
    nu0 : float
        The NIW prior's degrees of freedom ``ν0``.
    prior : tuple of (float, float) or None
        ``(a, b)``, the shape and rate of the Gamma prior of ``ψ``; None: ``ψ`` fixed.
    log_likelihood : callable
        The labels' log-likelihood as a function of the frequencies ``(M, m)``, a scalar.
    width : float, default=0.1
        The width, in ``t``, of the slice step's initial interval.

    Returns
    -------
    omega : jax.Array of shape (M, m)
        ``e^t Ω``.
    psi : jax.Array of shape () or float
        ``e^{2t} ψ`` (``ψ`` unchanged with ``prior=None``).
    """
    log_density = spectral_scale_log_density(z, omega, n_slots, mu0, kappa0, nu0, psi, prior, log_likelihood)
    t = slice_step(key, jnp.zeros((), omega.dtype), log_density, width)
    return jnp.exp(t) * omega, psi * jnp.exp(2.0 * t) if prior is not None else psi


def split_merge_step(key, z, omega, n_slots, alpha, mu0, kappa0, nu0, psi0):
    """One sequentially-allocated split–merge Metropolis–Hastings step on the assignments.

    A step on ``z`` given ``Ω`` (Dahl 2005; Jain & Neal 2004), exact for ``p(z | Ω)`` on the
    table. An ordered pair ``i ≠ j`` is drawn. If they share a component, the split proposal moves
    ``i`` to an empty slot chosen uniformly and allocates the component's other frequencies, in
    random order, to ``i``'s or ``j``'s side with probability ∝ size × NIW predictive given the
    side so far; else the merge proposal moves ``i``'s component into ``j``'s. With ``q`` the
    probability of the allocation and ``E`` the empty slots after a merge, a split is accepted
    with ``min(1, p(z_split) E / (p(z_merged) q))`` and a merge with the inverse ratio.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    z : jax.Array of shape (M,), dtype int
        The slot of each frequency.
    omega : jax.Array of shape (M, m)
        The frequencies ``Ω``, one per row.
    n_slots : int
        The number of slots ``Kc`` of the table.
    alpha : float
        The DP concentration ``α``.
    mu0 : jax.Array of shape (m,)
        The NIW base mean ``μ0``.
    kappa0 : float
        The NIW prior's mean scaling ``κ0`` (``μ_k | Σ_k ~ N(μ0, Σ_k/κ0)``).
    nu0 : float
        The NIW prior's degrees of freedom ``ν0``.
    psi0 : jax.Array of shape (m, m)
        The NIW scale matrix ``Ψ0`` (``Σ_k ~ IW(Ψ0, ν0)``).

    Returns
    -------
    z : jax.Array of shape (M,)
        The assignments after the step (``z`` itself if rejected).
    accepted : jax.Array of shape (), dtype bool
        Whether the proposal was accepted.
    """
    M = z.shape[0]
    k_i, k_j, k_slot, k_perm, k_alloc, k_acc = jax.random.split(key, 6)
    i = jax.random.randint(k_i, (), 0, M)
    j = (i + jax.random.randint(k_j, (), 1, M)) % M
    is_split = z[i] == z[j]
    empty = component_counts_from(z, n_slots) == 0
    new_slot = jax.random.categorical(k_slot, jnp.where(empty, 0.0, -jnp.inf)).astype(z.dtype)
    k_a, k_b = jnp.where(is_split, new_slot, z[i]), z[j]
    idx = jnp.arange(M)
    members = ((z == z[i]) | (z == z[j])) & (idx != i) & (idx != j)
    sides = niw_statistics(jnp.arange(2), omega[jnp.stack([i, j])], 2, mu0, kappa0, nu0, psi0)
    order = jax.random.permutation(k_perm, M)
    keys = jax.random.split(k_alloc, M)

    def allocate(t, carry):
        sides, z_split, log_q = carry
        f = order[t]
        x = omega[f]
        logits = jnp.log(sides.counts) + niw_predictive_log_density(x, sides, kappa0, nu0)
        log_p = logits - jax.nn.logsumexp(logits)
        side = jnp.where(is_split, jax.random.categorical(keys[t], logits), (z[f] != z[i]).astype(jnp.int32))
        moved = _rank_one(sides, side, x, 1.0, kappa0)
        sides = jax.tree.map(lambda a, b: jnp.where(members[f], a, b), moved, sides)
        z_l = jnp.where(members[f], jnp.where(side == 0, k_a, k_b), z_split[f])
        return sides, z_split.at[f].set(z_l), log_q + jnp.where(members[f], log_p[side], 0.0)

    z_start = z.at[i].set(k_a).at[j].set(k_b)
    sides, z_split, log_q = jax.lax.fori_loop(0, M, allocate, (sides, z_start, jnp.zeros((), omega.dtype)))
    together = (z == z[i]) | (z == z[j])
    z_merged = jnp.where(together, k_b, z)
    merged = niw_statistics(jnp.where(together, 0, 1), omega, 2, mu0, kappa0, nu0, psi0)
    counts_split = component_counts_from(z_split, n_slots).astype(omega.dtype)
    counts_merged = component_counts_from(z_merged, n_slots).astype(omega.dtype)
    m = omega.shape[1]
    log_ratio = (  # only the two sides' evidence differs between z_split and z_merged
        _log_labelled_prior(counts_split, alpha)
        - _log_labelled_prior(counts_merged, alpha)
        + jnp.sum(_log_evidence(sides, m, kappa0, nu0, psi0))
        - _log_evidence(merged, m, kappa0, nu0, psi0)[0]
        - log_q
        + jnp.log(jnp.sum(counts_merged == 0).astype(omega.dtype))
    )
    log_u = jnp.log(jax.random.uniform(k_acc, dtype=omega.dtype))
    accept = jnp.where(is_split, jnp.any(empty) & (log_u < log_ratio), log_u < -log_ratio)
    return jnp.where(accept, jnp.where(is_split, z_split, z_merged), z), accept


def dp_collapsed_update(key, state: DPState, omega, alpha, mu0, kappa0, nu0, psi0, n_split_merge=0):
    """The collapsed DP update: split–merge steps, a collapsed scan, then the sticks and components.

    ``n_split_merge`` split–merge steps (:func:`split_merge_step`), one scan of collapsed
    assignments (:func:`collapsed_assignments`), then the sticks and components given them
    (:func:`sticks_and_components`): each step leaves ``p(z, ν, μ, Σ | Ω)`` invariant.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    state : DPState
        The current state; its assignments ``z`` and ``overflow`` flag are read.
    omega : jax.Array of shape (M, m)
        The frequencies ``Ω``, one per row.
    alpha : float
        The DP concentration ``α``.
    mu0 : jax.Array of shape (m,)
        The NIW base mean ``μ0``.
    kappa0 : float
        The NIW prior's mean scaling ``κ0`` (``μ_k | Σ_k ~ N(μ0, Σ_k/κ0)``).
    nu0 : float
        The NIW prior's degrees of freedom ``ν0``.
    psi0 : jax.Array of shape (m, m)
        The NIW scale matrix ``Ψ0`` (``Σ_k ~ IW(Ψ0, ν0)``).
    n_split_merge : int, default=0
        The number of split–merge steps before the scan.

    Returns
    -------
    state : DPState
        The new sticks, components and assignments; ``overflow`` is the old flag or'ed with this
        update's.
    """
    Kc = state.nu.shape[0]
    k_sm, k_z, k_draw = jax.random.split(key, 3)

    def split_merge(z, k):
        return split_merge_step(k, z, omega, Kc, alpha, mu0, kappa0, nu0, psi0)[0], None

    z, _ = jax.lax.scan(split_merge, state.z, jax.random.split(k_sm, n_split_merge))
    z, overflow = collapsed_assignments(k_z, z, omega, Kc, alpha, mu0, kappa0, nu0, psi0)
    nu, mu, G, logdet = sticks_and_components(k_draw, z, omega, Kc, alpha, mu0, kappa0, nu0, psi0)
    return DPState(nu, mu, G, logdet, z, state.overflow | overflow)


def sample_from_components(key_z, key_omega, weights, mu, prec_sqrt, n):
    """Draw frequencies from the DP's table: ``z_j ~ Cat(ϖ)``, then ``ω_j ~ N(μ_{z_j}, Σ_{z_j})``.

    The categorical draw is renormalised over the table.

    Parameters
    ----------
    key_z : jax.Array
        A JAX PRNG key for the assignments.
    key_omega : jax.Array
        A JAX PRNG key for the frequencies.
    weights : jax.Array of shape (Kc,)
        The stick weights ``ϖ`` (:func:`stick_weights`).
    mu : jax.Array of shape (Kc, m)
        The components' means ``μ_k``.
    prec_sqrt : jax.Array of shape (Kc, m, m)
        ``G_k`` with ``Σ_k^{-1} = G_k G_kᵀ``.
    n : int
        The number of draws.

    Returns
    -------
    z : jax.Array of shape (n,), dtype int32
        The component of each draw.
    omega : jax.Array of shape (n, m)
        The frequencies ``ω_j``.
    """
    z = jax.random.categorical(key_z, jnp.log(weights), shape=(n,)).astype(jnp.int32)
    eps = jax.random.normal(key_omega, (n, mu.shape[1]), dtype=mu.dtype)
    # ω = μ + Σ^{1/2} ε with Σ^{1/2} = G^{-T}
    return z, mu[z] + jax.vmap(lambda g, e: jnp.linalg.solve(g.T, e))(prec_sqrt[z], eps)


def dp_prior_draw(key, capacity, n_frequencies, alpha, mu0, kappa0, nu0, psi0):
    """Draw the DP state and the frequencies from the prior truncated to ``capacity`` slots.

    Sticks, NIW components, ``z_j ~ Cat(ϖ)`` renormalised over the table and
    ``ω_j ~ N(μ_{z_j}, Σ_{z_j})``. ``overflow`` is set when the stick mass left after the table
    exceeds 1e-6 (the truncation is then not negligible: increase ``capacity``).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    capacity : int
        The number of slots ``Kc`` of the table.
    n_frequencies : int
        The number of frequencies ``M``.
    alpha : float
        The DP concentration ``α``.
    mu0 : jax.Array of shape (m,)
        The NIW base mean ``μ0``.
    kappa0 : float
        The NIW prior's mean scaling ``κ0`` (``μ_k | Σ_k ~ N(μ0, Σ_k/κ0)``).
    nu0 : float
        The NIW prior's degrees of freedom ``ν0``.
    psi0 : jax.Array of shape (m, m)
        The NIW scale matrix ``Ψ0`` (``Σ_k ~ IW(Ψ0, ν0)``).

    Returns
    -------
    state : DPState
        The sticks, components and assignments, and the ``overflow`` flag.
    omega : jax.Array of shape (M, m)
        The frequencies, of ``mu0``'s dtype.
    """
    m = mu0.shape[0]
    k_nu, k_niw, k_z, k_w = jax.random.split(key, 4)
    dtype = mu0.dtype
    nu = _random.beta(k_nu, 1.0, alpha, (capacity,), dtype)
    ones = jnp.ones(capacity, dtype)
    mu, G, logdet = sample_niw(
        k_niw,
        jnp.broadcast_to(mu0, (capacity, m)),
        kappa0 * ones,
        nu0 * ones,
        jnp.broadcast_to(psi0, (capacity, m, m)),
    )
    weights, remaining = stick_weights(nu)
    z, omega = sample_from_components(k_z, k_w, weights, mu, G, n_frequencies)
    overflow = remaining > 1e-6
    return DPState(nu, mu, G, logdet, z, overflow), omega
