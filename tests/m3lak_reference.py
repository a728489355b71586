"""The tiny M3LAK task and run that ``test_m3lak_settings`` fits with this release and with the
release before the settings objects, which must give the same draws.

Run as a script with that release first on ``PYTHONPATH`` (the test does, in a subprocess), it
fits that release and writes its draws to the ``.npz`` file its one argument names::

    git archive 33f0027^ bayesmv | tar -x -C /tmp/previous-release
    PYTHONPATH=/tmp/previous-release python tests/m3lak_reference.py /tmp/draws.npz

Two tiny fits: that release's defaults, and the paper's setting spelled out parameter by
parameter as that release documented it.
"""

import sys
import warnings

import numpy as np

from bayesmv.datasets import make_latent_views

#: the commit of the release before the settings objects
PREVIOUS_RELEASE = "33f0027^"
#: the tiny run: 40 training points of two 5-feature views, 2 chains
RUN = dict(num_warmup=15, num_samples=10, num_chains=2, chain_method="sequential", random_state=5)
#: the paper's setting in the previous release's parameters
PREVIOUS_PAPER = dict(
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


def reference_task():
    """Training views, labels and test views: 40 + 10 points of two 5-feature views."""
    Xs, y = make_latent_views(n_samples=50, n_features=5, random_state=3)
    return [X[:40] for X in Xs], y[:40], [X[40:] for X in Xs]


def draws_of(clf, name, Xte):
    """``{name}_decision``, ``{name}_tau`` (chain 0's draws) and ``{name}_proba`` of a fit."""
    return {
        f"{name}_decision": np.asarray(clf.raw_posterior_[0]["decision"]),
        f"{name}_tau": np.asarray(clf.raw_posterior_[0]["tau"]),
        f"{name}_proba": clf.predict_proba(Xte),
    }


def main(path):
    """Fit the ``bayesmv`` that imports first with the previous release's defaults and its
    spelling of the paper's setting; write the draws and where that ``bayesmv`` is
    (``source``) to ``path``."""
    import bayesmv
    from bayesmv.m3lak import M3LAKClassifier

    Xtr, ytr, Xte = reference_task()
    draws = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 2 chains of 10 draws do not converge
        for name, settings in (("default", {}), ("paper", PREVIOUS_PAPER)):
            draws |= draws_of(M3LAKClassifier(**RUN, **settings).fit(Xtr, ytr), name, Xte)
    np.savez(path, source=bayesmv.__file__, **draws)


if __name__ == "__main__":
    main(sys.argv[1])
