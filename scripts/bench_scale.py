"""Measure how the sweep engine scales: the client's and the workers' time per cell,
the fixed start-up, and the speed-up from 1 to 2 workers; predict larger clusters with
Amdahl's law.

Usage::

    python3 scripts/bench_scale.py                       # tiny, irma, cutoff_rcv1, linear_zoo
    python3 scripts/bench_scale.py --only tiny --cells 2000 --repeats 1   # a quick look
    python3 scripts/bench_scale.py --million             # also 10^6 cells: memory, kill, resume
    python3 scripts/bench_scale.py --only million --million-cells 20000  # that path, quickly
    python3 scripts/bench_scale.py --work /tmp/bench --json /tmp/bench/figures.json

Workloads
---------
tiny
    A generated pipeline of ``--cells`` IRMA cells of 20 examples each (default 100,000).
irma, cutoff_rcv1, linear_zoo
    The pipelines of ``pipelines/``; the last two read ``../shared/data`` (relative to the
    repository) and are skipped when it is missing.
million
    With ``--million`` only: ``--million-cells`` tiny cells (default 1,000,000) on 2
    workers. One run measures the client's peak memory and the wall time; a second one
    is killed (SIGKILL to its process group) once it has stored some parts, then run
    again: that resume's time to its first submit is measured, and ``dolb report`` must
    work on the folder afterwards.

Every run is ``python3 -m dolb.cli run PIPELINE --out DIR --workers N --no-progress`` in
a process of its own (through :func:`child_main`, which records when the first batch is
submitted), on a fresh result folder. Runs alternate between 1 and 2 workers,
``--repeats`` times each. Generated and imported datasets are kept in ``WORK/data-cache``
(``DOLB_DATA_CACHE``), so only the first run of a workload builds them.

Definitions
-----------
client time per cell
    CPU time (user + system, every thread) of the ``dolb run`` process from just before
    its first submit to its exit, divided by the cells it ran. The embedded
    LocalCluster's scheduler runs inside that process and counts; the worker processes
    do not. Shown beside it, "(in compute)": the same up to the end of the compute
    phase only (the run record's ``client_cpu_seconds``), without the fixed tail of
    cluster shutdown, aggregate and reports.
worker time per cell
    Wall seconds of the compute phase × workers / cells: roughly the worker time a cell
    takes (time a worker waits for the client counts too).
client share s
    Client time per cell / worker time per cell. Amdahl's law then predicts a speed-up
    of ``1 / (s + (1 - s) / N)`` on N workers; s is taken from the 1-worker runs, where
    the client and the worker each have a core of their own.
start-up
    The fixed cost before the first submit, reported apart from the per-cell figures;
    of it, "imports" is the time from process start to ``dolb``'s main (interpreter and
    imports), "data" and "cluster" (start, kernel warm-up included) the run's phases.
speed ratio
    Median wall time on 1 worker / median wall time on 2 workers, start-up included
    (also given for the compute phase alone).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

SCRIPTS = Path(__file__).resolve().parent
REPO = SCRIPTS.parent
PIPELINES = REPO / "pipelines"
SHARED_DATA = REPO.parent / "shared" / "data"
"""The real datasets the cutoff and zoo pipelines read."""

WORKER_COUNTS = (1, 2)
"""The worker counts every workload alternates between."""
AMDAHL_WORKERS = (16, 64)
"""Cluster sizes the speed-up is predicted for."""
CLIENT_TARGET_US = 20.0
"""Client time per cell the tiny workload should stay under (µs)."""
SAMPLE_SECONDS = 0.05
"""How often the parent samples the ``dolb run`` process's memory."""
MARKER = "BENCH-SCALE-JSON "
"""Prefix of the line in which a run reports its figures."""

WORKLOADS = ("tiny", "irma", "cutoff_rcv1", "linear_zoo")
"""The workloads run by default, in order (``million`` is asked with --million)."""
NEEDS_SHARED_DATA = {"cutoff_rcv1", "linear_zoo"}

TINY_PIPELINE = """\
[pipeline]
name = "tiny"
description = "{n} IRMA cells of 20 examples: the engine's cost per cell"
seed = 1

[datasets.irma]
generator = "irma"
params = {{ n_sequences = {n}, length = 20 }}

[experiments.tiny]
dataset = "irma"
task = "regression"
split = {{ scheme = "sequences", count = {n} }}
checkpoints = [20]
metrics = ["test_mse", "online_loss"]
learners = [
  {{ learner = "irma", complexity = 4, params = {{ basis = "legendre", domain_high = 3.0 }} }},
]

[[reports]]
kind = "table"
experiment = "tiny"
metric = "test_mse"
title = "Tiny cells: test MSE after 20 examples"
"""


# --- in the child process -------------------------------------------------------------


def child_main(argv: list[str]) -> int:
    """Run ``dolb`` with ``argv`` (a ``run`` command) in this process and print one
    line of figures (:data:`MARKER` then JSON).

    ``dolb.execution.sweep._compute`` is wrapped to note the CPU time and the time since
    process start just before the first submit.

    Parameters
    ----------
    argv : list of str
        The ``dolb`` command line, ``--out DIR`` included.

    Returns
    -------
    int
        ``dolb``'s exit status.
    """
    # perf_counter's value at process start: the interpreter's start-up counts too
    started = time.perf_counter() - (time.time() - psutil.Process().create_time())
    from dolb import cli
    from dolb.execution import sweep
    from dolb.results.history import find_record
    from dolb.results.store import ResultStore

    figures: dict[str, Any] = {}
    compute = sweep._compute

    def timed_compute(*args, **kwargs):
        figures["submit_cpu"] = time.process_time()
        figures["submit_at"] = time.perf_counter() - started
        return compute(*args, **kwargs)

    sweep._compute = timed_compute
    figures["main_at"] = time.perf_counter() - started
    status = cli.main(argv)
    figures["exit_cpu"] = time.process_time()
    figures["exit_at"] = time.perf_counter() - started
    if status in (0, 1):  # a finished run, failed cells or not
        record = find_record(ResultStore(argv[argv.index("--out") + 1]))
        figures["record"] = {key: record.get(key) for key in ("run_id", "counts", "timings", "client_cpu_seconds")}
        figures["record"]["workers"] = len(record.get("workers", {}))
    print(MARKER + json.dumps(figures), flush=True)
    return status


# --- launching and measuring runs ------------------------------------------------------


def run_command(pipeline: Path, out: Path | str, workers: int | str) -> list[str]:
    """The ``dolb run`` command line of one run (without the interpreter)."""
    return ["run", str(pipeline), "--out", str(out), "--workers", str(workers), "--no-progress"]


def reproduce_line(cache: Path, pipeline: Path) -> str:
    """The shell command a reader types to repeat a run by hand (``DIR`` a fresh
    folder, ``N`` the workers)."""
    args = run_command(pipeline, "DIR", "N")
    return f"DOLB_DATA_CACHE={shlex.quote(str(cache))} python3 -m dolb.cli " + shlex.join(args)


def launch(
    argv: list[str], log: Path, env: dict[str, str], kill_when: Callable[[], bool] | None = None
) -> dict[str, Any]:
    """Run ``dolb argv`` through :func:`child_main` in a new process group, sampling its
    resident memory every :data:`SAMPLE_SECONDS`.

    Parameters
    ----------
    argv : list of str
        The ``dolb`` command line.
    log : Path
        Where the process's standard output and error go.
    env : dict
        Its environment.
    kill_when : callable, optional
        Checked at every sample; when it returns True the whole process group (the
        cluster's workers included) is killed with SIGKILL.

    Returns
    -------
    dict
        The child's figures (see :func:`child_main`; empty when it was killed or
        crashed) plus ``wall`` (seconds from launch to exit, as seen by this process),
        ``peak_rss`` (bytes; the process and its threads, not its child processes),
        ``status``, ``killed`` and ``log``.
    """
    entry = (
        f"import sys; sys.path.insert(0, {str(SCRIPTS)!r}); import bench_scale; "
        "sys.exit(bench_scale.child_main(sys.argv[1:]))"
    )
    with open(log, "w", encoding="utf-8") as output:
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-c", entry, *argv], stdout=output, stderr=subprocess.STDOUT,
            env=env, start_new_session=True,
        )
        try:
            peak, killed = _watch(process, kill_when)
        finally:  # what is left of the group: all of it when this script is interrupted
            _kill_group(process)
            status = process.wait()
        wall = time.perf_counter() - started
    figures = _read_figures(log)
    return figures | {"wall": wall, "peak_rss": peak, "status": status, "killed": killed, "log": str(log)}


def _watch(process: subprocess.Popen, kill_when: Callable[[], bool] | None) -> tuple[int, bool]:
    """Sample the resident memory of ``process`` until it exits, or until ``kill_when()``
    holds: then kill its process group. Return the peak (bytes) and whether it was
    killed."""
    watched, peak = psutil.Process(process.pid), 0
    while True:
        try:
            peak = max(peak, watched.memory_info().rss)
        except psutil.NoSuchProcess:  # exited (a zombie) since the last look
            return peak, False
        if kill_when is not None and kill_when():
            _kill_group(process)
            return peak, True
        try:
            process.wait(timeout=SAMPLE_SECONDS)
            return peak, False
        except subprocess.TimeoutExpired:
            pass


def _kill_group(process: subprocess.Popen) -> None:
    """SIGKILL the process group ``process`` leads (its cluster's workers included)."""
    with contextlib.suppress(ProcessLookupError):  # nothing left of it
        os.killpg(process.pid, signal.SIGKILL)


def _read_figures(log: Path) -> dict[str, Any]:
    """The figures a run printed in its log, or an empty dict."""
    lines = [line for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if line.startswith(MARKER)]
    return json.loads(lines[-1][len(MARKER):]) if lines else {}


def derive(run: dict[str, Any]) -> dict[str, Any]:
    """The per-cell figures of one finished run (see the module's definitions).

    Parameters
    ----------
    run : dict
        What :func:`launch` returned.

    Returns
    -------
    dict
        Workers, cells (run, not cached), wall, start-up (seconds to the first submit)
        and its parts (imports, plan, data, cluster), compute seconds, client CPU
        seconds (to exit; to the end of compute), client µs per cell (to exit; to the
        end of compute), worker µs per cell, the client share s, peak RSS (MiB) and
        the run's log.
    """
    record = run.get("record")
    if record is None:
        raise RuntimeError(f"a run did not finish (exit status {run['status']}); see {run['log']}")
    counts, timings, workers = record["counts"], record["timings"], record["workers"]
    cells = counts["computed"] + counts["failed"]
    submitted = run.get("submit_cpu") is not None
    client_cpu = run["exit_cpu"] - run["submit_cpu"] if submitted else None
    client_us = client_cpu / cells * 1e6 if submitted and cells else None
    worker_us = timings["compute"] * workers / cells * 1e6 if cells else None
    return {
        "workers": workers,
        "cells": cells,
        "cached": counts["cached"],
        "failed": counts["failed"],
        "wall": run["wall"],
        "startup": run.get("submit_at"),
        "imports": run["main_at"],
        "plan": timings["plan"],
        "data": timings["data"],
        "cluster": timings["cluster"],
        "compute": timings["compute"],
        "client_cpu": client_cpu,
        "client_cpu_compute": record["client_cpu_seconds"],
        "client_us": client_us,
        "client_compute_us": record["client_cpu_seconds"] / cells * 1e6 if cells else None,
        "worker_us": worker_us,
        "share": client_us / worker_us if client_us and worker_us else None,
        "peak_rss_mib": run["peak_rss"] / 2**20,
        "log": run["log"],
    }


def median_of(runs: list[dict[str, Any]], key: str) -> float | None:
    """The median of ``key`` over the runs that have it, or None."""
    values = [run[key] for run in runs if run.get(key) is not None]
    return statistics.median(values) if values else None


def amdahl(share: float, workers: int) -> float:
    """Amdahl's predicted speed-up on ``workers`` workers with serial fraction ``share``.

    Examples
    --------
    >>> round(amdahl(0.01, 64), 1)
    39.3
    """
    return 1 / (share + (1 - share) / workers)


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians per worker count, speed ratios and Amdahl's predictions of a workload.

    Parameters
    ----------
    runs : list of dict
        :func:`derive` of every run of the workload.

    Returns
    -------
    dict
        ``by_workers`` (worker count -> medians), ``wall_ratio`` and
        ``compute_ratio`` (1 worker / 2 workers), ``share`` (s of the 1-worker runs)
        and ``amdahl`` (cluster size -> predicted speed-up).
    """
    keys = ("wall", "startup", "imports", "data", "cluster", "compute", "client_us", "client_compute_us",
            "worker_us", "share", "peak_rss_mib")
    by_workers = {}
    for count in WORKER_COUNTS:
        chosen = [run for run in runs if run["requested"] == count]
        by_workers[count] = {key: median_of(chosen, key) for key in keys} | {"runs": len(chosen)}
    one, two = by_workers[WORKER_COUNTS[0]], by_workers[WORKER_COUNTS[-1]]
    share = one["share"]
    return {
        "cells": runs[0]["cells"],
        "by_workers": by_workers,
        "wall_ratio": _ratio(one["wall"], two["wall"]),
        "compute_ratio": _ratio(one["compute"], two["compute"]),
        "share": share,
        "amdahl": {n: amdahl(share, n) for n in AMDAHL_WORKERS} if share is not None else {},
    }


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


# --- workloads ---------------------------------------------------------------------------


def write_tiny(folder: Path, n_cells: int) -> Path:
    """Write the tiny pipeline of ``n_cells`` cells into ``folder``; return its path."""
    path = folder / f"tiny-{n_cells}.toml"
    path.write_text(TINY_PIPELINE.format(n=n_cells), encoding="utf-8")
    return path


def write_with_splits(name: str, folder: Path, count: int) -> Path:
    """Write a copy of ``pipelines/NAME.toml`` into ``folder`` with ``count`` splits per
    experiment instead of its own (the data paths made absolute); return its path."""
    text = (PIPELINES / f"{name}.toml").read_text(encoding="utf-8")
    text = re.sub(r"(split = \{[^}]*\bcount = )\d+", rf"\g<1>{count}", text)
    text = text.replace('"../../shared/data/', f'"{SHARED_DATA.resolve()}/')
    path = folder / f"{name}-{count}-splits.toml"
    path.write_text(text, encoding="utf-8")
    return path


def pipeline_of(name: str, work: Path, n_cells: int, splits: dict[str, int]) -> Path:
    """The pipeline file of workload ``name``: the tiny one and a study given other
    ``splits`` are written into ``work``."""
    if name == "tiny":
        return write_tiny(work, n_cells)
    if name in splits:
        return write_with_splits(name, work, splits[name])
    return PIPELINES / f"{name}.toml"


def measure_workload(name: str, pipeline: Path, folder: Path, repeats: int, env: dict[str, str]) -> dict[str, Any]:
    """Run ``pipeline`` ``repeats`` times on each worker count, alternating, each on a
    fresh result folder under ``folder``; print each run as it ends.

    Returns
    -------
    dict
        ``pipeline``, ``runs`` (:func:`derive` of each, plus ``requested`` workers and
        ``out``) and ``summary`` (:func:`summarise`).
    """
    folder.mkdir(parents=True)
    runs = []
    for repeat in range(1, repeats + 1):
        for workers in WORKER_COUNTS:
            out = folder / f"r{repeat}-w{workers}"
            run = derive(launch(run_command(pipeline, out, workers), folder / f"r{repeat}-w{workers}.log", env))
            run |= {"requested": workers, "out": str(out)}
            print(f"  {name} repeat {repeat}, {workers} worker(s): {run['wall']:.1f} s "
                  f"({run['cells']} cells, {run['failed']} failed)", flush=True)
            runs.append(run)
    return {"pipeline": str(pipeline), "runs": runs, "summary": summarise(runs)}


def measure_million(n_cells: int, folder: Path, env: dict[str, str]) -> dict[str, Any]:
    """The million workload on 2 workers: a full run (peak RSS, wall), a run killed
    once parts exist, its resume (time to first submit) and ``dolb report`` after it."""
    folder.mkdir(parents=True)
    pipeline = write_tiny(folder, n_cells)
    workers = WORKER_COUNTS[-1]
    full = launch(run_command(pipeline, folder / "full", workers), folder / "full.log", env)
    print(f"  million full run: {full['wall']:.1f} s", flush=True)
    killed_out = folder / "killed"
    parts = killed_out / "results"
    killed = launch(run_command(pipeline, killed_out, workers), folder / "killed.log", env,
                    kill_when=lambda: any(parts.glob("part-*.parquet")))
    n_parts = len(list(parts.glob("part-*.parquet")))
    print(f"  million killed run: {'killed' if killed['killed'] else 'NOT killed (it ended first)'} "
          f"after {killed['wall']:.1f} s with {n_parts} part(s) stored", flush=True)
    resumed = launch(run_command(pipeline, killed_out, workers), folder / "resume.log", env)
    print(f"  million resume: {resumed['wall']:.1f} s", flush=True)
    report = _report(killed_out, folder / "report.log", env)
    return {
        "pipeline": str(pipeline),
        "full": derive(full),
        "killed": {"killed": killed["killed"], "seconds": killed["wall"], "parts": n_parts},
        "resume": derive(resumed) | {"to_first_submit": resumed.get("submit_at")},
        "report": report,
    }


def _report(out: Path, log: Path, env: dict[str, str]) -> dict[str, Any]:
    """Run ``dolb report OUT``; its exit status, seconds and log."""
    started = time.perf_counter()
    with open(log, "w", encoding="utf-8") as output:
        status = subprocess.call([sys.executable, "-m", "dolb.cli", "report", str(out)],
                                 stdout=output, stderr=subprocess.STDOUT, env=env)
    return {"status": status, "seconds": time.perf_counter() - started, "log": str(log)}


# --- output -----------------------------------------------------------------------------


def text_table(headers: list[str], rows: list[list[Any]]) -> str:
    """Rows under headers, columns right-aligned; floats to three significant figures,
    None as ``-``.

    Examples
    --------
    >>> print(text_table(["a", "b"], [[1.23456, None]]))
       a  b
    1.23  -
    """
    cells = [[_cell(value) for value in row] for row in rows]
    widths = [max([len(h), *(len(row[i]) for row in cells)]) for i, h in enumerate(headers)]
    lines = [headers] + cells
    return "\n".join("  ".join(value.rjust(width) for value, width in zip(line, widths)) for line in lines)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


RUN_HEADERS = ["run", "workers", "wall s", "start-up s", "imports", "data", "cluster", "compute s",
               "client µs/cell", "(in compute)", "worker µs/cell", "s %", "peak RSS MiB"]


def _run_row(label: str, workers: int, run: dict[str, Any]) -> list[Any]:
    share = run["share"] * 100 if run["share"] is not None else None
    return [label, workers, run["wall"], run["startup"], run["imports"], run["data"], run["cluster"],
            run["compute"], run["client_us"], run["client_compute_us"], run["worker_us"], share,
            run["peak_rss_mib"]]


def workload_text(name: str, measured: dict[str, Any]) -> str:
    """A workload's table (every run, then the medians) and its ratios."""
    summary = measured["summary"]
    rows = [_run_row(f"#{i}", run["requested"], run) for i, run in enumerate(measured["runs"], 1)]
    rows += [_run_row("median", count, medians) for count, medians in summary["by_workers"].items()]
    one, two = WORKER_COUNTS[0], WORKER_COUNTS[-1]
    lines = [
        f"== {name}: {summary['cells']:,} cells ({measured['pipeline']})",
        text_table(RUN_HEADERS, rows),
        f"speed ratio {one} -> {two} workers: wall {_cell(summary['wall_ratio'])} (start-up included), "
        f"compute phase {_cell(summary['compute_ratio'])}",
    ]
    if summary["share"] is not None:
        predicted = ", ".join(f"{n} workers {value:.1f}x" for n, value in summary["amdahl"].items())
        lines.append(f"client share s = {summary['share']:.2%} (1-worker runs); Amdahl: {predicted}")
    if name == "tiny":
        client = summary["by_workers"][one]["client_us"]
        verdict = "met" if client is not None and client <= CLIENT_TARGET_US else "NOT met"
        lines.append(f"client time per cell ({one}-worker median): {_cell(client)} µs; "
                     f"target <= {CLIENT_TARGET_US:g} µs {verdict}")
    return "\n".join(lines)


def million_text(measured: dict[str, Any]) -> str:
    """The million workload's figures."""
    full, resume, killed, report = measured["full"], measured["resume"], measured["killed"], measured["report"]
    state = "killed" if killed["killed"] else "NOT killed (it finished before any part appeared)"
    return "\n".join([
        f"== million: {full['cells']:,} cells on {full['workers']} workers ({measured['pipeline']})",
        f"full run: wall {full['wall']:.1f} s, client peak RSS {full['peak_rss_mib']:.0f} MiB, "
        f"client {_cell(full['client_us'])} µs/cell, worker {_cell(full['worker_us'])} µs/cell",
        f"second run: {state} after {killed['seconds']:.1f} s, {killed['parts']} part(s) stored",
        f"resume: {resume['cached']:,} cells found stored, {resume['cells']:,} run, {resume['failed']} failed; "
        f"first submit {_cell(resume['to_first_submit'])} s after start, wall {resume['wall']:.1f} s",
        f"dolb report afterwards: exit status {report['status']} in {report['seconds']:.1f} s"
        + ("" if report["status"] == 0 else f" (see {report['log']})"),
    ])


def summary_text(results: dict[str, dict[str, Any]]) -> str:
    """One row per measured workload."""
    two = WORKER_COUNTS[-1]
    headers = ["workload", "cells", "client µs/cell", "(in compute)", "worker µs/cell", "s %",
               f"start-up s ({two}w)",
               "wall 1w s", f"wall {two}w s", "wall ratio", "compute ratio",
               *(f"Amdahl {n}" for n in AMDAHL_WORKERS)]
    rows = []
    for name, measured in results.items():
        summary = measured["summary"]
        one, many = summary["by_workers"][WORKER_COUNTS[0]], summary["by_workers"][two]
        share = summary["share"] * 100 if summary["share"] is not None else None
        rows.append([name, summary["cells"], one["client_us"], one["client_compute_us"], one["worker_us"], share,
                     many["startup"],
                     one["wall"], many["wall"], summary["wall_ratio"], summary["compute_ratio"],
                     *(summary["amdahl"].get(n) for n in AMDAHL_WORKERS)])
    return "== summary (medians; per-cell figures and s from the 1-worker runs)\n" + text_table(headers, rows)


# --- main -------------------------------------------------------------------------------


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The command line, checked; ``names`` holds the workloads to run besides million."""
    parser = argparse.ArgumentParser(
        description="Measure how the sweep engine scales.", epilog=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--work", type=Path, help="work folder (default: a new temporary folder)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per worker count (default 3)")
    parser.add_argument("--cells", type=int, default=100_000, help="cells of the tiny workload (default 100,000)")
    parser.add_argument("--only", help=f"comma-separated workloads (default: {','.join(WORKLOADS)}; "
                                       "'million' here is --million)")
    parser.add_argument("--million", action="store_true", help="also run the million workload")
    parser.add_argument("--million-cells", type=int, default=1_000_000,
                        help="cells of the million workload (default 1,000,000; smaller for a quick check)")
    parser.add_argument("--splits", default="", metavar="NAME=K,...",
                        help="run these studies with K splits per experiment instead of their own "
                             "(e.g. cutoff_rcv1=50,linear_zoo=5: at least 30 s of cell compute)")
    parser.add_argument("--json", type=Path, help="save every figure to this JSON file")
    args = parser.parse_args(argv)
    names = args.only.split(",") if args.only else list(WORKLOADS)
    if "million" in names:
        names.remove("million")
        args.million = True
    unknown = [name for name in names if name not in WORKLOADS]
    if unknown:
        parser.error(f"--only: unknown workload(s) {', '.join(unknown)} (known: {', '.join(WORKLOADS)})")
    if min(args.repeats, args.cells, args.million_cells) < 1:
        parser.error("--repeats, --cells and --million-cells must be positive")
    args.names = names
    asked, args.splits = args.splits, {}
    for item in filter(None, asked.split(",")):
        name, _, count = item.partition("=")
        if name not in NEEDS_SHARED_DATA or not count.isdigit() or int(count) < 1:
            parser.error(f"--splits: {item!r} is not STUDY=K with STUDY one of "
                         f"{', '.join(sorted(NEEDS_SHARED_DATA))} and K a positive integer")
        args.splits[name] = int(count)
    return args


def run_workloads(args: argparse.Namespace, folder: Path, cache: Path) -> dict[str, Any]:
    """Measure every workload asked, in order.

    Returns
    -------
    dict
        ``workloads`` (name -> :func:`measure_workload`), ``million``
        (:func:`measure_million` or None), ``sections`` (the text of each workload,
        skipped ones included) and ``commands`` (how to repeat one of their runs).
    """
    env = os.environ | {"DOLB_DATA_CACHE": str(cache)}
    found: dict[str, Any] = {"workloads": {}, "million": None, "sections": [], "commands": []}
    for name in args.names:
        if name in NEEDS_SHARED_DATA and not SHARED_DATA.is_dir():
            found["sections"].append(f"== {name}: skipped, {SHARED_DATA} (../shared/data) is missing")
            continue
        pipeline = pipeline_of(name, folder, args.cells, args.splits)
        measured = measure_workload(name, pipeline, folder / name, args.repeats, env)
        found["workloads"][name] = measured
        found["sections"].append(workload_text(name, measured))
        found["commands"].append(reproduce_line(cache, pipeline))
    if args.million:
        million = measure_million(args.million_cells, folder / "million", env)
        found["million"] = million
        found["sections"].append(million_text(million))
        found["commands"].append(reproduce_line(cache, Path(million["pipeline"])))
    return found


def main(argv: list[str] | None = None) -> int:
    """Measure the workloads, print their tables and the summary, save the figures."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _exit_on_signal)  # so a terminated bench kills its runs
    work = (args.work or Path(tempfile.mkdtemp(prefix="dolb-bench-scale-"))).absolute()
    folder = work / time.strftime("bench-%Y%m%dT%H%M%S")
    cache = work / "data-cache"
    folder.mkdir(parents=True)
    print(f"work folder {folder}; data cache {cache}; {psutil.cpu_count()} cores", flush=True)
    if args.repeats < 3:
        print(f"note: {args.repeats} repeat(s) per worker count: each median is of fewer than 3 runs")
    found = run_workloads(args, folder, cache)
    print("\n" + "\n\n".join(found["sections"]))
    if found["workloads"]:
        print("\n" + summary_text(found["workloads"]))
    print("\nto reproduce (a run by hand: DIR a fresh folder, N the workers):")
    print("  python3 " + shlex.join([os.path.relpath(__file__), *argv]))
    print("\n".join(f"  {command}" for command in found["commands"]))
    if args.json:
        figures = {"cores": psutil.cpu_count(), "work": str(folder),
                   "workloads": found["workloads"], "million": found["million"]}
        args.json.write_text(json.dumps(figures, indent=1), encoding="utf-8")
        print(f"figures saved to {args.json}")
    return 0


def _exit_on_signal(number: int, frame) -> None:
    sys.exit(128 + number)


if __name__ == "__main__":
    sys.exit(main())
