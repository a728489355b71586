"""The benchmarks' "paper" rows stay the paper's setting whatever the estimator's defaults become:
paper 003's Algorithm 1 updates every block once per sweep, with the hinge and no tempered warm-up
or spectral-scale move."""

from __future__ import annotations

import importlib.util
import warnings
from functools import cache
from pathlib import Path

import pytest

from bayesmv import M3LAKClassifier, M3LAKSampler
from bayesmv.m3lak.settings import model_config

ROOT = Path(__file__).resolve().parents[1]


def _benchmark(name):
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def _paper_rows():
    """Each paper row's estimator (both scripts loaded once per session)."""
    accuracy, mixing = _benchmark("m3lak_accuracy"), _benchmark("m3lak_mixing")
    baseline = next(iter(mixing.LEVERS.values()))  # the first lever is the baseline of every ratio
    with warnings.catch_warnings():  # a row may still spell its settings by the previous names
        warnings.simplefilter("ignore", FutureWarning)
        return {
            "m3lak_accuracy PAPER": M3LAKClassifier(**accuracy.PAPER),
            "m3lak_accuracy Part A": accuracy._m3lak(accuracy.QUICK, 0, 1, 1, 1),
            "m3lak_mixing baseline": M3LAKClassifier(**mixing._lever_params(baseline)),
        }


@pytest.mark.parametrize("row", ["m3lak_accuracy PAPER", "m3lak_accuracy Part A", "m3lak_mixing baseline"])
def test_paper_rows_pin_algorithm_1(row):
    config = model_config(_paper_rows()[row].get_params(deep=False))
    paper = M3LAKSampler.paper()
    for name in (
        "h_lvm_passes",
        "kernel_passes",
        "precision_update",
        "warmup_tempering",
        "spectral_scale_moves",
    ):
        assert getattr(config, name) == getattr(paper, name), name
    assert config.likelihood == "hinge"
