"""Measure the saved states of a long cell: their size and save time against the rows.

The cell is issue #32's: a Perceptron with the five conversions on a ``sparse_text``
dataset (``--features`` columns, 80 values a row on average, 2,000 test rows), test
error at 12 log-spaced checkpoints, its state saved after every block (as
``state_every`` tiny does). Each size runs in a process of its own, its dataset built
beforehand in another, so that its peak resident memory is the cell's (and Python's):
on Linux a process started from a large one starts from that one's peak.

Usage::

    python3 scripts/state_size.py                                # 25k .. 400k rows, 5,000 features
    python3 scripts/state_size.py --rows 25000 50000 --features 1000 --work /tmp/states

Printed per size: the saves, the largest state and the last one (MB), the mean time a
save took (pickle and write), the cell's wall time and the process's peak RSS (MB).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PIPELINE = """
[pipeline]
name = "state-size"
seed = 3

[datasets.text]
generator = "sparse_text"
params = {{ n_rows = {rows}, n_features = {features}, n_test = 2000 }}

[experiments.long]
dataset = "text"
task = "binary"
split = {{ scheme = "given", count = 1 }}
checkpoints = {{ log = 12 }}
metrics = ["test_error", "cumulative_loss"]
conversions = ["last", "average", "longest_survivor", "suffix", "cutoff"]
learners = [{{ learner = "perceptron" }}]

[execution]
state_every = 1e-9
"""


class Folder:
    """Where the measured cell keeps its states: one file per cell, the last state."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)

    def load(self, cell_id: str) -> bytes | None:
        return None

    def save(self, cell_id: str, data: bytes) -> None:
        (self.path / f"{cell_id}.pkl").write_bytes(data)

    def drop(self, cell_id: str) -> None:
        (self.path / f"{cell_id}.pkl").unlink(missing_ok=True)


def pipeline_file(work: Path, rows: int, features: int) -> Path:
    path = work / f"state-size-{rows}x{features}.toml"
    path.write_text(PIPELINE.format(rows=rows, features=features))
    return path


def the_cell(path: Path):
    """The pipeline's one cell (its dataset built into the data cache if missing)."""
    from dolb.execution.sweep import plan_groups
    from dolb.experiment.pipeline import load_pipeline

    (group,) = plan_groups(load_pipeline(path))
    return group.cell(0)


def measure(path: Path, work: Path) -> dict:
    """Run the cell of ``path``, timing every state save (pickling included)."""
    from dolb.evaluation import run_cell as module
    from dolb.evaluation import saved_states

    cell = the_cell(path)
    sizes, seconds = [], []
    save = saved_states.save_state

    def timed(states, cell_id, state):
        started = time.perf_counter()
        returned = save(states, cell_id, state)
        seconds.append(time.perf_counter() - started)
        sizes.append((states.path / f"{cell_id}.pkl").stat().st_size)
        return returned

    saved_states.save_state = timed
    started = time.perf_counter()
    module.run_cell(cell, Folder(work / "state"))
    return {
        "saves": len(sizes),
        "largest": max(sizes, default=0),
        "last": sizes[-1] if sizes else 0,
        "save_seconds": sum(seconds) / max(len(seconds), 1),
        "cell_seconds": time.perf_counter() - started,
        "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[25_000, 50_000, 100_000, 200_000, 400_000])
    parser.add_argument("--features", type=int, default=5000)
    parser.add_argument("--work", type=Path, help="data cache and scratch files (default: a temporary folder)")
    parser.add_argument("--build", type=Path, help=argparse.SUPPRESS)  # a child: build this pipeline's data
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # a child: measure this pipeline's cell
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="state-size-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("DOLB_DATA_CACHE", str(work / "data-cache"))
    if args.build:
        the_cell(args.build)
        return
    if args.measure:
        print(json.dumps(measure(args.measure, work)))
        return
    print(f"rows      saves  largest MB  last MB  save s  cell s  peak RSS MB   ({args.features} features)")
    for rows in args.rows:
        path = pipeline_file(work, rows, args.features)
        for step in ("--build", "--measure"):
            child = subprocess.run([sys.executable, __file__, step, str(path), "--work", str(work)],
                                   check=True, stdout=subprocess.PIPE, text=True)
        m = json.loads(child.stdout.splitlines()[-1])
        print(f"{rows:<9} {m['saves']:>5}  {m['largest'] / 1e6:>10.1f}  {m['last'] / 1e6:>7.1f}  "
              f"{m['save_seconds']:>6.3f}  {m['cell_seconds']:>6.1f}  {m['peak_rss'] / 1e6:>11.0f}")


if __name__ == "__main__":
    main()
