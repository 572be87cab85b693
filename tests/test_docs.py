"""The documentation site builds with MkDocs in strict mode (a warning, such as a link
to a page or an anchor that does not exist, fails the build), with every generated page;
README stays a short front door whose links into the repository resolve."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dolb.cli import main
from dolb.experiment.schema import TASKS, Split
from dolb.learners import LEARNERS

ROOT = Path(__file__).resolve().parents[1]
HAND_WRITTEN = ("index", "guide/pipelines", "guide/running", "guide/datasets", "guide/learners", "guide/conversions",
                "guide/clusters", "guide/result-store", "guide/reports", "guide/compare", "guide/reproducibility",
                "guide/python", "guide/tuning", "guide/own-study", "guide/own-learner", "design/layers", "design/extending",
                "design/scaling", "design/data-store", "design/execution", "design/linear-driver", "design/conversions",
                "design/kernel-learners", "design/nightly-gate", "design/pipelines", "studies/irma",
                "studies/cutoff_averaging", "studies/linear_zoo", "studies/oms", "studies/online_mr")
GENERATED = ("reference/pipeline", "reference/cli", "reference/learners/index", "performance/index")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built as CI builds it."""
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr
    return out


def test_the_site_builds_strict_with_every_page(site):
    for page in HAND_WRITTEN + GENERATED:
        assert (site / f"{page}.html").is_file(), page
    assert not (site / "hooks.py").exists()


def test_a_study_tables_numbers_stay_whole(site):
    """A browser breaks "4.4e-03" after its minus sign in a narrow column, unless told not to."""
    page = (site / "studies" / "irma.html").read_text(encoding="utf-8")
    assert '<td><span class="number">4.4e-03</span></td>' in page  # Table I
    assert '<td>floor</td>\n<td><span class="number">1.0e-10</span></td>' in page  # RLS's Tikhonov term
    assert '<link href="../css/tables.css" rel="stylesheet">' in page
    assert ".number { white-space: nowrap; }" in (site / "css" / "tables.css").read_text(encoding="utf-8")


def test_one_learner_page_for_every_learner_of_dolb_s_own_dolb_learners_lists(site, capsys):
    """A plugin's learners (the test plugin's ``arow``) are listed, not given pages here."""
    assert main(["learners", "--json"]) == 0
    listed = [record["name"] for record in json.loads(capsys.readouterr().out)
              if LEARNERS[record["name"]].__module__.startswith("dolb.")]
    assert "arow" in LEARNERS and "arow" not in listed and not (site / "reference" / "learners" / "arow.html").exists()
    pages = sorted(path.stem for path in (site / "reference" / "learners").glob("*.html") if path.stem != "index")
    assert len(pages) == len(listed) and pages == sorted(listed)
    index = (site / "reference" / "learners" / "index.html").read_text(encoding="utf-8")
    assert sorted(re.findall(r'<a href="([a-z_]+)\.html">', index)) == sorted(listed)


@pytest.mark.parametrize("name", ["ftrl", "oms_lasvm", "river_pa"])
def test_a_learner_page_shows_its_parameters_paper_and_doctested_example(site, name):
    cls = LEARNERS[name]
    page = (site / "reference" / "learners" / f"{name}.html").read_text(encoding="utf-8")
    for param in cls.params:
        assert f"<code>{param}</code>" in page
    assert "Parameters" in page and "Example" in page
    assert f"from {cls.__module__} import {cls.__name__}" in page
    first_example_line = next(line for line in cls.__doc__.splitlines() if ">>>" in line and "import" not in line)
    assert first_example_line.strip().removeprefix(">>> ").replace('"', "&quot;") in page


def test_the_pipeline_reference_has_every_key_of_the_schema(site):
    page = (site / "reference" / "pipeline.html").read_text(encoding="utf-8")
    for key in Split.model_fields:
        assert f"<code>{key}</code>" in page
    assert f"One of {', '.join(TASKS)}." in page  # the rule of 'task', from its validator


def test_readme_is_short_and_its_links_resolve():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    prose = re.sub(r"```.*?```|`[^`]*`", "", readme, flags=re.S)  # code is not linked
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", prose) + re.findall(r'src="([^"]+)"', prose)
    local = [link for link in links if "://" not in link]
    assert any(link.startswith("docs/") and link.endswith(".md") for link in local)
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"


@pytest.mark.parametrize("study", ["irma", "cutoff_averaging", "linear_zoo", "oms", "online_mr"])
def test_every_study_page_shows_its_figures(site, study):
    source = (ROOT / "docs" / "studies" / f"{study}.md").read_text(encoding="utf-8")
    figures = re.findall(r"!\[[^\]]*\]\(\.\./figures/([\w.-]+\.png)\)", source)
    assert figures, f"{study}.md shows no figure"
    page = (site / "studies" / f"{study}.html").read_text(encoding="utf-8")
    for name in figures:
        assert f'src="../../figures/{name}"' in page or f'src="../figures/{name}"' in page, name
        assert (site / "figures" / name).stat().st_size > 10_000, name


@pytest.mark.parametrize("study", ["irma", "cutoff_averaging", "oms", "online_mr"])
def test_every_study_page_is_made_from_the_registry_with_its_claims_judged(site, study):
    from dolb.studies import STUDIES
    from dolb.studies.pages import stored_records

    found = STUDIES[study]
    page = (site / "studies" / f"{study}.html").read_text(encoding="utf-8")
    assert f">{found.title}" in page and found.paper.split(",")[0] in page
    verdicts = found.judge(stored_records(found, ROOT / "benchmarks" / "studies"))
    assert verdicts and all(verdict.holds is not None for _, verdict in verdicts)  # every claim judged
    for _, verdict in verdicts:
        assert f"<strong>{verdict.word}</strong>" in page
    assert f"dolb study {study} runs/" in page  # the commands that reproduce it


def toy_site(folder: Path, page: str) -> Path:
    """A small site built with dolb's hook: one page, ``page``, and the records under
    ``folder/benchmarks`` (a copy of one table and one bench record of the repository);
    not strict, the generated pages linking to the repository's hand-written ones."""
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "index.md").write_text(page)
    (folder / "mkdocs.yml").write_text(f"site_name: toy\ndocs_dir: docs\nuse_directory_urls: false\n"
                                       f"hooks:\n  - {ROOT / 'docs' / 'hooks.py'}\nvalidation:\n  omitted_files: info\n")
    tables = folder / "benchmarks" / "studies" / "irma"
    tables.mkdir(parents=True)
    (tables / "fig1.json").write_bytes((ROOT / "benchmarks" / "studies" / "irma" / "fig1.json").read_bytes())
    record = sorted((ROOT / "benchmarks" / "records" / "kernel").glob("*.json"))[-1]
    (folder / "benchmarks" / "records" / "kernel").mkdir(parents=True)
    (folder / "benchmarks" / "records" / "kernel" / record.name).write_bytes(record.read_bytes())
    return folder


def build(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--site-dir", str(folder / "site")],
                          cwd=folder, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


def damage_version(path: Path) -> None:
    record = json.loads(path.read_text())
    record["versions"]["git_commit"] = 5
    path.write_text(json.dumps(record))


DAMAGES = {
    "not JSON": ("<!-- table: irma/fig1 -->\n", lambda f: (f / "irma" / "fig1.json").write_text("{"),
                 "studies/irma/fig1.json: not a readable JSON table record (Expecting property name"),
    "empty": ("<!-- table: irma/fig1 -->\n", lambda f: (f / "irma" / "fig1.json").write_text(""),
              "studies/irma/fig1.json: not a readable JSON table record (Expecting value"),
    "missing": ("<!-- table: irma/nosuch -->\n", lambda f: None,
                "studies/irma/nosuch.json: no table record for the marker <!-- table: irma/nosuch -->"),
    "another table": ("<!-- table: irma/table1 -->\n",
                      lambda f: (f / "irma" / "fig1.json").rename(f / "irma" / "table1.json"),
                      "studies/irma/table1.json: holds table irma/fig1, not irma/table1"),
    "a folder": ("<!-- table: irma/fig1 -->\n",
                 lambda f: (f / "irma" / "fig1.json").unlink() or (f / "irma" / "fig1.json").mkdir(),
                 "studies/irma/fig1.json: no table record for the marker"),
    "bench commit": ("Text.\n", lambda f: damage_version(next((f.parent / "records" / "kernel").glob("*.json"))),
                     ": versions.git_commit is 5, not a string or null"),
    "bench not JSON": ("Text.\n", lambda f: next((f.parent / "records" / "kernel").glob("*.json")).write_text("[1"),
                       ": not a readable JSON record ("),
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_or_missing_record_is_a_build_error_naming_the_file(tmp_path, damage):
    from mkdocs.config import load_config
    from mkdocs.exceptions import PluginError
    from mkdocs.structure.files import get_files

    page, make, message = DAMAGES[damage]
    site = toy_site(tmp_path, page)
    make(site / "benchmarks" / "studies")
    config = load_config(str(site / "mkdocs.yml"))
    with pytest.raises(PluginError) as caught:
        config.plugins.on_files(get_files(config), config=config)
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("damage", ["not JSON", "bench commit"])
def test_mkdocs_says_a_build_error_in_one_line_without_a_traceback(tmp_path, damage):
    page, make, message = DAMAGES[damage]
    site = toy_site(tmp_path, page)
    make(site / "benchmarks" / "studies")
    done = build(site)
    errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert len(errors) == 1 and message in errors[0], done.stderr
    assert not (site / "site" / "index.html").exists()
