"""``python -m benchmarks scale``: how the sweep engine scales, the client's and the workers' time
per cell, the fixed start-up, and the speed-up from 1 to 2 workers; larger clusters
predicted with Amdahl's law.

Usage::

    python -m benchmarks scale                       # tiny, irma, cutoff_rcv1, linear_zoo
    python -m benchmarks scale --only tiny --cells 2000 --repeats 1   # a quick look
    python -m benchmarks scale --million             # also 10^6 cells: memory, kill, resume
    python -m benchmarks scale --only million --million-cells 20000  # that path, quickly
    python -m benchmarks scale --work /tmp/bench --json /tmp/bench/figures.json
    python -m benchmarks scale --record benchmarks/records   # a record for the performance pages

``python -m benchmarks simulated`` is the simulated cluster (:mod:`benchmarks.engine.simulated`).

How it measures and what it found: ``docs/design/benchmarks.md`` (scale).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil

from benchmarks.engine.scale_marginal import IDLE_SECONDS, factor_for, write_larger
from benchmarks.engine.scale_marginal import WORKERS as MARGINAL_WORKERS
from benchmarks.engine.scale_runs import (
    IDLE_PROBE,
    REPO,
    WORKER_COUNTS,
    derive,
    launch,
    reproduce_line,
    run_command,
    summarise,
)
from benchmarks.engine.scale_text import as_record, million_text, summary_text, workload_text
from benchmarks.engine.simulate import Cluster
from dolb.bench.records import write_record
from dolb.errors import ConfigError

PIPELINES = REPO / "pipelines"
SHARED_DATA = REPO.parent / "shared" / "data"
"""The real datasets the cutoff and zoo pipelines read."""

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


# --- workloads ---------------------------------------------------------------------------


def write_tiny(folder: Path, n_cells: int) -> Path:
    """Write the tiny pipeline of ``n_cells`` cells into ``folder``; return its path."""
    path = folder / f"tiny-{n_cells}.toml"
    path.write_text(TINY_PIPELINE.format(n=n_cells), encoding="utf-8")
    return path


def write_with_data(name: str, folder: Path, data: Path, count: int | None) -> Path:
    """Write a copy of ``pipelines/NAME.toml`` into ``folder`` reading the real datasets
    from ``data`` (made absolute), with ``count`` splits per experiment instead of its
    own when given; return its path."""
    text = (PIPELINES / f"{name}.toml").read_text(encoding="utf-8")
    if count is not None:
        text = re.sub(r"(split = \{[^}]*\bcount = )\d+", rf"\g<1>{count}", text)
    text = text.replace('"../../shared/data/', f'"{data.resolve()}/')
    path = folder / f"{name}-{count or 'own'}-splits.toml"
    path.write_text(text, encoding="utf-8")
    return path


def pipeline_of(name: str, work: Path, n_cells: int, splits: dict[str, int], data: Path) -> Path:
    """The pipeline file of workload ``name``: the tiny one, and a study on the real
    datasets (in ``data``, with other ``splits`` if given), are written into ``work``."""
    if name == "tiny":
        return write_tiny(work, n_cells)
    if name in NEEDS_SHARED_DATA:
        return write_with_data(name, work, data, splits.get(name))
    return PIPELINES / f"{name}.toml"


@contextlib.contextmanager
def own_scheduler(folder: Path) -> Iterator[Path]:
    """A ``dask scheduler`` and :data:`MARGINAL_WORKERS` ``dask worker`` of processes of
    their own (:class:`~benchmarks.engine.simulate.Cluster`) while the block runs: the cluster
    of the runs of the client's marginal cost. Yields its scheduler file."""
    with Cluster(slots=MARGINAL_WORKERS, processes=MARGINAL_WORKERS, folder=folder) as cluster:
        yield cluster.scheduler_file


def measure_workload(name: str, pipeline: Path, folder: Path, repeats: int, env: dict[str, str]) -> dict[str, Any]:
    """Run ``pipeline`` ``repeats`` times on each worker count of the embedded cluster,
    alternating, each on a fresh result folder under ``folder``, then the workload and
    its larger pipeline on a scheduler and a worker of their own (the client's marginal
    cost: :mod:`benchmarks.engine.scale_marginal`); print each run as it ends.

    Returns
    -------
    dict
        ``pipeline``, ``runs`` (:func:`derive` of each run of the embedded cluster, plus
        ``requested`` workers and ``out``), ``sizes`` (the same, of the runs on the
        scheduler of their own: the workload's and the larger pipeline's) and
        ``summary`` (:func:`summarise`).
    """
    folder.mkdir(parents=True)
    probed = env | {IDLE_PROBE: str(IDLE_SECONDS)}
    runs, sizes, larger = [], ([], []), None

    def measure(into: list, label: str, toml: Path, out: Path, workers: int, scheduler: Path | None = None) -> None:
        argv = run_command(toml, out, workers, scheduler)
        run = derive(launch(argv, out.with_suffix(".log"), probed)) | {"requested": workers, "out": str(out)}
        print(f"  {name} {label}: {run['wall']:.1f} s ({run['cells']} cells, {run['failed']} failed)", flush=True)
        into.append(run)

    with own_scheduler(folder / "cluster") as scheduler:
        for repeat in range(1, repeats + 1):
            for workers in WORKER_COUNTS:
                measure(runs, f"repeat {repeat}, {workers} worker(s)", pipeline, folder / f"r{repeat}-w{workers}",
                        workers)
            factor = factor_for(runs[0]["cells"])
            larger = larger or write_larger(pipeline, folder, factor)
            for toml, text, into in ((pipeline, "", sizes[0]), (larger, f"x{factor}-", sizes[1])):
                measure(into, f"{text}repeat {repeat}, own scheduler", toml, folder / f"r{repeat}-{text}own-scheduler",
                        MARGINAL_WORKERS, scheduler)
    return {"pipeline": str(pipeline), "runs": runs, "sizes": sizes, "summary": summarise(runs, sizes)}


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


# --- main -------------------------------------------------------------------------------


def check(args: argparse.Namespace) -> None:
    """The options, checked (ConfigError naming the first wrong one); ``args.names``
    the workloads to run besides million, ``args.splits`` a dict."""
    names = args.only.split(",") if args.only else list(WORKLOADS)
    if "million" in names:
        names.remove("million")
        args.million = True
    unknown = [name for name in names if name not in WORKLOADS]
    if unknown:
        raise ConfigError(f"--only: unknown workload(s) {', '.join(unknown)} (known: {', '.join(WORKLOADS)})")
    args.names = names
    args.data = args.data or SHARED_DATA
    asked, args.splits = args.splits, {}
    for item in filter(None, asked.split(",")):
        name, _, count = item.partition("=")
        if name not in NEEDS_SHARED_DATA or not count.isdigit() or int(count) < 1:
            raise ConfigError(f"--splits: {item!r} is not STUDY=K with STUDY one of "
                              f"{', '.join(sorted(NEEDS_SHARED_DATA))} and K a positive integer")
        args.splits[name] = int(count)


def work_folders(work: Path | None, prefix: str) -> tuple[Path, Path]:
    """A new folder of this run in ``work`` (default: a new temporary folder) and the
    data cache beside it."""
    work = (work or Path(tempfile.mkdtemp(prefix=prefix))).absolute()
    folder = work / time.strftime("bench-%Y%m%dT%H%M%S")
    folder.mkdir(parents=True)
    print(f"work folder {folder}; data cache {work / 'data-cache'}; {psutil.cpu_count()} cores", flush=True)
    return folder, work / "data-cache"


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
        if name in NEEDS_SHARED_DATA and not args.data.is_dir():
            found["sections"].append(f"== {name}: skipped, {args.data} (--data) is missing")
            continue
        pipeline = pipeline_of(name, folder, args.cells, args.splits, args.data)
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


def main(args: argparse.Namespace) -> int:
    """``python -m benchmarks scale``: measure the workloads, print their tables and the summary,
    save the figures."""
    check(args)
    signal.signal(signal.SIGTERM, _exit_on_signal)  # so a terminated bench kills its runs
    folder, cache = work_folders(args.work, "dolb-bench-scale-")
    if args.repeats < 3:
        print(f"note: {args.repeats} repeat(s) per worker count: each median is of fewer than 3 runs")
    found = run_workloads(args, folder, cache)
    print("\n" + "\n\n".join(found["sections"]))
    if found["workloads"]:
        print("\n" + summary_text(found["workloads"]))
    print("\nto reproduce (a run by hand: DIR a fresh folder, N the workers):")
    print(f"  {args.command_line}")
    print("\n".join(f"  {command}" for command in found["commands"]))
    if args.json:
        figures = {"cores": psutil.cpu_count(), "work": str(folder),
                   "workloads": found["workloads"], "million": found["million"]}
        args.json.write_text(json.dumps(figures, indent=1), encoding="utf-8")
        print(f"figures saved to {args.json}")
    if args.record:
        record = as_record(found["workloads"], found["million"]) | {"command": args.command_line}
        print(f"record: {write_record(args.record, record)}")
    return 0


def _exit_on_signal(number: int, frame) -> None:
    sys.exit(128 + number)
