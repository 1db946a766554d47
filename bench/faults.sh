#!/usr/bin/env bash
# Faults benchmark: read latency and hook latency, idle and while a large capture runs.
# Generates a transcript with examples/synth.rs in a temp dir; HOME, PEAT_DB and the cwd
# all point inside it. Prints `name: value` lines on stdout. See bench/README.md.
#
# Knobs: BENCH_BIG_MB (100: the capture that runs meanwhile), BENCH_READS (20),
# BENCH_HOOKS (200), BENCH_KEEP=1 keeps the temp dir.
set -euo pipefail

BIG_MB=${BENCH_BIG_MB:-100}
READS=${BENCH_READS:-20}
HOOKS=${BENCH_HOOKS:-200}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
. bench/lib.sh
log() { printf 'bench: %s\n' "$*" >&2; }
out() { printf '%s: %s\n' "$1" "$2"; }

log "building (release peat and synth)"
cargo build --release --example synth >&2
cargo build --release >&2
SYNTH=$ROOT/target/release/examples/synth
PEAT=$ROOT/target/release/peat

TMP=$(mktemp -d "${TMPDIR:-/tmp}/peat-faults.XXXXXX")
if [[ ${BENCH_KEEP:-0} == 1 ]]; then trap 'log "kept $TMP"' EXIT; else trap 'rm -rf "$TMP"' EXIT; fi
export HOME=$TMP/home PEAT_DB=$TMP/db NO_COLOR=1
mkdir -p "$HOME" "$TMP/work"
cd "$TMP/work"

log "generating a small ledger and a ${BIG_MB} MB transcript"
"$SYNTH" --out "$HOME" --sessions 20 --events-per-session 300 >&2
"$SYNTH" --single "$TMP/big.jsonl" --bytes "${BIG_MB}MB" --seed 7 >&2
"$PEAT" import >/dev/null 2>&1

# Milliseconds of one run of "$@" (stdin from $STDIN_FILE when set).
ms() {
    local s e
    s=$(date +%s%N)
    if [[ -n ${STDIN_FILE:-} ]]; then "$@" <"$STDIN_FILE" >/dev/null 2>&1 || true
    else "$@" >/dev/null 2>&1 || true; fi
    e=$(date +%s%N)
    echo $(((e - s) / 1000000))
}

# p50 and p99 of the numbers on stdin.
pct() { sort -n | awk '{a[NR]=$1} END {p50=a[int((NR+1)*0.5)]; i=int(NR*0.99+0.999); if(i>NR)i=NR; printf "p50 %d ms, p99 %d ms, max %d ms (n=%d)\n", p50, a[i], a[NR], NR}'; }

# Whether process $1 still runs (a finished child stays a zombie until reaped).
alive() { [[ -e /proc/$1/stat ]] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }

# The reads a person or an agent runs most: they need only the views.
READ_CMDS=("sessions" "brief" "recall limiter")
read_name() { echo "read_${1%% *}"; }

log "reads idle"
for c in "${READ_CMDS[@]}"; do
    # shellcheck disable=SC2086
    time_runs "$(read_name "$c")_idle" "$READS" "$PEAT" $c
done

# Start a capture of the big transcript into a fresh copy of the ledger ($1), and return
# once it has written part of it: the reads then land in its long phase. Sets $pid.
start_capture() {
    local db=$1 before
    rm -rf "$db"
    cp -a "$TMP/db" "$db"
    before=$(cat "$db/ledger.lsn")
    PEAT_DB=$db "$PEAT" capture "$TMP/big.jsonl" >/dev/null 2>&1 &
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

# While the capture folds its views (its last phase), a read asks it to pause between
# chunks: measured from the moment the views lock names the writer.
log "reads while that capture brings the views up to date"
start_capture "$TMP/db.read"
while alive "$pid" && ! grep -q "writing the views" "$TMP/db.read/views.lock" 2>/dev/null; do sleep 0.002; done
for _ in $(seq "$READS"); do
    alive "$pid" || break
    PEAT_DB=$TMP/db.read ms "$PEAT" sessions
done | pct | { read -r l; out read_sessions_during_catch_up "$l"; }
wait "$pid" || true

SESSION=$(ls "$HOME"/.claude/projects/*/ | head -1 | sed 's/\.jsonl$//')
T=$(ls "$HOME"/.claude/projects/*/*.jsonl | head -1)
printf '{"hook_event_name":"SessionStart","session_id":"%s","source":"startup","cwd":"%s"}' "$SESSION" "$TMP/work" >"$TMP/start.json"
printf '{"hook_event_name":"Stop","session_id":"%s","transcript_path":"%s","cwd":"%s","last_assistant_message":"done"}' "$SESSION" "$T" "$TMP/work" >"$TMP/stop.json"

log "hooks idle ($HOOKS runs each)"
for _ in $(seq "$HOOKS"); do STDIN_FILE=$TMP/start.json ms "$PEAT" hook; done | pct | { read -r l; out hook_session_start_idle "$l"; }
for _ in $(seq "$HOOKS"); do STDIN_FILE=$TMP/stop.json ms "$PEAT" hook; done | pct | { read -r l; out hook_stop_idle "$l"; }
sleep 3

log "hooks while captures run"
# Each capture gets a fresh copy of the ledger (the Stop hooks' detached captures may still
# be writing to an older one: it is left alone).
runs() {
    local file=$1 n=0 round=0
    while [[ $n -lt $HOOKS ]]; do
        round=$((round + 1))
        local db=$TMP/db.$file_tag.$round
        cp -a "$PEAT_DB" "$db"
        PEAT_DB=$db "$PEAT" capture "$TMP/big.jsonl" >/dev/null 2>&1 &
        local pid=$!
        while alive "$pid" && [[ $n -lt $HOOKS ]]; do
            STDIN_FILE=$file PEAT_DB=$db ms "$PEAT" hook
            n=$((n + 1))
        done
        wait "$pid" || true
    done
}
file_tag=start runs "$TMP/start.json" | pct | { read -r l; out hook_session_start_during_capture "$l"; }
file_tag=stop runs "$TMP/stop.json" | pct | { read -r l; out hook_stop_during_capture "$l"; }
log "waiting for the hooks' detached captures"
sleep 5
