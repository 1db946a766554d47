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

log "reads idle"
for _ in $(seq "$READS"); do ms "$PEAT" sessions; done | pct | { read -r l; out read_sessions_idle "$l"; }

log "reads while a ${BIG_MB} MB capture runs"
"$PEAT" capture "$TMP/big.jsonl" >/dev/null 2>&1 &
pid=$!
sleep 0.2
for _ in $(seq "$READS"); do
    alive "$pid" || break
    ms "$PEAT" sessions
done | pct | { read -r l; out read_sessions_during_capture "$l"; }
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
