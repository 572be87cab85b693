"""A cell's saved states: where a long cell keeps its progress, and what saving cost.

A state holds what the learner has learned (its conversions' logs up to the rows
learned: see :meth:`dolb.conversions.protocol.Fed.in_use`), the metrics recorded so
far and the position in the stream; never the data.
"""

from __future__ import annotations

import pickle
import time
from typing import Any, Protocol

STATE_SAVES = ("state_saves", "state_bytes", "state_largest", "state_seconds")
"""What a cell's ``timing`` counts of the states it saved: how many, their bytes in all,
the largest, the seconds saving took (pickling included)."""


class StateKeeper(Protocol):
    """Where long cells keep their saved states, by cell id (in a result folder:
    :class:`dolb.results.states.CellStates`)."""

    def load(self, cell_id: str) -> bytes | None: ...

    def save(self, cell_id: str, data: bytes) -> None: ...

    def drop(self, cell_id: str) -> None: ...


def save_state(states: StateKeeper, cell_id: str, state: dict[str, Any]) -> int:
    """Save a cell's state (whole or not at all: see ``states``); return its size in
    bytes."""
    data = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    states.save(cell_id, data)
    return len(data)


def load_state(states: StateKeeper | None, cell_id: str) -> dict[str, Any] | None:
    """The state a cell saved (its id names the spec, data and version it belongs
    to), or None."""
    data = None if states is None else states.load(cell_id)
    return None if data is None else pickle.loads(data)


def add_saves(total: dict[str, float], saves: dict[str, float]) -> None:
    """Add ``saves`` (a cell's timing, or another total) to ``total``: the largest
    state is the larger one, the rest add up.

    >>> total = {}
    >>> add_saves(total, {"state_saves": 2, "state_bytes": 30, "state_largest": 20, "state_seconds": 0.5})
    >>> add_saves(total, {"state_saves": 1, "state_bytes": 25, "state_largest": 25, "state_seconds": 0.25})
    >>> total
    {'state_saves': 3, 'state_bytes': 55, 'state_largest': 25, 'state_seconds': 0.75}
    """
    for key in STATE_SAVES:
        value = saves.get(key, 0)
        total[key] = max(total.get(key, 0), value) if key == "state_largest" else total.get(key, 0) + value


class PeriodicSaves:
    """Saves a cell's state every ``every`` seconds (never when ``states`` or ``every``
    is None), counting the saves as :data:`STATE_SAVES`.

    Parameters
    ----------
    states : StateKeeper or None
        Where the states go.
    cell_id : str
        The cell they belong to.
    every : float or None
        Seconds between two saves.
    """

    def __init__(self, states: StateKeeper | None, cell_id: str, every: float | None) -> None:
        self.states = None if every is None else states
        self.cell_id = cell_id
        self.every = every
        self.counts = dict.fromkeys(STATE_SAVES, 0)
        self.saved = time.perf_counter()
        self.any = False
        """Whether a state was saved (the cell drops it once done)."""

    def maybe_save(self, state: dict[str, Any]) -> None:
        """Save ``state`` if ``every`` seconds passed since the last save (or the start)."""
        now = time.perf_counter()
        if self.states is None or now - self.saved < self.every:
            return
        size = save_state(self.states, self.cell_id, state)
        self.saved, self.any = time.perf_counter(), True
        add_saves(self.counts, {"state_saves": 1, "state_bytes": size, "state_largest": size,
                                "state_seconds": self.saved - now})
