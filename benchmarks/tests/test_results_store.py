"""The results-store bench (benchmarks.engine.results_store, python -m benchmarks
results-store): its derived figures by hand, and one repeat of a small pipeline run into
a local folder and into moto's S3 server, the two folders' values the same."""

import argparse
import json
import textwrap

import pytest

from benchmarks.engine import results_store
from dolb.bench.records import check

PIPELINE = """
[pipeline]
name = "results-store"
seed = 4

[datasets.made]
generator = "irma"
params = { n_sequences = 6, length = 30, n_test = 20 }

[experiments.e]
dataset = "made"
task = "regression"
split = { scheme = "sequences", count = 6 }
checkpoints = [10, 30]
metrics = ["test_mse"]
learners = [{ learner = "rls", complexity = [2, 3], params = { domain_high = 3.0 } }]
"""


def test_the_derived_figures_are_the_medians_ratio_and_the_servers_cores():
    found = {"local": [1.0, 2.0, 3.0], "s3": [1.1, 2.2, 3.6], "server busiest": [0.5, 0.2, 0.1]}
    by_name = {figure["labels"]["figure"]: figure["value"] for figure in results_store.figures(found, cores=2)}
    assert by_name["s3 / local compute"] == pytest.approx(2.2 / 2.0)
    assert by_name["server cores"] == pytest.approx(0.2)  # the median
    assert by_name["server share of the cores"] == pytest.approx(0.1)
    assert by_name["ratio the server CPU explains"] == pytest.approx(2 / 1.8)


def test_the_busiest_window_is_the_most_cores_kept_busy_over_its_length():
    samples = results_store.CpuSamples(process=None)
    samples.samples = [(float(t), 0.0 if t <= 5 else 0.5 * (t - 5)) for t in range(11)]  # idle, then half a core
    assert samples.used() == 2.5
    assert samples.busiest(2.0) == pytest.approx(0.5)
    assert samples.busiest(7.0) == pytest.approx(2.5 / 7)  # seconds 3 to 10
    assert samples.busiest(20.0) == pytest.approx(0.25)  # longer than sampled: all of it


def test_one_repeat_writes_a_record_of_both_folders(tmp_path, capsys):
    pytest.importorskip("moto.server", reason="moto's server is not installed (the test extra installs it)")
    pipeline = tmp_path / "p.toml"
    pipeline.write_text(textwrap.dedent(PIPELINE))
    args = argparse.Namespace(pipeline=str(pipeline), workers=1, repeats=1, record=tmp_path / "records",
                              command_line="test")
    assert results_store.main(args) == 0
    (path,) = (tmp_path / "records" / "results-store").iterdir()
    record = check(json.loads(path.read_text()), "the record")
    figures = {m["labels"]["figure"]: m["repeats"] for m in record["measurements"]}
    assert sorted(figures) == ["local", "local wall", "s3", "s3 wall", "server", "server busiest"]
    assert all(len(repeats) == 1 and repeats[0] > 0 for repeats in figures.values())
    assert "compute phase: local" in capsys.readouterr().out
