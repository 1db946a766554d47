#!/usr/bin/env bash
# Faults benchmark: read latency idle and while a large capture runs. Generates a transcript
# with examples/synth.rs in a temp dir; HOME, PEAT_DB and the cwd all point inside it. Prints
# `name: value` lines on stdout. See bench/README.md; hook latency under the same load is
# bench/hooks.sh.
#
# Knobs: BENCH_BIG_MB (100: the capture that runs meanwhile), BENCH_READS (20),
# BENCH_KEEP=1 keeps the temp dir.
set -euo pipefail

BIG_MB=${BENCH_BIG_MB:-100}
READS=${BENCH_READS:-20}

cd "$(dirname "${BASH_SOURCE[0]}")/.."
. bench/lib.sh
build_release
bench_tmp faults
export HOME=$TMP/home PEAT_DB=$TMP/db NO_COLOR=1
unset CLAUDE_CONFIG_DIR CODEX_HOME PEAT_LOCK_WAIT_SECS PEAT_NOW
mkdir -p "$HOME" "$TMP/work"
cd "$TMP/work"

log "generating a small ledger and a ${BIG_MB} MB transcript"
"$SYNTH" --out "$HOME" --sessions 20 --events-per-session 300 >&2
"$SYNTH" --single "$TMP/big.jsonl" --bytes "${BIG_MB}MB" --seed 7 >&2
"$PEAT" import >/dev/null 2>&1

# The reads a person or an agent runs most, and the reads of whole events (`show` of an
# edit, with what it wrote; one session's `events`), which beside a writer read the views'
# copy of the ledger.
edit=$("$PEAT" events --kind file --json | head -1)
EDIT_SESSION=$(jq -r '.session[:8]' <<<"$edit")
EDIT_SEQ=$(jq -r '.seq' <<<"$edit")
READ_CMDS=("sessions" "brief" "recall limiter" "show $EDIT_SESSION $EDIT_SEQ"
    "events --session $EDIT_SESSION")
read_name() { echo "read_${1%% *}"; }

log "reads idle"
for c in "${READ_CMDS[@]}"; do
    # shellcheck disable=SC2086
    time_runs "$(read_name "$c")_idle" "$READS" "$PEAT" $c
done

# Start a capture of the big transcript (or $2) into a fresh copy of the ledger ($1), and
# return once it has written part of it: the reads then land in its long phase. Sets $pid.
start_capture() {
    local db=$1 big=${2:-$TMP/big.jsonl} before
    rm -rf "$db"
    cp -a "$TMP/db" "$db"
    before=$(cat "$db/ledger.lsn")
    PEAT_DB=$db "$PEAT" capture "$big" >/dev/null 2>&1 &
    pid=$!
    while [[ $(cat "$db/ledger.lsn" 2>/dev/null) == "$before" ]] && alive "$pid"; do sleep 0.005; done
}

log "reads while a ${BIG_MB} MB capture runs (each on a fresh copy of the ledger)"
for c in "${READ_CMDS[@]}"; do
    start_capture "$TMP/db.read"
    # shellcheck disable=SC2086
    PEAT_DB=$TMP/db.read time_runs "$(read_name "$c")_during_capture" "$READS" "$PEAT" $c
    if alive "$pid"; then
        out "$(read_name "$c")_during_capture_valid" "yes (the capture was still running after the last read)"
    else
        out "$(read_name "$c")_during_capture_valid" "NO: the capture finished first; raise BENCH_BIG_MB"
    fi
    t=$(date +%s%N)
    wait "$pid" || true
    out "$(read_name "$c")_capture_left_ms" "$((($(date +%s%N) - t) / 1000000))"
done

# `asof` replays the whole record as of a day (every event's version then, from the views'
# copy and the earlier versions they keep). Its capture is of a transcript dated after
# that day, so beside the writer it replays the same past as idle.
# An asof takes tens of times a read's time: its capture is three times as large, and it
# runs half as many times, so that every run lands beside the writer.
ASOF_MB=$((BIG_MB * 3))
ASOF_READS=$(((READS + 1) / 2))
log "asof idle and while a capture of a later ${ASOF_MB} MB transcript runs"
"$SYNTH" --single "$TMP/later.jsonl" --bytes "${ASOF_MB}MB" --seed 7 --start 2026-09-01 >&2
time_runs read_asof_idle "$ASOF_READS" "$PEAT" asof 2026-08-31
start_capture "$TMP/db.read" "$TMP/later.jsonl"
PEAT_DB=$TMP/db.read time_runs read_asof_during_capture "$ASOF_READS" "$PEAT" asof 2026-08-31
if alive "$pid"; then
    out read_asof_during_capture_valid "yes (the capture was still running after the last read)"
else
    out read_asof_during_capture_valid "NO: the capture finished first; raise BENCH_BIG_MB"
fi
wait "$pid" || true
rm -f "$TMP/later.jsonl"

# While the capture folds its views (its last phase), a read asks it to pause between
# chunks: measured from the moment the views lock names the writer.
log "reads while that capture brings the views up to date"
start_capture "$TMP/db.read"
while alive "$pid" && ! grep -q "writing the views" "$TMP/db.read/views.lock" 2>/dev/null; do sleep 0.002; done
for _ in $(seq "$READS"); do
    alive "$pid" || break
    PEAT_DB=$TMP/db.read ms_of "$PEAT" sessions
done | percentiles | { read -r l; out read_sessions_during_catch_up "$l"; }
wait "$pid" || true
