"""Online-to-batch conversions: one module per technique.

A conversion turns the hypothesis sequence H_0, H_1, ... of an online learner into one
output hypothesis, available at any time (every checkpoint). The linear learners
(:mod:`dolb.learners.linear`) feed the conversions they were built with from inside
their compiled kernel, example by example; conversions not requested cost nothing.

* ``last`` (:mod:`.last`): the current hypothesis;
* ``average`` (:mod:`.average`): (1/m) Σ_t H_{t−1}, on the fly;
* ``longest_survivor`` (:mod:`.longest_survivor`): the distinct hypothesis used on the
  most rounds (the latest on ties);
* ``suffix`` (:mod:`.suffix`): the average of the last s hypotheses, s by the bound;
* ``cutoff`` (:mod:`.cutoff`): Σ_h (r(h)−k)_+ h / N_k, k by the bound.

The hypothesis representation they all share is w = scale · v (see
:mod:`dolb.learners.linear`); :mod:`.history` keeps the update log from which weighted
sums of hypotheses are rebuilt exactly (suffix averaging always; cutoff averaging on
sparse input; averaging and the longest survivor whenever the log exists, which makes
them free while streaming), and :mod:`.bound` the risk bound suffix and cutoff averaging
minimise (Dekel, "From Online to Batch Learning with Cutoff-Averaging", NIPS 2008).

Losses of the bounds: each learner's ``bound_loss``: the 0-1 loss (C = 1) for every
learner but the margin Perceptron, which is conservative w.r.t. the hinge loss and uses
it (C = 1 + R). The other hinge-loss learners (PA, SGD, AdaGrad, FTRL, OGD, dual
averaging) use the 0-1 loss because their hinge loss has no a-priori bound; note they
are conservative w.r.t. the hinge loss, not the 0-1 loss, so in their bounds the loss
counted for a hypothesis is its 0-1 loss on every round it was used.
"""

from dolb.conversions.bound import DELTA, confidence, risk_bound

CONVERSIONS = ("last", "average", "longest_survivor", "suffix", "cutoff")
"""Every conversion name, in the order outputs are reported."""

__all__ = ["CONVERSIONS", "DELTA", "confidence", "risk_bound"]
