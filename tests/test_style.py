"""House rules: the codebase is clean under ruff's lint rules and formatter (pyproject.toml)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("args", [["check", "."], ["format", "--check", "."]], ids=["lint", "format"])
def test_ruff_clean(args):
    run = subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, (
        f"ruff {' '.join(args)} failed (run `ruff {args[0]} .` to fix):\n{run.stdout}{run.stderr}"
    )


def _module_fixture_modules():
    """The test modules that define a ``scope="module"`` fixture (read from their source)."""
    import ast

    found = set()
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                for deco in node.decorator_list:
                    if isinstance(deco, ast.Call) and any(
                        kw.arg == "scope" and getattr(kw.value, "value", None) == "module"
                        for kw in deco.keywords
                    ):
                        found.add(f"tests/{path.name}")
    return found


def test_modules_with_module_fixtures_run_on_one_worker():
    """Every test module with a module-scoped fixture is one pytest-xdist work unit (its fixture
    is then built once per run, not once per worker), and no other module is."""
    from conftest import RUN_TOGETHER, work_unit

    assert _module_fixture_modules() == RUN_TOGETHER
    assert work_unit("tests/test_m3lak_arviz.py::test_a[x::y]") == "tests/test_m3lak_arviz.py"
    assert work_unit("tests/test_kernels.py::test_b[x::y]") == "tests/test_kernels.py::test_b[x::y]"
