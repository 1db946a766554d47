#!/usr/bin/env bash
# Search and read benchmarks on generated ledgers: keyword and hybrid recall (one-shot
# processes, model load included), asof replay, the brief, and the cost of embedding at
# capture. Prints `name: value` lines. Everything lives in a temporary folder; HOME and the
# store point there, never at this machine's ~/.claude or ~/.codex.
#
#   bench/search.sh                 # the 44k-event ledger
#   BENCH_1M=1 bench/search.sh      # also a 1,000,000-event ledger (keyword only; minutes)
#
# The semantic lane needs the pinned model installed (`peat model fetch`); its data
# directory is taken from PEAT_DATA_DIR or ~/.local/share/peat.
set -euo pipefail
cd "$(dirname "$0")/.."

. bench/lib.sh
build_release
bench_tmp search
model_dir="${PEAT_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/peat}"
mkdir -p "$TMP/empty-data"

# ledger NAME SESSIONS EVENTS DATA_DIR: generate transcripts and import them; prints figures.
ledger() {
  local name=$1 sessions=$2 per=$3 data=$4 home="$TMP/$1"
  "$SYNTH" --out "$home" --sessions "$sessions" --events-per-session "$per" --days 120 --seed 7 2>/dev/null
  local start events secs
  start=$(date +%s%N)
  HOME="$home" PEAT_DB="$home/db" PEAT_DATA_DIR="$data" "$PEAT" import 2>"$TMP/$name.import"
  secs=$(secs_since "$start")
  events=$(grep -o '[0-9]* events' "$TMP/$name.import" | head -1 | grep -o '[0-9]*')
  echo "${name}_events: $events"
  echo "${name}_import_s: $secs"
}

echo "== 44k-event ledger, keyword lane only"
ledger kw44k 30 1220 "$TMP/empty-data"
export HOME="$TMP/kw44k" PEAT_DB="$TMP/kw44k/db" PEAT_DATA_DIR="$TMP/empty-data"
time_runs keyword_recall_44k 30 "$PEAT" recall rate limiter middleware
time_runs brief_44k 30 "$PEAT"
# Every event as NDJSON (the DESIGN budget is in events a second: the events over the median).
n=$("$PEAT" events --json | wc -l)
time_runs events_json_44k 10 "$PEAT" events --json | tee "$TMP/events_json"
awk -v n="$n" '/_median_ms/ { printf "events_json_44k_events_per_s: %d\n", n / ($2 / 1000) }' "$TMP/events_json"

# asof at the day by which about 14,000 events had happened.
day=$("$PEAT" events --json | python3 -c '
import sys, json, datetime
ts = sorted(json.loads(l)["ts_ms"] for l in sys.stdin)
print(datetime.datetime.fromtimestamp(ts[min(13999, len(ts) - 1)] / 1000, datetime.timezone.utc).strftime("%Y-%m-%d"))')
echo "asof_day: $day ($("$PEAT" asof "$day" --json | python3 -c 'import sys,json; print(json.load(sys.stdin)["events"], "events")'))"
time_runs asof_replay 10 "$PEAT" asof "$day"

# peak_rss NAME CMD...: run CMD, print NAME_s (wall) and NAME_peak_rss_mb.
peak_rss() {
  local name=$1
  shift
  /usr/bin/time -f '%e %M' -o "$TMP/$name.time" "$@" 2>"$TMP/$name.err" >/dev/null
  read -r wall kb <"$TMP/$name.time"
  echo "${name}_s: $wall"
  echo "${name}_peak_rss_mb: $((kb / 1024))"
}

if [ -f "$model_dir/models/all-MiniLM-L6-v2-int8/model.onnx" ]; then
  echo "== 44k-event ledger, both lanes (the pinned model)"
  "$SYNTH" --out "$TMP/hy44k" --sessions 30 --events-per-session 1220 --days 120 --seed 7 2>/dev/null
  export HOME="$TMP/hy44k" PEAT_DB="$TMP/hy44k/db" PEAT_DATA_DIR="$model_dir"
  # The import records and indexes at once and leaves the vectors to the embedding pass.
  # Holding the pass's lock keeps the import's own background pass from starting, so the
  # pass can be timed (and its memory measured) in the foreground.
  mkdir -p "$PEAT_DB" && : >"$PEAT_DB/embed.lock"
  peak_rss hy44k_import_keyword_ready flock "$PEAT_DB/embed.lock" "$PEAT" import
  echo "hy44k_queued: $("$PEAT" model status --json | python3 -c 'import sys,json; print(json.load(sys.stdin)["backlog"]["queued"])')"
  peak_rss hy44k_embedding_pass "$PEAT" model embed
  echo "(capture to fully embedded: hy44k_import_keyword_ready_s plus hy44k_embedding_pass_s)"
  time_runs hybrid_recall_44k 30 "$PEAT" recall why did the rate limiter reject requests
  time_runs hybrid_recall_kind_filtered_44k 30 "$PEAT" recall --kind final rate limiter
  echo "== one-shot model load, piece by piece"
  "$PEAT" model bench 2>&1 | sed 's/^/  /' || true
else
  echo "hybrid: skipped (no model under $model_dir; run peat model fetch)"
fi

if [ "${BENCH_1M:-}" = 1 ]; then
  echo "== 1,000,000-event ledger, keyword lane only"
  ledger kw1m 560 1460 "$TMP/empty-data"
  export HOME="$TMP/kw1m" PEAT_DB="$TMP/kw1m/db" PEAT_DATA_DIR="$TMP/empty-data"
  time_runs keyword_recall_1m 20 "$PEAT" recall rate limiter middleware
  time_runs brief_1m 20 "$PEAT"
  echo "store_size_1m: $(du -sh "$TMP/kw1m/db" | cut -f1)"
fi
