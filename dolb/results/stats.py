"""Statistics shared by the tables and the nightly comparison: the 95 % confidence
interval of a mean, the paired t-test over splits, and for throughput the bootstrap
interval of a ratio of medians and the rank test of one run being slower."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dolb.results.query import ci95_from

ALPHA = 0.05
"""False-discovery rate of the Benjamini–Hochberg procedure (the nightly comparison's
default, for metrics and for throughput alike)."""


def ci95_halfwidth(values: pd.Series) -> float:
    """Half-width of the 95 % Student-t confidence interval of the mean.

    Examples
    --------
    >>> round(ci95_halfwidth(pd.Series([1.0, 2.0, 3.0])), 4)
    2.4841
    """
    return float(ci95_from(values.std(ddof=1), values.count()))


def paired_tests(pairs: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per group of ``keys``, from rows of paired values ``run`` and ``baseline`` and
    their ``difference`` (NaN where a pair is incomplete): the means, the mean
    difference with its 95 % t interval, the relative change, Cohen's d_z and the
    two-sided paired t-test. All differences 0: t = 0, p = 1; all equal and non-zero:
    t = ±inf, p = 0; fewer than two pairs: no test (NaN).

    Examples
    --------
    >>> pairs = pd.DataFrame({"k": "a", "run": [1.0, 2.0, 4.0], "baseline": [1.0, 1.0, 1.0]})
    >>> row = paired_tests(pairs.assign(difference=pairs.run - pairs.baseline), ["k"]).iloc[0]
    >>> round(float(row["difference"]), 4), round(float(row["p"]), 4)  # scipy's ttest_rel: 0.2697
    (1.3333, 0.2697)
    """
    from scipy.stats import t as student_t  # 0.7 s to import: only when a test is made

    table = pairs.groupby(keys, sort=True, dropna=False).agg(
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
    p = np.where(n >= 2, 2 * student_t.sf(np.abs(t), np.maximum(n - 1, 1)), np.nan)
    return table.assign(
        n_nonfinite=table["pairs"] - table["n"],
        ci_low=mean - table["ci95"],
        ci_high=mean + table["ci95"],
        relative=relative,
        d_z=d_z,
        t=t,
        p=p,
    )


def median_ratio_interval(run, baseline, confidence: float = 0.95, resamples: int = 2000, seed: int = 0
                          ) -> tuple[float, float]:
    """Percentile bootstrap interval of median(run) / median(baseline), the two samples
    resampled independently (scipy's ``bootstrap``, seeded); NaNs when a sample has
    fewer than two values.

    Examples
    --------
    >>> low, high = median_ratio_interval([8.0, 9.0, 10.0, 11.0, 12.0], [18.0, 19.0, 20.0, 21.0, 22.0])
    >>> 0.35 < low < 0.5 < high < 0.65
    True
    """
    from scipy.stats import bootstrap

    run, baseline = np.asarray(run, dtype=float), np.asarray(baseline, dtype=float)
    if min(run.size, baseline.size) < 2:
        return np.nan, np.nan

    def ratio(a, b, axis=-1):
        return np.median(a, axis=axis) / np.median(b, axis=axis)

    found = bootstrap((run, baseline), ratio, vectorized=True, n_resamples=resamples, confidence_level=confidence,
                      method="percentile", rng=np.random.default_rng(seed))
    return float(found.confidence_interval.low), float(found.confidence_interval.high)


def slower_p_values(run: list, baseline: list) -> np.ndarray:
    """For each pair of samples (``run[i]``, ``baseline[i]``, examples per second), the
    one-sided p-value that the run is slower: scipy's Mann–Whitney U test (exact for
    small samples without ties).

    Examples
    --------
    >>> slower_p_values([[1.0, 2.0, 3.0], [5.0, 6.0, 7.0]], [[4.0, 5.0, 6.0], [1.0, 2.0, 3.0]]).tolist()
    [0.05, 1.0]
    """
    from scipy.stats import mannwhitneyu

    return _by_size(lambda a, b: mannwhitneyu(a, b, alternative="less", axis=1).pvalue, run, baseline)


def fisher_p_values(groups: list) -> np.ndarray:
    """For each group of independent p-values, the p-value of them all together by
    Fisher's method (scipy's ``combine_pvalues``).

    Examples
    --------
    >>> fisher_p_values([[0.01, 0.5], [0.2]]).round(4).tolist()
    [0.0315, 0.2]
    """
    from scipy.stats import combine_pvalues

    return _by_size(lambda p: combine_pvalues(p, method="fisher", axis=1).pvalue, groups)


def _by_size(test, *samples: list) -> np.ndarray:
    """``test`` of the rows ``samples[0][i], samples[1][i], ...``: called once per
    combination of sample sizes, on 2-D arrays of the rows of those sizes (scipy's
    tests take ``axis=1``), its results put back in row order."""
    sizes = [tuple(len(sample[i]) for sample in samples) for i in range(len(samples[0]))]
    found = np.full(len(sizes), np.nan)
    for size in set(sizes):
        rows = [i for i, other in enumerate(sizes) if other == size]
        found[rows] = test(*(np.array([sample[i] for i in rows], dtype=float) for sample in samples))
    return found
