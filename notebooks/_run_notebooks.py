"""Execute the notebooks' jupytext sources (``notebooks/NN_*.py``, percent format) with nbclient and
store each, with its outputs, as the paired ``.ipynb`` (full mode; ``BAYESMV_QUICK=1`` executes
without writing). Usage: ``python notebooks/_run_notebooks.py [NN_name.py ...]``.

Edit a notebook in its ``.py`` source (or in Jupyter with jupytext, which saves both files), then
run this script on it: ``tests/test_notebooks.py`` fails while the two disagree.
"""

import os
import sys
import time
from pathlib import Path

import jupytext
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
SOURCES = sorted(HERE.glob("[0-9]*.py"))
# XLA/ArviZ log noise that says nothing about the results (slow-compile alarms on a loaded machine).
_NOISE = (
    "slow_operation_alarm",
    "Compiling module",
    "Very slow compile",
    "****************",
    "Shape validation failed",
    "IProgress not found",
    "from .autonotebook import",
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
                out.text = "".join(lines)
                if not out.text.strip():
                    continue
            keep.append(out)
        cell.outputs = keep
    return nb


def execute(source, timeout=1800):
    """The notebook of a jupytext ``source``, executed in the notebooks' folder."""
    nb = jupytext.read(source)
    NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}
    ).execute()
    return nb


if __name__ == "__main__":
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    sources = [HERE / name for name in sys.argv[1:]] or SOURCES
    for source in sources:
        t0 = time.perf_counter()
        nb = execute(source)
        if os.environ.get("BAYESMV_QUICK") != "1":
            jupytext.write(clean(nb), source.with_suffix(".ipynb"))
        print(f"{source.name}: {time.perf_counter() - t0:.0f} s", flush=True)
