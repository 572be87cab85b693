#!/usr/bin/env bash
# Write requirements.lock: the exact version of every package that
# `python3 -m pip install -e '.[test]'` installs, for Python 3.11+ on Linux x86_64, as a
# pip constraints file (README's commands install with `-c requirements.lock`, so two
# machines, or two nights, differ only by dolb's own code).
#
#   scripts/lock.sh [PINS]      PINS: a file of name==version lines (`pip freeze`) to
#                               keep where they fit; without it, the newest versions
#                               pyproject.toml allows
#
# Needs uv (python3 -m pip install uv). Commit the new requirements.lock with the change
# of pyproject.toml that called for it.
set -euo pipefail
cd "$(dirname "$0")/.."
pins=()
if [ $# -gt 0 ]; then pins=(--constraint "$1"); fi
{
  echo "# Exact versions of dolb's dependencies and its test extra (Python 3.11+, Linux x86_64),"
  echo "# a pip constraints file: python3 -m pip install -c requirements.lock -e '.[test]'"
  echo "# Written by scripts/lock.sh; run it again to update."
  uv pip compile pyproject.toml --extra test --python-version 3.11 --python-platform x86_64-unknown-linux-gnu \
    --no-header --no-annotate --quiet "${pins[@]}"
} > requirements.lock.partial
mv requirements.lock.partial requirements.lock
