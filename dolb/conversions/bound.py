"""The risk bound that suffix and cutoff averaging minimise.

Dekel, "From Online to Batch Learning with Cutoff-Averaging" (NIPS 2008): for an
average of hypotheses weighted over N rounds whose losses sum to N·L̂, with the loss
bounded by C, after m rounds and confidence 1 − δ,

    B = L̂ + 2·sqrt(C·L̂·a / N) + 8·C·a / N,   a = ln((⌈log₂ m⌉ + 1) · m / δ).
"""

from __future__ import annotations

import math

import numpy as np

DELTA = 0.05
"""Default confidence parameter δ of the bound."""


def confidence(m: int, delta: float = DELTA) -> float:
    """a = ln((⌈log₂ m⌉ + 1) · m / δ) for m ≥ 1 rounds.

    >>> round(confidence(8), 6) == round(math.log(4 * 8 / 0.05), 6)
    True
    """
    if m < 1:
        raise ValueError(f"the bound needs at least one round, got m = {m}")
    ceil_log2 = (int(m) - 1).bit_length()  # ⌈log₂ m⌉, exact for integers
    return math.log((ceil_log2 + 1) * m / delta)


def risk_bound(loss_sum, n, C: float, a: float):
    """B = L̂ + 2·sqrt(C·L̂·a/N) + 8·C·a/N with L̂ = loss_sum / N (element-wise; N > 0).

    >>> float(risk_bound(0.0, 10, 1.0, 2.0))
    1.6
    """
    n = np.asarray(n, dtype=np.float64)
    mean = np.asarray(loss_sum, dtype=np.float64) / n
    return mean + 2.0 * np.sqrt(C * mean * a / n) + 8.0 * C * a / n
