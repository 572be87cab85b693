"""The ``tuning`` report: what each split chose, how the trials went, and the ranking at
tuned settings beside the ranking at the listed (default) settings.

It reads the decisions a tuning keeps in ``tuning/<pipeline>.parquet`` (one row per
trial, rung and split: see :mod:`dolb.execution.tuning`) and the experiment's summary.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dolb.results.store import TUNED, ResultStore
from dolb.results.tables import ranking_table

TUNING_FOLDER = "tuning"
"""Where a result folder keeps its tunings' decisions, one Parquet file per pipeline."""


def decisions(store: ResultStore) -> pd.DataFrame:
    """Every decision of every tuning stored in ``store`` (an empty table if none)."""
    frames = [pd.read_parquet(f"{store.path}/{TUNING_FOLDER}/{name}", filesystem=store.fs)
              for name in store.list(TUNING_FOLDER) if name.endswith(".parquet")]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def tuning_table(experiment: str, metric: str, summary: pd.DataFrame, store: ResultStore) -> pd.DataFrame:
    """One row per tuned configuration and dataset: the values each split chose (and
    their spread), the trials and examples its tuning spent, and the mean ``metric`` and
    mean rank across the experiment's learners, tuned and at the listed values."""
    found = decisions(store)
    if found.empty:
        return pd.DataFrame()
    found = found[found["experiment"] == experiment]
    chosen = found[found["chosen"] & (found["rung"] == found.groupby(["dataset", "learner", "configuration",
                                                                       "split", "trial"])["rung"].transform("max"))]
    params = [c for c in found.columns if c.startswith("param_")]
    rows = []
    for (dataset, learner, configuration), group in chosen.groupby(["dataset", "learner", "configuration"]):
        spent = found[(found.dataset == dataset) & (found.learner == learner) & (found.configuration == configuration)]
        row = {"dataset": dataset, "learner": learner, "listed": configuration,
               "trials": spent.trial.nunique(), "examples per split": int(spent.groupby("split").budget.sum().mean())}
        for name in params:
            values = group.sort_values("split")[name].dropna()
            if len(values):
                row[f"{name.removeprefix('param_')} per split"] = ", ".join(f"{v:.4g}" for v in values)
                row[f"{name.removeprefix('param_')} spread"] = _spread(values.to_numpy())
        rows.append(row)
    table = pd.DataFrame(rows)
    searched = [c for c in table.columns if c.endswith((" per split", " spread"))]
    table[searched] = table[searched].fillna("")  # a parameter another learner searched
    return table.merge(_ranks(summary, experiment, metric), on=["dataset", "learner"], how="left")


def _spread(values: np.ndarray) -> str:
    """How far apart the splits' choices are: the ratio of the largest to the smallest
    for positive numbers (log-scale parameters), else the range."""
    if values.dtype.kind not in "if":
        return f"{len(set(values))} distinct"
    if (values > 0).all():
        return f"×{values.max() / values.min():.3g}"
    return f"{values.max() - values.min():.4g}"


def _ranks(summary: pd.DataFrame, experiment: str, metric: str) -> pd.DataFrame:
    """Each learner's mean ``metric`` and mean rank across datasets, among the tuned
    configurations and among the listed ones (its first conversion's)."""
    ranked = ranking_table(summary, experiment, metric, None)
    tuned = ranked[ranked["params"] == TUNED]
    listed = ranked[ranked["params"] != TUNED]
    columns = []
    for name, part in (("tuned", tuned), ("listed", listed)):
        means = part.melt(id_vars=["learner", "params", "complexity", "conversion"],
                          value_vars=[c for c in part.columns if c.startswith("mean on ")],
                          var_name="dataset", value_name=f"mean {metric} {name}")
        means["dataset"] = means["dataset"].str.removeprefix("mean on ")
        means[f"rank {name}"] = means.groupby(["dataset", "conversion"])[f"mean {metric} {name}"].rank()
        columns.append(means.groupby(["dataset", "learner"])[[f"mean {metric} {name}", f"rank {name}"]].min())
    return pd.concat(columns, axis=1).reset_index()


def tuning_figure(experiment: str, title: str, store: ResultStore, path: Path) -> tuple[str, ...]:
    """Validation loss against budget, one panel per tuned learner on the first
    dataset and split: every trial a thin line, the chosen one bold."""
    import matplotlib.pyplot as plt

    found = decisions(store)
    if found.empty or not (found["experiment"] == experiment).any():
        return ("No tuning stored for this experiment.",)
    found = found[(found["experiment"] == experiment) & (found["split"] == 0)]
    dataset = sorted(found["dataset"].unique())[0]
    found = found[found["dataset"] == dataset]
    panels = sorted(set(zip(found["learner"], found["configuration"])))
    figure, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4), squeeze=False, sharey=True)
    for ax, (learner, configuration) in zip(axes[0], panels):
        panel = found[(found.learner == learner) & (found.configuration == configuration)]
        for _, runs in panel.groupby(["bracket", "trial"]):
            runs = runs.sort_values("budget")
            chosen = bool(runs["chosen"].any())
            ax.plot(runs["budget"], runs["validation_loss"], marker="o", markersize=3 if chosen else 1.5,
                    color="black" if chosen else "0.6", linewidth=2.4 if chosen else 0.7, zorder=3 if chosen else 2,
                    label="chosen" if chosen else None)
        ax.set_xscale("log")
        ax.set_title(learner, fontsize=10)
        ax.set_xlabel("budget (training examples)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("validation loss")
    axes[0][0].legend(loc="upper right", fontsize=8)
    figure.suptitle(f"{title}: {dataset}, split 0", fontsize=11)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return ()
