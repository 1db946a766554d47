# Shared by the bench scripts: `. bench/lib.sh` after `cd` to the repository root.

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
