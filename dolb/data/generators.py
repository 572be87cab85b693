"""Seeded synthetic data generators, their registry, and an on-disk cache of their output.

A generator turns checked parameters and a :class:`numpy.random.SeedSequence` into named
parts (such as ``"train"`` and ``"test"``), each ``(X, y, provenance)``. All randomness
comes from ``numpy.random.default_rng(seed_sequence)``: the same name, parameters and
seed give bit-identical arrays on any machine running the same versions.

:func:`materialize` writes the parts as dolb datasets under a directory named by a hash
of (name, parameters with defaults filled in, seed) and reuses them on later calls.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from dolb.data.store import Dataset, open_dataset, write_dataset
from dolb.errors import ConfigError, DataError


@dataclass(frozen=True)
class GenParam:
    """Declaration of one generator parameter: a number with a default and a minimum.

    Examples
    --------
    >>> GenParam(0.05, float, 0.0).check("irma", "noise", 0.1)
    0.1
    """

    default: int | float
    kind: type = float
    low: float = 0.0
    doc: str = ""

    def check(self, generator: str, name: str, value: Any) -> int | float:
        """Return ``value`` converted to ``kind``, or raise :class:`ConfigError`."""
        where = f"generator {generator!r}, parameter {name!r}"
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        if not math.isfinite(value):
            raise ConfigError(f"{where}: expected a finite number, got {value!r}")
        if self.kind is int and value != int(value):
            raise ConfigError(f"{where}: expected a whole number, got {value!r}")
        value = self.kind(value)
        if value < self.low:
            raise ConfigError(f"{where}: {value!r} is below the minimum {self.low!r}")
        return value


Parts = dict[str, tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Generator:
    """A registered generator: calling it checks the parameters and makes the parts.

    Parameters
    ----------
    name : str
        Registry key.
    make : callable
        ``make(params, rng) -> {part: (X, y)}`` given checked parameters and a
        ``numpy.random.Generator``.
    params : dict of str to GenParam
        Declared parameters.
    reference : str
        Where the generator comes from (recorded in the provenance).
    """

    name: str
    make: Callable[[dict[str, Any], np.random.Generator], Parts]
    params: dict[str, GenParam] = field(default_factory=dict)
    reference: str = ""

    def check_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """The full parameter set (defaults filled in), or ConfigError."""
        if not isinstance(params, dict):
            raise ConfigError(f"generator {self.name!r}: parameters must be a mapping, got {params!r}")
        unknown = sorted(set(params) - set(self.params))
        if unknown:
            known = ", ".join(sorted(self.params)) or "none"
            raise ConfigError(
                f"generator {self.name!r}: unknown parameter {unknown[0]!r} (known: {known})"
            )
        return {
            key: spec.check(self.name, key, params.get(key, spec.default))
            for key, spec in self.params.items()
        }

    def __call__(self, params: dict[str, Any], seed: int | np.random.SeedSequence) -> dict[str, tuple]:
        """``{part: (X, y, provenance)}`` for ``params`` and ``seed``."""
        checked = self.check_params(params)
        sequence = seed_sequence(seed)
        parts = self.make(checked, np.random.default_rng(sequence))
        about = {
            "source": "generator",
            "generator": self.name,
            "reference": self.reference,
            "params": checked,
            "seed": _describe_seed(sequence),
        }
        return {part: (X, y, {**about, "part": part}) for part, (X, y) in parts.items()}


def seed_sequence(seed: int | np.random.SeedSequence) -> np.random.SeedSequence:
    """``seed`` as a SeedSequence (a non-negative int ``s`` becomes ``SeedSequence(s)``).

    Examples
    --------
    >>> seed_sequence(7).entropy
    7
    """
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError(f"seed must be a non-negative integer or a numpy SeedSequence, got {seed!r}")
    return np.random.SeedSequence(int(seed))


def _describe_seed(sequence: np.random.SeedSequence) -> dict[str, Any]:
    """JSON description of a SeedSequence: everything that determines its output."""
    entropy = sequence.entropy
    return {
        "entropy": int(entropy) if np.ndim(entropy) == 0 else [int(e) for e in entropy],
        "spawn_key": [int(k) for k in sequence.spawn_key],
        "pool_size": int(sequence.pool_size),
    }


# --------------------------------------------------------------------------- IRMA


def irma_target(x: np.ndarray) -> np.ndarray:
    """The IRMA regression target ``f(x) = x * exp(-x**2)``.

    Examples
    --------
    >>> irma_target(np.array([0.0, 1.0]))
    array([0.        , 0.36787944])
    """
    return x * np.exp(-(x**2))


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


GENERATORS: dict[str, Generator] = {
    "irma": Generator(
        name="irma",
        make=_irma,
        params={
            "n_sequences": GenParam(1000, int, 1, "number of independent training sequences"),
            "length": GenParam(150, int, 1, "examples per training sequence"),
            "noise": GenParam(0.05, float, 0.0, "half-width of the uniform noise added to y"),
            "n_test": GenParam(1000, int, 1, "equally spaced test points on [0, 3]"),
        },
        reference="Buschermöhle et al., IRMA, IEEE SMC 2013: f(x) = x exp(-x^2) on [0, 3]",
    ),
}
"""The registry: generator name to :class:`Generator` (a callable ``(params, seed)``)."""


def _generator(name: str) -> Generator:
    """The generator registered as ``name``; ConfigError if there is none."""
    if name not in GENERATORS:
        raise ConfigError(f"unknown generator {name!r} (known: {', '.join(sorted(GENERATORS))})")
    return GENERATORS[name]


def generate(name: str, params: dict[str, Any], seed: int | np.random.SeedSequence) -> dict[str, tuple]:
    """Run generator ``name``: ``{part: (X, y, provenance)}``.

    Parameters
    ----------
    name : str
        A key of :data:`GENERATORS`.
    params : dict
        Generator parameters (missing ones take their defaults).
    seed : int or numpy.random.SeedSequence
        The only source of randomness.

    Examples
    --------
    >>> parts = generate("irma", {"n_sequences": 2, "length": 3}, seed=0)
    >>> parts["train"][0].shape, parts["test"][0].shape
    ((6, 1), (1000, 1))
    """
    return _generator(name)(params, seed)


def materialize(
    name: str, params: dict[str, Any], seed: int | np.random.SeedSequence, directory: str | os.PathLike
) -> dict[str, Dataset]:
    """Write the parts of a generator run as datasets, or reuse those written before.

    The parts go to ``directory/<name>-<hash>/<part>``, where the hash covers the name,
    the parameters with defaults filled in and the seed. The whole ``<name>-<hash>``
    directory is renamed into place once complete, so it is either absent or complete;
    when two processes build it at once, one rename wins and the other's copy is dropped.

    Examples
    --------
    >>> sets = materialize("irma", {"n_sequences": 10}, 0, tmp)
    >>> sets["train"].n_rows
    1500
    """
    generator = _generator(name)
    params = generator.check_params(params)
    sequence = seed_sequence(seed)
    final = Path(directory).absolute() / f"{name}-{_run_hash(name, params, sequence)}"
    if not final.is_dir():
        _build(generator, params, sequence, final)
    return _open_parts(final)


def _run_hash(name: str, params: dict[str, Any], sequence: np.random.SeedSequence) -> str:
    """Short hex digest of (name, checked parameters, seed)."""
    run = {"generator": name, "params": params, "seed": _describe_seed(sequence)}
    canonical = json.dumps(run, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _build(
    generator: Generator, params: dict[str, Any], sequence: np.random.SeedSequence, final: Path
) -> None:
    """Generate and write every part next to ``final``, then rename the lot into place."""
    final.parent.mkdir(parents=True, exist_ok=True)
    temporary = final.with_name(f".{final.name}.tmp-{uuid.uuid4().hex[:12]}")
    try:
        for part, (X, y, provenance) in generator(params, sequence).items():
            write_dataset(temporary / part, X, y, provenance=provenance)
        try:
            os.rename(temporary, final)
        except OSError:
            if not final.is_dir():  # not a lost race: a real failure
                raise
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def _open_parts(final: Path) -> dict[str, Dataset]:
    """Every dataset in the directory of a generator run, by part name."""
    entries = [entry for entry in sorted(final.iterdir()) if not entry.name.startswith(".")]
    parts = {entry.name: open_dataset(entry) for entry in entries}
    if not parts:
        raise DataError(f"generated data directory {final} holds no dataset")
    return parts
