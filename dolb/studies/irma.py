"""The IRMA study: Buschermöhle, Schoenke, Rosemann & Brockmann, "The Incremental Risk
Functional" (IEEE SMC 2013), from the result folder of
``dolb run pipelines/irma.toml --out runs/irma``:

- ``table1``: Table I, the mean test MSE against f after 10, 80 and 150 examples over the
  1,000 sequences, the paper's beside ours, per order (4, 6, 10), for IRMA and the batch
  least-squares fit;
- ``fig1``: the cumulative squared prequential loss after 150 examples at order 6 over
  the 500 sequences of Fig. 1: mean, standard deviation and median per learner;
- ``rls_tikhonov``: how small RLS's Tikhonov weight may be (computed, no run read):
  :func:`rls_tikhonov`;
- ``stiffness``: how other readings of IRMA's stiffness schedule would change Table I
  (computed, no run read): :func:`stiffness_readings`;
- the figure ``irma_fig1.png``: Fig. 1 as the run's report draws it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dolb.errors import DataError
from dolb.studies import STUDIES
from dolb.studies.study import Claim, Figure, Study, Table, Verdict, report_figure

CHECKPOINTS = (10, 80, 150)
ORDERS = (4, 6, 10)
PAPER_MEAN = {
    "irma": {4: (3.1e-3, 3.0e-4, 2.0e-4), 6: (5.5e-3, 2.2e-4, 9.4e-5), 10: (1.2e-2, 3.1e-4, 1.2e-4)},
    "batch_ls": {4: (4.4e2, 2.0e-4, 1.6e-4), 6: (7.2e7, 1.0e-4, 5.0e-5), 10: (1.8e14, 4.0e-4, 8.4e-5)},
}
"""Table I of the paper: mean MSE per method and order at the three checkpoints."""
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


TIKHONOV = [10.0**-e for e in range(2, 17)]
GRID = np.linspace(0.0, 3.0, 1000)


def fit_error(basis: str, order: int, tikhonov: float, n: int, seed: int) -> float:
    """Relative distance on GRID between RLS's fit (without forgetting, the floor on
    its Tikhonov weight bypassed) and the batch ridge fit, argmin ‖Φθ − y‖² +
    tikhonov·‖θ‖² solved by least squares on the stacked system [Φ; √tikhonov·I]
    (backward stable), on ``n`` examples of the study's data."""
    from dolb.data.sources.irma import irma_target
    from dolb.learners.rls import RLS

    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 3.0, n)
    y = irma_target(x) + rng.uniform(-0.05, 0.05, n)
    learner = RLS(1, order=order, basis=basis, domain_high=3.0)
    learner.S = np.eye(learner.basis.size) / tikhonov  # any tikhonov, the floor bypassed
    learner.learn(x[:, None], y)
    Phi, k = learner.basis.transform(x), learner.basis.size
    stacked = np.vstack([Phi, np.sqrt(tikhonov) * np.eye(k)])
    theta = np.linalg.lstsq(stacked, np.concatenate([y, np.zeros(k)]), rcond=None)[0]
    G = learner.basis.transform(GRID)
    return float(np.linalg.norm(G @ learner.theta - G @ theta) / np.linalg.norm(G @ theta))


def rls_tikhonov(run=None) -> tuple[list, list]:
    """How small RLS's Tikhonov weight may be (reads no run): for both bases and orders
    4, 6 and 10, the largest :func:`fit_error` over 5 seeds and n = 150, 2,000, a row per
    tikhonov from 1e-2 to 1e-16, the first row the floor
    :func:`dolb.learners.rls.smallest_tikhonov` of each."""
    from dolb.learners.rls import RLS, smallest_tikhonov

    fits = [(basis, order) for basis in ("legendre", "monomial") for order in ORDERS]
    floors = [smallest_tikhonov(RLS(1, order=order, basis=basis, domain_high=3.0).basis) for basis, order in fits]
    rows = [["floor", *floors]]
    for t in TIKHONOV:
        rows.append([f"{t:.0e}", *(max(fit_error(basis, order, t, n, seed) for n in (150, 2000) for seed in range(5))
                                   for basis, order in fits)])
    return [("tikhonov", None), *((f"{basis} {order}", ".1e") for basis, order in fits)], rows


STIFFNESS = 0.1
"""λ₁, IRMA's stiffness at its first update (× :data:`GROWTH` after every update)."""
GROWTH = 1.05
READINGS = {
    "λ₁ = 0.1 at the first update (ours)": STIFFNESS,
    "λ grown before the first update": STIFFNESS * GROWTH,
    "Gram matrix normalised by the domain's length (λ₁ / 3)": STIFFNESS / 3,
}
"""Readings of the paper's stiffness schedule, as the stiffness of the first update."""


def checkpoint_mse(stiffness: float, order: int, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """IRMA's test MSE against f on GRID after each of :data:`CHECKPOINTS` examples of
    each sequence (a row of ``x`` and ``y``), shape (sequences, checkpoints)."""
    from dolb.data.sources.irma import irma_target
    from dolb.learners import learner_class

    irma, target = learner_class("irma"), irma_target(GRID)
    mse = np.empty((x.shape[0], len(CHECKPOINTS)))
    for s in range(x.shape[0]):
        learner = irma(1, order=order, basis="legendre", domain_high=3.0, stiffness=stiffness,
                       stiffness_growth=GROWTH)
        for c, (start, stop) in enumerate(zip((0, *CHECKPOINTS), CHECKPOINTS)):
            learner.learn(x[s, start:stop, None], y[s, start:stop])
            mse[s, c] = np.mean((learner.predict(GRID[:, None]) - target) ** 2)
    return mse


def stiffness_readings(run=None, sequences: int = 1000, seed: int = 2013) -> tuple[list, list]:
    """How other readings of the stiffness schedule would change Table I (reads no
    run): per reading of :data:`READINGS`, IRMA's mean test MSE over ``sequences``
    sequences of the study's data, divided by the paper's, per order and checkpoint."""
    from dolb.data.sources.irma import irma_target

    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 3.0, (sequences, CHECKPOINTS[-1]))
    y = irma_target(x) + rng.uniform(-0.05, 0.05, x.shape)
    rows = []
    for reading, stiffness in READINGS.items():
        ratios = [m / p for order in ORDERS
                  for m, p in zip(checkpoint_mse(stiffness, order, x, y).mean(axis=0), PAPER_MEAN["irma"][order])]
        rows.append([reading, *ratios])
    return [("reading", None), *((f"order {o}, {n} ex.", ".2f") for o in ORDERS for n in CHECKPOINTS)], rows


def _ours(record: dict, label: str) -> list[float]:
    """Our means (every second column) of the row ``label`` of Table I."""
    return next(row[2::2] for row in record["rows"] if row[0] == label)


def _paper(record: dict, label: str) -> list[float]:
    return next(row[1::2] for row in record["rows"] if row[0] == label)


def near_paper(tables) -> Verdict:
    """IRMA within a factor of 2 of the paper at 80 and 150 examples, every order."""
    ratios = [o / p for n in (80, 150) for o, p in zip(_ours(tables["table1"], f"{n}, IRMA"),
                                                       _paper(tables["table1"], f"{n}, IRMA"))]
    return Verdict(all(0.5 < r < 2 for r in ratios), f"ours / paper: {min(ratios):.2f} to {max(ratios):.2f}")


def batch_worse_early(tables) -> Verdict:
    """The batch fit at least 10 times IRMA's MSE after 10 examples, every order."""
    ratios = [b / i for b, i in zip(_ours(tables["table1"], "10, batch"), _ours(tables["table1"], "10, IRMA"))]
    return Verdict(all(r > 10 for r in ratios), f"batch / IRMA after 10 examples: {min(ratios):.3g} to "
                                                f"{max(ratios):.3g}")


def batch_alike_later(tables) -> Verdict:
    """The batch fit within a factor of 5 of IRMA at 80 and 150 examples."""
    ratios = [b / i for n in (80, 150) for b, i in zip(_ours(tables["table1"], f"{n}, batch"),
                                                       _ours(tables["table1"], f"{n}, IRMA"))]
    return Verdict(all(0.2 < r < 5 for r in ratios), f"batch / IRMA at 80 and 150: {min(ratios):.2f} to "
                                                     f"{max(ratios):.2f}")


def _fig1(tables) -> dict[str, list[float]]:
    return {row[0]: row[1:] for row in tables["fig1"]["rows"]}


def irma_lowest(tables) -> Verdict:
    """IRMA's mean cumulative loss the lowest, its standard deviation under a fifth of it."""
    rows = _fig1(tables)
    mean, std, _ = rows[FIG1["irma"]]
    lowest = min(rows, key=lambda name: rows[name][0])
    return Verdict(lowest == FIG1["irma"] and std < 0.2 * mean,
                   f"lowest mean: {lowest} ({rows[lowest][0]:.3g}); IRMA's std / mean {std / mean:.2f}")


def gd_unstable(tables) -> Verdict:
    """Normalised GD's mean cumulative loss over 100 times IRMA's."""
    rows = _fig1(tables)
    ratio = rows[FIG1["ngd"]][0] / rows[FIG1["irma"]][0]
    return Verdict(ratio > 100, f"GD / IRMA: {ratio:.3g}")


STUDY = Study(
    name="irma",
    title="The IRMA study",
    paper='Buschermöhle, Schoenke, Rosemann & Brockmann, "The Incremental Risk Functional" (IEEE SMC 2013).',
    pipelines=("irma",),
    tables=(Table("table1", lambda run: table_one(run.frame), ("table1",)),
            Table("fig1", lambda run: figure_one(run.frame), ("fig1",)),
            Table("rls_tikhonov", rls_tikhonov, ("table1", "fig1"),
                  source="computed: 5 seeds, n = 150 and 2,000 (no run)"),
            Table("stiffness", stiffness_readings, ("table1",),
                  caption="IRMA's mean test MSE / the paper's under other readings of the stiffness schedule",
                  source="computed: 1,000 sequences (no run)")),
    figures=(Figure("irma_fig1.png", report_figure("02-fig1-cumulative_loss-curve.png"), ("fig1",),
                    "Fig. 1: cumulative squared loss, order 6, 500 runs"),),
    claims=(
        Claim("Table I: IRMA's test MSE after 80 and 150 examples is the paper's, within a factor of 2",
              near_paper, ("table1",)),
        Claim("Table I: after 10 examples the batch least-squares fit is orders of magnitude worse than IRMA",
              batch_worse_early, ("table1",)),
        Claim("Table I: with 80 and 150 examples the batch fit is about as good as IRMA", batch_alike_later,
              ("table1",)),
        Claim("Fig. 1: IRMA's cumulative squared loss is the lowest, with almost no spread", irma_lowest, ("fig1",)),
        Claim("Fig. 1: normalised gradient descent is unstable", gd_unstable, ("fig1",)),
    ),
)
STUDIES.add(STUDY.name, STUDY)
