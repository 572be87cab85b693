"""The Python entry point of a run: :func:`run`, what ``dolb run`` does, for scripts and
notebooks."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dolb.errors import ConfigError, DolbError
from dolb.experiment.shipped import pipeline_file
from dolb.options import RunOptions


def run(pipeline: str | Path | Mapping[str, Any], out: str | Path, **options: Any):
    """Run every cell of a pipeline not stored in ``out`` yet, write its reports, and
    return the run's :class:`~dolb.execution.sweep_summary.SweepSummary`.

    Parameters
    ----------
    pipeline : path, name or mapping
        A pipeline file, the name of a pipeline dolb ships (``"irma"``: see
        :mod:`dolb.experiment.shipped`), or the pipeline itself as a plain mapping with
        the layout of the file (``{"pipeline": {...}, "datasets": {...}, "experiments": {...}}``);
        relative paths in a mapping are relative to the current folder. A mapping is
        recorded in the result folder as TOML, like a file. In a mapping, a dataset may
        be arrays: ``{"X": X, "y": y}`` (X a NumPy array or a SciPy sparse matrix, y its
        targets; ``"X_test"`` and ``"y_test"`` for a test part), written once into the
        data cache under a hash of their content; the recorded TOML names that store.
    out : path or fsspec URL
        The result folder (created if needed; reused to resume).
    **options
        The options of ``dolb run``, named as its flags with dashes as underscores
        (``workers``, ``scheduler``, ``cluster``, ``dashboard``, ``retry_failed``,
        ``force``, ``progress``, ``performance_report``, ``gather``, ``data_cache``,
        ``data``): see :class:`dolb.options.RunOptions`. By default, a LocalCluster with
        one worker per core and no progress bar.

    Examples
    --------
    >>> import dolb
    >>> summary = dolb.run({  # doctest: +SKIP
    ...     "pipeline": {"name": "tiny", "seed": 1},
    ...     "datasets": {"irma": {"generator": "irma", "params": {"n_sequences": 20, "length": 30}}},
    ...     "experiments": {"e": {"dataset": "irma", "task": "regression",
    ...         "split": {"scheme": "sequences", "count": 20}, "checkpoints": [10, 30],
    ...         "metrics": ["test_mse"], "learners": [{"learner": "irma", "complexity": [2, 4]}]}},
    ... }, "runs/tiny", workers=2)
    >>> summary.n_failed  # doctest: +SKIP
    0
    """
    from dolb.execution.sweep import run_sweep

    checked = RunOptions(**options)
    path, text = _pipeline_source(pipeline, checked.data_cache)
    return run_sweep(path, out, checked, pipeline_text=text)


def _pipeline_source(pipeline, cache: str | Path | None = None) -> tuple[Path, str | None]:
    """(path, text) of a pipeline given as a file or a mapping (its arrays stored in the
    data cache ``cache``, see :func:`_arrays_stored`); text None: read the file."""
    if isinstance(pipeline, (str, Path)):
        return pipeline_file(pipeline), None
    if not isinstance(pipeline, Mapping):
        raise ConfigError(f"pipeline: expected a file path or a mapping, got {type(pipeline).__name__}")
    import tomli_w

    pipeline = _arrays_stored(pipeline, cache)
    _check_writable(pipeline, "", set())
    try:
        text = tomli_w.dumps(dict(pipeline))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"pipeline: a value cannot be written as TOML ({exc})") from None
    return Path.cwd() / "pipeline.toml", text  # read as if it were a file here


ARRAY_KEYS = ("X", "y", "X_test", "y_test")
"""The keys of a dataset given as arrays in a pipeline mapping."""


def _arrays_stored(pipeline: Mapping, cache: str | Path | None) -> Mapping:
    """``pipeline`` with each dataset given as arrays (``{"X": ..., "y": ...}``) replaced
    by the stores they are written to (``{"train": path}``, and ``"test"``): in the data
    cache, under a hash of their content, once (:func:`dolb.data.sources.arrays.store_arrays`)."""
    datasets = pipeline.get("datasets")
    if not isinstance(datasets, Mapping) or not any(_as_arrays(entry) for entry in datasets.values()):
        return pipeline
    from dolb.data.sources.arrays import store_arrays
    from dolb.execution.datasets import data_cache

    folder = data_cache(cache)
    replaced = {}
    for name, entry in datasets.items():
        if not _as_arrays(entry):
            replaced[name] = entry
            continue
        where = f"pipeline mapping, at datasets.{name}"
        unknown = sorted(set(entry) - set(ARRAY_KEYS), key=str)
        if unknown:
            raise ConfigError(f"{where}.{unknown[0]}: a dataset given as arrays takes only {', '.join(ARRAY_KEYS)}")
        for key, partner in (("y", "X"), ("X_test", "y_test"), ("y_test", "X_test")):
            if (key in entry) != (partner in entry):
                raise ConfigError(f"{where}: {partner!r} without {key!r} (give both)")
        parts = {"train": (entry["X"], entry["y"])}
        if "X_test" in entry:
            parts["test"] = (entry["X_test"], entry["y_test"])
        try:
            replaced[name] = {part: stored.path for part, stored in store_arrays(parts, folder).items()}
        except DolbError as exc:
            raise type(exc)(f"{where}: {exc}") from None
    return {**pipeline, "datasets": replaced}


def _as_arrays(entry: Any) -> bool:
    """Whether a dataset entry of a pipeline mapping is given as arrays."""
    return isinstance(entry, Mapping) and any(key in entry for key in ARRAY_KEYS)


SCALARS = (str, bool, int, float, datetime.datetime, datetime.date)


def _check_writable(value: Any, key: str, open_: set[int]) -> None:
    """ConfigError naming the first key (dotted, from the top of the pipeline mapping)
    whose key or value TOML cannot hold: a key that is not a string, a value that is not
    text, a number, a truth value, a date, a time without a zone, a list or a mapping,
    or a mapping or list that holds itself."""
    where = f"pipeline mapping, at {key}" if key else "pipeline mapping"
    if isinstance(value, SCALARS) or (isinstance(value, datetime.time) and value.tzinfo is None):
        return
    if isinstance(value, datetime.time):
        raise ConfigError(f"{where}: {value!r} is a time with a zone, which TOML cannot hold (give a time without "
                          "one, or a date and time)")
    if not isinstance(value, (Mapping, list, tuple)):
        raise ConfigError(f"{where}: a {type(value).__name__} ({_short(value)}) cannot be written as TOML; "
                          f"{_instead(value)}")
    if id(value) in open_:
        raise ConfigError(f"{where}: holds itself")
    open_.add(id(value))
    if isinstance(value, Mapping):
        for name, item in value.items():
            if not isinstance(name, str):
                raise ConfigError(f"{where}: the key {_short(name)} is a {type(name).__name__}; TOML keys are strings")
            _check_writable(item, f"{key}.{name}" if key else name, open_)
    else:
        for i, item in enumerate(value):
            _check_writable(item, f"{key}[{i}]", open_)
    open_.discard(id(value))


def _instead(value: Any) -> str:
    """What to give instead of a value TOML cannot hold."""
    module = type(value).__module__.split(".")[0]
    if module == "numpy" and getattr(value, "ndim", 1) == 0:
        return "give int(...) or float(...)"
    if module in ("numpy", "scipy", "pandas"):
        return ('give a list (.tolist()); a dataset\'s arrays go in as datasets.NAME = {"X": X, "y": y} '
                "(NumPy arrays or a SciPy sparse X)")
    return "give text, a number, a truth value, a date, a list or a mapping"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."
