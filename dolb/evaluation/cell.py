"""A cell as a worker receives it: what :func:`dolb.evaluation.run_cell.run_cell` runs.

Cells are made from a pipeline by :mod:`dolb.experiment.cells`. A cell's spec is a
:class:`CellSpec`; its identity is a hash of :meth:`CellSpec.canonical`, the spec as a
JSON-ready dict (see :func:`dolb.experiment.cells.spec_hash`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dolb.evaluation.metrics import metric_versions


@dataclass(frozen=True)
class CellSplit:
    """How a cell's rows are drawn from its dataset (see :func:`dolb.data.splits.split_rows`)."""

    scheme: str
    length: int | None
    """Training examples of a split of the ``sequences`` scheme (None otherwise)."""
    test_fraction: float | None
    """The part held out by the ``holdout`` scheme (None otherwise)."""
    order: str
    window: int | None = None
    """The window of the ``windowed`` order (None otherwise)."""
    index: int | None = None
    """Which split (None in a group's template)."""

    def canonical(self) -> dict[str, Any]:
        """As a JSON-ready dict; ``window`` and ``index`` only when set (so the ids of
        cells of other orders are what they always were)."""
        found = {"scheme": self.scheme, "length": self.length, "test_fraction": self.test_fraction,
                 "order": self.order}
        return found | _set(window=self.window, index=self.index)


@dataclass(frozen=True)
class CellLabels:
    """Which labels a semi-supervised cell's stream reveals: a fraction ``rate`` of its
    rows, the ``first`` rows all (see :func:`dolb.data.splits.labelled_rows`)."""

    rate: float
    first: int

    def canonical(self) -> dict[str, Any]:
        return {"rate": self.rate, "first": self.first}


@dataclass(frozen=True)
class CellTrial:
    """A tuning trial's cell (see :mod:`dolb.experiment.tuned_cells`): how it validates
    and which trial it is; then, at one of its rungs, where its state is kept between
    rungs and the pieces of the stream it learns."""

    validation: str
    holdout: float | None
    seed: int
    bracket: int
    trial: int
    state: str | None = None
    """The hash naming the trial's state between rungs (None: not at a rung yet)."""
    rung: int | None = None
    budget: int | None = None
    budgets: tuple[int, ...] | None = None
    """The stream is learned in these pieces: ``[0, b0)``, ``[b0, b1)``..."""
    save: bool | None = None
    """Whether the rung leaves its state for the next one."""

    def canonical(self) -> dict[str, Any]:
        """As a JSON-ready dict; the rung's entries only at a rung."""
        found = {"validation": self.validation, "holdout": self.holdout, "seed": self.seed,
                 "bracket": self.bracket, "trial": self.trial}
        if self.rung is None:
            return found
        return found | {"state": self.state, "rung": self.rung, "budget": self.budget,
                        "budgets": list(self.budgets), "save": self.save}


@dataclass(frozen=True)
class CellSpec:
    """What a cell computes: everything that goes into its identity, and nothing
    machine-specific (paths and resource limits are carried beside it, in :class:`Cell`).

    ``params`` are the learner's full parameters (defaults filled in), checked; a spec
    is never changed once made (``dataclasses.replace`` makes another).
    """

    experiment: str
    """Two experiments never share a cell."""
    dataset: str
    train_fingerprint: str
    test_fingerprint: str | None
    task: str
    split: CellSplit
    learner: str
    params: Mapping[str, Any]
    complexity: Any
    complexity_param: str | None
    checkpoints: tuple | str
    """Training sizes, ``("log", k)`` or ``"all"`` (see
    :func:`dolb.evaluation.checkpoints.resolve_checkpoints`)."""
    metrics: tuple[str, ...]
    conversions: tuple[str, ...]
    seed: int
    dolb: str
    """The package version."""
    labels: CellLabels | None = None
    """Semi-supervised streams only."""
    tuning: CellTrial | None = None
    """Tuning trials only."""
    tuned: Mapping[str, Any] | None = None
    """The cells of a configuration chosen by tuning only: the tuning and its space."""
    code: Mapping[str, Any] | None = None
    """The learner's code, where it is not dolb's at revision 1
    (:func:`dolb.learners.code.learner_code`): a plugin's package, version and source digest."""

    def canonical(self) -> dict[str, Any]:
        """The spec as the JSON-ready dict its identity hashes; optional entries only
        when set, and ``metric_versions`` only when a metric it records has changed its
        definition (:func:`~dolb.evaluation.metrics.metric_versions`: ``test_error``'s
        zero-score rule), so that the ids of the other cells are what they always were."""
        return {
            "experiment": self.experiment,
            "dataset": self.dataset,
            "fingerprints": {"train": self.train_fingerprint, "test": self.test_fingerprint},
            "task": self.task,
            "split": self.split.canonical(),
            "learner": self.learner,
            "params": dict(self.params),
            "complexity": self.complexity,
            "complexity_param": self.complexity_param,
            "checkpoints": list(self.checkpoints) if isinstance(self.checkpoints, tuple) else self.checkpoints,
            "metrics": list(self.metrics),
            "conversions": list(self.conversions),
            "seed": self.seed,
            "dolb": self.dolb,
        } | _set(labels=None if self.labels is None else self.labels.canonical(),
                 tuning=None if self.tuning is None else self.tuning.canonical(),
                 tuned=None if self.tuned is None else dict(self.tuned),
                 code=None if self.code is None else dict(self.code),
                 metric_versions=metric_versions(self.metrics) or None)


def _set(**entries: Any) -> dict[str, Any]:
    """The entries that are not None."""
    return {key: value for key, value in entries.items() if value is not None}


@dataclass(frozen=True)
class Cell:
    """Everything a worker needs to run one cell, and nothing machine-specific in its
    identity (paths and resource limits are carried beside the spec, not inside it)."""

    id: str
    spec: CellSpec
    train_path: str
    test_path: str | None
    n_train: int
    timeout: float | None = None
    memory: int | None = None
    state_every: float | None = None
    trial_state: str | None = None
    """A tuning trial's state between rungs (its id): a rung resumes from the state the
    trial's previous rung left and leaves its own for the next (None: not a trial)."""
