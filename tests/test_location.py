"""Locations that may be URLs (dolb/location.py): written whole or not at all, read,
and checked, alike for a path and an fsspec URL (``memory://`` here; the S3 server's in
tests/test_object_store_study.py)."""

import fsspec
import pytest

from dolb import location
from dolb.errors import ConfigError
from dolb.options import RunOptions


@pytest.fixture(params=["path", "url"])
def folder(request, tmp_path):
    if request.param == "path":
        yield str(tmp_path)
        return
    url = f"memory://location-test/{tmp_path.name}"
    yield url
    fsspec.filesystem("memory").rm(url.removeprefix("memory:/"), recursive=True)


def test_a_file_is_written_whole_or_not_at_all(folder):
    target = location.joined(folder, "results.csv")
    with location.local_file(target) as partial:
        partial.write_text("a,b\n1,2\n")
    assert location.read_text(target) == "a,b\n1,2\n" and location.is_file(target)
    with pytest.raises(RuntimeError), location.local_file(location.joined(folder, "half.csv")) as partial:
        partial.write_text("a,b\n")
        raise RuntimeError("killed while writing")
    assert location.read_text(location.joined(folder, "half.csv")) is None
    fs, path = fsspec.core.url_to_fs(folder)
    assert sorted(p.rsplit("/", 1)[-1] for p in fs.ls(path, detail=False)) == ["results.csv"]  # no temporary left


def test_files_written_into_a_local_folder_end_up_at_the_location(folder):
    out = location.joined(folder, "compare")
    with location.local_folder(out) as local:
        (local / "compare.md").write_text("# same")
        (local / "trend.png").write_bytes(b"png")
    assert location.is_folder(out) and location.read_text(location.joined(out, "compare.md")) == "# same"
    assert location.name_of(out) == "compare" and location.same(out, f"{out}/")


def test_a_file_to_write_behind_a_url(folder):
    location.writable("--to", location.joined(folder, "new.csv"))  # fine
    with location.local_folder(location.joined(folder, "taken")) as local:
        (local / "x").write_text("x")
    with pytest.raises(ConfigError, match="taken: is a folder, expected a file name"):
        location.writable("--to", location.joined(folder, "taken"))
    with pytest.raises(ConfigError, match=r"s3://bucket/report.html: give a file of this machine, not a URL"):
        RunOptions(performance_report="s3://bucket/report.html")
