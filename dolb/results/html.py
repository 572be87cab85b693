"""Self-contained HTML pages: headings, paragraphs, tables and PNG figures embedded as
base64 data URIs, so that a page is one file to mail, attach to a CI job or archive."""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; font-size: 0.85em; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: right; }
th { background: #f0f0f0; }
img { max-width: 100%; display: block; margin: 1em 0; }
"""


@dataclass(frozen=True)
class Section:
    """One part of a report page: a heading, paragraphs, an optional table and figures.

    Examples
    --------
    >>> Section("Summary", ("3 compared: 0 worse",)).heading
    'Summary'
    """

    heading: str
    paragraphs: tuple[str, ...] = ()
    table: pd.DataFrame | None = None
    figures: tuple[Path, ...] = ()


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


def _section_html(section: Section) -> str:
    parts = [f"<h2>{html.escape(section.heading)}</h2>"]
    parts += [f"<p>{html.escape(text)}</p>" for text in section.paragraphs]
    if section.table is not None:
        parts.append(section.table.to_html(index=False, float_format="{:.3g}".format, na_rep="", border=0))
    parts += [f'<img alt="{html.escape(Path(f).stem)}" src="{data_uri(f)}">' for f in section.figures]
    return "\n".join(parts)


def html_page(title: str, sections: list[Section]) -> str:
    """A whole HTML document: ``title`` as heading, then every section, figures embedded.

    Examples
    --------
    >>> page = html_page("a < b", [Section("S", ("text",))])
    >>> "<h1>a &lt; b</h1>" in page and "<p>text</p>" in page
    True
    """
    body = "\n".join(_section_html(s) for s in sections)
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>\n"
        f"<body>\n<h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n"
    )
