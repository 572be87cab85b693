"""``python -m benchmarks MODE [options]``: one mode of :data:`benchmarks.modes.MODES`,
run from the repository's root; ``--list`` lists them. A mistake the user can correct
is one line, exit 2."""

from __future__ import annotations

import shlex
import sys

from benchmarks.modes import MODES
from dolb.bench.modes import add_modes, run_mode
from dolb.cli_arguments import OneLineParser
from dolb.console import configure_logging, error_line


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m benchmarks``; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = OneLineParser(prog="python -m benchmarks", description="dolb measuring itself; records go "
                                     "to benchmarks/records with --record benchmarks/records")
    add_modes(parser, MODES, default="")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a mistake (already reported)
        return exc.code if isinstance(exc.code, int) else 2
    configure_logging(0)
    try:
        return run_mode(args, shlex.join(["python", "-m", "benchmarks", *argv]), MODES)
    except Exception as exc:  # a mistake or an OSError: one line; anything else is a bug, raised
        print(f"benchmarks: error: {error_line(exc, args.mode)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
