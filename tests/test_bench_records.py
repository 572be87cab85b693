"""Benchmark records (one JSON file per run of a bench, every repeat kept) and the
performance pages rendered from them."""

import json
import statistics

import pytest

from docs.pages import performance_pages
from dolb.bench.records import measurement, new_record, read_record, read_records, write_record
from dolb.bench.throughput import Measurement
from dolb.bench.throughput import as_record as throughput_record
from dolb.cli import main
from dolb.errors import ConfigError


def _measurement(learner, conversions, repeats):
    return Measurement(learner, "sparse", "memory", conversions, 100, statistics.median(repeats), 1.0, 2.0, repeats)


def test_a_throughput_record_keeps_every_repeat_and_the_ratios_of_the_medians(tmp_path):
    found = [_measurement("perceptron", "last", [300.0, 100.0, 200.0]), _measurement("perceptron", "all", [50.0, 100])]
    record = throughput_record(found, {"reference_perceptron_sparse_memory": [400.0, 500.0]},
                               [{"m": 1000, "distinct_r": 20, "sqrt_2m": 44.7, "W_r_mb": 0.02}], quick=True)
    assert record["bench"] == "throughput-quick"
    assert [m["repeats"] for m in record["measurements"]] == [[300.0, 100.0, 200.0], [50.0, 100.0], [400.0, 500.0],
                                                              [0.02]]
    assert record["measurements"][0]["labels"] == {"learner": "perceptron", "input": "sparse", "source": "memory",
                                                   "conversions": "last"}
    ratios = {d["labels"]["ratio"]: d["value"] for d in record["derived"]}
    assert ratios == {"bare / all conversions": 200 / 75, "dolb / reference loop": 200 / 450}
    assert record["machine"]["cores"] > 0 and record["machine"]["arithmetic"]["cpu"]
    assert record["versions"]["numpy"] and record["versions"]["python"]

    path = write_record(tmp_path, record)
    assert path.parent == tmp_path / "throughput-quick" and path.name.startswith(record["date"][:4])
    assert read_record(path) == record


def test_dolb_bench_record_writes_one_file_per_run(tmp_path, capsys):
    argv = ["bench", "--quick", "--repeat", "2", "--only", "perceptron", "--no-zarr", "--json", "--record",
            str(tmp_path)]
    assert main(argv) == 0
    rows = json.loads(capsys.readouterr().out)
    (path,) = (tmp_path / "throughput-quick").iterdir()
    record = read_record(path)
    assert record["command"].endswith(" ".join(argv[1:]))
    printed = {(r["learner"], r["input"], r["source"], r["conversions"]): r["repeats"] for r in rows
               if r["kind"] in ("throughput", "reference")}
    recorded = {tuple(m["labels"].values()): m["repeats"] for m in record["measurements"] if "learner" in m["labels"]}
    assert recorded == printed and all(len(r) == 2 for r in recorded.values())


def test_the_omr_bench_records_each_learners_speed_and_time_per_step(tmp_path, capsys):
    assert main(["bench", "omr", "600", "--record", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    (path,) = (tmp_path / "omr").iterdir()
    found = {tuple(m["labels"].items()): m["repeats"] for m in read_record(path)["measurements"]}
    learners = ["online_mr_buffer τ=100", "online_mr_buffer τ=200", "online_mr_rptree"]
    assert sorted(found) == sorted([(("learner", name), ("T", "600")) for name in learners]
                                   + [(("learner", name), ("t", t)) for name in [*learners, "online_mr (exact)"]
                                      for t in ("250", "500")])
    (speed,) = found[("learner", "online_mr_rptree"), ("T", "600")]
    assert "online_mr_rptree: " in out and f"{speed:,.0f} examples/s" in out


def _fake(tmp_path, bench, date, commit, repeats, ratio):
    """A record measured on a quiet 2-core machine (whatever this one's load is now)."""
    record = new_record(bench, [measurement({"learner": "pa", "input": "dense"}, "examples/s", repeats)],
                        [{"labels": {"ratio": "bare / all"}, "unit": "ratio", "value": ratio}], command="dolb bench")
    record["date"], record["versions"]["git_commit"] = date, commit
    record["machine"] |= {"load_average": 0.5, "cores": 2}
    return write_record(tmp_path, record)


def test_the_pages_show_the_latest_record_and_the_history_of_each_measurement(tmp_path):
    _fake(tmp_path, "throughput", "2026-01-02T00:00:00Z", "bbbbbbbbbb", [2000.0, 4000.0, 3000.0], 1.5)
    older = _fake(tmp_path, "throughput", "2026-01-01T00:00:00Z", "aaaaaaaaaa", [1000.0], 1.25)
    older.rename(older.with_name("renamed.json"))  # the records' dates order them, not their names
    _fake(tmp_path, "scale", "2026-01-03T00:00:00Z", None, [7.0, 9.0], 2.0)
    pages = performance_pages(tmp_path)
    assert sorted(pages) == ["performance/index.md", "performance/scale.md", "performance/throughput.md"]
    index = pages["performance/index.md"]
    assert "| [scale](scale.md) | 1 | 2026-01-03T00:00:00Z |" in index
    assert "| [throughput](throughput.md) | 2 | 2026-01-02T00:00:00Z |" in index
    page = pages["performance/throughput.md"]
    assert "- **command**: `dolb bench`" in page and "- **date**: 2026-01-02T00:00:00Z" in page
    assert "| pa | dense | examples/s | 3,000 | 2,000 | 4,000 | 3 |" in page  # median, lowest, highest, repeats
    assert "| bare / all | ratio | 1.5 |" in page
    assert "| measurement | unit | 2026-01-01 `aaaaaaa` | 2026-01-02 `bbbbbbb` |" in page
    assert "| pa, dense | examples/s | 1,000 | 3,000 |" in page  # the history, oldest first
    assert "| pa, dense | examples/s | 8 |" in pages["performance/scale.md"]


def test_a_record_measured_on_a_busy_machine_says_so(tmp_path):
    path = _fake(tmp_path, "throughput", "2026-01-01T00:00:00Z", "aaaaaaaaaa", [1000.0], 1.25)
    record = json.loads(path.read_text())
    path.write_text(json.dumps(record | {"machine": record["machine"] | {"load_average": 2.9, "cores": 2}}))
    quiet = performance_pages(tmp_path)["performance/throughput.md"]  # the bench's own load: not busy
    path.write_text(json.dumps(record | {"machine": record["machine"] | {"load_average": 3.1, "cores": 2}}))
    loaded = performance_pages(tmp_path)["performance/throughput.md"]
    assert "busy" not in quiet.replace("*busy*: measured", "")
    assert "- **busy**: a load average of 3.1 on 2 cores" in loaded and "`aaaaaaa` (busy) |" in loaded


def test_without_records_the_index_says_so(tmp_path):
    assert list(performance_pages(tmp_path / "none")) == ["performance/index.md"]
    assert "No records yet." in performance_pages(tmp_path)["performance/index.md"]


@pytest.mark.parametrize("damage, message", [
    (lambda r: "{not json", "not a readable JSON record"),
    (lambda r: r | {"schema": 2}, "schema is 2, expected 1"),
    (lambda r: r | {"date": "yesterday"}, "date 'yesterday' is not YYYY-MM-DDTHH:MM:SSZ"),
    (lambda r: r | {"machine": None}, "machine is missing or not an object"),
    (lambda r: r | {"measurements": [r["measurements"][0] | {"repeats": []}]},
     "measurements[0].repeats is not a non-empty list of numbers"),
    (lambda r: r | {"measurements": [r["measurements"][0] | {"repeats": [1, "2"]}]},
     "measurements[0].repeats is not a non-empty list of numbers"),
    (lambda r: r | {"derived": [{"labels": {"a": 1}, "unit": "x", "value": 1}]},
     "derived[0].labels is not an object of strings"),
    (lambda r: r | {"versions": r["versions"] | {"git_commit": 5}}, "versions.git_commit is 5, not a string or null"),
    (lambda r: r | {"machine": r["machine"] | {"arithmetic": "AVX"}}, "machine.arithmetic is not an object"),
    (lambda r: "", "not a readable JSON record (Expecting value"),
])
def test_a_damaged_record_is_one_line_naming_the_file(tmp_path, damage, message):
    path = _fake(tmp_path, "throughput", "2026-01-01T00:00:00Z", "a", [1.0], 1.0)
    damaged = damage(json.loads(path.read_text()))
    path.write_text(damaged if isinstance(damaged, str) else json.dumps(damaged))
    for read in (read_record, read_records, performance_pages):
        with pytest.raises(ConfigError) as error:
            read(path if read is read_record else tmp_path)
        assert str(error.value).startswith(f"{path}: {message}") and "\n" not in str(error.value)


@pytest.mark.parametrize("where, message", [("file", "not a folder"), ("file/below", "{tmp}/file is not a folder")])
def test_a_record_folder_that_is_a_file_is_refused_before_the_bench_runs(tmp_path, capsys, where, message):
    (tmp_path / "file").write_text("a file")
    assert main(["bench", "--quick", "--record", str(tmp_path / where)]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"dolb: error: --record {tmp_path / where}: {message.format(tmp=tmp_path)}\n"
    assert captured.out == "" and (tmp_path / "file").read_text() == "a file"
