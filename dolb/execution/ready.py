"""Cells that become ready to run while others run, cut into batches as the cluster
takes them: the batch source of a sweep's tuning (see :mod:`dolb.execution.tuning`).

Cells are added with a rank and taken lowest rank first (a tuning ranks the cells that
end a chain of rungs before those that start one); the first entry of a rank is its
class. A batch takes the ready cells in that order up to 1 /
(:data:`~dolb.execution.batches.GUIDED_SHARE` × workers) of the ready work of its first
cell's class, no less than the batcher's floor of estimated work once cells have been
timed (:data:`~dolb.execution.batches.MIN_TASK_SECONDS`, more on a large cluster), and
at most ``max_examples`` training examples when that is set; a cell larger than that
runs alone. The timings are kept across everything this source cuts (the rungs of a
tuning share them), and a cell is priced as :meth:`Batcher.cell_seconds
<dolb.execution.batches.Batcher.cell_seconds>` prices it. Why: docs/design/execution.md.

Examples
--------
>>> from types import SimpleNamespace as G
>>> ready = ReadyCells(max_examples=1_000, n_workers=1)
>>> small, large = G(n_train=10), G(n_train=100)
>>> ready.add((1,), small, np.arange(40))
>>> ready.add((0,), large, np.arange(2))
>>> [[(g.n_train, len(i)) for g, i in batch] for batch in ready]  # class 0 first; half of its class's ready work
[[(100, 1)], [(100, 1)], [(10, 20)], [(10, 10)], [(10, 5)], [(10, 2)], [(10, 1)], [(10, 1)], [(10, 1)]]
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import Counter

import numpy as np

from dolb.execution.batches import GUIDED_SHARE, Batch, Batcher, Paces
from dolb.experiment.cells import CellGroup


class ReadyCells:
    """Cells ready to run, by rank; an iterator of batches that stops when none is ready
    (more may be added later).

    Parameters
    ----------
    max_examples : int or None
        Training examples a batch holds at most (the pipeline's ``batch_examples``;
        None: no such cap).
    n_workers : int
        Workers the batches are shared by.
    """

    def __init__(self, max_examples: int | None, n_workers: int) -> None:
        self.paces = Batcher([], max_examples, n_workers)  # a batcher of no cells: the timings only
        self.max_examples, self.n_workers = self.paces.max_examples, n_workers
        self.heap: list = []
        self.order = itertools.count()  # ties of rank keep the order cells were added in
        self.sizes: dict = {}  # a class -> a cell's training examples -> ready cells of that size
        self.cut = 0
        """Batches cut so far."""

    def add(self, rank: tuple, group: CellGroup, indices: np.ndarray) -> None:
        """Make the cells of ``group`` at split ``indices`` ready, with ``rank``."""
        if len(indices):
            heapq.heappush(self.heap, (rank, next(self.order), group, indices))
            self.sizes.setdefault(rank[0], Counter())[group.n_train] += len(indices)

    def took(self, paces: Paces) -> None:
        """Finished cells took this long (see :meth:`Batcher.took`)."""
        self.paces.took(paces)

    def _work(self, size: int) -> float:
        """A cell's work: its estimated seconds once cells have been timed, else its examples."""
        return self.paces.cell_seconds(size) if self.paces.timed else float(size)

    def __iter__(self) -> ReadyCells:
        return self

    def __next__(self) -> Batch:
        if not self.heap:
            raise StopIteration
        ready = sum(count * self._work(size) for size, count in self.sizes[self.heap[0][0][0]].items())
        room = ready / (GUIDED_SHARE * self.n_workers)
        if self.paces.timed:
            room = max(room, self.paces.min_seconds)
        batch: Batch = []
        examples = 0
        while self.heap:
            rank, order, group, indices = self.heap[0]
            size, work = group.n_train, self._work(group.n_train)
            fits = min(len(indices), (self.max_examples - examples) // size,
                       math.floor(room / work) if work > 0.0 else len(indices))
            if fits <= 0:
                if batch:
                    break
                fits = 1  # a cell larger than the limits runs alone
            heapq.heappop(self.heap)
            if fits < len(indices):
                heapq.heappush(self.heap, (rank, order, group, indices[fits:]))
            if batch and batch[-1][0] is group:
                batch[-1] = (group, np.concatenate([batch[-1][1], indices[:fits]]))
            else:
                batch.append((group, indices[:fits]))
            self.sizes[rank[0]][size] -= fits
            room -= fits * work
            examples += fits * size
        self.cut += 1
        return batch


__all__ = ["ReadyCells"]
