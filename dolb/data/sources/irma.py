"""The IRMA generator: noisy samples of ``f(x) = x * exp(-x**2)`` on [0, 3].

Training rows come in independent sequences of noisy samples; the test part is a
noise-free grid. Registered as ``"irma"`` in :data:`~dolb.data.sources.generators.GENERATORS`.

Reference: Buschermöhle et al., "The Incremental Risk Functional", IEEE SMC 2013 (IRMA).

Examples
--------
>>> parts = IRMA({"n_sequences": 2, "length": 3, "n_test": 5}, seed=0)
>>> parts["train"][0].shape, parts["test"][1].round(3).tolist()
((6, 1), [0.0, 0.427, 0.158, 0.014, 0.0])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dolb.data.params import GenParam
from dolb.data.sources import libm
from dolb.data.sources.generators import GENERATORS, Generator
from dolb.data.sources.source import Parts


def irma_target(x: np.ndarray) -> np.ndarray:
    """The IRMA regression target ``f(x) = x * exp(-x**2)`` (``exp`` from the C library,
    :mod:`~dolb.data.sources.libm`: the same bits on any x86-64 CPU with AVX2).

    Examples
    --------
    >>> irma_target(np.array([0.0, 1.0]))
    array([0.        , 0.36787944])
    """
    return x * libm.exp(-(x**2))


def _irma(params: dict[str, Any], rng: np.random.Generator) -> Parts:
    """Training sequences of noisy samples of f on [0, 3] and a noise-free test grid.

    Row ``i`` of "train" uses the ``i``-th pair of uniform draws, so a smaller study is
    a prefix of a larger one with the same seed.
    """
    n = params["n_sequences"] * params["length"]
    draws = rng.random((n, 2))
    x = 3.0 * draws[:, 0]
    noise = params["noise"] * (2.0 * draws[:, 1] - 1.0)
    grid = np.linspace(0.0, 3.0, params["n_test"])
    return {
        "train": (x.reshape(-1, 1), irma_target(x) + noise),
        "test": (grid.reshape(-1, 1), irma_target(grid)),
    }


IRMA = Generator(
    name="irma",
    make=_irma,
    size=lambda p: 32.0 * (p["n_sequences"] * p["length"] + p["n_test"]),  # x, y and temporaries
    params={
        "n_sequences": GenParam(1000, int, 1, "number of independent training sequences"),
        "length": GenParam(150, int, 1, "examples per training sequence"),
        "noise": GenParam(0.05, float, 0.0, "half-width of the uniform noise added to y"),
        "n_test": GenParam(1000, int, 1, "equally spaced test points on [0, 3]"),
    },
    revision=1,  # 1: exp, log, ... from the C library (libm), not NumPy's AVX-512 loops
    parts=("train", "test"),
    reference="Buschermöhle et al., IRMA, IEEE SMC 2013: f(x) = x exp(-x^2) on [0, 3]",
)
GENERATORS.add(IRMA.name, IRMA)
