"""The ``dolb`` command.

``dolb run PIPELINE --out DIR`` runs a study; ``dolb plan PIPELINE --out DIR`` says what
it would compute and how long that should take; ``dolb report DIR`` renders its tables
and figures again; ``dolb status DIR`` shows the run history and the failed cells;
``dolb export DIR`` writes the results as one CSV; ``dolb compact DIR`` merges its
result parts; ``dolb reproduce DIR --out NEW`` runs a
recorded run again and checks every value; ``dolb verify DIR`` checks a dataset store in
full; ``dolb study NAME RUN`` prints a study's tables and claims' verdicts and writes
its table records and figures; ``dolb learners`` lists the registered learners and their
parameters. A user's mistake is printed as one line (``dolb: error: ...``) with exit
status 2. ``-v`` logs what a run does (``-vv`` more), ``-q`` only errors.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import dolb
from dolb.bench.modes import add_modes, with_mode
from dolb.cli_arguments import OneLineParser, fraction, lasting_folder, positive_int
from dolb.console import configure_logging, error_line, quiet_on_interrupt
from dolb.errors import DataError
from dolb.options import GATHER_MODES, OPTIONS, RunOptions
from dolb.studies.command import add_study_command


def _options(args: argparse.Namespace) -> RunOptions:
    """The run options a command was given (a command without some has their defaults;
    ``--no-progress`` and ``-q`` turn the progress bar off)."""
    given = {name: getattr(args, name) for name in OPTIONS if name in vars(args)}
    return RunOptions(**given, progress=not getattr(args, "no_progress", True) and args.verbosity >= 0)


def _run(args: argparse.Namespace) -> int:
    from dolb.execution.sweep import run_sweep
    from dolb.experiment.shipped import pipeline_file
    from dolb.location import joined
    from dolb.results.store import ResultStore

    summary = run_sweep(pipeline_file(args.pipeline), args.out, _options(args))
    print(summary.report)
    print(f"{summary.counts_line()}; {summary.seconds:.1f} s; results in {args.out} (run {summary.run_id})")
    print(summary.time_line())
    if summary.n_cells and ResultStore(args.out).exists():
        print(f"Page: {joined(ResultStore(args.out).location, 'report', 'index.html')}")
    return 0 if summary.ok else 1


def _result_store(folder: str, complete: bool = True, runs_enough: bool = False):
    """The store of a result folder; DataError when it holds no results (with
    ``runs_enough``, no results and no run record: a run killed before its first commit
    is told of) or (when ``complete``) a part committed there is gone with cells stored
    nowhere else."""
    from dolb.results.history import read_records
    from dolb.results.query import check_complete
    from dolb.results.store import ResultStore

    store = ResultStore(folder)
    if complete:
        check_complete(store)
    if not store.exists() and not store.committed() and not (runs_enough and read_records(store)):
        raise DataError(f"{folder}: not a result folder (no results; run `dolb run` first)")
    return store


def _report(args: argparse.Namespace) -> int:
    from dolb.experiment.pipeline import load_pipeline
    from dolb.results.history import last_record, recorded_pipeline
    from dolb.results.page import write_run_page
    from dolb.results.report import write_reports
    from dolb.results.tuning_report import decisions

    store = _result_store(args.dir)
    record = last_record(store)  # a run still running (or killed) too: its page says it is partial
    pipeline = load_pipeline(*recorded_pipeline(store, record, "report this run"))
    decisions(store)  # a damaged tuning is refused before any report is written
    partial = _partial(store, record)
    print(write_reports(pipeline.reports, store))
    page = write_run_page(store, pipeline.reports, record, pipeline.description, partial=partial)
    print(f"Page (partial: {partial}): {page}" if partial else f"Page: {page}")
    return 0


def _partial(store, record: dict) -> str:
    """Why a report of run ``record`` shows part of it ("" when it finished): it is
    still running (read without disturbing it), or it did not finish."""
    import time

    from dolb.execution.lock import live_holder
    from dolb.results.query import cells_by_run

    if record.get("ended"):
        return ""
    cells, _, failed = cells_by_run(store).get(record["run_id"], (0, 0, 0))
    holder = live_holder(store, record["run_id"])
    state = f"running on {holder['host']} (pid {holder['pid']})" if holder else "did not finish"
    return (f"run {record['run_id']} {state}; drawn from what was stored by "
            f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} ({cells} cells stored by it, {failed} failed)")


def _export(args: argparse.Namespace) -> int:
    from dolb.location import joined, local_file, writable
    from dolb.results.query import rows

    store = _result_store(args.dir)
    writable("--to", args.to)
    target = args.to or joined(args.dir, "results.csv")
    frame = rows(store)
    with local_file(target) as partial:  # whole or not at all
        frame.to_csv(partial, index=False)
    print(f"{len(frame):,} rows written to {target}")
    return 0


def _reproduce(args: argparse.Namespace) -> int:
    from dolb.execution.reproduce import reproduce

    outcome = reproduce(args.dir, args.out, args.run, args.rtol, _options(args))
    print(outcome.describe())
    return 0 if outcome.identical else 1


DATA_CACHE_HELP = ("where generated and imported datasets are kept, a folder or a URL such as s3://bucket/cache "
                   "(default $DOLB_DATA_CACHE, else ~/.cache/dolb/data)")
PIPELINE_HELP = "pipeline file (TOML), or the name of a pipeline dolb ships (dolb study --list names them)"
DATA_HELP = ("the data folder of the pipelines dolb ships, holding mnist/, libsvm/, rcv1/, face/ (default $DOLB_DATA, "
             "else shared/data beside a checkout)")


def _plan(args: argparse.Namespace) -> int:
    from dolb.execution.plan import make_plan
    from dolb.experiment.shipped import pipeline_file

    plan = make_plan(pipeline_file(args.pipeline), args.out, workers=args.workers, data_cache=args.data_cache,
                     data=args.data)
    print(plan.describe())
    return 0


def _bench(args: argparse.Namespace) -> int:
    from dolb.bench.modes import run_mode
    from dolb.bench.records import command_line

    return run_mode(args, command_line(["dolb", *args.argv]))


def _learners(args: argparse.Namespace) -> int:
    from dolb.learners import LEARNERS
    from dolb.learners.listing import describe_learner, learner_record, markdown_table

    names = args.names or LEARNERS.names()
    classes = [LEARNERS[name] for name in names]
    unloadable = [] if args.names else [f"{name}: {why}" for name, why in LEARNERS.unloadable().items()]
    if args.markdown:
        print(markdown_table())
    elif args.json:
        print(json.dumps([learner_record(cls) for cls in classes], indent=1))
    else:
        print("\n\n".join(describe_learner(cls) for cls in classes))
        if unloadable:
            print("\nPlugins that could not load:\n" + "\n".join(unloadable))
        return 0
    if unloadable:  # beside the table or the JSON, not in them
        print("\n".join(unloadable), file=sys.stderr)
    return 0


def _status(args: argparse.Namespace) -> int:
    import time

    from dolb.execution.lock import live_holder
    from dolb.experiment.cells import cell_id
    from dolb.results.failed import failure_line, is_trial
    from dolb.results.history import describe, live_line, machines, read_records
    from dolb.results.query import cells_by_run, failures, incompleteness, stored_cells
    from dolb.results.tuning_report import trial_cells

    store = _result_store(args.dir, complete=False, runs_enough=True)
    records = read_records(store)
    by_run = cells_by_run(store)
    for record in records:
        stored = by_run.get(record["run_id"], (0, 0, 0))
        holder = None if record.get("ended") else live_holder(store, record["run_id"])
        print(describe(record, stored) if holder is None else live_line(record, stored, holder, time.time()))
        if record.get("ended"):
            print(f"  {machines(record)}")
    stored, _ = stored_cells(store)
    failed = failures(store)
    finished = [record for record in records if record.get("ended")]
    scope = ""
    if finished and "groups" in finished[-1]:  # speak of the cells of the pipeline last run here, and its trials
        last = finished[-1]
        ids = {cell_id(key, index) for key, count in last["groups"] for index in range(count)}
        stored &= ids
        trial_ids = trial_cells(store, last["pipeline"]) if last.get("tuning") else set()
        failed = failed[failed["cell_id"].isin(ids | trial_ids)] if len(failed) else failed
        scope = f" (of the {len(ids)} cells of pipeline {last['pipeline']!r})"
    rows = failed.to_dict("records")
    cells, trials = [row for row in rows if not is_trial(row)], [row for row in rows if is_trial(row)]
    print(f"{len(stored)} cells stored, {len(cells)} failed{scope}")
    for row in cells:
        print(f"  {failure_line(row)}")
    if trials:
        print(f"{len(trials)} tuning trials failed (each ranked last at its rung):")
    for row in trials:
        print(f"  {failure_line(row)}")
    incomplete = incompleteness(store)
    if incomplete:
        print(incomplete)
    return 1 if len(failed) or incomplete else 0


def _compact(args: argparse.Namespace) -> int:
    from dolb.execution.lock import FolderLock
    from dolb.results.compaction import compact

    store = _result_store(args.dir, complete=False)
    with FolderLock(store, "compaction"):  # no run writes meanwhile
        print(compact(store).line(args.dir))
    return 0


def _verify(args: argparse.Namespace) -> int:
    from dolb.data import open_dataset
    from dolb.data.store.layout import layout_line

    dataset = open_dataset(args.dir)
    checked = dataset.verify()
    print(f"{args.dir}: ok ({dataset.n_rows} rows, {checked} chunks checked)")
    for name, record in dataset.layout.items():
        print(f"  {layout_line(name, record)}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from dolb.bench.ab import confirm_commits
    from dolb.location import joined
    from dolb.results.compare_page import console_text
    from dolb.results.compare_report import compare_folders

    out = args.out or joined(args.run, "compare")
    confirm = confirm_commits(args.confirm) if args.confirm else None
    comparison = compare_folders(args.run, args.baseline, out, alpha=args.alpha, slowdown=args.slowdown,
                                 history=args.history, rtol=args.rtol, confirm=confirm)
    print(console_text(comparison, out, args.max_rows))
    return 1 if comparison.regressed else 0


def _add_where(command: argparse.ArgumentParser) -> None:
    """The options saying where a command runs its cells (see :class:`dolb.options.RunOptions`)."""
    where = command.add_mutually_exclusive_group()
    where.add_argument("--workers", type=positive_int, help="worker processes of the embedded LocalCluster")
    where.add_argument("--scheduler", help="address or scheduler file of a running Dask scheduler")
    where.add_argument("--cluster", metavar="FILE", help="cluster file describing the cluster to start (see cluster/)")
    command.add_argument("--dashboard", action="store_true",
                         help="the embedded cluster serves Dask's dashboard on 127.0.0.1 and its link is printed "
                              "(plain HTTP, no password: any user of this machine can open it during the run; "
                              "needs bokeh: pip install 'dolb[dashboard]')")


def _folder_command(commands, name: str, handler, summary: str) -> argparse.ArgumentParser:
    """A command acting on a result folder written by ``dolb run`` (its argument ``dir``)."""
    command = commands.add_parser(name, help=summary)
    command.add_argument("dir", help="result folder written by `dolb run`")
    command.set_defaults(handler=handler)
    return command


def build_parser() -> argparse.ArgumentParser:
    """The ``dolb`` command's parser: its global options and a sub-command each."""
    parser = OneLineParser(prog="dolb", description="Distributed online learning bench.")
    parser.add_argument("--version", action="version", version=f"dolb {dolb.__version__}")
    parser.add_argument("-v", "--verbose", dest="verbosity", action="count", default=0,
                        help="say what is being done (-vv: more)")
    parser.add_argument("-q", "--quiet", dest="verbosity", action="store_const", const=-1,
                        help="errors only, no progress bar")
    commands = parser.add_subparsers(dest="command", required=True)
    _add_run_and_plan(commands)
    bench = commands.add_parser("bench", help="measure dolb: `dolb bench --list` lists the modes (default: "
                                "throughput, every linear learner's examples/s)")
    add_modes(bench)
    bench.set_defaults(handler=_bench)
    add_study_command(commands)
    learners = commands.add_parser("learners", help="the registered learners and their parameters")
    learners.add_argument("names", nargs="*", metavar="NAME", help="learners to show (default: all)")
    learners.add_argument("--json", action="store_true", help="as a JSON list")
    learners.add_argument("--markdown", action="store_true", help="a Markdown table of every learner")
    learners.set_defaults(handler=_learners)
    _add_folder_commands(commands)
    verify = commands.add_parser("verify", help="check a dataset store in full: metadata, chunks, fingerprint")
    verify.add_argument("dir", help="dataset store (a directory or an fsspec URL)")
    verify.set_defaults(handler=_verify)
    _add_compare(commands)
    return parser


def _add_run_and_plan(commands) -> None:
    run = commands.add_parser("run", help="run a pipeline's cells on Dask and report")
    run.add_argument("pipeline", help=PIPELINE_HELP)
    run.add_argument("--out", required=True, type=lasting_folder, help="result folder (created; reused to resume)")
    _add_where(run)
    run.add_argument("--retry-failed", action="store_true", help="run failed cells again")
    run.add_argument("--force", action="store_true",
                     help="add to a result folder that holds another pipeline's results")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument("--performance-report", metavar="FILE",
                     help="save Dask's HTML performance report (one file, opens offline; needs bokeh: "
                          "pip install 'dolb[dashboard]')")
    run.add_argument("--gather", choices=GATHER_MODES, default="auto",
                     help="who writes result parts: the workers when they can reach --out (auto, the "
                          "default), always the workers, or the client")
    run.add_argument("--data-cache", metavar="DIR", help=DATA_CACHE_HELP)
    run.add_argument("--data", metavar="DIR", help=DATA_HELP)
    run.set_defaults(handler=_run)

    plan = commands.add_parser("plan", help="count a pipeline's cells, stored and to do, and estimate the time")
    plan.add_argument("pipeline", help=PIPELINE_HELP)
    plan.add_argument("--out", required=True, help="result folder the run would use")
    plan.add_argument("--workers", type=positive_int, help="workers the estimate assumes (default: one per core)")
    plan.add_argument("--data-cache", metavar="DIR", help=DATA_CACHE_HELP + ": the run's, to build nothing twice")
    plan.add_argument("--data", metavar="DIR", help=DATA_HELP)
    plan.set_defaults(handler=_plan)


def _add_folder_commands(commands) -> None:
    """The commands that take a result folder."""
    _folder_command(commands, "report", _report, "render tables and figures of a result folder")
    _folder_command(commands, "status", _status, "the run history and the failed cells of a result folder")
    _folder_command(commands, "compact", _compact,
                    "merge a result folder's parts into a few large ones, each cell once (a run ends so when it "
                    "leaves many)")
    export = _folder_command(commands, "export", _export, "write a result folder's results as one CSV file")
    export.add_argument("--to", metavar="FILE", help="the CSV file, a path or an fsspec URL (default DIR/results.csv)")

    again = _folder_command(commands, "reproduce", _reproduce, "run a recorded run again and check every value")
    again.add_argument("--out", required=True, type=lasting_folder, help="a fresh result folder for the new run")
    again.add_argument("--run", help="the run id to reproduce (default: the last finished run; see dolb status)")
    again.add_argument("--rtol", type=fraction, help="largest relative difference called floating-point noise (1e-6)")
    again.add_argument("--data-cache", metavar="DIR", help=DATA_CACHE_HELP)
    again.add_argument("--data", metavar="DIR", help=DATA_HELP)
    _add_where(again)


def _add_compare(commands) -> None:
    compare = commands.add_parser("compare", help="compare a result folder with a baseline (nightly)")
    compare.add_argument("run", help="result folder of the run to judge")
    compare.add_argument("baseline", help="result folder of the same pipeline to compare with")
    compare.add_argument("--out", help="report folder (default RUN/compare)")
    compare.add_argument("--rtol", type=fraction, help="exit 1 when a value differs by a larger relative difference")
    compare.add_argument("--alpha", type=fraction, default=0.05, help="false-discovery rate (default 0.05)")
    compare.add_argument("--slowdown", type=fraction, default=0.9,
                         help="a learner significantly slower is flagged when its median ratio of examples/s "
                              "to the baseline is below this (default 0.9)")
    compare.add_argument("--max-rows", type=positive_int, default=20, metavar="N",
                         help="significant changes printed at most (default 20; all are in the page)")
    compare.add_argument("--history", nargs="+", default=[], metavar="DIR",
                         help="earlier nights' result folders, oldest first: trend.png, each speed's band")
    compare.add_argument("--confirm", metavar="REPO", help="git checkout: alarm on a slowdown only if an A/B confirms")
    compare.set_defaults(handler=_compare)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``dolb`` command; returns the exit status."""
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        args = build_parser().parse_args(with_mode(argv))
        args.argv = argv  # as typed, for a benchmark record
    except SystemExit as exc:  # --help, --version, or a mistake (already reported)
        return exc.code if isinstance(exc.code, int) else 2
    configure_logging(args.verbosity)
    try:
        with quiet_on_interrupt(args.verbosity):
            return args.handler(args)
    except BrokenPipeError:  # `dolb status DIR | head`: the reader left; end quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit's flush
        return 128 + 13  # as if killed by SIGPIPE, like other commands in a pipe
    except Exception as exc:  # a mistake, an object store's fault, an OSError: one line naming where
        where = next((str(getattr(args, name)) for name in ("dir", "run", "out") if getattr(args, name, None)), "")
        print(f"dolb: error: {error_line(exc, where or 'the object store')}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dolb: interrupted; stored cells are kept, run again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
