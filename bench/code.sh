#!/usr/bin/env bash
# From code to conversation: blame, peat COMMIT, peat log and the file lookup on a generated
# 44k-event ledger, plus a 1,000-line file that three sessions edited 200 times, committed in
# a git repository. One-shot processes; prints `name: value` lines. Everything lives in a
# temporary folder; HOME and the store point there.
#
#   bench/code.sh                 # the 44k-event ledger
#   BENCH_1M=1 bench/code.sh      # also the file lookup on a 1,000,000-event ledger (minutes)
set -euo pipefail
cd "$(dirname "$0")/.."

. bench/lib.sh
build_release
bench_tmp code
mkdir -p "$TMP/empty-data"

# blame_fixture DIR: a git repository in DIR/repo whose src/engine.rs (1,000 lines) three
# sessions wrote and edited 200 times; the transcripts go to DIR/blame-*.jsonl.
blame_fixture() {
  local dir=$1
  mkdir -p "$dir/repo/src"
  python3 - "$dir" <<'PY'
import json, random, sys, os
out = sys.argv[1]
repo = os.path.join(out, "repo")
path = os.path.join(repo, "src", "engine.rs")
rng = random.Random(7)
sessions = ["b1a00000-0000-4000-8000-00000000000%d" % i for i in range(3)]
lines = ["fn step_%d(x: u64) -> u64 { x * %d + 1 }" % (n, n) for n in range(1000)]
token = [0]
def fresh(n):
    token[0] += 1
    return "fn step_%d(x: u64) -> u64 { x.rotate_left(%d) ^ %d }" % (n, token[0] % 63, token[0])
files = {s: [] for s in sessions}
def line(s, n, minute, ty, body):
    v = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": repo,
         "sessionId": s, "version": "2.1.190", "type": ty,
         "uuid": "00000000-0000-4000-8000-%012d" % (len(files[s]) + 1),
         "timestamp": "2026-08-01T%02d:%02d:%02d.000Z" % (9 + minute // 3600, (minute // 60) % 60, minute % 60)}
    v.update(body)
    files[s].append(json.dumps(v))
def tool(s, t, name, inp):
    tid = "toolu_%d" % len(files[s])
    line(s, 0, t, "assistant", {"message": {"id": "m%d" % t, "role": "assistant", "type": "message",
        "content": [{"type": "tool_use", "id": tid, "name": name, "input": inp}]}})
    line(s, 0, t, "user", {"message": {"role": "user", "content": [{"tool_use_id": tid, "type": "tool_result", "content": "ok"}]}})
t = 0
s0 = sessions[0]
line(s0, 0, t, "user", {"message": {"role": "user", "content": "write the engine"}})
tool(s0, t + 1, "Write", {"file_path": path, "content": "\n".join(lines) + "\n"})
for k in range(199):
    s = sessions[k % 3]
    t += 10
    if k % 20 == 0:
        line(s, 0, t, "user", {"message": {"role": "user", "content": "tune the engine, round %d" % k}})
    n = rng.randrange(1000)
    old = lines[n]
    new = fresh(n)
    lines[n] = new
    tool(s, t + 1, "Edit", {"file_path": path, "old_string": old, "new_string": new, "replace_all": False})
for i, s in enumerate(sessions):
    with open(os.path.join(out, "blame-%d.jsonl" % i), "w") as f:
        f.write("\n".join(files[s]) + "\n")
with open(path, "w") as f:
    f.write("\n".join(lines) + "\n")
PY
  git -C "$dir/repo" init -q -b main
  git -C "$dir/repo" -c user.name=b -c user.email=b@example.com add .
  git -C "$dir/repo" -c user.name=b -c user.email=b@example.com commit -q -m "the engine"
}

echo "== 44k-event ledger and a 1,000-line file with 200 recorded edits"
home="$TMP/h44k"
"$SYNTH" --out "$home" --sessions 30 --events-per-session 1220 --days 120 --seed 7 2>/dev/null
export HOME="$home" PEAT_DB="$home/db" PEAT_DATA_DIR="$TMP/empty-data"
"$PEAT" import 2>/dev/null
blame_fixture "$TMP/code"
"$PEAT" capture "$TMP"/code/blame-*.jsonl 2>/dev/null
echo "events: $("$PEAT" events --json | wc -l)"
# The views' tables (sessions, texts, steps, each event's envelope...) beside the ledger's own
# database, and the keyword index.
echo "ledger_disk_kb: $(du -sk "$PEAT_DB/fjall" | cut -f1)"
echo "views_tables_disk_kb: $(du -sk "$PEAT_DB/views" | cut -f1)"
echo "keyword_disk_kb: $(du -skc "$PEAT_DB"/keyword.v* | tail -1 | cut -f1)"
cd "$TMP/code/repo"
echo "blamed_lines_attributed: $("$PEAT" blame src/engine.rs --json | python3 -c '
import sys, json; d = json.load(sys.stdin); print(sum(1 for l in d["lines"] if l["edit"] is not None), "of", len(d["lines"]))')"
# A read that opens the views and nothing else: the floor the figures below stand on, and a
# gauge of how loaded the machine was while they were taken.
time_runs baseline_sessions 20 "$PEAT" sessions
time_runs blame_1000_lines_200_edits 20 "$PEAT" blame src/engine.rs
time_runs blame_one_line 20 "$PEAT" src/engine.rs:500
time_runs commit_by_content 20 "$PEAT" "$(git rev-parse --short=10 HEAD)"
time_runs file_lookup_44k 20 "$PEAT" file src/engine.rs
# The log of the session with the most events.
session=$("$PEAT" sessions --json | python3 -c '
import sys, json
rows = json.load(sys.stdin)
print(max(rows, key=lambda r: r["events"])["session"][:8])')
echo "log_session_events: $("$PEAT" sessions --json | python3 -c '
import sys, json; print(max(r["events"] for r in json.load(sys.stdin)))')"
time_runs log_44k 20 "$PEAT" log "$session"
cd - >/dev/null

if [ "${BENCH_1M:-}" = 1 ]; then
  echo "== 1,000,000-event ledger: the file lookup"
  home="$TMP/h1m"
  "$SYNTH" --out "$home" --sessions 560 --events-per-session 1460 --days 120 --seed 7 2>/dev/null
  export HOME="$home" PEAT_DB="$home/db"
  "$PEAT" import 2>/dev/null
  blame_fixture "$TMP/code1m"
  "$PEAT" capture "$TMP"/code1m/blame-*.jsonl 2>/dev/null
  cd "$TMP/code1m/repo"
  time_runs file_lookup_1m 20 "$PEAT" file src/engine.rs
  time_runs blame_1m 10 "$PEAT" blame src/engine.rs
  cd - >/dev/null
fi
