"""Datasets made once and kept: the on-disk cache shared by generators and importers.

A run (a generator with its parameters and seed, an importer with its parameters and
source files) is described by a JSON-ready ``identity``. Its parts are written as dolb
datasets under ``directory/<prefix>-<hash>/<part>``, where ``<hash>`` is 16 hex digits
of :func:`dolb.identity.digest` (``compact=False``) of ``{"manifest": MANIFEST_VERSION,
"run": identity}``, and later calls with the same identity open them without writing
anything. The manifest version is in the key so that a cache entry written in another
store layout (before chunk manifests, say) is never opened: its run is simply built
again beside it (old entries can be deleted by hand).

The parts are first written into a hidden temporary sibling, which is renamed into
place once complete, so the run directory is either absent or complete. When two
processes build the same run at once, one rename wins and the other copy is dropped.
Behind an fsspec URL (``s3://bucket/cache``), where nothing can be renamed, a run is
built once under a lease and published by a marker written last
(:mod:`dolb.data.sources.shared_cache`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dolb.data.sources.shared_cache import shared_parts
from dolb.data.store.dataset import Dataset, open_dataset
from dolb.data.store.format import is_url
from dolb.data.store.manifest import MANIFEST_VERSION
from dolb.data.store.writing import write_dataset
from dolb.errors import DataError
from dolb.identity import digest

MadeParts = dict[str, tuple[Any, Any, dict]]
"""``{part: (X, y, provenance)}``."""


def stored_parts(
    directory: str | os.PathLike, prefix: str, identity: dict, make: Callable[[], MadeParts] | None
) -> dict[str, Dataset] | None:
    """The datasets of the run ``identity``: written from ``make()`` on the first call,
    opened from ``directory`` on later ones.

    Parameters
    ----------
    directory : str or os.PathLike
        Where run directories live (created if needed): a folder, or an fsspec URL.
    prefix : str
        Start of the run directory's name (the generator or importer name).
    identity : dict
        JSON-ready description of everything that determines the parts.
    make : callable or None
        ``make() -> {part: (X, y, provenance)}``; called only when the run is absent.
        None: only look, build nothing.

    Returns
    -------
    dict of str to Dataset, or None
        Every part, by name; None when the run is absent and ``make`` is None.

    Examples
    --------
    >>> sets = stored_parts(tmp, "toy", {"n": 3}, lambda: {"train": (np.eye(3), np.ones(3), {})})
    >>> sets["train"].n_rows
    3
    """
    key = digest({"manifest": MANIFEST_VERSION, "run": identity}, compact=False, length=16)
    if is_url(directory):
        return shared_parts(f"{str(directory).rstrip('/')}/{prefix}-{key}", make)
    final = Path(directory).absolute() / f"{prefix}-{key}"
    if not final.is_dir():
        if make is None:
            return None
        _build(make, final)
    return _open_parts(final)


def _build(make: Callable[[], MadeParts], final: Path) -> None:
    """Write every part of ``make()`` next to ``final``, then rename the lot into place
    (a ``make()`` that fails writes nothing, not even the folder)."""
    made = make()
    final.parent.mkdir(parents=True, exist_ok=True)
    temporary = final.with_name(f".{final.name}.tmp-{uuid.uuid4().hex[:12]}")
    try:
        for part, (X, y, provenance) in made.items():
            write_dataset(temporary / part, X, y, provenance=provenance)
        try:
            os.rename(temporary, final)
        except OSError:
            if not final.is_dir():  # not a lost race: a real failure
                raise
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def _open_parts(final: Path) -> dict[str, Dataset]:
    """Every dataset in a run directory, by part name."""
    entries = [entry for entry in sorted(final.iterdir()) if not entry.name.startswith(".")]
    parts = {entry.name: open_dataset(entry) for entry in entries}
    if not parts:
        raise DataError(f"data directory {final} holds no dataset")
    return parts


def file_identity(path: str | os.PathLike) -> dict[str, Any]:
    """Name, size and sha256 of a file; DataError if it cannot be read.

    Examples
    --------
    >>> _ = (tmp / "hello").write_text("hello")
    >>> file_identity(tmp / "hello")["sha256"][:12]
    '2cf24dba5fb0'
    """
    path = Path(path)
    try:
        with open(path, "rb") as stream:
            digest = hashlib.file_digest(stream, "sha256").hexdigest()
        size = path.stat().st_size
    except OSError as exc:
        raise DataError(f"source file {path}: cannot read it ({exc.strerror or exc})") from exc
    return {"file": path.name, "size": size, "sha256": digest}
