"""The cutoff-averaging study: Dekel, "From Online to Batch Learning with Cutoff-Averaging"
(NIPS 2008). From the result folder of
``dolb run pipelines/cutoff_rcv1.toml --out runs/cutoff_rcv1`` its tables

- ``findings``: each finding of the paper beside the number of ours that tests it;
- ``perceptron``: per conversion, the Perceptron's mean test error at 5,000 examples,
  the problems where it is the worst conversion there, and how often its test error
  rises from one checkpoint to the next (from 100 examples on);
- ``perceptron_tests``: per problem, the three conversions' mean test error at 5,000
  examples and the paired t-tests between them over the splits;
- ``bound_k``: per problem, the share of checkpoints where the risk bound chose k = 0
  (plain averaging) and the largest k it chose;
- ``loss_by_k``: on CCAT/ECAT at 5,000 examples, N_k / m and the empirical loss L̂_k
  per cutoff k, the two sides of the bound, and the test error of the cutoff average
  H*_k at that k (from the CCAT/ECAT cells learned again, :func:`error_by_k`);
- ``margin``: per training size, the margin Perceptron's mean test hinge loss per
  conversion, the problems where averaging is above the last hypothesis with the
  largest paired t-test p over them, and the longest survival of a hypothesis.

Means are over the six problems and the ten splits unless a table says otherwise. The
run of ``pipelines/cutoff_rcv1_scale.toml`` gives the study's scale tables and figures
(:mod:`dolb.studies.cutoff_scale`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dolb.conversions.cutoff import REPORTED_K, cutoff_hypothesis
from dolb.conversions.hypothesis import linear_hypothesis
from dolb.data.store import open_dataset
from dolb.errors import DataError
from dolb.evaluation.metrics import METRICS
from dolb.evaluation.run_cell import cell_rows
from dolb.execution.datasets import data_cache, open_datasets
from dolb.experiment.cells import expand_groups
from dolb.experiment.pipeline import load_pipeline
from dolb.learners import learner_class
from dolb.results.history import find_record
from dolb.results.store import ResultStore
from dolb.results.tables import paired_table
from dolb.studies import STUDIES
from dolb.studies.cutoff_scale import SCALE_FIGURES, SCALE_TABLES, per_k
from dolb.studies.study import Claim, Figure, Study, Table, Verdict, report_figure

STUDY = "cutoff_averaging"
CONVERSIONS = {"last": "last hypothesis", "average": "averaging", "cutoff": "cutoff averaging"}
LAST = 5000
"""The largest training size: where the conversions are compared."""
STEADY = 100
"""The size from which rises of the test error between checkpoints are counted."""
TESTED = (100, 1000, 5000)
"""The sizes at which the margin Perceptron's largest p is quoted."""
LOSS_PROBLEM = "ccat_ecat"
"""The problem on which the bound's two sides and H*_k are shown per k."""


def problem_name(dataset: str) -> str:
    """``"ccat_ecat"`` as ``"CCAT/ECAT"``."""
    return dataset.upper().replace("_", "/")


def _values(frame: pd.DataFrame, experiment: str, metric: str) -> pd.DataFrame:
    return frame[(frame.experiment == experiment) & (frame.metric == metric)]


def mean_at(frame: pd.DataFrame, experiment: str, metric: str, n: int = LAST) -> pd.Series:
    """Per conversion, the mean of ``metric`` at ``n`` examples over problems and splits."""
    values = _values(frame, experiment, metric)
    return values[values.n_train == n].groupby("conversion")["value"].mean()


def rises(frame: pd.DataFrame) -> pd.Series:
    """Per conversion, the share of the Perceptron's steps from one checkpoint to the
    next (from :data:`STEADY` examples on, every problem and split) where its test error rises."""
    error = _values(frame, "fig2", "test_error")
    curves = error[error.n_train >= STEADY].pivot_table(index=["conversion", "dataset", "split"],
                                                        columns="n_train", values="value")
    steps = curves.diff(axis=1).iloc[:, 1:]
    risen = (steps > 0).groupby(level="conversion").sum().sum(axis=1)
    return risen / steps.notna().groupby(level="conversion").sum().sum(axis=1)


def worst_count(frame: pd.DataFrame) -> pd.Series:
    """Per conversion, the problems where its mean test error at :data:`LAST` examples is
    the largest of the three (ties count for each)."""
    error = _values(frame, "fig2", "test_error")
    means = error[error.n_train == LAST].groupby(["dataset", "conversion"])["value"].mean().unstack()
    return means.eq(means.max(axis=1), axis=0).sum()


def perceptron(frame: pd.DataFrame) -> tuple[list, list]:
    """The ``perceptron`` table: per conversion, mean test error at 5,000, problems
    where it is the worst, share of rises between checkpoints."""
    means, worst, risen = mean_at(frame, "fig2", "test_error"), worst_count(frame), rises(frame)
    n_problems = frame.loc[frame.experiment == "fig2", "dataset"].nunique()
    columns = [("conversion", None), (f"test error at {LAST:,}", ".2%"),
               (f"problems (of {n_problems}) where it is the worst at {LAST:,}", "d"),
               (f"rises between checkpoints from {STEADY} on", ".1%")]
    return columns, [[name, means[c], int(worst[c]), risen[c]] for c, name in CONVERSIONS.items()]


def paired(frame: pd.DataFrame, experiment: str, metric: str, baseline: str, at=(LAST,)) -> pd.DataFrame:
    """:func:`~dolb.results.tables.paired_table` of the conversions against ``baseline``,
    indexed by dataset, training size and conversion."""
    table = paired_table(frame, experiment, metric, list(at) if at else None, "conversion", baseline)
    return table.set_index(["dataset", "n_train", "conversion"])


def perceptron_tests(frame: pd.DataFrame) -> tuple[list, list]:
    """The ``perceptron_tests`` table: per problem, the mean test error of each
    conversion at 5,000 examples and the paired t-test p of averaging and cutoff
    against the last hypothesis, and of cutoff against averaging."""
    against_last = paired(frame, "fig2", "test_error", "last")
    against_average = paired(frame, "fig2", "test_error", "average")
    columns = [("problem", None), *[(f"{name}: test error at {LAST:,}", ".2%") for name in CONVERSIONS.values()],
               ("p: averaging vs last", ".2g"), ("p: cutoff vs last", ".2g"), ("p: cutoff vs averaging", ".2g")]
    rows = []
    for dataset in sorted(set(against_last.index.get_level_values("dataset"))):
        average, cutoff = against_last.loc[dataset, LAST, "average"], against_last.loc[dataset, LAST, "cutoff"]
        rows.append([problem_name(dataset), average["baseline mean"], average["mean"], cutoff["mean"],
                     average["p"], cutoff["p"], against_average.loc[dataset, LAST, "cutoff"]["p"]])
    return columns, rows


def chosen_k(frame: pd.DataFrame) -> pd.DataFrame:
    """Per problem and over all (``"all"``), the checkpoints of the Perceptron's cutoff
    output, the share where the bound chose k = 0 and the largest k chosen."""
    k = _values(frame, "fig2", "cutoff_k")
    every = pd.concat([k, k.assign(dataset="all")])
    return every.groupby("dataset")["value"].agg(checkpoints="count", zero=lambda v: (v == 0).mean(), largest="max")


def bound_k(frame: pd.DataFrame) -> tuple[list, list]:
    """The ``bound_k`` table: :func:`chosen_k` per problem, then over all six."""
    chosen = chosen_k(frame)
    sizes = sorted(set(frame.loc[frame.experiment == "fig2", "n_train"]))
    columns = [("problem", None), (f"checkpoints ({sizes[0]:,} to {sizes[-1]:,} examples, all splits)", ",d"),
               ("k = 0 (averaging)", ".0%"), ("largest k", "d")]
    order = [d for d in chosen.index if d != "all"] + ["all"]
    return columns, [[problem_name(d) if d != "all" else "all six", int(chosen.loc[d, "checkpoints"]),
                      chosen.loc[d, "zero"], int(chosen.loc[d, "largest"])] for d in order]


def learned(folder: Path, dataset: str = LOSS_PROBLEM, n: int = LAST):
    """The Perceptron cells of ``fig2`` on ``dataset`` of the run in ``folder``, learned
    again up to ``n`` examples: per split, ``(split, learner, X_test, y_test)``. The
    pipeline is the run's own (its recorded text), its data the data cache's."""
    record = find_record(ResultStore(folder))
    pipeline = load_pipeline(record["pipeline_path"], record["pipeline_text"])
    groups = expand_groups(pipeline, open_datasets(pipeline, data_cache()))
    group = next((g for g in groups if g.experiment == "fig2" and g.template.dataset == dataset), None)
    if group is None:
        raise DataError(f"{folder}: the run's pipeline has no fig2 cells on {dataset}")
    for split in range(group.n_splits):
        cell = group.cell(split)
        train = open_dataset(cell.train_path)
        train_rows, test_rows, test_path = cell_rows(cell, train)
        learner = learner_class(cell.spec.learner)(train.n_features, n_train=len(train_rows),
                                                   conversions=cell.spec.conversions, **cell.spec.params)
        X, y = train.read(train_rows[:n])
        learner.learn(X, y.astype(np.float64))
        X_test, y_test = open_dataset(test_path).read(test_rows)
        yield split, learner, X_test, y_test.astype(np.float64)


def error_of(weights: np.ndarray, X, y: np.ndarray) -> float:
    """The test error of the linear hypothesis ``weights`` (as the run measures it)."""
    return METRICS["test_error"].compute(linear_hypothesis(weights).predict(X), y)


def error_by_k(folder: Path, frame: pd.DataFrame, dataset: str = LOSS_PROBLEM, n: int = LAST) -> pd.DataFrame:
    """The test error of the cutoff average H*_k for every k with N_k > 0, one row per
    split of :func:`learned` (NaN past its longest survival). DataError when the
    re-learned conversions' test errors are not the ones the run recorded."""
    recorded = _values(frame, "fig2", "test_error")
    recorded = recorded[(recorded.dataset == dataset) & (recorded.n_train == n)].set_index(["split", "conversion"])
    errors = {}
    for split, learner, X_test, y_test in learned(folder, dataset, n):
        for conversion, hypothesis in learner.outputs().items():
            again = METRICS["test_error"].compute(hypothesis.predict(X_test), y_test)
            if again != recorded.loc[(split, conversion), "value"]:
                raise DataError(f"{folder}: {dataset}, split {split}: learned again, the {conversion} test error at "
                                f"{n:,} is {again}, the run has {recorded.loc[(split, conversion), 'value']}")
        longest = int(learner.outputs()["cutoff"].info["cutoff_max_r"])
        errors[split] = pd.Series([error_of(cutoff_hypothesis(learner, k)[0], X_test, y_test)
                                   for k in range(longest)])
    return pd.DataFrame(errors).T.rename_axis(index="split", columns="k")


def common_k(errors: pd.DataFrame) -> int:
    """The largest k that every split has (N_k > 0 in each)."""
    return int(errors.notna().all(axis=0)[::-1].idxmax())


def reported(frame: pd.DataFrame, what: str) -> pd.Series:
    """Per reported k, the mean over the splits of ``cutoff_<what>_k<k>`` (N_k or L̂_k)
    on :data:`LOSS_PROBLEM` at :data:`LAST` examples (NaN where a split has N_k = 0)."""
    values = per_k(frame[(frame.experiment == "fig2") & (frame.dataset == LOSS_PROBLEM)], what)
    return values[values.n_train == LAST].set_index("k")["value"]


def loss_by_k(frame: pd.DataFrame, errors: pd.DataFrame) -> tuple[list, list]:
    """The ``loss_by_k`` table: on :data:`LOSS_PROBLEM` at :data:`LAST` examples, per
    reported k that every split has, N_k / m, L̂_k and the test error of H*_k, means
    over the splits."""
    n, loss, error = reported(frame, "n"), reported(frame, "loss"), errors.mean()
    columns = [("k", "d"), ("N_k / m", ".3g"), ("L̂_k", ".3g"), ("test error of H*_k", ".2%")]
    return columns, [[k, n[k] / LAST, loss[k], error[k]] for k in REPORTED_K if k <= common_k(errors)]


def margin_measures(frame: pd.DataFrame) -> pd.DataFrame:
    """Per training size, for the margin Perceptron: mean test hinge loss per
    conversion, the problems where averaging's is above the last hypothesis's and the
    largest paired t-test p over the problems, the largest |cutoff − averaging| of a
    split and the longest survival of a hypothesis."""
    hinge = _values(frame, "fig3", "test_hinge")
    means = hinge.groupby(["n_train", "conversion"])["value"].mean().unstack()
    average = paired(frame, "fig3", "test_hinge", "last", at=None).xs("average", level="conversion")
    by_size = average.groupby(level="n_train")
    split_values = hinge.pivot_table(index=["dataset", "split", "n_train"], columns="conversion", values="value")
    gap = (split_values["cutoff"] - split_values["average"]).abs().groupby(level="n_train").max()
    longest = _values(frame, "fig3", "cutoff_max_r").groupby("n_train")["value"].max()
    return means.assign(above=by_size["mean difference"].apply(lambda d: int((d > 0).sum())),
                        problems=by_size.size(), p=by_size["p"].max(), gap=gap, longest=longest)


def margin(frame: pd.DataFrame) -> tuple[list, list]:
    """The ``margin`` table: :func:`margin_measures` per training size."""
    measures = margin_measures(frame)
    columns = [("m", ",d"), *[(f"test hinge: {name}", ".3g") for name in CONVERSIONS.values()],
               (f"problems (of {measures.problems.max()}) where averaging is above last", "d"),
               ("largest p over the problems", ".1e"), ("longest survival r", "d")]
    return columns, [[m, *(row[c] for c in CONVERSIONS), int(row.above), row.p, int(row.longest)]
                     for m, row in measures.iterrows()]


def _perceptron_findings(frame: pd.DataFrame) -> list[list]:
    """The rows of :func:`findings` on the Perceptron's last hypothesis."""
    risen, worst, last = rises(frame), worst_count(frame), CONVERSIONS["last"]
    p = paired(frame, "fig2", "test_error", "last").xs("average", level="conversion")["p"].max()
    return [
        ["Perceptron: the last hypothesis is unstable; more data can make it worse",
         f"share of the steps between checkpoints (from {STEADY} examples on) where the test error rises: {last}",
         risen["last"]],
        ["", f"the same for {CONVERSIONS['average']}", risen["average"]],
        ["", f"problems (of {int(worst.sum())}) where the {last} is the worst conversion at {LAST:,}",
         int(worst["last"])],
        ["", f"largest p over the problems, {CONVERSIONS['average']} against the {last} at {LAST:,}", p],
    ]


def _cutoff_findings(frame: pd.DataFrame, errors: pd.DataFrame) -> list[list]:
    """The rows of :func:`findings` on the Perceptron's cutoff averaging."""
    error, chosen = mean_at(frame, "fig2", "test_error"), chosen_k(frame).loc["all"]
    loss, top = reported(frame, "loss"), common_k(errors)
    error_k, there = errors.mean()[: top + 1], f"on {problem_name(LOSS_PROBLEM)} at {LAST:,}"
    k_loss = max(k for k in REPORTED_K if k <= top)
    return [
        ["Perceptron: cutoff averaging is accurate and stable, slightly better than simple averaging",
         f"mean test error at {LAST:,}: {CONVERSIONS['last']}", error["last"]],
        *[["", f"the same for {CONVERSIONS[c]}", error[c]] for c in ("average", "cutoff")],
        ["", "share of the checkpoints where the bound chose k = 0 (averaging)", chosen["zero"]],
        ["", "largest k the bound chose", int(chosen["largest"])],
        ["", f"L̂_k, the mistake rate on the rounds counted at cutoff k, {there}: k = 0", loss[0]],
        ["", f"the same at k = {k_loss}", loss[k_loss]],
        ["", f"test error of the cutoff average H*_k {there}, smallest over k = 0 … {top}", error_k.min()],
        ["", "the same, largest", error_k.max()],
    ]


def _margin_findings(frame: pd.DataFrame) -> list[list]:
    """The rows of :func:`findings` on the margin Perceptron."""
    margins, last = margin_measures(frame), CONVERSIONS["last"]
    return [
        ["margin Perceptron: the last hypothesis is very good, simple averaging clearly worse at every size",
         f"sizes × problems (of {int(margins.problems.sum())}) where averaging's test hinge loss is above the "
         f"{last}'s", int(margins.above.sum())],
        ["", f"largest p over the problems, averaging against the {last}, at {', '.join(f'{n:,}' for n in TESTED)}",
         margins.loc[list(TESTED), "p"].max()],
        ["margin Perceptron: cutoff averaging catches up with the last hypothesis early and stays close",
         "largest |cutoff − averaging| test hinge loss of a split, any size", margins.gap.max()],
        ["", "longest survival of a hypothesis (rounds)", int(margins.longest.max())],
    ]


def findings(frame: pd.DataFrame, errors: pd.DataFrame) -> tuple[list, list]:
    """The ``findings`` table: each finding of the paper, then the numbers of ours that
    test it (shares and errors as fractions)."""
    rows = _perceptron_findings(frame) + _cutoff_findings(frame, errors) + _margin_findings(frame)
    return [("the paper finds", None), ("what we measure", None), ("ours", ".3g")], rows


def _errors(run) -> pd.DataFrame:
    """:func:`error_by_k` of ``run``, computed once for the two tables that read it."""
    return run.once("error_by_k", lambda: error_by_k(run.folder, run.tidy))


def _rows(tables, name: str) -> dict[str, list]:
    return {row[0]: row[1:] for row in tables[name]["rows"]}


def last_unstable(tables) -> Verdict:
    """The last hypothesis's test error rises between checkpoints over 5 times as often
    as averaging's, and it is the worst conversion on most problems."""
    rows, n = _rows(tables, "perceptron"), tables["perceptron"]["columns"][2]["name"]
    last, average = rows[CONVERSIONS["last"]], rows[CONVERSIONS["average"]]
    return Verdict(last[2] > 5 * average[2] and last[1] > 3,
                   f"rises: last {last[2]:.1%}, averaging {average[2]:.1%}; {n}: {last[1]}")


def averaging_better(tables) -> Verdict:
    """Averaging's test error at 5,000 below the last hypothesis's on every problem, p < 0.05."""
    rows = _rows(tables, "perceptron_tests")
    better = all(row[1] < row[0] and row[3] < 0.05 for row in rows.values())
    return Verdict(better, f"largest p over the {len(rows)} problems: {max(row[3] for row in rows.values()):.2g}")


def cutoff_as_averaging(tables) -> Verdict:
    """Cutoff averaging's mean test error at 5,000 within 0.1 percentage point of
    averaging's (the paper: slightly better)."""
    rows = _rows(tables, "perceptron")
    cutoff, average = rows[CONVERSIONS["cutoff"]][0], rows[CONVERSIONS["average"]][0]
    return Verdict(abs(cutoff - average) < 0.001, f"cutoff {cutoff:.2%}, averaging {average:.2%}")


def margin_last_best(tables) -> Verdict:
    """For the margin Perceptron, averaging's test hinge loss above the last
    hypothesis's on every problem at every size."""
    record = tables["margin"]
    problems = int(record["columns"][4]["name"].split("(of ")[1].split(")")[0])
    above = [row[4] for row in record["rows"]]
    return Verdict(all(a == problems for a in above), f"problems where averaging is above last, per size: "
                                                      f"{min(above)} to {max(above)} of {problems}")


def margin_cutoff_catches_up(tables) -> Verdict:
    """For the margin Perceptron, cutoff averaging's test hinge loss at the largest size
    closer to the last hypothesis's than averaging's is."""
    m, last, average, cutoff, *_ = tables["margin"]["rows"][-1]
    return Verdict(abs(cutoff - last) < abs(average - last),
                   f"at m = {m:,}: last {last:.3g}, averaging {average:.3g}, cutoff {cutoff:.3g}")


STUDY = Study(
    name="cutoff_averaging",
    title="The cutoff-averaging study",
    paper='Dekel, "From Online to Batch Learning with Cutoff-Averaging" (NIPS 2008).',
    pipelines=("cutoff_rcv1", "cutoff_rcv1_scale"),
    tables=(Table("findings", lambda run: findings(run.tidy, _errors(run)), ("fig2", "fig3")),
            Table("perceptron", lambda run: perceptron(run.tidy), ("fig2",)),
            Table("perceptron_tests", lambda run: perceptron_tests(run.tidy), ("fig2",)),
            Table("bound_k", lambda run: bound_k(run.tidy), ("fig2",)),
            Table("loss_by_k", lambda run: loss_by_k(run.tidy, _errors(run)), ("fig2",)),
            Table("margin", lambda run: margin(run.tidy), ("fig3",)),
            *SCALE_TABLES),
    figures=(Figure("cutoff_fig2.png", report_figure("01-fig2-test_error-curve.png"), ("fig2",),
                    "Fig. 2: test error of the Perceptron's conversions, six RCV1 problems"),
             Figure("cutoff_fig3.png", report_figure("02-fig3-test_hinge-curve.png"), ("fig3",),
                    "Fig. 3: test hinge loss of the margin Perceptron's conversions, six RCV1 problems"),
             *SCALE_FIGURES),
    claims=(
        Claim("Perceptron: the last hypothesis is unstable; more data can make it worse", last_unstable,
              ("perceptron",)),
        Claim("Perceptron: averaging is better than the last hypothesis", averaging_better, ("perceptron_tests",)),
        Claim("Perceptron: cutoff averaging is as accurate as simple averaging", cutoff_as_averaging,
              ("perceptron",)),
        Claim("margin Perceptron: the last hypothesis is very good, simple averaging worse at every size",
              margin_last_best, ("margin",)),
        Claim("margin Perceptron: cutoff averaging catches up with the last hypothesis", margin_cutoff_catches_up,
              ("margin",)),
    ),
)
STUDIES.add(STUDY.name, STUDY)
