"""The kernel warm-up of a sweep: the kernels its cells run, compiled (or loaded from
Numba's cache) by tasks on the cluster as soon as their dataset is open, before any cell
runs.

A run's first cells would otherwise each compile their learner's kernels when they
start, every worker the same ones. Here the client cuts the cells to compute into
*samples*: one cell per distinct learner, parameters, conversions and dataset, in groups
of the same learner, conversions and dataset (whose kernels are the same, or nearly),
and submits one task per group (:func:`warm_kernels`), so the groups compile on
different workers in parallel. A group is submitted as soon as its dataset is open:

- a dataset built on the cluster (generated or imported) as soon as its build ends,
  while other datasets still build (:func:`dataset_samples`, called by
  :func:`dolb.execution.datasets.open_datasets`);
- the others as soon as the cells are planned, or as soon as the cluster is up when it
  is still starting (:class:`KernelWarmUp`, held by
  :class:`~dolb.execution.sweep_client.SweepCluster`).

The client waits for the warm-up only before it submits the first cells. Each kernel
compiles once among workers that share a cache (:mod:`dolb.execution.compile_once`): a
worker whose first cell needs a kernel another is compiling waits for it and loads it.
Warming is best effort: a cell's error is the cell's to report when it runs.
"""

from __future__ import annotations

import contextlib
import logging

import numpy as np
from distributed import wait

from dolb.errors import ConfigError
from dolb.evaluation.cell import Cell
from dolb.evaluation.run_cell import warm_up
from dolb.execution.compile_once import share_compilation
from dolb.execution.payload import call, encode
from dolb.experiment.cells import CellGroup, expand_groups
from dolb.experiment.pipeline import Pipeline
from dolb.experiment.tuned_cells import tuning_plans

logger = logging.getLogger(__name__)

Samples = list[tuple[str, list[Cell]]]
"""Groups of cells to warm: (key naming the group's kernels, one cell per distinct
parameters)."""


def warm_up_samples(todo: list[tuple[CellGroup, np.ndarray]]) -> Samples:
    """One cell per distinct learner, parameters, conversions and dataset of ``todo``,
    in groups of the same learner, conversions and dataset, each with its key."""
    samples: dict[str, dict[str, Cell]] = {}
    for group, indices in todo:
        t = group.template
        kernels = repr((t.learner, t.conversions, group.train_path))
        samples.setdefault(kernels, {}).setdefault(repr(sorted(t.params.items())), group.cell(int(indices[0])))
    return [(key, list(cells.values())) for key, cells in samples.items()]


def dataset_samples(pipeline: Pipeline, name: str, parts: dict) -> Samples:
    """The samples of every cell of ``pipeline`` on dataset ``name`` (opened as
    ``parts``), a tuning's first rung included; none when the pipeline's checks of that
    dataset fail (the plan says so, once every dataset is open)."""
    from dolb.execution.tuning import first_wave  # tuning imports the compute machinery

    try:
        groups = expand_groups(pipeline, {name: parts}, only=name)
        trials = first_wave(tuning_plans(pipeline, {name: parts}, only=name))
    except ConfigError:
        return []
    return warm_up_samples([(group, np.zeros(1, dtype=np.int64)) for group in groups] + trials)


def warm_kernels(cells: list[Cell]) -> None:
    """Compile, or load, the kernels of ``cells`` (a task: one group of samples), each
    kernel once among the workers that share its cache."""
    share_compilation()
    for cell in cells:
        with contextlib.suppress(Exception):
            warm_up(cell)


class KernelWarmUp:
    """The warm-up tasks of a run, as the client submits them: each group once, however
    often it is given."""

    def __init__(self) -> None:
        self.keys: set[str] = set()
        self.pending: list[list[Cell]] = []
        self.futures: list = []

    def add(self, samples: Samples) -> None:
        """Queue the groups of ``samples`` not queued before."""
        for key, cells in samples:
            if key not in self.keys:
                self.keys.add(key)
                self.pending.append(cells)

    def submit(self, client) -> None:
        """Submit the queued groups, a task each (their cells as bytes)."""
        for cells in self.pending:
            self.futures.append(client.submit(call, encode((warm_kernels, (cells,))), pure=False))
            logger.debug("kernel warm-up submitted: %s", cells[0].spec.learner)
        self.pending = []

    def wait(self) -> None:
        """Wait for every submitted group (one that failed, or whose worker was lost,
        is left to the cells)."""
        wait(self.futures)
        logger.debug("kernel warm-up done: %d groups", len(self.keys))
        self.futures = []
