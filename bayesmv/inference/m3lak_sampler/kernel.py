"""The M3LAK sampler as a NumPyro :class:`~numpyro.infer.mcmc.MCMCKernel`: one
:func:`~bayesmv.inference.m3lak_sampler.sweep.m3lak_sweep` per step, with the step sizes of
its two HMC blocks adapted by dual averaging during warm-up."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from numpyro.infer.hmc_util import dual_averaging
from numpyro.infer.mcmc import MCMCKernel

from ...models.m3lak import M3LAKConfig
from .state import M3LAKLatent, M3LAKState
from .sweep import _initial_latent_jit, m3lak_sweep, sweep_outputs

__all__ = [
    "M3LAKKernel",
]


class M3LAKKernel(MCMCKernel):
    """Composite M3LAK kernel for :class:`numpyro.infer.MCMC`.

    ``MCMC(M3LAKKernel(config), ...).run(key, data)`` with ``data = prepare_data(Xs, y)``. The step
    sizes of both HMC blocks are adapted by dual averaging (Hoffman & Gelman 2014) during warm-up
    and frozen afterwards. ``model = None``: ``arviz.from_numpyro`` takes the samples as they are.

    Parameters
    ----------
    config : M3LAKConfig, default=M3LAKConfig()
        The model and sampler settings (validated here).
    mesh : jax.sharding.Mesh or None, default=None
        For a data-sharded run, the devices the samples are split over: the per-sample state
        (``H``, ``U_i``, ``λ``) is constrained to rows over the mesh; None: not sharded.
    n_valid : int or None, default=None
        The number of real (unpadded) samples; None: all.

    Raises
    ------
    ValueError
        If ``config`` fails its validation.
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

        Parameters
        ----------
        model_args : tuple
            The model's positional arguments (not read).
        model_kwargs : dict
            The model's keyword arguments (not read).

        Returns
        -------
        postprocess : callable
            The identity, or (sharded or padded data) a function that cuts an ``outputs`` dict's
            ``decision`` to the first ``n_valid`` samples and replicates it over the mesh.
        """
        if self.mesh is None and self.n_valid is None:
            return lambda x: x
        from ...distributed import constrain_replicated

        def trim(x):  # drop the padding rows; the stored decision values are replicated
            return {**x, "decision": constrain_replicated(x["decision"][..., : self.n_valid], self.mesh)}

        return trim

    def _constrain(self, latent: M3LAKLatent) -> M3LAKLatent:
        if self.mesh is None:
            return latent
        from ...distributed import constrain_rows

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
            diverging_H=jnp.zeros((), bool),
            diverging_omega=jnp.zeros((), bool),
        )

    def init(self, rng_key, num_warmup, init_params, model_args, model_kwargs):
        """The initial ``M3LAKState`` of one chain (or one per key for a batch of keys): latents from
        ``initial_latent`` on the data (``model_args[0]``, an ``M3LAKData``), step sizes for warm-up.

        Parameters
        ----------
        rng_key : jax.Array
            A JAX PRNG key, or a batch of keys (leading axis) for one chain per key.
        num_warmup : int
            The number of warm-up sweeps, over which the step sizes adapt.
        init_params : object
            NumPyro's initial parameters (not read: the latents start from ``initial_latent``).
        model_args : tuple
            ``(data,)``, the ``M3LAKData`` to sample from.
        model_kwargs : dict
            The model's keyword arguments (not read).

        Returns
        -------
        state : M3LAKState
            The initial state, with a leading chain axis for a batch of keys.
        """
        self._num_warmup = int(num_warmup)
        data = model_args[0]
        if jnp.ndim(rng_key) > 1 or (
            jax.dtypes.issubdtype(rng_key.dtype, jax.dtypes.prng_key) and jnp.ndim(rng_key) > 0
        ):
            return jax.vmap(self._init_one, in_axes=(0, None))(rng_key, data)
        return self._init_one(rng_key, data)

    def _temper(self, i):
        """The power of the views' likelihood at sweep ``i``: ``t0^(1 − i/n)`` over the first
        ``n = num_warmup // 2`` sweeps with ``t0 = config.warmup_tempering``, then 1 (always 1
        without tempering)."""
        t0, n = self.config.warmup_tempering, self._num_warmup // 2
        if t0 is None or t0 == 1 or n == 0:
            return 1.0
        return jnp.where(i < n, jnp.asarray(t0, jnp.float64) ** (1.0 - i / n), 1.0)

    def _hold_sweeps(self):
        """The number of warm-up sweeps over which the NIW scale ``ψ`` is held:
        ``⌊config.niw_psi0_warmup_hold · num_warmup⌋``."""
        return int(self.config.niw_psi0_warmup_hold * self._num_warmup)

    def _learn_niw_scale(self, i):
        """Whether the NIW scale ``ψ`` moves at sweep ``i``: not over the held sweeps, always
        after them (and always, as the Python ``True``, without a hold)."""
        n = self._hold_sweeps()
        return True if n == 0 else i >= n

    def sample(self, state: M3LAKState, model_args, model_kwargs):
        """One sweep of the sampler (``m3lak_sweep``) from ``state``; step sizes adapt during warm-up.
        A block that produces non-finite values is recorded in ``state.nonfinite`` (``run_m3lak``
        then raises
        :class:`~bayesmv.inference.m3lak_sampler.state.M3LAKNumericalError`).

        Parameters
        ----------
        state : M3LAKState
            The chain's current state.
        model_args : tuple
            ``(data,)``, the ``M3LAKData`` to sample from.
        model_kwargs : dict
            The model's keyword arguments (not read).

        Returns
        -------
        state : M3LAKState
            The state after the sweep.
        """
        data = model_args[0]
        cfg = self.config
        key, key_sweep = jax.random.split(state.rng_key)
        latent, info = m3lak_sweep(
            key_sweep,
            state.latent,
            data,
            cfg,
            state.step_size_H,
            state.step_size_omega,
            state.nonfinite,
            self._temper(state.i),
            self._learn_niw_scale(state.i),
        )
        latent = self._constrain(latent)
        warm = state.i < self._num_warmup
        last = state.i == self._num_warmup - 1

        def adapt(da, acc, eps):
            new_da = self._da_update(cfg.target_accept - acc, da)
            new_eps = jnp.where(last, jnp.exp(new_da[1]), jnp.exp(new_da[0]))
            da = jax.tree.map(lambda a, b: jnp.where(warm, a, b), new_da, da)
            return da, jnp.where(warm, new_eps, eps)

        da_H, eps_H = adapt(state.da_H, jnp.nan_to_num(info.accept_prob_H), state.step_size_H)
        da_O, eps_O = adapt(state.da_omega, jnp.nan_to_num(info.accept_prob_omega), state.step_size_omega)
        if self._hold_sweeps():  # Ω's geometry changes once ψ moves: its adaptation restarts there
            restart = state.i == self._hold_sweeps() - 1
            fresh = self._da_init(jnp.log(10.0 * eps_O))
            da_O = jax.tree.map(lambda a, b: jnp.where(restart, a, b), fresh, da_O)
        return M3LAKState(
            i=state.i + 1,
            outputs=sweep_outputs(latent, data, cfg),
            latent=latent,
            da_H=da_H,
            da_omega=da_O,
            step_size_H=eps_H,
            step_size_omega=eps_O,
            accept_prob_H=info.accept_prob_H,
            accept_prob_omega=info.accept_prob_omega,
            diverging=info.diverging,
            nonfinite=info.nonfinite,
            rng_key=key,
            diverging_H=info.diverging_H,
            diverging_omega=info.diverging_omega,
        )

    def get_diagnostics_str(self, state):
        """Progress-bar text: acceptance rate and step size of the H and Ω HMC blocks.

        Parameters
        ----------
        state : M3LAKState
            The chain's current state.

        Returns
        -------
        text : str
            The acceptance probabilities and step sizes of both blocks.
        """
        return (
            f"acc H {float(state.accept_prob_H):.2f} (step {float(state.step_size_H):.2e}), "
            f"acc Ω {float(state.accept_prob_omega):.2f} (step {float(state.step_size_omega):.2e})"
        )
