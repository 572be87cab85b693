"""What a study is: its pipelines, its tables and figures as functions of a run, the
paper's claims each with the check that judges it from the tables, and the paper.

A study reads one *run*: by default the result folder a pipeline's ``dolb run`` wrote
(:class:`ResultRun`), or what its ``read`` makes of the path it is given (the tuning
benchmark reads a benchmark record). A :class:`Table` makes ``(columns, rows)`` from the
run (:func:`dolb.studies.tables.new_table` turns them into a table record), a
:class:`Figure` draws one PNG, and a :class:`Claim` judges, from the table records by
name, whether the paper's claim holds here (:class:`Verdict`). ``dolb study`` computes
them (:mod:`dolb.studies.command`), the documentation renders them (:mod:`.pages`).

Examples
--------
>>> def means(run):
...     return [("learner", None), ("error", ".1%")], [["perceptron", 0.031]]
>>> def low(tables):
...     error = tables["means"]["rows"][0][1]
...     return Verdict(error < 0.05, f"error {error:.1%}")
>>> toy = Study("toy", "A toy study", paper="Nobody, 'Nothing' (2026)", pipelines=("toy",),
...             tables=(Table("means", means),), claims=(Claim("the error is low", low, ("means",)),))
>>> toy.claims[0].judge({"means": {"rows": [["perceptron", 0.031]]}})
Verdict(holds=True, evidence='error 3.1%')
>>> toy.claims[0].judge({})
Verdict(holds=None, evidence='not judged: no table means')
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from dolb.errors import DataError


@dataclass(frozen=True)
class Verdict:
    """A claim judged: ``holds`` True or False (None: not judged, its tables missing),
    and the numbers that decided it."""

    holds: bool | None
    evidence: str

    @property
    def word(self) -> str:
        """``"holds"``, ``"does not hold"`` or ``"not judged"``."""
        return {True: "holds", False: "does not hold", None: "not judged"}[self.holds]


@dataclass(frozen=True)
class Table:
    """One table of a study: ``make(run)`` returns its ``(columns, rows)``, columns as
    ``(heading, format or None)``; a table with no rows is left out. ``experiments``:
    it is made only from a run holding one of them (every run when empty); ``tuned``:
    only from a run whose pipeline tunes (True) or only from one whose does not (False,
    the default: a study's tuned pipeline holds experiments of the same names);
    ``source``: what its numbers come from when that is not the run (a table computed
    from nothing the run holds)."""

    name: str
    make: Callable[[object], tuple[list, list]]
    experiments: tuple[str, ...] = ()
    caption: str = ""
    source: str = ""
    tuned: bool = False


@dataclass(frozen=True)
class Figure:
    """One figure of a study: ``draw(run, path)`` writes the PNG ``path`` (its name is
    ``name``, as the documentation shows it); made only from a run holding one of
    ``experiments`` (every run when empty) and tuning or not as ``tuned`` says (see
    :class:`Table`)."""

    name: str
    draw: Callable[[object, Path], None]
    experiments: tuple[str, ...] = ()
    caption: str = ""
    tuned: bool = False


@dataclass(frozen=True)
class Claim:
    """A claim of the paper and ``check(tables) -> Verdict``, judging it from the study's
    table records by name (``tables``: the ones it reads)."""

    text: str
    check: Callable[[Mapping[str, dict]], Verdict]
    tables: tuple[str, ...]

    def judge(self, records: Mapping[str, dict]) -> Verdict:
        """The verdict from ``records``; not judged when one of its tables is missing."""
        missing = [name for name in self.tables if name not in records]
        if missing:
            return Verdict(None, f"not judged: no table {missing[0]}")
        return self.check(records)


class ResultRun:
    """A result folder a study reads: its folder, its rows (``frame``, and ``tidy``:
    the tidy columns only), the experiments it holds, whether its pipeline tunes
    (``tuned``) and the command that made it (``source``), each read once, when first
    asked for."""

    def __init__(self, folder: str | Path) -> None:
        from dolb.results.store import ResultStore

        self.folder = str(folder)  # a path or a URL (``s3://...``), as given
        self.store = ResultStore(self.folder)
        self._made: dict[str, object] = {}

    def once(self, key: str, make: Callable[[], object]):
        """``make()``, computed the first time ``key`` is asked for and kept (what two
        tables of a study both read)."""
        if key not in self._made:
            self._made[key] = make()
        return self._made[key]

    @functools.cached_property
    def frame(self):
        from dolb.results.tables import read_results

        return read_results(self.folder)

    @functools.cached_property
    def tidy(self):
        from dolb.results.tables import read_results

        return read_results(self.folder, tidy=True)

    @functools.cached_property
    def experiments(self) -> set[str]:
        return set(self.tidy.experiment.unique())

    @functools.cached_property
    def tuned(self) -> bool:
        """Whether the run's pipeline (its ``pipeline.toml``) tunes an experiment (False
        for a folder without one)."""
        import tomllib

        text = self.store.read_text("pipeline.toml")
        if text is None:
            return False
        try:
            pipeline = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise DataError(f"{self.store.shown(f'{self.store.path}/pipeline.toml')}: cannot be read as the run's "
                            f"pipeline ({exc})") from None
        experiments = pipeline.get("experiments")
        return isinstance(experiments, dict) and any(
            isinstance(experiment, dict) and "tuning" in experiment for experiment in experiments.values())

    @functools.cached_property
    def source(self) -> str:
        from dolb.studies.tables import run_source

        return run_source(self.folder)


@dataclass(frozen=True)
class Study:
    """A study: its ``name`` (the page ``docs/studies/NAME.md`` and the records'
    folder ``benchmarks/studies/NAME/``), ``title``, ``paper`` (its reference),
    ``pipelines`` (names of ``pipelines/*.toml``), tables, figures and claims;
    ``read(path)`` makes the run its tables and figures read (:class:`ResultRun` by
    default); ``page`` is the page under ``docs/`` that shows it."""

    name: str
    title: str
    paper: str
    pipelines: tuple[str, ...]
    tables: tuple[Table, ...] = ()
    figures: tuple[Figure, ...] = ()
    claims: tuple[Claim, ...] = ()
    read: Callable[[str], object] = ResultRun
    page: str = ""

    @property
    def page_path(self) -> str:
        """The page under ``docs/`` that shows the study."""
        return self.page or f"studies/{self.name}.md"

    def run_names(self) -> str:
        """The study's pipelines as a user names them: ``pipelines/irma.toml, ...``."""
        return ", ".join(f"pipelines/{name}.toml" for name in self.pipelines) or "none"

    def table(self, name: str) -> Table:
        """The table ``name`` of the study (KeyError when it has none)."""
        found = {table.name: table for table in self.tables}
        return found[name]

    def made_from(self, run) -> tuple[list[Table], list[Figure]]:
        """The tables and figures of the study ``run`` holds the experiments of, tuning
        as the run does (a run that is not a result folder, as the tuning benchmark's
        record, tunes nothing)."""
        tuned = getattr(run, "tuned", False)

        def holds(part) -> bool:
            return part.tuned == tuned and (not part.experiments or bool(set(part.experiments) & run.experiments))

        return [t for t in self.tables if holds(t)], [f for f in self.figures if holds(f)]

    def judge(self, records: Mapping[str, dict]) -> list[tuple[Claim, Verdict]]:
        """Each claim with its verdict from the table ``records`` by name."""
        return [(claim, claim.judge(records)) for claim in self.claims]


def report_figure(report: str) -> Callable[[ResultRun, Path], None]:
    """A figure the run's own report drew: ``draw(run, path)`` copies
    ``RUN/report/<report>`` to ``path`` (DataError when the run has no such report)."""

    def copy(run: ResultRun, path: Path) -> None:
        drawn = f"{run.store.path}/report/{report}"
        if not run.store.fs.isfile(drawn):
            raise DataError(f"{run.folder}: no report/{report} (the run's report draws this figure)")
        run.store.fs.get_file(drawn, str(path))

    copy.__doc__ = f"The run's ``report/{report}``."
    return copy
