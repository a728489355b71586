"""BLAS threading for the M3LAK sampler.

XLA:CPU runs LAPACK custom calls (Cholesky, triangular solves) through SciPy's OpenBLAS. Its
worker threads spin-wait between calls and take the cores from XLA's own thread pool; the
sampler's LAPACK calls are small (m×m, (2M+1)×(2M+1)), so one BLAS thread is fastest. Measured
on the 2-core machine at N = 10,000: 0.40 s per sweep with OpenBLAS's default, 0.32 s with one
thread (``benchmarks/m3lak_scaling.py``).
"""

from __future__ import annotations

from threadpoolctl import threadpool_limits

__all__ = ["single_threaded_blas"]


def single_threaded_blas():
    """Context manager: every BLAS library in the process limited to one thread inside it."""
    return threadpool_limits(limits=1, user_api="blas")
