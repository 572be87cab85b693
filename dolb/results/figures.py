"""Figures: a metric against training size, one line per configuration, and the rules
every dolb figure shares (its canvas, its logarithmic axes, its legend labels).

Figures are drawn on :class:`matplotlib.figure.Figure` objects with the Agg canvas and
never through ``pyplot``: no global backend is chosen at import, nothing is shown on a
screen, and drawing is safe in a worker's threads.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def new_figure(rows: int = 1, columns: int = 1, width: float = 6.5, height: float = 4.2):
    """A figure of ``rows`` × ``columns`` panels of ``width`` × ``height`` inches on the
    Agg canvas; returns ``(figure, axes)`` with ``axes`` a 2-D array."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width * columns, height * rows), dpi=110)
    FigureCanvasAgg(figure)
    return figure, figure.subplots(rows, columns, squeeze=False)


def save(figure, path) -> None:
    """Save ``figure`` as PNG at ``path``, the texts dolb wrote (titles, axis labels,
    legend entries) drawn as written: names holding ``$`` or ``\\`` are not read as
    mathtext. Tick labels keep theirs (a log axis writes 10^k in it)."""
    written = list(figure.texts)
    for ax in figure.axes:
        written += [ax.title, ax.xaxis.label, ax.yaxis.label]
        if ax.get_legend() is not None:
            written += ax.get_legend().get_texts()
    for text in written:
        text.set_parse_math(False)
    figure.savefig(path)


def colour_cycle() -> list[str]:
    """The colours of the current matplotlib style, in order."""
    import matplotlib

    return matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]


def log_axes(ax, sizes: pd.Series | None = None, values: pd.Series | None = None) -> None:
    """Make the x axis logarithmic where training ``sizes`` span two decades or more,
    and the y axis where the finite ``values`` are positive and span three."""
    if sizes is not None and len(sizes) and sizes.max() >= 100 * sizes.min() > 0:
        ax.set_xscale("log")
    if values is not None:
        finite = values[np.isfinite(values)]
        if len(finite) and finite.min() > 0 and finite.max() >= 1000 * finite.min():
            ax.set_yscale("log")



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
    fig, axes = new_figure(rows, columns)
    keys = ["learner", "params", "complexity", "conversion"]
    all_keys = sorted(set(map(tuple, table[keys].values.tolist())))
    labels = dict(zip(all_keys, config_labels(all_keys)))
    colours = dict(zip(all_keys, colour_cycle() * 10))
    for ax, dataset in zip(axes.flat, datasets):
        panel = table[table["dataset"] == dataset]
        for key, line in panel.groupby(keys, sort=True):
            ax.plot(line["n_train"], line[statistic], label=labels[key], color=colours[key], lw=1.6)
            ax.fill_between(line["n_train"], line["q25"], line["q75"], color=colours[key], alpha=0.15, lw=0)
        log_axes(ax, panel["n_train"], panel[statistic])
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
    save(fig, path)
    return path
