"""The learners reference, as Markdown pages generated from the registry.

One page per learner of dolb's own (:func:`own_learners`; a plugin's learners, which
``dolb learners`` lists with the rest, are documented by their package, so that this
site is the same whatever is installed beside dolb): the paper it comes from (its
docstring's first paragraph), its parameters as declared (kind, default, allowed values, meaning), the
update (the rest of its docstring) and its example, the docstring's ``Examples``
section, which ``pytest --doctest-modules`` runs. The documentation site's build adds
:func:`learner_pages` under ``reference/learners/``.

Examples
--------
>>> print(markdown("``w`` is :class:`~dolb.learners.base.Param`'s x_t * 2 < 3"))
`w` is `Param`'s x\\_t \\* 2 &lt; 3
>>> pages = learner_pages()
>>> pages["reference/learners/perceptron.md"].splitlines()[0]
'# perceptron'
"""

from __future__ import annotations

import inspect
import json
import re

from dolb.learners.base import LEARNERS, OnlineLearner
from dolb.learners.listing import bounds, summary_line

_CODE = re.compile(r"``(.+?)``|:[a-z]+:`([^`]+?)`", re.S)
"""Inline code in a docstring: ``code`` or a Sphinx role (:class:`~a.b.Name` shows Name)."""
_SECTION = re.compile(r"^(\w[\w ]*)\n-{3,}$", re.M)
"""A numpydoc section heading: its title, then a line of dashes."""


def _escaped(text: str) -> str:
    """Prose with the characters Markdown would read as markup escaped."""
    text = text.replace("\\", "\\\\").replace("&", "&amp;").replace("<", "&lt;")
    return re.sub(r"([*_\[\]])", r"\\\1", text)


def toml(value: object) -> str:
    """A default value as a pipeline file writes it, in code style: ``true``, ``"hinge"``,
    ``[3]``; None (unset) as "not set".

    Examples
    --------
    >>> toml(True), toml("npz"), toml((0.9, 1)), toml(None)
    ('`true`', '`"npz"`', '`[0.9, 1]`', 'not set')
    """
    if value is None:
        return "not set"
    return f"`{_toml(value)}`"


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    return repr(value)


def _target(role: str) -> str:
    """What a Sphinx cross-reference shows: ``~a.b.Name`` and ``.b.Name`` as ``Name``."""
    return role.rsplit(".", 1)[-1] if role.startswith(("~", ".")) else role


def markdown(text: str) -> str:
    """Docstring prose as Markdown: inline code kept as code, the rest escaped; a
    paragraph whose lines are all indented stays a code block."""
    paragraphs = []
    for paragraph in text.strip("\n").split("\n\n"):
        lines = paragraph.split("\n")
        if all(line.startswith("    ") for line in lines):
            paragraphs.append(paragraph)
            continue
        out, end = [], 0
        for match in _CODE.finditer(paragraph):
            out += [_escaped(paragraph[end:match.start()]), f"`{match[1] or _target(match[2])}`"]
            end = match.end()
        out.append(_escaped(paragraph[end:]))
        paragraphs.append("".join(out).replace("::\n", ":\n").removesuffix("::"))
    return "\n\n".join(paragraphs)


def docstring_parts(cls: type) -> tuple[str, dict[str, str]]:
    """A class docstring as (the text before its first section, {section: text})."""
    doc = inspect.cleandoc(cls.__doc__ or "")
    pieces = _SECTION.split(doc)
    sections = {title: body.strip("\n") for title, body in zip(pieces[1::2], pieces[2::2])}
    return pieces[0].strip(), sections


def example(cls: type[OnlineLearner]) -> str:
    """The learner's ``Examples`` section as a Markdown code block of its doctest (prose
    between examples as text), its imports written out: a doctest runs in the
    namespace of the learner's module."""
    _, sections = docstring_parts(cls)
    text = sections.get("Examples", "")
    if ">>>" not in text:
        raise ValueError(f"learner {cls.name!r} has no doctested example in its docstring")
    imports = [f">>> from {cls.__module__} import {cls.__name__}"]
    if "np." in text and "import numpy as np" not in text:
        imports.insert(0, ">>> import numpy as np")
    out = []
    for block in text.split("\n\n"):
        if not block.lstrip().startswith(">>>"):
            out.append(markdown(block))
        elif out and out[-1].startswith("```pycon"):
            out[-1] = out[-1].removesuffix("\n```") + "\n" + block + "\n```"
        else:
            out.append("\n".join(["```pycon", *imports, block, "```"]))
            imports = []
    return "\n\n".join(out)


def parameter_table(cls: type[OnlineLearner]) -> str:
    """The learner's declared parameters as a Markdown table."""
    if not cls.params:
        return "No parameters."
    rows = ["| parameter | kind | default | allowed | meaning |", "| --- | --- | --- | --- | --- |"]
    for name, param in cls.params.items():
        cells = [f"`{name}`", param.kind.__name__, toml(param.default), bounds(param), _escaped(param.doc)]
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows)


def learner_page(cls: type[OnlineLearner]) -> str:
    """One learner's reference page."""
    body, _ = docstring_parts(cls)
    update = body.split("\n\n", 1)[1] if "\n\n" in body else ""
    facts = [f"**task** {cls.task}", f"**conversions** {', '.join(cls.conversions_supported)}"]
    if cls.complexity_param:
        facts.append(f"**complexity sets** `{cls.complexity_param}`")
    path = cls.__module__.replace(".", "/") + ".py"
    return "\n\n".join([
        f"# {cls.name}", markdown(summary_line(cls)), " · ".join(facts),
        f"Source: `{path}` · [all learners](index.md)",
        "## Parameters", parameter_table(cls),
        "## The update", markdown(update) if update else "As the paper states it (above).",
        "## Example", f"The example of `{cls.__name__}`'s docstring, run by `pytest --doctest-modules` "
        f"(`{path}`), so it stays true:", example(cls), "",
    ])


def own_learners() -> dict[str, type[OnlineLearner]]:
    """The registered learners defined in dolb's own modules, by name, sorted.

    Examples
    --------
    >>> "perceptron" in own_learners() and all(c.__module__.startswith("dolb.") for c in own_learners().values())
    True
    """
    return {name: cls for name, cls in LEARNERS.items() if cls.__module__.split(".")[0] == "dolb"}


def learners_index() -> str:
    """The page that lists every learner of dolb's own, each linked to its page."""
    own = own_learners()
    rows = ["# Learners", "", f"dolb has {len(own)} learners (`dolb learners` lists them, and those of the plugins "
            "installed). How to add one: [Adding a learner](../../design/extending.md#a-learner); in a package of "
            "your own: [Your own learner](../../guide/own-learner.md).", "",
            "| learner | task | what it is |", "| --- | --- | --- |"]
    for name, cls in own.items():
        summary = markdown(summary_line(cls)).replace("|", "\\|")
        rows.append(f"| [{name}]({name}.md) | {cls.task} | {summary} |")
    return "\n".join(rows) + "\n"


def learner_pages() -> dict[str, str]:
    """``{path under docs/: Markdown}``: the index and one page per learner of dolb's own."""
    pages = {"reference/learners/index.md": learners_index()}
    for name, cls in own_learners().items():
        pages[f"reference/learners/{name}.md"] = learner_page(cls)
    return pages
