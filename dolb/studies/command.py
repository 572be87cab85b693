"""``dolb study NAME RUN``: a study's tables, its claims' verdicts, its table records and
figures, from one run.

The tables are all made, and the figures all drawn into a temporary folder, before
anything is written: a run that is not one of the study's (it holds none of its
experiments, or lacks one a table needs) is one line and writes nothing.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from dolb.errors import ConfigError, DataError
from dolb.experiment.shipped import DATA_HINT, data_needs, shipped_names
from dolb.studies import STUDIES

if TYPE_CHECKING:
    from dolb.studies.study import Study


def add_study_command(commands) -> None:
    """Add ``dolb study`` to the ``dolb`` command's sub-commands."""
    study = commands.add_parser("study", help="a study's tables, its claims' verdicts, table records and figures, "
                                              "from a run (dolb study --list: the studies)")
    study.add_argument("name", nargs="?", metavar="NAME", help="the study (dolb study --list names them)")
    study.add_argument("run", nargs="?", metavar="RUN",
                       help="what the study reads: the result folder of one of its pipelines (the tuning study: a "
                            "benchmark record)")
    study.add_argument("--list", action="store_true",
                       help="list the studies, their titles, their pipelines (by name) and the data each reads")
    study.add_argument("--record", metavar="DIR", help="write the table records into this folder (DIR/NAME/TABLE.json)")
    study.add_argument("--figures", metavar="DIR", help="draw the figures into this folder (the docs': docs/figures)")
    study.set_defaults(handler=study_command)


def study_command(args: argparse.Namespace) -> int:
    """``dolb study``: the list of studies, or :func:`run_study`."""
    if args.list:
        print(study_list())
        return 0
    if args.name is None or args.run is None:
        raise ConfigError("dolb study: give a study's NAME and its RUN (dolb study --list names the studies)")
    return run_study(args.name, args.run, args.record, args.figures)


def study_list() -> str:
    """Every registered study on a line: name, title and its pipelines as ``dolb run``
    takes them (one dolb ships by its name, from any folder), with what they read from
    the data folder; then the other pipelines dolb ships, and a line saying how to run
    one and give that folder."""
    lines = [f"{name:18} {study.title} ({_pipelines(study)})" for name, study in STUDIES.items()]
    others = sorted(set(shipped_names()).difference(*(study.pipelines for _, study in STUDIES.items())))
    other = ", ".join(name + (f" (data folder: {', '.join(data_needs(name))})" if data_needs(name) else "")
                      for name in others)
    return "\n".join([*lines, f"{'other pipelines':18} {other or 'none'}",
                      f"dolb run NAME --out DIR runs a pipeline dolb ships from any folder; {DATA_HINT}"])


def _pipelines(study: Study) -> str:
    """The pipelines of ``study`` as ``dolb run`` takes them, and their data sets."""
    shipped = shipped_names()
    named = [name if name in shipped else f"pipelines/{name}.toml" for name in study.pipelines]
    needs = sorted({need for name in study.pipelines if name in shipped for need in data_needs(name)})
    return ", ".join(named or ["none"]) + (f"; data folder: {', '.join(needs)}" if needs else "")


def study_records(study: Study, path: str | Path, run=None) -> list[dict]:
    """The table records of ``study`` made from the run at ``path`` (``run``: that run
    as ``study.read`` makes it, when already read). DataError naming ``path`` when the
    run holds none of the study's experiments or lacks something a table needs."""
    from dolb.studies.tables import new_table

    run = study.read(str(path)) if run is None else run
    tables, figures = study.made_from(run)
    if not tables and not figures:
        raise DataError(f"{path}: not a run of the study {study.name} ({study.run_names()}): it holds none of its "
                        "experiments")
    try:
        made = [(table, table.make(run)) for table in tables]
    except DataError as exc:
        raise DataError(f"{path}: not a run of {study.run_names()} ({exc})") from None
    return [new_table(study.name, table.name, columns, rows, source=table.source or run.source)
            for table, (columns, rows) in made if rows]


def draw_figures(study: Study, run, folder: Path) -> list[Path]:
    """Draw the figures of ``study`` that ``run`` holds the experiments of into
    ``folder`` (created), each first into a temporary folder: a figure that fails
    leaves none written. Returns their paths."""
    _, figures = study.made_from(run)
    with tempfile.TemporaryDirectory(prefix="dolb-figures-") as scratch:
        for figure in figures:
            figure.draw(run, Path(scratch) / figure.name)
        folder.mkdir(parents=True, exist_ok=True)
        return [Path(shutil.copyfile(Path(scratch) / figure.name, folder / figure.name)) for figure in figures]


def verdict_lines(study: Study, records: list[dict]) -> list[str]:
    """One line per claim of ``study``: its verdict from ``records``, the claim and the
    numbers that decided it."""
    verdicts = study.judge({record["table"]: record for record in records})
    return [f"{verdict.word}: {claim.text} ({verdict.evidence})" for claim, verdict in verdicts]


def run_study(name: str, path: str | Path, record: str | Path | None = None,
              figures: str | Path | None = None) -> int:
    """What ``dolb study NAME RUN [--record DIR] [--figures DIR]`` does: print the
    tables and the claims' verdicts, write the table records into ``record`` and the
    figures into ``figures``; returns the exit status."""
    from dolb.studies.tables import show_table

    study = STUDIES[name]
    record, figures = _record_folder(record), _figure_folder(figures)
    run = study.read(str(path))
    records = study_records(study, path, run)
    drawn = draw_figures(study, run, figures) if figures is not None else []
    for made in records:
        show_table(made, record)
    for figure in drawn:
        print(f"drawn: {figure}")
    print("claims:", *verdict_lines(study, records) or ["none"], sep="\n")
    return 0


def _figure_folder(folder: str | Path | None) -> Path | None:
    """``--figures``, checked as ``--record`` is (:func:`dolb.bench.records.record_folder`)."""
    if folder is None:
        return None
    try:
        return _record_folder(folder)
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("--record", "--figures", 1)) from None


def _record_folder(folder: str | Path | None) -> Path | None:
    from dolb.bench.records import record_folder

    return record_folder(folder)
