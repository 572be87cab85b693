"""A study with its dataset stores and its result folders on a real S3-protocol server
(tests/s3_server.py), as on a cluster without a shared file system: bit-identical to the
same study run locally, a client killed mid-run and resumed (the parts it left
uncommitted removed), and every command on URLs, printing them with their scheme.

One scheduler and two workers serve every run of the module (started once: a cluster's
start is most of a small run's time); the nights are run once and shared by the tests.
"""

import contextlib
import io
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from dolb import read_results
from dolb.cli import main
from dolb.data.sources.generators import materialize
from dolb.results.history import read_records
from dolb.results.query import rows
from dolb.results.store import ResultStore
from tests.conftest import SMALL_IRMA, assert_same, dask_processes, stored_values

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parents[1]
GENERATED = 'generator = "irma"\nparams = { n_sequences = 12, length = 60, n_test = 200 }'
"""The dataset of SMALL_IRMA, replaced by its stores (train and test) in this module's pipelines."""
N_CELLS = 60

KILLED_AT_SECOND_COMMIT = """
import os, signal, sys
from dolb.execution import gather
from dolb.results.store import ResultStore

gather.COMMIT_SECONDS = 0.0  # a manifest after every task
commit, commits = ResultStore.commit, []

def commit_or_die(self, parts, *args, **kwargs):
    commits.append(parts)
    if len([found for found in commits if found]) == 2:
        os.kill(os.getpid(), signal.SIGKILL)  # killed before its second manifest is written
    return commit(self, parts, *args, **kwargs)

ResultStore.commit = commit_or_die
from dolb.cli import main
sys.exit(main(sys.argv[1:]))
"""
"""``dolb run`` killed with SIGKILL as it commits its second part (a sweep of two workers
has at least three tasks: one per worker is cut before any cell is timed, each at most a
32nd of the work): one part committed, the rest of what the workers wrote left
uncommitted."""


def pipeline(folder: Path, name: str, train: str, test: str) -> Path:
    """SMALL_IRMA reading the stores ``train`` and ``test``."""
    path = folder / f"{name}.toml"
    path.write_text(textwrap.dedent(SMALL_IRMA).replace(GENERATED, f'train = "{train}"\ntest = "{test}"'))
    return path


def dolb(*argv: str) -> tuple[int, str]:
    """``dolb ARGV`` in this process: its exit status and what it printed."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = main([str(arg) for arg in argv])
    return status, printed.getvalue()


def uncommitted(url: str) -> set[str]:
    """The parts in the folder that no manifest commits."""
    store = ResultStore(url)
    return store.present() - set(store.committed())


@pytest.fixture(scope="module")
def study(s3_server, tmp_path_factory):
    """The study's stores on the server and locally; a local run; night 1 on the server;
    night 2 killed at its second commit, then resumed; all on one scheduler."""
    import s3fs

    folder = tmp_path_factory.mktemp("s3-study")
    bucket = s3_server.bucket()
    stores = materialize("irma", {"n_sequences": 12, "length": 60, "n_test": 200}, 11, folder / "data")
    fs = s3fs.S3FileSystem()
    for part, dataset in stores.items():
        fs.put(str(dataset.path), f"{bucket}/data/irma/{part}", recursive=True)
    local = pipeline(folder, "local", stores["train"].path, stores["test"].path)
    remote = pipeline(folder, "s3", f"{bucket}/data/irma/train", f"{bucket}/data/irma/test")
    night_1, night_2 = f"{bucket}/runs/night-1", f"{bucket}/runs/night-2"
    with dask_processes(folder) as scheduler:
        where = ("--scheduler", scheduler, "--no-progress")
        assert dolb("run", local, "--out", folder / "local", *where)[0] == 0
        status, printed = dolb("run", remote, "--out", night_1, *where)
        assert status == 0, printed
        killed = subprocess.run([sys.executable, "-c", KILLED_AT_SECOND_COMMIT, "run", remote, "--out", night_2,
                                 *map(str, where)], capture_output=True, text=True, env={**os.environ,
                                 "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])})
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        left = SimpleNamespace(uncommitted=uncommitted(night_2), committed=len(ResultStore(night_2).committed()))
        resumed = dolb("run", remote, "--out", night_2, *where)
        yield SimpleNamespace(bucket=bucket, folder=folder, local=folder / "local", remote=remote, where=where,
                              night_1=night_1, night_2=night_2, printed=printed, left=left, resumed=resumed)


def test_a_study_on_s3_is_bit_identical_to_the_same_study_run_locally(study):
    assert_same(study.night_1, study.local)
    assert_same(study.night_2, study.local)
    assert f"{N_CELLS} cells: 0 already stored, {N_CELLS} computed, 0 failed" in study.printed
    assert f"results in {study.night_1} (run " in study.printed
    assert f"Figure: {study.night_1}/report/02-curve-cumulative_loss-curve.png" in study.printed
    assert f"Page: {study.night_1}/report/index.html" in study.printed
    assert ResultStore(study.night_1).fs.isfile(f"{study.night_1}/report/index.html")


def test_a_client_killed_mid_run_resumes_and_the_parts_it_left_uncommitted_are_removed(study):
    left = study.left
    assert left.committed == 1 and left.uncommitted  # what the kill left: plain readers saw those rows too
    status, printed = study.resumed
    assert status == 0, printed
    stored = len(rows(ResultStore(study.night_2)))
    assert f"{N_CELLS} cells: " in printed and " 0 failed" in printed
    assert not uncommitted(study.night_2) and not left.uncommitted & ResultStore(study.night_2).present()
    plain = pd.read_parquet(f"{study.night_2}/results")  # each cell once, as dolb's readers see them
    assert len(plain) == stored == len(stored_values(study.local))
    assert not plain.duplicated(["cell_id", "conversion", "n_train", "metric"]).any()
    assert_same(study.night_2, study.local)


def test_a_rerun_on_s3_computes_nothing(study):
    status, printed = dolb("run", study.remote, "--out", study.night_1, *study.where)
    assert status == 0 and f"{N_CELLS} cells: {N_CELLS} already stored, 0 computed, 0 failed" in printed
    assert f"Page: {study.night_1}/report/index.html" in printed


def test_reproduce_a_night_on_s3(study, tmp_path):
    again = tmp_path / "reproduced"
    status, printed = dolb("reproduce", study.night_1, "--out", again, "--data-cache", tmp_path / "cache",
                           "--scheduler", study.where[1])
    assert status == 0, printed
    assert "values bit-identical" in printed
    assert_same(again, study.night_1)
    assert read_records(ResultStore(again))[-1]["options"]["data_cache"] == str(tmp_path / "cache")


def test_compare_two_nights_on_s3_with_their_history(study):
    status, printed = dolb("compare", study.night_2, study.night_1, "--history", study.night_1, study.night_2)
    assert status == 0, printed
    out = f"{study.night_2}/compare"  # the default: beside the night judged
    assert f"Page: {out}/compare.html (also compare.md" in printed
    written = {Path(p).name for p in ResultStore(study.night_2).fs.ls(out)}
    assert {"compare.csv", "compare.html", "compare.md", "trend.png"} <= written
    assert pd.read_csv(f"{out}/compare.csv")["verdict"].eq("unchanged").all()


def test_export_to_and_from_s3(study, tmp_path):
    status, printed = dolb("export", study.night_1)
    assert status == 0 and printed.endswith(f"rows written to {study.night_1}/results.csv\n"), printed
    into_bucket = f"{study.bucket}/exports/night-1.csv"
    assert dolb("export", study.night_1, "--to", into_bucket)[0] == 0
    assert dolb("export", study.night_1, "--to", tmp_path / "night-1.csv")[0] == 0
    assert dolb("export", study.local, "--to", f"{study.bucket}/exports/local.csv")[0] == 0
    exported = [pd.read_csv(where) for where in (f"{study.night_1}/results.csv", into_bucket, tmp_path / "night-1.csv")]
    for frame in exported[1:]:
        pd.testing.assert_frame_equal(frame, exported[0])
    deterministic = ["cell_id", "conversion", "n_train", "metric", "value"]
    pd.testing.assert_frame_equal(pd.read_csv(f"{study.bucket}/exports/local.csv")[deterministic],
                                  exported[0][deterministic], check_exact=True)
    assert dolb("export", study.night_1, "--to", f"{study.bucket}/exports")[0] == 2  # a folder there


def test_status_report_plan_and_verify_on_urls(study):
    status, printed = dolb("status", study.night_1)
    assert status == 0 and f"{N_CELLS} cells stored, 0 failed" in printed
    assert len(read_results(study.night_1)) == len(stored_values(study.local))
    status, printed = dolb("report", study.night_2)
    assert status == 0 and printed.rstrip().endswith(f"Page: {study.night_2}/report/index.html")
    assert f"Figure: {study.night_2}/report/" in printed
    status, printed = dolb("plan", study.remote, "--out", study.night_1)
    assert status == 0 and f"{N_CELLS} stored" in printed and "0 to compute" in printed
    status, printed = dolb("verify", f"{study.bucket}/data/irma/train")
    assert status == 0 and printed.startswith(f"{study.bucket}/data/irma/train: ok (720 rows, ")


def documented_duckdb_recipe() -> str:
    """The DuckDB block of docs/guide/object-store.md: the code block after its marker."""
    page = (ROOT / "docs" / "guide" / "object-store.md").read_text(encoding="utf-8")
    after = page.split("<!-- tests/test_object_store_study.py runs this block as written -->", 1)[1]
    return after.split("```python\n", 1)[1].split("```", 1)[0]


def test_duckdb_reads_the_results_on_s3_as_the_guide_shows(study):
    recipe = documented_duckdb_recipe().replace("s3://bucket/runs/irma", study.night_1)
    found = {}
    exec(recipe, found)
    frame = found["frame"]
    stored = rows(ResultStore(study.night_1), "metric = 'test_mse' AND n_train = 60")
    expected = stored.groupby("learner")["cell_id"].nunique()
    assert dict(zip(frame["learner"], frame["cells"])) == expected.to_dict()


def test_a_study_reads_its_run_where_it_is_on_s3(study, capsys):
    """``dolb study NAME URL`` reads the folder behind the URL (not a path made of it):
    the small pipeline's rows are read there, and found to hold none of the study's
    experiments, as the local run's are."""
    from dolb.studies.study import ResultRun

    assert ResultRun(study.night_1).experiments == ResultRun(study.local).experiments == {"table", "curve"}
    assert dolb("study", "irma", study.night_1)[0] == 2
    assert capsys.readouterr().err == (f"dolb: error: {study.night_1}: not a run of the study irma "
                                       "(pipelines/irma.toml): it holds none of its experiments\n")
