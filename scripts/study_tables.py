"""The studies' sorted result tables and cell ids, to check that a change of the code
leaves every result bit-identical.

    python scripts/study_tables.py write FOLDER [STUDY ...]   # with the code to check
    python scripts/study_tables.py compare BEFORE AFTER

``write`` runs the reduced studies of ``tests/studies.py`` (RCV1 cutoff and zoo, OMS,
OMR), the shipped IRMA study in full, the small IRMA pipeline of the tests and the
tuning problem of ``tests/test_tuning.py`` (halving and Hyperband) on a 2-worker
LocalCluster, and keeps each one's stored values sorted (``tests.conftest.stored_values``)
with the sha256 of the sorted cell ids of every shipped pipeline (its datasets built
or found in the data cache). ``compare`` says, study by study, whether two such folders
hold the same values to the bit (timing metrics, wall-clock, left out) and the same ids.
Run it from the repository's root with the shared data at ``../shared/data``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def studies(scratch: Path) -> dict[str, str]:
    """Each study's pipeline text."""
    from tests import studies as reduced
    from tests.test_tuning import pipeline_text, write_problem

    write_problem(scratch)  # the tuning problem of tests/test_tuning.py
    return {
        "rcv1": reduced.rcv1_pipeline(), "oms": reduced.oms_pipeline(), "omr": reduced.omr_pipeline(),
        "irma": (ROOT / "pipelines" / "irma.toml").read_text(),
        "small_irma": (ROOT / "tests" / "data" / "pipelines" / "small_irma.toml").read_text(),
        "tuning_halving": pipeline_text(scratch), "tuning_hyperband": pipeline_text(scratch, method="hyperband"),
    }


def write(folder: Path, only: list[str]) -> None:
    from dolb.execution.sweep import plan_groups, run_sweep
    from dolb.experiment.pipeline import load_pipeline
    from dolb.options import RunOptions
    from tests.conftest import stored_values

    folder.mkdir(parents=True, exist_ok=True)
    ids = {}
    for path in sorted((ROOT / "pipelines").glob("*.toml")):
        cells = sorted(g.cell_id(i) for g in plan_groups(load_pipeline(path)) for i in range(g.n_splits))
        ids[path.name] = [len(cells), hashlib.sha256("\n".join(cells).encode()).hexdigest()]
    (folder / "ids.json").write_text(json.dumps(ids, indent=1))
    (folder / "problem").mkdir(exist_ok=True)
    for name, text in studies(folder / "problem").items():
        if only and name not in only:
            continue
        (folder / name).mkdir(exist_ok=True)
        (folder / name / "p.toml").write_text(text)
        summary = run_sweep(folder / name / "p.toml", folder / name / "out", RunOptions(workers=2))
        stored_values(folder / name / "out").to_pickle(folder / f"{name}.pkl")
        print(f"{name}: {summary.counts_line()}; {summary.seconds:.0f} s", flush=True)


def compare(before: Path, after: Path) -> bool:
    from dolb.evaluation.metrics import METRICS

    timing = [name for name, metric in METRICS.items() if metric.source == "timing"]
    same = True
    for table in sorted(before.glob("*.pkl")):
        one, two = (pd.read_pickle(folder / table.name) for folder in (before, after))
        one, two = (frame[~frame["metric"].isin(timing)].reset_index(drop=True) for frame in (one, two))
        try:
            pd.testing.assert_frame_equal(one, two, check_exact=True)
            print(f"{table.stem}: {len(one):,} values identical")
        except AssertionError as exc:
            same = False
            print(f"{table.stem}: DIFFERENT: {str(exc).splitlines()[0]}")
    ids = [json.loads((folder / "ids.json").read_text()) for folder in (before, after)]
    same &= ids[0] == ids[1]
    print("cell ids of the shipped pipelines:", "identical" if ids[0] == ids[1] else "DIFFERENT",
          {name: count for name, (count, _) in ids[1].items()})
    return same


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    writing = commands.add_parser("write")
    writing.add_argument("folder", type=Path)
    writing.add_argument("only", nargs="*", help="studies to run (default: all)")
    comparing = commands.add_parser("compare")
    comparing.add_argument("before", type=Path)
    comparing.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "write":
        write(args.folder, args.only)
        return 0
    return 0 if compare(args.before, args.after) else 1


if __name__ == "__main__":
    sys.exit(main())
