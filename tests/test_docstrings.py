"""The public estimators' docstrings are numpydoc: every parameter with its type and a
description, in the signature's order, an Examples section, and References for the methods
built from a paper; their public methods document their parameters and what they return.

``numpydoc.validate`` does the checking; the codes are numpydoc's (``PR01``: a parameter not
documented, ``EX01``: no Examples, ...).
"""

import inspect

import pytest
from numpydoc.docscrape import ClassDoc
from numpydoc.validate import validate

import bayesmv
from bayesmv import models

#: numpydoc checks every public estimator class passes
CLASS_CHECKS = {"GL08", "PR01", "PR02", "PR03", "PR04", "PR07", "EX01"}
#: numpydoc checks every public method they define passes
METHOD_CHECKS = {"GL08", "PR01", "PR02", "PR03", "PR04", "PR07", "RT01"}

ESTIMATORS = [
    "M3LAKClassifier",
    "MVMLClassifier",
    "MVMLRegressor",
    "MVMLClassifierCV",
    "MVMLRegressorCV",
    "MVLClassifier",
    "MVLRegressor",
    "MVLClassifierCV",
    "MVLRegressorCV",
    "MKC",
    "ONORMA",
    "MONORMA",
    "OVKRidge",
]
SETTINGS = [models.M3LAKConfig, models.M3LAKPriors, models.M3LAKSampler]
#: estimators whose method is a paper's: their docstring cites it in full under References
FROM_A_PAPER = {name for name in ESTIMATORS if name != "OVKRidge"}


def _qualname(obj):
    return f"{obj.__module__}.{obj.__qualname__}"


def _errors(name, checks):
    return [f"{code}: {message}" for code, message in validate(name)["errors"] if code in checks]


CLASSES = [getattr(bayesmv, name) for name in ESTIMATORS] + SETTINGS


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_class_docstring_is_numpydoc(cls):
    assert _errors(_qualname(cls), CLASS_CHECKS) == []
    if cls.__name__ in FROM_A_PAPER:
        references = "\n".join(ClassDoc(cls, config={"show_class_members": False})["References"])
        assert references.count(",") >= 2, "References: the paper in full (authors, title, venue)"


def _public_methods():
    """Every public method of the classes that bayesmv defines (inherited ones too)."""
    for cls in CLASSES:
        for name, member in inspect.getmembers(cls):
            function = getattr(member, "__func__", member)  # a classmethod's function
            if not name.startswith("_") and inspect.isfunction(function):
                if function.__module__.startswith("bayesmv."):
                    yield _qualname(function)


@pytest.mark.parametrize("name", sorted(set(_public_methods())))
def test_public_method_docstring_is_numpydoc(name):
    assert _errors(name, METHOD_CHECKS) == []


def test_the_checks_fail_on_a_prose_docstring():
    """Power check: a docstring that lists its parameters in prose fails them."""
    import types

    module = types.ModuleType("prose_doc")

    def prose(a, b=1):
        """Add ``a`` and ``b`` (an int, default 1) and return the sum."""
        return a + b

    prose.__module__ = module.__name__
    module.prose = prose
    import sys

    sys.modules[module.__name__] = module
    try:
        codes = {code for code, _ in validate("prose_doc.prose")["errors"]}
    finally:
        del sys.modules[module.__name__]
    assert {"PR01", "RT01"} <= codes


#: numpydoc checks every public function passes (a name in a public module's ``__all__``)
FUNCTION_CHECKS = {"GL08", "PR01", "PR02", "PR04", "PR07", "RT01"}
#: modules whose functions users call directly: their functions show an example too
USER_FACING = {
    "bayesmv",
    "bayesmv.datasets",
    "bayesmv.diagnostics",
    "bayesmv.kernels",
    "bayesmv.metrics",
    "bayesmv.persistence",
    "bayesmv.preprocessing",
}


def _public_functions():
    """``(module, qualified name)`` of every function in a public module's ``__all__``."""
    import importlib
    import pkgutil

    modules = [m.name for m in pkgutil.walk_packages(bayesmv.__path__, "bayesmv.")]
    modules = ["bayesmv"] + [m for m in modules if not any(p.startswith("_") for p in m.split("."))]
    found = {}
    for module_name in modules:
        if module_name == "bayesmv.cli":
            continue
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.isfunction(obj) and obj.__module__.startswith("bayesmv"):
                found.setdefault(_qualname(obj), module_name)
    return sorted((module, name) for name, module in found.items())


@pytest.mark.parametrize("module, name", _public_functions(), ids=lambda x: x)
def test_public_function_docstring_is_numpydoc(module, name):
    checks = FUNCTION_CHECKS | ({"EX01"} if module in USER_FACING else set())
    assert _errors(name, checks) == []
