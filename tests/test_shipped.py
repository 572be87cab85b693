"""The pipelines dolb ships, by name: which file a name is, where their real data sets
are read from (the data folder: ``--data DIR``, ``$DOLB_DATA``, else the checkout's
``../shared/data``), and the one-line errors of a wrong name or a missing data set."""

from pathlib import Path

import pytest

import dolb
from dolb.cli import main
from dolb.errors import ConfigError
from dolb.experiment.pipeline import load_pipeline
from dolb.experiment.shipped import data_needs, pipeline_file, shipped_folder, shipped_names
from tests.studies import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]


def paths(pipeline) -> dict[str, str]:
    """The file parameter of each dataset of a loaded pipeline."""
    return {name: dict(spec.params)["path"] for name, spec in pipeline.datasets.items() if "path" in dict(spec.params)}


def test_a_checkout_ships_its_pipelines_folder_and_a_name_is_its_file(tmp_path, monkeypatch):
    assert shipped_folder() == ROOT / "pipelines"
    assert shipped_names() == sorted(path.stem for path in (ROOT / "pipelines").glob("*.toml"))
    assert pipeline_file("irma") == ROOT / "pipelines" / "irma.toml"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "irma").write_text("")  # a file of that name here is that file
    assert pipeline_file("irma") == Path("irma")
    assert data_needs("online_mr") == ["face", "mnist"] and data_needs("linear_zoo") == ["libsvm", "rcv1"]


def test_the_data_folder_replaces_the_checkouts_shared_data_for_shipped_pipelines_only(tmp_path, monkeypatch):
    shipped = ROOT / "pipelines" / "oms_mnist.toml"
    monkeypatch.delenv("DOLB_DATA", raising=False)
    assert paths(load_pipeline(shipped)) == {"mnist3": str((SHARED_DATA / "mnist").resolve())}
    assert paths(load_pipeline(shipped, data=tmp_path)) == {"mnist3": str(tmp_path / "mnist")}
    monkeypatch.setenv("DOLB_DATA", str(tmp_path / "env"))
    assert paths(load_pipeline(shipped)) == {"mnist3": str(tmp_path / "env" / "mnist")}
    assert paths(load_pipeline(shipped, data=tmp_path)) == {"mnist3": str(tmp_path / "mnist")}  # --data first
    copy = tmp_path / "a" / "b" / "oms_mnist.toml"  # a pipeline of one's own: relative to its file, always
    copy.parent.mkdir(parents=True)
    copy.write_text(shipped.read_text())
    assert paths(load_pipeline(copy)) == {"mnist3": str(tmp_path / "shared" / "data" / "mnist")}


@pytest.mark.parametrize("argv, message", [
    (["run", "irmaa", "--out", "{out}"], "irmaa: neither a pipeline file nor a pipeline dolb ships (did you mean "
                                         "'irma'?) (it ships: cutoff_rcv1, cutoff_rcv1_scale, irma, irma_quick, "),
    (["plan", "{tmp}/pipelines/irma.toml", "--out", "{out}"],
     "{tmp}/pipelines/irma.toml: no such pipeline file; dolb ships one of this name: dolb run irma\n"),
    (["run", "{tmp}/irma.toml", "--out", "{out}"],
     "{tmp}/irma.toml: no such pipeline file; dolb ships one of this name: dolb run irma\n"),
    (["plan", "oms_mnist", "--out", "{out}", "--data", "{tmp}"],
     "{root}/pipelines/oms_mnist.toml: datasets.mnist3.params.path: {tmp}/mnist is missing; the data folder holds "
     "mnist/, libsvm/, rcv1/ and face/ (see the datasets guide); give it with --data DIR or $DOLB_DATA\n"),
    (["run", "linear_zoo", "--out", "{out}", "--data", "{tmp}"],
     "{root}/pipelines/linear_zoo.toml: datasets.ccat_ecat.params.path: {tmp}/rcv1/rcv1v2_mulan_dedup.npz is "
     "missing; "),
])
def test_a_wrong_name_or_a_missing_data_set_is_one_line(argv, message, tmp_path, capsys):
    fill = {"tmp": tmp_path, "out": tmp_path / "out", "root": ROOT}
    assert main([a.format(**fill) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dolb: error: " + message.format(**fill)) and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()


def test_the_python_api_takes_a_name_too(tmp_path):
    with pytest.raises(ConfigError, match="^irmaa: neither a pipeline file nor a pipeline dolb ships"):
        dolb.run("irmaa", tmp_path / "out")
    assert not (tmp_path / "out").exists()
