"""Clusters other than the embedded LocalCluster: a scheduler and workers started as
separate processes from the command line, cluster files, and the version check."""

import subprocess
import sys
import time

import pytest

from dolb.errors import ConfigError
from dolb.execution.cluster import connect, read_cluster_file
from dolb.execution.sweep import run_sweep

pytestmark = pytest.mark.e2e


@pytest.fixture
def command_line_cluster(tmp_path):
    """`dask scheduler` and `dask worker` processes, as on a real cluster; yields the
    scheduler file."""
    scheduler_file = tmp_path / "scheduler.json"
    dask = [sys.executable, "-c", "from distributed.cli.dask_scheduler import main; main()"]
    scheduler = subprocess.Popen(
        [*dask, "--scheduler-file", str(scheduler_file), "--port", "0", "--host", "127.0.0.1",
         "--dashboard-address", ":0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not scheduler_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    worker = subprocess.Popen(
        [sys.executable, "-c", "from distributed.cli.dask_worker import main; main()",
         "--scheduler-file", str(scheduler_file), "--nworkers", "2", "--nthreads", "1", "--no-dashboard"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**__import__("os").environ, "OMP_NUM_THREADS": "1"},
    )
    try:
        yield scheduler_file
    finally:
        for process in (worker, scheduler):
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


def test_sweep_on_a_command_line_cluster_equals_local(small_pipeline, command_line_cluster, tmp_path):
    remote = run_sweep(small_pipeline, tmp_path / "remote", scheduler=str(command_line_cluster), progress=False)
    local = run_sweep(small_pipeline, tmp_path / "local", workers=1, progress=False)
    assert remote.n_computed == local.n_computed == 60

    def files(folder):
        return {p.name: p.read_bytes() for p in (folder / "cells").glob("*.json")}

    assert files(tmp_path / "remote") == files(tmp_path / "local")


def test_cluster_file_of_a_running_scheduler(small_pipeline, command_line_cluster, tmp_path):
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(f'kind = "scheduler"\nscheduler_file = "{command_line_cluster}"\n')
    summary = run_sweep(small_pipeline, tmp_path / "out", cluster_file=cluster, progress=False)
    assert summary.n_computed == 60


def test_local_cluster_file(small_pipeline, tmp_path):
    cluster = tmp_path / "cluster.toml"
    cluster.write_text('kind = "local"\nworkers = 1\n')
    with connect(cluster_file=cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 1


@pytest.mark.parametrize(
    "text, message",
    [
        ('kind = "mainframe"', "kind: expected one of"),
        ('kind = "local"\nhosts = ["a"]', "hosts: unknown key for a local cluster"),
        ('kind = "scheduler"', "give exactly one of address or scheduler_file"),
        ('kind = "ssh"\nhosts = ["only-one"]', "hosts: an SSH cluster needs a list of hosts"),
        ('kind = "local"\noptions = 3', "options: expected a table"),
        ("kind = ", "not valid TOML"),
    ],
)
def test_bad_cluster_files(tmp_path, text, message):
    path = tmp_path / "cluster.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        read_cluster_file(path)


def test_unreachable_scheduler_is_a_clear_error(monkeypatch):
    from dolb.execution import cluster

    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 2)
    with pytest.raises(ConfigError, match="cannot reach the Dask scheduler"):
        with connect(scheduler="tcp://127.0.0.1:1"):
            pass


def test_version_mismatch_is_a_clear_error(monkeypatch):
    from dolb.execution import environment

    with connect(workers=1) as client:
        monkeypatch.setattr(environment, "package_versions", lambda: {"numpy": "0.0.1"})
        with pytest.raises(ConfigError, match=r"runs numpy .*, the client 0.0.1"):
            environment.check_workers(client)
