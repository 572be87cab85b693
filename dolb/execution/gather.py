"""What the client writes during a sweep: the rows tasks sent back (when the workers
cannot reach the result folder), failure rows of tasks that died, and the manifests that
commit the parts, naming the cells of each."""

from __future__ import annotations

import time

import pyarrow as pa

from dolb.execution.batches import Batch
from dolb.execution.tasks import Destination, TaskOutcome, from_ipc
from dolb.results.cell_rows import CellRows
from dolb.results.store import ResultStore

CLIENT_PART_ROWS = 1_000_000
"""Rows the client gathers before writing them as one part..."""
CLIENT_PART_SECONDS = 30.0
"""...or seconds since the first of them arrived: a client killed loses at most that."""
COMMIT_SECONDS = 5.0
"""How often the client commits the parts written so far..."""
COMMIT_CELLS = 2_000
"""...or after how many cells of them: a short run killed keeps what it computed."""


class ClientWriter:
    """What the client writes: the rows tasks sent back (in large parts), failure rows
    of tasks that died, and manifests committing the parts."""

    def __init__(self, store: ResultStore, destination: Destination) -> None:
        self.store, self.destination = store, destination
        self.tables: list[pa.Table] = []
        self.cells: list[str] = []
        """The ids of the cells of ``tables``."""
        self.n_rows = 0
        self.first_at = 0.0
        self.uncommitted: dict[str, list[str]] = {}
        """Each part written and not committed yet, with the ids of its cells."""
        self.committed_at = time.monotonic()

    def failed_batch(self, batch: Batch, error: str) -> TaskOutcome:
        """Store every cell of a task that died (its workers lost, thrice) as failed
        with ``error``; return the outcome the task would have returned."""
        rows = CellRows(self.destination.schema, self.destination.run_id, "client")
        failures = []
        for group, indices in batch:
            for index in indices.tolist():
                cell_id = group.cell_id(index)
                rows.add_failed(cell_id, group.coordinates | {"split": index}, error)
                failures.append((cell_id, error))
        cells = [cell_id for cell_id, _ in failures]
        self._append(rows.table(), cells)
        return TaskOutcome(cells=cells, failures=failures)

    def take(self, outcome: TaskOutcome) -> None:
        """Take a task's outcome: append the rows it sent back, note the part it wrote
        (with the ids of its cells, as the task told them)."""
        if outcome.rows is not None:
            self._append(from_ipc(outcome.rows), outcome.cells)
        if outcome.part is not None:
            self.uncommitted[outcome.part] = outcome.cells
        waiting = sum(len(cells) for cells in self.uncommitted.values())
        if time.monotonic() - self.committed_at > COMMIT_SECONDS or waiting >= COMMIT_CELLS:
            self._commit()

    def _append(self, table: pa.Table, cells: list[str]) -> None:
        if not self.tables:
            self.first_at = time.monotonic()
        self.tables.append(table)
        self.cells.extend(cells)
        self.n_rows += table.num_rows
        if self.n_rows >= CLIENT_PART_ROWS or time.monotonic() - self.first_at > CLIENT_PART_SECONDS:
            self._flush()

    def _flush(self) -> None:
        if self.tables:
            self.uncommitted[self.store.write_part(pa.concat_tables(self.tables))] = self.cells
            self.tables, self.cells, self.n_rows = [], [], 0

    def _commit(self) -> None:
        self.store.commit(self.uncommitted, self.destination.run_id)
        self.uncommitted, self.committed_at = {}, time.monotonic()

    def close(self) -> None:
        """Write what is gathered and commit every part."""
        self._flush()
        self._commit()
