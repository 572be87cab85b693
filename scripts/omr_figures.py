"""The four figures of the online manifold regularisation study and its findings, from
the result folder of ``dolb run pipelines/online_mr.toml --out runs/online_mr``:

    python scripts/omr_figures.py runs/online_mr

writes ``omr_runtime.png``, ``omr_risk.png``, ``omr_generalisation.png`` and
``omr_drift.png`` into the folder's ``report/`` and prints the findings (Markdown).
``notebooks/online_mr.ipynb`` shows the same. Every point is the mean over the splits
(seeds) of its experiment, its bars ± one standard deviation over them.

- runtime: seconds spent learning against T, log-log, with the slope of a least-squares
  line through the log-log points (T ≥ 1,000; the exact learner T ≥ 500);
- risk: the online risk (1/T) Σ_t J_t(f_t) of the exact and buffered learners against
  the batch risk J(f*) of ``batch_mr`` on the same T examples;
- generalisation: test error against T on the four datasets, f_T (solid) and the
  averaged f̄ (dashed), against batch MR and the supervised LASVM;
- drift: test error at time T on the rotating spirals (test set from the distribution
  at T) of batch MR on all past data and of the online buffer's f_T.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, NullLocator

from dolb.results.figure_style import PALETTE, new_figure, save
from dolb.results.stats import ci95_halfwidth
from dolb.results.tables import read_results

PLAIN = FuncFormatter(lambda value, _: f"{value:g}")
"""Tick labels of a logarithmic axis as plain numbers."""
DATASETS = {"spirals": "two spirals", "faces": "faces (150 training images)", "mnist01": "MNIST 0 vs 1",
            "mnist12": "MNIST 1 vs 2"}
DRIFT = {1000: "π/4", 2000: "π/2", 4000: "π"}
"""Rotation of the spirals over the first T examples (half a turn over 4,000)."""


def learner_name(row: pd.Series) -> str:
    """A learner as the figures name it."""
    if row.learner == "online_mr_buffer":
        keep = str(row.get("param_keep_labelled")) in ("True", "true", "1", "1.0")
        return f"buffer τ={int(row.param_buffer)}" + (", labelled kept" if keep else "")
    return {"online_mr": "exact", "online_mr_rptree": "RP tree", "batch_mr": "batch MR",
            "lasvm": "LASVM (labelled only)"}[row.learner]


def summarise(rows: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Mean, standard deviation, 95 % half-width of the mean and count of ``value`` over
    the splits (seeds), per ``by``."""
    rows = rows.assign(name=[learner_name(row) for _, row in rows.iterrows()])
    statistics = {"mean": "mean", "std": "std", "ci95": ci95_halfwidth, "count": "count"}
    return rows.groupby(by, sort=True)["value"].agg(**statistics).reset_index()


def errorbars(ax, line: pd.DataFrame, scale: float = 1.0, **style) -> None:
    """One line, its bars ± one standard deviation over the seeds (stopping above 0, for
    log axes)."""
    spread = scale * line["std"].fillna(0).to_numpy()
    mean = scale * line["mean"].to_numpy()
    ax.errorbar(line.n_train, mean, yerr=np.vstack([np.minimum(spread, 0.9 * mean), spread]), capsize=3, **style)


def size_axis(ax, sizes) -> None:
    """A logarithmic axis of training sizes, ticked and labelled at ``sizes`` only (but
    one of two sizes closer than a factor 1.5, whose labels would overlap)."""
    ticks = []
    for n in sorted(sizes):
        if not ticks or n >= 1.5 * ticks[-1]:
            ticks.append(n)
    ax.set_xscale("log")
    ax.set_xticks(ticks, [f"{n:,}" for n in ticks])
    ax.xaxis.set_minor_locator(NullLocator())


def slope(line: pd.DataFrame, start: int) -> float:
    """Least-squares slope of log(mean) against log(T) over T ≥ ``start`` (NaN with
    fewer than two such points)."""
    part = line[line.n_train >= start]
    if len(part) < 2:
        return float("nan")
    return float(np.polyfit(np.log(part.n_train), np.log(part["mean"]), 1)[0])


def runtime(frame: pd.DataFrame) -> pd.DataFrame:
    rows = frame[frame.experiment.isin(["runtime", "runtime_exact"]) & (frame.metric == "learn_seconds")]
    return summarise(rows, ["name", "experiment", "n_train"])


def figure_runtime(frame: pd.DataFrame, path: Path) -> dict[str, float]:
    table = runtime(frame)
    figure, axes = new_figure(1, 1, width=6.5, height=4.6)
    ax = axes[0, 0]
    slopes = {}
    # the buffer's short run beside the exact learner is left out: its long run is drawn
    drawn = table[(table.experiment == "runtime") | (table.name == "exact")]
    styles = [("o", "-"), ("s", "--"), ("^", "-."), ("D", ":")]
    for colour, (marker, style), (name, line) in zip(PALETTE, styles, drawn.groupby("name")):
        slopes[name] = slope(line, 500 if name == "exact" else 1000)
        errorbars(ax, line, marker=marker, linestyle=style, color=colour, label=f"{name} (slope {slopes[name]:.2f})")
    size_axis(ax, drawn.n_train.unique())
    ax.set_yscale("log")
    ax.set_xlabel("T (examples)")
    ax.set_ylabel("seconds learning (bars: ± 1 s.d. over seeds)")
    ax.set_title("Runtime against T, two spirals (2 % labelled)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left")
    figure.tight_layout()
    save(figure, path)
    return slopes


def risks(frame: pd.DataFrame) -> pd.DataFrame:
    rows = frame[(frame.experiment == "risk") & frame.metric.isin(["online_risk", "batch_risk"])]
    return summarise(rows, ["name", "metric", "n_train"])


def figure_risk(frame: pd.DataFrame, path: Path) -> None:
    table = risks(frame)
    figure, axes = new_figure(1, 1, width=6.5, height=4.6)
    ax = axes[0, 0]
    lines = [("exact", "online_risk", "online risk, exact", "o", "-"),
             ("buffer τ=200", "online_risk", "online risk, buffer τ=200", "s", "--"),
             ("batch MR", "batch_risk", "batch risk J(f*)", "^", ":")]
    for colour, width, (name, metric, label, marker, style) in zip(PALETTE, (3.5, 1.5, 1.5), lines):
        line = table[(table.name == name) & (table.metric == metric)]  # exact = buffer until it fills: drawn wider
        errorbars(ax, line, marker=marker, linestyle=style, color=colour, label=label, linewidth=width,
                  markersize=4 + 1.5 * width)
    size_axis(ax, table.n_train.unique())
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(PLAIN)
    ax.set_xlabel("T (examples)")
    ax.set_ylabel("risk (bars: ± 1 s.d. over seeds)")
    ax.set_title("Online risk (1/T) Σ J_t(f_t) against batch risk J(f*), two spirals")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    figure.tight_layout()
    save(figure, path)


def generalisation(frame: pd.DataFrame) -> pd.DataFrame:
    rows = frame[frame.experiment.str.startswith("gen_") & (frame.metric == "test_error")]
    rows = rows.assign(dataset=rows.experiment.str.removeprefix("gen_").str.removesuffix("_batch"))
    return summarise(rows, ["dataset", "name", "conversion", "n_train"])


def figure_generalisation(frame: pd.DataFrame, path: Path) -> None:
    table = generalisation(frame)
    figure, axes = new_figure(2, 2, width=6.0, height=4.4)
    names = ["buffer τ=200", "buffer τ=200, labelled kept", "RP tree", "batch MR", "LASVM (labelled only)"]
    markers = ["o", "s", "^", "D", "v"]
    widths = [3.5, 1.5, 1.5, 1.5, 1.5]  # the two buffers agree until theirs fill: the first drawn wider, under
    for ax, dataset in zip(axes.ravel(), DATASETS):
        for colour, marker, width, name in zip(PALETTE, markers, widths, names):
            for conversion, style, what in (("last", "-", "f_T"), ("average", "--", "f̄")):
                line = table[(table.dataset == dataset) & (table.name == name) & (table.conversion == conversion)]
                if len(line):
                    label = f"{name}, {what}" if name not in ("batch MR", "LASVM (labelled only)") else name
                    errorbars(ax, line, 100.0, marker=marker, linestyle=style, color=colour, label=label,
                              markerfacecolor="white" if conversion == "average" else colour, linewidth=width,
                              markersize=4 + 1.5 * width)
        size_axis(ax, table[table.dataset == dataset].n_train.unique())
        ax.set_xlabel("T (examples)")
        ax.set_ylabel("test error (%), ± 1 s.d. over seeds")
        ax.set_ylim(0, min(100, ax.get_ylim()[1]))
        ax.grid(True, which="both", alpha=0.3)
        ax.set_title(DATASETS[dataset])
    handles, labels = axes[0, 0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=4, fontsize=8)
    figure.tight_layout(rect=(0, 0.08, 1, 1))
    save(figure, path)


def drift(frame: pd.DataFrame) -> pd.DataFrame:
    rows = frame[frame.experiment.str.startswith("drift") & (frame.metric == "test_error")]
    rows = rows[rows.n_train == rows.groupby("experiment").n_train.transform("max")]  # each stream's own T
    return summarise(rows, ["name", "n_train"])


def figure_drift(frame: pd.DataFrame, path: Path) -> None:
    table = drift(frame)
    figure, axes = new_figure(1, 1, width=6.5, height=4.4)
    ax = axes[0, 0]
    for colour, (name, marker, style) in zip(PALETTE, [("buffer τ=200", "o", "-"), ("batch MR", "^", ":")]):
        line = table[table.name == name]
        label = "online buffer τ=200, f_T" if name != "batch MR" else "batch MR on all past data"
        errorbars(ax, line, 100.0, marker=marker, linestyle=style, color=colour, label=label)
    sizes = sorted(table.n_train.unique())
    size_axis(ax, sizes)
    ax.set_xticks(sizes, [f"{n:,}\n(turned {DRIFT[n]})" if n in DRIFT else f"{n:,}" for n in sizes])
    ax.set_xlabel("T (examples) and the spirals' rotation by then")
    ax.set_ylabel("test error at time T (%), ± 1 s.d.")
    ax.set_ylim(0, min(100, ax.get_ylim()[1]))
    ax.set_title("Concept drift: rotating spirals, tested on the distribution at T")
    ax.grid(True, alpha=0.3)
    ax.legend()
    figure.tight_layout()
    save(figure, path)


def findings(frame: pd.DataFrame, slopes: dict[str, float]) -> str:
    """The paper's findings beside ours, as Markdown."""
    lines = ["| finding | paper | here |", "| --- | --- | --- |"]
    for name, value in slopes.items():
        expected = "quadratic" if name == "exact" else "linear"
        lines.append(f"| runtime slope (log-log), {name} | {expected} | {value:.2f} |")
    table = risks(frame)
    online = table[(table.name == "exact") & (table.metric == "online_risk")].set_index("n_train")["mean"]
    batch = table[(table.name == "batch MR") & (table.metric == "batch_risk")].set_index("n_train")["mean"]
    gap = (online - batch).dropna()
    if len(gap):
        lines.append(f"| online risk − batch risk (exact), T = {gap.index[0]:,} → {gap.index[-1]:,} | shrinks | "
                     f"{gap.iloc[0]:.3f} → {gap.iloc[-1]:.3f} |")
    table = generalisation(frame)
    for dataset, label in DATASETS.items():
        part = table[(table.dataset == dataset)]
        if not len(part):
            continue
        final = part[part.n_train == part.n_train.max()]
        cells = ", ".join(f"{row['name']} {'f̄' if row.conversion == 'average' else 'f_T'} {100 * row['mean']:.1f}"
                          for _, row in final.sort_values("mean").iterrows())
        lines.append(f"| test error (%) at T = {int(part.n_train.max()):,}, {label} | buffer (labelled kept) "
                     f"as good as batch MR | {cells} |")
    table = drift(frame)
    if len(table):
        cells = "; ".join(f"T = {n:,}: online {100 * g.loc[g.name == 'buffer τ=200', 'mean'].iloc[0]:.1f}, "
                          f"batch {100 * g.loc[g.name == 'batch MR', 'mean'].iloc[0]:.1f}"
                          for n, g in table.groupby("n_train"))
        lines.append(f"| drift: test error (%) at T | online tracks, batch does not | {cells} |")
    return "\n".join(lines)


FIGURES = [("omr_runtime.png", runtime, figure_runtime), ("omr_risk.png", risks, figure_risk),
           ("omr_generalisation.png", generalisation, figure_generalisation), ("omr_drift.png", drift, figure_drift)]
"""Each figure, the table it draws and how: a figure whose table is empty (a folder
without those experiments) is not drawn."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    args = parser.parse_args()
    frame = read_results(args.folder)
    report = args.folder / "report"
    report.mkdir(exist_ok=True)
    slopes = {}
    for name, table, draw in FIGURES:
        if table(frame).empty:
            print(f"{name}: not drawn, {args.folder} holds none of its experiments")
        else:
            slopes |= draw(frame, report / name) or {}
    print(findings(frame, slopes))


if __name__ == "__main__":
    main()
