"""The switch test of online model selection: running 0-1 losses of two machines and a
one-sided Welch t-test on them.

Both machines are validated on the same examples since the last switch (N of them), so
each machine's losses give a mean ``Err`` and a sample variance ``Var`` (ddof = 1). The
statistic is the standard unequal-variance one (the OMS paper prints
sqrt(Var₁² + Var₂²)/N, a misprint; see ALGORITHMS.md §4)::

    t = (Err₁ − Err₂) / sqrt((Var₁ + Var₂) / N)

with Welch–Satterthwaite degrees of freedom (equal N)::

    ν = (N − 1) (Var₁ + Var₂)² / (Var₁² + Var₂²)

Machine 2 (the more complex one) replaces machine 1 when Err₂ ≤ Err₁ and the one-sided
p-value P(T_ν ≥ t) is below the level. Three rules make the test total:

- fewer than ``min_n`` examples since the last switch: no test, no switch;
- Var₁ + Var₂ = 0 (each machine was always right or always wrong): the t statistic is
  undefined; switch exactly when Err₂ < Err₁;
- Err₂ > Err₁: no switch, whatever the p-value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["LossTally", "should_switch", "welch_p_value"]


@dataclass
class LossTally:
    """Running 0-1 losses of two machines on the same examples.

    Examples
    --------
    >>> tally = LossTally()
    >>> for first, second in [(1, 0), (0, 0), (1, 0)]:
    ...     tally.add(first, second)
    >>> tally.n, tally.mean(0), round(tally.variance(0), 4)
    (3, 0.6666666666666666, 0.3333)
    """

    n: int = 0
    wrong: tuple[int, int] = (0, 0)

    def add(self, loss_1: int, loss_2: int) -> None:
        """Count one example: the 0-1 loss of each machine on it."""
        self.n += 1
        self.wrong = (self.wrong[0] + loss_1, self.wrong[1] + loss_2)

    def mean(self, machine: int) -> float:
        """Err of machine 0 or 1: its fraction of mistakes."""
        return self.wrong[machine] / self.n

    def variance(self, machine: int) -> float:
        """Var of machine 0 or 1: the sample variance (ddof = 1) of its 0-1 losses."""
        if self.n < 2:
            return 0.0
        err = self.mean(machine)
        return self.n * err * (1.0 - err) / (self.n - 1)


def welch_p_value(err_1: float, var_1: float, err_2: float, var_2: float, n: int) -> float:
    """One-sided p-value of "machine 2 errs less than machine 1" (Var₁ + Var₂ > 0).

    >>> round(welch_p_value(0.3, 0.21, 0.1, 0.09, 50), 4)
    0.0058
    """
    from scipy import stats  # here: importing it costs every worker a second at start, for OMS cells only

    spread = var_1 + var_2
    t = (err_1 - err_2) / math.sqrt(spread / n)
    dof = (n - 1) * spread**2 / (var_1**2 + var_2**2)
    return float(stats.t.sf(t, dof))


def should_switch(tally: LossTally, level: float = 0.1, min_n: int = 30) -> bool:
    """Whether machine 2 replaces machine 1 now (see the module's rules).

    >>> tally = LossTally(n=40, wrong=(12, 4))
    >>> should_switch(tally), should_switch(tally, min_n=50)
    (True, False)
    """
    if tally.n < min_n:
        return False
    err_1, err_2 = tally.mean(0), tally.mean(1)
    if err_2 > err_1:
        return False
    var_1, var_2 = tally.variance(0), tally.variance(1)
    if var_1 + var_2 == 0.0:
        return err_2 < err_1
    return welch_p_value(err_1, var_1, err_2, var_2, tally.n) < level
