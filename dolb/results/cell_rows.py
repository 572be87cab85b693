"""Rows of cells as they are computed, turned into one Arrow table of a run's schema
(:func:`dolb.results.store.result_schema`): what a part of the result store holds."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from dolb.results.store import new_attempt


class CellRows:
    """Rows of cells as they are computed, turned into one Arrow table.

    Parameters
    ----------
    schema : pyarrow.Schema
        The run's :func:`result_schema`.
    run_id, worker : str
        Written on every row.
    """

    def __init__(self, schema: pa.Schema, run_id: str, worker: str) -> None:
        self.schema = schema
        self.columns: dict[str, list] = {name: [] for name in schema.names}
        self.constant = {"run_id": run_id, "worker": worker, "attempt": new_attempt()}
        self.as_text = {f.name for f in schema if f.name.startswith("param_") and f.type == pa.string()}
        self.n_rows = 0

    def _add(self, n: int, cell: dict[str, Any], values: dict[str, list]) -> None:
        for name, column in self.columns.items():
            if name in values:
                column.extend(values[name])
                continue
            value = cell.get(name, self.constant.get(name))
            if name in self.as_text and value is not None:
                value = str(value)  # a parameter two learners declare with different kinds
            column.extend([value] * n)
        self.n_rows += n

    def add_ok(self, cell_id: str, coordinates: dict[str, Any], result: dict[str, Any]) -> None:
        """Add a successful cell: ``result`` as :func:`dolb.evaluation.run_cell.run_cell`
        returns it (``checkpoints``, ``metrics[conversion][metric]`` one value per
        checkpoint from the first, None where it was not reported, and timing)."""
        conversions, sizes, metrics, values = [], [], [], []
        checkpoints = result["checkpoints"]
        for conversion, by_metric in result["metrics"].items():
            for metric, found in by_metric.items():
                reported = [(size, value) for size, value in zip(checkpoints, found) if value is not None]
                conversions.extend([conversion] * len(reported))
                sizes.extend(size for size, _ in reported)
                metrics.extend([metric] * len(reported))
                values.extend(value for _, value in reported)
        cell = coordinates | {"cell_id": cell_id, "status": "ok"} | result.get("timing", {})
        self._add(len(values), cell, {"conversion": conversions, "n_train": sizes, "metric": metrics, "value": values})

    def add_failed(self, cell_id: str, coordinates: dict[str, Any], error: str, timing: dict | None = None) -> None:
        """Add a failed cell: one row with its error and no metric."""
        cell = coordinates | {"cell_id": cell_id, "status": "failed", "error": error} | (timing or {})
        self._add(1, cell, {})

    def table(self) -> pa.Table:
        """The rows added so far as a table of the run's schema."""
        return pa.table(self.columns, schema=self.schema)
