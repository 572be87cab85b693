"""TOML files checked by pydantic models, every mistake one line naming file and key.

:class:`Table` models describe the files users write (pipeline and cluster files):
strict, frozen pydantic v2 models that refuse unknown keys with a did-you-mean hint.
:func:`validate` turns pydantic's ``ValidationError`` into one
:class:`~dolb.errors.ConfigError` line; a validator raises :func:`problem` for a rule of
its own. Why pydantic: docs/design/pipelines.md.

Examples
--------
>>> class Server(Table):
...     host: str
...     port: PositiveInt = 8786
>>> validate(Server, {"host": "a", "port": 80}, "s.toml")
Server(host='a', port=80)
>>> validate(Server, {"host": "a", "prot": 80}, "s.toml")
Traceback (most recent call last):
...
dolb.errors.ConfigError: s.toml: prot: unknown key (did you mean 'port'?)
>>> validate(Server, {"host": "a", "port": "80"}, "s.toml")
Traceback (most recent call last):
...
dolb.errors.ConfigError: s.toml: port: expected a whole number, got '80'
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    FilePath,
    Strict,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from dolb.errors import ConfigError
from dolb.registry import did_you_mean

M = TypeVar("M", bound=BaseModel)

MAX_REPORTED = 3
"""Errors named in one message; the rest are counted."""
MAX_LISTED = 12
"""Allowed keys listed after an unknown one, at most (when none is close)."""

_TYPE_PROBLEMS = {
    "missing": "missing required key",
    "extra_forbidden": "unknown key",
    "int_type": "expected a whole number, got {input}",
    "int_parsing": "expected a whole number, got {input}",
    "int_from_float": "expected a whole number, got {input}",
    "float_type": "expected a number, got {input}",
    "float_parsing": "expected a number, got {input}",
    "finite_number": "expected a finite number, got {input}",
    "string_type": "expected a string, got {input}",
    "bool_type": "expected true or false, got {input}",
    "list_type": "expected a list, got {input}",
    "tuple_type": "expected a list, got {input}",
    "dict_type": "expected a table, got {input}",
    "model_type": "expected a table, got {input}",
    "model_attributes_type": "expected a table, got {input}",
    "too_short": "must not be empty",
}
"""Our phrasing of pydantic's built-in error types."""

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def problem(message: str, *at: str | int) -> PydanticCustomError:
    """An error for a validator to raise: ``message`` (ours, as written) at the keys
    ``at`` below the field or model being validated (a model validator can point at
    ``learners[2].params.eta``)."""
    return PydanticCustomError("dolb", "{message}", {"message": message, "at": at})


def shown(value: Any) -> str:
    """``value`` as a message shows it: booleans as TOML writes them, a table as
    "a table", anything long cut short."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict):
        return "a table"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def key_path(loc: Iterable[str | int]) -> str:
    """A pydantic location as a TOML key path: ``experiments.t.learners[0].eta``.

    Examples
    --------
    >>> key_path(("experiments", "a b", "learners", 0, "eta"))
    'experiments."a b".learners[0].eta'
    """
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            key = part if _BARE_KEY.fullmatch(part) else json.dumps(part)
            path += f".{key}" if path else key
    return path


def unknown_key(
    key: str, allowed: Iterable[str], what: str = "unknown key", at: tuple[str | int, ...] = ()
) -> PydanticCustomError:
    """The error for an unknown ``key`` of the table at ``at`` (``what`` says what it
    is not): the closest allowed key, or all of them if they are few."""
    allowed = list(allowed)
    hint = did_you_mean(key, allowed)
    if not hint and len(allowed) <= MAX_LISTED:
        hint = f" (allowed: {', '.join(allowed)})"
    return problem(f"{what}{hint}", *at, key)


def _describe(error: dict) -> str:
    """``key.path: problem`` for one pydantic error."""
    loc = tuple(error["loc"])
    if error["type"] == "dolb":
        message = error["ctx"]["message"]
        loc += tuple(error["ctx"]["at"])
    elif error["type"] in _TYPE_PROBLEMS:
        message = _TYPE_PROBLEMS[error["type"]].format(input=shown(error.get("input")))
    else:
        message = error["msg"].removeprefix("Value error, ")
    where = key_path(loc)
    return f"{where}: {message}" if where else message


def validate(model: type[M], raw: Any, file: str | Path) -> M:
    """``model`` validated from ``raw`` (a parsed file), or ConfigError naming ``file``
    and the key path of each of the first few errors, on one line, such as
    ``pipe.toml: experiments.t.learners[0].params.eta: must be above 0.0, got -1``."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        message = "; ".join(_describe(e) for e in errors[:MAX_REPORTED])
        if len(errors) > MAX_REPORTED:
            message += f"; and {len(errors) - MAX_REPORTED} more"
        raise ConfigError(f"{file}: {message}") from None


def read_toml(path: str | Path, what: str, text: str | None = None) -> dict[str, Any]:
    """The parsed TOML file at ``path`` (or its ``text``); ConfigError if it cannot
    be read, is not UTF-8 or is not TOML. ``what`` names the file in messages
    ("pipeline file")."""
    if text is None:
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read {what} ({exc.strerror})") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise ConfigError(
                f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); save the {what} as UTF-8"
            ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None


class Table(BaseModel):
    """A TOML table: strict types (``"3"`` is not 3, ``true`` is not 1), unknown keys
    refused with a did-you-mean hint, frozen."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            allowed = cls.allowed_keys(data)
            for key in data:
                if key not in allowed:
                    raise unknown_key(key, allowed, cls.unknown_key_words(data))
        return data

    @classmethod
    def allowed_keys(cls, data: dict) -> tuple[str, ...]:
        """The keys the table ``data`` may hold (by default: the model's fields)."""
        return tuple(cls.model_fields)

    @classmethod
    def unknown_key_words(cls, data: dict) -> str:
        """What the message about an unknown key of ``data`` says before the hint."""
        return "unknown key"


def _positive(value: int) -> int:
    """At least 1."""
    if value < 1:
        raise problem(f"expected a positive whole number, got {value}")
    return value


def _not_negative(value: int) -> int:
    """At least 0."""
    if value < 0:
        raise problem(f"must not be negative, got {value}")
    return value


def _choice(choices: tuple[str, ...]):
    def check(value: str) -> str:
        if value not in choices:
            raise problem(f"{value!r} is not one of {', '.join(choices)}{did_you_mean(value, choices)}")
        return value

    check.__doc__ = f"One of {', '.join(choices)}."  # what the pipeline reference shows
    return check


def _listed(value: Any) -> Any:
    """A single string is a list of one."""
    return [value] if isinstance(value, str) else value


def _names(choices: tuple[str, ...] | None):
    def check(values: list[str]) -> tuple[str, ...]:
        if not values:
            raise problem("must not be empty")
        for i, value in enumerate(values):
            if choices is not None and value not in choices:
                raise problem(f"{value!r} is not one of {', '.join(choices)}{did_you_mean(value, choices)}", i)
        return tuple(values)

    check.__doc__ = f"Not empty; each one of {', '.join(choices)}." if choices else "Not empty."
    return check


PositiveInt = Annotated[int, AfterValidator(_positive)]
"""A whole number of at least 1 (not a boolean, not a float)."""
NonNegativeInt = Annotated[int, AfterValidator(_not_negative)]
"""A whole number of at least 0 (not a boolean, not a float)."""
ExistingFile = Annotated[FilePath, Strict(False)]
"""The path (a string) of a file that exists."""


def one_of(choices: tuple[str, ...]) -> Any:
    """The type of a string that must be one of ``choices``."""
    return Annotated[str, AfterValidator(_choice(choices))]


def names(choices: tuple[str, ...] | None = None) -> Any:
    """The type of a non-empty list of strings (or one string), each one of
    ``choices`` if given; validated to a tuple."""
    return Annotated[list[str], BeforeValidator(_listed), AfterValidator(_names(choices))]
