"""Result tables: reading a result folder, aggregation over splits, report tables.

Report tables are drawn from a *summary*: one row per configuration × training size ×
metric with a column per statistic, as :func:`aggregate` computes it from a table of
rows in memory, and :func:`dolb.results.query.summary` from a result store without
loading its rows.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from dolb.errors import DataError
from dolb.results import query, stats
from dolb.results.figure_style import config_labels
from dolb.results.intervals import is_proportion, mean_intervals
from dolb.results.query import CONFIG_COLUMNS, GROUP_COLUMNS, STATISTICS
from dolb.results.store import ResultStore

TIDY_COLUMNS = CONFIG_COLUMNS[:4] + ["split"] + CONFIG_COLUMNS[4:] + ["n_train", "metric", "value", "cell_id"]
"""The columns every results table has (the store has more: one per parameter, timing)."""


def read_results(folder, tidy: bool = False) -> pd.DataFrame:
    """Every stored row of a result folder's successful cells (each cell once), with
    configuration columns as text, in :data:`~dolb.results.query.ROW_ORDER` (so sums
    over them do not depend on the order the rows were stored in); only the
    :data:`TIDY_COLUMNS` when ``tidy`` (a third of the memory).

    Raises
    ------
    DataError
        The folder holds no results, they are unreadable or lack a column, or a part
        committed there is gone with cells stored nowhere else
        (:func:`dolb.results.query.check_complete`).

    Examples
    --------
    >>> read_results("no-such-folder")
    Traceback (most recent call last):
    ...
    dolb.errors.DataError: no-such-folder: not a result folder (no results; run `dolb run` first)
    """
    store = ResultStore(folder)
    query.check_complete(store)
    if not store.exists():
        raise DataError(f"{folder}: not a result folder (no results; run `dolb run` first)")
    frame = query.rows(store, columns=TIDY_COLUMNS if tidy else None)
    missing = [column for column in TIDY_COLUMNS if column not in frame.columns]
    if missing:
        raise DataError(f"{folder}: results have no column {missing[0]!r}")
    return frame


_AGGREGATES = {
    "q25": lambda values: values.quantile(0.25),
    "q75": lambda values: values.quantile(0.75),
    "mean": "mean",
    "std": "std",
    "var": "var",
    "median": "median",
    "count": "count",
    "ci95": stats.ci95_halfwidth,
}


INTERVAL = ("ci_low", "ci_high")
"""The ends of the 95 % interval of the mean (:func:`dolb.results.intervals.mean_intervals`)."""


def aggregate(frame: pd.DataFrame, stats: Iterable[str] = STATISTICS) -> pd.DataFrame:
    """Aggregate a table of rows over splits: one row per configuration x training
    size x metric, one column per statistic (a summary)."""
    stats = list(stats)
    interval = bool(set(INTERVAL) & set(stats))
    needed = list(dict.fromkeys([s for s in stats if s not in INTERVAL] + (["mean", "ci95"] if interval else [])))
    grouped = frame.groupby(GROUP_COLUMNS, sort=True, dropna=False)["value"]
    table = grouped.agg([(name, _AGGREGATES[name]) for name in needed]).reset_index()
    if interval:  # each group's values in split order, as the store's summary resamples them
        ordered = frame.sort_values([c for c in ("split", "cell_id") if c in frame], kind="stable")
        values = ordered.groupby(GROUP_COLUMNS, sort=True, dropna=False)["value"].agg(list).reset_index(drop=True)
        table["ci_low"], table["ci_high"] = mean_intervals(table, values)
    return table[[*GROUP_COLUMNS, *stats]]


def comparison_table(summary: pd.DataFrame, experiment: str, metric: str, at, stats) -> pd.DataFrame:
    """Configurations as rows (one per dataset when the experiment has several),
    ``metric`` statistics at each training size as columns (``"<stat> @ <n>"``),
    from a summary."""
    table = summary[(summary["experiment"] == experiment) & (summary["metric"] == metric)]
    if at is not None:
        table = table[table["n_train"].isin(at)]
    stats = shown_statistics(stats, table)
    rows = ["dataset", "learner", "params", "complexity", "conversion"]
    wide = table.pivot_table(index=rows, columns="n_train", values=list(stats), aggfunc="first", sort=True)
    if wide.index.duplicated().any():  # cannot happen: aggregate() grouped by these keys
        raise AssertionError("comparison table rows are not unique")
    wide.columns = [f"{stat} @ {n}" for stat, n in wide.columns]
    order = sorted(wide.columns, key=lambda c: (int(c.split(" @ ")[1]), list(stats).index(c.split(" @ ")[0])))
    wide = wide[order].reset_index()
    levels = pd.to_numeric(wide["complexity"], errors="coerce")  # 4 before 10, not "10" before "4"
    order = ["dataset", "learner", "params", "_level", "complexity", "conversion"]
    wide = wide.assign(_level=levels).sort_values(order).drop(columns="_level").reset_index(drop=True)
    wide = references_last(wide)
    if wide["dataset"].nunique() == 1:
        wide = wide.drop(columns="dataset")
    return wide


def shown_statistics(stats, table: pd.DataFrame) -> list[str]:
    """The statistics a table of summary rows shows for ``stats``: ``ci95`` as the ends
    ``ci_low`` and ``ci_high`` of the interval where the metric is a proportion on every
    row's task (its interval is not mean ± a half-width) and the summary has them.

    >>> rows = pd.DataFrame({"metric": ["test_error"], "task": ["binary"], "ci_low": [0.0], "ci_high": [0.1]})
    >>> shown_statistics(("mean", "ci95"), rows), shown_statistics(("mean", "ci95"), rows.assign(task="regression"))
    (['mean', 'ci_low', 'ci_high'], ['mean', 'ci95'])
    """
    bounded = len(table) and set(INTERVAL) <= set(table) and all(
        is_proportion(metric, task) for metric, task in zip(table["metric"], table["task"]))
    return [shown for stat in stats for shown in (INTERVAL if stat == "ci95" and bounded else (stat,))]


_MARKDOWN_ESCAPES = str.maketrans({
    "\\": "\\\\", "`": "\\`", "[": "\\[", "]": "\\]", "|": "\\|", "#": "\\#",
    "<": "&lt;", ">": "&gt;", "&": "&amp;", "\n": " ", "\r": " ",
})


def markdown_text(value) -> str:
    r"""``value`` as text that Markdown shows as written, on one line: no HTML, no link,
    no code span, no heading and no table cell can start from a name or a title.

    Examples
    --------
    >>> print(markdown_text("<b>x</b> [go](javascript:alert(1))\n# title | a`b"))
    &lt;b&gt;x&lt;/b&gt; \[go\](javascript:alert(1)) \# title \| a\`b
    """
    return str(value).translate(_MARKDOWN_ESCAPES)


def to_markdown(table: pd.DataFrame) -> str:
    """A table as Markdown, numbers in 3 significant digits, text escaped
    (:func:`markdown_text`)."""
    text = table.copy()
    for column in text.columns:
        if not pd.api.types.is_numeric_dtype(text[column]):
            text[column] = text[column].map(markdown_text)
    text.columns = [markdown_text(c) for c in text.columns]
    return text.to_markdown(index=False, floatfmt=".3g")


def _at_sizes(subset: pd.DataFrame, at) -> pd.DataFrame:
    return subset if at is None else subset[subset["n_train"].isin(at)]


def paired_table(frame: pd.DataFrame, experiment: str, metric: str, at, compare: str, baseline: str) -> pd.DataFrame:
    """Each value of the ``compare`` column (a conversion or a learner) against
    ``baseline``, paired over splits: means, the mean difference (candidate minus
    baseline; negative is better for a loss) and the two-sided paired t-test p-value
    (:func:`~dolb.results.stats.paired_tests`).

    Comparing conversions, a pair is one configuration's two conversions on one split.
    Comparing learners, a pair is the two learners on one dataset, split, conversion and
    training size: each configuration of a candidate (its parameters and complexity)
    against the baseline learner, which must have one configuration there.

    Raises
    ------
    DataError
        The baseline does not occur in the experiment's results, nothing pairs with
        it, or (comparing learners) it has several configurations to pair with.

    Examples
    --------
    >>> rows = pd.DataFrame({"experiment": "e", "dataset": "d", "task": "binary", "split": [0, 1, 2] * 2,
    ...     "learner": ["pa"] * 3 + ["sgd"] * 3, "params": ["C=1"] * 3 + ["eta=0.1"] * 3,
    ...     "complexity": "", "conversion": "last", "n_train": 10, "metric": "test_error",
    ...     "value": [0.3, 0.2, 0.4, 0.2, 0.2, 0.1]})
    >>> table = paired_table(rows, "e", "test_error", None, "learner", "pa")
    >>> table[["learner", "params", "mean difference", "n"]].values.tolist()
    [['sgd', 'eta=0.1', -0.13333333333333333, 3]]
    """
    subset = _at_sizes(frame[(frame["experiment"] == experiment) & (frame["metric"] == metric)], at)
    if baseline not in set(subset[compare]):
        raise DataError(f"paired report on {experiment}/{metric}: no {compare} {baseline!r} in the results")
    varied = ["learner", "params", "complexity"] if compare == "learner" else [compare]
    pair_on = [c for c in CONFIG_COLUMNS if c not in varied] + ["n_train"]
    is_baseline = subset[compare] == baseline
    base = subset[is_baseline]
    several = base.groupby(pair_on + ["split"], dropna=False)[varied].nunique().max(axis=1)
    if (several > 1).any():
        found = sorted(" ".join(str(v) for v in key) for key in base[varied].drop_duplicates().itertuples(index=False))
        raise DataError(f"paired report on {experiment}/{metric}: the baseline {compare} {baseline!r} has several "
                        f"configurations to pair with ({'; '.join(found)}); give each its own experiment")
    pairs = subset[~is_baseline].merge(base[pair_on + ["split", "value"]], on=pair_on + ["split"],
                                       suffixes=("", "_baseline"))
    columns = [c for c in ["dataset", *CONFIG_COLUMNS[3:], "n_train"] if c not in varied] + varied + [
        "baseline", "mean", "baseline mean", "mean difference", "std difference", "p", "n"]
    if pairs.empty:
        raise DataError(f"paired report on {experiment}/{metric}: no {compare} shares a dataset, split and "
                        f"training size with the baseline {baseline!r}")
    pairs = pairs.rename(columns={"value": "run", "value_baseline": "baseline"})
    tested = stats.paired_tests(pairs.assign(difference=pairs["run"] - pairs["baseline"]), pair_on + varied)
    tested = tested.rename(columns={"run": "mean", "baseline": "baseline mean",
                                    "difference": "mean difference", "sd": "std difference"})
    return tested.assign(baseline=baseline)[columns]


def lift_constants(table: pd.DataFrame, keep: tuple[str, ...] = ()) -> tuple[pd.DataFrame, str]:
    """A table as a page shows it: columns with no value dropped, columns with one value
    (over two rows or more; but those in ``keep``) lifted out into a caption, ``name =
    value, ...``, and so are the parameters (``params``: ``name=value, ...``) every row
    shares.

    Examples
    --------
    >>> table = pd.DataFrame({"learner": ["pa", "pa"], "params": ["C=0.1, tol=0", "C=1, tol=0"],
    ...                       "dataset": ["a9a", "a9a"], "complexity": ["", ""], "mean": [0.2, 0.3]})
    >>> shown, caption = lift_constants(table)
    >>> shown.values.tolist(), caption
    ([['C=0.1', 0.2], ['C=1', 0.3]], 'learner = pa, dataset = a9a, tol=0')
    """
    empty = [c for c in table.columns if table[c].map(lambda v: v is None or v == "" or v != v).all()]
    table = table.drop(columns=empty)
    if len(table) < 2:
        return table, ""
    constant = [c for c in table.columns if table[c].nunique(dropna=False) == 1 and c not in keep and
                not pd.api.types.is_float_dtype(table[c])]
    lifted = [f"{c} = {table[c].iloc[0]}" for c in constant]
    table = table.drop(columns=constant)
    if "params" in table.columns:
        params = table["params"].map(lambda text: str(text).split(", ") if text == text and text != "" else [])
        shared = [p for p in params.iloc[0] if all(p in others for others in params)]
        lifted += shared
        table = table.assign(params=params.map(lambda items: ", ".join(p for p in items if p not in shared)))
    return table, ", ".join(lifted)


def ranking_table(summary: pd.DataFrame, experiment: str, metric: str, at) -> pd.DataFrame:
    """Configurations ranked on every dataset by their mean ``metric`` over splits
    (rank 1 is the lowest, ties share the mean rank), at the largest training size in
    ``at`` (default: each dataset's largest), ordered by mean rank across datasets;
    from a summary. Datasets where a configuration has no value are left out of the
    ranks (a rank needs every configuration), but keep their means."""
    subset = summary[(summary["experiment"] == experiment) & (summary["metric"] == metric)]
    if at is not None:
        subset = subset[subset["n_train"] == max(at)]
    else:
        largest = subset.groupby("dataset")["n_train"].transform("max")
        subset = subset[subset["n_train"] == largest]
    keys = ["learner", "params", "complexity", "conversion"]
    means = subset.groupby(keys + ["dataset"])["mean"].first().unstack("dataset")
    ranked = means[[not is_reference(learner) for learner in means.index.get_level_values("learner")]]
    complete = ranked.columns[ranked.notna().all(axis=0)]
    ranks = ranked[complete].rank(axis=0, method="average")
    table = means.add_prefix("mean on ")
    table.insert(0, "mean rank", ranks.mean(axis=1).reindex(table.index))
    return references_last(table.sort_values("mean rank", kind="stable").reset_index())


def is_reference(learner: str) -> bool:
    """Whether ``learner`` is a reference for the others: a baseline or a batch fit, whose
    class says so (``reference = True``, as those of :mod:`dolb.learners.baselines` and
    :mod:`dolb.learners.batch_reference`). Tables show its rows after the learners';
    rankings leave them out of the ranks (their mean rank is empty). A learner no longer
    registered is not one.

    >>> is_reference("majority"), is_reference("perceptron"), is_reference("gone")
    (True, False, False)
    """
    from dolb.learners import LEARNERS

    return learner in LEARNERS and bool(getattr(LEARNERS[learner], "reference", False))


def references_last(table: pd.DataFrame) -> pd.DataFrame:
    """``table``'s rows, those of reference learners (:func:`is_reference`) moved after
    the others of their dataset (when it has a ``dataset`` column), each part in its
    order (a table without any: as it is)."""
    reference = table["learner"].map(is_reference).to_numpy(dtype=bool)
    if not reference.any():
        return table
    keys = (["dataset"] if "dataset" in table.columns else []) + ["_reference"]
    ordered = table.assign(_reference=reference).sort_values(keys, kind="stable")
    return ordered.drop(columns="_reference").reset_index(drop=True)


def short_labels(table: pd.DataFrame) -> list[str]:
    """A label per configuration (row) of ``table``: its learner and what tells it from
    the learner's other configurations (:func:`~dolb.results.figure_style.config_labels`).

    Examples
    --------
    >>> table = pd.DataFrame({"learner": ["pa", "pa", "sgd"], "params": ["C=1, v=1", "C=2, v=1", "eta=1"],
    ...                       "complexity": "", "conversion": "last"})
    >>> short_labels(table)
    ['pa, C=1', 'pa, C=2', 'sgd']
    """
    return config_labels(list(zip(table["learner"], table["params"], table["complexity"], table["conversion"])))
