#!/usr/bin/env python3
"""Write the labelled sessions of topics.py as Claude Code transcripts under HOME, and the
query set as JSON lines. Output is a pure function of topics.py.

    gen.py HOME QUERIES.jsonl

Fails if a paraphrase shares a content word with its session (by a crude stem), so the
paraphrase set stays honest as topics are edited.
"""
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from topics import TOPICS, UNRELATED  # noqa: E402

STOP = set(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each even
    ever every few for from further get gets got had has have having he her here hers him his
    how i if in into is it its itself just let like make makes me more most much must my
    never no nor not now of off on once one only or other our ours out over own same she
    should so some still such than that the their them then there these they this those
    through to too under until up us very was we were what when where which while who whom
    why will with within without would you your yours""".split()
)


def stem(word):
    w = word.lower()
    for suf in ("ing", "ed", "es", "s", "ly", "er"):
        if len(w) > len(suf) + 3 and w.endswith(suf):
            w = w[: -len(suf)]
            break
    return w[:6]


def content_words(text):
    return {w for w in re.findall(r"[A-Za-z0-9]+", text.lower()) if w not in STOP and not w.isdigit()}


def texts_of(topic):
    return [topic["prompt"], *topic["said"], topic["final"]]


def check_paraphrases():
    bad = []
    for t in TOPICS:
        said = {stem(w) for x in texts_of(t) for w in content_words(x)}
        shared = sorted(w for w in content_words(t["para"]) if stem(w) in said)
        if shared:
            bad.append(f"{t['id']}: paraphrase {t['para']!r} shares {shared}")
    if bad:
        sys.exit("gen.py: paraphrases must share no content word with their session:\n  " + "\n  ".join(bad))


def session_id(n):
    return f"5e55{n:04x}-0000-4000-8000-{n:012x}"


def write_session(home, n, topic):
    sid = session_id(n)
    project = "acme-" + topic["id"].split("-")[0]
    cwd = f"/home/dev/{project}"
    day = 1 + n % 28
    lines = []
    step = [0]

    def envelope(ty, body):
        step[0] += 1
        s = step[0]
        v = {
            "parentUuid": None,
            "isSidechain": False,
            "userType": "external",
            "cwd": cwd,
            "sessionId": sid,
            "version": "2.1.190",
            "gitBranch": "main",
            "type": ty,
            "uuid": f"00000000-0000-4000-8000-{n:06d}{s:06d}",
            "timestamp": f"2026-06-{day:02d}T10:{s // 60:02d}:{s % 60:02d}.000Z",
        }
        v.update(body)
        lines.append(json.dumps(v))

    def assistant(block):
        message = {"model": "claude-sonnet-4-6", "id": f"msg_{n}_{step[0]}", "type": "message", "role": "assistant"}
        envelope("assistant", {"message": {**message, "content": [block]}})

    def said(text):
        assistant({"type": "text", "text": text})

    def tool(call_id, command, output):
        assistant({"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}})
        envelope(
            "user",
            {
                "message": {
                    "role": "user",
                    "content": [{"tool_use_id": call_id, "type": "tool_result", "content": output, "is_error": False}],
                },
                "toolUseResult": {"stdout": output, "stderr": "", "interrupted": False, "isImage": False},
            },
        )

    envelope("user", {"message": {"role": "user", "content": topic["prompt"]}})
    for i, text in enumerate(topic["said"]):
        said(text)
        tool(f"toolu_{n}_{i}", "git status --short", " M src/app.py\n")
    said(topic["final"])
    path = home / ".claude" / "projects" / f"-home-dev-{project}" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return sid


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    home, out = Path(sys.argv[1]), Path(sys.argv[2])
    check_paraphrases()
    queries = []
    for n, t in enumerate(TOPICS):
        sid = write_session(home, n, t)
        for kind in ("kw", "para", "mixed", "ident"):
            if kind in t:
                queries.append({"kind": kind, "query": t[kind], "session": sid, "topic": t["id"]})
    for q in UNRELATED:
        queries.append({"kind": "unrelated", "query": q, "session": None, "topic": None})
    out.write_text("".join(json.dumps(q) + "\n" for q in queries))
    print(f"{len(TOPICS)} sessions, {len(queries) - len(UNRELATED)} labelled queries, {len(UNRELATED)} unrelated", file=sys.stderr)


if __name__ == "__main__":
    main()
