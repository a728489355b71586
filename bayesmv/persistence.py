"""Saving and loading fitted estimators without pickle.

A saved fit is one zip archive:

- ``header.json``: format name and version, the bayesmv version that wrote it, the estimator's
  class, its constructor parameters and its fitted state as a JSON tree;
- ``arrays.npz``: every array of that tree (read back with ``allow_pickle=False``);
- ``idata_<k>.nc``: each ArviZ posterior (``xarray.DataTree``) as netCDF (HDF5).

Only bayesmv's own classes (estimators, kernel and config dataclasses, named tuples) can be
rebuilt, looked up by name inside the ``bayesmv`` package; nothing in a file is ever executed
or unpickled, so a crafted file can at worst fail to load.
"""

from __future__ import annotations

import dataclasses
import importlib
import io
import json
import os
import sys
import tempfile
import warnings
import zipfile

import numpy as np

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "load", "save"]

#: The ``format`` field of a saved file's header; :func:`load` rejects any other.
FORMAT_NAME = "bayesmv-estimator"
#: Version of the file layout; :func:`load` reads files of this version only.
FORMAT_VERSION = 1


def _bayesmv_version():
    from . import __version__

    return __version__


def _qualname(obj_type):
    """``module:name`` of a class under the shortest ``bayesmv.<package>`` that exports it
    (``bayesmv.mvl:MVLClassifier``, not ``bayesmv.mvl.estimators``): files keep loading when a
    class moves inside its package."""
    parts = obj_type.__module__.split(".")
    for i in range(2, len(parts)):
        package = sys.modules.get(".".join(parts[:i]))
        if getattr(package, obj_type.__qualname__, None) is obj_type:
            return f"{package.__name__}:{obj_type.__qualname__}"
    return f"{obj_type.__module__}:{obj_type.__qualname__}"


def _resolve(qualname):
    """Find a class by ``module:name`` — only inside the bayesmv package."""
    if not isinstance(qualname, str) or ":" not in qualname:
        raise ValueError(f"malformed class reference {qualname!r} in the file")
    module, name = qualname.split(":", 1)
    if module != "bayesmv" and not module.startswith("bayesmv."):
        raise ValueError(f"the file refers to {qualname!r}, outside bayesmv; refusing to load it")
    obj = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None or part.startswith("__"):
            raise ValueError(f"the file refers to unknown class {qualname!r}")
    if not isinstance(obj, type):
        raise ValueError(f"{qualname!r} is not a class")
    if not str(getattr(obj, "__module__", "")).startswith("bayesmv"):
        # reachable through a bayesmv module (e.g. an imported name) but defined elsewhere
        raise ValueError(
            f"the file refers to {qualname!r}, a class not defined in bayesmv; refusing to load it"
        )
    return obj


class _Encoder:
    def __init__(self):
        self.arrays = {}
        self.idatas = []

    def estimator(self, est, where=None):
        """``(class, params, state)`` of a bayesmv estimator, encoded; ``where`` names a nested
        one in error messages (None: the saved estimator itself)."""
        _check_ours(type(est), where or "estimator")
        params, state = _estimator_state(est)

        def label(kind, k):
            return f"{kind} {k!r}" if where is None else f"{where}.{k}"

        return (
            _qualname(type(est)),
            {k: self.encode(v, label("parameter", k)) for k, v in params.items()},
            {k: self.encode(v, label("attribute", k)) for k, v in state.items()},
        )

    def encode(self, value, where):
        import jax
        import xarray as xr
        from sklearn.base import BaseEstimator

        from .diagnostics import FitTrace
        from .kernels.pairwise import KERNELS, Kernel

        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return {"__float__": repr(value)} if isinstance(value, float) else value
        if isinstance(value, np.generic):
            return self.encode(np.asarray(value)[()].item() if value.dtype.kind != "U" else str(value), where)
        if isinstance(value, np.ndarray) and value.dtype == object:  # e.g. cv_results_' param_ columns
            items = [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value.ravel())]
            return {"__object_array__": items, "shape": list(value.shape)}
        if isinstance(value, BaseEstimator):  # e.g. a search's best_estimator_
            cls, params, state = self.estimator(value, where)
            return {"__estimator__": cls, "params": params, "state": state}
        if isinstance(value, (np.ndarray, jax.Array)):
            arr = np.asarray(value)
            if arr.dtype.kind not in "biufcUS":
                raise TypeError(f"cannot save {where}: arrays of dtype {arr.dtype} are not supported")
            key = f"a{len(self.arrays)}"
            self.arrays[key] = arr
            return {"__array__": key, "jax": isinstance(value, jax.Array)}
        if isinstance(value, xr.DataTree):
            self.idatas.append(value)
            return {"__idata__": len(self.idatas) - 1}
        if isinstance(value, FitTrace):
            return {
                "__fittrace__": {
                    f.name: self.encode(getattr(value, f.name), f"{where}.{f.name}")
                    for f in dataclasses.fields(value)
                }
            }
        if isinstance(value, Kernel):
            name = next((k for k, fn in KERNELS.items() if fn is value.fn), None)
            if name is None:
                raise TypeError(f"cannot save {where}: kernel {value.fn!r} is a custom callable")
            return {"__kernel__": name, "params": self.encode(dict(value.params), where)}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            _check_ours(type(value), where)
            fields = {
                f.name: self.encode(getattr(value, f.name), f"{where}.{f.name}")
                for f in dataclasses.fields(value)
                if f.init
            }
            return {"__dataclass__": _qualname(type(value)), "fields": fields}
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            _check_ours(type(value), where)
            return {
                "__namedtuple__": _qualname(type(value)),
                "fields": {k: self.encode(getattr(value, k), f"{where}.{k}") for k in value._fields},
            }
        if isinstance(value, tuple):
            return {"__tuple__": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]}
        if isinstance(value, list):
            return [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, dict):
            if not all(isinstance(k, str) for k in value):
                raise TypeError(f"cannot save {where}: dict keys must be strings")
            return {"__dict__": {k: self.encode(v, f"{where}[{k!r}]") for k, v in value.items()}}
        if (
            callable(value)
            and getattr(value, "__name__", None) in KERNELS
            and KERNELS[value.__name__] is value
        ):
            return {"__kernel_fn__": value.__name__}
        if isinstance(value, type):
            _check_ours(value, where)
            return {"__class__": _qualname(value)}
        raise TypeError(f"cannot save {where}: values of type {type(value).__name__} are not supported")


def _check_ours(cls, where):
    if not cls.__module__.startswith("bayesmv"):
        raise TypeError(f"cannot save {where}: {cls.__qualname__} is not a bayesmv class")


class _Decoder:
    def __init__(self, arrays, idatas):
        self.arrays = arrays
        self.idatas = idatas

    def decode(self, node):
        import jax.numpy as jnp

        from .diagnostics import FitTrace
        from .kernels.pairwise import KERNELS, get_kernel

        if node is None or isinstance(node, (bool, int, str)):
            return node
        if isinstance(node, list):
            return [self.decode(v) for v in node]
        if not isinstance(node, dict) or len(node) == 0:
            raise ValueError(f"malformed node in the file: {node!r}")
        if "__float__" in node:
            return float(node["__float__"])
        if "__array__" in node:
            if node["__array__"] not in self.arrays:
                raise ValueError(f"the file refers to a missing array {node['__array__']!r}")
            arr = self.arrays[node["__array__"]]
            return jnp.asarray(arr) if node.get("jax") else arr
        if "__idata__" in node:
            i = node["__idata__"]
            if not isinstance(i, int) or not 0 <= i < len(self.idatas):
                raise ValueError(f"the file refers to a missing ArviZ posterior {i!r}")
            return self.idatas[i]
        if "__fittrace__" in node:
            return FitTrace(**{k: self.decode(v) for k, v in node["__fittrace__"].items()})
        if "__kernel__" in node:
            if node["__kernel__"] not in KERNELS:
                raise ValueError(f"unknown kernel {node['__kernel__']!r} in the file")
            return get_kernel(node["__kernel__"], **self.decode(node["params"]))
        if "__kernel_fn__" in node:
            if node["__kernel_fn__"] not in KERNELS:
                raise ValueError(f"unknown kernel {node['__kernel_fn__']!r} in the file")
            return KERNELS[node["__kernel_fn__"]]
        if "__dataclass__" in node:
            cls = _resolve(node["__dataclass__"])
            if not dataclasses.is_dataclass(cls):
                raise ValueError(f"{node['__dataclass__']!r} is not a dataclass")
            return cls(**{k: self.decode(v) for k, v in node["fields"].items()})
        if "__namedtuple__" in node:
            cls = _resolve(node["__namedtuple__"])
            if not (issubclass(cls, tuple) and hasattr(cls, "_fields")):
                raise ValueError(f"{node['__namedtuple__']!r} is not a named tuple")
            return cls(**{k: self.decode(v) for k, v in node["fields"].items()})
        if "__object_array__" in node:
            items = [self.decode(v) for v in node["__object_array__"]]
            out = np.empty(len(items), dtype=object)
            out[:] = items
            return out.reshape(node["shape"])
        if "__estimator__" in node:
            return _build_estimator(_resolve(node["__estimator__"]), node["params"], node["state"], self)
        if "__tuple__" in node:
            return tuple(self.decode(v) for v in node["__tuple__"])
        if "__dict__" in node:
            return {k: self.decode(v) for k, v in node["__dict__"].items()}
        if "__class__" in node:
            return _resolve(node["__class__"])
        raise ValueError(f"malformed node in the file: {sorted(node)}")


def _estimator_state(estimator):
    params = estimator.get_params(deep=False)
    exclude = set(getattr(estimator, "_persistence_exclude", ()))
    state = {k: v for k, v in vars(estimator).items() if k not in params and k not in exclude}
    return params, state


def _build_estimator(cls, params, state, dec):
    """An instance of the estimator class ``cls`` from its encoded ``params`` and fitted
    ``state``, decoded by ``dec``; anything malformed raises ``ValueError``."""
    from sklearn.base import BaseEstimator

    if not issubclass(cls, BaseEstimator):
        raise ValueError(f"{cls.__name__} is not an estimator class")
    if not isinstance(params, dict) or not isinstance(state, dict):
        raise ValueError("header.json lacks the 'params'/'state' objects")
    # the previous release's parameter names (cls._deprecated_parameters) move to their new place
    known = set(cls().get_params(deep=False)) | set(getattr(cls, "_deprecated_parameters", ()))
    unknown = sorted(set(params) - known)
    if unknown:
        raise ValueError(f"parameters {unknown} are not parameters of {cls.__name__}")
    bad = [k for k in state if not isinstance(k, str) or not k.isidentifier() or k.startswith("__")]
    if bad:
        raise ValueError(f"invalid attribute names {bad} in the file")
    try:
        with warnings.catch_warnings():  # a file of the previous release: its names are translated
            warnings.simplefilter("ignore", FutureWarning)
            decoded = {k: dec.decode(v) for k, v in params.items()}
            upgrade = getattr(cls, "_upgrade_saved_params", None)
            est = cls(**(decoded if upgrade is None else upgrade(decoded)))
        for k, v in state.items():
            setattr(est, k, dec.decode(v))
    except (TypeError, KeyError, AttributeError, RecursionError) as exc:
        raise ValueError(f"malformed estimator state in the file ({type(exc).__name__}: {exc})") from exc
    return est


def save(estimator, path):
    """Write a fitted (or unfitted) bayesmv estimator to a file: a zip archive, no pickle.

    The archive holds ``header.json`` (format, versions, class, constructor parameters and
    fitted state as a JSON tree), ``arrays.npz`` (every array of that tree) and one
    ``idata_<k>.nc`` netCDF file per ArviZ posterior. Read it back with :func:`load`; the
    estimators' ``save`` method calls this function.

    Parameters
    ----------
    estimator : BaseEstimator
        A bayesmv estimator, fitted or not.
    path : str or os.PathLike
        The file to write; an existing file is overwritten.

    Returns
    -------
    path : str or os.PathLike
        ``path``, as given.

    Raises
    ------
    TypeError
        If ``estimator`` is not an estimator, or it holds a value that cannot be saved: a
        custom kernel callable, an array of an unsupported dtype, a class not defined
        in bayesmv, a dict with non-string keys, or another unsupported type.

    Examples
    --------
    >>> import os
    >>> import tempfile
    >>> import numpy as np
    >>> from bayesmv import MVMLRegressor, load
    >>> from bayesmv.persistence import save
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(20, 3)), rng.normal(size=(20, 2))]
    >>> reg = MVMLRegressor(max_iter=2).fit(Xs, Xs[0][:, 0] + Xs[1][:, 1])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = save(reg, os.path.join(tmp, "reg.zip"))
    ...     loaded = load(path)
    >>> type(loaded).__name__
    'MVMLRegressor'
    >>> bool(np.array_equal(loaded.predict(Xs), reg.predict(Xs)))
    True
    """
    from sklearn.base import BaseEstimator

    if not isinstance(estimator, BaseEstimator):
        raise TypeError(f"save expects a bayesmv estimator, got {type(estimator).__name__}")
    enc = _Encoder()
    cls, params, state = enc.estimator(estimator)
    header = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "bayesmv_version": _bayesmv_version(),
        "class": cls,
        "params": params,
        "state": state,
    }
    buf = io.BytesIO()
    np.savez_compressed(buf, **enc.arrays)
    with zipfile.ZipFile(os.fspath(path), "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", json.dumps(header))
        zf.writestr("arrays.npz", buf.getvalue())
        with tempfile.TemporaryDirectory() as tmp:
            for i, idata in enumerate(enc.idatas):
                nc = os.path.join(tmp, f"idata_{i}.nc")
                idata.to_netcdf(nc)
                zf.write(nc, f"idata_{i}.nc")
    return path


def _check_header(header):
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        raise ValueError("not a bayesmv estimator file (missing or wrong 'format' in header.json)")
    version = header.get("format_version")
    if version != FORMAT_VERSION:
        raise ValueError(
            f"file format version {version!r} is not supported by bayesmv {_bayesmv_version()} "
            f"(supports {FORMAT_VERSION}); load it with the bayesmv version that wrote it "
            f"({header.get('bayesmv_version', 'unknown')}) and refit or re-save"
        )
    written = str(header.get("bayesmv_version", ""))
    if written.split(".")[:1] != _bayesmv_version().split(".")[:1]:
        raise ValueError(
            f"file written by bayesmv {written or 'unknown'}, incompatible with installed "
            f"bayesmv {_bayesmv_version()} (major versions differ)"
        )


def load(path):
    """Load an estimator written by :func:`save` (or an estimator's ``save`` method).

    Predictions of the loaded estimator equal the saved fit's. Only bayesmv's own classes are
    rebuilt, looked up by name inside the ``bayesmv`` package; nothing in the file is executed
    or unpickled, so a crafted file can at worst fail to load.

    Parameters
    ----------
    path : str or os.PathLike
        The file to read.

    Returns
    -------
    estimator : BaseEstimator
        The estimator, with its constructor parameters and fitted state.

    Raises
    ------
    ValueError
        If ``path`` is not a bayesmv estimator file (not a zip archive, ``header.json`` or
        ``arrays.npz`` missing, invalid JSON, another format), if its format version is not
        supported or it was written by a bayesmv of another major version, if it refers to a
        class outside bayesmv, or if its parameters or state are malformed.

    Examples
    --------
    >>> import os
    >>> import tempfile
    >>> import numpy as np
    >>> from bayesmv import MVMLRegressor, load
    >>> from bayesmv.persistence import save
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(20, 3)), rng.normal(size=(20, 2))]
    >>> reg = MVMLRegressor(max_iter=2).fit(Xs, Xs[0][:, 0] + Xs[1][:, 1])
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = save(reg, os.path.join(tmp, "reg.zip"))
    ...     loaded = load(path)
    >>> type(loaded).__name__
    'MVMLRegressor'
    >>> bool(np.array_equal(loaded.predict(Xs), reg.predict(Xs)))
    True
    """
    import arviz as az
    from sklearn.base import BaseEstimator

    try:
        zf = zipfile.ZipFile(os.fspath(path))
    except zipfile.BadZipFile as exc:
        raise ValueError(f"{path} is not a bayesmv estimator file (not a zip archive)") from exc
    with zf:
        names = set(zf.namelist())
        if "header.json" not in names or "arrays.npz" not in names:
            raise ValueError(f"{path} is not a bayesmv estimator file (header.json/arrays.npz missing)")
        try:
            header = json.loads(zf.read("header.json"))
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise ValueError(f"{path}: header.json is not valid JSON") from exc
        _check_header(header)
        cls = _resolve(header.get("class"))  # refuse foreign classes before reading anything else
        if not issubclass(cls, BaseEstimator):
            raise ValueError(f"{header['class']!r} is not an estimator class")
        with np.load(io.BytesIO(zf.read("arrays.npz")), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
        idatas = []
        with tempfile.TemporaryDirectory() as tmp:
            i = 0
            while f"idata_{i}.nc" in names:
                target = os.path.join(tmp, f"idata_{i}.nc")
                with open(target, "wb") as fh:
                    fh.write(zf.read(f"idata_{i}.nc"))
                idata = az.from_netcdf(target)
                idata.load()  # read into memory before the temporary file goes away
                idatas.append(idata)
                i += 1
    try:
        return _build_estimator(cls, header.get("params"), header.get("state"), _Decoder(arrays, idatas))
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from exc
