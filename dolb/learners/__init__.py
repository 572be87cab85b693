"""Online learners: one module per learner family, each registering its learners.

Importing this package fills the registry (see :mod:`dolb.learners.base`).
"""

from dolb.learners import batch_ls, irma, ngd, rls  # noqa: F401  (register learners)
from dolb.learners.base import (
    OnlineLearner,
    Param,
    learner_class,
    register,
    registered_learners,
)

__all__ = ["OnlineLearner", "Param", "learner_class", "register", "registered_learners"]
