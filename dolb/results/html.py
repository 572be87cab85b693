"""Self-contained HTML pages: headings, paragraphs, tables and PNG figures embedded as
base64 data URIs, so that a page is one file to mail, attach to a CI job or archive,
that opens with the network off. Every text is escaped: a name holding ``<script>``,
a quote or an ampersand shows as written."""

from __future__ import annotations

import base64
import html
import math
from dataclasses import dataclass
from numbers import Number
from pathlib import Path

import pandas as pd

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1300px; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: right; white-space: nowrap; }
td.text, th.text { text-align: left; }
.wide { overflow-x: auto; }
th { background: #f0f0f0; }
tr.worse td { background: #fde0dc; } tr.better td { background: #dff3e3; }
.caption { color: #555; font-size: 0.9em; margin: 0.3em 0; }
img { max-width: 100%; display: block; margin: 1em 0; }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: 0.15em 1em;
           background: #f6f6f6; border: 1px solid #ddd; padding: 0.7em 1em; font-size: 0.9em; }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; }
.badge { display: inline-block; padding: 0.3em 0.8em; margin: 0 0.4em 0.4em 0; border-radius: 0.3em;
         font-weight: 600; background: #eee; }
.badge.worse { background: #d93025; color: #fff; } .badge.better { background: #188038; color: #fff; }
details summary { cursor: pointer; color: #1a5fb4; margin: 0.5em 0; }
"""

TONES = ("worse", "better", "neutral")
"""How a badge or a table row is coloured: red, green, or plain."""


@dataclass(frozen=True)
class Section:
    """One part of a page: a heading, then in order its coloured badges, a box of facts,
    paragraphs, figures, a caption and a table (collapsed under ``<details>`` when
    ``collapsed``). A table with a ``verdict`` column colours its ``worse`` and
    ``better`` rows.

    Examples
    --------
    >>> Section("Summary", ("3 compared: 0 worse",)).heading
    'Summary'
    """

    heading: str
    paragraphs: tuple[str, ...] = ()
    table: pd.DataFrame | None = None
    figures: tuple[Path, ...] = ()
    caption: str = ""
    collapsed: bool = False
    badges: tuple[tuple[str, str], ...] = ()
    facts: tuple[tuple[str, str], ...] = ()


def data_uri(png: Path) -> str:
    """A PNG file as a ``data:`` URI, to embed in a page.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "x.png"
    >>> _ = path.write_bytes(b"\\x89PNG")
    >>> data_uri(path)
    'data:image/png;base64,iVBORw=='
    """
    return "data:image/png;base64," + base64.b64encode(Path(png).read_bytes()).decode("ascii")


def cell_text(value) -> str:
    """A table cell as text: numbers in 3 significant digits, whole numbers as they are,
    missing values empty.

    Examples
    --------
    >>> [cell_text(v) for v in (0.012345, 150, float("nan"), None, "a<b", 12345.6)]
    ['0.0123', '150', '', '', 'a<b', '1.23e+04']
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, Number) and not isinstance(value, bool):
        return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:.3g}"
    return str(value)


def table_html(table: pd.DataFrame) -> str:
    """A table as HTML, every header and cell escaped; rows coloured by a ``verdict``.

    Examples
    --------
    >>> print(table_html(pd.DataFrame({"name": ["<b>"], "p": [0.5]})))
    <table><thead><tr><th class="text">name</th><th>p</th></tr></thead>
    <tbody>
    <tr><td class="text">&lt;b&gt;</td><td>0.5</td></tr>
    </tbody></table>
    """
    numeric = [pd.api.types.is_numeric_dtype(table[c]) for c in table.columns]
    head = "".join(f"<th>{html.escape(str(c))}</th>" if is_number else f'<th class="text">{html.escape(str(c))}</th>'
                   for c, is_number in zip(table.columns, numeric))
    verdicts = table["verdict"].tolist() if "verdict" in table.columns else [None] * len(table)
    rows = []
    for verdict, values in zip(verdicts, table.itertuples(index=False, name=None)):
        tone = f' class="{verdict}"' if verdict in TONES else ""
        cells = "".join(f"<td>{html.escape(cell_text(v))}</td>" if is_number else
                        f'<td class="text">{html.escape(cell_text(v))}</td>' for v, is_number in zip(values, numeric))
        rows.append(f"<tr{tone}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody></table>"


def _section_html(section: Section) -> str:
    parts = [f"<h2>{html.escape(section.heading)}</h2>"]
    if section.badges:
        parts.append("<p>" + "".join(
            f'<span class="badge {tone if tone in TONES else "neutral"}">{html.escape(text)}</span>'
            for text, tone in section.badges) + "</p>")
    if section.facts:
        parts.append('<dl class="facts">' + "".join(
            f"<dt>{html.escape(name)}</dt><dd>{html.escape(value)}</dd>" for name, value in section.facts) + "</dl>")
    parts += [f"<p>{html.escape(text)}</p>" for text in section.paragraphs]
    parts += [f'<img alt="{html.escape(Path(f).stem)}" src="{data_uri(f)}">' for f in section.figures]
    if section.caption:
        parts.append(f'<p class="caption">{html.escape(section.caption)}</p>')
    if section.table is not None and len(section.table):
        table = f'<div class="wide">{table_html(section.table)}</div>'
        if section.collapsed:
            table = f"<details><summary>{len(section.table)} rows</summary>\n{table}\n</details>"
        parts.append(table)
    return "\n".join(parts)


def html_page(title: str, sections: list[Section], lead: str = "") -> str:
    """A whole HTML document: ``title`` as heading, ``lead`` as its first paragraph,
    then every section, figures embedded.

    Examples
    --------
    >>> page = html_page("a < b", [Section("S", ("text",))])
    >>> "<h1>a &lt; b</h1>" in page and "<p>text</p>" in page
    True
    """
    body = "\n".join(_section_html(s) for s in sections)
    intro = f"<p>{html.escape(lead)}</p>\n" if lead else ""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>\n"
        f"<body>\n<h1>{html.escape(title)}</h1>\n{intro}{body}\n</body></html>\n"
    )
