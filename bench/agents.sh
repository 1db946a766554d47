#!/usr/bin/env bash
# Capture speed per adapter: a Claude Code transcript from examples/synth.rs, and Gemini CLI
# (JSONL and the older JSON document), OpenCode, Goose and Crush (SQLite), Cline and Amp
# (JSON documents) and Aider (Markdown) sessions of about the same size, generated here turn
# by turn in the shapes of their fixtures under tests/fixtures; and Cursor, Copilot CLI, Pi,
# Qwen Code and droid (JSONL) sessions grown from their fixtures: the body's lines again and
# again, every id in a copy made its own, where each harness keeps its sessions; Claude Code's
# fixture grown the same way (`claude_grown`) is their yardstick, events as small as theirs.
# Times a cold `peat capture` of each into a fresh ledger and a second capture (nothing new),
# and prints `name: value` lines on stdout (MB of source per second, events per second); build
# output and progress go to stderr. No figure is asserted. See bench/README.md.
#
# Knobs (environment): BENCH_AGENT_MB (20), BENCH_SEED (1), BENCH_KEEP=1 keeps the temp dir,
# PEAT and SYNTH (built binaries of peat and examples/synth to time instead of building them).
set -euo pipefail

MB=${BENCH_AGENT_MB:-20}
SEED=${BENCH_SEED:-1}

cd "$(dirname "${BASH_SOURCE[0]}")/.."
. bench/lib.sh
if [[ -z ${PEAT:-} || -z ${SYNTH:-} ]]; then
  build_release
fi
bench_tmp agents
mkdir -p "$TMP/home"

log "generating a ${MB} MB Claude transcript"
"$SYNTH" --single "$TMP/claude.jsonl" --bytes "${MB}MB" --seed "$SEED" 2>/dev/null

log "generating Gemini CLI, OpenCode, Goose and Crush sessions of ${MB} MB each"
python3 - "$TMP" "$MB" "$SEED" <<'PY'
import json, random, sqlite3, sys
tmp, mb, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
target = mb * 1024 * 1024
words = "the bucket refill rate limiter token request server handler test build cargo error fix".split()
def text(n):
    return " ".join(rng.choice(words) for _ in range(n))
def code(lines):
    return "".join(f"fn f{i}() {{ {text(6)} }}\n" for i in range(lines))
def ts(i):
    return f"2026-07-14T{9 + i // 3600 % 12:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000Z"

# Gemini CLI: one turn is a prompt, an answer appended again as its calls finish, a closing text.
def gemini_turn(turn):
    prompt = {"id": f"u{turn}", "timestamp": ts(turn * 4), "type": "user", "content": [{"text": text(30)}]}
    path = f"/bench/src/f{turn % 50}.rs"
    write = {"id": f"w{turn}", "name": "write_file", "args": {"file_path": path, "content": code(rng.randint(20, 80))}, "status": "success", "timestamp": ts(turn * 4 + 1),
             "result": [{"functionResponse": {"id": f"w{turn}", "name": "write_file", "response": {"output": f"Successfully wrote to {path}."}}}]}
    shell = {"id": f"s{turn}", "name": "run_shell_command", "args": {"command": "cargo test"}, "status": "success", "timestamp": ts(turn * 4 + 2),
             "result": [{"functionResponse": {"id": f"s{turn}", "name": "run_shell_command", "response": {"output": "Output: " + text(rng.randint(100, 400))}}}]}
    answer = {"id": f"a{turn}", "timestamp": ts(turn * 4 + 1), "type": "gemini", "content": text(60), "thoughts": [], "tokens": None, "model": "gemini-3-pro"}
    closing = {"id": f"c{turn}", "timestamp": ts(turn * 4 + 3), "type": "gemini", "content": text(80), "thoughts": [], "tokens": None, "model": "gemini-3-pro"}
    return [prompt, answer, dict(answer, toolCalls=[write]), dict(answer, toolCalls=[write, shell]), closing]
meta = {"sessionId": "bench-gemini", "projectHash": "h" * 64, "startTime": ts(0), "lastUpdated": ts(0), "kind": "main"}
size, turn = 0, 0
with open(f"{tmp}/gemini.jsonl", "w") as f:
    f.write(json.dumps(meta, separators=(",", ":")) + "\n")
    while size < target:
        turn += 1
        for m in gemini_turn(turn):
            line = json.dumps(m, separators=(",", ":")) + "\n"
            size += len(line)
            f.write(line)
# The document holds each message once, as its last copy; indented, as Gemini CLI wrote it.
doc, size, turn = dict(meta, messages=[]), 0, 0
while size < target:
    turn += 1
    prompt, _, _, answer, closing = gemini_turn(turn)
    doc["messages"] += [prompt, answer, closing]
    size += sum(len(json.dumps(m, indent=2)) + 8 for m in (prompt, answer, closing))
with open(f"{tmp}/session-bench.json", "w") as f:
    json.dump(doc, f, indent=2)

# OpenCode: the tables of tests/fixtures/opencode/opencode.sql, one session.
db = sqlite3.connect(f"{tmp}/opencode.db")
db.execute("PRAGMA journal_mode=WAL")
schema = open("tests/fixtures/opencode/opencode.sql").read().split("INSERT", 1)[0]
db.executescript(schema)
db.execute("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES ('ses_bench', 'p', 's', '/bench', 't', '1.18.34', 1, 1)")
size, turn, t = 0, 0, 1_784_019_600_000
def row(table, values):
    global size
    size += sum(len(str(v)) for v in values)
    db.execute(f"INSERT INTO {table} VALUES ({','.join('?' * len(values))})", values)
while size < target:
    turn += 1
    t += 4000
    u, a, c = f"msg_{turn:08d}u", f"msg_{turn:08d}a", f"msg_{turn:08d}c"
    row("message", (u, "ses_bench", t, t, json.dumps({"role": "user", "time": {"created": t}})))
    row("part", (f"prt_{turn:08d}0", u, "ses_bench", t, t, json.dumps({"type": "text", "text": text(30)})))
    asst = {"role": "assistant", "time": {"created": t + 1}, "modelID": "m", "providerID": "p", "path": {"cwd": "/bench", "root": "/bench"}, "finish": "tool-calls"}
    row("message", (a, "ses_bench", t + 1, t + 3, json.dumps(asst)))
    row("part", (f"prt_{turn:08d}1", a, "ses_bench", t + 1, t + 1, json.dumps({"type": "text", "text": text(60)})))
    path = f"/bench/src/f{turn % 50}.rs"
    row("part", (f"prt_{turn:08d}2", a, "ses_bench", t + 1, t + 2, json.dumps({"type": "tool", "tool": "write", "callID": "w", "state": {"status": "completed", "input": {"filePath": path, "content": code(rng.randint(20, 80))}, "output": "Wrote file successfully.", "title": path, "metadata": {}, "time": {"start": t + 1, "end": t + 2}}})))
    row("part", (f"prt_{turn:08d}3", a, "ses_bench", t + 2, t + 3, json.dumps({"type": "tool", "tool": "bash", "callID": "b", "state": {"status": "completed", "input": {"command": "cargo test"}, "output": text(rng.randint(100, 400)), "title": "cargo test", "metadata": {}, "time": {"start": t + 2, "end": t + 3}}})))
    row("message", (c, "ses_bench", t + 3, t + 3, json.dumps(dict(asst, finish="stop"))))
    row("part", (f"prt_{turn:08d}4", c, "ses_bench", t + 3, t + 3, json.dumps({"type": "text", "text": text(80)})))
db.commit()
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
db.close()

# A database with the tables of tests/fixtures/<agent>/schema.sql, filled by `fill`.
def database(path, agent, fill):
    global db, size
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(open(f"tests/fixtures/{agent}/schema.sql").read())
    size = 0
    fill()
    db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
def insert(sql, values):
    global size
    size += sum(len(str(v)) for v in values)
    db.execute(sql, values)

# Goose: a row a message, a tool's response in the user message after its request.
def goose():
    db.execute("INSERT INTO sessions (id, name, working_dir, created_at) VALUES ('20260714_1', 'bench', '/bench', '2026-07-14 09:00:00')")
    sql = "INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES ('20260714_1', ?, ?, ?, '{\"userVisible\":true,\"agentVisible\":true}')"
    def request(id, name, args):
        return {"type": "toolRequest", "id": id, "toolCall": {"status": "success", "value": {"name": name, "arguments": args}}}
    def response(id, out):
        return {"type": "toolResponse", "id": id, "toolResult": {"status": "success", "value": {"content": [{"type": "text", "text": out}], "isError": False}}}
    turn, t = 0, 1_784_019_600
    while size < target:
        turn += 1
        t += 4
        path = f"/bench/src/f{turn % 50}.rs"
        for role, content in [
            ("user", [{"type": "text", "text": text(30)}]),
            ("assistant", [{"type": "text", "text": text(60)}, request(f"w{turn}", "developer__write", {"path": path, "content": code(rng.randint(20, 80))})]),
            ("user", [response(f"w{turn}", f"Wrote {path}")]),
            ("assistant", [request(f"s{turn}", "developer__shell", {"command": "cargo test"})]),
            ("user", [response(f"s{turn}", text(rng.randint(100, 400)))]),
            ("assistant", [{"type": "text", "text": text(80)}]),
        ]:
            insert(sql, (role, json.dumps(content), t))
database(f"{tmp}/sessions.db", "goose", goose)

# Crush: parts of {type, data}, the calls' results in a tool message after them.
def crush():
    db.execute("INSERT INTO sessions (id, title, created_at, updated_at) VALUES ('s-bench', 'bench', 1784019600, 1784019600)")
    sql = "INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES (?, 's-bench', ?, ?, ?, ?)"
    def part(kind, **data):
        return {"type": kind, "data": data}
    turn, t = 0, 1_784_019_600
    while size < target:
        turn += 1
        t += 4
        path = f"src/f{turn % 50}.rs"
        for i, (role, parts) in enumerate([
            ("user", [part("text", text=text(30))]),
            ("assistant", [part("text", text=text(60)),
                           part("tool_call", id=f"w{turn}", name="write", input=json.dumps({"file_path": path, "content": code(rng.randint(20, 80))}), finished=True),
                           part("tool_call", id=f"s{turn}", name="bash", input=json.dumps({"command": "cargo test"}), finished=True),
                           part("finish", reason="tool_use", time=t)]),
            ("tool", [part("tool_result", tool_call_id=f"w{turn}", name="write", content="File successfully written", is_error=False),
                      part("tool_result", tool_call_id=f"s{turn}", name="bash", content=text(rng.randint(100, 400)), is_error=False)]),
            ("assistant", [part("text", text=text(80)), part("finish", reason="end_turn", time=t)]),
        ]):
            insert(sql, (f"m{turn}-{i}", role, json.dumps(parts), t, t))
import os
os.makedirs(f"{tmp}/crush/.crush")
database(f"{tmp}/crush/.crush/crush.db", "crush", crush)

# Cline and Amp: one task (thread) of Anthropic-style messages, each turn a prompt, a write
# and a command with their results, and a closing text; written whole, as they write them.
def anthropic_turns(result, wrap):
    messages, size, turn = [], 0, 0
    while size < target:
        turn += 1
        path = f"/bench/src/f{turn % 50}.rs"
        batch = [
            {"role": "user", "content": [{"type": "text", "text": wrap(text(30))}]},
            {"role": "assistant", "content": [{"type": "text", "text": text(60)},
                {"type": "tool_use", "id": f"w{turn}", "name": "WRITE", "input": {"path": path, "content": code(rng.randint(20, 80))}}]},
            {"role": "user", "content": [result(f"w{turn}", "Wrote it.")]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": f"s{turn}", "name": "SHELL", "input": {"command": "cargo test", "cmd": "cargo test"}}]},
            {"role": "user", "content": [result(f"s{turn}", text(rng.randint(100, 400)))]},
            {"role": "assistant", "content": [{"type": "text", "text": text(80)}]},
        ]
        size += sum(len(json.dumps(m)) for m in batch)
        messages += batch
    return messages
cline = anthropic_turns(lambda id, out: {"type": "tool_result", "tool_use_id": id, "content": f"[tool] Result:\n{out}"},
                        lambda said: f"<feedback>\n{said}\n</feedback>")
cline[0]["content"][0]["text"] = "<task>\nbench\n</task>"
cline = json.loads(json.dumps(cline).replace('"WRITE"', '"write_to_file"').replace('"SHELL"', '"execute_command"'))
os.makedirs(f"{tmp}/tasks/1784019600000", exist_ok=True)
with open(f"{tmp}/tasks/1784019600000/api_conversation_history.json", "w") as f:
    json.dump(cline, f, separators=(",", ":"))
amp = anthropic_turns(lambda id, out: {"type": "tool_result", "toolUseID": id, "run": {"status": "done", "result": {"output": out, "exitCode": 0}}},
                      lambda said: said)
amp = json.loads(json.dumps(amp).replace('"WRITE"', '"create_file"').replace('"SHELL"', '"Bash"'))
thread = {"v": 1, "id": "T-bench", "created": 1784019600000, "env": {"initial": {"trees": [{"uri": "file:///bench"}]}}, "messages": amp}
with open(f"{tmp}/T-bench.json", "w") as f:
    json.dump(thread, f, indent=2)

# Aider: one run's section, each turn a prompt, a reply with a SEARCH/REPLACE edit, Aider's lines.
size, turn = 0, 0
with open(f"{tmp}/.aider.chat.history.md", "w") as f:
    f.write("\n# aider chat started at 2026-07-14 09:00:00\n\n> Aider v0.86.1  \n")
    while size < target:
        turn += 1
        path = f"src/f{turn % 50}.rs"
        chunk = (f"\n#### {text(30)}  \n\n{text(60)}\n\n{path}\n```rust\n<<<<<<< SEARCH\n{code(3)}=======\n"
                 f"{code(rng.randint(20, 80))}>>>>>>> REPLACE\n```\n\n{text(80)}\n\n"
                 f"> Tokens: 2.4k sent, 96 received.  \n> Applied edit to {path}  \n> Commit {turn:07x} feat: {text(5)}  \n")
        size += len(chunk)
        f.write(chunk)
PY

mb_of() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", b / 1048576 }'; }

# capture NAME FILE: a cold capture into a fresh ledger, then a second one (nothing new).
capture() {
  local name=$1 file=$2 db=$TMP/db-$1 t0 wall ev
  local -a envv=(env -u CODEX_HOME -u CLAUDE_CONFIG_DIR -u GEMINI_CLI_HOME -u XDG_DATA_HOME
    HOME="$TMP/home" PEAT_DB="$db" NO_COLOR=1 TERM=dumb)
  t0=$(date +%s%N)
  (cd "$TMP" && "${envv[@]}" "$PEAT" capture "$file") 2>"$TMP/$name.err" >/dev/null ||
    { log "$name failed"; cat "$TMP/$name.err" >&2; exit 1; }
  wall=$(secs_since "$t0")
  ev=$(grep -oE 'captured [0-9]+ events' "$TMP/$name.err" | grep -oE '[0-9]+' || echo 0)
  out "${name}_mb" "$(mb_of "$file")"
  out "${name}_events" "$ev"
  out "${name}_wall_s" "$wall"
  out "${name}_mb_per_s" "$(awk -v m="$(mb_of "$file")" -v s="$wall" 'BEGIN { printf "%.1f", m / s }')"
  out "${name}_events_per_s" "$(awk -v n="$ev" -v s="$wall" 'BEGIN { printf "%.0f", n / s }')"
  t0=$(date +%s%N)
  (cd "$TMP" && "${envv[@]}" "$PEAT" capture "$file") 2>/dev/null >/dev/null
  out "${name}_again_wall_s" "$(secs_since "$t0")"
}

capture claude "$TMP/claude.jsonl"
capture gemini_jsonl "$TMP/gemini.jsonl"
capture gemini_document "$TMP/session-bench.json"
capture opencode "$TMP/opencode.db"
capture goose "$TMP/sessions.db"
capture crush "$TMP/crush/.crush/crush.db"
capture cline "$TMP/tasks/1784019600000/api_conversation_history.json"
capture amp "$TMP/T-bench.json"
capture aider "$TMP/.aider.chat.history.md"

log "growing the Claude Code, Cursor, Copilot CLI, Pi, Qwen Code and droid fixtures to ${MB} MB each"
python3 - "$TMP" "$MB" <<'PY'
import json, os, sys
tmp, mb = sys.argv[1], int(sys.argv[2])
target = mb * 1024 * 1024
# Each fixture's place below a home, as tests/cli/agents_jsonl.rs lays them, and how many
# of its first lines are its head (kept once).
places = {
    "claude": (".claude/projects/-bench/4a7f1c2e-6b3d-4e8f-9a0b-1c2d3e4f5a6b.jsonl", 0),
    "cursor": (".cursor/projects/bench/agent-transcripts/5d2c1f0e-7a44-4d0b-9d8e-2c6b1a3f9e10.jsonl", 0),
    "copilot": (".copilot/session-state/3b9d2e71-6c4a-4f0e-a8d5-9e1f2a3b4c5d/events.jsonl", 1),
    "pi": (".pi/agent/sessions/--bench--/2026-07-14T09-00-00-000Z_7c1e4b2a-9f3d-4e6a-8b5c-1d2e3f4a5b6c.jsonl", 1),
    "qwen": (".qwen/projects/bench/chats/9a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d.jsonl", 0),
    "droid": (".factory/sessions/bench/4c3b2a19-8f7e-4d6c-9b5a-3e2d1c0b9a8f.jsonl", 1),
}
fixture = {"copilot": "events.jsonl", "claude": "full-session.jsonl"}
# A copy's ids are its own (a message's, a call's, a parent's), so nothing reads as a
# revision of an earlier copy; the session's id stays the session's.
def own(v, k):
    if isinstance(v, dict):
        return {key: (f"{x}-{k}" if isinstance(x, str) and key.lower().endswith(("id", "uuid"))
                      and key not in ("sessionId", "session_id") else own(x, k))
                for key, x in v.items()}
    if isinstance(v, list):
        return [own(x, k) for x in v]
    return v
for agent, (place, head) in places.items():
    src = f"tests/fixtures/{agent}/{fixture.get(agent, 'session.jsonl')}"
    lines = [l for l in open(src).read().splitlines() if l.strip()]
    path = f"{tmp}/home/{place}"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    size, k = 0, 0
    with open(path, "w") as f:
        for l in lines[:head]:
            f.write(l + "\n")
        while size < target:
            k += 1
            for l in lines[head:]:
                out = json.dumps(own(json.loads(l), k), separators=(",", ":")) + "\n"
                size += len(out)
                f.write(out)
PY
capture claude_grown "$TMP/home/.claude/projects/-bench/4a7f1c2e-6b3d-4e8f-9a0b-1c2d3e4f5a6b.jsonl"
capture cursor "$TMP/home/.cursor/projects/bench/agent-transcripts/5d2c1f0e-7a44-4d0b-9d8e-2c6b1a3f9e10.jsonl"
capture copilot "$TMP/home/.copilot/session-state/3b9d2e71-6c4a-4f0e-a8d5-9e1f2a3b4c5d/events.jsonl"
capture pi "$TMP/home/.pi/agent/sessions/--bench--/2026-07-14T09-00-00-000Z_7c1e4b2a-9f3d-4e6a-8b5c-1d2e3f4a5b6c.jsonl"
capture qwen "$TMP/home/.qwen/projects/bench/chats/9a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d.jsonl"
capture droid "$TMP/home/.factory/sessions/bench/4c3b2a19-8f7e-4d6c-9b5a-3e2d1c0b9a8f.jsonl"
