"""`dolb bench`'s modes: one registry (dolb.bench.modes) that the command, its listing
and the performance pages read; without a mode it is `dolb bench throughput`."""

import pytest

from benchmarks.modes import MODES as BENCHMARKS
from docs.pages import ABOUT
from dolb.bench.modes import MODES, with_mode
from dolb.bench.records import read_record
from dolb.cli import main


def test_the_list_names_every_mode_and_the_records_it_writes(capsys):
    assert main(["bench", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(MODES)
    for line, mode in zip(lines, MODES.values()):
        assert line.endswith(f"{mode.summary} (records: {', '.join(mode.records)})")


@pytest.mark.parametrize("name", list(MODES))
def test_every_mode_has_its_help_a_runner_and_a_record_folder(name, capsys):
    assert main(["bench", name, "--help"]) == 0
    assert "--record DIR" in capsys.readouterr().out
    assert callable(MODES[name].runner())


def test_every_record_kind_has_its_page_text_and_the_command_of_its_mode():
    """Each kind of record is written by one mode, of `dolb bench` or of `python -m
    benchmarks`, and its page says that mode's command."""
    commands = {"dolb bench": MODES, "python -m benchmarks": BENCHMARKS}
    kinds = [(kind, prefix, name) for prefix, modes in commands.items() for name, mode in modes.items()
             for kind in mode.records]
    assert sorted(kind for kind, *_ in kinds) == sorted(ABOUT)
    for kind, prefix, mode in kinds:
        command = ABOUT[kind][1]
        assert command.startswith(f"{prefix} {mode} ") or (mode == "throughput" and command.startswith("dolb bench "))


@pytest.mark.parametrize("argv, named", [
    (["bench"], ["bench", "throughput"]),
    (["bench", "--quick", "--json"], ["bench", "throughput", "--quick", "--json"]),
    (["-q", "bench", "omr", "50"], ["-q", "bench", "omr", "50"]),
    (["bench", "--list"], ["bench", "--list"]),
    (["run", "--quick"], ["run", "--quick"]),
])
def test_without_a_mode_dolb_bench_is_throughput(argv, named):
    assert with_mode(argv) == named


def test_dolb_bench_keeps_what_a_user_runs():
    assert list(MODES) == ["throughput", "stream", "kernel", "omr", "ab"]


def _checkouts(tmp_path):
    """Two folders that look like checkouts of dolb with the same lock."""
    for side in ("before", "after"):
        (tmp_path / side / "dolb").mkdir(parents=True)
        (tmp_path / side / "dolb" / "__init__.py").write_text("")
        (tmp_path / side / "requirements.lock").write_text("numpy==2.0\n")
    return str(tmp_path / "before"), str(tmp_path / "after")


def test_ab_records_both_sides_of_every_round_and_the_judged_ratio(tmp_path, monkeypatch, capsys):
    """`dolb bench ab` with each tree's `dolb bench` replaced by given speeds: the record
    keeps every round of both sides, in order, and the ratio after / before, its
    interval and the one-sided Wilcoxon p (five rounds all slower: 1/32)."""
    import dolb.bench.ab as ab

    after = iter([80.0, 79.0, 81.0, 78.0, 82.0])
    monkeypatch.setattr(ab, "bench_once", lambda tree, only, quick: {
        ("pa", "sparse", "memory", "last"): 100.0 if tree.path.name == "before" else next(after)})
    before_tree, after_tree = _checkouts(tmp_path)
    assert main(["bench", "ab", before_tree, after_tree, "--rounds", "5", "--only", "pa", "--record",
                 str(tmp_path / "records")]) == 0
    assert "pa                sparse  last     0.800" in capsys.readouterr().out
    (path,) = (tmp_path / "records" / "ab").iterdir()
    record = read_record(path)
    labels = {"learner": "pa", "input": "sparse", "source": "memory", "conversions": "last"}
    assert record["measurements"] == [
        {"labels": labels | {"side": "before"}, "unit": "examples/CPU-s", "repeats": [100.0] * 5},
        {"labels": labels | {"side": "after"}, "unit": "examples/CPU-s", "repeats": [80.0, 79.0, 81.0, 78.0, 82.0]}]
    figures = {d["labels"]["figure"]: d["value"] for d in record["derived"]}
    assert figures["median after / before"] == 0.8 and figures["Wilcoxon p"] == 1 / 32
    assert figures["95 % low"] <= 0.8 <= figures["95 % high"]


@pytest.mark.parametrize("argv, message", [
    (["none", "{after}"], "none: not a checkout of dolb (no dolb/__init__.py)"),
    (["{before}", "{after}", "--only", "nope"], "--only: unknown learner 'nope'"),
])
def test_ab_refuses_what_is_not_a_checkout_or_a_learner_in_one_line(tmp_path, capsys, argv, message):
    before_tree, after_tree = _checkouts(tmp_path)
    argv = [a.format(before=before_tree, after=after_tree) for a in argv]
    assert main(["bench", "ab", *argv, "--record", str(tmp_path / "records")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dolb: error: {message}") and err.count("\n") == 1
    assert not (tmp_path / "records").exists()


