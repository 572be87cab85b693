"""The data cache behind an fsspec URL (``s3://bucket/cache``): each run built once,
by whoever takes its lease, and read by every node.

An object store has no rename, so a run ``<prefix>-<hash>`` (:mod:`dolb.data.sources.cache`)
is a folder of three kinds of objects instead of a folder renamed into place::

    <run>/lease.json    who builds it now: {"builder", "host", "pid", "beat"}
    <run>/<builder>/    a builder's copy of the parts (one dolb dataset each)
    <run>/built.json    the copy to read: {"builder", "parts": [...]}, written last

Both small objects are created only if absent (``pipe_file(mode="create")``), so of
builders racing, one takes the lease and one publishes; the others wait for
``built.json``. The lease holder rewrites its lease every :data:`BEAT` seconds; a lease
unchanged for :data:`LEASE` seconds (by the waiter's own clock) is stale and is broken
by a waiter, which then builds. A builder paused longer than :data:`LEASE` loses its
lease: two copies are made, one published, never a mix. A builder killed midway leaves
its copy, which no reader opens (delete it by hand, or the whole ``<run>`` folder when
no run builds it). How a create-if-absent write works on each store, and the limits of
leases: docs/design/data-store.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable

from dolb.data.store.dataset import Dataset, open_dataset
from dolb.data.store.format import url_filesystem
from dolb.data.store.writing import write_dataset
from dolb.errors import DataError

LEASE = 60.0
"""Seconds a lease may stay unchanged before a waiter breaks it."""
BEAT = 10.0
"""Seconds between two rewrites of a lease by its holder."""
POLL = 0.5
"""Seconds between two looks of a waiter."""
LEASE_FILE = "lease.json"
BUILT_FILE = "built.json"


def shared_parts(run: str, make: Callable | None) -> dict[str, Dataset] | None:
    """The datasets of the run folder ``run`` (a URL): built from ``make()`` (``{part:
    (X, y, provenance)}``) if no one has, opened once ``built.json`` names them; None
    when they are not built and ``make`` is None."""
    fs, root = url_filesystem(run)
    protocol = run.split("://", 1)[0]
    seen, since = None, time.monotonic()
    while True:
        built = _read(fs, f"{root}/{BUILT_FILE}")
        if built is not None:
            return _open(f"{protocol}://{root}", built)
        if make is None:
            return None
        builder = uuid.uuid4().hex[:16]
        lease = {"builder": builder, "host": socket.gethostname(), "pid": os.getpid(), "beat": 0}
        try:
            fs.pipe_file(f"{root}/{LEASE_FILE}", json.dumps(lease).encode(), mode="create")
        except FileExistsError:
            held = _read(fs, f"{root}/{LEASE_FILE}")
            if held != seen:
                seen, since = held, time.monotonic()
            elif held is not None and time.monotonic() - since > LEASE:  # its builder is gone
                fs.rm_file(f"{root}/{LEASE_FILE}")
            time.sleep(POLL)
            continue
        return _build(fs, f"{protocol}://{root}", lease, make)


def _build(fs, run: str, lease: dict, make: Callable) -> dict[str, Dataset]:
    """Build the parts under ``run/<builder>/`` while renewing ``lease``, publish them
    (unless another builder did first), give the lease back; open what is published."""
    root = run.split("://", 1)[1]
    builder = lease["builder"]
    stop = threading.Event()
    beating = threading.Thread(target=_renew, args=(fs, f"{root}/{LEASE_FILE}", lease, stop), daemon=True)
    beating.start()
    try:
        parts = make()
        for part, (X, y, provenance) in parts.items():
            write_dataset(f"{run}/{builder}/{part}", X, y, provenance=provenance)
        published = json.dumps({"builder": builder, "parts": sorted(parts)}).encode()
        with contextlib.suppress(FileExistsError):  # a builder that broke our lease published first
            fs.pipe_file(f"{root}/{BUILT_FILE}", published, mode="create")
    finally:
        stop.set()
        beating.join()
        if (_read(fs, f"{root}/{LEASE_FILE}") or {}).get("builder") == builder:  # not broken meanwhile
            fs.rm_file(f"{root}/{LEASE_FILE}")
    return _open(run, _read(fs, f"{root}/{BUILT_FILE}"))


def _renew(fs, path: str, lease: dict, stop: threading.Event) -> None:
    """Rewrite ``lease`` at ``path`` every :data:`BEAT` seconds until ``stop``."""
    while not stop.wait(BEAT):
        lease["beat"] += 1
        try:
            fs.pipe_file(path, json.dumps(lease).encode())
        except Exception:  # the store out of reach: the build itself will say so
            return


def _read(fs, path: str) -> dict | None:
    """The JSON object at ``path``, or None when it is absent (or torn)."""
    try:
        found = json.loads(fs.cat_file(path))
    except (FileNotFoundError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _open(run: str, built: dict | None) -> dict[str, Dataset]:
    """The parts ``built.json`` names."""
    if built is None or not built.get("parts"):
        raise DataError(f"data directory {run} holds no dataset ({BUILT_FILE} missing or names none)")
    return {part: open_dataset(f"{run}/{built['builder']}/{part}") for part in built["parts"]}
