"""What the learner registry holds, for people: ``dolb learners`` and its Markdown table.

Examples
--------
>>> from dolb.learners import learner_class
>>> print(describe_learner(learner_class("pa")).splitlines()[0][:60])
pa (binary): Passive-Aggressive learning (Crammer, Dekel, Ke
"""

from __future__ import annotations

from typing import Any

from dolb.learners.base import LEARNERS, OnlineLearner, Param


def summary_line(cls: type[OnlineLearner]) -> str:
    """The first paragraph of a learner's docstring (its name and reference), one line."""
    first = (cls.__doc__ or "").strip().split("\n\n")[0]
    return " ".join(first.split()).rstrip(":")


def bounds(param: Param) -> str:
    """A parameter's allowed values as text: ``"> 0"``, ``"[0, 1]"``, ``"hinge | logistic"``.

    Examples
    --------
    >>> bounds(Param(0.1, above=0.0)), bounds(Param(0.5, low=0.0, high=1.0)), bounds(Param(1, int, low=1))
    ('> 0', '[0, 1]', '>= 1')
    """
    if param.choices:
        return " | ".join(param.choices)
    parts = []
    if param.above is not None:
        parts.append(f"> {param.above:g}")
    if param.low is not None and param.high is not None:
        return f"[{param.low:g}, {param.high:g}]"
    if param.low is not None:
        parts.append(f">= {param.low:g}")
    if param.high is not None:
        parts.append(f"<= {param.high:g}")
    return ", ".join(parts)


def learner_record(cls: type[OnlineLearner]) -> dict[str, Any]:
    """A learner's registry entry as JSON-ready data."""
    return {
        "name": cls.name,
        "task": cls.task,
        "summary": summary_line(cls),
        "conversions": list(cls.conversions_supported),
        "complexity_param": cls.complexity_param,
        "params": [
            {"name": name, "kind": param.kind.__name__, "default": param.default,
             "allowed": bounds(param), "doc": param.doc}
            for name, param in cls.params.items()
        ],
    }


def describe_learner(cls: type[OnlineLearner]) -> str:
    """A learner's registry entry as text: a heading line, then one line per parameter."""
    record = learner_record(cls)
    lines = [f"{cls.name} ({cls.task}): {record['summary']}",
             f"  conversions: {', '.join(record['conversions'])}"]
    if cls.complexity_param:
        lines.append(f"  complexity sets: {cls.complexity_param}")
    for param in record["params"]:
        allowed = f" {param['allowed']}" if param["allowed"] else ""
        lines.append(f"  {param['name']} ({param['kind']}{allowed}, default {param['default']!r}): {param['doc']}")
    if not record["params"]:
        lines.append("  no parameters")
    return "\n".join(lines)


def markdown_table() -> str:
    """A Markdown table of every registered learner: name, task, reference, parameters."""
    rows = ["| learner | task | what it is | parameters |", "| --- | --- | --- | --- |"]
    for name, cls in LEARNERS.items():
        params = ", ".join(f"`{p}`" for p in cls.params) or "none"
        rows.append(f"| `{name}` | {cls.task} | {summary_line(cls)} | {params} |")
    return "\n".join(rows)
