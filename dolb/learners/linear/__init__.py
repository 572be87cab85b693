"""Common ground of the linear online classifiers, one module per job:

* :mod:`.representation` — the hypothesis w = s·v and the named slots of its state,
  the losses and the helpers the learners' steps share (:func:`dloss`, :func:`move`,
  :func:`scaled_row`, :func:`norm_after`, :func:`moved_by`);
* :mod:`.params` — the named parameter record a step reads (``P.alpha``);
* :mod:`.layout` — blocks as canonical CSR arrays (dense blocks in place);
* :mod:`.driver` — the one compiled loop, which runs a block through a learner's step
  and feeds the conversions, cached on disk per learner;
* :mod:`.learner` — :class:`LinearLearner`, the base class and the hub between the
  learner, its conversions (:mod:`dolb.conversions`) and the driver.

A linear learner is one module declaring its parameters and its compiled step; the
step's contract (its arguments, the named slots ``F[SCALE]``, ``F[NORM2]``, ``F[PHI]``,
what it returns) is in :mod:`.learner`; see :mod:`dolb.learners.perceptron` for the
smallest.
"""

from dolb.learners.linear.layout import csr_parts, row_norms_squared
from dolb.learners.linear.learner import LinearLearner
from dolb.learners.linear.params import choice_codes
from dolb.learners.linear.representation import (
    AGE,
    HINGE,
    LOGISTIC,
    LOSS_PARAM,
    LOSSES,
    N_FLOATS,
    N_INTS,
    NORM2,
    PHI,
    ROUNDS,
    SCALE,
    dloss,
    move,
    moved_by,
    norm_after,
    scaled_row,
)

__all__ = [
    "AGE", "HINGE", "LOGISTIC", "LOSSES", "LOSS_PARAM", "N_FLOATS", "N_INTS", "NORM2", "PHI", "ROUNDS", "SCALE",
    "LinearLearner", "choice_codes", "csr_parts", "dloss",
    "move", "moved_by", "norm_after", "row_norms_squared", "scaled_row",
]
