"""``python -m benchmarks simulated``: the simulated cluster (:mod:`benchmarks.engine.simulate`). A Dask
scheduler and workers of ``--slots`` slots (a process each up to ``--processes``, then
threads) run a sweep and a tuned sweep of about ``--sim-cells`` cells (default 25 a slot: fewer,
and the last cells' uneven ends weigh on the efficiency) that only sleep,
each for a time drawn from ``--seconds``: ``LOW-HIGH`` (11 evenly spaced times), a
comma-separated list, or a result folder whose cells' times give the shape. Its record
is bench ``simulated``; the cost model's predictions for the studies take their cell
times from the latest ``scale`` record in ``--record``.

With ``--rederive RECORD`` nothing runs: the runs of that record of this bench are
derived again (:func:`~benchmarks.engine.simulate_record.found_of`) with this model and the
latest ``scale`` record in ``--record``, and the new record keeps the machine and
versions it was measured with.

Usage::

    python -m benchmarks simulated --record benchmarks/records
    python -m benchmarks simulated --rederive benchmarks/records/simulated/X.json --record benchmarks/records
"""

from __future__ import annotations

import argparse
import json
import signal
from pathlib import Path

from benchmarks.engine.scale import _exit_on_signal, work_folders
from benchmarks.engine.simulate import main_environment, seconds_of, simulate, sweep_cells
from benchmarks.engine.simulate_record import as_record, found_of, simulated_text
from dolb.bench.records import read_record, read_records, write_record
from dolb.errors import ConfigError


def check(args: argparse.Namespace) -> None:
    """The options, checked (ConfigError naming the first wrong one); ``args.slots`` a
    list of whole numbers and ``args.seconds`` the cells' times as the sleep learner
    takes them."""
    try:
        args.slots = [int(n) for n in args.slots.split(",")]
    except ValueError:
        raise ConfigError(f"--slots: {args.slots!r} is not a comma-separated list of whole numbers") from None
    args.seconds = seconds_of(args.seconds)
    if min(args.slots) < 1:
        raise ConfigError("--slots must be positive")
    uneven = [n for n in args.slots if n % min(n, args.processes)]
    if uneven:
        raise ConfigError(f"--slots: {uneven[0]} slots do not share evenly among {args.processes} processes")


def main(args: argparse.Namespace) -> int:
    """``python -m benchmarks simulated``: the simulated cluster at each slot count; its table,
    JSON and record."""
    check(args)
    if args.rederive:
        measured = read_record(args.rederive)
        found = found_of(measured)
    else:
        signal.signal(signal.SIGTERM, _exit_on_signal)  # so a terminated bench kills its runs
        folder, cache = work_folders(args.work, "dolb-bench-simulated-")
        found = [simulate(slots, args.processes, args.sim_cells or sweep_cells(slots), args.seconds,
                          ("sweep", "tuned"), folder, main_environment(cache), args.start_method)
                 for slots in args.slots]
    records = read_records(args.record) if args.record and Path(args.record).is_dir() else {}
    record = as_record(found, (records.get("scale") or [None])[-1]) | {"command": args.command_line}
    if args.rederive:
        record |= {"machine": measured["machine"], "versions": measured["versions"]}
    print("\n" + simulated_text(record))
    if args.json:
        args.json.write_text(json.dumps(found, indent=1), encoding="utf-8")
        print(f"figures saved to {args.json}")
    if args.record:
        print(f"record: {write_record(args.record, record)}")
    return 0
