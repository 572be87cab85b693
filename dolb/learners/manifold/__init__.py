"""Online semi-supervised learning: online manifold regularisation (Goldberg, Li & Zhu,
ECML PKDD 2008), on the kernel learners' storage, one module per job:

* :mod:`.graph` — the compiled gradient step, the Gram matrix's upkeep and the kernel
  matching pursuit projection;
* :mod:`.learner` — :class:`ManifoldLearner`, the base class (parameters, block loop);
* :mod:`.exact`, :mod:`.buffer` — the learners on the kernel learners' store;
* :mod:`.rptree` — the online random-projection tree, compiled; :mod:`.clustered` — the
  learner on its clusters.
"""

from dolb.learners.manifold import buffer, clustered, exact  # noqa: F401  (register learners)
from dolb.learners.manifold.learner import ManifoldLearner

__all__ = ["ManifoldLearner"]
