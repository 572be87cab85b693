"""Cut a sweep's cells into batches, one Dask task each, as the tasks are submitted.

Batches are cut by *guided self-scheduling*: the first ones are large, the last ones
small, so no worker idles long at the end while another finishes a large batch. Before
any cell is timed, one batch per worker is cut (:mod:`dolb.execution.compute`): only
those are sized by guess. Once finished cells have told how long they took, no batch is
cut shorter than :data:`MIN_TASK_SECONDS` of estimated work, nor, on a large cluster,
than workers / :data:`SCHEDULER_TASKS_PER_SECOND`; nor is a floor ever more than the
sweep's work a worker, so every worker gets a task. A batch holds no more training
examples than the pipeline's ``batch_examples`` when it sets one; by default the work
alone sizes the batches.

The sizes are shares of the sweep's *work*: its training examples until a cell has been
timed, then its estimated seconds, a cell priced as the timed cells of the nearest size
(:meth:`Batcher.cell_seconds`). Why batches are sized so, with the costs that set the
floors: docs/design/execution.md.
"""

from __future__ import annotations

import bisect
import math
import sys
from collections import Counter

import numpy as np

from dolb.experiment.cells import CellGroup

Batch = list[tuple[CellGroup, np.ndarray]]
"""What one Dask task runs: groups, each with the split indices of its cells to run."""

Paces = dict[int, tuple[int, float]]
"""What a finished task tells of its cells: training examples of a cell -> (cells of that
size that ran, their seconds in all)."""

GUIDED_SHARE = 2
"""A batch holds at most 1 / (GUIDED_SHARE × workers) of the work not yet batched."""
COARSEST_SHARE = 16
"""And at most 1 / (COARSEST_SHARE × workers) of all of it."""
FINEST_SHARE = 256
"""Nor less than 1 / (FINEST_SHARE × workers) of all of it (unless too little is left)."""
MIN_TASK_SECONDS = 0.25
"""Nor less than this many estimated seconds, once cells have been timed: a task's cost
to the client is then at most ~2 % of its work, and the last batch keeps a worker busy
at most about this long after the others are done."""
SCHEDULER_TASKS_PER_SECOND = 200
"""Nor less than workers / this many seconds: the scheduler is sent at most about this
many tasks a second whatever the cluster's size, well within one core
(docs/design/execution.md). From 50 workers on, this floor is the larger: 0.32 s at 64
workers, 1.3 s at 256, 5 s at 1,000."""


class Batcher:
    """The batches of a sweep, cut one at a time (an iterator).

    Each batch takes at most 1 / (:data:`GUIDED_SHARE` × ``n_workers``) of the work not
    yet batched and 1 / (:data:`COARSEST_SHARE` × ``n_workers``) of all of it, no less
    than 1 / (:data:`FINEST_SHARE` × ``n_workers``) of all of it and, once :meth:`took`
    has been told how long finished cells took, no less than ``min_seconds`` (more on
    a large cluster: :data:`SCHEDULER_TASKS_PER_SECOND`); and at
    most ``max_examples`` training examples. Work is counted in training examples until
    a cell has been timed, then in estimated seconds (:meth:`cell_seconds`). Cells stay
    in order, a batch may span groups, and a cell larger than the limits runs alone.

    Parameters
    ----------
    todo : list of (CellGroup, ndarray)
        The cells to run: groups (anything with ``n_train``) with split indices.
    max_examples : int or None
        Training examples a batch holds at most (the pipeline's ``batch_examples``;
        None: no such cap).
    n_workers : int
        Workers the batches are shared by.
    min_seconds : float
        Estimated work a batch holds at least, once a cell has been timed (and at least
        ``n_workers`` / :data:`SCHEDULER_TASKS_PER_SECOND`; but never more than the
        sweep's estimated work over ``n_workers``).

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace as G
    >>> batches = Batcher([(G(n_train=10), np.arange(1000))], max_examples=600)
    >>> [sum(len(indices) for _, indices in batch) for batch in batches]
    [60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 50, 25, 12, 6, 3, 3, 1]

    Told that 60 cells took 0.5 s, it cuts no batch under 0.25 s (30 cells):

    >>> batches = Batcher([(G(n_train=10), np.arange(1000))], max_examples=600)
    >>> first = next(batches)
    >>> batches.took({10: (60, 0.5)})
    >>> [sum(len(indices) for _, indices in batch) for batch in batches][-4:]
    [60, 50, 30, 20]
    """

    def __init__(self, todo: list[tuple[CellGroup, np.ndarray]], max_examples: int | None, n_workers: int = 1,
                 min_seconds: float = MIN_TASK_SECONDS) -> None:
        self.todo = [(group, indices) for group, indices in todo if len(indices)]
        self.max_examples = sys.maxsize if max_examples is None else max_examples  # None: no cap
        self.n_workers = n_workers
        self.min_seconds = max(min_seconds, n_workers / SCHEDULER_TASKS_PER_SECOND)
        self.cells = Counter()  # a cell's examples -> cells of that size in the sweep
        for group, indices in self.todo:
            self.cells[group.n_train] += len(indices)
        self.left = Counter(self.cells)  # ... not yet batched
        self.item, self.start = 0, 0  # the next cell: todo[item], its split indices from start
        self.paces: dict[int, list] = {}  # a cell's examples -> [cells timed, their seconds]
        self.timed: list[int] = []  # the keys of paces, sorted
        self.cut = 0
        """Batches cut so far."""

    def took(self, paces: Paces) -> None:
        """Finished cells took this long: for each size, (cells, their seconds)."""
        for size, (cells, seconds) in paces.items():
            if size not in self.paces:
                bisect.insort(self.timed, size)
                self.paces[size] = [0, 0.0]
            self.paces[size][0] += cells
            self.paces[size][1] += seconds

    def cell_seconds(self, size: int) -> float:
        """Estimated seconds of a cell of ``size`` training examples: the mean of the
        timed cells of the nearest size (on a log scale); 0 before any cell was timed.

        >>> from types import SimpleNamespace as G
        >>> batches = Batcher([(G(n_train=10), np.arange(5))], 100)
        >>> batches.took({1_000: (4, 2.0), 10_000: (1, 3.0)})
        >>> batches.cell_seconds(100), batches.cell_seconds(2_000), batches.cell_seconds(5_000)
        (0.5, 0.5, 3.0)
        """
        if not self.timed:
            return 0.0
        at = bisect.bisect_left(self.timed, size)
        nearest = min(self.timed[max(at - 1, 0) : at + 1], key=lambda s: abs(math.log((s + 1) / (size + 1))))
        cells, seconds = self.paces[nearest]
        return seconds / cells

    def _work(self, size: int) -> float:
        """The work of a cell of ``size`` examples: its estimated seconds once a cell has
        been timed (its examples before)."""
        return self.cell_seconds(size) if self.timed else float(size)

    def __iter__(self) -> Batcher:
        return self

    def __next__(self) -> Batch:
        if self.item == len(self.todo):
            raise StopIteration
        work = {size: self._work(size) for size in self.cells}
        total = sum(count * work[size] for size, count in self.cells.items())
        remaining = sum(count * work[size] for size, count in self.left.items())
        finest = total / (FINEST_SHARE * self.n_workers)
        room = max(finest, min(total / (COARSEST_SHARE * self.n_workers), remaining / (GUIDED_SHARE * self.n_workers)))
        if self.timed:
            room = max(room, min(self.min_seconds, total / self.n_workers))
        batch: Batch = []
        examples = 0
        while self.item < len(self.todo):
            group, indices = self.todo[self.item]
            size = group.n_train
            fits = min(len(indices) - self.start, (self.max_examples - examples) // size,
                       math.floor(room / work[size]) if work[size] > 0.0 else len(indices))
            if fits <= 0:
                if batch:
                    break
                fits = 1  # a cell larger than the limits runs alone
            batch.append((group, indices[self.start : self.start + fits]))
            room -= fits * work[size]
            examples += fits * size
            self.left[size] -= fits
            self.start += fits
            if self.start == len(indices):
                self.item, self.start = self.item + 1, 0
        self.cut += 1
        return batch
