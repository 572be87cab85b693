"""Statistics shared by the tables and the nightly comparison: the 95 % confidence
interval of a mean and the paired t-test over splits."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dolb.results.query import ci95_from


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
