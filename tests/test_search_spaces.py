"""Search spaces as a user writes them: whole-number ranges, stepped ranges drawn by the
searches that draw, ranges a grid cannot list, the bound on a search's trials, searched
names and true/false values in the tuning report, the reference page's tables, and grid
points that are the same bits on every processor."""

from collections import Counter
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from dolb.cli import main
from dolb.errors import ConfigError
from dolb.execution.datasets import data_cache, open_datasets
from dolb.experiment.pipeline import load_pipeline
from dolb.experiment.reference import pipeline_reference
from dolb.experiment.search import MAX_TRIALS, Dimension, Tuning, n_trials
from dolb.experiment.tuned_cells import tuning_plans
from tests import test_tuning
from tests.test_tuning import ALPHAS, assert_refused, pipeline_text

problem = test_tuning.problem
"""3,000 training and 1,000 test examples of a noisy halfspace in svmlight files (a fixture)."""

SGD = (f'{{ learner = "sgd", params = {{ loss = "hinge", schedule = "sqrt", eta0 = 0.0003 }}, '
       f'search = {{ alpha = {ALPHAS} }} }}')
TUNING = 'tuning = { method = "halving", min_budget = 100, eta = 2, conversion = "average"  }'


def with_search(folder, learner: str, tuning: str) -> str:
    """The test pipeline with ``learner`` (an inline table) as its one learner entry,
    tuned by the inline ``tuning``, of the last hypothesis only (as kernel learners give)."""
    text = pipeline_text(folder)
    assert SGD in text and TUNING in text and 'conversions = ["last", "average"]' in text
    text = text.replace('conversions = ["last", "average"]', 'conversions = ["last"]')
    return text.replace(SGD, learner).replace(TUNING, f"tuning = {{ {tuning} }}")


def trial_values(folder, text: str, name: str) -> list:
    """Every trial's value of ``name`` in the plan of the pipeline ``text``, in trial order."""
    path = folder / "p.toml"
    path.write_text(text)
    pipeline = load_pipeline(path)
    (plan,) = tuning_plans(pipeline, open_datasets(pipeline, data_cache(None)))
    return [plan.trial_params[trial][name] for trial in sorted(plan.trial_params)]


def degree(search: str) -> str:
    return f'{{ learner = "kernel_perceptron", params = {{ kernel = "poly" }}, search = {{ degree = {search} }} }}'


# -- whole numbers ---------------------------------------------------------------------


def test_a_whole_number_grid_holds_only_whole_numbers_inside_its_range(problem):
    grid = trial_values(problem, with_search(problem, degree("{ low = 1.5, high = 3.5, steps = 3 }"),
                                             'method = "grid"'), "degree")
    assert grid == [2, 3] and all(type(v) is int for v in grid)  # was 2 and 4
    logged = trial_values(problem, with_search(problem, degree("{ low = 1.0, high = 8.0, log = true, steps = 4 }"),
                                               'method = "grid"'), "degree")
    assert logged == [1, 2, 4, 8]
    assert Dimension("k", low=0.5, high=10.4, steps=100).grid(int) == tuple(range(1, 11))


def test_a_whole_number_draw_takes_each_whole_number_inside_alike(problem):
    drawn = trial_values(problem, with_search(problem, degree("{ low = 0.6, high = 3.4 }"),
                                              'method = "random", trials = 3000'), "degree")
    counts = Counter(drawn)
    assert set(counts) == {1, 2, 3} and all(900 < n < 1100 for n in counts.values()), counts  # was 1/4, 1/2, 1/4
    rng = np.random.default_rng(0)
    logged = Counter(Dimension("k", low=1, high=3, log=True).sample(rng, int) for _ in range(6000))
    cells = np.diff(np.log([0.5, 1.5, 2.5, 3.5])) / np.log(3.5 / 0.5)  # each whole number's half-unit cell
    assert np.allclose([logged[k] / 6000 for k in (1, 2, 3)], cells, atol=0.02), logged


@pytest.mark.parametrize("search, tuning", [
    ("{ low = 2.2, high = 2.8, steps = 2 }", 'method = "grid"'),
    ("{ low = 2.2, high = 2.8 }", 'method = "random", trials = 4'),
])
def test_a_whole_number_range_without_a_whole_number_is_refused(problem, capsys, search, tuning):
    assert_refused(problem, capsys, with_search(problem, degree(search), tuning),
                   "learners[0].search.degree: 'degree' takes whole numbers, and none lies between low 2.2 and high 2.8")


# -- stepped ranges are grids ------------------------------------------------------------

STEPPED = ('{ learner = "sgd", params = { loss = "hinge", schedule = "sqrt", eta0 = 0.0003 }, '
           'search = { alpha = { low = 1e-05, high = 0.1, log = true, steps = 5 } } }')
POINTS = {1e-05, 0.0001, 0.001, 0.01, 0.1}


@pytest.mark.parametrize("tuning", [
    'method = "random", trials = 20',
    'method = "halving", trials = 8, min_budget = 100',
    'method = "hyperband", min_budget = 100',
])
def test_a_search_that_draws_from_a_stepped_range_draws_its_grid_points(problem, tuning):
    drawn = trial_values(problem, with_search(problem, STEPPED, tuning), "alpha")
    assert set(drawn) <= POINTS and len(set(drawn)) > 1, drawn  # was 1.0024e-05, 0.0619, ...


@pytest.mark.parametrize("tuning, message", [
    ('method = "grid"', "search.alpha.steps: grid search tries every point of a grid: give the range steps"),
    ('method = "halving", min_budget = 100',
     "search.alpha.steps: halving without trials tries every point of a grid: give the range steps, or give the "
     "tuning trials"),
])
def test_a_range_without_steps_under_a_grid_is_refused(problem, capsys, tuning, message):
    learner = STEPPED.replace(", steps = 5", "")
    assert_refused(problem, capsys, with_search(problem, learner, tuning), message)  # was a TypeError


# -- the bound on trials -----------------------------------------------------------------


@pytest.mark.parametrize("learner, tuning, message", [
    (STEPPED.replace("steps = 5", "steps = 1000000"), 'method = "grid"',
     "search.alpha.steps: 1,000,000 steps exceed the bound of 10,000 trials a search plans per configuration"),
    (STEPPED.replace("} } }", '}, eta0 = { low = 0.0001, high = 0.001, steps = 200 } } }')
            .replace(", eta0 = 0.0003", "").replace("steps = 5", "steps = 100"), 'method = "grid"',
     "learners[0].search: grid plans 20,000 trials per configuration, over the bound of 10,000 (fewer steps or "
     "choices)"),
    (STEPPED, 'method = "random", trials = 20000',
     "tuning.trials: 20,000 trials exceed the bound of 10,000 a search plans per configuration"),
])
def test_a_search_over_the_bound_of_trials_is_refused(problem, capsys, learner, tuning, message):
    assert_refused(problem, capsys, with_search(problem, learner, tuning), message)  # was a hang


def test_hyperband_over_the_bound_of_trials_is_refused_before_any_trial_is_drawn(problem):
    path = problem / "p.toml"
    path.write_text(with_search(problem, STEPPED, 'method = "hyperband", min_budget = 1'))
    pipeline = load_pipeline(path)
    large = {"noisy": {part: SimpleNamespace(fingerprint=part, n_rows=1_000_000, path=part, n_features=8,
                                             sparse=False) for part in ("train", "test")}}
    with pytest.raises(ConfigError, match=r"tuning\.min_budget: hyperband plans [\d,]+ trials per "
                                          r"configuration, over the bound of 10,000 \(a larger min_budget or eta\)"):
        tuning_plans(pipeline, large)
    assert n_trials(Tuning("hyperband", min_budget=1, eta=3), [], {}, 81) == 143  # Li et al., R = 81
    assert MAX_TRIALS == 10_000 and "10,000" in pipeline_reference()


# -- names and true/false in the tuning report ------------------------------------------


def test_the_tuning_report_shows_searched_names_and_true_or_false(problem):
    text = with_search(problem, '{ learner = "sgd", params = { schedule = "sqrt", eta0 = 0.0003, alpha = 1e-05 }, '
                                'search = { loss = ["hinge", "logistic"] } }', 'method = "grid"')
    text = text.replace("learners = [", 'learners = [\n  { learner = "kernel_sgd", params = { kernel = "linear", '
                                         'budget = 20 }, search = { offset = [true, false] } },')
    path = problem / "p.toml"
    path.write_text(text)
    assert main(["run", str(path), "--out", str(problem / "out"), "--workers", "1"]) == 0  # was a ValueError
    chosen = pd.read_parquet(problem / "out" / "tuning" / "tuned.parquet").query("chosen")
    (report,) = (problem / "out" / "report").glob("*-tuning.md")
    shown = report.read_text()
    losses = ", ".join(chosen[chosen.learner == "sgd"].sort_values("split").param_loss)
    offsets = ", ".join(str(v).lower() for v in chosen[chosen.learner == "kernel_sgd"].sort_values("split").param_offset)
    assert all(type(v) is bool for v in chosen.param_offset.dropna())  # stored as true/false, not 0.0 and 1.0
    assert losses in shown and offsets in shown, shown


# -- the reference -----------------------------------------------------------------------


def test_the_pipeline_reference_has_the_search_and_tuning_keys():
    page = pipeline_reference()
    search = page[page.index("## search = "):page.index("## tuning = ")]
    tuning = page[page.index("## tuning = "):page.index("## [[reports]]")]
    for key in ("choices", "low", "high", "log", "steps"):
        assert f"| `{key}` |" in search
    assert "whole numbers inside `[low, high]`" in search
    for key in ("method", "trials", "eta", "min_budget", "max_budget", "validation", "holdout", "metric",
                "conversion", "defaults", "seed"):
        assert f"| `{key}` |" in tuning
    assert "One of grid, random, halving, hyperband." in tuning


# -- the same bits on every processor ---------------------------------------------------


def test_log_grid_points_are_the_same_bits_on_every_processor():
    """10 ** y rounded once, y evenly spaced between the ends' logarithms: the points a
    processor without AVX-512 gets from NumPy's geomspace, where an AVX-512 one got
    0x1.e186ee7ea68d9p-5 (and 0x1.4f8b588e368f0p-17) for the sixth (third) point."""
    grid = Dimension("C", low=0.01, high=100.0, log=True, steps=27).grid(float)
    assert grid[5].hex() == "0x1.e186ee7ea68dap-5"
    grid = Dimension("C", low=1e-06, high=0.01, log=True, steps=9).grid(float)
    assert grid[2].hex() == "0x1.4f8b588e368f1p-17"
    assert Dimension("C", low=0.001, high=10.0, log=True, steps=5).grid(float) == (0.001, 0.01, 0.1, 1.0, 10.0)
    linear = Dimension("C", low=0.1, high=0.7, steps=7).grid(float)
    assert linear == tuple(np.linspace(0.1, 0.7, 7).tolist())  # linspace is plain arithmetic: kept as it was
