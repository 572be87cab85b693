"""A cell as a worker receives it: what :func:`dolb.evaluation.run_cell.run_cell` runs.

Cells are made from a pipeline by :mod:`dolb.experiment.cells`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Cell:
    """Everything a worker needs to run one cell, and nothing machine-specific in its
    identity (paths and resource limits are carried beside the spec, not inside it)."""

    id: str
    spec: dict[str, Any]
    train_path: str
    test_path: str | None
    n_train: int
    timeout: float | None = None
    memory: int | None = None
    state_every: float | None = None
    trial_state: str | None = None
    """A tuning trial's state between rungs (its id): a rung resumes from the state the
    trial's previous rung left and leaves its own for the next (None: not a trial)."""
