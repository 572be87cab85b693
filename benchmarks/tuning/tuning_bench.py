"""The tuning benchmark: a full grid against successive halving and Hyperband, as dolb
pipelines on 2 workers, and against dask-ml's adaptive searches on the same space.

    python3 -m benchmarks.tuning.tuning_bench OUT [--quick] [--repeats N] [--data ../shared/data]

Every linear_zoo learner with a step size or regularisation is tuned over a log grid of
27 values (9 with ``--quick``) on a9a, w8a, ijcnn1 and the RCV1 pair CCAT/ECAT (a9a
only with ``--quick``), inside each of 3 seeded 80/20 splits, by three pipelines that
differ only in ``tuning.method``: ``grid``, ``halving`` and ``hyperband`` (eta 3, rungs
from :data:`MIN_FRACTION` to :data:`MAX_FRACTION` of the tuning stream); dask-ml's
``SuccessiveHalvingSearchCV`` and ``HyperbandSearchCV`` search the same space over
:class:`dolb.sklearn.OnlineClassifier` on a LocalCluster of 2 workers. For each learner
and dataset it reports the test error of the chosen configuration, whether halving's
and Hyperband's lie within the 95 % bootstrap interval of the grid's, the training
examples each tuning learned as a fraction of the grid's, and wall times. How the
searches are matched and the interval computed: docs/design/benchmarks.md.

Writes ``benchmarks/tuning/<UTC time>.json`` (``--record``: another folder; machine,
versions, the command, every repeat's raw numbers), the run of the study ``tuning``
(:mod:`dolb.studies.tuning`): ``dolb study tuning RECORD`` makes the tables and figures
of ``docs/guide/tuning.md`` from it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import types
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.stats
import tomli_w

from dolb.bench.records import machine, versions
from dolb.data.splits import split_rows
from dolb.execution.datasets import data_cache, open_datasets
from dolb.experiment.pipeline import load_pipeline
from dolb.losses import misclassified
from dolb.results import query
from dolb.results.history import read_records
from dolb.results.store import ResultStore
from dolb.seeding import seed_for
from dolb.sklearn import OnlineClassifier

DATASETS = {  # name: (importer, params; "path" relative to the data folder)
    "a9a": ("svmlight", {"path": "libsvm/a9a"}),
    "w8a": ("svmlight", {"path": "libsvm/w8a"}),
    "ijcnn1": ("svmlight", {"path": "libsvm/tick_ijcnn1.trn.bz2"}),
    "ccat_ecat": ("rcv1", {"path": "rcv1/rcv1v2_mulan_dedup.npz", "pair": ["CCAT", "ECAT"]}),
}
LEARNERS = {  # learner: (fixed params, searched parameter, low, high)
    "pa": ({"variant": "pa1"}, "C", 1e-4, 1e2),
    "sgd": ({"loss": "hinge"}, "eta0", 1e-4, 1e2),
    "adagrad": ({"loss": "hinge"}, "eta", 1e-4, 1e2),
    "ogd": ({}, "eta0", 1e-3, 1e3),
    "dual_averaging": ({}, "eta", 1e-4, 1e2),
}
METHODS = ("grid", "halving", "hyperband")
MIN_FRACTION, ETA, SPLITS, HOLDOUT, SEED = 0.02, 3, 3, 0.2, 7
MAX_FRACTION = 0.5
"""The last rung of the adaptive searches, dolb's and dask-ml's: half the tuning stream
(halving's rungs count back from it; at the whole stream, 27 trials kept 1/3 a rung learn
7/27 of the grid's examples)."""
DENSE_FEATURES = 1000
"""dask-ml gets dense blocks (its ``_partial_fit`` calls ``len(X)``, which scipy sparse
refuses): datasets with more features than this are left out of its searches."""


def pipeline(method: str, datasets: list[str], learners: list[str], steps: int, data: Path) -> dict:
    """The benchmark pipeline tuned by ``method`` (a mapping for :func:`dolb.run`)."""
    tuning = {"method": method, "eta": ETA, "holdout": HOLDOUT, "defaults": False, "seed": 0}
    if method != "grid":
        tuning |= {"min_budget": MIN_FRACTION, "max_budget": MAX_FRACTION}
    return {
        "pipeline": {"name": f"tuning_{method}", "seed": SEED},
        "datasets": {name: {"importer": DATASETS[name][0],
                            "params": {**DATASETS[name][1], "path": str(data / DATASETS[name][1]["path"])}}
                     for name in datasets},
        "experiments": {"zoo": {
            "dataset": datasets, "task": "binary", "checkpoints": {"log": 2}, "metrics": ["test_error"],
            "conversions": ["last"], "tuning": tuning,
            "split": {"scheme": "holdout", "count": SPLITS, "test_fraction": 0.2, "order": "random"},
            "learners": [{"learner": name, "params": LEARNERS[name][0],
                          "search": {LEARNERS[name][1]: {"low": LEARNERS[name][2], "high": LEARNERS[name][3],
                                                         "log": True, "steps": steps}}} for name in learners],
        }},
    }


def run_dolb(spec: dict, out: Path) -> dict:
    """Run one pipeline on 2 workers into ``out``; its wall time, phases, examples,
    decisions and the chosen configurations' test errors."""
    import dolb

    started = time.perf_counter()
    dolb.run(spec, out, workers=2)
    wall = time.perf_counter() - started
    store = ResultStore(str(out))
    record = read_records(store)[-1]
    decisions = pd.read_parquet(out / "tuning" / f"{spec['pipeline']['name']}.parquet")
    trials = decisions.groupby(["dataset", "learner", "split", "trial"])["budget"].max()
    found = query.rows(store, "experiment = 'zoo' AND metric = 'test_error'")
    found = found.reset_index(drop=True)
    final = found.loc[found.groupby(["dataset", "learner", "split"])["n_train"].idxmax()]
    searched = {name: f"param_{p}" for name, (_, p, _, _) in LEARNERS.items()}
    tests = [{"dataset": r.dataset, "learner": r.learner, "split": int(r.split), "test_error": float(r.value),
              "chosen": float(getattr(r, searched[r.learner]))} for r in final.itertuples()]
    return {"wall_seconds": wall, "record_seconds": record["seconds"], "timings": record["timings"],
            "tuning": record["tuning"], "learned": trials.groupby(level=[0, 1]).sum().reset_index().to_dict("records"),
            "test": tests, "decisions": decisions.drop(columns=["cell_id"]).to_dict("records")}


def split_data(spec: dict, out: Path, dataset: str, index: int) -> tuple:
    """``(X_train, y_train, X_test, y_test)`` of split ``index``, training rows in the
    order dolb's cells learn them (the rows :func:`dolb.evaluation.run_cell.cell_rows`
    gives an untuned cell)."""
    pipe = load_pipeline(out / "pipeline.toml", tomli_w.dumps(spec))
    train = open_datasets(pipe, data_cache(None))[dataset]["train"]
    rows, test = split_rows("holdout", index, train.n_rows, seed_for(pipe.seed, "split", dataset, index),
                            test_fraction=0.2, order="random")
    return (*train.read(rows), *train.read(test))


def dask_ml_compatible() -> None:
    """dask-ml 2025.1 calls ``dask.persist`` inside its own event loop, which dask 2025+
    refuses with an asynchronous client: give its module a ``dask`` whose ``persist``
    names the client's scheduler."""
    import dask
    import dask_ml.model_selection._incremental as incremental
    from distributed import get_client

    incremental.dask = types.SimpleNamespace(
        **{**vars(dask), "persist": lambda *c: dask.persist(*c, scheduler=get_client().get)})


def dolb_score(estimator, X, y) -> float:
    """Minus dolb's ``test_error`` of ``estimator`` on ``(X, y)``
    (:func:`dolb.losses.misclassified`: ``predict``'s rule, a zero score the first
    class, and a NaN score a mistake)."""
    return -float(np.mean(misclassified(estimator.decision_function(X), y)))


def even_blocks(n: int, size: int) -> tuple[int, ...]:
    """Sizes of ``round(n / size)`` blocks of ``n`` rows, none smaller than another by
    more than one (a last block of a few rows leaves dask-ml's split nothing to train on).

    >>> even_blocks(10, 3)
    (4, 3, 3)
    """
    count = max(1, round(n / size))
    return tuple(n // count + (i < n % count) for i in range(count))


def dask_search(kind: str, learner: str, X, y, steps: int, seed: int) -> dict:
    """One dask-ml search (``halving`` or ``hyperband``) over ``learner``'s space on the
    training stream ``(X, y)``; its choice, examples learned and wall time."""
    import dask.array as da
    from dask_ml.model_selection import HyperbandSearchCV, SuccessiveHalvingSearchCV

    fixed, name, low, high = LEARNERS[learner]
    stream = int(len(y) * (1 - HOLDOUT) * MAX_FRACTION)  # the budget of the last rung, as dolb's
    estimator = OnlineClassifier(learner, **fixed)
    if kind == "halving":
        block = max(1, int(round(MIN_FRACTION * stream / MAX_FRACTION)))  # of the whole tuning stream, as dolb's
        search = SuccessiveHalvingSearchCV(
            estimator, {name: list(np.geomspace(low, high, steps))}, n_initial_parameters=steps, n_initial_iter=1,
            aggressiveness=ETA, max_iter=stream // block, test_size=HOLDOUT, random_state=seed, scoring=dolb_score)
    else:
        most = ETA ** int(math.floor(math.log(MAX_FRACTION / MIN_FRACTION, ETA) + 1e-9))
        block = stream // most
        search = HyperbandSearchCV(estimator, {name: scipy.stats.loguniform(low, high)}, max_iter=most,
                                   aggressiveness=ETA, test_size=HOLDOUT, random_state=seed, scoring=dolb_score)
    rows = even_blocks(len(y), int(math.ceil(block / (1 - HOLDOUT))))  # dask-ml holds out HOLDOUT of each block
    started = time.perf_counter()
    search.fit(da.from_array(X, chunks=(rows, X.shape[1])), da.from_array(y, chunks=(rows,)), classes=[-1.0, 1.0])
    wall = time.perf_counter() - started
    return {"method": f"dask-ml {kind}", "chosen": float(search.best_params_[name]), "wall_seconds": wall,
            "examples": int(search.metadata_["partial_fit_calls"]) * block}


def run_dask_ml(spec: dict, out: Path, datasets: list[str], learners: list[str], steps: int) -> list[dict]:
    """Both dask-ml searches for every learner, dataset and split, then the test error
    of each choice trained on the split's whole training stream."""
    from distributed import Client, LocalCluster

    dask_ml_compatible()
    found = []
    with LocalCluster(n_workers=2, threads_per_worker=1) as cluster, Client(cluster):
        for dataset in datasets:
            for index in range(SPLITS):
                X, y, X_test, y_test = split_data(spec, out, dataset, index)
                if X.shape[1] > DENSE_FEATURES:
                    break
                X, X_test = (m.toarray() if hasattr(m, "toarray") else m for m in (X, X_test))
                for learner in learners:
                    for kind in ("halving", "hyperband"):
                        row = dask_search(kind, learner, X, y, steps, seed=index)
                        fixed, name = LEARNERS[learner][:2]
                        fitted = OnlineClassifier(learner, **fixed, **{name: row["chosen"]}).fit(X, y)
                        row.update(dataset=dataset, learner=learner, split=index,
                                   test_error=-dolb_score(fitted, X_test, y_test))
                        found.append(row)
                        print(f"{row['method']} {dataset} split {index} {learner}: {name} {row['chosen']:.3g}, "
                              f"test error {row['test_error']:.4f}, {row['wall_seconds']:.1f} s", flush=True)
    return found


def n_tests(spec: dict, out: Path, datasets: list[str]) -> dict[str, int]:
    """Test examples of a split, per dataset (the same in every split)."""
    pipe = load_pipeline(out / "pipeline.toml", tomli_w.dumps(spec))
    opened = open_datasets(pipe, data_cache(None))
    return {name: int(round(0.2 * opened[name]["train"].n_rows)) for name in datasets}


def interval(errors: list[float], n_test: int, seed: int) -> tuple[float, float]:
    """95 % percentile bootstrap interval of the pooled test error of splits with test
    errors ``errors`` and ``n_test`` examples each."""
    losses = np.concatenate([np.repeat([1.0, 0.0], [k, n_test - k]) for k in np.rint(np.multiply(errors, n_test))
                             .astype(int)])
    found = scipy.stats.bootstrap((losses,), np.mean, confidence_level=0.95, n_resamples=2000, batch=100,
                                  method="percentile", random_state=np.random.default_rng(seed))
    return float(found.confidence_interval.low), float(found.confidence_interval.high)


def summarise(runs: dict, peers: list[dict], tests: dict[str, int]) -> pd.DataFrame:
    """One row per learner and dataset: test errors, the grid's interval, examples."""
    errors = pd.concat([pd.DataFrame(runs[m]["test"]).assign(method=m) for m in METHODS]
                       + [pd.DataFrame(peers)[["dataset", "learner", "split", "test_error", "chosen", "method"]]
                          if peers else pd.DataFrame()])
    mean = errors.pivot_table(index=["dataset", "learner"], columns="method", values="test_error", aggfunc="mean")
    learned = {m: pd.DataFrame(runs[m]["learned"]).set_index(["dataset", "learner"])["budget"] for m in METHODS}
    rows = []
    for (dataset, learner), row in mean.iterrows():
        grid = errors.query("method == 'grid' and dataset == @dataset and learner == @learner")
        low, high = interval(list(grid.sort_values("split")["test_error"]), tests[dataset], seed=len(rows))
        found = {"dataset": dataset, "learner": learner, "ci_low": low, "ci_high": high,
                 **{m: row[m] for m in mean.columns}}
        for m in ("halving", "hyperband"):
            found[f"{m}_within"] = bool(low <= row[m] <= high)
            found[f"{m}_fraction"] = float(learned[m][(dataset, learner)] / learned["grid"][(dataset, learner)])
        rows.append(found)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder for the runs' result folders")
    parser.add_argument("--quick", action="store_true", help="a9a, pa and sgd, a 9-point grid")
    parser.add_argument("--repeats", type=int, default=1, help="times the three pipelines run (default 1)")
    parser.add_argument("--data", type=Path, default=Path("../shared/data"), help="the shared data folder")
    parser.add_argument("--record", type=Path, default=Path("benchmarks/tuning"), help="where the record goes")
    parser.add_argument("--no-dask-ml", action="store_true", help="leave dask-ml's searches out")
    args = parser.parse_args(argv)
    datasets = ["a9a"] if args.quick else list(DATASETS)
    learners = ["pa", "sgd"] if args.quick else list(LEARNERS)
    steps = 9 if args.quick else 27
    specs = {m: pipeline(m, datasets, learners, steps, args.data.resolve()) for m in METHODS}
    repeats = []
    for k in range(args.repeats):
        runs = {m: run_dolb(specs[m], args.out / f"repeat{k}" / m) for m in METHODS}
        peers = [] if args.no_dask_ml else run_dask_ml(specs["grid"], args.out / f"repeat{k}" / "grid", datasets,
                                                       learners, steps)
        repeats.append({"dolb": runs, "dask_ml": peers})
    first = repeats[0]
    tests = n_tests(specs["grid"], args.out / "repeat0" / "grid", datasets)
    summary = summarise(first["dolb"], first["dask_ml"], tests)
    when = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    record = {"machine": machine(), "versions": versions(),
              "command": " ".join(["python3 -m benchmarks.tuning.tuning_bench", *sys.argv[1:]]),
              "settings": {"datasets": datasets, "learners": {n: LEARNERS[n] for n in learners}, "steps": steps,
                           "min_fraction": MIN_FRACTION, "max_fraction": MAX_FRACTION, "eta": ETA, "splits": SPLITS,
                           "holdout": HOLDOUT, "seed": SEED,
                           "n_test": tests, "quick": args.quick},
              "summary": summary.to_dict("records"), "repeats": repeats}
    folder = args.record  # not a bench record (dolb.bench.records): the run of the study tuning
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{when}.json").write_text(json.dumps(record, indent=1, default=str))
    with pd.option_context("display.width", 250, "display.max_columns", 30, "display.precision", 4):
        print(summary.to_string(index=False))
    for k, repeat in enumerate(repeats):
        for m in METHODS:
            r = repeat["dolb"][m]
            print(f"repeat {k} {m}: wall {r['wall_seconds']:.1f} s, compute {r['timings'].get('compute', 0):.1f} s, "
                  f"cluster {r['timings'].get('cluster', 0):.1f} s, tuning {r['tuning']}")
        if repeat["dask_ml"]:
            peers = pd.DataFrame(repeat["dask_ml"]).groupby("method")[["wall_seconds", "examples"]].sum()
            print(f"repeat {k} dask-ml:\n{peers.to_string()}")
    print(f"record: {folder / f'{when}.json'}")


if __name__ == "__main__":
    main()
