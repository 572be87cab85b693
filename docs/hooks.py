"""MkDocs hook: the pages made from the code when the site is built.

The pipeline reference comes from the pipeline schema, the learner pages from the
learner registry, the performance pages from the benchmark records in
``benchmarks/records/`` (:func:`dolb.bench.pages.performance_pages`), and every
``<!-- table: STUDY/TABLE -->`` line of a page becomes that table, rendered from its
record in ``benchmarks/studies/`` (:func:`dolb.bench.tables.render_markers`). Registered
in ``mkdocs.yml`` under ``hooks:``; nothing generated is written into ``docs/``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "benchmarks" / "records"
TABLES = ROOT / "benchmarks" / "studies"


def performance_pages() -> dict[str, str | bytes]:
    """The pages rendered from the benchmark records, and their figures (PNG)."""
    from dolb.bench.pages import performance_pages

    return performance_pages(RECORDS)


def cli_reference() -> str:
    """Every command of ``dolb`` with its options: the parser's own help."""
    from dolb.cli import build_parser

    parser = build_parser()
    out = ["# Command line", "", "Generated from `dolb.cli.build_parser` when the site is built: "
           "what `dolb COMMAND --help` prints.", ""]
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, command in [("dolb", parser)] + [(f"dolb {name}", c) for name, c in commands.choices.items()]:
        command.formatter_class = lambda prog: argparse.HelpFormatter(prog, width=100)
        out += [f"## {name}", "", "```", command.format_help().rstrip(), "```", ""]
    return "\n".join(out)


def generated_pages() -> dict[str, str | bytes]:
    """Every generated page: ``{path under docs/: Markdown}``."""
    from dolb.experiment.reference import pipeline_reference
    from dolb.learners.pages import learner_pages

    return {"reference/pipeline.md": pipeline_reference(), "reference/cli.md": cli_reference(),
            **learner_pages(), **performance_pages()}


def on_files(files, config):
    """Add the generated pages to the site's files."""
    for path, text in generated_pages().items():
        files.append(File.generated(config, path, content=text))
    return files


def on_page_markdown(markdown, page, config, files):
    """Render the study tables a page names."""
    from dolb.bench.tables import render_markers

    return render_markers(markdown, TABLES)
