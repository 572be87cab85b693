"""Result tables: the tidy table of a sweep, aggregation over splits, report tables."""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd
from scipy import stats as st

from dolb.experiment.cells import Cell
from dolb.results.store import ResultStore

CONFIG_COLUMNS = ["experiment", "dataset", "task", "learner", "params", "complexity", "conversion"]
"""Columns that identify one configuration; results are aggregated over the rest."""

TIDY_COLUMNS = CONFIG_COLUMNS[:4] + ["split"] + CONFIG_COLUMNS[4:] + ["n_train", "metric", "value", "cell_id"]


def tidy_results(cells: Iterable[Cell], store: ResultStore) -> pd.DataFrame:
    """One row per cell x conversion x checkpoint x metric for every stored cell among
    ``cells``. Online (prequential) metrics have the conversion ``"online"``.

    Cells that have no successful result are left out.
    """
    columns: dict[str, list] = {name: [] for name in TIDY_COLUMNS}
    for cell in cells:
        if not store.has(cell.id):
            continue
        result = store.read(cell.id)
        checkpoints = result["checkpoints"]
        for conversion, metrics in result["metrics"].items():
            coordinates = dict(cell.coordinates, conversion=conversion)
            for metric, values in metrics.items():
                for n, value in zip(checkpoints, values):
                    for key, item in coordinates.items():
                        columns[key].append(item)
                    columns["n_train"].append(n)
                    columns["metric"].append(metric)
                    columns["value"].append(value)
                    columns["cell_id"].append(cell.id)
    frame = pd.DataFrame(columns, columns=TIDY_COLUMNS)
    frame["complexity"] = frame["complexity"].astype(object)
    return frame


def ci95_halfwidth(values: pd.Series) -> float:
    """Half-width of the 95 % Student-t confidence interval of the mean."""
    n = values.count()
    if n < 2:
        return float("nan")
    return float(st.t.ppf(0.975, n - 1) * values.std(ddof=1) / np.sqrt(n))


_AGGREGATES = {
    "q25": lambda values: values.quantile(0.25),
    "q75": lambda values: values.quantile(0.75),
    "mean": "mean",
    "std": "std",
    "var": "var",
    "median": "median",
    "count": "count",
    "ci95": ci95_halfwidth,
}


def aggregate(frame: pd.DataFrame, stats: Iterable[str] = ("mean", "std", "ci95", "count")) -> pd.DataFrame:
    """Aggregate the tidy table over splits: one row per configuration x training
    size x metric, one column per statistic."""
    keys = CONFIG_COLUMNS + ["n_train", "metric"]
    grouped = frame.assign(complexity=frame["complexity"].astype(str)).groupby(keys, sort=True, dropna=False)["value"]
    table = grouped.agg([(name, _AGGREGATES[name]) for name in stats]).reset_index()
    return table


def comparison_table(frame: pd.DataFrame, experiment: str, metric: str, at, stats) -> pd.DataFrame:
    """Configurations as rows, ``metric`` statistics at each training size as columns
    (``"<stat> @ <n>"``)."""
    subset = frame[(frame["experiment"] == experiment) & (frame["metric"] == metric)]
    if at is not None:
        subset = subset[subset["n_train"].isin(at)]
    table = aggregate(subset, stats)
    wide = table.pivot_table(
        index=["learner", "params", "complexity", "conversion"],
        columns="n_train",
        values=list(stats),
        aggfunc="first",
        sort=True,
    )
    wide.columns = [f"{stat} @ {n}" for stat, n in wide.columns]
    order = sorted(wide.columns, key=lambda c: (int(c.split(" @ ")[1]), list(stats).index(c.split(" @ ")[0])))
    wide = wide[order].reset_index()
    levels = pd.to_numeric(wide["complexity"], errors="coerce")  # 4 before 10, not "10" before "4"
    return wide.assign(_level=levels).sort_values(["learner", "params", "_level", "complexity", "conversion"]).drop(
        columns="_level"
    ).reset_index(drop=True)


def to_markdown(table: pd.DataFrame) -> str:
    """A table as Markdown, numbers in 3 significant digits."""
    return table.to_markdown(index=False, floatfmt=".3g")
