"""The Python entry point of a run: :func:`run`, what ``dolb run`` does, for scripts and
notebooks."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dolb.errors import ConfigError


def run(
    pipeline: str | Path | Mapping[str, Any],
    out: str | Path,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    cluster_file: str | Path | None = None,
    dashboard: bool = False,
    retry_failed: bool = False,
    progress: bool = False,
    gather: str = "auto",
    data_cache: str | Path | None = None,
    performance_report: str | Path | None = None,
    force: bool = False,
):
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
    workers, scheduler, cluster_file, dashboard
        Where to run (default: a LocalCluster with one worker per core), and whether
        it serves its dashboard; see :func:`dolb.execution.cluster.connect`.
    retry_failed, progress, gather, data_cache, performance_report, force
        As the options of ``dolb run``.

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
    return run_sweep(
        path,
        out,
        workers=workers,
        scheduler=scheduler,
        cluster_file=cluster_file,
        dashboard=dashboard,
        retry_failed=retry_failed,
        progress=progress,
        report_file=performance_report,
        gather=gather,
        data_dir=data_cache,
        pipeline_text=text,
        force=force,
    )


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
