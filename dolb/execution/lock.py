"""One ``dolb run`` at a time in a result folder, and the clean-up of what a killed one
left.

A run holds an exclusive lock on ``DIR/.lock`` (``flock`` through :mod:`filelock`, which
local and NFSv4 file systems honour and the kernel releases when the process dies, even
by SIGKILL) from before its first write to its end, and says who it is in
``DIR/.lock.json``. A second run on the folder is refused with one line naming the
holder. Once the lock is held no other run is writing, so hidden temporary files (a
part, a record or a saved state cut short by a kill) are stale and removed. Result
folders behind fsspec URLs are not locked: their parts have unique names and are
committed by manifests, so two runs there only duplicate work. There a run ends by
removing the parts no manifest commits whose every cell a committed part holds
(:func:`remove_uncommitted_parts`): those a killed run wrote, computed again since, which
plain readers of ``DIR/results`` would otherwise see twice.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from filelock import FileLock, Timeout

from dolb.errors import ConfigError
from dolb.results.store import ResultStore

logger = logging.getLogger(__name__)

TEMPORARY_PATTERNS = ("results/.*.tmp", "manifests/.*.tmp", "runs/.*.tmp", ".*.tmp", "state/*.tmp")
"""Where the writers of a result folder keep their temporary files (relative to it)."""


class FolderLock:
    """Context manager holding the result folder of ``store`` for the run ``run_id``.

    Raises
    ------
    ConfigError
        Another run holds the folder (the message names it).
    """

    def __init__(self, store: ResultStore, run_id: str) -> None:
        self.store = store
        self.run_id = run_id
        self.lock: FileLock | None = None

    def __enter__(self) -> FolderLock:
        if not self.store.local:
            return self
        folder = Path(self.store.path)
        folder.mkdir(parents=True, exist_ok=True)
        self.lock = FileLock(folder / ".lock", timeout=0)
        try:
            self.lock.acquire()
        except Timeout:
            raise _in_use(folder) from None
        self.store.write_text(".lock.json", json.dumps({  # whole or not at all: read by the run refused
            "run_id": self.run_id, "host": socket.gethostname(), "pid": os.getpid(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }))
        remove_stale_temporaries(folder)
        return self

    def __exit__(self, *exc) -> None:
        if self.lock is not None:
            Path(self.store.path, ".lock.json").unlink(missing_ok=True)
            self.lock.release()


def refuse_if_held(store: ResultStore) -> None:
    """ConfigError naming the holder when another run holds the folder of ``store``,
    found without writing anything: a run checks this as it plans, before it waits for
    its cluster (the lock itself is taken later, before the first write)."""
    folder = Path(store.path)
    if not store.local or not (folder / ".lock").is_file():
        return
    lock = FileLock(folder / ".lock", timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise _in_use(folder) from None
    lock.release()


def live_holder(store: ResultStore, run_id: str) -> dict | None:
    """Who runs ``run_id`` in the folder of ``store`` now, read-only (no lock is taken:
    the run is not disturbed): the lock's holder file (``run_id``, ``host``, ``pid``,
    ``started``) when it names that run and, on this host, its process is alive
    (``checked`` True); on another host its process cannot be asked (``checked``
    False). None when the run holds no lock: it ended, or was killed (its holder file
    then names a process gone), or its folder is behind a URL (never locked)."""
    if not store.local:
        return None
    try:
        holder = json.loads((Path(store.path) / ".lock.json").read_text())
        if holder["run_id"] != run_id:
            return None
        pid, host = int(holder["pid"]), str(holder["host"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if host != socket.gethostname():
        return holder | {"checked": False}
    try:
        os.kill(pid, 0)  # signal 0: whether the process exists, nothing sent
    except ProcessLookupError:
        return None
    except PermissionError:  # another user's process: alive
        pass
    return holder | {"checked": True}


def _in_use(folder: Path) -> ConfigError:
    return ConfigError(f"{folder}: in use by {_holder(folder)}; wait for it to end, or use another --out")


def _holder(folder: Path) -> str:
    """Who holds the folder, as the lock's holder file says."""
    try:
        holder = json.loads((folder / ".lock.json").read_text())
        return f"dolb run {holder['run_id']} (pid {holder['pid']} on {holder['host']}, since {holder['started']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another dolb run"


def remove_stale_temporaries(folder: Path) -> list[Path]:
    """Remove the temporary files a killed run left in ``folder``; return them."""
    stale = [path for pattern in TEMPORARY_PATTERNS for path in folder.glob(pattern) if path.is_file()]
    for path in stale:
        path.unlink(missing_ok=True)
    return stale


def remove_uncommitted_parts(store: ResultStore) -> list[str]:
    """Behind a URL, remove the parts no manifest commits whose every cell is held by a
    part that is read (committed, and not replaced by a compaction); return them.

    dolb's readers skip uncommitted parts there, so a rerun computes their cells again
    and plain readers would see those cells twice. A part another run is writing at the
    same time is safe: it is removed only once this run has committed each of its cells,
    and that run's manifest naming it then names a part gone whose cells are stored
    elsewhere, which every reader accepts. A part that cannot be read is left alone.
    """
    if store.local:  # a killed run's parts there are whole, read, and never computed again
        return []
    manifests = store.manifests()
    held = {cell for part in store.parts() for cell in manifests.committed.get(part.rsplit("/", 1)[-1]) or ()}
    stale = []
    for name in sorted(store.present() - set(manifests.committed)):
        path = f"{store.results}/{name}"
        try:
            cells = pq.read_table(path, columns=["cell_id"], filesystem=store.fs).column("cell_id")
        except (OSError, pa.ArrowException):
            continue
        if set(cells.to_pylist()) <= held:
            stale.append(path)
    store.remove(stale)
    if stale:
        logger.info("%d result parts no run committed removed, their cells stored in others", len(stale))
    return stale
