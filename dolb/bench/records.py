"""Benchmark records: one JSON file per run of a bench, with everything needed to read
its figures later and to put them in a series.

A record is a JSON object (docs/design/benchmarks.md shows one, annotated)::

    {"schema": 1, "bench": "throughput-quick", "date": "2026-11-27T01:02:03Z",
     "command": "dolb bench --quick ...", "machine": {"cpu": "...", "cores": 2, ...},
     "versions": {"python": "3.12.3", "git_commit": "abc..." or null, "dolb": "...", ...},
     "measurements": [{"labels": {"learner": "perceptron", "input": "sparse"},
                       "unit": "examples/s", "repeats": [1.0e6, 1.1e6, ...]}, ...],
     "derived": [{"labels": {...}, "unit": "ratio", "value": 0.93}, ...]}

``bench`` names the bench and its variant, ``date`` (UTC) is when the run ended,
``command`` the exact command line; ``machine`` holds
:func:`dolb.execution.environment.arithmetic` among its fields, ``versions`` the git
commit and :func:`~dolb.execution.environment.package_versions`. Labels are strings; a
measurement's ``repeats`` is a non-empty list of numbers, in the order measured (a
measurement made once has one); ``derived`` holds figures computed from the
measurements. Records live in ``DIR/<bench>/<UTC date>-<short hash>.json``
(:func:`write_record`); :func:`read_record` checks one against this schema and raises
:class:`~dolb.errors.ConfigError` naming the file and the first thing wrong.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import shlex
import statistics
import sys
from datetime import UTC, datetime
from pathlib import Path

import psutil

from dolb.errors import ConfigError
from dolb.execution.environment import (
    arithmetic,
    cpu_model,
    frequency_governor,
    git_commit,
    load_average,
    package_versions,
)

SCHEMA = 1
RECORDS = Path("benchmarks") / "records"
"""Where records go, relative to the repository."""


def machine() -> dict:
    """The machine a bench runs on: CPU model, cores, memory, platform, frequency
    governor, load average, and the arithmetic record the run store keeps."""
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
            "platform": platform.platform(), "governor": frequency_governor(), "load_average": load_average(),
            "arithmetic": arithmetic()}


def versions() -> dict:
    """Python's version, the git commit of the code (None outside a checkout), and the
    versions of dolb and the packages it runs on."""
    return {"python": platform.python_version(), "git_commit": git_commit(), **package_versions()}


def measurement(labels: dict, unit: str, repeats: list[float]) -> dict:
    """One measurement of a record: what (``labels``, made strings), in which ``unit``,
    every repeat."""
    return {"labels": {str(k): str(v) for k, v in labels.items()}, "unit": unit,
            "repeats": [float(r) for r in repeats]}


def derived(labels: dict, unit: str, value: float) -> dict:
    """One derived figure of a record (a ratio, say)."""
    return {"labels": {str(k): str(v) for k, v in labels.items()}, "unit": unit, "value": float(value)}


def command_line(argv: list[str] | None = None) -> str:
    """This process's command line as typed: ``dolb ...`` for dolb's own command (run as
    ``dolb`` or ``python3 -m dolb``), else ``python3 SCRIPT ...`` with the script's path
    relative to the working folder.

    Examples
    --------
    >>> command_line(["/x/dolb/__main__.py", "bench", "--quick"])
    'dolb bench --quick'
    """
    first, *rest = argv if argv is not None else sys.argv
    if Path(first).name in ("__main__.py", "dolb"):
        return shlex.join(["dolb", *rest])
    return shlex.join(["python3", os.path.relpath(first), *rest])


def new_record(bench: str, measurements: list[dict], derived_figures: list[dict] = (),
               command: str | None = None) -> dict:
    """A record of a run that ends now, on this machine; ``command`` defaults to this
    process's command line."""
    command = command if command is not None else command_line()
    record = {"schema": SCHEMA, "bench": bench, "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "command": command, "machine": machine(), "versions": versions(),
              "measurements": list(measurements), "derived": list(derived_figures)}
    check(record, "the new record")
    return record


def write_record(folder: str | Path, record: dict) -> Path:
    """Write ``record`` as ``folder/<bench>/<date>-<hash>.json``; returns the path."""
    text = json.dumps(record, indent=1, allow_nan=False) + "\n"
    stamp = record["date"].replace("-", "").replace(":", "")
    path = Path(folder) / record["bench"] / f"{stamp}-{hashlib.sha256(text.encode()).hexdigest()[:8]}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def record_folder(folder: str | Path | None) -> Path | None:
    """A bench's or a script's ``--record`` folder, checked before anything is
    measured, computed or written: ConfigError when it, or the nearest of its parents
    that exists, is not a writable folder (None stays None)."""
    if folder is None:
        return None
    folder = Path(folder)
    nearest = next(place for place in (folder, *folder.absolute().parents) if place.exists() or place.is_symlink())
    if not nearest.is_dir():
        fail(f"--record {folder}", f"{nearest} is not a folder" if nearest != folder else "not a folder")
    if not os.access(nearest, os.W_OK | os.X_OK):
        fail(f"--record {folder}", f"{nearest} is not writable")
    return folder


def fail(where: str, problem: str) -> None:
    """Raise the ConfigError of a damaged record: ``where``, then the problem."""
    raise ConfigError(f"{where}: {problem}")


def finite_number(value) -> bool:
    """Whether ``value`` is an int or a finite float (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check_figure(figure, where: str, name: str, i: int, values_key: str) -> None:
    if not isinstance(figure, dict):
        fail(where, f"{name}[{i}] is not an object")
    labels = figure.get("labels")
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        fail(where, f"{name}[{i}].labels is not an object of strings")
    if not isinstance(figure.get("unit"), str):
        fail(where, f"{name}[{i}].unit is not a string")
    values = figure.get(values_key)
    if values_key == "repeats":
        if not isinstance(values, list) or not values or not all(finite_number(v) for v in values):
            fail(where, f"{name}[{i}].repeats is not a non-empty list of numbers")
    elif not finite_number(values):
        fail(where, f"{name}[{i}].value is not a number")


def check_fields(record, where: str, schema: int, strings: tuple[str, ...], objects: tuple[str, ...]) -> None:
    """What every kind of record checks first: a JSON object of version ``schema``, with
    a non-empty string at each key of ``strings``, an object at each of ``objects`` and
    a string or null for each of its ``versions``; ConfigError naming ``where`` and the
    first problem."""
    if not isinstance(record, dict):
        fail(where, "not a JSON object")
    if record.get("schema") != schema:
        fail(where, f"schema is {record.get('schema')!r}, expected {schema}")
    for key in strings:
        if not isinstance(record.get(key), str) or not record[key]:
            fail(where, f"{key} is missing or not a string")
    for key in objects:
        if not isinstance(record.get(key), dict):
            fail(where, f"{key} is missing or not an object")
    for name, version in record.get("versions", {}).items():
        if not isinstance(version, (str, type(None))):
            fail(where, f"versions.{name} is {version!r}, not a string or null")


def check(record, where: str) -> dict:
    """``record`` if it follows the module's schema, else ConfigError naming ``where``
    and the first problem."""
    check_fields(record, where, SCHEMA, strings=("bench", "date", "command"), objects=("machine", "versions"))
    try:
        datetime.strptime(record["date"], "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        fail(where, f"date {record['date']!r} is not YYYY-MM-DDTHH:MM:SSZ")
    if not isinstance(record["machine"].get("arithmetic"), (dict, type(None))):
        fail(where, "machine.arithmetic is not an object")
    for key, values_key in (("measurements", "repeats"), ("derived", "value")):
        if not isinstance(record.get(key), list):
            fail(where, f"{key} is missing or not a list")
        for i, figure in enumerate(record[key]):
            _check_figure(figure, where, key, i, values_key)
    return record


def read_record(path: str | Path) -> dict:
    """The record in ``path``, checked (ConfigError naming the file when it is not one)."""
    return check(load_json(path, "record"), str(path))


def load_json(path: str | Path, kind: str):
    """The JSON in ``path`` (ConfigError naming the file when it cannot be read as JSON)."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ConfigError(f"{path}: not a readable JSON {kind} ({error})") from None


def read_records(folder: str | Path) -> dict[str, list[dict]]:
    """Every record under ``folder``, by bench, oldest first."""
    found: dict[str, list[dict]] = {}
    for path in sorted(Path(folder).glob("*/*.json")):
        record = read_record(path)
        found.setdefault(record["bench"], []).append(record)
    return {bench: sorted(records, key=lambda r: r["date"]) for bench, records in sorted(found.items())}


def median(figure: dict) -> float:
    """The median of a measurement's repeats."""
    return statistics.median(figure["repeats"])
