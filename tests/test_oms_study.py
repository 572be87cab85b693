"""A reduced OMS study on the real MNIST digits, end to end on a 2-worker LocalCluster:
4,000 training digits, 2,000 test digits, a 3 gamma x 2 degree grid of fixed LASVM, one
order, and OMS-LASVM with both ladders (the session's ``oms_study``, see
tests/studies.py); then the study's figures and tables."""

from pathlib import Path

import numpy as np
import pytest

from dolb.execution.sweep import run_sweep
from dolb.options import RunOptions
from dolb.results.tables import read_results
from dolb.studies import STUDIES, ResultRun
from dolb.studies import oms as figures
from dolb.studies.tables import new_table, read_table, write_table
from tests.conftest import requires_shared_data

pytestmark = [pytest.mark.e2e, requires_shared_data("mnist")]

ROOT = Path(__file__).resolve().parents[1]


def test_every_cell_is_stored(oms_study):
    out, summary = oms_study
    assert summary.n_failed == 0 and summary.n_computed == 5 + 5 + 2  # 3 gammas and 2 degrees, twice; 2 OMS runs


def test_fixed_lasvm_learns_the_digits(oms_study):
    frame = read_results(oms_study[0])
    end = frame[(frame.experiment == "full") & (frame.metric == "test_error") & (frame.n_train == 4000)]
    rbf = end[(end.param_kernel == "rbf") & np.isclose(end.param_gamma, 0.03) & (end.conversion == "last")]
    assert 0.0 < rbf.value.iloc[0] < 0.03  # about 1.5 % at 4,000 digits; the majority class errs 10 %
    finished = end[(end.param_kernel == "rbf") & np.isclose(end.param_gamma, 0.03) & (end.conversion == "finished")]
    assert abs(finished.value.iloc[0] - rbf.value.iloc[0]) < 0.01
    # the same order in every experiment: "small" and "full" agree at 1,000 and 4,000
    small = frame[(frame.experiment == "small") & (frame.metric == "test_error")].set_index(["params", "complexity",
                                                                                             "n_train"]).value
    full = end.pipe(lambda f: f[f.conversion == "last"]).set_index(["params", "complexity", "n_train"]).value
    assert (small.loc[full.index] == full).all()
    n_sv = frame[(frame.metric == "n_sv") & (frame.conversion == "online") & (frame.n_train == 4000)]
    assert (n_sv.value > 50).all()


def test_oms_records_its_ladder(oms_study):
    frame = read_results(oms_study[0])
    oms = frame[(frame.learner == "oms_lasvm") & (frame.conversion == "online") & (frame.n_train == 4000)]
    for kernel in ("rbf", "poly"):
        values = oms[oms.param_kernel == kernel].set_index("metric").value
        n_switches = int(values["oms_switches"])
        assert values["oms_level"] == 1 + n_switches
        switch_points = [values[f"oms_switch_{k}_n"] for k in range(1, n_switches + 1)]
        assert switch_points == sorted(switch_points) and all(30 <= n <= 4000 for n in switch_points)
    # a switch appears at the first checkpoint after it, not earlier: diagnostics that
    # appear during a run are stored at the sizes they were read at
    every = frame[(frame.learner == "oms_lasvm") & frame.metric.str.match(r"oms_switch_\d+_n")]
    assert len(every) and (every.value <= every.n_train).all()
    assert (every.groupby(["param_kernel", "metric"]).n_train.min().values < 4000).any()
    start = oms[(oms.param_kernel == "rbf")].set_index("metric").value["oms_start"]
    assert start > 0.0  # chosen by cross-validation


def test_the_study_figures_are_drawn(oms_study, tmp_path):
    frame = read_results(oms_study[0])
    for draw in (figures.figure_2, figures.figure_3, figures.figure_4):
        path = tmp_path / f"{draw.__name__}.png"
        draw(frame, path)
        assert path.stat().st_size > 10_000


def test_the_study_tables_agree_with_the_stored_results(oms_study, tmp_path):
    frame = read_results(oms_study[0])
    run = ResultRun(oms_study[0])
    tables = {table.name: new_table("oms", table.name, *table.make(run), source="dolb run oms.toml")
              for table in STUDIES["oms"].tables}
    assert [read_table(write_table(tmp_path, record)) for record in tables.values()] == list(tables.values())

    # the best fixed RBF width at 4,000 examples, from the experiment "small"
    small = frame[(frame.experiment == "small") & (frame.metric == "test_error") & (frame.n_train == 4000)
                  & (frame.param_kernel == "rbf")].groupby("param_gamma").value.mean().sort_values()
    assert ["RBF", 4000, 0.02, *small.index[:1], *small.iloc[:1], *small.index[1:2], *small.iloc[1:2]] in \
        tables["best_fixed"]["rows"]

    # OMS against fixed low (gamma 0.005) and high (gamma 0.03), the polynomial at 4,000
    end = frame[(frame.n_train == 4000) & (frame.metric == "test_error") & (frame.param_kernel == "poly")]
    oms = end[end.learner == "oms_lasvm"].value.iloc[0]
    fixed = end[(end.experiment == "full") & (end.conversion == "last")].set_index("param_degree").value
    rows = {(row[0], row[1]): row[2:] for row in tables["oms_vs_fixed"]["rows"]}
    assert rows["polynomial", 4000][1:] == pytest.approx([oms, fixed[1], fixed[3], 100 * (oms - min(fixed))])
    switched = switch_points(frame, "poly")
    assert rows["polynomial", 4000][0] == 1 + len(switched)  # the degree OMS is at

    findings = {row[0]: row[2] for row in tables["findings"]["rows"]}
    assert findings["final OMS error, polynomial (best fixed)"] == f"{oms:.2%} ({min(fixed):.2%})"
    moves = [f"{int(n):,} → d = {k + 1}" for k, n in enumerate(switched, start=1)]
    assert findings["polynomial: switches (examples → level)"] == ("; ".join(moves) or "none")


def switch_points(frame, kernel):
    """Examples seen at each switch of the OMS run with ``kernel``, read at 4,000."""
    last = frame[(frame.learner == "oms_lasvm") & (frame.param_kernel == kernel) & (frame.n_train == 4000)]
    found = last[last.metric.str.startswith("oms_switch_")].set_index("metric").value
    return [found[f"oms_switch_{k}_n"] for k in range(1, len(found) + 1)]


def test_a_rerun_computes_nothing(oms_study):
    out, _ = oms_study
    again = run_sweep(out / "pipeline.toml", out, RunOptions(workers=1, progress=False))
    assert again.n_computed == 0 and again.n_cached == 12
