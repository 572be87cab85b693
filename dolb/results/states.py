"""The saved states of long cells in a result folder (``DIR/state``).

A cell that runs with ``state_every`` saves its state now and then, to resume from it if
it is stopped (see :mod:`dolb.evaluation.run_cell`). States are saved as result parts
are: each under a unique name (``state/<cell id>-<attempt>.pkl``), then a small pointer
naming it (``state/<cell id>.json``) written last, so a state is read whole or not at
all wherever the folder is (an object store has no atomic rename); a pointer that
cannot be read counts as no state (the cell starts over, with the same results).

A save stopped midway leaves a file no pointer names (a torn state, or the pointer's
temporary): it is removed when the cell is done and at the end of a run
(:meth:`CellStates.keep_only`). A save removes only the state it replaces, by name: it
costs the same among ten thousand states (a tuning's trials) as among ten.

Examples
--------
>>> import tempfile
>>> states = CellStates(ResultStore(tempfile.mkdtemp()))
>>> states.save("c1", b"one"); states.save("c1", b"two")
>>> states.load("c1"), len(states.files())  # the state and its pointer
(b'two', 2)
>>> states.forget(["c1"]); states.load("c1"), states.files()
(None, [])
"""

from __future__ import annotations

import json
from collections.abc import Callable

from dolb.errors import DataError
from dolb.results.store import ResultStore, new_attempt

STATES = "state"
"""Saved states of long cells still running, inside a result folder."""


def owner(name: str) -> str:
    """The cell id a file of the state folder belongs to: ``<id>-<attempt>.pkl``,
    ``<id>.json`` or the pointer's temporary ``.<id>.json.<tag>.tmp`` (cell ids are hex
    digits).

    >>> owner("0a1b-00017-9f.pkl"), owner("0a1b.json"), owner(".0a1b.json.77ce.tmp")
    ('0a1b', '0a1b', '0a1b')
    """
    return name.lstrip(".").split("-")[0].split(".")[0]


class CellStates:
    """The saved states of long cells in a result folder (a path or an fsspec URL).

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

    def files(self) -> list[str]:
        """Names of every file in the state folder, sorted (hidden temporaries too)."""
        return self.store.list(STATES)

    def save(self, cell_id: str, data: bytes) -> None:
        """Save a state of ``cell_id``; the state it replaces is removed afterwards."""
        replaced = self._pointed(cell_id)
        name = f"{cell_id}-{new_attempt()}.pkl"
        self.store.fs.makedirs(self.folder, exist_ok=True)
        self.store.fs.pipe_file(f"{self.folder}/{name}", data)
        self.store.write_text(f"{STATES}/{cell_id}.json", json.dumps({"state": name}))
        if replaced is not None and self.store.fs.exists(f"{self.folder}/{replaced}"):
            self.store.fs.rm_file(f"{self.folder}/{replaced}")

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
        every other file of the cell."""
        pointer = f"{self.folder}/{cell_id}.json"
        if self.store.fs.exists(pointer):
            self.store.fs.rm_file(pointer)
        self._remove(lambda file: owner(file) == cell_id)

    def forget(self, keys: list[str]) -> None:
        """Remove the states of ``keys`` (none will be resumed from), each by its
        pointer's name: the pointer first, then the state it names, without listing the
        folder (a save stopped midway is left to :meth:`keep_only`)."""
        for key in keys:
            name = self._pointed(key)
            for file in (f"{key}.json", name):
                if file is not None and self.store.fs.exists(f"{self.folder}/{file}"):
                    self.store.fs.rm_file(f"{self.folder}/{file}")

    def keep_only(self, cell_ids: set[str]) -> int:
        """Remove every file but the states of ``cell_ids`` that their pointers name
        and those pointers: the states of other cells, and whatever saves stopped midway
        left. Return how many files were removed. (For the end of a run, when no cell
        saves.)"""
        kept = {owner(name) for name in self.files()} & cell_ids
        named = {self._pointed(cell) for cell in kept} | {f"{cell}.json" for cell in kept}
        return self._remove(lambda file: file not in named)

    def _remove(self, doomed: Callable[[str], bool]) -> int:
        """Remove the files of the state folder whose name ``doomed`` accepts; return
        how many."""
        names = [name for name in self.files() if doomed(name)]
        for name in names:
            self.store.fs.rm_file(f"{self.folder}/{name}")
        return len(names)
