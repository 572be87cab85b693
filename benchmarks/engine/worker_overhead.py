"""A worker's CPU per cell and per task beyond the learner's own work (bench
``worker-overhead``): the cost model's ``w_cell`` and ``w_task``
(:mod:`benchmarks.engine.cost_model`), measured in one process, without a cluster.

Cells of ``rows`` training rows each (one split of the ``sequences`` scheme a cell, a
test part of ``rows`` rows) run as a worker runs them: batches of ``size`` cells, each
the bytes a task carries, through :func:`dolb.execution.payload.run_batch` (reading,
splits, learner, checkpoints and metrics, result rows, the task's Parquet part), its
:class:`~dolb.execution.tasks.TaskOutcome` pickled as Dask sends it back. The CPU
seconds of the whole process (every thread) over several batch sizes give, by least
squares (:func:`~benchmarks.engine.cost_model.per_cell_and_task`), the CPU per cell and per
task. Beside them, the *bare loop*: the same learner on the same rows already in
memory, constructed, learning up to each checkpoint and predicting the test part there
with each conversion's output (what the cell needs of the learner, nothing else). A
cell's overhead is the engine's CPU per cell less the bare loop's.

How it measures and what it found: ``docs/design/benchmarks.md`` (worker-overhead).
"""

from __future__ import annotations

import cProfile
import os
import pickle
import pstats
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.engine.cost_model import per_cell_and_task
from benchmarks.engine.sleep import register_sleep
from dolb.bench.records import derived, measurement, new_record, write_record
from dolb.errors import ConfigError
from dolb.execution import payload

BENCH = "worker-overhead"
LEARNERS = {
    "sleep": """\
[datasets.rows]
generator = "irma"
params = {{ n_sequences = {cells}, length = {rows}, n_test = {rows} }}

[experiments.overhead]
dataset = "rows"
task = "regression"
split = {{ scheme = "sequences", count = {cells} }}
checkpoints = [{rows}]
metrics = ["online_loss"]
learners = [{{ learner = "sleep", params = {{ seconds = "0", examples = {rows} }} }}]
""",
    "perceptron": """\
[datasets.rows]
generator = "sparse_text"
params = {{ n_rows = {total}, n_features = 1000, nnz_per_row = 20, n_test = {rows} }}

[experiments.overhead]
dataset = "rows"
task = "binary"
split = {{ scheme = "sequences", count = {cells}, length = {rows} }}
checkpoints = {{ log = 4 }}
metrics = ["test_error", "online_loss"]
conversions = ["last", "average"]
learners = [{{ learner = "perceptron" }}]
""",
}
"""Each learner's dataset and experiment (see the module's docstring)."""
SIZES = (1, 16, 256)
"""Cells a task, by default: the fit over them separates per cell from per task."""
PARTS = {
    "cell spec": ("dolb/experiment/cells.py", "cell"),
    "splits": ("dolb/evaluation/run_cell.py", "cell_rows"),
    "learner construction": ("dolb/evaluation/run_cell.py", "_start"),
    "reading": ("dolb/evaluation/run_cell.py", "_blocks"),
    "learning": ("dolb/learners/base.py", "learn_running"),
    "checkpoints and metrics": ("dolb/evaluation/run_cell.py", "record"),
    "test set": ("dolb/evaluation/run_cell.py", "__init__"),
    "rows": ("dolb/results/cell_rows.py", "add_ok"),
    "rows to Arrow": ("dolb/results/cell_rows.py", "table"),
    "Parquet part": ("dolb/results/store.py", "write_part"),
    "outcome pickled": ("benchmarks/engine/worker_overhead.py", "_pickled"),
}
"""The parts a profile is split into: name -> (file, function) whose cumulative time
is the part's (the rest of the task's time is *other*)."""


def pipeline_text(learner: str, cells: int, rows: int) -> str:
    """The pipeline of ``cells`` cells of ``learner`` of ``rows`` training rows each."""
    head = f'[pipeline]\nname = "worker-overhead-{learner}"\nseed = 1\n\n'
    return head + LEARNERS[learner].format(cells=cells, rows=rows, total=cells * rows)


def prepare(learner: str, cells: int, rows: int, folder: Path):
    """The cell groups of the pipeline (its dataset built in ``folder``) and the
    destination a task carries (parts written in ``folder/out``); the ``sleep`` learner
    registered in this process first, if it is the one."""
    from dolb.execution.sweep import plan_groups
    from dolb.execution.tasks import Destination
    from dolb.experiment.cells import parameter_types
    from dolb.experiment.pipeline import load_pipeline
    from dolb.results.store import result_schema

    if learner == "sleep":
        register_sleep()
    path = folder / f"{learner}.toml"
    path.write_text(pipeline_text(learner, cells, rows))
    groups = plan_groups(load_pipeline(path), folder / "data-cache")
    destination = Destination(result_schema(parameter_types(groups)), "bench", str(folder / "out"))
    return groups, payload.encode(destination)


def batches(groups, size: int) -> list[bytes]:
    """The cells of ``groups`` in tasks of ``size`` cells, as the bytes a task carries."""
    found = []
    for group in groups:
        for start in range(0, group.n_splits, size):
            found.append(payload.encode([(group, np.arange(start, min(start + size, group.n_splits)))]))
    return found


def _pickled(outcome) -> bytes:
    """A task's outcome as Dask sends it back."""
    return pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)


def run_tasks(tasks: list[bytes], destination: bytes) -> None:
    """Run each task as a worker does, its outcome pickled."""
    for task in tasks:
        _pickled(payload.run_batch(task, destination))


def engine_seconds(tasks: list[bytes], destination: bytes) -> float:
    """CPU seconds of this process (every thread) to run ``tasks``."""
    started = time.process_time()
    run_tasks(tasks, destination)
    return time.process_time() - started


def bare_seconds(groups) -> float:
    """CPU seconds of the bare loop over every cell of ``groups``: its learner made,
    learning its rows (read beforehand) up to each checkpoint, each conversion's output
    predicting the test part there when the cell has test metrics."""
    from dolb.data.store import open_dataset
    from dolb.evaluation.checkpoints import resolve_checkpoints
    from dolb.evaluation.metrics import METRICS
    from dolb.evaluation.run_cell import cell_rows
    from dolb.learners import learner_class

    work = []
    for group in groups:
        for index in range(group.n_splits):
            cell = group.cell(index)
            train = open_dataset(cell.train_path)
            rows, _, test_path = cell_rows(cell, train)
            X, y = train.read(rows)
            X_test = open_dataset(test_path).read(slice(None))[0] if test_path else None
            tested = any(METRICS[name].source == "test" for name in cell.spec.metrics)
            ends = resolve_checkpoints(cell.spec.checkpoints, len(rows)).tolist()
            work.append((cell.spec, train.n_features, X, y.astype(np.float64), X_test if tested else None, ends))
    started = time.process_time()
    for spec, n_features, X, y, X_test, ends in work:
        learner = learner_class(spec.learner)(n_features, n_train=len(y), conversions=spec.conversions,
                                              checked=True, **spec.params)
        for low, high in zip([0, *ends[:-1]], ends):
            learner.learn_running(X[low:high], y[low:high])
            if X_test is not None:
                for hypothesis in learner.outputs().values():
                    hypothesis.predict(X_test)
    return time.process_time() - started


def attribution(tasks: list[bytes], destination: bytes) -> dict[str, float]:
    """The share of each of :data:`PARTS` in a CPU-time profile of running ``tasks``
    (``other``: the rest)."""
    profile = cProfile.Profile(time.process_time)
    profile.runcall(run_tasks, tasks, destination)
    stats = pstats.Stats(profile).stats
    total = max(sum(row[2] for row in stats.values()), 1e-12)  # every function's own time
    shares = {}
    for part, (file, function) in PARTS.items():
        shares[part] = sum(row[3] for (path, _, name), row in stats.items()
                           if name == function and path.endswith(file)) / total
    shares["other"] = max(0.0, 1.0 - sum(shares.values()))
    return shares


def dask_seconds(tasks_by_size: dict[int, list[bytes]], destination: bytes) -> dict[int, float]:
    """For each size, the CPU seconds one Dask worker process (one thread) spends on its
    tasks, less its idle rate over the time they took."""
    import dask
    import psutil
    from distributed import Client, LocalCluster

    from dolb.execution.quiet import QUIET

    found = {}
    with dask.config.set(QUIET), LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                              dashboard_address=":0") as cluster, Client(cluster) as client:
        client.run(register_sleep)
        worker = psutil.Process(next(iter(client.run(os.getpid).values())))

        def cpu() -> float:
            times = worker.cpu_times()
            return times.user + times.system

        client.submit(payload.run_batch, tasks_by_size[min(tasks_by_size)][0], destination, pure=False).result()
        before, started = cpu(), time.perf_counter()
        time.sleep(2.0)
        idle = (cpu() - before) / (time.perf_counter() - started)
        for size, tasks in tasks_by_size.items():
            before, started = cpu(), time.perf_counter()
            client.gather(client.map(payload.run_batch, tasks, destination=destination, pure=False))
            found[size] = cpu() - before - idle * (time.perf_counter() - started)
    return found


def worker_overhead(learner: str = "sleep", cells: int = 256, rows: int = 64, sizes=SIZES, repeats: int = 3,
                    dask: bool = False, folder: str | Path | None = None) -> dict:
    """Measure a worker's CPU per cell and per task for ``cells`` cells of ``learner``
    of ``rows`` rows each, in tasks of each of ``sizes`` cells, ``repeats`` times
    round-robin, beside the bare loop (see the module's docstring).

    Returns
    -------
    dict
        ``engine`` (size -> CPU seconds of each repeat), ``bare`` (CPU seconds of
        each repeat), ``per_cell``, ``per_task`` (the fit, seconds), ``bare_cell``,
        ``overhead_cell`` (per cell less the bare loop's), ``shares`` (the profile's,
        :func:`attribution`), and with ``dask`` ``dask`` (size -> worker CPU seconds),
        ``dask_cell`` and ``dask_task``; with the settings.
    """
    with tempfile.TemporaryDirectory(dir=folder) as work:
        groups, destination = prepare(learner, cells, rows, Path(work))
        tasks = {size: batches(groups, size) for size in sizes}
        run_tasks(batches(groups, 2)[:1], destination)  # kernels compiled or loaded, datasets opened
        bare_seconds(groups)
        engine = {size: [] for size in sizes}
        bare = []
        for _ in range(repeats):
            for size in sizes:
                engine[size].append(engine_seconds(tasks[size], destination))
            bare.append(bare_seconds(groups))
        shares = attribution(tasks[max(sizes)], destination)
        found = {"learner": learner, "cells": cells, "rows": rows, "sizes": list(sizes), "repeats": repeats,
                 "engine": engine, "bare": bare, "shares": shares}
        medians = [float(np.median(engine[size])) for size in sizes]
        counts = [len(tasks[size]) for size in sizes]
        found["per_cell"], found["per_task"] = per_cell_and_task(medians, [cells] * len(sizes), counts)
        found["bare_cell"] = float(np.median(bare)) / cells
        found["overhead_cell"] = found["per_cell"] - found["bare_cell"]
        if dask:
            found["dask"] = dask_seconds(tasks, destination)
            found["dask_cell"], found["dask_task"] = per_cell_and_task(
                [found["dask"][size] for size in sizes], [cells] * len(sizes), counts)
    return found


def as_text(found: dict) -> str:
    """What the bench prints."""
    us = 1e6
    lines = [f"{found['cells']} cells of {found['learner']}, {found['rows']} rows each, in tasks of "
             f"{', '.join(map(str, found['sizes']))} cells ({found['repeats']} repeats, CPU of the process):"]
    for size, seconds in found["engine"].items():
        lines.append(f"  tasks of {size:>4} cells: {np.median(seconds) / found['cells'] * us:8.0f} µs a cell")
    lines += [f"  fit: {found['per_cell'] * us:.0f} µs a cell + {found['per_task'] * us:.0f} µs a task",
              f"  bare loop: {found['bare_cell'] * us:.0f} µs a cell; beyond learning: "
              f"{found['overhead_cell'] * us:.0f} µs a cell",
              "  profile of the largest tasks: " + ", ".join(
                  f"{part} {share:.0%}" for part, share in sorted(found["shares"].items(), key=lambda p: -p[1])
                  if share >= 0.005)]
    if "dask" in found:
        lines.append(f"  through a Dask worker process: {found['dask_cell'] * us:.0f} µs a cell + "
                     f"{found['dask_task'] * us:.0f} µs a task")
    return "\n".join(lines)


def as_record(runs: list[dict], command: str | None = None) -> dict:
    """The runs of :func:`worker_overhead` (one a learner, say) as a record of bench
    :data:`BENCH`: every repeat in seconds a cell; the fit, the bare loop and the
    overhead a cell, the profile's shares (derived)."""
    figures, derived_figures = [], []
    for found in runs:
        where = {"learner": found["learner"], "rows": found["rows"], "cells": found["cells"]}
        for size, seconds in found["engine"].items():
            figures.append(measurement(where | {"figure": "engine", "cells a task": size}, "CPU s/cell",
                                       [s / found["cells"] for s in seconds]))
        figures.append(measurement(where | {"figure": "bare loop"}, "CPU s/cell",
                                   [s / found["cells"] for s in found["bare"]]))
        for key in ("per_cell", "per_task", "bare_cell", "overhead_cell", "dask_cell", "dask_task"):
            if key in found:
                derived_figures.append(derived(where | {"figure": key}, "CPU s", found[key]))
        for size, seconds in found.get("dask", {}).items():
            figures.append(measurement(where | {"figure": "Dask worker", "cells a task": size}, "CPU s/cell",
                                       [seconds / found["cells"]]))
        derived_figures += [derived(where | {"figure": "share", "part": part}, "ratio", share)
                            for part, share in found["shares"].items()]
    return new_record(BENCH, figures, derived_figures, command)


def main(args) -> int:
    """``python -m benchmarks worker-overhead``: the table of each learner, and a record in
    ``args.record``. ConfigError: an unknown learner or a size that is not a whole number."""
    learners = args.learners.split(",") if args.learners else list(LEARNERS)
    unknown = sorted(set(learners) - set(LEARNERS))
    if unknown:
        raise ConfigError(f"--learners: unknown {unknown[0]!r} (known: {', '.join(LEARNERS)})")
    try:
        sizes = [int(size) for size in args.sizes.split(",")] if args.sizes else list(SIZES)
    except ValueError:
        raise ConfigError(f"--sizes {args.sizes}: not a comma-separated list of whole numbers") from None
    if min(sizes) < 1:
        raise ConfigError(f"--sizes {args.sizes}: a task holds at least one cell")
    runs = []
    for learner in learners:
        runs.append(worker_overhead(learner, args.cells, args.rows, sizes, args.repeats, args.dask))
        print(as_text(runs[-1]), flush=True)
    if args.record:
        print(f"record: {write_record(args.record, as_record(runs, command=args.command_line))}")
    return 0
