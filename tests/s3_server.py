"""A real S3-protocol server on loopback for the object-store tests.

CI starts moto's server before the tests (``.ci/run``) and says where in
``DOLB_TEST_S3_ENDPOINT``; without it, the ``s3_server`` fixture starts one of its own
(``moto_server`` from the test extra) for the session. Either way the tests talk to it
over HTTP through s3fs, as a cluster without a shared file system would talk to its
bucket: worker processes find it through the ``AWS_*`` environment the fixture sets,
which they inherit.
"""

import os
import subprocess
import sys
import time
import urllib.request
import uuid
from dataclasses import dataclass

import pytest

from dolb.errors import ConfigError

ENDPOINT_VARIABLE = "DOLB_TEST_S3_ENDPOINT"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_DEFAULT_REGION": "us-east-1"}


def free_port() -> int:
    """A free TCP port on loopback."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_moto(port: int) -> subprocess.Popen:
    """moto's S3 server on loopback ``port`` (the caller stops it)."""
    return subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_until_up(endpoint: str, seconds: float = 60.0) -> None:
    """Return once an HTTP server answers at ``endpoint``; ConfigError after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.build_opener(urllib.request.ProxyHandler({})).open(endpoint, timeout=2)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise ConfigError(f"no S3 server answered at {endpoint} within {seconds:.0f} s") from None
            time.sleep(0.2)


@dataclass(frozen=True)
class S3Server:
    """Where the server listens and the environment a client needs to reach it."""

    endpoint: str

    @property
    def environment(self) -> dict[str, str]:
        return {**CREDENTIALS, "AWS_ENDPOINT_URL": self.endpoint}

    def bucket(self) -> str:
        """A new empty bucket (each test its own); returns its ``s3://`` URL."""
        import s3fs

        name = f"dolb-{uuid.uuid4().hex[:12]}"
        s3fs.S3FileSystem(client_kwargs={"endpoint_url": self.endpoint}).mkdir(name)
        return f"s3://{name}"


@pytest.fixture(scope="session")
def s3_server():
    """The session's S3 server: CI's (``DOLB_TEST_S3_ENDPOINT``) or one started here."""
    pytest.importorskip("s3fs", reason="s3fs is not installed (the test extra installs it)")
    process = None
    endpoint = os.environ.get(ENDPOINT_VARIABLE)
    if not endpoint:
        pytest.importorskip("moto.server", reason="moto's server is not installed (the test extra installs it)")
        port = free_port()
        endpoint = f"http://127.0.0.1:{port}"
        process = start_moto(port)
    try:
        wait_until_up(endpoint)
        server = S3Server(endpoint)
        saved = {name: os.environ.get(name) for name in server.environment}
        os.environ.update(server.environment)
        yield server
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)


@pytest.fixture
def s3_bucket(s3_server) -> str:
    """A fresh bucket's ``s3://`` URL on the session's server."""
    return s3_server.bucket()
