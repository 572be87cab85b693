"""The resident memory of this process, read cheaply: a cell samples it once a block.

It reads ``/proc/self/statm`` through a descriptor kept open, a tenth of the cost of
``psutil.Process().memory_info()`` (docs/design/execution.md); where there is no
``/proc`` (macOS), psutil is asked.
"""

from __future__ import annotations

import os

import psutil

PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class Resident:
    """The resident bytes of the calling process, on each call (``/proc/self/statm``
    opened again in a forked child: it names the process that opened it)."""

    def __init__(self) -> None:
        self._pid, self._statm = None, None

    def __call__(self) -> int:
        if self._pid != os.getpid():
            self._pid = os.getpid()
            try:
                self._statm = os.open("/proc/self/statm", os.O_RDONLY)
            except OSError:
                self._statm = None
        if self._statm is None:
            return psutil.Process().memory_info().rss
        return int(os.pread(self._statm, 128, 0).split()[1]) * PAGE_BYTES


resident_bytes = Resident()
"""This process's resident bytes (as ``psutil.Process().memory_info().rss``)."""
