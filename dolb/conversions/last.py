"""Last hypothesis: the learner's current hypothesis (after its latest update).

Nothing to feed while streaming: the output is a copy of w = scale · v.
"""

from __future__ import annotations

from dolb.conversions.output import OwnedByLearner, linear_hypothesis


class Last(OwnedByLearner):
    """The ``last`` conversion of a linear learner."""

    name = "last"

    def __init__(self, learner) -> None:
        self.bind(learner)

    def weights(self):
        return self.learner.weights()

    def output(self):
        return linear_hypothesis(self.weights())
