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


def test_longest_modules_exist_and_run_first():
    """The modules that the run starts first are test modules of this suite, and a test's place
    follows them."""
    from conftest import LONGEST_MODULES, module_rank

    assert all((ROOT / module).is_file() for module in LONGEST_MODULES)
    assert len(set(LONGEST_MODULES)) == len(LONGEST_MODULES)
    ranks = [module_rank(f"{module}::test_x[a::b]") for module in LONGEST_MODULES]
    assert ranks == list(range(len(LONGEST_MODULES)))
    assert module_rank("tests/test_kernels.py::test_y") == len(LONGEST_MODULES)
