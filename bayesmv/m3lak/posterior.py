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
    "extension_can_converge",
    "posterior_dims",
    "posterior_outputs",
    "ProblemRun",
    "sample_problems",
    "procrustes_rotations",
    "replicate_labels",
    "thinned_draws",
]

# Posterior fields the predictive needs (besides the per-view "W_i", "V_i"; "gamma" when drawn).
_PREDICT_KEYS = ("beta", "omega", "tau")


def procrustes_rotations(Ws, n_iter=3):
    """Orthogonal rotations that turn every draw's latent axes to one reference (Procrustes).

    ``Q_s`` rotates draw ``s``'s stacked loadings ``[W_1; …; W_V] Q_s`` closest (Frobenius) to
    one reference: orthogonal Procrustes, ``Q_s = U Vᵀ`` from the SVD of ``W_sᵀ R``, with ``R``
    the last draw, then ``n_iter - 1`` times the mean of the aligned draws.

    The likelihood is invariant under ``(H, W_i, Ω) → (H Q, W_i Q, Ω Q)`` (``ωᵀh`` and ``W h``
    unchanged), so aligned draws give the same decision values.

    Parameters
    ----------
    Ws : list of array-like of shape (S, D_i, m)
        Per view, the draws of its loadings ``W_i``.
    n_iter : int, default=3
        Number of alignments: the first to the last draw, the others to the mean of the
        aligned draws.

    Returns
    -------
    Q : ndarray of shape (S, m, m)
        One orthogonal ``Q_s`` per draw.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.m3lak import procrustes_rotations
    >>> rng = np.random.default_rng(0)
    >>> Q = procrustes_rotations([rng.normal(size=(4, 5, 2)), rng.normal(size=(4, 3, 2))])
    >>> Q.shape, np.allclose(Q @ Q.transpose(0, 2, 1), np.eye(2))
    ((4, 2, 2), True)
    """
    W = np.concatenate([np.asarray(Wi) for Wi in Ws], axis=1)
    ref = W[-1]
    for _ in range(n_iter):
        U, _, Vt = np.linalg.svd(np.einsum("sdi,dj->sij", W, ref))
        Q = U @ Vt
        ref = np.einsum("sdi,sij->dj", W, Q) / len(W)
    return Q


def align_latent_axes(samples, n_views):
    """Draws ``(chain, draw, ...)`` turned to one orientation of the shared latent space.

    The rotations are :func:`procrustes_rotations` over all chains: ``W_i Q``, ``Ω Q``, and
    ``r`` as the precisions of the rotated columns, ``r'_j = 1 / Σ_k Q_kj² / r_k`` (a
    permutation of ``r`` when ``Q`` is a signed permutation). Other variables are returned as
    they are.

    Parameters
    ----------
    samples : dict of str to array-like
        The draws by name, each ``(chain, draw, ...)``; needs ``"omega"`` ``(chain, draw, M,
        m)``, ``"r"`` ``(chain, draw, V, m)`` and ``"W_0"``, … ``(chain, draw, D_i, m)``.
    n_views : int
        Number of views ``V``.

    Returns
    -------
    aligned : dict of str to ndarray
        The draws, same names and shapes, the latent axes aligned.
    Q : ndarray of shape (chain, draw, m, m)
        The rotation of each draw.
    """
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
    """Posterior predictive replicates ``y_rep ∈ {-1, +1}`` of the training labels, one per draw.

    ``P(y_rep = 1) = σ(f)`` (logistic); ``sign(f)`` for the hinge, whose pseudo-likelihood is
    no distribution over ``y`` (its ``predict_proba`` is the same vote).

    Parameters
    ----------
    decision : array-like of shape (..., N)
        Draws of the decision values ``f`` (e.g. ``(chain, draw, N)``).
    likelihood : {"hinge", "logistic"}
        The model's likelihood.
    rng : numpy.random.Generator
        The generator of the logistic replicates (unused for the hinge).

    Returns
    -------
    y_rep : ndarray of shape (..., N)
        The replicates, ±1.0, one per draw of ``f``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.m3lak import replicate_labels
    >>> replicate_labels([[-1.0, 2.0]], "hinge", np.random.default_rng(0))
    array([[-1.,  1.]])
    """
    decision = np.asarray(decision)
    if likelihood == "logistic":
        return np.where(rng.random(decision.shape) < expit(decision), 1.0, -1.0)
    return np.where(decision > 0, 1.0, -1.0)


def posterior_dims(
    n_samples,
    n_features_per_view,
    n_frequencies,
    n_latent,
    n_view_latent,
    noise="view",
    view_features=None,
    n_view_frequencies=None,
):
    """Coordinates and dimension names of every M3LAK draw's axes, for ``az.from_dict``.

    The dimensions: ``obs_id`` (training points), ``view``, ``feature_i`` (view i's features),
    ``latent`` (shared, m), ``view_latent`` (per view, K), ``frequency`` (M), ``rff_feature``
    (``cos_j``, ``sin_j``, ``bias``: the 2M + 1 entries of β), ``dp_component``; with
    ``noise="feature"`` τ's axis is ``view_feature`` (``"i:d"``, feature d of view i); with
    ``view_features`` γ's axis is ``view_input``: ``"i:d"`` (``"linear"``) or ``"i:cos_j"``,
    ``"i:sin_j"`` (``"rff"``, frequency j of view i).

    Parameters
    ----------
    n_samples : int
        Number of training points ``N``.
    n_features_per_view : sequence of int
        Each view's number of features ``D_i``.
    n_frequencies : int
        Number of frequencies ``M``.
    n_latent : int
        Dimension ``m`` of the shared latent space.
    n_view_latent : int
        Dimension ``K`` of each view's own latent space.
    noise : {"view", "feature"}, default="view"
        One noise precision per view or per feature.
    view_features : {None, "linear", "rff"}, default=None
        What the classifier sees of the views (``M3LAKPriors.view_features``).
    n_view_frequencies : int or None, default=None
        The random Fourier frequencies per view with ``view_features="rff"``.

    Returns
    -------
    coords : dict of str to array-like
        The coordinates of each dimension (``dp_component`` has none).
    dims : dict of str to list of str
        The dimensions of each variable, after ``(chain, draw)``.

    Examples
    --------
    >>> from bayesmv.m3lak import posterior_dims
    >>> coords, dims = posterior_dims(3, [2, 1], 4, 2, 1)
    >>> dims["W_1"], coords["rff_feature"][-1], dims["tau"]
    (['feature_1', 'latent'], 'bias', ['view'])
    """
    M = n_frequencies
    coords = {
        "obs_id": np.arange(n_samples),
        "view": np.arange(len(n_features_per_view)),
        "latent": np.arange(n_latent),
        "view_latent": np.arange(n_view_latent),
        "frequency": np.arange(M),
        "rff_feature": [f"cos_{j}" for j in range(M)] + [f"sin_{j}" for j in range(M)] + ["bias"],
    }
    features = [f"{i}:{d}" for i, D in enumerate(n_features_per_view) for d in range(D)]
    if noise == "feature":
        coords["view_feature"] = features
    if view_features == "linear":
        coords["view_input"] = features
    elif view_features == "rff":
        waves = [f"{w}_{j}" for w in ("cos", "sin") for j in range(n_view_frequencies)]
        coords["view_input"] = [f"{i}:{w}" for i in range(len(n_features_per_view)) for w in waves]
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
        "gamma": ["view_input"],
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
    """The draws of a ``run_m3lak`` result as NumPy arrays, checked to be finite.

    Parameters
    ----------
    post : bayesmv.inference.M3LAKPosterior
        The result of ``run_m3lak``.
    k : int
        The one-vs-rest problem's index, for the message.

    Returns
    -------
    samples : dict of str to ndarray
        The draws by name, ``(chain, draw, ...)``.

    Raises
    ------
    FloatingPointError
        If a draw is not finite, naming the variable and the one-vs-rest problem ``k``.
    """
    samples = {name: np.asarray(val) for name, val in post.samples.items()}
    for name, val in samples.items():
        if val.dtype.kind == "f" and not np.isfinite(val).all():
            raise FloatingPointError(
                f"the M3LAK sampler produced non-finite draws of {name!r} (one-vs-rest problem {k}); "
                "check the data scale (standardize=True) and the priors"
            )
    return samples


def dp_overflow_notes(post, k, n_problems, dp_capacity):
    """A note for the fit's warnings when a chain needed more DP components than ``dp_capacity``.

    Parameters
    ----------
    post : bayesmv.inference.M3LAKPosterior
        The result of ``run_m3lak`` for problem ``k``.
    k : int
        The one-vs-rest problem's index.
    n_problems : int
        Number of one-vs-rest problems (the note names ``k`` when there are several).
    dp_capacity : int
        The DP truncation, for the note.

    Returns
    -------
    notes : list of str
        One note when a chain of problem ``k`` needed more components than ``dp_capacity``
        (the spectral mixture was truncated); empty otherwise.
    """
    if not np.any(np.asarray(post.last_state.latent.dp.overflow)):
        return []
    where = "" if n_problems == 1 else f" (one-vs-rest problem {k})"
    return [
        f"DP sampler needed more than dp_capacity={dp_capacity} components{where}: "
        "the spectral mixture was truncated; increase dp_capacity (or lower alpha)"
    ]


def posterior_outputs(raw, stats, Zs, targets, config, likelihood, random_seed, classes):
    """The flattened draws the predictive needs and the ArviZ posterior of a fit.

    The ArviZ posterior has latent axes aligned (:func:`align_latent_axes`), pointwise
    log-likelihood, replicated labels (drawn with ``[random_seed, k]``), the observed-view mask
    and named dimensions, stacked along ``ovr_class`` (labelled with ``classes``) for several
    problems.

    Parameters
    ----------
    raw : list of dict of str to ndarray
        Per one-vs-rest problem, the draws ``(chain, draw, ...)``.
    stats : list of dict of str to ndarray
        Per problem, the sampler statistics.
    Zs : list of ndarray of shape (N, D_i)
        The standardised training views, NaN rows for missing views.
    targets : ndarray of shape (N, n_problems)
        The ±1 targets, one column per problem.
    config : M3LAKConfig
        The model's settings.
    likelihood : {"hinge", "logistic"}
        The model's likelihood, for the replicated labels.
    random_seed : int
        Seed of the replicated labels.
    classes : array-like of shape (n_problems,)
        The labels of the ``ovr_class`` coordinate (used with several problems).

    Returns
    -------
    posterior_draws : list of dict of str to ndarray
        Per problem, the draws the predictive needs (``W_i``, ``V_i``, ``beta``, ``omega``,
        ``tau``), chains flattened: each ``(chain * draw, ...)``.
    inference_data : xarray.DataTree
        The ArviZ posterior.
    """
    n_views = len(Zs)
    coords, dims = posterior_dims(
        len(targets),
        [X.shape[1] for X in Zs],
        config.n_frequencies,
        config.n_latent,
        config.n_view_latent,
        config.noise,
        config.view_features,
        config.n_view_frequencies,
    )
    keep = [f"W_{i}" for i in range(n_views)] + [f"V_{i}" for i in range(n_views)] + list(_PREDICT_KEYS)
    keep += ["gamma"] if "gamma" in raw[0] else []
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
    statistics and the chains' states (to continue them).

    Parameters
    ----------
    samples : dict of str to ndarray
        The draws by name, each of shape ``(chain, draw, ...)``, checked to be finite
        (:func:`checked_samples`).
    stats : dict of str to ndarray
        The per-draw sampler statistics by name
        (:data:`~bayesmv.inference.m3lak_sampler.run.EXTRA_FIELDS`), each of shape
        ``(chain, draw)``.
    state : object
        The chains' states, ``run_m3lak``'s ``chain_states``: what its ``init_state`` takes to
        continue them.
    """

    samples: dict
    stats: dict
    state: object


def sample_problems(Zs, targets, config, num_samples, run_kwargs, random_states=None, init_states=None):
    """Run ``run_m3lak`` for every column of ``targets`` (one-vs-rest problems).

    Each gets ``num_samples`` draws: fresh chains seeded by ``random_states``, or chains
    continued from ``init_states`` (no warm-up). ``run_m3lak`` is looked up on
    ``bayesmv.inference`` at each call, so that a wrapper of it sees the call.

    Parameters
    ----------
    Zs : list of ndarray of shape (N, D_i)
        The standardised training views, NaN rows for missing views.
    targets : ndarray of shape (N, n_problems)
        The ±1 targets, one column per problem.
    config : M3LAKConfig
        The model's settings.
    num_samples : int
        Draws per chain.
    run_kwargs : dict
        The other keywords of ``run_m3lak`` (:func:`~bayesmv.m3lak.settings.run_options`).
    random_states : sequence, default=None
        Per problem, the seed of fresh chains; used when ``init_states`` is None.
    init_states : sequence, default=None
        Per problem, the chain states to continue.

    Returns
    -------
    runs : list of ProblemRun
        The :class:`ProblemRun` of each problem.
    notes : list of str
        The notes on DP truncation (:func:`dp_overflow_notes`).

    Raises
    ------
    FloatingPointError
        If a draw is not finite (:func:`checked_samples`).
    """
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


def appended_draws(earlier, later, stride=1, start=0):
    """Per-problem draws with those of a later run appended along the draw axis.

    Parameters
    ----------
    earlier : list of dict of str to ndarray
        Per problem, the draws ``(chain, draw, ...)``.
    later : list of dict of str to ndarray
        The same problems and names, the later draws.
    stride : int, default=1
        Keep every ``stride``-th of the later draws (those kept at a thinning of ``stride``)...
    start : int, default=0
        ...from this one on.

    Returns
    -------
    draws : list of dict of str to ndarray
        Per problem, ``earlier``'s arrays followed by ``later``'s kept ones along axis 1.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.m3lak.posterior import appended_draws
    >>> appended_draws([{"beta": np.zeros((2, 3))}], [{"beta": np.ones((2, 1))}])[0]["beta"].shape
    (2, 4)
    >>> appended_draws([{"beta": np.zeros((1, 2))}], [{"beta": np.arange(5.0)[None]}], stride=2, start=1)[0]["beta"]
    array([[0., 0., 1., 3.]])
    """
    return [
        {name: np.concatenate([old, new[name][:, start::stride]], axis=1) for name, old in e.items()}
        for e, new in zip(earlier, later)
    ]


def thinned_draws(draws, stride):
    """Per-problem draws, every ``stride``-th along the draw axis from the first (copies, so
    that the dropped draws' memory is released).

    Parameters
    ----------
    draws : list of dict of str to ndarray
        Per problem, the draws ``(chain, draw, ...)``.
    stride : int
        Keep every ``stride``-th draw.

    Returns
    -------
    draws : list of dict of str to ndarray
        Per problem, the kept draws.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesmv.m3lak.posterior import thinned_draws
    >>> thinned_draws([{"beta": np.arange(5.0)[None]}], 2)[0]["beta"]
    array([[0., 2., 4.]])
    """
    return [{name: np.ascontiguousarray(a[:, ::stride]) for name, a in d.items()} for d in draws]


def extension_can_converge(report, draws_run, draws_left):
    """Whether running every chain ``draws_left`` draws longer may make ``report`` pass.

    Its r̂ must be finite (two or more chains); the chains must hold the report's ``ess_min``
    draws or more together (shorter runs were asked to be short); and its smallest bulk or tail
    ESS, grown in proportion to the chains' length from ``draws_run`` to ``draws_run +
    draws_left``, must reach half of ``ess_min``: a chain that mixes slowly gains ESS in
    proportion to its length, and the smallest ESS over many values is a noisy estimate, so
    that only chains that would stay far short of the threshold are not run longer.

    Parameters
    ----------
    report : ConvergenceReport
        The report on the variables that decide (``check_convergence``), with its thresholds.
    draws_run : int
        Draws per chain so far (after warm-up).
    draws_left : int
        Draws per chain that may still be added.

    Returns
    -------
    bool

    Examples
    --------
    >>> from bayesmv.diagnostics import ConvergenceReport, VariableDiagnostics
    >>> from bayesmv.m3lak.posterior import extension_can_converge
    >>> diagnostics = [VariableDiagnostics("decision", 1.02, 70.0, 300.0, False)]
    >>> report = ConvergenceReport(diagnostics, 1.01, 400, n_chains=4, n_draws=2000)
    >>> extension_can_converge(report, 2000, 4000), extension_can_converge(report, 2000, 2000)
    (True, False)
    """
    ess = min(min(v.ess_bulk, v.ess_tail) for v in report.variables)
    finite = all(np.isfinite(v.r_hat) for v in report.variables) and np.isfinite(ess)
    long_enough = report.n_chains * draws_run >= report.ess_min
    return bool(finite and long_enough and ess * (draws_run + draws_left) / draws_run >= report.ess_min / 2)


class Continuation(NamedTuple):
    """What continuing a fit's chains needs: the standardised views ``Zs``, the ±1 ``targets``,
    the model ``config``, the sampler's ``run_kwargs``, every problem's chain ``states`` and the
    fit's ``notes`` on DP truncation.

    Parameters
    ----------
    Zs : list of ndarray of shape (N, D_i)
        The standardised training views, NaN rows for missing views.
    targets : ndarray of shape (N, n_problems)
        The ±1 targets, one column per one-vs-rest problem.
    config : M3LAKConfig
        The model's settings.
    run_kwargs : dict
        The other keywords of ``run_m3lak`` (:func:`~bayesmv.m3lak.settings.run_options`).
    states : list
        Per problem, the chains' states (:attr:`ProblemRun.state`).
    notes : list of str
        The notes on DP truncation (:func:`dp_overflow_notes`).
    """

    Zs: list
    targets: np.ndarray
    config: object
    run_kwargs: dict
    states: list
    notes: list


def continued_problems(cont, num_samples):
    """Every problem's chains continued from ``cont.states`` by ``num_samples`` draws (no warm-up).

    Parameters
    ----------
    cont : Continuation
        What continuing the fit's chains needs.
    num_samples : int
        Draws per chain.

    Returns
    -------
    runs : list of ProblemRun
        The :class:`ProblemRun` of each problem.
    continuation : Continuation
        ``cont`` with the new states and the notes of both runs.

    Raises
    ------
    FloatingPointError
        If a draw is not finite (:func:`checked_samples`).
    """
    runs, notes = sample_problems(
        cont.Zs, cont.targets, cont.config, num_samples, cont.run_kwargs, init_states=cont.states
    )
    states = [run.state for run in runs]
    return runs, cont._replace(states=states, notes=sorted(set(cont.notes + notes)))
