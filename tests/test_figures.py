"""Figures a reader can read: every series told apart, equal series said to be equal,
the band drawn where the statistics put it, the legend off the data, markers at the
measured sizes. Checked on the matplotlib objects of the drawn figures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex
from scipy.stats import t as student_t

from dolb.results import compare_report
from dolb.results.figures import curve_panels
from dolb.results.tables import aggregate

SIZES = [10, 100, 1000, 10000]


def summary_of(keys: list[tuple], datasets=("d1", "d2"), count: int = 10) -> pd.DataFrame:
    """A summary of configurations ``(learner, params, conversion)``, each a distinct
    decreasing curve on every dataset."""
    rows = []
    for index, (learner, params, conversion) in enumerate(keys):
        for dataset in datasets:
            for n in SIZES:
                mean = (0.2 + 0.03 * index) * (n / 10) ** -0.3
                rows.append({"experiment": "e", "dataset": dataset, "task": "binary", "learner": learner,
                             "params": params, "complexity": "", "conversion": conversion, "n_train": n,
                             "metric": "test_error", "mean": mean, "ci95": 0.1 * mean, "q25": 0.9 * mean,
                             "q75": 1.1 * mean, "count": count})
    return pd.DataFrame(rows)


def drawn(fig, tmp_path):
    """Save ``fig`` (which lays it out; at low resolution, to be quick) and return its labelled lines."""
    fig.savefig(tmp_path / "f.png", dpi=40)
    return [line for ax in fig.axes for line in ax.get_lines() if not line.get_label().startswith("_")]


def triple(line) -> tuple:
    return to_hex(line.get_color()), line.get_linestyle(), line.get_marker()


CASES = {
    1: [("perceptron", "", "last")],
    10: [("pa", f"C={c}", "last") for c in range(10)],
    15: [(learner, "", conversion) for learner in ("adagrad", "ftrl", "pa", "perceptron", "sgd")
         for conversion in ("average", "cutoff", "last")],
    25: [(learner, f"eta={eta}", "last") for learner in ("a", "b", "c", "d", "e") for eta in range(5)],
}


@pytest.mark.parametrize("count", sorted(CASES))
def test_every_series_has_its_own_style_and_the_legend_is_off_the_data(tmp_path, count):
    datasets = ("d1", "d2") if count == 15 else ("d",)  # 15: a configuration keeps its look across datasets
    fig = curve_panels(summary_of(CASES[count], datasets), "e", "test_error", "title")
    lines = drawn(fig, tmp_path)
    styles = {}
    for line in lines:
        styles.setdefault(line.get_label(), set()).add(triple(line))
    assert len(styles) == count  # one legend entry per configuration
    assert all(len(found) == 1 for found in styles.values())  # the same look in every panel
    assert len({next(iter(found)) for found in styles.values()}) == count  # a look of its own
    assert all(line.get_color() != "#F0E442" for line in lines)  # no pale yellow
    assert max(len(ax.get_lines()) for ax in fig.axes) <= 7  # small multiples past 7 lines
    legend = fig.legends[0].get_window_extent()
    assert [t.get_text() for t in fig.legends[0].get_texts()] == sorted(styles, key=list(styles).index)
    for ax in fig.axes:
        if ax.get_visible():
            assert not legend.overlaps(ax.get_window_extent()), "the legend covers a panel"


def test_equal_series_are_labelled_identical_and_stay_visible(tmp_path):
    summary = summary_of([("perceptron", "", "average"), ("perceptron", "", "cutoff"), ("perceptron", "", "last")])
    average = summary["conversion"] == "average"
    summary.loc[summary["conversion"] == "cutoff", ["mean", "ci95"]] = summary.loc[average, ["mean", "ci95"]].values
    lines = {line.get_label(): line for line in drawn(curve_panels(summary, "e", "test_error", "t"), tmp_path)}
    assert sorted(lines) == ["perceptron, average", "perceptron, cutoff (identical to perceptron, average)",
                             "perceptron, last"]
    over, under = lines["perceptron, cutoff (identical to perceptron, average)"], lines["perceptron, average"]
    assert over.get_markerfacecolor() == "none" and over.get_markersize() > under.get_markersize()
    assert over.get_linestyle() != under.get_linestyle() and over.get_zorder() > under.get_zorder()
    assert "identical" not in lines["perceptron, last"].get_label()


def test_the_band_is_the_mean_plus_or_minus_the_t_half_width(tmp_path):
    values = {10: [0.30, 0.25, 0.41, 0.22, 0.35], 100: [0.12, 0.10, 0.15, 0.09, 0.11], 1000: [0.05, 0.06, 0.04]}
    rows = pd.DataFrame([{"experiment": "e", "dataset": "d", "task": "binary", "learner": "pa", "params": "",
                          "complexity": "", "conversion": "last", "n_train": n, "metric": "m", "value": v,
                          "split": i} for n, vs in values.items() for i, v in enumerate(vs)])
    summary = aggregate(rows, ("mean", "median", "ci95", "count", "q25", "q75"))
    fig = curve_panels(summary, "e", "m", "t")
    fig.savefig(tmp_path / "f.png", dpi=40)
    ax = fig.axes[0]
    (band,) = ax.collections
    vertices = band.get_paths()[0].vertices
    for n, vs in values.items():
        vs = np.array(vs)
        half = student_t.ppf(0.975, len(vs) - 1) * vs.std(ddof=1) / np.sqrt(len(vs))
        at_n = vertices[np.isclose(vertices[:, 0], n), 1]
        np.testing.assert_allclose([at_n.min(), at_n.max()], [vs.mean() - half, vs.mean() + half], rtol=1e-12)
    assert fig.legends[0].get_title().get_text().startswith("mean over n = 3–5 splits; band: 95 % Student-t")
    quartiles = curve_panels(summary, "e", "m", "t", statistic="median")
    vertices = quartiles.axes[0].collections[0].get_paths()[0].vertices
    np.testing.assert_allclose(vertices[np.isclose(vertices[:, 0], 10), 1].max(), np.quantile(values[10], 0.75))
    assert "band: first to third quartile" in quartiles.legends[0].get_title().get_text()


def test_markers_sit_at_the_measured_sizes_only(tmp_path):
    summary = summary_of([("pa", "", "last"), ("sgd", "", "last")], datasets=("d",))
    summary.loc[(summary["learner"] == "sgd") & (summary["n_train"] == 100), "mean"] = np.nan  # not measured
    lines = {line.get_label(): line for line in drawn(curve_panels(summary, "e", "test_error", "t"), tmp_path)}
    assert lines["pa"].get_xdata().tolist() == SIZES and lines["pa"].get_marker() not in ("", "None", None)
    assert lines["sgd"].get_xdata().tolist() == [10, 1000, 10000]
    expected = summary[(summary["learner"] == "sgd") & summary["mean"].notna()]["mean"]
    np.testing.assert_allclose(lines["sgd"].get_ydata(), expected)


def test_log_axes_have_plain_major_labels_and_minor_ticks_at_2_and_5(tmp_path):
    fig = curve_panels(summary_of([("pa", "", "last")], datasets=("d",)), "e", "test_error", "t")
    drawn(fig, tmp_path)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    low, high = ax.get_xlim()
    minor = [x for x in ax.xaxis.get_minorticklocs() if low <= x <= high]
    mantissas = {round(x / 10 ** np.floor(np.log10(x)), 6) for x in minor}
    assert mantissas == {2.0, 5.0}, minor
    labels = [t.get_text() for t in ax.xaxis.get_majorticklabels() if low <= t.get_position()[0] <= high]
    assert labels == ["10", "100", "1000", "10000"]


def test_more_configurations_than_can_be_told_apart_is_an_error():
    from dolb.errors import DataError
    from dolb.results.figure_style import MOST_SERIES

    summary = summary_of([("pa", f"C={c}", "last") for c in range(MOST_SERIES + 1)], datasets=("d",))
    with pytest.raises(DataError, match=f"e, test_error: {MOST_SERIES + 1} configurations in one figure"):
        curve_panels(summary, "e", "test_error", "t")


def tidy(learner: str, values, scale: float = 1.0) -> pd.DataFrame:
    """Rows of one configuration: ``values`` per split at sizes 10 and 100 (the second tenfold smaller)."""
    return pd.DataFrame([{"experiment": "e", "dataset": "d", "task": "binary", "learner": learner,
                          "params": "", "complexity": "", "conversion": "last", "n_train": n, "metric": "test_error",
                          "split": split, "value": scale * v * (1 if n == 10 else 0.1)}
                         for n in (10, 100) for split, v in enumerate(values)])


@pytest.fixture
def captured(monkeypatch):
    """The figures the nightly report saves."""
    figures = []
    real = compare_report.save
    monkeypatch.setattr(compare_report, "save", lambda fig, path: (figures.append(fig), real(fig, path)))
    return figures


def test_change_and_trend_figures_follow_the_same_rules(tmp_path, captured):
    splits = [0.30, 0.32, 0.29, 0.31]
    baseline = pd.concat([tidy("pa", splits), tidy("sgd", splits, 1.5)])
    run = pd.concat([tidy("pa", splits, 1.15), tidy("sgd", splits, 1.5)])  # pa 15 % worse
    configurations = baseline[compare_report.CONFIG_COLUMNS].drop_duplicates()
    compare_report.change_figure(configurations, "test_error", run, baseline, tmp_path / "change.png")
    table = compare_report.trend_table([aggregate(frame, ("mean",)) for frame in (baseline, baseline, run)])
    compare_report.trend_figure(table, ["a", "b", "c"], tmp_path / "trend.png")
    change, trend = captured
    top, bottom = change.axes
    assert len({triple(line) for line in top.get_lines()}) == 4  # two configurations, run and baseline
    np.testing.assert_allclose(bottom.get_lines()[0].get_ydata(), [15.0, 15.0])  # the relative change, in %
    assert bottom.get_xlabel() == "training examples" and top.get_yscale() == "log"
    assert not change.legends[0].get_window_extent().overlaps(top.get_window_extent())
    (ax,) = trend.axes
    assert ax.get_xlabel() == "night (oldest first)"
    pa = next(line for line in ax.get_lines() if line.get_label().startswith("pa"))
    np.testing.assert_allclose(pa.get_ydata(), [0.0, 0.0, 15.0])  # % change from the first night
    assert not ax.get_legend().get_window_extent().overlaps(ax.get_window_extent())


def test_learners_of_different_parameters_are_split_by_what_they_share(tmp_path):
    """A plugin learner with a parameter grid beside a built-in learner without it: the
    panels go by conversion (what every configuration has), each holding both learners;
    none is titled by a parameter some learners lack (``sigma0=`` with no value)."""
    conversions = ("average", "cutoff", "last", "suffix")
    keys = [("arow", f"sigma0={s}", c) for s in (1, 10) for c in conversions] + [
        ("perceptron", "", c) for c in conversions]
    fig = curve_panels(summary_of(keys, datasets=("a9a",)), "e", "test_error", "t")
    fig.savefig(tmp_path / "panels.png")
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == list(conversions)
    for ax in panels:
        labels = [line.get_label() for line in ax.get_lines()]
        assert [label.split(",")[0] for label in labels] == ["arow", "arow", "perceptron"], labels


def test_a_proportions_band_is_the_percentile_bootstrap_within_0_and_1(tmp_path):
    """Test errors near 0 over five splits: mean ± t half-width would go below 0; the
    band drawn (and the table's ci95) is scipy's percentile bootstrap of the mean, seeded
    as documented, inside [0, 1]."""
    from scipy.stats import bootstrap

    from dolb.results.tables import comparison_table

    values = {10: [0.0, 0.0, 0.04, 0.0, 0.01], 100: [0.0, 0.0, 0.0, 0.02, 0.0], 1000: [0.99, 1.0, 1.0, 0.97, 1.0]}
    rows = pd.DataFrame([{"experiment": "e", "dataset": "d", "task": "binary", "learner": "pa", "params": "",
                          "complexity": "", "conversion": "last", "n_train": n, "metric": "test_error", "value": v,
                          "split": i, "cell_id": f"c{i}"} for n, vs in values.items() for i, v in enumerate(vs)])
    summary = aggregate(rows)
    assert (summary["mean"] - summary["ci95"]).min() < 0 < 1 < (summary["mean"] + summary["ci95"]).max()
    fig = curve_panels(summary, "e", "test_error", "t")
    fig.savefig(tmp_path / "band.png")
    vertices = fig.axes[0].collections[0].get_paths()[0].vertices
    for n, vs in values.items():
        found = bootstrap((np.array(vs),), np.mean, n_resamples=2000, method="percentile",
                          rng=np.random.default_rng(0)).confidence_interval
        at_n = vertices[np.isclose(vertices[:, 0], n), 1]
        np.testing.assert_allclose([at_n.min(), at_n.max()], [found.low, found.high], rtol=1e-12, atol=1e-15)
        assert 0 <= at_n.min() <= at_n.max() <= 1
    assert "band: 95 % percentile bootstrap interval of the mean over splits" in fig.legends[0].get_title().get_text()
    table = comparison_table(summary, "e", "test_error", [10], ("mean", "ci95"))
    assert list(table.columns[-3:]) == ["mean @ 10", "ci_low @ 10", "ci_high @ 10"]
    assert table["ci_low @ 10"].iloc[0] >= 0
