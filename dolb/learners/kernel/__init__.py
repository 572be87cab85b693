"""The kernel classifiers, one module per job:

* :mod:`.kernels` — the kernel functions and the support vectors' storage, compiled;
* :mod:`.cache` — the bounded LRU cache of kernel rows, compiled;
* :mod:`.learner` — :class:`KernelLearner`, the base class (input checks, the block
  loop, prediction);
* :mod:`.perceptron`, :mod:`.norma`, :mod:`.lasvm` (with :mod:`.solver`, its compiled
  PROCESS / REPROCESS / FINISH) — the learners.
"""

from dolb.learners.kernel import lasvm, norma, perceptron  # noqa: F401  (register learners)
from dolb.learners.kernel.learner import KernelLearner

__all__ = ["KernelLearner"]
