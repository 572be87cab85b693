"""The IRMA study's tables, from the result folder of
``dolb run pipelines/irma.toml --out runs/irma``:

    python3 scripts/irma_tables.py runs/irma [--record benchmarks/studies]

prints (and with ``--record`` writes as table records, rendered into
``docs/studies/irma.md``)

- ``table1``: Table I, the mean test MSE against f after 10, 80 and 150 examples over the
  1,000 sequences, the paper's beside ours, per order (4, 6, 10), for IRMA and the batch
  least-squares fit;
- ``fig1``: the cumulative squared prequential loss after 150 examples at order 6 over
  the 500 sequences of Fig. 1: mean, standard deviation and median per learner.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
from irma_check import CHECKPOINTS, ORDERS, PAPER_MEAN

from dolb.bench.tables import new_table, record_folder, run_source, show_tables
from dolb.console import script_status
from dolb.errors import DataError
from dolb.results.tables import read_results

METHODS = {"irma": "IRMA", "batch_ls": "batch"}
FIG1 = {"irma": "IRMA", "rls": "RLS, g = 0.9, Tikhonov 0.05 (monomial)",
        "ngd": "normalised GD, Tikhonov 0.05 (monomial)"}


def table_one(frame: pd.DataFrame) -> tuple[list, list]:
    """Table I's columns and rows: per checkpoint and method, the paper's mean MSE and
    ours for each order."""
    rows = frame[(frame.experiment == "table1") & (frame.metric == "test_mse")]
    means = rows.groupby(["learner", "complexity", "n_train"])["value"].mean()  # complexity is a string
    wanted = [(learner, str(order), n) for n in CHECKPOINTS for learner in METHODS for order in ORDERS]
    missing = [key for key in wanted if key not in means.index]
    if missing:
        learner, order, n = missing[0]
        raise DataError(f"no table1 test_mse of {learner} at order {order} after {n} examples")
    columns = [("examples, method", None)]
    for order in ORDERS:
        columns += [(f"order {order}: paper", ".1e"), ("ours", ".1e")]
    table = []
    for c, n in enumerate(CHECKPOINTS):
        for learner, name in METHODS.items():
            row = [f"{n}, {name}"]
            for order in ORDERS:
                row += [PAPER_MEAN[learner][order][c], means[learner, str(order), n]]
            table.append(row)
    return columns, table


def figure_one(frame: pd.DataFrame) -> tuple[list, list]:
    """Fig. 1's summary: the cumulative loss after the last example, per learner."""
    rows = frame[(frame.experiment == "fig1") & (frame.metric == "cumulative_loss")]
    final = rows[rows.n_train == rows.n_train.max()].groupby("learner")["value"]
    stats = final.agg(["mean", "std", "median"])
    missing = [learner for learner in FIG1 if learner not in stats.index]
    if missing:
        raise DataError(f"no fig1 cumulative_loss of {missing[0]}")
    columns = [("learner", None), ("mean", ".3g"), ("std", ".3g"), ("median", ".3g")]
    return columns, [[name, *stats.loc[learner]] for learner, name in FIG1.items()]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the result folder of pipelines/irma.toml")
    parser.add_argument("--record", type=Path, help="write the tables as records into this folder")
    args = parser.parse_args(argv)
    record_folder(args.record)
    frame, source = read_results(args.folder), run_source(args.folder)
    try:
        records = [new_table("irma", name, *make(frame), source=source)
                   for name, make in (("table1", table_one), ("fig1", figure_one))]
    except DataError as exc:
        raise DataError(f"{args.folder}: not a run of pipelines/irma.toml ({exc})") from None
    show_tables(records, args.record)


if __name__ == "__main__":
    sys.exit(script_status(main, "irma_tables.py"))
