"""What a worker process costs to start: it imports dolb's tasks without what only the
client uses (DuckDB, the reports' tables), and, with Dask's ``forkserver`` method and
the nanny preload ``dolb.execution.forkserver``, it is forked from a server that has
imported dolb and set up Numba's compiler already."""

import subprocess
import sys
import textwrap

import dask
from distributed.utils import get_mp_context

from dolb.execution import forkserver


def test_a_worker_imports_its_tasks_without_duckdb_nor_the_reports_tables():
    script = textwrap.dedent("""
        import sys
        import distributed.worker
        import dolb.execution.tasks, dolb.execution.warm_up, dolb.execution.payload
        print(sorted(name for name in ("duckdb", "dolb.results.query", "dolb.results.tables") if name in sys.modules))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_nanny_preload_makes_the_fork_server_import_dolb_and_nothing_with_spawn(monkeypatch):
    asked = []
    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
        context = get_mp_context()
        monkeypatch.setattr(context, "set_forkserver_preload", asked.append)
        forkserver.dask_setup(None)
    assert asked == [["distributed", "distributed.worker", "dolb.execution.worker_imports"]]
    with dask.config.set({"distributed.worker.multiprocessing-method": "spawn"}):
        forkserver.dask_setup(None)
    assert len(asked) == 1


def test_a_worker_forked_from_the_server_has_dolb_and_numba_ready():
    # In a process of its own: the fork server is one per process and keeps its preloads.
    script = textwrap.dedent("""
        import dask
        from distributed import Client, LocalCluster
        from dolb.execution import forkserver

        def ready():
            import sys
            from numba.core.registry import cpu_target
            return ("dolb.execution.tasks" in sys.modules, cpu_target.typing_context._registries != {})

        with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
            forkserver.dask_setup(None)
            with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \\
                    Client(cluster) as client:
                print(list(client.run(ready).values()))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=600)
    assert done.stdout.strip().splitlines()[-1] == "[(True, True)]"
