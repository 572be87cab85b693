"""Cut a sweep's cells into batches, one Dask task each, as the tasks are submitted.

A batch costs the client (and the scheduler it runs) one task, whatever its number of
cells: on the 2-core machine 3–6 ms of CPU for the task's submission, its messages and
its result, as much for a task that only sleeps (README, Sweeps at scale).
Batches are cut by *guided self-scheduling*: the first ones are large, the last ones
small, so no worker idles long at the end while another finishes a large batch. With
many workers and short cells, the guided sizes alone would send a task per cell or two;
so once finished batches have told how long an example takes, no batch is cut shorter
than :data:`MIN_TASK_SECONDS` of estimated work.
"""

from __future__ import annotations

import math

import numpy as np

from dolb.experiment.cells import CellGroup, examples_of

Batch = list[tuple[CellGroup, np.ndarray]]
"""What one Dask task runs: groups, each with the split indices of its cells to run."""

GUIDED_SHARE = 2
"""A batch holds at most 1 / (GUIDED_SHARE × workers) of the examples not yet batched."""
COARSEST_SHARE = 16
"""And at most 1 / (COARSEST_SHARE × workers) of all of them."""
FINEST_SHARE = 256
"""Nor less than 1 / (FINEST_SHARE × workers) of all of them (unless too few are left)."""
MIN_TASK_SECONDS = 0.25
"""Nor less than this much estimated work, once finished batches give the time an
example takes: a task's cost to the client is then at most ~2 % of its work, and the
last batch keeps a worker busy at most this long after the others are done."""


class Batcher:
    """The batches of a sweep, cut one at a time (an iterator).

    Each batch takes at most 1 / (:data:`GUIDED_SHARE` × ``n_workers``) of the training
    examples not yet batched, at most ``max_examples`` and 1 / (:data:`COARSEST_SHARE` ×
    ``n_workers``) of all, and no less than 1 / (:data:`FINEST_SHARE` × ``n_workers``)
    of all; cells stay in order, a batch may span groups, and a cell larger than the
    limits runs alone. Once :meth:`took` has been told how long finished batches took,
    no batch holds less than ``min_seconds`` of work at that pace (nor more than
    ``max_examples``).

    Parameters
    ----------
    todo : list of (CellGroup, ndarray)
        The cells to run: groups (anything with ``n_train``) with split indices.
    max_examples : int
        Training examples a batch holds at most (the pipeline's ``batch_examples``).
    n_workers : int
        Workers the batches are shared by.
    min_seconds : float
        Estimated work a batch holds at least, once the pace is known.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace as G
    >>> from dolb.experiment.cells import examples_of
    >>> batches = Batcher([(G(n_train=10), np.arange(1000))], max_examples=600)
    >>> [sum(len(indices) for _, indices in batch) for batch in batches]
    [60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 60, 50, 25, 12, 6, 3, 3, 1]

    Told that 600 examples took 0.5 s, it cuts no batch under 0.25 s (300 examples):

    >>> batches = Batcher([(G(n_train=10), np.arange(1000))], max_examples=600)
    >>> first = next(batches)
    >>> batches.took(examples_of(first), 0.5)
    >>> [sum(len(indices) for _, indices in batch) for batch in batches][-4:]
    [60, 50, 30, 20]
    """

    def __init__(self, todo: list[tuple[CellGroup, np.ndarray]], max_examples: int, n_workers: int = 1,
                 min_seconds: float = MIN_TASK_SECONDS) -> None:
        self.todo = [(group, indices) for group, indices in todo if len(indices)]
        self.max_examples, self.n_workers, self.min_seconds = max_examples, n_workers, min_seconds
        self.remaining = examples_of(self.todo)
        self.finest = max(1, self.remaining // (FINEST_SHARE * n_workers))
        self.coarsest = max(self.finest, min(max_examples, self.remaining // (COARSEST_SHARE * n_workers)))
        self.item, self.start = 0, 0  # the next cell: todo[item], its split indices from start
        self.seconds, self.examples_timed = 0.0, 0
        self.cut = 0
        """Batches cut so far."""

    def took(self, examples: int, seconds: float) -> None:
        """A finished batch of ``examples`` training examples took ``seconds`` of work."""
        self.examples_timed += examples
        self.seconds += seconds

    def floor(self) -> int:
        """Examples a batch holds at least: ``min_seconds`` of work at the pace seen so
        far (at most ``max_examples``); 0 before any batch was timed."""
        if self.seconds <= 0.0:
            return 0
        return min(self.max_examples, math.ceil(self.min_seconds * self.examples_timed / self.seconds))

    def __iter__(self) -> Batcher:
        return self

    def __next__(self) -> Batch:
        if self.item == len(self.todo):
            raise StopIteration
        guided = self.remaining // (GUIDED_SHARE * self.n_workers)
        room = max(self.finest, min(self.coarsest, guided), self.floor())
        batch: Batch = []
        while self.item < len(self.todo):
            group, indices = self.todo[self.item]
            fits = min(len(indices) - self.start, room // group.n_train)
            if fits <= 0:
                if batch:
                    break
                fits = 1  # a cell larger than the limit runs alone
            batch.append((group, indices[self.start : self.start + fits]))
            room -= group.n_train * fits
            self.remaining -= group.n_train * fits
            self.start += fits
            if self.start == len(indices):
                self.item, self.start = self.item + 1, 0
        self.cut += 1
        return batch
