"""Nightly comparison: one run's results against a baseline's, paired over splits.

Rows of two tidy result tables (``results.csv``) are matched on the configuration
(:data:`~dolb.results.tables.CONFIG_COLUMNS`), the training size and the metric, and
paired over ``split``: a split (or ordering seed) is the unit of pairing, so the noise
common to both runs cancels. For every judged metric, i.e. every metric of
:data:`dolb.evaluation.metrics.METRICS` (all are lower-is-better losses or errors), the
paired differences run − baseline get a mean with a 95 % t confidence interval, a
relative change, Cohen's d_z and the p-value of a two-sided paired t-test; the
Benjamini–Hochberg procedure then controls the false-discovery rate over all tests of
the comparison. Other metrics of the table (``cutoff_k``, ``suffix_length``, ...)
describe a hypothesis rather than score it and are never judged.

Throughput (``bench.json``: examples per second of learner × input × source ×
conversions) is compared by the ratio run / baseline against a threshold; timings are
too noisy for a test.

Examples
--------
>>> import pandas as pd
>>> def run(values):
...     return pd.DataFrame({"experiment": "e", "dataset": "d", "task": "regression",
...         "learner": "irma", "split": range(4), "params": "", "complexity": "3",
...         "conversion": "last", "n_train": 10, "metric": "test_mse", "value": values})
>>> table = compare_frames(run([1.5, 2.5, 3.75, 4.5]), run([1.0, 2.0, 3.0, 4.0]))
>>> row = table.iloc[0]
>>> int(row.n), float(row.difference), round(float(row.t), 9), row.verdict
(4, 0.5625, 9.0, 'worse')
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats as st  # noqa: E402

from dolb.errors import ConfigError, DataError  # noqa: E402
from dolb.evaluation.metrics import METRICS  # noqa: E402
from dolb.results.figures import _labels  # noqa: E402
from dolb.results.html import Section, html_page  # noqa: E402
from dolb.results.report import _slug  # noqa: E402
from dolb.results.tables import CONFIG_COLUMNS, TIDY_COLUMNS, aggregate, ci95_halfwidth, to_markdown  # noqa: E402

ALPHA = 0.05
"""False-discovery rate of the Benjamini–Hochberg procedure."""
SLOWDOWN = 0.8
"""Throughput ratio run / baseline below which a benchmark counts as slower."""
FIGURE_LINES = 6
"""Configurations drawn at most in one figure of significant changes."""
TREND_LINES = 8
"""Configurations drawn at most in one panel of the trend figure."""

KEYS = CONFIG_COLUMNS + ["n_train", "metric"]
"""What one comparison row is about; the rows are paired over ``split``."""
BENCH_KEYS = ["learner", "input", "source", "conversions"]
"""What one throughput measurement is about."""
COLUMNS = KEYS + ["n", "n_nonfinite", "baseline", "run", "difference", "ci_low", "ci_high",
                  "relative", "d_z", "t", "p", "q", "verdict"]
"""Columns of the comparison table (``compare.csv``)."""
SHOWN = ["experiment", "dataset", "configuration", "metric", "n_train", "n", "baseline", "run",
         "difference", "ci_low", "ci_high", "relative", "d_z", "p", "q", "verdict"]
"""Columns of the comparison tables in the report."""


# --- reading result folders -------------------------------------------------------------


def read_results(folder: str | Path) -> pd.DataFrame:
    """The tidy results table of a result folder, configuration columns as the text
    written (so ``complexity`` ``"3"`` matches across folders whatever the other rows).

    Raises
    ------
    DataError
        The folder has no ``results.csv``, or it is unreadable or lacks a column.

    Examples
    --------
    >>> read_results("no-such-folder")
    Traceback (most recent call last):
    ...
    dolb.errors.DataError: no-such-folder: not a result folder (no results.csv; run `dolb run` first)
    """
    path = Path(folder) / "results.csv"
    if not path.is_file():
        raise DataError(f"{folder}: not a result folder (no results.csv; run `dolb run` first)")
    try:
        frame = pd.read_csv(
            path,
            dtype={column: str for column in CONFIG_COLUMNS},
            keep_default_na=False,
            na_values={"value": ["", "nan", "NaN"]},
        )
    except (ValueError, pd.errors.ParserError) as exc:
        raise DataError(f"{path}: unreadable ({str(exc).splitlines()[0]})") from None
    missing = [column for column in TIDY_COLUMNS if column not in frame.columns]
    if missing:
        raise DataError(f"{path}: no column {missing[0]!r}")
    return frame


def pipeline_name(folder: str | Path) -> str:
    """The name of the pipeline a result folder ran: from ``run.json``, else from its
    copy of the pipeline file (``pipeline.toml``).

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "pipeline.toml").write_text('[pipeline]\\nname = "nightly"\\n')
    >>> pipeline_name(folder)
    'nightly'
    """
    folder = Path(folder)
    try:
        if (folder / "run.json").is_file():
            return str(json.loads((folder / "run.json").read_text(encoding="utf-8"))["pipeline"])
        if (folder / "pipeline.toml").is_file():
            return str(tomllib.loads((folder / "pipeline.toml").read_text(encoding="utf-8"))["pipeline"]["name"])
    except (ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{folder}: cannot read the pipeline name from run.json or pipeline.toml ({exc})") from None
    raise DataError(f"{folder}: no run.json or pipeline.toml names the pipeline of this result folder")


def read_bench(folder: str | Path) -> pd.DataFrame:
    """Throughput measurements of a result folder (``bench.json``, a list of objects
    with at least ``learner, input, source, conversions, examples_per_s``), one row per
    learner × input × source × conversions (repeated measurements averaged); an empty
    table when the folder has none. A list of conversions is joined with ``+``.

    Examples
    --------
    >>> read_bench("no-such-folder").columns.tolist()
    ['learner', 'input', 'source', 'conversions', 'examples_per_s']
    """
    path = Path(folder) / "bench.json"
    if not path.is_file():
        return pd.DataFrame(columns=BENCH_KEYS + ["examples_per_s"])
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
        rows = [
            {key: _key_text(record[key]) for key in BENCH_KEYS} | {"examples_per_s": float(record["examples_per_s"])}
            for record in records
        ]
    except (ValueError, KeyError, TypeError) as exc:
        raise DataError(
            f"{path}: expected a JSON list of objects with {', '.join(BENCH_KEYS)}, examples_per_s ({exc!r})"
        ) from None
    frame = pd.DataFrame(rows, columns=BENCH_KEYS + ["examples_per_s"])
    return frame.groupby(BENCH_KEYS, sort=True)["examples_per_s"].mean().reset_index()


def _key_text(value) -> str:
    return "+".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


# --- statistics ---------------------------------------------------------------------------


def _pairs(run: pd.DataFrame, baseline: pd.DataFrame) -> pd.DataFrame:
    """Judged rows present in both runs, one row per :data:`KEYS` × split with the
    values ``run``, ``baseline`` and their ``difference`` (NaN where either value is
    not finite)."""
    index = KEYS + ["split"]

    def values(frame: pd.DataFrame) -> pd.Series:
        judged = frame[frame["metric"].isin(METRICS)]
        judged = judged.assign(complexity=judged["complexity"].astype(str))
        return judged.groupby(index, sort=True, dropna=False)["value"].mean()

    pairs = pd.concat({"run": values(run), "baseline": values(baseline)}, axis=1, join="inner").reset_index()
    pairs.loc[~np.isfinite(pairs[["run", "baseline"]]).all(axis=1), ["run", "baseline"]] = np.nan
    return pairs.assign(difference=pairs["run"] - pairs["baseline"])


def _paired_tests(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per :data:`KEYS`: means, the mean difference with its 95 % t interval, relative
    change, Cohen's d_z and the two-sided paired t-test. All differences 0: t = 0, p = 1;
    all equal and non-zero: t = ±inf, p = 0; fewer than two pairs: no test (NaN)."""
    table = pairs.groupby(KEYS, sort=True, dropna=False).agg(
        n=("difference", "count"),
        pairs=("difference", "size"),
        baseline=("baseline", "mean"),
        run=("run", "mean"),
        difference=("difference", "mean"),
        sd=("difference", "std"),
        ci95=("difference", ci95_halfwidth),
    ).reset_index()
    n, mean, sd = (table[c].to_numpy(dtype=float) for c in ("n", "difference", "sd"))
    unchanged = (mean == 0) & (sd == 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        d_z = np.where(unchanged, 0.0, mean / sd)
        t = d_z * np.sqrt(n)
        relative = mean / np.abs(table["baseline"].to_numpy(dtype=float))
    p = np.where(n >= 2, 2 * st.t.sf(np.abs(t), np.maximum(n - 1, 1)), np.nan)
    return table.assign(
        n_nonfinite=table["pairs"] - table["n"],
        ci_low=mean - table["ci95"],
        ci_high=mean + table["ci95"],
        relative=relative,
        d_z=d_z,
        t=t,
        p=p,
    )


def _judge(table: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Add Benjamini–Hochberg q-values over every test of ``table`` and the verdict:
    ``worse`` (q < alpha, mean difference > 0), ``better`` (q < alpha, < 0),
    ``unchanged``, or ``untested`` (fewer than two finite pairs)."""
    p = table["p"].to_numpy(dtype=float)
    tested = np.isfinite(p)
    q = np.full(p.shape, np.nan)
    if tested.any():
        q[tested] = st.false_discovery_control(p[tested], method="bh")
    significant = tested & (np.nan_to_num(q, nan=1.0) < alpha)
    difference = table["difference"].to_numpy(dtype=float)
    verdict = np.select(
        [~tested, significant & (difference > 0), significant & (difference < 0)],
        ["untested", "worse", "better"],
        "unchanged",
    )
    return table.assign(q=q, verdict=verdict)


def compare_frames(run: pd.DataFrame, baseline: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """Compare two tidy result tables, paired over splits.

    Parameters
    ----------
    run, baseline : DataFrame
        Tidy tables (:data:`~dolb.results.tables.TIDY_COLUMNS`) of the same pipeline.
    alpha : float
        False-discovery rate: a row is significant when its q-value is below it.

    Returns
    -------
    DataFrame
        One row per configuration × training size × judged metric present in both,
        columns :data:`COLUMNS`: ``n`` pairs used (``n_nonfinite`` left out because a
        value is not finite), the means ``baseline`` and ``run`` over those pairs, the
        mean paired ``difference`` (run − baseline) and its 95 % t interval
        ``ci_low``–``ci_high``, ``relative`` (difference / |baseline|), ``d_z`` (mean /
        standard deviation of the differences), ``t``, ``p``, the Benjamini–Hochberg
        ``q`` over all rows, and ``verdict``.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"experiment": "e", "dataset": "d", "task": "binary",
    ...     "learner": "pa", "split": [0, 1], "params": "", "complexity": "",
    ...     "conversion": "cutoff", "n_train": 100, "metric": ["cutoff_k", "test_error"],
    ...     "value": [3.0, 0.1]})
    >>> compare_frames(frame, frame)[["metric", "n", "p", "verdict"]].values.tolist()
    [['test_error', 1, nan, 'untested']]
    """
    table = _judge(_paired_tests(_pairs(run, baseline)), alpha)
    return table[COLUMNS]


def compare_throughput(run: pd.DataFrame, baseline: pd.DataFrame, slowdown: float = SLOWDOWN) -> pd.DataFrame:
    """Throughput of two runs (tables from :func:`read_bench`) side by side: ``ratio``
    = run / baseline examples per second, ``slower`` when the ratio is below
    ``slowdown``. Measurements in one run only are kept with a NaN ratio.

    Examples
    --------
    >>> import pandas as pd
    >>> bench = lambda v: pd.DataFrame([{"learner": "sgd", "input": "sparse", "source": "memory",
    ...                                  "conversions": "last", "examples_per_s": v}])
    >>> compare_throughput(bench(60.0), bench(100.0))[["ratio", "slower"]].values.tolist()
    [[0.6, True]]
    """
    table = baseline.merge(run, on=BENCH_KEYS, how="outer", suffixes=("_baseline", "_run"), sort=True)
    ratio = table["examples_per_s_run"] / table["examples_per_s_baseline"]
    return table.assign(ratio=ratio, slower=(ratio < slowdown).astype(bool))


# --- the comparison -----------------------------------------------------------------------


@dataclass
class Comparison:
    """A run compared with its baseline.

    Attributes
    ----------
    table : DataFrame
        :func:`compare_frames` of the two result tables.
    throughput : DataFrame
        :func:`compare_throughput` of their ``bench.json`` (empty when neither has one).
    alpha, slowdown : float
        The thresholds used.
    only_run, only_baseline : int
        Configuration × size × judged-metric rows present in one run only (not compared).
    not_judged : tuple of str
        Informational metrics present in the results, never judged.
    """

    table: pd.DataFrame
    throughput: pd.DataFrame
    alpha: float = ALPHA
    slowdown: float = SLOWDOWN
    only_run: int = 0
    only_baseline: int = 0
    not_judged: tuple[str, ...] = ()

    def significant(self) -> pd.DataFrame:
        """Rows judged worse, then better, each by increasing q."""
        rows = self.table[self.table["verdict"].isin(["worse", "better"])]
        return rows.sort_values(["verdict", "q"], ascending=[False, True], kind="stable")

    def slower(self) -> pd.DataFrame:
        """Throughput measurements slower than the threshold."""
        return self.throughput[self.throughput["slower"]]

    @property
    def regressed(self) -> bool:
        """Whether anything got significantly worse or slower (``dolb compare`` exits 1)."""
        return bool((self.table["verdict"] == "worse").any() or self.throughput["slower"].any())

    def summary(self) -> str:
        """One line: how many rows were compared, worse, better, unchanged (untested),
        and how many throughput measurements are slower."""
        counts = self.table["verdict"].value_counts()
        line = (
            f"{len(self.table)} compared: {counts.get('worse', 0)} worse, {counts.get('better', 0)} better, "
            f"{counts.get('unchanged', 0)} unchanged"
        )
        if counts.get("untested", 0):
            line += f", {counts['untested']} untested (fewer than two finite pairs)"
        if len(self.throughput):
            line += (
                f"; throughput: {len(self.slower())} of {len(self.throughput)} below "
                f"{self.slowdown:g}x the baseline"
            )
        return line


def _unmatched(run: pd.DataFrame, baseline: pd.DataFrame) -> tuple[int, int]:
    """Judged configuration × size × metric rows only in the run, only in the baseline."""

    def keys(frame: pd.DataFrame) -> set[tuple]:
        judged = frame[frame["metric"].isin(METRICS)]
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
        tuple(sorted(metrics - set(METRICS))),
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
    return table.assign(configuration=_labels(keys))[SHOWN]


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
                    f"Examples per second, ratio run / baseline; slower when below {comparison.slowdown:g}. "
                    "Timings are noisy, so there is no test statistic: just the ratio and the threshold.",
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
    parts = [f"# {title}\n"]
    for section in sections:
        parts.append(f"## {section.heading}\n")
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


def _log_x(ax, sizes: pd.Series) -> None:
    """A logarithmic x axis where training sizes span two decades or more."""
    if len(sizes) and sizes.max() >= 100 * sizes.min() > 0:
        ax.set_xscale("log")


def _log_y(ax, values: pd.Series) -> None:
    """A logarithmic y axis where the finite values are positive and span three decades."""
    finite = values[np.isfinite(values)]
    if len(finite) and finite.min() > 0 and finite.max() >= 1000 * finite.min():
        ax.set_yscale("log")


def change_figures(significant: pd.DataFrame, run: pd.DataFrame, baseline: pd.DataFrame, out: Path) -> list[Path]:
    """One PNG per experiment × metric with a significant change: the metric against
    training size in both runs for the configurations that changed (at most
    :data:`FIGURE_LINES`, smallest q first). Returns the paths written."""
    paths = []
    for (experiment, metric), rows in significant.groupby(["experiment", "metric"], sort=True):
        configurations = rows.sort_values("q", kind="stable")[CONFIG_COLUMNS].drop_duplicates().head(FIGURE_LINES)
        path = out / f"compare-{_slug(experiment)}-{_slug(metric)}.png"
        paths.append(change_figure(configurations, metric, run, baseline, path))
    return paths


def change_figure(
    configurations: pd.DataFrame, metric: str, run: pd.DataFrame, baseline: pd.DataFrame, path: Path
) -> Path:
    """Draw ``metric`` against training size for ``configurations`` (rows of
    :data:`~dolb.results.tables.CONFIG_COLUMNS`), mean over splits with the 95 % t band,
    the run solid and the baseline dashed, in one colour per configuration; save as PNG."""
    keys = list(configurations.itertuples(index=False, name=None))
    labels = _labels([(c[3], c[4], c[5], c[6]) for c in keys])
    if configurations["dataset"].nunique() > 1:
        labels = [f"{label} [{key[1]}]" for label, key in zip(labels, keys)]
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
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
    _log_x(ax, both["n_train"])
    _log_y(ax, both["mean"])
    ax.set_xlabel("training examples")
    ax.set_ylabel(f"{metric} (mean, 95 % band)")
    ax.set_title(f"{configurations['experiment'].iloc[0]}: {metric}, run (solid) against baseline (dashed)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
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
        judged = frame[frame["metric"].isin(METRICS)]
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
    fig, axes = plt.subplots(rows, columns, figsize=(6.5 * columns, 4.2 * rows), dpi=110, squeeze=False)
    x = np.arange(len(nights))
    for ax, ((experiment, metric), panel) in zip(axes.flat, panels):
        chosen = largest_changes(panel, lines)
        keys = [(k[3], k[4], k[5], k[6]) for k in chosen.index]
        for label, (_, values) in zip(_labels(keys), chosen.iterrows()):
            ax.plot(x, values.to_numpy(dtype=float), "o-", lw=1.4, ms=3, label=label)
        _log_y(ax, chosen.stack())
        ax.set_xticks(x, nights, rotation=30, ha="right", fontsize=7)
        ax.set_ylabel(f"{metric} (mean, largest size)")
        ax.set_title(f"{experiment}: {metric}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
