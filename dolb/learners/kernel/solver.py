"""LASVM's PROCESS, REPROCESS and FINISH (Bordes, Ertekin, Weston & Bottou, JMLR 2005),
compiled, on the support vectors of a :class:`~.kernels.SupportRows` store and the rows
of a :class:`~.cache.RowCache`.

Dual: maximise Σ α_s y_s − ½ Σ α_s α_r K_sr with Σ α_s = 0 and A_s ≤ α_s ≤ B_s, A_s =
min(0, C y_s), B_s = max(0, C y_s); g_s = y_s − Σ_r α_r K_sr. ``P`` is (C, τ, seeds per
class); ``F`` holds b and δ; ``I`` the counts (:data:`EVALS`, ...).
"""

from __future__ import annotations

import numba

from dolb.learners.kernel.cache import claim, fill_column, lookup, move_slot
from dolb.learners.kernel.kernels import (
    ALPHA,
    BIAS,
    EVALS,
    GRAD,
    KDIAG,
    LABEL,
    SQNORM,
    add_row,
    has_room,
    kernel_row,
    remove_slot,
    scored_row,
    slot_entries,
)

SEEN_NEG, SEEN_POS, STEPS = range(2, 5)  # after EVALS and ROUNDS (kernels.py)
"""Positions in ``I``: kernel evaluations, rounds, examples of each class, direction steps."""
GAP = 1  # after BIAS (kernels.py)
"""Position in ``F``: δ = g_i − g_j of the last REPROCESS."""
MIN_CURVATURE = 1e-12
"""Floor of K_ii + K_jj − 2K_ij in a direction step (duplicate points)."""


@numba.njit(cache=True)
def row_line(spec, store, cache, s, buffers, I):
    """The cache line holding slot s's kernel row, computed on a miss."""
    line = lookup(cache, s)
    if line >= 0:
        return line
    idx_buf, val_buf, work, row = buffers
    nnz = slot_entries(store, s, idx_buf, val_buf)
    n = kernel_row(spec, store, idx_buf[:nnz], val_buf[:nnz], store[5][s, SQNORM], work, row)
    I[EVALS] += n
    line = claim(cache, s)
    lines = cache[0]
    for r in range(n):
        lines[line, r] = row[r]
    return line


@numba.njit(cache=True)
def extremes(store, C):
    """(i, j): i = argmax g_s over α_s < B_s, j = argmin g_s over α_s > A_s (−1: none)."""
    slot_f = store[5]
    i = j = -1
    for s in range(store[7][0]):
        a, g, y = slot_f[s, ALPHA], slot_f[s, GRAD], slot_f[s, LABEL]
        if a < max(0.0, C * y) and (i < 0 or g > slot_f[i, GRAD]):
            i = s
        if a > min(0.0, C * y) and (j < 0 or g < slot_f[j, GRAD]):
            j = s
    return i, j


@numba.njit(cache=True)
def direction_step(spec, store, cache, C, i, j, buffers, I):
    """α_i += λ, α_j −= λ, λ = min{(g_i − g_j)/(K_ii + K_jj − 2K_ij), B_i − α_i,
    α_j − A_j}; g_s −= λ(K_is − K_js) for every s."""
    slot_f = store[5]
    li = row_line(spec, store, cache, i, buffers, I)
    lj = row_line(spec, store, cache, j, buffers, I)
    lines = cache[0]
    curvature = max(slot_f[i, KDIAG] + slot_f[j, KDIAG] - 2.0 * lines[li, j], MIN_CURVATURE)
    lam = (slot_f[i, GRAD] - slot_f[j, GRAD]) / curvature
    lam = min(lam, max(0.0, C * slot_f[i, LABEL]) - slot_f[i, ALPHA], slot_f[j, ALPHA] - min(0.0, C * slot_f[j, LABEL]))
    slot_f[i, ALPHA] += lam
    slot_f[j, ALPHA] -= lam
    row_i, row_j = lines[li], lines[lj]
    for s in range(store[7][0]):
        slot_f[s, GRAD] -= lam * (row_i[s] - row_j[s])
    I[STEPS] += 1


@numba.njit(cache=True)
def process(spec, store, cache, P, idx, val, sq_x, y, row_id, sum_row, buffers, I):
    """PROCESS(k) for a new example whose kernel row against the support vectors is in
    ``buffers``' row (``sum_row`` = Σ α_s K_ks): x joins S with α = 0, g = y − Σ α_s
    K_ks, its row cached; then the step with the extreme opposite, if τ-violating."""
    C, tau = P[0], P[1]
    row = buffers[3]
    k = add_row(spec, store, idx, val, sq_x, row_id)
    slot_f = store[5]
    slot_f[k, LABEL] = y
    slot_f[k, GRAD] = y - sum_row
    row[k] = slot_f[k, KDIAG]
    line = claim(cache, k)
    lines = cache[0]
    for r in range(k + 1):
        lines[line, r] = row[r]
    fill_column(cache, k, row)
    i, j = extremes(store, C)
    if y > 0:
        i = k
    else:
        j = k
    if i >= 0 and j >= 0 and slot_f[i, GRAD] - slot_f[j, GRAD] > tau:
        direction_step(spec, store, cache, C, i, j, buffers, I)


@numba.njit(cache=True)
def reprocess(spec, store, cache, P, F, buffers, I):
    """REPROCESS: a step on the most violating pair if τ-violating; then, with the pair
    chosen again, the removal of every s with α_s = 0 and (y_s = −1 and g_s ≥ g_i, or
    y_s = +1 and g_s ≤ g_j); b = (g_i + g_j)/2, δ = g_i − g_j. Returns whether it
    stepped (nothing is done without a pair)."""
    C, tau = P[0], P[1]
    slot_f = store[5]
    i, j = extremes(store, C)
    if i < 0 or j < 0:
        return False
    stepped = slot_f[i, GRAD] - slot_f[j, GRAD] > tau
    if stepped:
        direction_step(spec, store, cache, C, i, j, buffers, I)
        i, j = extremes(store, C)
        if i < 0 or j < 0:
            return True
    g_i, g_j = slot_f[i, GRAD], slot_f[j, GRAD]
    for s in range(store[7][0] - 1, -1, -1):
        y = slot_f[s, LABEL]
        if slot_f[s, ALPHA] == 0.0 and ((y < 0 and slot_f[s, GRAD] >= g_i) or (y > 0 and slot_f[s, GRAD] <= g_j)):
            last = store[7][0] - 1
            remove_slot(store, s)
            move_slot(cache, s, last)
    F[BIAS] = 0.5 * (g_i + g_j)
    F[GAP] = g_i - g_j
    return stepped


@numba.njit(cache=True)
def finish(spec, store, cache, P, F, buffers, I):
    """FINISH: REPROCESS until δ ≤ τ (until a REPROCESS makes no step)."""
    while reprocess(spec, store, cache, P, F, buffers, I):
        pass


@numba.njit(cache=True)
def decision_bias(F, I):
    """b of f(x) = Σ α_s K(x_s, x) + b: that of the last REPROCESS (0 before one), except
    while the examples seen so far are of one class only. Then no pair (i, j) exists,
    every α is 0 and b's optimal interval is one-sided (b ≥ 1 for positives, b ≤ −1 for
    negatives: the SVM on one class is w = 0 and a b that meets every margin), so b is its
    finite end, the class's label: f predicts the only class seen, as LIBSVM trained on
    one class does. Before any example, f ≡ 0 (a mistake for the 0-1 loss)."""
    if I[SEEN_NEG] == 0 and I[SEEN_POS] > 0:
        return 1.0
    if I[SEEN_POS] == 0 and I[SEEN_NEG] > 0:
        return -1.0
    return F[BIAS]


@numba.njit(cache=True)
def holds(store, row_id):
    """Whether an example of this id is a support vector (ids < 0 never are)."""
    ids = store[6]
    if row_id >= 0:
        for s in range(store[7][0]):
            if ids[s] == row_id:
                return True
    return False


@numba.njit(cache=True)
def lasvm_block(spec, P, seeding, indptr, indices, data, y, ids, start, store, cache, F, I, buffers, pred):
    """Rows start.. of a block: predict, PROCESS (unless the example is a support vector
    already), then REPROCESS, except for the first P[2] examples of each class when
    ``seeding``. Returns where it stopped (the end, or a row that needs room)."""
    row = buffers[3]
    for t in range(start, y.shape[0]):
        idx, val = indices[indptr[t]:indptr[t + 1]], data[indptr[t]:indptr[t + 1]]
        if not has_room(store, idx.shape[0]):
            return t
        n, sq_x, sum_row = scored_row(spec, store, idx, val, buffers[2], row, I)
        pred[t] = sum_row + decision_bias(F, I)
        if not holds(store, ids[t]):
            process(spec, store, cache, P, idx, val, sq_x, y[t], ids[t], sum_row, buffers, I)
        seen = SEEN_POS if y[t] > 0 else SEEN_NEG
        I[seen] += 1
        if not (seeding and I[seen] <= P[2]):
            reprocess(spec, store, cache, P, F, buffers, I)
    return y.shape[0]
