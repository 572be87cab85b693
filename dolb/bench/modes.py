"""The modes of ``dolb bench``: for each, what it measures, the kinds of record it writes
(``--record DIR``: ``DIR/<kind>/``, :mod:`dolb.bench.records`), its options and the
function that runs it.

``dolb bench MODE [options]`` runs one mode and ``dolb bench --list`` lists them. Without
a mode ``dolb bench [options]`` is ``dolb bench throughput [options]`` (:func:`with_mode`).
The project's measurements of itself are the modes of ``python -m benchmarks`` (the
repository's ``benchmarks/``), which reuse this machinery.

A mode's run function takes the parsed options, among them ``command_line`` (the command
as typed, for the record) and ``record`` (the records folder, already checked, or None),
and returns the exit status; its module is imported only when it runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module

from dolb.cli_arguments import positive_int

SHARED_DATA = "../shared/data"
"""The real data sets beside the checkout, where the benches look by default."""


@dataclass(frozen=True)
class Mode:
    """One mode of ``dolb bench``.

    Attributes
    ----------
    summary : str
        What it measures, in one line (``dolb bench --list``, ``--help``).
    records : tuple of str
        The kinds of record it writes with ``--record DIR``.
    arguments : callable
        Adds its options to its ``argparse`` parser.
    run : str
        ``"module:function"``: the function that runs it, imported when it runs.
    """

    summary: str
    records: tuple[str, ...]
    arguments: Callable[[argparse.ArgumentParser], None]
    run: str

    def runner(self) -> Callable[[argparse.Namespace], int]:
        """The function that runs the mode."""
        module, function = self.run.split(":")
        return getattr(import_module(module), function)


def _throughput(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="one JSON object per measurement")
    parser.add_argument("--quick", action="store_true", help="a tenth of the stream, for a quick look")
    parser.add_argument("--repeat", type=positive_int, default=7,
                        help="interleaved repeats of every measurement, all kept; dolb compare judges 5 or more "
                             "(default 7)")
    parser.add_argument("--only", help="comma-separated learners (default: all)")
    parser.add_argument("--no-zarr", action="store_true", help="from memory only")


def _stream(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="one JSON list: the rows, then the floors")
    parser.add_argument("--repeat", type=positive_int, default=7, help="repeats of every variant (at least 7)")
    parser.add_argument("--only", help="comma-separated sparse linear learners (default: all five)")
    parser.add_argument("--rcv1", default=f"{SHARED_DATA}/rcv1/rcv1v2_mulan_dedup.npz", help="the RCV1 sample")
    parser.add_argument("--libsvm", default=f"{SHARED_DATA}/libsvm", help="folder of a9a and a9a.t")
    parser.add_argument("--no-peers", action="store_true", help="without Vowpal Wabbit and river")


def _kernel(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("n", type=positive_int, nargs="?", default=2000, help="MNIST digits learned (default 2000)")
    parser.add_argument("--mnist", default=f"{SHARED_DATA}/mnist", help="folder of the four MNIST IDX files")
    parser.add_argument("--no-peers", action="store_true", help="without SVC and Vowpal Wabbit")


def _omr(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("T", type=positive_int, nargs="?", default=100_000,
                        help="two-spirals points of the stream (default 100000)")


def _ab(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("before", help="checkout of dolb measured as the baseline")
    parser.add_argument("after", help="checkout of dolb measured as the change")
    parser.add_argument("--rounds", type=positive_int, default=7, help="interleaved runs of each tree (default 7)")
    parser.add_argument("--quick", action="store_true", help="dolb bench --quick (a tenth of the streams)")
    parser.add_argument("--only", help="comma-separated learners, in the order both trees run them (a learner's "
                        "place in a run moves its speed by a few %%: keep it equal)")


MODES: dict[str, Mode] = {
    "throughput": Mode("examples/s and memory of every linear learner, bare and with its conversions, from memory "
                       "and from a Zarr store (the default mode)", ("throughput", "throughput-quick"),
                       _throughput, "dolb.bench.throughput:main"),
    "stream": Mode("the sparse linear learners from a Zarr store (in order, permuted) against memory, bare Numba "
                   "loops, VW and river, on RCV1 and a9a", ("stream", "stream-no-peers"), _stream,
                   "dolb.bench.stream:main"),
    "kernel": Mode("LASVM on N MNIST digits (3 vs rest) against SVC and VW --ksvm", ("kernel",), _kernel,
                   "dolb.bench.kernel:main"),
    "omr": Mode("online manifold regularisation's learners on T two-spirals points: examples/s, test error, the "
                "exact learner's growth", ("omr",), _omr, "dolb.bench.omr:main"),
    "ab": Mode("two checkouts of dolb side by side: dolb bench run alternately on each, the ratio after / before of "
               "every measurement with its interval", ("ab",), _ab, "dolb.bench.ab:main"),
}
"""Every mode of ``dolb bench``, by name."""


def with_mode(argv: list[str]) -> list[str]:
    """``argv`` of the ``dolb`` command with ``bench``'s mode named: ``throughput`` when
    none is (and neither ``--list`` nor ``--help``). Other commands' ``argv`` is returned
    as is.

    Examples
    --------
    >>> with_mode(["bench", "--quick"])
    ['bench', 'throughput', '--quick']
    >>> with_mode(["-v", "bench", "omr", "2000"])
    ['-v', 'bench', 'omr', '2000']
    """
    at = next((i for i, token in enumerate(argv) if not token.startswith("-")), None)
    if at is None or argv[at] != "bench":
        return argv
    rest = argv[at + 1:]
    if rest and (not rest[0].startswith("-") or rest[0] in ("--list", "-h", "--help")):
        return argv
    return [*argv[:at + 1], "throughput", *rest]


def listing(modes: dict[str, Mode] = MODES) -> str:
    """What ``--list`` prints: each of ``modes``, the records it writes, what it
    measures."""
    width = max(map(len, modes))
    return "\n".join(f"{name:<{width}}  {mode.summary} (records: {', '.join(mode.records)})"
                     for name, mode in modes.items())


def add_modes(parser: argparse.ArgumentParser, modes: dict[str, Mode] = MODES, default: str = "throughput") -> None:
    """``parser``'s ``--list`` and a sub-command for each of ``modes``, with ``--record
    DIR``."""
    parser.add_argument("--list", action="store_true", help="the modes, what each measures and the records it writes")
    title = f"modes (default: {default})" if default else "modes"
    commands = parser.add_subparsers(dest="mode", metavar="MODE", title=title)
    for name, mode in modes.items():
        sub = commands.add_parser(name, help=mode.summary, description=mode.summary)
        mode.arguments(sub)
        sub.add_argument("--record", metavar="DIR", help=f"also write a JSON record of the run into DIR/<kind>/ "
                         f"(kinds: {', '.join(mode.records)}; the repository's is benchmarks/records)")


def run_mode(args: argparse.Namespace, command: str, modes: dict[str, Mode] = MODES) -> int:
    """Run the mode ``args`` names (its ``command_line`` set to ``command``, its
    ``--record`` folder checked first); without one, print :func:`listing`."""
    from dolb.bench.records import record_folder

    if args.list or args.mode is None:
        print(listing(modes))
        return 0
    args.command_line = command
    record_folder(args.record)  # before minutes of measuring
    return modes[args.mode].runner()(args)
