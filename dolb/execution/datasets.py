"""Turn a pipeline's dataset entry into opened datasets (its ``train`` and ``test`` parts),
generating or importing them into the data cache first when they are not stored yet."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from distributed import as_completed

from dolb.data import Dataset, import_dataset, materialize, open_dataset
from dolb.data.labels import check_binary
from dolb.data.store.format import is_url, url_filesystem
from dolb.data.store.object_stores import reaching
from dolb.errors import ConfigError, DolbError, StoreFault
from dolb.execution.payload import call, encode
from dolb.execution.where import located
from dolb.experiment.pipeline import DatasetSpec, Pipeline
from dolb.experiment.schema import PATH_PARAMS
from dolb.experiment.shipped import check_data
from dolb.seeding import seed_for, seed_int

DATA_CACHE_VARIABLE = "DOLB_DATA_CACHE"
"""Environment variable naming the data cache folder."""


def data_cache(folder: str | Path | None = None) -> str | Path:
    """The folder of generated and imported datasets: ``folder`` if given, else
    ``$DOLB_DATA_CACHE``, else ``$XDG_CACHE_HOME/dolb/data`` (``~/.cache/dolb/data``).
    It is content-addressed (a dataset's folder name is a hash of what made it), so
    runs and result folders share it; on a cluster, put it where workers can read: a
    shared folder, or an fsspec URL (``s3://bucket/cache``, returned as given) when the
    nodes share no file system."""
    if folder is None:
        folder = os.environ.get(DATA_CACHE_VARIABLE)
    if folder is None:
        folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dolb" / "data"
    if not str(folder).strip():
        raise ConfigError(f"the data cache's name is empty (see --data-cache and ${DATA_CACHE_VARIABLE})")
    if is_url(folder):
        url_filesystem(folder)  # an unknown protocol or a missing package: one line
        return folder.rstrip("/")
    folder = Path(folder).absolute()
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"data cache {folder}: not a folder (see --data-cache and ${DATA_CACHE_VARIABLE})")
    return folder


def cache_asked(folder: str | Path | None) -> bool:
    """Whether the data cache was asked for (``folder``, or ``$DOLB_DATA_CACHE``) rather
    than the default one."""
    return folder is not None or DATA_CACHE_VARIABLE in os.environ


def resolve_dataset(
    spec: DatasetSpec, cache: str | Path, root_seed: int, build: bool = True, binary: bool = False
) -> dict[str, Dataset] | None:
    """Open the stores of ``spec``, first generating or importing them under
    ``cache`` if it names a generator or an importer (written once, then reused;
    a generator's seed comes from the root seed and the dataset's name).

    Parameters
    ----------
    build : bool
        Generate or import what is not stored yet; with False, return None instead.
    binary : bool
        Whether a binary task uses it: an import whose labels are not -1/+1 is refused
        before anything is written (:func:`dolb.data.labels.check_binary`).

    Returns
    -------
    dict or None
        ``{"train": Dataset}`` plus ``"test"`` when the dataset has a test part.
    """
    if spec.generator is not None:
        seed = seed_int(seed_for(root_seed, "dataset", spec.name))
        return materialize(spec.generator, dict(spec.params), seed, cache, build)
    if spec.importer is not None:
        check = (lambda part, y: check_binary(y, f"dataset {spec.name!r} ({part} part)")) if binary else None
        return import_dataset(spec.importer, dict(spec.params), cache, build, check)
    parts = {"train": open_dataset(spec.train)}
    if spec.test is not None:
        parts["test"] = open_dataset(spec.test)
    return parts


def open_datasets(
    pipeline: Pipeline, cache: str | Path, builder=None, built: Callable[[str, dict[str, Dataset]], None] | None = None,
    imports_here: bool = False,
) -> dict[str, dict[str, Dataset]]:
    """Open every dataset the pipeline's experiments use. Those still to be generated or
    imported are built into ``cache``: by ``builder()`` (a Dask client, started only
    when something is missing) as one task each, in parallel, or in this process when
    ``builder`` is None. ``built(name, parts)`` is called as each build on the cluster
    ends and its dataset opens, while the others still build (the run warms that
    dataset's kernels then); a build's error is raised once all have ended, the first
    dataset's first. With ``imports_here``, imports are built in this process (where
    their source files are: :mod:`dolb.execution.data_place`). An object store's fault
    names the store of the dataset, or the data cache (:class:`~dolb.errors.StoreFault`).
    A file a shipped pipeline reads that is missing is a ConfigError first
    (:func:`~dolb.experiment.shipped.check_data`)."""
    binary = {name for e in pipeline.experiments.values() if e.task == "binary" for name in e.datasets}
    specs = used_datasets(pipeline)
    check_data(pipeline.path, {spec.name: {k: v for k, v in spec.params if k in PATH_PARAMS} for spec in specs})
    opened = {}
    for spec in specs:
        try:
            with reaching(_location(spec, cache)):
                build = builder is None or (imports_here and spec.importer is not None)
                opened[spec.name] = resolve_dataset(spec, cache, pipeline.seed, build, spec.name in binary)
        except ConfigError as exc:  # its parameters: say where they are
            raise ConfigError(f"{pipeline.path}: datasets.{spec.name}.params: {exc}") from None
    missing = {spec.name: spec for spec in specs if opened[spec.name] is None}
    if missing:
        client = builder()
        futures = {client.submit(call, encode((_build_dataset, (spec, str(cache), pipeline.seed, name in binary))),
                                 pure=False): name
                   for name, spec in missing.items()}
        errors = {}
        for future in as_completed(futures):
            name, paths = futures[future], future.result()
            if isinstance(paths, DolbError):
                errors[name] = paths
                continue
            with reaching(str(cache)):
                opened[name] = {part: open_dataset(path) for part, path in paths.items()}
            if built is not None and not errors:
                built(name, opened[name])
        for name in missing:
            if name in errors:
                raise errors[name]
    return opened


def used_datasets(pipeline: Pipeline) -> list[DatasetSpec]:
    """The datasets the pipeline's experiments use."""
    used = {name for experiment in pipeline.experiments.values() for name in experiment.datasets}
    return [spec for name, spec in pipeline.datasets.items() if name in used]


def _location(spec: DatasetSpec, cache: str | Path) -> str:
    """Where the parts of ``spec`` are: its stores, or the data cache."""
    if spec.generator is not None or spec.importer is not None:
        return str(cache)
    return " and ".join(str(path) for path in (spec.train, spec.test) if path is not None)


def _build_dataset(spec, cache: str, seed: int, binary: bool) -> dict[str, str] | DolbError:
    """Generate or import one dataset (a Dask task); return its parts' paths, or the
    error that stopped it (returned, not raised: Dask would print a raised one with its
    traceback on the worker's console)."""
    try:
        with reaching(cache):
            return {part: dataset.path for part, dataset in resolve_dataset(spec, cache, seed, binary=binary).items()}
    except StoreFault as exc:
        return located(exc)
    except DolbError as exc:
        return exc
