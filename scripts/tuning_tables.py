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

from dolb.bench.tables import new_table, record_folder, show_tables
from dolb.console import script_status
from dolb.errors import ConfigError

SEARCHES = {"grid": "grid", "halving": "halving", "hyperband": "Hyperband", "dask-ml halving": "dask-ml halving",
            "dask-ml hyperband": "dask-ml Hyperband"}
"""The searches of a record, as the tables name them."""


def read_bench(path: Path) -> dict:
    """The tuning record at ``path`` (ConfigError naming it and what is wrong when it is
    not one: :func:`problem`)."""
    try:
        record = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ConfigError(f"{path}: not a record of scripts/tuning_bench.py ({error})") from None
    found = problem(record)
    if found:
        raise ConfigError(f"{path}: not a record of scripts/tuning_bench.py ({found})")
    return record


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _rows(rows, where: str, text: tuple[str, ...], numbers: tuple[str, ...], empty: bool = False) -> str | None:
    """What is wrong with the list of objects ``rows`` (each with strings at ``text``,
    numbers at ``numbers``), None when nothing is."""
    if not isinstance(rows, list) or not (rows or empty):
        return f"{where} is {'not a list' if not isinstance(rows, list) else 'empty'}"
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            return f"{where}[{i}] is not an object"
        wrong = [k for k in text if not isinstance(row.get(k), str)] + [k for k in numbers if not _number(row.get(k))]
        if wrong:
            return f"{where}[{i}].{wrong[0]} is {row.get(wrong[0])!r}"
    return None


def problem(record) -> str | None:
    """What keeps ``record`` from being read as a tuning record (the keys the tables
    read, and their types), None when nothing does."""
    if not isinstance(record, dict) or not isinstance(record.get("command"), str):
        return "not a JSON object with a command"
    summary = record.get("summary")
    found = _rows(summary, "summary", ("dataset", "learner"), ("grid", "ci_low", "ci_high"))
    if found:
        return found
    for i, row in enumerate(summary):
        odd = [s for s in SEARCHES if s in row and not (row[s] is None or _number(row[s]))]
        if odd:
            return f"summary[{i}].{odd[0]} is {row[odd[0]]!r}"
    repeats = record.get("repeats")
    runs = repeats[0].get("dolb") if isinstance(repeats, list) and repeats and isinstance(repeats[0], dict) else None
    if not isinstance(runs, dict) or not isinstance(runs.get("grid"), dict):
        return "no grid run in repeats[0].dolb"
    for method, run in runs.items():
        where = f"repeats[0].dolb.{method}"
        if method not in SEARCHES or not isinstance(run, dict):
            return f"{where}: not a search of {', '.join(SEARCHES)}"
        if not _number(run.get("wall_seconds")) or not isinstance(run.get("timings"), dict):
            return f"{where} has no wall_seconds or timings"
        found = _rows(run.get("learned"), f"{where}.learned", ("dataset",), ("budget",))
        if found:
            return found
    peers = repeats[0].get("dask_ml", [])
    found = _rows(peers, "repeats[0].dask_ml", ("method", "dataset"), ("examples", "wall_seconds"), empty=True)
    if found:
        return found
    unknown = [row["method"] for row in peers if row["method"] not in SEARCHES]
    return f"repeats[0].dask_ml: unknown search {unknown[0]!r}" if unknown else None


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
    record_folder(args.record)
    record = read_bench(args.bench_record)
    source = f"python3 scripts/{record['command'].removeprefix('python3 scripts/')} ({args.bench_record.name})"
    show_tables([new_table("tuning", name, *make(record), source=source)
                 for name, make in (("test_error", test_error), ("cost", cost))], args.record)


if __name__ == "__main__":
    sys.exit(script_status(main, "tuning_tables.py"))
