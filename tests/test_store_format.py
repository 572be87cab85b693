"""The result store's format version (``DIR/format.json``): written with every store,
checked before any read or write; another format, a malformed marker or parts without
a marker are refused in one line, exit 2, nothing written."""

import json
import shutil
import uuid

import fsspec
import pytest

from dolb.cli import main
from dolb.errors import DataError
from dolb.results.cell_rows import CellRows
from dolb.results.store import ResultStore, result_schema
from dolb.results.store_format import FORMAT, FORMAT_FILE, FORMAT_KEY


def files_of(folder) -> dict:
    """Every file of a folder with its bytes."""
    return {path: path.read_bytes() for path in folder.rglob("*") if path.is_file()}


def a_part(store: ResultStore) -> str:
    """Write one failed cell's part to ``store``."""
    rows = CellRows(result_schema({}), run_id="r1", worker="here")
    rows.add_failed("c1", {"experiment": "e", "split": 0}, "boom")
    return store.write_part(rows.table())


@pytest.fixture
def stored(small_run, tmp_path):
    """A copy of the session's run of the small IRMA pipeline."""
    return shutil.copytree(small_run, tmp_path / "out")


def test_a_run_writes_the_marker_of_the_current_format(stored):
    assert json.loads((stored / FORMAT_FILE).read_text()) == {FORMAT_KEY: FORMAT}
    assert not list(stored.glob(f".{FORMAT_FILE}*"))  # written through a temporary file, renamed


def test_the_first_file_of_a_store_brings_the_marker(tmp_path):
    store = ResultStore(tmp_path / "new")
    assert store.parts() == [] and not (tmp_path / "new").exists()  # reading a store not written: nothing
    a_part(store)
    assert json.loads((tmp_path / "new" / FORMAT_FILE).read_text()) == {FORMAT_KEY: FORMAT}


@pytest.mark.parametrize("command", ["status", "report", "export"])
def test_a_store_of_a_newer_format_is_one_line_and_untouched(stored, command, capsys):
    (stored / FORMAT_FILE).write_text(json.dumps({FORMAT_KEY: FORMAT + 2}))
    before = files_of(stored)
    assert main([command, str(stored)]) == 2
    assert capsys.readouterr().err == (
        f"dolb: error: {stored}: result store format {FORMAT + 2}, this dolb reads format {FORMAT} (upgrade dolb)\n")
    assert files_of(stored) == before


def test_compare_and_reproduce_refuse_a_newer_format(stored, tmp_path, capsys):
    (stored / FORMAT_FILE).write_text(json.dumps({FORMAT_KEY: FORMAT + 1}))
    before = files_of(stored)
    for command in (["compare", str(stored), str(stored), "--out", str(tmp_path / "c")],
                    ["reproduce", str(stored), "--out", str(tmp_path / "again")], ["compact", str(stored)]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.endswith(f"{stored}: result store format {FORMAT + 1}, this dolb reads format {FORMAT} "
                            "(upgrade dolb)\n") and err.count("\n") == 1, err
    assert files_of(stored) == before
    assert not (tmp_path / "c").exists() and not (tmp_path / "again").exists()


@pytest.mark.parametrize("marker", ["", "{", "[1]", '{"result_store_format": "1"}', '{"other": 1}',
                                    '{"result_store_format": 0}', '{"result_store_format": true}'])
def test_a_malformed_marker_is_one_line(stored, marker, capsys):
    (stored / FORMAT_FILE).write_text(marker)
    before = files_of(stored)
    assert main(["status", str(stored)]) == 2
    assert capsys.readouterr().err == (
        f'dolb: error: {stored}/{FORMAT_FILE}: not a result store format marker (expected {{"{FORMAT_KEY}": 1}})\n')
    assert files_of(stored) == before


def test_parts_without_a_marker_are_not_a_store_of_this_dolb(stored, capsys):
    (stored / FORMAT_FILE).unlink()
    before = files_of(stored)
    for command in ("status", "report"):
        assert main([command, str(stored)]) == 2
        assert capsys.readouterr().err == (
            f"dolb: error: {stored}: result parts but no {FORMAT_FILE} (not a result store this dolb wrote)\n")
    assert files_of(stored) == before


def test_a_run_into_a_store_of_a_newer_format_refuses_before_building_anything(small_pipeline, stored, monkeypatch,
                                                                                capsys):
    (stored / FORMAT_FILE).write_text(json.dumps({FORMAT_KEY: FORMAT + 1}))
    before = files_of(stored)

    def no_data(*args, **kwargs):
        raise AssertionError("a dataset was opened")

    monkeypatch.setattr("dolb.execution.sweep.open_datasets", no_data)
    assert main(["-q", "run", str(small_pipeline), "--out", str(stored), "--workers", "1"]) == 2
    assert capsys.readouterr().err == (
        f"dolb: error: {stored}: result store format {FORMAT + 1}, this dolb reads format {FORMAT} (upgrade dolb)\n")
    assert files_of(stored) == before


def test_a_store_behind_a_url_has_its_marker_and_is_checked(capsys):
    url = f"memory://format-{uuid.uuid4().hex[:8]}/out"
    store = ResultStore(url)
    a_part(store)
    fs = fsspec.filesystem("memory")
    marker = f"{store.path}/{FORMAT_FILE}"
    assert json.loads(fs.cat_file(marker)) == {FORMAT_KEY: FORMAT}
    fs.pipe_file(marker, json.dumps({FORMAT_KEY: FORMAT + 1}).encode())
    with pytest.raises(DataError, match=rf"^{url}: result store format {FORMAT + 1}, this dolb reads format {FORMAT}"):
        ResultStore(url).parts()
    fs.rm_file(marker)
    assert main(["status", url]) == 2
    assert capsys.readouterr().err == (
        f"dolb: error: {url}: result parts but no {FORMAT_FILE} (not a result store this dolb wrote)\n")
