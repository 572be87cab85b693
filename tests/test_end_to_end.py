"""End to end: `dolb run` on a real LocalCluster with worker processes and real Zarr
stores on disk; resume, determinism, failures and bad inputs."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from dolb.cli import main
from dolb.execution.sweep import run_sweep
from tests.conftest import cell_files

pytestmark = pytest.mark.e2e


def test_run_resume_and_determinism(small_pipeline, tmp_path):
    from dolb.execution.plan import make_plan

    two = tmp_path / "two"
    before = make_plan(small_pipeline, two, workers=2)
    assert (before.n_cells, before.n_stored, before.n_todo) == (60, 0, 60)
    assert before.examples_todo == 48 * 60 + 12 * 60 and before.estimated_seconds > 0
    summary = run_sweep(small_pipeline, two, workers=2, progress=False)
    assert (summary.n_cells, summary.n_computed, summary.n_failed) == (60, 60, 0)

    frame = pd.read_csv(two / "results.csv")
    for column in ("experiment", "dataset", "task", "split", "learner", "params", "complexity",
                   "conversion", "n_train", "metric", "value", "cell_id"):
        assert column in frame.columns
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

    again = run_sweep(small_pipeline, two, workers=2, progress=False)
    assert (again.n_cached, again.n_computed) == (60, 0)
    after = make_plan(small_pipeline, two)
    assert (after.n_stored, after.n_todo, after.estimated_seconds) == (60, 0, 0.0)

    one = tmp_path / "one"
    run_sweep(small_pipeline, one, workers=1, progress=False)
    assert cell_files(one) == cell_files(two)  # bit-identical on 1 and 2 workers


def test_cli_run_report_and_status(small_pipeline, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", str(small_pipeline), "--out", str(out), "--workers", "2", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "60 cells: 0 already stored, 60 computed, 0 failed" in printed
    assert "| irma" in printed
    (out / "report" / "01-table-test_mse-table.md").unlink()
    assert main(["report", str(out)]) == 0
    assert (out / "report" / "01-table-test_mse-table.md").exists()
    assert main(["status", str(out)]) == 0
    assert "60 cells stored, 0 failed" in capsys.readouterr().out


def test_corrupted_chunk_fails_its_cells_only(small_pipeline, tmp_path, capsys):
    out = tmp_path / "out"
    run_sweep(small_pipeline, out, workers=1, progress=False)
    # corrupt the stored training data, forget the results of one experiment, rerun
    chunks = sorted(p for p in (out / "data").rglob("*") if p.is_file() and "/train/X/c" in str(p))
    assert chunks
    original = chunks[0].read_bytes()
    raw = bytearray(original)
    raw[len(raw) // 2] ^= 0xFF
    chunks[0].write_bytes(bytes(raw))
    frame = pd.read_csv(out / "results.csv")
    for cell in frame[frame.experiment == "curve"].cell_id.unique():
        (out / "cells" / f"{cell}.json").unlink()
    assert main(["run", str(small_pipeline), "--out", str(out), "--workers", "2", "--no-progress"]) == 1
    assert main(["status", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "48 cells stored, 12 failed" in printed
    assert "checksum" in printed.lower() or "corrupt" in printed.lower()
    record = json.loads(next((out / "cells").glob("*.failed.json")).read_text())
    assert record["status"] == "failed" and "train" in record["error"]

    # a plain rerun leaves failed cells alone; --retry-failed runs just those
    assert run_sweep(small_pipeline, out, workers=1, progress=False).n_computed == 0
    chunks[0].write_bytes(original)
    again = run_sweep(small_pipeline, out, workers=1, retry_failed=True, progress=False)
    assert (again.n_cached, again.n_computed, again.n_failed) == (48, 12, 0)
    assert not list((out / "cells").glob("*.failed.json"))


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


def test_report_on_a_folder_that_is_not_a_result(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert "not a result folder" in capsys.readouterr().err


def test_cells_over_their_limits_fail_with_the_reason(small_pipeline, tmp_path, capsys):
    text = small_pipeline.read_text()
    timed = tmp_path / "timed.toml"
    timed.write_text(text + "\n[execution]\ncell_timeout = 1e-9\n")
    out = tmp_path / "timed"
    summary = run_sweep(timed, out, workers=1, progress=False)
    assert summary.n_failed == 60
    assert main(["status", str(out)]) == 1
    assert "exceeded its time limit of 1e-09 s after" in capsys.readouterr().out

    heavy = tmp_path / "heavy.toml"
    heavy.write_text(text + '\n[execution]\ncell_memory = "1 MB"\n')
    summary = run_sweep(heavy, tmp_path / "heavy", workers=1, progress=False)
    assert summary.n_failed == 60
    record = json.loads(next((tmp_path / "heavy" / "cells").glob("*.failed.json")).read_text())
    assert "exceeded its memory limit of 1 MiB" in record["error"]


def test_tasks_in_flight_stay_bounded(small_pipeline, tmp_path, monkeypatch):
    """Client memory does not grow with the sweep: at most IN_FLIGHT_PER_WORKER tasks
    per worker are submitted and not yet collected."""
    import distributed

    from dolb.execution import sweep

    pipeline = tmp_path / "one-cell-per-task.toml"
    pipeline.write_text(small_pipeline.read_text() + "\n[execution]\nbatch_examples = 1\n")
    peak = []
    submit = distributed.Client.submit

    def counting_submit(client, *args, **kwargs):
        future = submit(client, *args, **kwargs)
        peak.append(sum(1 for f in client.futures.values() if f.status == "pending"))
        return future

    monkeypatch.setattr(distributed.Client, "submit", counting_submit)
    summary = run_sweep(pipeline, tmp_path / "out", workers=1, progress=False)
    assert summary.n_computed == 60 and len(peak) == 60  # one task per cell
    assert max(peak) <= sweep.IN_FLIGHT_PER_WORKER


def test_performance_report_is_saved(small_pipeline, tmp_path):
    report = tmp_path / "dask-report.html"
    run_sweep(small_pipeline, tmp_path / "out", workers=1, progress=False, report_file=report)
    text = report.read_text()
    assert "<html" in text.lower() and "run_cells" in text  # Dask's report of our tasks


def test_status_speaks_of_the_pipeline_last_run(small_pipeline, tmp_path, capsys):
    out = tmp_path / "out"
    stale = {"id": "0" * 20, "status": "failed", "error": "from an older pipeline",
             "spec": {"learner": "irma", "split": {"index": 0}}}
    (out / "cells").mkdir(parents=True)
    (out / "cells" / f"{stale['id']}.failed.json").write_text(json.dumps(stale))
    assert main(["status", str(out)]) == 1  # before any finished run: every record
    run_sweep(small_pipeline, out, workers=1, progress=False)
    capsys.readouterr()
    assert main(["status", str(out)]) == 0
    assert "60 cells stored, 0 failed (of the 60 cells of pipeline 'small-irma')" in capsys.readouterr().out
