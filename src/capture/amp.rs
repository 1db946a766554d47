//! Amp's threads (Sourcegraph): `~/.local/share/amp/threads/T-<uuid>.json`
//! (`$XDG_DATA_HOME/amp/threads`; the VS Code extension's older
//! `globalStorage/sourcegraph.amp/threads3/`), one JSON document per thread rewritten whole
//! as it goes. Read as a document (see `source`): the thread without its `messages` at
//! position 0, message `i` at position `i + 1`.
//!
//! Amp publishes no source for its threads. The shape followed is the one the public
//! readers of these files agree on (the local-first CLI of 2025 to early 2026; later
//! versions keep threads on Amp's server and `amp threads export` prints the same shape):
//! `{v, id: "T-…", created (ms), title, env: {initial: {cwd?, trees: [{uri:
//! "file:///…"}], platform: {clientVersion}}}, messages}`, each message `{role:
//! user|assistant|info, messageId, content: [blocks], meta?: {sentAt}, state?, usage?:
//! {model, …}}` (an assistant message's `usage.model`, what its edits record) with
//! Anthropic-style blocks: `text`, `thinking`, `tool_use {id, name, input}`, and in
//! user messages `tool_result {toolUseID, run: {status: done|error|cancelled|
//! rejected-by-user, result, progress}}`; an `info` message's `summary` block (`{summary:
//! {type: "message", summary}}`) is what the thread was compacted to. The tools that write
//! are `edit_file {path, old_str, new_str, replace_all?}` and `create_file {path,
//! content}`; `Bash {cmd, cwd}` (later `shell_command {command, workdir}`) runs a shell.
//!
//! Not in the format: the branch (a tree's `repository.ref` is where the thread started,
//! not where it is).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::chat::{Call, Chat, ChatFormat, Line, text_of};
use super::{Emit, FileHints, absolute, model_name, str_at};
use crate::vocab::change::{Change, Replacement};
use crate::vocab::event::{Agent, Event, SessionId, TouchOp};

/// What a failed tool run's status says.
const FAILED: &[&str] = &["error", "cancelled", "rejected-by-user"];

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Amp {
    session: Option<SessionId>,
    cwd: Option<String>,
    /// The previous message's time (at first, the thread's creation).
    ts: i64,
    chat: Chat,
}

impl Amp {
    pub(crate) fn new(hints: &FileHints) -> Amp {
        Amp {
            session: hints
                .stem
                .strip_suffix(".json")
                .map(|id| SessionId(id.into())),
            ..Amp::default()
        }
    }

    /// The thread without its messages: who it is, where, by which client.
    fn thread(&mut self, v: &Value, cx: &Line, out: &mut Emit) {
        if let Some(id) = str_at(v, "id") {
            self.session = Some(SessionId(id.to_string()));
        }
        self.ts = v.get("created").and_then(Value::as_i64).unwrap_or(self.ts);
        self.chat.saw(self.ts);
        let initial = v.get("env").and_then(|e| e.get("initial"));
        let tree = initial
            .and_then(|i| i.get("trees"))
            .and_then(|t| t.get(0))
            .and_then(|t| str_at(t, "uri"))
            .and_then(file_path);
        self.cwd = initial
            .and_then(|i| str_at(i, "cwd"))
            .map(str::to_string)
            .or(tree);
        let version = initial
            .and_then(|i| i.get("platform"))
            .and_then(|p| str_at(p, "clientVersion"))
            .map(str::to_string);
        let meta = Event::SessionMeta {
            cwd: self.cwd.clone().unwrap_or_default(),
            branch: None,
            agent: Some(Agent::Amp),
            version,
            parent: None,
            subagent: None,
        };
        out.event(cx.slots.meta(), self.ts, meta);
    }

    fn message(&mut self, m: &Value, cx: &mut Line, out: &mut Emit) {
        let blocks = m.get("content").and_then(Value::as_array);
        for block in blocks.into_iter().flatten() {
            match (str_at(m, "role"), str_at(block, "type")) {
                (Some("user"), Some("text")) => {
                    let text = str_at(block, "text").unwrap_or("");
                    self.chat.prompt(text, false, None, cx, out);
                }
                (Some("user"), Some("tool_result")) => {
                    let Some(id) = str_at(block, "toolUseID") else {
                        continue;
                    };
                    let run = block.get("run").unwrap_or(&Value::Null);
                    let (printed, exited_badly) = run_output(run);
                    let failed =
                        exited_badly || FAILED.contains(&str_at(run, "status").unwrap_or(""));
                    self.chat.result(id, failed, &printed, cx, out);
                }
                (Some("assistant"), Some("text")) => {
                    let text = str_at(block, "text").unwrap_or("");
                    self.chat.said(text, true, cx, out);
                }
                (Some("assistant"), Some("tool_use")) => {
                    // The model that wrote the message, as its usage reports it.
                    let model = m
                        .get("usage")
                        .and_then(|u| model_name(None, str_at(u, "model")));
                    let call = self.call(block, model);
                    self.chat.call(call, cx, out);
                }
                (Some("info"), Some("summary")) => {
                    let summary = block.get("summary");
                    let text = summary
                        .filter(|s| str_at(s, "type") == Some("message"))
                        .and_then(|s| str_at(s, "summary"));
                    self.chat.compaction(text, cx, out);
                }
                _ => {}
            }
        }
    }

    /// A `tool_use` block of a message `model` wrote, as a call, in Amp's tool names.
    fn call(&self, block: &Value, model: Option<String>) -> Call {
        let name = str_at(block, "name").unwrap_or("unknown");
        let input = block.get("input").unwrap_or(&Value::Null);
        let field = |key: &str| str_at(input, key).unwrap_or("").to_string();
        let path = str_at(input, "path").map(|p| absolute(p, self.cwd.as_deref()));
        let mut edits = Vec::new();
        if let Some(path) = &path {
            match name {
                "create_file" => {
                    let change = Change::write(field("content"));
                    edits.push((path.clone(), TouchOp::Write, change));
                }
                "edit_file" => {
                    let change = Change::Edit(Replacement {
                        old: field("old_str"),
                        new: field("new_str"),
                        replace_all: input.get("replace_all").and_then(Value::as_bool)
                            == Some(true),
                    });
                    edits.push((path.clone(), TouchOp::Edit, change));
                }
                _ => {}
            }
        }
        let command = match name {
            "Bash" => Some(field("cmd")),
            "shell_command" => Some(field("command")),
            _ => None,
        };
        let detail = match name {
            "Grep" => format!(
                "{} in {}",
                field("pattern"),
                path.clone().unwrap_or_default()
            ),
            "glob" => field("filePattern"),
            "Task" => field("description"),
            _ => path.clone().or_else(|| command.clone()).unwrap_or_default(),
        };
        Call {
            id: str_at(block, "id").map(str::to_string),
            tool: name.to_string(),
            detail,
            edits,
            command,
            echoes: matches!(name, "Read" | "create_file" | "edit_file"),
            model,
        }
    }
}

impl ChatFormat for Amp {
    fn read(&mut self, position: u64, v: &Value, out: &mut Emit) {
        if position == 0 {
            let cx = Line::new(position, self.ts);
            return self.thread(v, &cx, out);
        }
        if let Some(sent) = v
            .get("meta")
            .and_then(|m| m.get("sentAt"))
            .and_then(Value::as_i64)
        {
            self.ts = sent;
        }
        self.chat.saw(self.ts);
        let mut cx = Line::new(position, self.ts);
        self.message(v, &mut cx, out);
    }

    fn chat(&self) -> &Chat {
        &self.chat
    }

    fn session_id(&self) -> Option<SessionId> {
        self.session.clone()
    }
}

/// Whether `doc` is an Amp thread: a `T-` id, its creation time and its messages.
pub(crate) fn is_thread(doc: &Value) -> bool {
    str_at(doc, "id").is_some_and(|id| id.starts_with("T-"))
        && doc.get("created").is_some_and(Value::is_i64)
        && doc.get("messages").is_some_and(Value::is_array)
}

/// What a tool run printed (its `result`: text, blocks, or a command's `{output,
/// exitCode}`), and whether a command exited with other than 0.
fn run_output(run: &Value) -> (String, bool) {
    match run.get("result") {
        Some(Value::Object(result)) => {
            let code = result.get("exitCode").and_then(Value::as_i64);
            let output = result.get("output").and_then(Value::as_str);
            match output {
                Some(text) => (text.to_string(), code.is_some_and(|c| c != 0)),
                None => (Value::Object(result.clone()).to_string(), false),
            }
        }
        Some(result @ (Value::String(_) | Value::Array(_))) => (text_of(Some(result)), false),
        _ => (str_at(run, "error").unwrap_or("").to_string(), false),
    }
}

/// The path of a `file://` URI, its `%XX` escapes decoded.
fn file_path(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::TranscriptParser;
    use serde_json::json;

    fn feed(records: &[Value]) -> Vec<Event> {
        let mut p = Amp::new(&FileHints::default());
        let mut out = Emit::default();
        for (i, v) in records.iter().enumerate() {
            p.line(i as u64, v, &mut out);
        }
        p.flush(&mut out);
        assert_eq!(p.session().unwrap().as_str(), "T-1");
        out.events.into_values().map(|(_, e)| e).collect()
    }

    fn head() -> Value {
        json!({"v": 3, "id": "T-1", "created": 1784019600000i64,
            "env": {"initial": {"trees": [{"uri": "file:///w/my%20app"}], "platform": {"clientVersion": "0.0.1752"}}}})
    }

    #[test]
    fn the_thread_names_its_folder_and_client_and_a_failed_command_is_marked() {
        let events = feed(&[
            head(),
            json!({"role": "user", "messageId": 0, "content": [{"type": "text", "text": "build it"}]}),
            json!({"role": "assistant", "messageId": 1, "content": [
                {"type": "tool_use", "id": "u1", "name": "Bash", "input": {"cmd": "cargo build"}}]}),
            json!({"role": "user", "messageId": 2, "content": [
                {"type": "tool_result", "toolUseID": "u1", "run": {"status": "done", "result": {"output": "error[E0425]", "exitCode": 101}}}]}),
        ]);
        assert!(matches!(
            &events[0],
            Event::SessionMeta { cwd, agent: Some(Agent::Amp), version: Some(v), .. }
                if cwd == "/w/my app" && v == "0.0.1752"
        ));
        assert!(
            matches!(&events[2], Event::ToolCall { ok: false, detail, .. } if detail == "cargo build")
        );
        assert!(
            matches!(&events[3], Event::ToolOutput { excerpt, .. } if excerpt == "error[E0425]")
        );
    }

    #[test]
    fn an_info_summary_is_a_compaction_and_an_edit_a_touch_by_its_messages_model() {
        let events = feed(&[
            head(),
            json!({"role": "assistant", "messageId": 0, "content": [
                {"type": "tool_use", "id": "u2", "name": "edit_file", "input": {"path": "/w/my app/a.rs", "old_str": "a", "new_str": "b"}}],
                "usage": {"model": "claude-sonnet-4-5", "inputTokens": 10}}),
            json!({"role": "info", "messageId": 1, "content": [
                {"type": "summary", "summary": {"type": "message", "summary": "We edited a.rs."}}]}),
        ]);
        assert!(events.iter().any(|e| matches!(
            e,
            Event::FileTouch {
                op: TouchOp::Edit,
                model: Some(m),
                ..
            } if m == "claude-sonnet-4-5"
        )));
        assert!(events.iter().any(|e| matches!(e, Event::Compaction {})));
        assert!(
            events
                .iter()
                .any(|e| matches!(e, Event::CompactSummary { text } if text == "We edited a.rs."))
        );
        assert!(is_thread(
            &json!({"id": "T-1", "created": 1, "messages": []})
        ));
        assert!(!is_thread(
            &json!({"id": "x", "created": 1, "messages": []})
        ));
    }
}
