"""The M3LAK sampler's data, its per-chain state and its result: the NamedTuples the sweep,
the kernel and the driver pass around, the data preparation and its sharding."""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from ...models.m3lak import view_inputs
from ..dp import DPState

__all__ = [
    "BLOCK_NAMES",
    "DPCapacityError",
    "M3LAKData",
    "M3LAKLatent",
    "M3LAKNumericalError",
    "M3LAKPosterior",
    "M3LAKState",
    "SweepInfo",
    "prepare_data",
    "shard_m3lak_data",
    "with_view_inputs",
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
    13: "NIW scale psi",
    14: "spectral scale (omega, psi)",
    15: "frequency relocation",
    16: "v_view",
}


class M3LAKNumericalError(FloatingPointError):
    """A sampler block produced a non-finite value."""


class DPCapacityError(RuntimeError):
    """The DP sampler needed more components than ``dp_capacity``."""


class M3LAKData(NamedTuple):
    """The data the sampler runs on (:func:`prepare_data`): the views, the mask of the observed
    views and the labels. ``N`` is the number of samples, ``V`` the number of views and ``D_i``
    the features of view ``i``; in a data-sharded run (:func:`shard_m3lak_data`) ``N`` includes
    the padding rows.

    Parameters
    ----------
    Xs : tuple of jax.Array of shape (N, D_i)
        The views, one array per view, float64; the rows of a missing view are zero-filled.
    obs : jax.Array of shape (N, V), dtype bool
        Whether view ``i`` of sample ``n`` is observed.
    y : jax.Array of shape (N,)
        The labels, ``-1.0`` or ``+1.0`` (``0.0`` on the padding rows of a sharded run).
    inputs : jax.Array of shape (N, P) or None, default=None
        The classifier's inputs from the views with ``view_features``
        (:func:`~bayesmv.models.m3lak.view_inputs`; zero on padding rows); else None.
    inputs_svd : (jax.Array of shape (N, r), jax.Array of shape (P, r)) or None, default=None
        ``(B, A)`` with ``inputs = B Aᵀ`` and ``AᵀA = I`` when ``r < P``, ``r`` the samples
        before any padding rows, so that the joint (β, Ω, γ) move runs in the inputs' row space
        (:func:`with_view_inputs`); else None.
    """

    Xs: tuple  # per view (N, D_i), missing rows zero-filled
    obs: jnp.ndarray  # (N, V) bool
    y: jnp.ndarray  # (N,) ±1 float
    inputs: jnp.ndarray | None = None  # (N, P) with view_features
    inputs_svd: tuple | None = None  # (B, A), inputs = B Aᵀ, when N < P


class M3LAKLatent(NamedTuple):
    """The latent variables of one chain: the model's parameters that a sweep draws
    (``docs/m3lak_sampler.md``).

    ``N`` is the number of samples, ``V`` the number of views, ``D_i`` the features of view
    ``i``, ``m`` the dimension of the shared latent (``n_latent``), ``K`` that of each view's own
    latent (``n_view_latent``) and ``M`` the number of frequencies (``n_frequencies``).

    Parameters
    ----------
    H : jax.Array of shape (N, m)
        The shared latent points ``h_n``, one per row.
    Us : tuple of jax.Array of shape (N, K)
        Each view's own latent ``u_n^i``, one array per view.
    Ws : tuple of jax.Array of shape (D_i, m)
        The loadings ``W_i`` of the shared latent, one array per view.
    Vs : tuple of jax.Array of shape (D_i, K)
        The loadings ``V_i`` of each view's own latent, one array per view.
    tau : jax.Array of shape (V,) or (D,)
        The noise precisions ``τ``: one per view (``noise="view"``), or one per feature, the
        views' ``D = Σ_i D_i`` features in order (``noise="feature"``).
    r : jax.Array of shape (V, m)
        The ARD precisions ``r_ij`` of the columns of each ``W_i``.
    omega : jax.Array of shape (M, m)
        The frequencies ``Ω``, one ``ω_j`` per row.
    beta : jax.Array of shape (2M + 1,)
        The classifier's weights ``β``: ``M`` cosine weights, ``M`` sine weights, the bias.
    lam : jax.Array of shape (N,)
        The hinge's augmentation variables ``λ_n`` (Polson and Scott 2011); ones under the
        logistic likelihood, which does not use them.
    v : jax.Array of shape ()
        The prior precision of ``β``: the fixed ``v``, or a latent variable with ``v_prior``.
    dp : DPState
        The table of the frequencies' DP mixture (``dp_capacity`` slots); under the
        ``"gaussian"`` spectrum a fixed one-component table.
    psi0 : jax.Array of shape () or None, default=None
        The NIW scale ``ψ`` with ``niw_psi0_prior``; else None (fixed).
    gamma : jax.Array of shape (P,) or None, default=None
        The classifier's weights ``γ`` of the views' own inputs with ``view_features``; else
        None.
    v_view : jax.Array of shape () or None, default=None
        The prior precision of ``γ`` with ``view_features`` (fixed ``v_view``, or a latent
        variable with ``v_view_prior``); else None.
    """

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
    psi0: jnp.ndarray | None = None  # the NIW scale ψ with ``niw_psi0_prior``; else None (fixed)
    gamma: jnp.ndarray | None = None  # the weights of the views' inputs with ``view_features``
    v_view: jnp.ndarray | None = None  # γ's prior precision with ``view_features``


class M3LAKState(NamedTuple):
    """The state of one M3LAK chain, what
    :class:`~bayesmv.inference.m3lak_sampler.kernel.M3LAKKernel` passes from one sweep to the
    next: the sweep count, the stored draw, the latent variables, the step-size adaptation of
    the two HMC blocks and the last sweep's statistics.

    Every field is a scalar (shape ``()``) unless given otherwise; a batch of chains (a
    vectorized run, or :class:`M3LAKPosterior`'s ``last_state`` of several chains) has a
    leading chain axis on every field.

    Parameters
    ----------
    i : jax.Array of shape (), dtype int32
        The number of sweeps done since the chain started, warm-up included; the step sizes
        adapt while it is below ``num_warmup``.
    outputs : dict of str to jax.Array
        The stored quantities of the current draw
        (:func:`~bayesmv.inference.m3lak_sampler.sweep.sweep_outputs`).
    latent : M3LAKLatent
        The chain's latent variables.
    da_H : tuple
        The dual-averaging state of the log step size of the ``H`` block (NumPyro's
        :func:`~numpyro.infer.hmc_util.dual_averaging`: ``(x_t, x_avg, g_avg, t, prox_center)``).
    da_omega : tuple
        The same for the ``Ω`` (or joint ``(β, Ω)``) block.
    step_size_H : jax.Array of shape ()
        The leapfrog step size of the ``H`` rows' HMC.
    step_size_omega : jax.Array of shape ()
        The leapfrog step size of the ``Ω`` (or joint ``(β, Ω)``) HMC move.
    accept_prob_H : jax.Array of shape ()
        The mean acceptance probability of the ``H`` rows in the last sweep (0 before the
        first).
    accept_prob_omega : jax.Array of shape ()
        The acceptance probability of the ``Ω`` (or joint ``(β, Ω)``) move in the last sweep
        (0 before the first).
    diverging : jax.Array of shape (), dtype bool
        Whether either HMC block diverged in the last sweep.
    nonfinite : jax.Array of shape (), dtype int32
        0, or the code of the first block that produced non-finite values
        (:data:`BLOCK_NAMES`).
    rng_key : jax.Array
        The chain's PRNG key, split at each sweep.
    diverging_H : jax.Array of shape (), dtype bool
        Whether any row of ``H`` diverged in the last sweep.
    diverging_omega : jax.Array of shape (), dtype bool
        Whether the ``Ω`` (or joint ``(β, Ω)``) move diverged in the last sweep.
    """

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
    diverging_H: jnp.ndarray
    diverging_omega: jnp.ndarray


class SweepInfo(NamedTuple):
    """What one sweep reports besides the new latents.

    A block diverges when its energy error exceeds
    :data:`~bayesmv.inference.hmc.DIVERGENCE_THRESHOLD`.

    Parameters
    ----------
    accept_prob_H : jax.Array of shape ()
        The mean acceptance probability of the ``H`` rows.
    accept_prob_omega : jax.Array of shape ()
        The acceptance probability of the ``Ω`` (or joint ``(β, Ω)``) move.
    diverging : jax.Array of shape (), dtype bool
        Whether either HMC block diverged.
    nonfinite : jax.Array of shape (), dtype int32
        0, or the code of the first block that produced non-finite values
        (:data:`BLOCK_NAMES`).
    diverging_H : jax.Array of shape (), dtype bool
        Whether any row of ``H`` diverged.
    diverging_omega : jax.Array of shape (), dtype bool
        Whether the ``Ω`` (or joint ``(β, Ω)``) move diverged.
    """

    accept_prob_H: jnp.ndarray
    accept_prob_omega: jnp.ndarray
    diverging: jnp.ndarray
    nonfinite: jnp.ndarray
    diverging_H: jnp.ndarray
    diverging_omega: jnp.ndarray


class M3LAKPosterior(NamedTuple):
    """The result of :func:`~bayesmv.inference.m3lak_sampler.run.run_m3lak`: the draws grouped by
    chain, the per-draw sampler statistics and the chains' last states.

    Parameters
    ----------
    samples : dict of str to array
        The draws by name (the stored quantities of
        :func:`~bayesmv.inference.m3lak_sampler.sweep.sweep_outputs`), each of shape
        ``(chain, draw, ...)``.
    extra_stats : dict of str to array
        The per-draw sampler statistics by name
        (:data:`~bayesmv.inference.m3lak_sampler.run.EXTRA_FIELDS`), each of shape
        ``(chain, draw)``.
    last_state : M3LAKState
        The last :class:`M3LAKState` (leading chain axis when ``num_chains > 1``).
    chain_states : object, default=None
        The same states in the form ``run_m3lak``'s ``init_state`` takes to continue the
        chains.
    """

    samples: dict
    extra_stats: dict
    last_state: M3LAKState
    chain_states: object = None


def prepare_data(Xs, y) -> M3LAKData:
    """The sampler's data: float64 views with all-NaN rows as missing (zero-filled, masked), labels ±1.

    Parameters
    ----------
    Xs : list or tuple of array-like of shape (N, D_i)
        The views; an all-NaN row is a missing view.
    y : array-like of shape (N,)
        The labels, -1 or +1.

    Returns
    -------
    data : M3LAKData
        The zero-filled views, the ``(N, V)`` mask of observed views and the labels.

    Raises
    ------
    ValueError
        If ``Xs`` is not a non-empty list or tuple, a view is not 2-D, the views' rows differ, a
        row is partly NaN, a view contains inf, ``y`` has another length or a label is not ±1.
    """
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


def with_view_inputs(data: M3LAKData, config, n_valid=None) -> M3LAKData:
    """``data`` with the classifier's inputs from its views (``config.view_features``), computed
    once: ``inputs`` (:func:`~bayesmv.models.m3lak.view_inputs`) and, when there are fewer
    samples ``N`` than inputs ``P``, their row space ``inputs_svd = (U S, V)`` from the thin SVD
    ``inputs = U S Vᵀ``. Without ``view_features``, ``data`` unchanged.

    Parameters
    ----------
    data : M3LAKData
        The views, their mask and the labels (:func:`prepare_data`).
    config : M3LAKConfig
        The model's settings.
    n_valid : int or None, default=None
        In a data-sharded run (:func:`shard_m3lak_data`), the samples before the padding rows:
        the SVD is of theirs, and ``U S`` gets zero padding rows, so that the sampler moves the
        same coordinates as unsharded. None: every row.

    Returns
    -------
    M3LAKData
        ``data`` with ``inputs`` and ``inputs_svd`` set.
    """
    if config.view_features is None:
        return data
    inputs = view_inputs(data.Xs, data.obs, config)
    n_rows, n_inputs = inputs.shape
    n = n_rows if n_valid is None else n_valid
    inputs_svd = None
    if n < n_inputs:
        U, s, Vt = jnp.linalg.svd(inputs[:n], full_matrices=False)
        inputs_svd = (jnp.pad(U * s, ((0, n_rows - n), (0, 0))), Vt.T)
    return data._replace(inputs=inputs, inputs_svd=inputs_svd)


def shard_m3lak_data(data_arrays, mesh) -> tuple:
    """Place the per-sample arrays of :func:`_prepare_arrays` on ``mesh``, sharded along ``N``.

    ``N`` is padded to a multiple of the mesh size with rows that carry no information: every
    view missing (no ``x``/``u`` likelihood terms, so no contribution to ``[W V]``, ``τ``) and
    ``y = 0``, which :func:`~bayesmv.inference.m3lak_sampler.sweep.m3lak_sweep` masks out of ``β``,
    ``Ω``, the step-size statistics and the initialisation.

    Parameters
    ----------
    data_arrays : tuple
        ``(views, mask, y)`` as :func:`_prepare_arrays` returns them: the ``(N, D_i)`` views, the
        ``(N, V)`` mask of observed views and the ``(N,)`` labels.
    mesh : jax.sharding.Mesh
        The devices the samples are split over.

    Returns
    -------
    data : M3LAKData
        The sharded, padded data.
    n : int
        The number of samples ``N`` before padding.
    """
    from ...distributed import shard_rows

    arrs, obs, y = data_arrays
    Xs = tuple(shard_rows(X, mesh) for X in arrs)
    return M3LAKData(Xs, shard_rows(obs, mesh, fill=False), shard_rows(y, mesh, fill=0.0)), len(y)
