"""The pipeline file's reference, as Markdown, generated from its schema and registries.

Every key of every table comes from the pydantic models of :mod:`dolb.experiment.schema`
(its type, its default, the rules its validators state in their docstrings); the
names a key may take (metrics, conversions, report kinds, generators and importers with
their parameters) come from their registries. The documentation site's build renders
:func:`pipeline_reference` as ``reference/pipeline.md``.

Examples
--------
>>> from dolb.experiment.schema import Split
>>> print(key_table(Split).splitlines()[2])
| `scheme` | string | required | One of sequences, holdout, given. |
"""

from __future__ import annotations

import inspect
import types
import typing
from typing import Annotated, Any

from pydantic import BaseModel

from dolb.conversions import REGISTRY as CONVERSIONS
from dolb.data import GENERATORS, IMPORTERS
from dolb.data.params import REQUIRED, Choice, FilePath, GenParam, Members, Names, Text, Value
from dolb.evaluation.metrics import METRICS
from dolb.experiment import schema, schema_tuning
from dolb.learners.pages import markdown, toml
from dolb.results.kinds import REPORTS

TABLES = (
    ("[pipeline]", schema.Head),
    ("[datasets.NAME]", schema.Dataset),
    ("[experiments.NAME]", schema.Experiment),
    ("split = {...} of an experiment", schema.Split),
    ("learners = [{...}, ...] of an experiment", schema.Learner),
    ("search = { NAME = ..., ... } of a learner entry", schema_tuning.Dimension),
    ("tuning = {...} of an experiment or a learner entry", schema_tuning.Tuning),
    ("[[reports]]", schema.Report),
    ("[execution]", schema.Execution),
)
"""The tables of a pipeline file, in the order the reference shows them."""

_TYPES = {str: "string", int: "whole number", float: "number", bool: "true or false", Any: "varies"}


def _first_line(obj: Any) -> str:
    """The first paragraph of ``obj``'s docstring on one line, or ``""``."""
    doc = inspect.getdoc(obj) or ""
    return markdown(" ".join(doc.split("\n\n")[0].split())).replace("|", "\\|")


def _unwrapped(annotation: Any) -> tuple[Any, list[Any]]:
    """``annotation`` without ``Annotated`` and ``| None``, with the validators found."""
    found: list[Any] = []
    while True:
        if typing.get_origin(annotation) is Annotated:
            found.extend(annotation.__metadata__)
            annotation = annotation.__origin__
        elif typing.get_origin(annotation) in (typing.Union, types.UnionType):
            annotation = next(arg for arg in typing.get_args(annotation) if arg is not type(None))
        else:
            return annotation, found


def type_name(annotation: Any, listed: bool = False) -> str:
    """A key's type in words: ``"whole number"``, ``"list of strings"``, ``"table"``."""
    annotation, _ = _unwrapped(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "table"
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is list:
        inner = type_name(args[0])
        plural = {"table": "tables", "varies": "values"}.get(inner, f"{inner}s")
        return f"{inner} or list of {plural}" if listed else f"list of {plural}"
    if origin is dict:
        return "tables, one per name" if type_name(args[1]) == "table" else "table"
    return _TYPES.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _rules(metadata: list[Any]) -> list[str]:
    """What a key's validators allow, from their docstrings; a minimum length too."""
    rules = []
    for item in metadata:
        if getattr(item, "min_length", None):
            rules.append("Not empty.")
        func = getattr(item, "func", None)
        if func is not None and _first_line(func) and _first_line(func) not in rules:
            rules.append(_first_line(func))
    return rules


def _default(field: Any) -> str:
    if field.is_required():
        return "required"
    default = field.default
    if isinstance(default, BaseModel | dict | list) and not default:
        return "none"
    if isinstance(default, BaseModel):
        return "its keys' defaults"
    if isinstance(default, tuple) and default[0] == "log":  # checkpoints, as the validator returns them
        return f"`{{ log = {default[1]} }}`"
    return toml(default)


def key_table(model: type[BaseModel]) -> str:
    """A Markdown table of ``model``'s keys: key, type, default, what is allowed."""
    rows = ["| key | type | default | allowed |", "| --- | --- | --- | --- |"]
    for name, field in model.model_fields.items():
        _, inner = _unwrapped(field.annotation)
        metadata = list(field.metadata) + inner
        listed = any(getattr(item, "func", None) is not None and item.func.__name__ == "_listed" for item in metadata)
        rules = " ".join(_rules(metadata))
        rows.append(f"| `{name}` | {type_name(field.annotation, listed)} | {_default(field)} | {rules} |")
    return "\n".join(rows)


def model_rules(model: type[BaseModel]) -> list[str]:
    """The rules between ``model``'s keys, from its model validators' docstrings."""
    validators = model.__pydantic_decorators__.model_validators.values()
    return [_first_line(v.func) for v in validators if _first_line(v.func)]


def _source_param(param: Any) -> tuple[str, str, str]:
    """A generator's or importer's parameter as (type, default, allowed)."""
    default = "required" if param.default is REQUIRED else toml(param.default)
    if isinstance(param, GenParam):
        high = "" if param.high == float("inf") else f", at most {param.high:g}"
        return type_name(param.kind), default, f"at least {param.low:g}{high}"
    if isinstance(param, Choice):
        return "one of", default, " \\| ".join(toml(c) for c in param.choices)
    if isinstance(param, Members):
        return "list", default, f"{param._size()} of " + ", ".join(str(c) for c in param.choices)
    if isinstance(param, FilePath):
        return "path", default, "a file or folder, relative to the pipeline file"
    if isinstance(param, Text):
        return "str", default, "a name"
    if isinstance(param, Names):
        return "list", default, "names, at least 1"
    if isinstance(param, Value):
        return "label", default, "text or a number"
    raise TypeError(f"no description of {type(param).__name__}")


def source_section(registry: Any) -> str:
    """Every entry of a generator or importer registry: reference, parts, parameters."""
    out = []
    for name in registry.names():
        entry = registry[name]
        out += [f"### {name}", "",
                f"{markdown(entry.reference)}. Parts: {', '.join(entry.parts)}.", "",
                "| parameter | type | default | allowed | meaning |", "| --- | --- | --- | --- | --- |"]
        for key, param in entry.params.items():
            kind, default, allowed = _source_param(param)
            out.append(f"| `{key}` | {kind} | {default} | {allowed} | {markdown(param.doc)} |")
        out.append("")
    return "\n".join(out)


def names_section() -> str:
    """The names the keys ``metrics``, ``conversions`` and ``kind`` take."""
    out = ["## Metrics", "", "| metric | tasks | what it is |", "| --- | --- | --- |"]
    out += [f"| `{name}` | {', '.join(m.tasks)} | {m.doc} |" for name, m in METRICS.items()]
    out += ["", "## Conversions", "", "| conversion | what it is |", "| --- | --- |"]
    out += [f"| `{name}` | {_first_line(inspect.getmodule(c))} |" for name, c in CONVERSIONS.items()]
    out += ["", "## Report kinds", "", "| kind | what it shows |", "| --- | --- |"]
    out += [f"| `{name}` | {kind.doc} |" for name, kind in REPORTS.items()]
    return "\n".join(out)


def pipeline_reference() -> str:
    """The whole reference page, in Markdown."""
    out = ["# Pipeline file reference", "",
           "Generated from `dolb/experiment/schema.py` and the registries when the site is built. "
           "How to write a pipeline: [the guide](../guide/pipelines.md).", ""]
    for title, model in TABLES:
        out += [f"## {title}", "", _first_line(model), "", key_table(model), ""]
        out += [f"- {rule}" for rule in model_rules(model)]
        out.append("")
    out += [names_section(), "", "## Generators", "", source_section(GENERATORS),
            "## Importers", "", source_section(IMPORTERS)]
    return "\n".join(out)
