"""Connect to Dask: an embedded LocalCluster by default, a running scheduler, or a
cluster described by a file (SSH, SLURM, PBS, Kubernetes).

A cluster file is TOML with a ``kind`` and that kind's options::

    kind = "slurm"                 # local | scheduler | ssh | slurm | pbs | kubernetes
    jobs = 4                       # slurm/pbs: batch jobs to start
    [options]                      # passed to the cluster class as keyword arguments
    cores = 8
    processes = 8
    memory = "16 GB"
    walltime = "02:00:00"

See ``cluster/`` for a ready example of each kind. :class:`ClusterFile` checks the file
(a pydantic model, as pipeline files are): an unknown key, a key of another kind, a
``workers`` that is not a positive whole number or an option a local cluster does not
take is one :class:`~dolb.errors.ConfigError` line naming the file and the key.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dask
from distributed import Client, LocalCluster, Nanny, Worker
from pydantic import model_validator

from dolb.errors import ConfigError
from dolb.validation import PositiveInt, Table, one_of, problem, read_toml, unknown_key, validate

SINGLE_THREADED_BLAS = {
    name: "1"
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
}
"""Environment of every worker: one BLAS thread, so results and timings do not depend
on the machine's core count and workers do not oversubscribe it."""

QUIET_EVENT_LOOP = {
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.scheduler.work-stealing-interval": "1s",
}
"""Dask settings for the client process (and the embedded scheduler it runs): the
event loop's health tick, system monitor and work-stealing pass run every second or
two instead of every 20-500 ms. Measured idle on 2 workers, the client process then
burns 2 % of a core instead of 8 %: that background, not the tasks, was most of the
client's time per cell in a sweep of tiny cells."""

WORKER_WAIT_SECONDS = 120
"""How long a sweep waits for the first worker of a scheduler or a started cluster."""
CONNECT_SECONDS = 20
"""How long a client tries to reach a scheduler."""

KINDS = {
    # kind: (module, class, extra to install, keys the file may hold besides options)
    "local": ("distributed", "LocalCluster", None, ("workers",)),
    "scheduler": (None, None, None, ("address", "scheduler_file")),
    "ssh": ("distributed", "SSHCluster", "ssh", ("hosts",)),
    "slurm": ("dask_jobqueue", "SLURMCluster", "jobqueue", ("jobs",)),
    "pbs": ("dask_jobqueue", "PBSCluster", "jobqueue", ("jobs",)),
    "kubernetes": ("dask_kubernetes.operator", "KubeCluster", "kubernetes", ("workers",)),
}


def _local(n_workers: int, **options: Any) -> LocalCluster:
    if n_workers < 1:
        raise ConfigError(f"a local cluster needs at least 1 worker, got {n_workers}")
    with _interrupts_ignored():
        return LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,  # no dashboard: nothing to serve, nothing listening
            env=SINGLE_THREADED_BLAS,
            **options,
        )


@contextlib.contextmanager
def _interrupts_ignored() -> Iterator[None]:
    """Ignore SIGINT while the local cluster starts its processes, which keep ignoring it
    (Python leaves an inherited SIG_IGN alone), as do the workers their nannies start
    later. Ctrl-C then reaches the client only: it closes the cluster and says one line,
    instead of every worker printing its own traceback."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _client(target: str) -> Client:
    """A client of a running scheduler, by address or scheduler file."""
    where = {"scheduler_file": target} if Path(target).is_file() else {"address": target}
    try:
        return Client(**where, timeout=f"{CONNECT_SECONDS}s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise ConfigError(f"cannot reach the Dask scheduler at {target}: {exc}") from None


LOCAL_SET_BY_DOLB = ("n_workers", "threads_per_worker", "processes", "dashboard_address", "env")
"""Keywords of a local cluster that dolb sets itself (see :func:`_local`)."""


@functools.cache
def _local_options() -> tuple[str, ...]:
    """The keywords a local cluster passes on: its own, its nannies' and its workers'."""
    names = set()
    for cls in (LocalCluster, Nanny, Worker):
        for name, parameter in inspect.signature(cls.__init__).parameters.items():
            if name != "self" and parameter.kind not in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL):
                names.add(name)
    return tuple(sorted(names - set(LOCAL_SET_BY_DOLB)))


class ClusterFile(Table):
    """A checked cluster file: its ``kind``, the ``options`` of the cluster class and
    the keys of that kind (the others stay None)."""

    kind: one_of(tuple(KINDS))
    options: dict[str, Any] = {}
    workers: PositiveInt | None = None
    jobs: PositiveInt | None = None
    hosts: list[str] | None = None
    address: str | None = None
    scheduler_file: str | None = None

    @classmethod
    def allowed_keys(cls, data: dict) -> tuple[str, ...]:
        kind = data.get("kind")
        return ("kind", "options", *KINDS[kind][3]) if kind in KINDS else tuple(cls.model_fields)

    @classmethod
    def unknown_key_words(cls, data: dict) -> str:
        kind = data.get("kind")
        return f"unknown key for a {kind} cluster" if kind in KINDS else "unknown key"

    @model_validator(mode="after")
    def _kind_rules(self) -> ClusterFile:
        if self.kind == "scheduler" and (self.address is None) == (self.scheduler_file is None):
            raise problem("give exactly one of address or scheduler_file")
        if self.kind == "ssh" and (self.hosts is None or len(self.hosts) < 2):
            raise problem("an SSH cluster needs a list of hosts, the scheduler's first", "hosts")
        if self.kind == "local":
            for name in self.options:
                if name in LOCAL_SET_BY_DOLB:
                    raise problem("set by dolb for every local cluster (give workers = N instead)", "options", name)
                if name not in _local_options():
                    what = "not an option of LocalCluster, Nanny or Worker"
                    raise unknown_key(name, _local_options(), what, ("options",))
        return self


def read_cluster_file(path: str | Path) -> ClusterFile:
    """Read and check a cluster file; ConfigError naming the file and key at fault."""
    return validate(ClusterFile, read_toml(path, "cluster file"), path)


def _start(cls: type, path: str | Path, *args: Any, **options: Any):
    """``cls(*args, **options)``; ConfigError on one line if it refuses the options."""
    try:
        return cls(*args, **options)
    except (TypeError, ValueError) as exc:
        first = (str(exc).strip() or type(exc).__name__).splitlines()[0]
        raise ConfigError(f"{path}: options: {first}") from None


def _cluster_from_file(spec: ClusterFile, path: str | Path):
    """Start the cluster a checked cluster file describes."""
    kind = spec.kind
    options = dict(spec.options)
    if kind == "local":
        return _local(spec.workers or os.cpu_count() or 1, **options)
    module, name, extra, _ = KINDS[kind]
    try:
        cls = getattr(importlib.import_module(module), name)
    except ImportError:
        raise ConfigError(
            f"{path}: a {kind} cluster needs {module.split('.')[0]}: pip install 'dolb[{extra}]'"
        ) from None
    if kind == "ssh":
        worker = {"nthreads": 1, "env": SINGLE_THREADED_BLAS} | options.pop("worker_options", {})
        return _start(cls, path, spec.hosts, worker_options=worker, **options)
    if kind in ("slurm", "pbs"):
        options.setdefault("job_script_prologue", [f"export {k}={v}" for k, v in SINGLE_THREADED_BLAS.items()])
        cluster = _start(cls, path, **options)
        cluster.scale(jobs=spec.jobs or 1)
        return cluster
    cluster = _start(cls, path, **options)  # kubernetes
    cluster.scale(spec.workers or 1)
    return cluster


def _with_workers(client: Client) -> Client:
    """``client`` once at least one worker has joined; ConfigError after a while."""
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT_SECONDS)
    except TimeoutError:
        raise ConfigError(
            f"no Dask worker joined the scheduler at {client.scheduler.address} within {WORKER_WAIT_SECONDS} s"
        ) from None
    return client


@contextlib.contextmanager
def connect(
    workers: int | None = None, scheduler: str | None = None, cluster_file: str | Path | None = None
) -> Iterator[Client]:
    """A Dask client for a sweep.

    Parameters
    ----------
    workers : int, optional
        Worker processes of the embedded LocalCluster (default: one per core), each
        single-threaded.
    scheduler : str, optional
        Address (``tcp://host:8786``) or scheduler-file path of a running scheduler.
    cluster_file : path, optional
        A cluster file (see the module docstring) describing the cluster to start.

    At most one of the three may be given.
    """
    if sum(x is not None for x in (workers, scheduler, cluster_file)) > 1:
        raise ConfigError("give at most one of --workers, --scheduler and --cluster")
    with dask.config.set(QUIET_EVENT_LOOP):
        yield from _connect(workers, scheduler, cluster_file)


def _connect(workers: int | None, scheduler: str | None, cluster_file: str | Path | None) -> Iterator[Client]:
    if cluster_file is not None:
        spec = read_cluster_file(cluster_file)
        if spec.kind == "scheduler":
            scheduler = spec.address or spec.scheduler_file
        else:
            with _cluster_from_file(spec, cluster_file) as cluster, Client(cluster) as client:
                yield _with_workers(client)
            return
    if scheduler is not None:
        with _client(scheduler) as client:
            yield _with_workers(client)
        return
    with _local(workers if workers is not None else (os.cpu_count() or 1)) as cluster, Client(cluster) as client:
        yield client
