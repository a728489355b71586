"""The :func:`run_m3lak` driver: chains through NumPyro's ``MCMC``, compiled once per shape
and settings, run in chunks, continued from their states, checked for non-finite blocks and
DP overflow."""

from __future__ import annotations

import math
from functools import lru_cache, partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.serialize_executable import deserialize_and_load, serialize
from joblib import Parallel, cpu_count, delayed
from numpyro.infer import MCMC

from ...datasets._validation import SEED_DEPRECATED, check_random_seed
from ...distributed import (
    check_partitionable_rng,
    check_uncached_collectives,
    compilation_cache_on,
    resolve_mesh,
)
from ...models.m3lak import M3LAKConfig
from .._threads import (
    SamplingStopped,
    one_cpu_device,
    pin_to_one_cpu,
    run_interruptibly,
    single_threaded_blas,
)
from .kernel import M3LAKKernel
from .progress import ChainProgress, FileReport
from .state import (
    BLOCK_NAMES,
    DPCapacityError,
    M3LAKNumericalError,
    M3LAKPosterior,
    _prepare_arrays,
    prepare_data,
    shard_m3lak_data,
    with_view_inputs,
)

__all__ = [
    "EXTRA_FIELDS",
    "run_m3lak",
]


class _RunSettings(NamedTuple):  # the static part of one run (hashable: a jit cache key)
    config: M3LAKConfig
    mesh: object
    n_valid: int | None
    num_warmup: int
    num_samples: int
    thinning: int


# At most this many calls of the draw program per chain and run (each call costs a dispatch).
_MAX_CHUNKS = 64
# Chunks are split further, down to _MIN_CHUNK sweeps, until a chain takes about _PROGRESS_CALLS
# calls: the progress bars move after each call (a loop of any length >= 2 draws the same numbers).
_PROGRESS_CALLS = 20
_MIN_CHUNK = 10
#: The per-draw sampler statistics every run collects (``M3LAKPosterior.extra_stats``).
EXTRA_FIELDS = (
    "accept_prob_H",
    "accept_prob_omega",
    "diverging",
    "diverging_H",
    "diverging_omega",
    "step_size_H",
    "step_size_omega",
)


def _numpyro_mcmc(
    settings: _RunSettings, num_chains=1, chain_method="sequential", progress_bar=False
) -> MCMC:
    kernel = M3LAKKernel(settings.config, mesh=settings.mesh, n_valid=settings.n_valid)
    return MCMC(
        kernel,
        num_warmup=settings.num_warmup,
        num_samples=settings.num_samples,
        num_chains=num_chains,
        chain_method=chain_method,
        progress_bar=progress_bar,
        thinning=settings.thinning,
        jit_model_args=True,
    )


def _collected(mcmc: MCMC, group_by_chain):
    extra = mcmc.get_extra_fields(group_by_chain=group_by_chain)
    return (
        mcmc.get_samples(group_by_chain=group_by_chain),
        {k: extra[k] for k in EXTRA_FIELDS},
        mcmc.last_state,
    )


@partial(jax.jit, static_argnums=0)
def _init_chain(settings: _RunSettings, key, data):
    """The state one chain starts from (what ``MCMC.run`` initialises with ``key``)."""
    kernel = M3LAKKernel(settings.config, mesh=settings.mesh, n_valid=settings.n_valid)
    return kernel.init(key, settings.num_warmup, None, (data,), {})


@partial(jax.jit, static_argnums=0)
def _draw_chain(settings: _RunSettings, state, data):
    """``settings.num_samples`` sweeps of one chain from ``state`` (NumPyro's
    ``post_warmup_state``, continued with the state's own key; the kernel adapts its step sizes
    while the sweep count is below ``num_warmup``), compiled once per (settings, shapes). Run
    outside a ``jit``, NumPyro re-traces and re-compiles its sampling loop on every run; under
    this ``jit`` a refit with new data of the same shapes, or a continuation, reuses the
    executable."""
    mcmc = _numpyro_mcmc(settings)
    mcmc.post_warmup_state = state
    mcmc.run(state.rng_key, data, extra_fields=EXTRA_FIELDS)
    return _collected(mcmc, group_by_chain=False)


@partial(jax.jit, static_argnums=0)
def _init_chains_vectorized(settings: _RunSettings, keys, data):
    return jax.vmap(lambda key: _init_chain(settings, key, data))(keys)


@partial(jax.jit, static_argnums=0)
def _draw_chains_vectorized(settings: _RunSettings, states, data):
    return jax.vmap(lambda state: _draw_chain(settings, state, data))(states)


def _clear_compiled_chains():
    """Drop the cached chain executables (after a test patches a conditional)."""
    for fn in (_init_chain, _draw_chain, _init_chains_vectorized, _draw_chains_vectorized):
        fn.clear_cache()


def _chunk_length(settings: _RunSettings):
    """Sweeps per call of the one compiled draw program: a divisor of ``gcd(num_warmup,
    num_samples)``, so that the warm-up, the draws and a continuation by ``num_samples`` share one
    executable (one compile of the sweep per fit); the smallest of at least ``_MIN_CHUNK`` sweeps
    that keeps a chain within ``_PROGRESS_CALLS`` calls (the progress bars move after each
    call), else the gcd. With thinning, a gcd of 1 (XLA compiles a one-sweep loop differently, so
    draws would differ from one ``MCMC.run`` by rounding, which the chain then amplifies), or
    more than ``_MAX_CHUNKS`` calls (e.g. 301 + 200 sweeps): ``num_samples``, and the warm-up
    runs as one chunk of ``num_warmup`` sweeps, a second program."""
    gcd = math.gcd(settings.num_warmup, settings.num_samples)
    sweeps = settings.num_warmup + settings.num_samples
    if not (settings.thinning == 1 and gcd >= 2 and sweeps // gcd <= _MAX_CHUNKS):
        return settings.num_samples
    divisors = [d for d in range(_MIN_CHUNK, gcd + 1) if gcd % d == 0 and sweeps // d <= _PROGRESS_CALLS]
    return divisors[0] if divisors else gcd


def _draw_calls(settings: _RunSettings, warm_up):
    """The run settings of each call of the draw program in one chain, in order: the warm-up's
    (when ``warm_up``: chunks of :func:`_chunk_length` sweeps, or one call of ``num_warmup``
    sweeps), then the draws' chunks."""
    length = _chunk_length(settings)
    chunk = settings._replace(num_samples=length)
    warm = []
    if warm_up:
        if settings.num_warmup % length:
            warm = [settings._replace(num_samples=settings.num_warmup, thinning=1)]
        else:
            warm = [chunk] * (settings.num_warmup // length)
    return warm, [chunk] * (settings.num_samples // length)


def _chunked_chain(settings: _RunSettings, init, draw, state, warm_up, axis, report=None, stop=None):
    """Warm-up (when ``warm_up``) and draws as the calls of ``draw`` that :func:`_draw_calls`
    lists. Each call continues the previous state, so the draws equal one ``MCMC.run``; after each,
    ``report`` (if given) is called with the sweeps done, and :class:`SamplingStopped` is raised
    once ``stop`` (a ``threading.Event``, :func:`run_interruptibly`) is set. Draws are joined on
    the host along ``axis``. Returns ``(samples, extra, last_state)``."""
    warm, draws = _draw_calls(settings, warm_up)

    def done_with(sweeps, state):
        jax.block_until_ready(state)
        if stop is not None and stop.is_set():
            raise SamplingStopped
        if report is not None:
            report(sweeps)

    if warm_up:
        state = init(state)
    done = 0
    for call in warm:
        state = draw(call, state)[2]
        done += call.num_samples
        done_with(done, state)
    parts = []
    for call in draws:
        samples, extra, state = draw(call, state)
        parts.append((samples, extra))
        done += call.num_samples
        done_with(done, state)
    joined = jax.tree.map(lambda *xs: np.concatenate([np.asarray(x) for x in xs], axis=axis), *parts)
    return joined[0], joined[1], state


def _sequential_chain(settings: _RunSettings, data, start, warm_up, report=None, stop=None):
    """One chain from a key (``warm_up``) or a state, as :func:`_chunked_chain` calls of the
    compiled :func:`_init_chain` / :func:`_draw_chain`."""
    return _chunked_chain(
        settings,
        lambda k: _init_chain(settings, k, data),
        lambda st, s: _draw_chain(st, s, data),
        start,
        warm_up,
        axis=0,
        report=report,
        stop=stop,
    )


def _compiled_programs(settings: _RunSettings, data, state, warm_up, run_init):
    """The init program (when ``warm_up``, else None) and the draw program of each setting in
    :func:`_draw_calls`, compiled for ``state`` and ``data``. The draw programs are compiled for
    the init program's output: its ``out_info`` or, with ``run_init``, the state it returns when
    run on ``state``."""
    init = None
    if warm_up:
        init = _init_chain.lower(settings, state, data).compile()
        state = init(state, data) if run_init else init.out_info
    warm, draws = _draw_calls(settings, warm_up)
    return init, {call: _draw_chain.lower(call, state, data).compile() for call in set(warm + draws)}


def _serialized_programs(settings: _RunSettings, data, start, warm_up):
    """The chain programs of a ``"processes"`` run (:func:`_compiled_programs`), compiled once in
    this process and serialized (``jax.experimental.serialize_executable``). Workers that load
    these do not compile: compilations running side by side share the cores. None where XLA:CPU
    cannot serialize the programs:

    - with JAX's persistent compilation cache on (a program read from it serializes without its
      code). The programs are then compiled here on the host values that a worker passes them
      (its first state and the data, as NumPy arrays), so that they enter the cache under the
      keys the workers look up, and each worker reads them from it;
    - if serializing raises (a program with a sort no longer serializes once it has run;
      lowering on abstract values gives these programs their own cache entries, so a
      ``"sequential"`` run of the same shapes does not share them). Each worker then compiles
      its own."""
    if compilation_cache_on():
        _compiled_programs(settings, jax.device_get(data), jax.device_get(start), warm_up, run_init=True)
        return None
    # lowered on abstract values (as the init program's out_info), so that a continuation
    # from concrete states finds the programs that the fit compiled
    state = jax.tree.map(
        lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=x.sharding, weak_type=x.aval.weak_type),
        jax.tree.map(jnp.asarray, start),
    )
    init, draws = _compiled_programs(settings, data, state, warm_up, run_init=False)
    try:
        init = None if init is None else serialize(init)
        return init, {call: serialize(program) for call, program in draws.items()}
    except jax.errors.JaxRuntimeError:
        return None


@lru_cache(maxsize=8)
def _loaded_program(payload, in_tree, out_tree):
    """A serialized program loaded in a worker (kept for refits of the same shapes). jaxlib loads
    its LAPACK kernels when it first lowers a LAPACK op, not when it loads a program that calls
    them (which then crashes), so one such op is lowered first."""
    jax.jit(jnp.linalg.cholesky).lower(np.eye(1))
    return deserialize_and_load(payload, in_tree, out_tree)


def _chains_in_worker(settings: _RunSettings, data, starts, warm_up, programs, slot, progress_files):
    """A worker process's share of ``chain_method="processes"``: one CPU device (a parent's
    forced device count is dropped) pinned to the ``slot``-th CPU (before its first chain starts
    JAX's backend, so XLA:CPU gets a one-thread pool), its chains one after another, by the
    ``programs`` of :func:`_serialized_programs` (or, where those are None or the worker's JAX
    had already started on several devices, by :func:`_sequential_chain`), returned as host
    (NumPy) arrays. Each chain reports its
    sweeps done to its file in ``progress_files`` (None: no report)."""
    one_cpu_device()
    pin_to_one_cpu(slot)
    reports = [None if path is None else FileReport(path) for path in progress_files]
    if jax.local_device_count() > 1:  # JAX started here before (another job of the pool)
        programs = None  # programs compiled for one device do not load on several
    with single_threaded_blas():
        if programs is None:
            return jax.device_get(
                [
                    _sequential_chain(settings, data, start, warm_up, report)
                    for start, report in zip(starts, reports)
                ]
            )
        init = None if programs[0] is None else _loaded_program(*programs[0])
        draws = {call: _loaded_program(*program) for call, program in programs[1].items()}

        def run_init(key):
            return init(key, data)

        def run_draw(call, state):
            return draws[call](state, data)

        return jax.device_get(
            [
                _chunked_chain(settings, run_init, run_draw, start, warm_up, 0, report)
                for start, report in zip(starts, reports)
            ]
        )


def _chains_in_processes(settings: _RunSettings, data, starts, warm_up, n_workers, progress):
    """The chains split into contiguous groups over ``n_workers`` worker processes (joblib's loky
    pool, kept alive between calls), each worker on its own CPU. The programs are compiled
    here, once (:func:`_serialized_programs`; under ``jax.distributed`` each worker compiles
    its own), and each worker runs the sequential program of its
    chains from their own keys or states, so the draws equal ``"sequential"`` ones in a one-CPU
    process. The workers' chains move the bars of ``progress`` (:class:`ChainProgress`) through
    files. Returns ``[(samples, extra, last state)]`` per chain."""
    groups = np.array_split(np.arange(len(starts)), n_workers)
    host_data = jax.device_get(data)
    # under jax.distributed the programs name this process's devices, which a worker lacks
    programs = (
        None
        if jax.process_count() > 1
        else run_interruptibly(lambda stop: _serialized_programs(settings, data, starts[0], warm_up))
    )
    files = progress.worker_files()
    parts = Parallel(n_jobs=n_workers, backend="loky")(
        delayed(_chains_in_worker)(
            settings,
            host_data,
            jax.device_get([starts[i] for i in group]),
            warm_up,
            programs,
            slot,
            [files[i] for i in group],
        )
        for slot, group in enumerate(groups)
    )
    return [
        (samples, extra, jax.tree.map(jnp.asarray, last)) for part in parts for samples, extra, last in part
    ]


def _process_count(settings: _RunSettings, chain_method, num_chains):
    """Worker processes of a ``chain_method="processes"`` run: one per CPU up to the chains, where
    the chains run on the CPU backend without a data mesh; otherwise none (1: this process), as
    with one CPU or one chain. (Workers would each claim an accelerator, and a data-sharded
    chain already spans the devices.)"""
    if chain_method != "processes" or settings.mesh is not None or jax.default_backend() != "cpu":
        return 1
    return min(num_chains, cpu_count())


def _process_chains(num_chains, spread):
    """The chains each process runs: ``np.array_split`` of the chain indices over the
    ``jax.distributed`` processes where ``spread`` (one group of all chains otherwise), and this
    process's share padded to the largest group's length by repeating its own chains (chain 0
    where it has none): every process then runs the same number of chains, and the copies are
    dropped when the chains are gathered (:func:`_gathered_chains`). Returns ``(groups, local)``."""
    groups = np.array_split(np.arange(num_chains), jax.process_count() if spread else 1)
    mine = groups[jax.process_index()] if spread else groups[0]
    local = np.resize(mine, len(groups[0])) if len(mine) else np.zeros(len(groups[0]), int)
    return groups, local


def _gathered_chains(tree, groups):
    """Every process's chains of ``tree`` (arrays with a leading axis of this process's padded
    chains, :func:`_process_chains`), in chain order on every process
    (``multihost_utils.process_allgather``). Returns NumPy arrays with a leading chain axis."""
    from jax.experimental import multihost_utils

    every = multihost_utils.process_allgather(jax.device_get(tree), tiled=False)
    rows = [(p, j) for p, group in enumerate(groups) for j in range(len(group))]
    return jax.tree.map(lambda x: np.stack([np.asarray(x[p, j]) for p, j in rows]), every)


def _chain_count(starts):
    """The chains of ``starts``: a list of keys or states, or one stacked state."""
    return len(starts) if isinstance(starts, list) else jax.tree.leaves(starts)[0].shape[0]


def _local_chains(settings: _RunSettings, chain_method, starts, warm_up, data, progress_bar):
    """The chains of ``starts`` (per-chain keys, or states: a list, stacked for
    ``"vectorized"`` and ``"parallel"``) in this process, by ``chain_method``. Returns
    ``(samples, extra, last)``: the draws with a leading chain axis, and the last states as
    ``states`` takes them."""
    n = _chain_count(starts)
    if chain_method == "parallel":  # NumPyro's own loop (and progress bar): one chain per device
        mcmc = _numpyro_mcmc(settings, n, chain_method, progress_bar)
        if warm_up:
            key = jnp.stack(starts) if n > 1 else starts[0]
        else:  # continue: NumPyro's post_warmup_state with its own keys
            mcmc.post_warmup_state = starts if n > 1 else jax.tree.map(lambda x: x[0], starts)
            key = mcmc.post_warmup_state.rng_key
        # Ctrl-C returns at once; the devices finish NumPyro's loop under way in the background
        run_interruptibly(lambda stop: mcmc.run(key, data, extra_fields=EXTRA_FIELDS))
        samples, extra, last = _collected(mcmc, group_by_chain=True)
        return samples, extra, last if n > 1 else jax.tree.map(lambda x: x[None], last)
    progress = ChainProgress(n, settings.num_warmup if warm_up else 0, settings.num_samples, progress_bar)
    with progress:
        if chain_method == "vectorized":
            return run_interruptibly(
                lambda stop: _chunked_chain(
                    settings,
                    lambda ks: _init_chains_vectorized(settings, ks, data),
                    lambda st, s: _draw_chains_vectorized(st, s, data),
                    jnp.stack(starts) if warm_up else starts,
                    warm_up,
                    axis=1,
                    report=lambda done: [progress.update(c, done) for c in range(n)],
                    stop=stop,
                )
            )
        n_workers = _process_count(settings, chain_method, n)
        if n_workers > 1:  # joblib ends the workers on Ctrl-C
            chains = _chains_in_processes(settings, data, starts, warm_up, n_workers, progress)
        else:
            chains = run_interruptibly(
                lambda stop: [
                    _sequential_chain(settings, data, start, warm_up, progress.report(c), stop)
                    for c, start in enumerate(starts)
                ]
            )
    samples, extra = jax.tree.map(lambda *xs: np.stack(xs), *[c[:2] for c in chains])
    return samples, extra, [c[2] for c in chains]


def _sample_chains(
    settings: _RunSettings, num_chains, chain_method, key, data, states=None, progress_bar=False
):
    """All chains with NumPyro's per-chain keys; ``"sequential"`` runs the one compiled chain
    once per key, so its draws equal ``MCMC(..., num_chains, chain_method="sequential")``;
    ``"processes"`` runs the same chains in worker processes (:func:`_chains_in_processes`);
    ``"parallel"`` is ``MCMC.run`` with one chain per device. ``"vectorized"`` chains (one
    chain runs as ``"sequential"``) are equally valid but draw other numbers: the sweep's ``rbg``
    keys (``_random.fast_key``) are not vmap-invariant. ``states``: per-chain states to continue
    from (a list for ``"sequential"`` and ``"processes"``, one stacked state for ``"vectorized"``
    and ``"parallel"``) instead of a warm-up. In a ``jax.distributed`` run without a data mesh
    the chains are spread over the processes (:func:`_process_chains`) and gathered on every
    process. Returns ``(samples, extra, last, chain_states)``: the draws with a leading chain
    axis, the last state (stacked over the chains where there are several) and what ``states``
    takes. ``progress_bar``: one bar per chain of this process (:class:`ChainProgress`,
    NumPyro's for ``"parallel"``); the draws are the same with or without it."""
    warm_up = states is None
    if chain_method == "vectorized" and num_chains == 1:
        chain_method = "sequential"
    spread = settings.mesh is None and jax.process_count() > 1
    groups, local = _process_chains(num_chains, spread)
    if warm_up:
        keys = [key] if num_chains == 1 else list(jax.random.split(key, num_chains))
        starts = [keys[i] for i in local]
    elif not spread:
        starts = states
    elif isinstance(states, list):
        starts = [states[i] for i in local]
    else:
        starts = jax.tree.map(lambda x: x[local], states)
    samples, extra, lasts = _local_chains(settings, chain_method, starts, warm_up, data, progress_bar)
    stacked = not isinstance(lasts, list)
    if spread:
        last = lasts if stacked else jax.tree.map(lambda *xs: jnp.stack(xs), *lasts)
        samples, extra, last = _gathered_chains((samples, extra, last), groups)
        last = jax.tree.map(jnp.asarray, last)
        lasts = last if stacked else [jax.tree.map(lambda x: x[c], last) for c in range(num_chains)]
    if stacked:
        last = lasts if num_chains > 1 else jax.tree.map(lambda x: x[0], lasts)
    else:
        last = lasts[0] if num_chains == 1 else jax.tree.map(lambda *xs: jnp.stack(xs), *lasts)
    return samples, extra, last, lasts


def run_m3lak(
    Xs,
    y,
    config: M3LAKConfig,
    *,
    num_warmup,
    num_samples,
    num_chains=1,
    chain_method="sequential",
    random_state=0,
    progress_bar=False,
    thinning=1,
    mesh=None,
    shard_data=False,
    on_dp_overflow="raise",
    init_state=None,
    seed=SEED_DEPRECATED,
) -> M3LAKPosterior:
    """Run the composite M3LAK kernel through :class:`numpyro.infer.MCMC`.

    The chains' warm-up (step-size adaptation) then ``num_samples`` sweeps each, checked for
    non-finite blocks and DP overflow; or, with ``init_state``, a continuation of a previous
    run's chains. For ``"sequential"``, ``"vectorized"`` and ``"processes"`` chains the compiled
    loop is cached across calls: a refit of the same shapes and settings does not recompile.

    Parameters
    ----------
    Xs : list of array-like of shape (N, D_i)
        The views, float; an all-NaN row is a missing view.
    y : array-like of shape (N,)
        The labels, -1 or +1.
    config : M3LAKConfig
        The model and sampler settings; validated first.
    num_warmup : int
        Warm-up sweeps per chain (the HMC step sizes adapt); none with ``init_state``.
    num_samples : int
        Sweeps per chain after the warm-up.
    num_chains : int, default=1
        The number of chains.
    chain_method : {"sequential", "vectorized", "parallel", "processes"}, default="sequential"
        How the chains run: one after another, as one vectorised program, one per device
        (``pmap``, NumPyro's ``MCMC.run``), or in worker processes (see Notes).
    random_state : int, numpy.random.RandomState, numpy.random.Generator or None, default=0
        The seed of the chains' keys: an int ``>= 0`` as it is, a draw from a ``RandomState`` or
        ``Generator``, fresh entropy for None.
    progress_bar : bool, default=False
        Show one bar per chain (:class:`~bayesmv.inference.m3lak_sampler.progress.ChainProgress`;
        the same draws without it); ``"parallel"``: NumPyro's progress bar.
    thinning : int, default=1
        Keep every ``thinning``-th draw (NumPyro's ``thinning``).
    mesh : jax.sharding.Mesh or None, default=None
        An explicit device mesh for a data-sharded sweep (see Notes).
    shard_data : bool or int, default=False
        Shard the data over every device (True) or over the first ``k`` (an int); False: not
        sharded, unless ``mesh`` is given.
    on_dp_overflow : {"raise", "ignore"}, default="raise"
        What a DP table overflow does: raise :class:`DPCapacityError`, or nothing (the caller
        checks ``post.last_state.latent.dp.overflow``, as ``M3LAKClassifier`` does).
    init_state : object or None, default=None
        A previous run's ``chain_states``: every chain continues from where it stopped, without
        warm-up (see Notes).
    seed : int, numpy.random.RandomState, numpy.random.Generator or None, default="deprecated"
        Deprecated alias of ``random_state``; when given it replaces ``random_state`` with a
        ``FutureWarning``.

    Returns
    -------
    posterior : M3LAKPosterior
        The draws grouped by chain ``(chain, draw, ...)``, the per-draw sampler statistics
        (:data:`EXTRA_FIELDS`), the last state and the chains' states (``chain_states``).

    Raises
    ------
    TypeError
        If ``config`` is not an ``M3LAKConfig`` or ``mesh`` is not a ``jax.sharding.Mesh``.
    ValueError
        If ``config`` fails its validation; ``on_dp_overflow``, ``chain_method``, ``shard_data``
        or ``random_state`` is not one of the values above; the data are invalid
        (:func:`~bayesmv.inference.m3lak_sampler.state.prepare_data`); or a data-sharded run
        asks for ``chain_method="parallel"``.
    M3LAKNumericalError
        If any block produced non-finite values (the error names the block).
    DPCapacityError
        If the DP needed more than ``config.dp_capacity`` components and
        ``on_dp_overflow="raise"``.

    Warns
    -----
    FutureWarning
        When ``seed`` is given.
    RuntimeWarning
        When the data are sharded and ``jax_threefry_partitionable`` is off (the draws then
        differ from the unsharded run's).

    Notes
    -----
    **Chain methods.** ``"parallel"`` uses ``MCMC.run`` directly (and its progress bar), which
    compiles on every call. ``"parallel"`` chains (``pmap``) start from the same per-chain keys
    as ``"sequential"`` ones and equal them to rounding at first; the two compiled programs round
    differently and the chains drift apart, so at realistic lengths they are other draws of the
    same posterior. ``"processes"`` runs the sequential program of the chains in
    ``min(num_chains, CPUs)`` worker processes (compiled once here and loaded by the workers),
    each pinned to its own CPU with a one-thread XLA pool: the draws of ``"sequential"`` in a
    one-CPU process, whatever the machine's core count, in less time where it has more than one
    core (in a process with several CPUs XLA splits some sums over its threads, so at larger
    shapes ``"sequential"`` draws round differently); with one worker, on an accelerator backend
    or with a data mesh it runs them in this process.

    **Data-sharded sweep** (``shard_data=True``: every device, an int: that many, or an explicit
    ``mesh``): ``X``, ``H``, ``U``, ``λ`` and the masks are sharded along ``N`` over the mesh
    (padded to a multiple of its size with masked-out rows) and XLA inserts the collectives for
    the sums over samples; the draws equal the unsharded run up to floating-point rounding. Not
    with ``chain_method="parallel"`` (which uses the devices for chains); ``"processes"`` then
    runs the chains in this process. See ``bayesmv.distributed``.

    **Continuing chains.** With ``init_state`` (a previous run's ``chain_states``) every chain
    continues from where it stopped, without warm-up (NumPyro's ``post_warmup_state``), and a run
    of ``num_samples`` then one of ``num_samples2`` draws equals one run of
    ``num_samples + num_samples2``. Pass the previous run's data, config, ``num_warmup``,
    ``num_chains`` and ``chain_method``; with its ``num_samples`` too, the compiled sampling loop
    is reused. With ``on_dp_overflow="ignore"`` the caller reports an overflow itself, as
    ``M3LAKClassifier`` does with a ``SamplerWarning``.
    """
    seed = check_random_seed(random_state, seed, "run_m3lak")
    if not isinstance(config, M3LAKConfig):
        raise TypeError(f"config must be an M3LAKConfig; got {type(config).__name__}")
    config.validate()
    if on_dp_overflow not in ("raise", "ignore"):
        raise ValueError(f"on_dp_overflow must be 'raise' or 'ignore', got {on_dp_overflow!r}")
    if chain_method not in ("sequential", "vectorized", "parallel", "processes"):
        raise ValueError(
            "chain_method must be 'sequential', 'vectorized', 'parallel' or 'processes', got "
            f"{chain_method!r}"
        )
    mesh = resolve_mesh(mesh, shard_data)
    if mesh is None:
        data, n_valid = prepare_data(Xs, y), None
    else:
        if chain_method == "parallel":
            raise ValueError(
                "a data-sharded run (shard_data/mesh) uses the devices for the samples; use "
                "chain_method='sequential', 'vectorized' or 'processes' (which then runs the "
                "chains in this process), not 'parallel'"
            )
        check_partitionable_rng()
        check_uncached_collectives(mesh)
        data, n_valid = shard_m3lak_data(_prepare_arrays(Xs, y), mesh)
    data = with_view_inputs(data, config, n_valid)
    settings = _RunSettings(config, mesh, n_valid, int(num_warmup), int(num_samples), int(thinning))
    key = jax.random.PRNGKey(seed)
    with single_threaded_blas():
        samples, extra, last, chain_states = _sample_chains(
            settings, int(num_chains), chain_method, key, data, init_state, bool(progress_bar)
        )
    flags = np.atleast_1d(np.asarray(last.nonfinite))
    if np.any(flags != 0):
        code = int(flags[flags != 0][0])
        raise M3LAKNumericalError(
            f"M3LAK sampler: the {BLOCK_NAMES[code]} update produced non-finite values "
            "(check the data scaling and the hyper-parameters, e.g. C, eta, a_tau/b_tau)"
        )
    overflow = np.atleast_1d(np.asarray(last.latent.dp.overflow))
    if np.any(overflow) and on_dp_overflow == "raise":
        raise DPCapacityError(
            f"DP sampler needed more than dp_capacity={config.dp_capacity} components; "
            "increase M3LAKConfig.dp_capacity (or lower alpha)"
        )
    return M3LAKPosterior(dict(samples), dict(extra), last, chain_states)
