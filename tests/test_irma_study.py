"""The shipped IRMA study reproduces the paper (Buschermöhle et al., IEEE SMC 2013):
Table I within a factor of 2 for IRMA at 80 and 150 examples, batch least squares
orders of magnitude worse than IRMA at 10, and the ordering of Fig. 1."""

import json
from pathlib import Path

import pytest

from dolb.results.tables import read_results
from dolb.studies import STUDIES, ResultRun
from dolb.studies.tables import TABLES, new_table, read_table

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[1]

PAPER_IRMA_MEAN_MSE = {  # Table I of the paper: (order, examples) -> mean MSE
    (4, 10): 3.1e-3, (6, 10): 5.5e-3, (10, 10): 1.2e-2,
    (4, 80): 3.0e-4, (6, 80): 2.2e-4, (10, 80): 3.1e-4,
    (4, 150): 2.0e-4, (6, 150): 9.4e-5, (10, 150): 1.2e-4,
}


@pytest.fixture(scope="module")
def results(irma_study):
    out, summary = irma_study
    assert summary.n_failed == 0 and summary.n_cells == 7500
    return out, read_results(out)


def test_table_one(results):
    _, frame = results
    table = frame[(frame.experiment == "table1") & (frame.metric == "test_mse")]
    mean = table.groupby(["learner", "param_order", "n_train"])["value"].mean()  # the typed column
    assert table.groupby(["learner", "param_order", "n_train"]).size().eq(1000).all()
    for (order, n), paper in PAPER_IRMA_MEAN_MSE.items():
        ratio = mean["irma", order, n] / paper
        limit = 2.0 if n >= 80 else 3.0
        assert 1 / limit < ratio < limit, (order, n, ratio)
        if n >= 80:  # with enough data the batch fit is as good as IRMA (paper: 0.5x - 1.3x)
            assert 0.2 < mean["batch_ls", order, n] / mean["irma", order, n] < 2.0
    for order in (4, 6, 10):  # after 10 examples batch is orders of magnitude worse
        assert mean["batch_ls", order, 10] > 10 * mean["irma", order, 10]
    assert mean["batch_ls", 10, 10] > 1e6 * mean["irma", 10, 10]


def test_figure_one_ordering(results):
    out, frame = results
    curve = frame[(frame.experiment == "fig1") & (frame.metric == "cumulative_loss") & (frame.n_train == 150)]
    stats = curve.groupby("learner")["value"].agg(["mean", "std"])
    assert stats["mean"].idxmin() == "irma"  # IRMA lowest ...
    assert stats.loc["irma", "std"] < 0.2 * stats.loc["irma", "mean"]  # ... with almost no spread
    assert stats.loc["ngd", "mean"] > 100 * stats.loc["irma", "mean"]  # GD unstable
    assert (out / "report" / "02-fig1-cumulative_loss-curve.png").stat().st_size > 20_000


def test_the_irma_pages_tables_are_what_the_study_computes(results):
    """The page's tables are rendered from benchmark/studies/irma/*.json: the study run
    here, at this commit, gives exactly the values stored there (the run is
    bit-reproducible), and Table I's means agree with the typed order column's (within
    one part in 10¹⁵: pandas may round a group's mean otherwise on other keys)."""
    out, frame = results
    run, study = ResultRun(out), STUDIES["irma"]
    fresh_records = {}
    for name in ("table1", "fig1"):
        fresh = fresh_records[name] = new_table("irma", name, *study.table(name).make(run), source="s", command="c")
        stored = read_table(ROOT / TABLES / "irma" / f"{name}.json")
        assert json.loads(json.dumps(fresh["rows"])) == stored["rows"], name
        assert fresh["columns"] == stored["columns"]
    table1 = frame[(frame.experiment == "table1") & (frame.metric == "test_mse")]
    mean = table1.groupby(["learner", "param_order", "n_train"])["value"].mean()
    rows = {row[0]: row[1:] for row in stored_rows("table1")}
    typed = [mean["irma", order, 80] for order in (4, 6, 10)]  # grouped on int keys, pandas may round otherwise
    assert rows["80, IRMA"][1::2] == pytest.approx(typed, rel=1e-15, abs=0)
    assert rows["10, batch"][0::2] == [4.4e2, 7.2e7, 1.8e14]  # the paper's column
    verdicts = study.judge(fresh_records)
    assert [verdict.holds for _, verdict in verdicts] == [True] * 5, verdicts  # the page's claims, judged here


def stored_rows(name: str) -> list[list]:
    return read_table(ROOT / TABLES / "irma" / f"{name}.json")["rows"]


def test_the_stiffness_readings_table():
    """Other readings of the stiffness schedule (the page's sentence, on 20 sequences
    here): growing λ before the first update changes IRMA by little, normalising the
    Gram matrix by the domain's length moves it far at 80 examples; the stored record
    has the same rows and columns."""
    import numpy as np

    from dolb.studies.irma import READINGS, stiffness_readings

    columns, rows = stiffness_readings(sequences=20)
    ours, grown, normalised = (np.array(row[1:]) for row in rows)
    assert [row[0] for row in rows] == list(READINGS)
    assert np.all(np.abs(grown / ours - 1) < 0.05)
    assert np.all(normalised[1::3] > 1.3 * ours[1::3])  # at 80 examples, every order
    assert np.all(np.abs(normalised[2::3] / ours[2::3] - 1) < 0.3)  # at 150, closer again
    stored = read_table(ROOT / TABLES / "irma" / "stiffness.json")
    assert [row[0] for row in stored["rows"]] == list(READINGS)
    assert [column["name"] for column in stored["columns"]] == [heading for heading, _ in columns]
