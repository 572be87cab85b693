"""Render a pipeline's reports (tables as Markdown and CSV, curves as PNG) from a
result store: its summary is computed by :mod:`dolb.results.query` without loading its
rows; a paired report reads the rows it pairs, and no others."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from dolb.errors import DataError
from dolb.identity import digest
from dolb.results import query
from dolb.results.kinds import REPORTS, ReportSpec
from dolb.results.store import ResultStore
from dolb.results.tables import markdown_text, to_markdown

SUMMARY_STATISTICS = ["mean", "std", "ci95", "count"]
"""The columns of ``report/summary.csv`` besides the configuration."""


def slug(text: str, limit: int = 120) -> str:
    """``text`` as a file name: letters, digits, ``-`` and ``_`` kept, the rest ``-``; a
    long one cut to ``limit`` characters and told apart by a hash of the whole.

    Examples
    --------
    >>> slug("01-fig 2/test_error")
    '01-fig-2-test_error'
    >>> len(slug("x" * 300)), slug("x" * 300) != slug("x" * 299 + "y")
    (120, True)
    """
    name = "".join(c if c.isalnum() or c in "-_" else "-" for c in text)
    if len(name) <= limit:
        return name
    return f"{name[: limit - 13]}-{digest(text, length=12)}"


def write_reports(reports: tuple[ReportSpec, ...], store: ResultStore, summary: pd.DataFrame | None = None) -> str:
    """Write every report of a pipeline (its ``reports``) under the result folder's ``report/`` and the
    summary of every configuration, size and metric (:func:`dolb.results.query.summary`,
    computed here unless given) to ``summary.csv`` there; return the tables as Markdown
    text (what ``dolb run`` prints at the end)."""
    if summary is None:
        summary = query.summary(store)
    write_summary(store, summary)
    return "\n".join(render_report(reports, index, store, summary) for index in range(len(reports)))


def write_summary(store: ResultStore, summary: pd.DataFrame) -> None:
    """``report/summary.csv``: the statistics of :data:`SUMMARY_STATISTICS` for every
    configuration, training size and metric."""
    with _report_folder(store) as folder:
        summary[query.GROUP_COLUMNS + SUMMARY_STATISTICS].to_csv(folder / "summary.csv", index=False)


def render_report(reports: tuple[ReportSpec, ...], index: int, store: ResultStore, summary: pd.DataFrame) -> str:
    """Write the pipeline's report ``reports[index]`` (its table as Markdown and CSV, its figure
    as PNG) under ``report/``; return its Markdown. Reports are independent of each
    other: a sweep draws them in parallel on its workers."""
    report = reports[index]
    kind = REPORTS[report.kind]
    with _report_folder(store) as folder:
        stem = folder / slug(f"{index + 1:02d}-{report.experiment}-{report.metric}-{report.kind}")
        text = f"## {markdown_text(report.title)}\n"
        try:
            table = kind.table(report, summary, store)
        except DataError as exc:  # e.g. every cell it needs failed: say so, draw the rest
            return text + f"\nNot available: {exc}\n"
        if table is not None:
            table.to_csv(stem.with_suffix(".csv"), index=False)
            text += f"\n{to_markdown(table)}\n"
        if kind.figure:
            from dolb.results.figures import curve_figure  # matplotlib: only when a figure is drawn

            statistic = "median" if report.stats[0] == "median" else "mean"
            curve_figure(summary, report.experiment, report.metric, report.title, stem.with_suffix(".png"), statistic)
            text += f"\nFigure: {store.path}/report/{stem.with_suffix('.png').name}\n"
        stem.with_suffix(".md").write_text(text, encoding="utf-8")
    return text


@contextlib.contextmanager
def _report_folder(store: ResultStore) -> Iterator[Path]:
    """The local folder to write report files into: the result folder's ``report/``, or
    behind an fsspec URL a temporary folder copied there afterwards."""
    if store.local:
        folder = Path(store.path) / "report"
        folder.mkdir(parents=True, exist_ok=True)
        yield folder
        return
    with tempfile.TemporaryDirectory() as local:
        yield Path(local)
        store.fs.makedirs(f"{store.path}/report", exist_ok=True)
        for path in Path(local).iterdir():
            store.fs.put_file(str(path), f"{store.path}/report/{path.name}")
