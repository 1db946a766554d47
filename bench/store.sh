#!/usr/bin/env bash
# Capture's cost and the store's size, one peat against another: `peat import` of the same
# synthetic corpus into a fresh store, RUNS times each, the two binaries interleaved (so a
# busy machine slows both alike). Prints the median wall time, the store's size on disk and
# where it lies (ledger journal, ledger tables, views, keyword lane), and the after/before
# ratios, as `name: value` lines; progress goes to stderr. See bench/README.md.
#
# usage: bench/store.sh BEFORE AFTER   (two peat binaries; AFTER defaults to this checkout's
#                                       release build)
# Knobs (environment): BENCH_RUNS (3), BENCH_SESSIONS (30), BENCH_EVENTS (1220),
# BENCH_DAYS (120), BENCH_SEED (7), BENCH_KEEP=1 keeps the temp dir.
set -euo pipefail

RUNS=${BENCH_RUNS:-3}
SESSIONS=${BENCH_SESSIONS:-30}
EVENTS=${BENCH_EVENTS:-1220}
DAYS=${BENCH_DAYS:-120}
SEED=${BENCH_SEED:-7}

cd "$(dirname "${BASH_SOURCE[0]}")/.."
. bench/lib.sh
BEFORE=${1:?usage: bench/store.sh BEFORE [AFTER]}
build_release
AFTER=${2:-$PEAT}
bench_tmp store

log "generating $SESSIONS sessions x ~$EVENTS events over $DAYS days (seed $SEED)"
"$SYNTH" --out "$TMP/corpus" --sessions "$SESSIONS" --events-per-session "$EVENTS" \
    --days "$DAYS" --seed "$SEED" 2>"$TMP/synth.err"
out corpus "$(cat "$TMP/synth.err")"

# import NAME BIN RUN: a fresh store for BIN, from inside the temp dir, HOME the corpus.
# Prints the wall seconds and, where /usr/bin/time is, the CPU seconds (user + system: on
# a machine others are using, the steadier figure of the two).
import() {
    local name=$1 bin=$2 run=$3 t0 wall
    local -a timer=()
    [[ -x /usr/bin/time ]] && timer=(/usr/bin/time -f '%U %S' -o "$TMP/$name-$run.cpu")
    rm -rf "$TMP/store-$name"
    t0=$(date +%s%N)
    (cd "$TMP" && env -i PATH="$PATH" HOME="$TMP/corpus" PEAT_DB="$TMP/store-$name" TZ=UTC \
        PEAT_EMBED_IDLE_SECS=0 "${timer[@]}" "$bin" import >/dev/null 2>"$TMP/$name-$run.err") ||
        { log "$bin import failed:"; sed 's/^/  /' "$TMP/$name-$run.err" >&2; exit 1; }
    wall=$(secs_since "$t0")
    if [[ -s $TMP/$name-$run.cpu ]]; then
        echo "$wall $(awk '{ printf "%.2f", $1 + $2 }' "$TMP/$name-$run.cpu")"
    else
        echo "$wall unavailable"
    fi
}

# Disk usage (what `du` counts: a sparse preallocated journal takes only what it holds).
mb() { du -sm "$1" 2>/dev/null | cut -f1; }
tables_mb() { du -smc "$1"/keyspaces 2>/dev/null | tail -n 1 | cut -f1; }
journal_mb() { du -smc "$1"/*.jnl 2>/dev/null | tail -n 1 | cut -f1; }

declare -A WALLS CPUS
for run in $(seq "$RUNS"); do
    for name in before after; do
        bin=$BEFORE
        [[ $name == after ]] && bin=$AFTER
        log "run $run: $name ($bin)"
        read -r wall cpu < <(import "$name" "$bin" "$run")
        WALLS[$name]+="$wall "
        CPUS[$name]+="$cpu "
    done
done

for name in before after; do
    s=$TMP/store-$name
    wall=$(tr ' ' '\n' <<<"${WALLS[$name]}" | grep . | median)
    cpu=$(tr ' ' '\n' <<<"${CPUS[$name]}" | grep . | median)
    out "${name}_receipt" "$(grep -E 'imported' "$TMP/$name-1.err" | tail -n 1)"
    out "${name}_import_wall_s_median" "$wall"
    out "${name}_import_wall_s_runs" "${WALLS[$name]% }"
    out "${name}_import_cpu_s_median" "$cpu"
    out "${name}_import_cpu_s_runs" "${CPUS[$name]% }"
    out "${name}_store_mb" "$(mb "$s")"
    out "${name}_ledger_journal_mb" "$(journal_mb "$s/fjall")"
    out "${name}_ledger_tables_mb" "$(tables_mb "$s/fjall")"
    out "${name}_views_mb" "$(mb "$s/views")"
    out "${name}_keyword_mb" "$(du -smc "$s"/keyword.v* | tail -n 1 | cut -f1)"
    eval "${name}_wall=$wall ${name}_cpu=$cpu ${name}_mb=$(mb "$s")"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "unavailable" }'; }
# shellcheck disable=SC2154 # set by the eval above
{
    out import_wall_ratio "$(ratio "$after_wall" "$before_wall")"
    out import_cpu_ratio "$(ratio "$after_cpu" "$before_cpu")"
    out store_size_ratio "$(ratio "$after_mb" "$before_mb")"
}
