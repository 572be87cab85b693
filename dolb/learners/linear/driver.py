"""The one compiled loop of the linear learners, and its specialisation per learner.

The driver (:func:`_drive`) runs a whole block: for each example it predicts s·⟨v, x⟩
(and writes the prediction out, or the running count of mistakes a cell records:
:meth:`.learner.LinearLearner.learn_running`), reports the round to the fed parts (the
update log and the conversions, see :mod:`dolb.conversions`), asks the learner's
*step* for its update (its contract: :mod:`.learner`), applies it, detects whether the
hypothesis changed and reports the death, the change and any fold. Row t is read from
``begins[t]`` to ``ends[t]`` in ``indices`` and ``data`` (a CSR block, or rows left in
their decoded chunk, :class:`~dolb.data.store.spans.RowSpans`, whose cache lines it asks
for :data:`ROWS_AHEAD` rows ahead). Each row is checked as it is read (a label ±1,
column indices increasing within len(v), a finite score); the first that fails stops
the block, and :class:`.learner.LinearLearner` names it.

The fed parts are the classes of :data:`FED`, one *slot* each, switched by
:func:`switches`; where :func:`_drive` says ``_feed(event, *values)``, its compiled
source calls every slot's hook for the event, inlined, behind its switch. A learner
whose parts listen to nothing (:func:`listens_to_nothing`) runs the *quiet* copy,
compiled from the same source with no feeds, whose step moves v itself (``direct``),
bit-identical to the full copy. Per learner, :func:`compile_driver` compiles that
source with the global ``step`` bound to the learner's function, without Numba's
reference counting, cached on disk under a hash of every source it is built from
(:func:`_sources`). Why it is built this way: docs/design/linear-driver.md.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import math
import re
import sys
import textwrap
from pathlib import Path

import numba

import dolb.conversions
from dolb.conversions import CONVERSIONS, REGISTRY
from dolb.conversions.history import History, live_index
from dolb.conversions.protocol import EVENTS, Fed
from dolb.data.store.gather import prefetch_span
from dolb.learners.linear.representation import AGE, FOLD_HIGH, FOLD_LOW, NORM2, PHI, ROUNDS, SCALE

FED: tuple[type[Fed], ...] = (History,) + tuple(REGISTRY[name] for name in CONVERSIONS)
"""The classes of the parts the driver feeds, one slot each: the update log first."""

_LOSS, _HINGE, _DYING_V = range(3)  # the first switches
ROWS_AHEAD = 8
"""Rows ahead the driver asks the CPU for, when the rows lie anywhere in their arrays (a
permuted block left in its decoded chunk, :class:`~dolb.data.store.spans.RowSpans`):
without it every row waits for memory in turn (what it saves, and why 8:
docs/design/linear-driver.md)."""
_EVENT_INDEX = {event: i for i, event in enumerate(EVENTS)}


def _switch(slot: int, event: str) -> int:
    """The position of the switch of ``event`` for ``slot``."""
    return 3 + slot * len(EVENTS) + _EVENT_INDEX[event]


def switches(parts: list[Fed | None], hinge: bool) -> tuple[bool, ...]:
    """The driver's switches for the parts of every slot (None: absent); ``hinge``: the
    loss the parts get is the hinge loss (else the 0-1 loss)."""
    return _switches_of(tuple(frozenset() if part is None else part.feeds for part in parts), hinge)


@functools.cache
def _switches_of(feeds: tuple[frozenset[str], ...], hinge: bool) -> tuple[bool, ...]:
    """:func:`switches` from what each slot's part feeds on (made once per combination:
    a learner is made for every cell, and every pass of ``dolb bench``)."""
    on = [any("loss" in f for f in feeds), hinge, any("dying_v" in f for f in feeds)]
    on += [event in f for f in feeds for event in EVENTS]
    return tuple(on)


@functools.cache
def listens_to_nothing(on: tuple[bool, ...]) -> bool:
    """Whether the parts with switches ``on`` listen to nothing: no loss, no dying v, no
    event (the hinge switch says only which loss they would get)."""
    return not any(value for position, value in enumerate(on) if position != _HINGE)


def _unpack_slots(states: tuple):
    """Where :func:`_drive` unpacks the slots' states into locals ``state_<slot>`` (once:
    taking an item of a tuple holding arrays costs reference counts) and names the update
    log's: a placeholder, replaced in the driver's source (the quiet copy gets no states,
    an empty tuple, and has no log)."""
    raise AssertionError("_drive runs only as compiled by compile_driver")


def _feed(event: str, *values) -> None:
    """Where :func:`_drive` feeds ``event`` (its ``values``, see
    :data:`~dolb.conversions.protocol.EVENTS`) to the parts: a placeholder, replaced in
    the driver's source by one switched hook call per slot."""
    raise AssertionError("_drive runs only as compiled by compile_driver")


_FEED_LINE = re.compile(r'^(?P<indent> *)_feed\("(?P<event>\w+)", (?P<values>.*)\)$', re.MULTILINE)
_UNPACK_LINE = re.compile(r"^(?P<indent> *)log = _unpack_slots\(states\)$", re.MULTILINE)


def _expand_feed(match: re.Match, quiet: bool) -> str:
    indent, event, values = match["indent"], match["event"], match["values"]
    lines = [f"{indent}pass"]
    for slot, part in enumerate(() if quiet else FED):
        if event in part.hooks:
            lines += [f"{indent}if on[{_switch(slot, event)}]:",
                      f"{indent}    hook_{slot}_{event}(state_{slot}, {values})"]
    return "\n".join(lines)


def _expand_unpack(match: re.Match, quiet: bool) -> str:
    if quiet:
        return f"{match['indent']}log = None"
    return (f"{match['indent']}{', '.join(f'state_{slot}' for slot in range(len(FED)))}, = states\n"
            f"{match['indent']}log = state_0")


def _driver_source(quiet: bool) -> tuple[str, dict]:
    """The source of :func:`_drive` with its feeds expanded (to nothing when ``quiet``),
    and the hooks it calls; TypeError for a hook whose parameters are not its event's
    values."""
    for part in FED:
        for event, hook in part.hooks.items():
            names = tuple(inspect.signature(hook.py_func).parameters)[1:]
            if names != EVENTS[event]:
                raise TypeError(f"{part.__name__}: its {event} hook takes {names}, the event gives {EVENTS[event]}")
    source = textwrap.dedent(inspect.getsource(_drive))
    source = _FEED_LINE.sub(functools.partial(_expand_feed, quiet=quiet), source)
    source = _UNPACK_LINE.sub(functools.partial(_expand_unpack, quiet=quiet), source)
    hooks = {f"hook_{slot}_{event}": hook for slot, part in enumerate(FED) for event, hook in part.hooks.items()}
    return source, hooks


@numba.njit(cache=True, inline="always")
def _finite_row(data, start, nnz):
    """Whether the values of a row are all finite."""
    for k in range(start, start + nnz):  # noqa: SIM110 (a plain loop compiles best)
        if not math.isfinite(data[k]):
            return False
    return True


def _drive(begins, ends, indices, data, y, P, A, v, F, I, delta, on, states, out, ahead, running, total):
    """Run the learner ``step`` over one block of rows (row t: ``indices`` and ``data``
    from ``begins[t]`` to ``ends[t]``, sound bounds), test-then-train; fill ``out``
    with the predictions, or with ``running`` the mistakes counted from ``total`` (row
    t: ``total`` + the mistakes on rows 0..t, the 0-1 loss as
    :func:`~dolb.losses.running_zero_one_loss` sums it); return the number
    of rows run: all of them, unless a row has a label other than ±1, a column index
    outside 0..len(v)−1 or not after the one before it, or a non-finite value, which
    stops the block before that row. With ``ahead`` (rows lying anywhere in their
    arrays) it asks the CPU for each row :data:`ROWS_AHEAD` rows before it reads it."""
    need_loss = on[_LOSS]
    hinge = on[_HINGE]
    dying_v = on[_DYING_V] and not QUIET  # noqa: F821 (a constant set per copy)
    log = _unpack_slots(states)
    s = F[SCALE]
    rnd = I[ROUNDS]
    age = I[AGE]
    width = v.shape[0]
    rows = y.shape[0]
    for t in range(y.shape[0]):
        if ahead and t + ROWS_AHEAD < y.shape[0]:
            prefetch_span(data, begins[t + ROWS_AHEAD], ends[t + ROWS_AHEAD])
            prefetch_span(indices, begins[t + ROWS_AHEAD], ends[t + ROWS_AHEAD])
        yt = y[t]
        start = begins[t]
        nnz = ends[t] - start
        dot = 0.0
        sound = yt == 1.0 or yt == -1.0
        last = -1  # the row's column indices must increase, from 0 to below width
        for k in range(start, start + nnz):
            j = indices[k]
            if numba.uint64(j - last - 1) >= numba.uint64(width - last - 1):  # j <= last or j >= width
                sound = False
                break
            dot += v[numba.uint64(j)] * data[k]  # unsigned: no wrap-around of a negative index
            last = j
        # the input checks, nearly free: the label, the column indices as they are read,
        # and a non-finite value makes the score non-finite (the values are read again
        # only then, for it may be an overflow)
        if not (sound and (math.isfinite(dot) or _finite_row(data, start, nnz))):
            rows = t
            break
        p = s * dot
        if running:
            total += 0.0 if yt * p > 0.0 else 1.0
            out[t] = total
        else:
            out[t] = p
        rnd += 1
        age += 1
        loss = 0.0
        if need_loss:
            if hinge:
                loss = max(0.0, 1.0 - yt * p)
            else:
                loss = 1.0 if yt * p <= 0.0 else 0.0
        _feed("round", s, rnd, age, loss)
        # --- the learner's update ------------------------------------------------------
        F[SCALE] = s
        # the quiet copy feeds no part the change: its step moves v itself, and `updated`
        # then says whether v changed
        updated, s_new = step(P, A, F, v, indices, data, start, nnz, yt, p, dot, rnd, delta, QUIET)  # noqa: F821 (set per copy)
        changed = s_new != s or (QUIET and updated)  # noqa: F821
        if not (updated or changed):
            continue
        # the coordinates of v left to move (none: the scale alone, or moved by the step)
        moved = nnz if updated and not QUIET else 0  # noqa: F821
        if dying_v:
            # the parts see the dying hypothesis s·v: v changes after they did
            for j in range(moved):
                old = v[indices[start + j]]
                new = old + delta[j]
                if new != old:
                    changed = True
                delta[j] = new
            if changed:
                _feed("death", s, v, age, live_index(log))
            for j in range(moved):
                p_j = indices[start + j]
                old = v[p_j]
                v[p_j] = delta[j]
                delta[j] -= old
        else:
            for j in range(moved):
                p_j = indices[start + j]
                old = v[p_j]
                new = old + delta[j]
                v[p_j] = new
                delta[j] = new - old
                if new != old:
                    changed = True
            if changed:
                _feed("death", s, v, age, live_index(log))
        if not changed:
            continue
        # the live hypothesis s·v (v before the change) died after `age` rounds
        _feed("change", indices, start, delta, moved, s_new, age)
        s = s_new
        age = 0
        if not FOLD_LOW <= abs(s) <= FOLD_HIGH:
            phi = s
            vnorm2 = 0.0
            for i in range(v.shape[0]):
                v[i] *= phi
                vnorm2 += v[i] * v[i]
            F[NORM2] = vnorm2
            F[PHI] *= phi
            s = 1.0
            _feed("fold", phi, v)
    F[SCALE] = s
    I[ROUNDS] = rnd
    I[AGE] = age
    return rows


def _sources(module_file: str) -> list[Path]:
    """Every source a learner's driver is built from: this package, the conversions
    package, the modules of the fed parts and the learner's module."""
    files = set(Path(__file__).parent.glob("*.py")) | set(Path(dolb.conversions.__file__).parent.glob("*.py"))
    files |= {Path(sys.modules[part.__module__].__file__) for part in FED}
    files.add(Path(module_file))
    return sorted(files)


def _prune_cache(name: str, current: str) -> None:
    """Remove Numba cache files of this learner's drivers built from older sources
    (best effort, in the default cache folder)."""
    folder = Path(__file__).parent / "__pycache__"
    pattern = re.compile(rf"driver\._drive_{re.escape(name)}_[0-9a-f]{{12}}-.*\.nb[ci]")
    for path in folder.glob(f"driver._drive_{name}_*.nb[ci]"):
        if pattern.fullmatch(path.name) and not path.name.startswith(f"driver.{current}-"):
            with contextlib.suppress(OSError):  # another process got there first, or a read-only install
                path.unlink()


def compile_driver(step, name: str, module_file: str, quiet: bool = False):
    """A cached njit copy of :func:`_drive` calling ``step``, for the learner ``name``
    defined in ``module_file``; its quiet copy (no feeds) when ``quiet``."""
    digest = hashlib.sha1()
    for path in _sources(module_file):
        digest.update(path.read_bytes())
    name = f"{name}_quiet" if quiet else name
    qualname = f"_drive_{name}_{digest.hexdigest()[:12]}"
    _prune_cache(name, qualname)
    source, hooks = _driver_source(quiet)
    namespace = {**_drive.__globals__, **hooks, "step": step, "QUIET": quiet}
    exec(compile(source, __file__, "exec"), namespace)  # this module's own _drive, expanded
    fn = namespace["_drive"]
    fn.__name__ = f"_drive_{name}"
    fn.__qualname__ = qualname
    fn.__doc__ = _drive.__doc__
    return numba.njit(cache=True, nogil=True, _nrt=False)(fn)
