"""``dolb plan``: how many cells a pipeline has, how many are stored, and how long the
rest should take."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from dolb.errors import DataError
from dolb.evaluation.run_cell import run_cell
from dolb.execution.datasets import data_cache as cache_folder
from dolb.execution.datasets import open_datasets
from dolb.execution.sweep import cells_to_run
from dolb.execution.tuning import first_wave, planned
from dolb.experiment.cells import examples_of, expand_groups, group_ids
from dolb.experiment.pipeline import load_pipeline
from dolb.experiment.tuned_cells import tuning_plans
from dolb.results.history import find_record
from dolb.results.query import stored_cells
from dolb.results.store import ResultStore

SAMPLE_CELLS = 6
"""Cells timed in this process to estimate the rest."""
CLUSTER_START_SECONDS = 3.0
"""About what starting an embedded LocalCluster costs here, when no earlier run of the
result folder says how long its cluster start and reports took."""


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
    tuning: tuple[int, int, int, int] = (0, 0, 0, 0)
    """Trial cells, their training examples and rungs (:func:`dolb.execution.tuning.planned`),
    and the cells of the configurations the tuning will choose."""

    def describe(self) -> str:
        """The plan as a few lines of text."""
        lines = [
            f"{self.n_cells} cells: {self.n_stored} stored, {self.n_failed} failed "
            f"(run again only with --retry-failed), {self.n_todo} to compute "
            f"({self.examples_todo:,} training examples)",
        ]
        if self.tuning[0]:
            trials, examples, rungs, chosen = self.tuning
            lines.append(f"tuning: at most {trials} trial cells in {rungs} rungs ({examples:,} training examples; "
                         f"those stored are read, not run), then {chosen} cells of the chosen configurations")
        if self.n_todo or self.tuning[0]:
            lines.append(
                f"estimated {self.estimated_seconds:.0f} s on {self.workers} workers "
                f"({self.seconds_per_example * 1e6:.2f} µs per example measured on {SAMPLE_CELLS} sample cells, "
                "cluster start included)"
            )
        return "\n".join(lines)


def make_plan(
    pipeline_path: str | Path, out_dir: str | Path, workers: int | None = None, data_cache: str | Path | None = None,
    data: str | Path | None = None,
) -> Plan:
    """Count the cells of a pipeline against a result folder and estimate the time the
    missing ones take: their examples at the speed of a few of them (evenly spread over
    the todo list) run in this process, plus the fixed costs (cluster start, reports)
    of the folder's last run, or :data:`CLUSTER_START_SECONDS`. Generated or imported
    datasets are built into the data cache as ``dolb run`` would, and reused by it;
    ``data``: the data folder of a shipped pipeline (:mod:`dolb.experiment.shipped`)."""
    pipeline = load_pipeline(pipeline_path, data=data)
    datasets = open_datasets(pipeline, cache_folder(data_cache))
    groups = expand_groups(pipeline, datasets)
    plans = tuning_plans(pipeline, datasets)
    tuning = planned(plans)
    store = ResultStore(out_dir)
    stored, failed = stored_cells(store)
    todo = cells_to_run(groups, stored, failed, retry_failed=False)
    n_cells = sum(group.n_splits for group in groups)
    n_todo = sum(len(indices) for _, indices in todo)
    n_stored = sum(int(cell in stored) for group in groups for cell in group_ids(group))
    workers = workers or os.cpu_count() or 1
    examples = examples_of(todo)
    tuned_examples = tuning[1] + sum(plan.n_train * plan.n_splits for plan in plans)  # at most: some may be stored
    per_example, estimate = 0.0, 0.0
    sampled = todo or first_wave(plans)
    if sampled:
        cells = [group.cell(int(i)) for group, indices in sampled for i in indices[:SAMPLE_CELLS]]
        sample = cells[:: max(1, len(cells) // SAMPLE_CELLS)][:SAMPLE_CELLS]
        run_cell(sample[0])  # compile and open once, outside the timing
        started = time.perf_counter()
        for cell in sample:
            run_cell(cell)
        per_example = (time.perf_counter() - started) / max(1, sum(c.n_train for c in sample))
        estimate = _fixed_seconds(store) + per_example * (examples + tuned_examples) / workers
    n_failed = n_cells - n_stored - n_todo
    chosen = sum(plan.n_splits for plan in plans)  # their configurations are known once tuned
    return Plan(n_cells, n_stored, n_failed, n_todo, examples, per_example, estimate, workers, (*tuning, chosen))


def _fixed_seconds(store: ResultStore) -> float:
    """Cluster start and reports as the folder's last run measured them."""
    try:
        timings = find_record(store).get("timings", {})
    except DataError:
        return CLUSTER_START_SECONDS
    return timings.get("cluster", CLUSTER_START_SECONDS) + timings.get("aggregate", 0.0) + timings.get("reports", 0.0)
