"""Workers that share a Numba cache compile each kernel once between them: two processes
calling the same kernels at the same moment, from an empty cache, compile each kernel in
one process only and load it in the other; the warm-up samples come in groups of the
same kernels."""

import multiprocessing
import sys
import textwrap

import numpy as np

from dolb.execution.sweep import cells_to_run, plan_groups
from dolb.execution.warm_up import warm_up_samples
from dolb.experiment.pipeline import load_pipeline

KERNELS = textwrap.dedent('''
    import numba


    @numba.njit(cache=True)
    def first(x):
        return x.sum() + 1.0


    @numba.njit(cache=True)
    def second(x):
        return 2.0 * first(x)  # what ``first`` compiles for, again
''')


def _warm(folder: str, start, compiled, order) -> None:
    """A worker, in a process of its own: calls both kernels in ``order`` once ``start``
    lets every process go; puts the kernels this process compiled in ``compiled``."""
    sys.path.insert(0, folder)
    import kernels

    from dolb.execution.compile_once import share_compilation

    share_compilation()
    start.wait()
    for name in order:
        getattr(kernels, name)(np.ones(3))
    compiled.put(sorted(name for name in ("first", "second")
                        if sum(getattr(kernels, name).stats.cache_misses.values())))


def test_two_processes_compile_each_kernel_once(tmp_path, monkeypatch):
    (tmp_path / "kernels.py").write_text(KERNELS)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))  # empty: every kernel is compiled
    context = multiprocessing.get_context("spawn")
    start, compiled = context.Barrier(2), context.Queue()
    orders = [("first", "second"), ("second", "first")]
    processes = [context.Process(target=_warm, args=(str(tmp_path), start, compiled, order)) for order in orders]
    for process in processes:
        process.start()
    found = [compiled.get(timeout=300) for _ in processes]
    for process in processes:
        process.join(timeout=60)
    assert [process.exitcode for process in processes] == [0, 0]
    assert sorted(name for names in found for name in names) == ["first", "second"]


def test_warm_up_samples_group_the_same_kernels():
    pipeline = load_pipeline("pipelines/irma.toml")
    groups = plan_groups(pipeline)
    samples = warm_up_samples(cells_to_run(groups, set(), set(), False))
    learners = [[cell.spec.learner for cell in cells] for _, cells in samples]
    # Table I's three orders of IRMA and of batch least squares are one group each (Fig. 1's
    # IRMA is Table I's of order 6)
    assert learners == [["irma"] * 3, ["batch_ls"] * 3, ["ngd"], ["rls"]]
    assert len({key for key, _ in samples}) == 4
    assert all(len({repr(sorted(cell.spec.params.items())) for cell in cells}) == len(cells) for _, cells in samples)
