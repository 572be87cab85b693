"""Pipeline files: the valid ones load, every mistake is one clear ConfigError."""

import json
import textwrap
from pathlib import Path

import pytest

from dolb.errors import ConfigError
from dolb.experiment.pipeline import load_pipeline
from dolb.experiment.shipped import DATA_VARIABLE
from tests.studies import SHARED_DATA

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


@pytest.mark.parametrize(
    "old, new, message",
    [
        # the key path reaches list items: learners, their parameter values, reports
        ("stiffness = [0.1, 0.2]", 'stiffness = [0.1, "soft"]',
         "experiments.main.learners[0].params.stiffness[1]: expected a number, got 'soft'"),
        ("domain_high = 3.0 } },", "domain_high = -1 } },",
         "experiments.main.learners[1]: learner 'batch_ls': domain_high (-1.0) must exceed domain_low (0.0)"),
        ("complexity = [2, 3]", "complexity = [2, -1]", "experiments.main.learners[0].complexity[1]: "),
        ("complexity = 2,", 'complexity = "2",', "experiments.main.learners[1].complexity: "),
        ('metric = "test_mse"', 'metric = "test_mse"\nat = [5, 0]',
         "reports[0].at[1]: expected a positive whole number, got 0"),
        ('metric = "test_mse"', 'metric = "test_mse"\nstats = ["mean", "avg"]', "reports[0].stats[1]: 'avg' is not one of"),
        ('experiment = "main"', 'experiment = "mian"', "reports[0].experiment: no experiment 'mian' (did you mean 'main'?)"),
        ('"test_mse", "cumulative_loss"', '"test_mse", "test_mae"', "experiments.main.metrics[1]: 'test_mae' is not one of"),
        ('dataset = "toy"', 'dataset = ["toy", 3]', "experiments.main.dataset[1]: expected a string, got 3"),
        ("checkpoints = [5, 20]", "checkpoints = [5, 0]", "experiments.main.checkpoints[1]: expected a positive whole"),
        # a misspelt key, at every level, with the key meant
        ('[pipeline]', '[pipelin]', "pipelin: unknown key (did you mean 'pipeline'?)"),
        ('name = "demo"', 'nmae = "demo"', "pipeline.nmae: unknown key (did you mean 'name'?)"),
        ('generator = "irma"', 'generatr = "irma"', "datasets.toy.generatr: unknown key (did you mean 'generator'?)"),
        ('task = "regression"', 'tsak = "regression"', "experiments.main.tsak: unknown key (did you mean 'task'?)"),
        ("learners = [", "lerners = [", "experiments.main.lerners: unknown key (did you mean 'learners'?)"),
        ('scheme = "sequences"', 'schme = "sequences"', "experiments.main.split.schme: unknown key (did you mean 'scheme'?)"),
        ("checkpoints = [5, 20]", "checkpoints = { lg = 5 }",
         "experiments.main.checkpoints.lg: unknown key (did you mean 'log'?)"),
        ('{ learner = "irma"', '{ lerner = "irma"', "experiments.main.learners[0].lerner: unknown key (did you mean 'learner'?)"),
        ("stiffness = [0.1, 0.2]", "stiffnes = 0.1",
         "experiments.main.learners[0].params.stiffnes: unknown parameter of learner 'irma' (did you mean 'stiffness'?)"),
        ('kind = "table"', 'knd = "table"', "reports[0].knd: unknown key (did you mean 'kind'?)"),
        ("[[reports]]", "[execution]\nbatch_exmples = 1\n[[reports]]",
         "execution.batch_exmples: unknown key (did you mean 'batch_examples'?)"),
        ('task = "regression"', 'task = "regresion"',
         "experiments.main.task: 'regresion' is not one of regression, binary (did you mean 'regression'?)"),
        ('dataset = "toy"', 'dataset = "tyo"', "experiments.main.dataset: no dataset 'tyo' in [datasets] (did you mean 'toy'?)"),
        # no silent coercion: strings and booleans are not numbers, NaN and inf are not finite
        ("count = 4 }", 'count = "4" }', "experiments.main.split.count: expected a whole number, got '4'"),
        ("count = 4 }", "count = true }", "experiments.main.split.count: expected a whole number, got true"),
        ("count = 4 }", "count = 4.0 }", "experiments.main.split.count: expected a whole number, got 4.0"),
        ("seed = 1", "seed = true", "pipeline.seed: expected a whole number, got true"),
        ("seed = 1", "seed = -1", "pipeline.seed: must not be negative"),
        ("checkpoints = [5, 20]", "checkpoints = [5, true]", "experiments.main.checkpoints[1]: expected a positive whole"),
        ("stiffness = [0.1, 0.2]", "stiffness = nan", "experiments.main.learners[0].params.stiffness: expected a finite"),
        ("stiffness = [0.1, 0.2]", "stiffness = true", "experiments.main.learners[0].params.stiffness: expected a number"),
        ("[[reports]]", "[execution]\ncell_timeout = nan\n[[reports]]",
         "execution.cell_timeout: must be a positive, finite number of seconds, got nan"),
        ("[[reports]]", "[execution]\nstate_every = inf\n[[reports]]", "execution.state_every: must be a positive, finite"),
        ("[[reports]]", '[execution]\ncell_timeout = "600"\n[[reports]]', "execution.cell_timeout: expected a number, got '600'"),
        ("[[reports]]", "[execution]\ncell_timeout = true\n[[reports]]", "execution.cell_timeout: expected a number, got true"),
        ("[[reports]]", "[execution]\nbatch_examples = false\n[[reports]]",
         "execution.batch_examples: expected a whole number, got false"),
        ("[[reports]]", '[execution]\ncell_memory = "lots"\n[[reports]]',
         "execution.cell_memory: 'lots' is not a memory size such as '2 GB'"),
        ("[[reports]]", '[execution]\narithmetic = "haswell"\n[[reports]]',
         "execution.arithmetic: 'haswell' is not one of x86-64-v3, x86-64-v2, native"),
        ("count = 4 }", "count = 4, test_fraction = nan }",
         "experiments.main.split.test_fraction: only the 'holdout' scheme takes a test_fraction"),
        ("count = 4 }", 'count = 4, order = "windowed", window = 0 }',
         "experiments.main.split.window: expected a positive whole number, got 0"),
        ("count = 4 }", 'count = 4, order = "windowed", window = 2.5 }',
         "experiments.main.split.window: expected a whole number, got 2.5"),
        ("count = 4 }", 'count = 4, order = "random", window = 2 }',
         "experiments.main.split.window: only the 'windowed' order takes a window"),
        ("count = 4 }", 'count = 4, order = "chunked" }',
         "experiments.main.split.order: 'chunked' is not one of stored, random, windowed"),
        ('metrics = ["test_mse", "cumulative_loss"]', "metrics = 3", "experiments.main.metrics: expected a list, got 3"),
        ('params = { n_sequences = 4, length = 20 }', "params = 4", "datasets.toy.params: expected a table, got 4"),
    ],
)
def test_messages_give_the_key_path(tmp_path, old, new, message):
    assert old in VALID
    path = write(tmp_path, VALID.replace(old, new, 1))
    with pytest.raises(ConfigError) as error:
        load_pipeline(path)
    assert str(error.value).startswith(f"{path}: {message}"), str(error.value)
    assert "\n" not in str(error.value)


def test_several_mistakes_are_named_on_one_line(tmp_path):
    path = write(tmp_path, '[pipeline]\nname = "x"\nseed = 1\nextra = 2\n[datasets]\n[experiments]\n')
    with pytest.raises(ConfigError) as error:
        load_pipeline(path)
    assert str(error.value) == (
        f"{path}: pipeline.extra: unknown key (allowed: name, seed, description); "
        "datasets: must not be empty; experiments: must not be empty"
    )


def test_holdout_fraction_must_lie_in_the_open_interval(tmp_path):
    text = VALID.replace('scheme = "sequences", count = 4', 'scheme = "holdout", count = 4, test_fraction = 1')
    with pytest.raises(ConfigError, match=r"split.test_fraction: must lie strictly between 0 and 1, got 1"):
        load_pipeline(write(tmp_path, text))


def test_non_utf8_pipeline_is_one_line(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(VALID.replace('"demo"', '"d\xe9mo"').encode("latin-1"))
    with pytest.raises(ConfigError) as error:
        load_pipeline(path)
    assert str(error.value) == (
        f"{path}: not UTF-8 text (byte 0xe9 on line 3); save the pipeline file as UTF-8"
    )


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
    for path in sorted((Path(__file__).parents[1] / "pipelines").glob("*.toml")):
        pipeline = load_pipeline(path)
        assert pipeline.experiments, path


def test_the_online_mr_generalisation_streams_are_iid():
    """The online MR study's generalisation experiments are the paper's iid streams: every
    split in a seeded random order. In stored order the faces stream is its 100 faces then
    its 100 non-faces: at T = 50 every learner had seen faces only."""
    pipeline = load_pipeline(ROOT / "pipelines" / "online_mr.toml")
    orders = {name: spec.split.order for name, spec in pipeline.experiments.items() if name.startswith("gen_")}
    assert len(orders) == 8 and set(orders.values()) == {"random"}, orders


ROOT = Path(__file__).parents[1]
LOADED = json.loads((ROOT / "tests" / "data" / "pipeline_reprs.json").read_text())
"""The ``repr`` of the Pipeline each file loaded to with the hand-written loader of
commit 7b90b7b (a file shipped later: as first shipped; fields added since appear at
their defaults), the file's folder written ``<dir>``: cell ids are hashes of these
specs, so the loader must give the same dataclasses, values and types for every valid
file."""


@pytest.mark.parametrize("name", sorted(LOADED))
def test_pipelines_load_as_before(name, monkeypatch):
    """The shipped pipelines' real data are written ``<dir>/../../shared/data`` wherever
    the data folder is: beside the checkout, behind a symbolic link, or named by
    ``$DOLB_DATA`` (the loader gives resolved paths)."""
    monkeypatch.delenv(DATA_VARIABLE, raising=False)
    path = ROOT / name
    folder = path.resolve().parent
    text = repr(load_pipeline(path)).replace(str(SHARED_DATA.resolve()), "<dir>/../../shared/data")
    for place, real in (("<dir>", folder), ("<dir>/..", folder.parent), ("<dir>/../..", folder.parent.parent)):
        text = text.replace(str(real), place)
    assert text == LOADED[name]


def test_every_shipped_pipeline_is_compared():
    shipped = {f"pipelines/{path.name}" for path in (ROOT / "pipelines").glob("*.toml")}
    assert shipped <= set(LOADED)
