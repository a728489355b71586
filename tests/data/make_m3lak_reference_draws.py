"""Write this CPU's ``m3lak_reference_draws_<cpu>.npz``, which
``test_m3lak_settings.test_draws_equal_the_previous_releases`` reads.

The draws must come from the release before the settings objects (the parent of 33f0027), run
on this CPU model; from the repository root::

    git worktree add /tmp/bayesmv-before-settings 33f0027^
    PYTHONPATH=/tmp/bayesmv-before-settings python tests/data/make_m3lak_reference_draws.py

Two tiny fits (``RUN`` of the test module): that release's defaults, and the paper's setting
spelled out parameter by parameter as it documented it.
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.append(os.path.join(HERE, ".."))  # after PYTHONPATH: the old release's bayesmv first

from m3lak_reference import RUN, own_reference_file, reference_task  # noqa: E402

from bayesmv.m3lak import M3LAKClassifier  # noqa: E402

PAPER = dict(
    likelihood="hinge",
    n_latent=20,
    n_frequencies=100,
    precision_update="conditional",
    h_lvm_passes=1,
    kernel_passes=1,
    warmup_tempering=None,
    spectral_scale_moves=False,
    hmc_steps_h=10,
    niw_nu0=20.0,
    target_accept=0.8,
)


def main():
    Xtr, ytr, Xte = reference_task()
    draws = {}
    for name, settings in (("default", {}), ("paper", PAPER)):
        clf = M3LAKClassifier(**RUN, **settings).fit(Xtr, ytr)
        draws[f"{name}_decision"] = np.asarray(clf.raw_posterior_[0]["decision"])
        draws[f"{name}_tau"] = np.asarray(clf.raw_posterior_[0]["tau"])
        draws[f"{name}_proba"] = clf.predict_proba(Xte)
    np.savez(own_reference_file(), **draws)


if __name__ == "__main__":
    main()
