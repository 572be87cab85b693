"""``dolb plan``: how many cells a pipeline has, how many are stored, and how long the
rest should take."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from dolb.evaluation.run_cell import run_cell
from dolb.execution.sweep import plan_cells
from dolb.experiment.pipeline import load_pipeline
from dolb.results.store import ResultStore

SAMPLE_CELLS = 6
"""Cells timed in this process to estimate the rest."""
CLUSTER_START_SECONDS = 3.0
"""About what starting an embedded LocalCluster costs here."""


@dataclass
class Plan:
    """What ``dolb run`` would do with a pipeline and a result folder."""

    n_cells: int
    n_stored: int
    n_failed: int
    n_todo: int
    examples_todo: int
    seconds_per_example: float
    estimated_seconds: float
    workers: int

    def describe(self) -> str:
        """The plan as a few lines of text."""
        lines = [
            f"{self.n_cells} cells: {self.n_stored} stored, {self.n_failed} failed "
            f"(run again only with --retry-failed), {self.n_todo} to compute "
            f"({self.examples_todo:,} training examples)",
        ]
        if self.n_todo:
            lines.append(
                f"estimated {self.estimated_seconds:.0f} s on {self.workers} workers "
                f"({self.seconds_per_example * 1e6:.2f} µs per example measured on {SAMPLE_CELLS} sample cells, "
                "cluster start included)"
            )
        return "\n".join(lines)


def make_plan(pipeline_path: str | Path, out_dir: str | Path, workers: int | None = None) -> Plan:
    """Count the cells of a pipeline against a result folder and estimate the time the
    missing ones take, by running a few of them (evenly spread over the todo list) in
    this process. Generated or imported datasets are written under ``out_dir/data`` as
    ``dolb run`` would, and reused by it."""
    pipeline = load_pipeline(pipeline_path)
    out = Path(out_dir)
    cells = list({c.id: c for c in plan_cells(pipeline, out)}.values())
    store = ResultStore(out) if (out / "cells").is_dir() else None
    stored = {c.id for c in cells if store is not None and store.has(c.id)}
    failed = {c.id for c in cells if store is not None and store.has_failed(c.id)}
    todo = [c for c in cells if c.id not in stored and c.id not in failed]
    workers = workers or os.cpu_count() or 1
    examples = sum(c.n_train for c in todo)
    per_example, estimate = 0.0, 0.0
    if todo:
        sample = todo[:: max(1, len(todo) // SAMPLE_CELLS)][:SAMPLE_CELLS]
        run_cell(sample[0])  # compile and open once, outside the timing
        started = time.perf_counter()
        for cell in sample:
            run_cell(cell)
        per_example = (time.perf_counter() - started) / max(1, sum(c.n_train for c in sample))
        estimate = CLUSTER_START_SECONDS + per_example * examples / workers
    return Plan(len(cells), len(stored), len(failed), len(todo), examples, per_example, estimate, workers)
