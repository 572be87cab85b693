"""A worker's CPU per cell and per task beyond the learner's own work, in one process
(:mod:`dolb.bench.worker_overhead`).

Usage::

    python3 scripts/bench_worker.py                                # sleep and Perceptron cells of 64 rows
    python3 scripts/bench_worker.py --learners sleep --cells 64    # a quick look
    python3 scripts/bench_worker.py --dask --record benchmarks/records   # and through a Dask worker; a record
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dolb.bench.records import record_folder, write_record
from dolb.bench.worker_overhead import LEARNERS, SIZES, as_record, as_text, worker_overhead
from dolb.errors import DolbError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", default=",".join(LEARNERS), help="comma-separated, of: " + ", ".join(LEARNERS))
    parser.add_argument("--cells", type=int, default=256)
    parser.add_argument("--rows", type=int, default=64, help="training rows of a cell")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="cells a task, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dask", action="store_true", help="also through one Dask worker process")
    parser.add_argument("--record", metavar="DIR", help="also write a record into DIR/worker-overhead/")
    args = parser.parse_args(argv)
    try:
        folder = record_folder(args.record)
        learners = args.learners.split(",")
        unknown = sorted(set(learners) - set(LEARNERS))
        if unknown:
            raise DolbError(f"--learners: unknown {unknown[0]!r} (known: {', '.join(LEARNERS)})")
        sizes = [int(size) for size in args.sizes.split(",")]
        runs = []
        for learner in learners:
            runs.append(worker_overhead(learner, args.cells, args.rows, sizes, args.repeats, args.dask))
            print(as_text(runs[-1]), flush=True)
    except (DolbError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if folder is not None:
        print(f"record: {write_record(folder, as_record(runs))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
