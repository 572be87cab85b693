"""Hosts emulated on one Linux machine, for tests of a cluster that shares no disk.

Each host is a mount and UTS namespace of its own (``unshare --mount --uts``, as root)
on a loopback address of its own: the S3-protocol server (moto's) on 127.0.0.5, the
Dask scheduler on 127.0.0.2, the worker hosts on 127.0.0.3, 127.0.0.4 and on. Inside
each, fresh tmpfs mounts hide the client's ``/tmp``, its home and the data folders
named (the client's files, pytest's ``tmp_path`` and ``~/.cache/dolb`` among them), and
give the host its own ``/dev/shm``; ``HOME`` and ``TMPDIR`` point into its private
``/tmp``. The software stays visible (the Python installation and the checkout are
mounted back where they lie under a hidden folder). Network is shared: every server
listens on its own 127.0.0.x address only.

A worker host gets the store's credentials in its environment, or not
(``credentials=False``, for a host set up without them). The processes of a host are
one process group in its namespaces: a host ends with a signal to the group, then
SIGKILL to whatever is left in its namespace, which goes with its last process; a host
also kills itself within a second of the client's end, however the client ends.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.s3_server import CREDENTIALS, S3Server

ROOT = Path(__file__).resolve().parents[1]
SCHEDULER_ADDRESS = "127.0.0.2"
S3_ADDRESS = "127.0.0.5"
WORKER_ADDRESSES = ("127.0.0.3", "127.0.0.4", "127.0.0.6", "127.0.0.7")
START_SECONDS = 60.0
"""How long a host may take to answer once started."""


def worker_setup() -> dict[str, str]:
    """What a worker host's administrator sets: one thread per BLAS call and, where the
    CPU allows it, dolb's default pinned arithmetic (else dolb's nanny plugin restarts
    each worker as a run starts, to pin it)."""
    from dolb.execution.arithmetic import PINS

    pin = PINS["x86-64-v3"]
    return {"OMP_NUM_THREADS": "1", **(pin.environment if pin.supported() else {})}


WRAPPER = r"""
set -e
IFS='
'
echo "$HOST_NAME" > /proc/sys/kernel/hostname
(while kill -0 "$HOST_CLIENT" 2>/dev/null; do sleep 1; done; kill -KILL 0) &
mount -t tmpfs tmpfs /dev/shm
i=0
for kept in $HOST_KEEP; do i=$((i+1)); mkdir -p /dev/shm/kept/$i; mount --bind "$kept" /dev/shm/kept/$i; done
for hidden in $HOST_HIDE; do mount -t tmpfs tmpfs "$hidden"; done
i=0
for kept in $HOST_KEEP; do i=$((i+1)); mkdir -p "$kept"; mount --move /dev/shm/kept/$i "$kept"; done
mkdir -p "$HOME" "$TMPDIR"
cd "$HOME"
unset HOST_NAME HOST_KEEP HOST_HIDE HOST_CLIENT
exec "$@"
"""
"""Run in a host's new namespaces before its command (``sh -c WRAPPER sh COMMAND...``):
name the host, watch the client (the host's processes are killed within a second of
its end, however it ends), keep the software's folders aside, hide the client's folders
under fresh tmpfs mounts, put the software back, and leave the client's working folder."""


def hosts_unavailable() -> str | None:
    """Why hosts cannot be emulated here (the reason a test skips with), or None.

    Examples
    --------
    >>> reason = hosts_unavailable()
    >>> reason is None or isinstance(reason, str)
    True
    """
    if not sys.platform.startswith("linux"):
        return f"hosts are emulated with Linux namespaces; this is {sys.platform}"
    if os.geteuid() != 0:
        return "hosts are emulated with mount namespaces, which need root (unshare --mount)"
    if shutil.which("unshare") is None:
        return "hosts are emulated with unshare (util-linux), which is not installed"
    try:
        tried = subprocess.run(["unshare", "--mount", "--uts", "--propagation", "private", "sh", "-c",
                                "mount -t tmpfs tmpfs /tmp && echo emulated > /proc/sys/kernel/hostname"],
                               capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare --mount --uts could not run: {exc}"
    if tried.returncode != 0:
        return f"this machine refuses mount namespaces: unshare --mount --uts: {' '.join(tried.stderr.split())}"
    with socket.socket() as probe:
        try:
            probe.bind((WORKER_ADDRESSES[0], 0))
        except OSError as exc:
            return f"no loopback address {WORKER_ADDRESSES[0]} to listen on: {exc}"
    return None


def host_name(address: str) -> str:
    """The name of the host at ``address``.

    Examples
    --------
    >>> host_name("127.0.0.3")
    'host-127-0-0-3'
    """
    return "host-" + address.replace(".", "-")


def free_port(address: str) -> int:
    """A TCP port free on ``address``."""
    with socket.socket() as probe:
        probe.bind((address, 0))
        return probe.getsockname()[1]


def outermost(folders) -> list[Path]:
    """The folders of ``folders`` that lie in none of the others, sorted.

    Examples
    --------
    >>> outermost({Path("/a/b"), Path("/a"), Path("/c")})
    [PosixPath('/a'), PosixPath('/c')]
    """
    return sorted(p for p in folders if not any(p != q and p.is_relative_to(q) for q in folders))


def kept_folders(hidden: list[Path]) -> list[Path]:
    """The folders of the Python installation (its prefixes and site-packages, the
    user's included) and of this checkout that lie under a hidden folder (outermost
    only): mounted back in every host. Nothing else of the client's (not the folders
    of ``sys.path``, which hold the script's own)."""
    import site

    software = (sys.prefix, sys.base_prefix, sys.exec_prefix, ROOT, *site.getsitepackages(), site.getusersitepackages())
    wanted = [Path(p).resolve() for p in software if p]
    return outermost({p for p in wanted if p.is_dir() and any(p.is_relative_to(h) and p != h for h in hidden)})


@dataclass
class Host:
    """One emulated host: its address, name, process group and log file."""

    address: str
    process: subprocess.Popen
    log: Path
    credentials: bool = True
    mount_namespace: str | None = None
    stopped: bool = False
    """Whether it was stopped (or killed) on purpose."""

    @property
    def name(self) -> str:
        """Its host name (what ``socket.gethostname()`` says on it)."""
        return host_name(self.address)

    def alive(self) -> bool:
        return self.process.poll() is None

    def namespace(self) -> str | None:
        """Its mount namespace (``mnt:[INODE]``), once its first process has entered it
        (remembered: the host's processes may be gone since)."""
        if self.mount_namespace is None:
            with contextlib.suppress(OSError):
                found = os.readlink(f"/proc/{self.process.pid}/ns/mnt")
                self.mount_namespace = None if found == os.readlink("/proc/self/ns/mnt") else found
        return self.mount_namespace

    def stop(self, sig: int = signal.SIGTERM, seconds: float = 20.0) -> None:
        """End the host: ``sig`` to its process group, then SIGKILL to every process
        left in its namespace after ``seconds``."""
        namespace, self.stopped = self.namespace(), True
        if self.process.returncode is None:  # not reaped: the group's id is still the host's
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=seconds)
        for _ in range(100):
            if not (left := in_namespaces({namespace})):
                break
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)
        self.process.wait(timeout=seconds)


def in_namespaces(namespaces: set[str | None]) -> list[int]:
    """The processes in any of the mount namespaces ``namespaces``."""
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and os.readlink(entry / "ns" / "mnt") in namespaces - {None}:
                found.append(int(entry.name))
    return found


@dataclass
class Hosts:
    """The emulated machines of a test: where they listen, and how to change them."""

    folder: Path
    hidden: list[Path]
    s3: S3Server
    scheduler: str
    hosts: dict[str, Host] = field(default_factory=dict)
    started: list[Host] = field(default_factory=list)

    @property
    def endpoint(self) -> str:
        """The S3 server's URL."""
        return self.s3.endpoint

    @property
    def environment(self) -> dict[str, str]:
        """What a client (or a worker) needs to reach the store: credentials, region, endpoint."""
        return self.s3.environment

    @property
    def workers(self) -> list[Host]:
        """The worker hosts running, by address."""
        return [host for address, host in sorted(self.hosts.items()) if address in WORKER_ADDRESSES and host.alive()]

    def bucket(self) -> str:
        """A new empty bucket; its ``s3://`` URL."""
        import s3fs

        name = f"dolb-{uuid.uuid4().hex[:12]}"
        s3fs.S3FileSystem(key=CREDENTIALS["AWS_ACCESS_KEY_ID"], secret=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                          client_kwargs={"endpoint_url": self.endpoint}).mkdir(name)
        return f"s3://{name}"

    def start(self, address: str, command: list[str], environment: dict[str, str], credentials: bool = True) -> Host:
        """Start ``command`` as the host ``address`` (its own namespaces and process group)."""
        log = self.folder / f"{address}.log"
        env = host_environment(environment) | {
            "HOST_NAME": host_name(address), "HOST_CLIENT": str(os.getpid()), "HOST_HIDE": "\n".join(map(str, self.hidden)),
            "HOST_KEEP": "\n".join(map(str, kept_folders(self.hidden)))}
        with open(log, "ab") as out:
            process = subprocess.Popen(
                ["unshare", "--mount", "--uts", "--propagation", "private", "sh", "-c", WRAPPER, "sh", *command],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.hosts[address] = Host(address, process, log, credentials)
        self.started.append(self.hosts[address])
        return self.hosts[address]

    def start_worker(self, address: str, credentials: bool = True, wait: bool = True) -> Host:
        """A worker host: one single-threaded `dask worker` (with its nanny) at
        ``address``, with the store's credentials or not; returns once it has joined
        (or at once, ``wait=False``)."""
        if address in self.hosts and self.hosts[address].alive():
            raise RuntimeError(f"host {address} is running already")
        environment = worker_setup() | self.environment
        if not credentials:
            environment = {k: v for k, v in environment.items() if k not in CREDENTIALS or k == "AWS_DEFAULT_REGION"}
        command = [sys.executable, "-c", "from distributed.cli.dask_worker import main; main()", self.scheduler,
                   "--host", address, "--nworkers", "1", "--nthreads", "1", "--no-dashboard",
                   "--dashboard-address", f"{address}:0"]
        host = self.start(address, command, environment, credentials)
        if wait:
            self.wait_for_workers()
        return host

    def kill(self, address: str) -> None:
        """Kill the host ``address`` at once: SIGKILL to every process of it."""
        self.hosts[address].stop(signal.SIGKILL)

    def restart(self, address: str, credentials: bool = True) -> Host:
        """The worker host ``address`` stopped (if running) and started again."""
        if self.hosts[address].alive():
            self.hosts[address].stop()
        self.wait_for_workers()
        return self.start_worker(address, credentials)

    def wait_for_workers(self, seconds: float = START_SECONDS) -> None:
        """Return once the scheduler has exactly one worker per running worker host."""
        from distributed import Client

        expected = {host.address for host in self.workers}
        self.check_running()
        with Client(self.scheduler, timeout=seconds) as client:
            if expected:
                client.wait_for_workers(len(expected), timeout=seconds)
            _until(lambda: self.check_running() or workers_at(client) == expected, seconds,
                   f"the workers of {sorted(expected)} to join")

    def check_running(self, addresses: set[str] | None = None) -> None:
        """RuntimeError, with the end of its log, when a host of ``addresses`` (default:
        all but those stopped on purpose) has ended."""
        for address, host in self.hosts.items():
            if (address in addresses if addresses else not host.stopped) and not host.alive():
                raise RuntimeError(f"host {address} ended ({host.process.returncode}): "
                                   f"{host.log.read_text(errors='replace')[-3000:]}")

    def stop(self) -> None:
        """Stop every host, the last started first."""
        for host in reversed(self.started):
            host.stop()

    def remaining(self) -> list[int]:
        """The processes left in the namespaces of the hosts ever started (none once stopped)."""
        return in_namespaces({host.namespace() for host in self.started})


def host_view(paths: list[str], folders: list[str]) -> dict:
    """What a process sees of its host (run on a worker: ``client.run(host_view, ...)``):
    its host name, ``HOME``, ``TMPDIR``, which of ``paths`` exist there and what each of
    ``folders`` holds."""
    return {"name": socket.gethostname(), "home": os.environ.get("HOME"), "tmpdir": os.environ.get("TMPDIR"),
            "found": [path for path in paths if os.path.exists(path)],
            "entries": {folder: sorted(os.listdir(folder)) for folder in folders if os.path.isdir(folder)}}


def listening(host: Host) -> set[str]:
    """The addresses that the processes of ``host`` listen on (TCP)."""
    import psutil

    found = set()
    for pid in in_namespaces({host.namespace()}):
        with contextlib.suppress(psutil.Error):
            found |= {c.laddr.ip for c in psutil.Process(pid).net_connections("tcp") if c.status == psutil.CONN_LISTEN}
    return found


def workers_at(client) -> set[str]:
    """The addresses (hosts) of the scheduler's workers."""
    return {address.removeprefix("tcp://").rsplit(":", 1)[0] for address in client.scheduler_info()["workers"]}


def answers(endpoint: str) -> bool:
    """Whether an HTTP server answers at ``endpoint`` (no proxy asked)."""
    try:
        urllib.request.build_opener(urllib.request.ProxyHandler({})).open(endpoint, timeout=2)
        return True
    except OSError:
        return False


def _until(check, seconds: float, what: str) -> None:
    """Return once ``check()`` holds; TimeoutError naming ``what`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {seconds:.0f} s for {what}")
        time.sleep(0.1)


def host_environment(given: dict[str, str]) -> dict[str, str]:
    """The environment of a host's processes: this one's (the software's set-up) without
    the client's places, credentials and dolb settings, plus ``given``; ``HOME`` and
    ``TMPDIR`` in the host's private ``/tmp``; the checkout first on ``PYTHONPATH``."""
    private = ("AWS_", "DOLB_", "XDG_", "FSSPEC_", "BOTO_", "DASK_")
    kept = {k: v for k, v in os.environ.items()
            if not k.startswith(private) and k not in {"HOME", "TMPDIR", "TMP", "TEMP", "PWD", "OLDPWD"}}
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return kept | {"HOME": "/tmp/home", "TMPDIR": "/tmp", "PYTHONPATH": path} | given


@contextlib.contextmanager
def emulated_hosts(folder: Path, workers: int = 2, hidden: tuple[Path, ...] = (),
                   without_credentials: tuple[str, ...] = ()) -> Iterator[Hosts]:
    """The S3 server, the scheduler and ``workers`` worker hosts, each in namespaces of
    its own (see the module's docstring), every host hiding the client's ``/tmp``, home
    and the folders ``hidden`` (the data folders); the worker hosts whose addresses are
    in ``without_credentials`` start without the store's credentials. Yields once every
    worker has joined; every host is stopped at the end, also on failure. ``folder``:
    the client's folder for the hosts' logs."""
    if reason := hosts_unavailable():
        raise RuntimeError(reason)
    hide = outermost({Path("/tmp").resolve(), Path.home().resolve(), *(Path(p).resolve() for p in hidden)})
    s3 = S3Server(f"http://{S3_ADDRESS}:{free_port(S3_ADDRESS)}")
    scheduler = f"tcp://{SCHEDULER_ADDRESS}:{free_port(SCHEDULER_ADDRESS)}"
    hosts = Hosts(folder, hide, s3, scheduler)
    try:
        port = s3.endpoint.rsplit(":", 1)[1]
        hosts.start(S3_ADDRESS, [sys.executable, "-m", "moto.server", "-H", S3_ADDRESS, "-p", port], {})
        hosts.start(SCHEDULER_ADDRESS, [sys.executable, "-c", "from distributed.cli.dask_scheduler import main; main()",
                                        "--host", SCHEDULER_ADDRESS, "--port", scheduler.rsplit(":", 1)[1],
                                        "--no-dashboard", "--dashboard-address", f"{SCHEDULER_ADDRESS}:0"], {})
        _until(lambda: hosts.check_running({S3_ADDRESS}) or answers(s3.endpoint), START_SECONDS,
               f"the S3 server at {s3.endpoint}")
        for address in WORKER_ADDRESSES[:workers]:
            hosts.start_worker(address, credentials=address not in without_credentials, wait=False)
        hosts.wait_for_workers()
        yield hosts
    finally:
        hosts.stop()
