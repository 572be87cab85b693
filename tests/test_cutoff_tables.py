"""The cutoff-averaging study's tables (dolb.studies.cutoff_averaging and the findings of
dolb.studies.cutoff_scale) on the reduced study of the session's ``rcv1_study``:
their values against the same numbers computed here from the raw result rows, and the
records they make read back as written."""

import math

import numpy as np
import pytest

from dolb.cli import main
from dolb.conversions import confidence
from dolb.conversions.cutoff import REPORTED_K
from dolb.errors import DataError
from dolb.results.tables import read_results
from dolb.studies import STUDIES, ResultRun, cutoff_averaging, cutoff_scale
from dolb.studies.tables import new_table, read_table, render_table, write_table
from tests.conftest import requires_shared_data

pytestmark = [pytest.mark.e2e, requires_shared_data("rcv1", "rcv1v2_mulan_dedup.npz")]


@pytest.fixture(scope="module")
def modules():
    """The study's two modules: its tables and its scale findings."""
    return cutoff_averaging, cutoff_scale


@pytest.fixture(scope="module")
def study(rcv1_study, modules):
    """(result folder, its rows, the test error of H*_k per split and k)."""
    out, _ = rcv1_study
    frame = read_results(out, tidy=True)
    return out, frame, modules[0].error_by_k(out, frame)


def _values(frame, experiment, metric, **where):
    rows = frame[(frame.experiment == experiment) & (frame.metric == metric)]
    for column, value in where.items():
        rows = rows[rows[column] == value]
    return rows


def test_perceptron_table_counts_rises_and_worst_problems_as_the_raw_rows_do(modules, study):
    _, frame, _ = study
    columns, rows = modules[0].perceptron(frame)
    by_name = {row[0]: row[1:] for row in rows}
    error = _values(frame, "fig2", "test_error")
    for conversion, name in modules[0].CONVERSIONS.items():
        mine = error[error.conversion == conversion]
        steps = rises = 0
        for _, curve in mine[mine.n_train >= 100].groupby(["dataset", "split"]):
            values = curve.sort_values("n_train").value.to_numpy()
            steps, rises = steps + len(values) - 1, rises + int(np.sum(np.diff(values) > 0))
        at_last = error[error.n_train == 5000]
        means = at_last.groupby(["dataset", "conversion"]).value.mean().unstack()
        worst = int(sum(means.loc[d, conversion] == means.loc[d].max() for d in means.index))
        assert by_name[name][1:] == [worst, rises / steps]
        assert by_name[name][0] == pytest.approx(mine[mine.n_train == 5000].value.mean(), rel=1e-12)  # numpy's sum
    assert steps == 2 * 3 * 2  # two problems, three splits, 100 → 1,000 → 5,000
    assert columns[2] == ("problems (of 2) where it is the worst at 5,000", "d")


def test_paired_p_values_are_scipys_and_the_bound_table_counts_k(modules, study):
    from scipy.stats import ttest_rel

    _, frame, _ = study
    _, rows = modules[0].perceptron_tests(frame)
    error = _values(frame, "fig2", "test_error", n_train=5000)
    for row in rows:
        by = error[error.dataset == row[0].lower().replace("/", "_")].pivot(index="split", columns="conversion",
                                                                           values="value")
        assert row[1:4] == pytest.approx([by["last"].mean(), by["average"].mean(), by["cutoff"].mean()], rel=1e-12)
        expected = [1.0 if by[a].equals(by[b]) else ttest_rel(by[a], by[b]).pvalue  # no difference: scipy's NaN
                    for a, b in (("average", "last"), ("cutoff", "last"), ("cutoff", "average"))]
        assert row[4:] == pytest.approx(expected, rel=1e-9)
    _, rows = modules[0].bound_k(frame)
    k = _values(frame, "fig2", "cutoff_k")
    assert rows[-1] == ["all six", len(k), float(np.mean(k.value == 0)), int(k.value.max())]
    assert [row[1] for row in rows[:-1]] == [9, 9]  # three checkpoints × three splits per problem


def test_the_margin_table_against_the_raw_hinge_losses(modules, study):
    from scipy.stats import ttest_rel

    _, frame, _ = study
    _, rows = modules[0].margin(frame)
    hinge = _values(frame, "fig3", "test_hinge")
    assert [row[0] for row in rows] == [100, 1000, 5000]
    for m, last, average, cutoff, above, p, longest in rows:
        at = hinge[hinge.n_train == m].groupby("conversion").value.mean()
        assert [last, average, cutoff] == pytest.approx([at["last"], at["average"], at["cutoff"]], rel=1e-12)
        by_problem = hinge[hinge.n_train == m].groupby(["dataset", "conversion"]).value.mean().unstack()
        assert above == int((by_problem["average"] > by_problem["last"]).sum()) == 2
        splits = hinge[hinge.n_train == m].pivot_table(index=["dataset", "split"], columns="conversion", values="value")
        tests = [ttest_rel(s["average"], s["last"]).pvalue for _, s in splits.groupby(level="dataset")]
        assert p == pytest.approx(max(tests), rel=1e-9) and p < 0.05
        assert longest == 1  # unit rows: no margin-Perceptron hypothesis survives a round


def test_the_cutoff_averages_learned_again_agree_with_the_run(modules, study):
    out, frame, errors = study
    recorded = _values(frame, "fig2", "test_error", n_train=5000, dataset="ccat_ecat")
    average = recorded[recorded.conversion == "average"].set_index("split").value
    assert list(errors.index) == [0, 1, 2] and errors.shape[1] > 50  # hypotheses live tens of rounds
    np.testing.assert_array_equal(errors[0].to_numpy(), average.loc[errors.index].to_numpy())  # H*_0 is averaging
    _, rows = modules[0].loss_by_k(frame, errors)
    n_k = _values(frame, "fig2", "cutoff_n_k5", n_train=5000, dataset="ccat_ecat").value
    assert rows[3][:2] == [5, pytest.approx(n_k.mean() / 5000, rel=1e-12)]
    assert rows[3][3] == pytest.approx(errors[5].mean(), rel=1e-12)
    changed = frame.copy()
    changed.loc[recorded[recorded.conversion == "last"].index[0], "value"] += 0.01
    with pytest.raises(DataError, match=r"ccat_ecat, split \d: learned again, the last test error at 5,000 is"):
        modules[0].error_by_k(out, changed)


def test_the_scale_findings_against_a_bound_computed_here(modules, study):
    _, frame, _ = study
    columns, rows = modules[1].findings(frame, {"fig2": "Perceptron"}, "test_error")
    assert [c[0] for c in columns][-3:] == ["test_error: last", "average", "cutoff"]
    [row] = rows  # of the sizes the script lists, the reduced study has 1,000 only
    cutoff = frame[(frame.experiment == "fig2") & (frame.conversion == "cutoff") & (frame.n_train == 1000)]
    value = cutoff.groupby("metric").value
    n = {k: value.get_group(f"cutoff_n_k{k}").to_numpy().mean() for k in REPORTED_K}  # NaN: a split lacks k
    loss = {k: value.get_group(f"cutoff_loss_k{k}").to_numpy().mean() for k in REPORTED_K}
    a = confidence(1000)
    bound = {k: loss[k] + 2 * math.sqrt(loss[k] * a / n[k]) + 8 * a / n[k] for k in REPORTED_K if n[k] > 0}
    best = min((v, k) for k, v in loss.items() if v == v)[1]
    assert row[:2] == ["Perceptron", 1000]
    assert row[2:10] == [value.get_group("cutoff_k").mean(), value.get_group("cutoff_k").max(),
                         value.get_group("cutoff_max_r").mean(), n[1] / 1000, loss[0], loss[best], best,
                         min(bound, key=bound.get)]
    test_error = _values(frame, "fig2", "test_error", n_train=1000).groupby("conversion").value.mean()
    assert row[10:] == [test_error["last"], test_error["average"], test_error["cutoff"]]


def test_the_k_the_bound_would_choose_with_another_constant(modules):
    import pandas as pd

    # fewer rounds count at k = 1, with a lower loss: worth it with C = 1, not with C = 31
    n, loss = pd.Series({0: 10_000.0, 1: 2_000.0, 5: 400.0}), pd.Series({0: 0.3, 1: 0.2, 5: 0.05})
    a = confidence(10_000)
    for C in (1.0, 31.0):
        bound = loss + 2 * np.sqrt(C * loss * a / n) + 8 * C * a / n
        assert modules[1].counterfactual_k(n, loss, 10_000, C) == bound.idxmin()
    assert [modules[1].counterfactual_k(n, loss, 10_000, C) for C in (1.0, 31.0)] == [1, 0]


def test_the_tables_make_records_that_read_back(modules, study, tmp_path):
    _, frame, errors = study
    run = ResultRun(study[0])
    run.once("error_by_k", lambda: errors)
    for table in STUDIES["cutoff_averaging"].tables[:6]:
        name, (columns, rows) = table.name, table.make(run)
        record = new_table("cutoff_averaging", name, columns, rows, source="dolb run x.toml", command="c")
        path = write_table(tmp_path, record)
        assert path.name == f"{name}.json" and read_table(path) == record
        assert render_table(read_table(path)).count("\n") == len(rows) + 1
    findings = read_table(tmp_path / "cutoff_averaging" / "findings.json")
    assert findings["rows"][0][2] == modules[0].rises(frame)["last"]


def test_a_folder_that_is_no_run_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["study", "cutoff_averaging", str(tmp_path / "nothing")]) == 2
    assert capsys.readouterr().err == (f"dolb: error: {tmp_path / 'nothing'}: not a result folder (no results; "
                                       "run `dolb run` first)\n")
