#!/usr/bin/env bash
# One night of the nightly benchmark: install the project at the locked versions, run the
# sweep and the speed benchmark into runs/nightly/<date>, then compare with the previous
# night and draw the trend. Every step runs even when an earlier one found a problem (a
# night with failed cells is still benched and compared).
#
#   cluster/nightly/nightly.sh [RUNS_DIR]      (default: runs/nightly)
#
# Exit status: 0 all well; 1 failed cells, a metric changed, or something significantly
# worse or slower (confirmed A/B) than the previous night; 2 an error (a step could not
# run: bad input, a crash, no results). Each problem is named on standard error as it
# happens.
set -uo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-runs/nightly}
tonight="$runs/$(date -u +%Y-%m-%d)"
mkdir -p "$runs" || exit 2
worse=0 # failed cells or a regression
error=0 # a step that could not run

say() { echo "nightly: $*" >&2; }

# the locked versions (requirements.lock), so two nights differ only by the code
if ! python3 -m pip install --quiet -c requirements.lock -e .; then
  say "cannot install the project at the locked versions"
  exit 2
fi

dolb run pipelines/nightly.toml --out "$tonight" --no-progress
case $? in
  0) ;;
  1) worse=1; say "some cells failed (dolb status $tonight lists them); benching and comparing all the same" ;;
  *) say "dolb run could not run the sweep"; exit 2 ;;
esac

if dolb bench --quick --json > "$tonight/bench.json.partial"; then
  mv "$tonight/bench.json.partial" "$tonight/bench.json"
else
  error=1; rm -f "$tonight/bench.json.partial"; say "dolb bench failed: tonight has no throughput to compare"
fi

previous=$(find "$runs" -mindepth 1 -maxdepth 1 -type d -name '????-??-??' ! -path "$tonight" | sort | tail -n 1)
if [ -z "$previous" ]; then
  say "first night: nothing to compare with"
else
  history=$(find "$runs" -mindepth 1 -maxdepth 1 -type d -name '????-??-??' | sort | tail -n 30)
  # a suspected slowdown is re-measured A/B (both nights' commits, worktrees of this
  # checkout, interleaved) and is an alarm only if that confirms it
  # shellcheck disable=SC2086  # one folder per word
  dolb compare "$tonight" "$previous" --history $history --confirm .
  case $? in
    0) ;;
    1) worse=1 ;;
    *) error=1; say "dolb compare could not compare $tonight with $previous" ;;
  esac
fi

if [ $error = 1 ]; then exit 2; fi
exit $worse
