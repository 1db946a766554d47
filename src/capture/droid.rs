//! Factory's droid sessions (`~/.factory/sessions/<encoded path>/<uuid>.jsonl`, beside a
//! `<uuid>.settings.json` that holds the model and token counts and nothing this record
//! keeps: the model there is the session's latest, rewritten when the person switches, so
//! it cannot say which model made an earlier edit, and no line names one; edits record
//! none). Factory publishes no source for droid; the shapes followed are its tool inputs as
//! Factory protocol 1.205 declares them (droid 0.2xx, 2026) and the session lines the public
//! readers of these files agree on:
//!
//! - `{"type":"session_start","id","title","sessionTitle","owner","version","cwd"}` first;
//! - `{"type":"message","id","timestamp","parentId"?,"message":{"role","content":[…]}}` with
//!   Claude-API-style blocks: `text`, `thinking`, `tool_use {id, name, input}`, and
//!   `tool_result {tool_use_id, content, is_error}` in user messages;
//! - `{"type":"compaction_state","summary":{"title","body"}}` where the context was compacted;
//!   `todo_state` lines record nothing here.
//!
//! The tools that write: `Create {file_path, content}`, `Edit {file_path, old_str, new_str,
//! change_all?}`, `ApplyPatch {file_path, patch}` (taken only when the patch is in the
//! apply_patch grammar); `Execute {command}` runs a shell. The session is `session_start`'s
//! `id` (the file's name until it is read); no line names a branch or a version of droid
//! (`session_start.version` is the file's format): none is recorded.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::absolute;
use super::chat::{Call, Chat, ChatFormat, Line, other_detail, search_detail, text_of};

use super::{Emit, FileHints, patch, str_at};
use crate::vocab::change::{Change, Replacement};
use crate::vocab::event::{Agent, Event, SessionId, TouchOp};
use crate::vocab::time::parse_iso_ms;

/// The droid parser and what it must remember between captures.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Droid {
    session: Option<SessionId>,
    cwd: Option<String>,
    /// The previous line's time, for a line without one.
    ts: i64,
    chat: Chat,
}

impl Droid {
    pub(crate) fn new(hints: &FileHints) -> Droid {
        Droid {
            session: (!hints.stem.is_empty()).then(|| SessionId(hints.stem.clone())),
            ..Droid::default()
        }
    }

    fn start(&mut self, v: &Value, cx: &Line, out: &mut Emit) {
        if let Some(id) = str_at(v, "id").filter(|id| !id.is_empty()) {
            self.session = Some(SessionId(id.to_string()));
        }
        let cwd = str_at(v, "cwd").unwrap_or("").to_string();
        self.cwd = (!cwd.is_empty()).then(|| cwd.clone());
        let meta = Event::SessionMeta {
            cwd,
            branch: None,
            agent: Some(Agent::Droid),
            version: None,
            parent: None,
            subagent: None,
        };
        out.event(cx.slots.meta(), cx.ts, meta);
    }

    fn message(&mut self, m: &Value, cx: &mut Line, out: &mut Emit) {
        let blocks = m.get("content");
        let role = str_at(m, "role");
        // A message whose content is a plain string: the same as one text block.
        if let Some(Value::String(text)) = blocks {
            match role {
                Some("user") => self.chat.prompt(text, false, None, cx, out),
                Some("assistant") => self.chat.said(text, true, cx, out),
                _ => {}
            }
            return;
        }
        for block in blocks.and_then(Value::as_array).into_iter().flatten() {
            match (role, str_at(block, "type")) {
                (Some("user"), Some("text")) => {
                    let text = str_at(block, "text").unwrap_or("");
                    self.chat.prompt(text, false, None, cx, out);
                }
                (Some("user"), Some("tool_result")) => {
                    let Some(id) = str_at(block, "tool_use_id") else {
                        continue;
                    };
                    let failed = block.get("is_error").and_then(Value::as_bool) == Some(true);
                    let printed = text_of(block.get("content"));
                    self.chat.result(id, failed, &printed, cx, out);
                }
                (Some("assistant"), Some("text")) => {
                    let text = str_at(block, "text").unwrap_or("");
                    self.chat.said(text, true, cx, out);
                }
                (Some("assistant"), Some("tool_use")) => {
                    let call = self.call(block);
                    self.chat.call(call, cx, out);
                }
                _ => {}
            }
        }
    }

    /// A `tool_use` block as a call, in droid's tool names.
    fn call(&self, block: &Value) -> Call {
        let name = str_at(block, "name").unwrap_or("unknown");
        let input = block.get("input").unwrap_or(&Value::Null);
        let field = |key: &str| str_at(input, key).unwrap_or("").to_string();
        let base = self.cwd.as_deref();
        let path = str_at(input, "file_path").map(|p| absolute(p, base));
        let mut edits = Vec::new();
        let detail = match name {
            "Execute" => field("command"),
            "Create" => {
                if let Some(path) = &path {
                    let change = Change::write(field("content"));
                    edits.push((path.clone(), TouchOp::Write, change));
                }
                path.clone().unwrap_or_default()
            }
            "Edit" => {
                if let Some(path) = &path {
                    let change = Change::Edit(Replacement {
                        old: field("old_str"),
                        new: field("new_str"),
                        replace_all: input.get("change_all").and_then(Value::as_bool) == Some(true),
                    });
                    edits.push((path.clone(), TouchOp::Edit, change));
                }
                path.clone().unwrap_or_default()
            }
            "ApplyPatch" => {
                edits.extend(
                    super::patch::parse_patch(&field("patch"))
                        .into_iter()
                        .map(|op| patch::touch(op, base)),
                );
                path.clone().unwrap_or_default()
            }
            "Grep" => search_detail(&field("pattern"), str_at(input, "path")),
            "Task" => field("description"),
            _ => other_detail(path.as_deref(), input),
        };
        Call {
            id: str_at(block, "id").map(str::to_string),
            tool: name.to_string(),
            detail,
            edits,
            command: (name == "Execute").then(|| field("command")),
            echoes: matches!(name, "Read" | "Create" | "Edit" | "ApplyPatch"),
            model: None,
        }
    }
}

impl ChatFormat for Droid {
    fn read(&mut self, line: u64, v: &Value, out: &mut Emit) {
        let ts = str_at(v, "timestamp")
            .and_then(parse_iso_ms)
            .unwrap_or(self.ts);
        self.ts = ts;
        self.chat.saw(ts);
        let mut cx = Line::new(line, ts);
        match str_at(v, "type") {
            Some("session_start") => self.start(v, &cx, out),
            Some("message") => {
                if let Some(m) = v.get("message") {
                    self.message(m, &mut cx, out);
                }
            }
            Some("compaction_state") => {
                let body = v.get("summary").and_then(|s| str_at(s, "body"));
                self.chat.compaction(body, &mut cx, out);
            }
            _ => {}
        }
    }

    fn chat(&self) -> &Chat {
        &self.chat
    }

    fn session_id(&self) -> Option<SessionId> {
        self.session.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::parse_str;
    use crate::capture::sample::{assert_opens, events, finals, touches};

    const SESSION: &str = include_str!("../../tests/fixtures/droid/session.jsonl");
    const ID: &str = "4c3b2a19-8f7e-4d6c-9b5a-3e2d1c0b9a8f";

    fn parse(text: &str) -> Vec<Event> {
        let hints = FileHints {
            stem: ID.into(),
            ..FileHints::default()
        };
        events(text, &hints, ID)
    }

    #[test]
    fn the_start_gives_the_folder_and_names_droid() {
        let events = parse(SESSION);
        assert_opens(&events, "/work/app", Agent::Droid);
    }

    #[test]
    fn create_edit_and_a_patch_become_touches_and_a_failed_edit_is_marked() {
        let events = parse(SESSION);
        let touches = touches(&events);
        assert_eq!(
            touches,
            [
                ("/work/app/src/greet.py", TouchOp::Write, false),
                ("/work/app/src/greet.py", TouchOp::Edit, false),
                ("/work/app/src/other.py", TouchOp::Edit, true),
                ("/work/app/README.md", TouchOp::PatchAdd, false),
            ]
        );
    }

    #[test]
    fn a_compaction_keeps_its_summary_and_the_commit_is_read_from_execute() {
        let events = parse(SESSION);
        assert!(events.iter().any(|e| matches!(e, Event::Compaction {})));
        assert!(events.iter().any(|e| matches!(
            e,
            Event::CompactSummary { text } if text.contains("greeting module")
        )));
        assert!(events.iter().any(|e| matches!(
            e,
            Event::Committed { hash, .. } if hash == "7d8e9f0"
        )));
        let finals = finals(&events);
        assert_eq!(finals, ["greet() says hello; README added.", "Committed."]);
    }

    #[test]
    fn a_patch_outside_the_apply_patch_grammar_touches_nothing() {
        let line = r#"{"type":"message","id":"m","message":{"role":"assistant","content":[{"type":"tool_use","id":"p","name":"ApplyPatch","input":{"file_path":"/w/a.py","patch":"@@ -1 +1 @@\n-a\n+b\n"}}]}}"#;
        let text = format!(
            "{}\n{line}\n",
            r#"{"type":"session_start","id":"s","cwd":"/w"}"#
        );
        let events = parse_str(&text, &FileHints::default()).unwrap().1;
        assert!(
            !events
                .events
                .values()
                .any(|(_, e)| matches!(e, Event::FileTouch { .. }))
        );
    }
}
