"""The benchmarks' "paper" rows stay the paper's setting whatever the estimator's defaults become:
paper 003's Algorithm 1 updates every block once per sweep, with the hinge and no tempered warm-up
or spectral-scale move."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path

import pytest

from bayesmv import M3LAKClassifier

ROOT = Path(__file__).resolve().parents[1]


def _benchmark(name):
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def _paper_rows():
    """Each paper row's estimator parameters (both scripts loaded once per session)."""
    accuracy, mixing = _benchmark("m3lak_accuracy"), _benchmark("m3lak_mixing")
    baseline = next(iter(mixing.LEVERS.values()))  # the first lever is the baseline of every ratio
    return {
        "m3lak_accuracy PAPER": accuracy.PAPER,
        "m3lak_accuracy Part A": accuracy._m3lak(accuracy.QUICK, 0, 1, 1, 1).get_params(),
        "m3lak_mixing baseline": mixing._lever_params(baseline),
    }


@pytest.mark.parametrize("row", ["m3lak_accuracy PAPER", "m3lak_accuracy Part A", "m3lak_mixing baseline"])
def test_paper_rows_pin_algorithm_1(row):
    params = _paper_rows()[row]
    passes = [k for k in M3LAKClassifier().get_params() if k.endswith("_passes")]
    assert passes, "the estimator has no pass counts to pin"
    assert {k: params.get(k) for k in passes} == dict.fromkeys(passes, 1)
    assert params["likelihood"] == "hinge"
    assert params["precision_update"] == "conditional"
    assert params["warmup_tempering"] is None
    assert params["spectral_scale_moves"] is False
