"""The two-spirals generator, still or slowly rotating (concept drift): the synthetic
problems of online manifold regularisation.

A point of class c ∈ {−1, +1} lies on its arm at radius r ~ U(0, 1): angle
θ = 2π·``turns``·r + (π if c = −1 else 0), x = r·(cos θ, sin θ) + N(0, ``noise``² I).
Classes are balanced (each row's class is a fair coin). With ``rotation`` > 0 the whole
picture turns by ``rotation`` radians over the training stream: row t of n is rotated by
``rotation``·t/n, so p(x) stays a disc but p(y | x) drifts; the test part is drawn from
the distribution at the end of the stream (rotated by ``rotation``), the current one at
time T. Registered as ``"spirals"`` in :data:`~dolb.data.sources.generators.GENERATORS`.

Reference: Goldberg, Li & Zhu, "Online manifold regularization: a new learning setting
and empirical study", ECML PKDD 2008 (its spirals and rotating-spirals experiments).

Examples
--------
>>> parts = SPIRALS({"n_rows": 4, "n_test": 2}, seed=0)
>>> parts["train"][0].shape, sorted(set(parts["train"][1].tolist()))
((4, 2), [-1.0, 1.0])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dolb.data.params import GenParam
from dolb.data.sources.generators import GENERATORS, Generator
from dolb.data.sources.source import Parts


def spiral_points(n: int, turns: float, noise: float, angles: np.ndarray | float,
                  rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` noisy points of the two spirals, each rotated by its entry of ``angles``
    (or all by one angle), and their classes.

    >>> X, y = spiral_points(3, 1.0, 0.0, 0.0, np.random.default_rng(1))
    >>> bool(np.allclose(np.hypot(*X.T) <= 1.0, True))
    True
    """
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    radius = rng.random(n)
    theta = 2.0 * np.pi * turns * radius + np.where(y < 0, np.pi, 0.0) + angles
    X = radius[:, None] * np.column_stack([np.cos(theta), np.sin(theta)])
    return X + noise * rng.standard_normal((n, 2)), y


def _spirals(params: dict[str, Any], rng: np.random.Generator) -> Parts:
    """The training stream (rotating with ``rotation``) and a test part at its end."""
    n = params["n_rows"]
    drift = params["rotation"] * np.arange(n) / n
    X, y = spiral_points(n, params["turns"], params["noise"], drift, rng)
    X_test, y_test = spiral_points(params["n_test"], params["turns"], params["noise"], params["rotation"], rng)
    return {"train": (X, y), "test": (X_test, y_test)}


SPIRALS = Generator(
    name="spirals",
    make=_spirals,
    size=lambda p: 64.0 * (p["n_rows"] + p["n_test"]),  # a few float64 temporaries per row
    params={
        "n_rows": GenParam(10_000, int, 1, "training rows"),
        "n_test": GenParam(1_000, int, 1, "test rows, from the distribution at the end of the stream"),
        "turns": GenParam(1.5, float, 0.0, "turns of each arm from the centre to radius 1"),
        "noise": GenParam(0.03, float, 0.0, "standard deviation of the Gaussian noise on x"),
        "rotation": GenParam(0.0, float, 0.0, "radians the spirals turn over the training stream (0: iid)"),
    },
    parts=("train", "test"),
    reference="two spirals, still or rotating (Goldberg, Li & Zhu, online manifold regularization, ECML 2008)",
)
GENERATORS.add(SPIRALS.name, SPIRALS)
