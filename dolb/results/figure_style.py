"""The rules every dolb figure shares: canvas, palette, series styles, axis scales,
labels, panels of a few lines each, a legend outside the data.

Every series of a figure has its own (colour, line style, marker): colours from Okabe
and Ito's colour-blind-safe palette, told apart by line style and marker as well, so a
figure stays readable in grey and however many lines it has. Markers sit at the
measured training sizes and lines only join them. A series equal to (or within 1 % of
the axis span of) an earlier one in its panel is drawn on top, dashed, with larger open
markers, so both stay visible; the legend says "identical to ..." when the two are
equal. Past :data:`PANEL_LINES` configurations the curves are split into small
multiples with shared axes.

Figures are drawn on :class:`matplotlib.figure.Figure` objects with the Agg canvas and
never through ``pyplot``: no global backend is chosen at import, nothing is shown on a
screen, and drawing is safe in a worker's threads.
"""

from __future__ import annotations

import re
import textwrap

import numpy as np
import pandas as pd

from dolb.results.store import TUNED

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000")
"""Okabe and Ito's colour-blind-safe colours (blue, orange, bluish green, vermillion,
reddish purple, sky blue, black), their yellow left out: too pale on white."""

LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X")

PANEL_LINES = len(PALETTE)
"""The most lines one panel holds; more configurations are split into panels."""

MOST_SERIES = PANEL_LINES * 21
"""The most configurations one figure tells apart (see :func:`series_style`)."""


def new_figure(rows: int = 1, columns: int = 1, width: float = 6.5, height: float = 4.2, **options):
    """A figure of ``rows`` × ``columns`` panels of ``width`` × ``height`` inches on the
    Agg canvas; returns ``(figure, axes)`` with ``axes`` a 2-D array. ``options`` go to
    :meth:`~matplotlib.figure.Figure.subplots` (``sharex``, ``sharey``), but ``layout``
    to the figure (``"constrained"`` makes room for a legend outside the panels)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width * columns, height * rows), dpi=110, layout=options.pop("layout", None))
    FigureCanvasAgg(figure)
    return figure, figure.subplots(rows, columns, squeeze=False, **options)


def save(figure, path) -> None:
    """Save ``figure`` as PNG at ``path``, the texts dolb wrote (titles, axis labels,
    legend entries and titles) drawn as written: names holding ``$`` or ``\\`` are not
    read as mathtext. Tick labels keep theirs (a log axis writes 10^k in it)."""
    written = list(figure.texts)  # suptitle and supxlabel among them
    legends = list(figure.legends)
    for ax in figure.axes:
        written += [ax.title, ax.xaxis.label, ax.yaxis.label]
        legends += [ax.get_legend()] if ax.get_legend() is not None else []
    for legend in legends:
        written += [*legend.get_texts(), legend.get_title()]
    for text in written:
        text.set_parse_math(False)
    figure.savefig(path)


def series_style(position: int, group: int = 0) -> dict:
    """The style of the series at ``position`` (0 to 6) in its panel, in panel group
    ``group``: the colour by position, the line style by group, the marker by both.
    The (colour, marker) pair differs for every position and for groups up to 6 apart;
    with the line style, and with :func:`overlay` applied to any of them, the triple is
    unique for 21 groups (:data:`MOST_SERIES` series).

    Examples
    --------
    >>> series_style(0), series_style(1, 1)["marker"]
    ({'color': '#0072B2', 'linestyle': '-', 'marker': 'o'}, '^')
    """
    return {"color": PALETTE[position], "linestyle": LINE_STYLES[group % len(LINE_STYLES)],
            "marker": MARKERS[(position + group) % len(MARKERS)]}


def overlay(style: dict) -> dict:
    """``style`` for a series drawn over an equal one: the next line style, open markers,
    a little larger, so the series below shows through."""
    following = LINE_STYLES[(LINE_STYLES.index(style["linestyle"]) + 1) % len(LINE_STYLES)]
    return {**style, "linestyle": following, "markerfacecolor": "none", "overlay": True}


def wants_log(values, decades: int) -> bool:
    """Whether finite ``values`` are positive and span ``decades`` decades or more.

    Examples
    --------
    >>> wants_log([0.03, 0.2, 0.5], 1), wants_log([0.1, 0.5], 1), wants_log([0.0, 5.0], 1)
    (True, False, False)
    """
    values = np.asarray(values, dtype=float)
    finite = values[np.isfinite(values)]
    return bool(len(finite) and finite.min() > 0 and finite.max() >= 10**decades * finite.min())


def log_axes(ax, sizes=None, values=None) -> None:
    """Make the x axis logarithmic where training ``sizes`` span two decades or more,
    and the y axis where the ``values`` are positive and span one: then a relative
    change, say 15 %, is the same height at every size and every level of the metric.
    Log ticks are written as plain numbers (0.05, not 5 × 10⁻²); unlabelled minor ticks
    mark 2 and 5 times each power of ten (not every multiple: a tick is an artist that
    the layout measures; what that costs: docs/guide/reports.md)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    plain = FuncFormatter(lambda value, _: f"{value:g}")
    if sizes is not None and wants_log(sizes, 2):
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(plain)
    if values is not None and wants_log(values, 1):
        ax.set_yscale("log")
        if not wants_log(values, 2):  # under two decades: ticks at 1, 2, 3 and 5 times a power of ten
            ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 3, 5)))
        ax.yaxis.set_major_formatter(plain)
    for axis in (ax.xaxis, ax.yaxis):
        if axis.get_scale() == "log":
            axis.set_minor_locator(LogLocator(subs=(2, 5)))
            axis.set_minor_formatter(NullFormatter())


def natural_key(text) -> list:
    """A sort key reading the digits in ``text`` as numbers: ``"4"`` before ``"10"``."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", str(text))]


def config_order(key: tuple) -> tuple:
    """The sort key of a configuration ``(learner, params, complexity, conversion)``:
    names alphabetically, numbers in them by value."""
    return tuple(natural_key(part) for part in key)


def _parameters(params: str) -> dict[str, str]:
    """``"a=1, b=x"`` as a dict; a part without ``=`` (``tuned``) maps to ``""``."""
    return dict(part.split("=", 1) if "=" in part else (part, "") for part in params.split(", ") if part)


def _tuned(params: str) -> bool:
    return params.split(", ")[0] == TUNED


def config_labels(keys: list[tuple]) -> list[str]:
    """Legend labels of configurations ``(learner, params, complexity, conversion)``: the
    learner with its complexity, then only the parameters that differ between
    configurations of that learner (by name), and the conversion when there are
    several, joined by ", ".

    Examples
    --------
    >>> config_labels([("perceptron", "", "", "average"), ("pa", "C=1", "", "last")])
    ['perceptron, average', 'pa, last']
    >>> config_labels([("pa", "C=1, variant=pa1", "", "last"), ("pa", "C=2, variant=pa1", "", "last")])
    ['pa, C=1', 'pa, C=2']
    >>> config_labels([("irma", "basis=legendre", "4", "last")])
    ['irma (4)']
    >>> config_labels([("sgd", "eta0=0.1, loss=log", "", "last"), ("sgd", "tuned, loss=log", "", "last"),
    ...                ("sgd", "tuned, loss=hinge", "", "last")])
    ['sgd', 'sgd, tuned, loss=log', 'sgd, tuned, loss=hinge']
    """
    split = [_parameters(params) for _, params, _, _ in keys]
    by_learner: dict[tuple[str, bool], list[dict]] = {}  # tuned configurations apart from listed ones
    for (learner, params_label, *_), params in zip(keys, split):
        by_learner.setdefault((learner, _tuned(params_label)), []).append(params)
    varying = {key: {k for d in group for k in d if len({e.get(k) for e in group}) > 1}
               for key, group in by_learner.items()}
    several_conversions = len({conversion for *_, conversion in keys}) > 1
    labels = []
    for (learner, params_label, complexity, conversion), params in zip(keys, split):
        tuned = _tuned(params_label)
        parts = [f"{learner} ({complexity})" if complexity else learner] + ([TUNED] if tuned else [])
        parts += [f"{k}={params[k]}" for k in sorted(params) if k in varying[(learner, tuned)] and params[k]]
        parts += [conversion] if several_conversions else []
        labels.append(", ".join(parts))
    return labels


def _dimensions(keys: list[tuple]) -> dict[str, list[str]]:
    """Each way the configurations differ (learner, complexity, conversion, a
    parameter), with every configuration's value; a complexity or a parameter only
    when every configuration has one (learners of different parameters are split by
    what they share: a panel is never titled ``name=`` with no value).

    >>> sorted(_dimensions([("arow", "sigma0=1", "", "last"), ("pa", "", "", "last")]))
    ['learner']
    """
    split = [_parameters(k[1]) for k in keys]
    found = {"learner": [k[0] for k in keys], "conversion": [k[3] for k in keys],
             "complexity": [k[2] for k in keys]}
    found |= {name: [d.get(name, "") for d in split] for name in sorted({n for d in split for n in d})}
    return {name: values for name, values in found.items()
            if len(set(values)) > 1 and not {"", "nan"} & set(values)}


_POSITIONS = {"learner": 0, "complexity": 2, "conversion": 3}
"""Where in a configuration ``(learner, params, complexity, conversion)`` each name is."""


def _rest(key: tuple, name: str) -> tuple:
    """A configuration with the way ``name`` in which it differs taken out."""
    if name in _POSITIONS:
        return key[: _POSITIONS[name]] + ("",) + key[_POSITIONS[name] + 1:]
    params = ", ".join(p for p in key[1].split(", ") if p and p.split("=", 1)[0] != name)
    return (key[0], params, key[2], key[3])


def panel_groups(keys: list[tuple]) -> list[tuple[str, list[tuple], list[int]]]:
    """Configurations (sorted by :func:`config_order`) split into panels of at most
    :data:`PANEL_LINES`: ``(title, keys, positions)`` per panel. One panel when they
    fit; else one per value of the way they differ that needs the fewest panels (at
    most twice as many as runs of seven would), where a configuration keeps its
    position, so its colour, from panel to panel; else consecutive runs of near-equal
    size.

    Examples
    --------
    >>> keys = [(name, "", "", c) for name in "abcde" for c in ("average", "cutoff", "last")]
    >>> [(title, len(k), p) for title, k, p in panel_groups(keys)][0]
    ('average', 5, [0, 1, 2, 3, 4])
    """
    keys = sorted(keys, key=config_order)
    if len(keys) <= PANEL_LINES:
        return [("", keys, list(range(len(keys))))]
    count = -(-len(keys) // PANEL_LINES)
    best = None
    for name, values in _dimensions(keys).items():
        distinct = sorted(set(values), key=natural_key)
        groups = [[k for k, v in zip(keys, values) if v == value] for value in distinct]
        fits = max(map(len, groups)) <= PANEL_LINES and len(groups) <= 2 * count  # not a panel per line
        if fits and (best is None or len(groups) < len(best[2])):
            best = (name, distinct, groups)
    if best is None:
        parts = [keys[round(i * len(keys) / count): round((i + 1) * len(keys) / count)] for i in range(count)]
        return [(f"part {i + 1} of {count}", part, list(range(len(part)))) for i, part in enumerate(parts)]
    name, distinct, groups = best
    rests = sorted({_rest(k, name) for k in keys}, key=config_order)
    panels = []
    for value, group in zip(distinct, groups):
        fits = len(rests) <= PANEL_LINES
        positions = [rests.index(_rest(k, name)) for k in group] if fits else list(range(len(group)))
        panels.append((value if name in ("learner", "conversion") else f"{name}={value}", group, positions))
    return panels


def draw_series(ax, line: pd.Series, style: dict, label: str, band=None):
    """Draw ``line`` (values indexed by training size) with a marker at every size, and
    its ``band`` (lower, upper) shaded below; return the :class:`~matplotlib.lines.Line2D`."""
    size = 6.0 if len(line) <= 12 else 4.5 if len(line) <= 40 else 3.0
    options = {"color": style["color"], "linestyle": style["linestyle"], "marker": style["marker"],
               "lw": 1.5, "ms": size, "label": label, "zorder": 2}
    if style.get("markerfacecolor") == "none":
        options |= {"markerfacecolor": "none", "mew": 1.4}
    if style.get("overlay"):
        options |= {"ms": size + 3, "zorder": 3}
    if band is not None:
        ax.fill_between(line.index, band[0], band[1], color=style["color"], alpha=0.15, lw=0)
    return ax.plot(line.index, line.to_numpy(), **options)[0]


def overlap(a: pd.Series, b: pd.Series, log: bool, span: float) -> str | None:
    """``"identical"`` when series ``a`` and ``b`` (indexed by training size) are equal at
    every size (to 1e-9 relative), ``"close"`` when within 1 % of the axis ``span`` (in
    decades on a log axis) everywhere, else None."""
    if not a.index.equals(b.index):
        return None
    if np.allclose(a, b, rtol=1e-9, atol=0, equal_nan=True):
        return "identical"
    shown_a, shown_b = (np.log10(a), np.log10(b)) if log else (a, b)
    return "close" if np.nanmax(np.abs(shown_a - shown_b)) <= 0.01 * span else None


def overlaps(lines: list[pd.Series], log: bool) -> list[tuple[str, int] | None]:
    """For each of the ``lines`` drawn in one panel, in order, whether it is
    ``"identical"`` to or ``"close"`` to an earlier one (see :func:`overlap`, the span
    being that of all of them) and which: ``(kind, index)``, or None.

    Examples
    --------
    >>> a, b = pd.Series([1.0, 2.0]), pd.Series([1.0, 2.0])
    >>> overlaps([a, b, a + 0.005, a + 1], log=False)
    [None, ('identical', 0), ('close', 0), None]
    """
    values = np.concatenate([line.to_numpy(dtype=float) for line in lines]) if lines else np.array([])
    values = values[np.isfinite(values) & ((values > 0) | (not log))]
    shown = np.log10(values) if log else values
    span = float(np.ptp(shown)) if len(shown) else 0.0
    found = []
    for j, line in enumerate(lines):
        kinds = [(overlap(lines[i], line, log, span), i) for i in range(j)]
        kinds = [k for k in kinds if k[0]]
        found.append(min(kinds, key=lambda k: k[0] != "identical") if kinds else None)
    return found


def draw_lines(ax, lines: list[tuple[pd.Series, dict, str, tuple | None]], log: bool = False,
               notes: list[str] | None = None) -> list:
    """Draw the ``(values, style, label, band)`` of one panel with :func:`draw_series`,
    a line close to an earlier one in :func:`overlay` style and, when equal to it,
    labelled "identical to" it, then each of ``notes``; return the drawn lines."""
    drawn = []
    notes = notes or [""] * len(lines)
    for (values, style, label, band), same, note in zip(lines, overlaps([line[0] for line in lines], log), notes):
        if same is not None:
            style = overlay(style)
            label += f" (identical to {lines[same[1]][2]})" if same[0] == "identical" else ""
        drawn.append(draw_series(ax, values, style, label + note, band))
    return drawn


def figure_legend(fig, handles: list, labels: list[str], title: str) -> None:
    """One legend for the whole figure, below the panels (outside the data), in as many
    columns as fit its width; the figure grows to hold it."""
    width, height = fig.get_size_inches()
    columns = max(1, min(len(labels), int(width // (0.075 * max(map(len, labels), default=1) + 0.8))))
    rows = -(-len(labels) // columns)
    title = textwrap.fill(title, int(width / 0.07))
    fig.set_size_inches(width, height + 0.25 * rows + 0.2 * title.count("\n") + 0.5)
    fig.legend(handles, labels, loc="outside lower center", ncols=columns, title=title, fontsize=8,
               title_fontsize=8)
