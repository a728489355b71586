"""The M3LAK hybrid Gibbs/HMC sampler (paper Algorithm 1; ``docs/m3lak_sampler.md``), one concern a module:

- :mod:`~bayesmv.inference.m3lak_sampler.state`: the data, the per-chain state, the result;
- :mod:`~bayesmv.inference.m3lak_sampler.sweep`: one sweep (the order of its blocks), its
  starting point and its stored outputs;
- :mod:`~bayesmv.inference.m3lak_sampler.kernel`: the sweep as a NumPyro ``MCMCKernel`` with
  step-size adaptation;
- :mod:`~bayesmv.inference.m3lak_sampler.run`: the :func:`run_m3lak` driver.

Every public name is importable from here, as from the one module this package replaces.
"""

from .kernel import M3LAKKernel
from .run import EXTRA_FIELDS, run_m3lak
from .state import (
    BLOCK_NAMES,
    DPCapacityError,
    M3LAKData,
    M3LAKLatent,
    M3LAKNumericalError,
    M3LAKPosterior,
    M3LAKState,
    SweepInfo,
    prepare_data,
    shard_m3lak_data,
    with_view_inputs,
)
from .sweep import decision_values, initial_latent, joint_beta_omega_step, m3lak_sweep, sweep_outputs

__all__ = [
    "BLOCK_NAMES",
    "DPCapacityError",
    "EXTRA_FIELDS",
    "M3LAKData",
    "M3LAKKernel",
    "M3LAKLatent",
    "M3LAKNumericalError",
    "M3LAKPosterior",
    "M3LAKState",
    "SweepInfo",
    "decision_values",
    "initial_latent",
    "joint_beta_omega_step",
    "m3lak_sweep",
    "prepare_data",
    "run_m3lak",
    "shard_m3lak_data",
    "sweep_outputs",
    "with_view_inputs",
]
