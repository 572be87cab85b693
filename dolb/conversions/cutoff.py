"""Cutoff averaging (Dekel, "From Online to Batch Learning with Cutoff-Averaging", NIPS
2008): H*_k = Σ_h (r(h) − k)_+ · h / N_k, N_k = Σ_h (r(h) − k)_+, with the cutoff k
chosen among 0..m−1 (k with N_k = 0 skipped) to minimise the risk bound of
:mod:`.bound` with L̂_k = (1/N_k)·(loss suffered on the rounds counted in N_k), i.e. on
the rounds where the hypothesis in use was older than k. Ties go to the smallest k.
k = 0 is plain averaging; large k tends to the longest survivor. The live hypothesis
counts with its current r.

Per age a it keeps ``count[a]``, the number of dead hypotheses with r = a, and
``lossage[a]``, the loss suffered on rounds where the hypothesis in use had age a; their
suffix sums give N_k and the loss sum of every k. The vector Σ_h (r(h) − k)_+ h for the
chosen k is built one of two exact ways, fixed at the learner's first block: **log**
(sparse input), from the update log of :mod:`.history` with weights ω_i = (r_i − k)_+;
**buckets** (dense input), as in the paper, from the sum W_r of the dead hypotheses of
each r: H*_k = Σ_{r>k} (r − k) W_r (+ the live one).

With its output the conversion reports (see :meth:`Cutoff.report`) the chosen k and
B(k), N_k and L̂_k of the chosen k, the largest survival time r, and N_k and L̂_k at the
fixed cutoffs :data:`REPORTED_K` (NaN where N_k = 0): the survival-time distribution and
the empirical loss per k, so that a study can show why the bound chose its k. What each
way costs, and why the log on sparse input: docs/design/conversions.md.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from dolb.conversions.bound import DELTA, confidence, risk_bound
from dolb.conversions.hypothesis import linear_hypothesis
from dolb.conversions.protocol import Conversion, grow

REPORTED_K = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
"""Cutoffs at which N_k and L̂_k are reported at every checkpoint (``cutoff_n_k<k>``,
``cutoff_loss_k<k>``)."""
REPORTED = ("cutoff_k", "cutoff_bound", "cutoff_n", "cutoff_loss", "cutoff_max_r") + tuple(
    f"cutoff_{what}_k{k}" for k in REPORTED_K for what in ("n", "loss")
)
"""Names of the numbers the conversion reports with its output (recorded as metrics)."""

# st = (count, lossage, W, slot, rowr, cc): slot[r] = row of W holding W_r (−1: none),
# rowr[row] = its r, cc[0] = rows in use; W has d columns with buckets, none without.


@numba.njit(cache=True, inline="always")
def on_round(st, s, rnd, age, loss):
    """A round used a hypothesis of age ``age`` (1 on its first round) and suffered ``loss``."""
    st[1][age] += loss


@numba.njit(cache=True, inline="always")
def on_death(st, s, v, age, index):
    """The live hypothesis s·v dies after ``age`` rounds (with buckets, before v changes)."""
    count, lossage, W, slot, rowr, cc = st
    count[age] += 1
    if W.shape[1] != 0:  # buckets
        row = slot[age]
        if row < 0:
            row = cc[0]
            slot[age] = row
            rowr[row] = age
            cc[0] = row + 1
        Wr = W[row]
        for p in range(v.shape[0]):
            Wr[p] += s * v[p]


class Cutoff(Conversion):
    """The ``cutoff`` conversion of a linear learner: from the update log when the
    learner keeps it, else from per-r buckets (see the module docstring)."""

    name = "cutoff"
    hooks = {"round": on_round, "death": on_death}

    def __init__(self, learner, log: bool) -> None:
        super().__init__(learner, log)
        self.buckets = not log
        d = learner.n_features if self.buckets else 0
        self.count = np.zeros(64, np.int64)
        self.lossage = np.zeros(64)
        self.W = np.zeros((8 if self.buckets else 0, d))
        self.slot = np.full(64, -1, np.int64)
        self.rowr = np.zeros(self.W.shape[0], np.int64)
        self.cc = np.zeros(1, np.int64)

    @classmethod
    def requires_log(cls, sparse):
        """On sparse input the log (O(nnz) per update) beats the O(d) buckets."""
        return sparse

    @classmethod
    def off(cls):
        return (np.zeros(0, np.int64), np.zeros(0), np.zeros((0, 0)), np.zeros(0, np.int64),
                np.zeros(0, np.int64), np.zeros(1, np.int64))

    @property
    def feeds(self):
        """Buckets add the dying hypothesis: they need v before it changes."""
        wanted = {"round", "loss", "death"}
        return frozenset(wanted | {"dying_v"} if self.buckets else wanted)

    @property
    def arrays(self):
        return (self.count, self.lossage, self.W, self.slot, self.rowr, self.cc)

    def reserve(self, rows: int, nnz: int) -> None:
        """Room for the ages a block of ``rows`` rounds can reach (the live hypothesis's
        age + rows: memory O(max r), not O(m)) and, with buckets, for its new distinct r:
        at most 1 + √(2·rows) (the first death may be of any age, later ones' ages sum
        to at most ``rows``)."""
        need = self.learner.live_age + rows + 2
        self.count = grow(self.count, need)
        self.lossage = grow(self.lossage, need)
        self.slot = grow(self.slot, need, fill=-1)
        if self.buckets:
            need = int(self.cc[0]) + 2 + math.isqrt(2 * rows) + 1
            self.W = grow(self.W, need)
            self.rowr = grow(self.rowr, need)

    def in_use(self) -> dict[str, int]:
        """Ages up to the oldest hypothesis yet (dead, or the live one); with buckets,
        the rows of W in use."""
        died = np.flatnonzero(self.count)
        ages = 1 + max(self.learner.live_age, int(died[-1]) if died.size else 0)
        rows = int(self.cc[0])
        return {"count": ages, "lossage": ages, "slot": ages, "W": rows, "rowr": rows}

    # --- the bound for every k -----------------------------------------------------------

    def table(self) -> tuple[np.ndarray, np.ndarray]:
        """(N_k, loss sum of the rounds counted in N_k) for k = 0..K−1, K the largest r
        (the live hypothesis counted with its current age); N_k > 0 for all of them."""
        live = self.learner.live_age
        count = self.count.copy()
        count[live] += 1
        used = np.flatnonzero(count[1:])
        K = int(used[-1]) + 1 if used.size else 0
        if K == 0:
            return np.zeros(0, np.int64), np.zeros(0)
        r = np.arange(K + 1, dtype=np.int64)
        c = count[: K + 1]
        c[0] = 0
        # tail[k] = Σ_{r>k} x[r]
        tail = lambda x: np.cumsum(x[::-1])[::-1][1:]  # noqa: E731
        n = tail(r * c) - r[:K] * tail(c)
        loss = tail(self.lossage[: K + 1])
        return n, loss

    def bounds(self, delta: float = DELTA) -> np.ndarray:
        """B(k) for k = 0..K−1 (see :meth:`table`)."""
        n, loss = self.table()
        if n.shape[0] == 0:
            return np.zeros(0)
        return risk_bound(loss, n, self.learner.loss_bound, confidence(self.learner.rounds, delta))

    def choose(self, delta: float = DELTA) -> tuple[int, float]:
        """(k, B(k)) minimising the bound, the smallest k on ties."""
        b = self.bounds(delta)
        if b.shape[0] == 0:
            return 0, float("nan")
        k = int(np.argmin(b))
        return k, float(b[k])

    # --- the hypothesis of any k ---------------------------------------------------------

    def _check_k(self, k: int) -> np.ndarray:
        n, _ = self.table()
        if not 0 <= k < n.shape[0]:
            raise ValueError(f"cutoff k must be in 0..{n.shape[0] - 1} (N_k > 0), got {k}")
        return n

    def report(self, k: int, b: float) -> dict[str, float]:
        """What the output of cutoff ``k`` with bound ``b`` reports: ``cutoff_k``,
        ``cutoff_bound``, N_k and L̂_k of ``k`` (``cutoff_n``, ``cutoff_loss``), the
        largest survival time ``cutoff_max_r`` and N_k, L̂_k at each of
        :data:`REPORTED_K` (NaN where N_k = 0); all NaN but k and B before any round."""
        n, loss = self.table()
        K = n.shape[0]

        def at(values: np.ndarray, k: int) -> float:
            return float(values[k]) if k < K else math.nan

        mean = loss / np.maximum(n, 1)
        info = {"cutoff_k": float(k), "cutoff_bound": b, "cutoff_n": at(n, k), "cutoff_loss": at(mean, k),
                "cutoff_max_r": float(K) if K else math.nan}
        for j in REPORTED_K:
            info[f"cutoff_n_k{j}"] = at(n, j)
            info[f"cutoff_loss_k{j}"] = at(mean, j)
        return info

    def log_request(self, k: int | None = None):
        """(weights, factor, info) of H*_k (the bound's choice when k is None) as a
        weighted sum of logged hypotheses, or None (bucket representation, no rounds)."""
        if self.buckets:
            return None
        if k is None:
            k, b = self.choose()
            if math.isnan(b):
                return None
            n, _ = self.table()
        else:
            n = self._check_k(k)
            b = float(self.bounds()[k])
        coef = np.maximum(self.learner.history.rounds_used() - k, 0).astype(np.float64)
        return coef, 1.0 / n[k], self.report(k, b)

    def weights(self, k: int) -> np.ndarray:
        """H*_k = Σ_h (r(h) − k)_+ h / N_k."""
        learner = self.learner
        n = self._check_k(k)
        if not self.buckets:
            coef, factor, _ = self.log_request(k)
            return learner.history.weighted_sum(coef) * factor
        rows = int(self.cc[0])
        coef = np.maximum(self.rowr[:rows] - k, 0).astype(np.float64)
        total = coef @ self.W[:rows] + max(learner.live_age - k, 0) * learner.weights()
        return total / n[k]

    def hypothesis(self, k: int) -> tuple[np.ndarray, float]:
        """(H*_k, B(k)) for any k with N_k > 0."""
        return self.weights(k), float(self.bounds()[k])

    def output(self):
        k, b = self.choose()
        if math.isnan(b):  # no rounds yet
            return linear_hypothesis(self.learner.weights(), self.report(0, b))
        return linear_hypothesis(self.weights(k), self.report(k, b))


def cutoff_hypothesis(learner, k: int) -> tuple[np.ndarray, float]:
    """(H*_k, B(k)) of a learner built with the ``cutoff`` conversion, for any k with
    N_k > 0 (k = 0 .. max r − 1); ``learner.conversion("cutoff").bounds()`` gives B of
    every k."""
    return learner.conversion("cutoff").hypothesis(k)
