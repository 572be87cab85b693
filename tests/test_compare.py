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
from dolb.execution.sweep import run_sweep
from dolb.results.compare import compare_frames, compare_throughput
from dolb.results.tables import TIDY_COLUMNS


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
    assert row["difference"] == pytest.approx(differences.mean())
    assert row["p"] == pytest.approx(stats.ttest_rel(run, baseline).pvalue)
    half = stats.t.ppf(0.975, 4) * differences.std(ddof=1) / np.sqrt(5)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((differences.mean() - half, differences.mean() + half))
    assert row["d_z"] == pytest.approx(differences.mean() / differences.std(ddof=1))
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


def test_identical_runs_and_informational_metrics_are_never_flagged():
    frame = pd.concat([tidy([0.1, 0.2, 0.3]), tidy([3.0, 4.0, 5.0], metric="cutoff_k")])
    worse = frame.assign(value=np.where(frame["metric"] == "cutoff_k", frame["value"] + 10, frame["value"]))
    table = compare_frames(worse, frame)
    assert table["metric"].tolist() == ["test_error"]  # cutoff_k is not judged
    assert table["verdict"].tolist() == ["unchanged"] and table["p"].tolist() == [1.0]


def test_throughput_slowdown():
    def bench(speed):
        return pd.DataFrame([{"learner": "sgd", "input": "sparse", "source": "memory",
                              "conversions": "all", "examples_per_s": speed}])

    assert compare_throughput(bench(70.0), bench(100.0))["slower"].tolist() == [True]
    assert compare_throughput(bench(95.0), bench(100.0))["slower"].tolist() == [False]


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
    run_sweep(pipeline, folder / "baseline", workers=1, progress=False)
    run_sweep(pipeline, folder / "same", workers=2, progress=False)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        client.run(degrade_irma)  # a real degraded learner, in the worker processes
        run_sweep(pipeline, folder / "degraded", scheduler=cluster.scheduler_address, progress=False)
    return folder


@pytest.mark.e2e
def test_unchanged_run_passes(runs, capsys):
    assert main(["compare", str(runs / "same"), str(runs / "baseline")]) == 0
    assert "0 worse, 0 better" in capsys.readouterr().out
    assert (runs / "same" / "compare" / "compare.html").read_text().startswith("<!DOCTYPE html>")


@pytest.mark.e2e
def test_degraded_learner_is_flagged(runs, capsys):
    assert main(["compare", str(runs / "degraded"), str(runs / "baseline")]) == 1
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
             "conversions": "last", "examples_per_s": speed},
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


def test_bad_folders_are_one_line_errors(tmp_path, capsys):
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a result folder" in err
