"""Nightly comparison: one run's results against a baseline's, paired over splits.

Rows of two tidy result tables (as :func:`~dolb.results.tables.read_results` reads
them) are matched on the configuration (:data:`~dolb.results.tables.CONFIG_COLUMNS`),
the training size and the metric, and paired over ``split`` (a split, or ordering seed,
is the unit of pairing). For every judged metric, i.e. every deterministic metric of
:data:`dolb.evaluation.metrics.METRICS` (all lower-is-better; not the timing metric
``learn_seconds``, nor what describes a hypothesis, such as ``cutoff_k``), the paired
differences run − baseline get a mean with a 95 % t confidence interval, a relative
change, Cohen's d_z and the p-value of a two-sided paired t-test, and Benjamini–Hochberg
q-values over all tests of the comparison. Throughput (``bench.json``) is judged by
:mod:`dolb.results.throughput`. Why these tests: docs/design/nightly-gate.md.

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

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as st

from dolb.evaluation.metrics import deterministic_metrics
from dolb.results import query
from dolb.results.agreement import Agreement
from dolb.results.history import last_record
from dolb.results.stats import ALPHA, paired_tests, tests_from_moments
from dolb.results.store import ResultStore
from dolb.results.tables import CONFIG_COLUMNS
from dolb.results.throughput import (  # noqa: F401  (compare_throughput, read_bench: re-exported)
    SLOWDOWN,
    compare_throughput,
    read_bench,
)

FIGURE_LINES = 6
"""Configurations drawn at most in one figure of significant changes."""
TREND_LINES = 8
"""Configurations drawn at most in one panel of the trend figure."""

KEYS = CONFIG_COLUMNS + ["n_train", "metric"]
"""What one comparison row is about; the rows are paired over ``split``."""
COLUMNS = KEYS + ["n", "n_nonfinite", "baseline", "run", "difference", "ci_low", "ci_high",
                  "relative", "d_z", "t", "p", "q", "verdict"]
"""Columns of the comparison table (``compare.csv``)."""
SHOWN = ["experiment", "dataset", "configuration", "metric", "n_train", "n", "baseline", "run",
         "difference", "ci_low", "ci_high", "relative", "d_z", "p", "q", "verdict"]
"""Columns of the comparison tables in the report."""


# --- reading result folders -------------------------------------------------------------


def pipeline_name(folder: str | Path) -> str:
    """The name of the pipeline a result folder ran, as its last run record says;
    DataError naming the folder when it has none."""
    return str(last_record(ResultStore(folder))["pipeline"])


# --- statistics ---------------------------------------------------------------------------


def pairs_of(run: pd.DataFrame, baseline: pd.DataFrame, finite_only: bool = True) -> pd.DataFrame:
    """Judged rows present in both runs, one row per :data:`KEYS` × split with the
    values ``run``, ``baseline`` and their ``difference`` (NaN where either value is
    not finite, unless not ``finite_only``)."""
    index = KEYS + ["split"]

    def values(frame: pd.DataFrame) -> pd.Series:
        judged = frame[frame["metric"].isin(deterministic_metrics())]
        judged = judged.assign(complexity=judged["complexity"].astype(str))
        return judged.groupby(index, sort=True, dropna=False)["value"].mean()

    pairs = pd.concat({"run": values(run), "baseline": values(baseline)}, axis=1, join="inner").reset_index()
    if finite_only:
        pairs.loc[~np.isfinite(pairs[["run", "baseline"]]).all(axis=1), ["run", "baseline"]] = np.nan
    return pairs.assign(difference=pairs["run"] - pairs["baseline"])


def _judge(table: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Add Benjamini–Hochberg q-values over every test of ``table`` and the verdict:
    ``worse`` (q < alpha, mean difference > 0), ``better`` (q < alpha, < 0),
    ``changed`` (not significant, but a pair differs: the metrics are deterministic, so
    identical code gives identical values), ``unchanged``, or ``untested`` (fewer than
    two finite pairs, all equal)."""
    p = table["p"].to_numpy(dtype=float)
    tested = np.isfinite(p)
    q = np.full(p.shape, np.nan)
    if tested.any():
        q[tested] = st.false_discovery_control(p[tested], method="bh")
    significant = tested & (np.nan_to_num(q, nan=1.0) < alpha)
    difference = table["difference"].to_numpy(dtype=float)
    spread = (table["ci_high"] - table["ci_low"]).to_numpy(dtype=float)
    changed = (np.nan_to_num(difference) != 0) | (np.nan_to_num(spread) > 0)
    verdict = np.select(
        [significant & (difference > 0), significant & (difference < 0), changed, ~tested],
        ["worse", "better", "changed", "untested"],
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
    table = _judge(paired_tests(pairs_of(run, baseline), KEYS), alpha)
    return table[COLUMNS]


def compare_stores(run: ResultStore, baseline: ResultStore, alpha: float = ALPHA) -> pd.DataFrame:
    """:func:`compare_frames` of two result stores, computed in DuckDB
    (:func:`dolb.results.query.paired_moments`): the client holds one row per
    configuration × training size × judged metric, never the stores' rows."""
    moments = query.paired_moments(run, baseline, deterministic_metrics())
    return _judge(tests_from_moments(moments), alpha)[COLUMNS]


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
    agreement : Agreement, optional
        How the judged values of the two runs agree, value by value.
    machines : tuple of str
        What did the arithmetic of the run and of the baseline
        (:func:`dolb.results.history.machines` of their last records), when their kinds
        of worker differ; empty otherwise.
    rtol : float, optional
        Given (``--rtol``), a value differing by more makes the comparison a regression.
    ab, bench_machines : DataFrame
        The nightly gate's A/B re-measurement and both nights' machines
        (:class:`dolb.results.nightly_gate.NightGate`; empty when not given).
    gate_note : str
        What the throughput gate did.
    """

    table: pd.DataFrame
    throughput: pd.DataFrame
    alpha: float = ALPHA
    slowdown: float = SLOWDOWN
    only_run: int = 0
    only_baseline: int = 0
    not_judged: tuple[str, ...] = ()
    agreement: Agreement | None = None
    machines: tuple[str, str] = ("", "")
    rtol: float | None = None
    ab: pd.DataFrame = field(default_factory=pd.DataFrame)
    bench_machines: pd.DataFrame = field(default_factory=pd.DataFrame)
    gate_note: str = ""

    def significant(self) -> pd.DataFrame:
        """Rows judged worse, then changed (not significantly, yet not identical), then
        better, each by increasing q."""
        rows = self.table[self.table["verdict"].isin(["worse", "changed", "better"])]
        return rows.sort_values(["verdict", "q"], ascending=[False, True], kind="stable")

    def slower(self) -> pd.DataFrame:
        """Throughput measurements slower than the threshold."""
        return self.throughput[self.throughput["slower"]]

    @property
    def regressed(self) -> bool:
        """Whether anything got significantly worse, changed or got slower, or (with
        ``rtol``) a value differs beyond it (``dolb compare`` exits 1)."""
        beyond = self.rtol is not None and self.agreement is not None and self.agreement.verdict == "beyond"
        changed = self.table["verdict"].isin(["worse", "changed"]).any()
        return bool(changed or self.throughput["slower"].any() or beyond)

    def summary(self) -> str:
        """One line: how many rows were compared, worse, better, unchanged (untested),
        and how many throughput measurements are slower."""
        counts = self.table["verdict"].value_counts()
        line = (
            f"{len(self.table)} compared: {counts.get('worse', 0)} worse, {counts.get('better', 0)} better, "
            f"{counts.get('unchanged', 0)} unchanged"
        )
        if counts.get("changed", 0):
            line += f", {counts['changed']} changed (not significantly, but not identical)"
        if counts.get("untested", 0):
            line += f", {counts['untested']} untested (fewer than two finite pairs)"
        if len(self.throughput):
            line += (
                f"; throughput: {len(self.slower())} of {len(self.throughput)} below "
                f"{self.slowdown:g}x the baseline"
            )
            if len(self.ab):
                line += " (confirmed A/B)"
        return line
