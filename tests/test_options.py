"""One options object for a run: ``dolb run``'s flags, :func:`dolb.run`'s keywords and
the run record's options are the fields of :class:`dolb.options.RunOptions`, under the
same names, checked once."""

import dataclasses

import pytest

import dolb
from dolb.cli import _options, build_parser
from dolb.errors import ConfigError
from dolb.options import OPTIONS, RunOptions


def run_flags() -> set[str]:
    """The destinations of `dolb run`'s options (its flags with dashes as underscores)."""
    run = build_parser()._subparsers._group_actions[0].choices["run"]
    return {action.dest for action in run._actions if action.option_strings and action.dest != "help"}


def test_every_run_flag_is_an_option_of_the_same_name():
    # --out is where, not how; --no-progress turns progress off
    assert run_flags() - {"out", "no_progress"} == set(OPTIONS) - {"progress"}


def test_the_command_line_becomes_the_options():
    args = build_parser().parse_args(["run", "p.toml", "--out", "o", "--workers", "3", "--gather", "client",
                                      "--data-cache", "cache", "--retry-failed", "--force", "--no-progress"])
    assert _options(args) == RunOptions(workers=3, gather="client", data_cache="cache", retry_failed=True,
                                        force=True, progress=False)
    args = build_parser().parse_args(["run", "p.toml", "--out", "o", "--cluster", "c.toml", "--dashboard"])
    assert _options(args) == RunOptions(cluster="c.toml", dashboard=True, progress=True)


def test_the_record_keeps_its_options_under_their_names():
    options = RunOptions(cluster="c.toml", gather="workers", data_cache="cache", force=True)
    assert options.recorded() == {"workers": None, "scheduler": None, "cluster": "c.toml", "retry_failed": False,
                                  "gather": "workers", "data_cache": "cache", "data": None}


@pytest.mark.parametrize("options, message", [
    ({"gather": "nobody"}, "--gather: expected one of auto, workers, client, got 'nobody'"),
    ({"workers": 0}, "--workers: expected a whole number of at least 1, got 0"),
    ({"performance_report": "/no/such/folder/report.html"},
     "--performance-report /no/such/folder/report.html: its folder /no/such/folder does not exist"),
])
def test_a_wrong_option_is_one_line_naming_it(options, message, tmp_path):
    with pytest.raises(ConfigError) as raised:
        dolb.run(tmp_path / "p.toml", tmp_path / "out", **options)
    assert str(raised.value) == message
    assert not (tmp_path / "out").exists()


def test_the_old_names_are_gone():
    for old in ("data_dir", "report_file", "cluster_file"):
        with pytest.raises(TypeError, match=old):
            RunOptions(**{old: "x"})
    assert dataclasses.is_dataclass(RunOptions) and RunOptions.__dataclass_params__.frozen


def test_a_run_records_its_data_folder_where_reproduce_finds_it_from_anywhere(tmp_path, monkeypatch):
    from dolb.execution.reproduce import recorded_places

    monkeypatch.chdir(tmp_path)
    record = {"options": RunOptions(data="data", data_cache=str(tmp_path)).recorded()}
    assert record["options"]["data"] == str(tmp_path / "data")
    monkeypatch.chdir("/")
    again = recorded_places(RunOptions(workers=1), record)
    assert (again.data, again.data_cache, again.workers) == (str(tmp_path / "data"), str(tmp_path), 1)
    assert RunOptions(data="s3://bucket/data").recorded()["data"] == "s3://bucket/data"
