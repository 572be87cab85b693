"""Study tables: the tables of the study pages are records that ``dolb study`` writes and
the docs render (:mod:`dolb.studies.tables`); none is typed into a page by hand. Bad input
to ``dolb study`` is one line, exit 2, nothing written."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dolb.cli import main
from dolb.errors import ConfigError, DataError
from dolb.studies import STUDIES
from dolb.studies.tables import MARKER, TABLES, new_table, read_table, render_markers, render_table, write_table
from dolb.studies.tuning import BenchRun

ROOT = Path(__file__).resolve().parents[1]
STUDY_PAGES = sorted((ROOT / "docs" / "studies").glob("*.md"))


def toy(**changes) -> dict:
    return new_table("toy", "means", [("learner", None), ("error", ".1%"), ("n", ",d")],
                     [["perceptron", 0.03125, 12000], ["a | b", None, 5]], source="dolb run pipelines/toy.toml",
                     command="python3 scripts/toy.py") | changes


def test_a_table_is_written_read_back_and_rendered_with_its_formats(tmp_path):
    path = write_table(tmp_path, toy())
    assert path == tmp_path / "toy" / "means.json"
    assert read_table(path) == toy() | {"date": read_table(path)["date"]}
    assert render_table(read_table(path)).splitlines() == [
        "| learner | error | n |", "| --- | --- | --- |", "| perceptron | 3.1% | 12,000 |", "| a \\| b | — | 5 |"]


def test_numpy_numbers_and_nan_are_stored_as_json_holds_them():
    import numpy as np

    record = new_table("toy", "t", [("x", ".3g")], [[np.float64(0.5)], [np.int64(3)], [float("nan")]], source="s",
                       command="c")
    assert record["rows"] == [[0.5], [3], [None]] and type(record["rows"][1][0]) is int


def test_a_marker_becomes_the_table_and_where_it_comes_from(tmp_path):
    write_table(tmp_path, toy())
    page = "Before.\n\n<!-- table: toy/means -->\n\nAfter.\n"
    rendered = render_markers(page, tmp_path)
    numbers = '<span class="number">3.1%</span> | <span class="number">12,000</span>'  # each in one piece
    assert f"| perceptron | {numbers} |" in rendered and rendered.startswith("Before.") and "After." in rendered
    assert '| a \\| b | — | <span class="number">5</span> |' in rendered
    assert "written by `python3 scripts/toy.py` from `dolb run pipelines/toy.toml`" in rendered
    assert "benchmarks/studies/toy/means.json" in rendered
    assert render_markers("<!-- table: toy/means --> inline", tmp_path) == "<!-- table: toy/means --> inline"


def test_a_marker_without_its_record_fails_the_build_naming_the_file(tmp_path):
    with pytest.raises(ConfigError, match=r"toy/other\.json: no table record"):
        render_markers("<!-- table: toy/other -->", tmp_path)


@pytest.mark.parametrize("damage, message", [
    (lambda r: "not json", "not a readable JSON table record"),
    (lambda r: r | {"schema": 2}, "schema is 2, expected 1"),
    (lambda r: r | {"study": "../up"}, "study is missing or not a name"),
    (lambda r: r | {"source": ""}, "source is missing"),
    (lambda r: r | {"columns": []}, "columns is missing"),
    (lambda r: r | {"columns": [{"name": "a", "format": 3}, *r["columns"][1:]]}, r"columns\[0\].format is not"),
    (lambda r: r | {"rows": [["x", 0.5, 2.5]]}, r"rows\[0\]\[2\] = 2.5 does not fit its column's format ',d'"),
    (lambda r: r | {"rows": [["x", 1.0]]}, r"rows\[0\] is not a list of 3 cells"),
    (lambda r: r | {"rows": [["x", True, 1]]}, r"rows\[0\]\[1\] is True"),
    (lambda r: r | {"rows": []}, "rows is missing"),
    (lambda r: r | {"table": "other"}, "holds table toy/other, not toy/means"),
])
def test_a_damaged_table_record_is_one_line_naming_the_file(tmp_path, damage, message):
    path = write_table(tmp_path, toy())
    damaged = damage(json.loads(path.read_text()))
    path.write_text(damaged if isinstance(damaged, str) else json.dumps(damaged))
    with pytest.raises(ConfigError, match=message) as caught:
        read_table(path)
    assert str(caught.value).startswith(str(path)) and "\n" not in str(caught.value)


def test_no_study_page_has_a_table_typed_by_hand_and_every_record_is_shown():
    shown = set()
    for page in (ROOT / "docs").rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        typed = [line for line in text.splitlines() if line.lstrip().startswith("|")]
        assert page not in STUDY_PAGES or not typed, f"{page.name} has a table typed by hand: {typed[0][:60]}"
        shown |= {f"{study}/{name}" for study, name in MARKER.findall(text)}
        render_markers(text, ROOT / TABLES)  # every marker has its record, undamaged
    stored = {f"{path.parent.name}/{path.stem}" for path in (ROOT / TABLES).glob("*/*.json")}
    assert stored == shown, f"records no page shows: {sorted(stored - shown)}"
    assert all(re.fullmatch(r"[\w-]+/[\w-]+", name) for name in shown)


def test_the_stored_records_name_no_path_of_the_machine_that_wrote_them():
    for path in (ROOT / TABLES).glob("*/*.json"):
        record = read_table(path)
        for key in ("command", "source"):
            assert not re.search(r"(^|\s)/", record[key]), f"{path.name}: {key} has an absolute path"


TUNING = ROOT / "benchmarks" / "tuning" / "20261127T023710Z.json"


def test_the_tuning_guides_tables_are_those_of_the_record_they_name():
    stored = {name: read_table(ROOT / TABLES / "tuning" / f"{name}.json") for name in ("test_error", "cost")}
    run = BenchRun(ROOT / "benchmarks" / "tuning" / re.search(r"\((\S+\.json)\)", stored["cost"]["source"]).group(1))
    bench = run.record
    for name in ("test_error", "cost"):
        fresh = new_table("tuning", name, *STUDIES["tuning"].table(name).make(run), source="s", command="c")
        assert json.loads(json.dumps(fresh["rows"])) == stored[name]["rows"], name
    halving = next(row for row in stored["cost"]["rows"] if row[0] == "halving")
    summary = {(row["dataset"]): row["halving_fraction"] for row in bench["summary"]}
    assert halving[1:5] == pytest.approx([summary[d] for d in ("a9a", "ccat_ecat", "ijcnn1", "w8a")], rel=1e-12)


def refused(argv, capsys, message, tmp_path):
    """``dolb ARGV`` exits 2 with ``message`` on one line, ``tmp_path`` as it was."""
    before = sorted(tmp_path.rglob("*"))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dolb: error: {message}") and err.count("\n") == 1, err
    assert sorted(tmp_path.rglob("*")) == before


def test_a_study_given_a_folder_that_is_not_a_result_folder_says_so_in_one_line(tmp_path, capsys):
    refused(["study", "irma", str(tmp_path), "--record", str(tmp_path / "out")], capsys,
            f"{tmp_path}: not a result folder (no results; run `dolb run` first)", tmp_path)


@pytest.mark.parametrize("argv, message", [
    (["study", "irmaa", "x"], "unknown study 'irmaa' (did you mean 'irma'?; known: cutoff_averaging, irma, "),
    (["study", "irma"], "dolb study: give a study's NAME and its RUN (dolb study --list names the studies)"),
    (["study"], "dolb study: give a study's NAME and its RUN"),
])
def test_an_unknown_study_or_a_missing_run_is_one_line(tmp_path, capsys, argv, message):
    refused(argv, capsys, message, tmp_path)


def test_the_studies_are_listed(capsys):
    assert STUDIES.names() == ["cutoff_averaging", "irma", "linear_zoo", "oms", "online_mr", "tuning"]
    assert main(["study", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "irma               The IRMA study (irma)"  # its pipeline by the name dolb run takes anywhere
    assert lines[3].endswith("(oms_mnist, oms_tuned; data folder: mnist)")  # and what it reads from the data folder
    assert lines[-2] == "other pipelines    irma_quick, nightly (data folder: libsvm, rcv1), peers_a9a (data folder: libsvm)"
    assert lines[-1].startswith("dolb run NAME --out DIR runs a pipeline dolb ships from any folder; ")
    assert lines[-1].endswith("give it with --data DIR or $DOLB_DATA")


OTHER = """
[pipeline]
name = "other"
seed = 1

[datasets.irma]
generator = "irma"
params = { n_sequences = 2, length = 20, n_test = 50 }

[experiments.table1]
dataset = "irma"
task = "regression"
split = { scheme = "sequences", count = 2 }
checkpoints = [10, 20]
metrics = ["test_mse"]
learners = [{ learner = "irma", complexity = 4, params = { basis = "legendre", domain_high = 3.0 } }]
"""


def test_a_run_of_another_pipeline_is_one_line(tmp_path, capsys):
    (tmp_path / "other.toml").write_text(OTHER)
    assert main(["-q", "run", str(tmp_path / "other.toml"), "--out", str(tmp_path / "other"), "--workers", "1"]) == 0
    refused(["study", "irma", str(tmp_path / "other"), "--record", str(tmp_path / "out"), "--figures",
             str(tmp_path / "figures")], capsys,
            f"{tmp_path / 'other'}: not a run of pipelines/irma.toml (no table1 test_mse of irma at order 6 after 10 "
            "examples)", tmp_path)
    refused(["study", "oms", str(tmp_path / "other")], capsys,
            f"{tmp_path / 'other'}: not a run of the study oms (pipelines/oms_mnist.toml, pipelines/oms_tuned.toml): "
            "it holds none of its experiments", tmp_path)


def test_a_tuned_run_gives_the_studys_tuned_parts_and_a_listed_run_the_others(tmp_path):
    """A study's tuned pipeline holds experiments of the same names as its listed one:
    each run gives only its own figures, so neither overwrites the other's."""
    from dolb.studies.study import Figure, ResultRun, Study

    study = Study("s", "S", paper="p", pipelines=("s", "s_tuned"),
                  figures=(Figure("listed.png", print, ("zoo",)), Figure("tuned.png", print, ("zoo",), tuned=True),
                           Figure("other.png", print, ("other",), tuned=True)))
    experiment = '[experiments.zoo]\ndataset = "d"\n'
    for name, tuning, drawn in (("listed", "", ["listed.png"]), ("tuned", 'tuning = { method = "grid" }\n',
                                                                  ["tuned.png"])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pipeline.toml").write_text(experiment + tuning)
        run = ResultRun(tmp_path / name)
        run.__dict__["experiments"] = {"zoo"}  # the experiments its rows would hold
        assert [figure.name for figure in study.made_from(run)[1]] == drawn
    (tmp_path / "tuned" / "pipeline.toml").write_text("[experiments.zoo\n")
    with pytest.raises(DataError, match=f"^{re.escape(str(tmp_path / 'tuned' / 'pipeline.toml'))}: cannot be read"):
        assert ResultRun(tmp_path / "tuned").tuned is None  # raises first


@pytest.mark.parametrize("name", ["tuning", "irma", "cutoff_averaging", "linear_zoo", "online_mr", "oms"])
@pytest.mark.parametrize("option", ["--record", "--figures"])
@pytest.mark.parametrize("where, message", [
    ("file", "{option} {folder}: not a folder"),
    ("file/below", "{option} {folder}: {tmp}/file is not a folder"),
])
def test_a_record_or_figure_folder_that_is_a_file_is_refused_before_anything_runs(tmp_path, capsys, name, option,
                                                                                  where, message):
    (tmp_path / "file").write_text("a file")
    folder = tmp_path / where
    run = str(TUNING) if name == "tuning" else str(tmp_path)
    refused(["study", name, run, option, str(folder)], capsys,
            message.format(option=option, folder=folder, tmp=tmp_path), tmp_path)


def damaged_bench(record):
    """Damages of a tuning benchmark record, each with what the refusal says."""
    first = record["summary"][0]
    grid = record["repeats"][0]["dolb"]["grid"]
    return {
        "empty summary": (record | {"summary": []}, "summary is empty"),
        "summary not a list": (record | {"summary": {"a9a": 1}}, "summary is not a list"),
        "a row without grid": (record | {"summary": [{k: v for k, v in first.items() if k != "grid"}]},
                               "summary[0].grid is None"),
        "a search as text": (record | {"summary": [first | {"halving": "low"}]}, "summary[0].halving is 'low'"),
        "no repeats": (record | {"repeats": []}, "no grid run in repeats[0].dolb"),
        "no learned": (record | {"repeats": [{"dolb": {"grid": grid | {"learned": []}}}]},
                       "repeats[0].dolb.grid.learned is empty"),
        "unknown peer": (record | {"repeats": [record["repeats"][0] | {"dask_ml": [
            record["repeats"][0]["dask_ml"][0] | {"method": "magic"}]}]}, "repeats[0].dask_ml: unknown search 'magic'"),
        "a list": ([record], "not a JSON object with a command"),
    }


@pytest.mark.parametrize("damage", ["empty summary", "summary not a list", "a row without grid", "a search as text",
                                    "no repeats", "no learned", "unknown peer", "a list"])
def test_a_damaged_tuning_record_is_one_line_and_nothing_is_written(tmp_path, capsys, damage):
    record = json.loads(TUNING.read_text())
    content, message = damaged_bench(record)[damage]
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(content))
    refused(["study", "tuning", str(path), "--record", str(tmp_path / "out")], capsys,
            f"{path}: not a tuning benchmark record ({message})", tmp_path)


@pytest.mark.parametrize("content, message", [(b"", "Expecting value"), (b"{\"summary\": [", "Expecting value"),
                                              (b"\xff\xfe", "'utf-8' codec can't decode"),
                                              (None, "[Errno 21] Is a directory")])
def test_an_empty_truncated_or_binary_tuning_record_is_one_line(tmp_path, capsys, content, message):
    path = tmp_path / "bench.json"
    path.mkdir() if content is None else path.write_bytes(content)
    refused(["study", "tuning", str(path), "--record", str(tmp_path / "out")], capsys,
            f"{path}: not a tuning benchmark record ({message}", tmp_path)


def test_the_studies_are_imported_when_the_registry_is_first_read():
    """`dolb study` is a command of `dolb`, whose import stays light: dolb's own studies
    (pandas, Numba and matplotlib behind them) are imported when STUDIES is first read."""
    script = """
import sys
import dolb.cli
assert "dolb.studies" in sys.modules and "dolb.studies.irma" not in sys.modules and "pandas" not in sys.modules
import dolb
assert dolb.STUDIES.names() == ["cutoff_averaging", "irma", "linear_zoo", "oms", "online_mr", "tuning"]
assert "dolb.studies.irma" in sys.modules
"""
    subprocess.run([sys.executable, "-c", script], check=True)


def test_a_study_page_is_its_prose_with_what_the_prose_does_not_place_added(tmp_path):
    from dolb.studies import Claim, Figure, Study, Table, Verdict
    from dolb.studies.pages import study_page

    def low(tables):
        return Verdict(tables["means"]["rows"][0][1] < 0.05, "error 3.1%")

    study = Study("toy", "A toy study", paper="Nobody, 'Nothing' (2026).", pipelines=("toy",),
                  tables=(Table("means", lambda run: None), Table("other", lambda run: None)),
                  figures=(Figure("toy.png", lambda run, path: None, caption="the toy figure"),),
                  claims=(Claim("the error is low", low, ("means",)),))
    write_table(tmp_path, toy(study="toy"))
    write_table(tmp_path, toy(study="toy", table="other"))
    bare = study_page(study, None, tmp_path, shown_folder="records")
    assert bare.startswith("# A toy study\n\nNobody, 'Nothing' (2026).\n\n## The paper's claims, judged\n\n")
    assert "| the error is low | **holds**: error 3.1% | `toy/means` |" in bare
    assert "dolb run pipelines/toy.toml --out runs/toy\ndolb study toy runs/toy --record benchmarks/studies" in bare
    assert bare.count('<span class="number">3.1%</span>') == 2 and "`records/toy/other.json`" in bare
    assert bare.endswith("## Figures\n\n![the toy figure](../figures/toy.png)\n")
    prose = "Ours.\n\n<!-- table: toy/means -->\n\n<!-- claims -->\n\n![mine](../figures/toy.png)\n"
    page = study_page(study, prose, tmp_path)
    assert page.count("the error is low") == 1 and page.count("`benchmarks/studies/toy/means.json`") == 1
    assert "## Tables" in page and "`benchmarks/studies/toy/other.json`" in page  # the one the prose leaves out
    assert "## Figures" not in page and "## How to run it" not in page
