"""LASVM's single pass against LIBSVM (scikit-learn's SVC) on MNIST digit 3 vs the rest.

    python scripts/bench_lasvm.py [--n 10000] [--gamma 0.03] [--C 1] [--cache-mb 200] [--no-svc] [--seed 0]

The first ``n`` training digits (in a seeded random order), pixels / 255, RBF kernel.
Reports for LASVM (blocks of 8,192 rows, as a cell runs them): time, test error on the
10,000 test digits, support vectors, kernel evaluations per second against a NumPy
kernel row (one BLAS thread), the growth of the RSS (sampled once a block) against cache + 1.25·8·d·#SV, and the
same after FINISH; for SVC(C, gamma, cache_size=cache-mb): time, test error, support
vectors. Needs ../shared/data/mnist (or --mnist FOLDER).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import psutil

from dolb.data.sources.mnist import read_mnist
from dolb.learners.kernel.lasvm import LASVM

BLOCK = 8192


def rss_mb() -> float:
    return psutil.Process().memory_info().rss / 2**20


def load(folder: Path, n: int, seed: int):
    parts = read_mnist(folder, [3], [d for d in range(10) if d != 3])
    X, y = parts["train"]
    order = np.random.default_rng(seed).permutation(len(y))[:n]
    Xt, yt = parts["test"]
    return X[order].astype(np.float64), y[order], Xt.astype(np.float64), yt


def numpy_evals_per_s(X_sv: np.ndarray, queries: np.ndarray, gamma: float, repeat: int = 3) -> float:
    """Kernel evaluations per second of a NumPy RBF kernel row (one query at a time, one
    BLAS thread, best of ``repeat``)."""
    from threadpoolctl import threadpool_limits

    sq = (X_sv**2).sum(axis=1)
    best = float("inf")
    with threadpool_limits(1):
        for _ in range(repeat):
            start = time.perf_counter()
            for x in queries:
                np.exp(-gamma * np.maximum(sq + x @ x - 2.0 * (X_sv @ x), 0.0))
            best = min(best, time.perf_counter() - start)
    return len(queries) * len(X_sv) / best


def run_lasvm(X, y, Xt, yt, args) -> LASVM:
    LASVM(X.shape[1], gamma=args.gamma).learn(X[:50], y[:50])  # compile (or load the cache) first
    rss = rss_mb()
    machine = LASVM(X.shape[1], gamma=args.gamma, C=args.C, cache_mb=args.cache_mb)
    wall, cpu, grown = time.perf_counter(), time.process_time(), 0.0
    for a in range(0, len(y), BLOCK):
        machine.learn(X[a:a + BLOCK], y[a:a + BLOCK])
        grown = max(grown, rss_mb() - rss)  # sampled once a block, as a cell does
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    error = np.mean(np.sign(machine.predict(Xt)) != yt)
    bound = args.cache_mb + 1.25 * 8 * X.shape[1] * machine.n_sv / 2**20
    print(f"LASVM n={len(y)}: {wall:.1f} s wall ({cpu:.1f} s CPU), test error {error:.2%}, {machine.n_sv} SVs, "
          f"{machine.kernel_evals:,} kernel evaluations ({machine.kernel_evals / wall:,.0f}/s), "
          f"cache hit rate {machine.diagnostics()['cache_hit_rate']:.3f}, "
          f"RSS growth {grown:.0f} MB (cache + 1.25·8·d·#SV = {bound:.0f} MB), "
          f"state {machine.state_nbytes() / 2**20:.0f} MB")
    start = time.perf_counter()
    finished = machine.finished()
    print(f"  FINISH: {time.perf_counter() - start:.1f} s, test error "
          f"{np.mean(np.sign(finished.predict(Xt)) != yt):.2%}, {finished.n_sv} SVs")
    sv = machine.support_vectors().toarray()
    print(f"  NumPy RBF kernel row against the {len(sv)} SVs: {numpy_evals_per_s(sv, Xt[:200], args.gamma):,.0f} "
          "evaluations/s")
    return machine


def run_svc(X, y, Xt, yt, args) -> None:
    from sklearn.svm import SVC

    start = time.perf_counter()
    svc = SVC(C=args.C, gamma=args.gamma, cache_size=args.cache_mb).fit(X, y)
    wall = time.perf_counter() - start
    error = np.mean(svc.predict(Xt) != yt)
    print(f"SVC n={len(y)}: {wall:.1f} s, test error {error:.2%}, {len(svc.support_)} SVs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--gamma", type=float, default=0.03)
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--cache-mb", type=float, default=200.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-svc", action="store_true")
    parser.add_argument("--mnist", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data" / "mnist")
    args = parser.parse_args()
    X, y, Xt, yt = load(args.mnist, args.n, args.seed)
    run_lasvm(X, y, Xt, yt, args)
    if not args.no_svc:
        run_svc(X, y, Xt, yt, args)


if __name__ == "__main__":
    main()
