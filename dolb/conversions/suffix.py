"""Suffix averaging (Dekel & Singer, "Data-driven online to batch conversions", NIPS
2005/2006): the average of the hypotheses used on the last s rounds,
(1/s) Σ_{t=m−s+1..m} H_{t−1}, with s = 1..m chosen to minimise the risk bound of
:mod:`.bound` with N = s and L̂ = the mean loss of those s rounds. Ties go to the
longest suffix (the most averaging), as ties of cutoff averaging go to the smallest k.

Memory O(m): the loss of every round, and the update log of :mod:`.history`.
"""

from __future__ import annotations

import numba
import numpy as np

from dolb.conversions.bound import DELTA, confidence, risk_bound
from dolb.conversions.hypothesis import linear_hypothesis
from dolb.conversions.protocol import Conversion, grow


@numba.njit(cache=True, inline="always")
def on_round(st, s, rnd, age, loss):
    """Round ``rnd`` (1-based) suffered ``loss``."""
    st[0][rnd - 1] = loss


class Suffix(Conversion):
    """The ``suffix`` conversion of a linear learner (needs ``learner.history``)."""

    name = "suffix"
    hooks = {"round": on_round}

    def __init__(self, learner, log: bool) -> None:
        super().__init__(learner, log)
        self.rloss = np.zeros(64)

    @classmethod
    def requires_log(cls, sparse):
        return True

    @classmethod
    def off(cls):
        return (np.zeros(0),)

    @property
    def feeds(self):
        return frozenset({"round", "loss"})

    @property
    def arrays(self):
        return (self.rloss,)

    def reserve(self, rows: int, nnz: int) -> None:
        self.rloss = grow(self.rloss, self.learner.rounds + rows)

    def in_use(self) -> dict[str, int]:
        return {"rloss": self.learner.rounds}

    def bounds(self, delta: float = DELTA) -> np.ndarray:
        """B(s) for s = 1..m (index s − 1)."""
        m = self.learner.rounds
        if m == 0:
            return np.zeros(0)
        tail = np.cumsum(self.rloss[:m][::-1])  # tail[s-1] = loss of the last s rounds
        return risk_bound(tail, np.arange(1, m + 1), self.learner.loss_bound, confidence(m, delta))

    def choose(self, delta: float = DELTA) -> tuple[int, float]:
        """(s, B(s)) minimising the bound, the longest suffix on ties."""
        b = self.bounds(delta)
        if b.shape[0] == 0:
            return 0, float("nan")
        s = b.shape[0] - int(np.argmin(b[::-1]))
        return s, float(b[s - 1])

    def coefficients(self, s: int) -> np.ndarray:
        """ω_i = number of the last s rounds on which logged hypothesis i was used."""
        m = self.learner.rounds
        if not 1 <= s <= m:
            raise ValueError(f"suffix length must be in 1..{m}, got {s}")
        r = self.learner.history.rounds_used()
        last = np.cumsum(r)  # hypothesis i is used on rounds last[i]-r[i]+1 .. last[i]
        first = last - r + 1
        overlap = np.minimum(last, m) - np.maximum(first, m - s + 1) + 1
        return np.clip(overlap, 0, None).astype(np.float64)

    def log_request(self):
        """(weights, factor, info) of the output as a weighted sum of logged hypotheses,
        or None (no rounds yet)."""
        s, b = self.choose()
        if s == 0:
            return None
        return self.coefficients(s), 1.0 / s, {"suffix_length": float(s), "suffix_bound": b}

    def weights(self, s: int) -> np.ndarray:
        """(1/s) Σ of the hypotheses used on the last s rounds."""
        return self.learner.history.weighted_sum(self.coefficients(s)) / s

    def output(self):
        request = self.log_request()
        if request is None:
            info = {"suffix_length": 0.0, "suffix_bound": float("nan")}
            return linear_hypothesis(self.learner.weights(), info)
        w = self.learner.history.weighted_sum(request[0]) * request[1]
        return linear_hypothesis(w, request[2])
