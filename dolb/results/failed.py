"""Failed cells as a user reads them, one line each (:func:`failure_line`): in the run's
log (a tuning trial's) and in ``dolb status``.

A tuning trial that fails is stored as any failed cell (status ``failed``, its error),
under the experiment ``<name>/tuning``, with its ``rung`` and ``budget``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd


def is_trial(row: Mapping[str, Any]) -> bool:
    """Whether a failed cell's row is a tuning trial's (it has a rung)."""
    return pd.notna(row.get("rung"))


def failure_line(row: Mapping[str, Any]) -> str:
    """A failed cell on one line: its id, learner and parameters, dataset and split, a
    tuning trial's rung and budget, and the first line of its error.

    >>> failure_line({"cell_id": "56469d2a", "learner": "margin_perceptron", "params": "radius=10.0",
    ...               "dataset": "w8a", "split": 1, "rung": 2, "budget": 15920, "error": "row 5876 has norm 10.2"})
    '56469d2a  margin_perceptron radius=10.0 on w8a, split 1, rung 2 (15,920 examples): row 5876 has norm 10.2'
    """
    where = " ".join(str(part) for part in (row["learner"], row.get("params")) if part)
    where += f" on {row['dataset']}, split {row['split']}"
    if is_trial(row):
        where += f", rung {int(row['rung'])} ({int(row['budget']):,} examples)"
    error = str(row["error"] or "").splitlines()
    return f"{row['cell_id']}  {where}: {error[0] if error else ''}"


__all__ = ["failure_line", "is_trial"]
