"""``M3LAKClassifier``: the scikit-learn face of M3LAK (Du et al. 2018; the sampler: ``docs/m3lak_sampler.md``).

The sampler lives in ``bayesmv.models.m3lak`` / ``bayesmv.inference`` (``run_m3lak``). This module
validates and standardises the views, runs one chain set per one-vs-rest problem, turns the run
into an ArviZ posterior (``xarray.DataTree``) and implements the posterior predictive:

* ``h* | x*, W, V, τ`` is Gaussian once the per-view latents ``u*`` are integrated out
  (``docs/m3lak_sampler.md``): with ``Σ_i = V_iV_iᵀ + τ_i⁻¹I`` and, by Woodbury,
  ``Σ_i⁻¹ = τ_iI − τ_i²V_i(I_K + τ_iV_iᵀV_i)⁻¹V_iᵀ``,
  precision ``P = I + Σ_{observed i} W_iᵀΣ_i⁻¹W_i`` and mean ``P⁻¹ Σ_{observed i} W_iᵀΣ_i⁻¹x_i*``.
  Only ``K × K`` and ``m × m`` Cholesky factors are formed (never a ``D × D`` one).
* one ``h*`` is drawn per posterior draw and test point; the discriminant is
  ``f = βᵀφ̃(h*)`` with ``φ̃ = (φ, 1)`` the random Fourier features of the paper (§2.2);
  ``P(y* = +1) = mean over draws of 1[f > 0]``.

Everything is float64 (``import bayesmv`` enables x64): the Woodbury terms subtract nearly equal
quantities when ``τ`` is large.

Modules: :mod:`~bayesmv.m3lak.estimators` (the classifier), :mod:`~bayesmv.m3lak.settings` (its
parameters checked and turned into the model's config), :mod:`~bayesmv.m3lak.posterior` (draws,
aligned axes, the ArviZ posterior) and :mod:`~bayesmv.m3lak.predictive` (the posterior predictive).
"""

from ..models.m3lak_config import M3LAKPriors, M3LAKSampler
from .estimators import M3LAKClassifier
from .posterior import align_latent_axes, posterior_dims, procrustes_rotations, replicate_labels
from .predictive import KernelBand, predictive_latent_moments, sample_predictive_decisions

__all__ = [
    "M3LAKClassifier",
    "KernelBand",
    "M3LAKPriors",
    "M3LAKSampler",
    "align_latent_axes",
    "posterior_dims",
    "predictive_latent_moments",
    "procrustes_rotations",
    "replicate_labels",
    "sample_predictive_decisions",
]
