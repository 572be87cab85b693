"""Locations: a file or folder named by a local path or by an fsspec URL, taken alike.

Every command that reads or writes a result folder, a report or an export takes either
(``runs/irma`` or ``s3://bucket/runs/irma``). These few functions are the one place
that tells them apart: they join names onto a location (a URL keeps its scheme), read a
small file, and give a local folder or file to write into that ends up at the location
whole (behind a URL it is uploaded once written: object stores have no rename).

Examples
--------
>>> joined("s3://bucket/runs/", "report", "index.html")
's3://bucket/runs/report/index.html'
>>> name_of("s3://bucket/runs/night-3/")
'night-3'
>>> same("s3://bucket/runs/", "s3://bucket/runs")
True
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

from dolb.data.store.format import is_url, url_filesystem
from dolb.errors import ConfigError
from dolb.options import writable_file

Location = str | os.PathLike
"""A local path or an fsspec URL."""


def joined(location: Location, *names: str) -> str:
    """``location`` with ``names`` appended, as a path or a URL (``/``-separated)."""
    if is_url(str(location)):
        return "/".join([str(location).rstrip("/"), *names])
    return str(Path(location, *names))


def name_of(location: Location) -> str:
    """The last name of ``location`` (a trailing ``/`` ignored)."""
    return str(location).rstrip("/").rsplit("/", 1)[-1] if is_url(str(location)) else Path(location).name


def same(one: Location, other: Location) -> bool:
    """Whether two locations name the same file or folder (paths resolved)."""
    def canonical(location: Location) -> str:
        return joined(location) if is_url(str(location)) else os.path.realpath(location)

    return canonical(one) == canonical(other)


def is_folder(location: Location) -> bool:
    """Whether ``location`` is an existing folder (behind a URL: a prefix holding files)."""
    fs, path = url_filesystem(str(location))
    return fs.isdir(path)


def is_file(location: Location) -> bool:
    """Whether ``location`` is an existing file."""
    fs, path = url_filesystem(str(location))
    return fs.isfile(path)


def writable(option: str, location: Location | None) -> None:
    """ConfigError, before anything runs, when ``location`` cannot become a file: a
    folder behind a URL (checked as far as can be without writing), or what
    :func:`dolb.options.writable_file` refuses of a local path."""
    if location is not None and is_url(str(location)):
        if is_folder(location):
            raise ConfigError(f"{option} {location}: is a folder, expected a file name")
        return
    writable_file(option, location)


def read_text(location: Location) -> str | None:
    """The text of the file ``location``, None when there is none; OSError when it cannot
    be read (a folder, no permission), UnicodeDecodeError (a ValueError) when it is not
    UTF-8."""
    fs, path = url_filesystem(str(location))
    try:
        return fs.cat_file(path).decode("utf-8")
    except FileNotFoundError:
        return None


@contextlib.contextmanager
def local_folder(location: Location) -> Iterator[Path]:
    """A local folder to write files into, that are then at ``location``: the folder
    itself (created), or behind a URL a temporary folder whose files are uploaded
    into it once the block ends without error."""
    if not is_url(str(location)):
        folder = Path(location)
        folder.mkdir(parents=True, exist_ok=True)
        yield folder
        return
    fs, path = url_filesystem(str(location))
    with tempfile.TemporaryDirectory() as local:
        yield Path(local)
        fs.makedirs(path, exist_ok=True)
        for written in sorted(Path(local).iterdir()):
            fs.put_file(str(written), f"{path.rstrip('/')}/{written.name}")


@contextlib.contextmanager
def local_file(location: Location) -> Iterator[Path]:
    """A local file name to write into, whose file is then at ``location``, whole or
    not at all: a hidden temporary file beside it renamed in place, or behind a URL a
    temporary file uploaded in one request (an object appears whole). Nothing is left
    when the block raises."""
    if is_url(str(location)):
        fs, path = url_filesystem(str(location))
        with tempfile.TemporaryDirectory() as local:
            yield Path(local, name_of(location))
            fs.put_file(str(Path(local, name_of(location))), path)
        return
    target = Path(location)
    partial = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        yield partial
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


__all__ = ["Location", "is_file", "is_folder", "is_url", "joined", "local_file", "local_folder", "name_of",
           "read_text", "same"]
