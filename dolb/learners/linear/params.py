"""Named step parameters: the record a linear learner's compiled step reads its
parameters from (``P.alpha``, ``P.loss == HINGE``), built from the learner's ``params``
declaration.

The record is a named tuple (Numba passes it by value: the step's parameters are
constants in registers); a string parameter is stored as the position of its value in
its ``choices``, which a step compares with named integer constants
(:func:`choice_codes`).
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from dolb.learners.base import Param


def choice_codes(choices: tuple[str, ...], *names: str) -> tuple[int, ...]:
    """The code of each of ``names`` among ``choices``: the integer constants a step
    compares a string parameter with. Every choice must be named once.

    >>> HINGE, LOGISTIC = choice_codes(("hinge", "logistic"), "hinge", "logistic")
    >>> HINGE, LOGISTIC
    (0, 1)
    """
    if sorted(names) != sorted(choices):
        raise TypeError(f"name every one of the choices {choices} once, got {names}")
    return tuple(choices.index(name) for name in names)


def step_params_class(owner: type, params: dict[str, Param], derived: tuple[str, ...]) -> type:
    """The named tuple class ``<owner>.StepParams``: a field per declared parameter, then
    one per ``derived`` value. Its qualified name makes it picklable by reference (Numba's
    cache pickles the driver's signature, learners are pickled with their record)."""
    for name, param in params.items():
        if param.kind is str and param.choices is None:
            raise TypeError(f"{owner.__name__}: string parameter {name!r} needs choices to reach the step")
    record = namedtuple("StepParams", [*params, *derived], module=owner.__module__)
    record.__qualname__ = f"{owner.__qualname__}.StepParams"
    return record


def step_value(param: Param, value: Any) -> Any:
    """A checked parameter value as the step reads it (a string choice as its code).

    >>> step_value(Param("pa1", str, choices=("pa", "pa1")), "pa1")
    1
    """
    return param.choices.index(value) if param.kind is str else value
