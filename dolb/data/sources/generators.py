"""Seeded synthetic data generators: their registry, running them, and caching their output.

A generator turns checked parameters and a :class:`numpy.random.SeedSequence` into named
parts (such as ``"train"`` and ``"test"``), each ``(X, y, provenance)``. All randomness
comes from ``numpy.random.default_rng(seed_sequence)``: the same name, parameters and
seed give bit-identical arrays on any machine running the same versions.

:func:`materialize` writes the parts as dolb datasets under a directory named by a hash
of (name, parameters with defaults filled in, seed) and reuses them on later calls.

The generators themselves live in their own modules (:mod:`dolb.data.sources.irma`,
:mod:`dolb.data.sources.sparse_text`), each adding itself to :data:`GENERATORS`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from dolb.data.params import FilePath
from dolb.data.sources.cache import file_identity, stored_parts
from dolb.data.sources.source import Parts, Source
from dolb.data.store.dataset import Dataset
from dolb.errors import ConfigError
from dolb.registry import Registry


@dataclass(kw_only=True)
class Generator(Source):
    """A registered generator: calling it checks the parameters and makes the parts.

    Parameters
    ----------
    make : callable
        ``make(params, rng) -> {part: (X, y)}`` given checked parameters and a
        ``numpy.random.Generator``.
    size : callable
        ``size(params) -> bytes``: about how much memory ``make`` needs for checked
        parameters; parameters asking for more than this machine has are refused
        before anything is allocated.
    revision : int
        Raised by one whenever a change of the code changes the arrays the generator
        makes for the same parameters and seed; from 1 on, part of the data cache's key,
        so that a cache never serves arrays of an earlier revision.

    The other parameters are those of :class:`~dolb.data.sources.source.Source`.
    """

    kind: ClassVar[str] = "generator"

    make: Callable[[dict[str, Any], np.random.Generator], Parts]
    size: Callable[[dict[str, Any]], float]
    revision: int = 0

    def check_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """The full parameter set, or ConfigError (also for one that would not fit in
        this machine's memory)."""
        checked = super().check_params(params)
        need, have = self.size(checked), memory_bytes()
        if need > have:
            raise ConfigError(
                f"{self.owner}: these parameters make about {need / 1e9:,.1f} GB of arrays, more than "
                f"this machine's {have / 1e9:,.1f} GB of memory ({_shown(checked)})"
            )
        return checked

    def __call__(self, params: dict[str, Any], seed: int | np.random.SeedSequence) -> dict[str, tuple]:
        """``{part: (X, y, provenance)}`` for ``params`` and ``seed``."""
        checked = self.check_params(params)
        sequence = seed_sequence(seed)
        about = {
            "source": "generator",
            "generator": self.name,
            "reference": self.reference,
            "params": checked,
            "seed": _describe_seed(sequence),
        }
        return self.described(self.make(checked, np.random.default_rng(sequence)), about)


def memory_bytes() -> int:
    """This machine's physical memory, in bytes."""
    import psutil

    return int(psutil.virtual_memory().total)


def _shown(params: dict[str, Any]) -> str:
    return ", ".join(f"{key} = {value!r}" for key, value in params.items())


GENERATORS: Registry[Generator] = Registry("generator")
"""Generator name to :class:`Generator` (a callable ``(params, seed)``)."""


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


def generate(name: str, params: dict[str, Any], seed: int | np.random.SeedSequence) -> dict[str, tuple]:
    """Run generator ``name``: ``{part: (X, y, provenance)}``.

    Parameters
    ----------
    name : str
        A name in :data:`GENERATORS`.
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
    return GENERATORS[name](params, seed)


def materialize(
    name: str, params: dict[str, Any], seed: int | np.random.SeedSequence, directory: str | os.PathLike,
    build: bool = True,
) -> dict[str, Dataset] | None:
    """Write the parts of a generator run as datasets, or reuse those written before
    (with ``build=False``, only reuse: None when they are absent).

    The parts go to ``directory/<name>-<hash>/<part>``, where the hash covers the name,
    the parameters with defaults filled in, the seed and the generator's revision (a file a generator reads, such
    as ``rcv1_resample``'s sample, by its name, size and SHA-256 instead of its path). The whole ``<name>-<hash>``
    directory is renamed into place once complete, so it is either absent or complete;
    when two processes build it at once, one rename wins and the other's copy is dropped.

    Examples
    --------
    >>> sets = materialize("irma", {"n_sequences": 10}, 0, tmp)
    >>> sets["train"].n_rows
    1500
    """
    generator = GENERATORS[name]
    params = generator.check_params(params)
    sequence = seed_sequence(seed)
    identity = {"generator": name, "params": params, "seed": _describe_seed(sequence)}
    if generator.revision:
        identity["revision"] = generator.revision
    files = [key for key, declared in generator.params.items() if isinstance(declared, FilePath)]
    if files:  # a generator that reads files: keyed on their content, not on where they lie
        identity["params"] = {k: v for k, v in params.items() if k not in files}
        identity["sources"] = [file_identity(params[key]) for key in files]
    return stored_parts(directory, name, identity, (lambda: generator(params, sequence)) if build else None)
