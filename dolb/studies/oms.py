"""The OMS study: online model selection over LASVM's complexity on MNIST 3 vs the rest
(Figures 2-4 and the tables of ``docs/studies/oms.md``), from the result folder of
``dolb run pipelines/oms_mnist.toml --out runs/oms_mnist``. Tables: ``best_fixed``, the
best fixed levels per training size; ``oms_vs_fixed``, Fig. 4's numbers; ``findings``,
the paper's findings beside ours. ``notebooks/oms_mnist.ipynb`` shows the same.

- Fig. 2: fixed-complexity LASVM test error against RBF gamma and polynomial degree,
  one line per training size (mean over the orders of experiment ``small`` at 1,000 and
  4,000 examples, with its 95 % interval; order 0 of experiment ``full`` at 60,000).
- Fig. 3: OMS-LASVM test error against training size, the switch points marked with the
  level they lead to.
- Fig. 4: OMS against fixed low (gamma 0.005, degree 1) and fixed high (gamma 0.03,
  degree 3) complexity.

The run of ``pipelines/oms_tuned.toml`` gives the figure at tuned settings: its report's
curve of the tuned start beside the hand cross-validation and the lowest start.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, NullFormatter

from dolb.results.figure_style import PALETTE, new_figure, save, series_style
from dolb.results.stats import ci95_halfwidth
from dolb.studies import STUDIES
from dolb.studies.study import Claim, Figure, Study, Table, Verdict, report_figure

LOW = {"rbf": 0.005, "poly": 1}
HIGH = {"rbf": 0.03, "poly": 3}
PAPER_BEST = {"rbf": {1000: 0.01, 4000: 0.02, 60000: 0.03}, "poly": {1000: 2, 4000: 3, 60000: 3}}
PAPER_FINAL = {"rbf": (0.0049, 0.0042), "poly": (0.0059, 0.0058)}
"""The paper's final error of OMS and of the best fixed complexity, per kernel."""
PAPER_SWITCHES = {"rbf": "γ 0.008 → 0.016 → 0.032", "poly": "—"}
"""The paper's switches of OMS, per kernel."""
KERNEL_NAMES = {"rbf": "RBF", "poly": "polynomial"}
PLAIN = FuncFormatter(lambda value, _: f"{value:g}")
"""Tick labels of a logarithmic error axis as plain numbers (0.1, 1, 10)."""
SPARSE = FuncFormatter(lambda value, _: f"{value:g}" if f"{value:.0e}"[0] in "235" else "")
"""Minor tick labels at 2, 3 and 5 times a power of ten only (the others would overlap)."""


def error_axis(ax) -> None:
    """A logarithmic y axis of test error in %, labelled with plain numbers."""
    ax.set_yscale("log")
    ax.set_ylabel("test error (%)")
    ax.yaxis.set_major_formatter(PLAIN)
    ax.yaxis.set_minor_formatter(SPARSE)
    ax.grid(True, which="both", alpha=0.3)


def fixed_errors(frame: pd.DataFrame) -> pd.DataFrame:
    """Test error of the fixed-complexity LASVM (online classifier): one row per kernel,
    level (gamma or degree), training size, with the mean, its 95 % half-width and the
    number of orders; 1,000 and 4,000 from ``small``, 60,000 from ``full``."""
    rows = frame[(frame.learner == "lasvm") & (frame.metric == "test_error") & (frame.conversion == "last")]
    rows = rows[(rows.experiment == "small") | ((rows.experiment == "full") & (rows.n_train == rows.n_train.max()))]
    rows = rows.assign(kernel=rows.param_kernel,
                       level=np.where(rows.param_kernel == "rbf", rows.param_gamma, rows.param_degree))
    grouped = rows.groupby(["kernel", "level", "n_train"])["value"]
    return grouped.agg(mean="mean", ci95=ci95_halfwidth, count="count").reset_index()


def oms_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """OMS rows (test error and diagnostics) with their kernel."""
    rows = frame[frame.learner == "oms_lasvm"]
    return rows.assign(kernel=rows.param_kernel)


def switches(frame: pd.DataFrame, kernel: str) -> list[tuple[int, int]]:
    """(examples, level reached) of every switch of the OMS run with ``kernel``, read at
    its last checkpoint."""
    rows = oms_runs(frame)
    rows = rows[(rows.kernel == kernel) & (rows.conversion == "online")]
    last = rows[rows.n_train == rows.n_train.max()]
    level = last.loc[last.metric == "oms_level", "value"]
    start = int(level.iloc[0]) - int(last.loc[last.metric == "oms_switches", "value"].iloc[0]) if len(level) else 1
    found = last[last.metric.str.match(r"oms_switch_\d+_n")]
    order = found.metric.str.extract(r"oms_switch_(\d+)_n")[0].astype(int)
    return [(int(n), start + k) for k, n in sorted(zip(order, found.value))]


def oms_value(frame: pd.DataFrame, kernel: str, metric: str) -> pd.Series:
    """``metric`` of the OMS run with ``kernel`` by training size."""
    rows = oms_runs(frame)
    rows = rows[(rows.kernel == kernel) & (rows.metric == metric)]
    return rows.groupby("n_train")["value"].mean()


def fixed_curve(frame: pd.DataFrame, kernel: str, level: float) -> pd.Series:
    """Test error of the fixed LASVM of ``kernel`` at ``level`` in ``full``, by size."""
    rows = frame[(frame.experiment == "full") & (frame.learner == "lasvm") & (frame.metric == "test_error")
                 & (frame.conversion == "last") & (frame.param_kernel == kernel)]
    column = "param_gamma" if kernel == "rbf" else "param_degree"
    rows = rows[np.isclose(rows[column].astype(float), level)]
    return rows.groupby("n_train")["value"].mean()


def figure_2(frame: pd.DataFrame, path: Path) -> None:
    table = fixed_errors(frame)
    figure, axes = new_figure(1, 2, width=5.5)
    for ax, kernel in zip(axes[0], ("rbf", "poly")):
        part = table[table.kernel == kernel]
        for position, (n, line) in enumerate(part.groupby("n_train")):
            line = line.sort_values("level")
            label = f"n = {n:,}" + (f" (mean of {int(line['count'].max())} orders)" if line["count"].max() > 1 else "")
            half = line.ci95.fillna(0).to_numpy()
            below = np.minimum(half, 0.9 * line["mean"].to_numpy())  # a log axis: bars stop above 0
            ax.errorbar(line.level, 100 * line["mean"], yerr=100 * np.vstack([below, half]), capsize=3,
                        label=label, **series_style(position % len(PALETTE), position // len(PALETTE)))
        levels = sorted(part.level.unique())
        if kernel == "rbf":
            ax.set_xscale("log")
            ax.set_xlabel("RBF γ")
        else:
            ax.set_xlabel("polynomial degree d")
        ax.set_xticks(levels, [f"{level:g}" for level in levels])
        ax.xaxis.set_minor_formatter(NullFormatter())
        error_axis(ax)
        ax.set_title(f"Fig. 2: fixed {KERNEL_NAMES[kernel]} LASVM")
        ax.legend()
    figure.tight_layout()
    save(figure, path)


def figure_3(frame: pd.DataFrame, path: Path) -> None:
    figure, axes = new_figure(1, 2, width=5.5)
    for ax, kernel in zip(axes[0], ("rbf", "poly")):
        error = oms_value(frame, kernel, "test_error")
        ax.plot(error.index, 100 * error.values, marker="o", color=PALETTE[0], label="OMS-LASVM")
        found = switches(frame, kernel)
        for n, level in found:
            ax.axvline(n, color="grey", linestyle=":", linewidth=1)
            ax.annotate(f"→ {level}", (n, 1.0), xycoords=("data", "axes fraction"), rotation=90,
                        va="top", ha="right", fontsize=8, color="dimgrey")
        ax.set_xscale("log")
        ax.set_xlabel("training examples")
        error_axis(ax)
        what = "level α (γ = γ₁·2^(α−1))" if kernel == "rbf" else "degree"
        ax.set_title(f"Fig. 3: OMS, {KERNEL_NAMES[kernel]}; dotted: switches to {what}" if found
                     else f"Fig. 3: OMS, {KERNEL_NAMES[kernel]}; no switch")
        ax.legend(loc="lower left")
    figure.tight_layout()
    save(figure, path)


def figure_4(frame: pd.DataFrame, path: Path) -> None:
    figure, axes = new_figure(1, 2, width=5.5)
    colours = PALETTE
    for ax, kernel in zip(axes[0], ("rbf", "poly")):
        name = "γ" if kernel == "rbf" else "d"
        lines = [("OMS", oms_value(frame, kernel, "test_error"), "o", "-"),
                 (f"fixed low, {name} = {LOW[kernel]}", fixed_curve(frame, kernel, LOW[kernel]), "s", "--"),
                 (f"fixed high, {name} = {HIGH[kernel]}", fixed_curve(frame, kernel, HIGH[kernel]), "^", ":")]
        for colour, (label, curve, marker, style) in zip(colours, lines):
            ax.plot(curve.index, 100 * curve.values, marker=marker, linestyle=style, color=colour, label=label)
        ax.set_xscale("log")
        ax.set_xlabel("training examples")
        error_axis(ax)
        ax.set_title(f"Fig. 4: OMS vs fixed, {KERNEL_NAMES[kernel]}")
        ax.legend(loc="lower left")  # the corner the falling curves leave empty
    figure.tight_layout()
    save(figure, path)


def best_fixed(frame: pd.DataFrame) -> tuple[list, list]:
    """Table ``best_fixed``: per kernel and training size the paper's best fixed level,
    ours and the next best, with their mean test errors."""
    columns = [("kernel", None), ("examples", ",d"), ("paper's best", "g"), ("best here", "g"), ("test error", ".2%"),
               ("next best", "g"), ("test error", ".2%")]
    table = fixed_errors(frame)
    rows = []
    for kernel in ("rbf", "poly"):
        for n, group in table[table.kernel == kernel].groupby("n_train"):
            ranked = group.sort_values(["mean", "level"])  # the smaller level first on ties
            second = ranked.iloc[1][["level", "mean"]].tolist() if len(ranked) > 1 else [None, None]
            rows.append([KERNEL_NAMES[kernel], n, PAPER_BEST[kernel].get(n), *ranked.iloc[0][["level", "mean"]],
                         *second])
    return columns, rows


def against_fixed(frame: pd.DataFrame, kernel: str) -> pd.DataFrame:
    """By training size: the test error of OMS (``oms``), the level its first machine is
    at (``level``), fixed low and high (``low``, ``high``) and OMS minus the better of
    the two in percentage points (``gap``); sizes where one of them is missing left out."""
    both = pd.concat({"oms": oms_value(frame, kernel, "test_error"), "level": oms_value(frame, kernel, "oms_value"),
                      "low": fixed_curve(frame, kernel, LOW[kernel]), "high": fixed_curve(frame, kernel, HIGH[kernel])},
                     axis=1).dropna()
    return both.assign(gap=100 * (both.oms - both[["low", "high"]].min(axis=1)))


def oms_vs_fixed(frame: pd.DataFrame) -> tuple[list, list]:
    """Table ``oms_vs_fixed`` (Fig. 4's numbers): per kernel and training size, OMS's
    level and test error beside fixed low and high complexity."""
    columns = [("kernel", None), ("examples", ",d"), ("OMS at γ or d", "g"), ("OMS", ".2%"),
               (f"fixed low (γ {LOW['rbf']}, d {LOW['poly']})", ".2%"),
               (f"fixed high (γ {HIGH['rbf']}, d {HIGH['poly']})", ".2%"), ("OMS − the better, points", "+.2f")]
    rows = []
    for kernel in ("rbf", "poly"):
        both = against_fixed(frame, kernel)
        rows += [[KERNEL_NAMES[kernel], n, *both.loc[n, ["level", "oms", "low", "high", "gap"]]] for n in both.index]
    return columns, rows


def level_name(frame: pd.DataFrame, kernel: str, level: int) -> str:
    """OMS's ``level`` as the RBF width or polynomial degree it stands for."""
    if kernel == "poly":
        return f"d = {level}"
    return f"γ = {oms_value(frame, kernel, 'oms_start').iloc[0] * 2 ** (level - 1):g}"


def sizes(values) -> str:
    """Training sizes as a list in words ("none" when empty)."""
    return ", ".join(f"{int(n):,}" for n in values) or "none"


def kernel_findings(frame: pd.DataFrame, kernel: str) -> list[list[str]]:
    """The findings rows of ``kernel`` (none without its OMS run)."""
    both, name = against_fixed(frame, kernel), KERNEL_NAMES[kernel]
    if both.empty:
        return []
    final = both.index.max()
    best_final = fixed_errors(frame).query("kernel == @kernel and n_train == @final")["mean"].min()
    paper_oms, paper_best = PAPER_FINAL[kernel]
    gap, below = f"{both.gap.min():+.2f} to {both.gap.max():+.2f}", both.index[both.gap < 0]
    if len(below):
        gap += f"; below the better at {sizes(below)}"
    moves = [f"{n:,} → {level_name(frame, kernel, level)}" for n, level in switches(frame, kernel)]
    return [
        [f"final OMS error, {name} (best fixed)", f"{paper_oms:.2%} ({paper_best:.2%})",
         f"{both.oms[final]:.2%} ({best_final:.2%})"],
        [f"{name}: sizes where fixed low beats fixed high", "the early ones", sizes(both.index[both.low < both.high])],
        [f"{name}: OMS minus the better of low and high, points", "near 0", gap],
        [f"{name}: switches (examples → level)", PAPER_SWITCHES[kernel], "; ".join(moves) or "none"]]


def findings(frame: pd.DataFrame) -> tuple[list, list]:
    """Table ``findings``: the paper's findings beside ours."""
    rows = [row for kernel in ("rbf", "poly") for row in kernel_findings(frame, kernel)]
    start = oms_value(frame, "rbf", "oms_start")
    if len(start):
        rows.append(["γ₁ chosen by cross-validation on the first 100 examples", "0.04 (text), 0.004 (its ladder)",
                     f"{start.iloc[0]:g}"])
    return [("finding", None), ("paper", None), ("here", None)], rows


def _by_kernel(record: dict) -> dict[str, list[list]]:
    """The rows of ``record`` (its first column the kernel) by kernel."""
    rows: dict[str, list[list]] = {}
    for row in record["rows"]:
        rows.setdefault(row[0], []).append(row)
    return rows


def tracks_the_better(tables) -> Verdict:
    """OMS within 1 percentage point of the better of fixed low and high at every size."""
    gaps = {kernel: max(row[-1] for row in rows) for kernel, rows in _by_kernel(tables["oms_vs_fixed"]).items()}
    return Verdict(all(gap <= 1.0 for gap in gaps.values()),
                   "largest OMS − the better, points: " + ", ".join(f"{k} {g:+.2f}" for k, g in gaps.items()))


def ends_near_the_best(tables) -> Verdict:
    """OMS within 0.2 percentage points of the better fixed complexity at the largest size."""
    gaps = {kernel: rows[-1][-1] for kernel, rows in _by_kernel(tables["oms_vs_fixed"]).items()}
    return Verdict(all(gap <= 0.2 for gap in gaps.values()),
                   "OMS − the better at the largest size, points: " + ", ".join(f"{k} {g:+.2f}"
                                                                                 for k, g in gaps.items()))


def low_first(tables) -> Verdict:
    """Fixed low complexity errs less than fixed high at the smallest size, both kernels."""
    first = {kernel: rows[0] for kernel, rows in _by_kernel(tables["oms_vs_fixed"]).items()}
    return Verdict(all(row[4] < row[5] for row in first.values()),
                   "; ".join(f"{k} at {row[1]:,}: low {row[4]:.2%}, high {row[5]:.2%}" for k, row in first.items()))


def more_data_more_complexity(tables) -> Verdict:
    """The best fixed level at the largest size at least the one at the smallest."""
    best = {kernel: (rows[0][3], rows[-1][3]) for kernel, rows in _by_kernel(tables["best_fixed"]).items()}
    return Verdict(all(last >= first for first, last in best.values()),
                   "best level, smallest → largest size: " + ", ".join(f"{k} {a:g} → {b:g}"
                                                                        for k, (a, b) in best.items()))


TABLES = {"best_fixed": best_fixed, "oms_vs_fixed": oms_vs_fixed, "findings": findings}
"""The study's tables by record name, each made by its function from the result frame."""


STUDY = Study(
    name="oms",
    title="Kernel machines and online model selection (OMS)",
    paper="An online model-selection paper that grows the complexity of an online SVM as data arrives (MNIST), "
          "over LASVM (Bordes, Ertekin, Weston & Bottou, JMLR 2005).",
    pipelines=("oms_mnist", "oms_tuned"),
    tables=tuple(Table(name, lambda run, make=make: make(run.frame), ("small", "full", "oms"))
                 for name, make in TABLES.items()),
    figures=(Figure("oms_fig2.png", lambda run, path: figure_2(run.frame, path), ("small", "full"),
                    "Fig. 2: test error of fixed LASVM against γ and degree"),
             Figure("oms_fig3.png", lambda run, path: figure_3(run.frame, path), ("oms",),
                    "Fig. 3: OMS-LASVM's test error against training size, with its switches"),
             Figure("oms_fig4.png", lambda run, path: figure_4(run.frame, path), ("oms",),
                    "Fig. 4: OMS against fixed low and high complexity"),
             Figure("tuning_oms.png", report_figure("02-oms-test_error-curve.png"), ("oms",),
                    "OMS-LASVM: tuned start, hand cross-validation, lowest start", tuned=True)),
    claims=(
        Claim("Fig. 4: OMS stays near the better of fixed low and high complexity at every size", tracks_the_better,
              ("oms_vs_fixed",)),
        Claim("OMS ends as good as the best fixed complexity", ends_near_the_best, ("oms_vs_fixed",)),
        Claim("Fig. 4: at the early sizes fixed low complexity beats fixed high", low_first, ("oms_vs_fixed",)),
        Claim("Fig. 2: the best fixed complexity grows with the training size", more_data_more_complexity,
              ("best_fixed",)),
    ),
)
STUDIES.add(STUDY.name, STUDY)
