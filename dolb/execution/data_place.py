"""Where a run on a cluster keeps its datasets: the workers are asked whether they see
the client's files, and when they do not, the data goes where they are.

A run on the embedded cluster needs none of this (its workers are processes of the
client's host). On a scheduler or a cluster file, :func:`place_data` asks every worker
whether it sees the files the pipeline's datasets are made from or read at: the data
cache when it is a local folder, the source files of imports, the local dataset stores.
When every worker sees them, nothing changes. Otherwise:

- a local data cache the workers do not see is replaced by ``OUT/datasets`` when the
  result folder is an object store (a data cache of its own, content-addressed as any),
  and refused in one line when the cache was asked for or no object store is at hand;
- imports run on the client, where their source files are, into that cache;
- a local dataset store the workers do not see is refused in one line.

Every refusal names the file, the workers that do not see it and what to give.
"""

from __future__ import annotations

import os
import socket
import uuid
from dataclasses import dataclass
from pathlib import Path

from dolb.data.store.format import is_url
from dolb.errors import ConfigError
from dolb.execution.datasets import DATA_CACHE_VARIABLE, used_datasets
from dolb.execution.lost_workers import run_on_workers
from dolb.experiment.pipeline import DatasetSpec, Pipeline
from dolb.experiment.schema import PATH_PARAMS

STAGED_FOLDER = "datasets"
"""The data cache a run makes in its object-store result folder when its workers do not
see the client's files."""


@dataclass(frozen=True)
class DataPlace:
    """Where a run's datasets are built and kept.

    Attributes
    ----------
    cache : str or Path
        The data cache the run uses (the one asked for, or the one staged in the result
        folder's object store).
    imports_here : bool
        Whether imports run in the client's process, where their source files are,
        rather than on the workers.
    """

    cache: str | Path
    imports_here: bool = False


def place_data(client_of, pipeline: Pipeline, cache: str | Path, out: str | Path,
               cache_asked: bool) -> DataPlace:
    """Where the datasets of ``pipeline`` go for the workers of ``client_of()`` (called
    only when a local file is in question) to reach them.

    Parameters
    ----------
    client_of : callable
        Returns the run's Dask client.
    cache : str or Path
        The data cache :func:`~dolb.execution.datasets.data_cache` found.
    out : str or Path
        The result folder.
    cache_asked : bool
        Whether the cache was asked for (``--data-cache`` or ``$DOLB_DATA_CACHE``): such
        a cache is refused, never replaced, when the workers do not see it.

    Raises
    ------
    ConfigError
        A file the workers need and do not see, with no object store to stage it in.
    """
    specs = used_datasets(pipeline)
    files = local_files(specs, cache)
    if not files:
        return DataPlace(cache)
    unseen = unseen_by_workers(client_of(), files)
    stores = [path for path in unseen if files[path] == "store"]
    if stores:
        raise ConfigError(f"{stores[0]}: no dataset store there {unseen[stores[0]]}: the workers do not see the "
                          "client's files; write it into an object store every host reaches "
                          "(dolb.data.write_dataset(URL, X, y)), or give the same files on every host")
    imports_here = any(files[path] == "source" for path in unseen)
    if str(cache) not in unseen:
        return DataPlace(cache, imports_here)
    if cache_asked:
        raise ConfigError(f"data cache {cache}: not seen {unseen[str(cache)]} (a disk of its own): give "
                          f"--data-cache URL (or ${DATA_CACHE_VARIABLE}), an object store every host reaches")
    if not is_url(out):
        raise ConfigError(f"data cache {cache}: not seen {unseen[str(cache)]} (a disk of its own), and the run has "
                          "no object store to keep its datasets in: give --data-cache URL or --out URL, an object "
                          "store every host reaches")
    return DataPlace(f"{str(out).rstrip('/')}/{STAGED_FOLDER}", imports_here)


def local_files(specs: list[DatasetSpec], cache: str | Path) -> dict[str, str]:
    """The local files the workers need, each with what it is: ``"cache"`` (a local data
    cache, when a dataset is generated or imported), ``"source"`` (an import's source
    file) or ``"store"`` (a dataset store named by a local path)."""
    files = {}
    for spec in specs:
        if spec.generator is not None or spec.importer is not None:
            if not is_url(cache):
                files[str(cache)] = "cache"
            if spec.importer is not None:
                files.update({str(value): "source" for key, value in spec.params if key in PATH_PARAMS
                              and not is_url(value)})
        for store in (spec.train, spec.test):
            if store is not None and not is_url(store):
                files[str(store)] = "store"
    return files


def unseen_by_workers(client, files: dict[str, str]) -> dict[str, str]:
    """The files of ``files`` some worker does not see as the client does, each with
    where (``"on host H (worker tcp://…)"``, joined by *and*). A folder is shown to
    the workers by a probe file the client writes into it (then removes)."""
    probes = {}
    try:
        for path, kind in files.items():
            probes[path] = _probe(Path(path)) if kind == "cache" else Path(path)
        marks = {path: _mark(probe) for path, probe in probes.items()}
        answers = run_on_workers(client, _marks_here, {path: str(probe) for path, probe in probes.items()})
    finally:
        for path, probe in probes.items():
            if files[path] == "cache" and probe.exists():
                probe.unlink()
    unseen = {}
    for path, mark in marks.items():
        blind = sorted(f"host {host} (worker {address})" for address, (host, seen) in answers.items()
                       if seen[path] != mark)
        if blind:
            unseen[path] = "on " + " and ".join(blind)
    return unseen


def _probe(folder: Path) -> Path:
    """A new probe file in ``folder`` (made if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    probe = folder / f".probe-{uuid.uuid4().hex}"
    probe.write_text(probe.name)
    return probe


def _mark(path: Path) -> tuple[int, int] | None:
    """What tells a file or folder apart on another host: its size and modification
    time, or None where it does not exist."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_size if path.is_file() else 0, int(found.st_mtime))


def _marks_here(paths: dict[str, str]) -> tuple[str, dict[str, tuple[int, int] | None]]:
    """This worker's host name and its :func:`_mark` of each path (a Dask worker's task)."""
    return socket.gethostname(), {name: _mark(Path(path)) for name, path in paths.items()}
