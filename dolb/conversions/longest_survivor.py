"""Longest survivor (the "pocket"): the distinct hypothesis used on the most rounds r(h),
the latest one on ties; the live hypothesis counts with its current r.

The best dead hypothesis is never copied when it dies (that would cost O(d) per death,
and with a learner that updates every round every death ties the record). Two ways:

* when the learner keeps the update log of :mod:`.history` anyway (suffix averaging, or
  cutoff averaging on sparse input), only the index of the best dead hypothesis is kept
  (O(1) per death) and it is rebuilt from the log at output time;
* otherwise h_b = s_b·v_b is kept as h_b = s_b·(v − D), with D the sum of the updates Δ
  applied to v since h_b died: O(nnz) per update, memory O(d). D is reset in O(1) when
  a new record is set (every death ties the record of a learner that updates every
  round): each coordinate carries the generation (record number) its D value belongs
  to, and a value of an older generation counts as 0.
"""

from __future__ import annotations

import numba
import numpy as np

from dolb.conversions.hypothesis import linear_hypothesis
from dolb.conversions.protocol import Conversion

# st = (D, stamp, fs, ist): D[p] counts only when stamp[p] == ist[0], the generation
# (number of records set); fs[0] = s_b; ist[1] = r of the best dead hypothesis (0: none
# yet), ist[2] = 1 when the history log is used, ist[3] = the index of the best dead
# hypothesis in it.


@numba.njit(cache=True, inline="always")
def on_death(st, s, v, age, index):
    """The live hypothesis s·v, number ``index`` in the update log, dies after ``age``
    rounds."""
    D, stamp, fs, ist = st
    if age < ist[1]:
        return
    ist[1] = age
    if ist[2] != 0:
        ist[3] = index
    else:
        ist[0] += 1  # D restarts from 0
        fs[0] = s


@numba.njit(cache=True, inline="always")
def on_change(st, idx, start, delta, nnz, s_new, age):
    """v[idx[start + j]] grew by delta[j], j < nnz."""
    D, stamp, fs, ist = st
    gen = ist[0]
    for j in range(nnz):
        if delta[j] == 0.0:
            continue
        p = idx[start + j]
        if stamp[p] == gen:
            D[p] += delta[j]
        else:
            stamp[p] = gen
            D[p] = delta[j]


@numba.njit(cache=True, inline="always")
def on_fold(st, phi, v):
    """v ← φ·v: D lives in v's units too (O(d), as the fold itself)."""
    D, stamp, fs, ist = st
    for p in range(D.shape[0]):
        D[p] *= phi
    fs[0] /= phi


class LongestSurvivor(Conversion):
    """The ``longest_survivor`` conversion of a linear learner."""

    name = "longest_survivor"
    hooks = {"death": on_death, "change": on_change, "fold": on_fold}

    def __init__(self, learner, log: bool) -> None:
        super().__init__(learner, log)
        d = 0 if log else learner.n_features
        self.D = np.zeros(d)
        self.stamp = np.zeros(d, np.int64)
        self.fs = np.zeros(1)
        self.ist = np.array([0, 0, int(log), 0], np.int64)

    @classmethod
    def off(cls):
        return (np.zeros(0), np.zeros(0, np.int64), np.zeros(1), np.zeros(4, np.int64))

    @property
    def uses_history(self) -> bool:
        return bool(self.ist[2])

    @property
    def feeds(self):
        """With the log only the deaths (the record's index); else D follows v too."""
        return frozenset({"death"}) if self.uses_history else super().feeds

    @property
    def arrays(self):
        return (self.D, self.stamp, self.fs, self.ist)

    def log_request(self):
        if not self.uses_history or self.learner.live_age >= self.ist[1]:
            return None
        one = np.zeros(self.learner.history.n_hypotheses)
        one[self.ist[3]] = 1.0
        return one, 1.0, {"survivor_rounds": float(self.ist[1])}

    def best(self) -> tuple[np.ndarray, int]:
        """(w, r): the longest survivor and the number of rounds it was used."""
        learner = self.learner
        live = learner.live_age
        if live >= self.ist[1]:
            return learner.weights(), int(live)
        request = self.log_request()
        if request is not None:
            return learner.history.weighted_sum(request[0]), int(self.ist[1])
        D = np.where(self.stamp == self.ist[0], self.D, 0.0)
        return self.fs[0] * (learner.v - D), int(self.ist[1])

    def output(self):
        w, r = self.best()
        return linear_hypothesis(w, {"survivor_rounds": float(r)})
