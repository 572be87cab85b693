"""The kernel warm-up of a run: the kernels of the pipeline's learners only, a task per
group, each group once; a dataset built on the cluster has its kernels warmed as soon as
its build ends, inside the data phase; the cells run once every group is warm."""

import logging
import textwrap

import numpy as np

from dolb.execution import phases, warm_up
from dolb.execution.datasets import data_cache, open_datasets
from dolb.execution.sweep import run_sweep
from dolb.execution.warm_up import KernelWarmUp, dataset_samples, warm_up_samples
from dolb.experiment.cells import expand_groups
from dolb.experiment.pipeline import load_pipeline
from dolb.options import RunOptions

TWO_DATASETS = """
[pipeline]
name = "two-datasets"
seed = 3

[datasets.short]
generator = "irma"
params = { n_sequences = 3, length = 20, n_test = 10 }

[datasets.long]
generator = "irma"
params = { n_sequences = 3, length = 40, n_test = 10 }

[experiments.short]
dataset = "short"
task = "regression"
split = { scheme = "sequences", count = 3 }
checkpoints = [20]
metrics = ["test_mse"]
learners = [{ learner = "irma", complexity = [3, 4], params = { domain_high = 3.0 } }]

[experiments.long]
dataset = "long"
task = "regression"
split = { scheme = "sequences", count = 3 }
checkpoints = [40]
metrics = ["test_mse"]
learners = [{ learner = "rls", complexity = 3, params = { domain_high = 3.0 } },
            { learner = "ngd", complexity = 3, params = { domain_high = 3.0 } }]
"""


def _pipeline(tmp_path):
    path = tmp_path / "two.toml"
    path.write_text(textwrap.dedent(TWO_DATASETS))
    return load_pipeline(path)


def test_a_datasets_samples_are_its_learners_kernels(tmp_path):
    pipeline = _pipeline(tmp_path)
    datasets = open_datasets(pipeline, data_cache())
    short = dataset_samples(pipeline, "short", datasets["short"])
    long = dataset_samples(pipeline, "long", datasets["long"])
    assert [[cell.spec.learner for cell in cells] for _, cells in short] == [["irma", "irma"]]
    assert [[cell.spec.learner for cell in cells] for _, cells in long] == [["rls"], ["ngd"]]
    assert {cell.spec.dataset for _, cells in short + long for cell in cells} == {"short", "long"}
    # the same groups as the whole plan's, dataset by dataset
    whole = warm_up_samples([(group, np.zeros(1, dtype=np.int64)) for group in expand_groups(pipeline, datasets)])
    assert [key for key, _ in whole] == [key for key, _ in short + long]


class _Client:
    """What the warm-up asks of a Dask client: ``submit``, recorded."""

    def __init__(self):
        self.submitted = []

    def submit(self, function, payload, pure):
        self.submitted.append(payload)
        return len(self.submitted)


def test_each_group_is_submitted_once_and_what_came_before_the_client_when_it_is_up(tmp_path):
    pipeline = _pipeline(tmp_path)
    datasets = open_datasets(pipeline, data_cache())
    samples = dataset_samples(pipeline, "long", datasets["long"])
    warm_up = KernelWarmUp()
    warm_up.add(samples)
    client = _Client()
    warm_up.submit(client)
    assert len(client.submitted) == 2 and warm_up.futures == [1, 2]
    warm_up.add(samples + dataset_samples(pipeline, "short", datasets["short"]))  # the plan gives them again
    warm_up.submit(client)
    assert len(client.submitted) == 3  # only the short dataset's group is new


class _Events(logging.Handler):
    """The messages of the loggers it is added to, in order (whatever the handlers and
    propagation other tests left on dolb's loggers)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_a_built_datasets_kernels_are_warmed_inside_the_data_phase(tmp_path, monkeypatch):
    monkeypatch.setenv("DOLB_DATA_CACHE", str(tmp_path / "empty-cache"))  # both datasets are built on the cluster
    path = tmp_path / "two.toml"
    path.write_text(textwrap.dedent(TWO_DATASETS))
    events = _Events()
    loggers = (phases.logger, warm_up.logger)  # the loggers of the modules run_sweep runs, as imported here
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.DEBUG)  # setLevel, not the attribute: it clears the loggers' cached levels
        monkeypatch.setattr(logger, "disabled", False)  # a logging configuration may have disabled it
        logger.addHandler(events)
    try:
        summary = run_sweep(path, tmp_path / "out", RunOptions(workers=2, progress=False))
    finally:
        for logger, level in zip(loggers, levels):
            logger.removeHandler(events)
            logger.setLevel(level)
    assert summary.ok and summary.n_computed == 12
    events = events.messages
    data = events.index("phase data")
    after_data = events.index("phase plan", data)
    submitted = [i for i, event in enumerate(events) if event.startswith("kernel warm-up submitted")]
    assert len(submitted) == 3  # irma on one dataset, rls and ngd on the other: each group once
    assert all(data < i < after_data for i in submitted)  # as each build ended, before the plan went on
    done = events.index("kernel warm-up done: 3 groups")
    assert after_data < done < events.index("phase compute")
