"""Worker processes that do not run the caller's script again.

A worker process of the embedded cluster is started by multiprocessing's ``spawn`` method
(or ``forkserver``), which first runs the parent's main module again in the new process,
as ``__mp_main__``: the script that called :func:`dolb.run` would call it again in every
worker, and multiprocessing refuses to start processes from there ("An attempt has been
made to start a new process before the current process has finished its bootstrapping
phase"), unless the call stands under ``if __name__ == "__main__":``. dolb's workers need
nothing of the caller's script: they import dolb's modules, and the learners of installed
packages, by name. So while a cluster of dolb's lives, :func:`script_not_rerun` gives the
main module the spec that multiprocessing runs nothing again for: that of a folder or a
zip archive run as a program (``__spec__.name == "__main__"``). Its own spec comes back
when the last such cluster has closed. A script with the guard, ``python -m``, the
``dolb`` command and a notebook's kernel start their workers the same way.

Examples
--------
>>> import sys
>>> before = sys.modules["__main__"].__spec__
>>> with script_not_rerun():
...     sys.modules["__main__"].__spec__.name
'__main__'
>>> sys.modules["__main__"].__spec__ is before
True
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from importlib.machinery import ModuleSpec

_lock = threading.Lock()
_holders = 0
_saved: tuple[object, object] | None = None  # (the main module, its own __spec__)


@contextlib.contextmanager
def script_not_rerun() -> Iterator[None]:
    """Within the block, processes that multiprocessing starts by ``spawn`` or
    ``forkserver`` do not run the main module again; blocks may nest or overlap (in
    threads), the main module's spec comes back when the last one ends."""
    global _holders, _saved
    with _lock:
        if _holders == 0:
            main = sys.modules.get("__main__")
            _saved = None if main is None else (main, getattr(main, "__spec__", None))
            if main is not None:
                main.__spec__ = ModuleSpec("__main__", None)
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _saved is not None:
                main, spec = _saved
                main.__spec__ = spec
                _saved = None
