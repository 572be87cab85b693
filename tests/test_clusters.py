"""Clusters other than the embedded LocalCluster: a scheduler and workers started as
separate processes from the command line, cluster files, and the version check."""

import getpass
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dolb.errors import ConfigError
from dolb.execution.cluster import connect, read_cluster_file
from dolb.execution.sweep import run_sweep
from dolb.options import RunOptions
from tests.conftest import assert_same, dask_processes, workers_named

pytestmark = pytest.mark.e2e


@pytest.fixture
def command_line_cluster(tmp_path):
    """`dask scheduler` and `dask worker` processes, as on a real cluster, fresh (their
    workers have run nothing yet); yields the scheduler file."""
    with dask_processes(tmp_path) as scheduler_file:
        yield scheduler_file


@pytest.fixture(scope="module")
def running_cluster(tmp_path_factory):
    """Processes as those of :func:`command_line_cluster`, started once for the tests of
    this module that only run sweeps on them (a sweep leaves workers as able to run the
    next); yields the scheduler file."""
    with dask_processes(tmp_path_factory.mktemp("running")) as scheduler_file:
        yield scheduler_file


def test_sweep_on_a_command_line_cluster_equals_local(small_pipeline, running_cluster, small_run, tmp_path):
    remote = run_sweep(small_pipeline, tmp_path / "remote", RunOptions(scheduler=str(running_cluster), progress=False))
    assert remote.n_computed == 60
    assert_same(tmp_path / "remote", small_run)


HEAVY = ("dolb.experiment", "dolb.evaluation", "dolb.learners", "dolb.data", "dolb.results", "pandas", "pyarrow")
"""Modules the scheduler has no need of (a prefix each)."""


def test_a_sweep_leaves_the_scheduler_light_and_the_workers_quiet(small_pipeline, command_line_cluster, tmp_path):
    """The scheduler unpickles the sweep's tasks without importing dolb's learners or
    cells (a task's batch is bytes), and the workers, started without dolb's quiet
    settings, stop profiling and tick once a second. (The client draws the reports: as
    tasks, they would import dolb's readers of results.)"""
    from distributed import Client

    # functions sent as values (a lambda): sent by name, the scheduler would import this module
    quiet = lambda dask_worker: ("profile" in dask_worker.periodic_callbacks,  # noqa: E731
                                 dask_worker.periodic_callbacks["tick"].callback_time)
    heavy = lambda: [name for name in __import__("sys").modules if name.startswith(HEAVY)]  # noqa: E731
    with Client(scheduler_file=str(command_line_cluster)) as client:
        assert all(found == (True, 20) for found in client.run(quiet).values())  # Dask's defaults
    summary = run_sweep(small_pipeline, tmp_path / "out", RunOptions(scheduler=str(command_line_cluster),
                                                                     gather="client", progress=False))
    assert summary.n_computed == 60
    with Client(scheduler_file=str(command_line_cluster)) as client:
        assert client.run_on_scheduler(heavy) == []
        assert all(found == (False, 1000) for found in client.run(quiet).values())


def test_cluster_file_of_a_running_scheduler(small_pipeline, running_cluster, tmp_path):
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(f'kind = "scheduler"\nscheduler_file = "{running_cluster}"\n')
    summary = run_sweep(small_pipeline, tmp_path / "out", RunOptions(cluster=cluster, progress=False))
    assert summary.n_computed == 60


def test_local_cluster_file(small_pipeline, tmp_path):
    cluster = tmp_path / "cluster.toml"
    cluster.write_text('kind = "local"\nworkers = 1\n')
    with connect(cluster=cluster) as client:
        assert len(client.scheduler_info()["workers"]) == 1


@pytest.mark.parametrize(
    "text, message",
    [
        ('kind = "mainframe"', "kind: 'mainframe' is not one of local, scheduler"),
        ('kind = "slrum"', r"kind: .* \(did you mean 'slurm'\?\)"),
        ("workers = 2", "kind: missing required key"),
        ('kind = "local"\nhosts = ["a"]', r"hosts: unknown key for a local cluster \(allowed: kind, options, workers\)"),
        ('kind = "local"\nworker = 2', r"worker: unknown key for a local cluster \(did you mean 'workers'\?\)"),
        ('kind = "local"\nworkers = "abc"', "workers: expected a whole number, got 'abc'"),
        ('kind = "local"\nworkers = true', "workers: expected a whole number, got true"),
        ('kind = "local"\nworkers = 0', "workers: expected a positive whole number, got 0"),
        ('kind = "pbs"\njobs = 1.5', "jobs: expected a whole number, got 1.5"),
        ('kind = "scheduler"', "give exactly one of address or scheduler_file"),
        ('kind = "ssh"\nhosts = ["only-one"]', "hosts: an SSH cluster needs a list of hosts"),
        ('kind = "local"\noptions = 3', "options: expected a table"),
        ('kind = "local"\n[options]\nmemory_limt = "2 GB"', r"options.memory_limt: .* \(did you mean 'memory_limit'\?\)"),
        ('kind = "local"\n[options]\nbogus = 1', "options.bogus: not an option of LocalCluster, Nanny or Worker$"),
        ('kind = "local"\n[options]\nthreads_per_worker = 2', "options.threads_per_worker: set by dolb"),
        ("kind = ", "not valid TOML"),
    ],
)
def test_bad_cluster_files(tmp_path, text, message):
    path = tmp_path / "cluster.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as error:
        read_cluster_file(path)
    assert str(error.value).startswith(f"{path}: ")
    assert "\n" not in str(error.value)


def test_example_cluster_files_are_valid():
    examples = sorted((Path(__file__).parents[1] / "cluster").glob("*.toml"))
    assert examples
    for path in examples:
        assert read_cluster_file(path).kind == path.stem, path


def test_cluster_options_refused_by_the_cluster_class_are_one_line(tmp_path):
    pytest.importorskip("dask_jobqueue")
    path = tmp_path / "cluster.toml"
    path.write_text('kind = "slurm"\n[options]\ncores = 1\nmemory = "1 GB"\nbogus = 1\n')
    with pytest.raises(ConfigError, match="options: Got unexpected keyword argument 'bogus'") as error, \
            connect(cluster=path):
        pass
    assert str(error.value).startswith(f"{path}: ")
    assert "\n" not in str(error.value)


def test_unreachable_scheduler_is_a_clear_error(monkeypatch):
    from dolb.execution import cluster

    monkeypatch.setattr(cluster, "CONNECT_SECONDS", 2)
    with pytest.raises(ConfigError, match="cannot reach the Dask scheduler"), connect(scheduler="tcp://127.0.0.1:1"):
        pass


def test_version_mismatch_is_a_clear_error(monkeypatch):
    from dolb.execution import environment

    with connect(workers=1) as client:
        monkeypatch.setattr(environment, "package_versions", lambda: {"numpy": "0.0.1"})
        with pytest.raises(ConfigError, match=r"runs numpy .*, the client 0.0.1"):
            environment.check_workers(client)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


SSHD = shutil.which("sshd") or ("/usr/sbin/sshd" if os.path.exists("/usr/sbin/sshd") else None)


@pytest.fixture
def ssh_server(tmp_path):
    """A private sshd on a free loopback port, accepting a key made for the test; yields
    (port, client key path, known_hosts path). Skips, saying why, where no sshd or asyncssh is installed."""
    if SSHD is None:
        pytest.skip("no SSH server here (Debian: apt-get install openssh-server)")
    pytest.importorskip("asyncssh", reason="SSH clusters need asyncssh: pip install 'dolb[ssh]'")
    key, host_key = tmp_path / "client_key", tmp_path / "host_key"
    for path in (key, host_key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    (tmp_path / "authorized_keys").write_text((tmp_path / "client_key.pub").read_text())
    port = free_port()
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(f"[127.0.0.1]:{port} {(tmp_path / 'host_key.pub').read_text()}")
    config = tmp_path / "sshd_config"
    config.write_text(textwrap.dedent(f"""\
        Port {port}
        ListenAddress 127.0.0.1
        HostKey {host_key}
        AuthorizedKeysFile {tmp_path / "authorized_keys"}
        PidFile {tmp_path / "sshd.pid"}
        PasswordAuthentication no
        PermitRootLogin prohibit-password
        StrictModes no
        UsePAM no
        AcceptEnv *
        """))
    os.makedirs("/run/sshd", exist_ok=True)  # privilege separation directory
    server = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.1)
    else:
        server.kill()
        pytest.fail(f"sshd did not start: {server.stderr.read().decode()[-500:]}")
    try:
        yield port, key, known_hosts
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_sweep_on_an_ssh_cluster_to_localhost(small_pipeline, ssh_server, small_run, tmp_path):
    port, key, known_hosts = ssh_server
    cluster = tmp_path / "ssh.toml"
    cluster.write_text(textwrap.dedent(f"""\
        kind = "ssh"
        hosts = ["127.0.0.1", "127.0.0.1"]

        [options]
        connect_options = {{ port = {port}, known_hosts = "{known_hosts}", client_keys = ["{key}"], username = "{getpass.getuser()}" }}
        remote_python = "{sys.executable}"
        scheduler_options = {{ host = "127.0.0.1", port = 0, dashboard_address = "127.0.0.1:0" }}
        worker_options = {{ n_workers = 2, host = "127.0.0.1" }}
        """))
    summary = run_sweep(small_pipeline, tmp_path / "ssh", RunOptions(cluster=cluster, progress=False))
    assert summary.n_computed == 60 and summary.n_failed == 0
    # the workers started over SSH wrote their parts into the shared folder themselves
    assert summary.gather == "workers" and len(workers_named(tmp_path / "ssh")) == 2
    assert_same(tmp_path / "ssh", small_run)
    # a client-local folder: the rows travel back and the client writes them
    back = run_sweep(small_pipeline, tmp_path / "back", RunOptions(cluster=cluster, progress=False, gather="client"))
    assert back.gather == "client" and len(list((tmp_path / "back" / "results").glob("part-*"))) == 1
    assert len(workers_named(tmp_path / "back")) == 2  # computed by the workers all the same
    assert_same(tmp_path / "back", small_run)


SLURMCTLD = shutil.which("slurmctld") or ("/usr/sbin/slurmctld" if os.path.exists("/usr/sbin/slurmctld") else None)


@pytest.fixture
def one_node_slurm(tmp_path, monkeypatch):
    """munge, slurmctld and slurmd on this machine (loopback only, private config and
    state); yields the SLURM_CONF path. Skips, saying why, where Slurm is not installed."""
    if SLURMCTLD is None or os.geteuid() != 0:
        pytest.skip("no one-node Slurm here (Debian, as root: apt-get install slurmctld slurmd slurm-client munge)")
    pytest.importorskip("dask_jobqueue", reason="SLURM clusters need dask-jobqueue: pip install 'dolb[jobqueue]'")
    if subprocess.run(["pgrep", "-x", "munged"], capture_output=True).returncode != 0:
        for folder in ("/etc/munge", "/run/munge", "/var/lib/munge", "/var/log/munge"):
            os.makedirs(folder, exist_ok=True)
        key = "/etc/munge/munge.key"
        if not os.path.exists(key):
            with open(key, "wb") as handle:
                handle.write(os.urandom(1024))
            os.chmod(key, 0o400)
        subprocess.run(["chown", "-R", "munge:munge", "/etc/munge", "/run/munge", "/var/lib/munge", "/var/log/munge"])
        subprocess.run(["su", "-s", "/bin/sh", "munge", "-c", "munged"], check=True)
    host = socket.gethostname()
    for folder in ("state", "spool", "logs"):
        (tmp_path / folder).mkdir()
    conf = tmp_path / "slurm.conf"
    conf.write_text(textwrap.dedent(f"""\
        ClusterName=dolbtest
        SlurmctldHost={host}(127.0.0.1)
        SlurmctldPort={free_port()}
        SlurmdPort={free_port()}
        SlurmUser=root
        AuthType=auth/munge
        StateSaveLocation={tmp_path / "state"}
        SlurmdSpoolDir={tmp_path / "spool"}
        SlurmctldPidFile={tmp_path / "slurmctld.pid"}
        SlurmdPidFile={tmp_path / "slurmd.pid"}
        SlurmctldLogFile={tmp_path / "slurmctld.log"}
        SlurmdLogFile={tmp_path / "slurmd.log"}
        ProctrackType=proctrack/linuxproc
        TaskPlugin=task/none
        SelectType=select/cons_tres
        SelectTypeParameters=CR_Core
        MpiDefault=none
        ReturnToService=2
        JobCompType=jobcomp/none
        AccountingStorageType=accounting_storage/none
        NodeName={host} NodeAddr=127.0.0.1 CPUs=2 RealMemory=4000 State=UNKNOWN
        PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
        """))
    monkeypatch.setenv("SLURM_CONF", str(conf))
    daemons = [subprocess.Popen([SLURMCTLD, "-D", "-f", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)]
    time.sleep(2)
    daemons.append(subprocess.Popen(["slurmd", "-D", "-f", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT))
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            state = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True).stdout.strip()
            if state == "idle":
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"the Slurm node did not come up (state {state!r}); see {tmp_path}/slurmctld.log")
        yield conf
    finally:
        for daemon in reversed(daemons):
            daemon.terminate()
            daemon.wait(timeout=20)


def test_sweep_on_a_one_node_slurm(small_pipeline, one_node_slurm, small_run, tmp_path):
    cluster = tmp_path / "slurm.toml"
    cluster.write_text(textwrap.dedent(f"""\
        kind = "slurm"
        jobs = 1

        [options]
        queue = "debug"
        cores = 2
        processes = 2
        memory = "2GB"
        walltime = "00:10:00"
        python = "{sys.executable}"
        local_directory = "{tmp_path}"
        log_directory = "{tmp_path / 'logs'}"
        scheduler_options = {{ host = "127.0.0.1", dashboard_address = "127.0.0.1:0" }}
        worker_extra_args = ["--host", "127.0.0.1"]
        """))
    summary = run_sweep(small_pipeline, tmp_path / "slurm", RunOptions(cluster=cluster, progress=False))
    assert summary.n_computed == 60 and summary.n_failed == 0
    assert summary.gather == "workers" and len(workers_named(tmp_path / "slurm")) == 2  # the job's workers wrote
    assert_same(tmp_path / "slurm", small_run)
