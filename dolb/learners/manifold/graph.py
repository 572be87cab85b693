"""Online manifold regularisation's compiled step, on the representers of a
:class:`~dolb.learners.kernel.kernels.SupportRows` store and their Gram matrix.

f_t = Σ_i α_i K(x_i, ·) over the stored representers x_i (slot s holds α_s and, in its
``LABEL`` column, y_s for a labelled example and 0 otherwise). ``gram[r, s]`` is
K(x_r, x_s) for the live slots, kept in step with the store, so f_t at every
representer costs O(n²) arithmetic and no kernel evaluation per step.

The step on x_t (t counting the examples learned) is the gradient step
f_{t+1} = f_t − η_t ∂J_t(f_t) on the instantaneous risk
J_t(f) = (T/l)·δ(y_t)·max(0, 1 − y_t f(x_t)) + (λ₁/2)‖f‖²_K
+ λ₂·(t − 1)/n·Σ_i (f(x_i) − f(x_t))² w_it, w_it = exp(−‖x_i − x_t‖²/2σ²):

* α_i ← (1 − η_tλ₁) α_i − 2η_tλ₂ (t − 1)/n (f_t(x_i) − f_t(x_t)) w_it, every i;
* x_t joins with α_t = 2η_tλ₂ (t − 1)/n Σ_i (f_t(x_i) − f_t(x_t)) w_it
  + η_t (T/l) y_t [y_t labelled and y_t f_t(x_t) < 1].

Keeping every example (n = t − 1) is the exact algorithm; with a buffer of them the graph
term is scaled up to the t − 1 edges it stands for, and :func:`project_out` drops a
representer and re-fits the others (kernel matching pursuit). On the way, O(n) a round,
the step keeps the online risk's sum Σ_t J_t(f_t) (``F[RISK]``) and the averaged
hypothesis f̄_t = (1/t) Σ_{u ≤ t} f_u as coefficients on the same representers (the
store's ``MEAN`` column). How the Gram matrix and f̄ are kept, and what f̄ is with a
buffer: docs/design/kernel-learners.md.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numba
import numpy as np

from dolb.learners.kernel.kernels import (
    ALPHA,
    EVALS,
    KDIAG,
    LABEL,
    MEAN,
    ROUNDS,
    SQNORM,
    add_row,
    dots,
    from_dot,
    has_room,
    oldest_slot,
    remove_slot,
    squared_norm,
    weighted_sum,
)

StepParams = namedtuple(
    "StepParams", ["lam1", "lam2", "eta", "sqrt_schedule", "label_weight", "buffer", "keep_labelled"]
)
"""What the compiled step reads: λ₁, λ₂, η₀, whether η_t = η₀/√t (else η₀), T/l, the
buffer size τ (0: no limit) and whether labelled examples stay in the buffer first."""

PROJECTION_RCOND = 1e-8
"""Singular values of the kept representers' Gram matrix below this fraction of the
largest are treated as zero by the projection's least-squares solve. RBF Gram matrices
of nearby points are singular to rounding (condition 1e16 on the spirals); solved to
machine precision, the projection's coefficients grew to 1e20 within 20,000 examples
(τ = 200) and the learner failed; at 1e-8 they stay below 100, and the residual is
orthogonal to the kept representers up to the directions left out."""

RISK = 1
"""``F[RISK]`` (the kernel learners' float state, ``F[BIAS]`` unused): Σ_t J_t(f_t)."""


@numba.njit(cache=True)
def values_at_representers(gram, alpha, n, out):
    """out[j] = f(x_j) = Σ_i α_i K(x_i, x_j) for the first n representers (read along
    row j: the matrix is symmetric, and rows are contiguous)."""
    for j in range(n):
        acc = 0.0
        for i in range(n):
            acc += alpha[i] * gram[j, i]
        out[j] = acc


@numba.njit(cache=True)
def instantaneous_risk(P, f, target, alpha, values, weights, n, scale):
    """J_t(f_t) = (T/l)·δ(y_t)·max(0, 1 − y_t f) + (λ₁/2) Σ_i α_i f_t(x_i)
    + λ₂ scale Σ_i (f_t(x_i) − f)² w_i, from the same numbers as :func:`coefficient_step`
    (before it)."""
    hinge = P.label_weight * max(0.0, 1.0 - target * f) if target != 0.0 else 0.0
    norm = graph = 0.0
    for s in range(n):
        norm += alpha[s] * values[s]
        graph += (values[s] - f) ** 2 * weights[s]
    return hinge + 0.5 * P.lam1 * norm + P.lam2 * scale * graph


@numba.njit(cache=True)
def running_mean(alpha, mean, n, t):
    """ᾱ_i ← ᾱ_i + (α_i − ᾱ_i)/t for the first n coefficients: f̄ takes in f_t."""
    for s in range(n):
        mean[s] += (alpha[s] - mean[s]) / t


@numba.njit(cache=True)
def coefficient_step(P, t, f, target, alpha, values, weights, n, scale):
    """The gradient step of round t on the coefficients of n representers, given
    f_t(x_t) = f, f_t at the representers (``values``) and their edge weights to x_t
    (``weights``, each edge counted ``scale`` times): α_i ← (1 − η_tλ₁) α_i − 2η_tλ₂
    scale (f_t(x_i) − f_t(x_t)) w_i. Returns the coefficient of K(x_t, ·):
    2η_tλ₂ scale Σ_i (f_t(x_i) − f_t(x_t)) w_i + η_t (T/l) y_t [``target`` ≠ 0 and
    y_t f < 1]."""
    step = P.eta / math.sqrt(t) if P.sqrt_schedule else P.eta
    pull = 2.0 * step * P.lam2 * scale
    shrink = 1.0 - step * P.lam1
    new = 0.0
    for s in range(n):
        edge = (values[s] - f) * weights[s]
        alpha[s] = shrink * alpha[s] - pull * edge
        new += edge
    new *= pull
    if target != 0.0 and target * f < 1.0:
        new += step * P.label_weight * target
    return new


@numba.njit(cache=True)
def gradient_step(spec, edges, P, store, gram, idx, val, target, row_id, buffers, I, F):
    """The step on x = (idx, val) (``target``: ±1, or 0 when unlabelled): returns
    f_t(x_t), then adds J_t(f_t) to F[RISK], takes f_t into the average, updates the
    coefficients and stores x as a representer (room checked). ``edges`` is the RBF
    spec of the edge weights (γ = 1/2σ²); ``buffers`` are d zeros, then three arrays of
    the store's capacity (kernel row, edge weights, f at the representers)."""
    work, row, weights, values = buffers
    slot_f = store[5]
    alpha = slot_f[:, ALPHA]
    n = store[7][0]
    sq_x = squared_norm(val)
    dots(store, idx, val, work, row)
    for s in range(n):
        weights[s] = from_dot(edges, row[s], sq_x, slot_f[s, SQNORM])
        row[s] = from_dot(spec, row[s], sq_x, slot_f[s, SQNORM])
    I[EVALS] += n
    I[ROUNDS] += 1
    f = weighted_sum(store, row, n)
    t = I[ROUNDS]
    values_at_representers(gram, alpha, n, values)
    scale = (t - 1) / n if n > 0 else 0.0
    F[RISK] += instantaneous_risk(P, f, target, alpha, values, weights, n, scale)
    running_mean(alpha, slot_f[:, MEAN], n, t)
    new = coefficient_step(P, t, f, target, alpha, values, weights, n, scale)
    k = add_row(spec, store, idx, val, sq_x, row_id)
    alpha[k] = new
    slot_f[k, LABEL] = target
    for s in range(n):
        gram[s, k] = gram[k, s] = row[s]
    gram[k, k] = slot_f[k, KDIAG]
    return f


@numba.njit(cache=True)
def remove_representer(store, gram, s):
    """Remove representer s from the store and the Gram matrix (the last slot moves in)."""
    last = store[7][0] - 1
    if s != last:
        gram[s, :last + 1] = gram[last, :last + 1]
        gram[:last + 1, s] = gram[:last + 1, last]
    remove_slot(store, s)


@numba.njit(cache=True)
def project_out(store, gram, r):
    """Kernel matching pursuit's projection: drop representer r and give the others the
    coefficients β minimising ‖Σ_i α_i K(x_i, ·) − Σ_k β_k K(x_k, ·)‖²_K, i.e.
    K_kk β = K_kk α_k + K_kr α_r: β = α_k + α_r z with K_kk z = K_kr (the minimum-norm
    least-squares solution, singular values below PROJECTION_RCOND of the largest left
    out, so a singular K_kk, from repeated points, is no error). The residual is then
    orthogonal in the RKHS to every kept K(x_k, ·), up to those directions. The averaged
    hypothesis's coefficients are projected alike. O(n³)."""
    n = store[7][0]
    kept = np.empty(n - 1, np.int64)
    m = 0
    for s in range(n):
        if s != r:
            kept[m] = s
            m += 1
    gram_kept = np.empty((m, m))
    towards_r = np.empty(m)
    for a in range(m):
        towards_r[a] = gram[kept[a], r]
        for b in range(m):
            gram_kept[a, b] = gram[kept[a], kept[b]]
    z = np.linalg.lstsq(gram_kept, towards_r, PROJECTION_RCOND)[0]
    slot_f = store[5]
    for a in range(m):
        slot_f[kept[a], ALPHA] += slot_f[r, ALPHA] * z[a]
        slot_f[kept[a], MEAN] += slot_f[r, MEAN] * z[a]
    remove_representer(store, gram, r)


@numba.njit(cache=True)
def omr_block(spec, edges, P, indptr, indices, data, y, ids, start, store, gram, buffers, I, F, pred):
    """Rows start.. of a block: predict and step; with a buffer (P.buffer > 0), then
    project out the oldest representer (the oldest unlabelled one first, with
    P.keep_labelled) while there are more than P.buffer. Returns where it stopped (the
    end, or a row that needs room in the store)."""
    for t in range(start, y.shape[0]):
        idx, val = indices[indptr[t]:indptr[t + 1]], data[indptr[t]:indptr[t + 1]]
        if not has_room(store, idx.shape[0]):
            return t
        pred[t] = gradient_step(spec, edges, P, store, gram, idx, val, y[t], ids[t], buffers, I, F)
        while 0 < P.buffer < store[7][0]:
            project_out(store, gram, oldest_slot(store, P.keep_labelled))
    return y.shape[0]
