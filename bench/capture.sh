#!/usr/bin/env bash
# Capture benchmark: generates synthetic transcripts (examples/synth.rs) in a temp dir and
# times `peat capture` / `peat import` on them. Prints `name: value` lines on stdout;
# build output and progress go to stderr. See bench/README.md.
#
# Knobs (environment): BENCH_BIG_MB (100), BENCH_SMALL_MB (10), BENCH_SESSIONS (30),
# BENCH_EVENTS (1500 per session), BENCH_CODEX_SHARE (0.3), BENCH_SEED (1),
# BENCH_KEEP=1 keeps the temp dir.
set -euo pipefail

BIG_MB=${BENCH_BIG_MB:-100}
SMALL_MB=${BENCH_SMALL_MB:-10}
SESSIONS=${BENCH_SESSIONS:-30}
EVENTS=${BENCH_EVENTS:-1500}
CODEX_SHARE=${BENCH_CODEX_SHARE:-0.3}
SEED=${BENCH_SEED:-1}

cd "$(dirname "${BASH_SOURCE[0]}")/.."
. bench/lib.sh
build_release
bench_tmp capture
FAKE_HOME=$TMP/home
mkdir -p "$FAKE_HOME"

TIME_BIN=
if [[ -x /usr/bin/time ]] && /usr/bin/time -v true >/dev/null 2>&1; then
    TIME_BIN=/usr/bin/time
fi

# Fields set by `measure`.
WALL= RSS_MB= ERR=

# measure NAME DB CMD... — run CMD with HOME and PEAT_DB inside the temp dir (never the real
# ~/.claude, ~/.codex or ledger), from inside the temp dir (so no desk .peat/ is touched).
# Sets WALL (seconds), RSS_MB (peak resident set, or empty) and ERR (the stderr file).
measure() {
    local name=$1 db=$2
    shift 2
    ERR=$TMP/$name.err
    local tfile=$TMP/$name.time status=0 t0
    local -a envv=(env -u CODEX_HOME -u CLAUDE_CONFIG_DIR -u PEAT_LOCK_WAIT_SECS
        HOME="$FAKE_HOME" PEAT_DB="$db" NO_COLOR=1 TERM=dumb)
    t0=$(date +%s%N)
    if [[ -n $TIME_BIN ]]; then
        (cd "$TMP" && "${envv[@]}" "$TIME_BIN" -v -o "$tfile" "$@") >"$TMP/$name.out" 2>"$ERR" || status=$?
    else
        (cd "$TMP" && "${envv[@]}" "$@") >"$TMP/$name.out" 2>"$ERR" || status=$?
    fi
    WALL=$(secs_since "$t0")
    RSS_MB=
    if [[ -n $TIME_BIN && -s $tfile ]]; then
        RSS_MB=$(awk -F: '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$tfile")
    fi
    if ((status != 0)); then
        log "$name failed (exit $status): $*"
        sed 's/^/  /' "$ERR" >&2
        exit 1
    fi
}

rss() { if [[ -n $RSS_MB ]]; then echo "$RSS_MB"; else echo "unavailable (apt-get install time)"; fi; }

# The event count in a receipt: `captured N events …` or `imported … : N events …`.
events_in() {
    local n
    n=$({ grep -E '^(peat: )?(captured|imported)' "$1" || true; } | grep -oE '[0-9]+ events' | awk '{ s += $1 } END { print s + 0 }' || true)
    echo "${n:-0}"
}

receipt() { grep -E 'captured|imported' "$1" | tail -n 1 || true; }

rate() { awk -v n="$1" -v s="$2" 'BEGIN { if (s > 0) printf "%.0f", n / s; else print "inf" }'; }
mb() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", b / 1048576 }'; }
mbps() { awk -v b="$(stat -c %s "$1")" -v s="$2" 'BEGIN { if (s > 0) printf "%.1f", b / 1048576 / s; else print "inf" }'; }

# --- 1. one big transcript ---------------------------------------------------------------
BIG=$TMP/big.jsonl
log "generating a ${BIG_MB} MB Claude transcript"
t0=$(date +%s%N)
"$SYNTH" --single "$BIG" --bytes "${BIG_MB}MB" --seed "$SEED" 2>"$TMP/synth-big.err"
out synth_big_wall_s "$(secs_since "$t0")"
out synth_big_receipt "$(cat "$TMP/synth-big.err")"

log "peat capture (cold, ${BIG_MB} MB)"
measure capture_big "$TMP/db-big" "$PEAT" capture "$BIG"
ev=$(events_in "$ERR")
BIG_RSS=$(rss)
out capture_big_receipt "$(receipt "$ERR")"
out capture_big_file_mb "$(mb "$BIG")"
out capture_big_events "$ev"
out capture_big_wall_s "$WALL"
out capture_big_events_per_s "$(rate "$ev" "$WALL")"
out capture_big_mb_per_s "$(mbps "$BIG" "$WALL")"
out capture_big_peak_rss_mb "$BIG_RSS"

log "peat capture again (nothing new)"
measure recapture_big "$TMP/db-big" "$PEAT" capture "$BIG"
out recapture_big_receipt "$(receipt "$ERR")"
out recapture_big_wall_s "$WALL"
out recapture_big_peak_rss_mb "$(rss)"

# A transcript that grows: capture its first 90 %, append the rest, capture again.
GROW=$TMP/grow.jsonl
lines=$(wc -l <"$BIG")
head_lines=$((lines * 9 / 10))
head -n "$head_lines" "$BIG" >"$GROW"
log "peat capture of the first 90% (${head_lines}/${lines} lines), fresh ledger"
measure capture_90pct "$TMP/db-grow" "$PEAT" capture "$GROW"
out capture_90pct_events "$(events_in "$ERR")"
out capture_90pct_wall_s "$WALL"
tail -n +"$((head_lines + 1))" "$BIG" >>"$GROW"
log "peat capture after appending the last 10%"
measure capture_append_10pct "$TMP/db-grow" "$PEAT" capture "$GROW"
out capture_append_10pct_receipt "$(receipt "$ERR")"
out capture_append_10pct_events "$(events_in "$ERR")"
out capture_append_10pct_wall_s "$WALL"
out capture_append_10pct_peak_rss_mb "$(rss)"

# --- 2. import of many sessions ----------------------------------------------------------
log "generating $SESSIONS sessions x ~$EVENTS events (codex share $CODEX_SHARE) under the fake HOME"
"$SYNTH" --out "$FAKE_HOME" --sessions "$SESSIONS" --events-per-session "$EVENTS" \
    --codex-share "$CODEX_SHARE" --seed "$SEED" 2>"$TMP/synth-import.err"
out synth_import_receipt "$(cat "$TMP/synth-import.err")"
files=$(find "$FAKE_HOME/.claude" "$FAKE_HOME/.codex" -name '*.jsonl' 2>/dev/null | wc -l)
bytes=$(find "$FAKE_HOME/.claude" "$FAKE_HOME/.codex" -name '*.jsonl' -printf '%s\n' 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')

log "peat import (HOME=$FAKE_HOME)"
measure import "$TMP/db-import" "$PEAT" import
ev=$(events_in "$ERR")
out import_receipt "$(receipt "$ERR")"
out import_sessions "$files"
out import_mb "$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')"
out import_events "$ev"
out import_wall_s "$WALL"
out import_events_per_s "$(rate "$ev" "$WALL")"
out import_mb_per_s "$(awk -v b="$bytes" -v s="$WALL" 'BEGIN { if (s > 0) printf "%.1f", b / 1048576 / s; else print "inf" }')"
out import_peak_rss_mb "$(rss)"

log "peat import again (nothing new)"
measure reimport "$TMP/db-import" "$PEAT" import
out reimport_wall_s "$WALL"

# --- 3. memory must not grow with transcript size ----------------------------------------
SMALL=$TMP/small.jsonl
log "generating a ${SMALL_MB} MB transcript and capturing it into a fresh ledger"
"$SYNTH" --single "$SMALL" --bytes "${SMALL_MB}MB" --seed "$((SEED + 1))" 2>/dev/null
measure capture_small "$TMP/db-small" "$PEAT" capture "$SMALL"
ev=$(events_in "$ERR")
out capture_small_file_mb "$(mb "$SMALL")"
out capture_small_events "$ev"
out capture_small_wall_s "$WALL"
out capture_small_events_per_s "$(rate "$ev" "$WALL")"
out capture_small_peak_rss_mb "$(rss)"
out peak_rss_mb_small_vs_big "$(rss) (${SMALL_MB} MB) vs $BIG_RSS (${BIG_MB} MB)"
