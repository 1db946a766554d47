#!/usr/bin/env bash
# The cost of the one resolution of commits to sessions (reads::commits::made_by), beside the
# git listing it runs: a repository of BENCH_COMMITS commits (default 500) made over one day,
# a session that ran in its workspace until noon (the commits before, tied by the workspace
# route) and one from another checkout whose lines BENCH_CONTENT of the commits (default 50)
# carry (the content route, for which git is asked for lines). Prints `name_median_ms:` and
# `name_p90_ms:` lines, debug or release as the binary is.
#
#   bench/commits.sh                      # builds the release peat
#   PEAT=target/debug/peat bench/commits.sh   # times a peat already built
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

COMMITS=${BENCH_COMMITS:-500}
CONTENT=${BENCH_CONTENT:-50}
RUNS=${BENCH_RUNS:-15}
if [[ -z ${PEAT:-} ]]; then build_release; fi
PEAT=$(realpath "$PEAT")
bench_tmp commits
export HOME=$TMP/home PEAT_DB=$TMP/store TZ=UTC NO_COLOR=1 PEAT_NOW=2026-07-15T12:00:00Z
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
mkdir -p "$HOME" "$TMP/work"
cd "$TMP/work"
git init -q -b main
ROOT=$(pwd -P)

log "making $COMMITS commits"
python3 - "$COMMITS" "$CONTENT" <<'PY'
import subprocess, sys
commits, content = int(sys.argv[1]), int(sys.argv[2])
for i in range(commits):
    when = "2026-07-14T%02d:%02d:%02dZ" % (8 + i * 10 // 600, (i * 10 // 10) % 60, i % 60)
    name = "limiter.rs" if i % (commits // max(content, 1)) == 0 else "f%d.txt" % (i % 20)
    with open(name, "a") as f:
        f.write("pub fn step_%d(rate: u32) -> u32 { rate * %d }\n" % (i, i))
    env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run(["git", "add", "-A"], check=True)
    subprocess.run(["git", "commit", "-q", "-m", "step %d" % i], check=True,
                   env={**__import__("os").environ, **env})
PY

log "capturing two sessions"
python3 - "$ROOT" "$COMMITS" "$TMP" <<'PY'
import json, sys
root, commits, tmp = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def line(session, cwd, n, ts, ty, body):
    v = {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": cwd,
         "sessionId": session, "version": "2.1.190", "type": ty,
         "uuid": "00000000-0000-4000-8000-%012d" % n, "timestamp": ts}
    v.update(body)
    return json.dumps(v)
def prompt(session, cwd, n, ts, text):
    return line(session, cwd, n, ts, "user", {"message": {"role": "user", "content": text}})
def write(session, cwd, n, ts, path, content):
    tid = "toolu_%d" % n
    return [line(session, cwd, n, ts, "assistant", {"message": {"id": "m%d" % n, "role": "assistant",
                "type": "message", "content": [{"type": "tool_use", "id": tid, "name": "Write",
                "input": {"file_path": path, "content": content}}]}}),
            line(session, cwd, n + 1, ts, "user", {"message": {"role": "user", "content": [
                {"tool_use_id": tid, "type": "tool_result", "content": "ok"}]}})]
here = "3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b"
a = [prompt(here, root, 1, "2026-07-14T07:59:00.000Z", "work through the day")]
a += write(here, root, 2, "2026-07-14T09:00:00.000Z", root + "/notes.md", "notes of the day\n")
a.append(prompt(here, root, 4, "2026-07-14T12:00:00.000Z", "done"))
away = "7a1b2c3d-0000-4b7e-9f0a-000000000002"
lines = "".join("pub fn step_%d(rate: u32) -> u32 { rate * %d }\n" % (i, i) for i in range(commits))
b = [prompt(away, "/elsewhere/work", 1, "2026-07-14T07:00:00.000Z", "write the limiter")]
b += write(away, "/elsewhere/work", 2, "2026-07-14T07:01:00.000Z", "/elsewhere/work/limiter.rs", lines)
for name, rows in (("a.jsonl", a), ("b.jsonl", b)):
    with open("%s/%s" % (tmp, name), "w") as f:
        f.write("\n".join(rows) + "\n")
PY
"$PEAT" capture "$TMP/a.jsonl" "$TMP/b.jsonl" >&2

out commits "$COMMITS"
out content_commits "$(git log --format=%H -- limiter.rs | wc -l)"
out tied_to_the_workspace_session "$("$PEAT" show 3f6c2a9e --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["made_commits"]))')"
out tied_to_the_session_elsewhere "$("$PEAT" show 7a1b2c3d --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["made_commits"]))')"
since=$(date -d 2026-07-14T06:00:00Z +%s)
time_runs git_log_name_only "$RUNS" git log --name-only "--since=@$since" --format=%H%x1f%ct%x1f%B%x1f
time_runs show_session_here "$RUNS" "$PEAT" show 3f6c2a9e
time_runs show_session_elsewhere "$RUNS" "$PEAT" show 7a1b2c3d
time_runs sessions_json "$RUNS" "$PEAT" sessions --json
time_runs zoom_day "$RUNS" "$PEAT" zoom 2026-07-14
time_runs brief "$RUNS" "$PEAT"
time_runs commit "$RUNS" "$PEAT" "$(git rev-parse HEAD)"
