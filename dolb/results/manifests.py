"""A result folder's manifests: the parts they commit, and the parts compactions replaced.

A run's manifest (``manifests/<run id>-<attempt>.json``) names parts and the cells each
holds: ``{"run_id": ..., "parts": {part: [cell ids]}}``. A compaction's
(``manifests/compaction-<attempt>.json``) also names the parts its own replace:
``{"run_id": ..., "parts": {...}, "replaces": [part, ...]}``. A compaction is *done* once
each of its parts is in the folder (or was itself replaced by a later done compaction),
or once one of the parts it replaces is gone (those are removed only after it is done):
from then on the parts it replaces are *retired*, read by no one and removed. Before
that its own parts are *pending*: read by no one, and not missing if gone (a kill
stopped it; the parts it replaces are all there). So a reader sees either the parts a
compaction replaces or the parts it wrote, never both.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass, field

from dolb.errors import DataError

COMPACTION_PREFIX = "compaction-"
"""How the name of a compaction's manifest begins (a run's begins with its run id, a date)."""


@dataclass
class Compaction:
    """One compaction's manifest: its path, the parts it wrote and those they replace."""

    path: str
    parts: list[str]
    replaces: list[str]


@dataclass
class Manifests:
    """Every manifest of a result folder, read."""

    committed: dict[str, list[str]] = field(default_factory=dict)
    """Every part a manifest commits, with the ids of the cells it holds."""
    compactions: list[Compaction] = field(default_factory=list)
    """The compactions' manifests, oldest first."""
    runs: dict[str, list[str]] = field(default_factory=dict)
    """The other manifests (path: the parts each commits)."""

    def add(self, path: str, parts: dict[str, list[str]], replaces: list[str] | None) -> None:
        """Add the manifest ``path`` (as :func:`parse` read it)."""
        self.committed.update(parts)
        if replaces is None:
            self.runs[path] = list(parts)
        else:
            self.compactions.append(Compaction(path, list(parts), replaces))

    def settle(self, present: set[str]) -> tuple[set[str], set[str]]:
        """The parts retired and the parts pending, given the parts ``present`` in the
        folder (see the module docstring)."""
        done: list[Compaction] = []
        retired: set[str] = set()
        waiting = list(self.compactions)
        while True:
            now_done = [c for c in waiting
                        if all(p in present or p in retired for p in c.parts)
                        or any(p not in present for p in c.replaces)]
            if not now_done:
                break
            done += now_done
            waiting = [c for c in waiting if c not in now_done]
            retired = {p for c in done for p in c.replaces}
        return retired, {p for c in waiting for p in c.parts} - retired

    def unfinished(self, present: set[str]) -> list[Compaction]:
        """The compactions not done (a kill stopped them before their parts were all in place)."""
        retired, _ = self.settle(present)
        return [c for c in self.compactions
                if not all(p in present or p in retired for p in c.parts) and all(p in present for p in c.replaces)]

    def obsolete(self, present: set[str]) -> list[str]:
        """The manifests that say nothing any more, in the order to remove them: those of
        runs whose every part is retired, then those of done compactions whose every part
        is retired, oldest first (a compaction's manifest goes after every manifest that
        commits a part it retired)."""
        retired, _ = self.settle(present)
        runs = [path for path, parts in self.runs.items() if parts and all(p in retired for p in parts)]
        unfinished = self.unfinished(present)
        compactions = [c.path for c in self.compactions
                       if c not in unfinished and all(p in retired for p in c.parts)]
        return runs + compactions


def parse(path: str, text: bytes | str) -> tuple[dict[str, list[str]], list[str] | None]:
    """The parts the manifest ``path`` holding ``text`` commits (each with its cells) and,
    a compaction's, the parts they replace (else None); DataError naming it when it is
    not a manifest."""
    try:
        content = json.loads(text)
        parts = content["parts"]
        if not (isinstance(parts, dict) and all(isinstance(cells, list) for cells in parts.values())):
            raise TypeError("parts is not an object of part names and their cells' ids")
        replaces = content.get("replaces")
        if replaces is not None and not (isinstance(replaces, list) and all(isinstance(p, str) for p in replaces)):
            raise TypeError("replaces is not a list of part names")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DataError(f"{path}: not a manifest of result parts ({exc})") from None
    return parts, replaces


@functools.lru_cache(maxsize=64)
def parse_file(path: str, size: int, modified: int) -> tuple[dict[str, list[str]], list[str] | None]:
    """:func:`parse` of a local file, kept for as long as its size and modification time
    (``size``, ``modified``) stay (a manifest is never rewritten: a compaction's, of a
    million cells, is read once a process)."""
    with open(path, "rb") as handle:
        return parse(path, handle.read())


def read_manifests(fs, folder: str, local: bool, compactions_only: bool = False) -> Manifests:
    """Every manifest in ``folder`` (a path of the file system ``fs``; ``local``: a folder
    of this machine, whose manifests are parsed once a process), or only the compactions'."""
    found = Manifests()
    for path in sorted(fs.glob(f"{folder}/{COMPACTION_PREFIX if compactions_only else ''}*.json")):
        if local:
            stat = os.stat(path)
            found.add(path, *parse_file(path, stat.st_size, stat.st_mtime_ns))
        else:  # named with its scheme in a message
            found.add(path, *parse(fs.unstrip_protocol(path), fs.cat_file(path)))
    return found
