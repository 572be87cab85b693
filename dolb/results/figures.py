"""Figures: a metric against training size, one line per configuration."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402


def config_labels(keys: list[tuple]) -> list[str]:
    """Legend labels naming the learner, its complexity, the conversion and only the
    parameters that differ between the lines of one figure."""
    split = [dict(p.split("=", 1) for p in params.split(", ") if p) for _, params, _, _ in keys]
    varying = sorted({k for d in split for k in d if len({e.get(k) for e in split}) > 1})
    several_conversions = len({conversion for *_, conversion in keys}) > 1
    labels = []
    for (learner, _, complexity, conversion), params in zip(keys, split):
        label = f"{learner} ({complexity})" if complexity else learner
        if varying:
            label += " " + ", ".join(f"{k}={params[k]}" for k in varying if k in params)
        if several_conversions:
            label += f", {conversion}"
        labels.append(label)
    return labels


def curve_figure(
    summary: pd.DataFrame, experiment: str, metric: str, title: str, path: Path, statistic: str = "mean"
) -> Path:
    """Draw ``statistic`` (``"mean"`` or ``"median"``) of ``metric`` over splits against
    training size, with the band between the first and third quartiles, one panel per
    dataset, from a summary (see :mod:`dolb.results.tables`), and save it as PNG at
    ``path``.

    A quartile band rather than a standard deviation: the spread of online losses is
    heavy-tailed, and a mean plus or minus a standard deviation can leave the plot.
    An x axis is logarithmic when training sizes span two decades or more, a y axis
    when the values are positive and span three.
    """
    table = summary[(summary["experiment"] == experiment) & (summary["metric"] == metric)]
    datasets = sorted(table["dataset"].unique()) or [""]
    columns = min(3, len(datasets))
    rows = -(-len(datasets) // columns)
    fig, axes = plt.subplots(
        rows, columns, figsize=(6.5 * columns, 4.2 * rows), dpi=110, squeeze=False, sharey=False
    )
    keys = ["learner", "params", "complexity", "conversion"]
    all_keys = sorted(set(map(tuple, table[keys].values.tolist())))
    labels = dict(zip(all_keys, config_labels(all_keys)))
    colours = dict(zip(all_keys, plt.rcParams["axes.prop_cycle"].by_key()["color"] * 10))
    for ax, dataset in zip(axes.flat, datasets):
        panel = table[table["dataset"] == dataset]
        for key, line in panel.groupby(keys, sort=True):
            ax.plot(line["n_train"], line[statistic], label=labels[key], color=colours[key], lw=1.6)
            ax.fill_between(line["n_train"], line["q25"], line["q75"], color=colours[key], alpha=0.15, lw=0)
        sizes, values = panel["n_train"], panel[statistic]
        if len(sizes) and sizes.max() >= 100 * sizes.min():
            ax.set_xscale("log")
        if len(values) and values.min() > 0 and values.max() >= 1000 * values.min():
            ax.set_yscale("log")
        ax.set_xlabel("training examples")
        ax.set_ylabel(f"{metric} ({statistic}, quartile band)")
        ax.set_title(dataset if len(datasets) > 1 else title)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(datasets):]:
        ax.set_visible(False)
    first = axes.flat[0]
    if first.lines:
        first.legend(fontsize=8)
    if len(datasets) > 1:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
