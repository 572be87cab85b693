"""Connect to Dask: an embedded LocalCluster by default, or a running scheduler."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator

from distributed import Client, LocalCluster

from dolb.errors import ConfigError

SINGLE_THREADED_BLAS = {
    name: "1"
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
}
"""Environment of every worker: one BLAS thread, so results and timings do not depend
on the machine's core count and workers do not oversubscribe it."""


@contextlib.contextmanager
def connect(workers: int | None = None, scheduler: str | None = None) -> Iterator[Client]:
    """A Dask client for a sweep.

    Parameters
    ----------
    workers : int, optional
        Worker processes of the embedded LocalCluster (default: one per core), each
        single-threaded.
    scheduler : str, optional
        Address (``tcp://host:8786``) or scheduler-file path of a running scheduler;
        used instead of an embedded cluster.
    """
    if scheduler is not None and workers is not None:
        raise ConfigError("give either --workers or --scheduler, not both")
    if scheduler is not None:
        target = {"scheduler_file": scheduler} if Path(scheduler).is_file() else {"address": scheduler}
        try:
            client = Client(**target, timeout="20s")
        except (OSError, TimeoutError, ValueError) as exc:
            raise ConfigError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        with client:
            yield client
        return
    n_workers = workers if workers is not None else (os.cpu_count() or 1)
    if n_workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {n_workers}")
    with LocalCluster(
        n_workers=n_workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        env=SINGLE_THREADED_BLAS,
    ) as cluster, Client(cluster) as client:
        yield client
