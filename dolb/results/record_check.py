"""The check of a run record (``DIR/runs/<run id>.json``) as it is read: every key a
report, ``dolb status``, ``dolb compare`` or ``dolb reproduce`` reads of it has the type
they use, so that a damaged or foreign record is refused in one line naming the file
and the key, never met as a ``KeyError`` deep inside a report.

Keys a reader does not use are not checked, and every key but ``run_id`` and
``pipeline`` may be absent (a run that did not finish has no ``workers`` or
``counts`` yet): the readers then say "?" or "not recorded". Within an object that is
present, the keys its reader needs are required (a ``tuning`` without ``computed``, a
worker without ``arithmetic``, an ``arithmetic`` without ``blas``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dolb.errors import DataError

MOST_SPLITS = 10**7
"""The most splits a record's cell group may count: more is damage, and ``dolb status``
would list that many cell ids."""


@dataclass(frozen=True)
class Kind:
    """What a value must be: ``what`` (said when it is not) and its ``test``."""

    what: str
    test: Callable[[Any], bool]


@dataclass(frozen=True)
class Fields:
    """An object: its ``required`` and ``optional`` keys' kinds, and the kind of every
    value (``each``) for an object keyed by names (workers, counts)."""

    required: dict[str, Any] = field(default_factory=dict)
    optional: dict[str, Any] = field(default_factory=dict)
    each: Any = None


@dataclass(frozen=True)
class Items:
    """A list, each item of kind ``each``."""

    each: Any


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


TEXT = Kind("a string", lambda v: isinstance(v, str))
MAYBE_TEXT = Kind("a string or null", lambda v: v is None or isinstance(v, str))
WHOLE = Kind("a whole number ≥ 0", _whole)
MAYBE_WHOLE = Kind("a whole number ≥ 0 or null", lambda v: v is None or _whole(v))
NUMBER = Kind("a finite number", _number)
OBJECT = Kind("an object", lambda v: isinstance(v, dict))
GROUP = Kind(f"a [cell group key, splits ≤ {MOST_SPLITS:,}] pair",
             lambda v: isinstance(v, list) and len(v) == 2 and isinstance(v[0], str) and _whole(v[1])
             and v[1] <= MOST_SPLITS)

ARITHMETIC = Fields(required={"cpu": MAYBE_TEXT, "numba_cpu": MAYBE_TEXT,
                              "blas": Items(Fields(required={"library": MAYBE_TEXT, "version": MAYBE_TEXT,
                                                             "kernel": MAYBE_TEXT, "threads": MAYBE_WHOLE})),
                              "numpy_simd": MAYBE_TEXT})
RECORD = Fields(
    required={"run_id": TEXT, "pipeline": TEXT},
    optional={
        "pipeline_path": TEXT, "pipeline_text": TEXT, "started": TEXT, "ended": MAYBE_TEXT, "seconds": NUMBER,
        "gather": MAYBE_TEXT, "options": OBJECT, "groups": Items(GROUP), "timings": Fields(each=NUMBER),
        "counts": Fields(each=WHOLE),
        "state_saves": Fields(optional={"state_saves": WHOLE, "state_bytes": NUMBER, "state_largest": NUMBER,
                                        "state_seconds": NUMBER}),
        "tuning": Fields(required={"cells": WHOLE, "computed": WHOLE, "failed": WHOLE, "examples": WHOLE}),
        "client": Fields(optional={"git_commit": MAYBE_TEXT, "packages": OBJECT, "plugins": OBJECT}),
        "workers": Fields(each=Fields(required={"arithmetic": ARITHMETIC})),
    },
)
"""The keys of a run record that its readers use, and their kinds."""


def check_record(record: Any, where: str) -> dict[str, Any]:
    """``record`` if its keys are of the kinds :data:`RECORD` says, else DataError
    ``WHERE: not a run record (KEY ...)`` naming the first key at fault.

    Examples
    --------
    >>> check_record({"run_id": "r", "pipeline": "p", "tuning": {"cells": 3}}, "runs/r.json")
    Traceback (most recent call last):
    ...
    dolb.errors.DataError: runs/r.json: not a run record (tuning.computed is missing)
    >>> check_record({"run_id": "r", "pipeline": "p", "counts": {"computed": "2"}}, "runs/r.json")
    Traceback (most recent call last):
    ...
    dolb.errors.DataError: runs/r.json: not a run record (counts.computed is '2', not a whole number ≥ 0)
    """
    problem = _problem(record, RECORD, "")
    if problem:
        raise DataError(f"{where}: not a run record ({problem})")
    return record


def _problem(value: Any, kind: Any, key: str) -> str | None:
    """What is wrong with ``value`` at ``key`` as ``kind`` (a :class:`Kind`,
    :class:`Fields` or :class:`Items`), None when nothing is."""
    name = key or "the record"
    if isinstance(kind, Kind):
        return None if kind.test(value) else f"{name} is {_shown(value)}, not {kind.what}"
    if isinstance(kind, Items):
        if not isinstance(value, list):
            return f"{name} is {_shown(value)}, not a list"
        return next(filter(None, (_problem(item, kind.each, f"{key}[{i}]") for i, item in enumerate(value))), None)
    if not isinstance(value, dict):
        return f"{name} is {_shown(value)}, not an object"
    prefix = f"{key}." if key else ""
    missing = [k for k in kind.required if k not in value]
    if missing:
        return f"{prefix}{missing[0]} is missing"
    kinds = {**kind.required, **{k: v for k, v in kind.optional.items() if k in value}}
    if kind.each is not None:
        kinds |= dict.fromkeys(value, kind.each)
    return next(filter(None, (_problem(value[k], sub, f"{prefix}{k}") for k, sub in kinds.items())), None)


def _shown(value: Any) -> str:
    """A value as a message shows it: short."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."
