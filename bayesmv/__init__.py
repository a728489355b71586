"""bayesmv: Bayesian multi-view kernel learning on JAX.

Importing bayesmv turns on JAX's float64 mode (``jax_enable_x64``): the M3LAK Gibbs
conditionals (Cholesky factors of precision matrices, GIG/inverse-Gaussian draws) and the
kernel solves need double precision. Kernel functions keep the dtype of their inputs, so
float32 arrays stay float32.
"""

import os
from importlib import import_module


def _avoid_cpu_scheduler_deadlock():
    """Turn off XLA:CPU's concurrency-optimised scheduler (jaxlib 0.10).

    With it on, two batched LAPACK custom calls (e.g. triangular solves under ``vmap``) can run
    concurrently on the intra-op pool and each wait in ``ParallelBatchMap`` for workers the other
    holds: the process hangs with every thread idle (seen in M3LAK's predictive and DP blocks).
    The flag is read when JAX's CPU backend starts, so it only helps if bayesmv is imported
    before the first JAX computation; an explicit setting in ``XLA_FLAGS`` is respected.
    """
    flag = "--xla_cpu_enable_concurrency_optimized_scheduler"
    flags = os.environ.get("XLA_FLAGS", "")
    if flag not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} {flag}=false".strip()


_avoid_cpu_scheduler_deadlock()

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

# ArviZ 1.x puts a lazily loaded numpyro in sys.modules when it is imported first; a numpyro
# submodule imported before the package itself is then missing from its parent's attributes
# (numpyro.infer.initialization, which az.from_numpyro reads). Importing the package first avoids it.
import numpyro  # noqa: E402, F401

from . import datasets, diagnostics, kernels, preprocessing  # noqa: E402
from .datasets import MultiViewArray  # noqa: E402
from .diagnostics import FitTrace, check_convergence, summary, to_inference_data  # noqa: E402
from .persistence import load  # noqa: E402

__version__ = "0.1.0"

# Estimators are imported on first use so that `import bayesmv` stays light.
_ESTIMATORS = {
    "M3LAKClassifier": "bayesmv.m3lak",
    "M3LAKPriors": "bayesmv.m3lak",
    "M3LAKSampler": "bayesmv.m3lak",
    "MVMLClassifier": "bayesmv.mvml",
    "MVMLRegressor": "bayesmv.mvml",
    "MVMLClassifierCV": "bayesmv.mvml",
    "MVMLRegressorCV": "bayesmv.mvml",
    "MKC": "bayesmv.mkc",
    "complete_views": "bayesmv.mkc",
    "ONORMA": "bayesmv.onorma",
    "MONORMA": "bayesmv.onorma",
    "OVKRidge": "bayesmv.onorma",
    "MVLClassifier": "bayesmv.mvl",
    "MVLRegressor": "bayesmv.mvl",
    "MVLClassifierCV": "bayesmv.mvl",
    "MVLRegressorCV": "bayesmv.mvl",
}


def __getattr__(name):
    if name in _ESTIMATORS:
        return getattr(import_module(_ESTIMATORS[name]), name)
    raise AttributeError(f"module 'bayesmv' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_ESTIMATORS))


__all__ = [
    "FitTrace",
    "MultiViewArray",
    "__version__",
    "check_convergence",
    "datasets",
    "diagnostics",
    "kernels",
    "load",
    "preprocessing",
    "summary",
    "to_inference_data",
    *_ESTIMATORS,
]
