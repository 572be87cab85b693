"""Online-to-batch conversions: one module per technique.

A conversion turns the hypothesis sequence H_0, H_1, ... of an online learner into one
output hypothesis, available at any time (every checkpoint). The linear learners
(:mod:`dolb.learners.linear`) feed the conversions they were built with from inside
their compiled driver, example by example; conversions not requested cost nothing.

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

The protocol
------------
A conversion is a subclass of :class:`~.protocol.Conversion` in its own module, listed
once in ``_REPORTING_ORDER`` below; nothing else names it. It declares:

* ``name`` — its registry key;
* ``hooks`` — what it is fed while the learner streams: event name → a function
  ``hook(state, <the event's values>)`` compiled with ``numba.njit(inline="always")``.
  The events (:data:`.protocol.EVENTS`, which names their values: the hooks' parameters)
  are ``round`` (every round: the scale, the round, the live hypothesis's age, the
  loss), ``death`` (the live hypothesis dies: its scale, v, age and index in the update
  log), ``change`` (the sparse change Δ of v and the new scale) and ``fold`` (the scale
  was folded into v);
* ``arrays`` — the tuple of arrays its hooks update, and ``off()`` — the same types,
  empty, for when it is not requested;
* ``feeds`` — which of its hooks to call (it may depend on how it was built), and
  what it asks of the driver: ``"loss"`` (the round's loss, else 0.0), ``"dying_v"``
  (v still holds the dying hypothesis at its death);
* ``requires_log(sparse)`` — whether the learner must keep the shared update log
  (:class:`.history.History`, itself fed through the same hooks); every conversion is
  told whether the log exists and may build its output from it;
* ``reserve(rows, nnz)`` — room for a block, before it runs (hooks never allocate);
* ``log_request()`` — its output as a weighted sum of logged hypotheses (all such
  outputs are built in one pass over the log), or None; ``output()`` otherwise.

The learner's compiled driver receives one state tuple and one set of switches per fed
part (the log, then every registered conversion, in registry order) and calls every
declared hook statically, inlined, behind its switch: no Python per example, and a
conversion that is not requested costs one predictable branch per event.
"""

from dolb.conversions import average, cutoff, last, longest_survivor, suffix
from dolb.conversions.bound import DELTA, confidence, risk_bound
from dolb.conversions.protocol import Conversion
from dolb.registry import Registry

_REPORTING_ORDER = (last.Last, average.Average, longest_survivor.LongestSurvivor, suffix.Suffix, cutoff.Cutoff)

REGISTRY: Registry[type[Conversion]] = Registry("conversion")
"""Every conversion class, by name."""
for _conversion in _REPORTING_ORDER:
    REGISTRY.add(_conversion.name, _conversion)

CONVERSIONS = tuple(conversion.name for conversion in _REPORTING_ORDER)
"""Every conversion name, in the order outputs are reported (and the driver feeds them)."""

__all__ = ["CONVERSIONS", "DELTA", "REGISTRY", "Conversion", "confidence", "risk_bound"]
