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

import numpy as np

RTOL = 1e-6
"""The largest relative difference still called floating-point noise (``--rtol``)."""


def ulps(one: np.ndarray, two: np.ndarray) -> np.ndarray:
    """The distance between float64 values in units in the last place: how many doubles
    lie between them, plus one (0 when equal; ``inf`` when either is not finite)."""
    keys = []
    for values in (np.asarray(one, np.float64), np.asarray(two, np.float64)):
        bits = values.view(np.int64)
        keys.append(np.where(bits < 0, np.iinfo(np.int64).min - bits, bits))  # ordered as the values
    high, low = np.maximum(*keys).view(np.uint64), np.minimum(*keys).view(np.uint64)
    distance = (high - low).astype(np.float64)  # exact modulo 2**64, and below it
    return np.where(np.isfinite(one) & np.isfinite(two), distance, np.where(_same(one, two), 0.0, np.inf))


def _same(one: np.ndarray, two: np.ndarray) -> np.ndarray:
    """Bit-identical values (any two NaNs count as the same)."""
    one, two = np.asarray(one, np.float64), np.asarray(two, np.float64)
    return (one.view(np.int64) == two.view(np.int64)) | (np.isnan(one) & np.isnan(two))


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


def agreement(learners: np.ndarray, one: np.ndarray, two: np.ndarray, rtol: float = RTOL) -> Agreement:
    """How the paired values ``one`` and ``two`` (the same cell, checkpoint and metric of
    two runs; ``learners``: each pair's learner) agree."""
    one, two = np.asarray(one, np.float64), np.asarray(two, np.float64)
    same = _same(one, two)
    with np.errstate(invalid="ignore", divide="ignore"):
        relative = np.abs(one - two) / np.maximum(np.abs(one), np.abs(two))
    relative = np.where(same | (one == two), 0.0, np.where(np.isnan(relative), np.inf, relative))
    return Agreement(
        n_values=len(one),
        n_identical=int(same.sum()),
        largest_relative=float(relative.max(initial=0.0)),
        largest_ulps=float(ulps(one, two).max(initial=0.0)),
        learners=tuple(sorted(set(np.asarray(learners)[~same].tolist()))),
        rtol=rtol,
    )
