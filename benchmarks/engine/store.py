"""``python -m benchmarks store``: the readers of a result folder of a million cells, timed before
and after compaction.

Usage::

    python -m benchmarks store                                  # 10^6 cells in 2,000 parts
    python -m benchmarks store --cells 20000 --parts 200        # a quick look
    python -m benchmarks store --record benchmarks/records      # a record for the performance pages

The folder is written directly through the store's API (:class:`dolb.results.store.
ResultStore`: a part per task, as a sweep's workers write them, committed by manifests of
50 parts, as its client commits them), not by running cells: ``--cells`` cells of six
rows each (two metrics at three training sizes) in ``--parts`` parts, with a run record
whose pipeline draws a table of them. Then, each in a process of its own, ``dolb status``
on the folder as the run left it, ``dolb compact``, and ``dolb status``, ``dolb report``
and ``dolb.read_results`` (tidy columns) on the compacted folder: wall and CPU seconds
of each (CPU: of every thread, DuckDB's included; on a busy machine the wall time is
mostly waiting), and the parts before and after.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

from benchmarks import ROOT
from dolb.bench.records import measurement, new_record, write_record
from dolb.execution.environment import load_average
from dolb.experiment.cells import cell_id
from dolb.results.store import ResultStore, new_attempt, result_schema

PIPELINE = """
[pipeline]
name = "store-bench"
seed = 1

[datasets.irma]
generator = "irma"
params = {{ n_sequences = {splits}, length = 60, n_test = 200 }}

[experiments.table]
dataset = "irma"
task = "regression"
split = {{ scheme = "sequences", count = {splits} }}
checkpoints = [10, 30, 60]
metrics = ["test_mse", "online_loss"]
learners = [
  {{ learner = "irma", complexity = [1, 2, 3, 4, 5], params = {{ basis = "legendre", domain_high = 3.0 }} }},
  {{ learner = "batch_ls", complexity = [1, 2, 3, 4, 5], params = {{ domain_high = 3.0 }} }},
]

[[reports]]
kind = "table"
experiment = "table"
metric = "test_mse"
at = [10, 60]
stats = ["mean", "var"]
"""
CONFIGS = [(learner, order) for learner in ("irma", "batch_ls") for order in range(1, 6)]
"""The pipeline's configurations: its cell groups."""
ROWS = [(n_train, metric) for n_train in (10, 30, 60) for metric in ("test_mse", "online_loss")]
"""The rows of a cell."""
RUN_ID = "20260101T000000Z-bench0"
PER_MANIFEST = 50


def build(folder: Path, n_cells: int, n_parts: int) -> None:
    """Write the folder: ``n_cells`` cells in ``n_parts`` parts, committed, with a run record."""
    splits = n_cells // len(CONFIGS)
    keys = [f"{learner}-{order}".ljust(64, "0") for learner, order in CONFIGS]
    store = ResultStore(folder)
    schema = result_schema({"basis": str, "domain_high": float, "order": int})
    store.extend_schema(schema)
    cells = [(group, split) for split in range(splits) for group in range(len(CONFIGS))]
    rng = np.random.default_rng(0)
    uncommitted = {}
    for chunk in np.array_split(np.arange(len(cells)), n_parts):
        uncommitted |= _write_part(store, schema, [cells[i] for i in chunk], keys, rng)
        if len(uncommitted) == PER_MANIFEST:
            store.commit(uncommitted, RUN_ID)
            uncommitted = {}
    store.commit(uncommitted, RUN_ID)
    record = {"run_id": RUN_ID, "pipeline": "store-bench", "pipeline_path": str(folder / "pipeline.toml"),
              "pipeline_text": PIPELINE.format(splits=splits), "started": "2026-01-01T00:00:00Z",
              "ended": "2026-01-01T01:00:00Z", "seconds": 3600.0, "options": {}, "client": {}, "workers": {},
              "groups": [[key, splits] for key in keys],
              "counts": {"cells": len(cells), "cached": 0, "computed": len(cells), "failed": 0}}
    store.write_text(f"runs/{RUN_ID}.json", json.dumps(record))


def _write_part(store: ResultStore, schema: pa.Schema, cells: list[tuple[int, int]], keys: list[str],
                rng: np.random.Generator) -> dict[str, list[str]]:
    """One part of ``cells`` ((group, split) each); returns it with its cells' ids."""
    n, k = len(cells), len(ROWS)
    ids = [cell_id(keys[group], split) for group, split in cells]
    learner = np.array([CONFIGS[group][0] for group, _ in cells])
    order = np.array([CONFIGS[group][1] for group, _ in cells])
    per_row = {
        "cell_id": np.repeat(ids, k), "status": ["ok"] * n * k, "experiment": ["table"] * n * k,
        "dataset": ["irma"] * n * k, "task": ["regression"] * n * k, "learner": np.repeat(learner, k),
        "split": np.repeat([split for _, split in cells], k), "seed": np.zeros(n * k, dtype=np.int64),
        "params": np.repeat(np.where(learner == "irma", "basis=legendre", "basis=monomial"), k),
        "complexity": np.repeat(order.astype(str), k), "param_order": np.repeat(order, k),
        "param_basis": np.repeat(np.where(learner == "irma", "legendre", "monomial"), k),
        "param_domain_high": np.full(n * k, 3.0), "conversion": ["last"] * n * k,
        "n_train": np.tile([n_train for n_train, _ in ROWS], n), "metric": np.tile([m for _, m in ROWS], n),
        "value": rng.random(n * k), "cell_seconds": np.repeat(rng.random(n), k),
        "cell_cpu_seconds": np.repeat(rng.random(n), k), "cell_peak_rss": np.full(n * k, 2**27),
        "resumed_from": np.zeros(n * k, dtype=np.int64), "worker": ["tcp://127.0.0.1:1"] * n * k,
        "run_id": [RUN_ID] * n * k, "attempt": [new_attempt()] * n * k,
    }
    table = pa.table({f.name: per_row.get(f.name, pa.nulls(n * k, f.type)) for f in schema}, schema=schema)
    return {store.write_part(table): ids}


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user and system, every thread) of ``python3 -m dolb ARGV``
    (or of ``python3 -c ARGV[1]`` when ARGV[0] is ``-c``) in a process of its own;
    raises when it fails."""
    command = [sys.executable, *argv] if argv[0] == "-c" else [sys.executable, "-m", "dolb", *argv]
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(ROOT)}
    cpu, started = _children_cpu(), time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL, env=environment)
    return time.perf_counter() - started, _children_cpu() - cpu


def _children_cpu() -> float:
    """CPU seconds of this process's ended children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(args) -> int:
    """``python -m benchmarks store``: the timings of the module docstring, printed; with
    ``args.record`` a record of them and of the parts before and after compaction."""
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="dolb-store-bench-"))
    folder = work / "out"
    shutil.rmtree(folder, ignore_errors=True)
    started = time.perf_counter()
    build(folder, args.cells, args.parts)
    built = time.perf_counter() - started
    store = ResultStore(folder)
    before = len(store.parts())
    read = f"import dolb; dolb.read_results({str(folder)!r}, tidy=True)"
    seconds = {"status (as the run left it)": timed(["status", str(folder)]),
               "compact": timed(["compact", str(folder)])}
    after = len(store.parts())
    seconds |= {"status": timed(["status", str(folder)]), "report": timed(["report", str(folder)]),
                "read_results": timed(["-c", read])}
    print(f"{args.cells:,} cells: {before} parts ({built:.1f} s to write), {after} after compaction; "
          f"load average {load_average()}")
    for step, (wall, cpu) in seconds.items():
        print(f"  {step}: {wall:.1f} s ({cpu:.1f} s of CPU)")
    if args.record:
        labels = {"cells": str(args.cells), "parts written": str(args.parts)}
        found = [measurement(labels | {"step": step, "figure": figure}, "s", [value])
                 for step, values in seconds.items() for figure, value in zip(("wall", "cpu"), values)]
        found += [measurement(labels | {"step": "parts before compaction"}, "parts", [before]),
                  measurement(labels | {"step": "parts after compaction"}, "parts", [after])]
        print(f"record: {write_record(args.record, new_record('store', found, command=args.command_line))}")
    if not args.work:
        shutil.rmtree(work)
    return 0
