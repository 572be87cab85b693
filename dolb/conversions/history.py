"""The update log: every distinct hypothesis of a linear learner, stored as the sparse
update that created it, so that any weighted sum Σ_i ω_i·h_i of the hypotheses can be
rebuilt exactly at output time. Shared by :mod:`.suffix` and :mod:`.cutoff`.

Hypothesis i (i = 0 the initial w_0 = 0) is h_i = s_i·v_i with v_0 = 0 and
v_i = φ_i·(v_{i−1} + Δ_i): Δ_i is the sparse change of v at the update that created
h_i (logged as (coordinate, value) pairs, zeros skipped) and φ_i the rescaling of the
representation applied right after it (1 unless the scale was folded into v). Per
hypothesis the log keeps s_i, φ_i, where Δ_i starts in the log and r_i, the number of
rounds it was used (set when it dies; the live one's r is the learner's current age).

Then Σ_i ω_i h_i = Σ_{j≥1} c_j Δ_j with c_j = φ_j·(ω_j s_j + c_{j+1}), c_n = 0: one
backward pass over the hypotheses and one pass over the log, O(#hypotheses + log
length + d). Streaming cost O(nnz(Δ)) per update; memory O(Σ nnz(Δ) + #hypotheses).
"""

from __future__ import annotations

import numba
import numpy as np

from dolb.conversions.protocol import Fed, grow

# st = (hscale, hphi, hstart, hr, lidx, lval, hc): hc[0] = number of hypotheses,
# hc[1] = log length.


@numba.njit(cache=True, inline="always")
def live_index(st):
    """The index in the log of the live hypothesis."""
    return st[6][0] - 1


@numba.njit(cache=True, inline="always")
def on_change(st, idx, start, delta, nnz, s_new, age):
    """The live hypothesis died; the change that made the new one is logged."""
    hscale, hphi, hstart, hr, lidx, lval, hc = st
    i = hc[0]
    n = hc[1]
    hr[i - 1] = age
    hscale[i] = s_new
    hphi[i] = 1.0
    hstart[i] = n
    for j in range(nnz):
        if delta[j] != 0.0:
            lidx[n] = idx[start + j]
            lval[n] = delta[j]
            n += 1
    hc[0] = i + 1
    hc[1] = n


@numba.njit(cache=True, inline="always")
def on_fold(st, phi, v):
    """v ← φ·v right after the latest update."""
    hscale, hphi, hstart, hr, lidx, lval, hc = st
    i = hc[0] - 1
    hphi[i] *= phi
    hscale[i] /= phi


@numba.njit(cache=True)
def weighted_sums(st, weights, out):
    """out[:, q] += Σ_i weights[q, i]·h_i over all logged hypotheses, for every q, in
    one pass over the log (``out`` is d × q: the q sums of one coordinate are adjacent)."""
    hscale, hphi, hstart, hr, lidx, lval, hc = st
    nh = hc[0]
    nq = weights.shape[0]
    c = np.zeros(nq)
    end = hc[1]
    for i in range(nh - 1, 0, -1):
        for q in range(nq):
            c[q] = hphi[i] * (weights[q, i] * hscale[i] + c[q])
        for k in range(hstart[i], end):
            p = lidx[k]
            x = lval[k]
            for q in range(nq):
                out[p, q] += c[q] * x
        end = hstart[i]


class History(Fed):
    """The update log of one linear learner (see the module docstring)."""

    hooks = {"change": on_change, "fold": on_fold}

    def __init__(self, learner, capacity: int = 64) -> None:
        self.bind(learner)
        self.hscale = np.zeros(capacity)
        self.hphi = np.ones(capacity)
        self.hstart = np.zeros(capacity, np.int64)
        self.hr = np.zeros(capacity, np.int64)
        self.lidx = np.zeros(capacity * 4, np.int32)
        self.lval = np.zeros(capacity * 4)
        self.hc = np.array([1, 0], np.int64)
        self.hscale[0] = learner.scale

    @classmethod
    def off(cls):
        return (
            np.zeros(0), np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64),
            np.zeros(0, np.int32), np.zeros(0), np.zeros(2, np.int64),
        )

    @property
    def arrays(self):
        return (self.hscale, self.hphi, self.hstart, self.hr, self.lidx, self.lval, self.hc)

    def reserve(self, rows: int, nnz: int) -> None:
        """Room for ``rows`` more hypotheses and ``nnz`` more logged values."""
        # Worst case every remaining round updates: size for the announced horizon at
        # this block's density once, instead of copying the log at every doubling.
        left = max(int(self.learner.n_train or 0) - self.learner.rounds, rows)
        used = int(self.hc[0])
        for key in ("hscale", "hphi", "hstart", "hr"):
            setattr(self, key, grow(getattr(self, key), used + rows + 1, used, used + left + 1))
        used = int(self.hc[1])
        estimate = used + int(left * nnz / max(rows, 1) * 1.05) + nnz
        self.lidx = grow(self.lidx, used + nnz, used, estimate)
        self.lval = grow(self.lval, used + nnz, used, estimate)

    def in_use(self) -> dict[str, int]:
        hypotheses, logged = int(self.hc[0]), int(self.hc[1])
        return {"hscale": hypotheses, "hphi": hypotheses, "hstart": hypotheses, "hr": hypotheses,
                "lidx": logged, "lval": logged}

    @property
    def n_hypotheses(self) -> int:
        return int(self.hc[0])

    def rounds_used(self) -> np.ndarray:
        """r_i of every hypothesis so far; the live one's is the current age."""
        r = self.hr[: self.n_hypotheses].copy()
        r[-1] = self.learner.live_age
        return r

    def weighted_sum(self, weights: np.ndarray) -> np.ndarray:
        """Σ_i weights[i]·h_i (dense vector)."""
        return self.weighted_sums(np.asarray(weights)[None, :])[0]

    def weighted_sums(self, weights: np.ndarray) -> np.ndarray:
        """Row q: Σ_i weights[q, i]·h_i, all rows in one pass over the log."""
        weights = np.ascontiguousarray(weights, dtype=np.float64)
        if weights.ndim != 2 or weights.shape[1] != self.n_hypotheses:
            raise ValueError(f"need {self.n_hypotheses} weights per row, got shape {weights.shape}")
        out = np.zeros((self.learner.n_features, weights.shape[0]))
        weighted_sums(self.arrays, weights, out)
        return out.T

    @property
    def used_bytes(self) -> int:
        """Bytes holding hypotheses and logged values."""
        return int(self.hc[0]) * 32 + int(self.hc[1]) * 12
