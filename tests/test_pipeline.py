"""Pipeline files: the valid ones load, every mistake is one clear ConfigError."""

import textwrap

import pytest

from dolb.errors import ConfigError
from dolb.experiment.pipeline import load_pipeline

VALID = """
[pipeline]
name = "demo"
seed = 1

[datasets.toy]
generator = "irma"
params = { n_sequences = 4, length = 20 }

[experiments.main]
dataset = "toy"
task = "regression"
split = { scheme = "sequences", count = 4 }
checkpoints = [5, 20]
metrics = ["test_mse", "cumulative_loss"]
learners = [
  { learner = "irma", complexity = [2, 3], params = { domain_high = 3.0, stiffness = [0.1, 0.2] } },
  { learner = "batch_ls", complexity = 2, params = { domain_high = 3.0 } },
]

[[reports]]
kind = "table"
experiment = "main"
metric = "test_mse"
"""


def write(tmp_path, text):
    path = tmp_path / "p.toml"
    path.write_text(textwrap.dedent(text))
    return path


def test_valid_pipeline_loads_with_grid(tmp_path):
    pipeline = load_pipeline(write(tmp_path, VALID))
    experiment = pipeline.experiments["main"]
    irma = experiment.learners[0]
    assert irma.complexity == (2, 3)
    assert irma.grid == ((("domain_high", 3.0), ("stiffness", 0.1)), (("domain_high", 3.0), ("stiffness", 0.2)))
    assert experiment.learners[1].complexity == (2,)
    assert experiment.checkpoints == (5, 20)
    assert pipeline.reports[0].stats == ("mean", "std", "ci95")


@pytest.mark.parametrize(
    "old, new, key",
    [
        ('seed = 1', 'seed = "one"', "pipeline.seed"),
        ('seed = 1', 'seed = 1\ncolour = "red"', "pipeline.colour"),
        ('name = "demo"\n', "", "pipeline.name"),
        ('generator = "irma"', 'generator = "irma"\ntrain = "x"', "datasets.toy"),
        ('dataset = "toy"', 'dataset = "nope"', "experiments.main.dataset"),
        ('task = "regression"', 'task = "ranking"', "experiments.main.task"),
        ('scheme = "sequences"', 'scheme = "bootstrap"', "experiments.main.split.scheme"),
        ("count = 4 }", "count = 0 }", "experiments.main.split.count"),
        ("checkpoints = [5, 20]", "checkpoints = [20, 5]", "experiments.main.checkpoints"),
        ('"test_mse", "cumulative_loss"', '"test_error"', "experiments.main.metrics[0]"),
        ('learner = "irma"', 'learner = "nope"', "experiments.main.learners[0].learner"),
        ("stiffness = [0.1, 0.2]", 'stiffness = "soft"', "experiments.main.learners[0]"),
        ("stiffness = [0.1, 0.2]", "stiffnes = 0.1", "experiments.main.learners[0]"),
        ("stiffness = [0.1, 0.2]", "stiffness = []", "experiments.main.learners[0].params.stiffness"),
        ("complexity = [2, 3]", "complexity = [2, -1]", "experiments.main.learners[0]"),
        ('metric = "test_mse"', 'metric = "cumulative_loss"\nat = [0]', "reports[0].at[0]"),
        ('kind = "table"', 'kind = "pie"', "reports[0].kind"),
    ],
)
def test_bad_pipelines_name_file_and_key(tmp_path, old, new, key):
    assert old in VALID
    path = write(tmp_path, VALID.replace(old, new, 1))
    with pytest.raises(ConfigError) as error:
        load_pipeline(path)
    message = str(error.value)
    assert message.startswith(f"{path}: {key}"), message
    assert "\n" not in message


def test_malformed_toml(tmp_path):
    path = write(tmp_path, "[pipeline\nname=")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_pipeline(path)


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read pipeline file"):
        load_pipeline(tmp_path / "absent.toml")


def test_regression_learner_in_binary_experiment(tmp_path):
    text = VALID.replace('task = "regression"', 'task = "binary"').replace(
        '"test_mse", "cumulative_loss"', '"test_error"'
    ).replace('metric = "test_mse"', 'metric = "test_error"')
    with pytest.raises(ConfigError, match="is a regression learner"):
        load_pipeline(write(tmp_path, text))


def test_shipped_pipelines_are_valid():
    from pathlib import Path

    for path in sorted((Path(__file__).parents[1] / "pipelines").glob("*.toml")):
        pipeline = load_pipeline(path)
        assert pipeline.experiments, path
