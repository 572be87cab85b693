"""Bad input on the command line: one line naming what is wrong, exit status 2, and
nothing written."""

import json
import textwrap

import pytest

from dolb.cli import main
from tests.conftest import SMALL_IRMA


@pytest.fixture
def pipeline(tmp_path):
    path = tmp_path / "small.toml"
    path.write_text(textwrap.dedent(SMALL_IRMA))
    return path


@pytest.mark.parametrize(
    "argv, message",
    [
        (["plan", "{pipeline}", "--out", "{out}", "--workers", "-1"],
         "dolb plan: error: argument --workers: expected at least 1, got -1"),
        (["plan", "{pipeline}", "--out", "{out}", "--workers", "0"],
         "dolb plan: error: argument --workers: expected at least 1, got 0"),
        (["run", "{pipeline}", "--out", "{out}", "--workers", "abc"],
         "dolb run: error: argument --workers: expected a whole number, got 'abc'"),
        (["run", "{pipeline}", "--out", "{out}", "--workers", "2", "--scheduler", "x"],
         "dolb run: error: argument --scheduler: not allowed with argument --workers"),
        (["bench", "--repeat", "0"], "dolb bench: error: argument --repeat: expected at least 1, got 0"),
        (["compare", "{out}", "{out}", "--slowdown", "0"],
         "dolb compare: error: argument --slowdown: expected a number between 0 and 1, got 0"),
        (["run", "{pipeline}"], "dolb run: error: the following arguments are required: --out"),
        (["nonsense"], "dolb: error: argument command: invalid choice: 'nonsense'"),
    ],
)
def test_bad_options_are_one_line(argv, message, pipeline, tmp_path, capsys):
    out = tmp_path / "out"
    argv = [a.format(pipeline=pipeline, out=out) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1, err
    assert not out.exists()


def test_paired_report_needs_a_baseline_the_experiment_has(pipeline, tmp_path, capsys):
    text = pipeline.read_text() + textwrap.dedent("""
        [[reports]]
        kind = "paired"
        experiment = "table"
        metric = "test_mse"
        compare = "learner"
        baseline = "irmaa"
    """)
    pipeline.write_text(text)
    assert main(["plan", str(pipeline), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        f"dolb: error: {pipeline}: reports[2].baseline: no learner 'irmaa' in experiment 'table' "
        "(it has: irma, batch_ls) (did you mean 'irma'?)\n"
    )


@pytest.mark.parametrize("content", ['{"learner": "perceptron"}', "[1, 2]", '"text"'])
def test_a_bench_file_that_is_not_a_list_of_objects(tmp_path, content):
    from dolb.errors import DataError
    from dolb.results.compare import read_bench

    (tmp_path / "bench.json").write_text(content)
    with pytest.raises(DataError, match=r"bench.json: expected a JSON list of objects"):
        read_bench(tmp_path)
    json.loads(content)  # valid JSON all the same


def test_names_that_look_like_mathtext_are_drawn_as_written(tmp_path):
    import pandas as pd

    from dolb.results.figures import curve_figure

    summary = pd.DataFrame({"experiment": "e", "metric": "m", "dataset": ["a$b", "a$b", "c\\d", "c\\d"],
                            "learner": "$l", "params": "", "complexity": "", "conversion": "last",
                            "n_train": [1, 10, 1, 10], "mean": [1.0, 0.5, 1.0, 0.4], "q25": 0.3, "q75": 1.2})
    path = curve_figure(summary, "e", "m", "costs $5 \\ unbalanced $", tmp_path / "f.png")
    assert path.stat().st_size > 5_000


def test_report_file_names_stay_short():
    from dolb.results.report import slug

    long = slug("01-" + "e" * 400 + "-test_error-table")
    assert len(long) == 120 and long != slug("01-" + "e" * 399 + "f-test_error-table")


@pytest.mark.parametrize("make", ["file", "under_file"])
def test_an_out_folder_that_cannot_be_one(make, pipeline, tmp_path, capsys):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    out = blocker if make == "file" else blocker / "out"
    assert main(["plan", str(pipeline), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dolb: error: ") and str(blocker) in err and err.count("\n") == 1, err
    assert blocker.read_text() == "not a folder"


def test_names_in_markdown_tables_cannot_inject_markup():
    import pandas as pd

    from dolb.results.tables import to_markdown

    hostile = "<script>x</script> [click](javascript:alert(1))\n# heading | cell"
    text = to_markdown(pd.DataFrame({"learner": [hostile], "mean": [0.5]}))
    assert "<script>" not in text and "[click](" not in text and "\n#" not in text
    assert text.count("\n") == 2 and "&lt;script&gt;" in text and "\\[click\\](javascript" in text


@pytest.mark.parametrize("generator, params", [
    ("sparse_text", "n_rows = 1000000000000, n_test = 100"),
    ("irma", "n_sequences = 1000000000, length = 1000000"),
])
def test_a_generator_asked_for_more_than_memory_is_refused_before_allocating(generator, params, tmp_path,
                                                                            monkeypatch, capsys):
    cache = tmp_path / "cache"
    monkeypatch.setenv("DOLB_DATA_CACHE", str(cache))
    path = tmp_path / "huge.toml"
    path.write_text(textwrap.dedent(f"""
        [pipeline]
        name = "huge"
        seed = 1
        [datasets.big]
        generator = "{generator}"
        params = {{ {params} }}
        [experiments.e]
        dataset = "big"
        task = "{'binary' if generator == 'sparse_text' else 'regression'}"
        split = {{ scheme = "{'holdout' if generator == 'sparse_text' else 'sequences'}", count = 1 }}
        metrics = ["{'test_error' if generator == 'sparse_text' else 'test_mse'}"]
        learners = [{{ learner = "{'perceptron' if generator == 'sparse_text' else 'irma'}" }}]
    """))
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dolb: error: {path}: datasets.big.params: generator '{generator}': these parameters "
                          "make about ") and "of memory" in err and err.count("\n") == 1, err
    assert not out.exists() and not cache.exists()


@pytest.mark.parametrize("where", ["folder", "missing/report.html"])
def test_a_performance_report_that_cannot_be_a_file(where, pipeline, tmp_path, capsys):
    target = tmp_path / where
    if where == "folder":
        target.mkdir()
    out = tmp_path / "out"
    assert main(["run", str(pipeline), "--out", str(out), "--performance-report", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dolb: error: --performance-report {target}: ") and err.count("\n") == 1
    assert not out.exists()


@pytest.mark.parametrize("content", [b"\xff\xfe garbage", b'{"run_id": "x"', b"[1, 2]", b'{"other": 1}'])
def test_a_damaged_run_record_is_one_line(content, tmp_path, capsys):
    from dolb.results.store import CellRows, ResultStore, result_schema

    store = ResultStore(tmp_path / "out")
    store.write_part(CellRows(result_schema({}), "run", "worker").table())
    (tmp_path / "out" / "runs").mkdir()
    (tmp_path / "out" / "runs" / "20260101T000000Z-abcdef.json").write_bytes(content)
    assert main(["status", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dolb: error: {tmp_path / 'out'}/runs/20260101T000000Z-abcdef.json: not ")
    assert err.count("\n") == 1


def test_an_npy_named_npz_is_one_line(tmp_path):
    import numpy as np

    from dolb.data.sources.rcv1 import load_npz
    from dolb.errors import DataError

    path = tmp_path / "corpus.npz"
    with path.open("wb") as file:
        np.save(file, np.arange(3))
    with pytest.raises(DataError, match=r"corpus.npz: an .npy array, not an .npz archive of arrays$"):
        load_npz(path)


def test_result_files_follow_the_umask(tmp_path):
    """One policy for every file dolb writes: the user's umask (results, records and
    reports alike), no file more private or more open than the user asked for."""
    import os

    from dolb.results.store import CellRows, ResultStore, result_schema

    mask = os.umask(0o027)
    try:
        store = ResultStore(tmp_path / "out")
        part = store.write_part(CellRows(result_schema({}), "run", "worker").table())
        store.write_text("runs/record.json", "{}")
    finally:
        os.umask(mask)
    for path in (tmp_path / "out" / "results" / part, tmp_path / "out" / "runs" / "record.json"):
        assert path.stat().st_mode & 0o777 == 0o640, path


def test_a_held_result_folder_is_refused_naming_its_holder(tmp_path):
    from dolb.errors import ConfigError
    from dolb.execution.lock import FolderLock
    from dolb.results.store import ResultStore

    store = ResultStore(tmp_path / "out")
    (tmp_path / "out" / "results").mkdir(parents=True)
    stale = tmp_path / "out" / "results" / ".part-x.parquet.tmp"
    stale.write_bytes(b"cut short")
    with FolderLock(store, "20260101T000000Z-aaaaaa"):
        assert not stale.exists()  # no other run can be writing it: removed
        with pytest.raises(ConfigError, match=r"out: in use by dolb run 20260101T000000Z-aaaaaa \(pid \d+ on "):
            FolderLock(store, "20260101T000000Z-bbbbbb").__enter__()
    with FolderLock(store, "20260101T000000Z-cccccc"):  # released: the next run gets it
        pass
    assert not (tmp_path / "out" / ".lock.json").exists()


@pytest.mark.parametrize("url, message", [
    ("nosuch://x/y", "nosuch://x/y: not a folder dolb can write (Protocol not known: nosuch)"),
    ("s3://bucket/x", "s3://bucket/x: Install s3fs to access S3"),
])
def test_a_result_folder_url_dolb_cannot_open(url, message, capsys):
    import importlib.util

    if url.startswith("s3") and importlib.util.find_spec("s3fs"):
        pytest.skip("s3fs is installed here: the URL is valid")
    assert main(["status", url]) == 2
    assert capsys.readouterr().err == f"dolb: error: {message}\n"
