"""The generic tests of the learner protocol, for any learner class: dolb's own and one
of another package (registered through the ``dolb.learners`` entry point), as
scikit-learn's and river's ``check_estimator`` are for theirs.

:func:`check_learner` builds the class with its ``test_params`` (or the parameters
given) and runs each rule of :data:`RULES` on small streams (:func:`learner_stream`):
binary rows of norm at most 1 with ten features, or for a regression learner one input
in [0, 1]. A broken rule raises :class:`LearnerCheckError`, an ``AssertionError`` whose
message names the learner and the rule, then says what differed. dolb's own test suite
runs it on every registered learner.

Examples
--------
>>> from dolb.learners import learner_class
>>> check_learner(learner_class("perceptron"))  # every rule holds: nothing is said
>>> check_learner(learner_class("pa"), {"C": 0.5}, checks=["determinism", "state round-trip"])
>>> RULES[:3]
('declaration', 'parameter checks', 'one finite prediction per row')
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable
from typing import Any

from dolb.learners.base import OnlineLearner
from dolb.testing.rules import CHECKS, Subject, learner_stream

__all__ = ["RULES", "LearnerCheckError", "check_learner", "learner_stream"]

RULES: tuple[str, ...] = tuple(CHECKS)
"""The name of every rule :func:`check_learner` checks, in the order it checks them:

``declaration``
    ``name``, ``task``, ``params`` (a :class:`~dolb.learners.Param` each),
    ``complexity_param`` and ``conversions_supported`` are declared as ``@register``
    asks (:func:`~dolb.learners.base.declaration_problem`); the parameters checked
    (``test_params`` unless given) and ``bench_params`` pass ``check_params``.
``parameter checks``
    ``check_params`` refuses, with a ``ConfigError``, what each declared
    :class:`~dolb.learners.Param` forbids: a string for a number, a number for a string
    or a flag, a value outside the bounds, a string not among the choices.
``one finite prediction per row``
    ``learn`` returns a 1-D ``float64`` array, one finite value per row of the block,
    and counts the rows in ``n_seen``.
``determinism``
    Two learners built alike and fed the same stream give the same predictions,
    outputs, output infos and diagnostics, bit for bit (no global random state).
``prediction before update``
    The prediction ``learn`` gives a row is the one ``predict`` gives it before: on a
    fresh learner's first row, on the first row of a block, and (unless
    ``refits_per_block``) on rows inside one; to 1e-9 relative, 1e-12 absolute (a
    ``predict`` may sum in another order than the learning pass).
``state round-trip``
    A learner pickled mid-stream (as a cell's saved state is) and loaded goes on as if
    never stopped: the same predictions and outputs, bit for bit (diagnostics may
    differ: they count work done, such as kernel evaluations a cache emptied by
    pickling does again).
``predict leaves the state``
    ``predict``, ``outputs``, ``diagnostics`` and ``state_nbytes`` between two blocks
    change nothing that comes after, bit for bit; ``predict`` twice gives the same.
``dense and CSR agree``
    Binary learners: the stream as dense arrays and as CSR matrices gives the same
    predictions and outputs, bit for bit (``sparse_tolerance=None``, what dolb's own
    learners promise) or to the relative tolerance given.
``unlabelled targets never read``
    Targets flagged unlabelled are NaN and nothing turns NaN: a supervised learner is
    the one fed the labelled rows alone (bit for bit) that predicts the others with the
    hypothesis of the moment; a semi-supervised one is the one fed other targets there.
``running loss``
    ``learn_running`` is the task's running loss of the predictions ``learn`` gives,
    from a carried total, bit for bit.
``outputs``
    ``outputs()`` holds one :class:`~dolb.learners.Hypothesis` per attached conversion,
    each predicting one finite ``float64`` per row of a dense block (and of a CSR one,
    binary), its ``info`` numbers.
``diagnostics and state size``
    ``diagnostics()`` maps names to floats; ``state_nbytes()`` is an int of at least 0.
"""


class LearnerCheckError(AssertionError):
    """A rule of the learner protocol that a learner class breaks.

    Attributes
    ----------
    learner : str
        The learner's ``name`` (its class name if it has none).
    rule : str
        The rule broken, one of :data:`RULES`.
    """

    def __init__(self, learner: str, rule: str, detail: str) -> None:
        super().__init__(f"learner {learner!r}: rule {rule!r} broken: {detail}")
        self.learner, self.rule = learner, rule


def check_learner(
    learner: type[OnlineLearner],
    params: dict[str, Any] | None = None,
    *,
    checks: Iterable[str] | None = None,
    n_rows: int = 160,
    seed: int = 0,
    sparse_tolerance: float | None = None,
) -> None:
    """Check that a learner class follows the learner protocol; raise
    :class:`LearnerCheckError` naming the first rule it breaks.

    Parameters
    ----------
    learner : type
        The class (an :class:`~dolb.learners.OnlineLearner` subclass); it need not be
        registered.
    params : dict, optional
        The parameters to build it with; default its ``test_params``.
    checks : iterable of str, optional
        The rules to check (names of :data:`RULES`); default every one.
    n_rows : int
        Rows of each stream (at least 20); the streams come from ``seed``.
    seed : int
        Seed of the streams.
    sparse_tolerance : float, optional
        Relative tolerance of the ``dense and CSR agree`` rule (absolute: a thousandth
        of it); None asks for the same bits.

    Raises
    ------
    LearnerCheckError
        A rule broken (also when the learner raises an exception while it is checked:
        the message then names that exception).
    ConfigError
        The learner cannot run here (:meth:`~dolb.learners.OnlineLearner.unavailable`).
    ValueError
        A name in ``checks`` that is no rule.

    Examples
    --------
    >>> import numpy as np
    >>> from dolb.learners import OnlineLearner
    >>> class Eager(OnlineLearner):  # updates, then predicts: the rule says otherwise
    ...     name, task = "eager", "binary"
    ...     def __init__(self, n_features, n_train=None, conversions=("last",), **params):
    ...         super().__init__(n_features, n_train, conversions, **params)
    ...         self.w = np.zeros(self.n_features)
    ...     def _learn(self, X, y):
    ...         out = np.empty(len(y))
    ...         for i in range(len(y)):
    ...             self.w += y[i] * X[i]
    ...             out[i] = X[i] @ self.w
    ...         return out
    ...     def _predict(self, X):
    ...         return np.asarray(X @ self.w).ravel()
    >>> check_learner(Eager, checks=["prediction before update"])
    Traceback (most recent call last):
    ...
    dolb.testing.LearnerCheckError: learner 'eager': rule 'prediction before update' broken: ...
    """
    chosen = RULES if checks is None else tuple(checks)
    unknown = [rule for rule in chosen if rule not in CHECKS]
    if unknown:
        raise ValueError(f"no rule {unknown[0]!r} (rules: {', '.join(RULES)})")
    if n_rows < 20:
        raise ValueError(f"n_rows must be at least 20, got {n_rows}")
    learner.check_available()
    subject = Subject(learner, dict(learner.test_params if params is None else params), n_rows, seed,
                      sparse_tolerance)
    name = learner.name or learner.__name__
    for rule in chosen:
        try:
            CHECKS[rule](subject)
        except LearnerCheckError:
            raise
        except AssertionError as error:
            raise LearnerCheckError(name, rule, str(error).strip() or "an assertion failed") from error
        except Exception as error:  # a learner that raises breaks the rule it was checked for
            where = traceback.extract_tb(error.__traceback__)[-1]
            detail = f"{type(error).__name__}: {error} (at {where.filename}:{where.lineno})"
            raise LearnerCheckError(name, rule, detail) from error
