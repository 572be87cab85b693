"""Every random choice of a study comes from here.

Seeds are :class:`numpy.random.SeedSequence` objects keyed by the pipeline's root seed
and the coordinates of what they decide (a dataset name, a split index, a learner
configuration), never by global state, submission order or worker identity: the same
pipeline gives the same streams on 1 worker or 16.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from dolb.identity import digest


def stable_key(value: Any) -> int:
    """A 32-bit integer that identifies ``value`` (anything JSON can encode) the same
    way in every process and on every machine (unlike :func:`hash`). Those of strings
    and integers are remembered (every cell asks for its dataset's and kind's)."""
    if type(value) in (str, int):  # exactly: True == 1 and 1.0 == 1, but their keys differ
        return _remembered_key(value)
    return _key(value)


def _key(value: Any) -> int:
    return int.from_bytes(bytes.fromhex(digest(value, length=8)), "little")


_remembered_key = functools.lru_cache(maxsize=4096, typed=True)(_key)


def seed_for(root_seed: int, *coordinates: Any) -> np.random.SeedSequence:
    """The seed sequence for the choice identified by ``coordinates``.

    Examples
    --------
    >>> a = seed_for(7, "rcv1", 3).generate_state(1)
    >>> b = seed_for(7, "rcv1", 3).generate_state(1)
    >>> bool((a == b).all())
    True
    """
    return np.random.SeedSequence(root_seed, spawn_key=tuple(stable_key(c) for c in coordinates))


def seed_int(seed: np.random.SeedSequence) -> int:
    """A 64-bit integer drawn from ``seed``, for APIs that take a plain integer."""
    return int(seed.generate_state(1, dtype=np.uint64)[0])
