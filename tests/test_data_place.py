"""Where a run on a cluster keeps its datasets (dolb.execution.data_place): unchanged
when the workers see the client's files (a real LocalCluster's worker processes do),
staged into the result folder's object store or refused in one line naming the host
when they do not (a worker that sees none of them, as on hosts that share no disk)."""

import textwrap

import numpy as np
import pytest
from distributed import Client, LocalCluster

from dolb.data.store import write_dataset
from dolb.errors import ConfigError
from dolb.execution.data_place import DataPlace, place_data, unseen_by_workers
from dolb.experiment.pipeline import load_pipeline

GENERATED = """
[pipeline]
name = "place"
seed = 3

[datasets.made]
generator = "irma"
params = {{ n_sequences = 4, length = 20, n_test = 10 }}
{extra}
[experiments.e]
dataset = {datasets}
task = "regression"
split = {{ scheme = "sequences", count = 2 }}
checkpoints = [10]
metrics = ["test_mse"]
learners = [{{ learner = "rls", complexity = 2, params = {{ domain_high = 3.0 }} }}]
"""
IMPORTED = """
[datasets.imported]
importer = "svmlight"
params = { path = "rows.svm" }
"""
STORED = """
[datasets.stored]
train = "store"
test = "store"
"""


def pipeline(folder, extra: str = "", datasets: str = '"made"'):
    path = folder / "p.toml"
    path.write_text(textwrap.dedent(GENERATED.format(extra=extra, datasets=datasets)))
    (folder / "rows.svm").write_text("1 1:0.5\n-1 1:1.5\n1 1:2.5\n")
    return load_pipeline(path)


class BlindWorker:
    """A client whose one worker, on host ``far`` at 127.0.0.3, sees none of the
    client's files (answers as a worker of a host with a disk of its own)."""

    calls = 0

    def run(self, function, paths, on_error):
        self.calls += 1
        return {"tcp://127.0.0.3:4000": ("far", {name: None for name in paths})}


def no_client():
    raise AssertionError("the workers were asked, though no local file is in question")


def test_a_real_local_clusters_workers_see_every_file_and_nothing_changes(tmp_path):
    cache = tmp_path / "cache"
    specs = pipeline(tmp_path, IMPORTED, '["made", "imported"]')
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True) as cluster, Client(cluster) as client:
        assert place_data(lambda: client, specs, cache, str(tmp_path / "out"), cache_asked=False) == DataPlace(cache)
        assert unseen_by_workers(client, {str(tmp_path / "rows.svm"): "source", str(cache): "cache"}) == {}
    assert list(cache.iterdir()) == []  # the probe file is gone


def test_blind_workers_get_a_data_cache_in_the_result_folders_object_store(tmp_path):
    specs = pipeline(tmp_path)
    worker = BlindWorker()
    found = place_data(lambda: worker, specs, tmp_path / "cache", "s3://bucket/runs/irma/", cache_asked=False)
    assert found == DataPlace("s3://bucket/runs/irma/datasets", imports_here=False) and worker.calls == 1
    assert list((tmp_path / "cache").iterdir()) == []


def test_imports_run_on_the_client_when_the_workers_do_not_see_their_source(tmp_path):
    specs = pipeline(tmp_path, IMPORTED, '["made", "imported"]')
    assert place_data(BlindWorker, specs, tmp_path / "cache", "s3://b/out", False) == DataPlace("s3://b/out/datasets",
                                                                                                 imports_here=True)
    assert place_data(BlindWorker, specs, "s3://b/cache", "s3://b/out", True) == DataPlace("s3://b/cache",
                                                                                           imports_here=True)


def test_nothing_local_asks_no_worker(tmp_path):
    assert place_data(no_client, pipeline(tmp_path), "s3://b/cache", str(tmp_path / "out"), True) == DataPlace(
        "s3://b/cache")


def test_a_local_cache_asked_for_that_the_workers_do_not_see_is_refused_naming_the_host(tmp_path):
    with pytest.raises(ConfigError) as refused:
        place_data(BlindWorker, pipeline(tmp_path), tmp_path / "cache", "s3://b/out", cache_asked=True)
    assert str(refused.value) == (
        f"data cache {tmp_path / 'cache'}: not seen on host far (worker tcp://127.0.0.3:4000) (a disk of its own): "
        "give --data-cache URL (or $DOLB_DATA_CACHE), an object store every host reaches")


def test_blind_workers_and_no_object_store_are_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"not seen on host far .*and the run has no object store to keep its "
                                          r"datasets in: give --data-cache URL or --out URL"):
        place_data(BlindWorker, pipeline(tmp_path), tmp_path / "cache", str(tmp_path / "out"), cache_asked=False)


def test_a_local_dataset_store_the_workers_do_not_see_is_refused(tmp_path):
    write_dataset(str(tmp_path / "store"), np.ones((4, 1)), np.ones(4))
    with pytest.raises(ConfigError) as refused:
        place_data(BlindWorker, pipeline(tmp_path, STORED, '"stored"'), "s3://b/cache", "s3://b/out", True)
    assert str(refused.value).startswith(f"{tmp_path / 'store'}: no dataset store there on host far (worker "
                                         "tcp://127.0.0.3:4000): the workers do not see the client's files; write it")
