"""The simulated cluster (``python -m benchmarks simulated``): a real Dask scheduler and worker processes on this
machine, running sweeps of cells that only sleep (:mod:`benchmarks.engine.sleep`): every CPU second is the engine's.

Workloads
---------
sweep
    ``cells`` cells of one sleep learner, one split each (rows of the ``irma``
    generator: 1-D, 100 a cell, nothing to read but those).
tuned
    Successive halving of 9 configurations (the learner's ``offset``) in each of
    ``cells / 13`` splits, with progressive validation (no test set): 9 trials at a
    third of the stream, 3 continued to the whole, then the chosen one's cell: 13 cells
    a split, 6 cell times of sleep.

Each cell's time is drawn from ``seconds`` (see :class:`~benchmarks.engine.sleep.SleepLearner`).
The ideal compute phase is the time the run's cells slept (read from its result store)
over the slots; the efficiency is the ideal over the measured compute phase.

How it measures and what it found: ``docs/design/benchmarks.md`` (simulated).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import psutil

from benchmarks import ROOT
from benchmarks.engine.cost_model import list_schedule
from benchmarks.engine.scale_runs import launch
from benchmarks.engine.sleep import parse_seconds, recorded_seconds
from dolb.errors import ConfigError
from dolb.execution.cluster import SINGLE_THREADED_BLAS
from dolb.execution.quiet import QUIET

REGISTER = "from benchmarks.engine.sleep import register_sleep; register_sleep()"
"""What a ``dolb run`` of sleep cells runs first (the client checks the pipeline)."""
LENGTH = 100
"""Rows of a cell."""
TRIAL_CELLS = 13
"""Cells of a split of the tuned workload (9 + 3 trials, the chosen one)."""
IDLE_SECONDS = 3.0
"""How long the idle cluster's CPU is measured before each run."""
PROBE_SECONDS = 1.0
"""How long the bench spins to see what share of a core a process gets."""
SAMPLE_SECONDS = 0.1
"""How often the cluster's CPU and the scheduler's memory are sampled."""
JOIN_SECONDS = 600
"""How long the bench waits for the workers to join."""
CELLS_PER_SLOT = 25
"""Cells of a workload per slot, by default (:func:`sweep_cells`)."""

PIPELINE = """\
[pipeline]
name = "simulated-{workload}"
description = "cells that only sleep: the engine's own costs"
seed = 1

[datasets.rows]
generator = "irma"
params = {{ n_sequences = {splits}, length = {length}, n_test = 1 }}

[experiments.sleep]
dataset = "rows"
task = "regression"
split = {{ scheme = "sequences", count = {splits} }}
checkpoints = [{length}]
metrics = ["online_loss"]
learners = [{{ learner = "sleep", params = {{ seconds = "{seconds}", examples = {length} }}{search} }}]
{tuning}"""
SEARCH = ", search = { offset = { low = -1.0, high = 1.0, steps = 9 } }"
TUNING = 'tuning = { method = "halving", eta = 3, min_budget = 0.3, validation = "progressive", defaults = false }\n'


def pipeline_text(workload: str, cells: int, seconds: str) -> str:
    """The pipeline of ``workload`` (``sweep``, ``tuned`` or ``warm-up``) of about
    ``cells`` cells, each sleeping one of ``seconds``."""
    tuned = workload == "tuned"
    splits = max(1, round(cells / TRIAL_CELLS)) if tuned else cells
    return PIPELINE.format(workload=workload, splits=splits, length=LENGTH, seconds=seconds,
                           search=SEARCH if tuned else "", tuning=TUNING if tuned else "")


def sweep_cells(slots: int) -> int:
    """The cells of a workload on ``slots`` slots by default: :data:`CELLS_PER_SLOT` a
    slot, at least 400 (with a few a slot, the last cells' uneven ends weigh on the
    efficiency whatever the engine does: :func:`~benchmarks.engine.cost_model.list_schedule`).

    >>> sweep_cells(8), sweep_cells(64)
    (400, 1600)
    """
    return max(400, CELLS_PER_SLOT * slots)


def uniform_seconds(low: float, high: float, count: int = 11) -> str:
    """``count`` evenly spaced times from ``low`` to ``high``, as a ``seconds`` parameter.

    >>> uniform_seconds(0.5, 1.0, 3)
    '0.5,0.75,1'
    """
    step = (high - low) / (count - 1)
    return ",".join(f"{low + i * step:.6g}" for i in range(count))


def seconds_of(text: str) -> str:
    """The ``seconds`` parameter ``--seconds`` asks for: ``LOW-HIGH`` (11 evenly spaced
    times), a comma-separated list, or a result folder (its cells' times: see
    :func:`~benchmarks.engine.sleep.recorded_seconds`). ConfigError when it is none of them.

    >>> seconds_of("0.5-1")
    '0.5,0.55,0.6,0.65,0.7,0.75,0.8,0.85,0.9,0.95,1'
    >>> seconds_of("0.025,0.05,0.1")
    '0.025,0.05,0.1'
    """
    if Path(text).is_dir():
        return recorded_seconds(text)
    low, dash, high = text.partition("-")
    if dash:
        low_s, high_s = parse_seconds(f"{low},{high}", "--seconds")
        if low_s > high_s:
            raise ConfigError(f"--seconds: {text!r} runs from high to low")
        return uniform_seconds(low_s, high_s)
    parse_seconds(text, "--seconds")
    return text


def cluster_environment() -> dict[str, str]:
    """The environment of the scheduler and the workers: the settings dolb gives its own
    cluster (one BLAS thread, the quiet Dask settings) and this source tree first."""
    quiet = {"DASK_" + key.upper().replace(".", "__").replace("-", "_"): str(value)
             for key, value in QUIET.items()}
    tree = str(ROOT)
    path = os.pathsep.join(filter(None, [tree, os.environ.get("PYTHONPATH")]))
    return os.environ | SINGLE_THREADED_BLAS | quiet | {"PYTHONPATH": path}


def _tree_cpu(process: psutil.Process) -> float:
    """CPU seconds (user + system) of ``process`` and its living descendants."""
    total = 0.0
    for member in [process, *process.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            times = member.cpu_times()
            total += times.user + times.system
    return total


def _spawn(argv: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen:
    """Start Dask's command ``argv`` (``dask_scheduler ...``, ``dask_worker ...``) with
    this interpreter, in a process group of its own, its output into ``log``."""
    with open(log, "w", encoding="utf-8") as output:
        return subprocess.Popen([sys.executable, "-m", f"distributed.cli.{argv[0]}", *argv[1:]], stdout=output,
                                stderr=subprocess.STDOUT, env=env, start_new_session=True)


@dataclass
class Cluster:
    """The bench's ``dask scheduler`` and ``dask worker`` processes (``with``: started, then stopped)."""

    slots: int
    processes: int
    folder: Path
    start_method: str = "spawn"
    """``spawn`` (Dask's default) or ``forkserver`` (:mod:`dolb.execution.forkserver`)."""
    scheduler: subprocess.Popen | None = None
    workers: subprocess.Popen | None = None
    joined: float = 0.0
    """Seconds from starting the workers to all of them joined."""
    start_cpu: float = 0.0
    """CPU seconds the worker processes spent to start."""
    load: float = 0.0
    """The load average (1 minute) as the last worker joined."""
    samples: list[tuple[float, float, float, int]] = field(default_factory=list)
    """(time, scheduler CPU, workers' CPU, scheduler RSS) every :data:`SAMPLE_SECONDS`."""

    @property
    def scheduler_file(self) -> Path:
        return self.folder / "scheduler.json"

    def start(self) -> Cluster:
        """Start the scheduler and the workers; return once every worker has joined."""
        from distributed import Client

        env = cluster_environment()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.scheduler = _spawn(["dask_scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                 "--scheduler-file", str(self.scheduler_file)], self.folder / "scheduler.log", env)
        while not self.scheduler_file.exists():
            if self.scheduler.poll() is not None:
                raise RuntimeError(f"the scheduler ended; see {self.folder / 'scheduler.log'}")
            time.sleep(0.1)
        started = time.perf_counter()
        forked = ["--preload-nanny", "dolb.execution.forkserver"] if self.start_method == "forkserver" else []
        self.workers = _spawn(["dask_worker", "--scheduler-file", str(self.scheduler_file), "--host", "127.0.0.1",
                               "--nworkers", str(self.processes), "--nthreads", str(self.slots // self.processes),
                               "--no-dashboard", "--memory-limit", "0", "--preload", "benchmarks.engine.sleep",
                               *forked],
                              self.folder / "workers.log",
                              env | {"DASK_DISTRIBUTED__WORKER__MULTIPROCESSING_METHOD": self.start_method})
        with Client(scheduler_file=str(self.scheduler_file), timeout="60s") as client:
            client.wait_for_workers(self.processes, timeout=JOIN_SECONDS)
        self.joined = time.perf_counter() - started
        self.load = os.getloadavg()[0]
        self.start_cpu = _tree_cpu(psutil.Process(self.workers.pid))
        return self

    def __enter__(self) -> Cluster:
        try:  # stopped again if its start fails part-way
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()

    def sample(self) -> tuple[float, float, float, int]:
        """(time, scheduler CPU, workers' CPU, scheduler RSS) now."""
        scheduler = psutil.Process(self.scheduler.pid)
        return (time.time(), _tree_cpu(scheduler), _tree_cpu(psutil.Process(self.workers.pid)),
                scheduler.memory_info().rss)

    @contextlib.contextmanager
    def sampled(self):
        """Sample the cluster in a thread while the block runs (into :attr:`samples`)."""
        self.samples = [self.sample()]
        done = threading.Event()

        def watch() -> None:
            while not done.wait(SAMPLE_SECONDS):
                self.samples.append(self.sample())

        thread = threading.Thread(target=watch, daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()
            self.samples.append(self.sample())

    def at(self, moment: float) -> tuple[float, float]:
        """(scheduler CPU, workers' CPU) at ``moment`` (a ``time.time()``), interpolated
        between the samples around it."""
        times = [s[0] for s in self.samples]
        return (float(np.interp(moment, times, [s[1] for s in self.samples])),
                float(np.interp(moment, times, [s[2] for s in self.samples])))

    def stop(self) -> None:
        """Stop the workers and the scheduler (their whole process groups)."""
        for process in (self.workers, self.scheduler):
            if process is not None and process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, 15)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, 9)
                    process.wait()


def core_share() -> float:
    """The share of a core a busy thread gets now: CPU seconds over wall seconds of
    :data:`PROBE_SECONDS` of spinning (about 1 on a quiet machine, less when other
    work competes for the cores)."""
    wall, cpu = time.perf_counter(), time.thread_time()
    while time.perf_counter() - wall < PROBE_SECONDS:
        pass
    return min(1.0, (time.thread_time() - cpu) / (time.perf_counter() - wall))


def slept_cells(out: Path) -> np.ndarray:
    """The seconds each of a run's cells slept, from its result store (each cell's
    ``slept``), in the order of their splits (as the engine submits them)."""
    import pyarrow.compute as pc
    import pyarrow.dataset as pds

    dataset = pds.dataset(out / "results", format="parquet")
    table = dataset.to_table(columns=["cell_id", "split", "value"], filter=pc.field("metric") == "slept")
    frame = table.to_pandas().groupby("cell_id").agg(split=("split", "first"), value=("value", "max"))
    return frame.sort_values(["split", "cell_id"], kind="stable")["value"].to_numpy(dtype=float)


def measure_run(cluster: Cluster, workload: str, pipeline: Path, out: Path, env: dict[str, str]) -> dict[str, Any]:
    """Run ``pipeline`` on ``cluster`` into ``out`` and measure it (see the module).

    Returns
    -------
    dict
        ``cells``, ``tasks``, ``parts``, ``slept``, ``ideal``, ``compute``,
        ``efficiency``, CPU seconds in the compute phase of the ``client``, the
        ``scheduler`` and the ``workers``, the idle CPU rates (``scheduler_idle``,
        ``workers_idle``: seconds a second), ``client_rss`` and ``scheduler_rss``
        (peak, MiB), the ``schedule`` (:func:`~benchmarks.engine.cost_model.list_schedule` of its cells),
        ``wall``, the machine's ``load`` average (1 minute) as the run ended and the
        ``speed`` of the machine before it (:func:`core_share`).
    """
    before = cluster.sample()
    speed = core_share()
    time.sleep(max(0.0, IDLE_SECONDS - PROBE_SECONDS))
    after = cluster.sample()
    idle = [(after[i] - before[i]) / (after[0] - before[0]) for i in (1, 2)]
    argv = ["run", str(pipeline), "--out", str(out), "--scheduler", str(cluster.scheduler_file), "--no-progress"]
    with cluster.sampled():
        run = launch(argv, out.with_suffix(".log"), env, prelude=REGISTER)
    record = run.get("record")
    if record is None or run["status"] != 0:
        raise RuntimeError(f"a {workload} run did not finish (exit status {run['status']}); see {run['log']}")
    submit = run["submit_wall"]
    computed = submit + run["computed_at"] - run["submit_at"]
    (scheduler_0, workers_0), (scheduler_1, workers_1) = cluster.at(submit), cluster.at(computed)
    compute = computed - submit
    cells = slept_cells(out)
    slept = float(cells.sum())
    ideal = slept / cluster.slots
    return {
        "cells": record["counts"]["computed"] + (record.get("tuning") or {}).get("computed", 0),
        "tasks": record["tasks"],
        "parts": len(list((out / "results").glob("part-*.parquet"))),
        "slept": slept, "ideal": ideal, "schedule": list_schedule(cells, cluster.slots), "compute": compute,
        "efficiency": ideal / compute,
        "client": run["computed_cpu"] - run["submit_cpu"], "scheduler": scheduler_1 - scheduler_0,
        "workers": workers_1 - workers_0, "scheduler_idle": idle[0], "workers_idle": idle[1],
        "client_rss": run["peak_rss"] / 2**20, "scheduler_rss": max(s[3] for s in cluster.samples) / 2**20,
        "wall": run["wall"],
        "load": os.getloadavg()[0], "speed": speed,
    }


def per_unit(run: dict[str, Any]) -> dict[str, float]:
    """A run's costs per cell and per task: the client's CPU per cell, the scheduler's
    per task and the workers' per cell, the idle rates of the scheduler and workers
    taken off (what they would have spent doing nothing).

    >>> run = {"cells": 100, "tasks": 10, "compute": 2.0, "client": 0.5, "scheduler": 0.4, "workers": 2.2,
    ...        "scheduler_idle": 0.1, "workers_idle": 0.1}
    >>> per_unit(run)
    {'client_per_cell': 0.005, 'scheduler_per_task': 0.02, 'workers_per_cell': 0.02}
    """
    busy_scheduler = max(0.0, run["scheduler"] - run["scheduler_idle"] * run["compute"])
    busy_workers = max(0.0, run["workers"] - run["workers_idle"] * run["compute"])
    return {"client_per_cell": run["client"] / run["cells"], "scheduler_per_task": busy_scheduler / run["tasks"],
            "workers_per_cell": busy_workers / run["cells"]}


def simulate(slots: int, processes: int, cells: int, seconds: str, workloads: tuple[str, ...], folder: Path,
             env: dict[str, str], start_method: str = "spawn") -> dict[str, Any]:
    """Start a cluster of ``slots`` slots on ``min(slots, processes)`` processes (started
    by ``start_method``: see :class:`Cluster`), warm it up, measure each workload on it,
    stop it.

    Returns
    -------
    dict
        ``slots``, ``processes``, ``start_method``, ``joined`` (seconds), ``start_cpu``
        (CPU seconds per worker process), ``start_load`` (the load average as the last
        worker joined), ``first_run`` (the warm-up run's wall seconds) and ``runs``
        (workload -> :func:`measure_run`).
    """
    processes = min(slots, processes)
    if slots % processes:
        raise ValueError(f"{slots} slots do not share evenly among {processes} processes")
    with Cluster(slots, processes, folder / f"slots-{slots}" / "cluster", start_method) as cluster:
        print(f"  {slots} slots ({processes} processes): workers joined in {cluster.joined:.1f} s", flush=True)
        warm = folder / f"slots-{slots}" / "warm-up"
        (warm.parent / "warm-up.toml").write_text(pipeline_text("warm-up", 2 * slots, "0"), encoding="utf-8")
        first = launch(["run", str(warm.parent / "warm-up.toml"), "--out", str(warm), "--scheduler",
                        str(cluster.scheduler_file), "--no-progress"], warm.with_suffix(".log"), env, prelude=REGISTER)
        found = {"slots": slots, "processes": processes, "start_method": start_method, "joined": cluster.joined,
                 "start_cpu": cluster.start_cpu / processes, "start_load": cluster.load, "first_run": first["wall"],
                 "runs": {}}
        for workload in workloads:
            pipeline = folder / f"slots-{slots}" / f"{workload}.toml"
            pipeline.write_text(pipeline_text(workload, cells, seconds), encoding="utf-8")
            run = measure_run(cluster, workload, pipeline, folder / f"slots-{slots}" / workload, env)
            found["runs"][workload] = run
            print(f"  {slots} slots, {workload}: {run['cells']} cells in {run['tasks']} tasks, compute "
                  f"{run['compute']:.1f} s against {run['ideal']:.1f} s ideal: efficiency {run['efficiency']:.0%}",
                  flush=True)
        return found


def main_environment(cache: Path) -> dict[str, str]:
    """The environment of the bench's ``dolb run`` processes."""
    return cluster_environment() | {"DOLB_DATA_CACHE": str(cache)}

