"""The tuning benchmark's tables, from a record of ``scripts/tuning_bench.py``:

    python3 scripts/tuning_tables.py benchmarks/tuning/RECORD.json [--record benchmarks/studies]

prints (and with ``--record`` writes as table records, rendered into
``docs/guide/tuning.md``)

- ``tuning/test_error``: per data set and learner, the test error of the full grid's
  choice with its 95 % bootstrap interval, and of the choices of dolb's halving and
  Hyperband and of dask-ml's two searches (mean over the splits);
- ``tuning/cost``: per search, the training examples it learned as a share of the
  grid's on each data set, and its wall time (dolb: the run, and its compute phase;
  dask-ml: its searches, summed).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from dolb.bench.tables import new_table, show_table
from dolb.console import script_status
from dolb.errors import ConfigError

SEARCHES = {"grid": "grid", "halving": "halving", "hyperband": "Hyperband", "dask-ml halving": "dask-ml halving",
            "dask-ml hyperband": "dask-ml Hyperband"}
"""The searches of a record, as the tables name them."""


def read_bench(path: Path) -> dict:
    """The tuning record at ``path`` (ConfigError naming it when it is not one)."""
    try:
        record = json.loads(Path(path).read_text())
        usable = isinstance(record["summary"], list) and isinstance(record["repeats"][0]["dolb"]["grid"], dict)
    except (OSError, UnicodeDecodeError, ValueError, KeyError, IndexError, TypeError) as error:
        raise ConfigError(f"{path}: not a record of scripts/tuning_bench.py ({error!r})") from None
    if not usable:
        raise ConfigError(f"{path}: not a record of scripts/tuning_bench.py (no summary or no grid run)")
    return record


def test_error(record: dict) -> tuple[list, list]:
    """Each search's tuned test error beside the grid's interval, per data set and learner."""
    summary = pd.DataFrame(record["summary"])
    searches = [s for s in SEARCHES if s in summary.columns]
    columns = [("data set", None), ("learner", None), ("grid", ".2%"), ("grid: 95 % low", ".2%"), ("high", ".2%"),
               *((SEARCHES[s], ".2%") for s in searches[1:])]
    return columns, summary[["dataset", "learner", "grid", "ci_low", "ci_high", *searches[1:]]].values.tolist()


def cost(record: dict) -> tuple[list, list]:
    """Each search's training examples as a share of the grid's, per data set, and its
    wall time."""
    runs = record["repeats"][0]["dolb"]
    learned = {m: pd.DataFrame(run["learned"]).groupby("dataset")["budget"].sum() for m, run in runs.items()}
    datasets = list(learned["grid"].index)
    columns = [("search", None), *((f"examples / grid's: {d}", ".0%") for d in datasets), ("wall s", ".1f"),
               ("compute s", ".1f")]
    rows = [[SEARCHES[m], *(learned[m][d] / learned["grid"][d] for d in datasets), run["wall_seconds"],
             run["timings"].get("compute")] for m, run in runs.items()]
    peers = pd.DataFrame(record["repeats"][0]["dask_ml"])
    if len(peers):
        for method, part in peers.groupby("method"):
            shares = part.groupby("dataset")["examples"].sum()
            rows.append([SEARCHES[method], *(shares.get(d, float("nan")) / learned["grid"][d] for d in datasets),
                         part["wall_seconds"].sum(), None])
    return columns, rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench_record", type=Path, help="a record of scripts/tuning_bench.py")
    parser.add_argument("--record", type=Path, help="write the tables as records into this folder")
    args = parser.parse_args(argv)
    record = read_bench(args.bench_record)
    source = f"python3 scripts/{record['command'].removeprefix('python3 scripts/')} ({args.bench_record.name})"
    for name, make in (("test_error", test_error), ("cost", cost)):
        show_table(new_table("tuning", name, *make(record), source=source), args.record)


if __name__ == "__main__":
    sys.exit(script_status(main, "tuning_tables.py"))
