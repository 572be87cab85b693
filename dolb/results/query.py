"""Questions to a result store, answered by DuckDB over its Parquet parts.

DuckDB scans the parts as a ``pyarrow.dataset`` (reading only the columns and rows a
question needs), groups and aggregates out of core within a fixed memory limit, and
returns small answers: which cells are stored, the failures, the summary statistics of
every configuration. So a sweep of 10⁶ cells is summarised and reported with the
client's memory bounded by the answer, not by the rows. pandas would have to hold
every row; dask.dataframe would need the cluster, which is gone by the time reports are
drawn again.

Every question sees each cell once: of several stored copies of a cell (equal, as
results are deterministic) the first successful attempt; a cell that never succeeded
shows its last failure.
"""

from __future__ import annotations

import tempfile

import duckdb
import numpy as np
import pandas as pd

from dolb.results.store import ResultStore

MEMORY_LIMIT = "512MB"
"""DuckDB's working memory; larger groupings spill to a temporary folder."""

CONFIG_COLUMNS = ["experiment", "dataset", "task", "learner", "params", "complexity", "conversion"]
"""Columns that identify one configuration; results are aggregated over the rest."""

GROUP_COLUMNS = CONFIG_COLUMNS + ["n_train", "metric"]
"""One summary row per configuration, training size and metric."""

STATISTICS = ("mean", "std", "var", "median", "q25", "q75", "count", "ci95")
"""What :func:`summary` computes for each group."""

_CHOSEN = """
    WITH chosen AS (
        SELECT cell_id,
               CASE WHEN bool_or(status = 'ok') THEN min(attempt) FILTER (WHERE status = 'ok')
                    ELSE max(attempt) END AS attempt
        FROM parts GROUP BY cell_id
    ),
    rows AS (SELECT parts.* FROM parts SEMI JOIN chosen USING (cell_id, attempt))
"""


def _connect(store: ResultStore) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the store's parts registered as the view ``parts``."""
    connection = duckdb.connect()
    connection.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
    connection.execute(f"SET temp_directory = '{tempfile.gettempdir()}/dolb-duckdb'")
    connection.register("parts", store.dataset())
    return connection


def stored_cells(store: ResultStore) -> tuple[set[str], set[str]]:
    """The ids of the cells stored with a result, and of those whose every attempt
    failed."""
    if not store.exists():
        return set(), set()
    with _connect(store) as connection:
        found = connection.sql(
            "SELECT cell_id, bool_or(status = 'ok') AS ok FROM parts GROUP BY cell_id"
        ).to_arrow_table()
    ids = found.column("cell_id").to_numpy(zero_copy_only=False)
    ok = found.column("ok").to_numpy(zero_copy_only=False).astype(bool)
    return set(ids[ok].tolist()), set(ids[~ok].tolist())


def rows(store: ResultStore, where: str = "TRUE", parameters: tuple = (), columns: list[str] | None = None
         ) -> pd.DataFrame:
    """The stored rows of successful cells matching the SQL condition ``where`` (with
    ``?`` placeholders filled from ``parameters``), each cell once: every column, or
    only ``columns`` (names of the store's columns)."""
    chosen = "*" if columns is None else ", ".join(f'"{name}"' for name in columns)
    with _connect(store) as connection:
        return connection.execute(
            f"{_CHOSEN} SELECT {chosen} FROM rows WHERE status = 'ok' AND ({where}) "
            "ORDER BY cell_id, conversion, metric, n_train",
            list(parameters),
        ).df()


def failures(store: ResultStore) -> pd.DataFrame:
    """One row per cell whose every attempt failed: id, coordinates and last error."""
    if not store.exists():
        return pd.DataFrame(columns=["cell_id", "experiment", "learner", "split", "error"])
    with _connect(store) as connection:
        return connection.execute(f"{_CHOSEN} SELECT * FROM rows WHERE status = 'failed' ORDER BY cell_id").df()


def summary(store: ResultStore, where: str = "TRUE", parameters: tuple = ()) -> pd.DataFrame:
    """Every statistic of :data:`STATISTICS` over splits, per configuration, training
    size and metric (rows matching ``where``); the same table as
    :func:`dolb.results.tables.aggregate` of the rows, computed without loading them.
    NaN values count as missing, as in pandas."""
    keys = ", ".join(GROUP_COLUMNS)
    with _connect(store) as connection:
        table = connection.execute(
            f"""{_CHOSEN},
            measured AS (SELECT {keys}, CASE WHEN isnan(value) THEN NULL ELSE value END AS value
                         FROM rows WHERE status = 'ok' AND ({where}))
            SELECT {keys}, avg(value) AS mean, stddev_samp(value) AS std, var_samp(value) AS var,
                   quantile_cont(value, 0.5) AS median, quantile_cont(value, 0.25) AS q25,
                   quantile_cont(value, 0.75) AS q75, count(value) AS count
            FROM measured GROUP BY ALL ORDER BY ALL""",
            list(parameters),
        ).df()
    table["count"] = table["count"].astype("int64")
    table["ci95"] = ci95_from(table["std"], table["count"])
    return table


def ci95_from(std, count) -> np.ndarray:
    """Half-width of the 95 % Student-t interval of a mean, from the sample standard
    deviation and count (NaN below two values).

    Examples
    --------
    >>> float(ci95_from(np.array([1.0]), np.array([4]))[0].round(4))
    1.5912
    """
    from scipy.special import stdtrit  # the t quantile; scipy.stats would take 0.7 s to import

    std, count = np.asarray(std, dtype=float), np.asarray(count, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        half = stdtrit(count - 1, 0.975) * std / np.sqrt(count)
    return np.where(count >= 2, half, np.nan)
