"""The tuning study: dolb's successive halving and Hyperband against the full grid and
dask-ml's adaptive searches (``docs/guide/tuning.md``). Its run is a record of
``python3 -m benchmarks.tuning.tuning_bench`` (:mod:`benchmarks.tuning.tuning_bench`), not a result
folder: the benchmark runs three pipelines and dask-ml's searches, and keeps what the
tables read. Tables:

- ``test_error``: per data set and learner, the test error of the full grid's choice
  with its 95 % bootstrap interval, and of the choices of dolb's halving and Hyperband
  and of dask-ml's two searches (mean over the splits);
- ``cost``: per search, the training examples it learned as a share of the grid's on
  each data set, and its wall time (dolb: the run, and its compute phase; dask-ml: its
  searches, summed).

Figures: ``tuning_validation.png`` (validation loss against budget, halving on the first
data set, split 0) and ``tuning_test_error.png``.

It is a study of its own, not part of the linear zoo whose learners it tunes: its run
is a benchmark record (three pipelines and dask-ml's searches on data sets and splits of
its own), its claims are about the tuning methods, and its page is the tuning guide.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, NullFormatter

from dolb.errors import ConfigError
from dolb.results.figure_style import PALETTE, new_figure, save
from dolb.studies import STUDIES
from dolb.studies.study import Claim, Figure, Study, Table, Verdict

PLAIN = FuncFormatter(lambda value, _: f"{value:g}")
"""Tick labels of a logarithmic axis as plain numbers."""
SEARCHES = {"grid": "grid", "halving": "halving", "hyperband": "Hyperband", "dask-ml halving": "dask-ml halving",
            "dask-ml hyperband": "dask-ml Hyperband"}
"""The searches of a record, as the tables name them."""


class BenchRun:
    """A tuning benchmark record as the study reads it: ``record``, ``source`` (the
    command that wrote it and its file's name) and its experiments (``tuning``)."""

    experiments = frozenset({"tuning"})

    def __init__(self, path: str | Path) -> None:
        self.record = read_bench(path)
        self.source = f"{self.record['command']} ({Path(path).name})"


def read_bench(path: str | Path) -> dict:
    """The tuning record at ``path`` (ConfigError naming it and what is wrong when it is
    not one: :func:`problem`)."""
    try:
        record = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ConfigError(f"{path}: not a tuning benchmark record ({error})") from None
    found = problem(record)
    if found:
        raise ConfigError(f"{path}: not a tuning benchmark record ({found})")
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


def validation_figure(decisions: pd.DataFrame, dataset: str, path: Path) -> None:
    """Validation loss against budget per learner (``dataset``, split 0): every trial a
    thin grey line, the chosen one bold."""
    shown = decisions.query("dataset == @dataset and split == 0")
    learners = list(dict.fromkeys(shown["learner"]))
    fig, axes = new_figure(1, len(learners), width=3.2, height=3.2, layout="constrained")
    for ax, learner in zip(axes[0], learners):
        for _, rungs in shown.query("learner == @learner").groupby("trial"):
            rungs = rungs.sort_values("budget")
            chosen = bool(rungs["chosen"].any())
            ax.plot(rungs["budget"], rungs["validation_loss"], marker="o", markersize=6 if chosen else 2,
                    color=PALETTE[3] if chosen else "0.6", linewidth=2.5 if chosen else 0.7, zorder=3 if chosen else 2,
                    label="chosen" if chosen else None)
        ax.plot([], [], marker="o", markersize=2, color="0.6", linewidth=0.7, label="other trials")
        ax.set_xscale("log")
        ax.set_xticks(sorted(set(shown["budget"])))
        ax.xaxis.set_major_formatter(PLAIN)
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(learner)
        ax.set_xlabel("budget (training examples)")
        ax.legend(loc="upper right", fontsize=8)
    axes[0][0].set_ylabel("validation error (holdout)")
    fig.suptitle(f"Successive halving on {dataset}, split 0 (a trial dropped at the first rung is a dot)")
    save(fig, path)


def test_error_figure(summary: pd.DataFrame, path: Path) -> None:
    """Test error per learner of each method, the grid's bootstrap interval as a bar."""
    series = [("grid", "full grid (95 % bootstrap interval)", "o"), ("halving", "dolb halving", "s"),
              ("hyperband", "dolb hyperband", "^"), ("dask-ml halving", "dask-ml halving", "D"),
              ("dask-ml hyperband", "dask-ml hyperband", "v")]
    series = [s for s in series if s[0] in summary.columns]
    datasets = list(dict.fromkeys(summary["dataset"]))
    fig, axes = new_figure(1, len(datasets), width=3.6, height=3.4, layout="constrained")
    for ax, dataset in zip(axes[0], datasets):
        shown = summary.query("dataset == @dataset").reset_index(drop=True)
        for k, (column, label, marker) in enumerate(series):
            x = np.arange(len(shown)) + (k - (len(series) - 1) / 2) * 0.14
            bars = None
            if column == "grid":
                bars = np.vstack([shown["grid"] - shown["ci_low"], shown["ci_high"] - shown["grid"]])
            ax.errorbar(x, shown[column], yerr=bars, fmt=marker, color=PALETTE[k], capsize=3, markersize=6,
                        label=label if dataset == datasets[0] else None)
        ax.set_xticks(np.arange(len(shown)), shown["learner"], rotation=35, ha="right")
        ax.set_title(dataset)
    axes[0][0].set_ylabel("test error (mean over splits)")
    fig.legend(loc="outside lower center", ncols=min(len(series), 1 + len(datasets)), fontsize=8)
    save(fig, path)


def within_the_grid(tables) -> Verdict:
    """dolb's halving and Hyperband each choose a configuration whose test error lies
    in the grid's 95 % interval for at least 4 in 5 of the data sets and learners."""
    columns = [column["name"] for column in tables["test_error"]["columns"]]
    rows = tables["test_error"]["rows"]
    inside = {name: sum(row[3] <= row[columns.index(name)] <= row[4] for row in rows)
              for name in ("halving", "Hyperband")}
    return Verdict(all(n >= 0.8 * len(rows) for n in inside.values()),
                   ", ".join(f"{name}: {n} of {len(rows)} inside" for name, n in inside.items()))


def cheaper(tables) -> Verdict:
    """dolb's halving and Hyperband each learn under a quarter of the grid's examples on
    every data set."""
    rows = {row[0]: row for row in tables["cost"]["rows"]}
    shares = {name: max(rows[name][1:-2]) for name in ("halving", "Hyperband")}
    return Verdict(all(share < 0.25 for share in shares.values()),
                   ", ".join(f"{name}: at most {share:.0%}" for name, share in shares.items()))


STUDY = Study(
    name="tuning",
    title="Tuning: the grid, halving and Hyperband",
    paper="Li, Jamieson, DeSalvo, Rostamizadeh & Talwalkar, \"Hyperband: a novel bandit-based approach to "
          "hyperparameter optimization\" (JMLR 2018), successive halving among its brackets.",
    pipelines=(),
    tables=(Table("test_error", lambda run: test_error(run.record)), Table("cost", lambda run: cost(run.record))),
    figures=(Figure("tuning_validation.png", lambda run, path: validation_figure(
                 pd.DataFrame(run.record["repeats"][0]["dolb"]["halving"]["decisions"]),
                 run.record["settings"]["datasets"][0], path), (), "Validation error against budget, halving"),
             Figure("tuning_test_error.png", lambda run, path: test_error_figure(
                 pd.DataFrame(run.record["summary"]), path), (),
                 "Test error of each search against the full grid's bootstrap interval")),
    claims=(Claim("successive halving and Hyperband choose as well as the full grid", within_the_grid,
                  ("test_error",)),
            Claim("successive halving and Hyperband learn a small share of the grid's examples", cheaper, ("cost",))),
    read=BenchRun,
    page="guide/tuning.md",
)
STUDIES.add(STUDY.name, STUDY)
