#!/usr/bin/env bash
# The sweep with nothing new: twenty project folders of fixture transcripts spread over every
# harness's root (two per root: Claude Code, Codex, Cursor, Copilot CLI, Pi, Qwen Code,
# droid, Gemini CLI; BENCH_SWEEP_FILES transcripts each) under a temp HOME, captured once by
# `peat import`; then BENCH_SWEEP_RUNS fresh processes of the no-op sweep (`peat import`, and
# `peat capture --sweep` as the hooks run it), against the same commands on the same ledger
# with an empty HOME (the process, the ledger's opening and the views' check, which every
# capture pays anyway).
# Prints `name: value` lines on stdout; `sweep_cost_median_ms` is the sweep's own share.
#
# Knobs: BENCH_SWEEP_FILES (5 per folder), BENCH_SWEEP_RUNS (30), PEAT (a built binary to
# time instead of building the release one), BENCH_KEEP=1 keeps the temp dir.
set -euo pipefail

FILES=${BENCH_SWEEP_FILES:-5}
RUNS=${BENCH_SWEEP_RUNS:-30}

cd "$(dirname "${BASH_SOURCE[0]}")/.."
FIXTURES=$PWD/tests/fixtures
. bench/lib.sh
if [[ -z ${PEAT:-} ]]; then
  build_release
fi
bench_tmp sweep
export NO_COLOR=1
unset CLAUDE_CONFIG_DIR CODEX_HOME PI_CODING_AGENT_DIR QWEN_HOME QWEN_RUNTIME_DIR \
  GEMINI_CLI_HOME XDG_DATA_HOME PEAT_LOCK_WAIT_SECS PEAT_NOW

# lay FOLDER NAME FIXTURE: FILES copies of FIXTURE as FOLDER/<i>NAME.
lay() {
  mkdir -p "$1"
  for i in $(seq "$FILES"); do cp "$2" "$1/$i$3"; done
}

FULL=$TMP/full/home
for p in 1 2; do
  lay "$FULL/.claude/projects/-work-p$p" "$FIXTURES/claude/full-session.jsonl" "-claude.jsonl"
  lay "$FULL/.codex/sessions/2026/05/0$p" "$FIXTURES/codex/desktop_2026.jsonl" "-x.jsonl"
  for i in $(seq "$FILES"); do
    mv "$FULL/.codex/sessions/2026/05/0$p/$i-x.jsonl" \
      "$FULL/.codex/sessions/2026/05/0$p/rollout-2026-05-0${p}T10-00-0$i-x$p$i.jsonl"
  done
  lay "$FULL/.cursor/projects/work-p$p/agent-transcripts" "$FIXTURES/cursor/session.jsonl" ".jsonl"
  lay "$FULL/.copilot/session-state/p$p" "$FIXTURES/copilot/events.jsonl" "-events.jsonl"
  lay "$FULL/.pi/agent/sessions/--work-p$p--" "$FIXTURES/pi/session.jsonl" "_pi.jsonl"
  lay "$FULL/.qwen/projects/-work-p$p/chats" "$FIXTURES/qwen/session.jsonl" ".jsonl"
  lay "$FULL/.factory/sessions/-work-p$p" "$FIXTURES/droid/session.jsonl" ".jsonl"
  lay "$FULL/.gemini/tmp/p$p/chats" \
    "$FIXTURES/gemini/session-2026-07-14T09-00-8c1f7e2a.jsonl" "-session.jsonl"
  # Two more folders of Claude Code projects make twenty.
  lay "$FULL/.claude/projects/-work-q$p" "$FIXTURES/claude/edits.jsonl" "-edits.jsonl"
  lay "$FULL/.gemini/tmp/q$p/chats" "$FIXTURES/gemini/session-2026-07-14T09-29-2b7d4e91.json" \
    "-session.json"
done
FOLDERS=$(find "$FULL" -type f -printf '%h\n' | sort -u | wc -l)
TRANSCRIPTS=$(find "$FULL" -type f | wc -l)
mkdir -p "$TMP/empty/home" "$TMP/work"
cd "$TMP/work"

log "capturing $TRANSCRIPTS transcripts in $FOLDERS folders once"
HOME=$FULL PEAT_DB=$TMP/full/db "$PEAT" import >/dev/null 2>"$TMP/first.log" ||
  { cat "$TMP/first.log" >&2; exit 1; }
HOME=$FULL PEAT_DB=$TMP/full/db "$PEAT" import 2>"$TMP/again.log" >/dev/null
grep -q "imported 0 transcripts" "$TMP/again.log" ||
  { log "the second import read something:"; cat "$TMP/again.log" >&2; exit 1; }

out sweep_folders "$FOLDERS"
out sweep_transcripts "$TRANSCRIPTS"
HOME=$FULL PEAT_DB=$TMP/full/db time_runs sweep_import "$RUNS" "$PEAT" import
HOME=$TMP/empty/home PEAT_DB=$TMP/full/db time_runs empty_import "$RUNS" "$PEAT" import
HOME=$FULL PEAT_DB=$TMP/full/db time_runs sweep_capture "$RUNS" \
  "$PEAT" capture --sweep | tee "$TMP/full.out"
HOME=$TMP/empty/home PEAT_DB=$TMP/full/db time_runs empty_capture "$RUNS" \
  "$PEAT" capture --sweep | tee "$TMP/empty.out"
full=$(sed -n 's/^sweep_capture_median_ms: //p' "$TMP/full.out")
empty=$(sed -n 's/^empty_capture_median_ms: //p' "$TMP/empty.out")
out sweep_cost_median_ms "$(awk -v a="$full" -v b="$empty" 'BEGIN { printf "%.1f", a - b }')"
