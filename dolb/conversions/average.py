"""Averaging: (1/m) Σ_{t=1..m} H_{t−1}, the average of the hypotheses used on the m
rounds so far (each distinct hypothesis weighted by the number r(h) of rounds it was
used), maintained on the fly in O(1) per round plus O(nnz) per update.

Lazy averaging under w = s·v: the running sum S = Σ_t s_t v_t is kept as S = a·v + u
(a scalar, u a vector). A round that uses the hypothesis s·v adds s to a (O(1)); an
update v ← v + Δ (Δ sparse) keeps S unchanged by u ← u − a·Δ (O(nnz(Δ))); a rescaling
of the representation v ← φ·v divides a by φ. For SGD this is averaged SGD (Polyak–
Ruppert averaging of the iterates used for prediction).
"""

from __future__ import annotations

import numba
import numpy as np

from dolb.conversions.output import linear_hypothesis


@numba.njit(cache=True)
def on_round(st, s):
    """The hypothesis s·v is used on one more round."""
    st[1][0] += s


@numba.njit(cache=True)
def on_change(st, idx, delta, nnz):
    """v[idx[j]] grew by delta[j], j < nnz."""
    u = st[0]
    a = st[1][0]
    for j in range(nnz):
        u[idx[j]] -= a * delta[j]


@numba.njit(cache=True)
def on_fold(st, phi):
    """The representation was rescaled: v ← φ·v, s ← s/φ (the hypothesis is unchanged)."""
    st[1][0] /= phi


def off():
    """Kernel arguments when the conversion is not requested."""
    return (np.zeros(0), np.zeros(1))


class Average:
    """The ``average`` conversion of a linear learner."""

    name = "average"

    def __init__(self, learner) -> None:
        self.learner = learner
        self.u = np.zeros(learner.n_features)
        self.c = np.zeros(1)

    @property
    def arrays(self):
        return (self.u, self.c)

    def reserve(self, rows: int, nnz: int) -> None:
        """Nothing grows."""

    def weights(self) -> np.ndarray:
        m = self.learner.rounds
        if m == 0:
            return np.zeros(self.learner.n_features)
        return (self.c[0] * self.learner.v + self.u) / m

    def output(self):
        return linear_hypothesis(self.weights())
