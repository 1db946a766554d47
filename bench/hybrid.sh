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
# inflates less) of a hybrid recall --json, and the medians of the phases it reports. Needs the pinned model (`peat model
# fetch`; PEAT_DATA_DIR or ~/.local/share/peat).
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
# Interleaved with PEAT_BASE's runs when given, so both see the same load.
python3 - "$runs" "$PEAT" "${PEAT_BASE:-}" "${q[@]}" <<'PY'
import json, resource, statistics, subprocess, sys, time
runs, peat, base, words = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
builds = {"": peat, "base_": base} if base else {"": peat}
wall, cpu, phases = {}, {}, {}
for _ in range(runs):
    for name, exe in builds.items():
        before, t = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        r = subprocess.run([exe, "recall", "--json", *words], capture_output=True)
        wall.setdefault(name, []).append((time.perf_counter() - t) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.setdefault(name, []).append(
            (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
        for k, v in json.loads(r.stdout)["timings"].items():
            phases.setdefault(name, {}).setdefault(k, []).append(v)
for name in builds:
    print(f"{name}hybrid_recall_44k_json_wall_median_ms: {statistics.median(wall[name]):.1f}")
    print(f"{name}hybrid_recall_44k_cpu_median_ms: {statistics.median(cpu[name]):.1f}")
    for k, v in phases[name].items():
        print(f"{name}phase_{k}_median: {statistics.median(v):.1f}")
PY
out load_after "$(cut -d' ' -f1-3 /proc/loadavg)"
echo "== one-shot model load, piece by piece (peat model bench)"
"$PEAT" model bench 2>&1 | sed 's/^/  /' || true
