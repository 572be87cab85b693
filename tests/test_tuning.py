"""Tuning as a stage of the sweep: the search itself against closed forms and a
brute-force replay, no leakage from the test part, the same choices on 1 and 2 workers
and after a kill, and bad search spaces refused at the pipeline check."""

import logging
import textwrap

import numpy as np
import pandas as pd
import pytest

from dolb.cli import main
from dolb.evaluation.run_cell import run_cell
from dolb.execution.datasets import data_cache, open_datasets
from dolb.execution.reproduce import reproduce
from dolb.execution.sweep import run_sweep
from dolb.experiment.pipeline import load_pipeline
from dolb.experiment.search import Dimension, Tuning, best, brackets, halving_budgets, promote, rung_sizes
from dolb.experiment.tuned_cells import trial_group, tuned_group, tuning_plans
from dolb.options import RunOptions
from dolb.results import query
from dolb.results.history import read_records
from dolb.results.store import ResultStore
from dolb.results.tuning_report import tuning_table
from tests.conftest import assert_same
from tests.problems import write_problem

ALPHAS = [1e-05, 10.0, 100.0, 300.0, 1000.0, 3000.0]


@pytest.fixture
def problem(tmp_path):
    """The problem of :func:`write_problem` in ``tmp_path``."""
    write_problem(tmp_path)
    return tmp_path


def pipeline_text(folder, method="halving", extra="") -> str:
    return textwrap.dedent(f"""
        [pipeline]
        name = "tuned"
        seed = 11

        [datasets.noisy]
        importer = "svmlight"
        params = {{ path = "{folder}/train.svm", test_path = "{folder}/test.svm" }}

        [experiments.e]
        dataset = "noisy"
        task = "binary"
        split = {{ scheme = "given", count = 3, order = "random" }}
        checkpoints = [2400]
        metrics = ["test_error"]
        conversions = ["last", "average"]
        learners = [
          {{ learner = "sgd", params = {{ loss = "hinge", schedule = "sqrt", eta0 = 0.0003 }}, search = {{ alpha = {ALPHAS} }} }},
        ]
        tuning = {{ method = "{method}", min_budget = 100, eta = 2, conversion = "average" {extra} }}
    """)


def write_pipeline(folder, name="p.toml", **kwargs):
    path = folder / name
    path.write_text(pipeline_text(folder, **kwargs))
    return path


def decisions(out) -> pd.DataFrame:
    frame = pd.read_parquet(out / "tuning" / "tuned.parquet")
    return frame.sort_values(["split", "rung", "trial"]).reset_index(drop=True)


# -- the search, by itself -------------------------------------------------------------


def test_hyperband_brackets_are_li_et_al_table_1():
    """R = 81, eta = 3: Li et al. (2018), Table 1: (n, r) = (81, 1), (34, 3), (15, 9),
    (8, 27), (5, 81), each rung keeping 1/3."""
    space = [Dimension("eta0", low=0.01, high=1.0, log=True)]
    found = brackets(Tuning("hyperband", min_budget=1, eta=3), space, {"eta0": float}, 81, np.random.SeedSequence(0))
    assert [(len(b.candidates), b.budgets[0]) for b in found] == [(81, 1), (34, 3), (15, 9), (8, 27), (5, 81)]
    assert found[0].keep == (81, 27, 9, 3, 1) and found[0].budgets == (1, 3, 9, 27, 81)
    assert [b.first for b in found] == [0, 81, 115, 130, 138]
    assert all(0.01 <= v <= 1.0 for b in found for c in b.candidates for _, v in c)


def test_halving_schedule_and_promotions():
    assert halving_budgets(100, 2400, 2) == (150, 300, 600, 1200, 2400)
    assert rung_sizes(27, (1, 3, 9, 27), 3) == (27, 9, 3)
    assert promote({4: 0.2, 1: 0.2, 7: 0.1, 2: float("nan")}, 2) == [1, 7]  # a tie goes to the lower trial
    assert promote({4: 0.2, 7: 0.1, 2: float("nan")}, 3) == [2, 4, 7]  # a failed trial ranks last


def test_integer_ranges_give_whole_numbers_without_repeats():
    assert Dimension("k", low=1, high=4, steps=7).grid(int) == (1, 2, 3, 4)
    rng = np.random.default_rng(0)
    drawn = {Dimension("k", low=1, high=1000, log=True).sample(rng, int) for _ in range(200)}
    assert all(isinstance(v, int) and 1 <= v <= 1000 for v in drawn) and len(drawn) > 50


# -- on the engine ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def halved(tmp_path_factory):
    """(pipeline, result folder) of the halving pipeline on the problem of
    :func:`write_problem`, run once for the module on 2 workers; read it, never write into
    it."""
    folder = tmp_path_factory.mktemp("halved")
    write_problem(folder)
    path = write_pipeline(folder)
    run_sweep(path, folder / "out", RunOptions(workers=2, progress=False))
    return path, folder / "out"


def test_halving_finds_the_best_and_its_promotions_replay_exactly(halved):
    """Every trial's every rung computed from scratch, by itself, gives the stored losses
    bit for bit (the rungs a run continued from saved states included), and replaying
    the promotions over them gives the stored promotions and choices."""
    path, out = halved
    stored = decisions(out)
    plan = tuning_plans(load_pipeline(path), open_datasets(load_pipeline(path), data_cache(None)))[0]
    bracket = plan.brackets[0]
    for split in range(3):
        alive = list(bracket.trials)
        for rung in range(len(bracket.keep)):
            losses = {}
            for trial in alive:
                result = run_cell(trial_group(plan, bracket, trial, rung).cell(split))  # no state: from scratch
                losses[trial] = result["metrics"]["average"]["test_error"][0]
            here = stored[(stored.split == split) & (stored.rung == rung)]
            assert dict(zip(here.trial, here.validation_loss)) == losses
            kept = promote(losses, bracket.keep[rung + 1]) if rung + 1 < len(bracket.keep) else []
            assert sorted(here.trial[here.promoted]) == kept
            alive = kept
        full = {trial: run_cell(trial_group(plan, bracket, trial, len(bracket.keep) - 1).cell(split))
                ["metrics"]["average"]["test_error"][0] for trial in bracket.trials}
        chosen = stored[(stored.split == split) & stored.chosen].trial.unique().tolist()
        assert chosen == [best(full)], (split, full)  # the full grid's best on the validation
    tuned = pd.read_parquet(out / "results", filters=[("params", "==", "tuned, eta0=0.0003, loss=hinge, schedule=sqrt")])
    assert set(tuned.param_alpha) <= set(ALPHAS) and set(tuned.param_eta0) == {0.0003} and len(tuned)
    # the report's tuning table: what each split chose, and the examples its tuning spent
    store = ResultStore(out)
    table = tuning_table("e", "test_error", query.summary(store), store)
    chosen = stored[stored.chosen & (stored.rung == 0)].sort_values("split").param_alpha
    assert table["parameter"].tolist() == ["alpha"]
    assert table["chosen per split"].tolist() == [", ".join(f"{v:.4g}" for v in chosen)]
    assert table["examples per split"].tolist() == [6 * 1200 + 3 * 2400]
    shown = [path.read_text() for path in (out / "report").glob("*-tuning.md")]  # asked for by no [[reports]]
    assert len(shown) == 1 and table["chosen per split"][0] in shown[0]


def test_a_trial_is_checked_once_when_its_plan_is_made(problem, checks):
    """Its rungs' cells, and those of its configuration once chosen, take its parameters
    as the plan checked them."""
    pipeline = load_pipeline(write_pipeline(problem))
    plans = tuning_plans(pipeline, open_datasets(pipeline, data_cache(None)))
    assert checks == ["sgd"] * (1 + len(ALPHAS))  # the configuration, then each trial
    trials = [(plan, bracket, trial) for plan in plans for bracket in plan.brackets for trial in bracket.trials]
    groups = [trial_group(plan, bracket, trial, rung) for plan, bracket, trial in trials
              for rung in range(len(bracket.keep))]
    chosen = [tuned_group(plan, trial) for plan, _, trial in trials]
    assert sorted(group.template.params["alpha"] for group in chosen) == ALPHAS
    assert {group.template.params["alpha"] for group in groups} == set(ALPHAS)
    assert len(checks) == 1 + len(ALPHAS)


def test_the_test_part_never_enters_tuning(halved, problem):
    """Changing every test label changes no trial and no choice (only the test errors of
    the chosen configurations): a run on the problem with its test labels flipped against
    the module's run on the problem as it is."""
    out_a, out_b = halved[1], problem / "b"
    test = (problem / "test.svm").read_text().splitlines()
    (problem / "test.svm").write_text("\n".join(("-1" if line[0] == "+" else "+1") + line[2:] for line in test) + "\n")
    run_sweep(write_pipeline(problem), out_b, RunOptions(workers=1, progress=False))
    a, b = decisions(out_a), decisions(out_b)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    tuned = ("params", "==", "tuned, eta0=0.0003, loss=hinge, schedule=sqrt")
    test_a = pd.read_parquet(out_a / "results", filters=[tuned])
    test_b = pd.read_parquet(out_b / "results", filters=[tuned])
    assert (test_a.value.sort_values().to_numpy() != test_b.value.sort_values().to_numpy()).any()


def test_one_or_two_workers_and_a_kill_during_tuning_give_the_same_bits(problem, monkeypatch):
    from dolb.execution.gather import ClientWriter

    path = write_pipeline(problem, method="hyperband", extra=", max_budget = 1600")
    run_sweep(path, problem / "two", RunOptions(workers=2, progress=False))
    taken = []
    original = ClientWriter.take

    def killed_midway(self, outcome):
        taken.append(outcome.n_cells)
        if len(taken) == 3:
            raise KeyboardInterrupt  # the client is killed with some trials stored, others running
        return original(self, outcome)

    monkeypatch.setattr(ClientWriter, "take", killed_midway)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(path, problem / "one", RunOptions(workers=1, progress=False))
    monkeypatch.setattr(ClientWriter, "take", original)
    summary = run_sweep(path, problem / "one", RunOptions(workers=1, progress=False))
    assert summary.ok and 0 < summary.tuning["computed"] < summary.tuning["cells"]  # some trials were read
    assert_same(problem / "two", problem / "one")
    pd.testing.assert_frame_equal(decisions(problem / "two"), decisions(problem / "one"), check_exact=True)
    assert decisions(problem / "one").bracket.nunique() == 5  # log2(1600/100) = 4: brackets s = 4..0
    again = reproduce(problem / "two", problem / "again", options=RunOptions(workers=1))  # trials, promotions and choices again
    assert again.identical, again.describe()


def test_plan_counts_a_tuning_and_builds_its_data_where_the_run_will(problem, capsys):
    """``dolb plan`` says how many trial cells, examples and rungs a tuning takes at most
    (6 trials learn 1,200 examples, 3 of them 1,200 more, in 3 splits) and builds the data
    into the run's ``--data-cache``."""
    cache = problem / "cache"
    assert main(["plan", str(write_pipeline(problem)), "--out", str(problem / "out"), "--data-cache", str(cache)]) == 0
    printed = capsys.readouterr().out
    assert "tuning: at most 27 trial cells in 2 rungs (32,400 training examples" in printed, printed
    assert "then 3 cells of the chosen configurations" in printed
    assert any(cache.iterdir()) and not (problem / "out").exists()


def test_a_learner_may_have_its_own_tuning(problem):
    """A learner entry's ``tuning`` replaces the experiment's for it (here: grid search on
    progressive validation instead of halving on the holdout)."""
    own = ', tuning = { method = "grid", validation = "progressive" }'
    text = pipeline_text(problem).replace("search = {", own.removeprefix(", ") + ", search = {", 1)
    text = text.replace('learners = [\n', 'learners = [\n  { learner = "sgd", params = { loss = "logistic", '
                        'schedule = "sqrt", eta0 = 0.0003 }, search = { alpha = [1e-05, 10.0] } },\n', 1)
    path = problem / "own.toml"
    path.write_text(text)
    pipeline = load_pipeline(path)
    plans = tuning_plans(pipeline, open_datasets(pipeline, data_cache(None)))
    assert [(p.tuning.method, p.tuning.validation, p.brackets[0].budgets) for p in plans] == [
        ("halving", "holdout", (2400,)), ("grid", "progressive", (3000,))]  # two trials: one rung


def test_a_split_whose_every_trial_failed_chooses_nothing(problem):
    """Failed trials rank last; where every trial failed (a radius smaller than the rows'
    norms) no configuration is chosen, no cell of it runs and the run is not ok."""
    text = pipeline_text(problem).replace(
        '{ learner = "sgd", params = { loss = "hinge", schedule = "sqrt", eta0 = 0.0003 }, '
        f'search = {{ alpha = {ALPHAS} }} }}', '{ learner = "margin_perceptron", search = { radius = [0.01, 0.02] } }')
    path = problem / "failing.toml"
    path.write_text(text)
    summary = run_sweep(path, problem / "out", RunOptions(workers=1, progress=False))
    assert not summary.ok and summary.tuning["untuned"] == 3 and summary.tuning["failed"] == 6
    line = summary.counts_line()  # the listed radius's 3 cells failed; the 3 tuned ones have no choice
    assert line.startswith("6 cells: 0 already stored, 0 computed, 6 failed (3 tuned without a choice: every "
                           "tuning trial of their split failed, see `dolb status`); tuning: "), line
    assert read_records(ResultStore(problem / "out"))[-1]["counts"] == {"cells": 6, "cached": 0, "computed": 0,
                                                                          "failed": 6}
    assert not decisions(problem / "out").chosen.any()
    stored = pd.read_parquet(problem / "out" / "results")
    assert not stored.params.str.startswith("tuned").any()  # the listed radius (1.0) ran, and failed too


def test_a_failed_trial_tells_why_in_the_log_in_status_and_on_the_page(problem, monkeypatch, caplog, capsys):
    """A configuration that fails (a radius below every row's norm) beside one that does
    not: the run logs each failed trial on one line (learner, configuration, dataset,
    split, rung, budget and error), ``dolb status`` lists them under the tuning with the
    same lines and exits 1 (as the run), and the run page lists them."""
    text = pipeline_text(problem, extra=", defaults = false").replace(
        '{ learner = "sgd", params = { loss = "hinge", schedule = "sqrt", eta0 = 0.0003 }, '
        f'search = {{ alpha = {ALPHAS} }} }}', '{ learner = "margin_perceptron", search = { radius = [0.01, 100.0] } }')
    path = problem / "one_fails.toml"
    path.write_text(text)
    monkeypatch.setattr(logging.getLogger("dolb"), "propagate", True)  # the CLI's console may have stopped it
    out = problem / "out"
    with caplog.at_level(logging.WARNING, logger="dolb"):
        summary = run_sweep(path, out, RunOptions(workers=1, progress=False))
    assert (summary.tuning["failed"], summary.tuning["untuned"], summary.n_computed, summary.ok) == (3, 0, 3, False)
    failed = decisions(out)[lambda d: d.validation_loss.isna()]
    assert failed.param_radius.tolist() == [0.01] * 3 and failed.split.tolist() == [0, 1, 2]
    lines = [f"{cell}  margin_perceptron radius=0.01 on noisy, split {split}, rung 0 (2,400 examples): "
             "learner 'margin_perceptron': row 0 has norm " for cell, split in zip(failed.cell_id, failed.split)]
    logged = sorted(r.getMessage() for r in caplog.records if "tuning trial failed" in r.getMessage())
    assert len(logged) == 3
    for message, line in zip(logged, sorted(lines)):
        assert line in message and message.endswith("> radius 0.01"), message

    assert main(["status", str(out)]) == 1
    printed = capsys.readouterr().out
    assert "0 failed" in printed and "3 tuning trials failed (each ranked last at its rung):" in printed, printed
    assert all(line in printed for line in lines), printed
    page = (out / "report" / "index.html").read_text()
    assert "Failed cells" in page and all(cell in page for cell in failed.cell_id)


# -- bad input -------------------------------------------------------------------------

BAD = [
    ("search = { alpha = [] }", "search.alpha.choices: an empty list of choices gives no configuration"),
    ("search = { alpha = { low = 1.0, high = 0.1 } }", "search.alpha.low: must not exceed high"),
    ("search = { alpha = { low = 0.0, high = 1.0, log = true } }", "search.alpha.low: a log-scale range needs low > 0"),
    ("search = { alpha = { low = -1.0, high = 1.0 } }", "search.alpha.low: -1.0 is below the minimum 0.0"),
    ("search = { alpah = [0.1] }", "search.alpah: unknown parameter of learner 'sgd' (did you mean 'alpha'?)"),
    ("search = { loss = ['hinge'] }", "search.loss: searched, and also fixed in params"),
    ("search = { alpha = [5000.0] }", "learners[0].search: learner 'sgd': eta0 * alpha must be at most 1"),
]


def assert_refused(folder, capsys, text: str, message: str) -> None:
    """``dolb run`` of the pipeline ``text`` says ``message`` on one line, exits 2 and
    writes nothing."""
    path = folder / "bad.toml"
    path.write_text(text)
    assert main(["run", str(path), "--out", str(folder / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
    assert not (folder / "out").exists()


@pytest.mark.parametrize("search, message", BAD)
def test_a_bad_search_is_refused_with_one_line(problem, capsys, search, message):
    assert_refused(problem, capsys, pipeline_text(problem).replace(f"search = {{ alpha = {ALPHAS} }}", search), message)


@pytest.mark.parametrize("tuning, message", [
    ('method = "annealing"', "tuning.method: 'annealing' is not one of grid, random, halving, hyperband"),
    ('method = "halving", min_budget = 5000', "tuning.min_budget: 5000 exceeds the 2400 training examples"),
    ('method = "halving", min_budget = 100, max_budget = 9000', "tuning.max_budget: 9000 exceeds"),
    ('method = "halving", min_budget = 100, eta = 1', "tuning.eta: must be at least 2"),
    ('method = "halving"', "tuning.min_budget: halving needs the budget of its first rung"),
    ('method = "halving", min_budget = 100, metric = "online_loss"', "tuning.metric: holdout validation scores"),
    ('method = "halving", min_budget = 0.0', "tuning.min_budget: a fraction of the tuning stream lies in (0, 1]"),
])
def test_bad_tuning_is_refused_with_one_line(problem, capsys, tuning, message):
    text = pipeline_text(problem).replace(
        'tuning = { method = "halving", min_budget = 100, eta = 2, conversion = "average"  }', f"tuning = {{ {tuning} }}")
    assert tuning in text
    assert_refused(problem, capsys, text, message)


class MemoryStates(dict):
    """States kept in memory (the keeper a result folder's ``state/`` is, without the files)."""

    def load(self, key):
        return self.get(key)

    def save(self, key, data):
        self[key] = data

    def drop(self, key):
        self.pop(key, None)


def progressive_plan(tmp_path):
    """A halving of NGD's step size on progressive validation, IRMA regression, 2 splits."""
    path = tmp_path / "regression.toml"
    path.write_text(textwrap.dedent("""
        [pipeline]
        name = "regression"
        seed = 11
        [datasets.irma]
        generator = "irma"
        params = { n_sequences = 2, length = 20000, n_test = 200 }
        [experiments.e]
        dataset = "irma"
        task = "regression"
        split = { scheme = "sequences", count = 2 }
        checkpoints = [9000]
        metrics = ["online_loss"]
        learners = [{ learner = "ngd", complexity = 5, params = { domain_high = 3.0 }, search = { eta = [0.1, 0.3, 0.6, 0.9] } }]
        tuning = { method = "halving", min_budget = 1000, eta = 2, validation = "progressive", max_budget = 9000 }
    """))
    pipeline = load_pipeline(path)
    return tuning_plans(pipeline, open_datasets(pipeline, data_cache(None)))[0]


def test_a_rung_from_scratch_equals_the_rung_continued_from_its_state(tmp_path):
    """Progressive validation sums real-valued losses block by block: a rung started anew
    (its state lost) learns the stream in the rungs' pieces, so its online loss is the
    continued rung's to the bit (learned in one piece, the last bits differ)."""
    plan = progressive_plan(tmp_path)
    bracket = plan.brackets[0]
    assert bracket.budgets == (4500, 9000) and bracket.keep == (4, 2)
    for split in range(2):
        states = MemoryStates()
        continued = [run_cell(trial_group(plan, bracket, 0, rung).cell(split), states) for rung in range(2)]
        assert continued[1]["timing"]["resumed_from"] == 4500  # it did continue
        anew = run_cell(trial_group(plan, bracket, 0, 1).cell(split))
        assert anew["timing"]["resumed_from"] == 0
        assert anew["metrics"]["online"]["online_loss"] == continued[1]["metrics"]["online"]["online_loss"]


def test_a_rung_run_again_starts_from_the_state_its_previous_rung_left(tmp_path):
    """A rung whose result was lost after it left its state (its client killed before
    the part was stored) runs again from its previous rung's state, not from the one it
    left itself: the same values, and its next rung continues as before."""
    plan = progressive_plan(tmp_path)
    bracket = plan.brackets[0]
    states = MemoryStates()
    rungs = [trial_group(plan, bracket, 0, rung).cell(1) for rung in range(2)]
    first = run_cell(rungs[0], states)
    again = run_cell(rungs[0], states)
    assert again["metrics"] == first["metrics"] and again["timing"]["resumed_from"] == 0
    continued = run_cell(rungs[1], states)
    assert continued["timing"]["resumed_from"] == 4500
    assert run_cell(rungs[1], states)["metrics"] == continued["metrics"]  # the last rung, run again too
