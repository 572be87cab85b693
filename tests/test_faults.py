"""Faults, for real: worker processes and `dolb run` itself killed with SIGKILL in the
middle of a sweep, two sweeps on one result folder at once, and the determinism
contract across worker counts. Every test compares the stored cells with those of an
undisturbed run."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import psutil
import pyarrow.parquet as pq
import pytest

from dolb.execution.sweep import cells_to_run, plan_groups, run_sweep
from dolb.experiment.pipeline import load_pipeline
from dolb.options import RunOptions
from dolb.results.history import read_records
from dolb.results.query import stored_cells
from dolb.results.store import ResultStore
from dolb.results.tables import read_results
from tests.conftest import stored_values

PATIENCE = 1800.0
"""The longest a test waits for a sweep to reach a point or to end: a guard against a
hang, not a speed limit (at a load of 20 on 2 cores, a cluster's start alone takes
minutes, and a sweep of SLOW ten)."""

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(2 * PATIENCE)]

# ~1,200 cells of a few ms each (a test evaluation at every example): a sweep that lasts
# long enough on two workers to be hit in the middle.
SLOW = """
[pipeline]
name = "faults"
seed = 5

[datasets.irma]
generator = "irma"
params = { n_sequences = 200, length = 100, n_test = 200 }

[experiments.every]
dataset = "irma"
task = "regression"
split = { scheme = "sequences", count = 200 }
checkpoints = "all"
metrics = ["test_mse"]
learners = [
  { learner = "irma", complexity = [3, 5, 8], params = { basis = "legendre", domain_high = 3.0 } },
  { learner = "rls", complexity = [3, 5, 8], params = { domain_high = 3.0 } },
]

[execution]
batch_examples = 2000
"""


@pytest.fixture(scope="module")
def slow_pipeline(tmp_path_factory):
    path = tmp_path_factory.mktemp("faults") / "slow.toml"
    path.write_text(textwrap.dedent(SLOW))
    return path


@pytest.fixture(scope="module")
def undisturbed(slow_pipeline, tmp_path_factory):
    """The stored results of an undisturbed run on 2 workers."""
    out = tmp_path_factory.mktemp("undisturbed")
    summary = run_sweep(slow_pipeline, out, RunOptions(workers=2, progress=False))
    assert summary.n_failed == 0 and summary.n_cells == 1200
    return stored_values(out)


def same_as(out, undisturbed) -> bool:
    """Every cell once, with the undisturbed run's results to the bit."""
    import pandas as pd

    pd.testing.assert_frame_equal(stored_values(out), undisturbed, check_exact=True)
    return True


CELLS_PER_PART = 20
"""batch_examples / cell length: the cells one task stores at once."""


def stored_count(folder):
    """Cells stored so far, from the parts on disk (cheap enough to poll)."""
    results = folder / "results"
    return CELLS_PER_PART * len(list(results.glob("part-*.parquet"))) if results.is_dir() else 0


def when_stored(folder, count, action, timeout=PATIENCE):
    """Run ``action`` in a thread as soon as ``count`` cells are stored in ``folder``."""

    def watch():
        deadline = time.monotonic() + timeout
        while stored_count(folder) < count and time.monotonic() < deadline:
            time.sleep(0.005)
        action()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def worker_processes():
    """The Dask worker processes spawned by this process's LocalCluster (one that ends
    while it is looked at, a zombie the killed leave, is not one)."""
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            command = " ".join(child.cmdline())
        except psutil.Error:  # gone, or a zombie: its command line cannot be read
            continue
        if "spawn_main" in command and "resource_tracker" not in command:
            found.append(child)
    return found


def test_worker_killed_mid_sweep(slow_pipeline, undisturbed, tmp_path):
    out = tmp_path / "out"
    killed = []

    def kill_a_worker():
        victims = worker_processes()
        if victims:
            victims[0].send_signal(signal.SIGKILL)
            killed.append(victims[0].pid)

    watcher = when_stored(out, 200, kill_a_worker)
    summary = run_sweep(slow_pipeline, out, RunOptions(workers=2, progress=False))
    watcher.join()
    assert killed, "no worker was killed"
    assert summary.n_failed == 0 and summary.n_computed == 1200
    assert same_as(out, undisturbed)


def kill_workers_spawned(killed: list, spared: set, count: int, timeout=120.0) -> threading.Thread:
    """In a thread: SIGKILL the first ``count`` worker processes not in ``spared``, one
    at a time, each as soon as it is spawned (it has not imported dolb yet, let alone
    joined); their pids into ``killed``."""

    def watch():
        deadline = time.monotonic() + timeout
        while len(killed) < count and time.monotonic() < deadline:
            for victim in worker_processes():
                if victim.pid not in spared and victim.pid not in killed:
                    victim.send_signal(signal.SIGKILL)
                    killed.append(victim.pid)
                    break
            time.sleep(0.005)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_worker_killed_while_the_cluster_starts(small_pipeline, small_run, tmp_path, capfd):
    """A worker that dies before it joins no longer ends the run (it was `RuntimeError:
    Nanny failed to start` and a page of traceback): another is started in its place, one
    line says so, and the results are those of an undisturbed run (``small_run``, which
    built the dataset: this run starts its cluster in the background)."""
    from dolb.cli import main
    from tests.conftest import assert_same

    out = tmp_path / "out"
    run = ["-q", "run", str(small_pipeline), "--workers", "2", "--out"]
    capfd.readouterr()
    killed = []
    watcher = kill_workers_spawned(killed, {p.pid for p in worker_processes()}, count=1)
    status = main([*run, str(out)])
    watcher.join()
    assert len(killed) == 1
    err = capfd.readouterr().err
    assert (status, err) == (0, "dolb: a worker was lost while the cluster started; going on with 2 workers\n")
    assert_same(out, small_run)


def test_no_worker_starts_is_one_line(small_pipeline, tmp_path, capfd):
    """The one worker asked for dies as it starts, and so does the one started in its
    place: one line, exit 2, nothing written."""
    from dolb.cli import main

    out = tmp_path / "out"
    killed = []
    watcher = kill_workers_spawned(killed, {p.pid for p in worker_processes()}, count=2)
    status = main(["-q", "run", str(small_pipeline), "--workers", "1", "--out", str(out)])
    watcher.join()
    assert len(killed) == 2
    err = capfd.readouterr().err
    assert (status, err) == (2, "dolb: error: the local cluster could not start a worker (2 lost while starting)\n")
    assert not out.exists()


def test_a_call_to_every_worker_leaves_out_one_lost_meanwhile():
    """What a worker lost during ``client.run`` answers (its closed connection) is left
    out; an error of the function itself is raised, as ``client.run`` raises it."""
    from distributed.comm.core import CommClosedError

    from dolb.execution.lost_workers import run_on_workers

    class Client:
        def __init__(self, answers):
            self.answers = answers

        def run(self, function, *args, on_error):
            assert on_error == "return"
            return self.answers

    lost = {"tls://a": 1, "tls://b": CommClosedError("in <TLS (closed)>: Stream is closed"), "tls://c": 3}
    assert run_on_workers(Client(lost), len) == {"tls://a": 1, "tls://c": 3}
    with pytest.raises(ZeroDivisionError):
        run_on_workers(Client({"tls://a": 1, "tls://b": ZeroDivisionError()}), len)


def dolb_run(pipeline, out, *extra):
    return subprocess.Popen(
        [sys.executable, "-m", "dolb.cli", "run", str(pipeline), "--out", str(out), "--workers", "2",
         "--no-progress", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )


def wait_for(condition, run: subprocess.Popen, pause: float = 0.005) -> None:
    """Wait until ``condition()`` holds while ``run`` goes on (however long a busy machine
    takes, up to :data:`PATIENCE`)."""
    deadline = time.monotonic() + PATIENCE
    while not condition() and run.poll() is None and time.monotonic() < deadline:
        time.sleep(pause)


def run_until_stored(pipeline, out, cells: int) -> subprocess.Popen:
    """A `dolb run` in its own process group, once it has stored ``cells`` cells."""
    run = dolb_run(pipeline, out)
    wait_for(lambda: stored_count(out) >= cells, run)
    assert run.poll() is None and stored_count(out) >= cells, "the sweep ended before it could be stopped"
    return run


def test_dolb_run_killed_then_resumed(slow_pipeline, undisturbed, tmp_path):
    out = tmp_path / "out"
    run = run_until_stored(slow_pipeline, out, 300)
    os.killpg(run.pid, signal.SIGKILL)  # the client and its workers, at once
    run.wait()
    partial = len(stored_cells(ResultStore(out))[0])
    assert 300 <= partial < 1200
    for part in (out / "results").glob("part-*.parquet"):  # a kill mid-write leaves a hidden .tmp at most
        pq.read_table(part)
    stale = [out / "results" / ".part-killed.parquet.tmp", out / "runs" / ".record.json.0badf00d.tmp"]
    for path in stale:  # what a kill in the middle of a write leaves
        path.write_bytes(b"half")
    summary = run_sweep(slow_pipeline, out, RunOptions(workers=2, progress=False))
    assert not any(path.exists() for path in stale)  # removed by the next run, under its lock
    assert summary.n_cached == partial and summary.n_computed == 1200 - partial
    assert same_as(out, undisturbed)


def test_two_sweeps_on_one_folder(slow_pipeline, undisturbed, tmp_path):
    """The folder is locked: the run that comes second is refused, naming the first,
    and writes nothing; the first stores what an undisturbed run stores."""
    out = tmp_path / "out"
    first = dolb_run(slow_pipeline, out)
    wait_for((out / ".lock.json").exists, first, pause=0.01)
    assert first.poll() is None, "the first run ended before the second could start"
    holder = json.loads((out / ".lock.json").read_text())
    second = dolb_run(slow_pipeline, out)
    _, err = second.communicate(timeout=PATIENCE)
    assert second.returncode == 2, err
    last = err.strip().splitlines()[-1]  # (Dask may warn of its HTTP port first: issue of its own)
    assert last.startswith(f"dolb: error: {out}: in use by dolb run {holder['run_id']} (pid {holder['pid']} on ")
    _, err = first.communicate(timeout=PATIENCE)
    assert first.returncode == 0, err
    assert same_as(out, undisturbed)
    assert len(read_records(ResultStore(out))) == 1  # the second run recorded nothing
    assert not [p for p in (out / "results").iterdir() if p.name.startswith(".")]
    assert len(read_results(out)) == 1200 * 100  # cells x checkpoints


def test_same_results_on_one_and_four_workers(slow_pipeline, undisturbed, tmp_path):
    for workers in (1, 4):
        out = tmp_path / f"w{workers}"
        run_sweep(slow_pipeline, out, RunOptions(workers=workers, progress=False))
        assert same_as(out, undisturbed), f"{workers} workers differ from 2"


def dolb(*args: str) -> subprocess.CompletedProcess:
    """A `dolb` command, run to its end; its output captured."""
    return subprocess.run([sys.executable, "-m", "dolb.cli", *args], capture_output=True, text=True, timeout=PATIENCE)


LONG = SLOW.replace("n_sequences = 200", "n_sequences = 2000").replace("count = 200", "count = 2000")
""":data:`SLOW` ten times longer (12,000 cells, a minute or more): it is still running
after a status and a report on a loaded machine."""


def test_a_live_run_is_seen_running_and_ctrl_c_ends_it_with_one_line(tmp_path, ctrl_c):
    """While a run runs, `dolb status` says it is running (its host, pid, cells so far,
    rate) and `dolb report` draws a page marked partial, neither disturbing it. Ctrl-C
    (SIGINT to the terminal's process group: the client and its workers) then ends the
    run with the friendly line alone and exit 130: no worker's warning or traceback; the
    cells stored so far are kept, status says the run did not finish and a rerun would
    compute only the rest."""
    out, pipeline = tmp_path / "out", tmp_path / "long.toml"
    pipeline.write_text(textwrap.dedent(LONG))
    run = run_until_stored(pipeline, out, 100)
    holder = json.loads((out / ".lock.json").read_text())
    holder["started"] = read_records(ResultStore(out))[0]["started"]  # the run's, not its lock's
    status = dolb("status", str(out))
    first = status.stdout.splitlines()[0]
    assert status.returncode == 0 and first.startswith(
        f"{holder['run_id']}  {holder['started']}  running on {holder['host']} (pid {holder['pid']}): "), status
    assert " cells stored, 0 failed so far of the 12000 cells of its pipeline, on " in first and " cells/s" in first
    report = dolb("report", str(out))
    assert report.returncode == 0, report.stderr
    assert f"Page (partial: run {holder['run_id']} running on {holder['host']} (pid {holder['pid']}); " in report.stdout
    page = (out / "report" / "index.html").read_text()
    assert "faults: partial results" in page and "Partial results" in page
    assert run.poll() is None, "the run ended before it was interrupted"
    os.killpg(run.pid, signal.SIGINT)
    said, err = run.communicate(timeout=PATIENCE)
    assert run.returncode == 130, err
    lines = [line for line in (said + err).splitlines() if "Port 8787 is already in use" not in line]
    assert lines == ["dolb: interrupted; stored cells are kept, run again to resume"], said + err
    stored = len(stored_cells(ResultStore(out))[0])
    assert stored >= 100
    status = dolb("status", str(out))
    assert f"{holder['run_id']}  {holder['started']}  did not finish: {stored} cells stored by it, 0 failed" \
        in status.stdout, status.stdout
    stored_ids, failed = stored_cells(ResultStore(out))
    todo = cells_to_run(plan_groups(load_pipeline(pipeline)), stored_ids, failed, retry_failed=False)
    assert sum(len(indices) for _, indices in todo) == 12000 - stored  # what a rerun computes


def test_an_embedded_worker_does_not_log_its_stop():
    """Its scheduler is the client's process: when the client stops (Ctrl-C), the
    worker's heartbeat error and traceback, and a warning for each task it cancels, would
    follow the client's one line."""
    import logging

    from dolb.execution.worker_plugins import QuietStop

    written = []
    handler = logging.Handler()
    handler.emit = written.append
    loggers = [logging.getLogger(name) for name in ("distributed.worker", "distributed.worker.state_machine")]
    filters = [list(logger.filters) for logger in loggers]
    logging.getLogger("distributed").addHandler(handler)  # where both propagate
    try:
        QuietStop().setup(worker=None)
        loggers[0].error("Failed to communicate with scheduler during heartbeat.")
        loggers[0].error("another error")
        loggers[1].warning("Async instruction for <Task cancelled name=\"execute('run_batch-1')\"> ended with "
                           "CancelledError")
        loggers[1].warning("Async instruction for <Task> ended with ValueError")
    finally:
        logging.getLogger("distributed").removeHandler(handler)
        for logger, kept in zip(loggers, filters):
            logger.filters = kept
    assert [record.getMessage() for record in written] == ["another error",
                                                          "Async instruction for <Task> ended with ValueError"]


def test_ctrl_c_turns_logging_off_until_the_command_ends(ctrl_c):
    """The race that printed distributed's traceback is rare; what stops it is certain:
    once SIGINT arrives, no logger writes (not even one whose level distributed's
    configuration set, as it sets ``tornado.application``'s), and afterwards logging is
    back."""
    import logging

    from dolb.console import quiet_on_interrupt

    written = []
    handler = logging.Handler()
    handler.emit = written.append
    logger = logging.getLogger("tornado.application")
    logger.addHandler(handler)
    level, logger.level = logger.level, logging.ERROR
    try:
        with quiet_on_interrupt(0):
            logger.error("before")
            with pytest.raises(KeyboardInterrupt):
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5)  # the signal arrives first
            logger.error("after Ctrl-C")
        logger.error("back")
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert [record.getMessage() for record in written] == ["before", "back"]


def test_a_worker_skips_the_interpreters_finalisation_only_after_a_clean_close(monkeypatch):
    """The embedded cluster's workers end with os._exit(0) once closed (no garbage
    collection of every module: the client waited ~1 s for it), never otherwise."""
    import atexit
    import logging

    from dolb.execution import worker_plugins

    registered, exits = [], []
    monkeypatch.setattr(atexit, "register", registered.append)
    monkeypatch.setattr(logging, "shutdown", lambda: None)  # pytest's handlers stay open
    monkeypatch.setattr(os, "_exit", exits.append)
    plugin = worker_plugins.QuickExit()
    plugin.setup(worker=None)
    (at_exit,) = registered
    at_exit()  # the process ends without its worker closed (an error, a kill): as usual
    assert exits == []
    plugin.teardown(worker=None)
    at_exit()
    assert exits == [0]


def test_disk_full_while_the_client_writes_is_one_line(small_pipeline, tmp_path, monkeypatch, capsys):
    """ENOSPC injected into every write of result parts (the client writes them here):
    one line naming the folder, exit 2, no part and no temporary file left; the run
    resumes once there is room."""
    from dolb.cli import main
    from dolb.results import parquet_file

    def full(path, mode):
        with open(path, mode) as partial:
            partial.write(b"PAR1")  # a part begun, as a real full disk leaves it
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(parquet_file, "open", full, raising=False)
    out = tmp_path / "out"
    argv = ["-q", "run", str(small_pipeline), "--out", str(out), "--workers", "1", "--gather", "client"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (f"dolb: error: {out}/results: cannot write results: No space left on "
                                       "device (the cells stored are whole; run again to resume)\n")
    assert sorted(p.name for p in (out / "results").iterdir()) == []
    monkeypatch.delattr(parquet_file, "open")
    assert main(argv) == 0
    assert len(stored_cells(ResultStore(out))[0]) == 60


def test_disk_full_on_a_real_small_file_system(small_pipeline, tmp_path, capsys):
    """The workers write their parts to a 512 kB tmpfs that is full: one line, exit 2,
    and the cells that fitted are whole."""
    from dolb.cli import main

    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("mounting a tmpfs is not allowed here (needs root); the monkeypatched test covers ENOSPC")
    try:
        (disk / "filler").write_bytes(b"\0" * (512 - 40) * 1024)  # room for the records, the schema and a part
        out = disk / "out"
        assert main(["-q", "run", str(small_pipeline), "--out", str(out), "--workers", "2"]) == 2
        err = capsys.readouterr().err
        assert err == (f"dolb: error: {out}/results: cannot write results: No space left on device (the cells "
                       "stored are whole; run again to resume)\n"), err
        assert not [p for p in (out / "results").iterdir() if p.name.endswith(".tmp")]
        read_results(out)  # what is stored reads whole
    finally:
        subprocess.run(["umount", str(disk)], check=False)
