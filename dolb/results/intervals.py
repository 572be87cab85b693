"""The 95 % confidence interval of a mean over splits, as tables and figures show it.

A metric is a mean over splits of per-split values. Where those values are proportions
(a test error, a mistake rate: the metric's ``proportion`` tasks in
:data:`dolb.evaluation.metrics.METRICS`), the Student-t interval ``mean ± t·s/√n`` can
leave [0, 1]: an error rate near 0 gets a band below 0. There the interval is scipy's
percentile bootstrap of the mean over the splits (``scipy.stats.bootstrap``,
:data:`RESAMPLES` resamples, seeded, so a report is the same each time it is drawn):
every resampled mean lies between the smallest and the largest split, so the interval
stays in [0, 1]. Every other metric keeps the Student-t interval. Fewer than two
values: no interval (NaN).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from dolb.evaluation.metrics import METRICS

RESAMPLES = 2000
"""Bootstrap resamples per interval."""
SEED = 0
"""The seed of the resampling."""
ROWS_AT_ONCE = 2000
"""Groups of the same size resampled together (bounds the memory: rows × splits ×
:data:`RESAMPLES` numbers at a time)."""

T_BAND = "95 % Student-t confidence interval of the mean"
BOOTSTRAP_BAND = "95 % percentile bootstrap interval of the mean over splits (a proportion: within [0, 1])"
"""What a figure's caption says of its band, by the interval drawn."""


def is_proportion(metric: str, task: str) -> bool:
    """Whether every value of ``metric`` on ``task`` is a proportion in [0, 1].

    >>> is_proportion("test_error", "binary"), is_proportion("online_loss", "regression")
    (True, False)
    """
    return metric in METRICS and task in METRICS[metric].proportion


def proportion_pairs() -> list[tuple[str, str]]:
    """Every ``(metric, task)`` whose values are proportions."""
    return [(name, task) for name, metric in METRICS.items() for task in metric.proportion]


def bootstrap_intervals(samples: list) -> tuple[np.ndarray, np.ndarray]:
    """The 95 % percentile bootstrap interval of the mean of each sample in ``samples``
    (NaNs dropped; NaN below two values), samples of one size resampled together with the
    same draws: a sample's interval depends on its values alone, not on their order nor
    on the other samples.

    Examples
    --------
    >>> low, high = bootstrap_intervals([[0.0, 0.01, 0.0, 0.02, 0.0], [0.5], [0.1, 0.1, 0.1]])
    >>> low.round(3).tolist(), high.round(3).tolist()
    ([0.0, nan, 0.1], [0.014, nan, 0.1])
    >>> alone = bootstrap_intervals([[0.3, 0.1, 0.2, 0.6]])  # neither the order nor the company counts
    >>> together = bootstrap_intervals([[0.5, 0.5, 0.0, 0.1], np.ma.masked_invalid([0.6, 0.2, np.nan, 0.1, 0.3])])
    >>> bool(alone[0][0] == together[0][1] and alone[1][0] == together[1][1])
    True
    """
    from scipy.stats import bootstrap  # 0.7 s to import: only when a proportion is summarised

    # a missing value is NaN, or masked where DuckDB hands its lists over as masked arrays
    arrays = [np.ma.filled(np.ma.asarray(sample if sample is not None else [], dtype=float), np.nan)
              for sample in samples]
    arrays = [np.sort(values[np.isfinite(values)]) for values in arrays]  # the order of the splits never counts
    low, high = np.full(len(arrays), np.nan), np.full(len(arrays), np.nan)
    sizes = np.array([len(values) for values in arrays])
    for size in sorted(set(sizes[sizes >= 2].tolist())):
        rows = np.flatnonzero(sizes == size)
        for start in range(0, len(rows), ROWS_AT_ONCE):
            chosen = rows[start: start + ROWS_AT_ONCE]
            data = np.stack([arrays[i] for i in chosen])
            with warnings.catch_warnings():  # equal values: a degenerate, exact interval
                warnings.simplefilter("ignore")
                found = bootstrap((data,), np.mean, axis=-1, vectorized=True, n_resamples=RESAMPLES,
                                  method="percentile", rng=np.random.default_rng(SEED))
            low[chosen], high[chosen] = found.confidence_interval.low, found.confidence_interval.high
    return low, high


def mean_intervals(table: pd.DataFrame, values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The lower and upper ends of each summary row's interval of the mean: the
    bootstrap of its per-split ``values`` where its metric is a proportion on its task,
    else ``mean ± ci95``."""
    low = (table["mean"] - table["ci95"]).to_numpy(dtype=float, copy=True)
    high = (table["mean"] + table["ci95"]).to_numpy(dtype=float, copy=True)
    bounded = np.array([is_proportion(m, t) for m, t in zip(table["metric"], table["task"])], dtype=bool)
    if bounded.any():
        low[bounded], high[bounded] = bootstrap_intervals(list(values.to_numpy()[bounded]))
    return low, high
