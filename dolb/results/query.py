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
shows its last failure. Sums run over a group's splits in split order, and :func:`rows`
returns the rows in :data:`ROW_ORDER`, what they measure, so two stores holding the same
rows (two runs of a pipeline, their parts written in whatever order the workers
finished, their cells' ids made by another version) give the same statistics and tables
to the bit: a float sum depends on the order of its terms.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from dolb.data.store.object_stores import reaching
from dolb.errors import DataError
from dolb.results.agreement import PER_LEARNER
from dolb.results.intervals import mean_intervals, proportion_pairs
from dolb.results.store import ResultStore

MEMORY_LIMIT = "512MB"
"""DuckDB's working memory; larger groupings spill to a temporary folder."""

CONFIG_COLUMNS = ["experiment", "dataset", "task", "learner", "params", "complexity", "conversion"]
"""Columns that identify one configuration; results are aggregated over the rest."""

GROUP_COLUMNS = CONFIG_COLUMNS + ["n_train", "metric"]
"""One summary row per configuration, training size and metric."""

ROW_ORDER = ["experiment", "dataset", "task", "learner", "params", "complexity", "conversion", "metric",
             "n_train", "split", "cell_id"]
"""The order of :func:`rows`: what a row measures, a cell's id last (it only parts two
cells alike in every column before it). A table's sums over the rows (means over splits,
over datasets) add them in this order, whatever the order they were stored in."""

STATISTICS = ("mean", "std", "var", "median", "q25", "q75", "count", "ci95", "ci_low", "ci_high")
"""What :func:`summary` computes for each group (``ci_low`` to ``ci_high``: the 95 %
interval of the mean of :func:`dolb.results.intervals.mean_intervals`)."""

def _chosen(parts: str, rows: str) -> str:
    """SQL common-table expressions naming ``rows`` the rows of the view ``parts`` with
    each cell once: of several stored copies the first successful attempt, else the last
    failure."""
    return f"""
    {rows}_chosen AS (
        SELECT cell_id,
               CASE WHEN bool_or(status = 'ok') THEN min(attempt) FILTER (WHERE status = 'ok')
                    ELSE max(attempt) END AS attempt
        FROM {parts} GROUP BY cell_id
    ),
    {rows} AS (SELECT {parts}.* FROM {parts} SEMI JOIN {rows}_chosen USING (cell_id, attempt))
"""


_CHOSEN = "WITH " + _chosen("parts", "rows")


@contextmanager
def _connect(store: ResultStore, name: str = "parts", **more: ResultStore) -> Iterator[duckdb.DuckDBPyConnection]:
    """An in-memory DuckDB with the store's parts registered as the view ``name`` (and
    those of each store of ``more`` under its keyword). A part that cannot be read
    whole (its pages damaged after its footer was written) ends the question with a
    DataError naming it."""
    stores = {name: store, **more}
    connection = duckdb.connect()
    try:
        connection.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
        connection.execute(f"SET temp_directory = '{tempfile.gettempdir()}/dolb-duckdb'")
        for view, registered in stores.items():
            connection.register(view, registered.dataset())
        yield connection
    except (duckdb.IOException, duckdb.InvalidInputException) as exc:
        for registered in stores.values():
            _refuse_damaged_part(registered)
        raise exc
    finally:
        connection.close()


def _refuse_damaged_part(store: ResultStore) -> None:
    """DataError naming the first part of ``store`` that cannot be read whole."""
    for part in store.parts():
        store.schema_of(part)  # its footer first: an unreadable part says so
        try:
            with reaching(store.root):  # out of reach is not damaged
                pq.read_table(part, filesystem=store.fs)
        except (OSError, pa.ArrowException) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise DataError(f"{store.shown(part)}: damaged result part ({reason})") from None


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


SHOWN_CELLS = 3
"""Cell ids a message about missing cells names; the rest are counted."""


def missing_cells(store: ResultStore) -> tuple[list[str], list[str]]:
    """The committed parts gone from the folder, and the ids of the cells only they
    held (stored in no part left, failed or not). After a run has computed them again
    a part may be gone and no cell missing."""
    gone = store.missing_parts()
    if not gone:
        return [], []
    stored, failed = stored_cells(store)
    held = {cell for cells in gone.values() for cell in cells}
    return sorted(gone), sorted(held - stored - failed)


def check_complete(store: ResultStore) -> None:
    """DataError naming the folder, the parts gone and the cells missing when a
    committed part is gone with cells stored nowhere else; nothing otherwise."""
    message = incompleteness(store)
    if message:
        raise DataError(message)


def incompleteness(store: ResultStore) -> str:
    """What :func:`check_complete` would say, or an empty text."""
    parts, cells = missing_cells(store)
    if not parts or cells == []:
        return ""
    gone = f"{store.root}: incomplete: {_counted(parts, 'committed result part')} missing ({_first(parts, 1)})"
    return (f"{gone}; {_counted(cells, 'cell')} stored nowhere else: {_first(cells, SHOWN_CELLS)} "
            "(`dolb run` again computes them)")


def _counted(items: list, name: str) -> str:
    """``"1 <name>"`` or ``"<n> <name>s"``."""
    return f"{len(items)} {name}{'s' * (len(items) != 1)}"


def _first(items: list[str], shown: int) -> str:
    """The first ``shown`` of ``items``, and how many more."""
    return ", ".join(items[:shown]) + (f" and {len(items) - shown} more" if len(items) > shown else "")


def rows(store: ResultStore, where: str = "TRUE", parameters: tuple = (), columns: list[str] | None = None
         ) -> pd.DataFrame:
    """The stored rows of successful cells matching the SQL condition ``where`` (with
    ``?`` placeholders filled from ``parameters``), each cell once, in
    :data:`ROW_ORDER`: every column, or only ``columns`` (names of the store's columns)."""
    chosen = "*" if columns is None else ", ".join(f'"{name}"' for name in columns)
    with _connect(store) as connection:
        return connection.execute(
            f"{_CHOSEN} SELECT {chosen} FROM rows WHERE status = 'ok' AND ({where}) "
            f"ORDER BY {', '.join(ROW_ORDER)}",
            list(parameters),
        ).df()


def cells_by_run(store: ResultStore) -> dict[str, tuple[int, int, int]]:
    """For each run id, the cells stored with a result by that run, the number of
    workers that stored them and the cells whose attempt by that run failed."""
    if not store.exists():
        return {}
    with _connect(store) as connection:
        found = connection.sql(
            "SELECT run_id, count(DISTINCT cell_id) FILTER (WHERE status = 'ok'), "
            "count(DISTINCT worker) FILTER (WHERE status = 'ok'), count(DISTINCT cell_id) FILTER (WHERE status = "
            "'failed') FROM parts GROUP BY run_id"
        ).fetchall()
    return {run_id: (cells, workers, failed) for run_id, cells, workers, failed in found}


def failures(store: ResultStore) -> pd.DataFrame:
    """One row per cell whose every attempt failed: id, coordinates and last error."""
    if not store.exists():
        return pd.DataFrame(columns=["cell_id", "experiment", "learner", "split", "error"])
    with _connect(store) as connection:
        # most stores have none: a scan of the status column, not a grouping of every row
        if not connection.execute("SELECT 1 FROM parts WHERE status = 'failed' LIMIT 1").fetchall():
            return connection.execute("SELECT * FROM parts LIMIT 0").df()
        return connection.execute(f"{_CHOSEN} SELECT * FROM rows WHERE status = 'failed' ORDER BY cell_id").df()


SUMMARY_ROWS = 1_000_000
"""Rows :func:`summary` aggregates at a time (its groups taken in slices of about this
many rows): within :data:`MEMORY_LIMIT` whatever the store's size."""


def _statistics(keys: str, where: str) -> str:
    """SQL of :func:`summary`'s statistics over the groups of ``measured`` matching ``where``
    (``count`` in pandas' sense: the values that are not missing); sums in split order (two
    cells of one split, in the order of their ids)."""
    order = "ORDER BY split, cell_id"
    proportions = " OR ".join(f"(metric = {_quoted(metric)} AND task = {_quoted(task)})"
                              for metric, task in proportion_pairs()) or "FALSE"
    return f"""SELECT {keys}, avg(value {order}) AS mean, stddev_samp(value {order}) AS std,
                      var_samp(value {order}) AS var, quantile_cont(value, 0.5) AS median,
                      quantile_cont(value, 0.25) AS q25, quantile_cont(value, 0.75) AS q75, count(value) AS count,
                      list(value {order}) FILTER (WHERE {proportions}) AS split_values
               FROM measured WHERE {where} GROUP BY ALL"""


def _quoted(text: str) -> str:
    """``text`` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def summary(store: ResultStore, where: str = "TRUE", parameters: tuple = ()) -> pd.DataFrame:
    """Every statistic of :data:`STATISTICS` over splits, per configuration, training
    size and metric (rows matching ``where``; the values of a proportion read to bootstrap
    its interval); the same table as
    :func:`dolb.results.tables.aggregate` of the rows, computed without loading them.
    NaN values count as missing, as in pandas."""
    keys = ", ".join(GROUP_COLUMNS)
    with _connect(store) as connection:
        connection.execute(
            f"""CREATE TEMP TABLE measured AS {_CHOSEN}
            SELECT {keys}, split, cell_id, CASE WHEN isnan(value) THEN NULL ELSE value END AS value
            FROM rows WHERE status = 'ok' AND ({where})""",
            list(parameters),
        )
        slices = -(-connection.execute("SELECT count(*) FROM measured").fetchone()[0] // SUMMARY_ROWS)
        connection.execute(f"CREATE TEMP TABLE statistics AS {_statistics(keys, 'TRUE')} LIMIT 0")
        for i in range(slices):  # the groups in slices: an ordered aggregate holds its group's values in memory
            connection.execute(f"INSERT INTO statistics {_statistics(keys, f'hash({keys}) % {slices} = {i}')}")
        table = connection.execute("SELECT * FROM statistics ORDER BY ALL").df()
    table["count"] = table["count"].astype("int64")
    table["ci95"] = ci95_from(table["std"], table["count"])
    table["ci_low"], table["ci_high"] = mean_intervals(table, table.pop("split_values"))
    return table


def _paired(run: ResultStore, baseline: ResultStore, metrics: list[str], select: str) -> pd.DataFrame:
    """``select`` over ``pairs``: the values of ``metrics`` of two stores of one pipeline
    paired over ``split``, one row per configuration, training size, metric and split
    present in both (cells stored twice count once, as everywhere), columns
    :data:`GROUP_COLUMNS`, ``split``, ``run`` and ``baseline`` (NULL unless both are finite)
    and ``run_value`` and ``baseline_value`` (as stored)."""
    keys = ", ".join(GROUP_COLUMNS)
    judged = ", ".join("?" * len(metrics)) or "NULL"

    def values(rows: str) -> str:  # one value per group and split
        return f"SELECT {keys}, split, avg(value) AS value FROM {rows} WHERE status = 'ok' AND metric IN ({judged}) " \
               "GROUP BY ALL"

    with _connect(run, "run_parts", baseline_parts=baseline) as connection:
        return connection.execute(
            f"""WITH {_chosen("run_parts", "run_rows")}, {_chosen("baseline_parts", "baseline_rows")},
            r AS ({values("run_rows")}),
            b AS ({values("baseline_rows")}),
            pairs AS (SELECT {keys},
                             split,
                             CASE WHEN isfinite(r.value) AND isfinite(b.value) THEN r.value END AS run,
                             CASE WHEN isfinite(r.value) AND isfinite(b.value) THEN b.value END AS baseline,
                             r.value AS run_value, b.value AS baseline_value
                      FROM r JOIN b USING ({keys}, split))
            {select}""",
            list(metrics) * 2,
        ).df()


def paired_moments(run: ResultStore, baseline: ResultStore, metrics: list[str]) -> pd.DataFrame:
    """The rows of two stores of one pipeline paired over ``split``, per configuration,
    training size and metric of ``metrics`` present in both, reduced to what a paired
    t-test needs (see :func:`dolb.results.stats.tests_from_moments`): ``n`` finite
    pairs of ``pairs``, the means ``baseline`` and ``run`` and the mean ``difference``
    over the finite pairs, and ``sd``, the standard deviation of the differences. The
    answer has a row per group, whatever the number of rows (cells stored twice count
    once, as everywhere)."""
    keys = ", ".join(GROUP_COLUMNS)
    return _paired(run, baseline, metrics, f"""
        SELECT {keys}, count(run) AS n, count(*) AS pairs, avg(baseline ORDER BY split) AS baseline,
               avg(run ORDER BY split) AS run, avg(run - baseline ORDER BY split) AS difference,
               stddev_samp(run - baseline ORDER BY split) AS sd
        FROM pairs GROUP BY ALL ORDER BY ALL""")


def paired_agreement(run: ResultStore, baseline: ResultStore, metrics: list[str]) -> pd.DataFrame:
    """How the values of ``metrics`` stored by both stores agree, paired on configuration,
    training size, metric and split: per learner, :data:`dolb.results.agreement.PER_LEARNER`."""
    return _paired(run, baseline, metrics, PER_LEARNER.replace(
        "FROM pairs", "FROM (SELECT learner, run_value AS run, baseline_value AS baseline FROM pairs)"))


def distinct(store: ResultStore, columns: list[str], where: str = "TRUE", parameters: tuple = ()) -> pd.DataFrame:
    """The distinct values of ``columns`` over the successful rows matching ``where``."""
    chosen = ", ".join(f'"{name}"' for name in columns)
    with _connect(store) as connection:
        return connection.execute(
            f"{_CHOSEN} SELECT DISTINCT {chosen} FROM rows WHERE status = 'ok' AND ({where}) ORDER BY ALL",
            list(parameters),
        ).df()


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
