"""M3LAK's settings objects: one source of defaults, one table of constraints, scikit-learn's
nested parameters, the previous release's names, and the draws unchanged by the move.

The release before the settings objects is run beside this one, on the same machine with the
same dependencies (``m3lak_reference``): the same seeds must give the same draws. Stored draws
would not do: XLA compiles for the host CPU and changes its code between releases, and the
rounding differences that follow, which a chain amplifies, reached 28 in a decision value.
"""

import dataclasses
import inspect
import io
import os
import subprocess
import sys
import tarfile
import warnings
from pathlib import Path

import m3lak_reference
import numpy as np
import pytest
from m3lak_reference import PREVIOUS_RELEASE, RUN, draws_of, reference_task
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

import bayesmv  # noqa: F401  (float64)
from bayesmv.datasets import MultiViewArray, make_latent_views
from bayesmv.m3lak import M3LAKClassifier
from bayesmv.m3lak.settings import (
    LEGACY_PARAMETERS,
    MODEL_PARAMETERS,
    SETTINGS_CLASSES,
    check_settings,
    model_config,
)
from bayesmv.models import M3LAKConfig, M3LAKPriors, M3LAKSampler
from bayesmv.models.m3lak_config import CONSTRAINTS


def test_signature_is_short_and_keyword_only():
    params = inspect.signature(M3LAKClassifier).parameters
    named = [p for p in params.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    assert len(named) <= 15
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in named)
    with pytest.raises(TypeError):
        M3LAKClassifier(14)  # noqa


def test_estimator_defaults_are_the_configs():
    params = M3LAKClassifier().get_params(deep=False)
    assert model_config(params) == M3LAKConfig()
    for name in MODEL_PARAMETERS:
        assert params[name] == getattr(M3LAKConfig(), name), name
    assert params["priors"] is None and params["sampler"] is None  # None: the classes' defaults
    assert M3LAKConfig().priors == M3LAKPriors() and M3LAKConfig().sampler == M3LAKSampler()


def test_every_setting_has_one_constraint_and_the_defaults_meet_them():
    fields = {f.name for cls in (M3LAKPriors, M3LAKSampler, M3LAKConfig) for f in dataclasses.fields(cls)}
    run = {"num_warmup", "num_samples", "num_chains", "chain_method", "progress_bar", "standardize"}
    assert fields - {"priors", "sampler"} | run == set(CONSTRAINTS)
    M3LAKConfig().validate()
    M3LAKConfig.paper().validate()
    check_settings(M3LAKClassifier().get_params(deep=False))


@pytest.mark.parametrize(
    "where, name, bad",
    [
        ("M3LAKConfig", "n_latent", 0),
        ("M3LAKConfig", "likelihood", "probit"),
        ("M3LAKPriors", "a_tau", -1.0),
        ("M3LAKPriors", "v_prior", (1.0,)),
        ("M3LAKPriors", "niw_mu0", float("nan")),
        ("M3LAKPriors", "view_span", "rows"),
        ("M3LAKSampler", "target_accept", 1.0),
        ("M3LAKSampler", "dp_split_merge", -1),
        ("M3LAKSampler", "fixed_blocks", ("tau",)),
        ("M3LAKSampler", "warmup_tempering", 0.0),
        ("M3LAKSampler", "max_extensions", -1),
    ],
)
def test_estimator_and_config_refuse_a_bad_value_with_the_same_message(where, name, bad):
    message = f"{where}.{name} must be"
    with pytest.raises(ValueError, match=message):
        M3LAKConfig.from_settings(**{name: bad}).validate()
    part = {"M3LAKPriors": "priors", "M3LAKSampler": "sampler"}.get(where)
    est = M3LAKClassifier().set_params(**{f"{part}__{name}" if part else name: bad})
    with pytest.raises(ValueError, match=message):
        check_settings(est.get_params(deep=False))


def test_rules_between_settings():
    for settings, match in [
        ({"n_latent": 6, "niw_nu0": 5.0}, "niw_nu0 must exceed"),
        ({"likelihood": "logistic", "augmented": True}, "augmented=True needs the hinge"),
        ({"niw_psi0_warmup_hold": 0.5}, "needs M3LAKPriors.niw_psi0_prior"),
    ]:
        with pytest.raises(ValueError, match=match):
            M3LAKConfig.from_settings(**settings).validate()
    with pytest.raises(ValueError, match="cannot be combined"):
        check_settings(
            M3LAKClassifier(chain_method="parallel", sampler=M3LAKSampler(shard_data=True)).get_params()
        )
    with pytest.raises(ValueError, match="M3LAKClassifier.sampler must be None or a M3LAKSampler"):
        check_settings(M3LAKClassifier(sampler=M3LAKPriors()).get_params(deep=False))


def test_nested_parameters_clone_and_set_params():
    clf = M3LAKClassifier(priors=M3LAKPriors(v=0.5))
    deep = clf.get_params(deep=True)
    assert deep["priors__v"] == 0.5 and "sampler__hmc_steps_joint" not in deep  # sampler None
    clf.set_params(sampler__hmc_steps_joint=12, priors__a_r=0.2)
    assert clf.sampler == M3LAKSampler(hmc_steps_joint=12)
    assert clf.priors == M3LAKPriors(v=0.5, a_r=0.2)
    copy = clone(clf)
    assert copy.get_params() == clf.get_params()
    copy.set_params(sampler__hmc_steps_joint=3)  # frozen objects: the original is untouched
    assert clf.sampler.hmc_steps_joint == 12 and copy.sampler.hmc_steps_joint == 3
    with pytest.raises(ValueError, match="invalid parameter"):
        clf.set_params(sampler__no_such_setting=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        clf.sampler.hmc_steps_joint = 1
    assert repr(M3LAKSampler(kernel_passes=1)) == "M3LAKSampler(kernel_passes=1)"
    assert M3LAKSampler(fixed_blocks=["H"]).fixed_blocks == ("H",)  # lists become tuples: hashable


def test_previous_names_warn_and_move_to_their_new_place():
    old = {"hmc_steps_joint": 12, "eta": 50.0, "dp_capacity": 30, "shard_data": 2}
    assert set(LEGACY_PARAMETERS) >= set(old)
    with pytest.warns(FutureWarning, match=r"sampler=M3LAKSampler\(\.\.\.\).*sampler__hmc_steps_joint"):
        clf = M3LAKClassifier(n_latent=5, **old)
    assert clf.priors == M3LAKPriors(eta=50.0)
    assert clf.sampler == M3LAKSampler(hmc_steps_joint=12, dp_capacity=30, shard_data=2)
    with pytest.warns(FutureWarning, match="priors__v"):
        clf.set_params(v=0.3)
    assert clf.priors == M3LAKPriors(eta=50.0, v=0.3)
    with pytest.warns(FutureWarning, match="'seed' is deprecated"):
        assert M3LAKClassifier(seed=7).random_state == 7
    with pytest.raises(TypeError, match="unexpected keyword"):
        M3LAKClassifier(n_latents=3)
    # the previous release's 36 moved names, each a field of its settings object; a field added
    # since (never an estimator parameter) is not a legacy name
    assert len(LEGACY_PARAMETERS) == 36
    for name, part in LEGACY_PARAMETERS.items():
        assert name in SETTINGS_CLASSES[part]().get_params()
    with pytest.raises(TypeError, match="unexpected keyword"):
        M3LAKClassifier(label_feedback=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new spelling warns about nothing
        new = M3LAKClassifier(
            n_latent=5, priors=M3LAKPriors(eta=50.0), sampler=clf.sampler.replace(target_accept=0.9)
        )
    assert model_config(new.get_params()) == model_config(
        {**clf.get_params(), "priors": M3LAKPriors(eta=50.0)}
    )


def test_paper_preset():
    clf = M3LAKClassifier.paper(num_chains=2)
    config = model_config(clf.get_params(deep=False))
    assert config == M3LAKConfig.paper()
    assert (config.likelihood, config.n_latent, config.n_frequencies, config.nu0) == ("hinge", 20, 100, 20.0)
    assert (config.h_lvm_passes, config.kernel_passes, config.warmup_tempering) == (1, 1, None)
    assert (clf.num_warmup, clf.num_samples, clf.num_chains) == (800, 200, 2)
    assert M3LAKConfig.paper(n_latent=3).nu0 == 3.0  # ν0 = m follows m
    assert model_config(M3LAKClassifier.paper(n_latent=4).get_params()).nu0 == 4.0


def start_previous_release(tmp_path):
    """Start fitting the previous release on the reference task in a subprocess, which writes
    its draws to the returned path and its messages to ``stderr.txt`` beside it (a file, not a
    pipe that its progress bars could fill while this process fits). The repository's history
    must be here: a clone, not an archive of one commit."""
    root = Path(__file__).resolve().parents[1]
    try:
        archive = subprocess.run(
            ["git", "-C", str(root), "archive", PREVIOUS_RELEASE, "bayesmv"], capture_output=True
        )
    except FileNotFoundError:
        pytest.skip("needs git, to take the previous release from the repository's history")
    if archive.returncode:
        pytest.skip(f"the previous release ({PREVIOUS_RELEASE}) is not in this checkout's history")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as release:
        release.extractall(tmp_path, filter="data")
    path = tmp_path / "draws.npz"
    with open(tmp_path / "stderr.txt", "w") as errors:
        process = subprocess.Popen(
            [sys.executable, m3lak_reference.__file__, str(path)],
            env={**os.environ, "PYTHONPATH": str(tmp_path)},
            stderr=errors,
        )
    return process, path


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::bayesmv.base.SamplerWarning")  # 2 chains of 10 draws
def test_draws_equal_the_previous_releases(tmp_path):
    """Same seed, same draws as the release before the settings objects, run beside this one (to
    rounding; they agree exactly when nothing changed). The previous "default" is the defaults
    of then: the joint model with the classifier on the shared latent alone, the paper's prior
    on τ and the DP spectrum (the chains here too short to be extended)."""
    Xtr, ytr, Xte = reference_task()
    previous = M3LAKPriors(a_tau=0.01, b_tau=1e-5, view_features=None, label_feedback=True)
    process, path = start_previous_release(tmp_path)  # fits while this process fits
    try:
        ours = draws_of(
            M3LAKClassifier(**RUN, spectral_prior="dp", priors=previous).fit(Xtr, ytr), "default", Xte
        )
        ours |= draws_of(M3LAKClassifier.paper(**RUN).fit(Xtr, ytr), "paper", Xte)
        process.wait(timeout=600)
    finally:
        process.kill()
    assert process.returncode == 0, (tmp_path / "stderr.txt").read_text()[-4000:]
    theirs = np.load(path)
    assert Path(str(theirs["source"])).is_relative_to(tmp_path)  # the previous release ran
    assert sorted(theirs.files) == sorted([*ours, "source"])
    for key, value in ours.items():
        np.testing.assert_allclose(value, theirs[key], rtol=1e-9, atol=1e-12, err_msg=key)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::bayesmv.base.SamplerWarning")  # 1 chain of 5 draws
def test_grid_search_over_a_sampler_setting():
    Xs, y = make_latent_views(n_samples=24, n_features=3, random_state=0)
    clf = M3LAKClassifier(
        n_latent=2,
        n_frequencies=3,
        spectral_prior="gaussian",
        num_warmup=5,
        num_samples=5,
        num_chains=1,
        chain_method="sequential",
        sampler=M3LAKSampler(warmup_tempering=None),
    )
    grid = {"sampler__hmc_steps_joint": [2, 4], "priors__v": [0.01]}
    search = GridSearchCV(clf, grid, cv=2).fit(MultiViewArray(Xs), y)
    assert search.best_params_["sampler__hmc_steps_joint"] in (2, 4)
    best = search.best_estimator_
    assert best.sampler == M3LAKSampler(
        warmup_tempering=None, hmc_steps_joint=search.best_params_["sampler__hmc_steps_joint"]
    )
    assert best.priors == M3LAKPriors(v=0.01)
    assert clf.sampler == M3LAKSampler(warmup_tempering=None)  # the searched estimator is untouched
