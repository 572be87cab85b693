"""Run one cell: stream its training rows through its learner, test-then-train, and
record every metric at every checkpoint.

This is what a Dask task executes (for a batch of cells). A cell that fails returns a
result with ``status = "failed"`` and the error instead of raising, so one bad cell
never takes the rest of its batch down.
"""

from __future__ import annotations

import functools
import time
import traceback
from typing import Any

import numpy as np
import psutil

from dolb.data.readers import ChunkCache
from dolb.data.splits import split_rows
from dolb.data.store import Dataset, open_dataset
from dolb.data.stream import stream_blocks
from dolb.errors import DataError, DolbError
from dolb.evaluation.checkpoints import resolve_checkpoints
from dolb.evaluation.metrics import METRICS, ONLINE_LOSS
from dolb.experiment.cells import Cell
from dolb.experiment.seeding import seed_for
from dolb.learners import learner_class


class CellLimitError(DolbError):
    """A cell ran longer, or made its worker grow larger, than the pipeline allows."""


def _check_limits(cell: Cell, started: float, seen: int) -> None:
    """Raise CellLimitError when ``cell`` is past its time or memory limit (checked
    between blocks: a single block is never interrupted)."""
    if cell.timeout is not None and time.perf_counter() - started > cell.timeout:
        raise CellLimitError(f"cell exceeded its time limit of {cell.timeout:g} s after {seen} examples")
    if cell.memory is not None:
        rss = psutil.Process().memory_info().rss
        if rss > cell.memory:
            raise CellLimitError(
                f"cell exceeded its memory limit of {cell.memory / 2**20:.0f} MiB "
                f"(worker at {rss / 2**20:.0f} MiB) after {seen} examples"
            )


BLOCK_SIZE = 8192
WORKER_CHUNK_CACHE = ChunkCache(max_bytes=64 << 20)
"""Decoded chunks kept by a worker process across cells: many small cells on one
dataset (1000 sequences of 150 rows, say) then decode each chunk once."""


@functools.lru_cache(maxsize=16)
def _dataset(path: str) -> Dataset:
    """Datasets stay open for the life of a worker process (metadata only)."""
    return open_dataset(path)


@functools.lru_cache(maxsize=8)
def _test_set(path: str, fingerprint: str, rows: tuple[int, ...] | None, task: str):
    """The test set of a split, loaded once per worker process and kept while cells
    of the same split follow."""
    X, y = _dataset(path).read(slice(None) if rows is None else np.asarray(rows, dtype=np.int64))
    return X, _targets(y, task, path)


def _targets(y: np.ndarray, task: str, where: str) -> np.ndarray:
    if y.ndim != 1:
        raise DataError(f"{where}: a {task} task needs one target per row, the store has {y.shape[1]}")
    y = y.astype(np.float64)
    if task == "binary" and not np.all(np.abs(y) == 1.0):
        bad = int(np.flatnonzero(np.abs(y) != 1.0)[0])
        raise DataError(f"{where}: binary task needs labels -1/+1, row {bad} has {y[bad]!r}")
    return y


def run_cell(cell: Cell) -> dict[str, Any]:
    """Run ``cell``; return its result record (JSON-ready, deterministic)."""
    spec = cell.spec
    started = time.perf_counter()
    train = _dataset(cell.train_path)
    split = spec["split"]
    train_rows, test_rows = split_rows(
        split["scheme"],
        split["index"],
        train.n_rows,
        seed_for(spec["seed"], "split", spec["dataset"], split["index"]),
        length=split["length"],
        test_fraction=split["test_fraction"] or 0.2,
        order=split["order"],
    )
    checkpoints = resolve_checkpoints(spec["checkpoints"], len(train_rows))
    metrics = [METRICS[name] for name in spec["metrics"]]
    test_metrics = [m for m in metrics if m.source == "test"]
    if test_metrics:
        test_path = cell.train_path if test_rows is not None else cell.test_path
        X_test, y_test = _test_set(
            test_path,
            _dataset(test_path).fingerprint,
            None if test_rows is None else tuple(test_rows.tolist()),
            spec["task"],
        )
    conversions = tuple(spec["conversions"])
    learner = learner_class(spec["learner"])(
        train.n_features, n_train=len(train_rows), conversions=conversions, **spec["params"]
    )
    online_loss = ONLINE_LOSS[spec["task"]]
    # values[conversion][metric] -> one value per checkpoint; online metrics under "online"
    values: dict[str, dict[str, list[float]]] = {}
    seen, total, next_cp = 0, 0.0, 0

    def record(n: int, cumulative: float) -> None:
        for metric in metrics:
            if metric.source == "online":
                values.setdefault("online", {}).setdefault(metric.name, []).append(metric.compute(cumulative, n))
        if not test_metrics:
            return
        for conversion, hypothesis in learner.outputs().items():
            scores = hypothesis.predict(X_test)
            found = values.setdefault(conversion, {})
            for metric in test_metrics:
                found.setdefault(metric.name, []).append(metric.compute(scores, y_test))
            for key, value in hypothesis.info.items():
                found.setdefault(key, []).append(float(value))

    for X, y in stream_blocks(train, rows=train_rows, block_size=BLOCK_SIZE, cache=WORKER_CHUNK_CACHE):
        y = _targets(y, spec["task"], cell.train_path)
        start = 0
        while start < len(y):
            # With test metrics the block is cut at each checkpoint (the hypothesis must be
            # the one after exactly that many examples); online metrics need no cut.
            stop = len(y)
            if test_metrics and next_cp < len(checkpoints):
                stop = min(stop, int(checkpoints[next_cp]) - seen + start)
            losses = online_loss(learner.learn(X[start:stop], y[start:stop]), y[start:stop])
            running = total + np.cumsum(losses)
            end = seen + (stop - start)
            while next_cp < len(checkpoints) and checkpoints[next_cp] <= end:
                n = int(checkpoints[next_cp])
                record(n, float(running[n - seen - 1]))
                next_cp += 1
            total = float(running[-1]) if len(running) else total
            seen, start = end, stop
            _check_limits(cell, started, seen)
    return {
        "id": cell.id,
        "status": "ok",
        "spec": spec,
        "n_train": len(train_rows),
        "checkpoints": checkpoints.tolist(),
        "metrics": values,
    }


def run_cells(cells: list[Cell]) -> list[dict[str, Any]]:
    """Run a batch of cells; a cell that raises yields a ``failed`` record."""
    results = []
    for cell in cells:
        try:
            results.append(run_cell(cell))
        except Exception as exc:  # noqa: BLE001 - recorded, reported and retried by the sweep
            message = str(exc) if isinstance(exc, DolbError) else f"{type(exc).__name__}: {exc}"
            results.append(
                {
                    "id": cell.id,
                    "status": "failed",
                    "spec": cell.spec,
                    "error": message,
                    "traceback": "" if isinstance(exc, DolbError) else traceback.format_exc(),
                }
            )
    return results
