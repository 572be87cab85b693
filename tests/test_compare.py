"""`dolb compare`: paired tests over splits with false-discovery-rate control, on
hand-made tables and on real sweeps, one of them run by a deliberately degraded learner."""

import json
import textwrap

import numpy as np
import pandas as pd
import pytest
from distributed import Client, LocalCluster
from scipy import stats

from dolb.cli import main
from dolb.execution.arithmetic import PINS, environment
from dolb.execution.sweep import run_sweep
from dolb.options import RunOptions
from dolb.results.compare import compare_frames
from dolb.results.compare_report import largest_changes, trend_table
from dolb.results.tables import TIDY_COLUMNS, aggregate, read_results
from tests.conftest import write_store


def tidy(values, metric="test_error", n_train=100, learner="pa"):
    rows = [dict(experiment="e", dataset="d", task="binary", learner=learner, split=i, params="",
                 complexity="", conversion="last", n_train=n_train, metric=metric, value=v, cell_id=f"c{i}")
            for i, v in enumerate(values)]
    return pd.DataFrame(rows)[TIDY_COLUMNS]


def test_paired_test_values_match_scipy():
    baseline = [0.20, 0.25, 0.22, 0.30, 0.27]
    run = [0.24, 0.26, 0.27, 0.33, 0.30]
    row = compare_frames(tidy(run), tidy(baseline)).iloc[0]
    differences = np.subtract(run, baseline)
    expected = stats.ttest_rel(run, baseline)
    assert row["difference"] == pytest.approx(differences.mean())
    assert row["t"] == pytest.approx(expected.statistic, rel=1e-12)
    assert row["p"] == pytest.approx(expected.pvalue, rel=1e-10)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(tuple(expected.confidence_interval(0.95)), rel=1e-10)
    half = stats.t.ppf(0.975, 4) * differences.std(ddof=1) / np.sqrt(5)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((differences.mean() - half, differences.mean() + half))
    assert row["d_z"] == pytest.approx(differences.mean() / differences.std(ddof=1))
    assert row["relative"] == pytest.approx(differences.mean() / np.mean(baseline))
    assert (row["n"], row["run"], row["baseline"]) == (5, pytest.approx(np.mean(run)), pytest.approx(np.mean(baseline)))
    assert row["verdict"] == "worse"


def test_benjamini_hochberg_over_all_rows():
    rng = np.random.default_rng(0)
    base = pd.concat([tidy(rng.normal(1, 0.1, 6), n_train=n) for n in (10, 20, 30, 40)])
    shifts = {10: 0.0, 20: 0.02, 30: 0.1, 40: -0.3}
    run = base.assign(value=base["value"] + base["n_train"].map(shifts) + rng.normal(0, 0.05, len(base)))
    table = compare_frames(run, base).sort_values("n_train")
    assert table["q"].to_numpy() == pytest.approx(stats.false_discovery_control(table["p"].to_numpy()))
    assert table.set_index("n_train").loc[40, "verdict"] == "better"
    assert table.set_index("n_train").loc[30, "verdict"] == "worse"


@pytest.mark.parametrize("informational", ["cutoff_k", "learn_seconds"])
def test_identical_runs_and_informational_metrics_are_never_flagged(informational):
    """Neither what a conversion chose nor how long learning took is judged."""
    frame = pd.concat([tidy([0.1, 0.2, 0.3]), tidy([3.0, 4.0, 5.0], metric=informational)])
    worse = frame.assign(value=np.where(frame["metric"] == informational, frame["value"] + 10, frame["value"]))
    table = compare_frames(worse, frame)
    assert table["metric"].tolist() == ["test_error"]  # the other one is not judged
    assert table["verdict"].tolist() == ["unchanged"] and table["p"].tolist() == [1.0]


def test_one_pair_is_untested_yet_changed_and_a_constant_shift_is_certain():
    single = compare_frames(tidy([0.9]), tidy([0.1])).iloc[0]
    assert np.isnan(single["p"]) and np.isnan(single["q"]) and single["verdict"] == "changed"
    assert compare_frames(tidy([0.1]), tidy([0.1])).iloc[0]["verdict"] == "untested"
    shifted = compare_frames(tidy([0.25, 0.5, 0.75]), tidy([0.0, 0.25, 0.5])).iloc[0]
    assert (shifted["t"], shifted["p"], shifted["verdict"]) == (np.inf, 0.0, "worse")


def test_non_finite_pairs_are_left_out_and_counted():
    row = compare_frames(tidy([0.3, np.inf, 0.4, 0.35]), tidy([0.2, 0.2, np.nan, 0.2])).iloc[0]
    assert (row["n"], row["n_nonfinite"]) == (2, 2)
    assert row["difference"] == pytest.approx(0.125) and np.isfinite(row["p"])


PIPELINE = """
[pipeline]
name = "compare-me"
seed = 3

[datasets.irma]
generator = "irma"
params = { n_sequences = 20, length = 80, n_test = 200 }

[experiments.table]
dataset = "irma"
task = "regression"
split = { scheme = "sequences", count = 20 }
checkpoints = [20, 80]
metrics = ["test_mse"]
learners = [
  { learner = "irma", complexity = 4, params = { basis = "legendre", domain_high = 3.0 } },
  { learner = "rls", complexity = 4, params = { basis = "legendre", domain_high = 3.0 } },
]
"""


def degrade_irma():
    """Make IRMA's output hypothesis worse, in the worker process this runs in."""
    from dolb.learners.irma import IRMA

    honest = IRMA._predict
    IRMA._predict = lambda self, X: honest(self, X) + 0.05


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("compare")
    pipeline = folder / "p.toml"
    pipeline.write_text(textwrap.dedent(PIPELINE))
    run_sweep(pipeline, folder / "baseline", RunOptions(workers=1, progress=False))
    run_sweep(pipeline, folder / "same", RunOptions(workers=2, progress=False))
    # its worker computes with the pinned arithmetic of the other two runs, so that only
    # the degraded learner differs (unpinned, RLS's BLAS kernel would be the CPU's own)
    with environment(PINS["x86-64-v3"].environment), \
            LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        client.run(degrade_irma)  # a real degraded learner, in the worker processes
        run_sweep(pipeline, folder / "degraded", RunOptions(scheduler=cluster.scheduler_address, progress=False))
    return folder


@pytest.mark.e2e
def test_unchanged_run_passes(runs, capsys):
    assert main(["compare", str(runs / "same"), str(runs / "baseline")]) == 0
    assert "4 compared: 0 worse, 0 better, 4 unchanged" in capsys.readouterr().out
    table = pd.read_csv(runs / "same" / "compare" / "compare.csv")
    assert (table["n"] == 20).all() and (table["difference"] == 0).all() and (table["p"] == 1).all()
    assert (runs / "same" / "compare" / "compare.html").read_text().startswith("<!DOCTYPE html>")


@pytest.mark.e2e
def test_degraded_learner_is_flagged(runs, capsys):
    # the params strings, hence the cell ids, are the baseline's: the change lives in the workers
    cells = {name: set(read_results(runs / name)["cell_id"]) for name in ("degraded", "baseline")}
    assert cells["degraded"] == cells["baseline"]
    assert main(["compare", str(runs / "degraded"), str(runs / "baseline")]) == 1
    assert "Significant changes (q < 0.05)" in capsys.readouterr().out
    table = pd.read_csv(runs / "degraded" / "compare" / "compare.csv")
    verdict = table.set_index(["learner", "n_train"])["verdict"]
    assert verdict["irma", 80] == "worse" and verdict["irma", 20] == "worse"
    assert verdict["rls", 80] == "unchanged"  # the other learner is untouched
    html = (runs / "degraded" / "compare" / "compare.html").read_text()
    assert "data:image/png;base64," in html  # figures embedded: one self-contained file


@pytest.mark.e2e
def test_bench_slowdown_and_history_trend(runs):
    def bench(folder, speed):
        (folder / "bench.json").write_text(json.dumps([
            {"kind": "throughput", "learner": "perceptron", "input": "sparse", "source": "memory",
             "conversions": "last", "examples_per_s": speed, "repeats": [speed * (1 + i / 100) for i in range(7)]},
            {"kind": "cutoff_memory", "m": 1000, "distinct_r": 20},  # not a throughput row
        ]))

    bench(runs / "baseline", 1e6)
    bench(runs / "same", 5e5)
    out = runs / "trend"
    assert main(["compare", str(runs / "same"), str(runs / "baseline"), "--out", str(out),
                 "--history", str(runs / "baseline")]) == 1  # slower by half
    assert (out / "trend.png").stat().st_size > 10_000
    (runs / "same" / "bench.json").unlink()
    (runs / "baseline" / "bench.json").unlink()


@pytest.mark.e2e
def test_a_damaged_night_in_the_history_is_refused_before_anything_is_written(runs, tmp_path, capsys):
    import shutil

    night = shutil.copytree(runs / "baseline", tmp_path / "night")
    part = sorted((night / "results").glob("part-*.parquet"))[0]
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
    out = tmp_path / "out"
    assert main(["compare", str(runs / "same"), str(runs / "baseline"), "--out", str(out),
                 "--history", str(night)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dolb: error: {part}: unreadable result part") and err.count("\n") == 1, err
    assert not out.exists()


def test_trend_keeps_the_configurations_that_changed_most(tmp_path):
    nights = []
    for night, drift in enumerate([0.0, 0.5, 1.0]):
        nights.append(write_store(tmp_path / f"night{night}", pd.concat([
            tidy([1.0 + drift, 1.0 + drift]),  # doubles over the nights
            tidy([9.0, 9.0], n_train=10),  # not the largest training size: left out
            tidy([2.0, 2.0 + 0.1 * night], learner="perceptron"),
        ])))
    table = trend_table([aggregate(read_results(folder, tidy=True), ("mean",)) for folder in nights])
    assert table.xs("pa", level="learner").values.tolist() == [[1.0, 1.5, 2.0]]
    assert table.xs("perceptron", level="learner").values.tolist() == [[2.0, 2.05, 2.1]]
    assert largest_changes(table, 1).index.get_level_values("learner").tolist() == ["pa"]
    out = tmp_path / "out"
    assert main(["compare", str(nights[2]), str(nights[1]), "--out", str(out),
                 "--history", str(nights[0]), str(nights[1])]) == 1  # pa got worse by a constant
    assert (out / "trend.png").stat().st_size > 10_000


def test_informational_metric_is_named_in_the_report(tmp_path, capsys):
    base = write_store(tmp_path / "base", pd.concat([tidy([0.1, 0.2, 0.3]), tidy([1, 2, 3], metric="cutoff_k")]))
    run = write_store(tmp_path / "run", pd.concat([tidy([0.1, 0.2, 0.3]), tidy([70, 80, 90], metric="cutoff_k")]))
    assert main(["compare", str(run), str(base)]) == 0
    assert "1 compared: 0 worse, 0 better, 1 unchanged" in capsys.readouterr().out
    assert "Informational metrics, not judged: cutoff_k." in (run / "compare" / "compare.md").read_text()


def test_different_pipelines_and_bad_options_are_one_line_errors(tmp_path, capsys):
    run = write_store(tmp_path / "run", tidy([0.1, 0.2]), pipeline="irma")
    base = write_store(tmp_path / "base", tidy([0.1, 0.2]), pipeline="demo")
    assert main(["compare", str(run), str(base)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pipeline 'demo'" in err and "same pipeline" in err
    assert not (run / "compare").exists()  # nothing written
    assert main(["compare", str(run), str(run), "--alpha", "1.5"]) == 2
    assert capsys.readouterr().err == "dolb compare: error: argument --alpha: expected a number between 0 and 1, got 1.5 (see dolb compare --help)\n"


def test_a_report_folder_that_is_a_file_is_one_line(tmp_path, capsys):
    run = write_store(tmp_path / "run", tidy([0.1, 0.2]))
    (tmp_path / "file").write_text("x")
    assert main(["compare", str(run), str(run), "--out", str(tmp_path / "file")]) == 2
    assert capsys.readouterr().err == f"dolb: error: {tmp_path / 'file'}: a file, not a folder for the report\n"


def test_bad_folders_are_one_line_errors(tmp_path, capsys):
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a result folder" in err
