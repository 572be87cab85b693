"""Bad input on the command line: one line naming what is wrong, exit status 2, and
nothing written."""

import json
import shutil
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
        (["bench", "--repeat", "0"], "dolb bench throughput: error: argument --repeat: expected at least 1, got 0"),
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


@pytest.fixture
def read_only_folder(tmp_path):
    """A folder nobody may write in: by its mode, or for root (whom modes do not stop)
    a read-only tmpfs."""
    import os
    import subprocess

    folder = tmp_path / "read-only"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o500)
        yield folder
        folder.chmod(0o700)
        return
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("running as root without the right to mount: no folder is read-only to root")
    yield folder
    subprocess.run(["umount", str(folder)], check=False)


def test_an_out_folder_in_a_folder_nobody_may_write(pipeline, read_only_folder, capsys):
    out = read_only_folder / "out"
    assert main(["-q", "run", str(pipeline), "--out", str(out), "--workers", "1"]) == 2
    assert capsys.readouterr().err.startswith(f"dolb: error: {out}")
    assert not out.exists()


def test_an_out_folder_whose_name_is_too_long(pipeline, tmp_path, capsys):
    out = tmp_path / ("x" * 300)
    assert main(["-q", "run", str(pipeline), "--out", str(out), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dolb: error: {out}") and err.endswith(": File name too long\n"), err


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
    from dolb.results.cell_rows import CellRows
    from dolb.results.store import ResultStore, result_schema

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

    from dolb.results.cell_rows import CellRows
    from dolb.results.store import ResultStore, result_schema

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
    from dolb.execution.lock import FolderLock, refuse_if_held
    from dolb.results.store import ResultStore

    store = ResultStore(tmp_path / "out")
    (tmp_path / "out" / "results").mkdir(parents=True)
    stale = tmp_path / "out" / "results" / ".part-x.parquet.tmp"
    stale.write_bytes(b"cut short")
    refuse_if_held(store)  # never held: nothing to say
    with FolderLock(store, "20260101T000000Z-aaaaaa"):
        assert not stale.exists()  # no other run can be writing it: removed
        with pytest.raises(ConfigError, match=r"out: in use by dolb run 20260101T000000Z-aaaaaa \(pid \d+ on "):
            refuse_if_held(store)  # as a run plans, before it waits for its cluster
        with pytest.raises(ConfigError, match=r"out: in use by dolb run 20260101T000000Z-aaaaaa \(pid \d+ on "):
            FolderLock(store, "20260101T000000Z-bbbbbb").__enter__()
    refuse_if_held(store)
    with FolderLock(store, "20260101T000000Z-cccccc"):  # released: the next run gets it
        pass
    assert not (tmp_path / "out" / ".lock.json").exists()


@pytest.mark.parametrize("url, message", [
    ("nosuch://x/y", "nosuch://x/y: not a location dolb can open (Protocol not known: nosuch)"),
    ("s3://bucket/x", "s3://bucket/x: Install s3fs to access S3"),
])
def test_a_result_folder_url_dolb_cannot_open(url, message, capsys):
    import importlib.util

    if url.startswith("s3") and importlib.util.find_spec("s3fs"):
        pytest.skip("s3fs is installed here: the URL is valid")
    assert main(["status", url]) == 2
    assert capsys.readouterr().err == f"dolb: error: {message}\n"


# A mistake in a pipeline file: (text replaced, replacement, the message after "FILE: ").
# `dolb run` finds each before it starts a cluster or writes a byte, except the last three,
# which need the data (generated first, into the data cache, never into --out).
PIPELINE_MISTAKES = [
    ("seed = 11", "seed = -1", "pipeline.seed: must not be negative, got -1"),
    ("seed = 11", 'seed = "x"', "pipeline.seed: expected a whole number, got 'x'"),
    ("[pipeline]", "[pipelin]", "pipelin: unknown key (did you mean 'pipeline'?)"),
    ('name = "small-irma"', 'name = " "',
     "pipeline.name: must not be empty: results, reports and the folder check carry it"),
    ('generator = "irma"', 'generator = "irmaa"',
     "datasets.irma.params: unknown generator 'irmaa' (did you mean 'irma'?; known: irma, rcv1_resample, sparse_text, spirals)"),
    ("n_sequences = 12,", "n_sequence = 12,", "datasets.irma.params: generator 'irma': unknown parameter "
     "'n_sequence' (known: length, n_sequences, n_test, noise)"),
    ("n_sequences = 12,", 'n_sequences = "12",',
     "datasets.irma.params: generator 'irma', parameter 'n_sequences': expected a number, got '12'"),
    ("n_sequences = 12,", "n_sequences = 0,",
     "datasets.irma.params: generator 'irma', parameter 'n_sequences': 0 is below the minimum 1"),
    ('dataset = "irma"\ntask = "regression"\nsplit = { scheme = "sequences", count = 12 }',
     'dataset = "imra"\ntask = "regression"\nsplit = { scheme = "sequences", count = 12 }',
     "experiments.table.dataset: no dataset 'imra' in [datasets] (did you mean 'irma'?)"),
    ('task = "regression"\nsplit = { scheme = "sequences", count = 12 }',
     'task = "classification"\nsplit = { scheme = "sequences", count = 12 }',
     "experiments.table.task: 'classification' is not one of regression, binary"),
    ('scheme = "sequences", count = 12', 'scheme = "sequence", count = 12',
     "experiments.table.split.scheme: 'sequence' is not one of sequences, holdout, given "
     "(did you mean 'sequences'?)"),
    ('scheme = "sequences", count = 12', 'scheme = "sequences", count = 0',
     "experiments.table.split.count: expected a positive whole number, got 0"),
    ("checkpoints = [10, 30, 60]", "checkpoints = []",
     'experiments.table.checkpoints: expected a list of training sizes, { log = N } or "all", got []'),
    ("checkpoints = [10, 30, 60]", "checkpoints = [30, 10, 60]",
     "experiments.table.checkpoints: training sizes must be strictly increasing"),
    ("checkpoints = [10, 30, 60]", "checkpoints = [0, 10]",
     "experiments.table.checkpoints[0]: expected a positive whole number, got 0"),
    ('metrics = ["test_mse", "online_loss"]', 'metrics = ["test_mse", "nope"]',
     "experiments.table.metrics[1]: 'nope' is not one of cumulative_loss, learn_seconds, online_loss, test_mse"),
    ('metrics = ["test_mse", "online_loss"]', "metrics = []", "experiments.table.metrics: must not be empty"),
    ('{ learner = "irma", complexity = [3, 5], params = { basis = "legendre"',
     '{ learner = "irma", complexity = [3, 5], params = { bassis = "legendre"',
     "experiments.table.learners[0].params.bassis: unknown parameter of learner 'irma' (did you mean 'basis'?)"),
    ('{ learner = "irma", complexity = [3, 5], params = { basis = "legendre"',
     '{ learner = "irma", complexity = [3, 5], params = { basis = "fourier"',
     "experiments.table.learners[0].params.basis: 'fourier' is not one of monomial, legendre"),
    ("forgetting = 0.9", "forgetting = 2.0",
     "experiments.curve.learners[0].params.forgetting: 2.0 is above the maximum 1.0"),
    ("forgetting = 0.9", "forgetting = nan",
     "experiments.curve.learners[0].params.forgetting: expected a finite number, got nan"),
    ('{ learner = "irma", complexity = [3, 5]', '{ learner = "irma", complexity = []',
     "experiments.table.learners[0].complexity: must not be empty"),
    ('{ learner = "irma", complexity = [3, 5]', '{ learner = "irma", complexity = [3, 3]',
     "experiments.table.learners[0].complexity: 3 is listed twice"),
    ('basis = "legendre", domain_high = 3.0 } },\n  { learner = "batch_ls"',
     'basis = ["legendre", "legendre"], domain_high = 3.0 } },\n  { learner = "batch_ls"',
     "experiments.table.learners[0].params.basis: 'legendre' is listed twice"),
    ('{ learner = "irma", complexity = [3, 5]', '{ learner = "perceptron", complexity = [3, 5]',
     "experiments.table.learners[0].learner: 'perceptron' is a binary learner, the experiment is regression"),
    ('{ learner = "irma", complexity = [3, 5], params', '{ learner = "irma", extra = 1, complexity = [3, 5], params',
     "experiments.table.learners[0].extra: unknown key (allowed: learner, params, complexity, search, tuning)"),
    ('kind = "table"', 'kind = "tabel"',
     "reports[0].kind: 'tabel' is not one of curve, paired, ranking, table, tuning (did you mean 'table'?)"),
    ('experiment = "table"\nmetric = "test_mse"', 'experiment = "tabel"\nmetric = "test_mse"',
     "reports[0].experiment: no experiment 'tabel' (did you mean 'table'?)"),
    ('experiment = "table"\nmetric = "test_mse"', 'experiment = "table"\nmetric = "online_loss_x"',
     "reports[0].metric: 'online_loss_x' is not one of test_mse, online_loss (did you mean 'online_loss'?)"),
    ('stats = ["mean", "var"]', 'stats = ["mean", "variance"]',
     "reports[0].stats[1]: 'variance' is not one of mean, std, var, ci95, median, count"),
    ("[pipeline]", "[pipeline", "not valid TOML (Expected ']' at the end of a table declaration (at line 2, column 10))"),
    ("[pipeline]", "[pipeline]\n[pipeline]", "not valid TOML (Cannot declare ('pipeline',) twice (at line 3, column 10))"),
    ("seed = 11", "seed = 11\n[execution]\ncell_timeout = nan",
     "execution.cell_timeout: must be a positive, finite number of seconds, got nan"),
    ("seed = 11", "seed = 11\n[execution]\ncell_timout = 10", "execution.cell_timout: unknown key (did you mean 'cell_timeout'?)"),
    ("seed = 11", "seed = 11\n[execution]\nbatch_examples = 0",
     "execution.batch_examples: expected a positive whole number, got 0"),
    ("at = [10, 60]", "at = [10, 20]",
     "reports[0].at: 20 is not a checkpoint of experiment 'table' on dataset 'irma' (see experiments.table.checkpoints)"),
    ('split = { scheme = "sequences", count = 12 }', 'split = { scheme = "sequences", count = 13 }',
     "experiments.table.checkpoints: training size 60 exceeds the 55 training examples of a split"),
    ('split = { scheme = "sequences", count = 6, length = 60 }', 'split = { scheme = "sequences", count = 6, length = 600 }',
     "experiments.curve.split: 6 sequences of 600 rows do not fit in a training part of 720 rows"),
]


@pytest.mark.parametrize("old, new, message", PIPELINE_MISTAKES, ids=[m.split(":")[0] for _, _, m in PIPELINE_MISTAKES])
def test_a_pipeline_mistake_is_one_line_and_writes_nothing(old, new, message, pipeline, tmp_path, capsys):
    text = pipeline.read_text()
    assert old in text
    pipeline.write_text(text.replace(old, new, 1))
    out = tmp_path / "out"
    assert main(["-q", "run", str(pipeline), "--out", str(out), "--workers", "1"]) == 2
    assert capsys.readouterr().err == f"dolb: error: {pipeline}: {message}\n"
    assert not out.exists()


def test_a_mistake_never_touches_an_existing_result_folder(pipeline, small_run, tmp_path, capsys):
    """A folder with results (a copy of the session's run of this pipeline) stays byte for
    byte as it was when a rerun is refused."""
    out = shutil.copytree(small_run, tmp_path / "out")
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    pipeline.write_text(pipeline.read_text().replace("seed = 11", "seed = -1"))
    assert main(["-q", "run", str(pipeline), "--out", str(out), "--workers", "1"]) == 2
    capsys.readouterr()
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("argv, message", [
    (["status", "{tmp}/nosuch"], "{tmp}/nosuch: not a result folder (no results; run `dolb run` first)"),
    (["report", "{tmp}/afile"], "{tmp}/afile: not a result folder (no results; run `dolb run` first)"),
    (["export", "{tmp}/nosuch"], "{tmp}/nosuch: not a result folder (no results; run `dolb run` first)"),
    (["verify", "{tmp}/nosuch"], "no dataset at {tmp}/nosuch"),
    (["verify", "{tmp}/adir"], "{tmp}/adir is not a dolb dataset (no Zarr group)"),
    (["compare", "{tmp}/nosuch", "{tmp}/adir"], "{tmp}/nosuch: not a result folder (no results; run `dolb run` first)"),
    (["run", "{tmp}/nonutf.toml", "--out", "{out}"],
     "{tmp}/nonutf.toml: not UTF-8 text (byte 0xff on line 1); save the pipeline file as UTF-8"),
    (["run", "{tmp}/nosuch.toml", "--out", "{out}"], "{tmp}/nosuch.toml: cannot read pipeline file (No such file or directory)"),
    (["run", "{tmp}/adir", "--out", "{out}"], "{tmp}/adir: cannot read pipeline file (Is a directory)"),
    (["run", "{pipeline}", "--out", "{out}", "--data-cache", "{tmp}/afile"],
     "data cache {tmp}/afile: not a folder (see --data-cache and $DOLB_DATA_CACHE)"),
    (["run", "{pipeline}", "--out", "{out}", "--cluster", "{tmp}/nonutf.toml"],
     "{tmp}/nonutf.toml: not UTF-8 text (byte 0xff on line 1); save the cluster file as UTF-8"),
    (["run", "{pipeline}", "--out", "{out}", "--cluster", "{tmp}/nosuch.toml"],
     "{tmp}/nosuch.toml: cannot read cluster file (No such file or directory)"),
    (["run", "{pipeline}", "--out", "{out}", "--scheduler", "{tmp}/afile"],
     "{tmp}/afile: not a Dask scheduler file (Expecting value: line 1 column 1 (char 0))"),
    (["run", "{pipeline}", "--out", "{out}", "--scheduler", "{tmp}/nonutf.toml"],
     "{tmp}/nonutf.toml: not a Dask scheduler file ('utf-8' codec can't decode byte 0xff in position 0: "
     "invalid start byte)"),
    (["run", "{pipeline}", "--out", "{out}", "--scheduler", "{tmp}/list.json"],
     "{tmp}/list.json: not a Dask scheduler file (no address such as \"tcp://host:8786\")"),
    (["run", "{pipeline}", "--out", "{out}", "--scheduler", "8786"],
     "cannot reach the Dask scheduler at 8786: missing port number in address '8786'"),
    (["bench", "--only", "nosuch"], "--only: unknown learner 'nosuch' (known: "),
])
def test_bad_command_arguments_are_one_line(argv, message, pipeline, tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "adir").mkdir()
    (tmp_path / "nonutf.toml").write_bytes(b"\xff\xfe")
    (tmp_path / "list.json").write_text("[1]")
    out = tmp_path / "out"
    fill = {"tmp": tmp_path, "out": out, "pipeline": pipeline}
    assert main([a.format(**fill) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dolb: error: " + message.format(**fill)) and err.count("\n") == 1, err
    assert not out.exists()


def test_an_export_is_whole_or_absent(small_run, tmp_path, monkeypatch, capsys):
    out = shutil.copytree(small_run, tmp_path / "out")
    target = tmp_path / "results.csv"
    assert main(["export", str(out), "--to", str(tmp_path / "missing" / "r.csv")]) == 2
    assert capsys.readouterr().err.startswith(f"dolb: error: --to {tmp_path}/missing/r.csv: its folder ")

    def full(self, path, **options):
        with open(path, "w") as file:
            file.write("cell_id,sta")
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr("pandas.DataFrame.to_csv", full)
    assert main(["export", str(out), "--to", str(target)]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert list(tmp_path.glob("*results.csv*")) == []


def test_a_reader_that_leaves_ends_the_command_quietly():
    """`dolb learners | head -1`: the reader closes the pipe; no traceback, exit 141."""
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)
    done = subprocess.run([sys.executable, "-m", "dolb", "learners", "--json"], stdout=write, stderr=subprocess.PIPE,
                          text=True)
    os.close(write)
    assert (done.returncode, done.stderr) == (141, "")


def test_a_data_file_a_worker_refuses_is_one_line_on_the_console(tmp_path, capfd):
    """The import runs on a worker: its error reaches the console once, as one line, with
    no worker log or traceback (capfd sees the worker processes' output too)."""
    (tmp_path / "big.svm").write_text("1 1:0.5 3000000000:1\n-1 2:1\n")
    pipeline = tmp_path / "svm.toml"
    pipeline.write_text(textwrap.dedent("""\
        [pipeline]
        name = "svm"
        seed = 1
        [datasets.s]
        importer = "svmlight"
        params = { path = "big.svm" }
        [experiments.e]
        dataset = "s"
        task = "binary"
        split = { scheme = "holdout", count = 1 }
        checkpoints = [1]
        metrics = ["test_error"]
        learners = [{ learner = "perceptron" }]
        """))
    out = tmp_path / "out"
    assert main(["run", str(pipeline), "--out", str(out), "--workers", "1"]) == 2
    assert capfd.readouterr().err == (
        f"dolb: error: svmlight file {tmp_path}/big.svm, line 1: malformed (a feature index above 2147483647)\n")
    assert not out.exists()


KERNEL_PIPELINE = """\
[pipeline]
name = "kernels"
seed = 1
[datasets.s]
importer = "svmlight"
params = {{ path = "data.svm" }}
[experiments.e]
dataset = "s"
task = "binary"
split = {{ scheme = "holdout", count = 1 }}
checkpoints = [1]
metrics = ["test_error"]
learners = [{{ learner = "{learner}", params = {{ {params} }} }}]
"""


@pytest.mark.parametrize("learner, params, message", [
    ("lasvm", "gamma = 0.0", "experiments.e.learners[0].params.gamma: must be above 0.0, got 0.0"),
    ("lasvm", 'kernel = "poly", degree = 0', "experiments.e.learners[0].params.degree: 0 is below the minimum 1"),
    ("lasvm", "cache_mb = 0.0", "experiments.e.learners[0].params.cache_mb: must be above 0.0, got 0.0"),
    ("kernel_perceptron", 'kernel = "sigmoid"',
     "experiments.e.learners[0].params.kernel: 'sigmoid' is not one of rbf, poly, linear"),
    ("oms_lasvm", "max_level = 1", "experiments.e.learners[0].params.max_level: 1 is below the minimum 2"),
    ("oms_lasvm", "level_start = 3, max_level = 3",
     "experiments.e.learners[0].params.max_level: a ladder needs two rungs, level_start + 1 = 4 > max_level = 3"),
    ("oms_lasvm", "gamma = 0.5", "experiments.e.learners[0].params.gamma: set by the ladder"),
    ("online_mr", "sigma = 0.0", "experiments.e.learners[0].params.sigma: must be above 0.0, got 0.0"),
    ("online_mr_buffer", "eta = 2.0, lam1 = 0.5",
     "experiments.e.learners[0].params.lam1: eta * lam1 must be below 1, got 1.0"),
    ("online_mr_rptree", "label_rate = 1.5", "experiments.e.learners[0].params.label_rate: 1.5 is above the maximum 1.0"),
    ("batch_mr", "lam1 = -1.0", "experiments.e.learners[0].params.lam1: must be above 0.0, got -1.0"),
])
def test_a_kernel_parameter_out_of_range_is_one_line(learner, params, message, tmp_path, capsys):
    (tmp_path / "data.svm").write_text("1 1:0.5\n-1 2:1\n1 1:1\n-1 2:0.5\n")
    pipeline = tmp_path / "k.toml"
    pipeline.write_text(KERNEL_PIPELINE.format(learner=learner, params=params))
    out = tmp_path / "out"
    assert main(["-q", "run", str(pipeline), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dolb: error: {pipeline}: {message}") and err.count("\n") == 1, err
    assert not out.exists()


FACES_PIPELINE = """\
[pipeline]
name = "faces"
seed = 1
[datasets.f]
importer = "faces"
params = {{ path = "{file}"{params} }}
[experiments.e]
dataset = "f"
task = "binary"
split = {{ scheme = "holdout", count = 1 }}
checkpoints = [1]
metrics = ["test_error"]
learners = [{{ learner = "perceptron" }}]
"""


def bad_faces_file(folder, kind):
    """An .npy file (or what poses as one) of the given kind, 6 images when it holds
    any; its path (not written for "missing")."""
    import pickle

    import numpy as np

    path = folder / f"{kind}.npy"
    images = np.linspace(0.0, 1.0, 6 * 25 * 25).reshape(6, 25, 25)
    if kind == "garbage":
        path.write_bytes(b"GIF89a\x19\x00\x19\x00 these are not array bytes")
    elif kind == "pickled":
        path.write_bytes(pickle.dumps(images))
    elif kind == "objects":
        np.save(path, np.array([images[0], "a face?"], dtype=object), allow_pickle=True)
    elif kind == "npz":
        with path.open("wb") as file:
            np.savez(file, images=images)
    elif kind == "truncated":
        np.save(path, images)
        path.write_bytes(path.read_bytes()[:-1000])
    elif kind == "complex":
        np.save(path, images.astype(np.complex128))
    elif kind == "one_image":
        np.save(path, images.reshape(-1))
    elif kind == "colour":
        np.save(path, images.reshape(6, 25, 25, 1))
    elif kind == "single":
        np.save(path, images[:1])
    elif kind in ("nan", "inf"):
        images[4, 1, 5] = np.nan if kind == "nan" else -np.inf
        np.save(path, images)
    elif kind == "good":
        np.save(path, images)
    return path


FACES_MISTAKES = [
    ("missing", "", "source file {path}: cannot read it (No such file or directory)"),
    ("garbage", "", "faces file {path}: not an .npy file (it does not start with the .npy magic string)"),
    ("pickled", "", "faces file {path}: not an .npy file (it does not start with the .npy magic string)"),
    ("objects", "", "faces file {path}: cannot read it as an .npy array "
                    "(Object arrays cannot be loaded when allow_pickle=False)"),
    ("npz", "", "faces file {path}: an .npz archive of arrays, not an .npy array"),
    ("truncated", "", "faces file {path}: cannot read it as an .npy array (Failed to read all data for array."),
    ("complex", "", "faces file {path}: values of type complex128, expected real numbers (float or integer)"),
    ("one_image", "", "faces file {path}: an array of shape (3750,), expected images (n, height, width) "
                      "or rows (n, features)"),
    ("colour", "", "faces file {path}: an array of shape (6, 25, 25, 1), expected images (n, height, width) "
                   "or rows (n, features)"),
    ("single", "", "faces file {path}: 1 row, a face / non-face problem needs at least 2"),
    ("nan", "", "faces file {path}, row 4: value nan (column 30) is not a finite number"),
    ("inf", "", "faces file {path}, row 4: value -inf (column 30) is not a finite number"),
    ("good", ", n_positive = 0",
     "{pipeline}: datasets.f.params: importer 'faces', parameter 'n_positive': 0 is below the minimum 1"),
    ("good", ", n_positive = 6", "{pipeline}: datasets.f.params: importer 'faces', parameter 'n_positive': "
                                 "6 leaves no row for the non-face class of {path} (it has 6 rows)"),
]


@pytest.mark.parametrize("kind, params, message", FACES_MISTAKES, ids=[f"{k}{p}" for k, p, _ in FACES_MISTAKES])
def test_a_bad_faces_file_is_one_line_and_writes_nothing(kind, params, message, tmp_path, monkeypatch, capsys):
    """`dolb plan` imports the data in this process (so the checks that need it run):
    the file's fault, one line naming it, exit 2, and neither DIR nor a cache entry."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("DOLB_DATA_CACHE", str(cache))
    path = bad_faces_file(tmp_path, kind)
    pipeline = tmp_path / "faces.toml"
    pipeline.write_text(FACES_PIPELINE.format(file=path.name, params=params))
    out = tmp_path / "out"
    assert main(["plan", str(pipeline), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dolb: error: " + message.format(path=path, pipeline=pipeline)), err
    assert err.count("\n") == 1, err
    assert not out.exists()
    assert not cache.exists() or list(cache.glob("faces-*")) == []


def test_a_faces_file_a_worker_refuses_is_one_line_on_the_console(tmp_path, monkeypatch, capfd):
    """The import runs on a worker under `dolb run`: the same one line, and nothing written."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("DOLB_DATA_CACHE", str(cache))
    path = bad_faces_file(tmp_path, "objects")
    pipeline = tmp_path / "faces.toml"
    pipeline.write_text(FACES_PIPELINE.format(file=path.name, params=""))
    out = tmp_path / "out"
    assert main(["-q", "run", str(pipeline), "--out", str(out), "--workers", "1"]) == 2
    assert capfd.readouterr().err == (
        f"dolb: error: faces file {path}: cannot read it as an .npy array "
        "(Object arrays cannot be loaded when allow_pickle=False)\n")
    assert not out.exists()
    assert not cache.exists() or list(cache.glob("faces-*")) == []
