"""scikit-learn's estimator checks on every estimator, one 2-D array being one view.

``parametrize_with_checks`` runs each check as its own test. The checks that cannot apply are
listed with their reason in ``EXPECTED_FAILED`` (pytest reports them as expected failures);
every other check must pass. ``__sklearn_tags__`` is tested against what the estimators do.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import parametrize_with_checks

from bayesmv import (
    MKC,
    MONORMA,
    ONORMA,
    M3LAKClassifier,
    MVLClassifier,
    MVLClassifierCV,
    MVLRegressor,
    MVLRegressorCV,
    MVMLClassifier,
    MVMLClassifierCV,
    MVMLRegressor,
    MVMLRegressorCV,
    OVKRidge,
)
from bayesmv.preprocessing import ViewTransformer

_ONE_VIEW = "MKC completes a view's kernel from the other views; one 2-D array is one view, which it rejects"

_SCATTERED_NAN = (
    "allow_nan here means missing views (all-NaN rows); the check scatters NaN inside rows, which "
    "is refused with a clear error"
)

#: check name -> reason, per estimator class
EXPECTED_FAILED = {
    "M3LAKClassifier": {
        "check_estimators_pickle": _SCATTERED_NAN,
        "check_do_not_raise_errors_in_init_or_set_params": (
            "the check passes the name of **deprecated_params (the previous release's parameter names, "
            "kept for one release) as a parameter, which is refused; with every named parameter it passes "
            "(test_m3lak_init_and_set_params_take_any_value)"
        ),
    },
    "ViewTransformer": {"check_estimators_pickle": _SCATTERED_NAN},
    "MKC": dict.fromkeys(
        [
            "check_fit_score_takes_y",
            "check_estimators_overwrite_params",
            "check_dont_overwrite_parameters",
            "check_estimators_fit_returns_self",
            "check_readonly_memmap_input",
            "check_n_features_in_after_fitting",
            "check_positive_only_tag_during_fit",
            "check_estimators_dtypes",
            "check_dtype_object",
            "check_pipeline_consistency",
            "check_estimators_pickle",
            "check_f_contiguous_array_estimator",
            "check_methods_sample_order_invariance",
            "check_methods_subset_invariance",
            "check_fit2d_1sample",
            "check_fit2d_1feature",
            "check_dict_unchanged",
            "check_fit_idempotent",
            "check_fit_check_is_fitted",
            "check_n_features_in",
            "check_fit2d_predict1d",
        ],
        _ONE_VIEW,
    )
    | {
        "check_estimators_empty_data_messages": "a (n, 0) array is no kernel matrix; MKC says it must be (n, n)"
    },
}

FAST = [
    MVMLClassifier(),
    MVMLRegressor(),
    MVLClassifier(),
    MVLRegressor(),
    ONORMA(),
    MONORMA(),
    OVKRidge(),
    ViewTransformer(StandardScaler()),
    MKC(),
    MVLClassifierCV(gamma_As=(1e-4, 1e-2), gamma_Ws=(0.0, 1e-4), cv=3),
    MVLRegressorCV(gamma_As=(1e-4, 1e-2), gamma_Ws=(0.0, 1e-4), cv=3),
    MVMLClassifierCV(lmbdas=(0.01, 1.0), etas=(1.0,), cv=3),
    MVMLRegressorCV(lmbdas=(0.01, 1.0), etas=(1.0,), cv=3),
]

# tiny settings: the checks fit ~50 times on ~20 shapes, each shape compiling the sampler once;
# 100 warm-up sweeps, as the default tempered warm-up needs its untempered half to settle
# (check_classifiers_train's blobs: training accuracy 0.837 after 20 sweeps, 0.923 after 100)
SLOW = [
    M3LAKClassifier(
        n_latent=2, n_frequencies=4, spectral_prior="gaussian", num_warmup=100, num_samples=4, num_chains=1
    )
]


def _expected_failed(estimator):
    return EXPECTED_FAILED.get(type(estimator).__name__, {})


@parametrize_with_checks(FAST, expected_failed_checks=_expected_failed)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore")  # one chain of 4 draws: the sampler warns, as it should
@parametrize_with_checks(SLOW, expected_failed_checks=_expected_failed)
def test_sklearn_estimator_checks_m3lak(estimator, check):
    check(estimator)


@pytest.mark.parametrize(
    "estimator, allow_nan, multi_output, required",
    [
        (SLOW[0], True, False, True),
        (MVMLClassifier(), False, False, True),
        (MVMLRegressor(), False, False, True),
        (MVLClassifier(), False, False, True),
        (MVLRegressor(), False, True, True),
        (ONORMA(), False, True, True),
        (MONORMA(), False, True, True),
        (OVKRidge(), False, True, True),
        (ViewTransformer(StandardScaler()), True, False, False),
        (MKC(), True, False, False),
        (MVLClassifierCV(), False, False, True),
        (MVLRegressorCV(), False, True, True),
        (MVMLClassifierCV(), False, False, True),
        (MVMLRegressorCV(), False, False, True),
    ],
    ids=lambda p: type(p).__name__ if hasattr(p, "fit") else None,
)
def test_tags_say_what_the_estimator_supports(estimator, allow_nan, multi_output, required):
    tags = get_tags(estimator)
    assert tags.input_tags.allow_nan is allow_nan
    assert tags.target_tags.multi_output is multi_output
    assert tags.target_tags.required is required
    assert tags.input_tags.sparse is False
    if tags.classifier_tags is not None:
        assert tags.classifier_tags.multi_class is True


def _views(n=24, seed=0):
    rng = np.random.default_rng(seed)
    Xs = [rng.standard_normal((n, 3)), rng.standard_normal((n, 2))]
    return Xs, np.arange(n) % 3


@pytest.mark.parametrize("make", [MVMLClassifier, MVLClassifier])
def test_multi_class_tag_holds_on_three_classes(make):
    Xs, y = _views()
    est = make().fit(Xs, y)
    assert list(est.classes_) == [0, 1, 2]
    assert est.decision_function(Xs).shape == (len(y), 3)
    assert est.score(Xs, y) > 0.5


def test_allow_nan_means_missing_views_not_scattered_nan():
    Xs, y = _views()
    Xs[1][0] = np.nan  # sample 0 misses view 1: accepted
    Z = ViewTransformer(StandardScaler()).fit_transform(Xs)
    assert np.isnan(Z[1][0]).all() and np.isfinite(Z[0]).all()
    Xs[1][1, 0] = np.nan  # a partly-NaN row is not a missing view
    with pytest.raises(ValueError, match="partially-NaN"):
        ViewTransformer(StandardScaler()).fit(Xs)


@pytest.mark.slow
def test_one_array_is_one_view_and_a_list_of_rows_too():
    Xs, y = _views()
    a = MVMLClassifier().fit(Xs[0], y)
    b = MVMLClassifier().fit([Xs[0]], y)
    c = MVMLClassifier().fit(Xs[0].tolist(), y)
    assert a.n_views_ == b.n_views_ == c.n_views_ == 1 and a.n_features_in_ == 3
    np.testing.assert_allclose(a.decision_function(Xs[0]), b.decision_function([Xs[0]]), rtol=1e-12)
    np.testing.assert_allclose(a.decision_function(Xs[0]), c.decision_function(Xs[0].tolist()), rtol=1e-12)
    multi = MVMLClassifier().fit(Xs, y)
    assert multi.n_features_in_ == 5
    with pytest.raises(ValueError, match="Reshape your data"):
        a.predict(Xs[0][0])


def test_m3lak_init_and_set_params_take_any_value():
    """scikit-learn's check_do_not_raise_errors_in_init_or_set_params over the named parameters
    (its own run also passes ``deprecated_params``, the name of the ``**`` parameter)."""
    from inspect import Parameter, signature

    named = [
        k for k, p in signature(M3LAKClassifier).parameters.items() if p.kind is not Parameter.VAR_KEYWORD
    ]
    assert "sampler" in named and "deprecated_params" not in named
    for value in [-1, 3.0, "helloworld", np.array([1.0, 4.0]), [1], {}, []]:
        params = dict.fromkeys(named, value)
        M3LAKClassifier(**params).set_params(**params)
    with pytest.raises(TypeError, match="unexpected keyword"):
        M3LAKClassifier(deprecated_params=1)
