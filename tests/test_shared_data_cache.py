"""The data cache behind a URL, on a real S3-protocol server (tests/s3_server.py): each
dataset built once, under a lease (a study with its data cache there:
tests/test_store_faults.py)."""

import threading
import time

import numpy as np

from dolb.data.sources import shared_cache
from dolb.data.sources.cache import stored_parts
from dolb.data.store.format import url_filesystem


def made(counter: list, seconds: float = 0.0):
    """A ``make`` of two parts that counts its calls (and takes ``seconds``)."""

    def make():
        counter.append(threading.get_ident())
        time.sleep(seconds)
        X = np.arange(40, dtype=np.float64).reshape(20, 2)
        return {"train": (X, X[:, 0], {}), "test": (X[:5], X[:5, 0], {})}

    return make


def run_folders(cache: str) -> list[str]:
    """What the cache holds: ``<run>/<object or builder's folder>`` of each run."""
    fs, root = url_filesystem(cache)
    fs.invalidate_cache()
    return sorted(p.removeprefix(root + "/") for run in fs.ls(root, detail=False) for p in fs.ls(run, detail=False))


def test_builders_racing_for_a_run_build_it_once(s3_bucket):
    calls = []
    found = []
    cache = f"{s3_bucket}/cache"

    def build():
        found.append(stored_parts(cache, "toy", {"n": 20}, made(calls, seconds=1.0)))

    threads = [threading.Thread(target=build) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1  # one took the lease; the others waited for what it published
    assert len({parts["train"].path for parts in found}) == 1
    np.testing.assert_array_equal(found[0]["train"].read(np.arange(20))[0],
                                  np.arange(40, dtype=np.float64).reshape(20, 2))
    assert [name.split("/")[1] for name in run_folders(cache)] == sorted(
        ["built.json", found[0]["train"].path.rsplit("/", 2)[1]])  # no lease left, one builder's copy
    assert stored_parts(cache, "toy", {"n": 20}, None)["test"].n_rows == 5  # reused, not built


def test_a_lease_left_by_a_dead_builder_is_broken(s3_bucket, monkeypatch):
    monkeypatch.setattr(shared_cache, "LEASE", 0.3)
    monkeypatch.setattr(shared_cache, "POLL", 0.05)
    cache = f"{s3_bucket}/cache"
    assert stored_parts(cache, "toy", {"n": 20}, None) is None
    calls = []
    stored_parts(cache, "toy", {"n": 21}, made(calls))
    (run,) = {name.split("/")[0] for name in run_folders(cache)}
    fs, root = url_filesystem(cache)
    fs.rm(f"{root}/{run}", recursive=True)
    fs.pipe_file(f"{root}/{run}/lease.json", b'{"builder": "dead", "host": "gone", "pid": 1, "beat": 7}')
    parts = stored_parts(cache, "toy", {"n": 21}, made(calls))
    assert len(calls) == 2 and parts["train"].n_rows == 20
    assert "lease.json" not in [name.split("/")[1] for name in run_folders(cache)]

