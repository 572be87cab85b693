"""Compaction keeps every guarantee of the result store: the same rows (each cell once,
plain readers included), resume, status and report, and a kill at any step leaves a
store that reads the same; ``dolb compact`` on bad input is one line, exit 2."""

import json
import logging
import os

import pandas as pd
import pyarrow as pa
import pytest

from dolb.cli import main
from dolb.execution.sweep import run_sweep
from dolb.options import RunOptions
from dolb.results import compaction
from dolb.results.cell_rows import CellRows
from dolb.results.query import missing_cells, rows
from dolb.results.store import ResultStore, result_schema
from tests.conftest import stored_values

SCHEMA = result_schema({"order": int})
KEYS = ["cell_id", "conversion", "n_train", "metric"]


def _part(store: ResultStore, cells: range, copy: str = "ok", run_id: str = "r1") -> str:
    """A committed part of ``cells`` (3 rows each; ``copy="failed"``: one failed row each)."""
    rows_ = CellRows(SCHEMA, run_id, "w")
    for cell in cells:
        where = {"experiment": "e", "learner": "l", "split": cell, "param_order": cell % 3}
        if copy == "failed":
            rows_.add_failed(f"c{cell:04d}", where, "boom")
        else:
            rows_.add_ok(f"c{cell:04d}", where, {"checkpoints": [1, 2, 3],
                                                 "metrics": {"last": {"m": [cell + 0.5, cell * 2.0, None]},
                                                             "avg": {"m": [None, None, -cell / 7]}}})
    name = store.write_part(rows_.table())
    store.commit({name: [f"c{cell:04d}" for cell in cells]}, run_id)
    return name


@pytest.fixture
def store(tmp_path, monkeypatch) -> ResultStore:
    """A store of 60 cells in 7 parts: cells 20-29 stored twice, 50-54 failed then
    computed again, 55-59 only failed."""
    monkeypatch.setattr(compaction, "PART_ROWS", 50)  # compactions write several parts
    store = ResultStore(tmp_path / "out")
    store.extend_schema(SCHEMA)
    for cells in (range(0, 10), range(10, 30), range(20, 30), range(30, 40), range(40, 50)):
        _part(store, cells)
    _part(store, range(50, 60), copy="failed")
    _part(store, range(50, 55), run_id="r2")
    return store


def _everything(store: ResultStore) -> pd.DataFrame:
    """Every row dolb's readers see (the successful cells' and the failures'), sorted."""
    found = pd.concat([rows(store), compaction.query.failures(store)])
    return found.sort_values(KEYS).reset_index(drop=True)


def test_compaction_keeps_the_rows_and_stores_each_cell_once(store):
    before, plain_before = stored_values(store.root), pd.read_parquet(f"{store.root}/results")
    failed_before = compaction.query.failures(store)["cell_id"].tolist()
    done = compaction.compact(store)
    assert (done.before, done.merged, done.written) == (7, 7, 4)  # 170 rows: 51, 51, 51 and 17 (whole cells)
    pd.testing.assert_frame_equal(stored_values(store.root), before, check_exact=True)
    assert compaction.query.failures(store)["cell_id"].tolist() == failed_before == [f"c{c:04d}" for c in range(55, 60)]
    plain = pd.read_parquet(f"{store.root}/results")  # a plain reader now sees each cell once
    assert len(plain_before) == 50 * 3 + 10 * 3 + 10 + 5 * 3 and len(plain) == done.rows == 55 * 3 + 5
    assert plain.groupby("cell_id")["attempt"].nunique().max() == 1
    assert sorted(os.listdir(f"{store.root}/results")) == sorted(
        ["0-schema.parquet", *(os.path.basename(p) for p in store.parts())])
    assert [name.startswith("compaction-") for name in os.listdir(f"{store.root}/manifests")] == [True]
    assert missing_cells(store) == ([], [])
    assert compaction.compact(store).written == 0  # nothing left to compact: written once


@pytest.mark.parametrize("step", ["write_part", "commit", "reveal", "remove"])
def test_a_kill_at_any_step_leaves_each_cell_once_and_the_next_compaction_finishes(store, monkeypatch, step):
    before = _everything(store)
    real = getattr(ResultStore, step)
    calls = []

    def killed(self, *args, **kwargs):
        calls.append(step)
        if len(calls) == 2:  # the second write, reveal or removal (the first commit)
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(ResultStore, step, killed if step != "commit" else lambda *a, **k: (_ for _ in ()).throw(
        KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        compaction.compact(store)
    monkeypatch.setattr(ResultStore, step, real)
    assert_reads_the_same(store, before)
    compaction.compact(store)
    assert_reads_the_same(store, before)
    assert len(store.parts()) == 4
    assert len(pd.read_parquet(f"{store.root}/results")) == 55 * 3 + 5  # each cell once


def assert_reads_the_same(store: ResultStore, before: pd.DataFrame) -> None:
    """dolb's readers see the rows ``before``, each cell once, and nothing missing."""
    pd.testing.assert_frame_equal(_everything(store), before, check_exact=True)
    assert missing_cells(store) == ([], [])


def test_readers_never_see_a_compaction_half_done(store, monkeypatch):
    """Between its manifest and the revealing of its last part, the readers read the old
    parts only; once all are revealed, the new ones only."""
    before = _everything(store)
    seen = []
    reveal = ResultStore.reveal

    def watched(self, name):
        reveal(self, name)
        seen.append((len(self.parts()), len(_everything(self))))

    monkeypatch.setattr(ResultStore, "reveal", watched)
    compaction.compact(store)
    assert seen == [(7, len(before))] * 3 + [(4, len(before))]


def test_a_lost_compacted_part_is_missing_with_its_cells(store):
    compaction.compact(store)
    lost = store.parts()[0]
    held = set(pq_cells(lost))
    os.unlink(lost)
    parts, cells = missing_cells(store)
    assert parts == [os.path.basename(lost)] and set(cells) == held


def pq_cells(path: str) -> list[str]:
    return pa.parquet.read_table(path, columns=["cell_id"]).column("cell_id").to_pylist()


def test_dolb_compact_on_bad_input_is_one_line_exit_2(tmp_path, store, capsys):
    assert main(["compact", str(tmp_path / "nowhere")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    damaged = store.parts()[2]
    with open(damaged, "r+b") as handle:
        handle.seek(40)
        handle.write(b"\0" * 200)
    listed = sorted(os.listdir(f"{store.root}/results")), sorted(os.listdir(f"{store.root}/manifests"))
    assert main(["compact", store.root]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and os.path.basename(damaged) in err and "Traceback" not in err
    assert (sorted(os.listdir(f"{store.root}/results")), sorted(os.listdir(f"{store.root}/manifests"))) == listed


def test_dolb_compact_refuses_a_folder_a_run_holds(store, capsys):
    from dolb.execution.lock import FolderLock

    with FolderLock(store, "20260101T000000Z-abcdef"):
        assert main(["compact", store.root]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "20260101T000000Z-abcdef" in err


def test_a_run_compacted_on_a_worker_resumes_computing_nothing_and_reports(small_pipeline, tmp_path, monkeypatch,
                                                                           capsys):
    """A run whose workers reach the folder compacts it as it ends on a worker (the client
    reads no result row to compact; with the client's threshold of parts); a rerun
    computes nothing and changes no value; `dolb compact`, status and report go on."""
    def not_here(store, run_id):
        raise AssertionError("the client compacted")

    monkeypatch.setattr(compaction, "RUN_END_PARTS", 0)  # the run compacts as it ends
    monkeypatch.setattr(compaction, "compact", not_here)
    out = tmp_path / "out"
    first = run_sweep(small_pipeline, out, RunOptions(workers=1, progress=False))
    monkeypatch.undo()
    store = ResultStore(out)
    assert first.ok and first.gather == "workers" and first.n_computed == 60 and first.report
    assert len(store.parts()) == 1
    assert [name.startswith("compaction-") for name in os.listdir(out / "manifests")] == [True]
    values = stored_values(out)
    monkeypatch.setattr(compaction, "RUN_END_PARTS", 0)
    again = run_sweep(small_pipeline, out, RunOptions(workers=1, progress=False))
    assert (again.n_computed, again.n_cached) == (0, 60)
    pd.testing.assert_frame_equal(stored_values(out), values, check_exact=True)
    assert main(["compact", str(out)]) == 0
    assert main(["status", str(out)]) == 0
    assert "60 cells stored, 0 failed" in capsys.readouterr().out
    assert main(["report", str(out)]) == 0
    record = json.loads(sorted((out / "runs").iterdir())[0].read_text())
    assert record["counts"]["computed"] == 60


def test_the_summary_in_slices_is_the_summary_at_once(store, monkeypatch):
    """A folder too large for one aggregation is summarised in slices of its groups (a
    million cells ran out of DuckDB's memory): the same statistics to the bit."""
    whole = compaction.query.summary(store)
    monkeypatch.setattr(compaction.query, "SUMMARY_ROWS", 7)  # 165 rows: 24 slices
    sliced = compaction.query.summary(store)
    assert len(whole) == 3 == len(sliced)  # last at 1 and 2 examples, avg at 3
    pd.testing.assert_frame_equal(sliced, whole, check_exact=True)


def test_a_compaction_that_fails_leaves_the_run_done(small_pipeline, tmp_path, monkeypatch, caplog):
    """Every cell is stored before the run compacts: a compaction that fails (a full
    disk, a damaged part) is a warning, not a failed run, and its record is complete.
    (The client compacts here, the rows sent back to it: the failure is this process's.)"""
    from dolb.errors import StorageError

    def full_disk(store, run_id):
        raise StorageError(f"{store.root}: no space left on device")

    monkeypatch.setattr(compaction, "RUN_END_PARTS", 0)
    monkeypatch.setattr(compaction, "compact", full_disk)
    monkeypatch.setattr(logging.getLogger("dolb"), "propagate", True)  # the CLI's console may have stopped it
    out = tmp_path / "out"
    summary = run_sweep(small_pipeline, out, RunOptions(workers=1, progress=False, gather="client"))
    assert summary.ok and summary.n_computed == 60
    record = json.loads(sorted((out / "runs").iterdir())[0].read_text())
    assert record["counts"]["computed"] == 60 and record["ended"]
    assert "not compacted" in caplog.text and "no space left" in caplog.text
