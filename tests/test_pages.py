"""Report pages, tables and ranking statistics: the run page (``report/index.html``) and
the compare page are well-formed, self-contained and escape every name; tables lift
constant columns; paired reports across learners match scipy's paired t-test; the
Friedman test, its post-hoc tests and the ranks match scipy and hand-computed values."""

import re
import textwrap

import html5lib
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dolb.cli import main
from dolb.errors import DataError
from dolb.experiment.pipeline import load_pipeline
from dolb.results.cell_rows import CellRows
from dolb.results.history import write_record
from dolb.results.ranking import friedman
from dolb.results.store import ResultStore, result_schema
from dolb.results.tables import lift_constants, paired_table, ranking_table
from tests.conftest import write_store

HOSTILE = '<script>alert("x")</script> & co'

PIPELINE = f"""
[pipeline]
name = "pages"
seed = 1
description = '{HOSTILE}'

[datasets.d1]
generator = "sparse_text"
params = {{ n_rows = 100, n_features = 10 }}
[datasets.d2]
generator = "sparse_text"
params = {{ n_rows = 100, n_features = 10 }}
[datasets.d3]
generator = "sparse_text"
params = {{ n_rows = 100, n_features = 10 }}

[experiments.linear]
dataset = ["d1", "d2", "d3"]
task = "binary"
split = {{ scheme = "holdout", count = 4 }}
checkpoints = [10, 20]
metrics = ["test_error"]
learners = [{{ learner = "perceptron" }}, {{ learner = "pa" }}, {{ learner = "sgd" }}]

[[reports]]
kind = "table"
experiment = "linear"
metric = "test_error"
at = [20]
stats = ["mean", "std"]

[[reports]]
kind = "ranking"
experiment = "linear"
metric = "test_error"
title = '{HOSTILE}'

[[reports]]
kind = "ranking"
experiment = "linear"
metric = "test_error"
posthoc = "holm"

[[reports]]
kind = "paired"
experiment = "linear"
metric = "test_error"
compare = "learner"
baseline = "perceptron"
"""

# mean test error of each learner on each dataset: on d1 and d2 pa < sgd < perceptron,
# on d3 sgd < pa < perceptron; mean ranks pa 4/3, sgd 5/3, perceptron 3
MEANS = {"perceptron": [0.30, 0.35, 0.40], "pa": [0.10, 0.15, 0.25], "sgd": [0.20, 0.25, 0.05]}
PARAMS = {"perceptron": "", "pa": "C=1, variant=pa1", "sgd": 'loss=hinge, note=<b>"&'}


def values(learner, dataset):
    """The four splits' test errors at n = 20 (n = 10: 0.1 more); noise far below the gaps."""
    noise = np.random.default_rng([len(learner), dataset]).normal(0, 0.004, 4)
    return MEANS[learner][dataset] + noise - noise.mean()


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A result folder as `dolb run` leaves it, its rows made by hand, one failed cell."""
    folder = tmp_path_factory.mktemp("pages")
    pipeline = folder / "pipeline.toml"
    pipeline.write_text(textwrap.dedent(PIPELINE))
    store = ResultStore(folder / "out")
    rows = CellRows(result_schema({}), "r1", "w1")
    for learner in MEANS:
        for dataset in range(3):
            for split, value in enumerate(values(learner, dataset)):
                coordinates = dict(experiment="linear", dataset=f"d{dataset + 1}", task="binary", learner=learner,
                                   split=split, seed=split, params=PARAMS[learner], complexity="")
                result = {"checkpoints": [10, 20], "metrics": {"last": {"test_error": [value + 0.1, value]}}}
                rows.add_ok(f"{learner}-{dataset}-{split}", coordinates, result)
    rows.add_failed("broken", dict(experiment="linear", dataset="d1", task="binary", learner="pa", split=9,
                                   seed=9, params="", complexity=""), f"ValueError: {HOSTILE}\nsecond line")
    store.write_part(rows.table())
    write_record(store, {"run_id": "r1", "pipeline": "pages", "pipeline_path": str(pipeline),
                         "pipeline_text": pipeline.read_text(), "ended": "2026-11-24T00:00:00Z", "seconds": 1.0,
                         "counts": {"cells": 37, "computed": 36, "cached": 0, "failed": 1},
                         "client": {"python": "3.11", "packages": {"numpy": "2.0"}, "git_commit": "abc123"}})
    assert main(["report", str(folder / "out")]) == 0
    return folder / "out"


def check_page(text: str) -> None:
    """Well-formed (html5lib's strict parser: no unclosed or mismatched tag), nothing
    fetched from the network, the hostile name escaped wherever it shows."""
    document = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(text)
    for element in document.iter():
        for attribute in ("src", "href"):
            assert element.get(attribute) is None or element.get(attribute).startswith("data:"), element.attrib
    assert not re.search(r"url\(\s*['\"]?(?!data:)", text) and "http://" not in text and "https://" not in text
    assert "<script>" not in text and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co" in text


def test_the_run_page_is_well_formed_self_contained_and_escaped(folder):
    page = (folder / "report" / "index.html").read_text()
    check_page(page)
    assert page.count("<img") == 2  # the two critical-difference diagrams, inlined
    for shown in ("abc123", "36 computed, 0 cached, 1 failed", "Failed cells", "ValueError: &lt;script&gt;",
                  "pairs differ at 0.05", "Holm post-hoc test"):
        assert shown in page, shown
    assert "second line" not in page  # an error's first line only


def test_reports_get_unique_titles_and_tables_lift_constants(folder):
    titles = [r.title for r in load_pipeline(folder.parent / "pipeline.toml").reports]
    assert titles[0] == "linear: test_error, configurations against training size at n = 20"
    assert titles[2] == "linear: test_error, configurations ranked across datasets"
    assert len(set(titles)) == 4
    markdown = (folder / "report" / "01-linear-test_error-table.md").read_text()
    assert "conversion = last" in markdown and "| conversion" not in markdown  # lifted
    assert "complexity" not in markdown  # empty everywhere: dropped
    table = pd.DataFrame({"a": ["x", "x"], "b": [1, 2], "c": ["", ""], "params": ["k=1, m=2", "k=1, m=3"]})
    shown, caption = lift_constants(table)
    assert shown.to_dict("list") == {"b": [1, 2], "params": ["m=2", "m=3"]} and caption == "a = x, k=1"


def test_ranking_statistics_match_scipy_and_hand_values(folder):
    table = pd.read_csv(folder / "report" / "02-linear-test_error-ranking.csv")
    assert table.set_index("learner")["mean rank"].to_dict() == pytest.approx({"pa": 4 / 3, "sgd": 5 / 3,
                                                                               "perceptron": 3.0})
    # chi-square = 12 n / (k (k + 1)) sum (R_j - (k + 1) / 2)^2 = 3 (4/9 + 1/9 + 1) = 14/3
    page = (folder / "report" / "index.html").read_text()
    assert f"chi-square = {14 / 3:.3g}, p = {np.exp(-14 / 6):.3g}" in page

    rng = np.random.default_rng(7)
    scores = pd.DataFrame(rng.uniform(size=(8, 4)), columns=list("abcd"))
    scores["d"] -= 0.5  # d is best everywhere
    nemenyi, holm = friedman(scores), friedman(scores, "holm")
    expected = stats.friedmanchisquare(*(scores[c] for c in scores))
    assert (nemenyi.statistic, nemenyi.p) == pytest.approx((expected.statistic, expected.pvalue))
    ranks = scores.rank(axis=1).mean()
    assert nemenyi.mean_ranks.index[0] == "d" and nemenyi.mean_ranks.to_dict() == pytest.approx(ranks.to_dict())
    k, n = 4, 8
    se = np.sqrt(k * (k + 1) / (6 * n))
    assert nemenyi.cd == pytest.approx(2.569 * se, rel=1e-3)  # Demšar's table: q_0.05 = 2.569 for k = 4
    gap = abs(ranks["a"] - ranks["d"]) / se
    assert nemenyi.pairwise.loc["a", "d"] == pytest.approx(stats.studentized_range.sf(gap * np.sqrt(2), k, np.inf))
    raw = {(i, j): 2 * stats.norm.sf(abs(ranks[i] - ranks[j]) / se) for i in "abcd" for j in "abcd" if i < j}
    order = sorted(raw, key=raw.get)  # Holm: the m-th smallest times (6 - m + 1), kept monotone
    adjusted = np.maximum.accumulate([min(1.0, raw[key] * (len(raw) - m)) for m, key in enumerate(order)])
    assert [holm.pairwise.loc[key] for key in order] == pytest.approx(adjusted)


def test_ranking_leaves_out_a_dataset_a_configuration_lacks():
    summary = pd.DataFrame({"experiment": "e", "metric": "m", "n_train": 5, "params": "", "complexity": "",
                            "conversion": "last", "learner": ["a", "b", "a", "b", "a"],
                            "dataset": ["x", "x", "y", "y", "z"], "mean": [1.0, 2.0, 2.0, 1.0, 0.5]})
    table = ranking_table(summary, "e", "m", None)
    assert table.set_index("learner")["mean rank"].to_dict() == {"a": 1.5, "b": 1.5}


def test_paired_report_across_learners_matches_scipy(folder):
    frame = pd.DataFrame([
        dict(experiment="e", dataset=d, task="binary", learner=learner, params=params, complexity="",
             conversion="last", n_train=10, metric="m", split=s, value=v)
        for d in ("x", "y") for s in range(5)
        for learner, params, v in (("base", "b=1", 0.3 + 0.01 * s * s), ("cand", "eta=1", 0.2 + 0.03 * s),
                                   ("cand", "eta=2", 0.25 + 0.02 * (s % 2)))
    ])
    table = paired_table(frame, "e", "m", None, "learner", "base")
    assert len(table) == 4 and set(table["n"]) == {5}
    def split_values(learner, params, dataset):
        chosen = frame[(frame.learner == learner) & (frame.params == params) & (frame.dataset == dataset)]
        return chosen.sort_values("split")["value"]

    for row in table.itertuples():
        expected = stats.ttest_rel(split_values("cand", row.params, row.dataset), split_values("base", "b=1", row.dataset))
        assert row.p == pytest.approx(expected.pvalue)
    shown = (pd.read_csv(folder / "report" / "04-linear-test_error-paired.csv"))
    assert set(shown["learner"]) == {"pa", "sgd"} and (shown["n"] == 4).all() and len(shown) == 2 * 3 * 2
    two = pd.concat([frame, frame.assign(params="b=2")[frame.learner == "base"]])
    with pytest.raises(DataError, match="baseline learner 'base' has several configurations"):
        paired_table(two, "e", "m", None, "learner", "base")
    with pytest.raises(DataError, match="no learner shares a dataset, split and training size"):
        paired_table(frame.assign(n_train=np.where(frame.learner == "base", 20, 10)), "e", "m", None, "learner", "base")


def test_the_compare_page_and_console(tmp_path, capsys):
    def night(shift):
        rows = [dict(experiment="e", dataset=HOSTILE, task="binary", learner=f"l{i}", split=s, params="",
                     complexity="", conversion="last", n_train=100, metric="test_error",
                     value=0.1 * i + 0.001 * s * s + (shift if i < 3 else -shift if i == 3 else 0), cell_id=f"{i}-{s}")
                for i in range(30) for s in range(6)]
        return pd.DataFrame(rows)

    folders = []
    for name, shift in (("old", 0.0), ("base", 0.0), ("run", 0.05)):
        folders.append(str(write_store(tmp_path / name, night(shift))))
    out = tmp_path / "compare"
    assert main(["compare", folders[2], folders[1], "--out", str(out), "--max-rows", "2",
                 "--history", folders[0], folders[1]]) == 1
    printed = capsys.readouterr().out
    assert printed.startswith(f"30 compared: 3 worse, 1 better, 26 unchanged. Worst: e/{HOSTILE} l0 test_error at n = 100")
    assert "the first 2 of 4 (--max-rows)" in printed and printed.count("| worse") == 2
    page = (out / "compare.html").read_text()
    check_page(page)
    assert page.index('class="badge worse">3 worse') < page.index("<img") < page.index("<details>")
    assert page.count("<img") == 2  # the change figure and trend.png
    assert page.count('<tr class="worse">') == 2 * 3 and page.count('<tr class="better">') == 2
    assert "None." not in page
