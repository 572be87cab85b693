"""dolb's successive halving and dask-ml's ``SuccessiveHalvingSearchCV`` find the known
best step size of a synthetic problem where one setting is clearly best.

Their choices are not compared trial by trial: dask-ml's budget is counted in
``partial_fit`` calls on blocks it visits in a shuffled order, its validation set is a
blockwise random split, and it halves on to a single survivor; dolb's rungs count
examples of the split's stream in its order, score a seeded holdout, and stop before a
rung of one. Where one configuration is clearly best, both must find it.
"""

import textwrap

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import dump_svmlight_file

from dolb.execution.sweep import run_sweep
from dolb.options import RunOptions
from dolb.sklearn import OnlineClassifier

pytestmark = pytest.mark.e2e

STEP_SIZES = [0.1, 10.0, 1000.0]
BEST = 0.1
BLOCK = 900
"""Training examples of halving's first rung (dolb) and of one ``partial_fit`` block (dask-ml)."""


def noisy_halfspace(n=6000, d=10, seed=0):
    """Gaussian rows, labels of a random halfspace, 10 % of them flipped."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) > 0, 1.0, -1.0)
    y[rng.random(n) < 0.1] *= -1.0
    return X, y


def test_the_best_step_size_is_clearly_best():
    X, y = noisy_halfspace()
    errors = {eta0: np.mean(OnlineClassifier("sgd", eta0=eta0).fit(X[:BLOCK], y[:BLOCK]).predict(X[4800:]) != y[4800:])
              for eta0 in STEP_SIZES}
    assert min(errors, key=errors.get) == BEST
    assert sorted(errors.values())[1] - errors[BEST] > 0.03, errors


def test_dolb_halving_finds_the_best_step_size(tmp_path):
    X, y = noisy_halfspace()
    dump_svmlight_file(X, y, str(tmp_path / "halfspace.svm"))
    pipeline = tmp_path / "tune.toml"
    pipeline.write_text(textwrap.dedent(f"""
        [pipeline]
        name = "tune"
        seed = 1

        [datasets.halfspace]
        importer = "svmlight"
        params = {{ path = "halfspace.svm" }}

        [experiments.e]
        dataset = "halfspace"
        task = "binary"
        split = {{ scheme = "holdout", count = 2, test_fraction = 0.2, order = "random" }}
        checkpoints = [1000]
        metrics = ["test_error"]
        learners = [{{ learner = "sgd", search = {{ eta0 = {STEP_SIZES} }} }}]
        tuning = {{ method = "halving", min_budget = {BLOCK}, eta = 3, defaults = false }}
        """))
    run_sweep(pipeline, tmp_path / "out", RunOptions(workers=1, progress=False))
    decisions = pd.read_parquet(tmp_path / "out" / "tuning" / "tune.parquet")
    assert sorted(decisions["param_eta0"]) == sorted(STEP_SIZES * 2)  # every trial, in both splits
    chosen = decisions[decisions["chosen"]]
    assert chosen["split"].tolist() == [0, 1] and chosen["param_eta0"].tolist() == [BEST, BEST]


def test_dask_ml_halving_finds_the_best_step_size():
    pytest.importorskip("dask_ml", reason="dask-ml is not installed: pip install 'dolb[peers]'")
    import dask.array as da
    from dask_ml.model_selection import SuccessiveHalvingSearchCV
    from distributed import Client, LocalCluster

    from benchmarks.tuning.tuning_bench import dask_ml_compatible

    dask_ml_compatible()
    X, y = noisy_halfspace()
    rows = BLOCK * 5 // 4  # dask-ml validates on a fifth of each block
    search = SuccessiveHalvingSearchCV(OnlineClassifier("sgd"), {"eta0": STEP_SIZES}, n_initial_parameters=3,
                                       n_initial_iter=1, aggressiveness=3, max_iter=3, test_size=0.2, random_state=0)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster, \
            Client(cluster):
        search.fit(da.from_array(X, chunks=(rows, X.shape[1])), da.from_array(y, chunks=rows), classes=[-1.0, 1.0])
    assert search.best_params_ == {"eta0": BEST}
    assert search.metadata_["n_models"] == 3
