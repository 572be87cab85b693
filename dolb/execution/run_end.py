"""What the workers do for the client as a run ends, when they can reach the result
folder: compact its parts, summarise it and draw its reports. Every result row is read
there; the client receives a warning, if the compaction failed, and the reports' text.
"""

from __future__ import annotations

from distributed import wait

from dolb.execution.payload import call, encode
from dolb.execution.phases import Phases
from dolb.experiment.pipeline import Pipeline
from dolb.results import compaction, query
from dolb.results.report import render_report, reports_text, write_summary
from dolb.results.store import ResultStore


def compact_on_cluster(client, store: ResultStore, run_id: str) -> str | None:
    """:func:`~dolb.results.compaction.compact_after_run` of ``store`` on a worker, with
    this process's :data:`~dolb.results.compaction.RUN_END_PARTS`; the warning to log
    (None when there is none). A task that dies is a warning too: the compaction, safe
    to stop at any moment, is left for the next run or ``dolb compact``."""
    task = encode((compaction.compact_after_run, (store, run_id, compaction.RUN_END_PARTS)))
    future = client.submit(call, task, pure=False)
    try:
        return future.result()
    except Exception as exc:  # whatever killed the worker
        return f"the result folder was not compacted ({type(exc).__name__}: {exc}); `dolb compact {store.root}` " \
               "tries again"
    finally:
        future.release()


def report_on_cluster(client, pipeline: Pipeline, store: ResultStore, phases: Phases) -> str:
    """Summarise the store and draw every report as tasks: the summary once, then each
    report (and ``summary.csv``) in parallel; the client receives only their text. The
    summary is copied to every worker first: held by one, it would draw all the reports
    there, the scheduler placing tasks where their input is."""
    with phases("aggregate"):
        summary = client.submit(query.summary, store, pure=False)
        wait([summary])
        if len(pipeline.reports) > 1:
            client.replicate([summary])
    with phases("reports"):
        written = client.submit(write_summary, store, summary, pure=False)
        texts = [client.submit(render_report, pipeline.reports, i, store, summary, pure=False)
                 for i in range(len(pipeline.reports))]
        client.gather([written])
        return reports_text(client.gather(texts), store)
