"""``python -m benchmarks contention``: how much two processes on two cores slow each other,
without Dask: the part of a 2-worker sweep's loss that belongs to the machine, not to
the engine (read beside the *scale* records of the same machine).

Each workload runs for ``--seconds`` in one process alone, then in two processes side by
side; printed and recorded (``contention``): the passes per second of each, and their
ratio (side by side / alone: 1.0 means the cores do not interfere).

Workloads
---------
arithmetic
    A Numba loop of multiply-adds on registers: no memory traffic.
stream
    One AdaGrad pass over the RCV1 sample (CCAT vs MCAT, the stream bench's problem),
    permuted, from a Zarr store of its own with an empty decoded-chunk cache, as a
    Zarr-streamed study's cell reads it (:func:`dolb.bench.stream._learn`). Skipped when
    the sample (``--rcv1``) is missing.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba

from dolb.errors import ConfigError, DataError

WORKLOADS = ("arithmetic", "stream")


@numba.njit(cache=True)
def multiply_adds(n):
    """n multiply-adds in a chain, on registers."""
    x = 0.0
    for i in range(n):
        x = x * 0.999999 + (i & 7)
    return x


def arithmetic_pass(folder: Path, rcv1: Path):
    """One pass of the arithmetic workload (``folder`` and ``rcv1`` unused)."""
    return lambda: multiply_adds(20_000_000)


def stream_pass(folder: Path, rcv1: Path):
    """One pass of the stream workload, its store written into ``folder`` first."""
    from dolb.bench.stream import _learn, rcv1_problem
    from dolb.data import ChunkCache, stream_blocks
    from dolb.evaluation.run_cell import block_rows
    from dolb.learners import learner_class

    problem = rcv1_problem(rcv1, folder)
    cache_bytes, block = 1 << 28, block_rows(learner_class("adagrad"), problem.store)  # a cell's blocks
    return lambda: _learn("adagrad", problem, stream_blocks(
        problem.store, problem.permutation, block_size=block, cache=ChunkCache(cache_bytes)))


def child(workload: str, seconds: float, rcv1: str) -> None:
    """Run ``workload`` for ``seconds`` after one untimed pass; print passes per second."""
    with tempfile.TemporaryDirectory(prefix="dolb-contention-") as folder:
        one = {"arithmetic": arithmetic_pass, "stream": stream_pass}[workload](Path(folder), Path(rcv1))
        one()
        start, passes = time.perf_counter(), 0
        while time.perf_counter() - start < seconds:
            one()
            passes += 1
        print(passes / (time.perf_counter() - start), flush=True)


def rates(workload: str, seconds: float, processes: int, rcv1: str) -> list[float]:
    """Passes per second of each of ``processes`` children run side by side."""
    code = f"from benchmarks.engine.contention import child; child({workload!r}, {seconds!r}, {rcv1!r})"
    children = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True) for _ in range(processes)]
    found = [child.communicate() + (child.returncode,) for child in children]
    for _, err, status in found:
        if status != 0:
            raise DataError(f"the {workload} workload failed in its process: {(err.strip().splitlines() or ['?'])[-1]}")
    return [float(out.split()[-1]) for out, _, _ in found]


def main(args) -> int:
    """``python -m benchmarks contention``: each workload of ``args.workloads`` alone, then two side
    by side, for ``args.seconds`` each; with ``args.record`` a record of the rates and
    the ratios. ConfigError for an unknown workload."""
    from dolb.bench.records import derived, measurement, new_record, write_record  # not in the children: no Dask

    workloads = args.workloads.split(",")
    for workload in workloads:
        if workload not in WORKLOADS:
            raise ConfigError(f"--workloads: unknown workload {workload!r} (known: {', '.join(WORKLOADS)})")
    found, ratios = [], []
    for workload in workloads:
        if workload == "stream" and not Path(args.rcv1).is_file():
            print(f"stream: skipped, {args.rcv1} is missing")
            continue
        alone = rates(workload, args.seconds, 1, args.rcv1)
        paired = rates(workload, args.seconds, 2, args.rcv1)
        print(f"{workload}: {alone[0]:.2f} passes/s alone, {' and '.join(f'{r:.2f}' for r in paired)} side by "
              f"side (ratio {min(paired) / alone[0]:.2f}-{max(paired) / alone[0]:.2f})", flush=True)
        found += [measurement({"workload": workload, "processes": n}, "passes/s", speeds)
                  for n, speeds in ((1, alone), (2, paired))]
        ratios += [derived({"workload": workload, "ratio": f"{which} side by side / alone"}, "ratio",
                           speed / alone[0]) for which, speed in (("slower", min(paired)), ("faster", max(paired)))]
    if args.record:
        print(f"record: {write_record(args.record, new_record('contention', found, ratios, args.command_line))}")
    return 0
