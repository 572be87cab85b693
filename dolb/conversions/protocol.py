"""The protocol of the parts a linear learner's compiled driver feeds: the events it
reports, the base classes of the conversions and of the update
log, and the growth of their arrays. :class:`Conversion` describes the protocol.
"""

from __future__ import annotations

import weakref
from typing import Any, ClassVar

import numpy as np

EVENTS: dict[str, tuple[str, ...]] = {
    "round": ("s", "rnd", "age", "loss"),
    "death": ("s", "v", "age", "index"),
    "change": ("idx", "start", "delta", "nnz", "s_new", "age"),
    "fold": ("phi", "v"),
}
"""Every event the driver reports, in the order of a round, and its values: the
parameters of a hook for it after the part's state (``hook(state, s, rnd, age, loss)``).

* ``round``: round ``rnd`` (1-based) used the live hypothesis s·v on its ``age``-th
  round (1 on its first) and suffered ``loss`` (the learner's bound loss; 0.0 unless a
  part asked for ``"loss"``);
* ``death``: the live hypothesis s·v dies after ``age`` rounds; ``v`` still holds it for
  parts that asked for ``"dying_v"`` (for the others it may already have changed);
  ``index`` is its index in the update log (−1 without a log);
* ``change``: v[idx[start + j]] grew by delta[j], j < nnz (a sparse Δ); the new
  hypothesis has scale ``s_new``; the one it replaces was used on ``age`` rounds;
* ``fold``: the scale φ = ``phi`` was folded into v: ``v`` already holds φ·v_old; the
  hypothesis is unchanged.
"""

REQUESTS = ("loss", "dying_v")
"""What a part may ask of the driver beside its hooks: the loss of every round, the
dying hypothesis's v before it changes."""


class Fed:
    """Base of what the driver feeds (a conversion, or the update log): the Python side
    of one part's state.

    A subclass declares ``hooks`` (event name of :data:`EVENTS` -> a function
    ``hook(state, <the event's values>)`` compiled with ``numba.njit(inline="always")``),
    keeps the state
    the hooks update as the tuple of arrays :attr:`arrays`, and says in :meth:`off` what
    the driver gets when the part is absent (same types, nothing to update). The learner
    that feeds it is held by a weak reference (no reference cycle, so its arrays are
    freed as soon as it is dropped); :meth:`bind` restores it after unpickling.

    Arrays grown ahead of need (:meth:`reserve` sizes some for the whole announced
    horizon) are pickled up to the rows in use only (:meth:`in_use`): a saved state holds
    what was learned, not room for the rows still to come, and the next :meth:`reserve`
    grows them again.
    """

    hooks: ClassVar[dict[str, Any]] = {}

    def bind(self, learner) -> None:
        self._owner = weakref.ref(learner)

    @property
    def learner(self):
        return self._owner()

    def in_use(self) -> dict[str, int]:
        """The leading rows that hold state of each array grown ahead of need, by
        attribute name (beyond them: the fill :func:`grow` gives, never read before
        :meth:`reserve` makes room again). Default: none grows."""
        return {}

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_owner", None)
        for key, rows in self.in_use().items():
            state[key] = state[key][:rows]
        return state

    @classmethod
    def off(cls) -> tuple:
        """The state the driver gets when the part is absent."""
        return ()

    @property
    def arrays(self) -> tuple:
        """The state the hooks update."""
        return ()

    @property
    def feeds(self) -> frozenset[str]:
        """The hooks to call and the :data:`REQUESTS` (default: every hook); read once,
        when the learner has built its parts."""
        return frozenset(self.hooks)

    def reserve(self, rows: int, nnz: int) -> None:
        """Make room in :attr:`arrays` for a block of ``rows`` rounds and ``nnz`` stored
        values, before it runs (the hooks never allocate). Default: nothing grows."""

    @property
    def nbytes(self) -> int:
        """Bytes of :attr:`arrays`."""
        return sum(a.nbytes for a in self.arrays)


class Conversion(Fed):
    """Base of the online-to-batch conversions of a linear learner.

    A conversion is a subclass in its own module of :mod:`dolb.conversions`, listed once
    in that package's ``_REPORTING_ORDER``; nothing else names it. It declares:

    * ``name`` — its registry key;
    * ``hooks`` — what it is fed while the learner streams: event name → a function
      ``hook(state, <the event's values>)`` compiled with ``numba.njit(inline="always")``.
      The events (:data:`EVENTS`, which names their values: the hooks' parameters) are
      ``round`` (every round: the scale, the round, the live hypothesis's age, the
      loss), ``death`` (the live hypothesis dies: its scale, v, age and index in the
      update log), ``change`` (the sparse change Δ of v and the new scale) and ``fold``
      (the scale was folded into v);
    * ``arrays`` — the tuple of arrays its hooks update, and ``off()`` — the same types,
      empty, for when it is not requested;
    * ``feeds`` — which of its hooks to call (it may depend on how it was built), and
      what it asks of the driver: ``"loss"`` (the round's loss, else 0.0), ``"dying_v"``
      (v still holds the dying hypothesis at its death);
    * ``requires_log(sparse)`` — whether the learner must keep the shared update log
      (:class:`~dolb.conversions.history.History`, itself fed through the same hooks);
      every conversion is told whether the log exists and may build its output from it;
    * ``reserve(rows, nnz)`` — room for a block, before it runs (hooks never allocate);
    * ``log_request()`` — its output as a weighted sum of logged hypotheses (all such
      outputs are built in one pass over the log), or None; ``output()`` otherwise.

    The learner's compiled driver receives one state tuple and one set of switches per
    fed part (the log, then every registered conversion, in registry order) and calls
    every declared hook statically, inlined, behind its switch: no Python per example,
    and a conversion that is not requested costs one predictable branch per event.

    Parameters
    ----------
    learner : LinearLearner
        The learner that feeds it.
    log : bool
        Whether the learner keeps the update log (:mod:`.history`, as
        ``learner.history``), because a conversion :meth:`requires_log`; a conversion
        may then build its output from the log instead of streaming.
    """

    name: ClassVar[str] = ""

    def __init__(self, learner, log: bool) -> None:
        self.bind(learner)

    @classmethod
    def requires_log(cls, sparse: bool) -> bool:
        """Whether the learner must keep the update log for this conversion, on sparse
        or dense input. Default: no."""
        return False

    def log_request(self) -> tuple[np.ndarray, float, dict[str, float]] | None:
        """(weights ω over the logged hypotheses, factor, info) when the output is
        factor · Σ_i ω_i h_i built from the log, or None (then :meth:`output` builds it).
        The learner builds every such output in one pass over the log."""
        return None

    def output(self):
        """The output hypothesis now (a :class:`~.hypothesis.Hypothesis`)."""
        raise NotImplementedError


def grow(a: np.ndarray, need: int, used: int | None = None, estimate: int = 0, fill=0) -> np.ndarray:
    """``a`` with room for ``need`` rows, its first ``used`` rows kept (default: all).
    Grows to at least twice its size or to ``estimate``; new rows hold ``fill`` (large
    zeroed arrays are mapped lazily: capacity never written costs address space only).

    >>> grow(np.array([1, 2]), 3, fill=-1)
    array([ 1,  2, -1, -1])
    """
    if a.shape[0] >= need:
        return a
    b = np.zeros((max(need, 2 * a.shape[0], estimate),) + a.shape[1:], dtype=a.dtype)
    if fill:
        b.fill(fill)
    used = a.shape[0] if used is None else used
    b[:used] = a[:used]
    return b
