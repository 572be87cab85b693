"""The types of the ``dolb`` command's arguments: each turns a mistake into argparse's
one line (``dolb run: error: argument --workers: expected at least 1, got 0``); a file
to write is checked by :func:`dolb.options.writable_file`."""

from __future__ import annotations

import argparse


class OneLineParser(argparse.ArgumentParser):
    """argparse, with a mistake on the command line reported as one line, exit 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def positive_int(text: str) -> int:
    """An argument that must be a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


def positive_float(text: str) -> float:
    """An argument that must be a finite number above 0."""
    value = non_negative(text)
    if value == 0.0:
        raise argparse.ArgumentTypeError(f"expected a number above 0, got {text}")
    return value


def _number(text: str) -> float:
    """``text`` as a float; an argparse error when it is not a number."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def non_negative(text: str) -> float:
    """An argument that must be a finite number of at least 0."""
    value = _number(text)
    if not 0.0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number of at least 0, got {text}")
    return value


def fraction(text: str) -> float:
    """An argument that must be a number strictly between 0 and 1."""
    value = _number(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text}")
    return value


def lasting_folder(text: str) -> str:
    """A result folder a command writes: not ``memory://``, whose files would vanish
    with this process before anyone could read them (``dolb.run`` takes it)."""
    if text.startswith("memory://"):
        raise argparse.ArgumentTypeError(
            f"{text}: results in memory vanish when dolb exits; give a folder or a URL of lasting storage"
        )
    return text
