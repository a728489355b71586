"""scikit-learn's ``random_state`` on every estimator and function that draws; ``seed``, the old
name, still works with a ``FutureWarning`` and gives the same result."""

import warnings

import numpy as np
import pytest

import bayesmv.datasets as D
import bayesmv.kernels as K
from bayesmv import MKC, MONORMA, ONORMA, M3LAKClassifier, MVMLClassifier, MVMLRegressor, OVKRidge
from bayesmv.datasets import check_random_seed
from bayesmv.mkc import mkc_lambda_grid

RNG = np.random.default_rng(0)
XS = [RNG.standard_normal((24, 3)), RNG.standard_normal((24, 4))]
LABELS = (XS[0][:, 0] + XS[1][:, 1] > 0).astype(int)
TARGETS = np.stack([XS[0][:, 0], XS[1][:, 1]], axis=1)
KERNELS = [np.asarray(K.rbf_kernel(X, X, gamma=0.3)) for X in XS]
DIAGONAL = K.DiagonalMultiViewKernel((K.get_kernel("rbf", gamma=0.3), K.get_kernel("linear")))


def test_check_random_seed():
    assert check_random_seed(7) == 7 and check_random_seed(np.int64(7)) == 7
    assert check_random_seed(np.random.RandomState(0)) == np.random.RandomState(0).randint(2**31 - 1)
    assert check_random_seed(np.random.default_rng(0)) == np.random.default_rng(0).integers(2**31 - 1)
    fresh = {check_random_seed(None) for _ in range(4)}
    assert len(fresh) > 1 and all(0 <= s < 2**63 for s in fresh)
    for bad in (-1, 1.5, "0", True):
        with pytest.raises(ValueError, match="random_state"):
            check_random_seed(bad)
    with pytest.warns(FutureWarning, match="'seed' is deprecated"):
        assert check_random_seed(0, seed=5, owner="f") == 5


def _same(a, b):
    for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        if isinstance(x, list):
            for u, v in zip(x, y):
                np.testing.assert_array_equal(u, v)
        else:
            np.testing.assert_array_equal(x, y)


FUNCTIONS = {
    "make_latent_views": lambda **kw: D.make_latent_views(n_samples=20, **kw),
    "make_mvml_toy": lambda **kw: D.make_mvml_toy(n_samples=20, **kw),
    "make_mkc_toy": lambda **kw: D.make_mkc_toy("TOYL", n_samples=20, **kw),
    "make_multitask": lambda **kw: D.make_multitask(n_samples=20, n_tasks=2, **kw),
    "train_test_split_views": lambda **kw: D.train_test_split_views(XS, LABELS, **kw),
    "drop_views": lambda **kw: D.drop_views(XS, 0.5, **kw),
    "nystrom_ordering": lambda **kw: K.nystrom_ordering(24, **kw),
    "nystrom": lambda **kw: np.asarray(K.nystrom(XS[0], "rbf", 5, **kw).U),
    "block_nystrom": lambda **kw: [np.asarray(U) for U in K.block_nystrom(XS, "rbf", 5, **kw).U],
    "median_heuristic": lambda **kw: K.median_heuristic(XS[0], max_samples=10, **kw),
    "mean_heuristic": lambda **kw: K.mean_heuristic(XS[0], max_samples=10, **kw),
    "mkc_lambda_grid": lambda **kw: mkc_lambda_grid(KERNELS, [[1.0, 0.1]], method="rnd", max_iter=3, **kw),
}


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_functions_take_random_state_and_the_old_seed(name):
    draw = FUNCTIONS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # random_state itself never warns
        new = draw(random_state=3)
        other = draw(random_state=4)
    with pytest.warns(FutureWarning, match=f"{name}: 'seed' is deprecated"):
        old = draw(seed=3)
    _same(new, old)
    with pytest.raises(AssertionError):  # the state matters
        _same(new, other)


ESTIMATORS = {
    "MVMLClassifier": (
        lambda **kw: MVMLClassifier(nystrom=0.5, max_iter=2, **kw),
        LABELS,
        "decision_function",
    ),
    "MVMLRegressor": (lambda **kw: MVMLRegressor(nystrom=0.5, max_iter=2, **kw), XS[0][:, 0], "predict"),
    "ONORMA": (lambda **kw: ONORMA(DIAGONAL, shuffle=True, **kw), TARGETS, "predict"),
    "MONORMA": (lambda **kw: MONORMA([DIAGONAL, DIAGONAL], shuffle=True, **kw), TARGETS, "predict"),
    "OVKRidge": (lambda **kw: OVKRidge(DIAGONAL, lam=[1e-3, 1e-1, 1.0], cv=3, **kw), TARGETS, "cv_results_"),
    "M3LAKClassifier": (
        lambda **kw: M3LAKClassifier(
            n_latent=2,
            n_frequencies=4,
            spectral_prior="gaussian",
            num_warmup=5,
            num_samples=5,
            num_chains=1,
            **kw,
        ),
        LABELS,
        "predict_proba",
    ),
}


def _output(est, what):
    return (
        getattr(est, what)(XS)
        if callable(getattr(est, what))
        else np.asarray(getattr(est, what)["mean_squared_error"])
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_estimators_take_random_state_and_the_old_seed(name):
    make, y, what = ESTIMATORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # short M3LAK chains warn about r̂
        warnings.simplefilter("error", FutureWarning)
        new = make(random_state=3).fit(XS, y)
        other = make(random_state=4).fit(XS, y)
        drawn = make(random_state=np.random.RandomState(1)).fit(XS, y)
        assert "random_state" in new.get_params()
        with pytest.warns(FutureWarning, match=f"{name}: 'seed' is deprecated"):
            old = make(seed=3).fit(XS, y)
    assert new.random_seed_ == old.random_seed_ == 3 and other.random_seed_ == 4
    assert drawn.random_seed_ == np.random.RandomState(1).randint(2**31 - 1)
    np.testing.assert_array_equal(_output(new, what), _output(old, what))
    assert not np.array_equal(_output(new, what), _output(other, what))


def test_mkc_random_basis_takes_random_state():
    Ks = [Km.copy() for Km in KERNELS]
    for Km, missing in zip(Ks, (slice(0, 3), slice(3, 6))):  # view 0 misses samples 0-2, view 1 3-5
        Km[missing, :] = np.nan
        Km[:, missing] = np.nan
    new = MKC(method="rnd", max_iter=3, random_state=2).fit(Ks)
    with pytest.warns(FutureWarning, match="MKC: 'seed' is deprecated"):
        old = MKC(method="rnd", max_iter=3, seed=2).fit(Ks)
    other = MKC(method="rnd", max_iter=3, random_state=5).fit(Ks)
    np.testing.assert_array_equal(np.stack(new.completed_kernels_), np.stack(old.completed_kernels_))
    assert not np.array_equal(np.stack(new.completed_kernels_), np.stack(other.completed_kernels_))
