"""A cell that cannot start on a host for the host's set-up (a dataset path the host
lacks, no credentials for the object store) is no cell's failure: the run stops with
one line naming the host and what it could not reach, nothing is stored as failed, and
the mended rerun needs no flag."""

import socket
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from dolb.data.store import write_dataset
from dolb.execution import tasks
from dolb.execution.sweep import plan_groups
from dolb.execution.tasks import Destination, run_batch
from dolb.experiment.pipeline import load_pipeline
from dolb.results.query import stored_cells
from dolb.results.store import ResultStore, result_schema
from tests.conftest import dask_processes

PIPELINE = """
[pipeline]
name = "set-up"
seed = 2

[datasets.mine]
train = "{train}"

[experiments.e]
dataset = "mine"
task = "regression"
split = {{ scheme = "holdout", count = 2, test_fraction = 0.25 }}
checkpoints = [10, 30]
metrics = ["test_mse"]
learners = [{{ learner = "rls", complexity = 3, params = {{ domain_high = 3.0 }} }}]
"""


def written(folder, train: str):
    rng = np.random.default_rng(0)
    write_dataset(train, rng.uniform(0, 3, (80, 1)), rng.standard_normal(80), chunk_rows=16)
    path = folder / "p.toml"
    path.write_text(textwrap.dedent(PIPELINE.format(train=train)))
    return path


def test_a_dataset_this_host_lacks_stops_the_task_and_fails_no_cell(tmp_path, monkeypatch):
    import shutil

    pipeline = written(tmp_path, str(tmp_path / "data"))
    (group,) = plan_groups(load_pipeline(pipeline))
    shutil.rmtree(tmp_path / "data")  # as on a worker host that does not share the client's disk
    monkeypatch.setattr(tasks, "FAULTS", {})
    outcome = run_batch([(group, np.array([0, 1]))], Destination(result_schema({}), "r1", str(tmp_path / "out")))
    assert outcome.storage_error == (
        f"{tmp_path / 'data'}: no dataset there on this host: the workers do not see the client's files; give "
        "--data-cache URL, an object store every host reaches, or the same files on every host")
    assert outcome.failures == [] and outcome.part is None and outcome.rows is None


def test_a_dataset_other_than_the_one_planned_stops_the_task_and_fails_no_cell(tmp_path):
    """A worker's own copy at the same path (or the store written anew since the run
    began) holds other rows: the cells would be computed from them in silence."""
    from dolb.evaluation import run_cell

    pipeline = written(tmp_path, str(tmp_path / "data"))
    (group,) = plan_groups(load_pipeline(pipeline))
    rng = np.random.default_rng(1)
    write_dataset(str(tmp_path / "data"), rng.uniform(0, 3, (80, 1)), rng.standard_normal(80), chunk_rows=16,
                  overwrite=True)
    run_cell._dataset.cache_clear()  # a new worker process
    outcome = run_batch([(group, np.array([0, 1]))], Destination(result_schema({}), "r1", str(tmp_path / "out")))
    assert outcome.storage_error == (
        f"{tmp_path / 'data'}: the dataset there on this host is not the one the run was planned with (a copy of its "
        "own, or written anew since): give --data-cache URL, an object store every host reaches, or the same files "
        "on every host")
    assert outcome.failures == [] and outcome.part is None and outcome.rows is None


def test_a_worker_without_credentials_is_one_line_naming_its_host_and_no_failed_cell(s3_bucket, tmp_path):
    pipeline = written(tmp_path, f"{s3_bucket}/data")
    out = tmp_path / "out"
    run = [sys.executable, "-m", "dolb.cli", "run", str(pipeline), "--out", str(out), "--no-progress"]
    bare = {"AWS_ACCESS_KEY_ID": None, "AWS_SECRET_ACCESS_KEY": None, "HOME": str(tmp_path)}  # no ~/.aws either
    (tmp_path / "bare").mkdir()
    (tmp_path / "mended").mkdir()
    with dask_processes(tmp_path / "bare", machines=(bare,)) as scheduler:
        done = subprocess.run([*run, "--scheduler", str(scheduler)], capture_output=True, text=True, timeout=300)
    lines = [line for line in done.stderr.splitlines() if "dashboard" not in line]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"dolb: error: {s3_bucket}/data: no credentials for the object store on host "
                               f"{socket.gethostname()} (worker tcp://127.0.0.1:"), lines
    assert lines[0].endswith("give them on every host (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE), "
                             "then run again"), lines
    if ResultStore(out).exists():
        assert stored_cells(ResultStore(out)) == (set(), set())  # nothing stored, failed or not
    with dask_processes(tmp_path / "mended") as scheduler:
        again = subprocess.run([*run, "--scheduler", str(scheduler)], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert len(stored_cells(ResultStore(out))[0]) == 2


@pytest.fixture(autouse=True)
def _no_fault_left(monkeypatch):
    """Faults met here stay here: the task module remembers one per run id."""
    monkeypatch.setattr(tasks, "FAULTS", {})
