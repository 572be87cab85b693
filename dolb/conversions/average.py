"""Averaging: (1/m) Σ_{t=1..m} H_{t−1}, the average of the hypotheses used on the m
rounds so far (each distinct hypothesis weighted by the number r(h) of rounds it was
used), maintained on the fly. For SGD this is averaged SGD (Polyak–Ruppert averaging
of the iterates used for prediction).

Lazy averaging under w = s·v: the running sum S = Σ_t s_t v_t is kept as S = a·v + u
(a scalar, u a vector). A round that uses the hypothesis s·v adds s to a (O(1)); an
update v ← v + Δ (Δ sparse) keeps S unchanged by u ← u − a·Δ (O(nnz(Δ))); when the
learner folds its scale into v (v ← φ·v, O(d), rare), a·v is folded into u and a reset.

When the learner keeps the update log of :mod:`.history` anyway (for suffix or cutoff
averaging), nothing is maintained while streaming: the output is the weighted sum
Σ_i r_i·h_i / m of the logged hypotheses, built in the same pass over the log as theirs.
"""

from __future__ import annotations

import numba
import numpy as np

from dolb.conversions.hypothesis import linear_hypothesis
from dolb.conversions.protocol import Conversion


@numba.njit(cache=True, inline="always")
def on_round(st, s, rnd, age, loss):
    """The hypothesis s·v is used on one more round."""
    st[1][0] += s


@numba.njit(cache=True, inline="always")
def on_change(st, idx, start, delta, nnz, s_new, age):
    """v[idx[start + j]] grew by delta[j], j < nnz."""
    u = st[0]
    a = st[1][0]
    for j in range(nnz):
        u[idx[start + j]] -= a * delta[j]


@numba.njit(cache=True, inline="always")
def on_fold(st, phi, v):
    """The representation was rescaled (v is already φ·v_old, the hypothesis is
    unchanged): S = a·v_old + u is folded into u (O(d), as the rescaling), so that the
    cancellation in a·v + u never spans more than one fold."""
    u = st[0]
    a = st[1][0] / phi
    for i in range(v.shape[0]):
        u[i] += a * v[i]
    st[1][0] = 0.0


class Average(Conversion):
    """The ``average`` conversion of a linear learner (from ``learner.history`` when the
    learner keeps the log)."""

    name = "average"
    hooks = {"round": on_round, "change": on_change, "fold": on_fold}

    def __init__(self, learner, log: bool) -> None:
        super().__init__(learner, log)
        self.uses_history = bool(log)
        self.u = np.zeros(0 if log else learner.n_features)
        self.c = np.zeros(1)

    @classmethod
    def off(cls):
        return (np.zeros(0), np.zeros(1))

    @property
    def feeds(self):
        """Nothing while streaming when the output comes from the log."""
        return frozenset() if self.uses_history else super().feeds

    @property
    def arrays(self):
        return (self.u, self.c)

    def log_request(self):
        m = self.learner.rounds
        if not self.uses_history or m == 0:
            return None
        return self.learner.history.rounds_used().astype(np.float64), 1.0 / m, {}

    def weights(self) -> np.ndarray:
        m = self.learner.rounds
        if m == 0:
            return self.learner.weights()
        request = self.log_request()
        if request is not None:
            return self.learner.history.weighted_sum(request[0]) * request[1]
        return (self.c[0] * self.learner.v + self.u) / m

    def output(self):
        return linear_hypothesis(self.weights())
