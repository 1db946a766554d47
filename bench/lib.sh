# Shared by the bench scripts: `. bench/lib.sh` after `cd` to the repository root.

# Searches load the model themselves (the cold path): a resident embedder started by one
# would answer the runs after it, and outlive the bench. bench/hybrid.sh times it apart.
export PEAT_EMBED_IDLE_SECS=0

# time_runs NAME RUNS CMD... : median and p90 wall time of RUNS fresh processes, in ms, as
# `NAME_median_ms:` and `NAME_p90_ms:` lines. One untimed run first warms the page cache
# and must answer (exit 0, or 1 for "nothing found"): a failing command has no figure.
time_runs() {
  local name=$1 runs=$2
  shift 2
  python3 - "$name" "$runs" "$@" <<'PY'
import subprocess, sys, time, statistics
name, runs, cmd = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
if r.returncode not in (0, 1):
    sys.exit(f"{name}: {cmd} failed: {r.stderr.decode()}")
ts = []
for _ in range(runs):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ts.append((time.perf_counter() - t) * 1000)
ts.sort()
print(f"{name}_median_ms: {statistics.median(ts):.1f}")
print(f"{name}_p90_ms: {ts[int(len(ts) * 0.9) - 1]:.1f}")
PY
}

log() { printf 'bench: %s\n' "$*" >&2; }
out() { printf '%s: %s\n' "$1" "$2"; }

# build_release: build the release peat and examples/synth (output on stderr), and set PEAT
# and SYNTH to them, wherever cargo puts its target folder (CARGO_TARGET_DIR, a config).
build_release() {
  log "building (cargo build --release --example synth; cargo build --release)"
  cargo build --release --example synth >&2
  cargo build --release >&2
  local target
  target=$(cargo metadata --format-version 1 --no-deps 2>/dev/null |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
  target=${target:-$PWD/target}
  PEAT=$target/release/peat
  SYNTH=$target/release/examples/synth
  [[ -x $PEAT && -x $SYNTH ]] || { log "missing $PEAT or $SYNTH after the build"; exit 1; }
}

# bench_tmp NAME: set TMP to a new temporary folder, removed on exit (kept, and named on
# stderr, with BENCH_KEEP=1).
bench_tmp() {
  TMP=$(mktemp -d "${TMPDIR:-/tmp}/peat-bench-$1.XXXXXX")
  if [[ ${BENCH_KEEP:-0} == 1 ]]; then
    trap 'log "kept $TMP"' EXIT
  else
    trap 'rm -rf "$TMP"' EXIT
  fi
}

# secs_since START: wall seconds (three decimals) since START, a `date +%s%N` reading.
secs_since() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }

# ms_of CMD...: the milliseconds one run of CMD takes, its output discarded and its exit
# status ignored (a hook exits 0 anyway); stdin from the file STDIN_FILE names, if set.
ms_of() {
  local s
  s=$(date +%s%N)
  if [[ -n ${STDIN_FILE:-} ]]; then "$@" <"$STDIN_FILE" >/dev/null 2>&1 || true
  else "$@" </dev/null >/dev/null 2>&1 || true; fi
  echo $((($(date +%s%N) - s) / 1000000))
}

# median: the median of the numbers on stdin, one a line.
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# percentiles: `p50 N ms, p99 N ms, max N ms (n=N)` of the millisecond figures on stdin;
# `no runs (n=0)` when there are none, never a made-up 0 ms.
percentiles() {
  sort -n | awk '{ a[NR] = $1 } END {
    if (NR == 0) { print "no runs (n=0)"; exit }
    i = int(NR * 0.99 + 0.999); if (i > NR) i = NR
    printf "p50 %d ms, p99 %d ms, max %d ms (n=%d)\n", a[int((NR + 1) / 2)], a[i], a[NR], NR }'
}

# alive PID: whether process PID still runs (a finished child is a zombie until reaped).
alive() { [[ -e /proc/$1/stat ]] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }
