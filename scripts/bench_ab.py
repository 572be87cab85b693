"""Speed of two source trees of dolb, side by side: ``dolb bench`` run alternately on
each, ``--repeat`` times, and per learner × input × conversions the median ratio of
examples per CPU second (after / before) with a bootstrap 95 % interval.

    python scripts/bench_ab.py BEFORE_TREE AFTER_TREE [--repeat 7] [--best-of 1] [--quick] [--zarr]
                               [--only LEARNER,LEARNER,...]

Each tree is a checkout of dolb (its ``dolb/`` package is put first on PYTHONPATH);
the runs interleave (before, after, after, before, ...) so that a machine that slows
down or speeds up during the measurement weighs on both alike. The interval is
scipy's BCa bootstrap of the median of the per-repeat ratios; "kept" means its lower
bound is at least 0.95.

dolb's plugins are found through the installed package's entry points, which may name
modules a tree does not have (an older tree, say): each run sees only the ``dolb.*``
entry points whose module its own tree can import (:data:`LAUNCH`), so neither tree
needs dolb uninstalled.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import defaultdict

import numpy as np
from scipy.stats import bootstrap

LAUNCH = """
import importlib, importlib.metadata as metadata, sys
installed = metadata.entry_points
def importable(point):
    try:
        importlib.import_module(point.module)
    except ImportError:
        return False
    return True
def entry_points(**selection):
    found = installed(**selection)
    if not selection.get("group", "").startswith("dolb."):
        return found
    return metadata.EntryPoints(p for p in found if importable(p))
metadata.entry_points = entry_points
from dolb.cli import main
sys.exit(main(sys.argv[1:]))
"""
"""Runs ``dolb`` with the ``dolb.*`` entry points limited to the modules the tree on
PYTHONPATH can import."""


def bench(tree: str, quick: bool, zarr: bool, only: str | None, best_of: int) -> dict[tuple, float]:
    """One ``dolb bench`` run of ``tree``: examples/s by (learner, input, source, conversions)."""
    command = [sys.executable, "-c", LAUNCH, "bench", "--json", "--repeat", str(best_of)]
    command += ["--only", only] if only else []
    command += ["--quick"] if quick else []
    command += [] if zarr else ["--no-zarr"]
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
    done = subprocess.run(command, env=env, cwd=tree, capture_output=True, text=True, check=True)
    rows = json.loads(done.stdout)
    return {(r["learner"], r["input"], r["source"], r["conversions"]): r["examples_per_s"]
            for r in rows if r["kind"] == "throughput"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--repeat", type=int, default=7, help="interleaved runs of each tree")
    parser.add_argument("--best-of", type=int, default=1, help="dolb bench --repeat: passes within a run "
                        "(default 1; older trees keep their best, newer ones their median: keep 1 across "
                        "that change)")
    parser.add_argument("--quick", action="store_true", help="dolb bench --quick (a tenth of the streams)")
    parser.add_argument("--zarr", action="store_true", help="also from a Zarr store (default: memory only)")
    parser.add_argument("--only", help="comma-separated learners, in the order both trees run them (a "
                                       "learner's place in a run moves its speed by a few %%: keep it equal)")
    args = parser.parse_args()
    ratios: dict[tuple, list[float]] = defaultdict(list)
    for r in range(args.repeat):
        order = [args.before, args.after] if r % 2 == 0 else [args.after, args.before]
        found = {tree: bench(tree, args.quick, args.zarr, args.only, args.best_of) for tree in order}
        for key, speed in found[args.after].items():
            if key in found[args.before]:
                ratios[key].append(speed / found[args.before][key])
        print(f"repeat {r + 1}/{args.repeat} done", file=sys.stderr)
    print(f"{'learner':<18}{'input':<8}{'source':<8}{'conv':<6}{'median':>8}{'95 % interval':>18}  kept")
    for key in sorted(ratios):
        values = np.array(ratios[key])
        interval = bootstrap((values,), np.median, confidence_level=0.95, method="BCa",
                             n_resamples=9999, random_state=0).confidence_interval
        low, high = interval.low, interval.high
        if not np.isfinite(low):  # BCa is undefined when every resample has one median
            low = high = float(np.median(values))
        kept = "yes" if low >= 0.95 else "NO"
        print(f"{key[0]:<18}{key[1]:<8}{key[2]:<8}{key[3]:<6}{np.median(values):>8.3f}"
              f"{f'[{low:.3f}, {high:.3f}]':>18}  {kept}")


if __name__ == "__main__":
    main()
