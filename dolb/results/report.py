"""Render a pipeline's reports (tables as Markdown and CSV, curves as PNG) from a
result store: its summary is computed by :mod:`dolb.results.query` without loading its
rows; a paired report reads the rows it pairs, and no others."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pandas as pd

from dolb import location
from dolb.errors import DataError
from dolb.identity import digest
from dolb.results import query
from dolb.results.kinds import REPORTS, ReportSpec
from dolb.results.store import ResultStore
from dolb.results.tables import lift_constants, markdown_text, to_markdown

SUMMARY_STATISTICS = ["mean", "std", "ci95", "ci_low", "ci_high", "count"]
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
    return reports_text([render_report(reports, index, store, summary) for index in range(len(reports))], store)


def reports_text(texts: list[str], store: ResultStore) -> str:
    """What ``dolb run`` prints of the reports' Markdown ``texts``, or where the
    statistics are when the pipeline has no report."""
    if not texts:
        summary = location.joined(store.location, "report", "summary.csv")
        return f"No [[reports]]: each configuration's statistics are in {summary}"
    return "\n".join(texts)


def write_summary(store: ResultStore, summary: pd.DataFrame) -> None:
    """``report/summary.csv``: the statistics of :data:`SUMMARY_STATISTICS` for every
    configuration, training size and metric."""
    with report_folder(store) as folder:
        summary[query.GROUP_COLUMNS + SUMMARY_STATISTICS].to_csv(folder / "summary.csv", index=False)


def report_stem(reports: tuple[ReportSpec, ...], index: int) -> str:
    """The file name, without suffix, of the report ``reports[index]`` under ``report/``."""
    report = reports[index]
    return slug(f"{index + 1:02d}-{report.experiment}-{report.metric}-{report.kind}")


def render_report(reports: tuple[ReportSpec, ...], index: int, store: ResultStore, summary: pd.DataFrame) -> str:
    """Write the pipeline's report ``reports[index]`` under ``report/``: its table as CSV
    (every column) and Markdown (constant columns lifted into a caption, empty ones
    dropped: :func:`~dolb.results.tables.lift_constants`), its figure as PNG, and what
    the result page shows of it as JSON (:func:`dolb.results.page.report_section`
    reads it); return its Markdown. Reports are independent of each other: a sweep
    draws them in parallel on its workers."""
    report = reports[index]
    kind = REPORTS[report.kind]
    with report_folder(store) as folder:
        stem = folder / report_stem(reports, index)
        shown = {"title": report.title, "notes": [], "caption": "", "table": None, "figure": None, "error": None}
        text = f"## {markdown_text(report.title)}\n"
        try:
            table = kind.table(report, summary, store)
        except DataError as exc:  # e.g. every cell it needs failed: say so, draw the rest
            shown["error"] = str(exc)
            stem.with_suffix(".json").write_text(json.dumps(shown), encoding="utf-8")
            return text + f"\nNot available: {exc}\n"
        stem.with_suffix(".png").unlink(missing_ok=True)  # an older run's figure
        if kind.figure is not None:
            shown["notes"] = list(kind.figure(report, summary, table, stem.with_suffix(".png"), store))
            if stem.with_suffix(".png").is_file():
                shown["figure"] = stem.with_suffix(".png").name
        text += "".join(f"\n{markdown_text(note)}\n" for note in shown["notes"])
        if table is not None:
            table.to_csv(stem.with_suffix(".csv"), index=False)
            lifted, shown["caption"] = lift_constants(table)
            shown["table"] = stem.with_suffix(".csv").name
            text += f"\n{markdown_text(shown['caption'])}\n" if shown["caption"] else ""
            text += f"\n{to_markdown(lifted)}\n"
        if shown["figure"]:
            text += f"\nFigure: {location.joined(store.location, 'report', shown['figure'])}\n"
        stem.with_suffix(".md").write_text(text, encoding="utf-8")
        stem.with_suffix(".json").write_text(json.dumps(shown), encoding="utf-8")
    return text


def report_folder(store: ResultStore) -> contextlib.AbstractContextManager[Path]:
    """The local folder to write report files into: the result folder's ``report/``, or
    behind an fsspec URL a temporary folder copied there afterwards."""
    return location.local_folder(location.joined(store.location, "report"))
