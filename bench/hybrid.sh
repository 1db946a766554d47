#!/usr/bin/env bash
# One-shot hybrid recall on the 44k-event ledger, model load included, with where the time
# goes inside the process. Narrower than bench/search.sh: the ledger (generated, imported,
# embedded) is kept under target/bench-hybrid (HYBRID_DIR) so a second run only times.
#
#   bench/hybrid.sh                       # 30 runs of each
#   RUNS=60 bench/hybrid.sh
#   PEAT_BASE=/path/to/old/peat bench/hybrid.sh   # also that build, runs interleaved
#
# Prints `name: value` lines: the machine's load beside the figures (the machine is shared),
# wall medians of fresh processes (hybrid, keyword-only, the brief as the process floor),
# then per build (`base_` for PEAT_BASE) the wall and CPU time (user + system, which load
# inflates less) of a hybrid recall --json, and the medians of the phases it reports. Every
# search loads the model itself (PEAT_EMBED_IDLE_SECS=0) except the `warm_` runs, answered
# by a resident embedder (`peat model serve`, socket under HYBRID_DIR/run) started before
# them and stopped after, whose resident memory is printed too. Needs the pinned model
# (`peat model fetch`; PEAT_DATA_DIR or ~/.local/share/peat).
set -euo pipefail
cd "$(dirname "$0")/.."

. bench/lib.sh
build_release
runs=${RUNS:-30}
model_dir="${PEAT_DATA_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/peat}"
if [ ! -f "$model_dir/models/all-MiniLM-L6-v2-int8/model.onnx" ]; then
  log "no model under $model_dir; run \`peat model fetch\` first"
  exit 2
fi
root="${HYBRID_DIR:-$PWD/target/bench-hybrid}"
export HOME="$root/home" PEAT_DB="$root/db" PEAT_DATA_DIR="$model_dir"
export CLAUDE_CONFIG_DIR="$HOME/.claude" CODEX_HOME="$HOME/.codex"
export XDG_RUNTIME_DIR="$root/run"
if [ ! -f "$root/ready" ]; then
  log "generating and embedding the 44k-event ledger under $root (once)"
  rm -rf "$root" && mkdir -p "$root"
  "$SYNTH" --out "$HOME" --sessions 30 --events-per-session 1220 --days 120 --seed 7 2>/dev/null
  mkdir -p "$PEAT_DB" && : >"$PEAT_DB/embed.lock"
  flock "$PEAT_DB/embed.lock" "$PEAT" import >&2
  "$PEAT" model embed >&2
  : >"$root/ready"
fi
out load_before "$(cut -d' ' -f1-3 /proc/loadavg)"
q=(why did the rate limiter reject requests)
time_runs hybrid_recall_44k "$runs" "$PEAT" recall "${q[@]}"
time_runs keyword_recall_44k "$runs" "$PEAT" recall --keyword-only "${q[@]}"
time_runs brief_44k "$runs" "$PEAT"
# The warm runs' resident embedder: started now (a search starts it), stopped on exit.
trap '"$PEAT" model stop 2>/dev/null || true' EXIT
PEAT_EMBED_IDLE_SECS=900 "$PEAT" recall "${q[@]}" >/dev/null
for _ in $(seq 100); do
  PEAT_EMBED_IDLE_SECS=900 "$PEAT" model status --json 2>/dev/null | grep -q '"state":"running"' && break
  sleep 0.1
done
# Interleaved with PEAT_BASE's runs when given, so all see the same load.
python3 - "$runs" "$PEAT" "${PEAT_BASE:-}" "${q[@]}" <<'PY'
import json, os, resource, statistics, subprocess, sys, time
runs, peat, base, words = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
cold = dict(os.environ, PEAT_EMBED_IDLE_SECS="0")
warm = dict(os.environ, PEAT_EMBED_IDLE_SECS="900")
builds = {"": (peat, cold), "warm_": (peat, warm)}
if base:
    builds["base_"] = (base, cold)
wall, cpu, phases = {}, {}, {}
for _ in range(runs):
    for name, (exe, env) in builds.items():
        before, t = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        r = subprocess.run([exe, "recall", "--json", *words], capture_output=True, env=env)
        wall.setdefault(name, []).append((time.perf_counter() - t) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.setdefault(name, []).append(
            (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
        answer = json.loads(r.stdout)
        if name == "warm_" and answer["semantic"].get("embedder") != "resident":
            sys.exit(f"a warm run was not answered by the resident embedder: {answer['semantic']}")
        for k, v in answer["timings"].items():
            phases.setdefault(name, {}).setdefault(k, []).append(v)
for name in builds:
    print(f"{name}hybrid_recall_44k_json_wall_median_ms: {statistics.median(wall[name]):.1f}")
    print(f"{name}hybrid_recall_44k_cpu_median_ms: {statistics.median(cpu[name]):.1f}")
    for k, v in phases[name].items():
        print(f"{name}phase_{k}_median: {statistics.median(v):.1f}")
PY
rss=$(PEAT_EMBED_IDLE_SECS=900 "$PEAT" model status --json 2>/dev/null |
  python3 -c 'import json, sys; print(round(json.load(sys.stdin)["resident"]["rss_bytes"] / 1e6, 1))')
out resident_embedder_rss_mb "$rss"
out load_after "$(cut -d' ' -f1-3 /proc/loadavg)"
echo "== one-shot model load, piece by piece (peat model bench)"
"$PEAT" model bench 2>&1 | sed 's/^/  /' || true
