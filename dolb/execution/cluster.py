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
(a pydantic model): an unknown key, a key of another kind, a ``workers`` that is not a
positive whole number or an option a local cluster does not take is one
:class:`~dolb.errors.ConfigError` line naming the file and the key. The embedded cluster
listens on 127.0.0.1 only, serves no HTTP and speaks mutual TLS with credentials made
for the run; a running scheduler that uses TLS is reached with the certificates of a
cluster file's ``[tls]`` table (``ca_file``, ``cert``, ``key``). Asked for (``dashboard=True``,
``dolb run --dashboard``), the embedded scheduler serves Dask's dashboard on 127.0.0.1
(port 8787, or a free one); a dashboard's link is printed on standard error. What the
embedded cluster serves, and to whom: docs/design/execution.md.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import json
import os
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dask
from distributed import Client, LocalCluster, Nanny, Worker
from distributed.security import Security
from pydantic import model_validator

from dolb.errors import ConfigError
from dolb.execution.arithmetic import environment
from dolb.execution.lost_workers import ReplacingCluster, lost_line
from dolb.execution.quiet import QUIET
from dolb.execution.script_main import script_not_rerun
from dolb.execution.worker_plugins import NoHTTPServer, Prepared, QuickExit, QuietStop
from dolb.validation import ExistingFile, PositiveInt, Table, one_of, problem, read_toml, unknown_key, validate

SINGLE_THREADED_BLAS = {
    name: "1"
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
}
"""Environment of every worker: one BLAS thread, so results and timings do not depend
on the machine's core count and workers do not oversubscribe it."""

NO_HTTP_ROUTES = {"distributed.scheduler.http.routes": [], "distributed.worker.http.routes": []}
"""No HTTP endpoint (health, metrics, info, proxy, event stream) on any process dolb starts."""
DASHBOARD_ROUTES = {"distributed.scheduler.http.routes": ["distributed.http.statics"]}
"""With the dashboard, the scheduler serves its pages and their static files, nothing else."""
DASHBOARD_ADDRESS = "127.0.0.1:8787"
"""Where the embedded scheduler serves its dashboard, when asked (Dask's usual port; a
free one when another process holds it)."""
DASHBOARD_PROBE_SECONDS = 20
"""How long dolb waits for a scheduler's dashboard page to answer before it prints its link
(a busy scheduler builds its first page in seconds: 6 s seen on a loaded 2-core machine)."""

WORKER_WAIT_SECONDS = 120
"""How long a sweep waits for the first worker of a scheduler or a started cluster."""
CONNECT_SECONDS = 20
"""How long a client tries to reach a scheduler."""

KINDS = {
    # kind: (module, class, extra to install, keys the file may hold besides options)
    "local": ("distributed", "LocalCluster", None, ("workers",)),
    "scheduler": (None, None, None, ("address", "scheduler_file", "tls")),
    "ssh": ("distributed", "SSHCluster", "ssh", ("hosts",)),
    "slurm": ("dask_jobqueue", "SLURMCluster", "jobqueue", ("jobs",)),
    "pbs": ("dask_jobqueue", "PBSCluster", "jobqueue", ("jobs",)),
    "kubernetes": ("dask_kubernetes.operator", "KubeCluster", "kubernetes", ("workers",)),
}


def _local(n_workers: int, dashboard: bool = False, **options: Any) -> LocalCluster:
    """The embedded cluster: ``n_workers`` single-threaded worker processes on
    127.0.0.1, mutual TLS with temporary credentials, no HTTP server (``dashboard``:
    but the scheduler's dashboard on 127.0.0.1). A worker lost while it starts is
    replaced, or left out, as a line on standard error says (see
    :class:`~dolb.execution.lost_workers.ReplacingCluster`)."""
    if n_workers < 1:
        raise ConfigError(f"a local cluster needs at least 1 worker, got {n_workers}")
    routes = NO_HTTP_ROUTES | (DASHBOARD_ROUTES if dashboard else {})
    with _interrupts_ignored(), dask.config.set(routes):
        cluster = ReplacingCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            # without a dashboard: any free port, closed below, so none is taken from others
            dashboard_address=DASHBOARD_ADDRESS if dashboard else "127.0.0.1:0",
            scheduler_kwargs={"dashboard": dashboard},
            security=Security.temporary(),
            plugins={NoHTTPServer(), Prepared(), QuickExit(), QuietStop()},
            env=SINGLE_THREADED_BLAS,
            **options,
        )
    if not dashboard:
        cluster.scheduler.http_server.stop()  # the scheduler runs in this process
    if cluster.lost:
        print(lost_line(cluster.lost, len(cluster.workers)), file=sys.stderr, flush=True)
    return cluster


def dashboard_link(client: Client) -> str | None:
    """The link of the dashboard of ``client``'s scheduler when its page answers there
    (an HTTP GET from this process, without proxies); None otherwise. (A scheduler lists
    its HTTP server as its dashboard even when that server has no dashboard pages.)"""
    if "dashboard" not in client.scheduler_info(n_workers=0).get("services", {}):
        return None
    link = client.dashboard_link
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with direct.open(link, timeout=DASHBOARD_PROBE_SECONDS) as response:
            return link if response.status == 200 else None
    except (OSError, ValueError):  # refused, timed out, 404 (HTTPError is an OSError), not a URL
        return None


def _announced(client: Client, asked: bool) -> Client:
    """``client``, once the link of its scheduler's dashboard is printed on standard
    error (when its page answers; that none does when one was ``asked`` for)."""
    link = dashboard_link(client)
    if link:
        print(f"dolb: Dask dashboard at {link}", file=sys.stderr, flush=True)
    elif asked:
        print(f"dolb: no dashboard of the scheduler at {client.scheduler.address} answers", file=sys.stderr, flush=True)
    return client


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


def _client(target: str, security: Security | None = None) -> Client:
    """A client of a running scheduler, by address or scheduler file (``security``:
    its TLS credentials; default: Dask's configuration)."""
    address = _scheduler_address(Path(target)) if Path(target).is_file() else target
    try:
        return Client(address, security=security, timeout=f"{CONNECT_SECONDS}s")
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        first = (str(exc).strip() or type(exc).__name__).splitlines()[0]
        raise ConfigError(f"cannot reach the Dask scheduler at {target}: {first}") from None


def _scheduler_address(path: Path) -> str:
    """The address a Dask scheduler file holds; ConfigError naming the file if it holds none."""
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not a Dask scheduler file ({exc})") from None
    address = content.get("address") if isinstance(content, dict) else None
    if not isinstance(address, str) or "://" not in address:
        raise ConfigError(f"{path}: not a Dask scheduler file (no address such as \"tcp://host:8786\")")
    return address


LOCAL_SET_BY_DOLB = ("n_workers", "threads_per_worker", "processes", "host", "dashboard_address",
                     "scheduler_kwargs", "security", "plugins", "env")
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


class TLSFiles(Table):
    """A cluster file's ``[tls]`` table: the certificates a client presents to a
    scheduler that uses TLS (PEM files)."""

    ca_file: ExistingFile
    cert: ExistingFile
    key: ExistingFile | None = None

    def security(self) -> Security:
        """The Dask security object of these files."""
        key = None if self.key is None else str(self.key)
        return Security(tls_ca_file=str(self.ca_file), tls_client_cert=str(self.cert), tls_client_key=key,
                        require_encryption=True)


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
    tls: TLSFiles | None = None

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


def _cluster_from_file(spec: ClusterFile, path: str | Path, dashboard: bool = False,
                       arithmetic: dict[str, str] | None = None):
    """Start the cluster a checked cluster file describes (``dashboard``: a local one
    serves its dashboard; the other kinds serve theirs as their options say; ``arithmetic``:
    exported by the job script of SLURM and PBS workers)."""
    kind = spec.kind
    options = dict(spec.options)
    if kind == "local":
        return _local(spec.workers or os.cpu_count() or 1, dashboard, **options)
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
        exported = SINGLE_THREADED_BLAS | (arithmetic or {})
        options.setdefault("job_script_prologue", [f"export {k}='{v}'" for k, v in exported.items()])
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
    workers: int | None = None, scheduler: str | None = None, cluster: str | Path | None = None,
    dashboard: bool = False, arithmetic: dict[str, str] | None = None,
) -> Iterator[Client]:
    """A Dask client for a sweep; the link of its scheduler's dashboard, if it has one,
    is printed on standard error.

    Parameters
    ----------
    workers : int, optional
        Worker processes of the embedded LocalCluster (default: one per core), each
        single-threaded.
    scheduler : str, optional
        Address (``tcp://host:8786``) or scheduler-file path of a running scheduler.
    cluster : path, optional
        A cluster file (see the module docstring) describing the cluster to start.
    dashboard : bool
        The embedded cluster (or a local one of a cluster file) serves Dask's dashboard
        on 127.0.0.1; by default it serves no HTTP at all.
    arithmetic : dict, optional
        The environment of pinned arithmetic (:mod:`dolb.execution.arithmetic`), given to
        the worker processes of a local cluster and of a SLURM or PBS cluster as they start.

    At most one of ``workers``, ``scheduler`` and ``cluster`` may be given (the options
    of :class:`dolb.options.RunOptions` of the same names). The worker processes started
    here do not run the caller's script again (:mod:`dolb.execution.script_main`).
    """
    if sum(x is not None for x in (workers, scheduler, cluster)) > 1:
        raise ConfigError("give at most one of --workers, --scheduler and --cluster")
    with dask.config.set(QUIET), environment(arithmetic or {}), script_not_rerun():
        yield from _connect(workers, scheduler, cluster, dashboard, arithmetic or {})


def _connect(workers: int | None, scheduler: str | None, cluster_file: str | Path | None,
             dashboard: bool, arithmetic: dict[str, str]) -> Iterator[Client]:
    spec = None if cluster_file is None else read_cluster_file(cluster_file)
    if spec is not None and spec.kind == "scheduler":
        security = None if spec.tls is None else spec.tls.security()
        with _client(spec.address or spec.scheduler_file, security) as client:
            yield _announced(_with_workers(client), dashboard)
    elif spec is not None:
        with _cluster_from_file(spec, cluster_file, dashboard, arithmetic) as cluster, Client(cluster) as client:
            ours_closed = spec.kind == "local" and not dashboard  # its HTTP port is closed: nothing to say
            yield _with_workers(client) if ours_closed else _announced(_with_workers(client), dashboard)
    elif scheduler is not None:
        with _client(scheduler) as client:
            yield _announced(_with_workers(client), dashboard)
    else:
        n_workers = workers if workers is not None else (os.cpu_count() or 1)
        with _local(n_workers, dashboard) as cluster, Client(cluster) as client:
            yield _announced(client, dashboard) if dashboard else client
