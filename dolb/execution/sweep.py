"""The sweep: a pipeline's cells run on Dask, each result stored the moment it arrives.

Cells already stored are skipped (resume, caching); small cells travel in batches so
scheduling overhead stays small; a bounded number of batches is in flight at once, so
client memory does not grow with the size of the sweep; failed cells are recorded with
their error and retried only when asked.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from distributed import as_completed, performance_report
from tqdm import tqdm

from dolb.data.sources import resolve_dataset
from dolb.evaluation.run_cell import run_cells
from dolb.execution.cluster import connect
from dolb.execution.environment import check_workers, fingerprint
from dolb.experiment.cells import Cell, batch_cells, expand_cells
from dolb.experiment.pipeline import Pipeline, load_pipeline
from dolb.results.report import write_reports
from dolb.results.store import ResultStore, write_json_atomic, write_text_atomic
from dolb.results.tables import tidy_results

IN_FLIGHT_PER_WORKER = 4
"""Batches kept submitted per worker; more are sent as these complete."""


@dataclass
class SweepSummary:
    """What one ``dolb run`` did."""

    n_cells: int
    n_cached: int
    n_computed: int
    n_failed: int
    seconds: float
    report: str


def plan_cells(pipeline: Pipeline, out_dir: Path) -> list[Cell]:
    """Open (or generate) the pipeline's datasets and expand its cells."""
    used = {name for e in pipeline.experiments.values() for name in e.datasets}
    datasets = {
        name: resolve_dataset(spec, out_dir / "data", pipeline.seed)
        for name, spec in pipeline.datasets.items()
        if name in used
    }
    return expand_cells(pipeline, datasets)


def run_sweep(
    pipeline_path: str | Path,
    out_dir: str | Path,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    cluster_file: str | Path | None = None,
    retry_failed: bool = False,
    progress: bool = True,
    report_file: str | Path | None = None,
) -> SweepSummary:
    """Run every cell of a pipeline that is not stored yet, then write
    ``results.csv`` and the reports.

    Parameters
    ----------
    pipeline_path : path
        The pipeline file.
    out_dir : path
        The result folder (created if needed; reused to resume).
    workers, scheduler, cluster_file
        Where to run; see :func:`dolb.execution.cluster.connect`.
    retry_failed : bool
        Run again the cells whose last attempt failed (by default they stay failed).
    progress : bool
        Show a progress bar on standard error.
    report_file : path, optional
        Where to save Dask's HTML performance report of the computation.
    """
    start = time.perf_counter()
    pipeline = load_pipeline(pipeline_path)
    out = Path(out_dir)
    cells = plan_cells(pipeline, out)  # checks every dataset before anything is written
    store = ResultStore(out)
    unique = list({cell.id: cell for cell in cells}.values())
    todo = [
        c for c in unique
        if not store.has(c.id) and (retry_failed or not store.has_failed(c.id))
    ]
    n_failed = 0
    workers_seen = {}
    if todo:
        with connect(workers=workers, scheduler=scheduler, cluster_file=cluster_file) as client:
            workers_seen = check_workers(client)
            n_workers = max(1, len(workers_seen))
            batches = batch_cells(todo, pipeline.batch_examples, n_batches_min=4 * n_workers)
            recording = performance_report(filename=str(report_file)) if report_file else contextlib.nullcontext()
            with recording:
                n_failed = _compute(client, batches, store, n_workers, progress)
    write_text_atomic(out / "pipeline.toml", Path(pipeline_path).read_text(encoding="utf-8"))
    frame = tidy_results(cells, store)
    write_text_atomic(out / "results.csv", frame.to_csv(index=False))
    report = write_reports(pipeline, frame, out)
    seconds = time.perf_counter() - start
    write_json_atomic(
        out / "run.json",
        {
            "pipeline": pipeline.name,
            "cells": len(unique),
            "computed": len(todo),
            "failed": n_failed,
            "seconds": round(seconds, 3),
            "examples": sum(c.n_train for c in todo),
            "cell_ids": sorted(c.id for c in unique),
            "environment": fingerprint(),
            "workers": workers_seen,
        },
    )
    return SweepSummary(len(unique), len(unique) - len(todo), len(todo) - n_failed, n_failed, seconds, report)


def _compute(client, batches: list[list[Cell]], store: ResultStore, n_workers: int, progress: bool) -> int:
    """Submit batches (a bounded number at a time), store each result as it arrives;
    return the number of failed cells."""
    pending = iter(batches)
    cells_of = {}

    def submit_next(queue) -> None:
        batch = next(pending, None)
        if batch is not None:
            future = client.submit(run_cells, batch, pure=False, retries=2)
            cells_of[future.key] = batch
            queue.add(future)

    queue = as_completed()
    for _ in range(IN_FLIGHT_PER_WORKER * n_workers):
        submit_next(queue)
    n_failed = 0
    total = sum(len(b) for b in batches)
    with tqdm(total=total, unit="cell", disable=not progress, file=sys.stderr) as bar:
        for future in queue:
            batch = cells_of.pop(future.key)
            try:
                records = future.result()
            except Exception as exc:  # noqa: BLE001 - the task itself died (e.g. its worker)
                records = [
                    {"id": c.id, "status": "failed", "spec": c.spec, "error": f"{type(exc).__name__}: {exc}"}
                    for c in batch
                ]
            for record in records:
                store.write(record)
                n_failed += record["status"] != "ok"
            bar.update(len(batch))
            future.release()
            submit_next(queue)
    return n_failed


def failed_cells(out_dir: str | Path, ids: set[str] | None = None) -> list[dict]:
    """Failure records of the cells in a result folder (of those in ``ids``, if given)
    whose last attempt failed."""
    store = ResultStore(out_dir)
    records = []
    for path in sorted(store.cells.glob("*.failed.json")):
        cell_id = path.name[: -len(".failed.json")]
        if not store.has(cell_id) and (ids is None or cell_id in ids):
            records.append(json.loads(path.read_text(encoding="utf-8")))
    return records


__all__ = ["SweepSummary", "failed_cells", "plan_cells", "run_sweep"]
