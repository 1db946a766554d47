//! Which harness wrote a transcript, decided by a positive signature in its first lines
//! (or, for a JSON document, in the document; for a database, in its tables, see
//! `database::recognise`). A file that matches none is rejected, never guessed at. The
//! signatures exclude each other: every Claude Code line has a `type` and no `role` at the
//! top, Codex lines a `payload` or a `record_type`, Copilot CLI's a dotted `type` with a
//! `data` object, Pi's a `session` header first, Cursor's a `role` and no `type`, Gemini
//! CLI's a metadata line with a `projectHash` and no `type` first, and Qwen Code's, which
//! name a `sessionId` as Claude Code's do, a Gemini `Content` (`message.parts`) or a
//! `toolCallResult` or `systemPayload` no Claude Code line has; droid's open with a
//! `session_start` line.

use serde_json::Value;

/// How many parsed lines from the top of a file are looked at. Legacy Claude Code files can
/// open with a run of `summary` lines that carry no session id.
pub(crate) const HEAD_LINES: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    ClaudeCode,
    Codex,
    Cursor,
    Copilot,
    Pi,
    Qwen,
    Droid,
    Gemini,
    OpenCode,
    Goose,
    Crush,
    Cline,
    Aider,
    Amp,
}

/// Claude Code line types that no other format writes at the top level.
const CLAUDE_TYPES: &[&str] = &[
    "user",
    "assistant",
    "system",
    "attachment",
    "progress",
    "summary",
    "file-history-snapshot",
    "queue-operation",
    "last-prompt",
    "ai-title",
    "custom-title",
    "agent-name",
    "mode",
    "permission-mode",
];

/// Codex envelope kinds (`{"timestamp","type","payload"}`).
const CODEX_TYPES: &[&str] = &[
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
];

pub(crate) fn detect(head: &[&Value]) -> Option<Format> {
    let codex = head.iter().take(8).any(|v| is_codex_line(v));
    if codex {
        return Some(Format::Codex);
    }
    // Before Claude's: a Gemini CLI recording's metadata also carries a `sessionId`.
    if head.first().is_some_and(|v| super::gemini::is_metadata(v)) {
        return Some(Format::Gemini);
    }
    if head.first().is_some_and(|v| is_pi_header(v)) {
        return Some(Format::Pi);
    }
    if head.first().is_some_and(|v| is_droid_start(v)) {
        return Some(Format::Droid);
    }
    if head.iter().any(|v| is_qwen_line(v)) {
        return Some(Format::Qwen);
    }
    if head.iter().any(|v| is_claude_line(v)) {
        return Some(Format::ClaudeCode);
    }
    if head.iter().any(|v| is_copilot_line(v)) {
        return Some(Format::Copilot);
    }
    head.iter()
        .any(|v| is_cursor_line(v))
        .then_some(Format::Cursor)
}

/// Pi's first line: `{"type":"session","id","timestamp","cwd",…}` (pi-mono's
/// `SessionHeader`; no other format opens with a `session` line that names a cwd).
fn is_pi_header(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("session")
        && v.get("id").is_some_and(Value::is_string)
        && v.get("cwd").is_some_and(Value::is_string)
}

/// Factory droid's first line: `{"type":"session_start","id",…}`.
fn is_droid_start(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("session_start")
        && v.get("id").is_some_and(Value::is_string)
}

/// Qwen Code's `ChatRecord`: a `sessionId` with a Gemini `Content` (`message.parts`), a
/// `toolCallResult` or a `systemPayload`.
fn is_qwen_line(v: &Value) -> bool {
    v.get("sessionId").is_some_and(Value::is_string) && has_qwen_fields(v)
}

/// The fields only Qwen Code's records have.
fn has_qwen_fields(v: &Value) -> bool {
    v.get("message")
        .and_then(|m| m.get("parts"))
        .is_some_and(Value::is_array)
        || v.get("toolCallResult").is_some_and(Value::is_object)
        || v.get("systemPayload").is_some_and(Value::is_object)
}

/// Copilot CLI's event envelope: a dotted `type` (`session.start`, `user.message`, …)
/// beside a `data` object.
fn is_copilot_line(v: &Value) -> bool {
    let Some(ty) = v.get("type").and_then(Value::as_str) else {
        return false;
    };
    let (family, name) = ty.split_once('.').unwrap_or(("", ""));
    matches!(
        family,
        "session" | "user" | "assistant" | "tool" | "subagent" | "skill" | "hook"
    ) && !name.is_empty()
        && v.get("data").is_some_and(Value::is_object)
}

/// Cursor's lines: a `role` and a `message` with a `content` list, and no `type` (Claude
/// Code's lines always have one); or its `turn_ended` marker with a `status`.
fn is_cursor_line(v: &Value) -> bool {
    if v.get("type").and_then(Value::as_str) == Some("turn_ended") {
        return v.get("status").is_some() && v.get("message").is_none();
    }
    v.get("type").is_none()
        && matches!(
            v.get("role").and_then(Value::as_str),
            Some("user" | "assistant")
        )
        && v.get("message")
            .and_then(|m| m.get("content"))
            .is_some_and(Value::is_array)
}

/// The format of a JSON document rewritten whole, from the document and its file's `name`:
/// a Gemini CLI `ConversationRecord` (its metadata and a `messages` array), an Amp thread
/// (a `T-` id, its `created` time and `messages`), or a Cline task's
/// `api_conversation_history.json` (an array of Anthropic-format messages).
pub(crate) fn detect_document(name: &str, doc: &Value) -> Option<Format> {
    let gemini =
        super::gemini::is_metadata(doc) && doc.get("messages").is_some_and(Value::is_array);
    if gemini {
        return Some(Format::Gemini);
    }
    if super::amp::is_thread(doc) {
        return Some(Format::Amp);
    }
    super::cline::is_history(name, doc).then_some(Format::Cline)
}

fn is_codex_line(v: &Value) -> bool {
    let ty = v.get("type").and_then(Value::as_str);
    if ty == Some("session_meta") {
        return true;
    }
    // The envelope: a known kind with a payload object.
    if let Some(ty) = ty
        && CODEX_TYPES.contains(&ty)
        && v.get("payload").is_some_and(Value::is_object)
    {
        return true;
    }
    // Pre-envelope rollouts (mid-2025): a bare header with an id and instructions or git,
    // then `{"record_type":"state"}` markers.
    if v.get("record_type").is_some() {
        return true;
    }
    ty.is_none()
        && v.get("id").is_some_and(Value::is_string)
        && v.get("timestamp").is_some()
        && (v.get("instructions").is_some() || v.get("git").is_some())
}

fn is_claude_line(v: &Value) -> bool {
    if has_qwen_fields(v) {
        return false;
    }
    if v.get("sessionId").is_some_and(Value::is_string) {
        return true;
    }
    let Some(ty) = v.get("type").and_then(Value::as_str) else {
        return false;
    };
    match ty {
        "summary" => v.get("leafUuid").is_some(),
        "file-history-snapshot" => v.get("snapshot").is_some(),
        "user" | "assistant" => {
            v.get("message").is_some_and(Value::is_object) && v.get("payload").is_none()
        }
        _ => CLAUDE_TYPES.contains(&ty) && v.get("uuid").is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn of(lines: &[Value]) -> Option<Format> {
        detect(&lines.iter().collect::<Vec<_>>())
    }

    #[test]
    fn signatures_decide_the_format() {
        assert_eq!(
            of(&[json!({"type":"session_meta","payload":{"id":"x"}})]),
            Some(Format::Codex)
        );
        assert_eq!(
            of(&[json!({"id":"x","timestamp":"2025-07-20T13:20:47.060Z","instructions":null})]),
            Some(Format::Codex)
        );
        assert_eq!(
            of(&[
                json!({"type":"summary","summary":"t","leafUuid":"u"}),
                json!({"type":"user","sessionId":"s","message":{}})
            ]),
            Some(Format::ClaudeCode)
        );
        assert_eq!(
            of(&[json!({"type":"mode","mode":"normal","sessionId":"s"})]),
            Some(Format::ClaudeCode)
        );
        assert_eq!(
            of(&[
                json!({"sessionId":"s","projectHash":"h","startTime":"2026-08-01T10:00:00Z"}),
                json!({"id":"m","type":"user","timestamp":"2026-08-01T10:00:00Z","content":"hi"})
            ]),
            Some(Format::Gemini)
        );
        assert_eq!(
            detect_document(
                "s.json",
                &json!({"sessionId":"s","projectHash":"h","messages":[]})
            ),
            Some(Format::Gemini)
        );
    }

    #[test]
    fn an_unknown_format_is_rejected() {
        assert_eq!(
            of(&[
                json!({"kind":"mystery","data":1}),
                json!({"kind":"mystery"})
            ]),
            None
        );
        assert_eq!(of(&[]), None);
        assert_eq!(of(&[json!({"type":"user"})]), None);
        // A JSON document of another shape (a settings file) is not a transcript.
        assert_eq!(
            detect_document("settings.json", &json!({"sessionId":"s","theme":"dark"})),
            None
        );
        assert_eq!(detect_document("x.json", &json!([1, 2])), None);
        // Messages of Cline's shape in a file of another name are not a Cline task.
        let messages = json!([{"role": "user", "content": "hi"}]);
        assert_eq!(detect_document("chat.json", &messages), None);
        assert_eq!(
            detect_document(super::super::cline::HISTORY_FILE, &messages),
            Some(Format::Cline)
        );
    }

    /// Every line of every fixture of `dir` (below `tests/fixtures`, recursively).
    fn fixture_lines(dir: &str) -> Vec<(String, Vec<Value>)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        walkdir::WalkDir::new(root.join(dir))
            .into_iter()
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
            .map(|e| {
                let text = std::fs::read_to_string(e.path()).unwrap();
                let lines = text
                    .lines()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .collect();
                (e.path().display().to_string(), lines)
            })
            .collect()
    }

    #[test]
    fn each_fixture_is_recognised_as_the_format_it_was_written_in() {
        for (dir, want) in [
            ("claude", Format::ClaudeCode),
            ("codex", Format::Codex),
            ("cursor", Format::Cursor),
            ("copilot", Format::Copilot),
            ("pi", Format::Pi),
            ("qwen", Format::Qwen),
            ("droid", Format::Droid),
        ] {
            let files = fixture_lines(dir);
            assert!(!files.is_empty(), "no fixtures in {dir}");
            for (name, lines) in files {
                let head: Vec<&Value> = lines.iter().take(HEAD_LINES).collect();
                // Claude's garbage fixture is recognised by its valid lines, or by none.
                match detect(&head) {
                    Some(got) => assert_eq!(got, want, "{name}"),
                    None => assert!(lines.is_empty(), "{name} was not recognised"),
                }
            }
        }
    }

    #[test]
    fn no_line_of_another_format_matches_a_new_formats_signature() {
        type Signature = fn(&Value) -> bool;
        let signatures: [(&str, Signature); 5] = [
            ("cursor", is_cursor_line),
            ("copilot", is_copilot_line),
            ("pi", is_pi_header),
            ("qwen", is_qwen_line),
            ("droid", is_droid_start),
        ];
        for dir in [
            "claude", "codex", "cursor", "copilot", "pi", "qwen", "droid",
        ] {
            for (name, lines) in fixture_lines(dir) {
                for (own, signature) in signatures {
                    if own == dir {
                        continue;
                    }
                    let claimed = lines.iter().find(|v| signature(v));
                    assert!(
                        claimed.is_none(),
                        "{own} claims a line of {name}: {claimed:?}"
                    );
                }
            }
        }
        // And the older formats' signatures claim none of the new formats' lines.
        for dir in ["cursor", "copilot", "pi", "qwen", "droid"] {
            for (name, lines) in fixture_lines(dir) {
                let claimed = lines.iter().find(|v| is_claude_line(v) || is_codex_line(v));
                assert!(claimed.is_none(), "{name}: {claimed:?}");
            }
        }
    }

    #[test]
    fn near_misses_of_the_new_signatures_are_refused() {
        // A role without a message, a dotted type without data, a session line without a cwd.
        assert_eq!(of(&[json!({"role":"user","content":"hi"})]), None);
        assert_eq!(of(&[json!({"type":"user.message","content":"hi"})]), None);
        assert_eq!(of(&[json!({"type":"session","id":"x"})]), None);
        assert_eq!(of(&[json!({"type":"turn_ended"})]), None);
        assert_eq!(
            of(&[json!({"role":"assistant","message":{"content":[]}})]),
            Some(Format::Cursor)
        );
        assert_eq!(
            of(&[json!({"type":"session.start","data":{"sessionId":"x"}})]),
            Some(Format::Copilot)
        );
        assert_eq!(
            of(&[json!({"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/w"})]),
            Some(Format::Pi)
        );
        assert_eq!(
            of(&[json!({"type":"session_start","id":"x","cwd":"/w"})]),
            Some(Format::Droid)
        );
        // Qwen Code's record and Claude Code's line both name a session; the Content decides.
        assert_eq!(
            of(&[json!({"type":"user","sessionId":"s","message":{"role":"user","parts":[]}})]),
            Some(Format::Qwen)
        );
        assert_eq!(
            of(&[json!({"type":"user","sessionId":"s","message":{"role":"user","content":"hi"}})]),
            Some(Format::ClaudeCode)
        );
    }
}
