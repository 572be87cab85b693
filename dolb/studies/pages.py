"""A study's page, made from the registry when the documentation is built.

A study's page (``docs/studies/NAME.md``, :attr:`~dolb.studies.study.Study.page_path`)
is its title and paper, then the prose the page keeps by hand (``prose``; none for a
study whose package ships no page), in which these lines, each on a line of its own,
become what the registry holds:

- ``<!-- commands -->``: the commands that reproduce the study (``dolb run`` of each of
  its pipelines, then ``dolb study``);
- ``<!-- claims -->`` (on another page, ``<!-- claims: NAME -->``): the paper's claims,
  each with its verdict judged from the table records and the numbers that decided it;
- ``<!-- table: NAME/TABLE -->``: the table, from its record
  (:func:`dolb.studies.tables.render_markers`).

What the prose does not place is added at its end: the claims, each table not named by
a marker and each figure not shown (``../figures/NAME.png``); so a study added through
the ``dolb.studies`` entry point, with no prose at all, gets a whole page.
"""

from __future__ import annotations

import re
from pathlib import Path

from dolb.studies import OWN, STUDIES
from dolb.studies.study import Study
from dolb.studies.tables import MARKER, TABLES, read_table, render_markers

COMMANDS = "<!-- commands -->"
CLAIMS = re.compile(r"^<!-- claims(?:: ([\w-]+))? -->$", re.MULTILINE)
"""A page's place for a study's claims: ``<!-- claims -->`` on the study's own page,
``<!-- claims: NAME -->`` on any page."""


def commands(study: Study) -> str:
    """The fenced commands that reproduce ``study``: each pipeline's run, then the study."""
    lines = []
    for pipeline in study.pipelines:
        run = f"runs/{pipeline}"
        lines += [f"dolb run pipelines/{pipeline}.toml --out {run}",
                  f"dolb study {study.name} {run} --record {TABLES.as_posix()} --figures docs/figures"]
    if not lines:
        lines = [f"dolb study {study.name} RUN --record {TABLES.as_posix()} --figures docs/figures"]
    return "```bash\n" + "\n".join(lines) + "\n```"


def stored_records(study: Study, folder: str | Path) -> dict[str, dict]:
    """The table records of ``study`` stored in ``folder`` (``DIR/NAME/TABLE.json``), by
    table name; a table without a record is left out (its claims are not judged)."""
    found = {}
    for table in study.tables:
        path = Path(folder) / study.name / f"{table.name}.json"
        if path.is_file():
            found[table.name] = read_table(path)
    return found


def claims_table(study: Study, folder: str | Path) -> str:
    """The claims of ``study`` as a Markdown table: each claim, its verdict from the
    records in ``folder``, the numbers that decided it and the tables it read."""
    if not study.claims:
        return "*This study states no claim to judge.*"
    lines = ["| the claim | here | judged from |", "| --- | --- | --- |"]
    for claim, verdict in study.judge(stored_records(study, folder)):
        tables = ", ".join(f"`{study.name}/{name}`" for name in claim.tables)
        cells = [claim.text, f"**{verdict.word}**: {verdict.evidence}", tables]
        lines.append("| " + " | ".join(cell.replace("|", "\\|").replace("\n", " ") for cell in cells) + " |")
    return "\n".join(lines)


def _placed_tables(markdown: str, study: Study) -> set[str]:
    return {table for name, table in MARKER.findall(markdown) if name == study.name}


def study_page(study: Study, prose: str | None, folder: str | Path, shown_folder: str = str(TABLES)) -> str:
    """The Markdown of ``study``'s page: title, paper, ``prose`` with its markers
    rendered, then what the prose does not place (see the module); tables and claims
    from the records in ``folder`` (shown as ``shown_folder``)."""
    body = prose or ""
    parts = [f"# {study.title}", study.paper, body.strip()]
    if study.claims and not CLAIMS.search(body):
        parts += ["## The paper's claims, judged", "<!-- claims -->"]
    if COMMANDS not in body and not prose:
        parts += ["## How to run it", COMMANDS]
    unplaced = [table.name for table in study.tables if table.name not in _placed_tables(body, study)]
    if unplaced:
        parts += ["## Tables", *(f"<!-- table: {study.name}/{name} -->" for name in unplaced)]
    unshown = [figure for figure in study.figures if f"../figures/{figure.name})" not in body]
    if unshown:
        parts += ["## Figures", *(f"![{f.caption or f.name}](../figures/{f.name})" for f in unshown)]
    return render_study_markers("\n\n".join(part for part in parts if part) + "\n", folder, shown_folder, study)


def render_study_markers(markdown: str, folder: str | Path, shown_folder: str = str(TABLES),
                         study: Study | None = None) -> str:
    """``markdown`` with its commands, claims and table markers rendered (``study``: the
    page's own study, which ``<!-- commands -->`` and ``<!-- claims -->`` name)."""
    def claims(match: re.Match) -> str:
        named = match.group(1)
        if named is None and study is None:
            return match.group(0)
        return claims_table(STUDIES[named] if named else study, folder)

    if study is not None:
        markdown = markdown.replace(COMMANDS, commands(study))
    return render_markers(CLAIMS.sub(claims, markdown), folder, shown_folder)


def page_study(path: str) -> Study | None:
    """The study whose page is ``path`` (under ``docs/``, as ``studies/irma.md``), made
    around its prose, or None (a page of dolb's own outside ``studies/``, as the tuning
    guide, only places its study's parts with markers)."""
    return next((study for name, study in STUDIES.items()
                 if study.page_path == path and (path.startswith("studies/") or name not in OWN)), None)


def missing_pages(present: set[str]) -> dict[str, Study]:
    """The studies of other packages whose page is not among the files ``present``
    (paths under ``docs/``): their pages are made from the registry alone."""
    return {study.page_path: study for name, study in STUDIES.items()
            if name not in OWN and study.page_path not in present}
