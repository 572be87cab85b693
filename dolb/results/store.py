"""The result store: one JSON file per cell under ``DIR/cells/``, written atomically.

A cell's file appears complete or not at all (written to a temporary file in the same
folder, then renamed), so an interrupted sweep never leaves a half-written result and
two sweeps writing the same cell cannot corrupt it. A failed cell is kept as
``<id>.failed.json`` until a later success replaces it.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator


def write_json_atomic(path: Path, payload: Any) -> None:
    """Write ``payload`` as JSON to ``path`` atomically (temporary file, fsync, rename)."""
    write_text_atomic(path, json.dumps(payload, sort_keys=True, separators=(",", ":")))


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically: readers see the old file or the new one,
    never a part (temporary file in the same folder, fsync, rename)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class ResultStore:
    """Cell results under ``root/cells``.

    Examples
    --------
    >>> import tempfile
    >>> store = ResultStore(tempfile.mkdtemp())
    >>> store.write({"id": "abc", "status": "ok", "metrics": {}})
    >>> store.has("abc"), store.read("abc")["status"]
    (True, 'ok')
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.cells = self.root / "cells"
        self.cells.mkdir(parents=True, exist_ok=True)

    def _ok_path(self, cell_id: str) -> Path:
        return self.cells / f"{cell_id}.json"

    def _failed_path(self, cell_id: str) -> Path:
        return self.cells / f"{cell_id}.failed.json"

    def has(self, cell_id: str) -> bool:
        """Whether a successful result of the cell is stored."""
        return self._ok_path(cell_id).exists()

    def has_failed(self, cell_id: str) -> bool:
        """Whether the cell's last attempt failed (and no success is stored)."""
        return self._failed_path(cell_id).exists() and not self.has(cell_id)

    def write(self, record: dict[str, Any]) -> None:
        """Store a result record (``status`` ``"ok"`` or ``"failed"``)."""
        if record["status"] == "ok":
            write_json_atomic(self._ok_path(record["id"]), record)
            self._failed_path(record["id"]).unlink(missing_ok=True)
        else:
            write_json_atomic(self._failed_path(record["id"]), record)

    def read(self, cell_id: str) -> dict[str, Any]:
        """The stored successful result of a cell."""
        return json.loads(self._ok_path(cell_id).read_text(encoding="utf-8"))

    def read_failed(self, cell_id: str) -> dict[str, Any]:
        """The stored failure record of a cell."""
        return json.loads(self._failed_path(cell_id).read_text(encoding="utf-8"))

    def ids(self) -> Iterator[str]:
        """Ids of every successfully stored cell."""
        for path in sorted(self.cells.glob("*.json")):
            if not path.name.endswith(".failed.json"):
                yield path.name[: -len(".json")]
