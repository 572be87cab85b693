"""The one rule for a number a user writes as a parameter of a learner, a generator or
an importer: a whole number is written as one (``4``, not ``4.0`` or ``1e12``), as
the pipeline's own integers are (strict pydantic); any other number is finite; bounds
are inclusive (``low``, ``high``) or exclusive (``above``).

Examples
--------
>>> check_number("generator 'irma', parameter 'length'", 60, int, low=1)
60
>>> check_number("learner 'lasvm', parameter 'degree'", 4.0, int)
Traceback (most recent call last):
...
dolb.errors.ConfigError: learner 'lasvm', parameter 'degree': expected a whole number, got 4.0
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from dolb.errors import ConfigError


def check_number(
    where: str, value: Any, kind: type, low: float | None = None, high: float | None = None,
    above: float | None = None,
) -> int | float:
    """``value`` as ``kind`` (``int`` or ``float``), or ConfigError starting with
    ``where`` (such as ``"learner 'sgd', parameter 'eta'"``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ConfigError(f"{where}: expected a number, got {value!r}")
    if kind is int:
        if not isinstance(value, numbers.Integral):
            raise ConfigError(f"{where}: expected a whole number, got {value!r}")
        value = int(value)
    else:
        value = float(value)
        if not math.isfinite(value):
            raise ConfigError(f"{where}: expected a finite number, got {value!r}")
    if above is not None and not value > above:
        raise ConfigError(f"{where}: must be above {above!r}, got {value!r}")
    if low is not None and value < low:
        raise ConfigError(f"{where}: {value!r} is below the minimum {low!r}")
    if high is not None and value > high:
        raise ConfigError(f"{where}: {value!r} is above the maximum {high!r}")
    return value
