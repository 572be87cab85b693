"""Canonical JSON and the hashes built on it: the one place identities are computed.

Cell ids, dataset fingerprints, cache folder names and seeds are digests of a value's
canonical JSON (keys sorted). Two layouts exist because identities already stored depend
on them: ``compact`` (no spaces, cell specs and seeds) and the default ``json.dumps``
spacing (dataset descriptions and cache keys).

Examples
--------
>>> canonical_json({"b": 1, "a": [2, 3]})
'{"a":[2,3],"b":1}'
>>> canonical_json({"b": 1, "a": [2, 3]}, compact=False)
'{"a": [2, 3], "b": 1}'
>>> digest({"a": 1}) == digest({"a": 1.0})
False
>>> len(digest({"a": 1}, length=16))
16
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any, *, compact: bool = True) -> str:
    """``value`` (JSON-ready) as JSON text with its keys sorted."""
    separators = (",", ":") if compact else None
    return json.dumps(value, sort_keys=True, separators=separators)


def digest(value: Any, *, compact: bool = True, length: int | None = None) -> str:
    """Hex SHA-256 of :func:`canonical_json` of ``value``, cut to ``length`` digits."""
    text = canonical_json(value, compact=compact)
    return hashlib.sha256(text.encode()).hexdigest()[:length]
