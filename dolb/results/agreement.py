"""How two runs' values agree: bit for bit, within floating-point noise, or beyond a
tolerance; and the likely cause of a difference when the machines differ.

Values computed by the same code with another BLAS kernel or compiled for another CPU
differ in their last bits, and an ill-conditioned solve can carry such a rounding
difference up to ~1e-8 relative (the IRMA study's largest, OpenBLAS Prescott against
Haswell kernels: 9.5e-9). Differences up to :data:`RTOL` are called floating-point noise;
larger ones are not what another machine does.

Examples
--------
>>> import numpy as np
>>> found = agreement(np.array(["rls", "irma"]), np.array([1.0, 2.0]), np.array([1.0, np.nextafter(2.0, 3.0)]))
>>> found.verdict, found.largest_ulps, found.learners
('noise', 1.0, ('irma',))
>>> print(found.describe({"recorded": "1 worker on A", "now": "1 worker on B"}))
1 of 2 values differ within floating-point noise (relative difference up to 2.22e-16, 1 ulp; learners: irma); \
likely cause, the machines differ (recorded: 1 worker on A; now: 1 worker on B)
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import numpy as np
import pandas as pd

RTOL = 1e-6
"""The largest relative difference still called floating-point noise (``--rtol``)."""


_SAME = "run IS NOT DISTINCT FROM baseline"  # DuckDB: NaN is NaN, -0.0 is 0.0

PER_LEARNER = f"""
    SELECT learner, count(*) AS n, count(*) FILTER (WHERE {_SAME}) AS identical,
           max(CASE WHEN {_SAME} THEN 0
                    WHEN isfinite(run) AND isfinite(baseline)
                    THEN abs(run - baseline) / greatest(abs(run), abs(baseline))
                    ELSE 'inf'::DOUBLE END) AS relative,
           max(CASE WHEN {_SAME} THEN 0
                    WHEN isfinite(run) AND isfinite(baseline)
                    THEN abs(run - baseline)
                         / greatest(pow(2, floor(log2(least(abs(run), abs(baseline)))) - 52), pow(2, -1074))
                    ELSE 'inf'::DOUBLE END) AS ulps
    FROM pairs GROUP BY learner ORDER BY learner"""
"""SQL over ``pairs`` (columns ``learner``, ``run``, ``baseline``: the same value of two
runs): per learner, the pairs, the identical ones, the largest relative difference and
the largest difference in ulps (of the smaller value: ``2**(exponent - 52)``, at least the
smallest subnormal). One answer row per learner, however many values."""


@dataclass(frozen=True)
class Agreement:
    """How the values of two runs agree (see :func:`agreement`)."""

    n_values: int
    n_identical: int
    largest_relative: float
    """The largest ``|a - b| / max(|a|, |b|)`` (``inf`` where one is not finite, the other is)."""
    largest_ulps: float
    learners: tuple[str, ...]
    """The learners with a value that differs."""
    rtol: float = RTOL

    @property
    def verdict(self) -> str:
        """``identical``, ``noise`` (every difference within ``rtol``) or ``beyond``."""
        if self.n_identical == self.n_values:
            return "identical"
        return "noise" if self.largest_relative <= self.rtol else "beyond"

    def describe(self, machines: dict[str, str] | None = None) -> str:
        """One line; when the values differ and the ``machines`` of the two runs do (by
        run: ``{"recorded": ..., "now": ...}``, as :func:`dolb.results.history.machines`
        words them), they are named as the likely cause."""
        if self.verdict == "identical":
            return f"all {self.n_values:,} values bit-identical"
        ulp = f"{self.largest_ulps:,.0f} ulp{'' if self.largest_ulps == 1 else 's'}"
        how = "within floating-point noise" if self.verdict == "noise" else f"beyond --rtol {self.rtol:g}"
        line = (f"{self.n_values - self.n_identical:,} of {self.n_values:,} values differ {how} (relative difference "
                f"up to {self.largest_relative:.3g}, {ulp}; learners: {', '.join(self.learners)})")
        if machines and len(set(machines.values())) > 1:
            cause = "likely cause" if self.verdict == "noise" else "also"
            line += f"; {cause}, the machines differ ({'; '.join(f'{run}: {m}' for run, m in machines.items())})"
        return line


def agreement_of(per_learner: pd.DataFrame, rtol: float = RTOL) -> Agreement:
    """The :class:`Agreement` of the answer of :data:`PER_LEARNER`."""
    differ = per_learner[per_learner["identical"] < per_learner["n"]]
    return Agreement(
        n_values=int(per_learner["n"].sum()),
        n_identical=int(per_learner["identical"].sum()),
        largest_relative=float(per_learner["relative"].max()) if len(per_learner) else 0.0,
        largest_ulps=float(per_learner["ulps"].max()) if len(per_learner) else 0.0,
        learners=tuple(differ["learner"]),
        rtol=rtol,
    )


def agreement(learners: np.ndarray, one: np.ndarray, two: np.ndarray, rtol: float = RTOL) -> Agreement:
    """How the paired values ``one`` and ``two`` (the same cell, checkpoint and metric of
    two runs; ``learners``: each pair's learner) agree."""
    pairs = pd.DataFrame({"learner": learners, "run": np.asarray(one, np.float64),
                          "baseline": np.asarray(two, np.float64)})
    with duckdb.connect() as connection:
        connection.register("pairs", pairs)
        return agreement_of(connection.execute(PER_LEARNER).df(), rtol)
