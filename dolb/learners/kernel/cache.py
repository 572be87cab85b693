"""A bounded least-recently-used cache of kernel rows, compiled.

Line l of ``lines`` (float32, one column per support-vector slot) holds K(x_s, ·) for
the slot s that owns it; ``line_of[s]`` is the line of slot s (−1: not cached),
``owner[l]`` the slot of line l (−1: free), ``stamp[l]`` when line l was last used. A
miss takes a free line or the least recently used one. The lines follow the store's
slots: a new vector's column is filled in every cached line from its own row (kernels
are symmetric bit for bit), and when the last slot moves into a removed one, so do its
line and its column. The cache never changes a result, only how often rows are
computed: a row computed again is bit-identical.

Its size is ``cache_mb``: max(2, cache_mb · 2^20 / (4 · slots)) lines (two at least: a
step needs two rows at once), so memory stays bounded whatever the stream length.
"""

from __future__ import annotations

import copy

import numba
import numpy as np

HITS, MISSES, CLOCK = range(3)
"""Positions in ``counts``."""


class RowCache:
    """The cache's arrays, sized for ``width`` slots within ``cache_mb``; the compiled
    code takes them as the tuple :attr:`arrays`."""

    def __init__(self, cache_mb: float, width: int) -> None:
        self.cache_mb = cache_mb
        n_lines = max(2, int(cache_mb * 2**20 // (4 * width)))
        self.lines = np.zeros((n_lines, width), np.float32)
        self.line_of = np.full(width, -1, np.int64)
        self.owner = np.full(n_lines, -1, np.int64)
        self.stamp = np.zeros(n_lines, np.int64)
        self.counts = np.zeros(3, np.int64)

    @property
    def arrays(self) -> tuple:
        return self.lines, self.line_of, self.owner, self.stamp, self.counts

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays)

    def resized(self, width: int, n_slots: int) -> RowCache:
        """The cache for ``width`` slots, keeping the most recently used lines that fit
        (their first ``n_slots`` columns) and the counts."""
        new = RowCache(self.cache_mb, width)
        used = np.flatnonzero(self.owner >= 0)
        keep = used[np.argsort(-self.stamp[used], kind="stable")][: new.lines.shape[0]]
        for line, old in enumerate(keep):
            new.lines[line, :n_slots] = self.lines[old, :n_slots]
            new.owner[line] = self.owner[old]
            new.line_of[self.owner[old]] = line
            new.stamp[line] = self.stamp[old]
        new.counts[:] = self.counts
        return new

    def copied(self) -> RowCache:
        """A copy, lines included (a pickled or deep-copied cache comes back empty)."""
        new = copy.copy(self)
        for name in ("lines", "line_of", "owner", "stamp", "counts"):
            setattr(new, name, getattr(self, name).copy())
        return new

    def __getstate__(self):
        """Pickled without its lines: rows are computed again when needed, bit-identical."""
        return {"cache_mb": self.cache_mb, "width": self.lines.shape[1], "counts": self.counts}

    def __setstate__(self, state):
        self.__init__(state["cache_mb"], state["width"])
        self.counts[:] = state["counts"]


@numba.njit(cache=True)
def lookup(cache, s):
    """The line holding slot s's row, marked used (a hit), or −1 (a miss, counted)."""
    _, line_of, _, stamp, counts = cache
    line = line_of[s]
    if line < 0:
        counts[MISSES] += 1
        return -1
    counts[HITS] += 1
    counts[CLOCK] += 1
    stamp[line] = counts[CLOCK]
    return line


@numba.njit(cache=True)
def claim(cache, s):
    """A line for slot s's row, marked used: a free one, else the least recently used
    one (its owner loses it). The caller fills it."""
    _, line_of, owner, stamp, counts = cache
    best = 0
    for line in range(owner.shape[0]):
        if owner[line] < 0:
            best = line
            break
        if stamp[line] < stamp[best]:
            best = line
    if owner[best] >= 0:
        line_of[owner[best]] = -1
    owner[best] = s
    line_of[s] = best
    counts[CLOCK] += 1
    stamp[best] = counts[CLOCK]
    return best


@numba.njit(cache=True)
def fill_column(cache, k, row):
    """Column k (a new slot) of every cached line, from slot k's row: K(x_s, x_k) =
    row[s]."""
    lines, _, owner, _, _ = cache
    for line in range(owner.shape[0]):
        if owner[line] >= 0:
            lines[line, k] = row[owner[line]]


@numba.njit(cache=True)
def move_slot(cache, s, last):
    """Slot ``last`` moves into removed slot s: s's line is freed, ``last``'s line
    and column become s's."""
    lines, line_of, owner, _, _ = cache
    if line_of[s] >= 0:
        owner[line_of[s]] = -1
        line_of[s] = -1
    if s == last:
        return
    line = line_of[last]
    if line >= 0:
        owner[line] = s
        line_of[s] = line
        line_of[last] = -1
    for line in range(owner.shape[0]):
        if owner[line] >= 0:
            lines[line, s] = lines[line, last]
