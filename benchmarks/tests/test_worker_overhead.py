"""The worker's overhead bench (benchmarks.engine.worker_overhead, python -m benchmarks worker-overhead) on
a few cells, and the cells it measures: cut at their checkpoints without SciPy's
slicing, they store what they stored with it."""

import numpy as np
import pytest

from benchmarks.engine import worker_overhead
from benchmarks.engine.sleep import SleepLearner, admitted
from dolb.bench.records import check
from dolb.evaluation import run_cell as running
from dolb.learners.base import LEARNERS


@pytest.fixture
def sleep_registered(monkeypatch):
    """The sleep learner, registered for the test only."""
    from dolb.experiment import schema_learner

    monkeypatch.setitem(LEARNERS._entries, "sleep", SleepLearner)
    monkeypatch.setattr(schema_learner, "_unreachable", admitted(schema_learner._unreachable))


def test_the_bench_measures_per_cell_and_per_task_beside_the_bare_loop(sleep_registered, tmp_path):
    found = worker_overhead.worker_overhead("sleep", cells=8, rows=16, sizes=(1, 8), repeats=1, folder=tmp_path)
    assert sorted(found["engine"]) == [1, 8] and all(len(seconds) == 1 for seconds in found["engine"].values())
    assert found["per_cell"] >= 0 and found["per_task"] >= 0 and found["bare_cell"] > 0
    assert found["overhead_cell"] == pytest.approx(found["per_cell"] - found["bare_cell"])
    assert sum(found["shares"].values()) == pytest.approx(1.0) and found["shares"]["rows"] > 0
    assert "µs a cell" in worker_overhead.as_text(found)
    record = check(worker_overhead.as_record([found], command="test"), "the record")
    assert record["bench"] == "worker-overhead"
    figures = {m["labels"]["figure"] for m in record["measurements"]} | {d["labels"]["figure"] for d in record["derived"]}
    assert {"engine", "bare loop", "per_cell", "per_task", "overhead_cell", "share"} <= figures


def test_every_part_of_the_profile_names_a_function_its_file_defines():
    from pathlib import Path

    root = Path(worker_overhead.__file__).resolve().parents[2]
    for part, (file, function) in worker_overhead.PARTS.items():
        assert f"def {function}(" in (root / file).read_text(), (part, file, function)


def test_the_mode_refuses_an_unknown_learner_in_one_line(capsys):
    from benchmarks.__main__ import main

    assert main(["worker-overhead", "--learners", "sleep,nope", "--cells", "2"]) == 2
    assert capsys.readouterr().err == "benchmarks: error: --learners: unknown 'nope' (known: sleep, perceptron)\n"


def test_cells_cut_at_their_checkpoints_store_what_scipys_slices_gave(tmp_path, monkeypatch):
    """A Perceptron's cell of a sparse store cut at 4 checkpoints: every metric equal,
    bit for bit, to the cell cut by SciPy's slicing."""
    groups, _ = worker_overhead.prepare("perceptron", cells=3, rows=64, folder=tmp_path)
    cells = [groups[0].cell(index) for index in range(3)]
    found = [running.run_cell(cell)["metrics"] for cell in cells]
    monkeypatch.setattr(running, "row_range", lambda X, start, stop: X[start:stop])
    assert [running.run_cell(cell)["metrics"] for cell in cells] == found
    assert np.isfinite(found[0]["last"]["test_error"]).all() and len(found[0]["last"]["test_error"]) == 4
