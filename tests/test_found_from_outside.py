"""Faults, damage and mistakes found by trying dolb from outside, as a new or hostile
user would: each is one line on the console, exit status 2 and nothing written, or
says what it found (hardening, round 3)."""

import json
import os
import shutil
import textwrap

import pytest

from dolb.cli import main
from dolb.errors import ConfigError
from tests.conftest import SMALL_IRMA


@pytest.fixture
def pipeline(tmp_path):
    path = tmp_path / "small.toml"
    path.write_text(textwrap.dedent(SMALL_IRMA))
    return path


@pytest.fixture
def run_folder(small_run, tmp_path):
    """A copy of the session's finished result folder of the small IRMA pipeline, for a
    test to damage."""
    return shutil.copytree(small_run, tmp_path / "run")


def one_line(capsys, message):
    """The command printed ``message`` on one line of standard error, and nothing else."""
    err = capsys.readouterr().err
    assert err == f"dolb: error: {message}\n", err


def the_record(folder):
    (path,) = (folder / "runs").glob("*.json")
    return path


# ------------------------------------------------------------------ dolb reproduce
def test_a_record_without_its_pipeline_is_refused_before_any_cell_runs(run_folder, tmp_path, capsys):
    path = the_record(run_folder)
    record = json.loads(path.read_text())
    del record["pipeline_text"]
    path.write_text(json.dumps(record))
    again = tmp_path / "again"
    assert main(["reproduce", str(run_folder), "--out", str(again), "--workers", "1"]) == 2
    one_line(capsys, f"{path}: no pipeline_text recorded (a damaged or foreign run record); cannot reproduce this run")
    assert not again.exists()


@pytest.mark.parametrize("damage", ["truncated", "pages"])
def test_a_damaged_part_is_refused_before_any_cell_runs(damage, run_folder, tmp_path, capsys):
    part = sorted((run_folder / "results").glob("part-*.parquet"))[0]
    data = bytearray(part.read_bytes())
    if damage == "truncated":
        part.write_bytes(data[: len(data) // 2])
        reason = f"{part}: unreadable result part (Parquet magic bytes not found in footer."
    else:  # the footer whole, the pages between garbled: found only when the values are read
        data[8 : len(data) // 4] = bytes(b ^ 0x55 for b in data[8 : len(data) // 4])
        part.write_bytes(data)
        reason = f"{part}: damaged result part ("
    again = tmp_path / "again"
    assert main(["reproduce", str(run_folder), "--out", str(again), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dolb: error: {reason}") and err.count("\n") == 1, err
    assert not again.exists()
    assert main(["report", str(run_folder)]) == 2  # and every reader says the same
    assert capsys.readouterr().err == err


# ------------------------------------------------------------------ where results and data go
@pytest.mark.parametrize("argv, message", [
    (["verify", "nosuch://x/y"], "nosuch://x/y: not a location dolb can open (Protocol not known: nosuch)"),
    (["status", "nosuch://x/y"], "nosuch://x/y: not a location dolb can open (Protocol not known: nosuch)"),
    (["run", "{pipeline}", "--out", "nosuch://x/y"], "nosuch://x/y: not a location dolb can open (Protocol not known: nosuch)"),
    (["compare", "nosuch://x", "{tmp}/out"],
     "nosuch://x/compare: not a location dolb can open (Protocol not known: nosuch)"),
    (["run", "{pipeline}", "--out", "{tmp}/out", "--data-cache", "nosuch://x"],
     "nosuch://x: not a location dolb can open (Protocol not known: nosuch)"),
    (["run", "{pipeline}", "--out", "{tmp}/out", "--data-cache", ""],
     "the data cache's name is empty (see --data-cache and $DOLB_DATA_CACHE)"),
    (["run", "{pipeline}", "--out", ""], "the result folder's name is empty (give a folder, e.g. --out runs/study)"),
    (["run", "{pipeline}", "--out", "  "], "the result folder's name is empty (give a folder, e.g. --out runs/study)"),
    (["status", ""], "the result folder's name is empty (give a folder, e.g. --out runs/study)"),
])
def test_a_place_dolb_cannot_use_is_one_line(argv, message, pipeline, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # an empty --out would have written here
    before = sorted(tmp_path.rglob("*"))
    fill = {"tmp": tmp_path, "pipeline": pipeline}
    assert main([a.format(**fill) for a in argv]) == 2
    one_line(capsys, message.format(**fill))
    assert sorted(tmp_path.rglob("*")) == before


def test_a_missing_package_for_a_url_is_named(capsys):
    import importlib.util

    if importlib.util.find_spec("s3fs"):
        pytest.skip("s3fs is installed here: the URL is valid")
    assert main(["verify", "s3://bucket/store"]) == 2
    one_line(capsys, "s3://bucket/store: Install s3fs to access S3")


@pytest.mark.parametrize("command", ["run", "reproduce"])
def test_results_in_memory_are_refused_on_the_command_line(command, pipeline, small_run, capsys):
    """They would vanish with the process, and the page printed would not exist."""
    argv = ["run", str(pipeline)] if command == "run" else ["reproduce", str(small_run)]
    assert main([*argv, "--out", "memory://x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dolb {command}: error: argument --out: memory://x: results in memory vanish when dolb "
                          "exits; give a folder or a URL of lasting storage") and err.count("\n") == 1, err


# ------------------------------------------------------------------ inputs
def test_an_svmlight_file_of_labels_only_is_refused(tmp_path, capsys):
    labels = tmp_path / "labels.svm"
    labels.write_text("1\n-1\n1\n")
    pipeline = tmp_path / "p.toml"
    pipeline.write_text(textwrap.dedent(f"""
        [pipeline]
        name = "labels"
        seed = 1
        [datasets.d]
        importer = "svmlight"
        params = {{ path = "{labels}" }}
        [experiments.e]
        dataset = "d"
        task = "binary"
        split = {{ scheme = "holdout", count = 1 }}
        checkpoints = [1]
        metrics = ["online_loss"]
        learners = [{{ learner = "perceptron" }}]
    """))
    assert main(["-q", "run", str(pipeline), "--out", str(tmp_path / "out"), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert f"svmlight file {labels}: 3 labels and no feature value on any line (a file of labels only?)" in err
    assert err.count("\n") == 1 and not (tmp_path / "out").exists()


@pytest.mark.parametrize("old, new, message", [
    ('{ learner = "irma", complexity = [3, 5], params = { basis = "legendre", domain_high = 3.0 } }',
     '{ learner = "irma", complexity = [3, 5], params = { basis = "legendre", domain_high = 3.0, stiffness = 1e12 } }',
     None),  # a float parameter may be written 1e12
    ('{ learner = "irma", complexity = [3, 5]', '{ learner = "irma", complexity = [3, 5.0]',
     "experiments.table.learners[0].complexity[1]: expected a whole number, got 5.0"),
    ('{ learner = "irma", complexity = [3, 5]', '{ learner = "irma", complexity = [3, 1e12]',
     "experiments.table.learners[0].complexity[1]: expected a whole number, got 1000000000000.0"),
    ('{ learner = "irma", complexity = [3, 5]', '{ learner = "irma", complexity = [3, 2000000]',
     "experiments.table.learners[0].complexity[1]: 2000000 is above the maximum 1000"),
    ("n_sequences = 12,", "n_sequences = 12.0,",
     "datasets.irma.params: generator 'irma', parameter 'n_sequences': expected a whole number, got 12.0"),
])
def test_whole_numbers_follow_one_rule(old, new, message, pipeline, tmp_path, capsys):
    """A learner's, a generator's and the pipeline's own integers are written as whole
    numbers (4.0 and 1e12 are floats); a size far beyond memory is refused at the check."""
    text = pipeline.read_text()
    assert old in text
    pipeline.write_text(text.replace(old, new, 1))
    status = main(["plan", str(pipeline), "--out", str(tmp_path / "out")])
    if message is None:
        assert status == 0
        return
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dolb: error: {pipeline}: ") and err.count("\n") == 1, err
    assert message in err, err


@pytest.mark.parametrize("params, message", [
    ('ladder_param = "kernel"', ".params.ladder_param: 'kernel' is a str parameter of 'lasvm'; a ladder sets a number"),
    ('ladder_param = "degree"', ": learner 'oms_lasvm', parameter 'ladder': 'double' sets start·2^(level−1), not the "
                                "whole number 'degree' takes; use ladder = \"step\""),
])
def test_an_oms_ladder_on_a_parameter_it_cannot_climb(params, message, tmp_path, capsys):
    pipeline = tmp_path / "oms.toml"
    pipeline.write_text(textwrap.dedent(f"""
        [pipeline]
        name = "oms"
        seed = 1
        [datasets.s]
        generator = "spirals"
        params = {{ n = 200 }}
        [experiments.e]
        dataset = "s"
        task = "binary"
        split = {{ scheme = "holdout", count = 1 }}
        checkpoints = [100]
        metrics = ["online_loss"]
        learners = [{{ learner = "oms_lasvm", params = {{ kernel = "poly", {params} }} }}]
    """))
    assert main(["-q", "run", str(pipeline), "--out", str(tmp_path / "out"), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert err == f"dolb: error: {pipeline}: experiments.e.learners[0]{message}\n"
    assert err.count("\n") == 1 and not (tmp_path / "out").exists()


# ------------------------------------------------------------------ what a run stores and says
def test_a_failed_cell_stores_one_line_naming_where():
    import numpy as np

    from dolb.execution.tasks import error_text

    try:
        np.zeros((2_000_001, 2_000_001))
    except MemoryError as exc:
        text = error_text(exc)
    assert text.startswith("MemoryError: Unable to allocate 29.1 TiB for an array with shape (2000001, 2000001) and "
                           "data type float64 (the cell needs more memory than its worker has) [")
    assert "\n" not in text

    from dolb.learners.basis import PolynomialBasis

    try:
        PolynomialBasis(3).transform(object())
    except Exception as exc:  # a bug's place: the last line of dolb the error passed
        text = error_text(exc)
    assert "\n" not in text and text.startswith("TypeError: ")
    assert text.endswith("in transform]") and "[dolb/learners/basis.py:" in text, text
    assert error_text(ConfigError("pipe.toml: seed: bad")) == "pipe.toml: seed: bad"


def test_a_pipeline_without_reports_says_where_its_statistics_are(pipeline, tmp_path, capsys):
    text = pipeline.read_text()
    pipeline.write_text(text[: text.index("[[reports]]")])
    out = tmp_path / "out"
    assert main(["run", str(pipeline), "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert f"No [[reports]]: each configuration's statistics are in {out}/report/summary.csv" in printed
    assert "No results stored" not in printed and (out / "report" / "summary.csv").is_file()


def test_a_killed_run_says_what_it_stored(run_folder, capsys):
    """A run killed before its end recorded no counts: its line says what its workers
    stored; its record starts at the moment its id names."""
    path = the_record(run_folder)
    record = json.loads(path.read_text())
    assert record["run_id"].startswith(record["started"].replace("-", "").replace(":", ""))
    for key in ("counts", "workers", "seconds"):
        del record[key]
    record["ended"] = None
    path.write_text(json.dumps(record))
    main(["status", str(run_folder)])
    printed = capsys.readouterr().out
    assert f"{record['run_id']}  {record['started']}  did not finish: 60 cells stored by it, 0 failed, on 1 workers" in printed


def test_a_run_not_finished_is_running_only_while_its_process_lives(run_folder, capsys):
    """What the lock's holder file says of a run not finished, read without taking the
    lock: its process alive on this host, running; gone (a kill left the file), did not
    finish; on another host, running there, not checked from here. `dolb report` draws
    the page all the same, marked partial."""
    import socket
    import subprocess
    import sys

    path = the_record(run_folder)
    record = json.loads(path.read_text())
    for key in ("counts", "workers", "seconds"):
        del record[key]
    record["ended"] = None
    path.write_text(json.dumps(record))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    here = socket.gethostname()
    start = f"{record['run_id']}  {record['started']}  "
    for host, pid, said in ((here, os.getpid(), f"running on {here} (pid {os.getpid()}): 60 cells stored, 0 failed "
                                                 "so far of the 60 cells of its pipeline, on 1 workers; "),
                            (here, int(gone.stdout), "did not finish: 60 cells stored by it, 0 failed, on 1 workers"),
                            ("elsewhere", 4242, "running on elsewhere (pid 4242), not checked from here (another "
                                                "host): 60 cells stored")):
        holder = {"run_id": record["run_id"], "host": host, "pid": pid, "started": record["started"]}
        (run_folder / ".lock.json").write_text(json.dumps(holder))
        main(["status", str(run_folder)])
        assert start + said in capsys.readouterr().out
    assert main(["report", str(run_folder)]) == 0
    assert f"Page (partial: run {record['run_id']} running on elsewhere (pid 4242); " in capsys.readouterr().out
    assert "small-irma: partial results" in (run_folder / "report" / "index.html").read_text()
