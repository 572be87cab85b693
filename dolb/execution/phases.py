"""Where a run's wall time goes: plan, data, cluster, compute, write, aggregate, reports."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator

logger = logging.getLogger(__name__)


class Phases:
    """Wall time spent in each named phase of a run; a phase entered inside another
    (the cluster started to build a dataset) pauses it, so no time counts twice.

    Examples
    --------
    >>> phases = Phases()
    >>> with phases("plan"):
    ...     with phases("cluster"):
    ...         pass
    >>> sorted(phases.seconds) == sorted(Phases.ORDER)
    True
    """

    ORDER = ("plan", "data", "cluster", "compute", "write", "aggregate", "reports")

    def __init__(self) -> None:
        self.seconds: dict[str, float] = dict.fromkeys(self.ORDER, 0.0)
        self.running: list[str] = []
        self.since = time.perf_counter()

    def _charge(self) -> None:
        now = time.perf_counter()
        if self.running:
            self.seconds[self.running[-1]] += now - self.since
        self.since = now

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        self._charge()
        self.running.append(name)
        logger.debug("phase %s", name)
        try:
            yield
        finally:
            self._charge()
            self.running.pop()

    def rounded(self) -> dict[str, float]:
        return {name: round(seconds, 3) for name, seconds in self.seconds.items()}
