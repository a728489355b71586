"""Issue 9.1: malformed input never crashes deep inside JAX, hangs or returns NaN.

Property-based (hypothesis): every public estimator and every public data/kernel function is
driven with malformed input. Every case must raise ``ValueError``, ``TypeError`` or
scikit-learn's ``NotFittedError``, raised from bayesmv's own code (not from inside JAX/NumPy),
with a message naming the offending argument. A per-case alarm turns a hang into a failure.
Cases are counted (``hypothesis_cases``) and the total is printed in the terminal summary.

The "predict with the wrong shape" cases use one fitted instance per estimator per session
(``fitted_estimator`` in ``conftest.py``); every other case must fail in validation, before any
JIT compile.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import traceback
import warnings

import numpy as np
import pytest
from conftest import (
    CLASSIFIERS,
    ESTIMATOR_NAMES,
    MULTIVIEW_NAMES,
    SINGLE_X_NAMES,
    fit_args,
    make_estimator,
    make_tiny_problem,
    predict_input,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

import bayesmv
from bayesmv import datasets, kernels
from bayesmv.m3lak.settings import LEGACY_PARAMETERS

ERRORS = (ValueError, TypeError, NotFittedError)
BAYESMV_DIR = os.path.dirname(bayesmv.__file__)
CASE_TIMEOUT_S = int(
    os.environ.get("BAYESMV_CASE_TIMEOUT", "180")
)  # a hang becomes a failure (the machine is shared)

FAST = dict(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
SMALL = {**FAST, "max_examples": 12}

PROBLEM = make_tiny_problem()
N = PROBLEM["Xs"][0].shape[0]
FEATURES = tuple(X.shape[1] for X in PROBLEM["Xs"])


class _Hang(Exception):
    pass


@contextlib.contextmanager
def _alarm(seconds):
    def handler(signum, frame):
        raise _Hang(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _raised_in_bayesmv(exc):
    """True if the innermost frame that raised ``exc`` is bayesmv code (validation), not JAX/NumPy."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and frames[-1].filename.startswith(BAYESMV_DIR)


def expect_error(fn, names, counter, key, kinds=ERRORS):
    """Run ``fn``; it must raise one of ``kinds`` from bayesmv with a message matching ``names``."""
    counter[key] += 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with _alarm(CASE_TIMEOUT_S):
                out = fn()
        except kinds as exc:
            msg = str(exc)
            assert re.search(names, msg), f"{type(exc).__name__} message does not name {names!r}: {msg}"
            assert _raised_in_bayesmv(exc), (
                f"{type(exc).__name__} raised outside bayesmv (not a validation error): {msg}\n"
                + "".join(traceback.format_tb(exc.__traceback__)[-3:])
            )
            for word in ("Tracer", "dot_general", "Incompatible shapes", "broadcast"):
                assert word not in msg, f"JAX-internal wording in the message: {msg}"
            return exc
        except _Hang as exc:
            pytest.fail(f"hang: {exc}")
        except Exception as exc:  # noqa: BLE001
            pytest.fail(f"{type(exc).__name__} instead of ValueError/TypeError/NotFittedError: {exc}")
    if hasattr(out, "__array__") and not isinstance(out, np.ndarray):
        out = np.asarray(out)
    summary = repr(out)[:200]
    if isinstance(out, np.ndarray) and out.dtype.kind == "f" and not np.isfinite(out).all():
        pytest.fail(f"silent NaN/inf result: {summary}")
    pytest.fail(f"no error raised; returned {summary}")


def _views():
    return [X.copy() for X in PROBLEM["Xs"]]


def _y(name, n=N):
    y = PROBLEM["y"] if name in CLASSIFIERS else PROBLEM["y_reg"]
    return y[:n].copy()


def _fit(name, Xs, y, **params):
    est = make_estimator(name, **params)
    return lambda: est.fit(Xs, y)


def _view_name(v):
    return rf"Xs\[{v}\]"


# ------------------------------------------------------------------------------------------
# multi-view estimators: fit(Xs, y)
# ------------------------------------------------------------------------------------------
mv_names = st.sampled_from(MULTIVIEW_NAMES)
view_idx = st.integers(0, 1)


@settings(**FAST)
@given(name=mv_names, v=view_idx, delta=st.integers(-5, 5).filter(lambda d: d != 0))
def test_mismatched_sample_counts(hypothesis_cases, name, v, delta):
    Xs = _views()
    rows = max(1, N + delta)
    Xs[v] = np.resize(Xs[v], (rows, Xs[v].shape[1]))
    if rows == N:
        return
    expect_error(_fit(name, Xs, _y(name)), r"Xs|\by\b", hypothesis_cases, "mv.mismatched_samples")


@settings(**FAST)
@given(name=mv_names, n_y=st.integers(2, 2 * N).filter(lambda n: n != N))
def test_label_length_mismatch(hypothesis_cases, name, n_y):
    y = np.resize(_y(name), n_y)
    if name in CLASSIFIERS:
        y[:2] = [0, 1]
    expect_error(_fit(name, _views(), y), r"\by\b", hypothesis_cases, "mv.y_length")


@settings(**FAST)
@given(name=mv_names, v=view_idx, shape=st.sampled_from(["1d", "3d", "0d"]))
def test_wrong_ndim(hypothesis_cases, name, v, shape):
    Xs = _views()
    Xs[v] = {"1d": Xs[v][:, 0], "3d": Xs[v][:, :, None], "0d": np.float64(1.0)}[shape]
    expect_error(_fit(name, Xs, _y(name)), _view_name(v), hypothesis_cases, "mv.wrong_ndim")


@settings(**FAST)
@given(name=mv_names, v=view_idx)
def test_empty_view(hypothesis_cases, name, v):
    Xs = _views()
    Xs[v] = np.zeros((N, 0))
    expect_error(_fit(name, Xs, _y(name)), _view_name(v), hypothesis_cases, "mv.empty_view")


@settings(**SMALL)
@given(name=mv_names)
def test_zero_samples(hypothesis_cases, name):
    Xs = [np.zeros((0, d)) for d in FEATURES]
    expect_error(_fit(name, Xs, _y(name, 0)), r"Xs|\by\b", hypothesis_cases, "mv.zero_samples")


@settings(**FAST)
@given(name=mv_names, container=st.sampled_from(["ndarray", "dict", "none", "string", "empty"]))
def test_views_not_a_list(hypothesis_cases, name, container):
    Xs = {
        "ndarray": np.stack([PROBLEM["Xs"][0]] * 2),
        "dict": {"a": PROBLEM["Xs"][0]},
        "none": None,
        "string": "Xs",
        "empty": [],
    }[container]
    expect_error(_fit(name, Xs, _y(name)), r"Xs", hypothesis_cases, "mv.not_a_list")


@settings(**FAST)
@given(name=st.sampled_from(CLASSIFIERS), label=st.sampled_from([0, 1, "a", 2.0]))
def test_single_class(hypothesis_cases, name, label):
    y = np.full(N, label, dtype=object if isinstance(label, str) else None)
    if isinstance(label, str):
        y = y.astype(str)
    expect_error(_fit(name, _views(), y), r"\by\b", hypothesis_cases, "mv.single_class")


@settings(**FAST)
@given(
    name=st.sampled_from([n for n in MULTIVIEW_NAMES if n != "M3LAKClassifier"]),
    v=view_idx,
    i=st.integers(0, N - 1),
    j=st.integers(0, 1),
    value=st.sampled_from([np.nan, np.inf, -np.inf]),
)
def test_nonfinite_data(hypothesis_cases, name, v, i, j, value):
    Xs = _views()
    Xs[v][i, j] = value
    expect_error(_fit(name, Xs, _y(name)), _view_name(v), hypothesis_cases, "mv.nonfinite_data")


@settings(**FAST)
@given(
    v=view_idx,
    i=st.integers(0, N - 1),
    kind=st.sampled_from(["partial_nan", "inf", "all_views", "whole_view"]),
)
def test_missing_view_rules(hypothesis_cases, v, i, kind):
    """M3LAK supports missing views (all-NaN rows); everything else non-finite is an error."""
    Xs = _views()
    if kind == "partial_nan":
        Xs[v][i, 0] = np.nan
        names = _view_name(v)
    elif kind == "inf":
        Xs[v][i, 1] = np.inf
        names = _view_name(v)
    elif kind == "all_views":
        for X in Xs:
            X[i] = np.nan
        names = rf"sample {i}.*Xs"
    else:
        Xs[v][:] = np.nan
        names = _view_name(v)
    expect_error(
        _fit("M3LAKClassifier", Xs, _y("M3LAKClassifier")), names, hypothesis_cases, "m3lak.missing_views"
    )


@settings(**FAST)
@given(name=mv_names, i=st.integers(0, N - 1), value=st.sampled_from([np.nan, np.inf, -np.inf]))
def test_nonfinite_labels(hypothesis_cases, name, i, value):
    y = _y(name).astype(float)
    y[i] = value
    expect_error(_fit(name, _views(), y), r"\by\b", hypothesis_cases, "mv.nonfinite_labels")


@settings(**FAST)
@given(name=mv_names, v=view_idx, kind=st.sampled_from(["str", "object", "complex", "ragged"]))
def test_string_object_views(hypothesis_cases, name, v, kind):
    Xs = _views()
    if kind == "str":
        Xs[v] = Xs[v].astype(str)
    elif kind == "object":
        Xs[v] = Xs[v].astype(object)
        Xs[v][0, 0] = "x"
    elif kind == "complex":
        Xs[v] = Xs[v] + 1j
    else:
        Xs[v] = [list(row) for row in Xs[v]]
        Xs[v][0] = Xs[v][0][:-1]
    expect_error(_fit(name, Xs, _y(name)), _view_name(v), hypothesis_cases, "mv.string_views")


@settings(**FAST)
@given(name=mv_names, kind=st.sampled_from(["mixed_object", "none", "nested", "2d"]))
def test_bad_label_arrays(hypothesis_cases, name, kind):
    y = _y(name)
    if kind == "mixed_object":
        y = np.array([1, "a", None, 2.5] * (N // 4), dtype=object)
    elif kind == "none":
        y = np.array([None] * N, dtype=object)
    elif kind == "nested":
        y = np.array([[1, 2]] * N, dtype=object)
        y = np.stack([y[:, 0], y[:, 1], y[:, 0]], axis=1)
    else:
        y = np.stack([y, y, y], axis=1)[:, :, None]
    expect_error(_fit(name, _views(), y), r"\by\b", hypothesis_cases, "mv.bad_labels")


# ------------------------------------------------------------------------------------------
# hyper-parameters (all estimators): negative / zero / non-finite / wrong type
# ------------------------------------------------------------------------------------------
BAD_NUMBERS = (0, -1, -0.5, np.nan, np.inf, "1")
HYPER = {
    "M3LAKClassifier": {
        "n_latent": (0, -1, 2.5, "2"),
        "n_frequencies": (0, -3, 1.5),
        "C": BAD_NUMBERS,
        "n_view_latent": (0, -1),
        "num_samples": (0, -1),
        "num_warmup": (-1, 2.5),
        "num_chains": (0, -2),
        "dp_capacity": (0, -1),
        "dp_update": ("gibbs", None),
        "dp_split_merge": (-1, 1.5, "2"),
        "eta": BAD_NUMBERS,
        "alpha": BAD_NUMBERS,
        "a_r": BAD_NUMBERS,
        "b_r": BAD_NUMBERS,
        "a_tau": BAD_NUMBERS,
        "b_tau": BAD_NUMBERS,
        "v": BAD_NUMBERS,
        "target_accept": (0, 1, 1.5, -0.2, np.nan),
        "init_step_size": BAD_NUMBERS,
        "random_state": (-1, 1.5, "0"),
        "lengthscale": (0, -1, np.nan),
        "hmc_steps_h": (0, -1),
        "h_lvm_passes": (0, -1, 1.5),
        "kernel_passes": (0, -1, 1.5),
        "hmc_steps_omega": (0, -1),
        "spectral_prior": ("nope", None),
        "chain_method": ("nope",),
        "niw_kappa0": BAD_NUMBERS,
        "niw_psi0": BAD_NUMBERS,
        "niw_nu0": (0, -1, 0.5),
        "v_prior": ((0, 1), (1,), "x"),
        "standardize": ("yes",),
    },
    "MVMLClassifier": {
        "lmbda": BAD_NUMBERS,
        "eta": (0, -1, np.nan),
        "max_iter": (-1, 1.5),
        "tol": (-1, np.nan),
        "nystrom": (0, -0.5, 1.5, 10_000, "x"),
        "metric": ("nope",),
        "step_size": (0, -1, 10.0),
        "kernel": ("nope", ["rbf"] * 3),
        "kernel_params": ("x", [{}] * 3),
        "random_state": (1.5, "0"),
    },
    "MVMLRegressor": {"lmbda": BAD_NUMBERS, "eta": (0, -1), "nystrom": (0, 1.5), "tol": (-1,)},
    "MVLClassifier": {
        "gamma_A": BAD_NUMBERS,
        "gamma_B": (-1, np.nan),
        "gamma_W": (-1, np.inf),
        "max_iter": (0, -1),
        "tol": (0, -1),
        "n_neighbors": (0, -1),
        "graph": ("nope",),
        "solver": ("nope",),
        "loss": ("nope",),
        "c": ([1.0], [0.0, 0.0], [np.nan, 1.0]),
        "qp_tol": (0, -1),
        "qp_max_iter": (0, -1),
        "kernel": ("nope", ["rbf"] * 3),
    },
    "MVLRegressor": {
        "gamma_A": BAD_NUMBERS,
        "gamma_B": (-1,),
        "gamma_W": (-1,),
        "c": ([1.0, 2.0, 3.0],),
        "kernel": ("nope",),
    },
    "ONORMA": {
        "lam": (-1, np.nan),
        "eta0": BAD_NUMBERS,
        "truncation": (0, -1, 1.5),
        "block_size": (0, -1),
        "loss": ("nope",),
        "schedule": ("nope",),
        "kernel": ("rbf", 3),
    },
    "MONORMA": {"r": BAD_NUMBERS, "lam": (-1,), "eta0": (0, -1), "kernels": ([], "rbf")},
    "OVKRidge": {"lam": (0, -1, np.nan, [0.1, -1.0], []), "solver": ("nope",), "kernel": ("rbf", 3)},
    "MKC": {
        "lambda1": (-1, np.nan),
        "lambda2": (-1, np.inf),
        "max_iter": (0, -1, 1.5),
        "tol": (-1,),
        "ridge": (0, -1),
        "n_basis": (0, -1),
        "method": ("nope",),
    },
}
HYPER_CASES = [
    (name, p, bad) for name, table in HYPER.items() for p, values in table.items() for bad in values
]


def _param_names(param):
    base = {"kernels": "kernels", "v_prior": r"v_prior|a_v|b_v"}.get(param, re.escape(param))
    if param == "eta0":
        return r"eta0|eta_t"
    if param == "lam":
        return r"\blam\b|eta_t \* lam"
    return base


@settings(**{**FAST, "max_examples": 300})
@given(case=st.sampled_from(HYPER_CASES))
def test_bad_hyperparameters(hypothesis_cases, case):
    name, param, bad = case
    est = make_estimator(name)
    if name == "M3LAKClassifier" and param in LEGACY_PARAMETERS:  # a field of priors= / sampler=
        key = f"{LEGACY_PARAMETERS[param]}__{param}"
    else:
        key = param
    assert key.partition("__")[0] in est.get_params(), f"{name} has no parameter {key!r} (update HYPER)"
    est.set_params(**{key: bad})
    clone(est)  # the sklearn protocol survives bad values (validation happens in fit)
    args, kwargs = fit_args(name, PROBLEM)
    expect_error(lambda: est.fit(*args, **kwargs), _param_names(param), hypothesis_cases, "hyper")


# ------------------------------------------------------------------------------------------
# predicting before fitting; predicting with a different number of views/features
# ------------------------------------------------------------------------------------------
PREDICT_METHODS = ("predict", "decision_function", "predict_proba", "score")


@settings(**FAST)
@given(
    name=st.sampled_from([n for n in ESTIMATOR_NAMES if n != "MKC"]), method=st.sampled_from(PREDICT_METHODS)
)
def test_predict_before_fit(hypothesis_cases, name, method):
    est = make_estimator(name)
    if not hasattr(est, method):
        return
    X = predict_input(name, PROBLEM)
    fn = getattr(est, method)
    call = (
        (lambda: fn(X, _y(name) if name in MULTIVIEW_NAMES else PROBLEM["y_reg"]))
        if method == "score"
        else (lambda: fn(X))
    )
    expect_error(call, r"not fitted|fit", hypothesis_cases, "predict_before_fit", kinds=(NotFittedError,))


@settings(**{**FAST, "max_examples": 60})
@given(
    name=mv_names,
    kind=st.sampled_from(
        [
            "drop_view",
            "extra_view",
            "more_features",
            "fewer_features",
            "1d",
            "nan",
            "inf",
            "zero_rows",
            "strings",
            "not_a_list",
            "mismatched_rows",
        ]
    ),
    v=view_idx,
)
def test_predict_wrong_views(hypothesis_cases, fitted_estimator, name, kind, v):
    est = fitted_estimator(name)
    Xs = _views()
    names = _view_name(v)
    if kind == "drop_view":
        Xs = Xs[:1]
        names = r"Xs.*view"
    elif kind == "extra_view":
        Xs = Xs + [Xs[0]]
        names = r"Xs.*view"
    elif kind == "more_features":
        Xs[v] = np.hstack([Xs[v], Xs[v][:, :1]])
    elif kind == "fewer_features":
        Xs[v] = Xs[v][:, :1]
    elif kind == "1d":
        Xs[v] = Xs[v][:, 0]
    elif kind == "nan":
        Xs[v][3, 0] = np.nan  # a partial NaN row is an error even where missing views are allowed
    elif kind == "inf":
        Xs[v][2, 1] = -np.inf
    elif kind == "zero_rows":
        Xs = [X[:0] for X in Xs]
        names = r"Xs\[0\]"
    elif kind == "strings":
        Xs[v] = Xs[v].astype(str)
    elif kind == "not_a_list":
        Xs = Xs[0]
        names = r"Xs"
    else:
        Xs[v] = Xs[v][:-2]
        names = r"Xs"
    expect_error(lambda: est.predict(Xs), names, hypothesis_cases, "mv.predict_wrong_views")


@settings(**SMALL)
@given(i=st.integers(0, N - 1))
def test_predict_sample_missing_everywhere(hypothesis_cases, fitted_estimator, i):
    est = fitted_estimator("M3LAKClassifier")
    Xs = _views()
    for X in Xs:
        X[i] = np.nan
    expect_error(lambda: est.predict_proba(Xs), rf"sample {i}.*Xs", hypothesis_cases, "m3lak.predict_missing")


# ------------------------------------------------------------------------------------------
# single-input estimators (ONORMA, MONORMA, OVKRidge): fit(X, y)
# ------------------------------------------------------------------------------------------
sx_names = st.sampled_from(SINGLE_X_NAMES)
X_NAMES = r"\bX\b|X\[0\]"


def _fit_x(name, X, y, **params):
    est = make_estimator(name, **params)
    return lambda: est.fit(X, y)


@settings(**{**FAST, "max_examples": 60})
@given(
    name=sx_names,
    kind=st.sampled_from(
        ["1d", "3d", "zero_rows", "zero_cols", "nan", "inf", "str", "object", "list_of_views", "none"]
    ),
    i=st.integers(0, N - 1),
)
def test_single_x_bad_inputs(hypothesis_cases, name, kind, i):
    X = PROBLEM["X"].copy()
    y = PROBLEM["y_reg"].copy()
    if kind == "1d":
        X = X[:, 0]
    elif kind == "3d":
        X = X[:, :, None]
    elif kind == "zero_rows":
        X, y = X[:0], y[:0]
    elif kind == "zero_cols":
        X = X[:, :0]
    elif kind == "nan":
        X[i, 0] = np.nan
    elif kind == "inf":
        X[i, 1] = np.inf
    elif kind == "str":
        X = X.astype(str)
    elif kind == "object":
        X = X.astype(object)
        X[i, 0] = None
    elif kind == "list_of_views":
        X = list(PROBLEM["Xs"])
    else:
        X = None
    expect_error(_fit_x(name, X, y), X_NAMES, hypothesis_cases, "single_x.bad_X")


@settings(**FAST)
@given(
    name=sx_names, kind=st.sampled_from(["short", "long", "nan", "inf", "str", "3d"]), i=st.integers(0, N - 1)
)
def test_single_x_bad_targets(hypothesis_cases, name, kind, i):
    y = PROBLEM["y_reg"].copy()
    if kind == "short":
        y = y[: max(1, i)]
    elif kind == "long":
        y = np.concatenate([y, y[: i + 1]])
    elif kind == "nan":
        y[i] = np.nan
    elif kind == "inf":
        y[i] = -np.inf
    elif kind == "str":
        y = y.astype(str)
    else:
        y = y[:, None, None]
    expect_error(_fit_x(name, PROBLEM["X"], y), r"\bY\b|\by\b", hypothesis_cases, "single_x.bad_y")


@settings(**{**FAST, "max_examples": 40})
@given(
    name=sx_names,
    kind=st.sampled_from(
        ["more_features", "fewer_features", "1d", "nan", "zero_rows", "str", "list_of_views"]
    ),
)
def test_single_x_predict_wrong_shape(hypothesis_cases, fitted_estimator, name, kind):
    est = fitted_estimator(name)
    X = PROBLEM["X"].copy()
    if kind == "more_features":
        X = np.hstack([X, X[:, :1]])
    elif kind == "fewer_features":
        X = X[:, :2]
    elif kind == "1d":
        X = X[:, 0]
    elif kind == "nan":
        X[0, 0] = np.nan
    elif kind == "zero_rows":
        X = X[:0]
    elif kind == "str":
        X = X.astype(str)
    else:
        X = list(PROBLEM["Xs"])
    expect_error(lambda: est.predict(X), X_NAMES, hypothesis_cases, "single_x.predict_wrong_shape")


@settings(**SMALL)
@given(
    name=st.sampled_from(["ONORMA", "MONORMA"]), kind=st.sampled_from(["one_class", "nan", "unknown_label"])
)
def test_online_classification_labels(hypothesis_cases, name, kind):
    y = PROBLEM["y"].copy()
    if kind == "one_class":
        y[:] = 1
        names = r"\by\b"
        est = make_estimator(name, loss="ovr_hinge")
        call = lambda: est.fit(PROBLEM["X"], y)  # noqa: E731
    elif kind == "nan":
        y = y.astype(float)
        y[0] = np.nan
        names = r"\by\b"
        est = make_estimator(name, loss="ovr_hinge")
        call = lambda: est.fit(PROBLEM["X"], y)  # noqa: E731
    else:
        est = make_estimator(name, loss="ovr_hinge")
        est.partial_fit(PROBLEM["X"][:8], y[:8], classes=[0, 1])
        y2 = np.full(8, 7)
        names = r"\by\b"
        call = lambda: est.partial_fit(PROBLEM["X"][8:], y2)  # noqa: E731
    if name == "MONORMA":
        from bayesmv.kernels import SeparableKernel

        est.set_params(kernels=[SeparableKernel("rbf", ((1.0,),)), SeparableKernel("linear", ((1.0,),))])
    expect_error(call, names, hypothesis_cases, "online.labels")


# ------------------------------------------------------------------------------------------
# MKC: fit(Ks, observed=None)
# ------------------------------------------------------------------------------------------
@settings(**{**FAST, "max_examples": 50})
@given(
    kind=st.sampled_from(
        [
            "non_square",
            "sizes",
            "one_view",
            "3d",
            "inf",
            "partial_nan",
            "str",
            "not_a_list",
            "asymmetric",
            "zero_size",
            "obs_shape",
            "obs_dtype",
            "all_missing_sample",
            "negative_diag",
        ]
    ),
    m=st.integers(0, 1),
    i=st.integers(2, N - 1),
)
def test_mkc_bad_kernels(hypothesis_cases, kind, m, i):
    Ks = [K.copy() for K in PROBLEM["Ks"]]
    observed = None
    names = r"Ks"
    if kind == "non_square":
        Ks[m] = Ks[m][:, :-1]
    elif kind == "sizes":
        Ks[m] = Ks[m][:-1, :-1]
    elif kind == "one_view":
        Ks = Ks[:1]
    elif kind == "3d":
        Ks[m] = Ks[m][None]
    elif kind == "inf":
        Ks[m][i, i] = np.inf
    elif kind == "partial_nan":
        Ks[m][i, 0] = Ks[m][0, i] = np.nan
    elif kind == "str":
        Ks[m] = Ks[m].astype(str)
    elif kind == "not_a_list":
        Ks = Ks[0]
    elif kind == "asymmetric":
        Ks[m][i, 0] += 1.0
    elif kind == "zero_size":
        Ks = [np.zeros((0, 0)), np.zeros((0, 0))]
    elif kind == "obs_shape":
        observed = np.ones((2, N - 1), bool)
        names = r"observed"
    elif kind == "obs_dtype":
        observed = np.ones((2, N))
        names = r"observed"
    elif kind == "all_missing_sample":
        for K in Ks:
            K[i, :] = np.nan
            K[:, i] = np.nan
        names = rf"sample.*{i}.*missing|Ks"
    else:
        Ks[m] = -np.abs(Ks[m])
        names = rf"Ks\[{m}\]"
    est = make_estimator("MKC")
    expect_error(lambda: est.fit(Ks, observed=observed), names, hypothesis_cases, "mkc.bad_kernels")


# ------------------------------------------------------------------------------------------
# public kernel functions
# ------------------------------------------------------------------------------------------
KERNEL_FUNCS = {
    "rbf_kernel": kernels.rbf_kernel,
    "linear_kernel": kernels.linear_kernel,
    "polynomial_kernel": kernels.polynomial_kernel,
    "laplacian_kernel": kernels.laplacian_kernel,
    "chi2_kernel": kernels.chi2_kernel,
    "additive_chi2_kernel": kernels.additive_chi2_kernel,
    "cosine_kernel": kernels.cosine_kernel,
    "jaccard_kernel": kernels.jaccard_kernel,
    "squared_euclidean_distances": kernels.squared_euclidean_distances,
    "pairwise_kernel": lambda X, Y=None: kernels.pairwise_kernel(X, Y, kernel="rbf"),
    "get_kernel(laplacian)": lambda X, Y=None: kernels.get_kernel("laplacian", gamma=0.5)(X, Y),
    "kernel_matvec": lambda X, Y=None: kernels.kernel_matvec(
        X, np.ones(3 if Y is None else np.shape(Y)[0]), Y=Y
    ),
}


@settings(**{**FAST, "max_examples": 80})
@given(
    fn=st.sampled_from(sorted(KERNEL_FUNCS)),
    kind=st.sampled_from(["1d", "3d", "feature_mismatch", "nan", "inf", "str", "Y_nan", "Y_1d", "object"]),
    i=st.integers(0, 2),
)
def test_kernel_functions_bad_input(hypothesis_cases, fn, kind, i):
    X = np.abs(PROBLEM["X"][:3].copy())
    Y = None
    names = r"\bX\b"
    if kind == "1d":
        X = X[:, 0]
    elif kind == "3d":
        X = X[:, :, None]
    elif kind == "feature_mismatch":
        Y = X[:, :2]
        names = r"\bY\b"
    elif kind == "nan":
        X[i, 0] = np.nan
    elif kind == "inf":
        X[i, 1] = np.inf
    elif kind == "str":
        X = X.astype(str)
    elif kind == "object":
        X = X.astype(object)
    elif kind == "Y_nan":
        Y = X.copy()
        Y[i, 2] = np.nan
        names = r"\bY\b"
    else:
        Y = X[0]
        names = r"\bY\b"
    f = KERNEL_FUNCS[fn]
    expect_error(lambda: np.asarray(f(X, Y)), names, hypothesis_cases, "kernels.functions")


@settings(**FAST)
@given(
    fn=st.sampled_from(["rbf_kernel", "laplacian_kernel", "polynomial_kernel", "chi2_kernel"]),
    gamma=st.sampled_from([0.0, -1.0, -1e-3, np.nan, np.inf]),
)
def test_kernel_bad_gamma(hypothesis_cases, fn, gamma):
    X = np.abs(PROBLEM["X"][:3])
    expect_error(
        lambda: np.asarray(getattr(kernels, fn)(X, gamma=gamma)), r"gamma", hypothesis_cases, "kernels.gamma"
    )


KERNEL_UTILITY_CASES = {
    "get_kernel(unknown)": (lambda: kernels.get_kernel("nope"), r"kernel"),
    "get_kernel(number)": (lambda: kernels.get_kernel(3), r"kernel"),
    "median_heuristic(nan)": (
        lambda: kernels.median_heuristic(np.array([[0.0, 1.0], [np.nan, 2.0]])),
        r"\bX\b",
    ),
    "median_heuristic(1 sample)": (lambda: kernels.median_heuristic(np.ones((1, 2))), r"\bX\b"),
    "median_heuristic(str)": (lambda: kernels.median_heuristic(np.ones((3, 2)).astype(str)), r"\bX\b"),
    "mean_heuristic(1d)": (lambda: kernels.mean_heuristic(np.ones(4)), r"\bX\b"),
    "gamma_from_bandwidth(0)": (lambda: kernels.gamma_from_bandwidth(0.0), r"sigma"),
    "gamma_from_bandwidth(-1)": (lambda: kernels.gamma_from_bandwidth(-1.0), r"sigma"),
    "gamma_from_bandwidth(nan)": (lambda: kernels.gamma_from_bandwidth(np.nan), r"sigma"),
    "gamma_from_bandwidth(inf)": (lambda: kernels.gamma_from_bandwidth(np.inf), r"sigma"),
    "center_kernel(non-square)": (lambda: kernels.center_kernel(np.ones((3, 2))), r"\bK\b"),
    "center_kernel(K_test)": (lambda: kernels.center_kernel(np.eye(3), np.ones((2, 4))), r"K_test"),
    "normalize_kernel(negative diag)": (lambda: kernels.normalize_kernel(-np.eye(3)), r"diag"),
    "normalize_kernel(non-square)": (lambda: kernels.normalize_kernel(np.ones((3, 2))), r"diag_x|non-square"),
    "n_landmarks(0)": (lambda: kernels.n_landmarks(0, 10), r"nystrom"),
    "n_landmarks(1.5)": (lambda: kernels.n_landmarks(1.5, 10), r"nystrom"),
    "n_landmarks(-0.5)": (lambda: kernels.n_landmarks(-0.5, 10), r"nystrom"),
    "n_landmarks(20)": (lambda: kernels.n_landmarks(20, 10), r"nystrom"),
    "nystrom(nan X)": (lambda: kernels.nystrom(np.array([[np.nan, 1.0], [1.0, 2.0]])), r"\bX\b"),
    "nystrom(bad n_components)": (lambda: kernels.nystrom(np.ones((4, 2)), n_components=0), r"nystrom"),
    "random_fourier_features(mismatch)": (
        lambda: kernels.random_fourier_features(np.ones((3, 2)), np.ones((5, 3))),
        r"omega",
    ),
    "random_fourier_features(1d omega)": (
        lambda: kernels.random_fourier_features(np.ones((3, 2)), np.ones(2)),
        r"omega",
    ),
    "implied_kernel(mismatch)": (lambda: kernels.implied_kernel(np.ones((3, 2)), np.ones((5, 3))), r"omega"),
    "sample_gaussian_frequencies(-1)": (
        lambda: kernels.sample_gaussian_frequencies(__import__("jax").random.PRNGKey(0), -1, 2),
        r"n_frequencies",
    ),
    "sample_gaussian_frequencies(dim 0)": (
        lambda: kernels.sample_gaussian_frequencies(__import__("jax").random.PRNGKey(0), 3, 0),
        r"dim",
    ),
    "sample_gaussian_frequencies(gamma<0)": (
        lambda: kernels.sample_gaussian_frequencies(__import__("jax").random.PRNGKey(0), 3, 2, gamma=-1.0),
        r"gamma",
    ),
    "SeparableKernel(non-square T)": (lambda: kernels.SeparableKernel("rbf", np.ones((2, 3))), r"\bT\b"),
    "SeparableKernel(asymmetric T)": (
        lambda: kernels.SeparableKernel("rbf", np.array([[1.0, 2.0], [0.0, 1.0]])),
        r"\bT\b",
    ),
    "nonseparable_kernel(mu>1)": (lambda: kernels.nonseparable_kernel(1.5, 2), r"\bmu\b"),
    "SumOfSeparableKernels(negative weight)": (
        lambda: kernels.SumOfSeparableKernels((kernels.SeparableKernel(),), (-1.0,)),
        r"weights",
    ),
}


@settings(**{**FAST, "max_examples": 60})
@given(case=st.sampled_from(sorted(KERNEL_UTILITY_CASES)))
def test_kernel_utilities_bad_input(hypothesis_cases, case):
    fn, names = KERNEL_UTILITY_CASES[case]
    expect_error(fn, names, hypothesis_cases, "kernels.utilities")


# ------------------------------------------------------------------------------------------
# public data functions
# ------------------------------------------------------------------------------------------
BAD_COUNTS = (0, -1, 2.5, "10", None, np.nan)
DATA_CASES = {}
for _p in ("n_samples", "n_views", "n_latent", "n_features"):
    for _b in BAD_COUNTS:
        DATA_CASES[f"make_latent_views({_p}={_b!r})"] = (
            (lambda p=_p, b=_b: datasets.make_latent_views(**{p: b})),
            re.escape(_p),
        )
for _b in BAD_COUNTS:
    DATA_CASES[f"make_mvml_toy(n_samples={_b!r})"] = (
        (lambda b=_b: datasets.make_mvml_toy(n_samples=b)),
        "n_samples",
    )
    DATA_CASES[f"make_mkc_toy(n_samples={_b!r})"] = (
        (lambda b=_b: datasets.make_mkc_toy(n_samples=b)),
        "n_samples|n_basis",
    )
    DATA_CASES[f"make_multitask(n_samples={_b!r})"] = (
        (lambda b=_b: datasets.make_multitask(n_samples=b)),
        "n_samples",
    )
    DATA_CASES[f"make_multitask(n_tasks={_b!r})"] = (
        (lambda b=_b: datasets.make_multitask(n_tasks=b)),
        "n_tasks",
    )
DATA_CASES.update(
    {
        "make_latent_views(noise=-1)": (lambda: datasets.make_latent_views(noise=-1.0), "noise"),
        "make_latent_views(rule)": (lambda: datasets.make_latent_views(rule="nope"), "rule"),
        "make_latent_views(n_features list)": (
            lambda: datasets.make_latent_views(n_features=[3, 4, 5]),
            "n_features",
        ),
        "make_mvml_toy(shear=nan)": (lambda: datasets.make_mvml_toy(shear=np.nan), "shear"),
        "make_mkc_toy(name)": (lambda: datasets.make_mkc_toy(name="nope"), r"\bname\b"),
        "make_mkc_toy(n_basis>n)": (lambda: datasets.make_mkc_toy(n_samples=5, n_basis=10), "n_basis"),
        "make_multitask(n_features=3)": (lambda: datasets.make_multitask(n_features=3), "n_features"),
        "load_mfeat(bad view)": (lambda: datasets.load_mfeat(["nope"]), r"view"),
        "load_mfeat(no views)": (lambda: datasets.load_mfeat([]), r"views"),
        "check_positive(-1)": (lambda: datasets.check_positive("alpha", -1.0), "alpha"),
        "check_positive(nan)": (lambda: datasets.check_positive("alpha", np.nan), "alpha"),
        "check_positive(int)": (lambda: datasets.check_positive("k", 1.5, integer=True), r"\bk\b"),
        "check_views(y nan)": (lambda: datasets.check_views(_views(), np.full(N, np.nan)), r"\by\b"),
        "check_views(n_features)": (lambda: datasets.check_views(_views(), n_features=(3, 5)), r"Xs\[1\]"),
        "check_views(min_views)": (lambda: datasets.check_views(_views()[:1], min_views=2), r"Xs"),
        "train_test_split_views(y length)": (
            lambda: datasets.train_test_split_views(_views(), np.zeros(3)),
            r"\by\b",
        ),
        "train_test_split_views(nan)": (
            lambda: datasets.train_test_split_views([np.full((N, 2), np.inf)] * 2, PROBLEM["y"]),
            r"Xs\[0\]",
        ),
        "drop_views(fraction)": (lambda: datasets.drop_views(_views(), 1.5), "fraction"),
        "drop_views(fraction nan)": (lambda: datasets.drop_views(_views(), np.nan), "fraction"),
        "drop_views(n_missing)": (lambda: datasets.drop_views(_views(), 0.5, n_missing=2), "n_missing"),
        "standardize_views(mismatch)": (lambda: datasets.standardize_views(_views(), [_views()[0]]), r"Xs"),
        "standardize_views(str)": (
            lambda: datasets.standardize_views([v.astype(str) for v in _views()]),
            r"Xs\[0\]",
        ),
        "MultiViewStandardScaler.transform before fit": (
            lambda: datasets.MultiViewStandardScaler().transform(_views()),
            r"not fitted",
        ),
        "observed_mask(str)": (lambda: datasets.observed_mask([np.array([["a"]])]), r"Xs\[0\]"),
        "observed_mask(1d)": (lambda: datasets.observed_mask([np.ones(3)]), r"Xs\[0\]"),
    }
)


@settings(**{**FAST, "max_examples": 120})
@given(case=st.sampled_from(sorted(DATA_CASES)))
def test_data_functions_bad_input(hypothesis_cases, case):
    fn, names = DATA_CASES[case]
    expect_error(fn, names, hypothesis_cases, "datasets")


@settings(**SMALL)
@given(
    name=st.sampled_from(["ONORMA", "MONORMA"]),
    kind=st.sampled_from(["more_features", "fewer_features", "nan", "targets"]),
)
def test_partial_fit_changes_shape(hypothesis_cases, name, kind):
    """A later stream chunk must match the first chunk's features and outputs."""
    est = make_estimator(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.partial_fit(PROBLEM["X"][:8], PROBLEM["y_reg"][:8])
    X, y = PROBLEM["X"][8:].copy(), PROBLEM["y_reg"][8:]
    names = X_NAMES
    if kind == "more_features":
        X = np.hstack([X, X[:, :1]])
    elif kind == "fewer_features":
        X = X[:, :3]
    elif kind == "nan":
        X[0, 0] = np.nan
    else:
        y = np.stack([y, y], axis=1)
        names = r"\bY\b|\by\b|output"
    expect_error(lambda: est.partial_fit(X, y), names, hypothesis_cases, "online.partial_fit_shapes")


@settings(**{**SMALL, "max_examples": 12})
@given(
    name=st.sampled_from(
        ["MVMLClassifier", "MVMLRegressor", "MVLClassifier", "MVLRegressor", "ONORMA", "OVKRidge"]
    ),
    scale=st.sampled_from([1e-150, 1e150, 1e300]),
)
def test_extreme_but_finite_data_never_gives_silent_nan(hypothesis_cases, name, scale):
    """Valid but badly scaled data: the fit either works (finite predictions) or refuses with a
    ValueError/FloatingPointError — it never returns NaN/inf predictions."""
    hypothesis_cases["extreme_scale"] += 1
    est = make_estimator(name)
    if name in SINGLE_X_NAMES:
        X, y = PROBLEM["X"] * scale, PROBLEM["y_reg"]
    else:
        X, y = [V * scale for V in PROBLEM["Xs"]], _y(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with _alarm(CASE_TIMEOUT_S):
                out = est.fit(X, y).predict(X)
        except (ValueError, FloatingPointError) as exc:
            assert _raised_in_bayesmv(exc), f"raised outside bayesmv: {exc}"
            return
    assert np.isfinite(np.asarray(out, dtype=float)).all(), (
        f"{name}: silent non-finite predictions at scale {scale}"
    )
