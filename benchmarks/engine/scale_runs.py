"""Runs of ``python -m benchmarks scale``: one ``dolb run`` in a process of its own, its
figures (read by the child, :func:`child_main`, and by the parent watching it,
:func:`launch`), the per-cell figures derived from them and a workload's summary. The
docstring of :mod:`benchmarks.engine.scale` defines the figures.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from benchmarks import ROOT as REPO
from benchmarks.engine.scale_marginal import AMDAHL_WORKERS, amdahl, marginal
from benchmarks.engine.scale_marginal import WORKERS as MARGINAL_WORKERS

WORKER_COUNTS = (1, 2)
"""The worker counts every workload alternates between."""
SAMPLE_SECONDS = 0.05
"""How often the parent samples the ``dolb run`` process's memory."""
MARKER = "BENCH-SCALE-JSON "
"""Prefix of the line in which a run reports its figures."""
RECORD_KEYS = ("run_id", "counts", "timings", "client_cpu_seconds", "tasks", "tuning")
"""What a run reports of its run record (``tuning``: only a run that tuned has it)."""
IDLE_PROBE = "DOLB_BENCH_IDLE_PROBE"
"""Set in a run's environment, :func:`child_main` measures the client process's CPU
while it waits this many seconds once its first wave has ended, the cluster still up
and idle (``idle_rate``: its background, the timers of Dask's event loop; with the
embedded cluster, of its scheduler and nannies too)."""



def child_main(argv: list[str]) -> int:
    """Run ``dolb`` with ``argv`` (a ``run`` command) in this process and print one
    line of figures (:data:`MARKER` then JSON).

    ``dolb.execution.compute.compute`` (what submits the cells) is wrapped to note the
    CPU time and the time since process start just before the first submit
    (``submit_cpu``, ``submit_at``; ``submit_wall`` as ``time.time()``) and as the
    last wave of cells ends (``computed_cpu``, ``computed_at``; a tuning's waves lie in
    between); ``idle_rate`` with :data:`IDLE_PROBE`; ``main_cpu``:
    the CPU time of the main thread in the waves (dolb's own client code: cutting,
    submitting, taking outcomes, committing; not Dask's event loop, nor the embedded
    scheduler and nannies, which run in other threads of the process).

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
    from dolb.execution import compute as computing
    from dolb.results.history import find_record
    from dolb.results.store import ResultStore

    figures: dict[str, Any] = {}
    compute = computing.compute

    def timed_compute(*args, **kwargs):
        figures.setdefault("submit_cpu", time.process_time())  # the first submit (a tuning has several)
        figures.setdefault("submit_at", time.perf_counter() - started)
        figures.setdefault("submit_wall", time.time())
        main = time.thread_time()
        found = compute(*args, **kwargs)
        figures["main_cpu"] = figures.get("main_cpu", 0.0) + time.thread_time() - main
        figures["computed_cpu"] = time.process_time()  # the last wave's end
        figures["computed_at"] = time.perf_counter() - started
        probe = float(os.environ.get(IDLE_PROBE, 0))
        if probe and "idle_rate" not in figures:
            cpu = time.process_time()
            time.sleep(probe)
            figures["idle_rate"] = (time.process_time() - cpu) / probe
        return found

    computing.compute = timed_compute
    figures["main_at"] = time.perf_counter() - started
    status = cli.main(argv)
    figures["exit_cpu"] = time.process_time()
    figures["exit_at"] = time.perf_counter() - started
    if status in (0, 1):  # a finished run, failed cells or not
        record = find_record(ResultStore(argv[argv.index("--out") + 1]))
        figures["record"] = {key: record.get(key) for key in RECORD_KEYS}
        figures["record"]["workers"] = len(record.get("workers", {}))
    print(MARKER + json.dumps(figures), flush=True)
    return status




def run_command(pipeline: Path, out: Path | str, workers: int | str, scheduler: Path | None = None) -> list[str]:
    """The ``dolb run`` command line of one run (without the interpreter): on an
    embedded cluster of ``workers`` workers, or on the cluster of the ``scheduler``
    file."""
    where = ["--scheduler", str(scheduler)] if scheduler is not None else ["--workers", str(workers)]
    return ["run", str(pipeline), "--out", str(out), *where, "--no-progress"]


def reproduce_line(cache: Path, pipeline: Path) -> str:
    """The shell command a reader types to repeat a run by hand (``DIR`` a fresh
    folder, ``N`` the workers)."""
    args = run_command(pipeline, "DIR", "N")
    return f"DOLB_DATA_CACHE={shlex.quote(str(cache))} python3 -m dolb.cli " + shlex.join(args)


def launch(
    argv: list[str], log: Path, env: dict[str, str], kill_when: Callable[[], bool] | None = None,
    prelude: str = "",
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
    prelude : str
        Python statements the child runs before ``dolb`` (registering a learner of
        the benchmarks, say).

    Returns
    -------
    dict
        The child's figures (see :func:`child_main`; empty when it was killed or
        crashed) plus ``wall`` (seconds from launch to exit, as seen by this process),
        ``peak_rss`` (bytes; the process and its threads, not its child processes),
        ``status``, ``killed`` and ``log``.
    """
    entry = (
        f"import sys; sys.path.insert(0, {str(REPO)!r}); {prelude + '; ' if prelude else ''}"
        "from benchmarks.engine.scale_runs import child_main; sys.exit(child_main(sys.argv[1:]))"
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
        seconds (to exit; to the end of compute), the client process's CPU seconds
        in all (``cpu``), from the first submit to the end of the last wave
        (``compute_cpu``, in ``compute_wall`` seconds) and of its main thread in the
        waves (``main_cpu``), its ``idle_rate`` (None unless probed), the tasks,
        client µs per cell (to exit; to the end of compute), worker µs per cell, the
        client share s, peak RSS (MiB) and the run's log.
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
        "cpu": run["exit_cpu"],
        "compute_cpu": run["computed_cpu"] - run["submit_cpu"] if submitted else None,
        "compute_wall": run["computed_at"] - run["submit_at"] if submitted else None,
        "idle_rate": run.get("idle_rate"),
        "main_cpu": run.get("main_cpu"),
        "tasks": record["tasks"],
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


def summarise(runs: list[dict[str, Any]], sizes: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None,
              ) -> dict[str, Any]:
    """Medians per worker count, speed ratios and Amdahl's predictions of a workload.

    Parameters
    ----------
    runs : list of dict
        :func:`derive` of every run of the workload on the embedded cluster.
    sizes : (list of dict, list of dict), optional
        :func:`derive` of the runs of the workload and of its larger pipeline on a
        scheduler and a worker of their own (:mod:`benchmarks.engine.scale_marginal`).

    Returns
    -------
    dict
        ``by_workers`` (worker count -> medians), ``wall_ratio`` and
        ``compute_ratio`` (1 worker / 2 workers), ``share`` (s of the 1-worker runs)
        and ``amdahl`` (cluster size -> predicted speed-up); with ``sizes``,
        ``marginal`` (:func:`benchmarks.engine.scale_marginal.marginal`).
    """

    keys = ("wall", "startup", "imports", "data", "cluster", "compute", "client_us", "client_compute_us",
            "worker_us", "share", "peak_rss_mib")
    by_workers = {}
    for count in WORKER_COUNTS:
        chosen = [run for run in runs if run["requested"] == count]
        by_workers[count] = {key: median_of(chosen, key) for key in keys} | {"runs": len(chosen)}
    one, two = by_workers[WORKER_COUNTS[0]], by_workers[WORKER_COUNTS[-1]]
    share = one["share"]
    found = {
        "cells": runs[0]["cells"],
        "by_workers": by_workers,
        "wall_ratio": _ratio(one["wall"], two["wall"]),
        "compute_ratio": _ratio(one["compute"], two["compute"]),
        "share": share,
        "amdahl": {n: amdahl(share, n) for n in AMDAHL_WORKERS} if share is not None else {},
    }
    if sizes and all(sizes):
        found["marginal"] = marginal(*sizes, by_workers[MARGINAL_WORKERS]["worker_us"])
    return found


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


