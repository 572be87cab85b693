"""The Python entry point of a run: :func:`run`, what ``dolb run`` does, for scripts and
notebooks."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dolb.errors import ConfigError
from dolb.experiment.shipped import pipeline_file
from dolb.options import RunOptions


def run(pipeline: str | Path | Mapping[str, Any], out: str | Path, **options: Any):
    """Run every cell of a pipeline not stored in ``out`` yet, write its reports, and
    return the run's :class:`~dolb.execution.sweep.SweepSummary`.

    Parameters
    ----------
    pipeline : path, name or mapping
        A pipeline file, the name of a pipeline dolb ships (``"irma"``: see
        :mod:`dolb.experiment.shipped`), or the pipeline itself as a plain mapping with
        the layout of the file (``{"pipeline": {...}, "datasets": {...}, "experiments": {...}}``);
        relative paths in a mapping are relative to the current folder. A mapping is
        recorded in the result folder as TOML, like a file.
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

    path, text = _pipeline_source(pipeline)
    return run_sweep(path, out, RunOptions(**options), pipeline_text=text)


def _pipeline_source(pipeline) -> tuple[Path, str | None]:
    """(path, text) of a pipeline given as a file or a mapping; text None: read the file."""
    if isinstance(pipeline, (str, Path)):
        return pipeline_file(pipeline), None
    if not isinstance(pipeline, Mapping):
        raise ConfigError(f"pipeline: expected a file path or a mapping, got {type(pipeline).__name__}")
    import tomli_w

    _check_writable(pipeline, "", set())
    try:
        text = tomli_w.dumps(dict(pipeline))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"pipeline: a value cannot be written as TOML ({exc})") from None
    return Path.cwd() / "pipeline.toml", text  # read as if it were a file here


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
        hint = "; a NumPy value: give int(...), float(...) or .tolist()" if type(value).__module__ == "numpy" else ""
        raise ConfigError(f"{where}: a {type(value).__name__} ({_short(value)}) cannot be written as TOML{hint}")
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


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."
