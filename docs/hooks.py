"""MkDocs hook: the pages made from the code when the site is built.

The pipeline reference comes from the pipeline schema, the learner pages from the
learner registry, the performance pages from the benchmark records in
``benchmarks/records/`` (:func:`docs.pages.performance_pages`), and every
``<!-- table: STUDY/TABLE -->`` line of a page becomes that table, rendered from its
record in ``benchmarks/studies/`` (:func:`dolb.studies.tables.render_markers`). A study's
page (``docs/studies/NAME.md``) is made from the study registry around the prose the page
keeps by hand, its claims judged from the records, and a study of another package with
no page gets one made from the registry alone (:mod:`dolb.studies.pages`). Registered
in ``mkdocs.yml`` under ``hooks:``; nothing generated is written into ``docs/``.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

from dolb.errors import DolbError


def repository(config) -> Path:
    """The repository whose site is built: the folder of its ``mkdocs.yml``."""
    return Path(config.config_file_path).resolve().parent


@contextlib.contextmanager
def build_error() -> Iterator[None]:
    """A damaged or missing record, as mkdocs reports a build error: one line
    (``ERROR - <file>: <what is wrong>``, then ``Aborted with a BuildError!``)."""
    try:
        yield
    except DolbError as exc:
        raise PluginError(str(exc)) from None


def cli_reference() -> str:
    """Every command of ``dolb`` with its options: the parser's own help."""
    from dolb.cli import build_parser

    parser = build_parser()
    out = ["# Command line", "", "Generated from `dolb.cli.build_parser` when the site is built: "
           "what `dolb COMMAND --help` prints.", ""]
    for name, command in _commands("dolb", parser):
        command.formatter_class = lambda prog: argparse.HelpFormatter(prog, width=100)
        out += [f"## {name}", "", "```", command.format_help().rstrip(), "```", ""]
    return "\n".join(out)


def _commands(name: str, parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    """``parser`` and each of its sub-commands, theirs after each (``dolb bench MODE``)."""
    found = [(name, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, command in action.choices.items():
                found += _commands(f"{name} {sub}", command)
    return found


def generated_pages(root: Path) -> dict[str, str | bytes]:
    """Every generated page and figure: ``{path under docs/: Markdown or PNG bytes}``."""
    from docs.pages import performance_pages
    from dolb.bench.records import RECORDS
    from dolb.experiment.reference import pipeline_reference
    from dolb.learners.pages import learner_pages

    return {"reference/pipeline.md": pipeline_reference(), "reference/cli.md": cli_reference(),
            **learner_pages(), **performance_pages(root / RECORDS)}


def page_markdown(markdown: str, path: str, root: Path) -> str:
    """The Markdown of the page at ``path`` (under ``docs/``): a study's page made around
    its prose, any other page with its study markers rendered."""
    from dolb.studies.pages import page_study, render_study_markers, study_page
    from dolb.studies.tables import TABLES

    study = page_study(path)
    if study is not None:
        return study_page(study, markdown, root / TABLES)
    return render_study_markers(markdown, root / TABLES)


def on_files(files, config):
    """Add the generated pages to the site's files, once every page's study tables are
    known to render (a damaged record stops the build before any page is read)."""
    from dolb.studies.pages import missing_pages, study_page
    from dolb.studies.tables import TABLES

    root = repository(config)
    with build_error():
        for page in files.documentation_pages():
            page_markdown(page.content_string, page.src_uri, root)
        for path, text in generated_pages(root).items():
            files.append(File.generated(config, path, content=text))
        present = {file.src_uri for file in files}
        for path, study in missing_pages(present).items():
            study_page(study, "", root / TABLES)  # its records render
            files.append(File.generated(config, path, content=""))  # made from the registry alone when read
    return files


def on_page_markdown(markdown, page, config, files):
    """Make a study's page around its prose; render the study tables and claims a page names."""
    with build_error():
        return page_markdown(markdown, page.file.src_uri, repository(config))
