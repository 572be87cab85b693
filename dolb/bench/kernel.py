"""``dolb bench kernel N``: LASVM's single pass against LIBSVM (scikit-learn's SVC),
and Vowpal Wabbit's ``--ksvm`` where ``vowpalwabbit`` is installed, on MNIST digit 3
against the rest: the first ``N`` training digits in a seeded random order, pixels /
255, RBF kernel (γ = 0.03, C = 1 by default), error on the 10,000 test digits.

For LASVM (blocks of 8,192 rows, as a cell runs them): time, test error, support
vectors, kernel evaluations per second against a NumPy kernel row (one BLAS thread),
the growth of the resident size (sampled once a block) against cache + 1.25·8·d·#SV,
and the same after FINISH; for each peer its time, test error and support vectors, and
the ratio of LASVM's time to it, measured in the same run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import psutil

from dolb.bench.records import measurement, new_record, write_record
from dolb.data.sources.mnist import read_mnist
from dolb.errors import ConfigError
from dolb.learners.kernel.lasvm import LASVM
from dolb.losses import misclassified

BLOCK = 8192


@dataclass(frozen=True)
class Setting:
    """The SVM every tool is run with: RBF width γ, box constraint C, kernel cache (MB)."""

    gamma: float = 0.03
    C: float = 1.0
    cache_mb: float = 200.0


def rss_mb() -> float:
    """This process's resident size in MB."""
    return psutil.Process().memory_info().rss / 2**20


def load(folder: Path, n: int, seed: int):
    """The first ``n`` training digits in a seeded random order, and the test digits."""
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


def run_lasvm(X, y, Xt, yt, svm: Setting) -> float:
    """LASVM's single pass, measured and printed; returns its wall time."""
    LASVM(X.shape[1], gamma=svm.gamma).learn(X[:50], y[:50])  # compile (or load the cache) first
    rss = rss_mb()
    machine = LASVM(X.shape[1], gamma=svm.gamma, C=svm.C, cache_mb=svm.cache_mb)
    wall, cpu, grown = time.perf_counter(), time.process_time(), 0.0
    for a in range(0, len(y), BLOCK):
        machine.learn(X[a:a + BLOCK], y[a:a + BLOCK])
        grown = max(grown, rss_mb() - rss)  # sampled once a block, as a cell does
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    error = misclassified(machine.predict(Xt), yt).mean()
    bound = svm.cache_mb + 1.25 * 8 * X.shape[1] * machine.n_sv / 2**20
    print(f"LASVM n={len(y)}: {wall:.1f} s wall ({cpu:.1f} s CPU), test error {error:.2%}, {machine.n_sv} SVs, "
          f"{machine.kernel_evals:,} kernel evaluations ({machine.kernel_evals / wall:,.0f}/s), "
          f"cache hit rate {machine.diagnostics()['cache_hit_rate']:.3f}, "
          f"RSS growth {grown:.0f} MB (cache + 1.25·8·d·#SV = {bound:.0f} MB), "
          f"state {machine.state_nbytes() / 2**20:.0f} MB")
    start = time.perf_counter()
    finished = machine.finished()
    print(f"  FINISH: {time.perf_counter() - start:.1f} s, test error "
          f"{misclassified(finished.predict(Xt), yt).mean():.2%}, {finished.n_sv} SVs")
    sv = machine.support_vectors().toarray()
    print(f"  NumPy RBF kernel row against the {len(sv)} SVs: {numpy_evals_per_s(sv, Xt[:200], svm.gamma):,.0f} "
          "evaluations/s")
    return wall


def run_svc(X, y, Xt, yt, svm: Setting) -> float:
    """SVC (LIBSVM) on the same data, measured and printed; returns its wall time."""
    from sklearn.svm import SVC

    start = time.perf_counter()
    svc = SVC(C=svm.C, gamma=svm.gamma, cache_size=svm.cache_mb).fit(X, y)
    wall = time.perf_counter() - start
    error = misclassified(svc.decision_function(Xt), yt).mean()
    print(f"SVC n={len(y)}: {wall:.1f} s, test error {error:.2%}, {len(svc.support_)} SVs")
    return wall


def run_vw(X, y, Xt, yt, svm: Setting) -> float | None:
    """Vowpal Wabbit's online kernel SVM (``--ksvm``, RBF, one pass), if installed."""
    try:
        from vowpalwabbit import Workspace
    except ImportError:
        print("Vowpal Wabbit: not installed (pip install vowpalwabbit), skipped")
        return None

    def line(x, label=""):
        nz = np.flatnonzero(x)
        return f"{label} | " + " ".join(f"{j}:{x[j]:.6g}" for j in nz)

    start = time.perf_counter()
    vw = Workspace(f"--ksvm --kernel rbf --bandwidth {svm.gamma} --l2 {1.0 / (svm.C * len(y)):.3g} --quiet")
    for x, label in zip(X, y):
        vw.learn(line(x, f"{int(label)}"))
    wall = time.perf_counter() - start
    scores = np.array([vw.predict(line(x)) for x in Xt])
    vw.finish()
    print(f"VW --ksvm n={len(y)}: {wall:.1f} s, test error {misclassified(scores, yt).mean():.2%}")
    return wall


def kernel_bench(n: int, mnist: Path, svm: Setting = Setting(), seed: int = 0, peers: bool = True) -> list[dict]:
    """Print the measurements of the module docstring; returns the wall times (a record's
    measurements, :mod:`dolb.bench.records`), each measured once."""
    X, y, Xt, yt = load(mnist, n, seed)
    times = {"LASVM": run_lasvm(X, y, Xt, yt, svm)}
    if peers:
        for name, peer in (("SVC", run_svc), ("VW --ksvm", run_vw)):
            seconds = peer(X, y, Xt, yt, svm)
            if seconds is not None:
                times[name] = seconds
                print(f"time LASVM / {name}: {times['LASVM'] / seconds:.3f}")
    return [measurement({"learner": name, "n": n}, "s wall", [seconds]) for name, seconds in times.items()]


def main(args) -> int:
    """``dolb bench kernel N``: the measurements of the module docstring; with
    ``args.record`` a record of them. ConfigError when ``--mnist`` is no folder."""
    if not Path(args.mnist).is_dir():
        raise ConfigError(f"--mnist {args.mnist}: no such folder (the four MNIST IDX files)")
    found = kernel_bench(args.n, Path(args.mnist), peers=not args.no_peers)
    if args.record:
        print(f"record: {write_record(args.record, new_record('kernel', found, command=args.command_line))}")
    return 0
