"""The nightly gate: a suspected slowdown alarms only when the A/B confirms it; metrics
are compared exactly, without A/B; a night on another CPU model compares metrics only
unless the A/B confirms; the history band; the A/B's interleaving, its environments
and its worktrees; the noise model over simulated nights."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dolb.bench.ab import environment, interleave
from dolb.cli import main
from dolb.errors import DataError
from dolb.results.compare import Comparison, compare_frames
from dolb.results.compare_page import console_text
from dolb.results.compare_report import compare_folders
from dolb.results.nightly_gate import history_band, judge_ab, judge_nights
from dolb.results.tables import TIDY_COLUMNS
from tests.conftest import write_store

ROOT = Path(__file__).resolve().parents[1]
KEYS = [(i, c) for i in ("sparse", "dense") for c in ("last", "all")]
REPEATS = [1.00, 1.02, 0.98, 1.01, 0.99, 1.03, 0.97]


def night(folder, speeds, cpu="AMD EPYC", commit="a" * 40, scale=1.0, sources=("memory",)):
    """A night's folder with a bench.json: ``speeds`` learner -> speed, every measurement
    of it at that speed times :data:`REPEATS` times ``scale`` (the machine's change)."""
    folder.mkdir(parents=True)
    rows = [{"kind": "machine", "cpu": cpu, "cpus": 2, "load_before": 1.0, "load_after": 1.2, "git_commit": commit}]
    rows += [{"kind": "throughput", "learner": learner, "input": i, "source": source, "conversions": c,
              "examples_per_s": speed * scale, "repeats": [speed * scale * r for r in REPEATS]}
             for learner, speed in speeds.items() for i, c in KEYS for source in sources]
    (folder / "bench.json").write_text(json.dumps(rows))
    return folder


def fake_ab(factors):
    """An A/B step that measures learner ``l`` at ``factors[l]`` x on the after side, and
    records what it was asked."""
    asked = []

    def confirm(before, after, learners):
        asked.append((before, after, learners))
        rows = [(learner, i, "memory", c, r, 100.0 * noise, 100.0 * noise * factors.get(learner, 1.0) * wobble)
                for r, (noise, wobble) in enumerate(zip(REPEATS, REPEATS[::-1])) for learner in learners
                for i, c in KEYS]
        return pd.DataFrame(rows, columns=["learner", "input", "source", "conversions", "round", "before", "after"])

    return confirm, asked


@pytest.fixture
def nights(tmp_path):
    """Baseline and a night 20 % slower for every learner (the machine), pa 0.8x again."""
    base = night(tmp_path / "base", {"pa": 100.0, "sgd": 200.0, "ftrl": 300.0})
    run = night(tmp_path / "run", {"pa": 80.0, "sgd": 200.0, "ftrl": 300.0}, commit="b" * 40, scale=0.8)
    return run, base


def test_alarm_only_where_the_ab_confirms(nights):
    run, base = nights
    assert judge_nights(run, base).table["slower"].all()  # the rank test alone: every learner
    confirm, asked = fake_ab({"pa": 0.8})
    found = judge_nights(run, base, confirm=confirm)
    assert asked[0][:2] == ("a" * 40, "b" * 40) and asked[0][2][0] == "pa"  # the most surprising first
    slower = found.table[found.table["slower"]]
    assert set(slower["learner"]) == {"pa"} and (slower["ab_ratio"].round(6) < 0.9).all()
    assert (slower["ratio"].round(6) == 0.64).all()  # both figures: the nights' and the A/B's
    assert set(found.table.loc[found.table["learner"] != "pa", "verdict"]) == {"not confirmed"}
    assert "confirmed slower: pa" in found.note
    confirm, _ = fake_ab({})  # identical code: the A/B sees nothing
    assert not judge_nights(run, base, confirm=confirm).table["slower"].any()


def test_the_zarr_rows_of_a_confirmed_learner_go_by_the_nights_ratio(tmp_path):
    both = ("memory", "zarr")
    base = night(tmp_path / "base", {"pa": 100.0, "sgd": 200.0}, sources=both)
    run = night(tmp_path / "run", {"pa": 70.0, "sgd": 170.0}, sources=both)
    table = judge_nights(run, base, confirm=fake_ab({"pa": 0.8})[0]).table  # the A/B: from memory only
    slower = table[table["slower"]]
    assert set(slower["learner"]) == {"pa"} and set(slower["source"]) == {"memory", "zarr"}
    assert slower.loc[slower["source"] == "zarr", "ab_ratio"].isna().all()


def test_another_cpu_compares_metrics_only_unless_the_ab_confirms(tmp_path):
    base = night(tmp_path / "base", {"pa": 100.0, "sgd": 200.0})
    run = night(tmp_path / "run", {"pa": 50.0, "sgd": 100.0}, cpu="Intel Xeon")
    found = judge_nights(run, base)
    assert set(found.table["verdict"]) == {"other machine"} and not found.table["slower"].any()
    assert "different CPU models (AMD EPYC; Intel Xeon)" in found.note
    assert found.machines.set_index("night")["cpu"].to_dict() == {"baseline": "AMD EPYC", "run": "Intel Xeon"}
    confirm, _ = fake_ab({"sgd": 0.7})
    assert set(judge_nights(run, base, confirm=confirm).table.query("slower")["learner"]) == {"sgd"}


def test_a_night_without_a_commit_cannot_be_confirmed(nights, tmp_path):
    run, base = nights
    data = json.loads((base / "bench.json").read_text())
    data[0]["git_commit"] = None
    (base / "bench.json").write_text(json.dumps(data))
    with pytest.raises(DataError, match=r"base: its git commit is not recorded"):
        judge_nights(run, base, confirm=fake_ab({})[0])


def test_history_band_is_the_robust_spread_of_earlier_nights_on_this_cpu(tmp_path):
    earlier = [night(tmp_path / f"n{i}", {"pa": speed}) for i, speed in enumerate([90.0, 100.0, 110.0, 100.0])]
    other = night(tmp_path / "other", {"pa": 1000.0}, cpu="Intel Xeon")
    run = night(tmp_path / "run", {"pa": 100.0})
    table = judge_nights(run, earlier[-1], [*earlier, other, run]).table
    logs = np.log([90.0, 100.0, 110.0, 100.0])
    sd = 1.4826 * np.median(np.abs(logs - np.median(logs)))
    assert (table["band_nights"] == 4).all() and table["band_sd"].to_numpy() == pytest.approx(sd)
    assert table["band_low"].to_numpy() == pytest.approx(100 * np.exp(-2 * sd))
    few = history_band([pd.DataFrame({"learner": ["pa"], "input": "i", "source": "s", "conversions": "c",
                                      "examples_per_s": [1.0]})] * 2)
    assert few["band_sd"].isna().all()  # fewer than three nights: no band


def test_metrics_are_compared_exactly_without_ab():
    def tidy(values, learner):
        return pd.DataFrame([dict(experiment="e", dataset="d", task="binary", learner=learner, split=i, params="",
                                  complexity="", conversion="last", n_train=100, metric="test_error", value=v,
                                  cell_id=f"{learner}{i}") for i, v in enumerate(values)])[TIDY_COLUMNS]
    base = pd.concat([tidy([0.2, 0.3, 0.25, 0.31, 0.22], "pa"), tidy([0.1, 0.2, 0.15, 0.12, 0.11], "sgd")])
    changed = base.assign(value=np.where((base["learner"] == "sgd") & (base["split"] == 2), 0.15 + 1e-12,
                                         base["value"]))
    table = compare_frames(changed, base).set_index("learner")
    assert table.loc["sgd", "verdict"] == "changed" and table.loc["pa", "verdict"] == "unchanged"
    comparison = Comparison(table.reset_index(), pd.DataFrame(columns=["slower"]))
    assert comparison.regressed and comparison.significant()["learner"].tolist() == ["sgd"]  # printed, named
    assert not Comparison(compare_frames(base, base), pd.DataFrame(columns=["slower"])).regressed


def test_judge_ab_against_scipy():
    from scipy import stats

    confirm, _ = fake_ab({"pa": 0.85, "sgd": 0.95})
    rounds = confirm("a", "b", ["pa", "sgd"])
    judged = judge_ab(rounds, 0.9).set_index(["learner", "input", "conversions"])
    ratios = np.array(REPEATS[::-1]) * 0.85
    row = judged.loc[("pa", "sparse", "last")]
    assert row["ab_ratio"] == pytest.approx(np.median(ratios))
    assert row["ab_p"] == pytest.approx(stats.wilcoxon(np.log(ratios), alternative="less").pvalue)
    assert row["ab_low"] <= row["ab_ratio"] <= row["ab_high"]
    assert judged["confirmed"].groupby("learner").first().to_dict() == {"pa": True, "sgd": False}  # 0.95: too small


def test_interleave_alternates_and_a_prelude_reaches_its_side_only(tmp_path):
    (tmp_path / "requirements.lock").write_text("numpy==2.0\n")
    before = environment(tmp_path, tmp_path, tmp_path)  # the same lock: this interpreter
    after = environment(tmp_path, tmp_path, tmp_path, prelude="print('after')\n")
    assert before.python == after.python == sys.executable and before.env["PYTHONPATH"] == str(tmp_path.resolve())
    assert before.prelude == "" and after.prelude == "print('after')\n"
    order = []

    def measure(tree):
        order.append("after" if tree is after else "before")
        return {("pa", "sparse", "memory", "last"): 10.0 if tree is after else 20.0}

    table = interleave(before, after, ["pa"], rounds=3, measure=measure)
    assert order == ["before", "after", "after", "before", "before", "after"]
    assert table[["round", "before", "after"]].values.tolist() == [[0, 20.0, 10.0], [1, 20.0, 10.0], [2, 20.0, 10.0]]


def test_worktrees_of_two_commits(tmp_path):
    from dolb.bench.ab import checkout

    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    commits = []
    for text in ("numpy==2.0\n", "numpy==2.1\n"):
        (repo / "requirements.lock").write_text(text)
        subprocess.run([*git, "add", "."], check=True)
        subprocess.run([*git, "commit", "-qm", "lock"], check=True)
        commits.append(subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip())
    trees = [checkout(repo, commit, tmp_path / f"t{i}") for i, commit in enumerate(commits)]
    assert [(t / "requirements.lock").read_text() for t in trees] == ["numpy==2.0\n", "numpy==2.1\n"]
    assert environment(trees[0], trees[0], tmp_path).python == sys.executable


def with_results(*folders):
    """Give night folders the results `dolb compare` needs (the same in all)."""
    for folder in folders:
        write_store(folder, pd.DataFrame([dict(experiment="e", dataset="d", task="binary", learner="pa", split=i,
                                               params="", complexity="", conversion="last", n_train=100,
                                               metric="test_error", value=0.1, cell_id=f"c{i}") for i in range(3)]))


def test_the_page_shows_both_figures_the_band_and_the_machines(nights, tmp_path):
    run, base = nights
    earlier = [night(tmp_path / f"n{i}", {"pa": 100.0, "sgd": 200.0, "ftrl": 300.0}) for i in range(3)]
    with_results(run, base, *earlier)
    comparison = compare_folders(run, base, tmp_path / "out", history=[*earlier, base],
                                 confirm=fake_ab({"pa": 0.8})[0])
    assert comparison.regressed and set(comparison.slower()["learner"]) == {"pa"}
    page = (tmp_path / "out" / "compare.md").read_text()
    for text in ("## A/B re-measurement", "## Machines", "band_low", "ab_ratio", "confirmed slower: pa",
                 "AMD EPYC", "b" * 40):
        assert text in page
    console = console_text(comparison, tmp_path / "out")
    assert "confirmed slower: pa" in console and "ab_ratio" in console


def test_cli_confirm_outside_a_git_checkout_is_one_line(nights, tmp_path, capsys):
    run, base = nights
    with_results(run, base)
    assert main(["compare", str(run), str(base), "--confirm", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nowhere" in err[0] and not (run / "compare").exists()


def test_cli_confirm_outside_a_git_checkout_is_refused_even_when_nothing_is_suspected(tmp_path, capsys):
    base = night(tmp_path / "base", {"pa": 100.0})
    run = night(tmp_path / "run", {"pa": 100.0}, commit="b" * 40)  # as fast: no A/B needed tonight
    with_results(run, base)
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    assert main(["compare", str(run), str(base), "--confirm", str(nowhere)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dolb: error: --confirm {nowhere}: not a git checkout (") and err.count("\n") == 1, err
    assert not (run / "compare").exists()


@pytest.mark.parametrize("bench, problem", [
    ([{"kind": "machine", "cpu": "AMD EPYC", "git_commit": 1234567}],
     "the git commit is 1234567, not a commit's hexadecimal name"),
    ([{"kind": "machine", "cpu": "AMD EPYC", "git_commit": "--upload-pack=touch pwned"}],
     "the git commit is '--upload-pack=touch pwned', not a commit's hexadecimal name"),
    ([{"kind": "machine", "cpu": ["AMD"], "git_commit": "a" * 40}], "the machine's cpu is ['AMD'], not text"),
    (7, "a JSON int, not a list of objects"),
    ({"kind": "machine"}, "a JSON dict, not a list of objects"),
    ("", "not a readable JSON file (Expecting value"),
])
def test_a_damaged_machine_row_of_a_night_is_one_line_naming_its_bench_json(nights, tmp_path, capsys, bench, problem):
    run, base = nights
    with_results(run, base)
    rows = json.loads((run / "bench.json").read_text())
    path = run / "bench.json"
    if isinstance(bench, list):
        path.write_text(json.dumps([row for row in rows if row["kind"] != "machine"] + bench))
    else:
        path.write_text(bench if isinstance(bench, str) else json.dumps(bench))
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    assert main(["compare", str(run), str(base), "--confirm", str(tmp_path / "repo")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dolb: error: {path}: {problem}") and err.count("\n") == 1, err
    assert not (run / "compare").exists()


def test_a_bench_json_that_is_a_folder_is_one_line(nights, capsys):
    run, base = nights
    with_results(run, base)
    (run / "bench.json").unlink()
    (run / "bench.json").mkdir()
    assert main(["compare", str(run), str(base)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dolb: error: {run / 'bench.json'}: not a readable JSON file (") and err.count("\n") == 1
