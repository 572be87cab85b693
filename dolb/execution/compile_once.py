"""Each Numba kernel compiled once by the workers that share its cache.

Without it, on a fresh machine (an empty Numba cache) every worker would compile every
kernel of the sweep, the same kernels at the same time. :func:`share_compilation` makes
a process compile a cached kernel (``cache=True``) only while it holds that kernel's
file lock, beside the kernel's cache files; a worker that finds the lock held waits,
then loads what the holder saved in the cache. The run's warm-up
(:mod:`dolb.execution.warm_up`) then compiles different kernels on different workers, in
parallel, and a worker's first cell loads them.

The locks are ``flock`` locks (:mod:`filelock`), released by the kernel if a worker
dies. Workers on machines that do not share a cache folder each compile their own.
Results do not depend on who compiled a kernel: the compiled code is the same.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from filelock import FileLock
from numba.core import caching, dispatcher
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
