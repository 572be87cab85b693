"""Online-to-batch conversions: one module per technique.

A conversion turns the hypothesis sequence H_0, H_1, ... of an online learner into one
output hypothesis, available at any time (every checkpoint). The linear learners
(:mod:`dolb.learners.linear`) feed the conversions they were built with from inside
their compiled kernel, example by example; conversions not requested cost nothing.

================== ============================================ ==========================
name               output                                       module
================== ============================================ ==========================
``last``           the current hypothesis                       :mod:`.last`
``average``        (1/m) Σ_t H_{t-1}, on the fly                :mod:`.average`
``longest_survivor`` the distinct hypothesis used on the most     :mod:`.longest_survivor`
                   rounds (latest on ties)
``suffix``         average of the last s hypotheses, s by bound :mod:`.suffix`
``cutoff``         Σ_h (r(h)−k)_+ h / N_k, k by bound           :mod:`.cutoff`
================== ============================================ ==========================

The hypothesis representation they all share is w = scale · v (see
:mod:`dolb.learners.linear`); :mod:`.history` keeps the update log that suffix and
cutoff averaging reconstruct weighted sums of hypotheses from, and :mod:`.bound` the
risk bound both minimise (Dekel, "From Online to Batch Learning with Cutoff-Averaging",
NIPS 2008).
"""

from dolb.conversions.bound import DELTA, confidence, risk_bound

CONVERSIONS = ("last", "average", "longest_survivor", "suffix", "cutoff")
"""Every conversion name, in the order outputs are reported."""

__all__ = ["CONVERSIONS", "DELTA", "confidence", "risk_bound"]
