"""Write the saved fits that ``test_persistence.test_earlier_saved_fits_load`` reads.

Run from the repository root at the commit whose layout the files should keep (they were
written at 0490583, before the methods moved into subpackages)::

    python tests/data/saved_fits/make_saved_fits.py

Each estimator of ``conftest.ESTIMATOR_NAMES`` is fitted on the tiny problem and saved as
``<name>.bmv``; ``outputs.npz`` holds its outputs on the same problem, ``<name>.<method>``.
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))

from conftest import ESTIMATOR_NAMES, fit_args, make_estimator, make_tiny_problem  # noqa: E402
from test_persistence import _outputs  # noqa: E402


def main():
    problem = make_tiny_problem()
    outputs = {}
    for name in ESTIMATOR_NAMES:
        est = make_estimator(name)
        args, kwargs = fit_args(name, problem)
        est.fit(*args, **kwargs)
        est.save(os.path.join(HERE, f"{name}.bmv"))
        for method, value in _outputs(est, name, problem).items():
            outputs[f"{name}.{method}"] = np.asarray(value)
    np.savez(os.path.join(HERE, "outputs.npz"), **outputs)


if __name__ == "__main__":
    main()
