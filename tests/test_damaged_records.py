"""Damaged records, as a hostile user leaves them (hardening, round 4): every command
that reads a run record (``dolb status``, ``report``, ``compare``, ``reproduce``) or a
tuning's decisions file refuses a damaged one in one line naming the file (and the key),
exit status 2, and writes nothing."""

import json
import os
import shutil
import textwrap

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dolb.cli import main

TUNED = """
[pipeline]
name = "tuned-irma"
seed = 3

[datasets.irma]
generator = "irma"
params = { n_sequences = 4, length = 60, n_test = 100 }

[experiments.e]
dataset = "irma"
task = "regression"
split = { scheme = "sequences", count = 2 }
checkpoints = [60]
metrics = ["test_mse"]
learners = [
  { learner = "rls", complexity = 3, params = { domain_high = 3.0 }, search = { tikhonov = [0.01, 0.1] } },
]
tuning = { method = "halving", min_budget = 20, eta = 2, holdout = 0.25 }

[[reports]]
kind = "tuning"
experiment = "e"
metric = "test_mse"
title = "What the tuning chose"
"""


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """A finished tuned run, made once for the module."""
    folder = tmp_path_factory.mktemp("tuned")
    path = folder / "tuned.toml"
    path.write_text(textwrap.dedent(TUNED))
    assert main(["-q", "run", str(path), "--out", str(folder / "out"), "--workers", "1"]) == 0
    return folder / "out"


@pytest.fixture
def run(tuned, tmp_path):
    """A copy of the tuned run, for a test to damage (its report folder left out: what a
    refused command would write there is then seen)."""
    return shutil.copytree(tuned, tmp_path / "run", ignore=shutil.ignore_patterns("report"))


def the_record(folder):
    (path,) = (folder / "runs").glob("*.json")
    return path


def files(folder):
    """Every file under ``folder`` with its bytes: what a refused command must leave."""
    return {path: path.read_bytes() for path in folder.rglob("*") if path.is_file()}


def refused(argv, folder, capsys, message):
    """``dolb ARGV`` exits 2 with ``message`` on one line and leaves ``folder`` as it was."""
    before = files(folder)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dolb: error: {message}") and err.count("\n") == 1, err
    assert files(folder) == before


# ------------------------------------------------------------------ run records
def edited(record, path, value):
    """``record`` with the key at ``path`` (a tuple) set to ``value``, or deleted when
    ``value`` is :data:`DELETE`."""
    inner = record
    for key in path[:-1]:
        inner = inner[key] if not isinstance(inner, dict) or key in inner else inner.setdefault(key, {})
    if value is DELETE:
        del inner[path[-1]]
    else:
        inner[path[-1]] = value
    return record


DELETE = object()


@pytest.mark.parametrize("path, value, problem", [
    (("tuning", "computed"), DELETE, "tuning.computed is missing"),
    (("tuning", "examples"), "many", "tuning.examples is 'many', not a whole number ≥ 0"),
    (("tuning",), [1, 2], "tuning is [1, 2], not an object"),
    (("counts", "computed"), -1, "counts.computed is -1, not a whole number ≥ 0"),
    (("seconds",), float("nan"), "seconds is nan, not a finite number"),
    (("seconds",), "12", "seconds is '12', not a finite number"),
    (("started",), 20261127, "started is 20261127, not a string"),
    (("state_saves", "state_bytes"), None, "state_saves.state_bytes is None, not a finite number"),
    (("groups",), [["abc", 10**12]], "groups[0] is ['abc', 1000000000000], not a [cell group key, splits"),
    (("groups",), {"abc": 2}, "groups is {'abc': 2}, not a list"),
    (("workers",), ["w1"], "workers is ['w1'], not an object"),
    (("client", "git_commit"), 12345, "client.git_commit is 12345, not a string or null"),
    (("run_id",), DELETE, "run_id is missing"),
])
def test_a_run_record_with_a_missing_or_mistyped_key_is_one_line_naming_file_and_key(run, capsys, path, value,
                                                                                     problem):
    record_path = the_record(run)
    record_path.write_text(json.dumps(edited(json.loads(record_path.read_text()), path, value)))
    for command in ("status", "report"):
        refused([command, str(run)], run, capsys, f"{record_path}: not a run record ({problem}")


@pytest.mark.parametrize("key", ["blas", "cpu", "numba_cpu", "numpy_simd", None])
def test_a_worker_arithmetic_without_its_keys_is_one_line(run, capsys, key):
    record_path = the_record(run)
    record = json.loads(record_path.read_text())
    worker = next(iter(record["workers"]))
    missing = f"workers.{worker}.arithmetic" + (f".{key}" if key else "")
    if key:
        del record["workers"][worker]["arithmetic"][key]
    else:
        del record["workers"][worker]["arithmetic"]
    record_path.write_text(json.dumps(record))
    refused(["status", str(run)], run, capsys, f"{record_path}: not a run record ({missing} is missing)")


@pytest.mark.parametrize("content, problem", [
    (b"", "not a run record (Expecting value"),
    (b'{"run_id": "r", "pipeline": "p"', "not a run record (Expecting ',' delimiter"),
    (b"[" * 100_000 + b"]" * 100_000, "not a run record ("),
    (b'{"run_id": "r", "pipeline": "p", "seconds": 1e999}', "not a run record (seconds is inf, not a finite number)"),
], ids=["empty", "truncated", "nested too deep", "infinite"])
def test_an_empty_truncated_or_absurd_run_record_is_one_line(run, capsys, content, problem):
    record_path = the_record(run)
    record_path.write_bytes(content)
    refused(["status", str(run)], run, capsys, f"{record_path}: {problem}")


def test_a_record_without_its_pipeline_cannot_be_reported(run, capsys):
    record_path = the_record(run)
    record = json.loads(record_path.read_text())
    del record["pipeline_path"]
    record_path.write_text(json.dumps(record))
    refused(["report", str(run)], run, capsys,
            f"{record_path}: no pipeline_path recorded (a damaged or foreign run record); cannot report this run")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_an_unreadable_run_record_is_one_line(run, capsys):
    record_path = the_record(run)
    record_path.chmod(0)
    try:
        refused(["status", str(run)], run, capsys, f"{record_path}: Permission denied")
    finally:
        record_path.chmod(0o644)


@pytest.mark.parametrize("kind", ["loop", "dangling", "folder"])
def test_a_run_record_that_is_no_file_is_one_line(run, capsys, kind):
    odd = run / "runs" / "odd.json"
    if kind == "loop":
        odd.symlink_to(odd)
    elif kind == "dangling":
        odd.symlink_to(run / "nowhere.json")
    else:
        odd.mkdir()
    refused(["status", str(run)], run, capsys, f"{odd}: ")


# ------------------------------------------------------------------ tuning decisions
def decisions_file(folder):
    return folder / "tuning" / "tuned-irma.parquet"


@pytest.mark.parametrize("damage, problem", [
    ("truncated", "not a tuning's decisions table (Parquet magic bytes not found in footer"),
    ("empty", "not a tuning's decisions table ("),
    ("text", "not a tuning's decisions table (Parquet magic bytes not found in footer"),
    ("no column", "not a tuning's decisions table (no column chosen)"),
    ("mistyped", "not a tuning's decisions table (column budget is of type string)"),
    ("folder", "not a tuning's decisions table (Is a directory)"),
])
def test_a_damaged_decisions_file_is_refused_before_any_report_is_written(run, capsys, damage, problem):
    path = decisions_file(run)
    table = pq.read_table(path)
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "text":
        path.write_text("experiment,dataset\ne,irma\n")
    elif damage == "no column":
        pq.write_table(table.drop_columns(["chosen"]), path)
    elif damage == "mistyped":
        budget = table.schema.get_field_index("budget")
        pq.write_table(table.set_column(budget, "budget", pa.array(["x"] * len(table))), path)
    else:
        path.unlink()
        path.mkdir()
    refused(["report", str(run)], run, capsys, f"{path}: {problem}")
    assert not (run / "report").exists()


def test_an_undamaged_tuned_run_reports(run, capsys):
    assert main(["report", str(run)]) == 0
    assert "What the tuning chose" in capsys.readouterr().out


def test_a_record_named_for_another_run_is_one_line(run, capsys):
    record_path = the_record(run)
    record_path.rename(run / "runs" / "renamed.json")
    refused(["status", str(run)], run, capsys,
            f"{run / 'runs' / 'renamed.json'}: not a run record (its run_id '{record_path.stem}' is not its file's name)")


@pytest.mark.parametrize("folder, command, message", [
    ("runs", "status", "a file, where the folder of run records should be"),
    ("tuning", "report", "a file, where the folder of tuning decisions should be"),
])
def test_a_file_where_a_folder_of_records_should_be_is_one_line(run, capsys, folder, command, message):
    shutil.rmtree(run / folder)
    (run / folder).write_text("not a folder")
    refused([command, str(run)], run, capsys, f"{run / folder}: {message}")


def test_a_finished_record_without_its_cell_groups_speaks_of_every_cell(run, capsys):
    """A record that does not list its pipeline's cells (not written by a run): status counts them all."""
    record_path = the_record(run)
    record = json.loads(record_path.read_text())
    del record["groups"]
    record_path.write_text(json.dumps(record))
    assert main(["status", str(run)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "8 cells stored, 0 failed"  # trials and chosen alike
