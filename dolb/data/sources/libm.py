"""Elementwise ``exp``, ``log``, ``power`` ... with the C library's results, for generators.

NumPy runs its own float64 loops for ``exp``, ``log``, ``log1p``, ``expm1``, ``log10``
and ``power`` on CPUs with AVX-512, and the C library's functions on others (AVX2 CPUs
among them); the two differ in the last bits of some values. A generator computes with
the functions here, which call Python's :mod:`math` (the C library) element by element,
so that the same name, parameters and seed give the same dataset on any x86-64 machine
with AVX2 and FMA, whatever NumPy dispatches to there. They are about 50 times slower
than NumPy's loops (some 0.1 µs a value): for a generator's one pass, not for hot loops.

Examples
--------
>>> exp(np.array([0.0, 1.0])).tolist() == [1.0, math.exp(1.0)]
True
>>> geomspace(1.0, 1000.0, 4).tolist()
[1.0, 10.0, 100.0, 1000.0]
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np


def _elementwise(function: Callable[..., float], *arrays) -> np.ndarray:
    """``function`` of the broadcast float64 ``arrays``, one element at a time."""
    broadcast = np.broadcast_arrays(*(np.asarray(array, dtype=np.float64) for array in arrays))
    values = map(function, *(array.ravel().tolist() for array in broadcast))
    return np.fromiter(values, np.float64, broadcast[0].size).reshape(broadcast[0].shape)


def exp(x) -> np.ndarray:
    """``e ** x``, elementwise."""
    return _elementwise(math.exp, x)


def log(x) -> np.ndarray:
    """The natural logarithm of positive ``x``, elementwise."""
    return _elementwise(math.log, x)


def log1p(x) -> np.ndarray:
    """``log(1 + x)`` for ``x > -1``, elementwise."""
    return _elementwise(math.log1p, x)


def expm1(x) -> np.ndarray:
    """``exp(x) - 1``, elementwise."""
    return _elementwise(math.expm1, x)


def power(base, exponent) -> np.ndarray:
    """``base ** exponent``, elementwise (broadcast)."""
    return _elementwise(math.pow, base, exponent)


def geomspace(start: float, stop: float, num: int) -> np.ndarray:
    """``num`` numbers from positive ``start`` to ``stop``, evenly spaced on a log scale,
    the ends exact: :func:`numpy.geomspace`'s values on a CPU without AVX-512."""
    values = power(10.0, np.linspace(math.log10(start), math.log10(stop), num))
    values[0], values[-1] = start, stop
    return values
