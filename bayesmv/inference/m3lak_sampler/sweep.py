"""One sweep of the M3LAK hybrid Gibbs/HMC sampler (paper Algorithm 1; ``docs/m3lak_sampler.md``), its
starting point and its stored outputs.

One sweep (:func:`m3lak_sweep`, pure and jit-able) updates, in order:

1. ``H`` — per-row HMC (rows are conditionally independent; one accept test per row; shared
   mass matrix ``I + Σ_i τ_i W_iᵀW_i`` = the Gaussian part's precision; eq. 4),
2. ``Ω`` — joint HMC (eq. 3) under the current DP component of each ω_j,
3. DP assignments, sticks and components — only for ``spectral_prior="dp"``: collapsed
   assignments with the NIW predictive (``config.dp_update="collapsed"``, Neal 2000) or the
   paper's slice sampler (``"slice"``, eqs. 5–9); with ``config.niw_psi0_prior`` the NIW scale
   ``ψ`` given ``z`` and ``Ω`` comes first (components integrated out, a slice step in
   ``log ψ``; not in the paper), then with ``config.spectral_scale_moves`` the spectrum's
   overall scale ``(Ω, ψ) → (e^t Ω, e^{2t} ψ)`` (components integrated out, a slice step in
   ``t``; not in the paper), with ``config.dp_sign_moves`` one scan of each frequency's sign
   with its slot (:func:`~bayesmv.inference.dp.signed_assignments`, the sine weights of ``β``
   flipped with it; not in the paper), and either update then redraws the components given them; with
   ``config.dp_relocation_moves`` one Metropolis–Hastings relocation per frequency follows
   (:mod:`~bayesmv.inference.m3lak_sampler.relocate`; not in the paper); with
   ``config.kernel_passes = K > 1`` blocks 2–3 run ``K`` times (each pass with its own keys): the
   DP components whiten Ω's move, so Ω's length-scales move only as fast as the two alternate,
4. ``λ`` (eq. 2),
5. ``β`` (eq. 1),
6. ``U`` (eq. 10),
7. ``[W_i V_i]`` jointly per view (erratum 1 of ``docs/m3lak_sampler.md``),
8. ``r`` (eq. 13, corrected),
9. ``τ`` (eq. 14); with ``config.h_lvm_passes = P > 1``, blocks 1 and 6–9 come first instead,
   as ``P`` passes of ``H`` then the latent variable model (each pass with its own keys), and
   blocks 2–5 follow: ``H`` and ``W`` hold each other, and the noise precisions ``τ`` move only
   as fast as they do. (Any fixed order of exact blocks leaves the posterior invariant; this one
   is a loop whose body compiles each block once.)
10. ``v`` (if ``v_prior``), then ``v_view`` (if ``v_view_prior``, with ``view_features``),
11. with ``config.latent_axis_moves``: the scale and shear of the latent axes, ``(H, W_i, r_i,
    Ω, DP components)`` moved together along maps under which the likelihood is invariant
    (:mod:`~bayesmv.inference.latent_axes`).

With ``config.precision_update="collapsed"`` blocks 6–9 become: U_i drawn from its conditional
given V_i (eq. 10), then moved with V_i integrated out (elliptical slice), then r_i and τ_i
with ``[W_i V_i]`` integrated out
(:func:`~bayesmv.inference.conditionals.sample_precisions_collapsed`), then ``[W_i V_i]``.

With ``config.augmented=True`` the ``H`` and ``Ω`` updates condition on ``λ`` (the paper). With
``augmented=False`` they target the λ-marginal hinge ``exp(-2C max(0, ζ))`` instead; because
``λ`` is redrawn from its exact conditional right after them and right before ``β``, this is a
valid partially collapsed Gibbs sampler of the same posterior.

With ``config.likelihood="logistic"`` (``P(y | f) = σ(y f)``, no ``λ``) blocks 2, 4 and 5 are
replaced by one joint HMC move of ``(β, Ω)`` (:func:`joint_beta_omega_step`), in coordinates
whitened by their prior, followed by the DP update; ``H`` targets the logistic likelihood.
With ``config.view_features`` every decision value adds ``γᵀz_n`` (``data.inputs``), and ``γ``
moves with ``(β, Ω)`` in that joint move.
With ``config.label_feedback=False`` (a cut model) block 1 draws each row of ``H`` exactly from
its Gaussian conditional given the views, without the labels, and blocks 2–5 see
:func:`classifier_latent`, each point's ``E[h_n | x_n]``, instead of ``H``.
``config.fixed_blocks`` holds named blocks at their initial values (a diagnostic).

Every block's output is checked: a non-finite value is not stored (the block keeps its old
value) and the first offending block is recorded;
:func:`~bayesmv.inference.m3lak_sampler.run.run_m3lak` raises
:class:`~bayesmv.inference.m3lak_sampler.state.M3LAKNumericalError` naming it. A DP stick-table
overflow raises :class:`~bayesmv.inference.m3lak_sampler.state.DPCapacityError`. All arithmetic
is float64.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from ...models.m3lak import (
    M3LAKConfig,
    decision_values,
    feature_map,
    logistic_log_likelihood,
    mirror_frequencies,
    noise_by_view,
)
from .. import _random
from .. import conditionals as cond
from ..dp import (
    DPState,
    component_counts,
    dp_collapsed_update,
    dp_slice_update,
    sample_niw_scale,
    sample_spectral_scale,
    signed_assignments,
    stick_weights,
    sticks_and_components,
)
from ..hmc import joint_hmc_step, rowwise_hmc_step
from ..latent_axes import AxisPrior, move_latent_axes
from .relocate import relocate_frequencies
from .state import M3LAKData, M3LAKLatent, SweepInfo

__all__ = [
    "decision_values",
    "initial_latent",
    "joint_beta_omega_step",
    "m3lak_sweep",
    "sweep_outputs",
]


def _niw_scale(config: M3LAKConfig, latent: M3LAKLatent):
    """The NIW scale ``ψ`` (``Ψ0 = ψ I``): the state's with ``niw_psi0_prior``, else ``niw_psi0``."""
    return config.niw_psi0 if config.niw_psi0_prior is None else latent.psi0


def _niw_prior(config: M3LAKConfig, dtype=jnp.float64, scale=None):
    """``(μ0, κ0, ν0, Ψ0)``, with ``Ψ0 = ψ I`` for ``ψ = scale`` (default ``niw_psi0``)."""
    m = config.n_latent
    mu0 = jnp.full((m,), config.niw_mu0, dtype)
    psi0 = (config.niw_psi0 if scale is None else scale) * jnp.eye(m, dtype=dtype)
    return mu0, config.niw_kappa0, config.nu0, psi0


def _axis_prior(config: M3LAKConfig, dtype=jnp.float64, scale=None) -> AxisPrior:
    if config.spectral_prior == "gaussian":
        return AxisPrior(config.a_r, config.b_r, "gaussian", sigma=config.omega_scale)
    mu0, kappa0, nu0, _ = _niw_prior(config, dtype)
    return AxisPrior(
        config.a_r, config.b_r, "dp", kappa0, nu0, config.niw_psi0 if scale is None else scale, mu0
    )


def _dp_update(config: M3LAKConfig):
    if config.dp_update == "slice":
        return dp_slice_update
    return partial(dp_collapsed_update, n_split_merge=config.dp_split_merge)


def _gaussian_dp_state(config: M3LAKConfig, dtype=jnp.float64):
    """The fixed ``"gaussian"`` spectrum as a one-component table (never updated)."""
    m, M = config.n_latent, config.n_frequencies
    s = config.omega_scale
    return DPState(
        nu=jnp.ones((1,), dtype),
        mu=jnp.zeros((1, m), dtype),
        prec_sqrt=(jnp.eye(m, dtype=dtype) / s)[None],
        logdet_prec=jnp.full((1,), -2.0 * m * np.log(s), dtype),
        z=jnp.zeros((M,), jnp.int32),
        overflow=jnp.zeros((), bool),
    )


# ----------------------------------------------------------------------------------------------
# potentials of the HMC blocks
# ----------------------------------------------------------------------------------------------
def _label_energy(decision, y, lam, config: M3LAKConfig):
    """-log of the label factor per sample, up to terms free of the decision value: the hinge
    (given λ when ``config.augmented``, else λ-marginal) or the logistic likelihood."""
    C, augmented = config.C, config.augmented
    if config.likelihood == "logistic":
        return -C * logistic_log_likelihood(decision, y)
    zeta = 1.0 - y * decision
    if augmented:
        return C * zeta + (C * zeta) ** 2 / (2.0 * lam)
    return 2.0 * C * jnp.maximum(0.0, zeta)


def _omega_prior_energy(omega, dp: DPState):
    diff = omega - dp.mu[dp.z]
    q = jnp.einsum("ji,jil->jl", diff, dp.prec_sqrt[dp.z])
    return 0.5 * jnp.sum(q**2)


def joint_beta_omega_step(
    key,
    H,
    omega,
    beta,
    v,
    dp: DPState,
    y,
    valid,
    step_size,
    n_steps,
    C,
    inputs=None,
    v_inputs=None,
    inputs_svd=None,
    view_span="full",
):
    """One HMC transition of ``(β, Ω)`` given everything else, under the logistic likelihood.

    Each label's log-likelihood is weighted by ``C``. Coordinates are whitened by the prior:
    ``b = √v β`` and ``e_j = G_jᵀ(ω_j - μ_{z_j})`` with ``Σ_{z_j}^{-1} = G_j G_jᵀ`` (the current DP
    component of ``ω_j``), so the prior part of the potential is ``½(‖b‖² + ‖e‖²)``; the map is
    linear with a constant Jacobian, so identity-mass HMC in ``(b, e)`` leaves
    ``p(β, Ω | H, v, DP, y)`` invariant. A rejection keeps the old values exactly. With
    ``inputs`` (``view_features``) the decision value is ``βᵀφ̃(h) + γᵀz`` and ``γ``, given as
    ``beta``'s last entries and whitened by ``√v_inputs``, moves with ``(β, Ω)``. With
    ``inputs_svd`` (fewer samples than inputs:
    :func:`~bayesmv.inference.m3lak_sampler.with_view_inputs`) only ``γ``'s coordinates in the
    inputs' row space move with them, and its part in the null space, which no label sees, is
    drawn from its prior ``N(0, v_inputs⁻¹ I)``: the same target, with leapfrog steps that cost
    ``N²`` instead of ``N·P`` in the inputs. With ``view_span="training"`` (the prior
    ``γ = A c``, which lies in the row space) that part is zero.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    H : jax.Array of shape (N, m)
        The shared latent ``H``.
    omega : jax.Array of shape (M, m)
        The current frequencies ``Ω``.
    beta : jax.Array of shape (2M + 1,) or (2M + 1 + D,)
        The current weights ``β``, followed by ``γ`` when ``inputs`` is given.
    v : float or jax.Array of shape ()
        The prior precision ``v`` of ``β``.
    dp : DPState
        The DP table: each frequency's component ``z_j``, its mean and precision.
    y : jax.Array of shape (N,)
        The labels ``y_n = ±1``.
    valid : jax.Array of shape (N,), dtype bool
        The rows whose label counts (False only on the padding rows of a sharded run).
    step_size : float or jax.Array of shape ()
        The leapfrog step size.
    n_steps : int
        The number of leapfrog steps.
    C : float
        The weight of each label's log-likelihood.
    inputs : jax.Array of shape (N, D) or None, default=None
        The classifier's inputs ``z`` from the views
        (:func:`~bayesmv.models.m3lak.view_inputs`); None: none.
    v_inputs : float or None, default=None
        The prior precision of ``γ`` (with ``inputs``).
    inputs_svd : (jax.Array of shape (N, r), jax.Array of shape (P, r)) or None, default=None
        ``(B, A)`` with ``inputs = B Aᵀ`` and orthonormal columns ``A``
        (:func:`~bayesmv.inference.m3lak_sampler.with_view_inputs`); None: HMC on the whole ``γ``.
    view_span : {"full", "training"}, default="full"
        ``M3LAKPriors.view_span``. With ``inputs_svd``: ``γ``'s part outside the row space of
        ``inputs`` is drawn from its prior (``"full"``: ``γ ~ N(0, v_inputs⁻¹ I)``), or is zero
        (``"training"``: ``γ = A c``, ``c ~ N(0, v_inputs⁻¹ I)``).

    Returns
    -------
    beta : jax.Array of shape (2M + 1,) or (2M + 1 + D,)
        The new ``β`` (followed by the new ``γ`` with ``inputs``).
    omega : jax.Array of shape (M, m)
        The new ``Ω``.
    accept_prob : jax.Array of shape ()
        The move's acceptance probability.
    diverging : jax.Array of shape (), dtype bool
        Whether the trajectory diverged (energy error above
        :data:`~bayesmv.inference.hmc.DIVERGENCE_THRESHOLD`).
    """
    M, m = omega.shape
    P, n_rff = beta.shape[0], 2 * M + 1
    if inputs_svd is not None:  # γ = A a + its null-space part; a ~ N(0, I/v_inputs) moves, as γ would
        basis, axes = inputs_svd
        key, key_null = jax.random.split(key)  # split for either view_span: the same other draws
        weights = jnp.concatenate([beta[:n_rff], beta[n_rff:] @ axes])
        weights, omega, accept_prob, diverging = joint_beta_omega_step(
            key, H, omega, weights, v, dp, y, valid, step_size, n_steps, C, basis, v_inputs
        )
        gamma = axes @ weights[n_rff:]
        if view_span == "full":
            xi = jax.random.normal(key_null, (P - n_rff,), beta.dtype) / jnp.sqrt(v_inputs)
            gamma = gamma + xi - axes @ (xi @ axes)
        return jnp.concatenate([weights[:n_rff], gamma]), omega, accept_prob, diverging
    mu = dp.mu[dp.z]
    G = dp.prec_sqrt[dp.z]
    eye = jnp.broadcast_to(jnp.eye(m, dtype=omega.dtype), dp.prec_sqrt.shape)
    to_omega = jnp.linalg.solve(jnp.swapaxes(dp.prec_sqrt, -1, -2), eye)[dp.z]  # G^{-T}, per component
    sqrt_v = jnp.sqrt(v)
    if inputs is not None:  # per coordinate: √v for β, √v_inputs for γ
        sqrt_v = jnp.concatenate([jnp.full(n_rff, sqrt_v), jnp.full(P - n_rff, jnp.sqrt(v_inputs))])

    def unpack(x):
        return x[:P] / sqrt_v, mu + jnp.einsum("jik,jk->ji", to_omega, x[P:].reshape(M, m))

    def potential(x):
        b, om = unpack(x)
        f = decision_values(H, om, b[:n_rff])
        if inputs is not None:
            f = f + inputs @ b[n_rff:]
        return 0.5 * jnp.sum(x**2) - C * jnp.sum(jnp.where(valid, logistic_log_likelihood(f, y), 0.0))

    x0 = jnp.concatenate([sqrt_v * beta, jnp.einsum("jki,jk->ji", G, omega - mu).ravel()])
    x, accept_prob, diverging = joint_hmc_step(key, x0, potential, step_size, n_steps)
    moved = jnp.any(x != x0)  # a rejection keeps the old values exactly (no round trip)
    beta_new, omega_new = unpack(x)
    return jnp.where(moved, beta_new, beta), jnp.where(moved, omega_new, omega), accept_prob, diverging


def _view_decision(latent: M3LAKLatent, data: M3LAKData):
    """The views' own part ``γᵀz_n`` of each decision value (``view_features``), else 0."""
    return 0.0 if latent.gamma is None else data.inputs @ latent.gamma


def _view_noise(latent: M3LAKLatent, data: M3LAKData):
    """Each view's noise precision: a scalar (``noise="view"``) or ``(D_i,)`` (``"feature"``)."""
    return noise_by_view(latent.tau, [X.shape[1] for X in data.Xs])


def classifier_latent(latent: M3LAKLatent, data: M3LAKData, config: M3LAKConfig):
    """The latents the classifier sees: ``H``, or with ``label_feedback=False`` each training
    point's ``E[h_n | x_n]`` given its observed views alone (the views' own latents integrated
    out: :func:`~bayesmv.inference.conditionals.latent_moments_given_views`), as the predictive
    sees a test point's."""
    if config.label_feedback:
        return latent.H
    return cond.latent_moments_given_views(
        latent.Ws, latent.Vs, _view_noise(latent, data), data.Xs, data.obs
    )[0]


def _gaussian_parts(latent: M3LAKLatent, data: M3LAKData, temper=1.0):
    """``Q_i = W_iᵀT_iW_i`` (V, m, m) and ``b_n = Σ_i obs W_iᵀT_i(x_n - V_i u_n)`` (N, m), ``T_i`` the
    view's noise precision (``τ_i I`` or ``diag(τ_i)``) times ``temper`` (the views' likelihood
    raised to that power)."""
    TWs = [cond.noise_weighted(temper * t, W) for t, W in zip(_view_noise(latent, data), latent.Ws)]
    Q = jnp.stack([W.T @ TW for W, TW in zip(latent.Ws, TWs)])
    b = 0.0
    for i, (X, U, TW, Vv) in enumerate(zip(data.Xs, latent.Us, TWs, latent.Vs)):
        b = b + data.obs[:, i : i + 1] * (X @ TW - U @ (Vv.T @ TW))
    return Q, b


def _join_noise(taus):
    """Inverse of :func:`~bayesmv.models.m3lak.noise_by_view`: ``(V,)`` or ``(Σ_i D_i,)``."""
    return jnp.concatenate([jnp.atleast_1d(t) for t in taus])


# ----------------------------------------------------------------------------------------------
# the sweep
# ----------------------------------------------------------------------------------------------
def _guard(new, old, code, flag):
    ok = jnp.all(
        jnp.array(
            [
                jnp.all(jnp.isfinite(leaf))
                for leaf in jax.tree.leaves(new)
                if jnp.issubdtype(leaf.dtype, jnp.floating)
            ]
        )
    )
    value = jax.tree.map(lambda a, b: jnp.where(ok, a, b), new, old)
    return value, jnp.where((flag == 0) & ~ok, code, flag)


def _update_h(key, latent: M3LAKLatent, data: M3LAKData, config: M3LAKConfig, valid, step_size, flag, temper):
    """Block 1: every row of ``H`` by its own HMC (eq. 4), mass matrix the full-data Gaussian
    precision, the views' likelihood raised to ``temper``; with ``label_feedback=False`` each row
    drawn exactly from its Gaussian conditional given the views alone. Returns
    ``(latent, accept_prob (N,), divergent (N,), flag)``."""
    m = latent.H.shape[1]
    Q, b = _gaussian_parts(latent, data, temper)
    obsf = data.obs.astype(latent.H.dtype)
    if not config.label_feedback:  # row n: N(P_n⁻¹ b_n, P_n⁻¹), P_n = I + Σ_i o_ni Q_i
        precision = jnp.eye(m, dtype=latent.H.dtype) + jnp.einsum("nv,vlk->nlk", obsf, Q)
        keys = jax.random.split(key, latent.H.shape[0])
        H = jax.vmap(cond.gaussian_from_precision)(keys, precision, b)
        H, flag = _guard(H, latent.H, 1, flag)
        ones = jnp.ones(H.shape[0], H.dtype)
        return latent._replace(H=H), ones, jnp.zeros(H.shape[0], bool), flag
    mass = jnp.eye(m, dtype=latent.H.dtype) + jnp.sum(Q, 0)
    mass_chol = jnp.linalg.cholesky(mass)
    offset = _view_decision(latent, data)

    def pot_H(Hc):
        quad = jnp.einsum("nv,nvk,nk->n", obsf, jnp.einsum("nl,vlk->nvk", Hc, Q), Hc)  # Σ_i o_ni hᵀQ_i h
        gauss = 0.5 * jnp.sum(Hc**2, -1) + 0.5 * quad - jnp.sum(Hc * b, -1)
        f = decision_values(Hc, latent.omega, latent.beta) + offset
        return gauss + jnp.where(valid, _label_energy(f, data.y, latent.lam, config), 0.0)

    H, acc, div = rowwise_hmc_step(key, latent.H, pot_H, step_size, config.hmc_steps_h, mass_chol=mass_chol)
    H, flag = _guard(H, latent.H, 1, flag)
    return latent._replace(H=H), acc, div, flag


def _tempered_noise_prior(config: M3LAKConfig, temper, n_entries):
    """The Gamma ``(shape, rate)`` under which ``τ' = temper·τ`` with ``[W V]`` integrated out has
    the tempered collapsed density of ``τ``: ``p(X | ·, τ)^t = τ^{(t−1)n/2} · N(X; ·, (tτ)⁻¹) ·
    const``, so in ``τ'`` the prior ``Γ(a_τ, b_τ)`` becomes ``Γ(a_τ + (t − 1)n/2, b_τ/t)``, ``n`` the
    view's observed entries (an improper-looking shape below 0 is fine: the likelihood's
    ``τ'^{n/2}`` makes the product proper)."""
    return config.a_tau + 0.5 * (temper - 1.0) * n_entries, config.b_tau / temper


def _update_lvm(keys, latent: M3LAKLatent, data: M3LAKData, config: M3LAKConfig, flag, temper):
    """Blocks 6–9, view by view: ``U``, ``[W V]``, ``r``, ``τ`` (or, with
    ``precision_update="collapsed"``, ``U`` then ``(r, τ)`` with ``[W V]`` integrated out, then
    ``[W V]``; with ``noise="feature"`` as well, ``U``, then ``τ`` with ``[W V]`` integrated out,
    ``[W V]``, ``r``), each view's likelihood raised to ``temper``: the blocks given ``τ`` see ``temper·τ``,
    and ``τ`` is drawn from its tempered conditional (:func:`_tempered_noise_prior`). ``keys``: four
    keys (``U``, ``[W V]``, ``r``, ``τ``). Returns ``(latent, flag)``."""
    nV = len(data.Xs)
    kU, kWV, kr, kt = (jax.random.split(k, nV) for k in keys)
    kUV = jax.random.split(jax.random.fold_in(keys[0], 1), nV)
    Us, Ws, Vs, rs, taus = [], [], [], [], []
    collapsed = config.precision_update == "collapsed"
    per_feature = config.noise == "feature"
    view_tau = _view_noise(latent, data)
    for i in range(nV):
        X, o = data.Xs[i], data.obs[:, i]
        W, Vv, tau_i = latent.Ws[i], latent.Vs[i], temper * view_tau[i]
        if collapsed:
            # U | V (exact, row by row) aligns U with the residual the current V explains; then
            # an elliptical slice step with V integrated out moves U with V; [W V] below draws V
            # anew (a partially collapsed Gibbs order: every marginalised block is redrawn
            # before it is conditioned on).
            U = cond.sample_u_conditional(kUV[i], X, latent.H, W, Vv, tau_i, o)
            U = cond.sample_u_collapsed(kU[i], X, latent.H, W, U, tau_i, config.eta, o)
        else:
            U = cond.sample_u_conditional(kU[i], X, latent.H, W, Vv, tau_i, o)
        U, flag = _guard(U, latent.Us[i], 6, flag)
        r_i = latent.r[i]
        if collapsed and per_feature:  # (τ, [W V]) jointly: τ with [W V] integrated out
            a_tau, b_tau = _tempered_noise_prior(config, temper, jnp.sum(o))
            new = cond.sample_feature_noise_collapsed(
                kt[i], X, latent.H, U, r_i, tau_i, config.eta, o, a_tau, b_tau
            )
            tau_i, flag = _guard(new, tau_i, 9, flag)
        elif collapsed:  # (r, τ, [W V]) jointly: r and τ with [W V] integrated out
            a_tau, b_tau = _tempered_noise_prior(config, temper, jnp.sum(o) * X.shape[1])
            new = cond.sample_precisions_collapsed(
                kt[i], X, latent.H, U, r_i, tau_i, config.eta, o, config.a_r, config.b_r, a_tau, b_tau
            )
            (r_i, tau_i), flag = _guard(new, (r_i, tau_i), 9, flag)
        W_new, V_new = cond.sample_wv_conditional(kWV[i], X, latent.H, U, r_i, config.eta, tau_i, o)
        (W, Vv), flag = _guard((W_new, V_new), (W, Vv), 7, flag)
        if not collapsed or per_feature:
            new = cond.sample_r_conditional(kr[i], W, config.a_r, config.b_r)
            r_i, flag = _guard(new, r_i, 8, flag)
        if not collapsed:
            new = cond.sample_tau_conditional(
                kt[i], X, latent.H, U, W, Vv, o, config.a_tau, config.b_tau, per_feature, temper
            )
            tau_i, flag = _guard(temper * new, tau_i, 9, flag)
        Us.append(U), Ws.append(W), Vs.append(Vv), rs.append(r_i), taus.append(tau_i / temper)
    latent = latent._replace(Us=tuple(Us), Ws=tuple(Ws), Vs=tuple(Vs), r=jnp.stack(rs), tau=_join_noise(taus))
    return latent, flag


def _update_kernel(
    key_omega,
    key_dp,
    latent: M3LAKLatent,
    data: M3LAKData,
    config: M3LAKConfig,
    valid,
    step_size_omega,
    flag,
    learn_scale=True,
):
    """Blocks 2–3: Ω (with β under the logistic likelihood), then the DP spectrum's scale,
    assignments, sticks and components; a learned NIW scale ``ψ`` stays where it is while
    ``learn_scale`` is False. Returns ``(latent, acceptance of Ω, diverging, flag)``."""
    fixed = config.fixed_blocks
    logistic = config.likelihood == "logistic"
    acc_O = jnp.ones((), latent.H.dtype)
    div_O = jnp.zeros((), bool)

    # 2. Ω: joint HMC (hinge), or (β, Ω) jointly (logistic)
    if "omega" not in fixed and logistic:
        with_inputs = latent.gamma is not None
        weights = jnp.concatenate([latent.beta, latent.gamma]) if with_inputs else latent.beta
        weights, omega, acc_O, div_O = joint_beta_omega_step(
            key_omega,
            latent.H,
            latent.omega,
            weights,
            latent.v,
            latent.dp,
            data.y,
            valid,
            step_size_omega,
            config.hmc_steps_joint,
            config.C,
            inputs=data.inputs,
            v_inputs=latent.v_view,
            inputs_svd=data.inputs_svd,
            view_span=config.view_span,
        )
        n_rff = latent.beta.shape[0]
        beta, gamma = (weights[:n_rff], weights[n_rff:]) if with_inputs else (weights, None)
        old = (latent.beta, latent.gamma, latent.omega)
        (beta, gamma, omega), flag = _guard((beta, gamma, omega), old, 11, flag)
        latent = latent._replace(beta=beta, gamma=gamma, omega=omega)
    elif "omega" not in fixed:

        def pot_omega(om):
            f = decision_values(latent.H, om, latent.beta)
            label = jnp.where(valid, _label_energy(f, data.y, latent.lam, config), 0.0)
            return _omega_prior_energy(om, latent.dp) + jnp.sum(label)

        omega, acc_O, div_O = joint_hmc_step(
            key_omega, latent.omega, pot_omega, step_size_omega, config.hmc_steps_omega
        )
        omega, flag = _guard(omega, latent.omega, 2, flag)
        latent = latent._replace(omega=omega)

    # 3. with niw_psi0_prior, the NIW scale ψ | z, Ω first (a slice step with the components
    # integrated out); with spectral_scale_moves, (Ω, ψ) along (e^t Ω, e^{2t} ψ), the components
    # integrated out too; then the DP assignments, sticks and components given them (both DP
    # updates redraw the components before anything conditions on them)
    if config.spectral_prior == "dp" and "dp" not in fixed:
        mu0, kappa0, nu0, _ = _niw_prior(config, latent.omega.dtype)
        if config.niw_psi0_prior is not None:
            psi = sample_niw_scale(
                jax.random.fold_in(key_dp, 1),
                latent.psi0,
                latent.dp.z,
                latent.omega,
                latent.dp.nu.shape[0],
                mu0,
                kappa0,
                nu0,
                config.niw_psi0_prior,
            )
            psi = jnp.where(learn_scale, psi, latent.psi0)
            psi, flag = _guard(psi, latent.psi0, 13, flag)
            latent = latent._replace(psi0=psi)
        if config.spectral_scale_moves and "omega" not in fixed:
            offset = _view_decision(latent, data)

            def log_likelihood(om):
                f = decision_values(latent.H, om, latent.beta) + offset
                return -jnp.sum(jnp.where(valid, _label_energy(f, data.y, latent.lam, config), 0.0))

            psi = jnp.asarray(_niw_scale(config, latent), latent.omega.dtype)

            def scale_move(prior):  # prior None: ψ held, Ω alone scales
                return sample_spectral_scale(
                    jax.random.fold_in(key_dp, 2),
                    latent.omega,
                    psi,
                    latent.dp.z,
                    latent.dp.nu.shape[0],
                    mu0,
                    kappa0,
                    nu0,
                    prior,
                    log_likelihood,
                )

            if learn_scale is True or config.niw_psi0_prior is None:
                omega, psi_new = scale_move(config.niw_psi0_prior)
            else:
                omega, psi_new = jax.lax.cond(
                    learn_scale, lambda: scale_move(config.niw_psi0_prior), lambda: scale_move(None)
                )
            (omega, psi), flag = _guard((omega, psi_new), (latent.omega, psi), 14, flag)
            latent = latent._replace(omega=omega)
            if config.niw_psi0_prior is not None:
                latent = latent._replace(psi0=psi)
        _, _, _, psi0 = _niw_prior(config, latent.omega.dtype, _niw_scale(config, latent))
        if config.dp_sign_moves and "omega" not in fixed:
            key_sign, Kc = jax.random.fold_in(key_dp, 4), latent.dp.nu.shape[0]
            z, signs, overflow = signed_assignments(
                key_sign, latent.dp.z, latent.omega, Kc, config.alpha, mu0, kappa0, nu0, psi0
            )
            omega, beta = mirror_frequencies(latent.omega, latent.beta, signs)
            dp = latent.dp._replace(z=z, overflow=latent.dp.overflow | overflow)
            latent = latent._replace(omega=omega, beta=beta, dp=dp)
        dp = _dp_update(config)(key_dp, latent.dp, latent.omega, config.alpha, mu0, kappa0, nu0, psi0)
        dp, flag = _guard(dp, latent.dp, 3, flag)
        latent = latent._replace(dp=dp)
        if config.dp_relocation_moves and "omega" not in fixed:
            key_move = jax.random.fold_in(key_dp, 3)
            omega, beta, z, _ = relocate_frequencies(
                key_move, latent.H, latent.omega, latent.beta, latent.v, dp, data.y, valid, config.C
            )
            (omega, beta), flag = _guard((omega, beta), (latent.omega, latent.beta), 15, flag)
            latent = latent._replace(omega=omega, beta=beta, dp=dp._replace(z=z))

    return latent, acc_O, div_O, flag


def m3lak_sweep(
    key,
    latent: M3LAKLatent,
    data: M3LAKData,
    config: M3LAKConfig,
    step_size_H,
    step_size_omega,
    flag=0,
    temper=1.0,
    learn_scale=True,
):
    """One full sweep of the M3LAK sampler, its blocks in the order of the module docstring.

    The views' likelihood is raised to ``temper`` (1: the posterior; below 1 only in a tempered
    warm-up), and the learned NIW scale ``ψ`` is held while ``learn_scale`` is False (only in a
    warm-up with ``niw_psi0_warmup_hold``). Pure and jit-able.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    latent : M3LAKLatent
        The chain's current latent variables.
    data : M3LAKData
        The prepared data (:func:`~bayesmv.inference.m3lak_sampler.state.prepare_data`).
    config : M3LAKConfig
        The model and sampler settings.
    step_size_H : float or jax.Array of shape ()
        The leapfrog step size of ``H``'s per-row HMC.
    step_size_omega : float or jax.Array of shape ()
        The leapfrog step size of the ``Ω`` (or joint ``(β, Ω)``) HMC move.
    flag : int, default=0
        The code of the first block that produced non-finite values so far (0: none); a block's
        code is recorded only while it is 0.
    temper : float, default=1.0
        The power the views' likelihood is raised to.
    learn_scale : bool, default=True
        Whether the learned NIW scale ``ψ`` moves in this sweep.

    Returns
    -------
    latent : M3LAKLatent
        The new latent variables.
    info : SweepInfo
        The sweep's acceptance probabilities, divergences and non-finite flag
        (:class:`~bayesmv.inference.m3lak_sampler.state.SweepInfo`).
    """
    C = config.C
    keys = jax.random.split(_random.fast_key(key), 10)
    flag = jnp.asarray(flag, jnp.int32)
    valid = data.y != 0  # False only on the padding rows of a sharded run (see shard_m3lak_data)

    fixed = config.fixed_blocks
    logistic = config.likelihood == "logistic"
    acc_H = jnp.ones((), latent.H.dtype)
    div_H = jnp.zeros((), bool)

    # 1. H: per-row HMC, mass matrix = the full-data Gaussian precision. With h_lvm_passes = P > 1,
    # H and the latent variable model (6–9) come first, P times: H and [W V] hold each other, and
    # τ moves only as fast as they do (one loop, so that each block is compiled once)
    if config.h_lvm_passes == 1 and "H" not in fixed:
        latent, acc_H, div_H, flag = _update_h(
            keys[0], latent, data, config, valid, step_size_H, flag, temper
        )
    elif config.h_lvm_passes > 1:

        def one_pass(p, carry):
            latent, flag, acc_H, div_H = carry
            if "H" not in fixed:
                k = jax.random.fold_in(keys[0], p)
                latent, acc, div, flag = _update_h(k, latent, data, config, valid, step_size_H, flag, temper)
                acc_H, div_H = acc_H + acc, div_H | div
            if "lvm" not in fixed:
                ks = [jax.random.fold_in(k, p) for k in keys[5:9]]
                latent, flag = _update_lvm(ks, latent, data, config, flag, temper)
            return latent, flag, acc_H, div_H

        if "H" not in fixed:  # the acceptance per row, summed over the passes
            acc_H = jnp.zeros(latent.H.shape[0], latent.H.dtype)
            div_H = jnp.zeros(latent.H.shape[0], bool)
        carry = jax.lax.fori_loop(0, config.h_lvm_passes, one_pass, (latent, flag, acc_H, div_H))
        latent, flag, acc_H, div_H = carry
        if "H" not in fixed:  # the mean acceptance over the passes
            acc_H = acc_H / config.h_lvm_passes

    # 2–3. Ω (and β, logistic) and the DP spectrum; with kernel_passes = K > 1, K times (one
    # loop, each pass with its own keys): the DP components set Ω's whitening, and Ω's scale
    # moves only as fast as the two alternate
    H = latent.H  # with label_feedback=False the classifier's blocks see E[H | X] instead
    latent = latent._replace(H=classifier_latent(latent, data, config))
    if config.kernel_passes == 1:
        latent, acc_O, div_O, flag = _update_kernel(
            keys[1], keys[2], latent, data, config, valid, step_size_omega, flag, learn_scale
        )
    else:

        def kernel_pass(p, carry):
            latent, flag, acc_O, div_O = carry
            k_omega, k_dp = jax.random.fold_in(keys[1], p), jax.random.fold_in(keys[2], p)
            latent, acc, div, flag = _update_kernel(
                k_omega, k_dp, latent, data, config, valid, step_size_omega, flag, learn_scale
            )
            return latent, flag, acc_O + acc, div_O | div

        carry = (latent, flag, jnp.zeros((), latent.H.dtype), jnp.zeros((), bool))
        latent, flag, acc_O, div_O = jax.lax.fori_loop(0, config.kernel_passes, kernel_pass, carry)
        acc_O = acc_O / config.kernel_passes

    # 4–5. λ then β (hinge only)
    if not logistic and "lambda_beta" not in fixed:
        feats = feature_map(latent.H, latent.omega)
        lam = cond.sample_lambda_conditional(keys[3], feats @ latent.beta, data.y, C)
        lam, flag = _guard(lam, latent.lam, 4, flag)
        beta = cond.sample_beta_conditional(keys[4], feats * valid[:, None], data.y, lam, C, latent.v)
        beta, flag = _guard(beta, latent.beta, 5, flag)
        latent = latent._replace(lam=lam, beta=beta)
    latent = latent._replace(H=H)

    # 6–9. latent variable model, view by view (V is small and static)
    if config.h_lvm_passes == 1 and "lvm" not in fixed:
        latent, flag = _update_lvm(keys[5:9], latent, data, config, flag, temper)

    # 10. v
    if config.v_prior is not None:
        v = cond.sample_v_conditional(keys[9], latent.beta, *config.v_prior)
        v, flag = _guard(v, latent.v, 10, flag)
        latent = latent._replace(v=v)

    # 10'. v_view: the prior precision of the view weights γ
    if config.v_view_prior is not None and latent.gamma is not None:
        # view_span="training": γ = A c, and c (as many coordinates as A has columns) has the prior
        spanned = config.view_span == "training" and data.inputs_svd is not None
        coordinates = latent.gamma @ data.inputs_svd[1] if spanned else latent.gamma
        v_view = cond.sample_v_conditional(jax.random.fold_in(keys[9], 2), coordinates, *config.v_view_prior)
        v_view, flag = _guard(v_view, latent.v_view, 16, flag)
        latent = latent._replace(v_view=v_view)

    # 11. latent-axis scale and shear (they move H, Ω, the DP components and the LVM: none may be fixed)
    if config.latent_axis_moves and not {"H", "omega", "dp", "lvm"} & set(fixed):
        new = move_latent_axes(
            jax.random.fold_in(keys[9], 1),
            latent.H,
            latent.Ws,
            latent.r,
            latent.omega,
            latent.dp,
            _axis_prior(config, latent.H.dtype, _niw_scale(config, latent)),
            valid,
        )
        old = (latent.H, latent.Ws, latent.r, latent.omega, latent.dp)
        (H, Ws, r, omega, dp), flag = _guard(new, old, 12, flag)
        latent = latent._replace(H=H, Ws=Ws, r=r, omega=omega, dp=dp)

    acc_H = jnp.sum(jnp.where(valid, acc_H, 0.0)) / jnp.sum(valid)
    div_H = jnp.any(div_H & valid)
    return latent, SweepInfo(acc_H, acc_O, div_H | div_O, flag, div_H, div_O)


def sweep_outputs(latent: M3LAKLatent, data: M3LAKData, config: M3LAKConfig):
    """The stored quantities of one draw (the ``run_m3lak`` contract).

    ``beta``, ``omega``, ``tau``, ``r``, ``decision`` (the decision values) and each view's
    ``W_i`` and ``V_i``; with the DP spectrum ``dp_weights``, ``dp_assignments`` and
    ``dp_n_active`` (the components in use); ``v`` with ``v_prior``; ``niw_psi0`` with
    ``niw_psi0_prior`` and the DP spectrum; ``gamma`` with ``view_features``; ``v_view`` with
    ``v_view_prior``.

    Parameters
    ----------
    latent : M3LAKLatent
        The chain's latent variables.
    data : M3LAKData
        The prepared data (the views, for the decision values with ``view_features``).
    config : M3LAKConfig
        The settings, which decide the optional outputs.

    Returns
    -------
    outputs : dict of str to jax.Array
        The stored quantities by name.
    """
    out = {
        "beta": latent.beta,
        "omega": latent.omega,
        "tau": latent.tau,
        "r": latent.r,
        "decision": decision_values(classifier_latent(latent, data, config), latent.omega, latent.beta)
        + _view_decision(latent, data),
    }
    if latent.gamma is not None:
        out["gamma"] = latent.gamma
    if config.v_view_prior is not None:
        out["v_view"] = latent.v_view
    for i, (W, Vv) in enumerate(zip(latent.Ws, latent.Vs)):
        out[f"W_{i}"] = W
        out[f"V_{i}"] = Vv
    if config.spectral_prior == "dp":
        weights, _ = stick_weights(latent.dp.nu)
        out["dp_weights"] = weights
        out["dp_assignments"] = latent.dp.z
        out["dp_n_active"] = jnp.sum(component_counts(latent.dp) > 0)
    if config.v_prior is not None:
        out["v"] = latent.v
    if config.niw_psi0_prior is not None and config.spectral_prior == "dp":
        out["niw_psi0"] = latent.psi0
    return out


# ----------------------------------------------------------------------------------------------
# initialisation
# ----------------------------------------------------------------------------------------------
def initial_latent(key, data: M3LAKData, config: M3LAKConfig) -> M3LAKLatent:
    """The starting point of a chain.

    A PCA start for ``H`` (plus noise, so chains differ), conjugate updates of ``[W V]``, ``τ``,
    ``r`` from it, ``ω ~ N(0, I/m)``-type start, a DP table with every ``ω`` in one component (its
    sticks and components drawn given that; the first sweep's DP update reassigns them), and
    ``β`` from its conditional with ``λ = 1``.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    data : M3LAKData
        The prepared data (:func:`~bayesmv.inference.m3lak_sampler.state.prepare_data`).
    config : M3LAKConfig
        The model and sampler settings.

    Returns
    -------
    latent : M3LAKLatent
        The chain's initial latent variables, in float64.

    Raises
    ------
    ValueError
        With ``view_features``, if ``data.inputs`` is None.
    """
    m, K, M = config.n_latent, config.n_view_latent, config.n_frequencies
    dtype = jnp.float64
    N = data.y.shape[0]
    nV = len(data.Xs)
    keys = jax.random.split(_random.fast_key(key), 6)
    Xcat = jnp.concatenate(data.Xs, axis=1)
    Dtot = Xcat.shape[1]
    k = min(m, Dtot)
    valid = data.y != 0
    evals, evecs = jnp.linalg.eigh(Xcat.T @ Xcat / jnp.sum(valid))
    top = evecs[:, ::-1][:, :k]
    scale = jnp.sqrt(jnp.maximum(evals[::-1][:k], 1e-12))
    H = Xcat @ top / scale
    if k < m:
        H = jnp.concatenate([H, jax.random.normal(keys[0], (N, m - k), dtype)], axis=1)
    H = H + 0.3 * jax.random.normal(keys[1], H.shape, dtype)
    Us = tuple(jnp.zeros((N, K), dtype) for _ in range(nV))
    r = jnp.ones((nV, m), dtype)
    Ws, Vs, taus, rs = [], [], [], []
    kk = jax.random.split(keys[2], 3 * nV)
    for i in range(nV):
        W, Vv = cond.sample_wv_conditional(
            kk[3 * i], data.Xs[i], H, Us[i], r[i], config.eta, 1.0, data.obs[:, i]
        )
        t = cond.sample_tau_conditional(
            kk[3 * i + 1],
            data.Xs[i],
            H,
            Us[i],
            W,
            Vv,
            data.obs[:, i],
            config.a_tau,
            config.b_tau,
            config.noise == "feature",
        )
        Ws.append(W), Vs.append(Vv), taus.append(t)
        rs.append(cond.sample_r_conditional(kk[3 * i + 2], W, config.a_r, config.b_r))
    psi = None  # the NIW scale, a latent only under niw_psi0_prior
    if config.spectral_prior == "dp":
        omega = jax.random.normal(keys[3], (M, m), dtype) / np.sqrt(m)
        Kc = config.dp_capacity
        if config.niw_psi0_prior is not None:
            psi = jnp.asarray(config.niw_psi0_prior[0] / config.niw_psi0_prior[1], dtype)
        mu0, kappa0, nu0, psi0 = _niw_prior(config, dtype, psi)
        z = jnp.zeros((M,), jnp.int32)  # one component holds every ω; the first sweep splits it
        nu, mu, G, logdet = sticks_and_components(keys[4], z, omega, Kc, config.alpha, mu0, kappa0, nu0, psi0)
        dp = DPState(nu, mu, G, logdet, z, jnp.zeros((), bool))
    else:
        omega = jax.random.normal(keys[3], (M, m), dtype) * config.omega_scale
        dp = _gaussian_dp_state(config, dtype)
    v = jnp.asarray(config.v if config.v_prior is None else config.v_prior[0] / config.v_prior[1], dtype)
    lam = jnp.ones((N,), dtype)
    feats = feature_map(H, omega) * valid[:, None]
    beta = cond.sample_beta_conditional(keys[5], feats, data.y, lam, config.C, v)
    gamma = v_view = None
    if config.view_features is not None:
        if data.inputs is None:
            raise ValueError(
                "view_features: the data must hold the classifier's inputs, "
                "data._replace(inputs=view_inputs(data.Xs, data.obs, config))"
            )
        gamma = jnp.zeros(data.inputs.shape[1], dtype)
        prior = config.v_view_prior
        v_view = jnp.asarray(config.v_view if prior is None else prior[0] / prior[1], dtype)
    return M3LAKLatent(
        H,
        Us,
        tuple(Ws),
        tuple(Vs),
        _join_noise(taus),
        jnp.stack(rs),
        omega,
        beta,
        lam,
        v,
        dp,
        psi,
        gamma,
        v_view,
    )


# Eager execution of initial_latent costs ~3x more CPU than compiling it, and the jitted
# version is cached across fits with the same shapes and config.
_initial_latent_jit = jax.jit(initial_latent, static_argnums=2)
