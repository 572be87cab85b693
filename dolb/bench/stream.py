"""``dolb bench stream``: how fast the sparse linear learners learn from a Zarr store,
in stored and in permuted order, against the same learners from memory, bare Numba
loops, Vowpal Wabbit and river, on the RCV1 sample (CCAT vs MCAT) and a9a.

Each training part is written to a Zarr store in a temporary folder, and every learner
makes one pass over the training rows each way below, ``repeat`` times interleaved,
reported as examples per CPU-second (the median and a 95 % bootstrap interval) beside
the test accuracy of the learned hypothesis:

``bare``
    the learner's update in one Numba loop over the in-memory CSR (:mod:`dolb.bench.bare`);
``memory`` / ``memory permuted``
    the dolb learner over in-memory float64 CSR blocks, in stored / a seeded order;
``zarr`` / ``zarr permuted`` (``warm`` / ``cold``)
    a cell's life with the store already open; *warm*: the worker's decoded-chunk cache
    already holds the store's chunks; *cold*: an empty cache;
``zarr windowed`` (``warm`` / ``cold``)
    the same in the ``windowed`` order (:func:`dolb.data.splits.windowed_order`);
``vw`` / ``river``
    the peers of :mod:`dolb.bench.peers`, when installed.

Floors (:data:`FLOORS`): zarr warm ≥ 0.6 × memory; zarr permuted warm ≥ 0.5 × memory
permuted; memory ≥ 0.8 × bare; zarr ≥ 3 × vw. The data, what each pass times and how a
floor is judged: docs/design/benchmarks.md.
"""

from __future__ import annotations

import contextlib
import gc
import json
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import scipy.stats

from dolb.bench.bare import LOOPS, bare_pass
from dolb.bench.records import derived, measurement, new_record, write_record
from dolb.bench.throughput import LEARNERS
from dolb.data import ChunkCache, Dataset, stream_blocks, write_dataset
from dolb.data.sources.rcv1 import load_npz, pair_view
from dolb.data.splits import DEFAULT_WINDOW, split_rows, windowed_order
from dolb.errors import ConfigError
from dolb.evaluation.run_cell import block_rows
from dolb.learners import learner_class
from dolb.losses import misclassified

NAMES = tuple(name for name in LOOPS if name in LEARNERS)
"""The learners measured: those with a bare loop, with their ``bench_params``."""
FLOORS = (  # (numerator, denominator, floor)
    ("zarr warm", "memory", 0.6),
    ("zarr permuted warm", "memory permuted", 0.5),
    ("memory", "bare", 0.8),
    ("zarr warm", "vw", 3.0),
    ("zarr permuted warm", "vw", 3.0),
)
CACHE_BYTES = 64 << 20  # as a worker's (dolb.evaluation.run_cell.WORKER_CHUNK_CACHE)


@dataclass
class Problem:
    """A training part in memory and in a store, its test part, and a seeded order."""

    label: str
    X: sp.csr_matrix  # float64
    y: np.ndarray
    X_test: sp.csr_matrix
    y_test: np.ndarray
    store: Dataset
    permutation: np.ndarray = field(init=False)
    windowed: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.permutation = np.random.default_rng(0).permutation(self.X.shape[0])
        self.windowed = windowed_order(np.arange(self.X.shape[0]), DEFAULT_WINDOW, np.random.default_rng(0))

    def accuracy(self, model) -> float:
        """Test accuracy of weights ``model``, or of a learner's weights."""
        w = model if isinstance(model, np.ndarray) else model.weights()
        return float(1.0 - misclassified(self.X_test @ w, self.y_test).mean())


def rcv1_problem(path: Path, folder: Path) -> Problem:
    """The RCV1 sample, CCAT vs MCAT, 80/20 holdout."""
    X, y = pair_view(load_npz(path), ["CCAT", "MCAT"])
    train, test = split_rows("holdout", 0, X.shape[0], np.random.SeedSequence(0))
    store = write_dataset(folder / "rcv1", X[train], y[train])
    return Problem("RCV1 sample, CCAT vs MCAT", _f64(X[train]), y[train], _f64(X[test]), y[test], store)


def a9a_problem(folder_libsvm: Path, folder: Path) -> Problem:
    """a9a, its own train and test files."""
    from sklearn.datasets import load_svmlight_file

    X, y = load_svmlight_file(str(folder_libsvm / "a9a"), n_features=123)
    X_test, y_test = load_svmlight_file(str(folder_libsvm / "a9a.t"), n_features=123)
    store = write_dataset(folder / "a9a", X, y)
    return Problem("a9a", _f64(X), y, _f64(X_test), y_test, store)


def _f64(X) -> sp.csr_matrix:
    X = sp.csr_matrix(X, dtype=np.float64)
    X.indices = X.indices.astype(np.int32)
    X.indptr = X.indptr.astype(np.int32)
    return X


def _learn(name: str, problem: Problem, blocks):
    """One pass as a cell runs it: the learner made, every block learned, its 0-1 loss
    summed; returns the learner. (Its weights are copied out after the pass is timed,
    as the bare loop's are simply kept.)"""
    learner = learner_class(name)(problem.X.shape[1], n_train=problem.X.shape[0], **LEARNERS[name])
    mistakes = 0.0
    for X, y in blocks:
        mistakes = float(learner.learn_running(X, y, total=mistakes)[-1])
    return learner


def in_blocks(X: sp.csr_matrix, y: np.ndarray, rows: int) -> list[tuple[sp.csr_matrix, np.ndarray]]:
    """``X`` and ``y`` in blocks of ``rows`` rows, each block's values and column indices
    views of ``X``'s, not copies: the bare loop and the learner read the same memory, so
    neither pass finds the rows in a cache the other has not warmed.

    >>> X = sp.csr_matrix(np.eye(3))
    >>> [(block.shape, labels.tolist()) for block, labels in in_blocks(X, np.ones(3), 2)]
    [((2, 3), [1.0, 1.0]), ((1, 3), [1.0])]
    >>> np.shares_memory(in_blocks(X, np.ones(3), 2)[1][0].data, X.data)
    True
    """
    blocks = []
    for first in range(0, X.shape[0], rows):
        last = min(first + rows, X.shape[0])
        begin, end = X.indptr[first], X.indptr[last]
        block = sp.csr_matrix((last - first, X.shape[1]))
        # set, not passed: SciPy's constructor copies the arrays
        block.data, block.indices = X.data[begin:end], X.indices[begin:end]
        block.indptr = X.indptr[first : last + 1] - begin
        blocks.append((block, y[first:last]))
    return blocks


def variants(problem: Problem, name: str, peers: dict) -> dict[str, Callable[[], object]]:
    """The ways of running learner ``name`` on ``problem``: name -> one pass, returning
    what it learned: the bare loop's weights, dolb's learner, None for a peer (which
    keeps its model)."""
    X, y, order, store = problem.X, problem.y, problem.permutation, problem.store
    block = block_rows(learner_class(name), store)  # a cell's
    in_memory, permuted = in_blocks(X, y, block), in_blocks(X[order], y[order], block)
    warm = ChunkCache(CACHE_BYTES)
    for _ in stream_blocks(store, block_size=block, cache=warm):
        pass

    def zarr(rows, cache):
        return lambda: _learn(name, problem, stream_blocks(store, rows, block_size=block, cache=cache(),
                                                           in_place=learner_class(name).reads_spans))

    found = {
        "bare": lambda: bare_pass(name, LEARNERS[name], X, y),
        "memory": lambda: _learn(name, problem, in_memory),
        "memory permuted": lambda: _learn(name, problem, permuted),
        "zarr warm": zarr(None, lambda: warm),
        "zarr permuted warm": zarr(order, lambda: warm),
        "zarr windowed warm": zarr(problem.windowed, lambda: warm),
        "zarr cold": zarr(None, lambda: ChunkCache(CACHE_BYTES)),
        "zarr permuted cold": zarr(order, lambda: ChunkCache(CACHE_BYTES)),
        "zarr windowed cold": zarr(problem.windowed, lambda: ChunkCache(CACHE_BYTES)),
    }
    for peer_name, peer in peers.items():
        found[peer_name] = lambda peer=peer: peer.run(name, LEARNERS[name])
    return found


def _bootstrap(samples: tuple, statistic) -> tuple[float, float, float]:
    """``statistic`` of ``samples`` and its 95 % bootstrap interval (percentile method,
    seeded); where every resample gives the same value, that value for both ends."""
    value = float(statistic(*samples))
    found = scipy.stats.bootstrap(samples, statistic, confidence_level=0.95, n_resamples=2000, method="percentile",
                                  random_state=0)
    low, high = found.confidence_interval
    return value, float(np.nan_to_num(low, nan=value)), float(np.nan_to_num(high, nan=value))


def median_interval(samples: np.ndarray) -> tuple[float, float, float]:
    """Median and 95 % bootstrap interval of ``samples``.

    >>> median_interval(np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]))[0]
    4.0
    """
    return _bootstrap((samples,), np.median)


def ratio_interval(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """median(a) / median(b) and its 95 % bootstrap interval, the two samples resampled
    apart: for variants timed in rounds of their own (dolb against a peer).

    >>> ratio_interval(np.full(7, 2.0), np.full(7, 1.0))
    (2.0, 2.0, 2.0)
    """
    def statistic(x, z, axis=-1):
        return np.median(x, axis=axis) / np.median(z, axis=axis)

    return _bootstrap((a, b), statistic)


def paired_ratio_interval(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """The median of the per-round ratios a[i] / b[i] and its 95 % bootstrap interval,
    rounds resampled: for two variants timed in the same rounds. A round's passes run
    back to back and share its load (the machine's other tenants, its clock); the
    ratio within a round cancels it, where resampling the two samples apart counts
    it as uncertainty twice.

    >>> paired_ratio_interval(np.array([2.0, 4.0, 8.0]), np.array([1.0, 2.0, 4.0]))
    (2.0, 2.0, 2.0)
    >>> ratio_interval(np.array([2.0, 4.0, 8.0]), np.array([1.0, 2.0, 4.0]))[1] < 1.0
    True
    """
    return _bootstrap((np.asarray(a) / np.asarray(b),), np.median)


@contextlib.contextmanager
def _collector_paused():
    """Python's cyclic garbage collector off, as :mod:`timeit` has it while it times: a
    collection of the objects every variant leaves behind would land in whichever pass
    runs when the threshold is crossed."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def measure(problem: Problem, names, peers: dict, repeat: int) -> list[dict]:
    """One row per learner and variant: examples per CPU-second over ``repeat``
    interleaved passes, their median and interval, and the test accuracy.

    The variants are timed in three groups, each in interleaved rounds of its own: the
    bare loop with dolb's warm passes, then dolb's cold passes, then the peers, since a
    pass that leaves the CPU's caches cold weighs on whichever pass comes next (what it
    did: docs/design/benchmarks.md). Each row says which group's rounds timed it
    (``rounds``)."""
    rows = []
    n = problem.X.shape[0]
    for name in names:
        runs = variants(problem, name, peers)
        for run in runs.values():  # compile, warm up
            run()
        rates: dict[str, list[float]] = {key: [] for key in runs}
        learned = {}
        own = [key for key in runs if key not in peers]
        groups = {"warm": [key for key in own if "cold" not in key], "cold": [key for key in own if "cold" in key],
                  "peers": list(peers)}
        for group in groups.values():
            for _ in range(repeat):
                for key in group:
                    with _collector_paused():
                        start = time.process_time()
                        model = runs[key]()
                        seconds = peers[key].last_seconds if key in peers else time.process_time() - start
                    rates[key].append(n / seconds)
                    learned[key] = model
        rounds = {key: group for group, keys in groups.items() for key in keys}
        for key, found in rates.items():
            accuracy = peers[key].accuracy(problem.X_test, problem.y_test) if key in peers else problem.accuracy(
                learned[key])
            median, low, high = median_interval(np.array(found))
            rows.append({"data": problem.label, "learner": name, "variant": key, "examples": n,
                         "examples_per_cpu_s": median, "low": low, "high": high, "test_accuracy": accuracy,
                         "samples": found, "rounds": rounds[key]})
    return rows


def floors(rows: list[dict]) -> list[dict]:
    """Every floor of the module docstring that can be judged from ``rows``: the ratio
    of two variants timed in the same rounds paired by round
    (:func:`paired_ratio_interval`), else of their medians (:func:`ratio_interval`)."""
    by_key = {(r["data"], r["learner"], r["variant"]): r for r in rows}
    judged = []
    for data, name in dict.fromkeys((r["data"], r["learner"]) for r in rows):
        for top, bottom, floor in FLOORS:
            if (data, name, top) in by_key and (data, name, bottom) in by_key:
                a, b = by_key[(data, name, top)], by_key[(data, name, bottom)]
                interval = paired_ratio_interval if a["rounds"] == b["rounds"] else ratio_interval
                ratio, low, high = interval(np.array(a["samples"]), np.array(b["samples"]))
                judged.append({"data": data, "learner": name, "ratio": f"{top} / {bottom}", "floor": floor,
                               "value": ratio, "low": low, "high": high, "holds": low >= floor})
    return judged


def as_text(rows: list[dict], judged: list[dict]) -> str:
    """The measurements and the floors as tables for people."""
    lines = [f"{'data':<26}{'learner':<12}{'variant':<20}{'k examples/CPU-s [95 % interval]':>36}"
             f"{'test acc':>10}"]
    for r in rows:
        interval = f"{r['examples_per_cpu_s'] / 1e3:,.0f} [{r['low'] / 1e3:,.0f}, {r['high'] / 1e3:,.0f}]"
        lines.append(f"{r['data']:<26}{r['learner']:<12}{r['variant']:<20}{interval:>36}"
                     f"{r['test_accuracy']:>10.4f}")
    lines += ["", f"{'data':<26}{'learner':<12}{'ratio':<34}{'value [95 % interval]':>24}{'floor':>7}  holds"]
    for j in judged:
        value = f"{j['value']:.2f} [{j['low']:.2f}, {j['high']:.2f}]"
        lines.append(f"{j['data']:<26}{j['learner']:<12}{j['ratio']:<34}{value:>24}{j['floor']:>7}  "
                     f"{'yes' if j['holds'] else 'NO'}")
    return "\n".join(lines)


class _Timed:
    """A peer whose ``run`` returns its own CPU seconds: kept as ``last_seconds``."""

    def __init__(self, peer) -> None:
        self.peer = peer
        self.last_seconds = float("nan")

    def run(self, name: str, params: dict) -> None:
        self.last_seconds = self.peer.run(name, params)

    def accuracy(self, X_test, y_test) -> float:
        return self.peer.accuracy(X_test, y_test)


def make_peers(problem: Problem, folder: Path, wanted: bool) -> dict:
    """Vowpal Wabbit and river on ``problem``'s training rows, those installed."""
    from dolb.bench.peers import River, VowpalWabbit

    peers = {}
    if not wanted:
        return peers
    try:
        peers["vw"] = _Timed(VowpalWabbit(folder, problem.X, problem.y))
    except ImportError:
        print("Vowpal Wabbit: not installed (pip install vowpalwabbit), skipped")
    try:
        peers["river"] = _Timed(River(problem.X, problem.y))
    except ImportError:
        print("river: not installed (pip install river), skipped")
    return peers


def stream_bench(rcv1: Path, libsvm: Path, names=None, repeat: int = 7, peers: bool = True) -> tuple[list, list]:
    """Every measurement of the module docstring, and the floors judged."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="dolb-bench-stream-") as tmp:
        for make, source in ((rcv1_problem, rcv1), (a9a_problem, libsvm)):
            folder = Path(tmp) / make.__name__
            folder.mkdir()
            problem = make(source, folder)
            rows += measure(problem, names or NAMES, make_peers(problem, folder, peers), repeat)
    return rows, floors(rows)


def as_record(rows: list[dict], judged: list[dict], peers: bool, command: str | None = None) -> dict:
    """The run as a record of bench ``stream`` (``stream-no-peers`` without the peers):
    every sample, each row's test accuracy, the floors' ratios with their intervals."""
    labels = [{k: r[k] for k in ("data", "learner", "variant")} for r in rows]
    found = [derived(at, "test accuracy", r["test_accuracy"]) for at, r in zip(labels, rows)]
    found += [derived({k: str(j[k]) for k in ("data", "learner", "ratio", "floor")} | {"bound": bound}, "ratio", j[key])
              for j in judged for bound, key in (("median", "value"), ("low", "low"), ("high", "high"))]
    return new_record("stream" if peers else "stream-no-peers",
                      [measurement(at, "examples/CPU-s", r["samples"]) for at, r in zip(labels, rows)], found, command)


def main(args) -> int:
    """``dolb bench stream``: the tables, or one JSON list (rows, then floors), of at least 7
    repeats, and a record in ``args.record``. ConfigError: an unknown learner, no data."""
    names = args.only.split(",") if args.only else None
    for name in names or ():
        if name not in NAMES:
            raise ConfigError(f"--only: {name!r} has no bare loop to compare with (known: {', '.join(NAMES)})")
    for option, path in (("--rcv1", Path(args.rcv1)), ("--libsvm", Path(args.libsvm) / "a9a")):
        if not path.is_file():
            raise ConfigError(f"{option} {path}: no such file")
    peers = not args.no_peers
    rows, judged = stream_bench(Path(args.rcv1), Path(args.libsvm), names, max(args.repeat, 7), peers)
    if args.record:
        record = as_record(rows, judged, peers, args.command_line)
        print(f"record: {write_record(args.record, record)}", file=sys.stderr)
    print(json.dumps(rows + [{"kind": "floor", **j} for j in judged]) if args.json else as_text(rows, judged))
    return 0
