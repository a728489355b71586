"""Inference for M3LAK: conjugate Gibbs conditionals, per-row HMC, DP samplers, the
composite NumPyro kernel and the :func:`run_m3lak` driver (paper Algorithm 1, DESIGN §5)."""

from .conditionals import (
    sample_beta_conditional,
    sample_inverse_gaussian,
    sample_lambda_conditional,
    sample_precisions_collapsed,
    sample_r_conditional,
    sample_tau_conditional,
    sample_u_conditional,
    sample_v_conditional,
    sample_wv_conditional,
)
from .dp import (
    DPState,
    collapsed_assignments,
    dp_collapsed_update,
    dp_prior_draw,
    dp_slice_update,
    sample_niw,
)
from .hmc import joint_hmc_step, rowwise_hmc_step
from .latent_axes import move_latent_axes
from .m3lak_sampler import (
    DPCapacityError,
    M3LAKData,
    M3LAKKernel,
    M3LAKLatent,
    M3LAKNumericalError,
    M3LAKPosterior,
    M3LAKState,
    decision_values,
    initial_latent,
    m3lak_sweep,
    prepare_data,
    run_m3lak,
    sweep_outputs,
)

__all__ = [
    "DPCapacityError",
    "DPState",
    "M3LAKData",
    "M3LAKKernel",
    "M3LAKLatent",
    "M3LAKNumericalError",
    "M3LAKPosterior",
    "M3LAKState",
    "decision_values",
    "collapsed_assignments",
    "dp_collapsed_update",
    "dp_prior_draw",
    "dp_slice_update",
    "initial_latent",
    "joint_hmc_step",
    "m3lak_sweep",
    "move_latent_axes",
    "prepare_data",
    "rowwise_hmc_step",
    "run_m3lak",
    "sample_beta_conditional",
    "sample_inverse_gaussian",
    "sample_lambda_conditional",
    "sample_niw",
    "sample_r_conditional",
    "sample_precisions_collapsed",
    "sample_tau_conditional",
    "sample_u_conditional",
    "sample_v_conditional",
    "sample_wv_conditional",
    "sweep_outputs",
]
