"""A worker killed at a given moment of the embedded cluster's start: does `dolb run`
still store an undisturbed run's results, or end on one line, and never a traceback?

    python scripts/fault_startup.py                      # a small built-in pipeline
    python scripts/fault_startup.py pipelines/nightly.toml --trials 10 --moments spawned warming

The moments, of the first worker process to reach one:

    spawned     its process has just appeared (Python is starting)
    preparing   it imports dolb's tasks and initialises Numba, before it joins
    registered  it has just joined the scheduler (its nanny's handshake may not be over)
    warming     it warms the kernels of the sweep's cells (after the cluster is up)

The pipeline runs once undisturbed, then once per trial and moment with a worker killed
(SIGKILL) at that moment, each into a fresh folder and with the same data cache (built
by the first run, so the others start their cluster in the background, as a rerun
does). One row per trial: the exit status, whether standard error holds a traceback,
how many lines it holds (all are counted at the end), and whether the results are
identical to the undisturbed run's (or, after a failure, whether nothing was written).
The workers load this file as a Dask preload: :func:`dask_setup` marks each moment with
a file ``PID.MOMENT`` that the script watches.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MOMENTS = ("spawned", "preparing", "registered", "warming")
MARKS = "DOLB_FAULT_STARTUP_MARKS"
"""The environment variable naming the folder where the workers mark their moments."""

SMALL = """
[pipeline]
name = "fault-startup"
seed = 7

[datasets.irma]
generator = "irma"
params = { n_sequences = 40, length = 150 }

[datasets.text]
generator = "sparse_text"
params = { n_rows = 4000, n_features = 5000, nnz_per_row = 40, label_noise = 0.05 }

[experiments.regression]
dataset = "irma"
task = "regression"
split = { scheme = "sequences", count = 40 }
checkpoints = [10, 80, 150]
metrics = ["test_mse", "online_loss"]
learners = [
  { learner = "irma", complexity = [4, 6], params = { basis = "legendre", domain_high = 3.0 } },
  { learner = "rls", complexity = [4, 6], params = { basis = "legendre", domain_high = 3.0, forgetting = 0.99 } },
]

[experiments.linear]
dataset = "text"
task = "binary"
split = { scheme = "holdout", count = 3, test_fraction = 0.2, order = "random" }
checkpoints = { log = 5 }
metrics = ["test_error", "online_loss"]
conversions = ["last", "average"]
learners = [{ learner = "perceptron" }, { learner = "pa", params = { variant = "pa1" } }, { learner = "adagrad" }]
"""
"""The default pipeline: the nightly's kinds of experiments (IRMA regression, linear
learners on sparse text), small enough for many trials (~10 s a run on 2 cores)."""


# --------------------------------------------------------------------------- in the workers


def dask_setup(worker) -> None:
    """Dask preload of every worker of a trial: mark the moments of its start."""
    from dolb.execution import worker_plugins

    marks = Path(os.environ[MARKS])

    def mark(moment: str) -> None:
        (marks / f"{os.getpid()}.{moment}").touch()

    prepare = worker_plugins.Prepared.setup

    def preparing(plugin, worker) -> None:
        mark("preparing")
        prepare(plugin, worker)
        from dolb.execution import warm_up  # a warm-up task finds the function here: marked from now on

        warm = warm_up.warm_kernels
        warm_up.warm_kernels = lambda cells: (mark("warming"), warm(cells))[1]

    worker_plugins.Prepared.setup = preparing
    register = worker._register_with_scheduler

    async def registered() -> None:
        await register()
        mark("registered")

    worker._register_with_scheduler = registered


# --------------------------------------------------------------------------- in the script


def worker_pids(run_pid: int) -> list[int]:
    """The worker processes `dolb run` ``run_pid`` has spawned, oldest first."""
    import psutil

    found = []
    for child in psutil.Process(run_pid).children(recursive=True):
        try:
            line = " ".join(child.cmdline())
        except psutil.Error:
            continue
        if "spawn_main" in line and "resource_tracker" not in line:
            found.append(child.pid)
    return found


def at_moment(moment: str, run_pid: int, marks: Path) -> int | None:
    """The pid of a worker at ``moment`` now, if one is."""
    if moment == "spawned":
        pids = worker_pids(run_pid)
        return pids[0] if pids else None
    marked = sorted(marks.glob(f"*.{moment}"), key=lambda path: path.stat().st_mtime)
    return int(marked[0].name.split(".")[0]) if marked else None


def dolb_run(pipeline: Path, out: Path, args: argparse.Namespace, marks: Path | None = None) -> subprocess.Popen:
    """`dolb run` of ``pipeline`` into ``out``; its workers mark their moments in ``marks``."""
    env = dict(os.environ)
    if marks is not None:
        env |= {MARKS: str(marks), "DASK_DISTRIBUTED__WORKER__PRELOAD": json.dumps([str(Path(__file__).resolve())])}
    return subprocess.Popen(
        [sys.executable, "-m", "dolb", "run", str(pipeline), "--out", str(out), "--workers", str(args.workers),
         "--no-progress", "--data-cache", str(args.data_cache)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
    )


def kill_at(moment: str, run: subprocess.Popen, marks: Path, delay: float) -> int | None:
    """SIGKILL the first worker of ``run`` to reach ``moment`` (``delay`` seconds
    after); its pid, or None if the run ended first."""
    while run.poll() is None:
        pid = at_moment(moment, run.pid, marks)
        if pid is not None:
            time.sleep(delay)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                return None
            return pid
        time.sleep(0.005)
    return None


def stored(folder: Path):
    """The results stored in ``folder`` as the tests compare them (every value, bit for bit)."""
    sys.path.insert(0, str(ROOT))
    from tests.conftest import stored_values

    return stored_values(folder)


def trial(pipeline: Path, moment: str, scratch: Path, name: str, reference, args) -> dict:
    """One run with a worker killed at ``moment``: what it did."""
    out, marks = scratch / name, scratch / f"{name}-marks"
    marks.mkdir()
    run = dolb_run(pipeline, out, args, marks)
    killed = kill_at(moment, run, marks, args.delay)
    _, err = run.communicate()
    if run.returncode == 0:
        same = stored(out).equals(reference)
        outcome = "identical" if same else "DIFFERENT"
    else:
        outcome = "nothing written" if not out.exists() else "WRITTEN"
    return {"moment": moment, "killed": killed is not None, "status": run.returncode,
            "traceback": "Traceback" in err, "lines": err.strip().splitlines(), "outcome": outcome}


def without_times(line: str) -> str:
    """A line of standard error without its timestamp, addresses and numbers that change."""
    line = re.sub(r"^\d{4}-\d\d-\d\d [\d:,]+ - ", "", line)
    return re.sub(r"tls://[\d.:]+|\d+\.\d+ seconds", "…", line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pipeline", nargs="?", help="pipeline file (default: a small built-in one)")
    parser.add_argument("--trials", type=int, default=10, help="runs per moment (default 10)")
    parser.add_argument("--moments", nargs="+", choices=MOMENTS, default=list(MOMENTS))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds from a moment to the kill (default 0)")
    parser.add_argument("--data-cache", type=Path, help="data cache (default: a scratch one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fault-startup-") as folder:
        scratch = Path(folder)
        args.data_cache = args.data_cache or scratch / "data"
        pipeline = Path(args.pipeline).resolve() if args.pipeline else scratch / "small.toml"
        if not args.pipeline:
            pipeline.write_text(SMALL)
        started = time.perf_counter()
        _, err = dolb_run(pipeline, scratch / "undisturbed", args).communicate()
        print(f"undisturbed run: {time.perf_counter() - started:.1f} s{', ' + err.strip() if err.strip() else ''}",
              flush=True)
        reference = stored(scratch / "undisturbed")
        rows, lines = [], collections.Counter()
        print(f"{'moment':<11} {'trial':>5} {'killed':>6} {'exit':>4} {'traceback':>9} {'lines':>5}  results")
        for moment in args.moments:
            for i in range(args.trials):
                row = trial(pipeline, moment, scratch, f"{moment}-{i}", reference, args)
                rows.append(row)
                lines.update(without_times(line) for line in row["lines"])
                print(f"{moment:<11} {i:>5} {'yes' if row['killed'] else 'NO':>6} {row['status']:>4} "
                      f"{'YES' if row['traceback'] else 'no':>9} {len(row['lines']):>5}  {row['outcome']}", flush=True)
    good = sum(r["killed"] and not r["traceback"] and r["outcome"] in ("identical", "nothing written") for r in rows)
    print(f"\n{good} of {len(rows)} trials killed a worker and ended well (no traceback; identical results, "
          "or nothing written)")
    print("lines on standard error, over all trials:")
    for line, count in lines.most_common():
        print(f"{count:>5}  {line}")


if __name__ == "__main__":
    main()
