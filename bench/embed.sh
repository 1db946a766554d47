#!/usr/bin/env bash
# The embedding pass and the vector lane on the 44k-event ledger: texts the pass embeds per
# second from an empty cache, how many it embeds again after a rebuild (none: the cache
# answers), and what a hybrid recall spends loading the lane, from its mapped file and from
# the rows (the file moved aside, as a search read the lane before the file existed), cold
# (the search loads the model) and warm (a resident embedder answers).
#
#   bench/embed.sh                # 20 recalls of each
#   RUNS=40 bench/embed.sh
#
# The ledger (generated and imported, never embedded) is kept under target/bench-embed
# (EMBED_DIR); each run embeds a fresh copy of it. Prints `name: value` lines with the
# machine's load beside them (the machine is shared). Needs the pinned model
# (`peat model fetch`; PEAT_DATA_DIR or ~/.local/share/peat).
set -euo pipefail
cd "$(dirname "$0")/.."

. bench/lib.sh
build_release
runs=${RUNS:-20}
model_dir="${PEAT_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/peat}"
if [ ! -f "$model_dir/models/all-MiniLM-L6-v2-int8/model.onnx" ]; then
  log "no model under $model_dir; run \`peat model fetch\` first"
  exit 2
fi
root="${EMBED_DIR:-$PWD/target/bench-embed}"
export HOME="$root/home" PEAT_DATA_DIR="$model_dir"
export CLAUDE_CONFIG_DIR="$HOME/.claude" CODEX_HOME="$HOME/.codex"
export XDG_RUNTIME_DIR="$root/run"
if [ ! -f "$root/imported" ]; then
  log "generating and importing the 44k-event ledger under $root (once)"
  rm -rf "$root" && mkdir -p "$root/run"
  "$SYNTH" --out "$HOME" --sessions 30 --events-per-session 1220 --days 120 --seed 7 2>/dev/null
  # No pass starts after the import: the pass is what is timed.
  mkdir -p "$root/db.imported" && : >"$root/db.imported/embed.lock"
  PEAT_DB="$root/db.imported" flock "$root/db.imported/embed.lock" "$PEAT" import >&2
  : >"$root/imported"
fi
export PEAT_DB="$root/db"
rm -rf "$PEAT_DB" && cp -a "$root/db.imported" "$PEAT_DB"
out load_before "$(cut -d' ' -f1-3 /proc/loadavg)"

# embedded N: the count `peat model embed` reports on stderr ("embedded N texts in S s").
embedded() { sed -n 's/^peat: embedded \([0-9,]*\) texts\{0,1\} in .*/\1/p' | tr -d ,; }
start=$(date +%s%N)
n=$("$PEAT" model embed 2>&1 | embedded)
secs=$(secs_since "$start")
out embed_texts "${n:-0}"
out embed_secs "$secs"
out embed_texts_per_s "$(awk -v n="${n:-0}" -v s="$secs" 'BEGIN { printf "%.1f", n / s }')"
"$PEAT" rebuild >/dev/null 2>&1
again=$("$PEAT" model embed 2>&1 | embedded)
out embed_after_rebuild_texts "${again:-0}"

# recall_phases PREFIX ENV...: medians of RUNS hybrid recalls' wall time and lane load.
q=(why did the rate limiter reject requests)
recall_phases() {
  local prefix=$1
  shift
  env "$@" python3 - "$runs" "$PEAT" "$prefix" "${q[@]}" <<'PY'
import json, statistics, subprocess, sys, time
runs, peat, prefix, words = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
subprocess.run([peat, "recall", *words], capture_output=True)
wall, load = [], []
for _ in range(runs):
    t = time.perf_counter()
    r = subprocess.run([peat, "recall", "--json", *words], capture_output=True, check=True)
    wall.append((time.perf_counter() - t) * 1000)
    load.append(json.loads(r.stdout)["timings"]["vector_load_ms"])
print(f"{prefix}recall_44k_wall_median_ms: {statistics.median(wall):.1f}")
print(f"{prefix}vector_load_44k_median_ms: {statistics.median(load):.2f}")
PY
}

file=$(ls "$PEAT_DB"/vectors.v* | head -1)
trap '"$PEAT" model stop 2>/dev/null || true' EXIT
for mode in file rows; do
  [ "$mode" = rows ] && mv "$file" "$root/vectors.aside"
  recall_phases "${mode}_cold_" PEAT_EMBED_IDLE_SECS=0
  # The warm runs' resident embedder: started by a search, answering once it runs.
  PEAT_EMBED_IDLE_SECS=900 "$PEAT" recall "${q[@]}" >/dev/null 2>&1 || true
  for _ in $(seq 100); do
    PEAT_EMBED_IDLE_SECS=900 "$PEAT" model status --json 2>/dev/null | grep -q '"state":"running"' && break
    sleep 0.1
  done
  recall_phases "${mode}_warm_" PEAT_EMBED_IDLE_SECS=900
  [ "$mode" = rows ] && mv "$root/vectors.aside" "$file"
done
out vector_file_mb "$(du -m "$file" | cut -f1)"
out load_after "$(cut -d' ' -f1-3 /proc/loadavg)"
