"""``M3LAKPriors(label_feedback=False)``, the cut model: the classifier sees each training point
through ``E[h_n | x_n]`` given its observed views, and the predictive sees a test point the same way.

The sampler's exactness with it is tested with the other blocks: each row of ``H`` from its
conditional given the views alone in ``test_m3lak_conditionals.py`` (brute force, with a power
check), the whole sweep in ``test_m3lak_sampler.py`` (Geweke on the joint with the labels drawn,
with its wrong-τ power twin). Here: the settings' rule and a fit, whose stored training decision
values are the predictive's at the training points.
"""

import numpy as np
import pytest

import bayesmv  # noqa: F401  (x64)
from bayesmv import M3LAKClassifier, M3LAKPriors, M3LAKSampler
from bayesmv.datasets import drop_views, make_latent_views
from bayesmv.m3lak.predictive import problem_decisions


def test_label_feedback_false_does_not_combine_with_latent_axis_moves():
    clf = M3LAKClassifier(
        priors=M3LAKPriors(label_feedback=False), sampler=M3LAKSampler(latent_axis_moves=True)
    )
    Xs, y = make_latent_views(n_samples=20, n_features=3, random_state=0)
    with pytest.raises(ValueError, match="label_feedback=False does not combine with"):
        clf.fit(Xs, y)


class _Stop(Exception):
    """Raised in place of the sampler: the checks before it are what is tested."""


@pytest.mark.parametrize(
    "label_feedback, fraction, warns",
    [(False, 1.0, True), (False, 0.3, False), (True, 1.0, False)],
    ids=["cut-no-shared-sample", "cut-shared-samples", "joint-no-shared-sample"],
)
def test_fit_warns_when_the_cut_cannot_align_the_views(monkeypatch, label_feedback, fraction, warns):
    """Two views with every sample missing one (``drop_views`` at 100 %): the cut model's fit warns
    that their latents are not aligned, before sampling. With 30 % of the samples missing a view
    (42 of 60 observe both, above ``n_latent``) it does not, nor does the joint model."""
    import warnings

    import bayesmv.m3lak.estimators as est

    def stop(*args, **kwargs):
        raise _Stop

    monkeypatch.setattr(est, "sample_problems", stop)
    Xs, y = make_latent_views(n_samples=60, n_features=4, random_state=1)
    Xs = drop_views(Xs, fraction, random_state=2)
    clf = M3LAKClassifier(n_latent=3, priors=M3LAKPriors(label_feedback=label_feedback))
    with warnings.catch_warnings(record=True) as caught, pytest.raises(_Stop):
        warnings.simplefilter("always")
        clf.fit(Xs, y)
    hits = [w for w in caught if "not aligned" in str(w.message)]
    assert len(hits) == int(warns), [str(w.message) for w in caught]
    if warns:
        assert "[(0,), (1,)]" in str(hits[0].message) and "n_latent = 3" in str(hits[0].message)
        assert hits[0].filename == __file__  # points at the caller's fit


@pytest.mark.slow  # compiles a sampler of its own
def test_training_decisions_are_the_predictive_at_the_training_points():
    """Train and test points reach the classifier alike: every stored training decision value
    ``βᵀφ̃(E[h_n | x_n])`` equals the predictive's draw at that point (which takes ``E[h* | x*]``
    with ``label_feedback=False``), missing views included, to 1e-8. Power: the predictive that
    draws ``h*`` (the joint model's) differs from them by far more."""
    Xs, y = make_latent_views(n_samples=60, n_features=4, random_state=1)
    Xs = drop_views(Xs, 0.3, random_state=2)
    clf = M3LAKClassifier(
        n_latent=2,
        n_frequencies=4,
        spectral_prior="gaussian",  # any Ω: the test is about E[h | x]; compiles 2x faster
        num_warmup=30,
        num_samples=30,
        num_chains=2,
        chain_method="sequential",
        progress_bar=False,
        random_state=0,
        priors=M3LAKPriors(label_feedback=False, view_features=None),  # the latent's part alone
    ).fit(Xs, y)
    stored = clf.inference_data_.posterior["decision"].values.reshape(60, -1)
    predictive = clf.predictive_decisions(Xs)[0]
    np.testing.assert_allclose(predictive, stored, rtol=1e-8, atol=1e-8)
    Zs = clf._standardize(clf._validate_predict(Xs))
    drawn = problem_decisions(clf.posterior_draws_, Zs, clf.random_seed_, latent="draw")[0]
    assert np.median(np.abs(drawn - stored)) > 1e-2
