"""Issue 9.3: ``est.save(path)`` / ``bayesmv.load(path)`` for every estimator, without pickle.

Round trip of parameters, fitted arrays and ``InferenceData`` with identical predictions; the
file carries the format and package versions; incompatible files are refused with a clear
message; a crafted file that would execute code under pickle is refused and executes nothing.
"""

from __future__ import annotations

import io
import json
import os
import zipfile

import numpy as np
import pytest
from conftest import ESTIMATOR_NAMES, MULTIVIEW_NAMES, SINGLE_X_NAMES, make_estimator, predict_input
from sklearn.base import clone

import bayesmv
from bayesmv import persistence

PREDICT_METHODS = ("predict", "decision_function", "predict_proba")


def _assert_same(a, b, where):
    """Exact structural equality of saved values (arrays bit-identical, ArviZ posteriors equal)."""
    import jax
    import xarray as xr

    from bayesmv.diagnostics import FitTrace

    if isinstance(a, xr.DataTree):
        assert isinstance(b, xr.DataTree), where
        assert set(a.children) == set(b.children), where
        for g in a.children:
            da, db = a[g], b[g]
            assert set(da.data_vars) == set(db.data_vars), f"{where}.{g}"
            for k in da.data_vars:
                np.testing.assert_array_equal(
                    np.asarray(da[k].values), np.asarray(db[k].values), err_msg=f"{where}.{g}.{k}"
                )
        return
    if isinstance(a, (np.ndarray, jax.Array)):
        assert isinstance(b, (np.ndarray, jax.Array)), f"{where}: {type(b)}"
        assert type(a) is type(b) or (isinstance(a, jax.Array) and isinstance(b, jax.Array)), where
        assert np.asarray(a).dtype == np.asarray(b).dtype, where
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=where)
        return
    if isinstance(a, FitTrace):
        for k in ("estimates", "traces", "converged", "method"):
            _assert_same(getattr(a, k), getattr(b, k), f"{where}.{k}")
        return
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), where
        for k in a:
            _assert_same(a[k], b[k], f"{where}[{k!r}]")
        return
    if isinstance(a, (list, tuple)) and not hasattr(a, "_fields"):
        assert type(a) is type(b) and len(a) == len(b), f"{where}: {type(a)} vs {type(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same(x, y, f"{where}[{i}]")
        return
    if isinstance(a, float) and np.isnan(a):
        assert isinstance(b, float) and np.isnan(b), where
        return
    if hasattr(a, "_fields"):
        assert type(a) is type(b), where
        for k in a._fields:
            _assert_same(getattr(a, k), getattr(b, k), f"{where}.{k}")
        return
    assert type(a) is type(b), f"{where}: {type(a)} vs {type(b)}"
    assert a == b, f"{where}: {a!r} != {b!r}"


def _outputs(est, name, problem):
    if name == "MKC":
        return {"completed_kernels_": est.completed_kernels_}
    X = predict_input(name, problem)
    return {m: getattr(est, m)(X) for m in PREDICT_METHODS if hasattr(est, m)}


@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
def test_round_trip_identical(name, fitted_estimator, tiny_problem, tmp_path):
    est = fitted_estimator(name)
    assert isinstance(est, bayesmv.base.PersistenceMixin), f"{name} does not inherit PersistenceMixin"
    path = tmp_path / f"{name}.bmv"
    assert est.save(path) == path
    loaded = bayesmv.load(path)
    assert type(loaded) is type(est)
    _assert_same(est.get_params(deep=False), loaded.get_params(deep=False), "params")
    assert set(vars(loaded)) == set(vars(est)) - set(est._persistence_exclude)
    for k, v in vars(est).items():
        if k not in est._persistence_exclude:
            _assert_same(v, getattr(loaded, k), k)
    before, after = _outputs(est, name, tiny_problem), _outputs(loaded, name, tiny_problem)
    assert before, name
    for k in before:
        _assert_same(before[k], after[k], f"{name}.{k}()")
        assert np.isfinite(np.asarray(before[k], dtype=float)).all()
    # the loaded estimator is a normal estimator: clone works, and it saves again identically
    clone(loaded)
    loaded.save(tmp_path / "again.bmv")
    _assert_same(
        bayesmv.load(tmp_path / "again.bmv").get_params(deep=False), est.get_params(deep=False), "params2"
    )


def test_inference_data_round_trip(fitted_estimator, tmp_path):
    """M3LAK's posterior, sample statistics (acceptance, divergences) and observed data survive."""
    est = fitted_estimator("M3LAKClassifier")
    est.save(tmp_path / "m.bmv")
    with zipfile.ZipFile(tmp_path / "m.bmv") as zf:
        assert "idata_0.nc" in zf.namelist()
    idata = bayesmv.load(tmp_path / "m.bmv").inference_data_
    for group in ("posterior", "sample_stats", "observed_data"):
        assert group in idata.children
    for stat in ("accept_prob_H", "accept_prob_omega", "diverging"):
        np.testing.assert_array_equal(
            idata.sample_stats[stat].values, est.inference_data_.sample_stats[stat].values
        )
    rep = bayesmv.check_convergence(idata, var_names=["tau"])
    assert rep.n_draws == est.num_samples


@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
def test_unfitted_round_trip(name, tmp_path):
    est = make_estimator(name)
    bayesmv.persistence.save(est, tmp_path / "u.bmv")
    loaded = bayesmv.load(tmp_path / "u.bmv")
    _assert_same(est.get_params(deep=False), loaded.get_params(deep=False), "params")
    method = "fit_transform" if name == "MKC" else "predict"
    if name != "MKC":
        from sklearn.exceptions import NotFittedError

        with pytest.raises(NotFittedError):
            getattr(loaded, method)(
                predict_input(name, {"X": np.ones((2, 5)), "Xs": [np.ones((2, 3)), np.ones((2, 2))]})
            )


def test_header_has_versions(fitted_estimator, tmp_path):
    est = fitted_estimator("MVMLClassifier")
    est.save(tmp_path / "e.bmv")
    with zipfile.ZipFile(tmp_path / "e.bmv") as zf:
        header = json.loads(zf.read("header.json"))
        assert set(zf.namelist()) >= {"header.json", "arrays.npz"}
    assert header["format"] == persistence.FORMAT_NAME == "bayesmv-estimator"
    assert header["format_version"] == persistence.FORMAT_VERSION
    assert header["bayesmv_version"] == bayesmv.__version__
    assert header["class"] == "bayesmv.mvml:MVMLClassifier"


def _rewrite(src, dst, header_update=None, members=None):
    """Copy ``src`` to ``dst`` with the header updated / members replaced."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.namelist():
            data = zin.read(item)
            if item == "header.json" and header_update:
                header = json.loads(data)
                header.update(header_update)
                data = json.dumps(header)
            if members and item in members:
                data = members[item]
            zout.writestr(item, data)
        for item, data in (members or {}).items():
            if item not in zin.namelist():
                zout.writestr(item, data)
    return dst


@pytest.mark.parametrize(
    "update, message",
    [
        ({"format_version": 999}, r"format version 999 is not supported.*bayesmv 0\.1\.0"),
        ({"format_version": None}, r"format version None is not supported"),
        ({"format": "something-else"}, r"not a bayesmv estimator file"),
        ({"bayesmv_version": "7.0.0"}, r"written by bayesmv 7\.0\.0, incompatible"),
        ({"class": "os:system"}, r"outside bayesmv; refusing"),
        ({"class": "builtins:eval"}, r"outside bayesmv; refusing"),
        ({"class": "bayesmv.persistence:zipfile.ZipFile"}, r"not defined in bayesmv; refusing"),
        ({"class": "bayesmv.persistence:os.system"}, r"not a class|refusing"),
        ({"class": "bayesmv.base:encode_labels"}, r"not a class"),
        ({"class": "bayesmv.diagnostics:FitTrace"}, r"not an estimator"),
        ({"class": "bayesmv.mvml:__builtins__"}, r"unknown class|refusing"),
    ],
)
def test_incompatible_or_foreign_files_refused(fitted_estimator, tmp_path, update, message):
    est = fitted_estimator("MVMLClassifier")
    est.save(tmp_path / "e.bmv")
    bad = _rewrite(tmp_path / "e.bmv", tmp_path / "bad.bmv", header_update=update)
    with pytest.raises(ValueError, match=message):
        bayesmv.load(bad)


def test_not_an_estimator_file(tmp_path):
    (tmp_path / "text.bmv").write_text("hello")
    with pytest.raises(ValueError, match="not a zip archive"):
        bayesmv.load(tmp_path / "text.bmv")
    with zipfile.ZipFile(tmp_path / "empty.bmv", "w") as zf:
        zf.writestr("other.txt", "x")
    with pytest.raises(ValueError, match="header.json/arrays.npz missing"):
        bayesmv.load(tmp_path / "empty.bmv")
    with zipfile.ZipFile(tmp_path / "badjson.bmv", "w") as zf:
        zf.writestr("header.json", "{not json")
        zf.writestr("arrays.npz", b"")
    with pytest.raises(ValueError, match="not valid JSON"):
        bayesmv.load(tmp_path / "badjson.bmv")


class _Payload:
    """Unpickling this object creates ``marker`` (it would run arbitrary code the same way)."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_crafted_pickle_payload_never_executes(fitted_estimator, tmp_path):
    marker = tmp_path / "pwned"
    est = fitted_estimator("MVMLClassifier")
    est.save(tmp_path / "e.bmv")
    # arrays.npz whose every array is a pickled object array carrying the payload
    with zipfile.ZipFile(tmp_path / "e.bmv") as zf:
        names = np.load(io.BytesIO(zf.read("arrays.npz"))).files
    evil = np.empty(1, dtype=object)
    evil[0] = _Payload(str(marker))
    buf = io.BytesIO()
    np.savez(buf, **{k: evil for k in names})
    # sanity: this file WOULD execute code under pickle
    probe = tmp_path / "probe"
    evil[0] = _Payload(str(probe))
    pbuf = io.BytesIO()
    np.savez(pbuf, x=evil)
    pbuf.seek(0)
    np.load(pbuf, allow_pickle=True)["x"]
    assert probe.exists()

    crafted = _rewrite(tmp_path / "e.bmv", tmp_path / "crafted.bmv", members={"arrays.npz": buf.getvalue()})
    with pytest.raises(ValueError, match="pickle"):
        bayesmv.load(crafted)
    assert not marker.exists()
    # the same payload named by the header as the class to build / a dataclass / a named tuple
    for update in ({"class": "os:system"}, {"class": "subprocess:Popen"}, {"class": "builtins:open"}):
        with pytest.raises(ValueError, match="refusing"):
            bayesmv.load(_rewrite(crafted, tmp_path / "c2.bmv", header_update=update))
    header_nodes = [
        {"__dataclass__": "subprocess:Popen", "fields": {"args": "touch " + str(marker)}},
        {"__namedtuple__": "os:system", "fields": {}},
        {"__class__": "builtins:eval"},
        {"__dataclass__": "bayesmv.persistence:dataclasses.Field", "fields": {}},
        {"__kernel__": "os.system", "params": {"__dict__": {}}},
        {"__kernel_fn__": "__import__"},
    ]
    for node in header_nodes:
        path = _rewrite(tmp_path / "e.bmv", tmp_path / "c3.bmv", header_update={"state": {"evil_": node}})
        with pytest.raises(ValueError):
            bayesmv.load(path)
        assert not marker.exists()
    assert not os.path.exists(marker)


def test_unsupported_values_refused_on_save(tmp_path):
    est = bayesmv.MVMLClassifier(kernel=lambda X, Y=None: X @ (X if Y is None else Y).T)
    with pytest.raises(TypeError, match="kernel"):
        est.save(tmp_path / "x.bmv")

    class NotOurs:
        pass

    est = make_estimator("MVLRegressor")
    est.something_ = NotOurs()
    with pytest.raises(TypeError, match="something_"):
        est.save(tmp_path / "y.bmv")
    with pytest.raises(TypeError, match="bayesmv estimator"):
        persistence.save(object(), tmp_path / "z.bmv")


@pytest.mark.parametrize("name", [n for n in ESTIMATOR_NAMES if n in MULTIVIEW_NAMES + SINGLE_X_NAMES])
def test_loaded_estimator_still_validates(name, fitted_estimator, tiny_problem, tmp_path):
    """The loaded fit keeps its fitted shapes: a wrong number of features is still refused."""
    est = fitted_estimator(name)
    est.save(tmp_path / "v.bmv")
    loaded = bayesmv.load(tmp_path / "v.bmv")
    X = predict_input(name, tiny_problem)
    bad = [np.hstack([V, V[:, :1]]) for V in X] if isinstance(X, list) else np.hstack([X, X[:, :1]])
    with pytest.raises(ValueError, match="features"):
        loaded.predict(bad)


def test_saved_m3lak_fit_predicts_with_the_model_it_sampled(fitted_estimator, tiny_problem, tmp_path):
    """``config_`` (the resolved model, ``priors=None`` included) is saved with the fit, and
    predictions read it, not the parameters: a later release's defaults, here a changed
    ``priors``, leave a loaded fit's predictions as they were."""
    from bayesmv.models import M3LAKPriors

    est = fitted_estimator("M3LAKClassifier")
    est.save(tmp_path / "m.bmv")
    loaded = bayesmv.load(tmp_path / "m.bmv")
    assert loaded.config_ == est.config_ and loaded.config_.priors == est.priors
    before = _outputs(loaded, "M3LAKClassifier", tiny_problem)
    loaded.set_params(priors=M3LAKPriors(view_features=None, label_feedback=False))
    after = _outputs(loaded, "M3LAKClassifier", tiny_problem)
    for k in before:
        _assert_same(before[k], after[k], k)
    # power: without the saved model the changed parameters govern (the test point's latent at
    # its mean, not drawn), and the probabilities move
    del loaded.config_
    moved = loaded.predict_proba(predict_input("M3LAKClassifier", tiny_problem))
    assert np.abs(moved - before["predict_proba"]).max() > 0.01


SAVED_FITS = os.path.join(os.path.dirname(__file__), "data", "saved_fits")


@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
def test_earlier_saved_fits_load(name, tiny_problem, tmp_path):
    """Fits saved before the methods moved into subpackages (``bayesmv.mvl:MVLClassifier`` in the
    header, not ``bayesmv.mvl.estimators``) load and give the outputs stored beside them; saved
    again, they name the class as before (its package, not the module inside it)."""
    with zipfile.ZipFile(os.path.join(SAVED_FITS, f"{name}.bmv")) as zf:
        written = json.loads(zf.read("header.json"))["class"]
    assert written.split(":")[0].count(".") == 1, written  # written under the flat layout
    loaded = bayesmv.load(os.path.join(SAVED_FITS, f"{name}.bmv"))
    assert type(loaded) is getattr(bayesmv, name)
    if name == "M3LAKClassifier":  # its posterior, written by ArviZ 0.x, reads as an ArviZ 1.x DataTree
        idata = loaded.inference_data_
        assert {"posterior", "sample_stats", "log_likelihood", "observed_data"} <= set(idata.children)
        assert loaded.convergence_report().n_draws == idata.posterior.sizes["draw"] == 20
    stored = np.load(os.path.join(SAVED_FITS, "outputs.npz"))
    outputs = _outputs(loaded, name, tiny_problem)
    assert sorted(outputs) == sorted(k.split(".", 1)[1] for k in stored.files if k.startswith(f"{name}."))
    for method, value in outputs.items():
        np.testing.assert_allclose(
            np.asarray(value), stored[f"{name}.{method}"], rtol=1e-9, atol=1e-12, err_msg=method
        )
    loaded.save(tmp_path / "again.bmv")
    with zipfile.ZipFile(tmp_path / "again.bmv") as zf:
        assert json.loads(zf.read("header.json"))["class"] == written


@pytest.mark.parametrize(
    "name, grid",
    [
        ("MVMLClassifierCV", dict(lmbdas=(0.01, 0.1), etas=(1.0,), max_iter=2)),
        ("MVMLRegressorCV", dict(lmbdas=(0.01, 0.1), etas=(1.0,), max_iter=2)),
        ("MVLClassifierCV", dict(gamma_As=(1e-3, 1e-2), gamma_Ws=(0.0, 1e-4), graphs=("kernel",))),
        ("MVLRegressorCV", dict(gamma_As=(1e-3, 1e-2), gamma_Ws=(0.0, 1e-4), graphs=("kernel",))),
    ],
)
def test_search_estimators_round_trip(name, grid, tiny_problem, tmp_path):
    """The ``*CV`` estimators save and load: ``cv_results_`` (its ``param_*`` columns are object
    arrays) and the refitted ``best_estimator_`` (an estimator inside the state) come back equal,
    and so do the predictions."""
    y = tiny_problem["y"] if "Classifier" in name else tiny_problem["y_reg"]
    est = getattr(bayesmv, name)(cv=2, **grid).fit(tiny_problem["Xs"], y)
    loaded = bayesmv.load(est.save(tmp_path / "cv.bmv"))
    assert type(loaded.best_estimator_) is type(est.best_estimator_)
    for k in est.cv_results_:
        if k == "params":
            assert loaded.cv_results_[k] == est.cv_results_[k]
        else:
            assert loaded.cv_results_[k].dtype == est.cv_results_[k].dtype, k
            np.testing.assert_array_equal(loaded.cv_results_[k], est.cv_results_[k], err_msg=k)
    assert loaded.best_params_ == est.best_params_
    for method in ("predict", "decision_function"):
        if hasattr(est, method):
            _assert_same(
                getattr(est, method)(tiny_problem["Xs"]), getattr(loaded, method)(tiny_problem["Xs"]), method
            )
