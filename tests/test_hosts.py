"""A study across hosts that share no disk (issue 52): a scheduler, two worker hosts and
an S3-protocol server, each in namespaces of its own on its own loopback address
(tests/hosts.py), the data only on the client's host. The real ``dolb`` command runs
as the client; every result is checked bit for bit against the same pipeline run
locally: a study with generated data, its rerun, ``dolb reproduce``, imported data, a
worker host without credentials and a worker host killed mid-run.

The hosts start once for the module; each local run (the reference) runs once, beside
the first run on the hosts that it is compared with.
"""

import os
import re
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from distributed import Client

from dolb import read_results
from dolb.data.store.object_stores import forget_s3_filesystems
from dolb.results.history import read_records
from dolb.results.query import stored_cells
from dolb.results.store import RUN_COLUMNS, ResultStore
from tests.conftest import SMALL_IRMA
from tests.hosts import (
    WORKER_ADDRESSES,
    emulated_hosts,
    host_name,
    host_view,
    hosts_unavailable,
    kept_folders,
    listening,
)
from tests.studies import SHARED_DATA

UNAVAILABLE = hosts_unavailable()
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900),
              pytest.mark.skipif(UNAVAILABLE is not None, reason=f"no emulated hosts: {UNAVAILABLE}")]

DATA = Path(os.environ.get("DOLB_DATA") or SHARED_DATA)
"""The data folder: on the client's host only (hidden on every other)."""
A9A = DATA / "libsvm" / "a9a"
WORKERS = WORKER_ADDRESSES[:2]
KILLED, BARE = WORKERS
"""The worker host killed mid-run, and the one started without credentials."""

LONGER = """
[pipeline]
name = "hosts-longer"
seed = 52

[datasets.irma]
generator = "irma"
params = { n_sequences = 24, length = 300, n_test = 1000 }

[experiments.table]
dataset = "irma"
task = "regression"
split = { scheme = "sequences", count = 24 }
checkpoints = [10, 30, 100, 300]
metrics = ["test_mse", "online_loss"]
learners = [
  { learner = "irma", complexity = [3, 6], params = { basis = "legendre", domain_high = 3.0 } },
  { learner = "batch_ls", complexity = [3, 6], params = { domain_high = 3.0 } },
  { learner = "rls", complexity = 4, params = { domain_high = 3.0, forgetting = 0.99, tikhonov = 0.05 } },
]

[experiments.curve]
dataset = "irma"
task = "regression"
split = { scheme = "sequences", count = 8 }
checkpoints = "all"
metrics = ["test_mse"]
learners = [{ learner = "irma", complexity = 6, params = { basis = "legendre", domain_high = 3.0 } }]
"""
"""128 cells whose computing lasts seconds: long enough to kill a worker host mid-run."""

IMPORTED = f"""
[pipeline]
name = "hosts-imported"
seed = 7

[datasets.a9a]
importer = "svmlight"
params = {{ path = "{A9A}" }}

[experiments.e]
dataset = "a9a"
task = "binary"
split = {{ scheme = "holdout", count = 2, test_fraction = 0.2, order = "random" }}
checkpoints = [1000, 4000]
metrics = ["test_error", "online_loss"]
learners = [{{ learner = "perceptron" }}, {{ learner = "adagrad" }}]
"""
"""a9a imported from the data folder, which only the client's host has."""

SMALL = textwrap.dedent(SMALL_IRMA).split("[[reports]]")[0]
"""60 cells of generated data (the IRMA generator's), in a second; no reports (to save the rerun's time)."""
PIPELINES = {"small": SMALL, "longer": LONGER, "imported": IMPORTED}


def dolb(*argv, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    """The ``dolb`` command line, as a user runs it on the client's host."""
    return subprocess.run([sys.executable, "-m", "dolb", *map(str, argv)], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def results(folder) -> pd.DataFrame:
    """The stored results of a result folder without what a run measures of itself,
    sorted by cell id, conversion, checkpoint and metric."""
    frame = read_results(str(folder)).drop(columns=[name for name, _ in RUN_COLUMNS])
    keys = ["cell_id", "conversion", "n_train", "metric"]
    return frame.sort_values(keys, kind="stable").reset_index(drop=True)


def assert_same(one, two) -> None:
    """The results of two result folders are equal to the bit (NaN to NaN)."""
    left, right = results(one), results(two)
    pd.testing.assert_frame_equal(left, right, check_exact=True)
    values = [frame["value"].to_numpy(np.float64).view(np.int64) for frame in (left, right)]
    assert (values[0] == values[1]).all()


def hosts_of(folder) -> list[str]:
    """The host (address) of the worker that computed each stored row."""
    return read_results(str(folder))["worker"].str.extract(r"tcp://([\d.]+):")[0].tolist()


class Site:
    """The client's host and the emulated ones: pipelines, local references, a bucket."""

    def __init__(self, folder: Path, hosts, pool: ThreadPoolExecutor):
        self.folder, self.hosts, self.pool, self.references = folder, hosts, pool, {}
        self.bucket = hosts.bucket()
        self.env = {**os.environ, **hosts.environment}

    def pipeline(self, name: str) -> Path:
        return self.folder / f"{name}.toml"

    def start_local(self, name: str) -> None:
        """Start the local run of the pipeline ``name`` in the background (``dolb run P
        --out DIR``, the embedded cluster, one worker), unless it has been started."""
        if name not in self.references:
            env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
            self.references[name] = self.pool.submit(dolb, "run", self.pipeline(name), "--out", self.local_folder(name),
                                                     "--workers", "1", "--no-progress", env=env, cwd=self.folder)

    def local(self, name: str) -> Path:
        """The result folder of the pipeline ``name`` run locally (started if need be; waits for it)."""
        self.start_local(name)
        done = self.references[name].result()
        assert done.returncode == 0, done.stderr
        return self.local_folder(name)

    def local_folder(self, name: str) -> Path:
        return self.folder / "local" / name

    def run(self, name: str, out: str, *options, env: dict | None = None) -> subprocess.CompletedProcess:
        """``dolb run`` of the pipeline ``name`` on the hosts, results and data cache in the bucket."""
        return dolb("run", self.pipeline(name), "--out", self.url(out), "--data-cache", f"{self.bucket}/cache",
                    "--scheduler", self.hosts.scheduler, "--no-progress", *options, env=env or self.env, cwd=self.folder)

    def url(self, out: str) -> str:
        return f"{self.bucket}/runs/{out}"

    def whole(self) -> None:
        """Every worker host running, with credentials (as a test may have left them otherwise)."""
        for address in WORKERS:
            host = self.hosts.hosts.get(address)
            if host is None or not host.alive() or not host.credentials:
                self.hosts.restart(address)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The hosts (started once), a bucket and the module's pipelines; this process holds
    the store's credentials meanwhile (it reads the results)."""
    pytest.importorskip("s3fs", reason="s3fs is not installed (the test extra installs it)")
    pytest.importorskip("moto.server", reason="moto's server is not installed (the test extra installs it)")
    folder = tmp_path_factory.mktemp("hosts")
    for name, text in PIPELINES.items():
        (folder / f"{name}.toml").write_text(text)
    (folder / "logs").mkdir()
    with (emulated_hosts(folder / "logs", hidden=(DATA,)) as hosts, pytest.MonkeyPatch.context() as patch,
          ThreadPoolExecutor(1) as pool):  # the local runs, one at a time, beside the runs on the hosts
        for name, value in hosts.environment.items():
            patch.setenv(name, value)
        forget_s3_filesystems()  # s3fs keeps its file systems by their arguments, not the endpoint they reach
        try:
            yield Site(folder, hosts, pool)
        finally:
            forget_s3_filesystems()  # those of this server, which the module's end stops
    assert hosts.remaining() == []  # every process ended, every namespace gone


@pytest.fixture(scope="module")
def night(site) -> subprocess.CompletedProcess:
    """The small pipeline run on the hosts (and meanwhile locally)."""
    site.start_local("small")
    return site.run("small", "night")


def test_each_host_sees_its_own_files_and_listens_on_its_own_address(site):
    home = Path.home().resolve()
    skeleton = sorted({p.relative_to(home).parts[0] for p in kept_folders(site.hosts.hidden) if p.is_relative_to(home)})
    with Client(site.hosts.scheduler) as client:
        seen = client.run(host_view, [str(site.folder), str(A9A), "/tmp/home"], [str(home), str(DATA)])
    assert sorted(view["name"] for view in seen.values()) == [host_name(address) for address in WORKERS]
    for view in seen.values():
        assert view["found"] == ["/tmp/home"] and (view["home"], view["tmpdir"]) == ("/tmp/home", "/tmp")
        assert view["entries"] == {str(home): skeleton, str(DATA): []}  # the software only, no data
    assert A9A.exists() and site.folder.exists()  # on the client's host only
    for address, host in site.hosts.hosts.items():
        assert listening(host) == {address}, host.log.read_text()[-2000:]


def test_a_study_across_hosts_is_bit_identical_to_the_same_study_run_locally(site, night):
    assert night.returncode == 0, night.stderr
    assert "60 cells: 0 already stored, 60 computed, 0 failed" in night.stdout
    assert set(hosts_of(site.url("night"))) == set(WORKERS)  # both hosts computed
    assert_same(site.url("night"), site.local("small"))


def test_a_rerun_across_hosts_computes_nothing(site, night):
    again = site.run("small", "night")
    assert again.returncode == 0, again.stderr
    assert "60 cells: 60 already stored, 0 computed, 0 failed" in again.stdout
    assert_same(site.url("night"), site.local("small"))


def test_reproduce_a_run_across_hosts(site, night):
    done = dolb("reproduce", site.url("night"), "--out", site.url("reproduced"), "--scheduler", site.hosts.scheduler,
                env=site.env, cwd=site.folder)
    assert done.returncode == 0, done.stderr
    assert " reproduced: all 1,008 values bit-identical" in done.stdout, done.stdout
    assert_same(site.url("reproduced"), site.local("small"))


@pytest.mark.skipif(not A9A.exists(), reason=f"real data not found at {A9A}")
def test_imported_data_across_hosts_is_bit_identical_to_the_same_import_run_locally(site):
    site.whole()
    done = site.run("imported", "imported")
    assert done.returncode == 0, done.stderr
    assert_same(site.url("imported"), site.local("imported"))


def test_the_object_store_guides_command_without_a_data_cache(site, tmp_path):
    """``dolb run P --out s3://... --scheduler ADDR``: the client's default data cache,
    ``~/.cache/dolb/data``, is on its own disk; the datasets go to ``OUT/datasets``, and
    the run records it for reproduce."""
    site.whole()
    env = {k: v for k, v in site.env.items() if k not in ("DOLB_DATA_CACHE", "XDG_CACHE_HOME")}
    done = dolb("run", site.pipeline("small"), "--out", site.url("guide"), "--scheduler", site.hosts.scheduler,
                "--no-progress", env=env | {"HOME": str(tmp_path)}, cwd=site.folder)
    assert done.returncode == 0, done.stderr
    assert_same(site.url("guide"), site.local("small"))
    (record,) = read_records(ResultStore(site.url("guide")))
    assert record["options"]["data_cache"] == f"{site.url('guide')}/datasets"


def test_a_local_data_cache_the_workers_do_not_see_is_refused_naming_their_hosts(site, tmp_path):
    site.whole()
    done = dolb("run", site.pipeline("small"), "--out", site.url("refused"), "--scheduler", site.hosts.scheduler,
                "--no-progress", "--data-cache", str(tmp_path / "cache"), env=site.env, cwd=site.folder)
    (line,) = done.stderr.splitlines()
    assert done.returncode == 2 and line.startswith(f"dolb: error: data cache {tmp_path / 'cache'}: not seen on host "), line
    assert all(f"(worker tcp://{address}:" in line for address in WORKERS), line
    assert line.endswith("give --data-cache URL (or $DOLB_DATA_CACHE), an object store every host reaches"), line
    assert not ResultStore(site.url("refused")).exists()


@pytest.fixture(scope="module")
def bare(site, night):
    """The small pipeline on hosts one of which has no credentials; then again once it
    has. After ``night``: its dataset is in the data cache already, so that what the
    host meets first is the result folder or a cell, never the dataset's build."""
    site.whole()
    site.hosts.restart(BARE, credentials=False)
    stopped = site.run("small", "bare")
    stored = stored_cells(ResultStore(site.url("bare")))
    site.hosts.restart(BARE)
    return SimpleNamespace(stopped=stopped, stored=stored, mended=site.run("small", "bare"))


def test_a_worker_host_without_credentials_stops_the_run_in_one_line_and_fails_no_cell(bare):
    lines = bare.stopped.stderr.splitlines()
    assert bare.stopped.returncode == 2 and len(lines) == 1, bare.stopped.stderr
    assert lines[0].startswith("dolb: error: s3://") and "no credentials for the object store" in lines[0]
    assert lines[0].endswith("give them on every host (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE), "
                             "then run again")
    assert bare.stored[1] == set()  # no cell stored as failed


def test_the_line_of_a_worker_host_without_credentials_names_that_host(bare):
    (line,) = bare.stopped.stderr.splitlines()
    assert f" on host {host_name(BARE)} (worker tcp://{BARE}:" in line, line


def test_the_run_once_the_host_has_credentials_computes_everything_without_a_flag(site, bare):
    assert bare.mended.returncode == 0, bare.mended.stderr
    stored, computed = map(int, re.search(r"60 cells: (\d+) already stored, (\d+) computed, 0 failed",
                                          bare.mended.stdout).groups())
    assert (stored, computed) == (len(bare.stored[0]), 60 - len(bare.stored[0]))
    assert_same(site.url("bare"), site.local("small"))


def test_a_worker_host_killed_mid_run_leaves_the_results_bit_identical(site):
    site.whole()
    site.start_local("longer")
    command = [sys.executable, "-m", "dolb", "run", str(site.pipeline("longer")), "--out", site.url("killed"),
               "--data-cache", f"{site.bucket}/cache", "--scheduler", site.hosts.scheduler, "--no-progress"]
    with (Client(site.hosts.scheduler) as watcher,
          subprocess.Popen(command, env=site.env, cwd=site.folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True) as run):
        while not (parts(site.url("killed")) and computing(watcher, KILLED)):  # a part written, a task running there
            assert run.poll() is None, run.communicate()
            time.sleep(0.1)
        site.hosts.kill(KILLED)
        out, err = run.communicate(timeout=600)
    assert run.returncode == 0, err
    assert "128 cells: 0 already stored, 128 computed, 0 failed" in out
    (survivor,) = set(WORKERS) - {KILLED}
    computed_by = set(hosts_of(site.url("killed")))
    assert survivor in computed_by and computed_by <= set(WORKERS)
    assert_same(site.url("killed"), site.local("longer"))


def computing(client, address: str) -> bool:
    """Whether the worker host ``address`` is computing a task of the scheduler's."""
    return any(worker.startswith(f"tcp://{address}:") and keys for worker, keys in client.processing().items())


def parts(url: str) -> list[str]:
    """The result parts written in the result folder ``url`` so far."""
    import s3fs

    fs = s3fs.S3FileSystem()
    fs.invalidate_cache()
    try:
        return [p for p in fs.ls(f"{url}/results") if Path(p).name.startswith("part-")]
    except FileNotFoundError:
        return []
