"""The M3LAK hybrid Gibbs/HMC sampler (paper Algorithm 1, DESIGN §5) as a NumPyro
:class:`~numpyro.infer.mcmc.MCMCKernel`, and the :func:`run_m3lak` driver.

One sweep (:func:`m3lak_sweep`, pure and jit-able) updates, in order:

1. ``H`` — per-row HMC (rows are conditionally independent; one accept test per row; shared
   mass matrix ``I + Σ_i τ_i W_iᵀW_i`` = the Gaussian part's precision; eq. 4),
2. ``Ω`` — joint HMC (eq. 3) under the current DP component of each ω_j,
3. DP assignments, sticks and components — only for ``spectral_prior="dp"``: collapsed
   assignments with the NIW predictive (``config.dp_update="collapsed"``, Neal 2000) or the
   paper's slice sampler (``"slice"``, eqs. 5–9),
4. ``λ`` (eq. 2),
5. ``β`` (eq. 1),
6. ``U`` (eq. 10),
7. ``[W_i V_i]`` jointly per view (DESIGN §5),
8. ``r`` (eq. 13, corrected),
9. ``τ`` (eq. 14),
10. ``v`` (if ``v_prior``),
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
``config.fixed_blocks`` holds named blocks at their initial values (a diagnostic).

Every block's output is checked: a non-finite value is not stored (the block keeps its old
value) and the first offending block is recorded; :func:`run_m3lak` raises
:class:`M3LAKNumericalError` naming it. A DP stick-table overflow raises
:class:`DPCapacityError`. All arithmetic is float64.
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from numpyro.infer import MCMC
from numpyro.infer.hmc_util import dual_averaging
from numpyro.infer.mcmc import MCMCKernel

from ..datasets._validation import SEED_DEPRECATED, check_random_seed
from ..models.m3lak import M3LAKConfig, decision_values, feature_map, logistic_log_likelihood, noise_by_view
from . import _random
from . import conditionals as cond
from ._threads import single_threaded_blas
from .dp import DPState, component_counts, dp_collapsed_update, dp_slice_update, sample_niw, stick_weights
from .hmc import joint_hmc_step, rowwise_hmc_step
from .latent_axes import AxisPrior, move_latent_axes

__all__ = [
    "BLOCK_NAMES",
    "DPCapacityError",
    "M3LAKData",
    "M3LAKKernel",
    "M3LAKLatent",
    "M3LAKNumericalError",
    "M3LAKPosterior",
    "M3LAKState",
    "decision_values",
    "initial_latent",
    "joint_beta_omega_step",
    "m3lak_sweep",
    "prepare_data",
    "run_m3lak",
    "sweep_outputs",
]

#: The sampler blocks by the code ``M3LAKState.nonfinite`` records.
BLOCK_NAMES = {
    1: "H (per-row HMC)",
    2: "omega (HMC)",
    3: "DP update",
    4: "lambda",
    5: "beta",
    6: "U",
    7: "[W V]",
    8: "r",
    9: "tau",
    10: "v",
    11: "(beta, omega) joint HMC",
    12: "latent-axis scale and shear",
}


class M3LAKNumericalError(FloatingPointError):
    """A sampler block produced a non-finite value."""


class DPCapacityError(RuntimeError):
    """The DP sampler needed more components than ``dp_capacity``."""


class M3LAKData(NamedTuple):
    Xs: tuple  # per view (N, D_i), missing rows zero-filled
    obs: jnp.ndarray  # (N, V) bool
    y: jnp.ndarray  # (N,) ±1 float


class M3LAKLatent(NamedTuple):
    H: jnp.ndarray
    Us: tuple
    Ws: tuple
    Vs: tuple
    tau: jnp.ndarray
    r: jnp.ndarray
    omega: jnp.ndarray
    beta: jnp.ndarray
    lam: jnp.ndarray
    v: jnp.ndarray
    dp: DPState


class M3LAKState(NamedTuple):
    i: jnp.ndarray
    outputs: dict
    latent: M3LAKLatent
    da_H: tuple
    da_omega: tuple
    step_size_H: jnp.ndarray
    step_size_omega: jnp.ndarray
    accept_prob_H: jnp.ndarray
    accept_prob_omega: jnp.ndarray
    diverging: jnp.ndarray
    nonfinite: jnp.ndarray  # int: 0 or the code of the first block that produced non-finite values
    rng_key: jnp.ndarray


class M3LAKPosterior(NamedTuple):
    """Draws grouped by chain ``(chain, draw, ...)``, the per-draw sampler statistics, the last
    :class:`M3LAKState` (leading chain axis when ``num_chains > 1``) and ``chain_states``, the
    same states in the form :func:`run_m3lak`'s ``init_state`` takes to continue the chains."""

    samples: dict
    extra_stats: dict
    last_state: M3LAKState
    chain_states: object = None


class _RunSettings(NamedTuple):  # the static part of one run (hashable: a jit cache key)
    config: M3LAKConfig
    mesh: object
    n_valid: int | None
    num_warmup: int
    num_samples: int
    thinning: int


# ----------------------------------------------------------------------------------------------
# data and priors
# ----------------------------------------------------------------------------------------------
def prepare_data(Xs, y) -> M3LAKData:
    """Float64 views with all-NaN rows = missing (zero-filled + mask), labels ±1."""
    arrs, obs, y = _prepare_arrays(Xs, y)
    return M3LAKData(tuple(jnp.asarray(X) for X in arrs), jnp.asarray(obs), jnp.asarray(y))


def _prepare_arrays(Xs, y):
    """:func:`prepare_data` on the host: ``(list of (N, D_i) arrays, (N, V) mask, (N,) y)``."""
    if not isinstance(Xs, (list, tuple)) or len(Xs) == 0:
        raise ValueError("Xs must be a non-empty list of (N, D_i) arrays")
    arrs, masks = [], []
    N = None
    for i, X in enumerate(Xs):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"Xs[{i}] must be 2-D (N, D_i); got shape {X.shape}")
        if N is None:
            N = X.shape[0]
        elif X.shape[0] != N:
            raise ValueError(f"Xs[{i}] has {X.shape[0]} rows; Xs[0] has {N}")
        nan = np.isnan(X)
        missing = nan.all(axis=1)
        if np.any(nan.any(axis=1) & ~missing):
            raise ValueError(f"Xs[{i}] has partially-NaN rows; a missing view must be an all-NaN row")
        if not np.all(np.isfinite(X[~missing])):
            raise ValueError(f"Xs[{i}] contains inf")
        arrs.append(np.where(missing[:, None], 0.0, X))
        masks.append(~missing)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if y.shape[0] != N:
        raise ValueError(f"y has {y.shape[0]} entries; Xs have {N} rows")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise ValueError("y must contain only -1 and +1")
    return arrs, np.stack(masks, 1), y


def shard_m3lak_data(data_arrays, mesh) -> tuple:
    """Place the per-sample arrays of :func:`_prepare_arrays` on ``mesh``, sharded along ``N``.

    ``N`` is padded to a multiple of the mesh size with rows that carry no information: every
    view missing (no ``x``/``u`` likelihood terms, so no contribution to ``[W V]``, ``τ``) and
    ``y = 0``, which :func:`m3lak_sweep` masks out of ``β``, ``Ω``, the step-size statistics and
    the initialisation. Returns ``(M3LAKData, N)``."""
    from ..distributed import shard_rows

    arrs, obs, y = data_arrays
    Xs = tuple(shard_rows(X, mesh) for X in arrs)
    return M3LAKData(Xs, shard_rows(obs, mesh, fill=False), shard_rows(y, mesh, fill=0.0)), len(y)


def _niw_prior(config: M3LAKConfig, dtype=jnp.float64):
    m = config.n_latent
    mu0 = jnp.full((m,), config.niw_mu0, dtype)
    psi0 = config.niw_psi0 * jnp.eye(m, dtype=dtype)
    return mu0, config.niw_kappa0, config.nu0, psi0


def _axis_prior(config: M3LAKConfig, dtype=jnp.float64) -> AxisPrior:
    if config.spectral_prior == "gaussian":
        return AxisPrior(config.a_r, config.b_r, "gaussian", sigma=config.omega_scale)
    mu0, kappa0, nu0, _ = _niw_prior(config, dtype)
    return AxisPrior(config.a_r, config.b_r, "dp", kappa0, nu0, config.niw_psi0, mu0)


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
    if config.likelihood == "logistic":
        return -logistic_log_likelihood(decision, y)
    C, augmented = config.C, config.augmented
    zeta = 1.0 - y * decision
    if augmented:
        return C * zeta + (C * zeta) ** 2 / (2.0 * lam)
    return 2.0 * C * jnp.maximum(0.0, zeta)


def _omega_prior_energy(omega, dp: DPState):
    diff = omega - dp.mu[dp.z]
    q = jnp.einsum("ji,jil->jl", diff, dp.prec_sqrt[dp.z])
    return 0.5 * jnp.sum(q**2)


def joint_beta_omega_step(key, H, omega, beta, v, dp: DPState, y, valid, step_size, n_steps):
    """One HMC transition of ``(β, Ω)`` given everything else, under the logistic likelihood.

    Coordinates whitened by the prior: ``b = √v β`` and ``e_j = G_jᵀ(ω_j - μ_{z_j})`` with
    ``Σ_{z_j}^{-1} = G_j G_jᵀ`` (the current DP component of ``ω_j``), so the prior part of the
    potential is ``½(‖b‖² + ‖e‖²)``; the map is linear with a constant Jacobian, so identity-mass
    HMC in ``(b, e)`` leaves ``p(β, Ω | H, v, DP, y)`` invariant. Returns ``(β, Ω, accept
    probability, diverging)``."""
    M, m = omega.shape
    P = beta.shape[0]
    mu = dp.mu[dp.z]
    G = dp.prec_sqrt[dp.z]
    eye = jnp.broadcast_to(jnp.eye(m, dtype=omega.dtype), dp.prec_sqrt.shape)
    to_omega = jnp.linalg.solve(jnp.swapaxes(dp.prec_sqrt, -1, -2), eye)[dp.z]  # G^{-T}, per component
    sqrt_v = jnp.sqrt(v)

    def unpack(x):
        return x[:P] / sqrt_v, mu + jnp.einsum("jik,jk->ji", to_omega, x[P:].reshape(M, m))

    def potential(x):
        b, om = unpack(x)
        f = decision_values(H, om, b)
        return 0.5 * jnp.sum(x**2) - jnp.sum(jnp.where(valid, logistic_log_likelihood(f, y), 0.0))

    x0 = jnp.concatenate([sqrt_v * beta, jnp.einsum("jki,jk->ji", G, omega - mu).ravel()])
    x, accept_prob, diverging = joint_hmc_step(key, x0, potential, step_size, n_steps)
    moved = jnp.any(x != x0)  # a rejection keeps the old values exactly (no round trip)
    beta_new, omega_new = unpack(x)
    return jnp.where(moved, beta_new, beta), jnp.where(moved, omega_new, omega), accept_prob, diverging


def _view_noise(latent: M3LAKLatent, data: M3LAKData):
    """Each view's noise precision: a scalar (``noise="view"``) or ``(D_i,)`` (``"feature"``)."""
    return noise_by_view(latent.tau, [X.shape[1] for X in data.Xs])


def _gaussian_parts(latent: M3LAKLatent, data: M3LAKData):
    """``Q_i = W_iᵀT_iW_i`` (V, m, m) and ``b_n = Σ_i obs W_iᵀT_i(x_n - V_i u_n)`` (N, m), ``T_i`` the
    view's noise precision (``τ_i I`` or ``diag(τ_i)``)."""
    TWs = [cond.noise_weighted(t, W) for t, W in zip(_view_noise(latent, data), latent.Ws)]
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


def m3lak_sweep(
    key, latent: M3LAKLatent, data: M3LAKData, config: M3LAKConfig, step_size_H, step_size_omega, flag=0
):
    """One full sweep (module docstring order). Returns ``(latent, info)`` with
    ``info = (accept_prob_H (mean over rows), accept_prob_omega, diverging, nonfinite_flag)``."""
    C = config.C
    keys = jax.random.split(_random.fast_key(key), 10)
    N, m = latent.H.shape
    nV = len(data.Xs)
    flag = jnp.asarray(flag, jnp.int32)
    valid = data.y != 0  # False only on the padding rows of a sharded run (see shard_m3lak_data)

    fixed = config.fixed_blocks
    logistic = config.likelihood == "logistic"
    acc_H = acc_O = jnp.ones((), latent.H.dtype)
    div_H = div_O = jnp.zeros((), bool)

    # 1. H: per-row HMC, mass matrix = the full-data Gaussian precision
    if "H" not in fixed:
        Q, b = _gaussian_parts(latent, data)
        obsf = data.obs.astype(latent.H.dtype)
        mass = jnp.eye(m, dtype=latent.H.dtype) + jnp.sum(Q, 0)
        mass_chol = jnp.linalg.cholesky(mass)

        def pot_H(Hc):
            quad = jnp.einsum("nv,nvk,nk->n", obsf, jnp.einsum("nl,vlk->nvk", Hc, Q), Hc)  # Σ_i o_ni hᵀQ_i h
            gauss = 0.5 * jnp.sum(Hc**2, -1) + 0.5 * quad - jnp.sum(Hc * b, -1)
            f = decision_values(Hc, latent.omega, latent.beta)
            return gauss + jnp.where(valid, _label_energy(f, data.y, latent.lam, config), 0.0)

        H, acc_H, div_H = rowwise_hmc_step(
            keys[0], latent.H, pot_H, step_size_H, config.hmc_steps_h, mass_chol=mass_chol
        )
        H, flag = _guard(H, latent.H, 1, flag)
        latent = latent._replace(H=H)

    # 2. Ω: joint HMC (hinge), or (β, Ω) jointly (logistic)
    if "omega" not in fixed and logistic:
        beta, omega, acc_O, div_O = joint_beta_omega_step(
            keys[1],
            latent.H,
            latent.omega,
            latent.beta,
            latent.v,
            latent.dp,
            data.y,
            valid,
            step_size_omega,
            config.hmc_steps_joint,
        )
        (beta, omega), flag = _guard((beta, omega), (latent.beta, latent.omega), 11, flag)
        latent = latent._replace(beta=beta, omega=omega)
    elif "omega" not in fixed:

        def pot_omega(om):
            f = decision_values(latent.H, om, latent.beta)
            label = jnp.where(valid, _label_energy(f, data.y, latent.lam, config), 0.0)
            return _omega_prior_energy(om, latent.dp) + jnp.sum(label)

        omega, acc_O, div_O = joint_hmc_step(
            keys[1], latent.omega, pot_omega, step_size_omega, config.hmc_steps_omega
        )
        omega, flag = _guard(omega, latent.omega, 2, flag)
        latent = latent._replace(omega=omega)

    # 3. DP assignments, sticks and components
    if config.spectral_prior == "dp" and "dp" not in fixed:
        mu0, kappa0, nu0, psi0 = _niw_prior(config, latent.omega.dtype)
        dp = _dp_update(config)(keys[2], latent.dp, latent.omega, config.alpha, mu0, kappa0, nu0, psi0)
        dp, flag = _guard(dp, latent.dp, 3, flag)
        latent = latent._replace(dp=dp)

    # 4–5. λ then β (hinge only)
    if not logistic and "lambda_beta" not in fixed:
        feats = feature_map(latent.H, latent.omega)
        lam = cond.sample_lambda_conditional(keys[3], feats @ latent.beta, data.y, C)
        lam, flag = _guard(lam, latent.lam, 4, flag)
        beta = cond.sample_beta_conditional(keys[4], feats * valid[:, None], data.y, lam, C, latent.v)
        beta, flag = _guard(beta, latent.beta, 5, flag)
        latent = latent._replace(lam=lam, beta=beta)

    # 6–9. latent variable model, view by view (V is small and static)
    if "lvm" not in fixed:
        kU, kWV, kr, kt = (jax.random.split(k, nV) for k in keys[5:9])
        kUV = jax.random.split(jax.random.fold_in(keys[5], 1), nV)
        Us, Ws, Vs, rs, taus = [], [], [], [], []
        collapsed = config.precision_update == "collapsed"
        view_tau = _view_noise(latent, data)
        for i in range(nV):
            X, o = data.Xs[i], data.obs[:, i]
            W, Vv, tau_i = latent.Ws[i], latent.Vs[i], view_tau[i]
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
            if collapsed:  # (r, τ, [W V]) jointly: r and τ with [W V] integrated out
                new = cond.sample_precisions_collapsed(
                    kt[i], X, latent.H, U, r_i, tau_i, config.eta, o, *config.precision_priors
                )
                (r_i, tau_i), flag = _guard(new, (r_i, tau_i), 9, flag)
            W_new, V_new = cond.sample_wv_conditional(kWV[i], X, latent.H, U, r_i, config.eta, tau_i, o)
            (W, Vv), flag = _guard((W_new, V_new), (W, Vv), 7, flag)
            if not collapsed:
                new = cond.sample_r_conditional(kr[i], W, config.a_r, config.b_r)
                r_i, flag = _guard(new, r_i, 8, flag)
                new = cond.sample_tau_conditional(
                    kt[i], X, latent.H, U, W, Vv, o, config.a_tau, config.b_tau, config.noise == "feature"
                )
                tau_i, flag = _guard(new, tau_i, 9, flag)
            Us.append(U), Ws.append(W), Vs.append(Vv), rs.append(r_i), taus.append(tau_i)
        latent = latent._replace(
            Us=tuple(Us), Ws=tuple(Ws), Vs=tuple(Vs), r=jnp.stack(rs), tau=_join_noise(taus)
        )

    # 10. v
    if config.v_prior is not None:
        v = cond.sample_v_conditional(keys[9], latent.beta, *config.v_prior)
        v, flag = _guard(v, latent.v, 10, flag)
        latent = latent._replace(v=v)

    # 11. latent-axis scale and shear (they move H, Ω, the DP components and the LVM: none may be fixed)
    if config.latent_axis_moves and not {"H", "omega", "dp", "lvm"} & set(fixed):
        new = move_latent_axes(
            jax.random.fold_in(keys[9], 1),
            latent.H,
            latent.Ws,
            latent.r,
            latent.omega,
            latent.dp,
            _axis_prior(config, latent.H.dtype),
            valid,
        )
        old = (latent.H, latent.Ws, latent.r, latent.omega, latent.dp)
        (H, Ws, r, omega, dp), flag = _guard(new, old, 12, flag)
        latent = latent._replace(H=H, Ws=Ws, r=r, omega=omega, dp=dp)

    acc_H = jnp.sum(jnp.where(valid, acc_H, 0.0)) / jnp.sum(valid)
    info = (acc_H, acc_O, jnp.any(div_H & valid) | div_O, flag)
    return latent, info


def sweep_outputs(latent: M3LAKLatent, data: M3LAKData, config: M3LAKConfig):
    """The stored quantities of one draw (the ``run_m3lak`` contract)."""
    out = {
        "beta": latent.beta,
        "omega": latent.omega,
        "tau": latent.tau,
        "r": latent.r,
        "decision": decision_values(latent.H, latent.omega, latent.beta),
    }
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
    return out


# ----------------------------------------------------------------------------------------------
# initialisation
# ----------------------------------------------------------------------------------------------
def initial_latent(key, data: M3LAKData, config: M3LAKConfig) -> M3LAKLatent:
    """PCA start for ``H`` (plus noise, so chains differ), conjugate updates of ``[W V]``, ``τ``,
    ``r`` from it, ``ω ~ N(0, I/m)``-type start, the DP table from one slice update, and ``β``
    from its conditional with ``λ = 1``."""
    m, K, M = config.n_latent, config.n_view_latent, config.n_frequencies
    dtype = jnp.float64
    N = data.y.shape[0]
    nV = len(data.Xs)
    keys = jax.random.split(_random.fast_key(key), 8)
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
    if config.spectral_prior == "dp":
        omega = jax.random.normal(keys[3], (M, m), dtype) / np.sqrt(m)
        Kc = config.dp_capacity
        mu0, kappa0, nu0, psi0 = _niw_prior(config, dtype)
        ones = jnp.ones(Kc, dtype)
        mu, G, logdet = sample_niw(
            keys[4],
            jnp.broadcast_to(mu0, (Kc, m)),
            kappa0 * ones,
            nu0 * ones,
            jnp.broadcast_to(psi0, (Kc, m, m)),
        )
        dp = DPState(
            _random.beta(keys[5], 1.0, config.alpha, (Kc,), dtype),
            mu,
            G,
            logdet,
            jnp.zeros((M,), jnp.int32),
            jnp.zeros((), bool),
        )
        dp = _dp_update(config)(keys[6], dp, omega, config.alpha, mu0, kappa0, nu0, psi0)
    else:
        omega = jax.random.normal(keys[3], (M, m), dtype) * config.omega_scale
        dp = _gaussian_dp_state(config, dtype)
    v = jnp.asarray(config.v if config.v_prior is None else config.v_prior[0] / config.v_prior[1], dtype)
    lam = jnp.ones((N,), dtype)
    feats = feature_map(H, omega) * valid[:, None]
    beta = cond.sample_beta_conditional(keys[7], feats, data.y, lam, config.C, v)
    return M3LAKLatent(H, Us, tuple(Ws), tuple(Vs), _join_noise(taus), jnp.stack(rs), omega, beta, lam, v, dp)


# Eager execution of initial_latent costs ~3x more CPU than compiling it, and the jitted
# version is cached across fits with the same shapes and config.
_initial_latent_jit = jax.jit(initial_latent, static_argnums=2)


# ----------------------------------------------------------------------------------------------
# the NumPyro kernel
# ----------------------------------------------------------------------------------------------
class M3LAKKernel(MCMCKernel):
    """Composite M3LAK kernel for :class:`numpyro.infer.MCMC`.

    ``MCMC(M3LAKKernel(config), ...).run(key, data)`` with ``data = prepare_data(Xs, y)``. The step
    sizes of both HMC blocks are adapted by dual averaging (Hoffman & Gelman 2014) during warm-up
    and frozen afterwards. ``model = None``: ``arviz.from_numpyro`` takes the samples as they are.
    """

    sample_field = "outputs"
    model = None

    def __init__(self, config: M3LAKConfig = M3LAKConfig(), mesh=None, n_valid=None):
        self.config = config.validate()
        self.mesh = mesh  # data-sharded run: per-sample state constrained to rows over the mesh
        self.n_valid = n_valid  # number of real (unpadded) samples; None: all
        self._num_warmup = 0
        self._da_init, self._da_update = dual_averaging()

    @property
    def default_fields(self):
        """The state fields NumPyro's ``MCMC`` collects: ``outputs`` (the draws of each sweep)."""
        return ("outputs",)

    def postprocess_fn(self, model_args, model_kwargs):
        """The function applied to each stored draw: drops the rows that pad N to the device count
        and replicates the decision values (the identity for an unsharded run).
        """
        if self.mesh is None and self.n_valid is None:
            return lambda x: x
        from ..distributed import constrain_replicated

        def trim(x):  # drop the padding rows; the stored decision values are replicated
            return {**x, "decision": constrain_replicated(x["decision"][..., : self.n_valid], self.mesh)}

        return trim

    def _constrain(self, latent: M3LAKLatent) -> M3LAKLatent:
        if self.mesh is None:
            return latent
        from ..distributed import constrain_rows

        return latent._replace(
            H=constrain_rows(latent.H, self.mesh),
            Us=constrain_rows(latent.Us, self.mesh),
            lam=constrain_rows(latent.lam, self.mesh),
        )

    def _init_one(self, rng_key, data):
        key_init, key_state = jax.random.split(rng_key)
        latent = self._constrain(
            _initial_latent_jit(key_init, data, self.config)
        )  # compiled once per shape/config
        eps0 = jnp.asarray(self.config.init_step_size, jnp.float64)
        # the H block is preconditioned by its Gaussian precision, so its natural scale is ~1
        eps_H = jnp.asarray(0.5, jnp.float64)
        return M3LAKState(
            i=jnp.zeros((), jnp.int32),
            outputs=sweep_outputs(latent, data, self.config),
            latent=latent,
            da_H=self._da_init(jnp.log(10.0 * eps_H)),
            da_omega=self._da_init(jnp.log(10.0 * eps0)),
            step_size_H=eps_H,
            step_size_omega=eps0,
            accept_prob_H=jnp.zeros((), jnp.float64),
            accept_prob_omega=jnp.zeros((), jnp.float64),
            diverging=jnp.zeros((), bool),
            nonfinite=jnp.zeros((), jnp.int32),
            rng_key=key_state,
        )

    def init(self, rng_key, num_warmup, init_params, model_args, model_kwargs):
        """The initial ``M3LAKState`` of one chain (or one per key for a batch of keys): latents from
        ``initial_latent`` on the data (``model_args[0]``, an ``M3LAKData``), step sizes for warm-up.
        """
        self._num_warmup = int(num_warmup)
        data = model_args[0]
        if jnp.ndim(rng_key) > 1 or (
            jax.dtypes.issubdtype(rng_key.dtype, jax.dtypes.prng_key) and jnp.ndim(rng_key) > 0
        ):
            return jax.vmap(self._init_one, in_axes=(0, None))(rng_key, data)
        return self._init_one(rng_key, data)

    def sample(self, state: M3LAKState, model_args, model_kwargs):
        """One sweep of the sampler (``m3lak_sweep``) from ``state``; step sizes adapt during warm-up.
        A block that produces non-finite values is recorded in ``state.nonfinite`` (``run_m3lak``
        then raises :class:`M3LAKNumericalError`).
        """
        data = model_args[0]
        cfg = self.config
        key, key_sweep = jax.random.split(state.rng_key)
        latent, (acc_H, acc_O, div, flag) = m3lak_sweep(
            key_sweep, state.latent, data, cfg, state.step_size_H, state.step_size_omega, state.nonfinite
        )
        latent = self._constrain(latent)
        warm = state.i < self._num_warmup
        last = state.i == self._num_warmup - 1

        def adapt(da, acc, eps):
            new_da = self._da_update(cfg.target_accept - acc, da)
            new_eps = jnp.where(last, jnp.exp(new_da[1]), jnp.exp(new_da[0]))
            da = jax.tree.map(lambda a, b: jnp.where(warm, a, b), new_da, da)
            return da, jnp.where(warm, new_eps, eps)

        da_H, eps_H = adapt(state.da_H, jnp.nan_to_num(acc_H), state.step_size_H)
        da_O, eps_O = adapt(state.da_omega, jnp.nan_to_num(acc_O), state.step_size_omega)
        return M3LAKState(
            i=state.i + 1,
            outputs=sweep_outputs(latent, data, cfg),
            latent=latent,
            da_H=da_H,
            da_omega=da_O,
            step_size_H=eps_H,
            step_size_omega=eps_O,
            accept_prob_H=acc_H,
            accept_prob_omega=acc_O,
            diverging=div,
            nonfinite=flag,
            rng_key=key,
        )

    def get_diagnostics_str(self, state):
        """Progress-bar text: acceptance rate and step size of the H and Ω HMC blocks."""
        return (
            f"acc H {float(state.accept_prob_H):.2f} (step {float(state.step_size_H):.2e}), "
            f"acc Ω {float(state.accept_prob_omega):.2f} (step {float(state.step_size_omega):.2e})"
        )


# At most this many calls of the draw program per chain and run (each call costs a dispatch).
_MAX_CHUNKS = 64
EXTRA_FIELDS = ("accept_prob_H", "accept_prob_omega", "diverging", "step_size_H", "step_size_omega")


def _numpyro_mcmc(
    settings: _RunSettings, num_chains=1, chain_method="sequential", progress_bar=False
) -> MCMC:
    kernel = M3LAKKernel(settings.config, mesh=settings.mesh, n_valid=settings.n_valid)
    return MCMC(
        kernel,
        num_warmup=settings.num_warmup,
        num_samples=settings.num_samples,
        num_chains=num_chains,
        chain_method=chain_method,
        progress_bar=progress_bar,
        thinning=settings.thinning,
        jit_model_args=True,
    )


def _collected(mcmc: MCMC, group_by_chain):
    extra = mcmc.get_extra_fields(group_by_chain=group_by_chain)
    return (
        mcmc.get_samples(group_by_chain=group_by_chain),
        {k: extra[k] for k in EXTRA_FIELDS},
        mcmc.last_state,
    )


@partial(jax.jit, static_argnums=0)
def _init_chain(settings: _RunSettings, key, data):
    """The state one chain starts from (what ``MCMC.run`` initialises with ``key``)."""
    kernel = M3LAKKernel(settings.config, mesh=settings.mesh, n_valid=settings.n_valid)
    return kernel.init(key, settings.num_warmup, None, (data,), {})


@partial(jax.jit, static_argnums=0)
def _draw_chain(settings: _RunSettings, state, data):
    """``settings.num_samples`` sweeps of one chain from ``state`` (NumPyro's
    ``post_warmup_state``, continued with the state's own key; the kernel adapts its step sizes
    while the sweep count is below ``num_warmup``), compiled once per (settings, shapes). Run
    outside a ``jit``, NumPyro re-traces and re-compiles its sampling loop on every run (20–40 s
    per fit here); under this ``jit`` a refit with new data of the same shapes, or a
    continuation, reuses the executable."""
    mcmc = _numpyro_mcmc(settings)
    mcmc.post_warmup_state = state
    mcmc.run(state.rng_key, data, extra_fields=EXTRA_FIELDS)
    return _collected(mcmc, group_by_chain=False)


@partial(jax.jit, static_argnums=0)
def _init_chains_vectorized(settings: _RunSettings, keys, data):
    return jax.vmap(lambda key: _init_chain(settings, key, data))(keys)


@partial(jax.jit, static_argnums=0)
def _draw_chains_vectorized(settings: _RunSettings, states, data):
    return jax.vmap(lambda state: _draw_chain(settings, state, data))(states)


def _clear_compiled_chains():
    """Drop the cached chain executables (after a test patches a conditional)."""
    for fn in (_init_chain, _draw_chain, _init_chains_vectorized, _draw_chains_vectorized):
        fn.clear_cache()


def _chunk_length(settings: _RunSettings):
    """Sweeps per call of the one compiled draw program: ``gcd(num_warmup, num_samples)``, so that
    the warm-up, the draws and a continuation by ``num_samples`` share one executable (one
    compile of the sweep per fit). With thinning, a gcd of 1 (XLA compiles a one-sweep loop
    differently, so draws would differ from one ``MCMC.run`` by rounding, which the chain then
    amplifies), or more than ``_MAX_CHUNKS`` calls (e.g. 301 + 200 sweeps): ``num_samples``,
    and the warm-up runs as one chunk of ``num_warmup`` sweeps, a second program."""
    length = math.gcd(settings.num_warmup, settings.num_samples)
    calls = (settings.num_warmup + settings.num_samples) // length
    chunked = settings.thinning == 1 and length >= 2 and calls <= _MAX_CHUNKS
    return length if chunked else settings.num_samples


def _chunked_chain(settings: _RunSettings, init, draw, state, warm_up, axis):
    """Warm-up (when ``warm_up``) and draws as repeated calls of ``draw`` on chunks of
    :func:`_chunk_length` sweeps. Each call continues the previous state, so the draws equal
    one ``MCMC.run``. Draws are joined on the host along ``axis``. Returns
    ``(samples, extra, last_state)``."""
    length = _chunk_length(settings)
    chunk = settings._replace(num_samples=length)
    if warm_up:
        state = init(state)
        if settings.num_warmup % length:
            state = draw(settings._replace(num_samples=settings.num_warmup, thinning=1), state)[2]
        else:
            for _ in range(settings.num_warmup // length):
                state = draw(chunk, state)[2]
    parts = []
    for _ in range(settings.num_samples // length):
        samples, extra, state = draw(chunk, state)
        parts.append((samples, extra))
    joined = jax.tree.map(lambda *xs: np.concatenate([np.asarray(x) for x in xs], axis=axis), *parts)
    return joined[0], joined[1], state


def _sample_chains(settings: _RunSettings, num_chains, chain_method, key, data, states=None):
    """All chains with NumPyro's per-chain keys; ``"sequential"`` runs the one compiled chain
    once per key, so its draws equal ``MCMC(..., num_chains, chain_method="sequential")``.
    ``"vectorized"`` chains are equally valid but draw other numbers: the sweep's ``rbg`` keys
    (``_random.fast_key``) are not vmap-invariant. ``states``: per-chain states to continue
    from (a list for ``"sequential"``, one stacked state for ``"vectorized"``) instead of a
    warm-up. Returns ``(samples, extra, last)`` with a leading chain axis and the per-chain
    last states (what ``states`` takes)."""
    warm_up = states is None
    if chain_method == "vectorized" and num_chains > 1:
        keys = jax.random.split(key, num_chains)
        samples, extra, last = _chunked_chain(
            settings,
            lambda ks: _init_chains_vectorized(settings, ks, data),
            lambda st, s: _draw_chains_vectorized(st, s, data),
            keys if warm_up else states,
            warm_up,
            axis=1,
        )
        return samples, extra, last, last
    keys = [key] if num_chains == 1 else list(jax.random.split(key, num_chains))
    starts = keys if warm_up else states
    chains = [
        _chunked_chain(
            settings,
            lambda k: _init_chain(settings, k, data),
            lambda st, s: _draw_chain(st, s, data),
            start,
            warm_up,
            axis=0,
        )
        for start in starts
    ]
    samples, extra = jax.tree.map(lambda *xs: np.stack(xs), *[c[:2] for c in chains])
    lasts = [c[2] for c in chains]
    last = lasts[0] if num_chains == 1 else jax.tree.map(lambda *xs: jnp.stack(xs), *lasts)
    return samples, extra, last, lasts


def run_m3lak(
    Xs,
    y,
    config: M3LAKConfig,
    *,
    num_warmup,
    num_samples,
    num_chains=1,
    chain_method="sequential",
    random_state=0,
    progress_bar=False,
    thinning=1,
    mesh=None,
    shard_data=False,
    on_dp_overflow="raise",
    init_state=None,
    seed=SEED_DEPRECATED,
) -> M3LAKPosterior:
    """Run the composite M3LAK kernel through :class:`numpyro.infer.MCMC`.

    ``Xs``: list of float arrays (N, D_i), all-NaN rows = missing views; ``y``: ±1 labels.
    Returns :class:`M3LAKPosterior` (samples grouped by chain). Without a progress bar and for
    ``"sequential"``/``"vectorized"`` chains the compiled loop is cached across calls (a refit of
    the same shapes and settings does not recompile); ``progress_bar=True`` and ``"parallel"``
    use ``MCMC.run`` directly, which compiles on every call. ``"parallel"`` chains (``pmap``)
    start from the same per-chain keys as ``"sequential"`` ones and equal them to rounding at
    first; the two compiled programs round differently and the chains drift apart, so at
    realistic lengths they are other draws of the same posterior. Raises
    :class:`M3LAKNumericalError` (naming the block) if any block produced non-finite values and
    :class:`DPCapacityError` if the DP needed more than ``config.dp_capacity`` components
    (``on_dp_overflow="ignore"``: no error; the caller checks ``post.last_state.latent.dp.overflow``
    and reports it, as ``M3LAKClassifier`` does with a ``SamplerWarning``).

    Data-sharded sweep (``shard_data=True``: every device, an int: that many, or an explicit
    ``mesh``): ``X``, ``H``, ``U``, ``λ`` and the masks are sharded along ``N`` over the mesh
    (padded to a multiple of its size with masked-out rows) and XLA inserts the collectives for
    the sums over samples; the draws equal the unsharded run up to floating-point rounding.
    Needs ``chain_method`` ``"sequential"`` or ``"vectorized"`` (``"parallel"`` uses the devices
    for chains). See ``bayesmv.distributed``.

    ``init_state``: a previous run's ``chain_states``; every chain continues from where it
    stopped, without warm-up (NumPyro's ``post_warmup_state``), and a run of ``num_samples`` then
    one of ``num_samples2`` draws equals one run of ``num_samples + num_samples2``. Pass the
    previous run's data, config, ``num_warmup``, ``num_chains`` and ``chain_method``; with its
    ``num_samples`` too, the compiled sampling loop is reused.
    """
    seed = check_random_seed(random_state, seed, "run_m3lak")
    if not isinstance(config, M3LAKConfig):
        raise TypeError(f"config must be an M3LAKConfig; got {type(config).__name__}")
    config.validate()
    if on_dp_overflow not in ("raise", "ignore"):
        raise ValueError(f"on_dp_overflow must be 'raise' or 'ignore', got {on_dp_overflow!r}")
    if chain_method not in ("sequential", "vectorized", "parallel"):
        raise ValueError(
            f"chain_method must be 'sequential', 'vectorized' or 'parallel', got {chain_method!r}"
        )
    from ..distributed import check_partitionable_rng, resolve_mesh

    mesh = resolve_mesh(mesh, shard_data)
    if mesh is None:
        data, n_valid = prepare_data(Xs, y), None
    else:
        if chain_method == "parallel":
            raise ValueError(
                "a data-sharded run (shard_data/mesh) uses the devices for the samples; use "
                "chain_method='sequential' or 'vectorized', not 'parallel'"
            )
        check_partitionable_rng()
        data, n_valid = shard_m3lak_data(_prepare_arrays(Xs, y), mesh)
    settings = _RunSettings(config, mesh, n_valid, int(num_warmup), int(num_samples), int(thinning))
    key = jax.random.PRNGKey(seed)
    with single_threaded_blas():
        if (
            progress_bar or chain_method == "parallel"
        ):  # NumPyro's own loop: progress bar, one chain per device
            mcmc = _numpyro_mcmc(settings, int(num_chains), chain_method, progress_bar)
            if init_state is not None:  # continue: NumPyro's post_warmup_state with its own keys
                mcmc.post_warmup_state = init_state
                key = init_state.rng_key
            mcmc.run(key, data, extra_fields=EXTRA_FIELDS)
            samples, extra, last = _collected(mcmc, group_by_chain=True)
            chain_states = last
        else:
            samples, extra, last, chain_states = _sample_chains(
                settings, int(num_chains), chain_method, key, data, init_state
            )
    flags = np.atleast_1d(np.asarray(last.nonfinite))
    if np.any(flags != 0):
        code = int(flags[flags != 0][0])
        raise M3LAKNumericalError(
            f"M3LAK sampler: the {BLOCK_NAMES[code]} update produced non-finite values "
            "(check the data scaling and the hyper-parameters, e.g. C, eta, a_tau/b_tau)"
        )
    overflow = np.atleast_1d(np.asarray(last.latent.dp.overflow))
    if np.any(overflow) and on_dp_overflow == "raise":
        raise DPCapacityError(
            f"DP sampler needed more than dp_capacity={config.dp_capacity} components; "
            "increase M3LAKConfig.dp_capacity (or lower alpha)"
        )
    return M3LAKPosterior(dict(samples), dict(extra), last, chain_states)
