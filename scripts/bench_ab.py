"""Speed of two source trees of dolb, side by side: ``dolb bench`` (from memory, 3
repeats inside each process) run alternately on each, ``--rounds`` times, and per
learner × input × conversions the median ratio of examples per CPU second after /
before with its BCa bootstrap 95 % interval and the one-sided Wilcoxon p, as the
nightly gate's A/B judges them (:mod:`dolb.bench.ab`,
:func:`dolb.results.nightly_gate.judge_ab`).

    python scripts/bench_ab.py BEFORE_TREE AFTER_TREE [--rounds 7] [--quick] [--only LEARNER,LEARNER,...]

Each tree is a checkout of dolb, run in its own environment (its ``dolb/`` package
first on PYTHONPATH when both have the same ``requirements.lock``, else a virtual
environment at its locked versions); the runs interleave (before, after, after,
before, ...) so that a machine that slows down or speeds up during the measurement
weighs on both alike. "kept" means the interval's lower bound is at least 0.95.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dolb.bench.ab import environment, interleave
from dolb.bench.throughput import LEARNERS
from dolb.results.nightly_gate import judge_ab
from dolb.results.throughput import SLOWDOWN


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--rounds", "--repeat", dest="rounds", type=int, default=7,
                        help="interleaved runs of each tree")
    parser.add_argument("--quick", action="store_true", help="dolb bench --quick (a tenth of the streams)")
    parser.add_argument("--only", help="comma-separated learners, in the order both trees run them (a "
                                       "learner's place in a run moves its speed by a few %%: keep it equal)")
    args = parser.parse_args()
    only = args.only.split(",") if args.only else list(LEARNERS)
    with tempfile.TemporaryDirectory(prefix="dolb-ab-") as scratch:
        trees = [environment(args.before, args.after, False, Path(scratch)),
                 environment(args.after, args.before, True, Path(scratch))]
        judged = judge_ab(interleave(*trees, only, args.rounds, args.quick), SLOWDOWN)
    print(f"{'learner':<18}{'input':<8}{'conv':<6}{'median':>8}{'95 % interval':>18}{'p':>8}  kept")
    for row in judged.itertuples():
        kept = "yes" if row.ab_low >= 0.95 else "NO"
        print(f"{row.learner:<18}{row.input:<8}{row.conversions:<6}{row.ab_ratio:>8.3f}"
              f"{f'[{row.ab_low:.3f}, {row.ab_high:.3f}]':>18}{row.ab_p:>8.3f}  {kept}")


if __name__ == "__main__":
    main()
