"""Result tables: the tidy table of a sweep, aggregation over splits, report tables."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd
from scipy import stats as st

from dolb.errors import DataError
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
    frame["complexity"] = frame["complexity"].map(complexity_label)
    return frame


def complexity_label(level) -> str:
    """A complexity level as the string the tables show: ``""`` for none, ``"4"`` for 4.

    Examples
    --------
    >>> complexity_label(None), complexity_label(4), complexity_label(0.5)
    ('', '4', '0.5')
    """
    if level is None or (isinstance(level, float) and level != level):
        return ""
    return str(level)


def read_results(folder) -> pd.DataFrame:
    """The tidy results table of a result folder, configuration columns as the text
    written (so ``complexity`` ``"3"`` matches across folders whatever the other rows).

    Raises
    ------
    DataError
        The folder has no ``results.csv``, or it is unreadable or lacks a column.

    Examples
    --------
    >>> read_results("no-such-folder")
    Traceback (most recent call last):
    ...
    dolb.errors.DataError: no-such-folder: not a result folder (no results.csv; run `dolb run` first)
    """
    path = Path(folder) / "results.csv"
    if not path.is_file():
        raise DataError(f"{folder}: not a result folder (no results.csv; run `dolb run` first)")
    try:
        frame = pd.read_csv(
            path,
            dtype={column: str for column in CONFIG_COLUMNS},
            keep_default_na=False,
            na_values={"value": ["", "nan", "NaN"]},
        )
    except (ValueError, pd.errors.ParserError) as exc:
        raise DataError(f"{path}: unreadable ({str(exc).splitlines()[0]})") from None
    missing = [column for column in TIDY_COLUMNS if column not in frame.columns]
    if missing:
        raise DataError(f"{path}: no column {missing[0]!r}")
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
    grouped = frame.groupby(keys, sort=True, dropna=False)["value"]
    table = grouped.agg([(name, _AGGREGATES[name]) for name in stats]).reset_index()
    return table


def comparison_table(frame: pd.DataFrame, experiment: str, metric: str, at, stats) -> pd.DataFrame:
    """Configurations as rows (one per dataset when the experiment has several),
    ``metric`` statistics at each training size as columns (``"<stat> @ <n>"``)."""
    subset = frame[(frame["experiment"] == experiment) & (frame["metric"] == metric)]
    if at is not None:
        subset = subset[subset["n_train"].isin(at)]
    table = aggregate(subset, stats)
    rows = ["dataset", "learner", "params", "complexity", "conversion"]
    wide = table.pivot_table(index=rows, columns="n_train", values=list(stats), aggfunc="first", sort=True)
    if wide.index.duplicated().any():  # cannot happen: aggregate() grouped by these keys
        raise AssertionError("comparison table rows are not unique")
    wide.columns = [f"{stat} @ {n}" for stat, n in wide.columns]
    order = sorted(wide.columns, key=lambda c: (int(c.split(" @ ")[1]), list(stats).index(c.split(" @ ")[0])))
    wide = wide[order].reset_index()
    levels = pd.to_numeric(wide["complexity"], errors="coerce")  # 4 before 10, not "10" before "4"
    order = ["dataset", "learner", "params", "_level", "complexity", "conversion"]
    wide = wide.assign(_level=levels).sort_values(order).drop(columns="_level").reset_index(drop=True)
    if wide["dataset"].nunique() == 1:
        wide = wide.drop(columns="dataset")
    return wide


def to_markdown(table: pd.DataFrame) -> str:
    """A table as Markdown, numbers in 3 significant digits."""
    return table.to_markdown(index=False, floatfmt=".3g")


def _at_sizes(subset: pd.DataFrame, at) -> pd.DataFrame:
    return subset if at is None else subset[subset["n_train"].isin(at)]


def paired_table(frame: pd.DataFrame, experiment: str, metric: str, at, compare: str, baseline: str) -> pd.DataFrame:
    """Each value of the ``compare`` column (a conversion or a learner) against
    ``baseline``, paired over splits: means, the mean difference (candidate minus
    baseline; negative is better for a loss) and the two-sided paired t-test p-value.

    Raises
    ------
    DataError
        The baseline does not occur in the experiment's results.
    """
    from dolb.errors import DataError

    subset = _at_sizes(frame[(frame["experiment"] == experiment) & (frame["metric"] == metric)], at)
    if baseline not in set(subset[compare]):
        raise DataError(f"paired report on {experiment}/{metric}: no {compare} {baseline!r} in the results")
    keys = [c for c in CONFIG_COLUMNS if c != compare] + ["n_train"]
    wide = subset.pivot_table(
        index=keys + ["split"], columns=compare, values="value", aggfunc="first"
    )
    rows = []
    for candidate in [c for c in wide.columns if c != baseline]:
        pairs = wide[[baseline, candidate]].dropna()
        for key, group in pairs.groupby(level=keys, sort=True):
            difference = group[candidate] - group[baseline]
            n = len(difference)
            if n < 2:
                p = float("nan")
            elif np.all(difference == 0):
                p = 1.0
            else:
                p = float(st.ttest_rel(group[candidate], group[baseline]).pvalue)
            rows.append(
                dict(zip(keys, key))
                | {
                    compare: candidate,
                    "baseline": baseline,
                    "mean": group[candidate].mean(),
                    "baseline mean": group[baseline].mean(),
                    "mean difference": difference.mean(),
                    "std difference": difference.std(ddof=1) if n > 1 else float("nan"),
                    "p": p,
                    "n": n,
                }
            )
    columns = ["dataset", "learner", "params", "complexity", "conversion", "n_train"]
    columns = [c for c in columns if c != compare] + [compare, "baseline", "mean", "baseline mean",
                                                      "mean difference", "std difference", "p", "n"]
    return pd.DataFrame(rows, columns=columns)


def ranking_table(frame: pd.DataFrame, experiment: str, metric: str, at) -> pd.DataFrame:
    """Configurations ranked on every dataset by their mean ``metric`` over splits
    (rank 1 is the lowest, ties share the mean rank), at the largest training size in
    ``at`` (default: each dataset's largest), ordered by mean rank across datasets."""
    subset = frame[(frame["experiment"] == experiment) & (frame["metric"] == metric)]
    if at is not None:
        subset = subset[subset["n_train"] == max(at)]
    else:
        largest = subset.groupby("dataset")["n_train"].transform("max")
        subset = subset[subset["n_train"] == largest]
    keys = ["learner", "params", "complexity", "conversion"]
    means = (
        subset.groupby(keys + ["dataset"])["value"]
        .mean()
        .unstack("dataset")
    )
    ranks = means.rank(axis=0, method="average")
    table = means.add_prefix("mean on ")
    table.insert(0, "mean rank", ranks.mean(axis=1))
    return table.sort_values("mean rank").reset_index()
