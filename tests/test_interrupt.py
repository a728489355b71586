"""Ctrl-C stops an M3LAK fit: ``SIGINT`` sent to a process that fits, during the compilation and
during the sampling, in every chain method (one subprocess, with a time limit)."""

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def _python_sigint_handler():
    """Each test starts under Python's own ``SIGINT`` handler, as an interactive session does,
    also where the suite inherits ``SIGINT`` ignored (a background job of a shell without job
    control, such as ``.ci/run &``); the subprocess of the first test inherits it as well. The
    handler in force before is put back afterwards."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


_SCRIPT = """
import faulthandler, json, os, signal, sys, threading, time, warnings
import numpy as np
# a hung case ends the script with every thread's stack on stderr (the test's message), before
# the test's own time limit would end the pytest worker without one
faulthandler.dump_traceback_later(780, exit=True)
from bayesmv import M3LAKClassifier, M3LAKPriors, M3LAKSampler
from bayesmv.inference.m3lak_sampler.progress import ChainProgress

warnings.simplefilter("ignore")
rng = np.random.default_rng(0)
Xs = [rng.normal(size=(30, 3)), rng.normal(size=(30, 4))]
y = (Xs[0][:, 0] > 0).astype(int)
steps = M3LAKSampler(hmc_steps_h=2, hmc_steps_omega=2, hmc_steps_joint=3)
# the model whose programs compile fastest (Gaussian spectrum, the classifier on the latent alone):
# what is tested is the interruption; and NumPyro allocates the draws of 10^5 sweeps up front,
# which with the default view features (2 x 500 per view) would be 1.6 GB of gamma per chain
model = dict(n_latent=2, n_frequencies=3, spectral_prior="gaussian")
priors = M3LAKPriors(view_features=None)

sampling = threading.Event()  # set once a chain reports a sweep done
update = ChainProgress.update
def reported(self, chain, done):
    if done > 0:
        sampling.set()
    return update(self, chain, done)
ChainProgress.update = reported

def workers():
    # this process's children that run chains (loky workers; not its resource tracker), alive
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            status = open(f"/proc/{pid}/status").read()
            cmd = open(f"/proc/{pid}/cmdline").read()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if int(fields["PPid"]) == os.getpid() and "loky" in cmd and "tracker" not in cmd:
            if fields["State"].split()[0] not in ("Z", "X"):
                found.append(int(pid))
    return found

results = []
for method, when, length in [("sequential", "compile", 10**5), ("sequential", "sampling", 10**5),
                             ("vectorized", "sampling", 10**5), ("processes", "compile", 10**5),
                             ("processes", "sampling", 10**5), ("parallel", "compile", 300)]:
    sampling.clear()
    clf = M3LAKClassifier(**model, num_chains=2, num_warmup=length, num_samples=length,
                          chain_method=method, priors=priors, sampler=steps, random_state=0)
    sent = []
    def interrupt():
        if when == "sampling":
            sampling.wait(300)
        else:
            time.sleep(0.5)
        sent.append((time.time(), workers()))
        os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=interrupt, daemon=True).start()
    start = time.time()
    try:
        clf.fit(Xs, y)
        outcome = "finished"
    except KeyboardInterrupt:
        outcome = "interrupted"
    end = time.time()
    time.sleep(3)
    print("case", method, when, outcome, round(end - start, 1), "s", file=sys.stderr, flush=True)
    results.append({"method": method, "when": when, "outcome": outcome,
                    "seconds": end - sent[0][0] if sent else None, "fit_seconds": end - start,
                    "workers_before": len(sent[0][1]) if sent else None, "workers_after": len(workers()),
                    "fitted": sorted(k for k in vars(clf) if k.endswith("_"))})
clf = M3LAKClassifier(**model, num_chains=2, num_warmup=5, num_samples=5, priors=priors,
                      sampler=steps, random_state=0)
refit = clf.fit(Xs, y).predict_proba(Xs)
print(json.dumps({"results": results, "refit": bool(np.all(np.isfinite(refit)))}))
"""


@pytest.mark.slow
def test_ctrl_c_stops_a_fit_in_every_chain_method():
    """``SIGINT`` during the compilation (0.5 s into the fit) and during the sampling (once a
    chain has reported a sweep) of fits of 10⁵ + 10⁵ sweeps (minutes of work) in each chain
    method: ``KeyboardInterrupt`` reaches the caller within 5 s (measured 0.0–0.4 s), the
    estimator holds no fitted attribute, the ``"processes"`` workers that were sampling have
    ended 3 s later, and a fit afterwards in the same process works. (``"parallel"``: NumPyro's
    loop of 300 + 300 sweeps under way finishes in the background.) Before, the call
    returned only after the compilation and, in this process, after the chain's whole run."""
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_SCRIPT)],
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(p for p in (os.environ.get("PYTHONPATH", ""), ROOT) if p),
        },
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    res = json.loads([ln for ln in out.stdout.splitlines() if ln.startswith("{")][-1])
    assert len(res["results"]) == 6
    for case in res["results"]:
        assert case["outcome"] == "interrupted", case
        assert case["seconds"] < 5.0, case
        assert case["fitted"] == [], case
        assert case["workers_after"] == 0, case
    sampled = next(c for c in res["results"] if c["method"] == "processes" and c["when"] == "sampling")
    assert sampled["workers_before"] == 2, sampled  # the workers were there, and were ended
    assert res["refit"]


def _work_until_stopped(signal_from_work):
    """``work(stop)`` for :func:`run_interruptibly`: calls ``signal_from_work()`` once, then waits
    up to 20 s for ``stop`` (a fit's sampler would go on computing), recording what it saw."""
    seen = {}

    def work(stop):
        signal_from_work()
        seen["stopped"] = stop.wait(20.0)
        return "finished"

    return work, seen


def _stop_seen(seen, seconds=5.0):
    """Whether the work of :func:`_work_until_stopped` saw ``stop`` within ``seconds``."""
    import time

    deadline = time.monotonic() + seconds
    while "stopped" not in seen and time.monotonic() < deadline:
        time.sleep(0.01)
    return seen.get("stopped") is True


def test_sigint_while_work_runs_raises_keyboard_interrupt_and_sets_stop():
    """SIGINT (sent from the working thread, handled in the main thread) reaches the caller as
    ``KeyboardInterrupt`` well before the 20 s the work would take, the work sees ``stop``, and
    Python's own handler is back in place afterwards."""
    import time

    from bayesmv.inference._threads import run_interruptibly

    work, seen = _work_until_stopped(lambda: signal.raise_signal(signal.SIGINT))
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_interruptibly(work)
    assert time.monotonic() - start < 5.0
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert _stop_seen(seen)


def test_sigint_handled_inside_a_finalizer_still_stops_the_fit():
    """The handler in force while the work runs may run wherever the main thread is, such as a
    ``__del__`` called by the garbage collector, where an exception is printed and dropped.
    Run there, it still interrupts: the caller gets ``KeyboardInterrupt`` and the work its
    ``stop``. (With Python's own handler in force, the ``KeyboardInterrupt`` raised in the
    finalizer is dropped and the call returns ``"finished"`` after 20 s: this test fails.)"""
    import gc
    import time

    from bayesmv.inference._threads import run_interruptibly

    class Finalized:
        def __del__(self):
            signal.getsignal(signal.SIGINT)(signal.SIGINT, None)

    def handle_in_finalizer():
        Finalized()
        gc.collect()

    work, seen = _work_until_stopped(handle_in_finalizer)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_interruptibly(work)
    assert time.monotonic() - start < 5.0
    assert _stop_seen(seen)


def test_a_callers_own_sigint_handler_is_left_in_place():
    """A SIGINT handler the caller installed stays in force during the work and after it."""
    from bayesmv.inference._threads import run_interruptibly

    calls = []

    def own(signum, frame):
        calls.append(signum)

    previous = signal.signal(signal.SIGINT, own)
    try:
        assert run_interruptibly(lambda stop: signal.getsignal(signal.SIGINT) is own)
        assert signal.getsignal(signal.SIGINT) is own
    finally:
        signal.signal(signal.SIGINT, previous)
