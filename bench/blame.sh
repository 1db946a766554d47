#!/usr/bin/env bash
# peat blame beside git blame on the same file in one run: 1,000 lines, a 500-commit git
# history, 50 recorded edits (examples/blame_bench.rs). Prints both times and the ratio.
#
#   bench/blame.sh                      # the defaults
#   bench/blame.sh --runs 21 --edits 200   # any of the example's flags
set -euo pipefail
cd "$(dirname "$0")/.."

. bench/lib.sh
build_release
log "building (cargo build --release --example blame_bench)"
cargo build --release --example blame_bench >&2
"$(dirname "$PEAT")/examples/blame_bench" --peat "$PEAT" "$@"
