#!/usr/bin/env bash
# Redaction benchmark: what capture-time redaction costs, and what it wrongly redacts.
#
# Generates ~44k events of ordinary synthetic sessions (examples/synth.rs: code, commands,
# hashes, UUIDs, base64 ids; no secrets), then imports them into fresh ledgers with
# redaction off (PEAT_REDACT=off, the measurement switch) and on, alternating, BENCH_RUNS
# times each. Prints `name: value` lines: the median wall time of each, the on/off ratio,
# every marker redaction put into the ordinary corpus (its false positives, by kind), and
# the time `peat redact` takes over the whole ledger. HOME and PEAT_DB point inside a
# temp dir; the real ~/.claude, ~/.codex and ledgers are never touched.
#
# Knobs: BENCH_SESSIONS (30), BENCH_EVENTS (1500 per session), BENCH_RUNS (3),
# BENCH_SEED (1), BENCH_KEEP=1 keeps the temp dir.
set -euo pipefail

SESSIONS=${BENCH_SESSIONS:-30}
EVENTS=${BENCH_EVENTS:-1500}
RUNS=${BENCH_RUNS:-3}
SEED=${BENCH_SEED:-1}

cd "$(dirname "${BASH_SOURCE[0]}")/.."
. bench/lib.sh
build_release
bench_tmp redact
HOME_DIR=$TMP/home
mkdir -p "$HOME_DIR"
log "generating $SESSIONS sessions of ~$EVENTS events"
"$SYNTH" --out "$HOME_DIR" --sessions "$SESSIONS" --events-per-session "$EVENTS" \
    --seed "$SEED" 2>"$TMP/synth.err"
out synth_receipt "$(cat "$TMP/synth.err")"

# peat_in DB [VAR=VALUE...] -- ARGS: run peat on ledger DB inside the temp dir.
peat_in() {
    local db=$1
    shift
    local -a extra=()
    while [[ $1 != -- ]]; do extra+=("$1"); shift; done
    shift
    (cd "$TMP" && env -u CODEX_HOME -u CLAUDE_CONFIG_DIR -u PEAT_REDACT HOME="$HOME_DIR" \
        PEAT_DB="$db" NO_COLOR=1 TERM=dumb "${extra[@]}" "$PEAT" "$@")
}

# timed_import MODE N: import everything into a fresh ledger; prints the wall seconds.
timed_import() {
    local mode=$1 n=$2 db=$TMP/db-$1-$2 t0
    t0=$(date +%s%N)
    peat_in "$db" PEAT_REDACT="$mode" -- import >"$TMP/import-$mode-$n.out" 2>"$TMP/import-$mode-$n.err"
    secs_since "$t0"
}

off=() on=()
for n in $(seq 1 "$RUNS"); do
    off+=("$(timed_import off "$n")")
    on+=("$(timed_import on "$n")")
    log "run $n: off ${off[-1]} s, on ${on[-1]} s"
done
EVENTS_N=$(grep -oE '[0-9]+ events' "$TMP/import-on-1.err" | head -1 | awk '{ print $1 }')
OFF=$(printf '%s\n' "${off[@]}" | median)
ON=$(printf '%s\n' "${on[@]}" | median)
out import_events "${EVENTS_N:-?}"
out import_receipt "$(grep -E 'imported' "$TMP/import-on-1.err" | tail -n 1)"
out redaction_off_wall_s "$OFF (runs: ${off[*]})"
out redaction_on_wall_s "$ON (runs: ${on[*]})"
out redaction_on_over_off "$(awk -v a="$ON" -v b="$OFF" 'BEGIN { printf "%.3f", a / b }')"

# False positives: every marker in a corpus that holds no secret.
peat_in "$TMP/db-on-1" -- events --json >"$TMP/events.json"
FP=$({ grep -oE '\[REDACTED:[a-z0-9-]+' "$TMP/events.json" || true; } | sort | uniq -c |
    awk '{ printf "%s%s=%s", sep, substr($2, 11), $1; sep = ", " }')
out false_positive_markers "$({ grep -oE '\[REDACTED:' "$TMP/events.json" || true; } | wc -l | tr -d ' ')${FP:+ ($FP)}"
out events_json_lines "$(wc -l <"$TMP/events.json" | tr -d ' ')"

# Retroactive: the whole unredacted ledger through `peat redact`.
t0=$(date +%s%N)
peat_in "$TMP/db-off-1" -- redact --json >"$TMP/redact.out" 2>"$TMP/redact.err"
out retro_redact_wall_s "$(secs_since "$t0")"
out retro_redact_report "$(cat "$TMP/redact.out")"
