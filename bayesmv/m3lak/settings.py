"""M3LAK's settings seen from the estimator: its parameters checked against the one table of
constraints (:data:`~bayesmv.models.m3lak_config.CONSTRAINTS`), turned into the model's
:class:`~bayesmv.models.M3LAKConfig` and the sampler's run options, the parameter names of the
previous release mapped to their new place, and the views' standardisation."""

from __future__ import annotations

import warnings

import numpy as np

from ..datasets import SEED_DEPRECATED, MultiViewStandardScaler
from ..models.m3lak_config import M3LAKConfig, M3LAKPriors, M3LAKSampler, check_values

__all__ = [
    "LEGACY_PARAMETERS",
    "MODEL_PARAMETERS",
    "RUN_PARAMETERS",
    "SETTINGS_CLASSES",
    "check_settings",
    "model_config",
    "moved_parameters",
    "resolved",
    "run_options",
    "sharding_kwargs",
    "standardized",
    "view_standardization",
]

#: The estimator's settings objects: parameter name -> class (its default when the parameter is None).
SETTINGS_CLASSES = {"priors": M3LAKPriors, "sampler": M3LAKSampler}
#: Parameters of the previous release that moved: old name -> the settings object now holding it.
LEGACY_PARAMETERS = {
    **{name: "priors" for name in M3LAKPriors().get_params()},
    **{name: "sampler" for name in M3LAKSampler().get_params()},
}
#: The estimator's own parameters that the model's config does not hold (how long and how the
#: chains run, what the user sees, the views' scaling).
RUN_PARAMETERS = ("num_warmup", "num_samples", "num_chains", "chain_method", "progress_bar", "standardize")
#: The estimator's parameters that are the model config's own fields.
MODEL_PARAMETERS = ("n_latent", "n_frequencies", "C", "likelihood", "spectral_prior", "noise")


def moved_parameters(owner, deprecated, settings):
    """The parameters that ``deprecated`` (names of the previous release: :data:`LEGACY_PARAMETERS`
    and ``seed``) now set, with one ``FutureWarning`` naming their new place: ``eta=…`` gives
    ``priors=settings["priors"].replace(eta=…)`` (the class's default when None), ``seed``
    gives ``random_state``. Any other name raises ``TypeError``."""
    deprecated = dict(deprecated)
    seed = deprecated.pop("seed", SEED_DEPRECATED)
    unknown = sorted(set(deprecated) - set(LEGACY_PARAMETERS))
    if unknown:
        raise TypeError(f"{owner} got unexpected keyword argument(s) {unknown}")
    params = {}
    if not (isinstance(seed, str) and seed == SEED_DEPRECATED):
        warnings.warn(
            f"{owner}: 'seed' is deprecated and will be removed; use 'random_state'",
            FutureWarning,
            stacklevel=3,
        )
        params["random_state"] = seed
    if deprecated:
        where = ", ".join(f"{LEGACY_PARAMETERS[name]}__{name}" for name in deprecated)
        warnings.warn(
            f"{owner}: {sorted(deprecated)} moved to the settings objects priors=M3LAKPriors(...) and "
            f"sampler=M3LAKSampler(...) ({where} in set_params); the old names will be removed in the "
            "next release",
            FutureWarning,
            stacklevel=3,
        )
    for part, cls in SETTINGS_CLASSES.items():
        changes = {name: value for name, value in deprecated.items() if LEGACY_PARAMETERS[name] == part}
        if changes:
            base = settings[part]
            params[part] = (cls() if base is None else base).replace(**changes)
    return params


def resolved(params, part):
    """The estimator's ``priors`` or ``sampler`` (``part``), its class's default when None."""
    value = params[part]
    return SETTINGS_CLASSES[part]() if value is None else value


def check_settings(params):
    """Check the estimator's parameters ``params`` (``get_params(deep=False)``): the run's own
    against :data:`CONSTRAINTS`, the settings objects' types, and the model's config
    (:func:`model_config`). Raises ``ValueError`` naming the first bad parameter."""
    check_values("M3LAKClassifier", {name: params[name] for name in RUN_PARAMETERS})
    for part, cls in SETTINGS_CLASSES.items():
        if not isinstance(resolved(params, part), cls):
            raise ValueError(f"M3LAKClassifier.{part} must be None or a {cls.__name__}; got {params[part]!r}")
    sampler = resolved(params, "sampler")
    check_values("M3LAKSampler", {"shard_data": sampler.shard_data, "mesh": sampler.mesh})
    if sharding_kwargs(sampler.mesh, sampler.shard_data) and params["chain_method"] == "parallel":
        raise ValueError(
            "shard_data/mesh (samples split over the devices) cannot be combined with "
            "chain_method='parallel' (one chain per device); use 'processes' (the chains then "
            "run in this process), 'sequential' or 'vectorized'"
        )
    model_config(params)


def sharding_kwargs(mesh, shard_data):
    """``run_m3lak`` keywords of the data-sharded sweep (empty for an unsharded fit)."""
    shard = bool(shard_data) if isinstance(shard_data, (bool, np.bool_)) else int(shard_data)
    if mesh is None and shard is False:
        return {}
    return {"mesh": mesh, "shard_data": shard}


def run_options(params):
    """``run_m3lak`` keywords shared by every one-vs-rest problem's chains: warm-up length, number
    of chains and how they run, the progress bars, the sharding; DP truncation reported by the
    estimator rather than raised."""
    sampler = resolved(params, "sampler")
    return dict(
        num_warmup=int(params["num_warmup"]),
        num_chains=int(params["num_chains"]),
        chain_method=params["chain_method"],
        progress_bar=bool(params["progress_bar"]),
        on_dp_overflow="ignore",
        **sharding_kwargs(sampler.mesh, sampler.shard_data),
    )


def model_config(params):
    """The validated :class:`~bayesmv.models.M3LAKConfig` of the estimator's parameters: its
    model fields, ``priors`` and ``sampler`` (without where the data live), the spectral-scale
    move off under the Gaussian spectrum (a move of the DP spectrum)."""
    sampler = resolved(params, "sampler").without_execution()
    if params["spectral_prior"] != "dp":
        sampler = sampler.replace(spectral_scale_moves=False)
    own = {name: params[name] for name in MODEL_PARAMETERS}
    return M3LAKConfig(**own, priors=resolved(params, "priors"), sampler=sampler).validate()


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
