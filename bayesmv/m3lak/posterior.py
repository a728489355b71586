"""M3LAK's posterior: the chains of every one-vs-rest problem, their draws checked, latent axes
aligned across draws (Procrustes), replicated labels, named dimensions, and one
ArviZ posterior (``xarray.DataTree``) per problem stacked along ``ovr_class``."""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from scipy.special import expit

from .. import inference
from ..datasets import observed_mask
from ..diagnostics import to_inference_data
from ..models.m3lak import pointwise_log_likelihood

__all__ = [
    "align_latent_axes",
    "appended_draws",
    "checked_samples",
    "Continuation",
    "continued_problems",
    "dp_overflow_notes",
    "posterior_dims",
    "posterior_outputs",
    "ProblemRun",
    "sample_problems",
    "procrustes_rotations",
    "replicate_labels",
]

# Posterior fields the predictive needs (besides the per-view "W_i", "V_i").
_PREDICT_KEYS = ("beta", "omega", "tau")


def procrustes_rotations(Ws, n_iter=3):
    """Orthogonal ``Q_s`` ``(S, m, m)`` rotating each draw's stacked loadings ``[W_1; …; W_V] Q_s``
    closest (Frobenius) to one reference: orthogonal Procrustes, ``Q_s = U Vᵀ`` from the SVD of
    ``W_sᵀ R``, with ``R`` the last draw, then ``n_iter - 1`` times the mean of the aligned draws.

    The likelihood is invariant under ``(H, W_i, Ω) → (H Q, W_i Q, Ω Q)`` (``ωᵀh`` and ``W h``
    unchanged), so aligned draws give the same decision values. ``Ws``: per view ``(S, D_i, m)``."""
    W = np.concatenate([np.asarray(Wi) for Wi in Ws], axis=1)
    ref = W[-1]
    for _ in range(n_iter):
        U, _, Vt = np.linalg.svd(np.einsum("sdi,dj->sij", W, ref))
        Q = U @ Vt
        ref = np.einsum("sdi,sij->dj", W, Q) / len(W)
    return Q


def align_latent_axes(samples, n_views):
    """Draws ``(chain, draw, ...)`` turned to one orientation of the shared latent space
    (:func:`procrustes_rotations` over all chains): ``W_i Q``, ``Ω Q``, and ``r`` as the precisions
    of the rotated columns, ``r'_j = 1 / Σ_k Q_kj² / r_k`` (a permutation of ``r`` when ``Q`` is a
    signed permutation). Other variables are returned as they are. Returns ``(aligned, Q)``."""
    chains, draws = np.asarray(samples["omega"]).shape[:2]
    flat = {k: np.asarray(v).reshape((chains * draws,) + np.shape(v)[2:]) for k, v in samples.items()}
    Q = procrustes_rotations([flat[f"W_{i}"] for i in range(n_views)])
    aligned = dict(flat)
    for i in range(n_views):
        aligned[f"W_{i}"] = flat[f"W_{i}"] @ Q
    aligned["omega"] = flat["omega"] @ Q
    aligned["r"] = 1.0 / np.einsum("skj,svk->svj", Q**2, 1.0 / flat["r"])
    unflat = {k: v.reshape((chains, draws) + v.shape[1:]) for k, v in aligned.items()}
    return unflat, Q.reshape(chains, draws, *Q.shape[1:])


def replicate_labels(decision, likelihood, rng):
    """Posterior predictive replicates ``y_rep ∈ {-1, +1}`` of the training labels, one per draw of
    the decision values: ``P(y_rep = 1) = σ(f)`` (logistic); ``sign(f)`` for the hinge, whose
    pseudo-likelihood is no distribution over ``y`` (its ``predict_proba`` is the same vote)."""
    decision = np.asarray(decision)
    if likelihood == "logistic":
        return np.where(rng.random(decision.shape) < expit(decision), 1.0, -1.0)
    return np.where(decision > 0, 1.0, -1.0)


def posterior_dims(n_samples, n_features_per_view, n_frequencies, n_latent, n_view_latent, noise="view"):
    """``(coords, dims)`` naming every M3LAK draw's axes for ``az.from_dict``: ``obs_id``
    (training points), ``view``, ``feature_i`` (view i's features), ``latent`` (shared, m),
    ``view_latent`` (per view, K), ``frequency`` (M), ``rff_feature`` (``cos_j``, ``sin_j``,
    ``bias``: the 2M + 1 entries of β), ``dp_component``; with ``noise="feature"`` τ's axis is
    ``view_feature`` (``"i:d"``, feature d of view i)."""
    M = n_frequencies
    coords = {
        "obs_id": np.arange(n_samples),
        "view": np.arange(len(n_features_per_view)),
        "latent": np.arange(n_latent),
        "view_latent": np.arange(n_view_latent),
        "frequency": np.arange(M),
        "rff_feature": [f"cos_{j}" for j in range(M)] + [f"sin_{j}" for j in range(M)] + ["bias"],
    }
    if noise == "feature":
        coords["view_feature"] = [f"{i}:{d}" for i, D in enumerate(n_features_per_view) for d in range(D)]
    dims = {
        "beta": ["rff_feature"],
        "omega": ["frequency", "latent"],
        "tau": ["view_feature" if noise == "feature" else "view"],
        "r": ["view", "latent"],
        "decision": ["obs_id"],
        "y": ["obs_id"],
        "observed": ["obs_id", "view"],
        "dp_weights": ["dp_component"],
        "dp_assignments": ["frequency"],
    }
    for i, D in enumerate(n_features_per_view):
        coords[f"feature_{i}"] = np.arange(D)
        dims[f"W_{i}"] = [f"feature_{i}", "latent"]
        dims[f"V_{i}"] = [f"feature_{i}", "view_latent"]
    return coords, dims


def _stack_inference_data(idatas, classes):
    """Concatenate per-class ArviZ posteriors along a new ``ovr_class`` dimension (coordinates:
    the class labels)."""
    import xarray as xr

    groups = {"constant_data": idatas[0]["constant_data"].to_dataset()}  # the same for every problem
    for group in ("posterior", "posterior_predictive", "sample_stats", "log_likelihood", "observed_data"):
        parts = [idata[group].to_dataset() for idata in idatas if group in idata.children]
        if len(parts) == len(idatas):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                stacked = xr.concat(parts, dim="ovr_class", coords="minimal", compat="override")
                groups[group] = stacked.assign_coords(ovr_class=np.asarray(classes))
    return xr.DataTree.from_dict(groups)


def checked_samples(post, k):
    """The draws of a ``run_m3lak`` result as NumPy arrays; a non-finite draw raises, naming the
    variable and the one-vs-rest problem ``k``."""
    samples = {name: np.asarray(val) for name, val in post.samples.items()}
    for name, val in samples.items():
        if val.dtype.kind == "f" and not np.isfinite(val).all():
            raise FloatingPointError(
                f"the M3LAK sampler produced non-finite draws of {name!r} (one-vs-rest problem {k}); "
                "check the data scale (standardize=True) and the priors"
            )
    return samples


def dp_overflow_notes(post, k, n_problems, dp_capacity):
    """A note for the fit's warnings when a chain of problem ``k`` needed more DP components
    than ``dp_capacity`` (the spectral mixture was truncated); none otherwise."""
    if not np.any(np.asarray(post.last_state.latent.dp.overflow)):
        return []
    where = "" if n_problems == 1 else f" (one-vs-rest problem {k})"
    return [
        f"DP sampler needed more than dp_capacity={dp_capacity} components{where}: "
        "the spectral mixture was truncated; increase dp_capacity (or lower alpha)"
    ]


def posterior_outputs(raw, stats, Zs, targets, config, likelihood, random_seed, classes):
    """``(posterior_draws, inference_data)`` from the per-problem draws ``raw`` and sampler
    statistics ``stats`` on the standardised training views ``Zs`` and ±1 ``targets`` (one column
    per problem): the flattened draws the predictive needs, and the ArviZ posterior with latent
    axes aligned (:func:`align_latent_axes`), pointwise log-likelihood, replicated labels
    (drawn with ``[random_seed, k]``), the observed-view mask and named dimensions, stacked
    along ``ovr_class`` (labelled with ``classes``) for several problems."""
    n_views = len(Zs)
    coords, dims = posterior_dims(
        len(targets),
        [X.shape[1] for X in Zs],
        config.n_frequencies,
        config.n_latent,
        config.n_view_latent,
        config.noise,
    )
    keep = [f"W_{i}" for i in range(n_views)] + [f"V_{i}" for i in range(n_views)] + list(_PREDICT_KEYS)
    observed = observed_mask(Zs).T
    draws, idatas = [], []
    for k, (samples, problem_stats) in enumerate(zip(raw, stats)):
        draws.append({name: samples[name].reshape((-1,) + samples[name].shape[2:]) for name in keep})
        aligned, _ = align_latent_axes(samples, n_views)
        log_lik = pointwise_log_likelihood(samples["decision"], targets[:, k], config)
        replicates = replicate_labels(
            samples["decision"], likelihood, np.random.default_rng([random_seed, k])
        )
        idatas.append(
            to_inference_data(
                aligned,
                observed_data={"y": targets[:, k]},
                log_likelihood={"y": np.asarray(log_lik)},
                posterior_predictive={"y": replicates},
                constant_data={"observed": observed},
                coords=coords,
                dims=dims,
                extra_sample_stats=problem_stats,
            )
        )
    return draws, idatas[0] if len(idatas) == 1 else _stack_inference_data(idatas, classes)


class ProblemRun(NamedTuple):
    """One one-vs-rest problem's chains: its checked draws ``(chain, draw, ...)``, its sampler
    statistics and the chains' states (to continue them)."""

    samples: dict
    stats: dict
    state: object


def sample_problems(Zs, targets, config, num_samples, run_kwargs, random_states=None, init_states=None):
    """``run_m3lak`` for every column of ``targets`` (one-vs-rest problems), ``num_samples``
    draws each: fresh chains seeded by ``random_states``, or chains continued from
    ``init_states`` (no warm-up). Returns the :class:`ProblemRun` of each and the notes on DP
    truncation."""
    n_problems = targets.shape[1]
    runs, notes = [], []
    for k in range(n_problems):
        start = {"random_state": random_states[k]} if init_states is None else {"init_state": init_states[k]}
        # looked up on the package at each call, so that a wrapper of bayesmv.inference.run_m3lak sees it
        post = inference.run_m3lak(
            Zs, targets[:, k], config, num_samples=int(num_samples), **start, **run_kwargs
        )
        notes += dp_overflow_notes(post, k, n_problems, config.dp_capacity)
        stats = {key: np.asarray(val) for key, val in (post.extra_stats or {}).items()}
        runs.append(ProblemRun(checked_samples(post, k), stats, post.chain_states))
    return runs, notes


def appended_draws(earlier, later):
    """Per-problem dicts of arrays ``(chain, draw, ...)`` with the draws of ``later`` (the same
    problems and names) appended along the draw axis."""
    return [
        {name: np.concatenate([old, new[name]], axis=1) for name, old in e.items()}
        for e, new in zip(earlier, later)
    ]


class Continuation(NamedTuple):
    """What continuing a fit's chains needs: the standardised views ``Zs``, the ±1 ``targets``,
    the model ``config``, the sampler's ``run_kwargs``, every problem's chain ``states`` and the
    fit's ``notes`` on DP truncation."""

    Zs: list
    targets: np.ndarray
    config: object
    run_kwargs: dict
    states: list
    notes: list


def continued_problems(cont, num_samples):
    """Every problem's chains continued from ``cont.states`` by ``num_samples`` draws (no
    warm-up): ``(runs, continuation)``, the :class:`ProblemRun` of each and ``cont`` with the new
    states and the notes of both runs."""
    runs, notes = sample_problems(
        cont.Zs, cont.targets, cont.config, num_samples, cont.run_kwargs, init_states=cont.states
    )
    states = [run.state for run in runs]
    return runs, cont._replace(states=states, notes=sorted(set(cont.notes + notes)))
