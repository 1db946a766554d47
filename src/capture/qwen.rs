//! Qwen Code's chats (`~/.qwen/projects/<encoded path>/chats/<session>.jsonl`, below
//! `$QWEN_RUNTIME_DIR` or `$QWEN_HOME` when set), as QwenLM/qwen-code writes them
//! (`packages/core/src/services/chatRecordingService.ts`, its `ChatRecord`; the tools in
//! `packages/core/src/tools/`, named in `tool-names.ts`), in the 0.x releases of 2026.
//!
//! Each line is a record `{uuid, parentUuid, sessionId, timestamp, type, subtype?, cwd,
//! version, gitBranch?, message?, toolCallResult?, systemPayload?}` whose `message` is a
//! Gemini API `Content` (`role`, `parts`):
//! - `user` records hold the prompt's `text` parts; one with a `provenance` other than
//!   `real_user`, or (before provenance was written) a `subtype` other than
//!   `mid_turn_user_message` (words typed while the agent worked), is the harness's;
//! - `assistant` records hold `text` parts (those marked `thought` are reasoning, not
//!   recorded) and `functionCall {id, name, args}` parts, and name the `model` that
//!   answered (recorded on their edits);
//! - `tool_result` records answer a call with a `functionResponse {id, name, response}`
//!   part (`response.output`, or `response.error` when it failed) and a `toolCallResult`
//!   whose `status` is `error` or `cancelled` when it did not succeed;
//! - `system` records with `subtype: chat_compression` mark a compaction; the summary is the
//!   first user turn of the history it left (`systemPayload.compressedHistory`).
//!
//! Records a subagent produced (`isSidechain`, `agentId`) are recorded, but their prose
//! closes none of the main agent's turns. The session is the first record's `sessionId`
//! (the file's name until one is read); cwd, branch and version come from the first record
//! that has a cwd.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::absolute;
use super::chat::{Call, Chat, ChatFormat, Line, other_detail, search_detail};
use super::{Emit, FileHints, model_name, str_at};
use crate::vocab::change::{Change, Replacement};
use crate::vocab::event::{Agent, Event, SessionId, TouchOp};
use crate::vocab::time::parse_iso_ms;

/// The Qwen Code parser and what it must remember between captures.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Qwen {
    session: Option<SessionId>,
    /// A record has named the session (the file's name stands in until then).
    named: bool,
    cwd: Option<String>,
    /// The previous record's time, for one without.
    ts: i64,
    chat: Chat,
}

impl Qwen {
    pub(crate) fn new(hints: &FileHints) -> Qwen {
        Qwen {
            session: (!hints.stem.is_empty()).then(|| SessionId(hints.stem.clone())),
            ..Qwen::default()
        }
    }

    fn meta(&mut self, v: &Value, cx: &Line, out: &mut Emit) {
        if self.cwd.is_some() {
            return;
        }
        let Some(cwd) = str_at(v, "cwd").filter(|c| !c.is_empty()) else {
            return;
        };
        self.cwd = Some(cwd.to_string());
        let meta = Event::SessionMeta {
            cwd: cwd.to_string(),
            branch: str_at(v, "gitBranch")
                .filter(|b| !b.is_empty())
                .map(str::to_string),
            agent: Some(Agent::Qwen),
            version: str_at(v, "version").map(str::to_string),
            parent: None,
            subagent: None,
        };
        out.event(cx.slots.meta(), cx.ts, meta);
    }

    fn user(&mut self, v: &Value, parts: &[Value], side: bool, cx: &mut Line, out: &mut Emit) {
        let harness = side
            || match str_at(v, "provenance") {
                Some(p) => p != "real_user",
                // A message typed while the agent worked is the person's too.
                None => v
                    .get("subtype")
                    .is_some_and(|s| s != "mid_turn_user_message"),
            };
        let text = texts(parts);
        self.chat.prompt(&text, harness, None, cx, out);
    }

    fn assistant(&mut self, v: &Value, parts: &[Value], side: bool, cx: &mut Line, out: &mut Emit) {
        let model = model_name(None, str_at(v, "model"));
        for part in parts {
            if let Some(call) = part.get("functionCall") {
                let call = self.call(call, model.clone());
                self.chat.call(call, cx, out);
            } else if let Some(text) = str_at(part, "text")
                && part.get("thought").and_then(Value::as_bool) != Some(true)
            {
                self.chat.said(text, !side, cx, out);
            }
        }
    }

    fn tool_result(&mut self, v: &Value, parts: &[Value], cx: &mut Line, out: &mut Emit) {
        let status = v.get("toolCallResult").and_then(|r| str_at(r, "status"));
        for response in parts.iter().filter_map(|p| p.get("functionResponse")) {
            let Some(id) = str_at(response, "id") else {
                continue;
            };
            let body = response.get("response");
            let error = body.and_then(|b| str_at(b, "error"));
            let failed = error.is_some() || matches!(status, Some("error" | "cancelled"));
            let printed = error
                .or_else(|| body.and_then(|b| str_at(b, "output")))
                .unwrap_or("");
            self.chat.result(id, failed, printed, cx, out);
        }
    }

    /// A `functionCall` part of a record `model` answered with, as a call, in Qwen Code's
    /// tool names (`tool-names.ts`, with the older `replace` for `edit`).
    fn call(&self, call: &Value, model: Option<String>) -> Call {
        let name = str_at(call, "name").unwrap_or("unknown");
        let args = call.get("args").unwrap_or(&Value::Null);
        let field = |key: &str| str_at(args, key).unwrap_or("").to_string();
        let path = str_at(args, "file_path")
            .or_else(|| str_at(args, "absolute_path"))
            .or_else(|| str_at(args, "path"))
            .map(|p| absolute(p, self.cwd.as_deref()));
        let mut edits = Vec::new();
        let detail = match name {
            "run_shell_command" => field("command"),
            "write_file" => {
                if let Some(path) = &path {
                    let change = Change::write(field("content"));
                    edits.push((path.clone(), TouchOp::Write, change));
                }
                path.clone().unwrap_or_default()
            }
            "edit" | "replace" => {
                if let Some(path) = &path {
                    let change = Change::Edit(Replacement {
                        old: field("old_string"),
                        new: field("new_string"),
                        replace_all: args.get("replace_all").and_then(Value::as_bool) == Some(true),
                    });
                    edits.push((path.clone(), TouchOp::Edit, change));
                }
                path.clone().unwrap_or_default()
            }
            "grep_search" | "search_file_content" | "glob" => {
                search_detail(&field("pattern"), path.as_deref())
            }
            "agent" | "task" => field("description"),
            _ => other_detail(path.as_deref(), args),
        };
        Call {
            id: str_at(call, "id").map(str::to_string),
            tool: name.to_string(),
            detail,
            edits,
            command: (name == "run_shell_command").then(|| field("command")),
            echoes: matches!(name, "read_file" | "write_file" | "edit" | "replace"),
            model,
        }
    }

    /// The summary a compression left: the text of the first user turn of the history it
    /// kept.
    fn compression(&mut self, v: &Value, cx: &mut Line, out: &mut Emit) {
        let summary = v
            .get("systemPayload")
            .and_then(|p| p.get("compressedHistory"))
            .and_then(Value::as_array)
            .and_then(|h| h.first())
            .filter(|c| str_at(c, "role") == Some("user"))
            .and_then(|c| c.get("parts"))
            .and_then(Value::as_array)
            .map(|parts| texts(parts));
        self.chat.compaction(summary.as_deref(), cx, out);
    }
}

impl ChatFormat for Qwen {
    fn read(&mut self, line: u64, v: &Value, out: &mut Emit) {
        let ts = str_at(v, "timestamp")
            .and_then(parse_iso_ms)
            .unwrap_or(self.ts);
        self.ts = ts;
        self.chat.saw(ts);
        if !self.named
            && let Some(id) = str_at(v, "sessionId").filter(|id| !id.is_empty())
        {
            self.named = true;
            self.session = Some(SessionId(id.to_string()));
        }
        let mut cx = Line::new(line, ts);
        self.meta(v, &cx, out);
        let side = v.get("isSidechain").and_then(Value::as_bool) == Some(true)
            || str_at(v, "agentId").is_some();
        let parts = v
            .get("message")
            .and_then(|m| m.get("parts"))
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        match str_at(v, "type") {
            Some("user") => self.user(v, parts, side, &mut cx, out),
            Some("assistant") => self.assistant(v, parts, side, &mut cx, out),
            Some("tool_result") => self.tool_result(v, parts, &mut cx, out),
            Some("system") if str_at(v, "subtype") == Some("chat_compression") => {
                self.compression(v, &mut cx, out);
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

/// The `text` of a Content's parts that are not reasoning, joined by newlines.
fn texts(parts: &[Value]) -> String {
    parts
        .iter()
        .filter(|p| p.get("thought").and_then(Value::as_bool) != Some(true))
        .filter_map(|p| str_at(p, "text"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::sample::{events, finals, models, touches};

    const SESSION: &str = include_str!("../../tests/fixtures/qwen/session.jsonl");
    const ID: &str = "9a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d";

    fn parse(text: &str) -> Vec<Event> {
        let hints = FileHints {
            stem: ID.into(),
            ..FileHints::default()
        };
        events(text, &hints, ID)
    }

    #[test]
    fn the_first_record_gives_the_folder_the_branch_and_the_version() {
        let events = parse(SESSION);
        assert_eq!(
            events[0],
            Event::SessionMeta {
                cwd: "/work/app".into(),
                branch: Some("main".into()),
                agent: Some(Agent::Qwen),
                version: Some("0.24.7".into()),
                parent: None,
                subagent: None,
            }
        );
    }

    #[test]
    fn reasoning_is_left_out_and_each_prompt_closes_the_turn_before_it() {
        let events = parse(SESSION);
        assert!(!events.iter().any(|e| matches!(
            e,
            Event::Said { text } | Event::FinalMsg { text } if text.contains("small module")
        )));
        let finals = finals(&events);
        assert_eq!(finals, ["greet() now says hello.", "Committed."]);
        let harness: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                Event::UserMsg {
                    text,
                    harness: true,
                    ..
                } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(harness, ["goal check"]);
    }

    #[test]
    fn without_provenance_a_subtype_marks_the_harness_but_a_mid_turn_message_is_the_persons() {
        let record = |subtype: &str, text: &str| {
            format!(
                r#"{{"uuid":"u","sessionId":"{ID}","timestamp":"2026-07-14T11:00:00.000Z","type":"user","subtype":"{subtype}","cwd":"/w","message":{{"role":"user","parts":[{{"text":"{text}"}}]}}}}"#
            )
        };
        let text = [
            record("cron", "nightly"),
            record("mid_turn_user_message", "stop"),
        ]
        .join("\n");
        let prompts: Vec<(String, bool)> = parse(&text)
            .into_iter()
            .filter_map(|e| match e {
                Event::UserMsg { text, harness, .. } => Some((text, harness)),
                _ => None,
            })
            .collect();
        assert_eq!(
            prompts,
            [("nightly".to_string(), true), ("stop".to_string(), false)]
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
                ("/work/app/src/other.py", TouchOp::Edit, true),
            ]
        );
        assert!(events.iter().any(|e| matches!(
            e,
            Event::ToolOutput { excerpt, .. } if excerpt.contains("0 occurrences")
        )));
    }

    #[test]
    fn an_edit_names_the_model_its_record_was_answered_by() {
        let events = parse(SESSION);
        assert_eq!(
            models(&events),
            [
                ("/work/app/src/greet.py", Some("qwen3-coder-plus")),
                ("/work/app/src/greet.py", Some("qwen3-coder-plus")),
                ("/work/app/src/other.py", Some("qwen3-coder-plus")),
            ]
        );
        let unnamed = SESSION.replace(r#""model":"qwen3-coder-plus""#, r#""x":"y""#);
        assert!(models(&parse(&unnamed)).iter().all(|(_, m)| m.is_none()));
    }

    #[test]
    fn a_compression_leaves_its_summary_and_a_commit_is_read_from_the_shell() {
        let events = parse(SESSION);
        assert!(events.iter().any(|e| matches!(e, Event::Compaction {})));
        assert!(events.iter().any(|e| matches!(
            e,
            Event::CompactSummary { text } if text.contains("greeting module")
        )));
        assert!(events.iter().any(|e| matches!(
            e,
            Event::Committed { hash, .. } if hash == "5e6f7a8"
        )));
    }
}
