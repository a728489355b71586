"""The example notebooks: jupytext sources paired with stored, executed ``.ipynb`` files.

Each notebook's source is ``notebooks/NN_name.py`` (jupytext percent format); its ``.ipynb`` holds
the same cells with the outputs of a full-mode run (``notebooks/_run_notebooks.py``), which the
docs render. ``test_notebook_executes_quick`` runs every source with ``BAYESMV_QUICK=1`` (tiny
data, very short chains) through nbclient in memory: no stored file is written. A cell that raises
fails the test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
jupytext = pytest.importorskip("jupytext")

NB_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NB_DIR.glob("*.ipynb"))
SOURCES = sorted(NB_DIR.glob("[0-9]*.py"))
EXPECTED = {
    "01_m3lak_posterior_analysis.ipynb",
    "02_missing_views.ipynb",
    "03_method_comparison.ipynb",
    "04_online_operator_kernels.ipynb",
}
CELL_TIMEOUT = 600  # seconds per cell (quick mode needs far less; generous for a loaded CI machine)


def test_expected_notebooks_present():
    assert EXPECTED <= {p.name for p in NOTEBOOKS}


def test_every_notebook_has_one_source():
    assert [p.with_suffix(".ipynb") for p in SOURCES] == NOTEBOOKS


def cells(nb):
    return [(c.cell_type, c.source) for c in nb.cells]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_notebook_equals_its_source(source):
    """The stored notebook has the cells of its source: edit the ``.py``, then re-run
    ``python notebooks/_run_notebooks.py NAME.py`` (or save both from Jupyter with jupytext)."""
    stored = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    assert stored.metadata.get("jupytext", {}).get("formats") == "ipynb,py:percent", (
        "not paired with jupytext"
    )
    assert cells(stored) == cells(jupytext.read(source)), f"{source.name} and its .ipynb differ"


def test_source_comparison_sees_an_edit(tmp_path):
    source = SOURCES[0]
    edited = tmp_path / source.name
    edited.write_text(source.read_text().replace("import os", "import os  # edited", 1))
    assert cells(jupytext.read(edited)) != cells(nbformat.read(source.with_suffix(".ipynb"), as_version=4))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_stored_with_outputs(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, "notebook has no code cells"
    assert "BAYESMV_QUICK" in code[0].source, "the first code cell must read the BAYESMV_QUICK parameter"
    assert all(c.get("execution_count") for c in code), "stored notebook was not fully executed"
    outputs = [o for c in code for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"], "stored notebook contains an error"
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert images, "stored notebook has no plot output"


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the M3LAK notebooks compile the sampler (minutes on a loaded 2-core machine)
@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_notebook_executes_quick(source, monkeypatch):
    monkeypatch.setenv("BAYESMV_QUICK", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    path = source.with_suffix(".ipynb")
    before = path.read_bytes()
    nb = jupytext.read(source)
    client = nbclient.NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        allow_errors=False,
        resources={"metadata": {"path": str(NB_DIR)}},
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code)
    assert not [o for c in code for o in c.outputs if o.get("output_type") == "error"]
    assert path.read_bytes() == before, "the stored notebook must not be modified by the test"
