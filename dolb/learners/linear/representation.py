"""The hypothesis representation w = s·v of the linear learners, their losses, and the
helpers their steps share.

Every linear learner keeps its hypothesis as w = s · v: a dense vector ``v`` and a scalar
scale ``s`` (``F[SCALE]``). An update changes ``v`` only on the coordinates of the current
example (a sparse Δ) and may change ``s``; shrinking all of w (L2 regularisation) or
projecting it onto a ball is a change of ``s`` alone, so every update costs O(nnz(x)).
``F[NORM2]`` holds ‖v‖² for learners that project (they keep it up to date themselves) and
``F[PHI]`` the product Φ of all rescalings applied to v so far. When |s| leaves
[FOLD_LOW, FOLD_HIGH] the driver folds s into v (v ← s·v, s ← 1: O(d), rare: SGD's L2
shrinking reaches 1e-3 after ln(1000)/(η·α) rounds, the margin Perceptron's projections
after about 7·√m updates); a learner must not assume more about v than w = s·v,
‖v‖² = F[NORM2] and Φ = F[PHI].

The slots of the float array ``F`` and of the integer array ``I`` are named by the
constants below; compiled code reads them as literals (Numba freezes a module's integer
globals), so a named slot costs nothing.
"""

from __future__ import annotations

import math

import numba

from dolb.learners.base import Param
from dolb.learners.linear.params import choice_codes

SCALE, NORM2, PHI = range(3)
"""Slots of ``F``, the representation's floats: the scale s of w = s·v; ‖v‖² (kept by the
learners that project, and set by a fold); the product Φ of the rescalings folded into v."""
N_FLOATS = 3
ROUNDS, AGE = range(2)
"""Slots of ``I``, the driver's counters: the rounds (examples) learned so far; the age of
the live hypothesis, the rounds it has been used on (0 right after an update)."""
N_INTS = 2

# |s| is kept within [FOLD_LOW, FOLD_HIGH]: lazy representations (the averaging
# accumulator a·v + u, the survivor's v − D) lose about log10(range) digits to
# cancellation between two folds, and a fold costs O(d).
FOLD_LOW = 1e-3
FOLD_HIGH = 1e3

LOSSES = ("hinge", "logistic")
HINGE, LOGISTIC = choice_codes(LOSSES, "hinge", "logistic")
LOSS_PARAM = Param("hinge", str, choices=LOSSES, doc="loss: hinge max(0, 1 - y<w,x>) or logistic")


@numba.njit(cache=True, inline="always")
def dloss(kind, y, p):
    """Derivative in p of the loss at prediction p, label y: hinge max(0, 1 − yp) (0 at
    the kink) or logistic ln(1 + exp(−yp))."""
    z = y * p
    if kind == HINGE:
        return -y if z < 1.0 else 0.0
    if z > 0.0:
        e = math.exp(-z)
        return -y * e / (1.0 + e)
    return -y / (1.0 + math.exp(z))


@numba.njit(cache=True, inline="always")
def move(v, delta, idx, start, j, change, direct):
    """Coordinate ``idx[start + j]`` of v moves by ``change``: into ``delta[j]``, which the
    driver applies after the step, or, when ``direct`` (the driver's quiet copy, which
    feeds no part the change), onto v at once. Returns whether v may have changed: True
    into ``delta``, whether it did when ``direct``."""
    if not direct:
        delta[j] = change
        return True
    k = idx[start + j]
    old = v[k]
    new = old + change
    v[k] = new
    return new != old


@numba.njit(cache=True, inline="always")
def scaled_row(v, delta, idx, val, start, nnz, c, direct):
    """The common update v += c·x, each coordinate moved by :func:`move`; returns whether
    v may have changed."""
    moved = False
    for j in range(nnz):
        if move(v, delta, idx, start, j, c * val[start + j], direct):
            moved = True
    return moved


@numba.njit(cache=True, inline="always")
def moved_by(v, delta, idx, start, nnz, direct):
    """For a step whose whole change is in ``delta`` first (it needs :func:`norm_after`):
    v moved by ``delta`` now when ``direct`` (see :func:`move`); returns whether v may
    have changed."""
    if not direct:
        return True
    moved = False
    for j in range(nnz):
        if move(v, delta, idx, start, j, delta[j], True):
            moved = True
    return moved


@numba.njit(cache=True, inline="always")
def norm_after(v, idx, start, delta, nnz, vnorm2):
    """‖v + Δ‖² from ‖v‖² in O(nnz)."""
    for j in range(nnz):
        d = delta[j]
        vnorm2 += d * (2.0 * v[idx[start + j]] + d)
    return max(vnorm2, 0.0)
