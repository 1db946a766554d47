//! Which harness wrote a transcript, decided by a positive signature in its first lines
//! (or, for a JSON document, in the document; for a database, in its tables, see
//! `opencode::recognises`). A file that matches none is rejected, never guessed at.

use serde_json::Value;

/// How many parsed lines from the top of a file are looked at. Legacy Claude Code files can
/// open with a run of `summary` lines that carry no session id.
pub(crate) const HEAD_LINES: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    ClaudeCode,
    Codex,
    Gemini,
    OpenCode,
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
    let claude = head.iter().any(|v| is_claude_line(v));
    claude.then_some(Format::ClaudeCode)
}

/// The format of a JSON document rewritten whole, from the document: a Gemini CLI
/// `ConversationRecord` (its metadata and a `messages` array).
pub(crate) fn detect_document(doc: &Value) -> Option<Format> {
    let gemini =
        super::gemini::is_metadata(doc) && doc.get("messages").is_some_and(Value::is_array);
    gemini.then_some(Format::Gemini)
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
            detect_document(&json!({"sessionId":"s","projectHash":"h","messages":[]})),
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
            detect_document(&json!({"sessionId":"s","theme":"dark"})),
            None
        );
        assert_eq!(detect_document(&json!([1, 2])), None);
    }
}
