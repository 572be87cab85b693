"""Render a pipeline's reports (tables as Markdown and CSV, curves as PNG) from a
result store: its summary is computed by :mod:`dolb.results.query` without loading its
rows; a paired report reads the rows it pairs, and no others."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd

from dolb.errors import DataError
from dolb.experiment.pipeline import Pipeline, ReportSpec
from dolb.results import query
from dolb.results.store import ResultStore
from dolb.results.tables import comparison_table, paired_table, ranking_table, to_markdown

SUMMARY_STATISTICS = ["mean", "std", "ci95", "count"]
"""The columns of ``report/summary.csv`` besides the configuration."""


def slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)


def _table(report: ReportSpec, summary: pd.DataFrame, store: ResultStore) -> pd.DataFrame | None:
    """The table a report shows (None for a curve without training sizes)."""
    if report.kind == "paired":
        rows = query.rows(store, "experiment = ? AND metric = ?", (report.experiment, report.metric))
        return paired_table(rows, report.experiment, report.metric, report.at, report.compare, report.baseline)
    if report.kind == "ranking":
        return ranking_table(summary, report.experiment, report.metric, report.at)
    if report.kind == "curve" and report.at is None:
        return None
    return comparison_table(summary, report.experiment, report.metric, report.at, report.stats)


def write_reports(pipeline: Pipeline, store: ResultStore, summary: pd.DataFrame | None = None) -> str:
    """Write every report of ``pipeline`` under the result folder's ``report/`` and the
    summary of every configuration, size and metric (:func:`dolb.results.query.summary`,
    computed here unless given) to ``summary.csv`` there; return the tables as Markdown
    text (what ``dolb run`` prints at the end). On an fsspec URL the report is drawn in
    a temporary folder and copied there."""
    if summary is None:
        summary = query.summary(store)
    if not store.local:
        with tempfile.TemporaryDirectory() as local:
            text = _write(pipeline, store, summary, Path(local) / "report")
            store.fs.put(str(Path(local) / "report"), f"{store.path}/report", recursive=True)
        return text
    return _write(pipeline, store, summary, Path(store.path) / "report")


def _write(pipeline: Pipeline, store: ResultStore, summary: pd.DataFrame, folder: Path) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    summary[query.GROUP_COLUMNS + SUMMARY_STATISTICS].to_csv(folder / "summary.csv", index=False)
    sections = []
    for index, report in enumerate(pipeline.reports):
        stem = folder / slug(f"{index + 1:02d}-{report.experiment}-{report.metric}-{report.kind}")
        text = f"## {report.title}\n"
        try:
            table = _table(report, summary, store)
        except DataError as exc:  # e.g. every cell it needs failed: say so, draw the rest
            text += f"\nNot available: {exc}\n"
            sections.append(text)
            continue
        if table is not None:
            table.to_csv(stem.with_suffix(".csv"), index=False)
            text += f"\n{to_markdown(table)}\n"
        if report.kind == "curve":
            from dolb.results.figures import curve_figure  # matplotlib: only when a figure is drawn

            statistic = "median" if report.stats[0] == "median" else "mean"
            path = curve_figure(
                summary, report.experiment, report.metric, report.title, stem.with_suffix(".png"), statistic
            )
            text += f"\nFigure: {path}\n"
        stem.with_suffix(".md").write_text(text, encoding="utf-8")
        sections.append(text)
    return "\n".join(sections)
