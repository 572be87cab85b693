"""The documentation's performance pages, rendered from the benchmark records
(:mod:`dolb.bench.records`) when the site is built: no figure in them is typed by hand.

One page per bench: what it measures and how to run it, then its latest record (the
machine, the versions, the exact command, every measurement's median and spread, the
derived ratios) and the history of every measurement, the series of its records'
medians. ``performance/index.md`` lists the benches and links their pages.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from dolb.bench.records import read_records

ABOUT = {
    "throughput": (
        "The speed of every benchmarked learner (its registry entry's `bench_params`), bare (`last` conversion) and "
        "with all the conversions it supports, from memory and from a Zarr store, on a sparse stream (the "
        "`sparse_text` generator: 100,000 × 50,000 rows, ~80 non-zeros) and a dense one (200,000 × 100 rows of "
        "norm 1), test-then-train in blocks of 8,192 with the prequential 0-1 loss summed as a cell does. "
        "Examples per CPU-second (of the learner's thread from memory, of the whole process from a store), every "
        "repeat timed round-robin; the reference is a hand-written Numba Perceptron loop over the same arrays. "
        "Also the memory of cutoff averaging's sums as the stream grows (O(d·√m)).",
        "dolb bench --record benchmarks/records"),
    "throughput-quick": ("The same as *throughput* on a tenth of the streams: what the nightly gate runs.",
                         "dolb bench --quick --record benchmarks/records"),
    "stream": (
        "A study's cell against the floor of its own update: the five sparse linear learners on the RCV1 sample "
        "(CCAT vs MCAT) and a9a, one pass each as a bare Numba loop over the in-memory CSR, as dolb from memory, "
        "and as dolb from a Zarr store (in order, permuted, windowed; warm and cold chunk cache), with Vowpal "
        "Wabbit and river when installed. Examples per CPU-second of the whole process, every repeat; derived: "
        "each row's test accuracy and the floors (ratios of two variants with a bootstrap 95 % interval).",
        "dolb bench stream --record benchmarks/records"),
    "stream-no-peers": ("The same as *stream* without Vowpal Wabbit and river.",
                        "dolb bench stream --no-peers --record benchmarks/records"),
    "object-store": (
        "A dataset streamed from an S3-protocol server against the same store on local disk, side by side in one "
        "run: a sparse store of 300,000 rows (80 non-zeros a row, 24 M float64 values) written on local disk and "
        "its files copied to a bucket of moto's S3 server, which the bench starts on loopback. Every row streamed "
        "as a cell of the linear learners reads it (its block size, its read-ahead), in stored, random and "
        "windowed order, from local disk, from the server, and from the server with a node chunk cache an "
        "earlier pass filled (`DOLB_CHUNK_CACHE`). Rows per second, every repeat (wall time, interleaved); the "
        "peak MB a stream allocated in one more pass (tracemalloc); derived: each source's rate over local "
        "disk's (median of the per-round ratios) beside its target (stored and windowed 0.7, random 0.5), and "
        "the load averages at the start and the end. The server, the reader and any other work share the "
        "machine's cores. What the server delivers, beside: in every round, the store's chunk objects fetched "
        "raw by s3fs, all at once (bytes only: no decoding, no learner), in MB/s and requests/s, and the same "
        "files read from local disk; the CPU seconds of every pass, of the server's process and of the reading "
        "process (`process` label); derived, each S3 stream's rate over the raw fetch's (`× raw fetch`: the "
        "share of what this server and client deliver that the stream reaches, each chunk downloaded once in "
        "every order), and the raw fetch's own rate over local disk's stream in each order (source `raw fetch`, "
        "`× local`: the store's rows over the raw fetch's time): the most any stream from this server can reach "
        "on this machine, as it downloads every chunk at least once. Where that ceiling is under an order's "
        "target, the target cannot be met here whatever the reader does: the CPU figures say whose time it is "
        "(the server, moto's single Python process, and the reader's HTTP client, on the same cores). The "
        "store's layout, chosen by measurement when it is written as any store's (`elements a chunk`, by array "
        "and codec), sets the number of chunk objects and the work of a local pass.",
        "python -m benchmarks object-store --repeat 3 --record benchmarks/records"),
    "object-store-quick": ("The same as *object-store* on 30,000 rows.",
                           "python -m benchmarks object-store --quick --repeat 3 --record benchmarks/records"),
    "omr": (
        "Online manifold regularisation's cost on the two spirals: examples per second of the buffered "
        "(τ = 100, 200) and clustered learners over a stream of T examples, and the time per step of each, the "
        "exact learner's included, in the 100 steps up to t (the exact one's grows like t², the others' not). "
        "Each figure measured once.",
        "dolb bench omr 2000 --record benchmarks/records"),
    "kernel": (
        "LASVM's single pass on MNIST digit 3 against the rest (RBF kernel) against LIBSVM (scikit-learn's SVC) "
        "and Vowpal Wabbit's `--ksvm` when installed: wall seconds of each, measured once.",
        "dolb bench kernel 2000 --record benchmarks/records"),
    "scale": (
        "How the sweep engine scales: each workload run as `dolb run` on 1 and then 2 workers, and at two sizes "
        "(at least 1,000 cells apart) on a scheduler and a worker of their own (label `scheduler`); the client's "
        "and the workers' CPU time per cell, the client's marginal work per cell (the cells added, its "
        "background taken off) and its fixed cost a run, the start-up, the compute "
        "phase, and the speed-up from 1 to 2 workers, with Amdahl's law's prediction for 16 and 64 workers (from "
        "the whole client time per cell, and from its marginal work).",
        "python -m benchmarks scale --record benchmarks/records"),
    "simulated": (
        "A simulated cluster: a real Dask scheduler and worker processes on this machine (threads beyond 8 "
        "processes), running sweeps of cells that only sleep (the `sleep` learner of `benchmarks/engine/sleep.py`: no "
        "CPU), so every CPU second is the engine's: a sweep of cells of 0.5–1 s, and successive halving of 9 "
        "configurations in each split (13 cells a split). Per slot count: the ideal compute phase (the time the "
        "cells slept / slots), the measured one, the CPU of the client, the scheduler and the workers in it, "
        "tasks, parts, memory, the cluster's start; the engine's costs per cell and per task fitted over all "
        "runs (the client's per task and per second, its cost per cell taken from the latest *scale* record); "
        "the cost model's efficiency for each run (`benchmarks/engine/cost_model.py`, with its *limit*), on this "
        "machine (its 2 cores, at the core share a busy thread got before the run) and with a core for each "
        "process, and for a million cells of each study's cell time and client work a cell (from the latest "
        "*scale* record) on 64–1,000 slots, with the engine's batching. See [a thousand slots on ten "
        "nodes](../design/scaling.md).",
        "python -m benchmarks simulated --record benchmarks/records"),
    "worker-overhead": (
        "A worker's CPU beyond the learner's own work, in one process without a cluster: cells of 64 rows of the "
        "`sleep` learner at zero seconds (no work: all of it is overhead) and of a Perceptron (test error of two "
        "conversions at 4 checkpoints), run as a worker runs a task's bytes, in tasks of 1, 16 and 256 cells; the "
        "CPU per cell and per task fitted over the sizes, beside a bare loop of the same learner on the rows in "
        "memory, a profile's shares of the parts (reading, splits, metrics, rows, the Parquet part), and, with "
        "`--dask`, the same tasks through one Dask worker process. See `benchmarks/engine/worker_overhead.py`.",
        "python -m benchmarks worker-overhead --dask --record benchmarks/records"),
    "cold-start": (
        "A first run on a fresh machine: `dolb run` of a study with an empty Numba cache (every kernel compiled, "
        "each once, by the workers in parallel) against the same run with the cache it left; the run records' "
        "cluster and compute phases and wall seconds. The bench checks that both runs stored the same values.",
        "python -m benchmarks cold-start --repeats 3 --record benchmarks/records"),
    "results-store": (
        "A study's result folder on an object store: `dolb run` of the study on the same embedded cluster and "
        "data cache, alternately into a local folder and into a bucket of moto's S3 server on loopback; the run "
        "records' compute phases and wall seconds, the server's CPU seconds in each S3 run and the most cores it "
        "kept busy over a window as long as that run's compute phase (sampled every 50 ms); derived, the compute "
        "phase on S3 / local (medians), those server cores, their share of the machine's, and the ratio they "
        "alone would explain when the workers fill the cores (cores / (cores − server cores)). On these 2 cores "
        "the server takes its CPU from the workers', which an object store on hosts of its own does not. The "
        "bench checks that both folders hold the same values.",
        "python -m benchmarks results-store --repeats 7 --record benchmarks/records"),
    "store": (
        "A result folder of a million cells (six rows each), written through the store's API in the parts a sweep "
        "leaves, then compacted: wall seconds of `dolb status` before compaction, of `dolb compact`, and of "
        "`dolb status`, `dolb report` and `dolb.read_results` (tidy columns) after, each in a process of its own; "
        "the parts before and after. Each figure measured once.",
        "python -m benchmarks store --record benchmarks/records"),
    "reader": (
        "The stream reader alone (`dolb.data.stream_blocks`): rows per second delivered from a dense store "
        "(200,000 × 50) and a sparse one (100,000 × 50,000, ~80 non-zeros a row), in stored and in permuted order, "
        "consuming nothing but the blocks; every one of three full passes.",
        "python -m benchmarks reader --record benchmarks/records"),
    "contention": (
        "How much two processes on two cores slow each other, without Dask: passes per second of a register-only "
        "Numba loop and of an AdaGrad pass over the RCV1 sample from a Zarr store, alone and two side by side; "
        "derived, side by side / alone (1.0: the cores do not interfere). The part of *scale*'s 2-worker loss "
        "that is the machine's.",
        "python -m benchmarks contention --record benchmarks/records"),
    "tuning-timeline": (
        "A halving of SGD's `alpha` (12 trials; rungs at 600, 1,200 and 2,400 examples; 4 splits) on 4 worker "
        "threads, each cell held 0.1 s beyond its work and split 0's ten times as long: when each split's rungs "
        "and chosen cell first began and last ended (seconds from the first start), and the compute phase. A "
        "slow split holds back no other (see [Tuning](../guide/tuning.md)).",
        "python -m benchmarks tuning-timeline --record benchmarks/records"),
    "ab": (
        "Two checkouts of dolb side by side: `dolb bench --no-zarr` (3 repeats a process) run alternately on "
        "each, round after round; every round's examples per CPU-second of both sides, and per measurement the "
        "median ratio after / before with its BCa 95 % interval and the one-sided Wilcoxon p, as the nightly "
        "gate judges an A/B.",
        "dolb bench ab BEFORE AFTER --rounds 7 --record benchmarks/records"),
    "gate-trial": (
        "Nights of the nightly gate on this machine: `dolb bench --quick` of four learners each night, a busy "
        "core on the nights `--busy` marks, optionally one learner slowed 0.8x; each night judged against the "
        "first as `dolb compare --confirm` judges. Each night's ratio to the reference and A/B ratio per "
        "learner; derived, the spreads `gate-noise` takes and the nights that alarmed.",
        "python -m benchmarks gate-trial OUT --record benchmarks/records"),
    "gate-noise": (
        "The nightly gate's noise model, simulated (no timing: the same seed gives the same figures anywhere): "
        "nights of 8 learners whose speeds move by a whole night's shift, a learner's own shift and a repeat's "
        "noise (the spreads, as derived figures), judged by the gate's own code; the fraction of nights that "
        "alarm with identical code and that name one learner slowed 0.8x, with and without the A/B.",
        "python -m benchmarks gate-noise --record benchmarks/records"),
}
"""For each bench: what it measures, and the command that writes its records."""
HISTORY = 8
"""Records shown in a measurement's history (the latest)."""
BUSY = 1.5
"""A record whose machine had a load average above this many times its cores when the
run ended was measured while other work shared the machine: its pages say so."""


def number(value: float) -> str:
    """A figure for a table: thousands separated, three significant digits below 100.

    Examples
    --------
    >>> number(1234567.8), number(1.23456), number(0.0001234)
    ('1,234,568', '1.23', '0.000123')
    """
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def table(headers: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table."""
    return [f"| {' | '.join(headers)} |", f"| {' | '.join('---' for _ in headers)} |",
            *(f"| {' | '.join(row)} |" for row in rows)]


def _label_keys(figures: list[dict]) -> list[str]:
    return list(dict.fromkeys(key for figure in figures for key in figure["labels"]))


def _labels(figure: dict, keys: list[str]) -> list[str]:
    return [figure["labels"].get(key, "") for key in keys]


def by_kind(figures: list[dict]) -> list[list[dict]]:
    """``figures`` grouped by their label names and unit, each group a table of its own."""
    groups: dict[tuple, list[dict]] = {}
    for figure in figures:
        groups.setdefault((tuple(figure["labels"]), figure["unit"]), []).append(figure)
    return list(groups.values())


def measurement_table(figures: list[dict]) -> list[str]:
    """Every measurement of a record: its labels, unit, median, lowest and highest
    repeat and the number of repeats."""
    keys = _label_keys(figures)
    rows = [[*_labels(f, keys), f["unit"], number(statistics.median(f["repeats"])), number(min(f["repeats"])),
             number(max(f["repeats"])), str(len(f["repeats"]))] for f in figures]
    return table([*keys, "unit", "median", "lowest", "highest", "repeats"], rows)


def derived_table(figures: list[dict]) -> list[str]:
    """Every derived figure of a record."""
    keys = _label_keys(figures)
    return table([*keys, "unit", "value"], [[*_labels(f, keys), f["unit"], number(f["value"])] for f in figures])


def history_table(records: list[dict]) -> list[str]:
    """Each measurement's median in each of the latest :data:`HISTORY` records, oldest
    first (empty where a record lacks it)."""
    shown = records[-HISTORY:]
    series: dict[tuple, dict[int, float]] = {}
    for i, record in enumerate(shown):
        for figure in record["measurements"]:
            key = (tuple(figure["labels"].items()), figure["unit"])
            series.setdefault(key, {})[i] = statistics.median(figure["repeats"])
    headers = ["measurement", "unit", *(f"{r['date'][:10]} `{(r['versions'].get('git_commit') or '?')[:7]}`"
                                        + (" (busy)" if busy(r) else "") for r in shown)]
    rows = [[", ".join(value for _, value in labels), unit, *(number(found[i]) if i in found else ""
                                                              for i in range(len(shown)))]
            for (labels, unit), found in series.items()]
    return table(headers, rows)


def busy(record: dict) -> bool:
    """Whether other work shared the machine: a load average above :data:`BUSY` × cores."""
    machine = record["machine"]
    load, cores = machine.get("load_average"), machine.get("cores")
    return isinstance(load, (int, float)) and isinstance(cores, int) and load > BUSY * cores


def setting(record: dict) -> list[str]:
    """Where and how a record was measured: date, command, machine, versions."""
    machine, versions = record["machine"], record["versions"]
    arithmetic = machine.get("arithmetic") or {}
    packages = ", ".join(f"{name} {version}" for name, version in versions.items()
                         if name not in ("python", "git_commit") and version)
    return [f"- **date**: {record['date']}", f"- **command**: `{record['command']}`",
            f"- **machine**: {machine.get('cpu')}, {machine.get('cores')} cores, {machine.get('memory_gb')} GB, "
            f"{machine.get('platform')}; load average {machine.get('load_average')}; Numba target "
            f"{arithmetic.get('numba_cpu')}, NumPy SIMD {arithmetic.get('numpy_simd')}",
            f"- **versions**: Python {versions.get('python')}, {packages}; git commit "
            f"`{versions.get('git_commit') or 'unknown'}`",
            *([f"- **busy**: a load average of {machine['load_average']} on {machine['cores']} cores: other work "
               "shared the machine, so these figures are lower and noisier than a quiet machine's"]
              if busy(record) else [])]


def bench_page(bench: str, records: list[dict]) -> str:
    """The page of one bench: what it measures, its latest record, its history."""
    about, command = ABOUT.get(bench, ("", ""))
    latest = records[-1]
    lines = [f"# {bench}", ""]
    lines += [about, "", f"Run: `{command}` (one record per run).", ""] if about else []
    lines += ["## Latest record", "", *setting(latest), ""]
    if bench == "simulated":
        from benchmarks.engine.simulate_record import limits_text

        lines += [f"![Efficiency against worker slots]({bench}.png)", "", limits_text(latest), ""]
    lines += ["### Measurements", ""]
    for group in by_kind(latest["measurements"]):
        lines += [*measurement_table(group), ""]
    if latest["derived"]:
        lines += ["### Derived", ""]
        for group in by_kind(latest["derived"]):
            lines += [*derived_table(group), ""]
    lines += ["## History", "", f"The median of each measurement in the latest {min(len(records), HISTORY)} of "
              f"{len(records)} records (date and commit; *busy*: measured while other work shared the machine).",
              "", *history_table(records), ""]
    return "\n".join(lines)


def performance_pages(records_dir: Path) -> dict[str, str | bytes]:
    """The performance pages rendered from the records in ``records_dir``
    (``<bench>/<date>-<hash>.json``): ``{path under docs/: Markdown}``, always with
    ``performance/index.md``, which links the others, and the figures they show
    (``{path: PNG}``). ConfigError naming the file for a damaged record."""
    found = read_records(records_dir) if Path(records_dir).is_dir() else {}
    index = ["# Performance", "", "Every figure on these pages is rendered from a record file in "
             "`benchmarks/records/<bench>/`, which a bench writes when given `--record DIR`: the machine, the "
             "versions, the exact command, the date and every repeat. A bench's history is the series of its "
             "records.", ""]
    if not found:
        return {"performance/index.md": "\n".join([*index, "No records yet.", ""])}
    rows = [[f"[{bench}]({bench}.md)", str(len(records)), records[-1]["date"], ABOUT.get(bench, ("", ""))[1]
             and f"`{ABOUT[bench][1]}`"] for bench, records in found.items()]
    pages = {"performance/index.md": "\n".join([*index, *table(["bench", "records", "latest", "run"], rows), ""])}
    pages.update({f"performance/{bench}.md": bench_page(bench, records) for bench, records in found.items()})
    if "simulated" in found:
        from benchmarks.engine.simulate_record import efficiency_figure

        pages["performance/simulated.png"] = efficiency_figure(found["simulated"][-1])
    return pages
