"""Saved states of long cells still running, in their result folder (a path or an
fsspec URL), so that a cell preempted resumes where it was (see
:func:`dolb.evaluation.run_cell.run_cell`)."""

from __future__ import annotations

import json

from dolb.errors import DataError
from dolb.results.store import ResultStore, new_attempt

STATES = "state"
"""Saved states of long cells still running, inside a result folder."""


class CellStates:
    """The saved states of long cells in a result folder (a path or an fsspec URL), as
    parts are saved: each state under a unique name (``state/<cell id>-<attempt>.pkl``),
    then a small pointer naming it (``state/<cell id>.json``) written last. A state is
    therefore read whole or not at all wherever the folder is (an object store has no
    atomic rename); a pointer that cannot be read counts as no state (the cell starts
    over, with the same results).

    Parameters
    ----------
    store : ResultStore
        The result folder.
    """

    def __init__(self, store: ResultStore) -> None:
        self.store = store
        self.folder = f"{store.path}/{STATES}"

    def _pointed(self, cell_id: str) -> str | None:
        """The name of the state the pointer of ``cell_id`` names, or None."""
        try:
            text = self.store.read_text(f"{STATES}/{cell_id}.json")
            return None if text is None else json.loads(text)["state"]
        except (DataError, ValueError, KeyError, TypeError):  # torn or foreign: start over
            return None

    def save(self, cell_id: str, data: bytes) -> None:
        """Save a state of ``cell_id``; the one it replaces is removed afterwards."""
        previous = self._pointed(cell_id)
        name = f"{cell_id}-{new_attempt()}.pkl"
        self.store.fs.makedirs(self.folder, exist_ok=True)
        self.store.fs.pipe_file(f"{self.folder}/{name}", data)
        self.store.write_text(f"{STATES}/{cell_id}.json", json.dumps({"state": name}))
        if previous is not None:
            self.store.fs.rm_file(f"{self.folder}/{previous}")

    def load(self, cell_id: str) -> bytes | None:
        """The last state saved of ``cell_id``, or None."""
        name = self._pointed(cell_id)
        if name is None:
            return None
        try:
            return self.store.fs.cat_file(f"{self.folder}/{name}")
        except FileNotFoundError:
            return None

    def drop(self, cell_id: str) -> None:
        """Remove the states of ``cell_id`` (its cell is done): the pointer first, then
        every state file, those a preempted save left unnamed included."""
        pointer = f"{self.folder}/{cell_id}.json"
        if self.store.fs.exists(pointer):
            self.store.fs.rm_file(pointer)
        for path in self.store.fs.glob(f"{self.folder}/{cell_id}-*.pkl"):
            self.store.fs.rm_file(path)
