"""Last hypothesis: the learner's current hypothesis (after its latest update).

Nothing to feed while streaming: the output is a copy of w = scale · v.
"""

from __future__ import annotations

from dolb.conversions.hypothesis import linear_hypothesis
from dolb.conversions.protocol import Conversion


class Last(Conversion):
    """The ``last`` conversion of a linear learner."""

    name = "last"

    def weights(self):
        return self.learner.weights()

    def output(self):
        return linear_hypothesis(self.weights())
