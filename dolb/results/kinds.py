"""Report kinds: what a pipeline's ``[[reports]]`` may ask for, and how each is made.

Every kind is an entry of :data:`REPORTS`: its table (built from the summary of the
result store, or from its rows), the figure it draws (if any), and whether it pairs
results (and so takes ``compare`` and ``baseline``). The pipeline checks read the
same registry, so a new kind is one entry here.

Examples
--------
>>> REPORTS.names()
['curve', 'paired', 'ranking', 'table', 'tuning']
>>> REPORTS["paired"].paired, REPORTS["table"].figure is None
(True, True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dolb.registry import Registry

if TYPE_CHECKING:  # the pipeline's checks read this registry (on every worker): pandas and DuckDB when drawn
    import pandas as pd

    from dolb.results.store import ResultStore


@dataclass(frozen=True)
class ReportSpec:
    """A table or a figure drawn from one experiment's results.

    ``table``: configurations against training sizes. ``curve``: a figure of the metric
    against training size, one panel per dataset. ``paired``: each value of ``compare``
    (a conversion or a learner) against ``baseline``, paired over splits, with a paired
    t-test. ``ranking``: configurations ranked on every dataset at the largest training
    size in ``at``, ordered by mean rank, with the Friedman test, the ``posthoc`` test
    (``nemenyi`` or ``holm``) and the critical-difference diagram (these need
    scikit-posthocs: ``pip install 'dolb[stats]'``).
    """

    kind: str
    experiment: str
    metric: str
    at: tuple[int, ...] | None
    stats: tuple[str, ...]
    title: str
    compare: str = "conversion"
    baseline: str | None = None
    posthoc: str = "nemenyi"


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
    figure : callable or None
        ``figure(report, summary, table, path, store)``: draws its figure as a PNG at ``path``
        (or nothing, when there is nothing to draw) and returns what the page says
        about it, paragraphs of text.
    paired : bool
        Whether it compares values of ``compare`` with a ``baseline``, paired over splits.
    """

    name: str
    doc: str
    table: Callable[[ReportSpec, pd.DataFrame, ResultStore], pd.DataFrame | None]
    figure: Callable[[ReportSpec, pd.DataFrame, pd.DataFrame | None, Path, ResultStore], tuple[str, ...]] | None = None
    paired: bool = False


def _comparison(report: ReportSpec, summary: pd.DataFrame, store: ResultStore) -> pd.DataFrame | None:
    from dolb.results.tables import comparison_table

    if report.kind == "curve" and report.at is None:
        return None
    return comparison_table(summary, report.experiment, report.metric, report.at, report.stats)


def _paired(report: ReportSpec, summary: pd.DataFrame, store: ResultStore) -> pd.DataFrame:
    from dolb.results import query
    from dolb.results.tables import paired_table

    rows = query.rows(store, "experiment = ? AND metric = ?", (report.experiment, report.metric))
    return paired_table(rows, report.experiment, report.metric, report.at, report.compare, report.baseline)


def _curve(report: ReportSpec, summary: pd.DataFrame, table, path: Path, store: ResultStore) -> tuple[str, ...]:
    from dolb.results.figures import curve_figure  # matplotlib: only when a figure is drawn

    statistic = "median" if report.stats[0] == "median" else "mean"
    curve_figure(summary, report.experiment, report.metric, report.title, path, statistic)
    return ()


def _ranking_figure(report: ReportSpec, summary: pd.DataFrame, table: pd.DataFrame, path: Path,
                    store: ResultStore) -> tuple[str, ...]:
    from dolb.results.ranking import cd_diagram, friedman
    from dolb.results.tables import is_reference

    ranked = [c for c in table.columns if c.startswith("mean on ")]
    ranks = table[~table["learner"].map(is_reference).astype(bool)]  # references are not ranked
    values = ranks.set_index(ranks["configuration"])[ranked].T.dropna(axis=0)
    if values.shape[0] < 2 or values.shape[1] < 3:
        return (f"No Friedman test: it needs three configurations or more, measured on two datasets or more "
                f"(here {values.shape[1]} on {values.shape[0]}).",)
    test = friedman(values, report.posthoc)
    cd_diagram(test, report.title, path)
    return (test.describe(),)


def _ranking(report: ReportSpec, summary: pd.DataFrame, store: ResultStore) -> pd.DataFrame:
    from dolb.results.tables import ranking_table, short_labels

    table = ranking_table(summary, report.experiment, report.metric, report.at)
    table.insert(0, "configuration", short_labels(table))
    keys = ["learner", "params", "complexity", "conversion"]
    return table[[c for c in table.columns if c not in keys] + keys]


def _tuning(report: ReportSpec, summary: pd.DataFrame, store: ResultStore) -> pd.DataFrame:
    from dolb.results.tuning_report import tuning_table

    return tuning_table(report.experiment, report.metric, summary, store)


def _tuning_figure(report: ReportSpec, summary: pd.DataFrame, table, path: Path, store: ResultStore
                   ) -> tuple[str, ...]:
    from dolb.results.tuning_report import tuning_figure

    return tuning_figure(report.experiment, report.title, store, path)


def default_title(report: ReportSpec) -> str:
    """A title telling a report from the others of a pipeline: its metric, experiment,
    kind and what it compares.

    Examples
    --------
    >>> spec = ReportSpec("paired", "fig3", "test_hinge", (5000,), ("mean",), "", "conversion", "last")
    >>> default_title(spec)
    'fig3: test_hinge, each conversion against last (paired over splits) at n = 5000'
    """
    what = {
        "table": "configurations against training size",
        "curve": "against training size",
        "paired": f"each {report.compare} against {report.baseline} (paired over splits)",
        "ranking": "configurations ranked across datasets",
        "tuning": "the values each split's tuning chose, ranked tuned and at the listed values",
    }.get(report.kind, report.kind)
    at = "" if report.at is None else " at n = " + ", ".join(map(str, report.at))
    return f"{report.experiment}: {report.metric}, {what}{at}"


REPORTS: Registry[ReportKind] = Registry("report kind")
"""Every report kind, by name."""

for _kind in (
    ReportKind("table", "configurations against training sizes, the statistics asked for", _comparison),
    ReportKind("curve", "the metric against training size, one panel per dataset", _comparison, figure=_curve),
    ReportKind("paired", "each value of `compare` against `baseline`, paired t-test over splits", _paired,
               paired=True),
    ReportKind("ranking", "configurations ranked on every dataset at the largest size of `at`, Friedman test, "
               "post-hoc test and critical-difference diagram", _ranking, figure=_ranking_figure),
    ReportKind("tuning", "the values each split's tuning chose and their spread, the mean rank tuned beside the "
               "rank at the listed values, validation loss against budget", _tuning, figure=_tuning_figure),
):
    REPORTS.add(_kind.name, _kind)
