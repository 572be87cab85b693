"""requirements.lock pins every dependency at a version pyproject.toml allows, and CI
runs README's test command exactly (which installs with the lock)."""

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def pins() -> dict[str, str]:
    found = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            found[canonicalize_name(name)] = version
    return found


def test_every_dependency_is_pinned_at_a_version_pyproject_allows():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    locked = pins()
    for text in project["dependencies"] + project["optional-dependencies"]["test"]:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{name} is not in requirements.lock: run scripts/lock.sh"
        assert requirement.specifier.contains(locked[name], prereleases=True), (name, locked[name])


def test_ci_runs_the_readme_test_command_which_installs_the_lock():
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"Run the tests:\n\n```bash\n(.+)\n```", readme).group(1)
    assert command == "python3 -m pip install -c requirements.lock -e '.[test]' -e tests/plugin && python3 -m pytest -q"
    assert command in (ROOT / ".ci" / "run").read_text().splitlines()


def test_the_readme_says_how_to_install_what_builds_the_docs():
    readme = (ROOT / "README.md").read_text()
    build = "python3 -m pip install -c requirements.lock -e '.[docs]' && python3 -m mkdocs build --strict"
    assert f"`{build}`" in readme  # where README tells how to build the site
    assert "`mkdocs build" not in readme.replace(f"`{build}`", "")  # and nowhere without the install
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    locked = pins()
    for text in extras["docs"]:
        requirement = Requirement(text)
        assert requirement.specifier.contains(locked[canonicalize_name(requirement.name)]), text
        assert text in extras["test"]  # the tests build the site too
