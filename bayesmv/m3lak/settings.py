"""M3LAK's settings seen from the estimator: its parameters checked against the one table of
constraints (:data:`~bayesmv.models.m3lak_config.CONSTRAINTS`), turned into the model's
:class:`~bayesmv.models.M3LAKConfig` and the sampler's run options, the parameter names of the
previous release mapped to their new place, and the views' standardisation."""

from __future__ import annotations

import warnings

import numpy as np

from ..datasets import SEED_DEPRECATED, MultiViewStandardScaler
from ..models.m3lak_config import EXECUTION_FIELDS, M3LAKConfig, M3LAKPriors, M3LAKSampler, check_values

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
#: The settings objects' later fields (``view_features``, ``label_feedback``, ...) were never the
#: estimator's own parameters and are not here.
LEGACY_PARAMETERS = {
    **dict.fromkeys(
        (
            "n_view_latent", "eta", "alpha", "a_r", "b_r", "a_tau", "b_tau", "v", "v_prior",
            "niw_kappa0", "niw_nu0", "niw_mu0", "niw_psi0", "niw_psi0_prior", "lengthscale",
        ),
        "priors",
    ),
    **dict.fromkeys(
        (
            "precision_update", "dp_update", "dp_split_merge", "dp_capacity", "augmented",
            "hmc_steps_h", "hmc_steps_omega", "hmc_steps_joint", "target_accept", "init_step_size",
            "h_lvm_passes", "kernel_passes", "warmup_tempering", "niw_psi0_warmup_hold",
            "spectral_scale_moves", "latent_axis_moves", "dp_relocation_moves", "dp_sign_moves",
            "fixed_blocks", "shard_data", "mesh",
        ),
        "sampler",
    ),
}  # fmt: skip
#: The estimator's own parameters that the model's config does not hold (how long and how the
#: chains run, what the user sees, the views' scaling).
RUN_PARAMETERS = ("num_warmup", "num_samples", "num_chains", "chain_method", "progress_bar", "standardize")
#: The estimator's parameters that are the model config's own fields.
MODEL_PARAMETERS = ("n_latent", "n_frequencies", "C", "likelihood", "spectral_prior", "noise")


def moved_parameters(owner, deprecated, settings):
    """The parameters that the previous release's names now set, with a warning naming their new place.

    ``eta=…`` gives ``priors=settings["priors"].replace(eta=…)`` (the class's default when
    None), ``seed`` gives ``random_state``.

    Parameters
    ----------
    owner : str
        Who is given the names, for the messages (the estimator's class name).
    deprecated : dict
        Names of the previous release (:data:`LEGACY_PARAMETERS` and ``seed``) and their values;
        a ``seed`` equal to ``"deprecated"`` counts as not given.
    settings : dict
        The current ``"priors"`` and ``"sampler"`` (each None or a settings object).

    Returns
    -------
    params : dict
        The parameters to set: ``random_state`` and the updated ``priors`` and ``sampler``, for
        those the names touch.

    Raises
    ------
    TypeError
        If a name is neither in :data:`LEGACY_PARAMETERS` nor ``seed``.

    Warns
    -----
    FutureWarning
        One for ``seed`` and one for the moved names, naming their new place.
    """
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
    """The estimator's ``priors`` or ``sampler``, its class's default when None.

    Parameters
    ----------
    params : dict
        The estimator's parameters, ``get_params(deep=False)``.
    part : {"priors", "sampler"}
        Which settings object.

    Returns
    -------
    settings : M3LAKPriors or M3LAKSampler
        ``params[part]``, or a default instance of its class (:data:`SETTINGS_CLASSES`) when it
        is None.
    """
    value = params[part]
    return SETTINGS_CLASSES[part]() if value is None else value


def check_settings(params):
    """Check the estimator's parameters.

    The run's own against :data:`~bayesmv.models.m3lak_config.CONSTRAINTS`, the settings
    objects' types, the sampler's ``shard_data`` and ``mesh`` (not combined with
    ``chain_method="parallel"``), and the model's config (:func:`model_config`).

    Parameters
    ----------
    params : dict
        The estimator's parameters, ``get_params(deep=False)``.

    Returns
    -------
    M3LAKConfig
        The validated model config of these parameters (:func:`model_config`).

    Raises
    ------
    ValueError
        Naming the first bad parameter.
    """
    check_values("M3LAKClassifier", {name: params[name] for name in RUN_PARAMETERS})
    for part, cls in SETTINGS_CLASSES.items():
        if not isinstance(resolved(params, part), cls):
            raise ValueError(f"M3LAKClassifier.{part} must be None or a {cls.__name__}; got {params[part]!r}")
    sampler = resolved(params, "sampler")
    check_values("M3LAKSampler", {name: getattr(sampler, name) for name in EXECUTION_FIELDS})
    if sharding_kwargs(sampler.mesh, sampler.shard_data) and params["chain_method"] == "parallel":
        raise ValueError(
            "shard_data/mesh (samples split over the devices) cannot be combined with "
            "chain_method='parallel' (one chain per device); use 'processes' (the chains then "
            "run in this process), 'sequential' or 'vectorized'"
        )
    return model_config(params)


def sharding_kwargs(mesh, shard_data):
    """``run_m3lak`` keywords of the data-sharded sweep (empty for an unsharded fit).

    Parameters
    ----------
    mesh : jax.sharding.Mesh or None
        The devices' mesh.
    shard_data : bool or int
        Whether (or over how many devices) the samples are split.

    Returns
    -------
    kwargs : dict
        ``{"mesh": mesh, "shard_data": shard_data}``; empty when ``mesh`` is None and
        ``shard_data`` is false.

    Examples
    --------
    >>> from bayesmv.m3lak.settings import sharding_kwargs
    >>> sharding_kwargs(None, False)
    {}
    >>> sharding_kwargs(None, True)
    {'mesh': None, 'shard_data': True}
    """
    shard = bool(shard_data) if isinstance(shard_data, (bool, np.bool_)) else int(shard_data)
    if mesh is None and shard is False:
        return {}
    return {"mesh": mesh, "shard_data": shard}


def run_options(params):
    """``run_m3lak`` keywords shared by every one-vs-rest problem's chains.

    Parameters
    ----------
    params : dict
        The estimator's parameters, ``get_params(deep=False)``.

    Returns
    -------
    kwargs : dict
        Warm-up length, number of chains and how they run, the progress bars, the sharding
        (:func:`sharding_kwargs`), and ``on_dp_overflow="ignore"``: DP truncation is reported by
        the estimator rather than raised.
    """
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
    """The validated :class:`~bayesmv.models.M3LAKConfig` of the estimator's parameters.

    Parameters
    ----------
    params : dict
        The estimator's parameters, ``get_params(deep=False)``.

    Returns
    -------
    config : M3LAKConfig
        Its model fields, ``priors`` and ``sampler`` (without where the data live and how far
        the chains are extended).

    Raises
    ------
    ValueError
        If the config is invalid (:meth:`~bayesmv.models.M3LAKConfig.validate`).
    """
    sampler = resolved(params, "sampler").without_execution()
    own = {name: params[name] for name in MODEL_PARAMETERS}
    return M3LAKConfig(**own, priors=resolved(params, "priors"), sampler=sampler).validate()


def view_standardization(views, standardize=True):
    """Per-view feature means and scales over the observed rows of the views.

    Parameters
    ----------
    views : list of ndarray of shape (n_samples, n_features_v)
        The views, NaN rows for missing views.
    standardize : bool, default=True
        Whether to standardise; when false the means are zeros and the scales ones.

    Returns
    -------
    means : list of ndarray of shape (n_features_v,)
        Each view's feature means (:class:`~bayesmv.datasets.MultiViewStandardScaler`).
    scales : list of ndarray of shape (n_features_v,)
        Each view's feature standard deviations (1 for a constant feature).

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.m3lak.settings import view_standardization
    >>> means, scales = view_standardization([np.array([[0.0, 1.0], [2.0, 1.0]])])
    >>> means, scales
    ([array([1., 1.])], [array([1., 1.])])
    """
    if not standardize:
        return [np.zeros(X.shape[1]) for X in views], [np.ones(X.shape[1]) for X in views]
    scaler = MultiViewStandardScaler().fit(views)
    return scaler.mean_, scaler.scale_


def standardized(views, means, scales):
    """Each view centred by ``means`` and divided by ``scales`` (missing rows stay NaN).

    Parameters
    ----------
    views : list of ndarray of shape (n_samples, n_features_v)
        The views.
    means : list of ndarray of shape (n_features_v,)
        Each view's feature means (:func:`view_standardization`).
    scales : list of ndarray of shape (n_features_v,)
        Each view's feature scales.

    Returns
    -------
    views : list of ndarray of shape (n_samples, n_features_v)
        The standardised views.
    """
    return [(X - mu) / s for X, mu, s in zip(views, means, scales)]
