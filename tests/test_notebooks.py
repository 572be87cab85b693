"""Every notebook in notebooks/ runs in a Jupyter kernel (nbclient) on a small run of its
study made in this session (the study fixtures of conftest.py, shared with the study
tests), reads its result folder without changing it and writes its figures only into
the folder it is given; and the committed notebooks hold no outputs."""

import hashlib
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"

STUDY = {
    "irma": "irma_study",
    "cutoff_rcv1": "rcv1_study",
    "linear_zoo": "rcv1_study",
    "oms_mnist": "oms_study",
    "online_mr": "omr_study",
}
"""Each notebook and the session fixture that runs its study at test size."""

FIGURES = {
    "irma": ["fig1.png"],
    "cutoff_rcv1": ["fig2.png", "fig3.png"],
    "linear_zoo": [],
    "oms_mnist": ["fig2.png", "fig3.png", "fig4.png"],
    "online_mr": ["omr_drift.png", "omr_generalisation.png", "omr_risk.png", "omr_runtime.png"],
}
"""The figures each notebook writes (and shows)."""


def content(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` by relative path, with the SHA-256 of its bytes."""
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def test_every_notebook_is_run_here():
    assert sorted(path.stem for path in NOTEBOOKS.glob("*.ipynb")) == sorted(STUDY)


@pytest.mark.parametrize("name", sorted(STUDY))
def test_committed_notebooks_hold_no_outputs(name):
    notebook = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(cell.outputs == [] and cell.execution_count is None for cell in code)
    parameters = [cell for cell in code if "parameters" in cell.metadata.get("tags", [])]
    assert len(parameters) == 1 and "DOLB_RESULTS" in parameters[0].source  # the result folder is a parameter


@pytest.fixture(params=sorted(STUDY))
def study(request):
    """(notebook name, result folder) of each notebook's study, run at set-up (so that
    ``--durations`` tells the notebook's time from its study's)."""
    out, summary = request.getfixturevalue(STUDY[request.param])
    assert summary.n_failed == 0
    return request.param, out


@pytest.mark.e2e
def test_the_notebook_runs_on_its_study(study, tmp_path, monkeypatch):
    name, out = study
    figures = tmp_path / "figures"
    monkeypatch.setenv("DOLB_RESULTS", str(out))
    monkeypatch.setenv("DOLB_FIGURES", str(figures))
    results_before, beside = content(out), {folder: content(ROOT / folder) for folder in ("notebooks",)}
    notebook = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()  # raises on a failing cell
    assert content(out) == results_before  # read, never written
    assert {folder: content(ROOT / folder) for folder in beside} == beside  # nothing written beside them
    assert sorted(path.name for path in figures.glob("*")) == FIGURES[name]
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert not [output for output in outputs if output.output_type == "error"]
    shown = [output.data["image/png"] for output in outputs if "image/png" in output.get("data", {})]
    assert len(shown) == len(FIGURES[name]) and all(len(image) > 10_000 for image in shown)
    assert any("text/html" in output.get("data", {}) for output in outputs)  # a table
