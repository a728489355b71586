"""The Examples sections of the public docstrings run, and print what they show (doctest).

Every module under ``bayesmv`` is searched; each docstring with an example is one test. Those
that fit an M3LAK posterior compile its sampler and are marked slow.
"""

import doctest
import importlib
import pkgutil

import pytest

import bayesmv

#: docstrings whose example compiles an M3LAK sampler (tens of seconds)
COMPILES_A_SAMPLER = {"bayesmv.m3lak.estimators.M3LAKClassifier"}


def _examples():
    finder = doctest.DocTestFinder(exclude_empty=True)
    seen = set()
    for info in pkgutil.walk_packages(bayesmv.__path__, "bayesmv."):
        if info.name.startswith("bayesmv.__main__"):
            continue
        module = importlib.import_module(info.name)
        for test in finder.find(module, info.name):
            if test.examples and test.name not in seen:
                seen.add(test.name)
                yield test


EXAMPLES = sorted(_examples(), key=lambda t: t.name)


def test_examples_found():
    names = {t.name for t in EXAMPLES}
    assert "bayesmv.m3lak.estimators.M3LAKClassifier" in names
    assert "bayesmv.models.m3lak_config.M3LAKSampler" in names


@pytest.mark.parametrize(
    "test",
    [pytest.param(t, marks=pytest.mark.slow) if t.name in COMPILES_A_SAMPLER else t for t in EXAMPLES],
    ids=lambda t: t.name,
)
def test_docstring_example_runs(test):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    result = runner.run(test, out=lambda text: pytest.fail(text, pytrace=False))
    assert result.failed == 0 and result.attempted > 0
