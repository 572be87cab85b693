"""The online manifold regularisation study (Goldberg, Li & Zhu, ECML PKDD 2008): its four
figures and its tables, from the result folder of
``dolb run pipelines/online_mr.toml --out runs/online_mr``. Tables: ``findings``, the
paper's findings beside ours; ``risk``, the online and batch risks; ``generalisation``,
every hypothesis's test error at the last T. ``notebooks/online_mr.ipynb`` shows the
same. Every point is the mean over the splits (seeds) of its experiment, its bars ± one
standard deviation over them.

- runtime: seconds spent learning against T, log-log, with the slope of a least-squares
  line through the log-log points (T ≥ 1,000; the exact learner T ≥ 500);
- risk: the online risk (1/T) Σ_t J_t(f_t) of the exact and buffered learners against
  the batch risk J(f*) of ``batch_mr`` on the same T examples;
- generalisation: test error against T on the four datasets, f_T (solid) and the
  averaged f̄ (dashed), against batch MR and the supervised LASVM;
- drift: test error at time T on the rotating spirals (test set from the distribution
  at T) of batch MR on all past data and of the online buffer's f_T.
The run of ``pipelines/online_mr_tuned.toml`` gives the figures at tuned settings.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, NullLocator

from dolb.results.figure_style import PALETTE, new_figure, save
from dolb.results.stats import ci95_halfwidth
from dolb.studies import STUDIES
from dolb.studies.study import Claim, Figure, Study, Table, Verdict, report_figure

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


def drawn_runtime(frame: pd.DataFrame) -> pd.DataFrame:
    """The runtime lines drawn: the buffer's short run beside the exact learner is left
    out (its long run is drawn)."""
    table = runtime(frame)
    return table[(table.experiment == "runtime") | (table.name == "exact")]


def slopes(frame: pd.DataFrame) -> dict[str, float]:
    """Each drawn learner's runtime slope (log-log) over T ≥ 1,000, the exact learner's
    over T ≥ 500."""
    return {name: slope(line, 500 if name == "exact" else 1000) for name, line in drawn_runtime(frame).groupby("name")}


def figure_runtime(frame: pd.DataFrame, path: Path) -> None:
    drawn, fitted = drawn_runtime(frame), slopes(frame)
    figure, axes = new_figure(1, 1, width=6.5, height=4.6)
    ax = axes[0, 0]
    styles = [("o", "-"), ("s", "--"), ("^", "-."), ("D", ":")]
    for colour, (marker, style), (name, line) in zip(PALETTE, styles, drawn.groupby("name")):
        errorbars(ax, line, marker=marker, linestyle=style, color=colour, label=f"{name} (slope {fitted[name]:.2f})")
    size_axis(ax, drawn.n_train.unique())
    ax.set_yscale("log")
    ax.set_xlabel("T (examples)")
    ax.set_ylabel("seconds learning (bars: ± 1 s.d. over seeds)")
    ax.set_title("Runtime against T, two spirals (2 % labelled)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left")
    figure.tight_layout()
    save(figure, path)


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


GENERALISING = ["buffer τ=200", "buffer τ=200, labelled kept", "RP tree", "batch MR", "LASVM (labelled only)"]
"""The learners of the generalisation experiments, in the order they are drawn and listed."""
HYPOTHESES = {"last": "f_T", "average": "f̄"}
"""The conversions of the generalisation experiments and their names."""


def hypothesis(name: str, conversion: str) -> str:
    """A learner's hypothesis as the figures and tables name it: the learner, and f_T
    or f̄ for the online learners."""
    return name if name in ("batch MR", "LASVM (labelled only)") else f"{name}, {HYPOTHESES[conversion]}"


def generalisation(frame: pd.DataFrame) -> pd.DataFrame:
    rows = frame[frame.experiment.str.startswith("gen_") & (frame.metric == "test_error")]
    rows = rows.assign(dataset=rows.experiment.str.removeprefix("gen_").str.removesuffix("_batch"))
    return summarise(rows, ["dataset", "name", "conversion", "n_train"])


def figure_generalisation(frame: pd.DataFrame, path: Path) -> None:
    table = generalisation(frame)
    figure, axes = new_figure(2, 2, width=6.0, height=4.4)
    markers = ["o", "s", "^", "D", "v"]
    widths = [3.5, 1.5, 1.5, 1.5, 1.5]  # the two buffers agree until theirs fill: the first drawn wider, under
    for ax, dataset in zip(axes.ravel(), DATASETS):
        for colour, marker, width, name in zip(PALETTE, markers, widths, GENERALISING):
            for conversion, style in (("last", "-"), ("average", "--")):
                line = table[(table.dataset == dataset) & (table.name == name) & (table.conversion == conversion)]
                if len(line):
                    errorbars(ax, line, 100.0, marker=marker, linestyle=style, color=colour,
                              label=hypothesis(name, conversion),
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


TREE_FULL = 5000
"""From this T on the RP tree holds its 300 clusters (they fill by T ≈ 2,000): its
runtime slope from there is the one of a tree that no longer grows."""


def risk_table(frame: pd.DataFrame) -> tuple[list, list]:
    """Table ``risk``: per T the online risk of the exact and buffered learners, the batch
    risk J(f*) and the exact learner's online risk minus it."""
    table = risks(frame)
    if table.empty:
        return [], []
    table = table.pivot_table(index="n_train", columns="name", values="mean")  # one metric per learner
    gap = table["exact"] - table["batch MR"]
    columns = [("T", ",d"), ("online risk, exact", ".3g"), ("online risk, buffer τ=200", ".3g"),
               ("batch risk J(f*)", ".3g"), ("exact − batch", ".3g")]
    return columns, [[n, *table.loc[n, ["exact", "buffer τ=200", "batch MR"]], gap[n]] for n in table.index]


def at_last(frame: pd.DataFrame) -> pd.DataFrame:
    """The generalisation table at each dataset's last T."""
    table = generalisation(frame)
    return table[table.n_train == table.groupby("dataset").n_train.transform("max")]


def final_errors(frame: pd.DataFrame) -> tuple[list, list]:
    """Table ``generalisation``: the test error of every hypothesis at each dataset's
    last T."""
    final = at_last(frame)
    datasets = [dataset for dataset in DATASETS if dataset in set(final.dataset)]
    last = final.groupby("dataset").n_train.max()
    means = final.set_index(["name", "conversion", "dataset"])["mean"]
    columns = [("hypothesis", None)] + [(f"{DATASETS[dataset]}, T = {last[dataset]:,}", ".1%") for dataset in datasets]
    held = set(means.index.droplevel("dataset"))  # batch MR and LASVM have f_T only
    rows = [[hypothesis(name, conversion), *[means.get((name, conversion, dataset)) for dataset in datasets]]
            for name in GENERALISING for conversion in HYPOTHESES if (name, conversion) in held]
    return columns, rows


def runtime_findings(frame: pd.DataFrame) -> list[list[str]]:
    """The finding on runtime: each learner's slope, and the tree's once it is full."""
    fitted = slopes(frame)
    if not fitted:
        return []
    tree = drawn_runtime(frame).query("name == 'RP tree'")
    here = ", ".join(f"{name}: {value:.2f}" for name, value in fitted.items())
    return [["runtime against T, log-log slope", "buffer and tree linear, exact quadratic",
             f"{here}; RP tree from T = {TREE_FULL:,}: {slope(tree, TREE_FULL):.2f}"]]


def risk_findings(frame: pd.DataFrame) -> list[list[str]]:
    """The finding on the risks: the exact learner's online risk minus the batch risk."""
    _, rows = risk_table(frame)
    if not rows:
        return []
    gaps = [f"{gap:.2f} at T = {n:,}" for n, *_, gap in rows]
    return [["online risk approaches the batch risk as T grows", "yes", "exact − batch: " + ", ".join(gaps)]]


def generalisation_findings(frame: pd.DataFrame) -> list[list[str]]:
    """The findings on the test errors: the buffer that keeps its labelled representers
    against batch MR at the last T, batch MR against LASVM along the stream, f̄ against
    f_T."""
    table, final = generalisation(frame), at_last(frame)
    if table.empty:
        return []
    final = final.set_index(["dataset", "name", "conversion"])
    mean, spread, kept = final["mean"], 100 * final["std"], "buffer τ=200, labelled kept"
    datasets = [dataset for dataset in DATASETS if dataset in set(final.index.get_level_values("dataset"))]
    as_batch = [f"{DATASETS[d]}: {mean[d, kept, 'last']:.1%} and {mean[d, 'batch MR', 'last']:.1%}" for d in datasets]
    averaged = [f"{DATASETS[d]}: {mean[d, kept, 'average']:.1%} against {mean[d, kept, 'last']:.1%} "
                f"(s.d. {spread[d, kept, 'average']:.1f} and {spread[d, kept, 'last']:.1f})" for d in datasets]
    return [["buffer (labelled kept) as good as batch MR (iid), test error at the last T", "yes", "; ".join(as_batch)],
            ["semi-supervised beats supervised: T where batch MR errs less than LASVM", "(implied)",
             "; ".join(batch_ahead(table, dataset) for dataset in datasets)],
            ["f̄ of an iid stream is good: f̄ against f_T of the buffer (labelled kept) at the last T (s.d. over "
             "the seeds, points)", "yes",
             "; ".join(averaged)]]


def batch_ahead(table: pd.DataFrame, dataset: str) -> str:
    """Where batch MR errs less than LASVM on ``dataset`` and its largest lead."""
    both = table[(table.dataset == dataset) & (table.conversion == "last")].pivot_table(
        index="n_train", columns="name", values="mean")
    lead = both["LASVM (labelled only)"] - both["batch MR"]
    if not (lead > 0).any():
        return f"{DATASETS[dataset]}: nowhere"
    n = lead.idxmax()
    return (f"{DATASETS[dataset]}: {', '.join(f'{size:,}' for size in lead.index[lead > 0])} (most at T = {n:,}: "
            f"{both.loc[n, 'batch MR']:.1%} against {both.loc[n, 'LASVM (labelled only)']:.1%})")


def drift_findings(frame: pd.DataFrame) -> list[list[str]]:
    """The finding on drift: the online buffer's f_T against batch MR at each T."""
    table = drift(frame)
    if table.empty:
        return []
    table = table.pivot_table(index="n_train", columns="name", values="mean")
    cells = [f"T = {n:,}: online f_T {table.loc[n, 'buffer τ=200']:.1%}, batch MR {table.loc[n, 'batch MR']:.1%}"
             for n in table.index]
    return [["drift: online tracks, batch does not (test error at T)", "yes", "; ".join(cells)]]


def findings(frame: pd.DataFrame) -> tuple[list, list]:
    """Table ``findings``: the paper's findings beside ours (a finding whose experiments
    the frame lacks left out)."""
    rows = [row for part in (runtime_findings, risk_findings, generalisation_findings, drift_findings)
            for row in part(frame)]
    return [("finding", None), ("paper", None), ("here", None)], rows


TABLES = {"findings": findings, "risk": risk_table, "generalisation": final_errors}
"""The study's tables by record name, each made by its function from the result frame."""


GENERALISATION = tuple(f"gen_{d}{batch}" for d in DATASETS for batch in ("", "_batch"))
DRIFTS = tuple(f"drift{n}" for n in DRIFT)
EXPERIMENTS = ("runtime", "runtime_exact", "risk", *GENERALISATION, *DRIFTS)
"""The pipeline's experiments: a table is made from a run holding one of them."""
FIGURE_EXPERIMENTS = [
    ("omr_runtime.png", ("runtime", "runtime_exact"), figure_runtime, "Runtime against T, two spirals, log-log"),
    ("omr_risk.png", ("risk",), figure_risk, "Online risk of the exact and buffered learners against the batch risk"),
    ("omr_generalisation.png", GENERALISATION, figure_generalisation, "Test error against T on four datasets"),
    ("omr_drift.png", DRIFTS, figure_drift, "Concept drift: rotating spirals, tested on the distribution at T")]
"""Each figure, the experiments it draws, how, and its caption: a figure whose
experiments the run lacks is not drawn."""


def _final(tables) -> dict[str, list]:
    """The ``generalisation`` table's rows by hypothesis."""
    return {row[0]: row[1:] for row in tables["generalisation"]["rows"]}


def risk_approaches(tables) -> Verdict:
    """The exact learner's online risk minus the batch risk smaller at the last T than
    at the first."""
    gaps = [(row[0], row[-1]) for row in tables["risk"]["rows"]]
    return Verdict(gaps[-1][1] < gaps[0][1], "exact − batch: " + ", ".join(f"{g:.2f} at T = {n:,}" for n, g in gaps))


def buffer_as_batch(tables) -> Verdict:
    """The buffer that keeps its labelled representers, f_T, within a factor 2 of batch
    MR's test error at the last T on every dataset."""
    final = _final(tables)
    kept, batch = final["buffer τ=200, labelled kept, f_T"], final["batch MR"]
    ratios = [k / b for k, b in zip(kept, batch) if k is not None and b]
    return Verdict(all(r < 2 for r in ratios), "buffer / batch MR: " + ", ".join(f"{r:.2f}" for r in ratios))


def semi_supervised_ahead(tables) -> Verdict:
    """Batch MR errs less than the supervised LASVM at the last T on most datasets."""
    final = _final(tables)
    pairs = zip(final["batch MR"], final["LASVM (labelled only)"])
    ahead = [b < s for b, s in pairs if b is not None and s is not None]
    return Verdict(sum(ahead) > len(ahead) / 2, f"batch MR ahead on {sum(ahead)} of {len(ahead)} datasets")

TUNED_FIGURES = (Figure("tuning_online_mr_risk.png", report_figure("03-risk-online_loss-curve.png"), ("risk",),
                        "Online risk, tuned and hand-picked", tuned=True),
                 Figure("tuning_online_mr_spirals.png", report_figure("04-gen_spirals-test_error-curve.png"),
                        ("gen_spirals",), "Spirals test error, tuned and hand-picked", tuned=True))

STUDY = Study(
    name="online_mr",
    title="Online manifold regularisation",
    paper='Goldberg, Li & Zhu, "Online Manifold Regularization: A New Learning Setting and Empirical Study" '
          "(ECML PKDD 2008), with Zhu's \"Online Semi-Supervised Learning\" talk.",
    pipelines=("online_mr", "online_mr_tuned"),
    tables=tuple(Table(name, lambda run, make=make: make(run.frame), EXPERIMENTS) for name, make in TABLES.items()),
    figures=tuple(Figure(name, lambda run, path, draw=draw: draw(run.frame, path), prefixes, caption)
                  for name, prefixes, draw, caption in FIGURE_EXPERIMENTS) + TUNED_FIGURES,
    claims=(
        Claim("the online risk approaches the batch risk as T grows", risk_approaches, ("risk",)),
        Claim("the online buffer that keeps its labelled examples is about as good as batch MR on an iid stream "
              "(within a factor 2 of its test error)", buffer_as_batch, ("generalisation",)),
        Claim("semi-supervised learning beats supervised: batch MR errs less than LASVM on the labelled examples "
              "only", semi_supervised_ahead, ("generalisation",)),
    ),
)
STUDIES.add(STUDY.name, STUDY)
