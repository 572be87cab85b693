"""The format version of a result store: ``DIR/format.json``, ``{"result_store_format": 1}``.

The store writes it before its first file (a part, the schema file, a run record), the
way it writes its other small files (:meth:`dolb.results.store.ResultStore.write_text`:
a temporary file renamed in a folder, one whole object behind a URL), and checks it
before it reads or writes anything else: a store of another format, a marker that is not
one, or a folder holding result parts but no marker is refused in one line naming the
folder. A folder with neither marker nor parts is a store not written yet (see
docs/design/store-format.md).

Examples
--------
>>> parse_marker("runs/x", '{"result_store_format": 1}')
1
>>> parse_marker("runs/x", '{"result_store_format": 3}')
Traceback (most recent call last):
...
dolb.errors.DataError: runs/x: result store format 3, this dolb reads format 1 (upgrade dolb)
"""

from __future__ import annotations

import json

from dolb.errors import DataError

FORMAT_FILE = "format.json"
"""The marker's name inside a result folder."""
FORMAT_KEY = "result_store_format"
"""The marker's one key."""
FORMAT = 1
"""The format this dolb writes and reads."""


def marker_text() -> str:
    """The marker of a store of :data:`FORMAT`."""
    return json.dumps({FORMAT_KEY: FORMAT}) + "\n"


def parse_marker(folder: str, text: str) -> int:
    """The format the marker ``text`` of ``folder`` names, when it is :data:`FORMAT`;
    DataError naming the folder when the marker is malformed or names another format."""
    try:
        version = json.loads(text)[FORMAT_KEY]
    except (ValueError, KeyError, TypeError, IndexError):
        version = None
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise DataError(f"{folder}/{FORMAT_FILE}: not a result store format marker "
                        f"(expected {marker_text().strip()})")
    if version > FORMAT:
        raise DataError(f"{folder}: result store format {version}, this dolb reads format {FORMAT} (upgrade dolb)")
    if version != FORMAT:
        raise DataError(f"{folder}: result store format {version}, this dolb reads format {FORMAT} only")
    return version


def unmarked(folder: str) -> DataError:
    """The error of a folder holding result parts but no marker."""
    return DataError(f"{folder}: result parts but no {FORMAT_FILE} (not a result store this dolb wrote)")
