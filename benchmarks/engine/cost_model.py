"""A cost model of a sweep on N worker slots, from the measured costs of its parts.

A sweep of ``n`` cells of times ``c_i`` (the learner's own work) is cut into ``T``
tasks. Besides the cells, every part of the engine spends CPU time (:class:`Costs`):
the client per cell and per task, the scheduler per task, a worker per cell (reading,
metrics, rows: beyond learning, and holding its slot) and per task (its part). The
sweep's compute phase then lasts at least as long as each of its bounds:

- the slots: ``(Σ c_i + n·w_cell + T·w_task) / N``;
- the client: ``n·a_cell + T·a_task`` (one thread);
- the scheduler: ``T·s_task`` (one thread);
- on a machine of ``cores`` cores that runs all of them (the 2-core machine of the
  simulated cluster), the cores: all that CPU time divided by ``cores``.

How it measures and what it found: ``docs/design/benchmarks.md`` (simulated).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Costs:
    """CPU seconds of the engine's parts (each ≥ 0)."""

    client_cell: float
    client_task: float
    scheduler_task: float
    worker_cell: float
    """A worker's CPU per cell beyond the learner's own work."""
    worker_task: float = 0.0
    client_idle: float = 0.0
    """The client's CPU seconds a second whatever it does (its event loop's timers), < 1."""


@dataclass(frozen=True)
class Prediction:
    """A sweep's compute phase on N slots, as the model predicts it."""

    seconds: float
    ideal: float
    limit: str
    """The longest bound: ``slots``, ``client``, ``scheduler`` or ``cores``."""
    bounds: dict[str, float]

    @property
    def efficiency(self) -> float:
        return self.ideal / self.seconds


def predict(cells: np.ndarray, slots: int, tasks: int, costs: Costs, cores: float | None = None,
            speed: float = 1.0, tail: float | None = None) -> Prediction:
    """The compute phase of a sweep (see the module's model).

    Parameters
    ----------
    cells : array of float
        The time of each cell (seconds of its learner's own work).
    slots : int
        Worker slots (N).
    tasks : int
        Tasks the cells are cut into (T).
    costs : Costs
    cores : float, optional
        The cores that run the client, the scheduler and the workers alike (None: each
        has its own, as on a cluster).
    speed : float
        The share of a core a process gets when it wants one: 1 on a quiet machine; on
        a busy one less, and every CPU second of the engine's takes ``1 / speed``
        seconds.
    tail : float, optional
        The seconds of work of each of the sweep's last tasks (default: a mean cell).

    Examples
    --------
    100 cells of 1 s on 10 slots in 20 tasks; a cell costs the client 1 ms, a task 10
    ms; the scheduler 5 ms a task; a worker 10 ms a cell. The slots take
    (100 + 1) / 10 = 10.1 s, the client 0.3 s, the scheduler 0.1 s; the first tasks
    reach all 10 slots in 10 × 0.015 s (5 cells a task: 15 ms of the client's), of
    which half is lost, as is half a cell (with its 10 ms) at the end:
    10.1 + 0.075 + 0.505 = 10.68 s against an ideal of 10 s.

    >>> found = predict(np.ones(100), slots=10, tasks=20, costs=Costs(0.001, 0.010, 0.005, 0.010))
    >>> found.limit, round(found.seconds, 6), round(found.efficiency, 4)
    ('slots', 10.68, 0.9363)

    On 2 cores the CPU, 0.1 + 0.2 + 0.1 + 1.0 = 1.4 s, is no limit; on 0.1 core it is:

    >>> predict(np.ones(100), 10, 20, Costs(0.001, 0.010, 0.005, 0.010), cores=0.1).limit
    'cores'

    Each process getting a tenth of a core, the client's 0.3 s take 3 s, the ends
    10 × 0.15 / 2 + (1 + 0.1) / 2 = 1.3 s, the slots (100 + 10) / 10 = 11 s:

    >>> slow = predict(np.ones(100), 10, 20, Costs(0.001, 0.010, 0.005, 0.010), speed=0.1)
    >>> round(slow.bounds["client"], 6), round(slow.seconds, 6)
    (3.0, 12.3)

    Were the last tasks 5 cells (5 s), the end would lose 2.5 s, not 0.5; a client
    busy 40 % of its core whatever it does has 0.6 of one for its 0.3 s of work:

    >>> tails = predict(np.ones(100), 10, 20, Costs(0.001, 0.010, 0.005, 0.010, client_idle=0.4), tail=5.0)
    >>> round(tails.seconds, 6), round(tails.bounds["client"], 6)
    (12.675, 0.5)
    """
    cells = np.asarray(cells, dtype=float)
    n, work = len(cells), float(cells.sum())
    client = n * costs.client_cell + tasks * costs.client_task
    scheduler = tasks * costs.scheduler_task
    workers = n * costs.worker_cell + tasks * costs.worker_task
    bounds = {"slots": (work + workers / speed) / slots, "client": client / speed / (1 - costs.client_idle),
              "scheduler": scheduler / speed}
    if cores is not None:
        bounds["cores"] = (client + scheduler + workers) / cores
    limit = max(bounds, key=bounds.get)
    per_task = max(costs.client_task + costs.client_cell * n / tasks, costs.scheduler_task) / speed
    last = work / n + costs.worker_cell / speed if tail is None else tail
    ends = min(tasks, slots) * per_task / 2 + last / 2
    return Prediction(bounds[limit] + ends, work / slots, limit, bounds)


def list_schedule(cells: np.ndarray, slots: int) -> float:
    """When the last of ``cells`` (seconds each) ends if each, in turn, goes to the slot
    free first, with no cost at all: what the granularity of the cells alone allows.
    Cells of 0.5-1 s, 6 a slot, end on average ~10 % after their ideal (the last cells
    end at different times); 25 a slot, ~3 %.

    >>> list_schedule(np.array([1.0, 1.0, 1.0]), 2), list_schedule(np.array([1.0, 0.5, 0.5]), 2)
    (2.0, 1.0)
    """
    free = np.zeros(slots)
    for seconds in cells:
        first = int(np.argmin(free))
        free[first] += seconds
    return float(free.max())


def amdahl(share: float, slots: int) -> float:
    """Amdahl's speed-up on ``slots`` slots of work whose fraction ``share`` is serial.

    >>> amdahl(0.0, 64), round(amdahl(0.01, 64), 2), round(amdahl(0.01, 1000), 1)
    (64.0, 39.26, 91.0)
    """
    return 1 / (share + (1 - share) / slots)


def per_cell_and_task(spent: list[float], cells: list[int], tasks: list[int]) -> tuple[float, float]:
    """The CPU seconds a part spends per cell and per task: the least-squares fit,
    with neither below zero, of ``spent ≈ a · cells + b · tasks`` over runs.

    >>> per_cell_and_task([0.3, 0.5], cells=[100, 100], tasks=[20, 40])  # 1 ms a cell, 10 ms a task
    (0.001, 0.01)
    >>> per_cell_and_task([1.0, 2.0], cells=[100, 200], tasks=[10, 20])  # one ratio: all per cell
    (0.01, 0.0)
    """
    matrix = np.column_stack([np.asarray(cells, float), np.asarray(tasks, float)])
    spent = np.asarray(spent, float)
    if np.linalg.matrix_rank(matrix) < 2:
        return max(0.0, float(spent.sum() / matrix[:, 0].sum())), 0.0
    return _non_negative_fit(matrix, spent)


def per_task_and_second(spent: list[float], tasks: list[int], seconds: list[float]) -> tuple[float, float]:
    """The CPU seconds a part spends per task and per second whatever it does: the
    least-squares fit, with neither below zero, of ``spent ≈ b · tasks + r · seconds``
    over runs (``spent``: what it spent beyond its cells' known cost).

    >>> per_task_and_second([0.3, 0.4], tasks=[20, 20], seconds=[10, 20])  # 10 ms a task, 1 % of a core
    (0.01, 0.01)
    >>> per_task_and_second([0.1, 0.3], tasks=[10, 20], seconds=[10, 10])  # 20 ms and -1 %: never below zero
    (0.014, 0.0)
    """
    return _non_negative_fit(np.column_stack([np.asarray(tasks, float), np.asarray(seconds, float)]),
                             np.asarray(spent, float))


def _non_negative_fit(matrix: np.ndarray, spent: np.ndarray) -> tuple[float, float]:
    """The two coefficients of the least-squares fit of ``spent`` on ``matrix``'s two
    columns, neither below zero (SciPy's NNLS), to 15 decimals."""
    from scipy.optimize import nnls

    (first, second), _ = nnls(matrix, spent)
    return round(float(first), 15), round(float(second), 15)


def tasks_of_length(cells: np.ndarray, slots: int, seconds: float = 0.25) -> int:
    """Tasks a sweep is cut into when each holds ``seconds`` of work, but at least one
    per slot and at most one per cell (tasks of at least 0.25 s: what the engine's
    batching aims at).

    >>> tasks_of_length(np.full(1000, 0.05), slots=10)   # 50 s of work: 200 tasks of 0.25 s
    200
    >>> tasks_of_length(np.full(1000, 0.05), slots=1000), tasks_of_length(np.full(10, 1.0), slots=4)
    (1000, 10)
    """
    n = len(cells)
    return int(min(n, max(slots, np.ceil(round(float(np.sum(cells)) / seconds, 9)))))
