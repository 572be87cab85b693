"""Render a pipeline's reports (tables as Markdown and CSV, curves as PNG) from the
tidy results table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dolb.errors import DataError
from dolb.experiment.pipeline import Pipeline, ReportSpec
from dolb.results.figures import curve_figure
from dolb.results.tables import aggregate, comparison_table, paired_table, ranking_table, to_markdown


def slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)


def _table(report: ReportSpec, frame: pd.DataFrame) -> pd.DataFrame | None:
    """The table a report shows (None for a curve without training sizes)."""
    if report.kind == "paired":
        return paired_table(frame, report.experiment, report.metric, report.at, report.compare, report.baseline)
    if report.kind == "ranking":
        return ranking_table(frame, report.experiment, report.metric, report.at)
    if report.kind == "curve" and report.at is None:
        return None
    return comparison_table(frame, report.experiment, report.metric, report.at, report.stats)


def write_reports(pipeline: Pipeline, frame: pd.DataFrame, out_dir: str | Path) -> str:
    """Write every report of ``pipeline`` under ``out_dir/report`` and the aggregate of
    every configuration, size and metric to ``summary.csv`` there; return the tables
    as Markdown text (what ``dolb run`` prints at the end)."""
    folder = Path(out_dir) / "report"
    folder.mkdir(parents=True, exist_ok=True)
    aggregate(frame).to_csv(folder / "summary.csv", index=False)
    sections = []
    for index, report in enumerate(pipeline.reports):
        stem = folder / slug(f"{index + 1:02d}-{report.experiment}-{report.metric}-{report.kind}")
        text = f"## {report.title}\n"
        try:
            table = _table(report, frame)
        except DataError as exc:  # e.g. every cell it needs failed: say so, draw the rest
            text += f"\nNot available: {exc}\n"
            sections.append(text)
            continue
        if table is not None:
            table.to_csv(stem.with_suffix(".csv"), index=False)
            text += f"\n{to_markdown(table)}\n"
        if report.kind == "curve":
            statistic = "median" if report.stats[0] == "median" else "mean"
            path = curve_figure(
                frame, report.experiment, report.metric, report.title, stem.with_suffix(".png"), statistic
            )
            text += f"\nFigure: {path}\n"
        stem.with_suffix(".md").write_text(text, encoding="utf-8")
        sections.append(text)
    return "\n".join(sections)
