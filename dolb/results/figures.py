"""Figures: a metric against training size, one line per configuration."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from dolb.results.tables import aggregate  # noqa: E402


def curve_figure(frame: pd.DataFrame, experiment: str, metric: str, title: str, path: Path) -> Path:
    """Draw the mean of ``metric`` over splits against training size, with a band of
    one standard deviation, and save it as PNG at ``path``.

    The x axis is logarithmic when training sizes span two decades or more, the y axis
    when the values are positive and span three.
    """
    subset = frame[(frame["experiment"] == experiment) & (frame["metric"] == metric)]
    table = aggregate(subset, ("mean", "std"))
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    keys = ["learner", "params", "complexity", "conversion"]
    for (learner, params, complexity, conversion), line in table.groupby(keys, sort=True):
        label = learner
        if complexity != "None":
            label += f" ({complexity})"
        if params:
            label += f" [{params}]"
        if conversion not in ("last", "online"):
            label += f", {conversion}"
        x, mean, std = line["n_train"], line["mean"], line["std"].fillna(0.0)
        (handle,) = ax.plot(x, mean, label=label, lw=1.6)
        ax.fill_between(x, mean - std, mean + std, color=handle.get_color(), alpha=0.15, lw=0)
    sizes, values = table["n_train"], table["mean"]
    if len(sizes) and sizes.max() >= 100 * sizes.min():
        ax.set_xscale("log")
    if len(values) and values.min() > 0 and values.max() >= 1000 * values.min():
        ax.set_yscale("log")
    ax.set_xlabel("training examples")
    ax.set_ylabel(metric)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if ax.lines:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
