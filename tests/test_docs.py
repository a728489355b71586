"""The documentation site builds with Sphinx, warnings as errors, and documents every public name.

The build renders the notebooks from their stored outputs (``nb_execution_mode = "off"``); a
public object without a docstring is a warning (numpydoc GL08), hence a failed build.
"""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
import types
from pathlib import Path

import pytest
from sphinx.util.inventory import InventoryFile

import bayesmv

ROOT = Path(__file__).resolve().parents[1]


def public_modules():
    """``bayesmv`` and every module under it with no private part in its name (not the CLI)."""
    names = [m.name for m in pkgutil.walk_packages(bayesmv.__path__, "bayesmv.")]
    names = [n for n in names if not any(p.startswith("_") for p in n.split(".")) and n != "bayesmv.cli"]
    return ["bayesmv", *names]


def public_names():
    """``(module, name, object)`` for every name in a public module's ``__all__`` that is not a
    module or a dunder."""
    out = []
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if not isinstance(obj, types.ModuleType) and not name.startswith("__"):
                out.append((module_name, name, obj))
    return out


def resolve(full_name):
    """The object a dotted inventory name points to, or None: the longest importable prefix is
    the module (``bayesmv.kernels.nystrom`` is both a module and a function of the package)."""
    parts = full_name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("html")
    run = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "docs", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, f"sphinx -W failed:\n{run.stdout}{run.stderr}"
    return out


@pytest.mark.slow
def test_pages_and_notebooks_rendered(site):
    for page in ["index", "getting_started", "choosing_a_method", "benchmarks", "api/index"]:
        assert (site / f"{page}.html").exists(), page
    for source in sorted((ROOT / "notebooks").glob("[0-9]*.py")):
        html = (site / "examples" / f"{source.stem}.html").read_text()
        assert "<img" in html, f"{source.stem}: no stored plot rendered"


def documented_names(site):
    """Every Python object name in the site's inventory, by its last component."""
    with open(site / "objects.inv", "rb") as f:
        inventory = InventoryFile.load(f, "", lambda base, uri: uri)
    documented = {}
    for kind, entries in inventory.items():
        if kind.startswith("py:"):
            for full_name in entries:
                documented.setdefault(full_name.rsplit(".", 1)[-1], []).append(full_name)
    return documented


def undocumented(names, documented):
    """The ``module.name`` of each ``(module, name, object)`` whose object no inventory entry
    of that name points to."""
    return [
        f"{module}.{name}"
        for module, name, obj in names
        if not any(resolve(full) is obj for full in documented.get(name, ()))
    ]


def test_every_public_name_documented(site):
    names = public_names()
    assert len(names) > 150, "the public API was not found"
    missing = undocumented(names, documented_names(site))
    assert not missing, f"public names missing from the API reference: {missing}"


def test_undocumented_name_detected(site):
    import bayesmv.mvl as mvl

    names = [
        ("bayesmv.mvl", "MVLClassifier", mvl.MVLClassifier),
        ("bayesmv.mvl", "_MVLBase", mvl.estimators._MVLBase),
    ]
    assert undocumented(names, documented_names(site)) == ["bayesmv.mvl._MVLBase"]
