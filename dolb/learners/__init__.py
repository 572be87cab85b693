"""Online learners: one module per learner family, each registering its learners.

Importing this package fills the registry (see :mod:`dolb.learners.base`).
"""

from dolb.learners import (  # noqa: F401  (register learners)
    adagrad,
    baselines,
    batch_ls,
    batch_mr,
    batch_reference,
    dual_averaging,
    ftrl,
    irma,
    kernel,
    manifold,
    margin_perceptron,
    ngd,
    ogd,
    passive_aggressive,
    peers,
    perceptron,
    rls,
    sgd,
)
from dolb.learners.base import (
    LEARNERS,
    OnlineLearner,
    Param,
    learner_class,
    register,
    registered_learners,
)

__all__ = ["LEARNERS", "OnlineLearner", "Param", "learner_class", "register", "registered_learners"]
