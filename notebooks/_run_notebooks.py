"""Execute the notebooks in place with nbclient (full mode unless BAYESMV_QUICK=1) so that they are
stored with their outputs. Usage: ``python notebooks/_run_notebooks.py [name.ipynb ...]``."""

import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
# XLA/ArviZ log noise that says nothing about the results (slow-compile alarms on a loaded machine).
_NOISE = (
    "slow_operation_alarm",
    "Compiling module",
    "Very slow compile",
    "****************",
    "Shape validation failed",
)


def clean(nb):
    """Drop stderr lines that are compiler/log noise; drop stderr outputs left empty."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        keep = []
        for out in cell.outputs:
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                lines = [ln for ln in out.text.splitlines(keepends=True) if not any(n in ln for n in _NOISE)]
                out.text = "".join(ln for ln in lines)
                if not out.text.strip():
                    continue
            keep.append(out)
        cell.outputs = keep
    return nb


def run(path, timeout=1800):
    nb = nbformat.read(path, as_version=4)
    t0 = time.perf_counter()
    NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}
    ).execute()
    if os.environ.get("BAYESMV_QUICK") != "1":
        nbformat.write(clean(nb), path)
    return time.perf_counter() - t0


if __name__ == "__main__":
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    names = sys.argv[1:] or sorted(p.name for p in HERE.glob("*.ipynb"))
    if names[0] == "--clean-only":  # re-clean stored notebooks without executing them
        for name in names[1:]:
            nbformat.write(clean(nbformat.read(HERE / name, as_version=4)), HERE / name)
        sys.exit(0)
    for name in names:
        print(f"{name}: {run(HERE / name):.0f} s", flush=True)
