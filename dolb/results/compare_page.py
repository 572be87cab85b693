"""What ``dolb compare`` shows: the page (``compare.html``, self-contained, and the same
sections as ``compare.md``) and the console text. Summary first, with the counts of
worse, better and unchanged rows coloured and the worst changes named; then the figures
(significant changes, the trend over past nights); then the tables, collapsed. The
statistics are :mod:`dolb.results.compare`'s."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dolb.location import joined
from dolb.results.compare import SHOWN, Comparison
from dolb.results.html import Section, html_page
from dolb.results.tables import lift_constants, markdown_text, short_labels, to_markdown
from dolb.results.throughput import MIN_REPEATS, SPEED_ALPHA

MAX_ROWS = 20
"""Significant changes ``dolb compare`` prints at most (``--max-rows``)."""
WORST = 3
"""Changes the summary names."""
CONSOLE = ["experiment", "dataset", "configuration", "metric", "n_train", "baseline", "run", "relative", "q",
           "verdict"]
"""Columns of the console's table of significant changes."""
SLOWER = ["learner", "input", "source", "conversions", "examples_per_s_baseline", "examples_per_s_run", "ratio",
          "ab_ratio", "ab_low", "ab_high", "verdict"]
"""Columns of the console's table of slower measurements (the A/B's where there is one)."""


def shown(table: pd.DataFrame) -> pd.DataFrame:
    """A comparison table as the report shows it: the learner, complexity, conversion
    and the parameters that tell it from the learner's other configurations as one
    ``configuration`` label (:func:`~dolb.results.tables.short_labels`; :data:`SHOWN`
    columns)."""
    return table.assign(configuration=short_labels(table))[SHOWN]


def worst_changes(comparison: Comparison, count: int = WORST) -> pd.DataFrame:
    """The ``count`` rows judged worse with the largest relative change, largest first."""
    worse = comparison.table[comparison.table["verdict"] == "worse"]
    return worse.sort_values("relative", ascending=False, kind="stable").head(count)


def summary_paragraph(comparison: Comparison) -> str:
    """The summary's paragraph: counts, then the worst changes (or the best, if nothing
    got worse).

    Examples
    --------
    >>> from dolb.results.compare import compare_frames
    >>> def run(values):
    ...     return pd.DataFrame({"experiment": "e", "dataset": "d", "task": "regression",
    ...         "learner": "irma", "split": range(4), "params": "", "complexity": "3",
    ...         "conversion": "last", "n_train": 10, "metric": "test_mse", "value": values})
    >>> table = compare_frames(run([1.5, 2.5, 3.75, 4.5]), run([1.0, 2.0, 3.0, 4.0]))
    >>> print(summary_paragraph(Comparison(table, pd.DataFrame(columns=["slower"]))))  # doctest: +NORMALIZE_WHITESPACE
    1 compared: 1 worse, 0 better, 0 unchanged.
    Worst: e/d irma (3) test_mse at n = 10: 2.5 -> 3.06 (+22.5 %, q = 0.0029).
    """
    text = comparison.summary() + "."
    rows, word = worst_changes(comparison), "Worst"
    if rows.empty:
        better = comparison.table[comparison.table["verdict"] == "better"]
        rows, word = better.sort_values("relative", kind="stable").head(WORST), "Largest improvements"
    if len(rows):
        labels = shown(comparison.table).loc[rows.index, "configuration"]  # labelled among all rows
        changes = [
            f"{row.experiment}/{row.dataset} {label} {row.metric} at n = {row.n_train}: {row.baseline:.3g} -> "
            f"{row.run:.3g} ({100 * row.relative:+.1f} %, q = {row.q:.2g})"
            for row, label in zip(rows.itertuples(), labels)
        ]
        text += f" {word}: " + "; ".join(changes) + "."
    if comparison.agreement is not None:
        machines = dict(zip(("run", "baseline"), comparison.machines))
        text += f"\nValues: {comparison.agreement.describe(machines)}."
    return text


def _method(comparison: Comparison) -> str:
    return (
        f"Rows are paired over splits; two-sided paired t-test of run - baseline, Benjamini-Hochberg "
        f"false-discovery control at q < {comparison.alpha:g} over all {len(comparison.table)} tests; "
        "every judged metric is lower-is-better (difference > 0 is worse). Effect size d_z = mean / "
        "standard deviation of the paired differences; ci_low-ci_high is the 95 % t interval of the "
        "mean difference; relative = difference / |baseline mean|."
    )


def sections(comparison: Comparison, figures: list[Path]) -> list[Section]:
    """The page: summary, throughput, figures, significant changes, every row."""
    parts = [_summary(comparison), *_speed_sections(comparison)]
    if figures:
        parts.append(Section("Figures", ("Significant changes: mean over splits with the 95 % t band; solid: run, "
                                         "dashed: baseline. Trend: the mean at the largest size, night by night.",),
                             figures=tuple(figures)))
    significant = comparison.significant()
    if len(significant):
        table, caption = lift_constants(shown(comparison.table).loc[significant.index], keep=("verdict",))
        parts.append(Section(f"Significant changes ({len(significant)})", table=table, caption=caption,
                             collapsed=len(significant) > MAX_ROWS))
    table, caption = lift_constants(shown(comparison.table), keep=("verdict",))
    parts.append(Section(f"All comparisons ({len(comparison.table)})", table=table, caption=caption, collapsed=True))
    return parts


def _summary(comparison: Comparison) -> Section:
    """The verdicts counted, how they were judged, and what was not compared."""
    counts = comparison.table["verdict"].value_counts()
    badges = tuple((f"{counts.get(verdict, 0)} {verdict}", verdict) for verdict in ("worse", "better", "unchanged"))
    if counts.get("untested", 0):
        badges += ((f"{counts['untested']} untested", "neutral"),)
    notes = [summary_paragraph(comparison), _method(comparison)]
    if comparison.not_judged:
        notes.append(f"Informational metrics, not judged: {', '.join(comparison.not_judged)}.")
    if comparison.only_run or comparison.only_baseline:
        notes.append(f"Not compared: {comparison.only_run} rows only in the run, "
                     f"{comparison.only_baseline} only in the baseline.")
    return Section("Summary", tuple(notes), badges=badges)


def _speed_sections(comparison: Comparison) -> list[Section]:
    """Throughput, its A/B re-measurement and the machines of the nights, where there are any."""
    parts = []
    if len(comparison.throughput):
        parts.append(Section(
            "Throughput",
            (f"Examples per second, medians of the repeats; ratio run / baseline with its 95 % bootstrap "
             "interval, p the one-sided Mann-Whitney U test of the run being slower. Judged per learner: "
             "its measurements' p combined by Fisher's method (learner_p), Benjamini-Hochberg over the "
             f"learners (q < {SPEED_ALPHA:g}); a learner is slower when significant and its median ratio "
             f"(learner_ratio) is below {comparison.slowdown:g}, and so are its measurements below that. "
             f"Measurements with fewer than {MIN_REPEATS} repeats on a side are not judged, nor the "
             "reference loop (the machine's own change). A learner significantly slower is only suspected: "
             "with --confirm it is re-measured A/B and is slower only if that confirms it (see below). "
             "band_low-band_high: the history band, the spread of the speed between earlier nights on this "
             "CPU model (median of the nights' medians times exp(+-2 robust sd), band_sd in log units).",
             comparison.gate_note),
            comparison.throughput))
    if len(comparison.ab):
        parts.append(Section(
            "A/B re-measurement",
            ("Both nights' commits checked out side by side, each in its own environment, their benchmarks "
             "interleaved round by round on this machine (the machine's change cancels). Per measurement: "
             "medians of each side, the median per-round ratio after / before with its 95 % BCa bootstrap "
             "interval, the one-sided Wilcoxon signed-rank p; per learner: the median ratio and Fisher's method, "
             f"Benjamini-Hochberg over the learners; confirmed when q < {SPEED_ALPHA:g} and the ratio is below "
             f"{comparison.slowdown:g}.",),
            comparison.ab))
    if len(comparison.bench_machines):
        parts.append(Section("Machines", ("The machine of each night, from its bench.json: CPU model, cores, "
                                          "frequency governor, load average before and after the benchmark, "
                                          "the git commit benchmarked.",), comparison.bench_machines))
    return parts


def markdown_page(title: str, page: list[Section]) -> str:
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
    for section in page:
        parts.append(f"## {markdown_text(section.heading)}\n")
        if section.badges:
            parts.append(", ".join(text for text, _ in section.badges) + "\n")
        parts += [f"{markdown_text(text)}\n" for text in section.paragraphs]
        parts += [f"![{Path(f).stem}]({Path(f).name})\n" for f in section.figures]
        if section.caption:
            parts.append(f"{markdown_text(section.caption)}\n")
        if section.table is not None and len(section.table):
            parts.append(to_markdown(section.table) + "\n")
    return "\n".join(parts)


def write_pages(comparison: Comparison, figures: list[Path], out: Path, title: str) -> None:
    """Write ``compare.csv``, ``throughput.csv`` (if any), ``compare.md`` and
    ``compare.html`` into ``out``; ``figures`` are PNG files there."""
    comparison.table.to_csv(out / "compare.csv", index=False)
    if len(comparison.throughput):
        comparison.throughput.to_csv(out / "throughput.csv", index=False)
    page = sections(comparison, figures)
    (out / "compare.md").write_text(markdown_page(title, page), encoding="utf-8")
    (out / "compare.html").write_text(html_page(title, page), encoding="utf-8")


def console_text(comparison: Comparison, out: str | Path, max_rows: int = MAX_ROWS) -> str:
    """What ``dolb compare`` prints: the summary paragraph, the first ``max_rows``
    significant changes (worse first, by q) in a narrow table, the slower benchmarks,
    and where the page is."""
    parts = [summary_paragraph(comparison)]
    significant = comparison.significant()
    if len(significant):
        rows = shown(comparison.table).loc[significant.index[:max_rows], CONSOLE]
        table, caption = lift_constants(rows, keep=("verdict",))
        heading = f"Significant changes (q < {comparison.alpha:g})"
        if len(significant) > max_rows:
            heading += f", the first {max_rows} of {len(significant)} (--max-rows)"
        parts.append(f"{heading}:\n" + (f"{caption}\n" if caption else "") + to_markdown(table))
    if comparison.gate_note:
        parts.append(comparison.gate_note)
    if len(comparison.slower()):
        slower = comparison.slower()
        parts.append(f"Slower than {comparison.slowdown:g}x the baseline:\n"
                     f"{to_markdown(slower[[c for c in SLOWER if c in slower]])}")
    parts.append(f"Page: {joined(out, 'compare.html')} (also compare.md; every row in compare.csv)")
    return "\n\n".join(parts)
