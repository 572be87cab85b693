"""Ranking configurations across datasets (Demšar 2006, "Statistical comparisons of
classifiers over multiple data sets", JMLR 7): the Friedman test over the ranks on
every dataset, then a post-hoc test of every pair (Nemenyi's, or Holm's step-down
procedure on the z statistics of the rank differences), and the critical-difference
diagram. The tests and the diagram are scipy's and scikit-posthocs'.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the pipeline's checks read POSTHOC (on every worker): pandas only for a test
    import pandas as pd

POSTHOC = ("nemenyi", "holm")
"""The post-hoc tests a ranking report may ask for."""
ALPHA = 0.05
"""Significance level of the Friedman test, the post-hoc tests and the diagram."""


@dataclass(frozen=True)
class Friedman:
    """The Friedman test of ``k`` configurations over ``n`` datasets.

    Attributes
    ----------
    statistic, p : float
        Friedman's chi-square and its p-value (scipy.stats.friedmanchisquare).
    n_datasets : int
        The datasets (blocks) ranked on.
    mean_ranks : Series
        Mean rank of every configuration (1 = lowest value), lowest first.
    pairwise : DataFrame
        The post-hoc p-value of every pair of configurations.
    posthoc : str
        Which post-hoc test (:data:`POSTHOC`).
    cd : float or None
        Nemenyi's critical difference of mean ranks at :data:`ALPHA` (None for Holm).
    """

    statistic: float
    p: float
    n_datasets: int
    mean_ranks: pd.Series
    pairwise: pd.DataFrame
    posthoc: str
    cd: float | None

    def describe(self) -> str:
        """One sentence: the test, its result and which pairs differ."""
        k = len(self.mean_ranks)
        different = int((self.pairwise.to_numpy()[np.triu_indices(k, 1)] < ALPHA).sum())
        text = (f"Friedman test over {self.n_datasets} datasets, {k} configurations: "
                f"chi-square = {self.statistic:.3g}, p = {self.p:.3g}. "
                f"{self.posthoc.capitalize()} post-hoc test: {different} of "
                f"{k * (k - 1) // 2} pairs differ at {ALPHA:g}")
        if self.cd is not None:
            text += f" (critical difference of mean ranks {self.cd:.3g})"
        return text + "; joined by a bar in the diagram: not told apart."


def friedman(values: pd.DataFrame, posthoc: str = "nemenyi") -> Friedman:
    """Friedman's test of the configurations (columns) of ``values`` over the datasets
    (rows; lower is better), with the post-hoc test ``posthoc``.

    Examples
    --------
    >>> import pandas as pd
    >>> values = pd.DataFrame({"a": [0.1, 0.2, 0.3, 0.1], "b": [0.2, 0.3, 0.1, 0.2], "c": [0.3, 0.4, 0.2, 0.3]})
    >>> test = friedman(values)
    >>> test.mean_ranks.to_dict()
    {'a': 1.5, 'b': 1.75, 'c': 2.75}
    >>> round(test.statistic, 4), round(test.p, 4)  # chi-square = 12 n / (k (k+1)) sum (R_j - (k+1)/2)^2
    (3.5, 0.1738)
    """
    import scikit_posthocs
    from scipy import stats

    if posthoc not in POSTHOC:
        raise ValueError(f"unknown post-hoc test {posthoc!r} (known: {', '.join(POSTHOC)})")
    n, k = values.shape
    statistic, p = stats.friedmanchisquare(*(values[c].to_numpy(dtype=float) for c in values.columns))
    ranks = values.rank(axis=1, method="average").mean(axis=0).sort_values(kind="stable")
    if posthoc == "nemenyi":
        pairwise = scikit_posthocs.posthoc_nemenyi_friedman(values.to_numpy(dtype=float))
        q_alpha = stats.studentized_range.isf(ALPHA, k, np.inf) / np.sqrt(2)
        cd = float(q_alpha * np.sqrt(k * (k + 1) / (6 * n)))
    else:
        pairwise = scikit_posthocs.posthoc_siegel_friedman(values.to_numpy(dtype=float), p_adjust="holm")
        cd = None
    pairwise.index = pairwise.columns = list(values.columns)
    return Friedman(float(statistic), float(p), n, ranks, pairwise, posthoc, cd)


def cd_diagram(test: Friedman, title: str, path: Path) -> Path:
    """Draw the critical-difference diagram of ``test`` (scikit-posthocs'): the mean
    ranks on an axis, configurations not told apart joined by a bar; save as PNG."""
    import scikit_posthocs

    from dolb.results.figure_style import new_figure, save

    k = len(test.mean_ranks)
    fig, axes = new_figure(width=10, height=1.8 + 0.3 * k)
    ax = axes[0, 0]
    scikit_posthocs.critical_difference_diagram(
        test.mean_ranks, test.pairwise, ax=ax, alpha=ALPHA, cd=test.cd,
        label_fmt_left="{label} ({rank:.2f})", label_fmt_right="({rank:.2f}) {label}",
        label_props={"fontsize": 9}, text_h_margin=0.3, color_palette=["#333333"] * k,  # one ink, as Demšar's
    )
    ax.set_title(f"{title}\nmean rank, 1 = best; {test.posthoc.capitalize()} at {ALPHA:g}", fontsize=10, pad=24)
    fig.subplots_adjust(left=0.3, right=0.7, top=1 - 0.9 / (1.8 + 0.3 * k), bottom=0.02)  # labels beside the axis
    save(fig, path)
    return path
