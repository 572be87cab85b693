"""Shared fixtures: small pipeline files written on the fly, a private data cache, the
deterministic content of a result folder, and the shipped studies run once a session
at test size (shared by the study tests and the notebook test)."""

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from dolb.learners import OnlineLearner
from dolb.results.history import write_record
from dolb.results.query import rows
from dolb.results.store import RUN_COLUMNS, ResultStore, result_schema
from tests import studies
from tests.s3_server import s3_bucket, s3_server  # noqa: F401  (fixtures)
from tests.studies import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]

SMALL_IRMA = """
[pipeline]
name = "small-irma"
seed = 11

[datasets.irma]
generator = "irma"
params = { n_sequences = 12, length = 60, n_test = 200 }

[experiments.table]
dataset = "irma"
task = "regression"
split = { scheme = "sequences", count = 12 }
checkpoints = [10, 30, 60]
metrics = ["test_mse", "online_loss"]
learners = [
  { learner = "irma", complexity = [3, 5], params = { basis = "legendre", domain_high = 3.0 } },
  { learner = "batch_ls", complexity = [3, 5], params = { domain_high = 3.0 } },
]

[experiments.curve]
dataset = "irma"
task = "regression"
split = { scheme = "sequences", count = 6, length = 60 }
checkpoints = "all"
metrics = ["cumulative_loss"]
learners = [
  { learner = "rls", complexity = 4, params = { domain_high = 3.0, forgetting = 0.9, tikhonov = 0.05 } },
  { learner = "irma", complexity = 4, params = { basis = "legendre", domain_high = 3.0 } },
]

[[reports]]
kind = "table"
experiment = "table"
metric = "test_mse"
at = [10, 60]
stats = ["mean", "var"]

[[reports]]
kind = "curve"
experiment = "curve"
metric = "cumulative_loss"
"""


STUDIES = {"irma_study", "rcv1_study", "oms_study", "omr_study"}
"""The session fixtures that run a shipped study (tens of seconds each)."""


def pytest_collection_modifyitems(items):
    """Group the tests for pytest-xdist (``--dist loadgroup``, see pyproject.toml): those
    that read a shipped study's run go to one process, so that each study runs once a
    session, and a module's other tests stay together, so that its module fixtures are
    made once."""
    for item in items:
        uses_a_study = STUDIES & set(getattr(item, "fixturenames", ()))
        item.add_marker(pytest.mark.xdist_group("studies" if uses_a_study else item.nodeid.split("::")[0]))


@pytest.fixture
def small_pipeline(tmp_path):
    """A small IRMA pipeline file: 48 table cells and 12 curve cells."""
    path = tmp_path / "small.toml"
    path.write_text(textwrap.dedent(SMALL_IRMA))
    return path


@pytest.fixture
def checks(monkeypatch) -> list[str]:
    """The learner of every call of ``check_params`` from now on, one entry a call (a
    learner's own checks end in the base class's, counted there)."""
    calls = []
    check = OnlineLearner.check_params.__func__

    def counted(cls, params):
        calls.append(cls.name)
        return check(cls, params)

    monkeypatch.setattr(OnlineLearner, "check_params", classmethod(counted))
    return calls


@pytest.fixture
def ctrl_c():
    """Ctrl-C (SIGINT) raises KeyboardInterrupt in this process and in the processes it
    starts, as at a terminal, for the time of the test: the processes that pytest-xdist
    runs the tests in ignore it, and a child inherits that."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture(scope="session", autouse=True)
def data_cache(tmp_path_factory):
    """Generated and imported datasets go to one cache for the whole session (shared by
    the tests, as runs share it), never to the user's."""
    folder = tmp_path_factory.mktemp("data-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DOLB_DATA_CACHE", str(folder))
        yield folder


def stored_values(folder) -> pd.DataFrame:
    """The deterministic columns of every stored row of a result folder (each cell
    once), sorted by cell id, conversion, checkpoint and metric: two runs stored the
    same results when these are equal, bit for bit (``assert_same``)."""
    frame = rows(ResultStore(folder)).drop(columns=[name for name, _ in RUN_COLUMNS])
    keys = ["cell_id", "conversion", "n_train", "metric"]
    return frame.sort_values(keys, kind="stable").reset_index(drop=True)


def write_store(folder, frame: pd.DataFrame, pipeline: str = "nightly") -> Path:
    """A result folder holding the tidy rows ``frame`` (the columns
    ``dolb.read_results(..., tidy=True)`` gives) as one committed part of successful
    cells, and a finished run of ``pipeline``: what `dolb compare` reads of a folder."""
    store = ResultStore(folder)
    schema = result_schema({})
    columns = {name: frame[name].tolist() if name in frame else [None] * len(frame) for name in schema.names}
    columns |= {name: [value] * len(frame) for name, value in {"status": "ok", "run_id": "run", "attempt": "a"}.items()}
    part = store.write_part(pa.Table.from_pydict(columns, schema=schema))
    store.commit({part: sorted(set(frame["cell_id"]))}, "run")
    write_record(store, {"run_id": "run", "pipeline": pipeline, "ended": "2026-01-01T00:00:00Z"})
    return Path(folder)


def assert_same(one, two) -> None:
    """The stored results of two result folders are equal to the bit."""
    pd.testing.assert_frame_equal(stored_values(one), stored_values(two), check_exact=True)


def workers_named(folder) -> set[str]:
    """The workers that computed a result folder's rows."""
    return set(rows(ResultStore(folder))["worker"])


def requires_shared_data(*parts):
    """Skip (with the reason) when ../shared/data, or the named file in it, is absent."""
    path = SHARED_DATA.joinpath(*parts)
    return pytest.mark.skipif(not path.exists(), reason=f"real data not found at {path}")


@contextlib.contextmanager
def dask_processes(folder: Path, *options: str, machines: tuple[dict[str, str | None], ...] = ({}, {})):
    """A `dask scheduler` and one single-threaded `dask worker` per entry of ``machines``
    (:func:`dask_worker`), started from the command line with ``options`` (e.g. TLS
    files), as on a real cluster; yields the scheduler file."""
    scheduler_file = folder / "scheduler.json"
    scheduler = subprocess.Popen(
        [sys.executable, "-c", "from distributed.cli.dask_scheduler import main; main()",
         "--scheduler-file", str(scheduler_file), "--port", "0", "--host", "127.0.0.1", "--dashboard-address", ":0",
         *options],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not scheduler_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    try:
        with contextlib.ExitStack() as workers:
            for machine in machines:
                workers.enter_context(dask_worker(scheduler_file, *options, machine=machine))
            yield scheduler_file
    finally:
        _stop(scheduler)


@contextlib.contextmanager
def dask_worker(scheduler_file: Path, *options: str, machine: dict[str, str | None] | None = None):
    """A single-threaded `dask worker` (with its nanny) of the scheduler of
    ``scheduler_file``; ``machine``: variables set in its environment (another
    ``OPENBLAS_CORETYPE`` emulates another CPU), or removed from it (None)."""
    worker = subprocess.Popen(
        [sys.executable, "-c", "from distributed.cli.dask_worker import main; main()",
         "--scheduler-file", str(scheduler_file), "--nworkers", "1", "--nthreads", "1", "--no-dashboard",
         "--host", "127.0.0.1", *options],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={k: v for k, v in {**os.environ, "OMP_NUM_THREADS": "1", **(machine or {})}.items() if v is not None},
    )
    try:
        yield worker
    finally:
        _stop(worker)


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


def run_study(tmp_path_factory, name: str, pipeline_text: str, *data: str, workers: int = 2):
    """(result folder, sweep summary) of a study run on a LocalCluster of ``workers``
    worker processes in a temporary folder; skipped when a named part of ../shared/data
    is missing."""
    from dolb.execution.sweep import run_sweep
    from dolb.options import RunOptions

    for part in data:
        if not (SHARED_DATA / part).exists():
            pytest.skip(f"real data not found at {SHARED_DATA / part}")
    folder = tmp_path_factory.mktemp(name)
    pipeline = folder / f"{name}.toml"
    pipeline.write_text(pipeline_text)
    return folder / "out", run_sweep(pipeline, folder / "out", RunOptions(workers=workers, progress=False))


@pytest.fixture(scope="session")
def small_run(tmp_path_factory):
    """The result folder of the small IRMA pipeline (:data:`SMALL_IRMA`) run once a session
    on an embedded cluster of one worker process: the reference that the same cells run
    elsewhere (another cluster, a URL) must store to the bit (``assert_same``). Read it,
    never write into it."""
    out, summary = run_study(tmp_path_factory, "small-run", textwrap.dedent(SMALL_IRMA), workers=1)
    assert (summary.n_computed, summary.n_failed) == (60, 0)
    return out


@pytest.fixture(scope="session")
def irma_study(tmp_path_factory):
    """The shipped IRMA study (pipelines/irma.toml), in full: 7,500 short cells."""
    return run_study(tmp_path_factory, "irma", (ROOT / "pipelines" / "irma.toml").read_text())


@pytest.fixture(scope="session")
def rcv1_study(tmp_path_factory):
    """The reduced cutoff-averaging study and linear zoo on RCV1, in one run (see
    :data:`tests.studies.RCV1_STUDIES`)."""
    return run_study(tmp_path_factory, "rcv1", studies.rcv1_pipeline(), "rcv1/rcv1v2_mulan_dedup.npz")


@pytest.fixture(scope="session")
def oms_study(tmp_path_factory):
    """The reduced OMS study on MNIST (see :func:`tests.studies.oms_pipeline`)."""
    return run_study(tmp_path_factory, "oms", studies.oms_pipeline(), "mnist")


@pytest.fixture(scope="session")
def omr_study(tmp_path_factory):
    """The online manifold regularisation study at test size (see
    :func:`tests.studies.omr_pipeline`)."""
    return run_study(tmp_path_factory, "omr", studies.omr_pipeline(), "mnist", "face")
