"""The optional dependencies: which feature needs each, and which extra of dolb installs it.

``import dolb`` needs none of them: each is imported where its feature runs. A feature
asked for without its package stops before anything runs, with one line naming the extra
(:class:`~dolb.errors.MissingExtra`, exit 2 on the command line).

Examples
--------
>>> missing(Extra("a-package", "dolb_no_such_module", "example"), "the feature")
"the feature needs a-package, which is not installed: pip install 'dolb[example]'"
>>> missing(Extra("numpy", "numpy", "none"), "anything") is None
True
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from dolb.errors import MissingExtra


@dataclass(frozen=True)
class Extra:
    """An optional package: its name on PyPI, its module, the extra that installs it."""

    package: str
    module: str
    extra: str


POSTHOCS = Extra("scikit-posthocs", "scikit_posthocs", "stats")
"""The ranking report's post-hoc tests and critical-difference diagram (it brings
statsmodels and seaborn)."""
OSQP = Extra("osqp", "osqp", "batch-mr")
"""The quadratic program of the batch manifold regularisation learner, ``batch_mr``."""
BOKEH = Extra("bokeh", "bokeh", "dashboard")
"""Dask's dashboard and performance report (``--dashboard``, ``--performance-report``)."""


def missing(extra: Extra, feature: str) -> str | None:
    """One line saying that ``feature`` needs ``extra``'s package and how to install it,
    when the package cannot be found; None when it can."""
    if importlib.util.find_spec(extra.module) is not None:
        return None
    return f"{feature} needs {extra.package}, which is not installed: pip install 'dolb[{extra.extra}]'"


def require(extra: Extra, feature: str) -> None:
    """Raise :class:`~dolb.errors.MissingExtra` when ``feature`` cannot run for want of
    ``extra``'s package."""
    message = missing(extra, feature)
    if message is not None:
        raise MissingExtra(message)
