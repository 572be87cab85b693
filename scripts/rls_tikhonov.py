"""How small RLS's Tikhonov weight may be: RLS's fit against a batch ridge solve.

    python3 scripts/rls_tikhonov.py [--record benchmarks/studies]

For the IRMA study's data (x uniform on [0, 3], y = x·exp(−x²) + U[−0.05, 0.05]), both
bases and orders 4, 6 and 10, RLS without forgetting runs over n examples with
tikhonov = 1e-2 … 1e-16 (the refusal of values below the floor bypassed) and its fit is
compared with argmin ‖Φθ − y‖² + tikhonov·‖θ‖², solved by least squares on the stacked
system [Φ; √tikhonov·I] (backward stable). Printed (Markdown): the largest relative
distance between the two fits on a grid of [0, 3] over 5 seeds and n = 150, 2000, a row
per tikhonov and a column per basis and order, the first row the floor
:func:`dolb.learners.rls.smallest_tikhonov` of each;
with ``--record``, written as the table record ``irma/rls_tikhonov`` (rendered into
``docs/studies/irma.md``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from dolb.bench.tables import new_table, record_folder, show_tables
from dolb.console import script_status
from dolb.data.sources.irma import irma_target
from dolb.learners.rls import RLS, smallest_tikhonov

TIKHONOV = [10.0**-e for e in range(2, 17)]
GRID = np.linspace(0.0, 3.0, 1000)


def fit_error(basis: str, order: int, tikhonov: float, n: int, seed: int) -> float:
    """Relative distance on GRID between RLS's fit and the batch ridge fit."""
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", type=Path, help="write the table as a record into this folder")
    args = parser.parse_args(argv)
    record_folder(args.record)
    fits = [(basis, order) for basis in ("legendre", "monomial") for order in (4, 6, 10)]
    floors = [smallest_tikhonov(RLS(1, order=order, basis=basis, domain_high=3.0).basis) for basis, order in fits]
    rows = [["floor", *floors]]
    for t in TIKHONOV:
        worst = [max(fit_error(basis, order, t, n, seed) for n in (150, 2000) for seed in range(5))
                 for basis, order in fits]
        rows.append([f"{t:.0e}", *worst])
    columns = [("tikhonov", None), *((f"{basis} {order}", ".1e") for basis, order in fits)]
    record = new_table("irma", "rls_tikhonov", columns, rows,
                       source="computed by the script: 5 seeds, n = 150 and 2,000 (no run)")
    show_tables([record], args.record)


if __name__ == "__main__":
    sys.exit(script_status(main, "rls_tikhonov.py"))
