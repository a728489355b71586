"""The example notebooks: stored with their outputs, and executable end to end in quick mode.

``test_notebook_executes_quick`` runs every notebook in ``notebooks/`` with ``BAYESMV_QUICK=1``
(tiny data, very short chains) through nbclient on an in-memory copy: the stored files are never
overwritten. A cell that raises fails the test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NB_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NB_DIR.glob("*.ipynb"))
EXPECTED = {
    "01_m3lak_posterior_analysis.ipynb",
    "02_missing_views.ipynb",
    "03_method_comparison.ipynb",
    "04_online_operator_kernels.ipynb",
}
CELL_TIMEOUT = 600  # seconds per cell (quick mode needs far less; generous for a loaded CI machine)


def test_expected_notebooks_present():
    assert EXPECTED <= {p.name for p in NOTEBOOKS}


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
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes_quick(path, monkeypatch):
    monkeypatch.setenv("BAYESMV_QUICK", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    before = path.read_bytes()
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:  # run a clean copy
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
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
