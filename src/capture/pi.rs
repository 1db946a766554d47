//! Pi's sessions (`~/.pi/agent/sessions/--<cwd>--/<time>_<uuid>.jsonl`, or below
//! `$PI_CODING_AGENT_DIR`), session format version 3 as pi-mono's coding agent 0.58 writes
//! it (`packages/coding-agent/src/core/session-manager.ts`, its messages in
//! `packages/ai/src/types.ts` and `core/messages.ts`, its tools in `core/tools/`).
//!
//! The first line is the header, `{"type":"session","version","id","timestamp","cwd"}`;
//! every later line is an entry with an `id`, a `parentId` and a `timestamp`:
//! - `message` entries hold a `message` by `role`: `user` (a string or text blocks),
//!   `assistant` (`text`, `thinking` and `toolCall {id, name, arguments}` blocks, and the
//!   `provider` and `model` that wrote them, recorded on their edits as `provider/model`),
//!   `toolResult` (`toolCallId`, `content`, `isError`), `bashExecution` (a command the person
//!   ran with `!`: `command`, `output`, `exitCode`), and `custom` (an extension's message to
//!   the model);
//! - `compaction` (its `summary`), `branch_summary` (the summary of a branch the person came
//!   back from, put before the model as the harness's words), `custom_message` (an
//!   extension's words to the model); `model_change`, `thinking_level_change`, `label`,
//!   `session_info` and `custom` entries record nothing here.
//!
//! Entries form a tree: going back to an earlier entry and going on from there starts a
//! branch, and the file holds every branch in the order it was written. Everything on every
//! branch happened (an edit on an abandoned branch was made to the file), so entries are
//! recorded in file order, and a prompt closes whatever turn was open before it. Pi's tools
//! take paths relative to the session's directory, made absolute here. No entry names a
//! branch or Pi's own version: none is recorded.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::absolute;
use super::chat::{Call, Chat, ChatFormat, Line, other_detail, search_detail, text_of};
use super::{Emit, FileHints, model_name, str_at};
use crate::vocab::change::{Change, Replacement};
use crate::vocab::event::{Agent, Event, SessionId, TouchOp};
use crate::vocab::time::parse_iso_ms;

/// The Pi parser and what it must remember between captures.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Pi {
    session: Option<SessionId>,
    cwd: Option<String>,
    /// The previous line's time, for an entry without one.
    ts: i64,
    chat: Chat,
}

impl Pi {
    pub(crate) fn new(hints: &FileHints) -> Pi {
        // `<time>_<uuid>`: the header names the same id; the name stands in until it is read.
        let id = hints.stem.rsplit_once('_').map(|(_, id)| id);
        Pi {
            session: id
                .filter(|id| !id.is_empty())
                .map(|id| SessionId(id.into())),
            ..Pi::default()
        }
    }

    fn header(&mut self, v: &Value, cx: &Line, out: &mut Emit) {
        if let Some(id) = str_at(v, "id").filter(|id| !id.is_empty()) {
            self.session = Some(SessionId(id.to_string()));
        }
        let cwd = str_at(v, "cwd").unwrap_or("").to_string();
        self.cwd = (!cwd.is_empty()).then(|| cwd.clone());
        let meta = Event::SessionMeta {
            cwd,
            branch: None,
            agent: Some(Agent::Pi),
            version: None,
            parent: None,
            subagent: None,
        };
        out.event(cx.slots.meta(), cx.ts, meta);
    }

    fn message(&mut self, entry: &Value, m: &Value, cx: &mut Line, out: &mut Emit) {
        let content = m.get("content");
        match str_at(m, "role") {
            Some("user") => self.chat.prompt(&text_of(content), false, None, cx, out),
            // An extension's message to the model: the harness's words.
            Some("custom") => self.chat.prompt(&text_of(content), true, None, cx, out),
            Some("assistant") => {
                let model = model_name(str_at(m, "provider"), str_at(m, "model"));
                for block in content.and_then(Value::as_array).into_iter().flatten() {
                    match str_at(block, "type") {
                        Some("text") => {
                            if let Some(text) = str_at(block, "text") {
                                self.chat.said(text, true, cx, out);
                            }
                        }
                        Some("toolCall") => {
                            let call = self.call(block, model.clone());
                            self.chat.call(call, cx, out);
                        }
                        _ => {}
                    }
                }
            }
            Some("toolResult") => {
                let Some(id) = str_at(m, "toolCallId") else {
                    return;
                };
                let failed = m.get("isError").and_then(Value::as_bool) == Some(true);
                self.chat.result(id, failed, &text_of(content), cx, out);
            }
            // A command the person ran with `!`: a call and its result on one line, under
            // the entry's own id.
            Some("bashExecution") => {
                let command = str_at(m, "command").unwrap_or("").to_string();
                let id = str_at(entry, "id").unwrap_or("bash").to_string();
                let call = Call {
                    id: Some(id.clone()),
                    tool: "bash".into(),
                    detail: command.clone(),
                    edits: Vec::new(),
                    command: Some(command),
                    echoes: false,
                    model: None,
                };
                self.chat.call(call, cx, out);
                let exit = m.get("exitCode").and_then(Value::as_i64);
                let cancelled = m.get("cancelled").and_then(Value::as_bool) == Some(true);
                let failed = cancelled || exit.is_some_and(|c| c != 0);
                let printed = str_at(m, "output").unwrap_or("");
                self.chat.result(&id, failed, printed, cx, out);
            }
            _ => {}
        }
    }

    /// A `toolCall` block of a message `model` wrote, as a call, in Pi's tool names
    /// (`core/tools/`).
    fn call(&self, block: &Value, model: Option<String>) -> Call {
        let name = str_at(block, "name").unwrap_or("unknown");
        let args = block.get("arguments").unwrap_or(&Value::Null);
        let field = |key: &str| str_at(args, key).unwrap_or("").to_string();
        let path = str_at(args, "path").map(|p| absolute(p, self.cwd.as_deref()));
        let mut edits = Vec::new();
        let detail = match name {
            "bash" => field("command"),
            "write" => {
                if let Some(path) = &path {
                    let change = Change::write(field("content"));
                    edits.push((path.clone(), TouchOp::Write, change));
                }
                path.clone().unwrap_or_default()
            }
            "edit" => {
                if let Some(path) = &path {
                    let change = Change::Edit(Replacement {
                        old: field("oldText"),
                        new: field("newText"),
                        replace_all: false,
                    });
                    edits.push((path.clone(), TouchOp::Edit, change));
                }
                path.clone().unwrap_or_default()
            }
            "grep" | "find" => search_detail(&field("pattern"), path.as_deref()),
            _ => other_detail(path.as_deref(), args),
        };
        Call {
            id: str_at(block, "id").map(str::to_string),
            tool: name.to_string(),
            detail,
            edits,
            command: (name == "bash").then(|| field("command")),
            echoes: matches!(name, "read" | "write" | "edit"),
            model,
        }
    }
}

impl ChatFormat for Pi {
    fn read(&mut self, line: u64, v: &Value, out: &mut Emit) {
        let ts = str_at(v, "timestamp")
            .and_then(parse_iso_ms)
            .or_else(|| {
                v.get("message")
                    .and_then(|m| m.get("timestamp"))
                    .and_then(Value::as_i64)
            })
            .unwrap_or(self.ts);
        self.ts = ts;
        self.chat.saw(ts);
        let mut cx = Line::new(line, ts);
        match str_at(v, "type") {
            Some("session") => self.header(v, &cx, out),
            Some("message") => {
                if let Some(m) = v.get("message") {
                    self.message(v, m, &mut cx, out);
                }
            }
            Some("compaction") => self.chat.compaction(str_at(v, "summary"), &mut cx, out),
            Some("branch_summary") => {
                let summary = str_at(v, "summary").unwrap_or("");
                self.chat.prompt(summary, true, None, &mut cx, out);
            }
            Some("custom_message") => {
                let text = text_of(v.get("content"));
                self.chat.prompt(&text, true, None, &mut cx, out);
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
    use crate::capture::sample::{assert_opens, events, finals, models, touches};

    const SESSION: &str = include_str!("../../tests/fixtures/pi/session.jsonl");
    const ID: &str = "7c1e4b2a-9f3d-4e6a-8b5c-1d2e3f4a5b6c";

    fn parse(text: &str) -> Vec<Event> {
        let hints = FileHints {
            stem: format!("2026-07-14T09-00-00-000Z_{ID}"),
            ..FileHints::default()
        };
        events(text, &hints, ID)
    }

    #[test]
    fn the_header_gives_the_session_its_folder_and_names_pi() {
        let events = parse(SESSION);
        assert_opens(&events, "/work/app", Agent::Pi);
    }

    #[test]
    fn relative_paths_are_made_absolute_against_the_sessions_folder() {
        let events = parse(SESSION);
        let touches = touches(&events);
        assert_eq!(
            touches,
            [
                ("/work/app/src/greet.py", TouchOp::Write, false),
                ("/work/app/src/greet.py", TouchOp::Edit, false),
                ("/work/app/src/other.py", TouchOp::Edit, true),
            ]
        );
    }

    #[test]
    fn an_edit_names_the_provider_and_model_of_the_message_that_called_it() {
        let events = parse(SESSION);
        assert_eq!(
            models(&events),
            [
                (
                    "/work/app/src/greet.py",
                    Some("anthropic/claude-sonnet-4-5")
                ),
                (
                    "/work/app/src/greet.py",
                    Some("anthropic/claude-sonnet-4-5")
                ),
                (
                    "/work/app/src/other.py",
                    Some("anthropic/claude-sonnet-4-5")
                ),
            ]
        );
        let unnamed = SESSION.replace(
            r#""provider":"anthropic","model":"claude-sonnet-4-5""#,
            r#""api":"x""#,
        );
        assert!(models(&parse(&unnamed)).iter().all(|(_, m)| m.is_none()));
    }

    #[test]
    fn a_bang_command_is_a_call_with_its_result_and_its_commit() {
        let events = parse(SESSION);
        assert!(events.iter().any(|e| matches!(
            e,
            Event::ToolCall { tool, detail, ok: true, .. } if tool == "bash" && detail.starts_with("git commit")
        )));
        assert!(events.iter().any(|e| matches!(
            e,
            Event::Committed { hash, .. } if hash == "9b8c7d6"
        )));
    }

    #[test]
    fn compaction_and_branch_summaries_are_recorded_as_such() {
        let events = parse(SESSION);
        assert!(events.iter().any(|e| matches!(e, Event::Compaction {})));
        assert!(events.iter().any(|e| matches!(
            e,
            Event::CompactSummary { text } if text.contains("greeting module")
        )));
        assert!(events.iter().any(|e| matches!(
            e,
            Event::UserMsg { text, harness: true, .. } if text.contains("tried a class")
        )));
    }

    #[test]
    fn each_prompt_closes_the_turn_before_it_with_its_last_text() {
        let events = parse(SESSION);
        let finals = finals(&events);
        assert_eq!(
            finals,
            ["Done: greet() says hello.", "Committed by you; all set."]
        );
    }

    #[test]
    fn the_file_name_names_the_session_until_the_header_does() {
        let hints = FileHints {
            stem: format!("2026-07-14T09-00-00-000Z_{ID}"),
            ..FileHints::default()
        };
        assert_eq!(Pi::new(&hints).session_id().unwrap().as_str(), ID);
    }
}
