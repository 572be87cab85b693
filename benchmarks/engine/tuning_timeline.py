"""``python -m benchmarks tuning-timeline``: the timeline of a tuning where one split's cells are
ten times slower than the others'.

    python -m benchmarks tuning-timeline [--workers 4] [--fast 0.1] [--width 72]

Runs a halving of SGD's ``alpha`` (12 trials, rungs of 12, 6 and 3 at 600, 1,200 and
2,400 examples; 4 splits; the tuning problem of :func:`write_problem`, which the tuning
tests learn too) on a cluster
of worker threads in this process, every cell held ``--fast`` seconds (sleeping: no
CPU) beyond its own work, and the first split's ten times as long. Prints, per split and
rung, when its cells ran (one character a time step: ``#`` while a cell of it ran, ``.``
between its first start and last end), when each split's chosen configuration ended,
and the whole run's compute time; its record (``tuning-timeline``) keeps when each split's
rungs and chosen cell began and ended.
"""

from __future__ import annotations

import tempfile
import textwrap
import threading
import time
from pathlib import Path

from dolb.bench.records import measurement, new_record, write_record
from tests.problems import write_problem

LEARNER = ('learner = "sgd", params = { loss = "hinge", schedule = "sqrt", eta0 = 0.0003 }, '
           'search = { alpha = { low = 1e-5, high = 1000.0, log = true } }')
TUNING = 'method = "halving", trials = 12, min_budget = 100, eta = 2, conversion = "average", defaults = false'
SPLITS = 4
SLOW = 0
"""The split whose cells are ten times slower (its cells are the first to start)."""


def pipeline(folder: Path) -> Path:
    """The tuned pipeline, its data written into ``folder``."""
    write_problem(folder)
    path = folder / "timeline.toml"
    path.write_text(textwrap.dedent(f"""
        [pipeline]
        name = "timeline"
        seed = 11
        [datasets.noisy]
        importer = "svmlight"
        params = {{ path = "{folder}/train.svm", test_path = "{folder}/test.svm" }}
        [experiments.e]
        dataset = "noisy"
        task = "binary"
        split = {{ scheme = "given", count = {SPLITS}, order = "random" }}
        checkpoints = [2400]
        metrics = ["test_error"]
        conversions = ["average"]
        learners = [{{ {LEARNER} }}]
        tuning = {{ {TUNING} }}
    """))
    return path


class Slowed:
    """Runs cells as ``run_cell`` does, each held ``fast`` seconds longer (the slow
    split's ten times as long), and keeps when each ran: (split, rung or "chosen",
    start, end) in seconds."""

    def __init__(self, run_cell, fast: float) -> None:
        self.run_cell, self.fast = run_cell, fast
        self.spans, self.lock = [], threading.Lock()

    def __call__(self, cell, states=None):
        spec = cell.spec
        start = time.perf_counter()
        result = self.run_cell(cell, states)
        time.sleep(self.fast * (10 if spec.split.index == SLOW else 1))
        with self.lock:
            self.spans.append((spec.split.index, "chosen" if spec.tuning is None else spec.tuning.rung, start,
                               time.perf_counter()))
        return result


def draw(spans: list, width: int) -> str:
    """The timeline as text: a line per split and rung, then each split's chosen cell;
    time from the first cell's start."""
    origin = min(start for *_, start, _ in spans)
    spans = [(split, stage, start - origin, stop - origin) for split, stage, start, stop in spans]
    end = max(stop for *_, stop in spans)
    step = end / width
    lines = [f"time steps of {step:.2f} s; '#': a cell of it ran, '.': between its first start and last end"]
    for split in range(SPLITS):
        for stage in sorted({s for sp, s, *_ in spans if sp == split}, key=lambda s: (s == "chosen", s)):
            mine = [(a, b) for sp, s, a, b in spans if sp == split and s == stage]
            row = ["."] * width
            first, last = min(a for a, _ in mine), max(b for _, b in mine)
            for k in range(width):
                t0, t1 = k * step, (k + 1) * step
                if t1 < first or t0 > last:
                    row[k] = " "
                elif any(a < t1 and b > t0 for a, b in mine):
                    row[k] = "#"
            label = f"split {split}{' (slow)' if split == SLOW else ''}, " + (
                "chosen" if stage == "chosen" else f"rung {stage}")
            lines.append(f"{label:<24}|{''.join(row)}| {first:5.1f}-{last:5.1f} s")
    return "\n".join(lines)


def main(args) -> int:
    """``python -m benchmarks tuning-timeline``: the timeline, printed; with ``args.record`` a
    record of each split's stages and of the compute phase."""
    from distributed import LocalCluster

    from dolb.execution import tasks
    from dolb.execution.sweep import run_sweep
    from dolb.options import RunOptions

    with tempfile.TemporaryDirectory() as scratch, \
            LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=False, dashboard_address=":0",
                         silence_logs=40) as cluster:
        path = pipeline(Path(scratch))
        slowed = Slowed(tasks.run_cell, args.fast)
        tasks.run_cell = slowed
        try:
            summary = run_sweep(path, Path(scratch) / "out", RunOptions(scheduler=cluster.scheduler_address))
        finally:
            tasks.run_cell = slowed.run_cell
    print(draw(slowed.spans, args.width))
    origin = min(start for *_, start, _ in slowed.spans)
    chosen = {split: stop - origin for split, stage, _, stop in slowed.spans if stage == "chosen"}
    print("chosen cells ended at", ", ".join(f"split {s}: {chosen[s]:.1f} s" for s in sorted(chosen)))
    print(f"{summary.counts_line()}; compute {summary.timings.get('compute', 0.0):.1f} s on {args.workers} "
          f"worker threads")
    if args.record:
        print(f"record: {write_record(args.record, timeline_record(slowed.spans, summary, args))}")
    return 0


def timeline_record(spans: list, summary, args) -> dict:
    """The record ``tuning-timeline``: when each split's rungs and chosen cell first
    began and last ended (seconds from the first cell's start), and the compute phase."""
    origin = min(start for *_, start, _ in spans)
    stages = sorted({(split, stage) for split, stage, *_ in spans}, key=lambda k: (k[0], k[1] == "chosen", k[1]))
    labels = {"workers": args.workers, "fast": args.fast}
    found = [measurement(labels | {"split": split, "stage": "chosen" if stage == "chosen" else f"rung {stage}",
                                   "figure": figure}, "s", [value - origin])
             for split, stage in stages for mine in [[(a, b) for sp, st, a, b in spans if (sp, st) == (split, stage)]]
             for figure, value in (("first start", min(a for a, _ in mine)), ("last end", max(b for _, b in mine)))]
    found.append(measurement(labels | {"figure": "compute"}, "s", [summary.timings.get("compute", 0.0)]))
    return new_record("tuning-timeline", found, command=args.command_line)
