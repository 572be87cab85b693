"""Render a pipeline's reports (tables as Markdown and CSV, curves as PNG) from the
tidy results table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dolb.experiment.pipeline import Pipeline
from dolb.results.figures import curve_figure
from dolb.results.tables import aggregate, comparison_table, to_markdown


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)


def write_reports(pipeline: Pipeline, frame: pd.DataFrame, out_dir: str | Path) -> str:
    """Write every report of ``pipeline`` under ``out_dir/report`` and the aggregate of
    every configuration, size and metric to ``summary.csv`` there; return the tables
    as Markdown text (what ``dolb run`` prints at the end)."""
    folder = Path(out_dir) / "report"
    folder.mkdir(parents=True, exist_ok=True)
    aggregate(frame).to_csv(folder / "summary.csv", index=False)
    sections = []
    for index, report in enumerate(pipeline.reports):
        stem = folder / _slug(f"{index + 1:02d}-{report.experiment}-{report.metric}-{report.kind}")
        if report.kind == "table":
            table = comparison_table(frame, report.experiment, report.metric, report.at, report.stats)
            table.to_csv(stem.with_suffix(".csv"), index=False)
            text = f"## {report.title}\n\n{to_markdown(table)}\n"
            stem.with_suffix(".md").write_text(text, encoding="utf-8")
            sections.append(text)
        else:
            path = curve_figure(frame, report.experiment, report.metric, report.title, stem.with_suffix(".png"))
            if report.at is not None:
                table = comparison_table(frame, report.experiment, report.metric, report.at, report.stats)
                table.to_csv(stem.with_suffix(".csv"), index=False)
                sections.append(f"## {report.title}\n\n{to_markdown(table)}\n\nFigure: {path}\n")
            else:
                sections.append(f"## {report.title}\n\nFigure: {path}\n")
    return "\n".join(sections)
