"""``dolb bench`` (``dolb bench throughput``): throughput of the online learners, bare and with every conversion
they support attached, from memory and from a Zarr store, and the memory of cutoff
averaging as the stream grows. The learners are those of the registry that declare
``bench_params`` (the parameters they are benchmarked with).

Streams (seeded): *sparse*, the ``sparse_text`` generator's 100,000 × 50,000 rows with
about 80 non-zeros each (skewed feature frequencies, 5 % label noise); *dense*,
200,000 × 100 Gaussian rows of norm 1 labelled by a random hyperplane, 5 % flipped.
Each learner runs test-then-train over blocks of 8,192 rows (the block size of
:mod:`dolb.evaluation.run_cell`), its prequential 0-1 loss summed as a cell does, once
with the last hypothesis only and once with all its conversions; compiled kernels are
warmed first. Every measurement is repeated ``repeat`` times (default 7) round-robin, as
asv and pyperf do: each round times the reference loop, then every learner × source ×
conversions once, so a busy moment of the machine weighs on all of them alike; every
repeat is kept (``repeats``, what ``dolb compare`` judges) and ``examples_per_s`` is
their median. Times are CPU times, which the load of a shared machine hardly moves (wall
times moved by 0.3–1.8× between two runs of the same code): from memory, of the
running thread (``time.thread_time``: the learner and the loss); from a store, of the
whole process (``time.process_time``: the learner's thread and the reading thread's
decoding, which runs on another core), so it is the cost of reading and learning.

The reference is a bare hand-written Numba Perceptron loop over the same CSR arrays in
memory: the speed a generic benchmark cannot beat.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import numba
import numpy as np
import psutil
import scipy
import scipy.sparse as sp

import dolb
from dolb.bench.bare import perceptron
from dolb.bench.records import derived, measurement, new_record, write_record
from dolb.data import generate, open_dataset, stream_blocks, write_dataset
from dolb.errors import ConfigError
from dolb.execution.environment import cpu_model, frequency_governor, git_commit, load_average
from dolb.learners import learner_class, registered_learners

BLOCK = 8192
CLOCK = time.thread_time
LEARNERS = {name: cls.bench_params for name, cls in registered_learners().items() if cls.bench_params is not None}
"""Every benchmarked learner with the parameters it is benchmarked with (its class's
``bench_params``)."""


@dataclass
class Measurement:
    """One line of the benchmark (one JSON object of ``dolb bench --json``)."""

    learner: str
    input: str  # "sparse" or "dense"
    source: str  # "memory" or "zarr"
    conversions: str  # "last" or "all"
    examples: int
    examples_per_s: float  # the median of the repeats
    state_mb: float  # the learner's and its conversions' arrays at the end
    peak_rss_mb: float  # of this process, so far
    repeats: list[float]  # examples per second of every repeat, in the order measured


def sparse_stream(n: int, seed: int = 0) -> tuple[sp.csr_matrix, np.ndarray]:
    """The standard sparse stream: ``sparse_text`` rows, 50,000 features, ~80 non-zeros."""
    X, y, _ = generate("sparse_text", {"n_rows": n, "n_features": 50_000, "nnz_per_row": 80}, seed)["train"]
    return X, y.astype(np.float64)


def dense_stream(n: int, d: int = 100, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The standard dense stream: Gaussian rows of norm 1, a random hyperplane, 5 % noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1)[:, None]
    y = np.where(X @ rng.normal(size=d) >= 0, 1.0, -1.0)
    y[rng.random(n) < 0.05] *= -1
    return X, y


def reference_pass(X: sp.csr_matrix, y: np.ndarray) -> float:
    """Examples per second of one pass of the bare Perceptron
    (:func:`dolb.bench.bare.perceptron`, the reference loop) on ``X`` (compiled by the
    first call)."""
    parts = (X.indptr.astype(np.int64), X.indices, X.data, y)
    start = CLOCK()
    perceptron(*parts, np.zeros(X.shape[1]))
    return X.shape[0] / (CLOCK() - start)


def _time_pass(name: str, blocks: Iterable, n_features: int, n: int, conversions, clock) -> tuple[float, float]:
    """(seconds by ``clock``, state MB) of one test-then-train pass with the prequential
    0-1 loss summed as a cell does; the learner is dropped after."""
    learner = learner_class(name)(n_features, n_train=n, conversions=conversions, **LEARNERS[name])
    mistakes = 0.0
    start = clock()
    for X, y in blocks:
        mistakes = float(learner.learn_running(X, y, total=mistakes)[-1])
    return clock() - start, learner.state_nbytes() / 1e6


def _in_memory(X, y) -> list:
    return [(X[a : a + BLOCK], y[a : a + BLOCK]) for a in range(0, X.shape[0], BLOCK)]


def measure(
    names: list[str], X, y, label: str, repeat: int, store_dir: Path | None, reference: list[float] | None = None
) -> list[Measurement]:
    """Measurements of ``names`` on one stream, from memory and (with ``store_dir``)
    from a Zarr store written there, ``repeat`` rounds each timing every learner ×
    source × conversions once; with ``reference`` (a list), each round first times the
    reference loop on this stream and appends its speed there."""
    n, d = X.shape
    in_memory = _in_memory(X, y)
    # (blocks, clock): from memory the CPU time of this thread; from a store that of the
    # process, since decoding runs on the stream's reading thread, on another core
    sources = {"memory": (lambda: in_memory, CLOCK)}
    if store_dir is not None:
        stored = X.astype(np.float32)  # as text features are stored (RCV1 is float32)
        dataset = open_dataset(write_dataset(store_dir / label, stored, y, overwrite=True).path)
        sources["zarr"] = (lambda: stream_blocks(dataset, block_size=BLOCK), time.process_time)
    every = {name: learner_class(name).conversions_supported for name in names}
    for name in names:  # compile, or load the kernels
        for conversions in (("last",), every[name]):
            _time_pass(name, in_memory[:2], d, n, conversions, CLOCK)
    if reference is not None:
        reference_pass(X, y)  # compile
    runs = [(name, source, key, conversions) for name in names for source in sources
            for key, conversions in (("last", ("last",)), ("all", every[name]))]
    speeds: dict[tuple, list[float]] = {run[:3]: [] for run in runs}
    state: dict[tuple, float] = {}
    for _ in range(repeat):  # round-robin: a busy moment hits every measurement alike
        if reference is not None:
            reference.append(reference_pass(X, y))
        for name, source, key, conversions in runs:
            blocks, clock = sources[source]
            seconds, state[name, source, key] = _time_pass(name, blocks(), d, n, conversions, clock)
            speeds[name, source, key].append(n / seconds)
    rss = round(psutil.Process().memory_info().rss / 2**20, 1)
    return [
        Measurement(name, label, source, key, n, statistics.median(found), round(state[name, source, key], 2), rss,
                    found)
        for (name, source, key), found in speeds.items()
    ]


def cutoff_memory(sizes: Iterable[int], d: int = 100) -> list[dict]:
    """Memory of cutoff averaging's per-survival-time sums (W_r) for the Perceptron on
    dense streams of growing length m: the number of distinct survival times is
    O(√m), so the memory is O(d·√m)."""
    rows = []
    for m in sizes:
        X, y = dense_stream(m, d, seed=2)
        learner = learner_class("perceptron")(d, n_train=m, conversions=("cutoff",))
        for a in range(0, m, BLOCK):
            learner.learn(X[a : a + BLOCK], y[a : a + BLOCK])
        cutoff = learner.conversion("cutoff")
        groups = int(cutoff.cc[0])
        rows.append(
            {"m": m, "distinct_r": groups, "sqrt_2m": round(math.sqrt(2 * m), 1), "W_r_mb": groups * d * 8 / 1e6}
        )
    return rows


def machine_info(load_before: float | None = None) -> dict:
    """What the speeds depend on besides the code: the machine (its CPU model, cores,
    frequency governor, the load average before the benchmark, ``load_before``, and
    now), the git commit of the code, and the versions of Python, NumPy, SciPy, Numba
    and dolb. ``dolb compare`` reads it from ``bench.json``."""
    return {
        "host": platform.node(), "machine": platform.machine(), "cpu": cpu_model(), "cpus": os.cpu_count(),
        "governor": frequency_governor(), "load_before": load_before, "load_after": load_average(),
        "git_commit": git_commit(), "system": platform.platform(), "python": platform.python_version(),
        "numpy": np.__version__, "scipy": scipy.__version__, "numba": numba.__version__, "dolb": dolb.__version__,
    }


def run_bench(
    names: list[str] | None = None, quick: bool = False, repeat: int = 7, zarr: bool = True
) -> tuple[list[Measurement], dict[str, list[float]], list[dict]]:
    """Every measurement, the reference loop's speeds (one per round), and the cutoff
    memory table."""
    names = names or list(LEARNERS)
    scale = 10 if quick else 1
    Xs, ys = sparse_stream(100_000 // scale)
    Xd, yd = dense_stream(200_000 // scale)
    reference: list[float] = []
    with tempfile.TemporaryDirectory(prefix="dolb-bench-") as folder:
        store_dir = Path(folder) if zarr else None
        found = measure(names, Xs, ys, "sparse", repeat, store_dir, reference)
        found += measure(names, Xd, yd, "dense", repeat, store_dir)
    memory = cutoff_memory([1_000, 10_000, 100_000] if not quick else [1_000, 10_000])
    return found, {"reference_perceptron_sparse_memory": reference}, memory


def as_json(found: list[Measurement], reference: dict[str, list[float]], memory: list[dict],
            load_before: float | None = None) -> list[dict]:
    """The benchmark as a JSON list: the machine (:func:`machine_info`, ``load_before``
    the load average before the benchmark), one object per measurement (with every
    repeat), then the reference loop and the cutoff memory rows (``kind`` tells them
    apart)."""
    rows = [{"kind": "machine", **machine_info(load_before)}]
    rows += [{"kind": "throughput", **asdict(m)} for m in found]
    rows += [{"kind": "reference", "learner": "reference_perceptron", "input": "sparse", "source": "memory",
              "conversions": "none", "examples_per_s": statistics.median(speeds), "repeats": speeds}
             for speeds in reference.values()]
    rows += [{"kind": "cutoff_memory", **row} for row in memory]
    return rows


def as_text(found: list[Measurement], reference: dict[str, float], memory: list[dict]) -> str:
    """The benchmark as a table for people."""
    ref = statistics.median(reference["reference_perceptron_sparse_memory"])
    repeats = len(reference["reference_perceptron_sparse_memory"])
    lines = [f"reference: hand-written Numba Perceptron over the sparse CSR arrays: {ref:,.0f} examples/s",
             f"(every figure is the median of {repeats} interleaved repeats)", ""]
    lines.append(f"{'learner':<18}{'input':<8}{'source':<8}{'bare ex/s':>13}{'all conv ex/s':>15}"
                 f"{'ratio':>7}{'state MB':>10}{'RSS MB':>8}")
    by_key = {(m.learner, m.input, m.source, m.conversions): m for m in found}
    for (learner, kind, source, conversions), bare in by_key.items():
        if conversions != "last":
            continue
        full = by_key[(learner, kind, source, "all")]
        lines.append(
            f"{learner:<18}{kind:<8}{source:<8}{bare.examples_per_s:>13,.0f}{full.examples_per_s:>15,.0f}"
            f"{bare.examples_per_s / full.examples_per_s:>7.2f}{full.state_mb:>10.1f}{full.peak_rss_mb:>8.0f}"
        )
    perceptron = by_key.get(("perceptron", "sparse", "memory", "last"))
    if perceptron is not None:
        lines.append(f"\nsparse Perceptron from memory: {perceptron.examples_per_s / ref:.2f} x the reference loop")
    lines.append("\ncutoff averaging (Perceptron, dense, W_r per distinct survival time r):")
    lines += [f"  m = {r['m']:>7,}: {r['distinct_r']:>4} distinct r (sqrt(2m) = {r['sqrt_2m']:>6}), "
              f"{r['W_r_mb']:.2f} MB" for r in memory]
    return "\n".join(lines)


def as_record(found: list[Measurement], reference: dict[str, list[float]], memory: list[dict], quick: bool,
              command: str | None = None) -> dict:
    """The benchmark as a record (:mod:`dolb.bench.records`) of bench ``throughput``
    (``throughput-quick`` with ``quick``): every repeat of every measurement and of the
    reference loop, the cutoff memory rows, and the ratios bare / all conversions and
    sparse Perceptron from memory / the reference loop (of the medians); ``command`` as
    :func:`dolb.bench.records.new_record` takes it."""
    figures = [measurement({"learner": m.learner, "input": m.input, "source": m.source, "conversions": m.conversions},
                           "examples/s", m.repeats) for m in found]
    figures += [measurement({"learner": "reference_perceptron", "input": "sparse", "source": "memory",
                             "conversions": "none"}, "examples/s", speeds) for speeds in reference.values()]
    figures += [measurement({"m": row["m"], "of": "cutoff W_r"}, "MB", [row["W_r_mb"]]) for row in memory]
    by_key = {(m.learner, m.input, m.source, m.conversions): m.examples_per_s for m in found}
    ratios = [derived({"learner": learner, "input": kind, "source": source, "ratio": "bare / all conversions"},
                      "ratio", speed / by_key[learner, kind, source, "all"])
              for (learner, kind, source, conversions), speed in by_key.items() if conversions == "last"]
    perceptron = by_key.get(("perceptron", "sparse", "memory", "last"))
    if perceptron is not None:
        ref = statistics.median(reference["reference_perceptron_sparse_memory"])
        ratios.append(derived({"learner": "perceptron", "input": "sparse", "source": "memory",
                               "ratio": "dolb / reference loop"}, "ratio", perceptron / ref))
    return new_record("throughput-quick" if quick else "throughput", figures, ratios, command)


def main(args) -> int:
    """``dolb bench throughput``: the tables, or the JSON list with ``--json``; with
    ``args.record`` a record of the run written there too. ConfigError for an unknown
    learner."""
    names = args.only.split(",") if args.only else None
    for name in names or ():
        if name not in LEARNERS:
            raise ConfigError(f"--only: unknown learner {name!r} (known: {', '.join(LEARNERS)})")
    load_before = load_average()
    found = run_bench(names, quick=args.quick, repeat=args.repeat, zarr=not args.no_zarr)
    print(json.dumps(as_json(*found, load_before=load_before), indent=1) if args.json else as_text(*found))
    if args.record:
        record = as_record(*found, quick=args.quick, command=args.command_line)
        print(f"record: {write_record(args.record, record)}", file=sys.stderr)
    return 0
