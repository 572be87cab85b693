"""End to end: `dolb run` on a real LocalCluster with worker processes and real Zarr
stores on disk; resume, determinism, failures and bad inputs."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pds
import pyarrow.parquet as pq
import pytest

from dolb.cli import main
from dolb.execution.sweep import run_sweep
from dolb.options import RunOptions
from dolb.results.cell_rows import CellRows
from dolb.results.history import read_records, write_record
from dolb.results.query import failures
from dolb.results.store import ResultStore, result_schema
from dolb.results.tables import read_results
from tests.conftest import assert_same
from tests.test_faults import worker_processes

pytestmark = pytest.mark.e2e


def test_run_resume_and_determinism(small_pipeline, tmp_path):
    from dolb.execution.plan import make_plan

    two = tmp_path / "two"
    before = make_plan(small_pipeline, two, workers=2)
    assert (before.n_cells, before.n_stored, before.n_todo) == (60, 0, 60)
    assert before.examples_todo == 48 * 60 + 12 * 60 and before.estimated_seconds > 0
    summary = run_sweep(small_pipeline, two, RunOptions(workers=2, progress=False))
    assert (summary.n_cells, summary.n_computed, summary.n_failed) == (60, 60, 0)

    frame = pd.read_parquet(two / "results")  # the store, read as it is by pandas
    assert frame["split"].dtype == np.int64 and frame["value"].dtype == np.float64
    assert frame["param_order"].dtype == np.int64 and set(frame["param_order"]) == {3, 4, 5}
    assert frame["param_forgetting"].isna().sum() == len(frame[frame.learner != "rls"])  # only rls has it
    assert set(frame["status"]) == {"ok"} and (frame["cell_seconds"] > 0).all() and (frame["cell_peak_rss"] > 0).all()
    assert len(set(frame["worker"])) == 2  # the two workers wrote their own parts
    assert len(pds.dataset(two / "results").to_table(columns=["cell_id"])) == len(frame)
    # 48 table cells x 3 checkpoints x 2 metrics + 12 curve cells x 60 checkpoints
    assert len(frame) == 48 * 3 * 2 + 12 * 60
    table = frame[(frame.experiment == "table") & (frame.metric == "test_mse")]
    means = table.groupby(["learner", "n_train"])["value"].mean()
    assert means["irma", 60] < 0.01  # IRMA fits f(x) = x exp(-x^2) well from 60 examples
    assert means["irma", 10] < means["batch_ls", 10]  # and is far better than batch early on
    curve = frame[(frame.experiment == "curve")]
    cumulative = curve[curve.split == 0].sort_values("n_train").groupby("learner")["value"].apply(np.array)
    assert all(np.all(np.diff(values) >= 0) for values in cumulative)

    report = two / "report"
    assert (report / "01-table-test_mse-table.md").read_text().count("irma") == 2
    assert (report / "02-curve-cumulative_loss-curve.png").stat().st_size > 10_000

    again = run_sweep(small_pipeline, two, RunOptions(workers=2, progress=False))
    assert (again.n_cached, again.n_computed) == (60, 0)
    after = make_plan(small_pipeline, two)
    assert (after.n_stored, after.n_todo, after.estimated_seconds) == (60, 0, 0.0)

    # bit-identical on 1 and 2 workers, and when the rows travel back to the client, which
    # writes them in large parts
    one = tmp_path / "one"
    assert run_sweep(small_pipeline, one, RunOptions(workers=1, progress=False, gather="client")).gather == "client"
    assert_same(one, two)
    assert len(list((one / "results").glob("part-*.parquet"))) == 1
    assert len(list((two / "results").glob("part-*.parquet"))) > 1

    records = read_records(ResultStore(two))  # one record per run, none overwritten
    assert [r["counts"]["computed"] for r in records] == [60, 0]
    assert records[0]["gather"] == "workers" and len(records[0]["workers"]) == 2
    assert set(records[0]["timings"]) == {"plan", "data", "cluster", "compute", "write", "aggregate", "reports"}


def test_a_result_folder_behind_an_fsspec_url(small_pipeline, small_run, tmp_path):
    """On a URL, parts count only once a manifest commits them; the results equal a
    local folder's."""
    url = f"file://{tmp_path}/remote"
    summary = run_sweep(small_pipeline, url, RunOptions(workers=2, progress=False))
    assert summary.n_computed == 60 and summary.gather == "workers"
    assert_same(url, small_run)
    manifests = list((tmp_path / "remote" / "manifests").glob("*.json"))
    assert manifests
    orphan = tmp_path / "remote" / "results" / "part-0-uncommitted.parquet"  # a part no run committed
    pq.write_table(pq.read_table(next((tmp_path / "remote" / "results").glob("part-*.parquet"))), orphan)
    assert len(ResultStore(url).parts()) == len(list((tmp_path / "remote" / "results").glob("part-*"))) - 1
    assert run_sweep(small_pipeline, url, RunOptions(workers=1, progress=False)).n_cached == 60
    assert (tmp_path / "remote" / "report" / "summary.csv").is_file()


def test_cli_run_report_and_status(small_pipeline, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", str(small_pipeline), "--out", str(out), "--workers", "2", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "60 cells: 0 already stored, 60 computed, 0 failed" in printed
    assert "| irma" in printed
    assert "time: plan" in printed and "compute" in printed and "reports" in printed
    assert f"Page: {out}/report/index.html" in printed
    (out / "report" / "01-table-test_mse-table.md").unlink()
    (out / "report" / "index.html").unlink()
    assert main(["report", str(out)]) == 0
    assert (out / "report" / "01-table-test_mse-table.md").exists()
    assert (out / "report" / "index.html").read_text().count("<img") == 1  # the curve, inlined
    assert main(["status", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "60 cells stored, 0 failed" in printed and "60 computed, 0 cached, 0 failed on 2 workers" in printed
    assert main(["export", str(out)]) == 0
    exported = pd.read_csv(out / "results.csv")
    assert len(exported) == len(read_results(out)) == 48 * 3 * 2 + 12 * 60
    assert main(["reproduce", str(out), "--out", str(tmp_path / "again"), "--workers", "1"]) == 0
    assert "all 1,008 values bit-identical" in capsys.readouterr().out
    assert main(["reproduce", str(out), "--out", str(tmp_path / "again")]) == 2  # into a fresh folder only

    # a run computed elsewhere, with another numpy and other values: which, and why
    table = ResultStore(out).dataset().to_table()
    for part in (out / "results").glob("part-*.parquet"):
        part.unlink()
    values = table.column("value").to_numpy().copy()
    values[0] += 1e-12
    frame = table.to_pandas().assign(value=values)
    pq.write_table(pa.Table.from_pandas(frame, schema=table.schema, preserve_index=False),
                   out / "results" / "part-0.parquet")
    record = sorted((out / "runs").glob("*.json"))[0]
    text = json.loads(record.read_text())
    for environment in [text["client"], *text["workers"].values()]:
        environment["packages"]["numpy"] = "1.0.0"
    record.write_text(json.dumps(text))
    assert main(["reproduce", str(out), "--out", str(tmp_path / "third"), "--workers", "1", "--run", text["run_id"]]) == 1
    printed = capsys.readouterr().out
    assert "NOT reproduced: 1 of 1,008 values differ (largest difference 1e-12), 0 missing, 0 new" in printed
    assert f"versions that differ: numpy: 1.0.0 -> {np.__version__}" in printed


def forget(out, experiment):
    """Drop one experiment's results from a result folder."""
    store = ResultStore(out)
    table = store.dataset().to_table()
    for part in store.parts():
        Path(part).unlink()
    keep = table.filter(pds.field("experiment") != experiment)
    store.write_part(keep)


def test_corrupted_chunk_fails_its_cells_only(small_pipeline, tmp_path, capsys, monkeypatch):
    cache = tmp_path / "cache"  # this test corrupts its data: a cache of its own
    monkeypatch.setenv("DOLB_DATA_CACHE", str(cache))
    out = tmp_path / "out"
    run_sweep(small_pipeline, out, RunOptions(workers=1, progress=False))
    assert not (out / "data").exists()  # datasets live in the cache, not in the result folder
    # corrupt the stored training data, forget the results of one experiment, rerun
    chunks = sorted(p for p in cache.rglob("*") if p.is_file() and "/train/X/c" in str(p))
    assert chunks
    original = chunks[0].read_bytes()
    raw = bytearray(original)
    raw[len(raw) // 2] ^= 0xFF
    chunks[0].write_bytes(bytes(raw))
    forget(out, "curve")
    assert main(["run", str(small_pipeline), "--out", str(out), "--workers", "2", "--no-progress"]) == 1
    assert main(["status", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "48 cells stored, 12 failed" in printed
    assert "checksum" in printed.lower() or "corrupt" in printed.lower()
    failed = failures(ResultStore(out))
    assert len(failed) == 12 and set(failed["status"]) == {"failed"} and failed["error"].str.contains("train").all()

    # a plain rerun leaves failed cells alone, and says so: exit 1, as a nightly needs
    plain = run_sweep(small_pipeline, out, RunOptions(workers=1, progress=False))
    assert (plain.n_computed, plain.n_failed, plain.n_failed_before, plain.ok) == (0, 0, 12, False)
    assert "60 cells: 60 already stored, 0 computed, 12 failed (12 failed in an earlier run" in plain.counts_line()
    assert "12 cells failed" in (out / "report" / "index.html").read_text()  # the page lists them still
    assert main(["run", str(small_pipeline), "--out", str(out), "--workers", "1", "--no-progress"]) == 1
    chunks[0].write_bytes(original)
    again = run_sweep(small_pipeline, out, RunOptions(workers=1, retry_failed=True, progress=False))
    assert (again.n_cached, again.n_computed, again.n_failed) == (48, 12, 0)
    assert failures(ResultStore(out)).empty and len(read_results(out)) == 48 * 3 * 2 + 12 * 60


def test_cli_bad_input_is_one_line_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[pipeline]\nname = "x"\nseed = 1\nextra = 2\n[datasets]\n[experiments]\n')
    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, "-m", "dolb.cli", "run", str(bad), "--out", str(out)],
        capture_output=True, text=True,
    )
    assert run.returncode == 2
    assert run.stderr.strip().count("\n") == 0
    assert run.stderr.startswith(f"dolb: error: {bad}: pipeline.extra: unknown key")
    assert not out.exists()


def test_missing_store_is_a_clear_error(tmp_path):
    pipeline = tmp_path / "p.toml"
    pipeline.write_text(
        '[pipeline]\nname = "x"\nseed = 1\n'
        '[datasets.d]\ntrain = "no-such-store"\n'
        '[experiments.e]\ndataset = "d"\ntask = "regression"\n'
        'split = { scheme = "holdout", count = 2 }\nmetrics = ["test_mse"]\n'
        'learners = [{ learner = "ngd", complexity = 2 }]\n'
    )
    out = tmp_path / "out"
    assert main(["run", str(pipeline), "--out", str(out)]) == 2
    assert not out.exists()


def test_a_pipeline_refused_after_import_leaves_out_untouched(small_pipeline, tmp_path, capsys):
    bad = tmp_path / "late.toml"  # valid until its cells are planned: checkpoints past a split
    bad.write_text(small_pipeline.read_text().replace("checkpoints = [10, 30, 60]", "checkpoints = [10, 30, 600]"))
    out = tmp_path / "out"
    assert main(["run", str(bad), "--out", str(out), "--workers", "1"]) == 2
    assert not out.exists()
    # a report at a size no cell records: its table would be empty
    bad.write_text(small_pipeline.read_text().replace("at = [10, 60]", "at = [10, 25]"))
    capsys.readouterr()
    assert main(["run", str(bad), "--out", str(out), "--workers", "1"]) == 2
    assert capsys.readouterr().err == (
        f"dolb: error: {bad}: reports[0].at: 25 is not a checkpoint of experiment 'table' on dataset 'irma' "
        "(see experiments.table.checkpoints)\n"
    )
    assert not out.exists()


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")  # closed, not collected
def test_an_error_while_the_cluster_starts_closes_it(small_pipeline, tmp_path, capsys):
    """The embedded cluster starts in the background once the pipeline is checked; a
    damaged part found while the client scans the folder meanwhile is one line, exit 2,
    and no worker is left running (the run closed its cluster)."""
    store = ResultStore(tmp_path / "out")
    part = f"{store.results}/{store.write_part(CellRows(result_schema({}), 'r', 'w').table())}"
    with open(part, "r+b") as handle:
        handle.truncate(100)
    assert main(["run", str(small_pipeline), "--out", store.root, "--workers", "2"]) == 2
    assert capsys.readouterr().err.startswith(f"dolb: error: {part}: unreadable result part")
    assert worker_processes() == []


def test_a_folder_of_another_pipeline_is_refused_unless_forced(small_pipeline, tmp_path, capsys):
    from dolb.results.history import write_record

    out = tmp_path / "out"
    write_record(ResultStore(out), {"run_id": "20260101T000000Z-abcdef", "pipeline": "another", "ended": None})
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    assert main(["run", str(small_pipeline), "--out", str(out), "--workers", "1"]) == 2
    assert capsys.readouterr().err == (
        f"dolb: error: {out}: holds the results of pipeline 'another', not 'small-irma': "
        "choose another --out, or --force to add this pipeline's results to it\n"
    )
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before  # nothing written
    assert main(["run", str(small_pipeline), "--out", str(out), "--workers", "1", "--force", "--no-progress"]) == 0


def test_report_on_a_folder_that_is_not_a_result(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert "not a result folder" in capsys.readouterr().err


def test_cells_over_their_limits_fail_with_the_reason(small_pipeline, tmp_path, capsys):
    text = small_pipeline.read_text()
    timed = tmp_path / "timed.toml"
    timed.write_text(text + "\n[execution]\ncell_timeout = 1e-9\n")
    out = tmp_path / "timed"
    summary = run_sweep(timed, out, RunOptions(workers=1, progress=False))
    assert summary.n_failed == 60
    assert main(["status", str(out)]) == 1
    assert "exceeded its time limit of 1e-09 s after" in capsys.readouterr().out

    heavy = tmp_path / "heavy.toml"
    heavy.write_text(text + '\n[execution]\ncell_memory = "1 MB"\n')
    summary = run_sweep(heavy, tmp_path / "heavy", RunOptions(workers=1, progress=False))
    assert summary.n_failed == 60
    failed = failures(ResultStore(tmp_path / "heavy"))
    assert failed["error"].str.contains("exceeded its memory limit of 1 MiB").all()


def _counting_map(monkeypatch, seen):
    """Patch ``Client.map`` to call ``seen(client, batches)`` with the batches of each
    submission of the sweep's tasks (decoded), before they are submitted."""
    import pickle

    import distributed

    from dolb.execution.payload import run_batch

    submit = distributed.Client.map

    def counting_map(client, function, *iterables, **kwargs):
        if function is run_batch:
            seen(client, [pickle.loads(payload) for payload in iterables[0]])
        return submit(client, function, *iterables, **kwargs)

    monkeypatch.setattr(distributed.Client, "map", counting_map)


def test_tasks_in_flight_stay_bounded(small_pipeline, tmp_path, monkeypatch):
    """At most IN_FLIGHT_PER_WORKER tasks per worker are submitted and not yet
    collected, however many there are, and one per worker before any has finished (the
    client's memory still grows with the number of cells, by their ids: the performance
    pages of docs/)."""
    from dolb.execution import compute

    pipeline = tmp_path / "one-cell-per-task.toml"
    pipeline.write_text(small_pipeline.read_text() + "\n[execution]\nbatch_examples = 1\n")
    peak, sizes = [], []

    def seen(client, batches):
        pending = sum(1 for f in client.futures.copy().values() if f.status == "pending")  # copied at once: Dask's thread changes it
        peak.append(pending + len(batches))
        sizes.append(len(batches))

    _counting_map(monkeypatch, seen)
    summary = run_sweep(pipeline, tmp_path / "out", RunOptions(workers=1, progress=False))
    assert summary.n_computed == 60 and sum(sizes) == 60  # one task per cell
    assert sizes[0] == 1  # the first, before any cell was timed
    assert max(peak) <= compute.IN_FLIGHT_PER_WORKER


def test_later_batches_hold_the_work_the_finished_ones_show(small_pipeline, tmp_path, monkeypatch):
    """Batches are cut as they are submitted, and finished ones tell how long their cells
    took: with a floor of work no batch reaches, the batch cut after the first outcome
    takes every cell left (the first batch, one per worker, was cut before any cell was
    timed)."""
    import functools

    from dolb.execution import batches, compute

    sizes = []
    _counting_map(monkeypatch, lambda client, cut: sizes.extend(
        sum(len(indices) for _, indices in batch) for batch in cut))
    monkeypatch.setattr(compute, "Batcher", functools.partial(batches.Batcher, min_seconds=1e9))
    summary = run_sweep(small_pipeline, tmp_path / "out", RunOptions(workers=1, progress=False))
    assert summary.n_computed == 60 and sum(sizes) == 60
    assert len(sizes) == 2  # without the floor: 22 batches
    assert sizes[-1] == 60 - sizes[0] > sizes[0]
    assert read_records(ResultStore(tmp_path / "out"))[-1]["tasks"] == len(sizes)  # the run record counts them


def test_status_speaks_of_the_pipeline_last_run(small_run, tmp_path, capsys):
    """A failed cell of an older pipeline counts until a run of another pipeline finishes
    in the folder (a copy of the session's finished run, the stale part added)."""
    stale = CellRows(result_schema({}), run_id="old", worker="w")
    stale.add_failed("0" * 20, {"experiment": "gone", "learner": "irma", "split": 0}, "from an older pipeline")
    ResultStore(tmp_path / "old").write_part(stale.table())
    assert main(["status", str(tmp_path / "old")]) == 1  # before any finished run: every record
    assert "from an older pipeline" in capsys.readouterr().out
    out = shutil.copytree(small_run, tmp_path / "out")
    ResultStore(out).write_part(stale.table())
    assert main(["status", str(out)]) == 0
    assert "60 cells stored, 0 failed (of the 60 cells of pipeline 'small-irma')" in capsys.readouterr().out


def test_a_rerun_that_computes_nothing_starts_no_cluster(small_pipeline, small_run, tmp_path, monkeypatch, capsys):
    from dolb.execution import sweep_client

    started = []
    connect = sweep_client.connect

    def counted(*args, **kwargs):
        started.append(args)
        return connect(*args, **kwargs)

    monkeypatch.setattr(sweep_client, "connect", counted)
    out = shutil.copytree(small_run, tmp_path / "out")  # a finished run of the pipeline
    parts = sorted(path.name for path in (out / "results").iterdir())
    again = run_sweep(small_pipeline, out, RunOptions(workers=1, progress=False))
    assert started == []  # every cell was stored: no cluster
    assert (again.n_cached, again.n_computed, again.n_failed) == (60, 0, 0)
    assert sorted(path.name for path in (out / "results").iterdir()) == parts
    record = read_records(ResultStore(out))[-1]
    assert record["workers"] == {} and record["counts"]["computed"] == 0 and record["tasks"] == 0
    assert main(["status", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "60 cells stored, 0 failed" in printed and printed.count("no workers: nothing to compute") == 1
    assert "no workers: nothing to compute" in (out / "report" / "index.html").read_text()
    (out / "results" / parts[-1]).unlink()  # a result lost: the next run computes it, on a cluster
    resumed = run_sweep(small_pipeline, out, RunOptions(workers=1, progress=False))
    assert len(started) == 1 and resumed.n_computed > 0 and resumed.report == again.report


def test_status_tells_of_a_run_killed_before_its_first_commit(small_run, tmp_path, capsys):
    """Its record as the run wrote it when it started, and nothing else: a run, not
    'not a result folder'."""
    (started,) = read_records(ResultStore(small_run))
    keys = ("run_id", "pipeline", "pipeline_path", "pipeline_text", "started", "options", "groups", "client")
    out = ResultStore(tmp_path / "killed")
    write_record(out, {key: started[key] for key in keys} | {"ended": None})
    assert main(["status", str(tmp_path / "killed")]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith(f"{started['run_id']}  {started['started']}  did not finish: 0 cells stored by it"), shown
