#!/usr/bin/env bash
# Hook latency: `peat hook` for SessionStart and for Stop, BENCH_HOOKS fresh processes each,
# idle and while a large capture holds the ledger. Generates its ledger and transcripts with
# examples/synth.rs in a temp dir; HOME, PEAT_DB and the cwd all point inside it. Prints
# `name: value` lines (p50, p99, max) on stdout. See bench/README.md.
#
# Knobs: BENCH_HOOKS (200), BENCH_BIG_MB (100: the capture that runs meanwhile),
# BENCH_KEEP=1 keeps the temp dir.
set -euo pipefail

HOOKS=${BENCH_HOOKS:-200}
BIG_MB=${BENCH_BIG_MB:-100}

cd "$(dirname "${BASH_SOURCE[0]}")/.."
. bench/lib.sh
build_release
bench_tmp hooks
export HOME=$TMP/home PEAT_DB=$TMP/db NO_COLOR=1
unset CLAUDE_CONFIG_DIR CODEX_HOME PEAT_LOCK_WAIT_SECS PEAT_NOW
mkdir -p "$HOME" "$TMP/work"
cd "$TMP/work"

log "generating a ledger of 20 sessions and a ${BIG_MB} MB transcript"
"$SYNTH" --out "$HOME" --sessions 20 --events-per-session 300 2>/dev/null
"$SYNTH" --single "$TMP/big.jsonl" --bytes "${BIG_MB}MB" --seed 7 2>/dev/null
"$PEAT" import >/dev/null 2>&1

T=$(ls "$HOME"/.claude/projects/*/*.jsonl | head -1)
SESSION=$(basename "$T" .jsonl)
printf '{"hook_event_name":"SessionStart","session_id":"%s","source":"startup","cwd":"%s"}' \
  "$SESSION" "$TMP/work" >"$TMP/start.json"
printf '{"hook_event_name":"Stop","session_id":"%s","transcript_path":"%s","cwd":"%s","last_assistant_message":"done"}' \
  "$SESSION" "$T" "$TMP/work" >"$TMP/stop.json"

# hook_runs PAYLOAD: the milliseconds of HOOKS runs of `peat hook` with PAYLOAD on stdin.
hook_runs() {
  for _ in $(seq "$HOOKS"); do STDIN_FILE=$1 ms_of "$PEAT" hook; done
}

# holding DB PID: wait until process PID holds the ledger lock of the store DB (its holder
# line names it) or has ended; say which.
holding() {
  local db=$1 pid=$2
  while alive "$pid" && ! grep -q "^pid $pid " "$db/lock" 2>/dev/null; do sleep 0.002; done
  alive "$pid"
}

# settle: wait (60 s at most) until the Stop hooks' detached captures are done in every
# store of this run: no process holds a ledger lock, and no closing message or claim of a
# waiting capture is left in a spool.
settle() {
  local deadline=$((SECONDS + 60)) db busy
  while ((SECONDS < deadline)); do
    busy=0
    for db in "$TMP"/db "$TMP"/db.*; do
      [[ -d $db ]] || continue
      if [[ -s $db/lock ]] || compgen -G "$db/spool/*.final" >/dev/null ||
        compgen -G "$db/spool/*.waiting" >/dev/null; then
        busy=1
        break
      fi
    done
    ((busy)) || return 0
    sleep 0.05
  done
  log "detached captures still running after 60 s"
}

# hook_runs_during_capture PAYLOAD: the same, each run while a BIG_MB capture writes. Each
# capture gets a fresh copy of the ledger (the Stop hooks' own detached captures may still
# be writing to an older one: it is left alone).
hook_runs_during_capture() {
  local payload=$1 n=0 round=0 db pid
  while ((n < HOOKS)); do
    round=$((round + 1))
    db=$TMP/db.$(basename "$payload" .json).$round
    cp -a "$PEAT_DB" "$db"
    PEAT_DB=$db "$PEAT" capture "$TMP/big.jsonl" >/dev/null 2>&1 &
    pid=$!
    # Timed only while the capture holds the ledger: one that ended first times nothing.
    holding "$db" "$pid" || log "round $round: the capture ended before it held the ledger"
    while alive "$pid" && ((n < HOOKS)); do
      STDIN_FILE=$payload PEAT_DB=$db ms_of "$PEAT" hook
      n=$((n + 1))
    done
    wait "$pid" || true
  done
}

log "hooks idle ($HOOKS runs each)"
out hook_session_start_idle "$(hook_runs "$TMP/start.json" | percentiles)"
out hook_stop_idle "$(hook_runs "$TMP/stop.json" | percentiles)"
settle

log "hooks while a ${BIG_MB} MB capture runs ($HOOKS runs each)"
out hook_session_start_during_capture "$(hook_runs_during_capture "$TMP/start.json" | percentiles)"
out hook_stop_during_capture "$(hook_runs_during_capture "$TMP/stop.json" | percentiles)"
log "waiting for the hooks' detached captures"
settle
