"""Faults of the object store, on a real S3-protocol server behind a proxy the test cuts,
restores and makes throttle (tests/s3_proxy.py): the server out of reach when a command
starts, lost in the middle of a run, and answering HTTP 503 SlowDown. Each ends with one
line naming the URL and exit status 2, within the retries' bounds (no hang); nothing is
half-written, and the run resumes to the bit once the server answers again. The study
keeps its data cache there too (tests/test_shared_data_cache.py tries its lease)."""

import json
import socket
import subprocess
import sys
import threading

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import s3fs

from dolb.cli import main
from dolb.data.store.object_stores import fault_error, forget_s3_filesystems, store_fault
from dolb.errors import StoreFault
from dolb.execution.sweep import run_sweep
from dolb.options import RunOptions
from tests.conftest import stored_values
from tests.s3_proxy import S3Proxy
from tests.s3_server import CREDENTIALS, free_port, start_moto, wait_until_up

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

PATIENCE = 600.0
"""The longest a command may take here: a guard against a hang, not a speed limit."""

QUICK_RETRIES = json.dumps({"config_kwargs": {"connect_timeout": 2, "read_timeout": 5,
                                              "retries": {"mode": "standard", "max_attempts": 2}}})
"""Fewer attempts than dolb's defaults (fsspec's configuration, as a user would set it)."""

PIPELINE = """
[pipeline]
name = "store-faults"
seed = 8

[datasets.irma]
generator = "irma"
params = { n_sequences = 40, length = 50, n_test = 50 }

[experiments.every]
dataset = "irma"
task = "regression"
split = { scheme = "sequences", count = 40 }
checkpoints = [10, 50]
metrics = ["test_mse"]
learners = [
  { learner = "irma", complexity = [3, 5, 8], params = { basis = "legendre", domain_high = 3.0 } },
  { learner = "rls", complexity = [3, 5, 8], params = { domain_high = 3.0 } },
]

[execution]
batch_examples = 500
"""
"""240 cells, 10 a task: 24 parts, for the store to be lost in the middle."""


@pytest.fixture
def store(monkeypatch):
    """A private S3 server with a bucket, a proxy in front of it that this process's
    ``dolb`` (and the workers it starts) reach it through, with fewer retries, and an
    s3fs of the server itself."""
    import fsspec
    import s3fs

    port = free_port()
    server = start_moto(port)
    try:
        wait_until_up(f"http://127.0.0.1:{port}")
        proxy = S3Proxy(("127.0.0.1", port), free_port())
        for name, value in {**CREDENTIALS, "AWS_ENDPOINT_URL": proxy.endpoint, "FSSPEC_S3": QUICK_RETRIES}.items():
            monkeypatch.setenv(name, value)  # the workers' (new processes: fsspec reads FSSPEC_S3 as it starts)
        monkeypatch.setitem(fsspec.config.conf, "s3", json.loads(QUICK_RETRIES))  # this process's
        forget_s3_filesystems()  # those made for another endpoint
        direct = s3fs.S3FileSystem(client_kwargs={"endpoint_url": f"http://127.0.0.1:{port}"},
                                   skip_instance_cache=True)
        direct.mkdir("faults")
        yield proxy, direct, f"http://127.0.0.1:{port}"
        proxy.cut()
    finally:
        forget_s3_filesystems()
        server.terminate()
        server.wait(timeout=30)


def one_line(err: str, url: str, reason: str) -> None:
    """Standard error is one line: the fault, naming ``url`` (or, ending with a slash,
    a URL under it), its reason in it."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    named, _, said = lines[0].removeprefix("dolb: error: ").partition(": the object store failed after retries (")
    assert named == url or (url.endswith("/") and named.startswith(url)), err
    assert reason in said and said.endswith("try again once it answers"), err


def parts_in(direct, folder: str) -> list[str]:
    direct.invalidate_cache()
    return direct.glob(f"{folder}/results/part-*.parquet")


def whole(direct, folder: str) -> None:
    """Nothing half-written: every part reads whole, every manifest names parts there."""
    present = parts_in(direct, folder)
    for part in present:
        with direct.open(part, "rb") as stream:
            pq.read_table(stream)
    for manifest in direct.glob(f"{folder}/manifests/*.json"):
        assert set(json.loads(direct.cat_file(manifest))["parts"]) <= {p.rsplit("/", 1)[1] for p in present}


def test_faults_are_told_apart():
    from botocore.exceptions import ClientError, EndpointConnectionError

    refused = EndpointConnectionError(endpoint_url="http://127.0.0.1:9/bucket")
    slow = ClientError({"Error": {"Code": "SlowDown", "Message": "Please reduce your request rate."},
                        "ResponseMetadata": {"HTTPStatusCode": 503}}, "PutObject")
    missing = ClientError({"Error": {"Code": "NoSuchKey"}, "ResponseMetadata": {"HTTPStatusCode": 404}}, "GetObject")
    translated = OSError(16, "Please reduce your request rate.")
    translated.__cause__ = slow
    assert store_fault(refused) is refused and store_fault(translated) is slow
    assert store_fault(missing) is None and store_fault(FileNotFoundError("x")) is None
    assert isinstance(fault_error("s3://b/x", refused), StoreFault)


def test_fsspec_configuration_overrides_the_retries_key_by_key(monkeypatch):
    import fsspec

    from dolb.data.store.object_stores import storage_options
    from dolb.data.store.s3_session import BoundedSession

    monkeypatch.setitem(fsspec.config.conf, "s3", {"config_kwargs": {"read_timeout": 2}, "anon": True})
    assert storage_options("s3://bucket/x") == {
        "config_kwargs": {"connect_timeout": 5, "read_timeout": 2, "retries": {"mode": "standard", "max_attempts": 3},
                          "http_session_cls": BoundedSession},
        "anon": True}


@pytest.mark.timeout(120)  # without the fix the upload waits for good: fail, do not hang
def test_an_upload_to_a_server_that_never_answers_fails_in_bounded_time(monkeypatch):
    """A server that accepts connections and never answers: an upload (botocore would
    ask for ``100 Continue`` and aiohttp wait for it without a timeout; without the
    header, a body larger than the sockets' buffers would wait for the server to read
    it) times out as a read does, and is a store fault."""
    import fsspec

    from dolb.data.store.format import url_filesystem

    silent = socket.create_server(("127.0.0.1", 0))
    held = []
    threading.Thread(target=lambda: held.extend(silent.accept() for _ in range(100)), daemon=True).start()
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{silent.getsockname()[1]}")
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setitem(fsspec.config.conf, "s3", {"config_kwargs": {"read_timeout": 1, "retries": {"max_attempts": 1}}})
    monkeypatch.setattr(s3fs.S3FileSystem, "retries", 1)  # s3fs's own tries after a timeout
    forget_s3_filesystems()
    try:
        fs, path = url_filesystem("s3://silent/part.parquet")
        with pytest.raises(Exception) as raised:
            fs.pipe(path, b"x" * 6_000_000)
        assert type(store_fault(raised.value)).__name__ == "ReadTimeoutError"
    finally:
        forget_s3_filesystems()
        silent.close()


def test_a_study_on_the_store_through_its_faults(store, tmp_path, capsys, monkeypatch):
    """Results and data cache on the store: out of reach as the commands start, lost in
    the middle of the run, throttled; then the run resumes, its dataset built once in
    the store's data cache, its results those of a local run to the bit."""
    proxy, direct, server = store
    pipeline = tmp_path / "faults.toml"
    pipeline.write_text(PIPELINE)
    out, cache = "s3://faults/out", "s3://faults/cache"
    reference = tmp_path / "reference"  # undisturbed, local folder and data cache
    assert run_sweep(pipeline, reference, RunOptions(workers=2, progress=False)).n_failed == 0
    capsys.readouterr()  # what the reference run logged (an earlier test may have asked for -v)
    run = ["-q", "run", str(pipeline), "--out", out, "--workers", "2", "--data-cache", cache]

    proxy.cut()  # out of reach as the commands start
    assert main(["-q", "status", out]) == 2
    one_line(capsys.readouterr().err, out, "EndpointConnectionError: Could not connect to the endpoint URL")
    assert main(run) == 2  # the result folder's format is the first thing a run reads
    one_line(capsys.readouterr().err, out, "EndpointConnectionError: Could not connect to the endpoint URL")
    assert direct.ls("faults") == []  # nothing written

    proxy.restore()  # lost in the middle of the run: as the workers write their second part
    proxy.cut_on("PUT /faults/out/results/part-", 2)
    cut = subprocess.run([sys.executable, "-m", "dolb", *run], capture_output=True, text=True, timeout=PATIENCE)
    assert cut.returncode == 2, cut.stderr
    one_line(cut.stderr, "s3://faults/", "Could not connect to the endpoint URL")  # results', or data's
    assert len(parts_in(direct, "faults/out")) <= 1  # the first, unless the cut stopped it too
    whole(direct, "faults/out")

    proxy.restore()
    proxy.throttle(None)  # every request answered 503 SlowDown
    with monkeypatch.context() as patient:  # botocore's attempts, not s3fs's five rounds of them (7 s more)
        patient.setattr(s3fs.S3FileSystem, "retries", 1)
        assert main(["-q", "status", out]) == 2
    one_line(capsys.readouterr().err, out, "(503)")  # its first request a HEAD (of format.json): no body, no code
    assert proxy.refused >= 2  # retried

    proxy.throttle(2)  # a few: retried with backoff (botocore's 3 attempts of a HEAD), and the run resumes
    assert main(run) == 0
    direct.invalidate_cache()
    (entry,) = direct.ls("faults/cache")
    assert len([p for p in direct.ls(entry) if not p.endswith(".json")]) == 1  # built once, by a worker
    monkeypatch.setenv("AWS_ENDPOINT_URL", server)
    forget_s3_filesystems()
    pd.testing.assert_frame_equal(stored_values(out), stored_values(reference), check_exact=True)

DATA_PIPELINE = """
[pipeline]
name = "data-on-s3"
seed = 2

[datasets.remote]
train = "s3://faults/data"

[experiments.e]
dataset = "remote"
task = "regression"
split = { scheme = "holdout", count = 2, test_fraction = 0.25 }
checkpoints = [10, 30]
metrics = ["test_mse"]
learners = [{ learner = "rls", complexity = 3, params = { domain_high = 3.0 } }]
"""


def test_a_dataset_whose_store_is_lost_mid_task_fails_no_cell(store, tmp_path, monkeypatch):
    """The store of a cell's data lost as a task runs: the task stops, told, with one line
    naming the dataset; no cell is stored as failed, no part written. The same when the
    task's batch reopens its datasets, and when a run opens them."""
    from dolb.data.store import write_dataset
    from dolb.execution import payload, tasks
    from dolb.execution.sweep import plan_groups
    from dolb.execution.tasks import Destination, run_batch
    from dolb.experiment.pipeline import load_pipeline
    from dolb.results.store import result_schema

    proxy, _, _ = store
    rng = np.random.default_rng(0)
    write_dataset("s3://faults/data", rng.uniform(0, 3, (80, 1)), rng.standard_normal(80), chunk_rows=16)
    pipeline = tmp_path / "p.toml"
    pipeline.write_text(DATA_PIPELINE)
    (group,) = plan_groups(load_pipeline(pipeline))
    batch = [(group, np.array([0, 1]))]
    first, second = (Destination(result_schema({}), run, str(tmp_path / "out")) for run in ("r1", "r2"))
    encoded = payload.encode(batch)
    proxy.cut()
    forget_s3_filesystems()  # no connection kept from before the cut
    monkeypatch.setattr(tasks, "FAULTS", {})
    outcomes = [run_batch(batch, first), payload.run_batch(encoded, payload.encode(second))]
    assert set(tasks.FAULTS) == {"r1", "r2"}  # the runs' later tasks here stop at once:
    outcomes.append(run_batch(batch, first))
    for outcome in outcomes:
        assert (outcome.storage_error or "").startswith("s3://faults/data: the object store failed after retries ("), outcome
        assert outcome.failures == [] and outcome.part is None and outcome.rows is None
    assert not (tmp_path / "out").exists()
    with pytest.raises(StoreFault, match=r"^s3://faults/data: the object store failed after retries \("):
        plan_groups(load_pipeline(pipeline))  # as a run starts
