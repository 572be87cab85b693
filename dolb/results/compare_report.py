"""The nightly comparison of two result folders, written as a report: Markdown, one
self-contained HTML page with its figures, the CSV of every row, and the trend over past
nights. The statistics are :mod:`dolb.results.compare`'s."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dolb.errors import ConfigError, DataError
from dolb.evaluation.metrics import METRICS
from dolb.results.compare import (
    ALPHA,
    FIGURE_LINES,
    KEYS,
    SHOWN,
    SLOWDOWN,
    TREND_LINES,
    Comparison,
    compare_frames,
    compare_throughput,
    pipeline_name,
    read_bench,
)
from dolb.results.figures import colour_cycle, config_labels, log_axes, new_figure, save
from dolb.results.html import Section, html_page
from dolb.results.report import slug
from dolb.results.tables import CONFIG_COLUMNS, aggregate, markdown_text, read_results, to_markdown
from dolb.results.throughput import MIN_REPEATS, SPEED_ALPHA


def _unmatched(run: pd.DataFrame, baseline: pd.DataFrame) -> tuple[int, int]:
    """Judged configuration × size × metric rows only in the run, only in the baseline."""

    def keys(frame: pd.DataFrame) -> set[tuple]:
        judged = frame[frame["metric"].isin(METRICS.names())]
        return set(judged[KEYS].astype(str).itertuples(index=False, name=None))

    ours, theirs = keys(run), keys(baseline)
    return len(ours - theirs), len(theirs - ours)


def _check_options(alpha: float, slowdown: float) -> None:
    if not 0 < alpha < 1:
        raise ConfigError(f"--alpha must be between 0 and 1, got {alpha}")
    if not slowdown > 0:
        raise ConfigError(f"--slowdown must be positive, got {slowdown}")


def _check_same_pipeline(folders: list[Path]) -> str:
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
) -> Comparison:
    """Compare the result folder ``run`` with ``baseline`` and write the report.

    Writes ``out/compare.md``, ``out/compare.html`` (self-contained),
    ``out/compare.csv`` (every row of :func:`compare_frames`), a PNG per experiment ×
    metric with a significant change, ``out/throughput.csv`` when there are
    ``bench.json`` files and, when ``history`` (earlier nights' result folders, oldest
    first) is given, ``out/trend.png`` over ``history`` and then ``run``. Every check
    is made before anything is written.

    Raises
    ------
    DataError
        A folder is not a result folder, or the runs have nothing in common.
    ConfigError
        The folders ran different pipelines, or a threshold is out of range.

    Examples
    --------
    >>> comparison = compare_folders("runs/tonight", "runs/baseline", "runs/tonight/compare")  # doctest: +SKIP
    >>> comparison.summary()  # doctest: +SKIP
    '24 compared: 1 worse, 0 better, 23 unchanged'
    """
    _check_options(alpha, slowdown)
    run, baseline, out = Path(run), Path(baseline), Path(out)
    nights = [Path(folder) for folder in history] + [run]
    frames = {folder: read_results(folder) for folder in [run, baseline, *nights]}
    name = _check_same_pipeline(list(frames))
    table = compare_frames(frames[run], frames[baseline], alpha)
    if table.empty:
        raise DataError(f"{run} and {baseline}: no configuration, training size and judged metric in common")
    metrics = set(frames[run]["metric"]) | set(frames[baseline]["metric"])
    comparison = Comparison(
        table,
        compare_throughput(read_bench(run), read_bench(baseline), slowdown),
        alpha,
        slowdown,
        *_unmatched(frames[run], frames[baseline]),
        tuple(sorted(metrics - set(METRICS.names()))),
    )
    out.mkdir(parents=True, exist_ok=True)
    write_report(comparison, frames[run], frames[baseline], out, f"{name}: {run} against {baseline}")
    if history:
        trend_figure(trend_table([frames[night] for night in nights]), [n.name for n in nights], out / "trend.png")
    return comparison


# --- the report -----------------------------------------------------------------------


def shown(table: pd.DataFrame) -> pd.DataFrame:
    """A comparison table as the report shows it: the learner, complexity, conversion
    and differing parameters as one ``configuration`` label (:data:`SHOWN` columns)."""
    keys = list(zip(table["learner"], table["params"], table["complexity"], table["conversion"]))
    return table.assign(configuration=config_labels(keys))[SHOWN]


def _sections(comparison: Comparison, figures: list[Path]) -> list[Section]:
    """The report: summary, significant changes, throughput, figures, every row."""
    method = (
        f"Rows are paired over splits; two-sided paired t-test of run - baseline, Benjamini-Hochberg "
        f"false-discovery control at q < {comparison.alpha:g} over all {len(comparison.table)} tests; "
        "every judged metric is lower-is-better (difference > 0 is worse). Effect size d_z = mean / "
        "standard deviation of the paired differences; ci_low-ci_high is the 95 % t interval of the "
        "mean difference; relative = difference / |baseline mean|."
    )
    notes = [comparison.summary(), method]
    if comparison.not_judged:
        notes.append(f"Informational metrics, not judged: {', '.join(comparison.not_judged)}.")
    if comparison.only_run or comparison.only_baseline:
        notes.append(
            f"Not compared: {comparison.only_run} rows only in the run, "
            f"{comparison.only_baseline} only in the baseline."
        )
    significant = comparison.significant()
    sections = [
        Section("Summary", tuple(notes)),
        Section("Significant changes", () if len(significant) else ("None.",), shown(significant)),
    ]
    if len(comparison.throughput):
        sections.append(
            Section(
                "Throughput",
                (
                    f"Examples per second, medians of the repeats; ratio run / baseline with its 95 % bootstrap "
                    "interval, p the one-sided Mann-Whitney U test of the run being slower. Judged per learner: "
                    "its measurements' p combined by Fisher's method (learner_p), Benjamini-Hochberg over the "
                    f"learners (q < {SPEED_ALPHA:g}); a learner is slower when significant and its median ratio "
                    f"(learner_ratio) is below {comparison.slowdown:g}, and so are its measurements below that. "
                    f"Measurements with fewer than {MIN_REPEATS} repeats on a side are not judged, nor the "
                    "reference loop (the machine's own change).",
                ),
                comparison.throughput,
            )
        )
    if figures:
        sections.append(Section("Figures", ("Mean over splits with the 95 % t band; solid: run, dashed: baseline.",),
                                figures=tuple(figures)))
    sections.append(Section("All comparisons", (), shown(comparison.table)))
    return sections


def markdown_page(title: str, sections: list[Section]) -> str:
    """The sections as Markdown, figures linked by file name (beside the page).

    Examples
    --------
    >>> print(markdown_page("T", [Section("S", ("text",))]))
    # T
    <BLANKLINE>
    ## S
    <BLANKLINE>
    text
    <BLANKLINE>
    """
    parts = [f"# {markdown_text(title)}\n"]
    for section in sections:
        parts.append(f"## {markdown_text(section.heading)}\n")
        parts += [f"{text}\n" for text in section.paragraphs]
        if section.table is not None and len(section.table):
            parts.append(to_markdown(section.table) + "\n")
        parts += [f"![{Path(f).stem}]({Path(f).name})\n" for f in section.figures]
    return "\n".join(parts)


def write_report(
    comparison: Comparison, run: pd.DataFrame, baseline: pd.DataFrame, out: Path, title: str
) -> None:
    """Write ``compare.csv``, ``throughput.csv`` (if any), the figures of significant
    changes, ``compare.md`` and ``compare.html`` into ``out``."""
    comparison.table.to_csv(out / "compare.csv", index=False)
    if len(comparison.throughput):
        comparison.throughput.to_csv(out / "throughput.csv", index=False)
    figures = change_figures(comparison.significant(), run, baseline, out)
    sections = _sections(comparison, figures)
    (out / "compare.md").write_text(markdown_page(title, sections), encoding="utf-8")
    (out / "compare.html").write_text(html_page(title, sections), encoding="utf-8")


def console_text(comparison: Comparison, out: str | Path) -> str:
    """What ``dolb compare`` prints: the summary, the significant changes, the slower
    benchmarks and where the report is."""
    parts = [comparison.summary()]
    significant = comparison.significant()
    if len(significant):
        parts.append(f"Significant changes (q < {comparison.alpha:g}):\n{to_markdown(shown(significant))}")
    if len(comparison.slower()):
        parts.append(f"Slower than {comparison.slowdown:g}x the baseline:\n{to_markdown(comparison.slower())}")
    parts.append(f"Report: {Path(out) / 'compare.md'} and compare.html, every row in compare.csv")
    return "\n\n".join(parts)


# --- figures --------------------------------------------------------------------------


def change_figures(significant: pd.DataFrame, run: pd.DataFrame, baseline: pd.DataFrame, out: Path) -> list[Path]:
    """One PNG per experiment × metric with a significant change: the metric against
    training size in both runs for the configurations that changed (at most
    :data:`FIGURE_LINES`, smallest q first). Returns the paths written."""
    paths = []
    for (experiment, metric), rows in significant.groupby(["experiment", "metric"], sort=True):
        configurations = rows.sort_values("q", kind="stable")[CONFIG_COLUMNS].drop_duplicates().head(FIGURE_LINES)
        path = out / f"compare-{slug(experiment)}-{slug(metric)}.png"
        paths.append(change_figure(configurations, metric, run, baseline, path))
    return paths


def change_figure(
    configurations: pd.DataFrame, metric: str, run: pd.DataFrame, baseline: pd.DataFrame, path: Path
) -> Path:
    """Draw ``metric`` against training size for ``configurations`` (rows of
    :data:`~dolb.results.tables.CONFIG_COLUMNS`), mean over splits with the 95 % t band,
    the run solid and the baseline dashed, in one colour per configuration; save as PNG."""
    keys = list(configurations.itertuples(index=False, name=None))
    labels = config_labels([(c[3], c[4], c[5], c[6]) for c in keys])
    if configurations["dataset"].nunique() > 1:
        labels = [f"{label} [{key[1]}]" for label, key in zip(labels, keys)]
    colours = colour_cycle()
    fig, axes = new_figure(width=7, height=4.5)
    ax = axes[0, 0]
    shown_values = []
    for frame, style, which in ((run, "-", "run"), (baseline, "--", "baseline")):
        subset = frame[frame["metric"] == metric].assign(complexity=lambda f: f["complexity"].astype(str))
        table = aggregate(subset.merge(configurations, on=CONFIG_COLUMNS), ("mean", "ci95"))
        lines = dict(list(table.groupby(CONFIG_COLUMNS, sort=False)))
        for key, label, colour in zip(keys, labels, colours * 10):
            line = lines[key]
            ax.plot(line["n_train"], line["mean"], style, color=colour, lw=1.6, label=f"{label}, {which}")
            ax.fill_between(line["n_train"], line["mean"] - line["ci95"], line["mean"] + line["ci95"],
                            color=colour, alpha=0.12, lw=0)
        shown_values.append(table)
    both = pd.concat(shown_values)
    log_axes(ax, both["n_train"], both["mean"])
    ax.set_xlabel("training examples")
    ax.set_ylabel(f"{metric} (mean, 95 % band)")
    ax.set_title(f"{configurations['experiment'].iloc[0]}: {metric}, run (solid) against baseline (dashed)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    save(fig, path)
    return path


def trend_table(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The mean over splits of every judged metric at its largest training size (per
    experiment, dataset and metric), one row per configuration × metric, one column per
    night (``0`` the oldest).

    Examples
    --------
    >>> import pandas as pd
    >>> night = lambda v: pd.DataFrame({"experiment": "e", "dataset": "d", "task": "regression",
    ...     "learner": "irma", "split": [0, 1, 0], "params": "", "complexity": "3",
    ...     "conversion": "last", "n_train": [50, 50, 10], "metric": "test_mse", "value": [v, v + 2, 99]})
    >>> trend_table([night(1.0), night(3.0)]).values.tolist()
    [[2.0, 4.0]]
    """
    means = []
    for frame in frames:
        judged = frame[frame["metric"].isin(METRICS.names())]
        judged = judged.assign(complexity=judged["complexity"].astype(str))
        largest = judged.groupby(["experiment", "dataset", "metric"])["n_train"].transform("max")
        at_largest = judged[judged["n_train"] == largest]
        means.append(at_largest.groupby(CONFIG_COLUMNS + ["metric"], sort=True, dropna=False)["value"].mean())
    return pd.concat(means, axis=1, keys=range(len(frames)))


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
    """Draw a :func:`trend_table`: one panel per experiment × metric, the mean per night
    of the ``lines`` configurations that changed most; save as PNG at ``path``."""
    panels = list(table.groupby(level=["experiment", "metric"], sort=True))
    columns = min(2, len(panels))
    rows = -(-len(panels) // columns)
    fig, axes = new_figure(rows, columns)
    x = np.arange(len(nights))
    for ax, ((experiment, metric), panel) in zip(axes.flat, panels):
        chosen = largest_changes(panel, lines)
        keys = [(k[3], k[4], k[5], k[6]) for k in chosen.index]
        for label, (_, values) in zip(config_labels(keys), chosen.iterrows()):
            ax.plot(x, values.to_numpy(dtype=float), "o-", lw=1.4, ms=3, label=label)
        log_axes(ax, values=chosen.stack())
        ax.set_xticks(x, nights, rotation=30, ha="right", fontsize=7)
        ax.set_ylabel(f"{metric} (mean, largest size)")
        ax.set_title(f"{experiment}: {metric}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.tight_layout()
    save(fig, path)
    return path
