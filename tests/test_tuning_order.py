"""A tuning has no global barrier: a split whose trials are held back holds back no
other split's rungs nor choice, and the decisions are those of a run without the hold.

The cluster runs in this process (worker threads), so that a hook around each cell can
hold every first-rung trial of one split until the other splits have run their chosen
configurations: with a barrier between rungs that never happens (the hook then lets go
after three minutes, and the order of events shows the barrier). The trials' saved
states are removed as their rungs are decided: none is left for the end of the run."""

import threading

import dask
import pandas as pd
from distributed import LocalCluster

from dolb.execution import ready, sweep, tasks
from dolb.execution.sweep import run_sweep
from dolb.options import RunOptions
from dolb.results.states import CellStates
from tests.conftest import assert_same
from tests.test_tuning import decisions, problem, write_pipeline  # noqa: F401 (a fixture)

HELD = 2
"""The split whose first-rung trials are held back."""
SPLITS = 3


class Timeline:
    """Runs cells as ``run_cell`` does, holding ``HELD``'s first-rung trials until every
    other split's chosen configuration has run, and keeps the order in which cells
    started and ended: (event, kind, split, rung)."""

    def __init__(self, run_cell) -> None:
        self.run_cell, self.events, self.lock = run_cell, [], threading.Lock()
        self.others_chosen = threading.Event()

    def __call__(self, cell, states=None):
        spec = cell.spec
        kind = "trial" if spec.tuning is not None else "chosen" if spec.tuned is not None else "untuned"
        split, rung = spec.split.index, None if spec.tuning is None else spec.tuning.rung
        if (kind, split, rung) == ("trial", HELD, 0):
            self.others_chosen.wait(timeout=180)  # a barrier would hold the others: let go, for the check to fail
        self._note("start", kind, split, rung)
        result = self.run_cell(cell, states)
        self._note("end", kind, split, rung)
        return result

    def _note(self, event: str, kind: str, split: int, rung: int | None) -> None:
        with self.lock:
            self.events.append((event, kind, split, rung))
            chosen = {split for event, kind, split, _ in self.events if (event, kind) == ("end", "chosen")}
            if chosen >= set(range(SPLITS)) - {HELD}:
                self.others_chosen.set()

    def first(self, event: str, kind: str, split: int, rung: int | None = None) -> int:
        return min(i for i, e in enumerate(self.events) if e == (event, kind, split, rung))

    def last(self, event: str, kind: str, split: int, rung: int | None = None) -> int:
        return max(i for i, e in enumerate(self.events) if e == (event, kind, split, rung))


def test_a_held_split_holds_back_no_other_split(problem, monkeypatch):  # noqa: F811
    path = write_pipeline(problem)
    run_sweep(path, problem / "plain", RunOptions(workers=2, progress=False))
    timeline = Timeline(tasks.run_cell)
    monkeypatch.setattr(tasks, "run_cell", timeline)
    monkeypatch.setattr(ready, "GUIDED_SHARE", 10**9)  # a cell a task: no other split's cell waits in a held task
    made = ready.ReadyCells.__init__

    def no_floor(self, *args) -> None:
        made(self, *args)
        self.paces.min_seconds = 0.0

    monkeypatch.setattr(ready.ReadyCells, "__init__", no_floor)
    left = []
    tidy = sweep._tidy_states
    monkeypatch.setattr(sweep, "_tidy_states", lambda store: left.extend(CellStates(store).files()) or tidy(store))
    with dask.config.set({"distributed.scheduler.worker-saturation": 1.0}), \
            LocalCluster(n_workers=8, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        # a worker is sent a task only once it is free: none waits behind a held cell
        summary = run_sweep(path, problem / "held", RunOptions(scheduler=cluster.scheduler_address, progress=False))
    assert summary.ok and left == []  # the trials' states were removed as the rungs were decided
    held_done = timeline.last("end", "trial", HELD, 0)
    for split in set(range(SPLITS)) - {HELD}:
        assert timeline.last("end", "trial", split, 1) < held_done, timeline.events  # its second rung, and
        assert timeline.last("end", "chosen", split) < held_done, timeline.events  # its choice ran meanwhile
    assert timeline.first("start", "trial", HELD, 1) > held_done
    pd.testing.assert_frame_equal(decisions(problem / "plain"), decisions(problem / "held"), check_exact=True)
    assert_same(problem / "plain", problem / "held")
