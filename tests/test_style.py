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
