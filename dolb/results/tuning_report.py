"""The ``tuning`` report: what each split chose, how the trials went, and the ranking at
tuned settings beside the ranking at the listed (default) settings.

It reads the decisions a tuning keeps in ``tuning/<pipeline>.parquet`` (one row per
trial, rung and split: see :mod:`dolb.execution.tuning`) and the experiment's summary.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from dolb.data.store.object_stores import reaching
from dolb.errors import DataError
from dolb.results.figure_style import config_labels
from dolb.results.store import TUNED, ResultStore
from dolb.results.tables import ranking_table

TUNING_FOLDER = "tuning"
"""Where a result folder keeps its tunings' decisions, one Parquet file per pipeline."""


COLUMNS = {**dict.fromkeys(["experiment", "dataset", "learner", "configuration", "tuned", "conversion"],
                           lambda t: pa.types.is_string(t) or pa.types.is_large_string(t)),
           **dict.fromkeys(["split", "bracket", "trial", "rung", "budget"], pa.types.is_integer),
           "validation_loss": pa.types.is_floating, "chosen": pa.types.is_boolean}
"""The columns of a decisions file the reports read, and the test of each one's type."""


def decisions(store: ResultStore) -> pd.DataFrame:
    """Every decision of every tuning stored in ``store`` (an empty table if none);
    DataError naming the file when one is not a decisions table (:data:`COLUMNS`)."""
    if store.fs.isfile(f"{store.path}/{TUNING_FOLDER}"):
        raise DataError(f"{store.shown(f'{store.path}/{TUNING_FOLDER}')}: a file, where the folder of tuning decisions "
                        "should be")
    frames = [_read_decisions(store, f"{store.path}/{TUNING_FOLDER}/{name}")
              for name in store.list(TUNING_FOLDER) if name.endswith(".parquet")]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def trial_cells(store: ResultStore, pipeline: str) -> set[str]:
    """The ids of the trial cells of ``pipeline``'s last tuning in ``store`` (its
    decisions file's; none when it has none)."""
    name = f"{pipeline}.parquet"
    if name not in store.list(TUNING_FOLDER):
        return set()
    found = _read_decisions(store, f"{store.path}/{TUNING_FOLDER}/{name}")
    return set(found["cell_id"]) if "cell_id" in found else set()


def _read_decisions(store: ResultStore, where: str) -> pd.DataFrame:
    path = store.shown(where)  # as the messages name it
    try:
        with reaching(store.root), store.fs.open(where, "rb") as file:  # out of reach is not damaged
            table = pq.ParquetFile(file).read()
    except (OSError, pa.ArrowException) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).strip().splitlines()[0]
        raise DataError(f"{path}: not a tuning's decisions table ({reason})") from None
    for name, test in COLUMNS.items():
        if name not in table.column_names:
            raise DataError(f"{path}: not a tuning's decisions table (no column {name})")
        if not test(table.schema.field(name).type):
            raise DataError(f"{path}: not a tuning's decisions table (column {name} is of type "
                            f"{table.schema.field(name).type})")
    return table.to_pandas()


def tuning_table(experiment: str, metric: str, summary: pd.DataFrame, store: ResultStore) -> pd.DataFrame | None:
    """One row per tuned configuration, dataset and searched parameter: the values each
    split chose and their spread, the trials and training examples its tuning spent per
    split, and the mean ``metric`` and mean rank among the experiment's configurations
    (of the tuning's conversion): tuned, among the tuned ones, and at the best of the
    learner's listed values that share what was not tuned, among the listed ones."""
    found = decisions(store)
    if found.empty or not (found["experiment"] == experiment).any():
        return None
    found = found[found["experiment"] == experiment]
    keys = ["dataset", "learner", "configuration", "tuned", "conversion"]
    rows = []
    for key, spent in found.groupby(keys, sort=True):
        chosen = spent[spent["chosen"]].sort_values("rung").groupby("split").last()
        common = dict(zip(keys, key)) | {"trials": spent.trial.nunique(),
                                         "examples per split": int(spent.groupby("split").budget.sum().mean())}
        for name in sorted(c for c in found.columns if c.startswith("param_")):
            values = chosen[name].dropna()
            if len(values):
                typed = values.convert_dtypes()  # whole numbers or true/false, where the column has empty rows
                rows.append(common | {"parameter": name.removeprefix("param_"),
                                      "chosen per split": ", ".join(_shown(v) for v in typed),
                                      "spread": _spread(values.to_numpy())})
    if not rows:  # no split chose anything (every trial failed): the failures say why
        return None
    table = pd.DataFrame(rows)
    ranks = _ranks(summary, experiment, metric)
    tuned = ranks.rename(columns={"params": "tuned", "mean": f"mean {metric} tuned", "rank": "rank tuned"})
    table = table.merge(tuned, on=["dataset", "learner", "tuned", "conversion"], how="left")
    listed = [_listed(ranks, row) for row in table.itertuples()]
    table["listed"] = [params for params, _, _ in listed]
    table[f"mean {metric} listed"] = [mean for _, mean, _ in listed]
    table["rank listed"] = [rank for _, _, rank in listed]
    keys = list(zip(table["learner"], table["tuned"], [""] * len(table), table["conversion"]))
    table.insert(1, "tuned configuration", config_labels(keys) if keys else [])
    return table.drop(columns=["learner", "configuration", "tuned", "conversion"])


def _listed(ranks: pd.DataFrame, row) -> tuple[str, float, float]:
    """The best listed configuration to set beside a tuned one: of its learner, on its
    dataset and conversion, with the values it was not tuned over (its searched
    parameters shown); empty when the experiment lists none."""
    fixed = set(row.tuned.split(", ")[1:])
    found = ranks[(ranks["dataset"] == row.dataset) & (ranks["learner"] == row.learner)
                  & (ranks["conversion"] == row.conversion) & ~ranks["params"].map(_is_tuned)]
    found = found[[fixed <= set(params.split(", ")) for params in found["params"]]]
    if found.empty:
        return "", float("nan"), float("nan")
    best = found.sort_values("rank").iloc[0]
    shown = ", ".join(part for part in best["params"].split(", ") if part not in fixed)
    return shown, best["mean"], best["rank"]


def _is_tuned(params: str) -> bool:
    return params.split(", ")[0] == TUNED


def _shown(value: Any) -> str:
    """A searched value as the table shows it: a number to 4 significant digits, a whole
    number whole, true or false as TOML writes them, a name as it is."""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value)).lower()
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return f"{value:.4g}"
    return str(value)


def _spread(values: np.ndarray) -> str:
    """How far apart the splits' choices are: the ratio of the largest to the smallest
    for positive numbers (log-scale parameters), else the range."""
    if values.dtype.kind not in "if":
        return f"{len(set(values))} distinct"
    if (values > 0).all():
        return f"×{values.max() / values.min():.3g}"
    return f"{values.max() - values.min():.4g}"


def _ranks(summary: pd.DataFrame, experiment: str, metric: str) -> pd.DataFrame:
    """Every configuration's mean ``metric`` at the end of training on each dataset, and
    its rank there among the tuned configurations or among the listed ones (by
    conversion)."""
    ranked = ranking_table(summary, experiment, metric, None)
    means = ranked.melt(id_vars=["learner", "params", "complexity", "conversion"],
                        value_vars=[c for c in ranked.columns if c.startswith("mean on ")],
                        var_name="dataset", value_name="mean")
    means["dataset"] = means["dataset"].str.removeprefix("mean on ")
    means["arm"] = means["params"].map(_is_tuned)
    means["rank"] = means.groupby(["dataset", "conversion", "arm"])["mean"].rank()
    return means.drop(columns=["complexity", "arm"])


def tuning_figure(experiment: str, title: str, store: ResultStore, path: Path) -> tuple[str, ...]:
    """Validation loss against budget, one panel per tuned learner on the first
    dataset and split: every trial a thin line, the chosen one bold."""
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    found = decisions(store)
    if found.empty or not (found["experiment"] == experiment).any():
        return ("No tuning stored for this experiment.",)
    found = found[(found["experiment"] == experiment) & (found["split"] == 0)]
    dataset = sorted(found["dataset"].unique())[0]
    found = found[found["dataset"] == dataset]
    panels = sorted(set(zip(found["learner"], found["tuned"])))
    columns = min(3, len(panels))
    rows = -(-len(panels) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(4.4 * columns, 3.2 * rows), squeeze=False, sharey=True)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, (learner, configuration) in zip(axes.flat, panels):
        panel = found[(found.learner == learner) & (found.tuned == configuration)]
        for _, runs in panel.groupby(["bracket", "trial"]):
            runs = runs.sort_values("budget")
            chosen = bool(runs["chosen"].any())
            ax.plot(runs["budget"], runs["validation_loss"], marker="o", markersize=3 if chosen else 1.5,
                    color="black" if chosen else "0.6", linewidth=2.4 if chosen else 0.7, zorder=3 if chosen else 2,
                    label="chosen" if chosen else None)
        ax.set_xscale("log")
        budgets = sorted(panel["budget"].unique())
        ax.set_xticks(budgets, [f"{b:,}" for b in budgets])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_title(textwrap.shorten(f"{learner}, {configuration}", 48), fontsize=9)
        ax.grid(alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("budget (training examples)")
    for ax in axes[:, 0]:
        ax.set_ylabel("validation loss")
    axes[0][0].legend(loc="upper right", fontsize=8)
    figure.suptitle(f"{title}: {dataset}, split 0", fontsize=11)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return ()
