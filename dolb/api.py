"""The Python entry point of a run: :func:`run`, what ``dolb run`` does, for scripts and
notebooks."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dolb.errors import ConfigError
from dolb.options import RunOptions


def run(pipeline: str | Path | Mapping[str, Any], out: str | Path, **options: Any):
    """Run every cell of a pipeline not stored in ``out`` yet, write its reports, and
    return the run's :class:`~dolb.execution.sweep.SweepSummary`.

    Parameters
    ----------
    pipeline : path or mapping
        A pipeline file, or the pipeline itself as a plain mapping with the layout of
        the file (``{"pipeline": {...}, "datasets": {...}, "experiments": {...}}``);
        relative paths in a mapping are relative to the current folder. A mapping is
        recorded in the result folder as TOML, like a file.
    out : path or fsspec URL
        The result folder (created if needed; reused to resume).
    **options
        The options of ``dolb run``, named as its flags with dashes as underscores
        (``workers``, ``scheduler``, ``cluster``, ``dashboard``, ``retry_failed``,
        ``force``, ``progress``, ``performance_report``, ``gather``, ``data_cache``): see
        :class:`dolb.options.RunOptions`. By default, a LocalCluster with one worker
        per core and no progress bar.

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
        return Path(pipeline), None
    if not isinstance(pipeline, Mapping):
        raise ConfigError(f"pipeline: expected a file path or a mapping, got {type(pipeline).__name__}")
    import tomli_w

    try:
        text = tomli_w.dumps(dict(pipeline))
    except TypeError as exc:
        raise ConfigError(f"pipeline: a value cannot be written as TOML ({exc})") from None
    return Path.cwd() / "pipeline.toml", text  # read as if it were a file here
