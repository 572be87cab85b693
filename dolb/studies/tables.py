"""Study tables: each table of a study page is a record file in the repository, written by
``dolb study`` from a run (:mod:`dolb.studies`), and rendered into the page when the docs are
built, so that no table of results is typed by hand.

A table record is a JSON object::

    {
      "schema": 1,
      "study": "irma",                           # the study's page: docs/studies/irma.md
      "table": "table1",                         # the table's name on that page
      "date": "2026-11-27T01:02:03Z",            # UTC, when it was written
      "command": "dolb study irma runs/irma --record benchmarks/studies",
      "source": "dolb run pipelines/irma.toml --out runs/irma",   # what made its input
      "versions": {"python": "3.12.3", "git_commit": "abc...", ...},
      "columns": [{"name": "examples, method"},
                  {"name": "order 4: paper", "format": ".1e"}, ...],
      "rows": [["10, IRMA", 0.0031, ...], ...]
    }

A cell is a string, a finite number or null (shown as "—"); a column's ``format`` is a
Python format specification of its numbers (``".1e"``, ``",d"``, ``".2%"``; ``"g"`` when
absent). Records live in ``DIR/<study>/<table>.json`` (:func:`write_table`); a study page
names a table by a line ``<!-- table: irma/table1 -->``, which :func:`render_markers`
replaces by the table and a line saying where it comes from.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from pathlib import Path

from dolb.bench.records import check_fields, command_line, fail, finite_number, load_json, versions

SCHEMA = 1
TABLES = Path("benchmarks") / "studies"
"""Where table records go, relative to the repository."""
MARKER = re.compile(r"^<!-- table: ([\w-]+)/([\w-]+) -->$", re.MULTILINE)
"""A study page's reference to a table record: ``<!-- table: STUDY/TABLE -->``."""
NAME = re.compile(r"^[\w-]+$")


def new_table(study: str, table: str, columns: list[tuple[str, str | None]], rows: list[list],
              source: str, command: str | None = None) -> dict:
    """A table record written now: ``columns`` as ``(heading, format or None)``,
    ``rows`` of cells, ``source`` the command that made what the table is computed from;
    ``command`` defaults to this process's command line.

    Examples
    --------
    >>> record = new_table("toy", "means", [("learner", None), ("error", ".1%")],
    ...                    [["perceptron", 0.0312]], source="dolb run pipelines/toy.toml", command="python3 t.py")
    >>> print(render_table(record))
    | learner | error |
    | --- | --- |
    | perceptron | 3.1% |
    """
    record = {"schema": SCHEMA, "study": study, "table": table,
              "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "command": command if command is not None else command_line(), "source": source,
              "versions": versions(),
              "columns": [{"name": name} | ({"format": spec} if spec else {}) for name, spec in columns],
              "rows": [[_plain(cell) for cell in row] for row in rows]}
    return check(record, f"table {study}/{table}")


def _plain(cell):
    """A cell as JSON holds it: NumPy numbers made Python ones, NaN made null."""
    if cell is None or isinstance(cell, str):
        return cell
    value = cell.item() if hasattr(cell, "item") else cell
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_table(folder: str | Path, record: dict) -> Path:
    """Write ``record`` as ``folder/<study>/<table>.json`` (replacing the one before:
    its history is the repository's); returns the path."""
    path = Path(folder) / record["study"] / f"{record['table']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False, allow_nan=False) + "\n")
    return path


def _cell(value) -> bool:
    return value is None or isinstance(value, str) or finite_number(value)


def _check_columns(columns, where: str) -> None:
    if not isinstance(columns, list) or not columns:
        fail(where, "columns is missing or not a non-empty list")
    for i, column in enumerate(columns):
        if not isinstance(column, dict) or not isinstance(column.get("name"), str):
            fail(where, f"columns[{i}] is not an object with a string name")
        if not isinstance(column.get("format", "g"), str):
            fail(where, f"columns[{i}].format is not a string")


def _check_cell(value, spec: str, where: str, i: int, j: int) -> None:
    if not _cell(value):
        fail(where, f"rows[{i}][{j}] is {value!r}: not a string, a finite number or null")
    if isinstance(value, (int, float)):
        try:
            format(value, spec)
        except ValueError:
            fail(where, f"rows[{i}][{j}] = {value!r} does not fit its column's format {spec!r}")


def check(record, where: str) -> dict:
    """``record`` if it follows the module's schema, else ConfigError naming ``where``
    and the first problem."""
    check_fields(record, where, SCHEMA, strings=("date", "command", "source"), objects=("versions",))
    for key in ("study", "table"):
        if not isinstance(record.get(key), str) or not NAME.match(record[key]):
            fail(where, f"{key} is missing or not a name of letters, digits, _ and -")
    _check_columns(record.get("columns"), where)
    rows = record.get("rows")
    if not isinstance(rows, list) or not rows:
        fail(where, "rows is missing or not a non-empty list")
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != len(record["columns"]):
            fail(where, f"rows[{i}] is not a list of {len(record['columns'])} cells")
        for j, (value, column) in enumerate(zip(row, record["columns"])):
            _check_cell(value, column.get("format", "g"), where, i, j)
    return record


def read_table(path: str | Path) -> dict:
    """The table record in ``path``, checked (ConfigError naming the file when it is not one)."""
    record = check(load_json(path, "table record"), str(path))
    expected = (Path(path).parent.name, Path(path).stem)
    if (record["study"], record["table"]) != expected:
        fail(str(path), f"holds table {record['study']}/{record['table']}, not {expected[0]}/{expected[1]}")
    return record


def _shown(value, spec: str, page: bool = False) -> str:
    if value is None:
        return "—"
    if isinstance(value, str):
        return value.replace("|", "\\|")
    if page:  # in one piece: a browser would break "4.4e-03" after its minus sign
        return f'<span class="number">{format(value, spec)}</span>'
    return format(value, spec)


def show_table(record: dict, folder: str | Path | None = None) -> None:
    """Print ``record``'s table under its name, as ``dolb study`` does; with ``folder``,
    also write it there (:func:`write_table`) and say where."""
    print(f"{record['table']}:\n{render_table(record)}\n")
    if folder is not None:
        print(f"written: {write_table(folder, record)}")


def render_table(record: dict, page: bool = False) -> str:
    """The table of ``record`` in Markdown; for a page of the site (``page``), each
    number in a ``<span class="number">``, which ``docs/css/tables.css`` keeps whole.

    Examples
    --------
    >>> record = {"columns": [{"name": "x"}, {"name": "y", "format": ".1e"}], "rows": [["a", 0.0044]]}
    >>> render_table(record, page=True).splitlines()[-1]
    '| a | <span class="number">4.4e-03</span> |'
    """
    specs = [column.get("format", "g") for column in record["columns"]]
    lines = ["| " + " | ".join(column["name"] for column in record["columns"]) + " |",
             "| " + " | ".join("---" for _ in specs) + " |"]
    lines += ["| " + " | ".join(_shown(value, spec, page) for value, spec in zip(row, specs)) + " |"
              for row in record["rows"]]
    return "\n".join(lines)


def provenance(record: dict, path: str) -> str:
    """One line under a rendered table: its record, the command that wrote it, what that
    read, the commit and the date."""
    commit = (record["versions"].get("git_commit") or "unknown")[:10]
    return (f"<small>Rendered from `{path}`, written by `{record['command']}` from "
            f"`{record['source']}` at commit `{commit}`, {record['date'][:10]}.</small>")


def render_markers(markdown: str, folder: str | Path, shown_folder: str = str(TABLES)) -> str:
    """``markdown`` with every ``<!-- table: STUDY/TABLE -->`` line replaced by that
    table from ``folder`` and its provenance; ConfigError naming the record when it is
    missing or damaged."""
    def table(match: re.Match) -> str:
        study, name = match.groups()
        path = Path(folder) / study / f"{name}.json"
        if not path.is_file():
            fail(str(path), f"no table record for the marker {match.group(0)}")
        record = read_table(path)
        return f"{render_table(record, page=True)}\n\n{provenance(record, f'{shown_folder}/{study}/{name}.json')}"

    return MARKER.sub(table, markdown)


def run_source(folder: str | Path) -> str:
    """What made the result folder ``folder``: ``dolb run PIPELINE (run RUN_ID)`` of its
    last finished run, the pipeline named as ``pipelines/NAME.toml`` when it is one of the
    repository's (no machine's path goes into a record)."""
    from dolb.results.history import find_record, recorded_pipeline
    from dolb.results.store import ResultStore

    store = ResultStore(folder)
    record = find_record(store)
    pipeline = Path(recorded_pipeline(store, record, "say which pipeline made these tables")[0])
    shown = f"pipelines/{pipeline.name}" if pipeline.parent.name == "pipelines" else pipeline.name
    return f"dolb run {shown} (run {record['run_id']})"
