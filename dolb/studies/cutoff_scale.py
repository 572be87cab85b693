"""The cutoff-averaging study at RCV1 scale, from the result folder of
``dolb run pipelines/cutoff_rcv1_scale.toml --out runs/cutoff_rcv1_scale``: its figures

- ``cutoff_scale_survival.png``: N_k / m, the share of the m rounds counted at cutoff k,
  against k, at several m, one panel per configuration (N_k − N_{k+1} is the number of
  hypotheses that survived more than k rounds: the survival-time distribution);
- ``cutoff_scale_loss.png``: L̂_k, the mean hinge loss on those rounds, against k;
- ``cutoff_scale_hinge.png``: test hinge loss of the last hypothesis, averaging and
  cutoff averaging against m (mean over the seeds, bars ± one standard deviation);

and its findings tables ``scale_margin`` (the margin Perceptron) and ``scale_perceptron``
(the classic Perceptron): per configuration and m, the k the bound chose, the largest
survival time, N_1 / m, L̂_0 and the smallest L̂_k, the k the bound would choose with
C = 1 instead of 1 + R (among the reported k), and the test hinge loss (test error for the Perceptron) of each
conversion. Every number but the largest k chosen is the mean over the seeds (orders of
the stream).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, NullFormatter

from dolb.conversions.bound import confidence, risk_bound
from dolb.conversions.cutoff import REPORTED_K
from dolb.results.figure_style import PALETTE, new_figure, save, series_style
from dolb.studies.study import Figure, Table

CONFIGURATIONS = {
    "unit": "unit norm (the sample), R = 1",
    "norm3": "norm 3, R = 3",
    "norm10": "norm 10, R = 10",
    "norm30": "norm 30, R = 30",
    "uniform10": "norms uniform in [1, 10], R = 10",
}
"""The margin Perceptron's experiments (one panel each) and how they are named."""
SIZES = (1_000, 10_000, 100_000, 640_000)
"""The stream lengths m drawn as lines in the per-k figures and listed in the findings."""
CONVERSIONS = {"last": ("last hypothesis", "o", "-", 4), "average": ("averaging", "s", "--", 4),
               "cutoff": ("cutoff averaging (hollow: on averaging where k = 0)", "^", ":", 9)}
PLAIN = FuncFormatter(lambda value, _: f"{value:g}")


def per_k(table: pd.DataFrame, what: str) -> pd.DataFrame:
    """Mean over the seeds of ``cutoff_<what>_k<k>`` per experiment, m and k (NaN where
    no hypothesis lived more than k rounds in some seed)."""
    names = {f"cutoff_{what}_k{k}": k for k in REPORTED_K}
    rows = table[(table.conversion == "cutoff") & table.metric.isin(list(names))]
    rows = rows.assign(k=rows.metric.map(names))
    return rows.groupby(["experiment", "n_train", "k"])["value"].agg(lambda v: v.mean(skipna=False)).reset_index()


def scalar(table: pd.DataFrame, metric: str, conversion: str = "cutoff") -> pd.DataFrame:
    """Mean, standard deviation and maximum over the seeds of one metric, per
    experiment and m."""
    rows = table[(table.conversion == conversion) & (table.metric == metric)]
    return rows.groupby(["experiment", "n_train"])["value"].agg(["mean", "std", "max"]).reset_index()


def _panels(experiments: list[str]):
    columns = min(3, len(experiments))
    rows = math.ceil(len(experiments) / columns)
    figure, axes = new_figure(rows, columns, width=4.6, height=3.6)
    for ax in axes.ravel()[len(experiments):]:
        ax.set_visible(False)
    return figure, axes.ravel()


def shared_legend(figure, axes, used: int) -> None:
    """One legend for all panels, from the panel with the most entries: in the first
    unused panel if there is one, else below the panels."""
    handles, labels = max((ax.get_legend_handles_labels() for ax in axes[:used]), key=lambda hl: len(hl[1]))
    if len(axes) > used:
        axes[used].set_visible(True)
        axes[used].axis("off")
        axes[used].legend(handles, labels, loc="center", fontsize=10)
    else:
        figure.legend(handles, labels, loc="lower center", ncol=len(labels))


def per_k_figure(frame: pd.DataFrame, ylabel: str, path: Path, share_of_m: bool) -> None:
    """One panel per configuration: the value per k (k = 0 and a logarithmic axis from
    k = 1 on) at each m of SIZES."""
    experiments = [e for e in CONFIGURATIONS if e in set(frame.experiment)]
    figure, axes = _panels(experiments)
    for ax, experiment in zip(axes, experiments):
        mine = frame[frame.experiment == experiment].dropna()
        for i, m in enumerate(s for s in SIZES if s in set(mine.n_train)):
            line = mine[mine.n_train == m].sort_values("k")
            values = line.value / m if share_of_m else line.value
            ax.plot(line.k, values, label=f"m = {m:,}", **series_style(i))
        if mine.k.max() == 0:
            ax.text(0.5, 0.5, "no hypothesis used twice:\nonly k = 0 exists", ha="center", va="center",
                    transform=ax.transAxes)
        ax.set_xscale("symlog", linthresh=1.0)
        ax.set_xticks([k for k in REPORTED_K if k <= max(mine.k.max(), 2)])
        ax.xaxis.set_major_formatter(PLAIN)
        ax.xaxis.set_minor_formatter(NullFormatter())
        if share_of_m:
            ax.set_yscale("log")
            ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_title(CONFIGURATIONS[experiment], fontsize=10)
        ax.set_xlabel("cutoff k")
        ax.set_ylabel(ylabel)
    figure.tight_layout()
    shared_legend(figure, axes, len(experiments))
    save(figure, path)


def hinge_figure(table: pd.DataFrame, path: Path) -> None:
    """Test hinge loss of each conversion against m, one panel per configuration."""
    experiments = [e for e in CONFIGURATIONS if e in set(table.experiment)]
    figure, axes = _panels(experiments)
    for ax, experiment in zip(axes, experiments):
        for i, (conversion, (label, marker, style, size)) in enumerate(CONVERSIONS.items()):
            line = scalar(table[table.experiment == experiment], "test_hinge", conversion)
            hollow = {"markerfacecolor": "none", "markeredgewidth": 1.5} if conversion == "cutoff" else {}
            ax.errorbar(line.n_train, line["mean"], yerr=line["std"].fillna(0), capsize=2, marker=marker,
                        linestyle=style, color=PALETTE[i], label=label, markersize=size, **hollow)
        ax.set_xscale("log")
        ax.set_title(CONFIGURATIONS[experiment], fontsize=10)
        ax.set_xlabel("training examples m")
        ax.set_ylabel("test hinge loss")
    figure.tight_layout()
    shared_legend(figure, axes, len(experiments))
    save(figure, path)


def counterfactual_k(n: pd.Series, mean_loss: pd.Series, m: int, C: float) -> int:
    """The k among the reported ones that minimises the bound with constant ``C``."""
    ok = n.notna() & (n > 0)
    bounds = risk_bound(mean_loss[ok] * n[ok], n[ok], C, confidence(m))
    return int(n[ok].index[int(np.argmin(bounds))])


def findings(table: pd.DataFrame, experiments: dict[str, str], metric: str = "test_hinge") -> tuple[list, list]:
    """The findings table's columns and rows, one row per experiment and m of SIZES,
    with the test ``metric`` of each conversion."""
    n, loss = per_k(table, "n"), per_k(table, "loss")
    tested = {c: scalar(table, metric, c).set_index(["experiment", "n_train"])["mean"] for c in CONVERSIONS}
    chosen = scalar(table, "cutoff_k").set_index(["experiment", "n_train"])
    longest = scalar(table, "cutoff_max_r").set_index(["experiment", "n_train"])
    columns = [("configuration", None), ("m", ",d"), ("k chosen: mean", ".3g"), ("max", "d"), ("longest r", ".3g"),
               ("N_1 / m", ".3g"), ("L̂_0", ".3g"), ("min L̂_k", ".3g"), ("at k", "d"), ("k with C = 1", "d"),
               (f"{metric}: last", ".3g"), ("average", ".3g"), ("cutoff", ".3g")]
    rows = []
    for experiment in (e for e in experiments if e in set(table.experiment)):
        for m in (s for s in SIZES if (experiment, s) in chosen.index):
            nk = n[(n.experiment == experiment) & (n.n_train == m)].set_index("k")["value"]
            lk = loss[(loss.experiment == experiment) & (loss.n_train == m)].set_index("k")["value"]
            best = int(lk.dropna().idxmin())
            key = (experiment, m)
            rows.append([experiments[experiment], m, chosen.loc[key, "mean"], int(chosen.loc[key, "max"]),
                         longest.loc[key, "mean"], nk.get(1, math.nan) / m, lk[0], lk[best], best,
                         counterfactual_k(nk, lk, m, 1.0), *(tested[c][key] for c in CONVERSIONS)])
    return columns, rows


TABLES = {"scale_margin": (CONFIGURATIONS, "test_hinge"),
          "scale_perceptron": ({"perceptron": "Perceptron, unit norm"}, "test_error")}
"""The findings tables: experiments and test metric of each."""
SCALE_TABLES = tuple(Table(name, lambda run, e=experiments, m=metric: findings(run.frame, e, m), tuple(experiments))
                     for name, (experiments, metric) in TABLES.items())
"""The findings tables as the study makes them from a run."""
SCALE_FIGURES = (
    Figure("cutoff_scale_survival.png", lambda run, path: per_k_figure(
        per_k(run.frame, "n"), "N_k / m: share of the rounds counted", path, True), tuple(CONFIGURATIONS),
        "N_k / m against k"),
    Figure("cutoff_scale_loss.png", lambda run, path: per_k_figure(
        per_k(run.frame, "loss"), "L_k: mean hinge loss on those rounds", path, False), tuple(CONFIGURATIONS),
        "L̂_k against k"),
    Figure("cutoff_scale_hinge.png", lambda run, path: hinge_figure(run.frame, path), tuple(CONFIGURATIONS),
           "test hinge loss against m"),
)
"""The figures as the study draws them from a run."""
