"""NumPyro model functions (M3LAK: latent variable model, DP spectral prior, hinge pseudo-likelihood)."""

from .m3lak import (
    augmented_hinge_log_factor,
    decision_values,
    feature_map,
    hinge_log_pseudo_likelihood,
    hinge_model,
    latent_variable_model,
    logistic_log_likelihood,
    m3lak_model,
    mirror_frequencies,
    noise_by_view,
    pointwise_log_likelihood,
    spectral_prior_model,
    view_frequencies,
    view_inputs,
)
from .m3lak_config import FIXABLE_BLOCKS, NIW_NU0_PER_LATENT, M3LAKConfig, M3LAKPriors, M3LAKSampler

__all__ = [
    "FIXABLE_BLOCKS",
    "NIW_NU0_PER_LATENT",
    "M3LAKConfig",
    "M3LAKPriors",
    "M3LAKSampler",
    "augmented_hinge_log_factor",
    "decision_values",
    "feature_map",
    "hinge_log_pseudo_likelihood",
    "hinge_model",
    "latent_variable_model",
    "logistic_log_likelihood",
    "m3lak_model",
    "mirror_frequencies",
    "noise_by_view",
    "pointwise_log_likelihood",
    "spectral_prior_model",
    "view_frequencies",
    "view_inputs",
]
