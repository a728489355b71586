"""Shared test plumbing.

* ``hypothesis_cases``: a session-wide counter of generated property-test cases (keyed by test);
  the total is printed in pytest's terminal summary (independent of ``-s``; pytest-xdist workers
  send theirs to the controller).
* JAX compile time: the seconds each test (its set-up included) spends tracing, lowering and
  compiling XLA programs in the test process (``jax.monitoring``'s compile events; a
  persistent-cache hit counts its read time; compiles in subprocesses, such as the notebooks'
  kernels and the chain worker processes, are not seen), summed over the run and printed, with
  the tests that compile longest, in the terminal summary beside ``--durations``; and the XLA
  compiles by program name (``jit__draw_chain``, ...): how many and how long, the longest first.
* CPU time: the CPU seconds (user and system) each test (its set-up included) spends in the test
  process and in the subprocesses it waits for (``getrusage``), summed over the run and printed
  with the tests that take the most. Unlike ``--durations``, it does not grow when other work
  shares the cores.
* ``tiny_problem`` / ``fitted_estimator``: one tiny data set and one lazily fitted instance of
  each public estimator per session (shared by the reliability and persistence tests, so the
  expensive M3LAK compile happens once).
"""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

_CASES_KEY = pytest.StashKey[collections.Counter]()
_COMPILE_KEY = pytest.StashKey[collections.Counter]()  # test node id -> JAX compile seconds
_PROGRAM_KEY = pytest.StashKey[collections.Counter]()  # program name -> XLA compile seconds
_PROGRAM_COUNT_KEY = pytest.StashKey[collections.Counter]()  # program name -> XLA compiles
_COMPILE_EVENTS = (
    "/jax/core/compile/jaxpr_trace_duration",
    "/jax/core/compile/jaxpr_to_mlir_module_duration",
    "/jax/core/compile/backend_compile_duration",
)
_CACHE_KEY = pytest.StashKey[collections.Counter]()  # persistent-cache hits, writes, seconds saved
_CPU_KEY = pytest.StashKey[collections.Counter]()  # test node id -> CPU seconds, subprocesses included
_current_test = ["(collection)"]  # the node id that compile events are charged to


def pytest_configure(config):
    config.stash[_CASES_KEY] = collections.Counter()
    config.stash[_COMPILE_KEY] = collections.Counter()
    config.stash[_PROGRAM_KEY] = collections.Counter()
    config.stash[_PROGRAM_COUNT_KEY] = collections.Counter()
    config.stash[_CACHE_KEY] = collections.Counter()
    config.stash[_CPU_KEY] = collections.Counter()
    _enable_compilation_cache(config)
    stash = config.stash
    _record_compile_time(
        stash[_COMPILE_KEY], stash[_CACHE_KEY], stash[_PROGRAM_KEY], stash[_PROGRAM_COUNT_KEY]
    )


# The suite's persistent compilation cache, kept in the checkout between runs (not in
# .pytest_cache: pytest-xdist's workers empty that again under --cache-clear, while the other
# worker may be writing). It is emptied when a run starts with more than _KEPT_CACHE_BYTES in it
# (one full run writes about 80 MB; every change to a program adds its entries): JAX's own bound,
# jax_compilation_cache_max_size, takes a file lock around every read and write of the cache.
_CACHE_DIR = ".jax_compilation_cache"
_KEPT_CACHE_BYTES = 2 * 1024**3
# Programs that XLA compiles in at least this many seconds enter the cache (JAX's default is 1 s;
# the suite compiles hundreds of programs of 0.2–1 s, which a later run then reads).
_CACHE_MIN_COMPILE_SECONDS = 0.2


def _enable_compilation_cache(config):
    """JAX's persistent compilation cache, shared by the pytest-xdist workers and inherited by
    subprocesses through ``JAX_COMPILATION_CACHE_DIR``: a program that the suite compiled before,
    in this run or an earlier one in this checkout, is read instead of compiled. Results are
    unchanged (the same executable). The directory is ``.jax_compilation_cache`` in the
    repository's root (a fresh clone starts without it); set ``JAX_COMPILATION_CACHE_DIR`` to
    choose another, or ``BAYESMV_TEST_NO_JAX_CACHE=1`` to run without the cache."""
    import os

    if os.environ.get("BAYESMV_TEST_NO_JAX_CACHE"):
        return
    min_seconds = os.environ.setdefault(
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", str(_CACHE_MIN_COMPILE_SECONDS)
    )
    path = os.environ.get("JAX_COMPILATION_CACHE_DIR")
    if not path:  # the controller, or a run without pytest-xdist; the workers inherit the variable
        path = str(config.rootpath / _CACHE_DIR)
        os.makedirs(path, exist_ok=True)
        _empty_when_larger(path, _KEPT_CACHE_BYTES)
        os.environ["JAX_COMPILATION_CACHE_DIR"] = path
    import jax

    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", float(min_seconds))


def _empty_when_larger(path, max_bytes):
    """Remove every file in ``path`` when together they hold more than ``max_bytes``."""
    import os

    files = [entry for entry in os.scandir(path) if entry.is_file()]
    if sum(entry.stat().st_size for entry in files) > max_bytes:
        for entry in files:
            os.remove(entry.path)


def _record_compile_time(seconds, cache, program_seconds, program_compiles):
    """Charge JAX's trace, lowering and XLA-compile durations to the running test, and the XLA
    compiles (``backend_compile_duration``, a persistent-cache read included) to the program's
    name; count the persistent cache's hits, its writes and the compile seconds its hits saved."""
    import jax

    def duration(event, secs, fun_name=None, **kwargs):
        if event in _COMPILE_EVENTS:
            seconds[_current_test[0]] += secs
            if event == _COMPILE_EVENTS[-1]:  # the XLA compile
                program_seconds[fun_name] += secs
                program_compiles[fun_name] += 1
        elif event == "/jax/compilation_cache/compile_time_saved_sec":
            cache["seconds saved"] += secs

    def count(event, **kwargs):
        if event == "/jax/compilation_cache/cache_hits":
            cache["hits"] += 1
        elif event == "/jax/compilation_cache/cache_misses":
            cache["writes"] += 1

    jax.monitoring.register_event_duration_secs_listener(duration)
    jax.monitoring.register_event_listener(count)


def _cpu_seconds():
    """User and system CPU seconds of this process and of its waited-for child processes."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _current_test[0] = item.nodeid
    start = _cpu_seconds()
    try:
        return (yield)
    finally:
        item.config.stash[_CPU_KEY][item.nodeid] += _cpu_seconds() - start
        _current_test[0] = "(between tests)"


def pytest_sessionfinish(session):
    """A pytest-xdist worker hands its property-test case counts and compile times to the
    controller."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["hypothesis_cases"] = dict(session.config.stash[_CASES_KEY])
        workeroutput["compile_seconds"] = dict(session.config.stash[_COMPILE_KEY])
        workeroutput["program_seconds"] = dict(session.config.stash[_PROGRAM_KEY])
        workeroutput["program_compiles"] = dict(session.config.stash[_PROGRAM_COUNT_KEY])
        workeroutput["compilation_cache"] = dict(session.config.stash[_CACHE_KEY])
        workeroutput["cpu_seconds"] = dict(session.config.stash[_CPU_KEY])


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """The controller adds up its workers' case counts and compile times (pytest-xdist only)."""
    output = getattr(node, "workeroutput", {})
    node.config.stash[_CASES_KEY].update(output.get("hypothesis_cases", {}))
    node.config.stash[_COMPILE_KEY].update(output.get("compile_seconds", {}))
    node.config.stash[_PROGRAM_KEY].update(output.get("program_seconds", {}))
    node.config.stash[_PROGRAM_COUNT_KEY].update(output.get("program_compiles", {}))
    node.config.stash[_CACHE_KEY].update(output.get("compilation_cache", {}))
    node.config.stash[_CPU_KEY].update(output.get("cpu_seconds", {}))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    cpu_seconds = config.stash.get(_CPU_KEY, None)
    if cpu_seconds:
        total = sum(cpu_seconds.values())
        terminalreporter.write_sep(
            "-", f"CPU time: {total:.0f} s over all workers (the tests and the subprocesses they wait for)"
        )
        for name, sec in cpu_seconds.most_common(15):
            terminalreporter.write_line(f"  {sec:7.1f} s  {name}")
    compile_seconds = config.stash.get(_COMPILE_KEY, None)
    if compile_seconds:
        total = sum(compile_seconds.values())
        terminalreporter.write_sep("-", f"JAX compile time: {total:.0f} s over all workers")
        for name, sec in compile_seconds.most_common(15):
            terminalreporter.write_line(f"  {sec:7.1f} s  {name}")
        programs, compiles = config.stash[_PROGRAM_KEY], config.stash[_PROGRAM_COUNT_KEY]
        terminalreporter.write_line(
            f"XLA compiles by program: {sum(compiles.values())} compiles of {len(compiles)} programs,"
            f" {sum(programs.values()):.0f} s; the 15 longest in all:"
        )
        for name, sec in programs.most_common(15):
            terminalreporter.write_line(f"  {sec:7.1f} s  {compiles[name]:4d} x  {name}")
        cache = config.stash[_CACHE_KEY]
        terminalreporter.write_line(
            f"persistent compilation cache (test processes): {cache['hits']} hits, which saved"
            f" {cache['seconds saved']:.0f} s of compiles; {cache['writes']} programs written"
        )
    counts = config.stash.get(_CASES_KEY, None)
    if counts:
        total = sum(counts.values())
        terminalreporter.write_sep(
            "-", f"hypothesis generated cases: {total} in {len(counts)} property tests"
        )
        for name, n in sorted(counts.items()):
            terminalreporter.write_line(f"  {n:5d}  {name}")


@pytest.fixture(scope="session")
def hypothesis_cases(request):
    return request.config.stash[_CASES_KEY]


# ------------------------------------------------------------------------------------------
# tiny problem + one fitted instance of each estimator
# ------------------------------------------------------------------------------------------
ESTIMATOR_NAMES = (
    "M3LAKClassifier",
    "MVMLClassifier",
    "MVMLRegressor",
    "MVLClassifier",
    "MVLRegressor",
    "ONORMA",
    "MONORMA",
    "OVKRidge",
    "MKC",
)
MULTIVIEW_NAMES = ("M3LAKClassifier", "MVMLClassifier", "MVMLRegressor", "MVLClassifier", "MVLRegressor")
SINGLE_X_NAMES = ("ONORMA", "MONORMA", "OVKRidge")
CLASSIFIERS = ("M3LAKClassifier", "MVMLClassifier", "MVLClassifier")


def tiny_settings(name):
    """Constructor arguments that make each estimator fast on the tiny problem."""
    from bayesmv.kernels import SeparableKernel
    from bayesmv.models import M3LAKPriors

    return {
        "M3LAKClassifier": dict(
            n_latent=2,
            n_frequencies=5,
            num_warmup=20,
            num_samples=20,
            num_chains=1,
            likelihood="hinge",
            priors=M3LAKPriors(view_features=None, label_feedback=True),  # the paper's classifier
            random_state=0,
        ),
        "MVMLClassifier": dict(max_iter=2),
        "MVMLRegressor": dict(max_iter=2),
        "MVLClassifier": dict(),
        "MVLRegressor": dict(),
        "ONORMA": dict(eta0=0.5),
        "MONORMA": dict(
            kernels=[SeparableKernel("rbf", ((1.0,),)), SeparableKernel("linear", ((1.0,),))], eta0=0.2
        ),
        "OVKRidge": dict(lam=0.1),
        "MKC": dict(max_iter=20),
    }[name]


def make_estimator(name, **overrides):
    import bayesmv

    return getattr(bayesmv, name)(**{**tiny_settings(name), **overrides})


def make_tiny_problem(n=16, seed=0):
    rng = np.random.default_rng(seed)
    H = rng.standard_normal((n, 2))
    Xs = [
        H @ rng.standard_normal((2, 3)) + 0.1 * rng.standard_normal((n, 3)),
        H @ rng.standard_normal((2, 2)) + 0.1 * rng.standard_normal((n, 2)),
    ]
    y = (H[:, 0] > np.median(H[:, 0])).astype(np.int64)
    y_reg = H[:, 0] + 0.5 * H[:, 1]
    X = np.concatenate(Xs, axis=1)
    Ks = []
    for v, V in enumerate(Xs):
        K = np.exp(-0.5 * ((V[:, None, :] - V[None, :, :]) ** 2).sum(-1))
        if v == 0:  # one sample missing from view 0 (MKC completes it)
            K[1, :] = np.nan
            K[:, 1] = np.nan
        Ks.append(K)
    return {"Xs": Xs, "y": y, "y_reg": y_reg, "X": X, "Ks": Ks}


def fit_args(name, problem):
    """``(args, kwargs)`` of ``fit`` for ``name`` on ``problem``."""
    if name == "MKC":
        return (problem["Ks"],), {}
    if name in SINGLE_X_NAMES:
        return (problem["X"], problem["y_reg"]), {}
    y = problem["y"] if name in CLASSIFIERS else problem["y_reg"]
    return (problem["Xs"], y), {}


def predict_input(name, problem):
    if name in SINGLE_X_NAMES:
        return problem["X"]
    return problem["Xs"]


@pytest.fixture(scope="session")
def tiny_problem():
    return make_tiny_problem()


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drop JAX's in-memory executables after each test module. Every compiled program keeps
    its JIT code mapped until released; over the whole suite the M3LAK chain programs
    accumulated until XLA aborted while compiling (or loading) one more, in the same test each
    time, a test that passes on its own (2026-11-25). Later modules recompile, or read the
    persistent cache."""
    yield
    import jax

    jax.clear_caches()


@pytest.fixture(scope="session")
def fitted_estimator(tiny_problem):
    """``fitted_estimator(name)``: the session's fitted instance of ``name`` (fitted on first use)."""
    cache = {}

    def get(name):
        if name not in cache:
            est = make_estimator(name)
            args, kwargs = fit_args(name, tiny_problem)
            with warnings.catch_warnings(record=True) as rec:
                warnings.simplefilter("always")
                est.fit(*args, **kwargs)
            cache[name] = est
            get.warnings[name] = list(rec)
        return cache[name]

    get.warnings = {}  # name -> warnings recorded during its fit
    return get
