"""Throughput of the linear online learners, bare and with every conversion attached.

Two in-memory streams, generated with NumPy (seeded):

* sparse: 100,000 × 50,000 CSR, about 80 non-zeros per row, column frequencies skewed
  (Zipf-like, p_j ∝ 1/(j + 10)^1.1), positive values, rows scaled to norm 1; labels
  sign(⟨w*, x⟩) with w* sparse (2,000 non-zeros, Gaussian), 5 % of them flipped;
* dense: 200,000 × 100 Gaussian, rows scaled to norm 1, labels likewise (w* dense).

Every learner runs one pass over each stream in blocks of 8,192 rows (the block size of
:mod:`dolb.evaluation.run_cell`), first bare (``conversions=("last",)``) then with all five
conversions, after a warm-up pass that compiles (or loads) the kernels; the best of
``--repeat`` runs is reported. The reference is a bare hand-written Numba Perceptron loop
over the same CSR arrays (one call, no block handling, no conversions).

Times are CPU times of the running thread (``time.thread_time``), best of ``--repeat``
interleaved runs. "ratio" is the time with all conversions over the bare time (target
<= 1.5); "outputs s" the time of one ``outputs()`` call at the end of the stream;
"updates" the number of hypothesis changes; "conv MB" the memory the conversions' state
uses (the update log's used part; its capacity is reserved for the announced horizon
as untouched, lazily mapped address space).

Run: ``python scripts/bench_linear.py [--repeat 3] [--only perceptron,sgd] [--quick]
[--breakdown]`` (``--breakdown``: also each conversion alone, relative to bare).
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np
import scipy.sparse as sp

from dolb.conversions import CONVERSIONS
from dolb.learners import learner_class

BLOCK = 8192
CLOCK = time.thread_time  # CPU time of this thread: the kernels are single-threaded, and
# the machine may be shared; wall-clock figures differ only by what else is running.
LEARNERS = {
    "perceptron": {},
    "margin_perceptron": {"radius": 1.0},
    "pa": {"variant": "pa1", "C": 1.0},
    "sgd": {"loss": "hinge", "alpha": 1e-5, "eta0": 0.1},
    "adagrad": {"eta": 0.1},
    "ftrl": {"alpha": 0.1, "beta": 1.0, "l1": 1e-4},
    "ogd": {"radius": 10.0, "eta0": 1.0},
    "dual_averaging": {"radius": 10.0, "eta": 0.1},
}


def sparse_stream(n=100_000, d=50_000, nnz_per_row=80, seed=0):
    rng = np.random.default_rng(seed)
    p = 1.0 / (np.arange(d) + 10.0) ** 1.1
    cdf = np.cumsum(p / p.sum())
    cols = np.minimum(np.searchsorted(cdf, rng.random(n * nnz_per_row)), d - 1)
    rows = np.repeat(np.arange(n), nnz_per_row)
    X = sp.csr_matrix((rng.random(n * nnz_per_row) + 0.1, (rows, cols)), shape=(n, d))
    X.sum_duplicates()
    X = sp.diags(1.0 / np.sqrt(X.multiply(X).sum(axis=1)).A1) @ X
    X = sp.csr_matrix(X)
    X.sort_indices()  # canonical, as the dataset store delivers it
    w = np.zeros(d)
    w[rng.choice(d, 2000, replace=False)] = rng.normal(size=2000)
    return X, labels(X @ w, rng)


def dense_stream(n=200_000, d=100, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1)[:, None]
    return X, labels(X @ rng.normal(size=d), rng)


def labels(margin, rng):
    y = np.where(margin >= 0, 1.0, -1.0)
    flip = rng.random(y.shape[0]) < 0.05
    y[flip] = -y[flip]
    return y


@numba.njit(cache=True)
def reference_perceptron(indptr, indices, data, y, w):
    """The bare Perceptron over CSR arrays: the speed to compare with."""
    mistakes = 0
    for t in range(y.shape[0]):
        dot = 0.0
        for k in range(indptr[t], indptr[t + 1]):
            dot += w[indices[k]] * data[k]
        if y[t] * dot <= 0.0:
            mistakes += 1
            for k in range(indptr[t], indptr[t + 1]):
                w[indices[k]] += y[t] * data[k]
    return mistakes


def blocks(X, y):
    """The stream as the dataset reader delivers it: blocks of BLOCK rows."""
    return [(X[a:a + BLOCK], y[a:a + BLOCK]) for a in range(0, X.shape[0], BLOCK)]


def run(name, params, stream, conversions, n_train):
    """(learning time, time of one outputs() call, updates, conversions' MB); the learner
    is dropped on return (its update log can be 100 MB)."""
    learner = learner_class(name)(stream[0][0].shape[1], n_train=n_train, conversions=conversions, **params)
    start = CLOCK()
    for X, y in stream:
        learner.learn(X, y)
    learn = CLOCK() - start
    start = CLOCK()
    learner.outputs()
    outputs = CLOCK() - start
    updates = learner.history.n_hypotheses - 1 if learner.history is not None else -1
    mb = sum(a.nbytes for c in learner._conv.values() for a in getattr(c, "arrays", ()))
    mb += learner.history.used_bytes if learner.history is not None else 0
    return learn, outputs, updates, mb / 1e6


def bench(label, X, y, names, repeat):
    n = X.shape[0]
    print(f"\n{label}: {n:,} x {X.shape[1]:,}" + (f", {X.nnz / n:.1f} nnz/row" if sp.issparse(X) else ""))
    if sp.issparse(X):
        parts = (X.indptr.astype(np.int64), X.indices, X.data, y)
        reference_perceptron(*parts, np.zeros(X.shape[1]))  # warm
        times = []
        for _ in range(repeat):
            w = np.zeros(X.shape[1])
            t0 = CLOCK()
            mistakes = reference_perceptron(*parts, w)
            times.append(CLOCK() - t0)
        print(f"  reference Numba Perceptron loop: {n / min(times):>12,.0f} ex/s  "
              f"({mistakes:,} mistakes; ours must do >= half)")
    stream = blocks(X, y)
    print(f"  {'learner':<18}{'bare ex/s':>14}{'all conv ex/s':>16}{'ratio':>8}{'outputs s':>11}"
          f"{'updates':>9}{'conv MB':>9}")
    for name in names:
        params = LEARNERS[name]
        run(name, params, stream[:2], ("last",), n)  # warm: compile or load the kernels
        run(name, params, stream[:2], CONVERSIONS, n)
        runs = [(run(name, params, stream, ("last",), n), run(name, params, stream, CONVERSIONS, n))
                for _ in range(repeat)]  # interleaved, so that a busy moment hits both
        bare = min(r[0] for r in runs)
        full = min(r[1] for r in runs)
        updates, mb = full[2], full[3]
        print(f"  {name:<18}{n / bare[0]:>14,.0f}{n / full[0]:>16,.0f}{full[0] / bare[0]:>8.2f}"
              f"{full[1]:>11.3f}{updates:>9,}{mb:>9.1f}")


def breakdown(label, X, y, names, repeat):
    """Time with each conversion alone, relative to the bare learner."""
    n = X.shape[0]
    stream = blocks(X, y)
    singles = [("last", c) for c in CONVERSIONS[1:]]
    print(f"\n{label}: time with one conversion / bare time")
    print(f"  {'learner':<18}" + "".join(f"{c[1]:>18}" for c in singles))
    for name in names:
        params = LEARNERS[name]
        for conv in [("last",)] + singles:
            run(name, params, stream[:2], conv, n)
        best = {}
        for _ in range(repeat):
            for conv in [("last",)] + singles:
                best[conv] = min(best.get(conv, float("inf")), run(name, params, stream, conv, n)[0])
        print(f"  {name:<18}" + "".join(f"{best[c] / best[('last',)]:>18.2f}" for c in singles))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default=",".join(LEARNERS))
    parser.add_argument("--quick", action="store_true", help="a tenth of the rows")
    parser.add_argument("--breakdown", action="store_true", help="also time each conversion alone")
    args = parser.parse_args()
    names = args.only.split(",")
    scale = 10 if args.quick else 1
    t = time.perf_counter()
    Xs, ys = sparse_stream(n=100_000 // scale)
    Xd, yd = dense_stream(n=200_000 // scale)
    print(f"generated the streams in {time.perf_counter() - t:.1f} s; numba {numba.__version__}, "
          f"{numba.config.NUMBA_NUM_THREADS} threads (kernels are single-threaded)")
    bench("sparse", Xs, ys, names, args.repeat)
    bench("dense", Xd, yd, names, args.repeat)
    if args.breakdown:
        breakdown("sparse", Xs, ys, names, args.repeat)
        breakdown("dense", Xd, yd, names, args.repeat)


if __name__ == "__main__":
    main()
