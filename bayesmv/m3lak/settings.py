"""M3LAK's settings: the estimator's parameters checked, turned into the model's
:class:`~bayesmv.models.m3lak.M3LAKConfig`, the sampler's options and sharding keywords, and the
views' standardisation."""

from __future__ import annotations

import dataclasses
import numbers
from types import SimpleNamespace

import numpy as np

from ..datasets import MultiViewStandardScaler, check_positive
from ..models.m3lak import POSITIVE_INTEGER_FIELDS, POSITIVE_REAL_FIELDS, M3LAKConfig

__all__ = [
    "CHAIN_METHODS",
    "NIW_NU0_PER_LATENT",
    "SPECTRAL_PRIORS",
    "check_settings",
    "model_config",
    "run_options",
    "sharding_kwargs",
    "standardized",
    "view_standardization",
]

#: How the chains run: one after another, one per device (``pmap``), as one vectorised program,
#: or one after another in worker processes spread over the CPUs.
CHAIN_METHODS = ("sequential", "parallel", "vectorized", "processes")
#: ν0 of the DP's Normal-Inverse-Wishart base per latent dimension when ``niw_nu0=None`` (the paper: 1).
NIW_NU0_PER_LATENT = 2
#: The frequencies' priors: a DP Gaussian mixture, or one Gaussian (an RBF kernel).
SPECTRAL_PRIORS = ("dp", "gaussian")


def check_settings(params):
    """Check the estimator's parameters ``params`` (``get_params()``): counts, positive values,
    the NIW and ``v`` priors, the choices, the mesh and sharding. Raises ``ValueError`` naming
    the first bad parameter."""
    p = SimpleNamespace(**params)
    for name in ("num_samples", "num_chains", *POSITIVE_INTEGER_FIELDS):
        check_positive(name, getattr(p, name), integer=True)
    check_positive("num_warmup", p.num_warmup, allow_zero=True, integer=True)
    for name in POSITIVE_REAL_FIELDS:
        check_positive(name, getattr(p, name))
    if p.lengthscale is not None:
        check_positive("lengthscale", p.lengthscale)
    check_positive("target_accept", p.target_accept)
    if not p.target_accept < 1:
        raise ValueError(f"target_accept must lie in (0, 1), got {p.target_accept!r}")
    if isinstance(p.niw_mu0, bool) or not isinstance(p.niw_mu0, numbers.Real) or not np.isfinite(p.niw_mu0):
        raise ValueError(f"niw_mu0 must be a finite number, got {p.niw_mu0!r}")
    if p.niw_nu0 is not None:
        check_positive("niw_nu0", p.niw_nu0)
        if p.niw_nu0 <= p.n_latent - 1:
            raise ValueError(
                f"niw_nu0 must exceed n_latent - 1 = {p.n_latent - 1} (Inverse-Wishart degrees of "
                f"freedom), got {p.niw_nu0!r}; use None for the default nu0 = 2 n_latent"
            )
    for name in ("v_prior", "niw_psi0_prior"):
        prior = getattr(p, name)
        if prior is not None:
            if not isinstance(prior, (tuple, list)) or len(prior) != 2:
                raise ValueError(f"{name} must be None or a pair (shape, rate), got {prior!r}")
            check_positive(f"{name}[0] (shape)", prior[0])
            check_positive(f"{name}[1] (rate)", prior[1])
    if p.spectral_prior not in SPECTRAL_PRIORS:
        raise ValueError(f"spectral_prior must be one of {SPECTRAL_PRIORS}, got {p.spectral_prior!r}")
    if p.chain_method not in CHAIN_METHODS:
        raise ValueError(f"chain_method must be one of {CHAIN_METHODS}, got {p.chain_method!r}")
    if p.mesh is not None:
        from jax.sharding import Mesh

        if not isinstance(p.mesh, Mesh):
            raise ValueError(f"mesh must be None or a jax.sharding.Mesh, got {type(p.mesh).__name__}")
    if not isinstance(p.shard_data, (bool, np.bool_)):
        check_positive("shard_data", p.shard_data, integer=True)
    if sharding_kwargs(p.mesh, p.shard_data) and p.chain_method == "parallel":
        raise ValueError(
            "shard_data/mesh (samples split over the devices) cannot be combined with "
            "chain_method='parallel' (one chain per device); use 'processes' (the chains then "
            "run in this process), 'sequential' or 'vectorized'"
        )
    for name in ("standardize", "augmented"):
        if not isinstance(getattr(p, name), (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {getattr(p, name)!r}")


def sharding_kwargs(mesh, shard_data):
    """``run_m3lak`` keywords of the data-sharded sweep (empty for an unsharded fit)."""
    shard = bool(shard_data) if isinstance(shard_data, (bool, np.bool_)) else int(shard_data)
    if mesh is None and shard is False:
        return {}
    return {"mesh": mesh, "shard_data": shard}


def run_options(params):
    """``run_m3lak`` keywords shared by every one-vs-rest problem's chains: warm-up length, number
    of chains and how they run, the sharding; no progress bar, and DP truncation reported by the
    estimator rather than raised."""
    return dict(
        num_warmup=int(params["num_warmup"]),
        num_chains=int(params["num_chains"]),
        chain_method=params["chain_method"],
        progress_bar=False,
        on_dp_overflow="ignore",
        **sharding_kwargs(params["mesh"], params["shard_data"]),
    )


def model_config(params):
    """The validated :class:`~bayesmv.models.m3lak.M3LAKConfig` of the estimator's parameters:
    every config field taken from ``params``, ``niw_nu0=None`` as ``NIW_NU0_PER_LATENT``
    times ``n_latent``, ``spectral_scale_moves`` off with the Gaussian spectrum."""
    kwargs = {}
    for f in dataclasses.fields(M3LAKConfig):
        if f.name in params:
            value = params[f.name]
            if f.name in ("v_prior", "niw_psi0_prior") and value is not None:
                value = tuple(float(x) for x in value)
            if f.name == "fixed_blocks" and not isinstance(value, str):
                value = tuple(value)  # a list from set_params; validate() rejects the rest
            if f.name == "spectral_scale_moves":  # a move of the DP spectrum: ignored without it
                value = bool(value) and params.get("spectral_prior", "dp") == "dp"
            if f.name == "niw_nu0" and value is None:
                value = float(NIW_NU0_PER_LATENT * params["n_latent"])
            kwargs[f.name] = value
    config = M3LAKConfig(**kwargs)
    config.validate()
    return config


def view_standardization(views, standardize=True):
    """Per-view feature means and scales ``(means, scales)`` over the observed rows of ``views``
    (:class:`~bayesmv.datasets.MultiViewStandardScaler`); zeros and ones when ``standardize`` is
    false."""
    if not standardize:
        return [np.zeros(X.shape[1]) for X in views], [np.ones(X.shape[1]) for X in views]
    scaler = MultiViewStandardScaler().fit(views)
    return scaler.mean_, scaler.scale_


def standardized(views, means, scales):
    """Each view centred by ``means`` and divided by ``scales`` (missing rows stay NaN)."""
    return [(X - mu) / s for X, mu, s in zip(views, means, scales)]
