"""``python -m benchmarks object-store``: a dataset streamed from an S3-protocol server against the
same store on local disk, side by side, in stored, random and windowed order.

How it measures and what it found: ``docs/design/benchmarks.md`` (object-store).
"""

from __future__ import annotations

import contextlib
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path

import numpy as np
import psutil
import scipy.sparse as sp

from dolb.bench.records import derived, measurement, new_record, write_record
from dolb.data import Dataset, open_dataset, stream_blocks, write_dataset
from dolb.data.splits import DEFAULT_WINDOW, windowed_order
from dolb.data.store.layout import layout_line
from dolb.data.store.object_stores import chunk_store_options, forget_s3_filesystems
from dolb.errors import ConfigError
from dolb.evaluation.run_cell import block_rows
from dolb.execution.environment import load_average
from dolb.learners import learner_class
from tests.s3_server import free_port, start_moto, wait_until_up

ROWS, QUICK_ROWS = 300_000, 30_000
FEATURES, PER_ROW = 50_000, 80
TARGETS = {"stored": 0.7, "random": 0.5, "windowed": 0.7}
"""Least rate from the server, as a share of local disk's, for each order."""
SOURCES = ("local", "s3", "s3 node cache")
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_DEFAULT_REGION": "us-east-1"}


def sparse_rows(n_rows: int) -> tuple[sp.csr_matrix, np.ndarray]:
    """``n_rows`` seeded sparse rows (:data:`PER_ROW` distinct columns of
    :data:`FEATURES`, uniform values) and ±1 labels."""
    rng = np.random.default_rng(0)
    indices = np.sort(rng.integers(0, FEATURES, size=(n_rows, PER_ROW)), axis=1).ravel()
    X = sp.csr_matrix((rng.random(n_rows * PER_ROW), indices, np.arange(0, n_rows * PER_ROW + 1, PER_ROW)),
                      shape=(n_rows, FEATURES))
    X.sum_duplicates()
    return X, rng.choice([-1.0, 1.0], size=n_rows)


@contextlib.contextmanager
def s3_server():
    """moto's S3 server on a free loopback port, with the environment that reaches it set
    for the time of the context; yields its endpoint and its process. ConfigError when
    moto's server is not installed."""
    try:
        import moto.server  # noqa: F401
        import s3fs  # noqa: F401
    except ImportError as exc:
        raise ConfigError(f"object-store needs moto's server and s3fs (the test extra): {exc}") from None
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    server = start_moto(port)
    saved = {name: os.environ.get(name) for name in (*CREDENTIALS, "AWS_ENDPOINT_URL")}
    # s3fs keeps its file systems by their arguments, not by the endpoint the environment
    # names: forget them when the endpoint changes, on the way in and on the way out
    forget_s3_filesystems()
    try:
        wait_until_up(endpoint)
        os.environ.update(CREDENTIALS | {"AWS_ENDPOINT_URL": endpoint})
        yield endpoint, server
    finally:
        forget_s3_filesystems()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        server.terminate()
        server.wait(timeout=30)


def write_to_bucket(X, y, local: Path) -> tuple[str, Dataset]:
    """The store of ``X`` and ``y`` written to a new bucket (an object store's layout),
    and its files copied as they are to ``local``: its URL and the local copy, opened."""
    import s3fs

    fs = s3fs.S3FileSystem()
    bucket = f"bench-{uuid.uuid4().hex[:8]}"
    fs.mkdir(bucket)
    write_dataset(f"s3://{bucket}/store", X, y)
    fs.get(f"{bucket}/store", str(local), recursive=True)
    return f"s3://{bucket}/store", open_dataset(local)


def one_pass(ds, rows, block: int) -> int:
    """Stream every row of ``rows`` (None: stored order); the rows read."""
    return sum(y.shape[0] for _, y in stream_blocks(ds, rows, block_size=block))


def peak_megabytes(ds, rows, block: int) -> float:
    """Peak MB the stream allocated in one pass (tracemalloc)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        one_pass(ds, rows, block)
        return (tracemalloc.get_traced_memory()[1] - base) / 1e6
    finally:
        tracemalloc.stop()


@contextlib.contextmanager
def node_cache(folder: Path | None):
    """``DOLB_CHUNK_CACHE`` set to ``folder`` (None: unset) for the time of the context."""
    saved = os.environ.get("DOLB_CHUNK_CACHE")
    if folder is None:
        os.environ.pop("DOLB_CHUNK_CACHE", None)
    else:
        os.environ["DOLB_CHUNK_CACHE"] = str(folder)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("DOLB_CHUNK_CACHE", None)
        else:
            os.environ["DOLB_CHUNK_CACHE"] = saved


def cpu_seconds(process: psutil.Process) -> float:
    """CPU seconds ``process`` has used so far (user and system, all its threads)."""
    times = process.cpu_times()
    return times.user + times.system


def raw_fetch(local_path: Path, url: str) -> dict:
    """Every chunk object of the store at ``url`` fetched raw, concurrently (s3fs's
    ``cat``, with the options a stream fetches with), and the same files read from
    ``local_path``: ``{"seconds", "local seconds", "bytes", "requests"}``."""
    import s3fs

    fs = s3fs.S3FileSystem(**chunk_store_options(url))
    paths = [p for p in fs.find(url) if "/c/" in p.removeprefix(url.removeprefix("s3://"))]
    start = time.perf_counter()
    size = sum(len(raw) for raw in fs.cat(paths).values())
    seconds = time.perf_counter() - start
    start = time.perf_counter()
    for p in paths:
        Path(local_path, p.split("/", 2)[2]).read_bytes()
    return {"seconds": seconds, "local seconds": time.perf_counter() - start, "bytes": size, "requests": len(paths)}


def measure(local_path: Path, url: str, cache_root: Path, repeat: int, server: psutil.Process) -> dict:
    """Rows per second of every order and source, ``repeat`` interleaved rounds, and
    the CPU seconds of each pass (the server's, the reader's); the raw fetch of every
    round (:func:`raw_fetch`); and the peak MB of one more pass of each."""
    local = open_dataset(local_path)
    n = local.n_rows
    orders = {"stored": None, "random": np.random.default_rng(0).permutation(n),
              "windowed": windowed_order(np.arange(n), DEFAULT_WINDOW, np.random.default_rng(0))}
    block = block_rows(learner_class("perceptron"), local)
    rates: dict[tuple, list[float]] = {}
    cpu: dict[tuple, list[tuple[float, float]]] = {}
    memory: dict[tuple, float] = {}
    raw = []
    reader = psutil.Process()
    for order, rows in orders.items():
        with node_cache(None):
            remote = open_dataset(url)
        with node_cache(cache_root / order):
            cached = open_dataset(url)  # the node cache of this order, filled by the first pass
        sources = {"local": local, "s3": remote, "s3 node cache": cached}
        for source in ("local", "s3 node cache"):  # warm up: compiled code, the page cache, the node cache
            one_pass(sources[source], rows, block)
        for _ in range(repeat):
            raw.append(raw_fetch(local_path, url))
            for source, ds in sources.items():
                before = cpu_seconds(server), cpu_seconds(reader)
                start = time.perf_counter()
                count = one_pass(ds, rows, block)
                rates.setdefault((order, source), []).append(count / (time.perf_counter() - start))
                cpu.setdefault((order, source), []).append(
                    (cpu_seconds(server) - before[0], cpu_seconds(reader) - before[1]))
        for source, ds in sources.items():
            memory[(order, source)] = peak_megabytes(ds, rows, block)
    return {"rates": rates, "cpu": cpu, "raw": raw, "memory": memory}


def object_store_bench(quick: bool = False, repeat: int = 3, n_rows: int | None = None) -> dict:
    """Every measurement of the module docstring: ``{"rates", "cpu", "raw", "memory",
    "load", "rows", "block", "layout"}`` (:func:`measure`; ``layout``: the store's
    :attr:`~dolb.data.store.dataset.Dataset.layout`); ``n_rows`` instead of the bench's
    own sizes (for a test)."""
    load_start = load_average()
    with tempfile.TemporaryDirectory(prefix="dolb-bench-object-store-") as tmp, s3_server() as (_, server):
        X, y = sparse_rows(n_rows or (QUICK_ROWS if quick else ROWS))
        url, local = write_to_bucket(X, y, Path(tmp) / "store")
        del X, y
        found = measure(Path(local.path), url, Path(tmp) / "node-cache", repeat, psutil.Process(server.pid))
    return found | {"load": (load_start, load_average()), "rows": local.n_rows,
                    "block": block_rows(learner_class("perceptron"), local), "layout": local.layout}


def ratios(rates: dict) -> list[dict]:
    """Each S3 source's rate over local's in each order (the median of the per-round
    ratios) beside the order's target."""
    found = []
    for order, target in TARGETS.items():
        for source in SOURCES[1:]:
            paired = [a / b for a, b in zip(rates[(order, source)], rates[(order, "local")], strict=True)]
            value = statistics.median(paired)
            found.append({"order": order, "source": source, "ratio": value, "target": target,
                          "holds": value >= target})
    return found


def raw_rounds(found: dict) -> dict[str, list[dict]]:
    """The raw fetches of each order's rounds (:func:`measure` ran the orders one after
    the other, every round of one before the next)."""
    repeat = len(found["raw"]) // len(TARGETS)
    return {order: found["raw"][i * repeat : (i + 1) * repeat] for i, order in enumerate(TARGETS)}


def of_raw_fetch(found: dict, source: str = "s3") -> dict[str, float]:
    """The rate of ``source``'s stream over the raw fetch's in each order: its rows per
    second over the rows of the store per second of the raw fetch of the same round
    (the median of the rounds). Of ``local``: the inverse of the most an S3 stream of
    that order can reach here, as a share of local disk's rate (:func:`raw_ceilings`).

    >>> found = {"rows": 10, "raw": [{"seconds": s} for s in (1, 1, 2, 2, 5, 5)],
    ...          "rates": {(o, "s3"): [10.0, 10.0] for o in TARGETS}}
    >>> of_raw_fetch(found)
    {'stored': 1.0, 'random': 2.0, 'windowed': 5.0}
    """
    return {order: statistics.median(rate * r["seconds"] / found["rows"]
                                     for rate, r in zip(found["rates"][(order, source)], rounds, strict=True))
            for order, rounds in raw_rounds(found).items()}


def raw_ceilings(found: dict) -> dict[str, float]:
    """The raw fetch's rate over local disk's stream in each order (the store's rows
    over the raw fetch's seconds, against the local pass of the same round; the median
    of the rounds): the most a stream from this server can reach on this machine, as a
    share of local speed, since it downloads every chunk at least once."""
    return {order: 1 / share for order, share in of_raw_fetch(found, "local").items()}


def as_text(found: dict) -> str:
    """The measurements as tables for people."""
    load_start, load_end = found["load"]
    lines = [f"{found['rows']:,} rows, blocks of {found['block']:,}; load average {load_start} at the start, "
             f"{load_end} at the end", *(layout_line(name, record) for name, record in found["layout"].items()), "",
             f"{'order':<10}{'source':<16}{'k rows/s (median)':>18}{'memory MB':>11}"]
    for (order, source), rates in found["rates"].items():
        lines.append(f"{order:<10}{source:<16}{statistics.median(rates) / 1e3:>18,.0f}"
                     f"{found['memory'][(order, source)]:>11,.1f}")
    lines += ["", f"{'order':<10}{'source':<16}{'× local':>8}{'target':>8}  holds"]
    for r in ratios(found["rates"]):
        lines.append(f"{r['order']:<10}{r['source']:<16}{r['ratio']:>8.2f}{r['target']:>8}  "
                     f"{'yes' if r['holds'] else 'NO'}")
    raw = found["raw"]
    mb = statistics.median(r["bytes"] / r["seconds"] for r in raw) / 1e6
    lines += ["", f"raw fetch of the store's {raw[0]['requests']} chunk objects ({raw[0]['bytes'] / 1e6:,.0f} MB), "
              f"concurrent: {mb:,.0f} MB/s, "
              f"{statistics.median(r['requests'] / r['seconds'] for r in raw):,.0f} requests/s "
              f"(local disk: {statistics.median(r['bytes'] / r['local seconds'] for r in raw) / 1e6:,.0f} MB/s)",
              f"{'order':<10}{'raw × local':>12}{'s3 × raw fetch':>15}{'server CPU s':>14}{'reader CPU s':>14}  "
              "(raw × local: the most s3 can reach; s3, per pass; reader local: CPU s)"]
    ceilings = raw_ceilings(found)
    for order, share in of_raw_fetch(found).items():
        server = statistics.median(c[0] for c in found["cpu"][(order, "s3")])
        reader = statistics.median(c[1] for c in found["cpu"][(order, "s3")])
        local = statistics.median(c[1] for c in found["cpu"][(order, "local")])
        lines.append(f"{order:<10}{ceilings[order]:>12.2f}{share:>15.2f}{server:>14.2f}{reader:>14.2f}  ({local:.2f})")
    return "\n".join(lines)


def as_record(found: dict, quick: bool, command: str | None = None) -> dict:
    """The run as a record of bench ``object-store`` (``object-store-quick``)."""
    figures = [measurement({"order": order, "source": source}, "rows/s", rates)
               for (order, source), rates in found["rates"].items()]
    figures += [measurement({"order": order, "source": source}, "MB peak per stream", [mb])
                for (order, source), mb in found["memory"].items()]
    for i, process in enumerate(("server", "reader")):
        figures += [measurement({"order": order, "source": source, "process": process}, "CPU s per pass",
                                [c[i] for c in cpu]) for (order, source), cpu in found["cpu"].items()]
    raw = found["raw"]
    figures += [measurement({"fetch": "raw, concurrent"}, "MB/s", [r["bytes"] / r["seconds"] / 1e6 for r in raw]),
                measurement({"fetch": "raw, concurrent"}, "requests/s", [r["requests"] / r["seconds"] for r in raw]),
                measurement({"fetch": "local files"}, "MB/s", [r["bytes"] / r["local seconds"] / 1e6 for r in raw])]
    extra = [derived({"order": r["order"], "source": r["source"], "target": str(r["target"])}, "× local", r["ratio"])
             for r in ratios(found["rates"])]
    extra += [derived({"order": order, "source": "s3"}, "× raw fetch", value)
              for order, value in of_raw_fetch(found).items()]
    extra += [derived({"order": order, "source": "raw fetch", "target": str(TARGETS[order])}, "× local", value)
              for order, value in raw_ceilings(found).items()]
    extra += [derived({"array": name, "codec": layout["codec"]}, "elements a chunk", layout["chunk_elements"])
              for name, layout in found["layout"].items()]
    extra += [derived({"when": when}, "load average", value)
              for when, value in zip(("start", "end"), found["load"], strict=True) if value is not None]
    return new_record("object-store-quick" if quick else "object-store", figures, extra, command)


def main(args) -> int:
    """``python -m benchmarks object-store``: the table, and a record in ``args.record``."""
    found = object_store_bench(quick=args.quick, repeat=args.repeat)
    if args.record:
        record = as_record(found, args.quick, args.command_line)
        print(f"record: {write_record(args.record, record)}", file=sys.stderr)
    print(as_text(found))
    return 0
