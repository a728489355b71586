"""Threads of the M3LAK sampler: BLAS threads, and worker processes pinned to one CPU each.

XLA:CPU runs LAPACK custom calls (Cholesky, triangular solves) through SciPy's OpenBLAS. Its
worker threads spin-wait between calls and take the cores from XLA's own thread pool; the
sampler's LAPACK calls are small (m×m, (2M+1)×(2M+1)), so one BLAS thread is fastest
(``benchmarks/m3lak_scaling.py``; the figures are in the benchmark log).
"""

from __future__ import annotations

import os
import re

from threadpoolctl import threadpool_limits

__all__ = ["one_cpu_device", "pin_to_one_cpu", "single_threaded_blas"]


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
