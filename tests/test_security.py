"""The embedded cluster serves nothing it is not asked for: a scan of every port its
processes listen on, a client without its credentials refused; and a sweep on a
running scheduler that uses TLS with certificates from files."""

import asyncio
import socket
import textwrap

import psutil
import pytest
from distributed import Client
from distributed.security import Security

from dolb.cli import main
from dolb.errors import ConfigError
from dolb.execution.cluster import connect
from dolb.execution.sweep import run_sweep
from dolb.options import RunOptions
from tests.conftest import assert_same, dask_processes

pytestmark = pytest.mark.e2e


def listeners() -> set[tuple[int, str, int]]:
    """(pid, address, port) of every TCP listener of this process and its descendants."""
    me = psutil.Process()
    found = set()
    for process in (me, *me.children(recursive=True)):
        try:
            connections = process.net_connections(kind="tcp")
        except psutil.NoSuchProcess:
            continue
        found |= {(process.pid, c.laddr.ip, c.laddr.port) for c in connections if c.status == psutil.CONN_LISTEN}
    return found


def http_answer(port: int) -> bytes:
    """The first bytes a listener sends back to a plain HTTP request (b"" if none)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        try:
            return conn.recv(64)
        except (ConnectionResetError, TimeoutError):
            return b""


def scan(before: set) -> list[tuple[int, str, int]]:
    """The cluster's listeners, checked: loopback only, no HTTP answer on any."""
    opened = sorted(listeners() - before)
    assert opened, "the cluster opened no listener"
    for pid, address, port in opened:
        assert address == "127.0.0.1", (pid, address, port)
        assert not http_answer(port).startswith(b"HTTP/"), f"port {port} of process {pid} answers HTTP"
    return opened


async def strangers_are_refused(address: str) -> None:
    """A client with other credentials, with none, or over plain TCP cannot connect.

    The clients run on this coroutine's own event loop: a synchronous ``Client`` would
    start an event-loop thread per attempt, and on a loaded machine such a thread can miss
    distributed's 10 s start-up deadline, which would fail the test for the wrong reason.
    """
    attempts = [(address, Security.temporary()), (address, None), (address.replace("tls://", "tcp://"), None)]
    for target, security in attempts:  # other credentials, none, or no TLS at all
        client = Client(target, security=security, timeout="3s", asynchronous=True)
        with pytest.raises((OSError, TimeoutError, TypeError)):
            await client
        await client.close()


def test_the_embedded_cluster_serves_no_http_and_refuses_strangers():
    before = listeners()
    with connect(workers=2) as client:
        client.wait_for_workers(2)
        opened = scan(before)
        # scheduler, two nannies and two workers; no HTTP server among them
        assert len(opened) == 5, opened
        address = client.scheduler.address
        assert address.startswith("tls://127.0.0.1:")
        asyncio.run(strangers_are_refused(address))
        client.restart()  # workers their nannies start again stay closed too
        client.wait_for_workers(2)
        scan(before)
        assert client.submit(sum, [1, 2]).result() == 3


@pytest.fixture
def tls_files(tmp_path):
    """A certificate authority, a certificate and its key, as PEM files."""
    credentials = Security.temporary()
    files = {}
    for name, pem in (("ca", credentials.tls_ca_file), ("cert", credentials.tls_scheduler_cert),
                      ("key", credentials.tls_scheduler_key)):
        files[name] = tmp_path / f"{name}.pem"
        files[name].write_text(pem)
        files[name].chmod(0o600)
    return files


def test_a_sweep_on_a_tls_scheduler_with_certificates_from_files(small_pipeline, tls_files, small_run, tmp_path):
    tls = ["--protocol", "tls", "--tls-ca-file", str(tls_files["ca"]), "--tls-cert", str(tls_files["cert"]),
           "--tls-key", str(tls_files["key"])]
    cluster = tmp_path / "cluster.toml"
    with dask_processes(tmp_path, *tls) as scheduler_file:
        cluster.write_text(textwrap.dedent(f"""\
            kind = "scheduler"
            scheduler_file = "{scheduler_file}"
            [tls]
            ca_file = "{tls_files['ca']}"
            cert = "{tls_files['cert']}"
            key = "{tls_files['key']}"
            """))
        remote = run_sweep(small_pipeline, tmp_path / "tls", RunOptions(cluster=cluster, progress=False))
        bare = tmp_path / "bare.toml"
        bare.write_text(f'kind = "scheduler"\nscheduler_file = "{scheduler_file}"\n')
        with pytest.raises(ConfigError, match="cannot reach the Dask scheduler at"), connect(cluster=bare):
            pass
    assert remote.n_computed == 60
    assert_same(tmp_path / "tls", small_run)


def test_tls_files_that_do_not_exist_are_one_line(small_pipeline, tmp_path, capsys):
    cluster = tmp_path / "cluster.toml"
    cluster.write_text('kind = "scheduler"\naddress = "tls://127.0.0.1:1"\n[tls]\nca_file = "no.pem"\ncert = "c.pem"\n')
    assert main(["run", str(small_pipeline), "--out", str(tmp_path / "out"), "--cluster", str(cluster)]) == 2
    assert capsys.readouterr().err.startswith(f"dolb: error: {cluster}: tls.ca_file: ")
    assert not (tmp_path / "out").exists()
