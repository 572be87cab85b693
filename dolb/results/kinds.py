"""Report kinds: what a pipeline's ``[[reports]]`` may ask for, and how each is made.

Every kind is an entry of :data:`REPORTS`: its table (built from the summary of the
result store, or from its rows), whether it draws the curve figure, and whether it
pairs results (and so takes ``compare`` and ``baseline``). The pipeline checks read the
same registry, so a new kind is one entry here.

Examples
--------
>>> REPORTS.names()
['curve', 'paired', 'ranking', 'table']
>>> REPORTS["paired"].paired, REPORTS["curve"].figure
(True, True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from dolb.registry import Registry
from dolb.results import query
from dolb.results.store import ResultStore
from dolb.results.tables import comparison_table, paired_table, ranking_table


@dataclass(frozen=True)
class ReportSpec:
    """A table or a figure drawn from one experiment's results.

    ``table``: configurations against training sizes. ``curve``: a figure of the metric
    against training size, one panel per dataset. ``paired``: each value of ``compare``
    (a conversion or a learner) against ``baseline``, paired over splits, with a paired
    t-test. ``ranking``: configurations ranked on every dataset at the largest training
    size in ``at``, ordered by mean rank.
    """

    kind: str
    experiment: str
    metric: str
    at: tuple[int, ...] | None
    stats: tuple[str, ...]
    title: str
    compare: str = "conversion"
    baseline: str | None = None


@dataclass(frozen=True)
class ReportKind:
    """One kind of report.

    Attributes
    ----------
    name : str
        The ``kind`` a pipeline names.
    doc : str
        One line saying what it shows.
    table : callable
        ``table(report, summary, store)``: the table it shows, or None for none.
    figure : bool
        Whether it draws the metric against training size (a PNG).
    paired : bool
        Whether it compares values of ``compare`` with a ``baseline``, paired over splits.
    """

    name: str
    doc: str
    table: Callable[[ReportSpec, pd.DataFrame, ResultStore], pd.DataFrame | None]
    figure: bool = False
    paired: bool = False


def _comparison(report: ReportSpec, summary: pd.DataFrame, store: ResultStore) -> pd.DataFrame | None:
    if report.kind == "curve" and report.at is None:
        return None
    return comparison_table(summary, report.experiment, report.metric, report.at, report.stats)


def _paired(report: ReportSpec, summary: pd.DataFrame, store: ResultStore) -> pd.DataFrame:
    rows = query.rows(store, "experiment = ? AND metric = ?", (report.experiment, report.metric))
    return paired_table(rows, report.experiment, report.metric, report.at, report.compare, report.baseline)


def _ranking(report: ReportSpec, summary: pd.DataFrame, store: ResultStore) -> pd.DataFrame:
    return ranking_table(summary, report.experiment, report.metric, report.at)


REPORTS: Registry[ReportKind] = Registry("report kind")
"""Every report kind, by name."""

for _kind in (
    ReportKind("table", "configurations against training sizes, the statistics asked for", _comparison),
    ReportKind("curve", "the metric against training size, one panel per dataset", _comparison, figure=True),
    ReportKind("paired", "each value of `compare` against `baseline`, paired t-test over splits", _paired,
               paired=True),
    ReportKind("ranking", "configurations ranked on every dataset at the largest size of `at`", _ranking),
):
    REPORTS.add(_kind.name, _kind)
