"""The options of a run: one object shared by ``dolb run``, :func:`dolb.run` and
:func:`dolb.execution.sweep.run_sweep`, each option under one name everywhere (the
command's flag with dashes as underscores: ``--data-cache`` is ``data_cache``), checked
once, when the object is made."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from dolb.errors import ConfigError
from dolb.extras import BOKEH, require

GATHER_MODES = ("auto", "workers", "client")
"""Who writes the result parts: the workers when they can reach the folder (``auto``,
checked at start), always the workers, or always the client."""

RECORDED = ("workers", "scheduler", "cluster", "retry_failed", "gather", "data_cache", "data")
"""The options a run record keeps (its ``options``); ``dolb reproduce`` reads its
datasets where the run recorded them (``data_cache``, ``data``) unless told otherwise."""


@dataclass(frozen=True)
class RunOptions:
    """How to run a pipeline; ConfigError naming the option when one is wrong.

    Parameters
    ----------
    workers : int, optional
        Worker processes of the embedded LocalCluster (default: one per core).
    scheduler : str, optional
        Address or scheduler file of a running Dask scheduler.
    cluster : path, optional
        A cluster file describing the cluster to start (see ``cluster/``). At most one
        of ``workers``, ``scheduler`` and ``cluster`` is given (see
        :func:`dolb.execution.cluster.connect`).
    dashboard : bool
        The embedded cluster serves Dask's dashboard on 127.0.0.1.
    retry_failed : bool
        Run again the cells whose last attempt failed (by default they stay failed).
    force : bool
        Add to a result folder that holds another pipeline's results (refused by
        default: its reports and history would mix two studies).
    progress : bool
        Show a progress bar on standard error (``dolb run`` shows one unless given
        ``--no-progress`` or ``-q``).
    performance_report : path, optional
        Where to save Dask's HTML performance report of the computation (one
        self-contained file: its scripts are inside, it opens offline). It and the
        dashboard need bokeh (``pip install 'dolb[dashboard]'``).
    gather : {"auto", "workers", "client"}
        Who writes the result parts (see :data:`GATHER_MODES`).
    data_cache : path, optional
        The data cache (see :func:`dolb.execution.datasets.data_cache`).
    data : path, optional
        The data folder of the pipelines dolb ships, which holds their real data sets
        (default ``$DOLB_DATA``, else ``shared/data`` beside a checkout; see
        :mod:`dolb.experiment.shipped`).

    Examples
    --------
    >>> RunOptions(workers=2).recorded()["workers"]
    2
    >>> RunOptions(gather="nobody")
    Traceback (most recent call last):
    ...
    dolb.errors.ConfigError: --gather: expected one of auto, workers, client, got 'nobody'
    """

    workers: int | None = None
    scheduler: str | None = None
    cluster: str | Path | None = None
    dashboard: bool = False
    retry_failed: bool = False
    force: bool = False
    progress: bool = False
    performance_report: str | Path | None = None
    gather: str = "auto"
    data_cache: str | Path | None = None
    data: str | Path | None = None

    def __post_init__(self) -> None:
        if self.workers is not None and (isinstance(self.workers, bool) or not isinstance(self.workers, int)
                                         or self.workers < 1):
            raise ConfigError(f"--workers: expected a whole number of at least 1, got {self.workers!r}")
        if self.gather not in GATHER_MODES:
            raise ConfigError(f"--gather: expected one of {', '.join(GATHER_MODES)}, got {self.gather!r}")
        writable_file("--performance-report", self.performance_report)
        if self.dashboard or self.performance_report:
            require(BOKEH, "Dask's dashboard or performance report (--dashboard, --performance-report)")

    def recorded(self) -> dict[str, Any]:
        """The options a run record keeps (:data:`RECORDED`), paths as text, the data
        folder absolute (the data cache is recorded as resolved by the run)."""
        recorded = {name: str(value) if isinstance(value, Path) else value
                    for name, value in ((name, getattr(self, name)) for name in RECORDED)}
        if self.data is not None and "://" not in str(self.data):
            recorded["data"] = str(Path(self.data).absolute())
        return recorded


OPTIONS = tuple(field.name for field in fields(RunOptions))
"""Every option's name."""


def writable_file(option: str, path: str | Path | None) -> None:
    """ConfigError, before anything runs, when ``path`` cannot become a file of this
    machine (a URL: :func:`dolb.location.writable` takes both)."""
    if path is None:
        return
    if "://" in str(path):
        raise ConfigError(f"{option} {path}: give a file of this machine, not a URL")
    target = Path(path)
    if target.is_dir():
        raise ConfigError(f"{option} {path}: is a folder, expected a file name")
    if not target.absolute().parent.is_dir():
        raise ConfigError(f"{option} {path}: its folder {target.absolute().parent} does not exist")


__all__ = ["GATHER_MODES", "OPTIONS", "RunOptions", "writable_file"]
