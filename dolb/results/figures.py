"""The curve of a metric against training size, one line per configuration, with the
band of its statistic over splits: the figure of a pipeline's ``curve`` reports. Its
style is :mod:`dolb.results.figure_style`'s.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dolb.errors import DataError
from dolb.results.figure_style import (
    MOST_SERIES,
    config_labels,
    config_order,
    draw_series,
    figure_legend,
    log_axes,
    natural_key,
    new_figure,
    overlaps,
    overlay,
    panel_groups,
    save,
    series_style,
    wants_log,
)
from dolb.results.intervals import BOOTSTRAP_BAND, T_BAND, is_proportion

BANDS = {"mean": (f"band: {T_BAND}", {"ci95"}),
         "median": ("band: first to third quartile", {"q25", "q75"})}
"""The band drawn around each statistic a curve can show, and the summary columns it
needs (a mean's band is ``ci_low`` to ``ci_high`` where the summary has them: see
:func:`band_edges`)."""


def band_edges(line: pd.DataFrame, statistic: str) -> tuple[pd.Series, pd.Series] | None:
    """The lower and upper edges of the band around ``statistic`` on the summary rows
    ``line``: the mean's 95 % interval ``ci_low`` to ``ci_high``
    (:func:`dolb.results.intervals.mean_intervals`: within [0, 1] for a proportion), or
    mean ± ``ci95`` (the t half-width over splits) in a summary without them, or ``q25``
    to ``q75``; None when the summary has no such columns."""
    if statistic == "mean" and {"ci_low", "ci_high"} <= set(line):
        return line["ci_low"], line["ci_high"]
    if not BANDS[statistic][1] <= set(line):
        return None
    if statistic == "median":
        return line["q25"], line["q75"]
    return line["mean"] - line["ci95"], line["mean"] + line["ci95"]


def caption(table: pd.DataFrame, statistic: str) -> str:
    """What a curve figure shows: the statistic, over how many splits, and its band.

    Examples
    --------
    >>> caption(pd.DataFrame({"count": [10, 8], "ci95": [0.1, 0.2]}), "mean")
    'mean over n = 8–10 splits; band: 95 % Student-t confidence interval of the mean'
    >>> caption(pd.DataFrame({"count": [5], "metric": "test_error", "task": "binary", "ci_low": [0.0],
    ...                       "ci_high": [0.1]}), "mean").split("; ")[1]
    'band: 95 % percentile bootstrap interval of the mean over splits (a proportion: within [0, 1])'
    """
    if "count" in table and len(table):
        low, high = int(table["count"].min()), int(table["count"].max())
        over = f"over n = {low} splits" if low == high else f"over n = {low}–{high} splits"
    else:
        over = "over splits (n not recorded)"
    band, needs = BANDS[statistic]
    if statistic == "mean" and {"ci_low", "ci_high", "metric", "task"} <= set(table) and len(table):
        bounded = {is_proportion(metric, task) for metric, task in zip(table["metric"], table["task"])}
        band, needs = f"band: {BOOTSTRAP_BAND if bounded == {True} else T_BAND}", {"ci_low", "ci_high"}
    return f"{statistic} {over}; {band if needs <= set(table) else 'no band'}"


def _layout(datasets: list, groups: list) -> tuple[int, int, list[tuple[int, int]], object]:
    """Rows, columns, the (dataset, group) of each panel and how y axes are shared: a
    panel per dataset (scales apart) or per group (one scale), in rows of three, or
    datasets as rows (one scale each) and groups as columns."""
    panels = [(d, g) for d in range(len(datasets)) for g in range(len(groups))]
    if len(groups) > 1 and len(datasets) > 1:
        return len(datasets), len(groups), panels, "row"
    columns = min(3, len(panels))
    return -(-len(panels) // columns), columns, panels, len(datasets) == 1


KEY_COLUMNS = ["learner", "params", "complexity", "conversion"]
"""The columns naming a configuration within an experiment and dataset."""


def curve_panels(summary: pd.DataFrame, experiment: str, metric: str, title: str, statistic: str = "mean"):
    """The figure of :func:`curve_figure`, not yet saved."""
    if statistic not in BANDS:
        raise ValueError(f"statistic must be one of {sorted(BANDS)}, got {statistic!r}")
    table = summary[(summary["experiment"] == experiment) & (summary["metric"] == metric)]
    table = table[np.isfinite(table[statistic].astype(float))].assign(complexity=lambda t: t["complexity"].astype(str))
    keys = sorted(set(map(tuple, table[KEY_COLUMNS].values.tolist())), key=config_order)
    if len(keys) > MOST_SERIES:
        raise DataError(f"{experiment}, {metric}: {len(keys)} configurations in one figure, more than "
                        f"{MOST_SERIES} cannot be told apart; report them as a table")
    datasets = sorted(table["dataset"].unique(), key=natural_key) or [""]
    groups = panel_groups(keys) if keys else [("", [], [])]
    rows, columns, panels, share = _layout(datasets, groups)
    single = len(panels) == 1
    fig, axes = new_figure(rows, columns, 6.5 if single else 4.6, 4.2 if single else 3.4,
                           layout="constrained", sharex=True, sharey=share)
    lines = {(dataset, tuple(key)): line.set_index("n_train").sort_index()
             for (dataset, *key), line in table.groupby(["dataset", *KEY_COLUMNS], sort=False)}
    panel_lines = [[(key, lines[datasets[d], key]) for key in groups[g][1] if (datasets[d], key) in lines]
                   for d, g in panels]

    def scaled(d: int) -> pd.Series:  # the values one y scale is chosen for: a row's, or all
        return table.loc[table["dataset"] == datasets[d], statistic] if share == "row" else table[statistic]

    close, legend = _overlap_notes(panel_lines, [wants_log(scaled(d), 1) for d, _ in panels], keys, statistic)
    styles = {key: series_style(p, g) for g, (_, group, positions) in enumerate(groups)
              for key, p in zip(group, positions)}
    handles = {}
    for ax, (d, g), drawn in zip(axes.flat, panels, panel_lines):
        for key, line in drawn:
            style = overlay(styles[key]) if key in close else styles[key]
            handles.setdefault(key, draw_series(ax, line[statistic], style, legend[key], band_edges(line, statistic)))
        log_axes(ax, table["n_train"], scaled(d))
        ax.set_title(" — ".join(t for t in (datasets[d] if len(datasets) > 1 else "", groups[g][0]) if t),
                     fontsize=10)
        ax.grid(alpha=0.3)
    _label_axes(axes, len(panels), metric)
    fig.suptitle(title)
    if handles:
        figure_legend(fig, list(handles.values()), [legend[k] for k in handles], caption(table, statistic))
    return fig


def _overlap_notes(panel_lines: list[list[tuple]], logs: list[bool], keys: list[tuple], statistic: str):
    """Which configurations are drawn over an equal or close earlier one in some panel
    (:func:`~dolb.results.figure_style.overlaps`), and every configuration's legend
    label, saying which it is identical to and in how many of its panels."""
    close, identical, shown = set(), {}, {}
    for drawn, log in zip(panel_lines, logs):
        found = overlaps([line[statistic] for _, line in drawn], log)
        for (key, _), same in zip(drawn, found):
            shown[key] = shown.get(key, 0) + 1
            if same is not None:
                close.add(key)
            if same is not None and same[0] == "identical":
                identical.setdefault(key, []).append(drawn[same[1]][0])
    labels = dict(zip(keys, config_labels(keys)))
    return close, {key: labels[key] + _identical_note(identical.get(key, []), shown.get(key, 0), labels)
                   for key in keys}


def _identical_note(equal_to: list[tuple], panels: int, labels: dict) -> str:
    """The legend's note on a series equal to an earlier one in some of its panels."""
    if not equal_to:
        return ""
    names = " / ".join(dict.fromkeys(labels[k] for k in equal_to))
    where = "" if len(equal_to) == panels else f" in {len(equal_to)} of {panels} panels"
    return f" (identical to {names}{where})"


def _label_axes(axes, used: int, metric: str) -> None:
    """Hide the unused panels; name the y axis in the first column and the x axis (with
    tick labels) under the last panel of each column."""
    columns = axes.shape[1]
    for index, ax in enumerate(axes.flat):
        if index >= used:
            ax.set_visible(False)
            continue
        if index % columns == 0:
            ax.set_ylabel(metric)
        if index + columns >= used:
            ax.xaxis.set_tick_params(labelbottom=True)
            ax.set_xlabel("training examples")


def curve_figure(
    summary: pd.DataFrame, experiment: str, metric: str, title: str, path: Path, statistic: str = "mean"
) -> Path:
    """Draw ``statistic`` (``"mean"`` or ``"median"``) of ``metric`` over splits against
    training size from a summary (see :func:`dolb.results.query.summary`), one panel
    per dataset and per group of configurations (past
    :data:`~dolb.results.figure_style.PANEL_LINES` of them), and save it as PNG at
    ``path``.

    The mean is drawn with its 95 % confidence band over splits (Student-t, or for a
    proportion the percentile bootstrap, which stays in [0, 1]: :mod:`dolb.results.intervals`),
    the median with its quartile band (the spread of online losses is heavy-tailed);
    the legend, below the panels, says which and over how many splits. Axes are
    logarithmic as :func:`log_axes` decides.
    """
    save(curve_panels(summary, experiment, metric, title, statistic), path)
    return Path(path)
