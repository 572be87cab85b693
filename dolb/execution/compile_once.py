"""Each Numba kernel compiled once by the workers that share its cache, the kernels of a
sweep spread over them.

On a fresh machine (an empty Numba cache) every worker used to compile every kernel of
the sweep, the same kernels at the same time: a cluster's start took the sum of their
compile times whatever its size. Here:

- :func:`share_compilation` makes a worker compile a cached kernel (``cache=True``)
  only while it holds that kernel's file lock, beside the kernel's cache files. A worker
  that finds the lock held waits, then loads what the holder saved in the cache.
- :func:`warm_up_spread` warms a sweep's kernels in groups (one per learner,
  conversions and dataset): each worker first takes the groups no other worker is
  warming (a claim, a file lock taken without waiting), then goes over the others,
  whose kernels it loads from the cache (waiting, through the kernels' locks, for those
  still compiling). So two workers compile different groups in parallel, and the start
  takes about the longest group's compile time.

The locks are ``flock`` locks (:mod:`filelock`), released by the kernel if a worker
dies. Workers on machines that do not share a cache folder each compile their own, as
before. Results do not depend on who compiled a kernel: the compiled code is the same.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from filelock import FileLock, Timeout
from numba.core import caching, config, dispatcher
from numba.core.compiler_lock import global_compiler_lock

_held: set[str] = set()
"""The kernel locks this process holds (a kernel being compiled compiles the kernels it
calls; one that calls itself must not wait for its own lock)."""


def _kernel_lock(kernel: dispatcher.Dispatcher) -> str | None:
    """The lock file of a kernel cached on disk (in its cache folder), None for another."""
    cache = kernel._cache
    if not isinstance(cache, caching.Cache):  # no cache=True: nothing another worker could load
        return None
    function = kernel.py_func
    return os.path.join(cache.cache_path, f".{function.__module__}.{function.__qualname__}.lock")


def _compile_once(compile_: Callable) -> Callable:
    """``Dispatcher.compile`` under the kernel's lock (see the module docstring)."""

    def compile_under_lock(self, sig):
        lock = _kernel_lock(self)
        with global_compiler_lock:  # one thread of a process compiles at a time, as in Numba itself
            if lock is None or lock in _held:
                return compile_(self, sig)
            os.makedirs(os.path.dirname(lock), exist_ok=True)
            _held.add(lock)
            try:
                with FileLock(lock):  # held by another worker: it is compiling; its result then loads
                    return compile_(self, sig)
            finally:
                _held.discard(lock)

    compile_under_lock.compiles_once = True
    return compile_under_lock


def share_compilation() -> None:
    """Make this process compile each cached kernel only under its file lock (once per
    process; see the module docstring)."""
    if not getattr(dispatcher.Dispatcher.compile, "compiles_once", False):
        dispatcher.Dispatcher.compile = _compile_once(dispatcher.Dispatcher.compile)


def claims_folder() -> Path:
    """Where workers claim the groups of kernels they warm: Numba's cache folder when
    ``NUMBA_CACHE_DIR`` names one (shared by the workers that share it), else this
    machine's temporary folder."""
    if config.CACHE_DIR:
        return Path(config.CACHE_DIR) / ".dolb-claims"
    return Path(tempfile.gettempdir()) / f"dolb-kernel-claims-{os.getuid()}"


def warm_up_spread(groups: Iterable[tuple[str, list]], warm: Callable) -> None:
    """Call ``warm`` on every item of every group (``(key, items)``, the key naming the
    kernels its items compile), first the groups no other process is warming, then the
    rest; each warm is best effort (an error is the cell's to report when it runs)."""
    share_compilation()
    folder = claims_folder()
    folder.mkdir(parents=True, exist_ok=True)
    later = []
    for key, items in groups:
        claim = FileLock(folder / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.lock")
        try:
            claim.acquire(timeout=0)
        except Timeout:  # another worker is on it: its kernels will be in the cache
            later.append(items)
            continue
        try:
            _warm_all(items, warm)
        finally:
            claim.release()
    for items in later:
        _warm_all(items, warm)


def _warm_all(items: list, warm: Callable) -> None:
    for item in items:
        with contextlib.suppress(Exception):
            warm(item)
