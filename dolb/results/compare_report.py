"""The nightly comparison of two result folders, written as a report: its figures (the
significant changes, the trend over past nights) and its pages
(:mod:`dolb.results.compare_page`: Markdown, one self-contained HTML page, the CSV of
every row). The statistics are :mod:`dolb.results.compare`'s."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dolb import location
from dolb.errors import ConfigError, DataError
from dolb.evaluation.metrics import METRICS, deterministic_metrics
from dolb.results import query
from dolb.results.agreement import RTOL, Agreement, agreement_of
from dolb.results.compare import (
    ALPHA,
    FIGURE_LINES,
    KEYS,
    SLOWDOWN,
    TREND_LINES,
    Comparison,
    compare_frames,
    compare_stores,
    pipeline_name,
)
from dolb.results.compare_page import write_pages
from dolb.results.figure_style import (
    PANEL_LINES,
    config_labels,
    draw_lines,
    figure_legend,
    log_axes,
    new_figure,
    save,
    series_style,
)
from dolb.results.history import machines, read_records, same_machines
from dolb.results.intervals import BOOTSTRAP_BAND, T_BAND, is_proportion
from dolb.results.nightly_gate import Confirm, judge_nights
from dolb.results.report import slug
from dolb.results.store import ResultStore
from dolb.results.tables import CONFIG_COLUMNS, TIDY_COLUMNS, aggregate


class _Results:
    """A result folder as the comparison reads it: its Parquet store, asked in DuckDB
    for small answers only (the client's memory is bounded by the comparison, not by
    the rows)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.store = ResultStore(folder)
        query.check_complete(self.store)
        if not self.store.exists():
            raise DataError(f"{folder}: not a result folder (no results; run `dolb run` first)")

    def metrics(self) -> set[str]:
        """Every metric stored."""
        return set(query.distinct(self.store, ["metric"])["metric"])

    def judged_keys(self) -> set[tuple]:
        """The configuration × training size × judged metric rows present (as text)."""
        judged = deterministic_metrics()
        keys = query.distinct(self.store, KEYS, f"metric IN ({', '.join('?' * len(judged))})", tuple(judged))
        return set(keys.astype(str).itertuples(index=False, name=None))

    def rows(self, experiment: str, metric: str) -> pd.DataFrame:
        """The rows of one experiment's ``metric``."""
        return query.rows(self.store, "experiment = ? AND metric = ?", (experiment, metric), columns=TIDY_COLUMNS)

    def judged_summary(self) -> pd.DataFrame:
        """The mean over splits of every judged metric, per configuration and size."""
        judged = deterministic_metrics()
        return query.summary(self.store, f"metric IN ({', '.join('?' * len(judged))})", tuple(judged))


def _agreement(run: _Results, baseline: _Results, rtol: float) -> Agreement:
    """How the judged values of the two folders agree, value by value."""
    return agreement_of(query.paired_agreement(run.store, baseline.store, list(deterministic_metrics())), rtol)


def _machines(run: str, baseline: str) -> tuple[str, str]:
    """What did the arithmetic of the two folders' last finished runs, when their kinds of
    worker differ; empty otherwise (or when a folder has no record)."""
    records = []
    for folder in (run, baseline):
        store = ResultStore(folder)
        finished = [record for record in read_records(store) if record.get("ended")] if store.exists() else []
        records.append(finished[-1] if finished else {})
    return ("", "") if same_machines(*records) else (machines(records[0]), machines(records[1]))


def _check_options(alpha: float, slowdown: float) -> None:
    if not 0 < alpha < 1:
        raise ConfigError(f"--alpha must be between 0 and 1, got {alpha}")
    if not slowdown > 0:
        raise ConfigError(f"--slowdown must be positive, got {slowdown}")


def _check_same_pipeline(folders: list[str]) -> str:
    """The pipeline name all ``folders`` share; ConfigError naming two that differ."""
    names = {folder: pipeline_name(folder) for folder in folders}
    first = folders[0]
    for folder, name in names.items():
        if name != names[first]:
            raise ConfigError(
                f"{folder} is a run of pipeline {name!r} but {first} of {names[first]!r}; "
                "compare runs of the same pipeline"
            )
    return names[first]


def compare_folders(
    run: str | Path,
    baseline: str | Path,
    out: str | Path,
    *,
    alpha: float = ALPHA,
    slowdown: float = SLOWDOWN,
    history: tuple[str | Path, ...] | list[str | Path] = (),
    rtol: float | None = None,
    confirm: Confirm | None = None,
) -> Comparison:
    """Compare the result folder ``run`` with ``baseline`` and write the report.

    Writes ``out/compare.md``, ``out/compare.html`` (self-contained),
    ``out/compare.csv`` (every row of :func:`compare_frames`), a PNG per experiment ×
    metric with a significant change, ``out/throughput.csv`` when there are
    ``bench.json`` files and, when ``history`` (earlier nights' result folders, oldest
    first) is given, ``out/trend.png`` over ``history`` and then ``run``. Every check
    is made before anything is written. The judged values are also compared one by one
    (:mod:`dolb.results.agreement`): bit-identical, within floating-point noise (then the
    machines of the two runs, when they differ, are named as the likely cause) or beyond
    ``rtol`` (given, that is a regression).
    The throughput is judged by
    :func:`dolb.results.nightly_gate.judge_nights` (the history band over
    ``history``); with ``confirm`` (:func:`dolb.bench.ab.confirm_commits`) a
    suspected slowdown is an alarm only when an interleaved A/B confirms it.

    Raises
    ------
    DataError
        A folder is not a result folder, the runs have nothing in common, or (with
        ``confirm`` and a suspect) a night's git commit is not recorded.
    ConfigError
        The folders ran different pipelines, a threshold is out of range, or the A/B
        could not run (git, an environment, a benchmark).

    Examples
    --------
    >>> comparison = compare_folders("runs/tonight", "runs/baseline", "runs/tonight/compare")  # doctest: +SKIP
    >>> comparison.summary()  # doctest: +SKIP
    '24 compared: 1 worse, 0 better, 23 unchanged'
    """
    _check_options(alpha, slowdown)
    run, baseline, out = str(run), str(baseline), str(out)
    if location.is_file(out):
        raise ConfigError(f"{out}: a file, not a folder for the report")
    nights = [str(folder) for folder in history] + [run]
    results = {folder: _Results(folder) for folder in [run, baseline, *nights]}
    name = _check_same_pipeline(list(results))
    table = compare_stores(results[run].store, results[baseline].store, alpha)
    if table.empty:
        raise DataError(f"{run} and {baseline}: no configuration, training size and judged metric in common")
    ours, theirs = results[run].judged_keys(), results[baseline].judged_keys()
    metrics = results[run].metrics() | results[baseline].metrics()
    speed = judge_nights(run, baseline, history, slowdown, confirm)
    comparison = Comparison(
        table,
        speed.table,
        alpha,
        slowdown,
        len(ours - theirs),
        len(theirs - ours),
        tuple(sorted(metrics - set(deterministic_metrics()))),
        _agreement(results[run], results[baseline], RTOL if rtol is None else rtol),
        _machines(run, baseline),
        rtol,
        speed.ab,
        speed.machines,
        speed.note,
    )
    trend = trend_table([results[night].judged_summary() for night in nights]) if history else None
    with location.local_folder(out) as folder:  # every folder read: now the report is written
        figures = change_figures(comparison.significant(), results[run], results[baseline], folder)
        if trend is not None:
            figures.append(trend_figure(trend, [location.name_of(n) for n in nights], folder / "trend.png"))
        write_pages(comparison, figures, folder, f"{name}: {run} against {baseline}")
    return comparison


# --- figures --------------------------------------------------------------------------


def change_figures(significant: pd.DataFrame, run: _Results, baseline: _Results, out: Path) -> list[Path]:
    """One PNG per experiment × metric with a significant change: the metric against
    training size in both runs for the configurations that changed (at most
    :data:`FIGURE_LINES`, smallest q first), read from the folders for that experiment
    and metric only. Returns the paths written."""
    paths = []
    for (experiment, metric), rows in significant.groupby(["experiment", "metric"], sort=True):
        configurations = rows.sort_values("q", kind="stable")[CONFIG_COLUMNS].drop_duplicates().head(FIGURE_LINES)
        path = out / f"compare-{slug(experiment)}-{slug(metric)}.png"
        paths.append(change_figure(configurations, metric, run.rows(experiment, metric),
                                   baseline.rows(experiment, metric), path))
    return paths


def change_figure(
    configurations: pd.DataFrame, metric: str, run: pd.DataFrame, baseline: pd.DataFrame, path: Path
) -> Path:
    """Draw ``metric`` against training size for ``configurations`` (rows of
    :data:`~dolb.results.tables.CONFIG_COLUMNS`) and save as PNG: above, the mean over
    splits with its 95 % band (:mod:`dolb.results.intervals`), the run with filled markers and the baseline dashed
    with open ones, a colour and marker per configuration; below, the paired change
    (run − baseline) / |baseline mean| in % with its 95 % t interval, so that a 15 %
    change is as tall at 10 examples as at 10,000."""
    keys = list(configurations.itertuples(index=False, name=None))
    labels = config_labels([(c[3], c[4], c[5], c[6]) for c in keys])
    if configurations["dataset"].nunique() > 1:
        labels = [f"{label} [{key[1]}]" for label, key in zip(labels, keys)]
    fig, axes = new_figure(2, 1, width=7, height=2.6, layout="constrained", sharex=True,
                           gridspec_kw={"height_ratios": [2, 1]})
    top, bottom = axes[:, 0]
    chosen = {}
    for which, frame in (("run", run), ("baseline", baseline)):
        subset = frame[frame["metric"] == metric].assign(complexity=lambda f: f["complexity"].astype(str))
        chosen[which] = subset.merge(configurations, on=CONFIG_COLUMNS)
    paired = compare_frames(chosen["run"], chosen["baseline"]).set_index(CONFIG_COLUMNS)
    means, changes, counts = [], [], []
    for position, (key, label) in enumerate(zip(keys, labels)):
        style = series_style(position % PANEL_LINES, position // PANEL_LINES)
        for which, look in (("run", style), ("baseline", {**style, "linestyle": "--", "markerfacecolor": "none"})):
            line = aggregate(chosen[which].merge(configurations.iloc[[position]]), ("mean", "ci_low", "ci_high",
                                                                                      "count"))
            line = line.set_index("n_train")
            means.append((line["mean"], look, f"{label}, {which}", (line["ci_low"], line["ci_high"])))
            counts += line["count"].tolist()
        if key in paired.index:
            change = paired.loc[[key]].set_index("n_train")
            scale = 100 / change["baseline"].abs()
            changes.append((change["relative"] * 100, style, label, (change["ci_low"] * scale,
                                                                     change["ci_high"] * scale)))
    every = pd.concat([values for values, *_ in means])
    log_axes(top, pd.Series(every.index), every)
    handles = draw_lines(top, means, top.get_yscale() == "log")
    draw_lines(bottom, changes)
    bottom.axhline(0, color="grey", lw=0.8)
    top.set_ylabel(f"{metric} (mean)")
    bottom.set_ylabel("change (%)")
    bottom.set_xlabel("training examples")
    top.set_title(f"{configurations['experiment'].iloc[0]}: {metric}, run against baseline")
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
    low, high = min(counts), max(counts)
    n = f"n = {low}" if low == high else f"n = {low}–{high}"
    band = BOOTSTRAP_BAND if is_proportion(metric, configurations["task"].iloc[0]) else T_BAND
    caption = (f"mean over {n} splits, band: {band}; run filled, baseline open and dashed; "
               "below: paired change (run − baseline) / |baseline| with its 95 % interval")
    figure_legend(fig, handles, [h.get_label() for h in handles], caption)
    save(fig, path)
    return path


def trend_table(summaries: list[pd.DataFrame]) -> pd.DataFrame:
    """The mean over splits of every judged metric at its largest training size (per
    experiment, dataset and metric), one row per configuration × metric, one column per
    night (``0`` the oldest), from each night's summary (a ``mean`` per configuration,
    training size and metric, as :func:`dolb.results.query.summary` gives it).

    Examples
    --------
    >>> import pandas as pd
    >>> night = lambda v: pd.DataFrame({"experiment": "e", "dataset": "d", "task": "regression",
    ...     "learner": "irma", "params": "", "complexity": "3", "conversion": "last",
    ...     "n_train": [50, 10], "metric": "test_mse", "mean": [v, 99.0]})
    >>> trend_table([night(2.0), night(4.0)]).values.tolist()
    [[2.0, 4.0]]
    """
    means = []
    for summary in summaries:
        judged = summary[summary["metric"].isin(METRICS.names())]
        judged = judged.assign(complexity=judged["complexity"].astype(str))
        largest = judged.groupby(["experiment", "dataset", "metric"])["n_train"].transform("max")
        at_largest = judged[judged["n_train"] == largest]
        means.append(at_largest.groupby(CONFIG_COLUMNS + ["metric"], sort=True, dropna=False)["mean"].first())
    return pd.concat(means, axis=1, keys=range(len(summaries)))


def largest_changes(panel: pd.DataFrame, lines: int = TREND_LINES) -> pd.DataFrame:
    """The ``lines`` rows of a trend table whose last value differs most, relative to
    the first (each taken over the nights that have one), largest first.

    Examples
    --------
    >>> import pandas as pd
    >>> panel = pd.DataFrame([[1.0, 1.1], [1.0, 3.0], [2.0, 1.0]], index=["a", "b", "c"])
    >>> largest_changes(panel, 2).index.tolist()
    ['b', 'c']
    """
    first = panel.bfill(axis=1).iloc[:, 0]
    last = panel.ffill(axis=1).iloc[:, -1]
    change = ((last - first) / first.abs()).abs()
    return panel.loc[change.sort_values(ascending=False, na_position="last").index[:lines]]


def trend_figure(table: pd.DataFrame, nights: list[str], path: Path, lines: int = TREND_LINES) -> Path:
    """Draw a :func:`trend_table`: one panel per experiment × metric, the change of the
    mean from the first night that has it (in %), per night, of the ``lines``
    configurations that changed most; the legend, beside each panel, gives that first
    value. A relative scale: a 15 % regression is as tall on any metric at any level.
    Save as PNG at ``path``."""
    panels = list(table.groupby(level=["experiment", "metric"], sort=True))
    fig, axes = new_figure(len(panels), 1, width=11, height=3.4, layout="constrained", sharex=True)
    x = np.arange(len(nights))
    for ax, ((experiment, metric), panel) in zip(axes.flat, panels):
        chosen = largest_changes(panel, lines)
        keys = [(k[3], k[4], k[5], k[6]) for k in chosen.index]
        labels = config_labels(keys)
        if chosen.index.get_level_values("dataset").nunique() > 1:
            labels = [f"{label} [{key[1]}]" for label, key in zip(labels, chosen.index)]
        series, firsts = [], []
        for position, (label, (_, values)) in enumerate(zip(labels, chosen.iterrows())):
            first = values.dropna().iloc[0] if values.notna().any() else np.nan
            change = pd.Series(100 * (values.to_numpy(dtype=float) / first - 1) if first else np.nan, index=x)
            series.append((change.dropna(), series_style(position % PANEL_LINES, position // PANEL_LINES), label, None))
            firsts.append(f"; first {first:.3g}")
        draw_lines(ax, series, notes=firsts)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xticks(x, nights, rotation=30, ha="right", fontsize=7)
        ax.xaxis.set_tick_params(labelbottom=True)
        ax.set_xlabel("night (oldest first)")
        ax.set_ylabel(f"{metric}: change from first night (%)", fontsize=8)
        ax.set_title(f"{experiment}: {metric}, mean at the largest training size")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    save(fig, path)
    return path
