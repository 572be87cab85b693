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

They share the representation w = scale · v (see :mod:`dolb.learners.linear`);
:mod:`.history` keeps the update log from which weighted sums of hypotheses are rebuilt
exactly, and :mod:`.bound` the risk bound suffix and cutoff averaging minimise (Dekel,
"From Online to Batch Learning with Cutoff-Averaging", NIPS 2008), over each learner's
``bound_loss``. A conversion is a subclass of :class:`~.protocol.Conversion` in its own
module, listed once in ``_REPORTING_ORDER`` below; the protocol it follows is that
class's docstring. :data:`REGISTRY` holds the classes by name, :data:`CONVERSIONS` the
names in report order. Why they are fed so, and which loss each learner's bound counts:
docs/design/conversions.md.
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
