#!/usr/bin/env bash
# One night of the nightly benchmark: run the sweep and the speed benchmark into
# runs/nightly/<date>, then compare with the previous night and draw the trend.
# Exit status: 0 all well, 1 something got significantly worse or slower, 2 an error.
#
#   cluster/nightly/nightly.sh [RUNS_DIR]      (default: runs/nightly)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-runs/nightly}
tonight="$runs/$(date -u +%Y-%m-%d)"
mkdir -p "$runs"

dolb run pipelines/nightly.toml --out "$tonight" --no-progress
dolb bench --quick --json > "$tonight/bench.json"

previous=$(ls -d "$runs"/????-??-?? | grep -v "$tonight" | sort | tail -n 1 || true)
if [ -z "$previous" ]; then
  echo "first night: nothing to compare with"
  exit 0
fi
history=$(ls -d "$runs"/????-??-?? | sort | tail -n 30)
# shellcheck disable=SC2086  # one folder per word
dolb compare "$tonight" "$previous" --history $history
