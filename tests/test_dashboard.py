"""Dask's dashboard and performance report: ``--dashboard`` makes the embedded cluster
serve the dashboard on 127.0.0.1 and prints its link (without it no port answers HTTP,
see tests/test_security.py); the link of a running scheduler's dashboard is printed; and
``--performance-report`` writes one HTML file that loads nothing from elsewhere."""

import re
import urllib.request
from html.parser import HTMLParser

import pytest
from distributed import LocalCluster

from dolb.cli import main
from dolb.execution.cluster import connect
from tests.test_security import http_answer, listeners

pytestmark = pytest.mark.e2e

LINK = re.compile(r"^dolb: Dask dashboard at (http://127\.0\.0\.1:(\d+)/status)$", re.MULTILINE)


def answer(link: str) -> tuple[int, bytes]:
    """Status and body of an HTTP GET on ``link``."""
    with urllib.request.urlopen(link, timeout=30) as response:
        return response.status, response.read()


def test_the_embedded_cluster_serves_its_dashboard_on_loopback_when_asked(capsys):
    before = listeners()
    with connect(workers=1, dashboard=True) as client:
        client.wait_for_workers(1)
        link, port = LINK.search(capsys.readouterr().err).groups()
        status, body = answer(link)
        assert status == 200 and b"<html" in body.lower()
        opened = listeners() - before
        assert {address for _, address, _ in opened} == {"127.0.0.1"}
        serving = {listening for _, _, listening in opened if http_answer(listening).startswith(b"HTTP/")}
        assert serving == {int(port)}  # the scheduler's dashboard; the workers serve nothing
        assert client.submit(sum, [1, 2]).result() == 3


def test_the_link_of_a_running_schedulers_dashboard_is_printed(capsys):
    common = {"n_workers": 1, "threads_per_worker": 1, "processes": False, "protocol": "tcp://", "host": "127.0.0.1"}
    with LocalCluster(dashboard_address="127.0.0.1:0", **common) as cluster:
        with connect(scheduler=cluster.scheduler_address):
            link, port = LINK.search(capsys.readouterr().err).groups()
        assert int(port) == cluster.scheduler.services["dashboard"].port
        assert answer(link)[0] == 200
    with LocalCluster(scheduler_kwargs={"dashboard": False}, **common) as cluster:
        with connect(scheduler=cluster.scheduler_address, dashboard=True):
            pass
        assert capsys.readouterr().err == f"dolb: no dashboard of the scheduler at {cluster.scheduler_address} answers\n"


class ExternalResources(HTMLParser):
    """The addresses of the scripts, style sheets, images and frames a page loads from
    elsewhere (``http:``, ``https:`` or ``//`` addresses): what it needs to be drawn.
    (Dask's report links its favicon on docs.dask.org; offline a browser goes without.)"""

    LOADED = {("script", "src"), ("img", "src"), ("iframe", "src"), ("link", "href")}

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "link" and named.get("rel") != "stylesheet":
            return
        for name, value in attrs:
            if (tag, name) in self.LOADED and value and re.match(r"(https?:)?//", value.strip()):
                self.found.append(f"<{tag} {name}={value}>")


def test_the_performance_report_is_one_self_contained_file(small_pipeline, tmp_path, capsys):
    report = tmp_path / "performance.html"
    argv = ["run", str(small_pipeline), "--out", str(tmp_path / "out"), "--workers", "1", "--no-progress",
            "--performance-report", str(report), "--dashboard"]
    assert main(argv) == 0
    assert LINK.search(capsys.readouterr().err)  # dolb run --dashboard says where it is
    text = report.read_text(encoding="utf-8")
    parser = ExternalResources()
    parser.feed(text)
    assert parser.found == []
    assert "<html" in text.lower() and "Bokeh" in text  # a page, BokehJS inside
    assert "run_batch" in text  # the sweep's tasks
