"""Longest survivor (the "pocket"): the distinct hypothesis used on the most rounds r(h),
the latest one on ties; the live hypothesis counts with its current r.

Streaming cost O(1) per round and O(nnz) per update, memory O(d). The best dead
hypothesis h_b = s_b·v_b is not copied when it dies (that would cost O(d) per death,
and with a learner that updates every round every death ties the record): it is kept
as h_b = s_b·(v − D), with D the sum of the updates Δ applied to v since h_b died. D is
sparse: the coordinates it touches are listed, so resetting it when a new record is set
costs O(number of touched coordinates), which the updates that touched them paid for.
"""

from __future__ import annotations

import numba
import numpy as np

from dolb.conversions.output import linear_hypothesis

# st = (D, mark, touched, fs, ist): fs[0] = s_b; ist[0] = number of touched
# coordinates listed, ist[1] = r of the best dead hypothesis (0: none yet).


@numba.njit(cache=True)
def on_death(st, s, age):
    """The live hypothesis s·v dies after ``age`` rounds (before v changes)."""
    D, mark, touched, fs, ist = st
    if age >= ist[1]:
        for i in range(ist[0]):
            p = touched[i]
            D[p] = 0.0
            mark[p] = 0
        ist[0] = 0
        ist[1] = age
        fs[0] = s


@numba.njit(cache=True)
def on_change(st, idx, delta, nnz):
    """v[idx[j]] grew by delta[j], j < nnz."""
    D, mark, touched, fs, ist = st
    n = ist[0]
    for j in range(nnz):
        p = idx[j]
        D[p] += delta[j]
        if mark[p] == 0:
            mark[p] = 1
            touched[n] = p
            n += 1
    ist[0] = n


@numba.njit(cache=True)
def on_fold(st, phi):
    """v ← φ·v: D lives in v's units too."""
    D, mark, touched, fs, ist = st
    for i in range(ist[0]):
        D[touched[i]] *= phi
    fs[0] /= phi


def off():
    """Kernel arguments when the conversion is not requested."""
    return (np.zeros(0), np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(1), np.zeros(2, np.int64))


class LongestSurvivor:
    """The ``longest_survivor`` conversion of a linear learner."""

    name = "longest_survivor"

    def __init__(self, learner) -> None:
        d = learner.n_features
        self.learner = learner
        self.D = np.zeros(d)
        self.mark = np.zeros(d, np.uint8)
        self.touched = np.zeros(d, np.int64)
        self.fs = np.zeros(1)
        self.ist = np.zeros(2, np.int64)

    @property
    def arrays(self):
        return (self.D, self.mark, self.touched, self.fs, self.ist)

    def reserve(self, rows: int, nnz: int) -> None:
        """Nothing grows."""

    def best(self) -> tuple[np.ndarray, int]:
        """(w, r): the longest survivor and the number of rounds it was used."""
        learner = self.learner
        live = learner.live_age
        if live >= self.ist[1]:
            return learner.weights(), int(live)
        return self.fs[0] * (learner.v - self.D), int(self.ist[1])

    def output(self):
        w, r = self.best()
        return linear_hypothesis(w, {"survivor_rounds": float(r)})
