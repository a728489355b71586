"""Issue 9.4: the same seed gives identical predictions (in one process and across processes);
different seeds give different chains.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from conftest import ESTIMATOR_NAMES, fit_args, make_estimator, predict_input

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))


def _outputs(est, name, problem):
    if name == "MKC":
        return {"completed_kernels_": np.stack(est.completed_kernels_)}
    X = predict_input(name, problem)
    out = {}
    for m in ("predict", "decision_function", "predict_proba"):
        if hasattr(est, m):
            out[m] = np.asarray(getattr(est, m)(X))
    return out


def _fit(name, problem, **params):
    est = make_estimator(name, **params)
    args, kwargs = fit_args(name, problem)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(*args, **kwargs)


def _assert_identical(a, b, where):
    assert set(a) == set(b), where
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=f"{where}.{k}")


CHEAP = [n for n in ESTIMATOR_NAMES if n != "M3LAKClassifier"]


@pytest.mark.parametrize("name", CHEAP)
def test_same_seed_identical_in_process(name, fitted_estimator, tiny_problem):
    first = _outputs(fitted_estimator(name), name, tiny_problem)
    second = _outputs(_fit(name, tiny_problem), name, tiny_problem)
    _assert_identical(first, second, name)


@pytest.mark.slow
def test_m3lak_same_seed_identical_different_seed_different(fitted_estimator, tiny_problem):
    """Refit with the session fit's seed: bit-identical draws and predictions. Seed 1: other chains."""
    est = fitted_estimator("M3LAKClassifier")
    again = _fit("M3LAKClassifier", tiny_problem)
    for k, v in est.posterior_draws_[0].items():
        np.testing.assert_array_equal(v, again.posterior_draws_[0][k], err_msg=k)
    _assert_identical(
        _outputs(est, "M3LAKClassifier", tiny_problem),
        _outputs(again, "M3LAKClassifier", tiny_problem),
        "M3LAK",
    )
    other = _fit("M3LAKClassifier", tiny_problem, random_state=1)
    for k in ("tau", "beta"):
        a, b = est.posterior_draws_[0][k], other.posterior_draws_[0][k]
        assert a.shape == b.shape and not np.allclose(a, b), k
    assert not np.array_equal(
        est.decision_function(tiny_problem["Xs"]), other.decision_function(tiny_problem["Xs"])
    )


def test_seeded_randomness_of_deterministic_methods(tiny_problem):
    """Where a seed drives randomness (Nyström landmarks, stream shuffling, random basis, CV folds),
    different seeds give different fits and equal seeds equal fits."""
    a = _fit("MVMLClassifier", tiny_problem, nystrom=0.5, random_state=0)
    b = _fit("MVMLClassifier", tiny_problem, nystrom=0.5, random_state=1)
    c = _fit("MVMLClassifier", tiny_problem, nystrom=0.5, random_state=0)
    assert not np.array_equal(a.landmarks_, b.landmarks_)
    np.testing.assert_array_equal(a.landmarks_, c.landmarks_)
    np.testing.assert_array_equal(
        a.decision_function(tiny_problem["Xs"]), c.decision_function(tiny_problem["Xs"])
    )
    o1 = _fit("ONORMA", tiny_problem, shuffle=True, random_state=0)
    o2 = _fit("ONORMA", tiny_problem, shuffle=True, random_state=5)
    o3 = _fit("ONORMA", tiny_problem, shuffle=True, random_state=0)
    assert not np.array_equal(o1.online_predictions_, o2.online_predictions_)
    np.testing.assert_array_equal(o1.online_predictions_, o3.online_predictions_)


_CHILD = textwrap.dedent(
    """
    import json, sys, warnings
    import numpy as np
    sys.path.insert(0, {tests_dir!r})
    from conftest import make_tiny_problem, make_estimator, fit_args, predict_input
    problem = make_tiny_problem()
    out = {{}}
    for name in {names!r}:
        est = make_estimator(name)
        args, kwargs = fit_args(name, problem)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(*args, **kwargs)
        if name == "MKC":
            res = {{"completed_kernels_": np.stack(est.completed_kernels_)}}
        else:
            X = predict_input(name, problem)
            res = {{m: np.asarray(getattr(est, m)(X)) for m in ("predict", "decision_function", "predict_proba")
                   if hasattr(est, m)}}
        for k, v in res.items():
            np.save({out_dir!r} + f"/{{name}}.{{k}}.npy", v)
        out[name] = sorted(res)
    print(json.dumps(out))
    """
)


def _run_child(names, tmp_path):
    script = _CHILD.format(tests_dir=TESTS_DIR, names=list(names), out_dir=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=1500,
        env={**os.environ, "PYTHONHASHSEED": "123"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    keys = json.loads(proc.stdout.strip().splitlines()[-1])
    return {
        n: {k: np.load(tmp_path / f"{n}.{k}.npy", allow_pickle=False) for k in ks} for n, ks in keys.items()
    }


@pytest.mark.slow
def test_same_seed_identical_across_processes(fitted_estimator, tiny_problem, tmp_path):
    """A fresh Python process (different hash seed) reproduces every estimator's predictions bit for bit."""
    child = _run_child(ESTIMATOR_NAMES, tmp_path)
    for name in ESTIMATOR_NAMES:
        _assert_identical(_outputs(fitted_estimator(name), name, tiny_problem), child[name], name)
