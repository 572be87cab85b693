"""Measure how much two processes on two cores slow each other, without Dask: the part
of a 2-worker sweep's loss that belongs to the machine, not to the engine.

Each workload runs for ``--seconds`` in one process alone, then in two processes side by
side; the script prints the passes per second of each and their ratio (side by side /
alone: 1.0 means the cores do not interfere).

Workloads
---------
arithmetic
    A Numba loop of multiply-adds on registers: no memory traffic.
stream
    One AdaGrad pass over the RCV1 sample (CCAT vs MCAT, the stream bench's problem),
    permuted, from a Zarr store of its own with an empty decoded-chunk cache, as a
    Zarr-streamed study's cell reads it (:func:`dolb.bench.stream._learn`). Skipped when
    ``../shared/data`` is missing.

Usage::

    python3 scripts/bench_contention.py             # both workloads, 8 s each way
    python3 scripts/bench_contention.py --seconds 3
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba

RCV1 = Path(__file__).resolve().parents[2] / "shared" / "data" / "rcv1" / "rcv1v2_mulan_dedup.npz"
"""The RCV1 sample the stream workload reads."""


@numba.njit(cache=True)
def multiply_adds(n):
    """n multiply-adds in a chain, on registers."""
    x = 0.0
    for i in range(n):
        x = x * 0.999999 + (i & 7)
    return x


def arithmetic_pass(folder: Path):
    """One pass of the arithmetic workload (``folder`` unused)."""
    return lambda: multiply_adds(20_000_000)


def stream_pass(folder: Path):
    """One pass of the stream workload, its store written into ``folder`` first."""
    from dolb.bench.stream import BLOCK_SIZE, _learn, rcv1_problem
    from dolb.data import ChunkCache, stream_blocks

    problem = rcv1_problem(RCV1, folder)
    cache_bytes = 1 << 28
    return lambda: _learn("adagrad", problem, stream_blocks(
        problem.store, problem.permutation, block_size=BLOCK_SIZE, cache=ChunkCache(cache_bytes)))


def child(workload: str, seconds: float) -> None:
    """Run ``workload`` for ``seconds`` after one untimed pass; print passes per second."""
    with tempfile.TemporaryDirectory(prefix="dolb-contention-") as folder:
        one = {"arithmetic": arithmetic_pass, "stream": stream_pass}[workload](Path(folder))
        one()
        start, passes = time.perf_counter(), 0
        while time.perf_counter() - start < seconds:
            one()
            passes += 1
        print(passes / (time.perf_counter() - start), flush=True)


def rates(workload: str, seconds: float, processes: int) -> list[float]:
    """Passes per second of each of ``processes`` children run side by side."""
    command = [sys.executable, __file__, "--child", workload, "--seconds", str(seconds)]
    children = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True) for _ in range(processes)]
    return [float(child.communicate()[0].split()[-1]) for child in children]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="timed seconds of each run (default 8)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.seconds > 0:
        parser.error(f"--seconds must be above 0, got {args.seconds}")
    if args.child:
        child(args.child, args.seconds)
        return 0
    for workload in ("arithmetic", "stream"):
        if workload == "stream" and not RCV1.is_file():
            print(f"stream: skipped, {RCV1} is missing")
            continue
        alone = rates(workload, args.seconds, 1)[0]
        paired = rates(workload, args.seconds, 2)
        print(f"{workload}: {alone:.2f} passes/s alone, {' and '.join(f'{r:.2f}' for r in paired)} side by side "
              f"(ratio {min(paired) / alone:.2f}-{max(paired) / alone:.2f})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
