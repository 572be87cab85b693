"""The shipped online manifold regularisation study (pipelines/online_mr.toml) at test
size on a real LocalCluster, real stores and real data (MNIST digits, faces): every
experiment runs, the four figures are drawn, and the findings the study is about hold
at this size, and its tables agree with the stored results; the timing metric and its
place outside reproduction."""

import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dolb.cli import main
from dolb.evaluation.metrics import deterministic_metrics
from dolb.execution.reproduce import _compare
from dolb.execution.sweep import plan_groups
from dolb.experiment.pipeline import load_pipeline
from dolb.results.tables import read_results
from dolb.studies import STUDIES, ResultRun
from dolb.studies import online_mr as figures
from dolb.studies.tables import new_table, read_table, write_table
from tests.conftest import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "pipelines" / "online_mr.toml"
pytestmark = pytest.mark.skipif(not (SHARED_DATA / "mnist").is_dir() or not (SHARED_DATA / "face").is_dir(),
                                reason="the study needs ../shared/data/mnist and ../shared/data/face")


def test_the_shipped_pipeline_plans_its_four_studies():
    groups = plan_groups(load_pipeline(SHIPPED))
    experiments = {group.experiment for group in groups}
    assert {"runtime", "runtime_exact", "risk", "drift1000", "drift4000"} <= experiments
    assert {f"gen_{d}{kind}" for d in ("spirals", "faces", "mnist01", "mnist12") for kind in ("", "_batch")} <= experiments
    assert sum(group.n_splits for group in groups) == 165
    semi = [group for group in groups if group.template.learner.startswith("online_mr")]
    assert all(group.template.params["label_rate"] == group.template.labels.rate for group in semi)


@pytest.mark.e2e
def test_the_study_at_test_size(omr_study, tmp_path):
    out, summary = omr_study
    assert summary.n_failed == 0 and summary.n_computed == summary.n_cells
    frame = read_results(out)

    seconds = frame[frame.metric == "learn_seconds"].sort_values("n_train").groupby("cell_id").value
    assert seconds.apply(lambda cell: bool((cell > 0).all() and cell.is_monotonic_increasing)).all()
    exact = figures.runtime(frame).query("name == 'exact'").set_index("n_train")["mean"]
    assert exact.is_monotonic_increasing  # 250, 500

    risks = figures.risks(frame).pivot_table(index="n_train", columns=["name", "metric"], values="mean")
    assert (risks[("batch MR", "batch_risk")] < risks[("exact", "online_risk")]).all()  # J(f*) is the minimum

    errors = figures.generalisation(frame).query("conversion == 'last'")
    errors = errors[errors.n_train == errors.groupby("dataset").n_train.transform("max")]  # each at its own T
    digits = errors[errors.dataset == "mnist01"].set_index("name")["mean"]  # 500 digits, 2 % labelled
    assert max(digits["batch MR"], digits["buffer τ=200"]) < 0.05 < digits["LASVM (labelled only)"], digits  # the graph helps
    assert set(errors.dataset) == {"spirals", "faces", "mnist01", "mnist12"} and errors["mean"].max() < 0.75

    report = tmp_path
    figures.figure_runtime(frame, report / "omr_runtime.png")
    figures.figure_risk(frame, report / "omr_risk.png")
    figures.figure_generalisation(frame, report / "omr_generalisation.png")
    figures.figure_drift(frame, report / "omr_drift.png")
    assert all((report / f"omr_{name}.png").stat().st_size > 10_000
               for name in ("runtime", "risk", "generalisation", "drift"))


@pytest.mark.e2e
def test_the_study_tables_agree_with_the_stored_results(omr_study, tmp_path):
    frame = read_results(omr_study[0])
    run = ResultRun(omr_study[0])
    tables = {table.name: new_table("online_mr", table.name, *table.make(run), source="dolb run online_mr.toml")
              for table in STUDIES["online_mr"].tables}
    assert sorted(tables) == ["findings", "generalisation", "risk"]
    assert [read_table(write_table(tmp_path, record)) for record in tables.values()] == list(tables.values())

    risk = frame[(frame.experiment == "risk") & (frame.n_train == 500)].groupby(["learner", "metric"]).value.mean()
    online, batch = risk["online_mr", "online_risk"], risk["batch_mr", "batch_risk"]
    assert tables["risk"]["rows"][-1] == pytest.approx(
        [500, online, risk["online_mr_buffer", "online_risk"], batch, online - batch])

    test = frame[(frame.metric == "test_error") & (frame.n_train == 500)]
    kept = test[(test.experiment == "gen_mnist12") & (test.param_keep_labelled == True)]  # noqa: E712 (a nullable column)
    errors = {row[0]: row[1:] for row in tables["generalisation"]["rows"]}
    assert tables["generalisation"]["columns"][3]["name"] == "MNIST 0 vs 1, T = 500"
    assert errors["buffer τ=200, labelled kept, f̄"][3] == pytest.approx(kept[kept.conversion == "average"].value.mean())
    assert errors["buffer τ=200, labelled kept, f_T"][3] == pytest.approx(kept[kept.conversion == "last"].value.mean())

    drift = frame[frame.experiment.str.startswith("drift") & (frame.metric == "test_error")]
    drift = drift.groupby(["n_train", "learner"]).value.mean()
    findings = {row[0]: row[2] for row in tables["findings"]["rows"]}
    assert findings["drift: online tracks, batch does not (test error at T)"] == "; ".join(
        f"T = {n:,}: online f_T {drift[n, 'online_mr_buffer']:.1%}, batch MR {drift[n, 'batch_mr']:.1%}"
        for n in (300, 400, 500))


@pytest.mark.e2e
def test_the_figures_of_a_folder_without_drift_experiments(omr_study, tmp_path, capsys):
    """``dolb study`` draws and tabulates what the folder holds."""
    out, _ = omr_study
    frame = pd.read_parquet(out / "results")
    (tmp_path / "results").mkdir()
    frame[~frame.experiment.str.startswith("drift")].to_parquet(tmp_path / "results" / "part-0.parquet")
    shutil.copytree(out / "runs", tmp_path / "runs")  # the run that made them, named in the tables
    shutil.copy(out / "format.json", tmp_path)  # a result store of this dolb
    assert main(["study", "online_mr", str(tmp_path), "--record", str(tmp_path / "tables"),
                 "--figures", str(tmp_path / "figures")]) == 0
    printed = capsys.readouterr().out
    assert "| drift" not in printed and "| online risk approaches the batch risk" in printed  # the tables it can make
    assert re.search(r"\n(holds|does not hold): the online buffer that keeps its labelled", printed)  # judged
    assert sorted(p.name for p in (tmp_path / "figures").glob("*.png")) == [
        "omr_generalisation.png", "omr_risk.png", "omr_runtime.png"]
    written = sorted(path.name for path in (tmp_path / "tables" / "online_mr").iterdir())
    assert written == ["findings.json", "generalisation.json", "risk.json"]


def test_timing_values_are_not_reproduced_bit_for_bit():
    """Two runs that differ only in learn_seconds reproduce; a test error that differs
    does not."""
    keys = {"experiment": "e", "dataset": "d", "task": "binary", "learner": "online_mr", "params": "",
            "complexity": "", "split": 0, "conversion": "online", "n_train": 10}
    before = pd.DataFrame([keys | {"metric": "learn_seconds", "value": 1.0},
                           keys | {"metric": "test_error", "value": 0.25, "conversion": "last"}])
    after = before.assign(value=[1.7, 0.25])
    record = {"run_id": "r"}
    assert "learn_seconds" not in deterministic_metrics()
    assert _compare(record, record, before, after).identical
    assert not _compare(record, record, before, after.assign(value=[1.0, np.nextafter(0.25, 1)])).identical
