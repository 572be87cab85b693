"""The Python guide's script runs as written, as a plain script without a ``__main__``
guard (its workers do not run it again) and in a notebook's kernel, and a learner
defined in a script is refused in one line that says where it must live."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dolb
from dolb.errors import ConfigError
from dolb.experiment.pipeline import load_pipeline
from dolb.learners import LEARNERS, OnlineLearner

ROOT = Path(__file__).resolve().parents[1]
MARKER = "<!-- a plain script: tests/test_python_api.py runs this block as written -->"


def guide_script() -> str:
    """The script of docs/guide/python.md: the code block after its marker."""
    page = (ROOT / "docs" / "guide" / "python.md").read_text(encoding="utf-8")
    return page.split(MARKER, 1)[1].split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.e2e
def test_the_guides_script_runs_without_a_main_guard(tmp_path):
    script = guide_script()
    assert "__main__" not in script and "dolb.run(" in script
    (tmp_path / "demo.py").write_text(script, encoding="utf-8")
    env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "demo.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "bootstrapping" not in done.stderr, done.stderr[-3000:]
    # 20 splits x 2 orders, every cell stored once, each scored at both checkpoints
    assert done.stdout.splitlines()[0] == "40 cells: 0 already stored, 40 computed, 0 failed", done.stdout
    table = dolb.read_results(tmp_path / "runs" / "demo")
    assert table["cell_id"].nunique() == 40 and len(table) == 80 and set(table["metric"]) == {"test_mse"}
    means = table.groupby(["complexity", "n_train"])["value"].mean()
    assert (means.xs(50, level="n_train") < means.xs(10, level="n_train")).all()  # it learns
    printed = [line.split()[-1] for line in done.stdout.splitlines()[1:] if line.split()]
    shown = [float(word) for word in printed if word[0].isdigit()]  # the script's own table: the stored values
    assert shown == pytest.approx(means.tolist(), abs=5e-7)  # printed to 6 decimals


@pytest.mark.e2e
def test_the_guides_script_runs_in_a_notebook_and_leaves_its_main_module_as_it_was(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    from nbclient import NotebookClient

    after = "import sys; print(summary.n_cells, summary.n_failed, sys.modules['__main__'].__spec__)"
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(guide_script()),
                                               nbformat.v4.new_code_cell(after)])
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert notebook.cells[1].outputs[0]["text"] == "40 0 None\n"
    assert dolb.read_results(tmp_path / "runs" / "demo")["cell_id"].nunique() == 40


@pytest.mark.parametrize("module, where", [
    ("__main__", "is defined in the script (__main__), which the workers do not run"),
    ("my_learners", "is defined in the module my_learners, which no dolb.learners entry point imports, nor any worker"),
])
def test_a_learner_the_workers_cannot_import_is_refused_saying_where_it_must_live(tmp_path, module, where):
    mine = type("Mine", (OnlineLearner,), {"name": "script_learner", "task": "regression", "params": {},
                                           "__module__": module})
    LEARNERS.add("script_learner", mine)
    try:
        text = textwrap.dedent("""
            [pipeline]
            name = "p"
            seed = 1
            [datasets.irma]
            generator = "irma"
            [experiments.e]
            dataset = "irma"
            task = "regression"
            split = { scheme = "sequences", count = 2 }
            checkpoints = [10]
            metrics = ["test_mse"]
            learners = [{ learner = "script_learner" }]
        """)
        with pytest.raises(ConfigError) as error:
            load_pipeline(tmp_path / "p.toml", text)
    finally:
        LEARNERS._entries.pop("script_learner")
    message = str(error.value)
    assert message == (f"{tmp_path / 'p.toml'}: experiments.e.learners[0].learner: learner 'script_learner' {where}: "
                       "define it in a module of an installed package that registers it through the dolb.learners "
                       "entry point")


def test_the_guide_says_no_guard_is_needed_and_shows_the_notebook_way():
    page = (ROOT / "docs" / "guide" / "python.md").read_text(encoding="utf-8")
    assert 'no `if __name__ == "__main__":` is needed' in page and "### From a notebook" in page
