"""Threads of the M3LAK sampler: BLAS threads, worker processes pinned to one CPU each, and
the thread that runs a fit's JAX work so that Ctrl-C reaches the caller.

XLA:CPU runs LAPACK custom calls (Cholesky, triangular solves) through SciPy's OpenBLAS. Its
worker threads spin-wait between calls and take the cores from XLA's own thread pool; the
sampler's LAPACK calls are small (m×m, (2M+1)×(2M+1)), so one BLAS thread is fastest
(``benchmarks/m3lak_scaling.py``; the figures are in the benchmark log).
"""

from __future__ import annotations

import os
import re
import signal
import threading

from threadpoolctl import threadpool_limits

__all__ = ["SamplingStopped", "one_cpu_device", "pin_to_one_cpu", "run_interruptibly", "single_threaded_blas"]


def single_threaded_blas():
    """Context manager: every BLAS library in the process limited to one thread inside it."""
    return threadpool_limits(limits=1, user_api="blas")


def pin_to_one_cpu(slot):
    """Restrict every thread of this process to one of the CPUs it may run on, the ``slot``-th
    (modulo their number); a no-op where the OS has no CPU affinity (not Linux). Called before
    JAX starts its CPU backend, this gives XLA:CPU a one-thread pool: each worker process of
    the M3LAK chains then computes on its own core with no cross-thread scheduling, which is
    faster than two workers each with a pool over both cores (see the benchmark log)."""
    if not (hasattr(os, "sched_setaffinity") and os.path.isdir("/proc/self/task")):
        return
    allowed = sorted(os.sched_getaffinity(0))
    cpu = {allowed[slot % len(allowed)]}
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), cpu)
        except OSError:  # a thread that has exited since the listing
            pass


def one_cpu_device():
    """Give this process's XLA:CPU backend one device, whatever the parent forced: drops
    ``--xla_force_host_platform_device_count`` from ``XLA_FLAGS`` (which a worker process
    inherits). Called in a worker process before its first computation starts JAX's backend; a
    program compiled in a parent with several CPU devices then loads on the worker's one
    device, as in a one-device parent."""
    flags = os.environ.get("XLA_FLAGS", "")
    os.environ["XLA_FLAGS"] = re.sub(r"--xla_force_host_platform_device_count=\S*", "", flags).strip()


class SamplingStopped(Exception):
    """Raised in the thread of :func:`run_interruptibly` once its ``stop`` event is set."""


def run_interruptibly(work):
    """``work(stop)`` in a thread of its own, waited for by this one so that Ctrl-C interrupts it.

    Python raises ``KeyboardInterrupt`` in the main thread only between bytecodes, and JAX's
    compilations and computations run in C++ for seconds to minutes. Here the main thread waits
    on an event in 50 ms steps instead: on Ctrl-C it sets ``stop`` (a ``threading.Event`` that ``work``
    checks between its calls into JAX, raising :class:`SamplingStopped`) and raises
    ``KeyboardInterrupt`` at once. While it waits, and where Python's own ``SIGINT`` handler is
    in force, a handler that only records the signal replaces it, so that an interrupt handled
    inside a finalizer (where an exception would be dropped) is not lost; a handler of the
    caller's own is left in place. The call under way (a compilation, or one chunk of sweeps)
    finishes in the background and its result is dropped; a script that exits then waits for
    it. Called outside the main thread (where no ``KeyboardInterrupt`` arrives) it runs
    ``work`` directly. JAX's thread-local settings (its context managers, such as
    ``jax.log_compiles()``) do not reach the thread: set them with ``jax.config.update``.

    Parameters
    ----------
    work : callable
        ``work(stop)``, returning the result.

    Returns
    -------
    result : object
        What ``work`` returned; what it raised is raised here.

    Raises
    ------
    KeyboardInterrupt
        On Ctrl-C (``SIGINT``) while ``work`` runs.
    """
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        return work(stop)
    outcome = {}
    finished = threading.Event()
    interrupted = threading.Event()

    def target():
        try:
            outcome["result"] = work(stop)
        except BaseException as error:  # handed to the waiting thread
            outcome["error"] = error
        finally:
            finished.set()

    def record_interrupt(signum, frame):
        interrupted.set()
        stop.set()

    # Python's own handler raises KeyboardInterrupt wherever the main thread is when it runs,
    # which may be a finalizer (a __del__ or weakref callback run by the garbage collector),
    # where the exception is printed and dropped. While the thread works, the handler only
    # records the signal, and the loop below raises. A handler of the caller's own (or SIGINT
    # ignored) is left in place.
    previous = signal.getsignal(signal.SIGINT)
    own_handler = previous is signal.default_int_handler
    if own_handler:
        signal.signal(signal.SIGINT, record_interrupt)
    try:
        # not a daemon: at exit Python waits for the call under way (killing a thread inside
        # XLA aborts the process)
        thread = threading.Thread(target=target, name="bayesmv-sampler")
        thread.start()
        # an Event, not Thread.join: an interrupted join marks the thread as ended (CPython)
        while not finished.wait(0.05) and not interrupted.is_set():
            pass
    except KeyboardInterrupt:  # raised by the caller's handler
        stop.set()
        raise
    finally:
        if own_handler:
            signal.signal(signal.SIGINT, previous)
    if interrupted.is_set():
        raise KeyboardInterrupt
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]
