"""Expand a pipeline into cells: the unit of scheduling, caching and reporting.

A cell is one learner configuration (with its complexity level) on one experiment's
dataset, task and split. Its identity is a hash of its canonical spec, the fingerprints
of the data it reads and the package version: a result stored under that identity is
never computed again.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import dolb
from dolb.data.splits import sequence_length
from dolb.data.store import Dataset
from dolb.errors import ConfigError
from dolb.experiment.pipeline import ExperimentSpec, Pipeline
from dolb.learners import learner_class


@dataclass(frozen=True)
class Cell:
    """Everything a worker needs to run one cell, and nothing machine-specific in its
    identity (paths and resource limits are carried beside the spec, not inside it)."""

    id: str
    experiment: str
    spec: dict[str, Any]
    train_path: str
    test_path: str | None
    n_train: int
    timeout: float | None = None
    memory: int | None = None

    @property
    def coordinates(self) -> dict[str, Any]:
        """The columns that place this cell in a results table."""
        s = self.spec
        return {
            "experiment": self.experiment,
            "dataset": s["dataset"],
            "task": s["task"],
            "split": s["split"]["index"],
            "learner": s["learner"],
            "params": format_params(s["params"], s["complexity_param"]),
            "complexity": s["complexity"],
        }


def format_params(params: dict[str, Any], skip: str | None = None) -> str:
    """``"a=1, b=x"``: a configuration's parameters as one readable, sortable string."""
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items()) if k != skip)


def cell_id(spec: dict[str, Any]) -> str:
    """The identity of a canonical cell spec (which holds data fingerprints and the
    package version)."""
    text = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def n_train_rows(experiment: ExperimentSpec, train: Dataset) -> int:
    split = experiment.split
    if split.scheme == "sequences":
        return sequence_length(train.n_rows, split.count, split.length)
    if split.scheme == "holdout":
        return train.n_rows - int(round(split.test_fraction * train.n_rows))
    return train.n_rows


def _check_checkpoints(pipeline: Pipeline, experiment: ExperimentSpec, n_train: int) -> None:
    sizes = experiment.checkpoints
    if isinstance(sizes, tuple) and sizes and sizes[0] != "log" and sizes[-1] > n_train:
        raise ConfigError(
            f"{pipeline.path}: experiments.{experiment.name}.checkpoints: training size "
            f"{sizes[-1]} exceeds the {n_train} training examples of a split"
        )


def expand_cells(pipeline: Pipeline, datasets: dict[str, dict[str, Dataset]]) -> list[Cell]:
    """All cells of ``pipeline`` in a fixed order (experiment, learner, configuration,
    complexity, split), given each dataset's opened parts."""
    cells = []
    for experiment in pipeline.experiments.values():
        for dataset in experiment.datasets:
            cells.extend(_experiment_cells(pipeline, experiment, dataset, datasets[dataset]))
    return cells


def _experiment_cells(
    pipeline: Pipeline, experiment: ExperimentSpec, dataset: str, parts: dict[str, Dataset]
) -> list[Cell]:
    """The cells of one experiment on one of its datasets."""
    train, test = parts["train"], parts.get("test")
    n_train = n_train_rows(experiment, train)
    _check_checkpoints(pipeline, experiment, n_train)
    split = experiment.split
    cells = []
    for learner in experiment.learners:
        cls = learner_class(learner.learner)
        for combo in learner.grid:
            for level in learner.complexity:
                values = dict(combo)
                if level is not None:
                    values[cls.complexity_param] = level
                params = cls.check_params(values)
                for index in range(split.count):
                    spec = {
                        "dataset": dataset,
                        "fingerprints": {
                            "train": train.fingerprint,
                            "test": None if test is None else test.fingerprint,
                        },
                        "task": experiment.task,
                        "split": {
                            "scheme": split.scheme,
                            "index": index,
                            "length": n_train if split.scheme == "sequences" else None,
                            "test_fraction": split.test_fraction if split.scheme == "holdout" else None,
                            "order": split.order,
                        },
                        "learner": learner.learner,
                        "params": params,
                        "complexity": level,
                        "complexity_param": cls.complexity_param,
                        "checkpoints": list(experiment.checkpoints)
                        if isinstance(experiment.checkpoints, tuple)
                        else experiment.checkpoints,
                        "metrics": list(experiment.metrics),
                        "conversions": list(experiment.conversions),
                        "seed": pipeline.seed,
                        "dolb": dolb.__version__,
                    }
                    cells.append(
                        Cell(
                            id=cell_id(spec),
                            experiment=experiment.name,
                            spec=spec,
                            train_path=train.path,
                            test_path=None if test is None else test.path,
                            n_train=n_train,
                            timeout=pipeline.cell_timeout,
                            memory=pipeline.cell_memory,
                        )
                    )
    return cells


def batch_cells(cells: list[Cell], max_examples: int, n_batches_min: int = 1) -> list[list[Cell]]:
    """Group consecutive cells into batches of at most ``max_examples`` training
    examples (at least one cell each), so that small cells share one Dask task; the
    limit shrinks so that there are at least ``n_batches_min`` batches when possible.

    Examples
    --------
    >>> from types import SimpleNamespace as C
    >>> [len(b) for b in batch_cells([C(n_train=150)] * 10, max_examples=600)]
    [4, 4, 2]
    """
    total = sum(c.n_train for c in cells)
    limit = max(1, min(max_examples, -(-total // max(1, n_batches_min))))
    batches, current, size = [], [], 0
    for cell in cells:
        if current and size + cell.n_train > limit:
            batches.append(current)
            current, size = [], 0
        current.append(cell)
        size += cell.n_train
    if current:
        batches.append(current)
    return batches
