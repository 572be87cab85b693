"""A slowdown of one learner, injected by the nightly gate's trial into the processes it
benchmarks (:mod:`benchmarks.gate.gate_trial`): dolb's code knows nothing of it.

:func:`prelude` is Python source that a child process runs before dolb's command (the
A/B's after side, a night's ``dolb bench``): it loads this file by its path (the child's
``PYTHONPATH`` is the tree it measures, which may not have it) and calls :func:`install`,
which wraps :meth:`dolb.learners.linear.learner.LinearLearner.learn_running` of that
process's dolb with a busy loop after every block of the slowed learner.
"""

from __future__ import annotations

import time

DEFAULT_FRACTION = 0.25
"""Extra CPU time a block by default: a speed of 1 / 1.25 = 0.8x."""


def install(spec: str) -> None:
    """Slow learner ``NAME`` (``spec`` ``NAME`` or ``NAME:FRACTION``): after each block
    it learns, a busy loop of ``FRACTION`` (default :data:`DEFAULT_FRACTION`) of the CPU
    time the block took."""
    from dolb.learners.linear.learner import LinearLearner

    target, _, fraction = spec.partition(":")
    extra = float(fraction or DEFAULT_FRACTION)
    original = LinearLearner.learn_running

    def learn_running(self, X, y, labelled=None, total=0.0):
        start = time.thread_time()
        running = original(self, X, y, labelled, total)
        if self.name == target:
            until = time.thread_time() + extra * (time.thread_time() - start)
            while time.thread_time() < until:
                pass
        return running

    LinearLearner.learn_running = learn_running


def prelude(spec: str | None) -> str:
    """Python source that runs :func:`install` of ``spec`` in the process that runs it
    (empty when ``spec`` is None: nothing slowed)."""
    if not spec:
        return ""
    return (f"import importlib.util as _util\n"
            f"_spec = _util.spec_from_file_location('benchmark_slowdown', {__file__!r})\n"
            f"_slowdown = _util.module_from_spec(_spec)\n_spec.loader.exec_module(_slowdown)\n"
            f"_slowdown.install({spec!r})\n")
