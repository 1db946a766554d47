//! GitHub Copilot CLI's session logs (`~/.copilot/session-state/<id>/events.jsonl`, and the
//! older `session-state/<id>.jsonl`), as the session event schema of the Copilot SDK
//! defines them (`nodejs/src/generated/session-events.ts` of github/copilot-sdk, schema
//! version 1, as of August 2026).
//!
//! Each line is an event `{type, data, id, timestamp, parentId, agentId?}`:
//! - `session.start` (`data.context`: `cwd`, `branch`; `data.copilotVersion`;
//!   `data.selectedModel`) opens the session, and `session.model_change` (`newModel`)
//!   switches its model;
//! - `user.message` (`content`; a `source` naming a skill's hidden injection, `skill-…`, or
//!   another agent's prompt, `agent-…`, and autopilot's continuations are the harness's
//!   words);
//! - `assistant.message` (`content`, `model`; its `toolRequests` are recorded from the tool
//!   events that run them, so each call once);
//! - `tool.execution_start` (`toolCallId`, `toolName`, `arguments`, and the `model` that
//!   made the call, which its edits record: else the model last named) and
//!   `tool.execution_complete` (`success`, `result.content`, `error.message`);
//! - `session.compaction_complete` (`success`, `summaryContent`).
//!
//! A subagent's events carry an `agentId` (or, before it, `data.parentToolCallId`): its
//! calls and edits are the session's, but its prose closes none of the main agent's turns.
//! The session is the folder's name (the file's, for the older layout), which is the
//! `sessionId` `session.start` names.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::absolute;
use super::chat::{Call, Chat, ChatFormat, Line, other_detail, search_detail};
use super::{Emit, FileHints, model_name, str_at};
use crate::vocab::change::{Change, Replacement};
use crate::vocab::event::{Agent, Event, SessionId, TouchOp};
use crate::vocab::time::parse_iso_ms;

/// The name the current layout gives every session's log.
const EVENTS: &str = "events";

/// The Copilot CLI parser and what it must remember between captures.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Copilot {
    session: Option<SessionId>,
    cwd: Option<String>,
    meta_done: bool,
    /// The previous line's time, for an event without one.
    ts: i64,
    /// The model last named (`session.start`'s `selectedModel`, a `session.model_change`'s
    /// `newModel`, an `assistant.message`'s `model`): the one whose tool requests the tool
    /// events that follow run, when they do not name it themselves.
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    chat: Chat,
}

impl Copilot {
    pub(crate) fn new(hints: &FileHints) -> Copilot {
        let id = if hints.stem == EVENTS {
            hints
                .path
                .parent()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
        } else {
            Some(hints.stem.clone())
        };
        Copilot {
            session: id.filter(|id| !id.is_empty()).map(SessionId),
            ..Copilot::default()
        }
    }

    fn start(&mut self, data: &Value, cx: &Line, out: &mut Emit) {
        if self.session.is_none()
            && let Some(id) = str_at(data, "sessionId").filter(|id| !id.is_empty())
        {
            self.session = Some(SessionId(id.to_string()));
        }
        if self.meta_done {
            return;
        }
        self.meta_done = true;
        let context = data.get("context");
        let cwd = context.and_then(|c| str_at(c, "cwd")).unwrap_or("");
        self.cwd = (!cwd.is_empty()).then(|| cwd.to_string());
        let meta = Event::SessionMeta {
            cwd: cwd.to_string(),
            branch: context
                .and_then(|c| str_at(c, "branch"))
                .filter(|b| !b.is_empty())
                .map(str::to_string),
            agent: Some(Agent::Copilot),
            version: str_at(data, "copilotVersion").map(str::to_string),
            parent: None,
            subagent: None,
        };
        out.event(cx.slots.meta(), cx.ts, meta);
    }

    /// A `tool.execution_start` as a call, in Copilot CLI's tool names.
    fn call(&self, data: &Value) -> Call {
        let name = str_at(data, "toolName").unwrap_or("unknown");
        let args = data.get("arguments").unwrap_or(&Value::Null);
        let field = |key: &str| str_at(args, key).unwrap_or("").to_string();
        let path = str_at(args, "path").map(|p| absolute(p, self.cwd.as_deref()));
        let shell = matches!(name, "bash" | "powershell");
        let mut edits = Vec::new();
        let detail = match name {
            _ if shell => field("command"),
            "create" => {
                if let Some(path) = &path {
                    let change = Change::write(field("file_text"));
                    edits.push((path.clone(), TouchOp::Write, change));
                }
                path.clone().unwrap_or_default()
            }
            "edit" | "str_replace" => {
                if let Some(path) = &path {
                    let change = Change::Edit(Replacement {
                        old: field("old_str"),
                        new: field("new_str"),
                        replace_all: false,
                    });
                    edits.push((path.clone(), TouchOp::Edit, change));
                }
                path.clone().unwrap_or_default()
            }
            "grep" | "glob" => search_detail(&field("pattern"), path.as_deref()),
            "task" => field("description"),
            _ => other_detail(path.as_deref(), args),
        };
        Call {
            id: str_at(data, "toolCallId").map(str::to_string),
            tool: name.to_string(),
            detail,
            edits,
            command: shell.then(|| field("command")),
            echoes: matches!(name, "view" | "create" | "edit" | "str_replace"),
            model: model_name(None, str_at(data, "model")).or_else(|| self.model.clone()),
        }
    }
}

impl ChatFormat for Copilot {
    fn read(&mut self, line: u64, v: &Value, out: &mut Emit) {
        let ts = str_at(v, "timestamp")
            .and_then(parse_iso_ms)
            .unwrap_or(self.ts);
        self.ts = ts;
        self.chat.saw(ts);
        let mut cx = Line::new(line, ts);
        let data = v.get("data").unwrap_or(&Value::Null);
        let subagent = str_at(v, "agentId").is_some() || str_at(data, "parentToolCallId").is_some();
        let named = match str_at(v, "type") {
            Some("session.start") => str_at(data, "selectedModel"),
            Some("session.model_change") => str_at(data, "newModel"),
            Some("assistant.message") => str_at(data, "model"),
            _ => None,
        };
        if let Some(model) = model_name(None, named) {
            self.model = Some(model);
        }
        match str_at(v, "type") {
            Some("session.start") => self.start(data, &cx, out),
            Some("user.message") => {
                let text = str_at(data, "content").unwrap_or("");
                // The origins the schema names: a skill's hidden injection (`skill-pdf`),
                // another agent's prompt (`agent-<id>`), autopilot's continuation.
                let harness = subagent
                    || str_at(data, "source")
                        .is_some_and(|s| s.starts_with("skill-") || s.starts_with("agent-"))
                    || data.get("isAutopilotContinuation").and_then(Value::as_bool) == Some(true);
                self.chat.prompt(text, harness, None, &mut cx, out);
            }
            Some("assistant.message") => {
                let text = str_at(data, "content").unwrap_or("");
                self.chat.said(text, !subagent, &mut cx, out);
            }
            Some("tool.execution_start") => {
                let call = self.call(data);
                self.chat.call(call, &mut cx, out);
            }
            Some("tool.execution_complete") => {
                let Some(id) = str_at(data, "toolCallId") else {
                    return;
                };
                let failed = data.get("success").and_then(Value::as_bool) == Some(false);
                let printed = data
                    .get("result")
                    .and_then(|r| str_at(r, "content"))
                    .or_else(|| data.get("error").and_then(|e| str_at(e, "message")))
                    .unwrap_or("");
                self.chat.result(id, failed, printed, &mut cx, out);
            }
            Some("session.compaction_complete")
                if data.get("success").and_then(Value::as_bool) == Some(true) =>
            {
                let summary = str_at(data, "summaryContent");
                self.chat.compaction(summary, &mut cx, out);
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
    use crate::capture::sample::{events, finals, models, touches};
    use std::path::PathBuf;

    const SESSION: &str = include_str!("../../tests/fixtures/copilot/events.jsonl");
    const ID: &str = "3b9d2e71-6c4a-4f0e-a8d5-9e1f2a3b4c5d";

    fn hints() -> FileHints {
        FileHints {
            stem: EVENTS.into(),
            path: PathBuf::from(format!("/h/.copilot/session-state/{ID}/events.jsonl")),
            modified_ms: None,
            ..FileHints::default()
        }
    }

    fn parse(text: &str) -> Vec<Event> {
        events(text, &hints(), ID)
    }

    #[test]
    fn the_start_names_the_folder_the_branch_and_the_version() {
        let events = parse(SESSION);
        assert_eq!(
            events[0],
            Event::SessionMeta {
                cwd: "/work/app".into(),
                branch: Some("main".into()),
                agent: Some(Agent::Copilot),
                version: Some("0.0.407".into()),
                parent: None,
                subagent: None,
            }
        );
    }

    #[test]
    fn each_call_is_recorded_once_though_the_message_also_requests_it() {
        let calls: Vec<(String, bool)> = parse(SESSION)
            .into_iter()
            .filter_map(|e| match e {
                Event::ToolCall { tool, ok, .. } => Some((tool, ok)),
                _ => None,
            })
            .collect();
        assert_eq!(
            calls,
            [
                ("create".to_string(), true),
                ("edit".to_string(), true),
                ("edit".to_string(), false),
                ("bash".to_string(), true),
                ("view".to_string(), true),
                ("task".to_string(), true),
                ("create".to_string(), true),
                ("bash".to_string(), true),
            ]
        );
    }

    #[test]
    fn edits_carry_what_they_wrote_and_a_failed_one_is_marked() {
        let events = parse(SESSION);
        let touches = touches(&events);
        assert_eq!(
            touches,
            [
                ("/work/app/src/greet.py", TouchOp::Write, false),
                ("/work/app/src/greet.py", TouchOp::Edit, false),
                ("/work/app/src/nope.py", TouchOp::Edit, true),
                ("/work/app/src/sub.py", TouchOp::Write, false),
            ]
        );
    }

    #[test]
    fn an_edit_names_the_model_of_its_call_else_the_model_last_named() {
        let events = parse(SESSION);
        assert_eq!(
            models(&events),
            [
                ("/work/app/src/greet.py", Some("claude-sonnet-4.5")),
                ("/work/app/src/greet.py", Some("claude-sonnet-4.5")),
                ("/work/app/src/nope.py", Some("claude-sonnet-4.5")),
                ("/work/app/src/sub.py", Some("claude-haiku-4.5")),
            ]
        );
        // A call and a session that name no model leave it unnamed.
        let unnamed = SESSION
            .replace(r#""model":"claude-sonnet-4.5","#, "")
            .replace(r#""selectedModel":"claude-sonnet-4.5","#, "")
            .replace(r#"{"newModel":"claude-sonnet-4.5"}"#, "{}");
        assert_eq!(
            models(&parse(&unnamed))[0],
            ("/work/app/src/greet.py", None)
        );
    }

    #[test]
    fn a_subagents_prose_closes_no_turn_and_a_skills_injection_is_the_harnesss() {
        let events = parse(SESSION);
        let finals = finals(&events);
        assert_eq!(
            finals,
            ["The greeting now says hello.", "Committed as 1a2b3c4."]
        );
        assert!(events.iter().any(|e| matches!(
            e,
            Event::UserMsg { text, harness: true, .. } if text.starts_with("Use the pdf skill")
        )));
        assert!(events.iter().any(|e| matches!(
            e,
            Event::Said { text } if text == "Subagent: wrote sub.py."
        )));
    }

    #[test]
    fn a_commit_and_a_compaction_are_recorded() {
        let events = parse(SESSION);
        assert!(events.iter().any(|e| matches!(
            e,
            Event::Committed { hash, message, .. } if hash == "1a2b3c4" && message == "greet with hello"
        )));
        assert!(events.iter().any(|e| matches!(e, Event::Compaction {})));
        assert!(events.iter().any(|e| matches!(
            e,
            Event::CompactSummary { text } if text.contains("greeting module")
        )));
    }

    #[test]
    fn the_older_layout_names_the_session_by_the_file() {
        let hints = FileHints {
            stem: ID.into(),
            ..FileHints::default()
        };
        assert_eq!(Copilot::new(&hints).session_id().unwrap().as_str(), ID);
    }
}
