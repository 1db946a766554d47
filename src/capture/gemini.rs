//! Gemini CLI chat recordings: `~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`
//! (a subagent's under `chats/<parent session>/<id>.jsonl`), and the older
//! `session-*.json`, one document rewritten whole as the chat grew.
//!
//! Follows gemini-cli 0.56 (`packages/core/src/services/chatRecordingService.ts` and
//! `chatRecordingTypes.ts`): a `ConversationRecord` is `{sessionId, projectHash, startTime,
//! lastUpdated, kind, directories, messages}`, each message `{id, timestamp, type:
//! user|gemini|info|error|warning, content, displayContent}`, a `gemini` one with `model`
//! (which the edits of its tool calls record), `thoughts`, `tokens` and `toolCalls: [{id,
//! name, args, result, status, timestamp, agentId, resultDisplay}]`. The JSONL form has the metadata on its first line, then one
//! message a line, and `{"$set": …}` / `{"$rewindTo": id}` records. The same parser reads
//! both: a document's records are fed as positions 0 (the metadata), 1, 2, … (see
//! `source`).
//!
//! The JSONL form appends a message again, whole, each time the harness updates it (its
//! tool calls' results, its token counts). A message keeps the position of the line it
//! first appeared on, so a later copy is a revision of the same seqs and not a second
//! message: its text takes the first slot after the metadata slot, its tool calls the
//! next ones in order, and a copy only ever adds tool calls after the ones it had.
//!
//! Resuming an older `.json` chat, the harness writes it again as `<name>.jsonl`: the
//! metadata, then each message one a line, in order. Those are the positions the document
//! gave them, so the copy's seqs are the document's and nothing is recorded twice.
//!
//! Not in the format: the branch, the harness version (the cwd is the project folder the
//! harness keeps in `.project_root` beside `chats/`), compactions (`/compress` leaves no
//! record in the chat).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::turn::{Call, Closing};
use super::{
    Emit, FileHints, LineSlots, META_SLOT, TranscriptParser, absolute, model_name, str_at,
};
use crate::vocab::change::{Change, Replacement};
use crate::vocab::event::{Agent, Event, Seq, SessionId, TouchOp};
use crate::vocab::time::parse_iso_ms;

/// The messages whose first position is remembered, newest last. The harness rewrites the
/// message it is working on, so the last few are enough; an older id seen again takes the
/// position of the line it is on.
const PLACED: usize = 64;

/// The tools whose output only echoes what they were given or read.
const ECHO_TOOLS: &[&str] = &[
    "read_file",
    "read_many_files",
    "write_file",
    "replace",
    "write_todos",
];

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Gemini {
    session: Option<SessionId>,
    /// The project folder, from `.project_root` (or the recording's `directories`).
    cwd: Option<String>,
    /// A subagent's recording: the folder it sits in names its parent session.
    parent: Option<String>,
    meta_done: bool,
    max_ts: i64,
    turn: Closing,
    /// Message id and the position it first appeared at.
    placed: Vec<(String, u64)>,
    overflowed: u64,
}

impl Gemini {
    pub(crate) fn new(hints: &FileHints) -> Gemini {
        Gemini {
            cwd: hints.project_root.clone(),
            parent: hints.parent.clone(),
            ..Gemini::default()
        }
    }

    fn metadata(&mut self, position: u64, v: &Value, out: &mut Emit) {
        let Some(id) = str_at(v, "sessionId") else {
            return;
        };
        self.session = Some(SessionId(id.to_string()));
        if self.cwd.is_none() {
            self.cwd = v
                .get("directories")
                .and_then(|d| d.get(0))
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        let ts = str_at(v, "startTime").and_then(parse_iso_ms).unwrap_or(0);
        self.max_ts = self.max_ts.max(ts);
        let subagent = str_at(v, "kind") == Some("subagent");
        if !self.meta_done {
            self.meta_done = true;
            out.event(
                Seq::at_line(position, META_SLOT),
                ts,
                Event::SessionMeta {
                    cwd: self.cwd.clone().unwrap_or_default(),
                    branch: None,
                    agent: Some(Agent::Gemini),
                    version: None,
                    parent: self.parent.clone().filter(|_| subagent).map(SessionId),
                    subagent: None,
                },
            );
        }
    }

    /// Where the message `id` first appeared (remembering `position` if it is new).
    fn place(&mut self, id: &str, position: u64) -> u64 {
        if let Some((_, at)) = self.placed.iter().find(|(seen, _)| seen == id) {
            return *at;
        }
        if self.placed.len() == PLACED {
            self.placed.remove(0);
        }
        self.placed.push((id.to_string(), position));
        position
    }

    fn message(&mut self, position: u64, v: &Value, out: &mut Emit) {
        let Some(id) = str_at(v, "id") else { return };
        let ty = str_at(v, "type").unwrap_or("");
        if !matches!(ty, "user" | "gemini") {
            // info, warning and error lines are the harness talking to the person.
            return;
        }
        let position = self.place(id, position);
        let ts = str_at(v, "timestamp").and_then(parse_iso_ms).unwrap_or(0);
        self.max_ts = self.max_ts.max(ts);
        let mut slots = LineSlots::new(position);
        if ty == "user" {
            // What the person typed; `content` may hold the files an `@path` expanded to.
            let text = text_of(v.get("displayContent").or_else(|| v.get("content")));
            if text.trim().is_empty() {
                return;
            }
            self.turn.close(out);
            if let Some(seq) = slots.next() {
                out.event(
                    seq,
                    ts,
                    Event::UserMsg {
                        text,
                        harness: false,
                        context: None,
                    },
                );
            }
            return;
        }
        // A gemini message's text always takes its first slot, so a copy with tool calls
        // added keeps the seqs of the calls it already had.
        let text_seq = slots.next();
        let text = text_of(v.get("content"));
        if let Some(seq) = text_seq
            && !text.trim().is_empty()
        {
            self.turn.said(seq, ts, &text, out);
        }
        let calls = v.get("toolCalls").and_then(Value::as_array);
        let model = model_name(None, str_at(v, "model"));
        for tc in calls.into_iter().flatten() {
            let ts = str_at(tc, "timestamp").and_then(parse_iso_ms).unwrap_or(ts);
            self.max_ts = self.max_ts.max(ts);
            self.overflowed += self.call(tc, model.clone()).emit(&mut slots, ts, out);
        }
    }

    /// The tool call `tc` of a message the model `model` wrote.
    fn call(&self, tc: &Value, model: Option<String>) -> Call {
        let tool = str_at(tc, "name").unwrap_or("unknown").to_string();
        let args = tc.get("args").unwrap_or(&Value::Null);
        let arg = |k: &str| str_at(args, k);
        let shell = tool == "run_shell_command";
        let mut output = result_text(tc);
        if shell {
            // The shell tool answers `Output: <what it printed>` then `Exit Code: N` when N
            // is not 0; the printed text is the output (a commit's `[main abc1234]` line).
            output = output.map(|o| o.strip_prefix("Output: ").map_or(o.clone(), str::to_string));
        }
        let exited_badly = shell
            && output.as_deref().is_some_and(|o| {
                o.lines()
                    .any(|l| l.starts_with("Exit Code: ") && l != "Exit Code: 0")
            });
        let ok = !exited_badly && !matches!(str_at(tc, "status"), Some("error" | "cancelled"));
        let path = arg("file_path").map(|p| absolute(p, self.cwd.as_deref()));
        let edit = match (tool.as_str(), &path) {
            ("write_file", Some(p)) => Some((
                p.clone(),
                TouchOp::Write,
                Change::write(arg("content").unwrap_or("")),
            )),
            ("replace", Some(p)) => Some((
                p.clone(),
                TouchOp::Edit,
                Change::Edit(Replacement {
                    old: arg("old_string").unwrap_or("").to_string(),
                    new: arg("new_string").unwrap_or("").to_string(),
                    replace_all: args.get("allow_multiple").and_then(Value::as_bool) == Some(true),
                }),
            )),
            _ => None,
        };
        let command = shell.then(|| arg("command").map(str::to_string)).flatten();
        let detail = path
            .clone()
            .or_else(|| command.clone())
            .or_else(|| arg("description").map(str::to_string))
            .or_else(|| arg("dir_path").map(str::to_string))
            .or_else(|| arg("pattern").map(str::to_string))
            .or_else(|| arg("query").map(str::to_string))
            .unwrap_or_default();
        Call {
            echo: ECHO_TOOLS.contains(&tool.as_str()),
            tool,
            detail,
            ok,
            agent: str_at(tc, "agentId").map(str::to_string),
            edits: edit.into_iter().collect(),
            output,
            command,
            model,
        }
    }
}

impl TranscriptParser for Gemini {
    fn line(&mut self, line: u64, value: &Value, out: &mut Emit) {
        if value.get("$set").is_some() || value.get("$rewindTo").is_some() {
            // Metadata updates and rewinds: what was said before a rewind stays recorded.
            return;
        }
        if value.get("type").is_some() && value.get("id").is_some() {
            self.message(line, value, out);
        } else if value.get("projectHash").is_some() {
            self.metadata(line, value, out);
        }
    }

    fn flush(&self, out: &mut Emit) {
        self.turn.flush(out);
    }

    fn session(&self) -> Option<SessionId> {
        self.session.clone()
    }

    fn last_ts(&self) -> i64 {
        self.max_ts
    }

    fn overflowed(&self) -> u64 {
        self.overflowed
    }
}

/// Whether `v` is a Gemini CLI recording's first record: its metadata.
pub(crate) fn is_metadata(v: &Value) -> bool {
    v.get("sessionId").is_some_and(Value::is_string)
        && v.get("projectHash").is_some_and(Value::is_string)
        && v.get("type").is_none()
}

/// The text of a `PartListUnion`: a string, a part, or parts, their `text`s joined.
fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| str_at(p, "text"))
            .collect::<Vec<_>>()
            .join(""),
        Some(part @ Value::Object(_)) => str_at(part, "text").unwrap_or("").to_string(),
        _ => String::new(),
    }
}

/// What a tool call returned to the model: each `functionResponse`'s output or error, or
/// the text shown to the person when no result was kept.
fn result_text(tc: &Value) -> Option<String> {
    let parts: Vec<&Value> = match tc.get("result") {
        Some(Value::Array(parts)) => parts.iter().collect(),
        Some(part @ Value::Object(_)) => vec![part],
        Some(Value::String(s)) => return Some(s.clone()),
        _ => Vec::new(),
    };
    let texts: Vec<String> = parts
        .iter()
        .filter_map(|p| {
            let response = p.get("functionResponse").and_then(|f| f.get("response"));
            match response {
                Some(r) => str_at(r, "output")
                    .or_else(|| str_at(r, "error"))
                    .map(str::to_string)
                    .or_else(|| Some(r.to_string())),
                None => str_at(p, "text").map(str::to_string),
            }
        })
        .collect();
    if texts.is_empty() {
        return str_at(tc, "resultDisplay").map(str::to_string);
    }
    Some(texts.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn feed(records: &[(u64, Value)]) -> Emit {
        let mut p = Gemini::new(&FileHints {
            project_root: Some("/r".into()),
            ..FileHints::default()
        });
        let mut out = Emit::default();
        for (pos, v) in records {
            p.line(*pos, v, &mut out);
        }
        p.flush(&mut out);
        out
    }

    fn meta() -> Value {
        json!({"sessionId": "s1", "projectHash": "h", "startTime": "2026-08-01T10:00:00Z"})
    }

    fn answer(calls: Value) -> Value {
        json!({"id": "m2", "type": "gemini", "timestamp": "2026-08-01T10:00:05Z", "content": "Writing it.", "model": "gemini-3-pro", "toolCalls": calls})
    }

    #[test]
    fn a_message_written_again_is_a_revision_of_its_first_seqs() {
        let prompt = json!({"id": "m1", "type": "user", "timestamp": "2026-08-01T10:00:01Z", "content": [{"text": "add a file"}]});
        let call = json!({"id": "c1", "name": "write_file", "args": {"file_path": "a.txt", "content": "hi\n"}, "status": "success", "timestamp": "2026-08-01T10:00:06Z"});
        let once = feed(&[(0, meta()), (1, prompt.clone()), (2, answer(json!([])))]);
        let again = feed(&[
            (0, meta()),
            (1, prompt),
            (2, answer(json!([]))),
            (3, answer(json!([call]))),
        ]);
        // The copy on line 3 lands on line 2's slots: its text where it was, its call next.
        assert!(again.events.keys().all(|s| s.0 < 3 * 16));
        assert_eq!(again.events[&Seq(33)].1, once.events[&Seq(33)].1);
        match &again.events[&Seq(34)].1 {
            Event::ToolCall { tool, detail, .. } => {
                assert_eq!((tool.as_str(), detail.as_str()), ("write_file", "/r/a.txt"));
            }
            e => panic!("{e:?}"),
        }
        assert!(matches!(
            &again.events[&Seq(35)].1,
            Event::FileTouch { path, op: TouchOp::Write, .. } if path == "/r/a.txt"
        ));
    }

    #[test]
    fn an_edit_names_the_model_of_the_message_whose_call_made_it() {
        let call = json!({"id": "c1", "name": "write_file", "args": {"file_path": "a.txt", "content": "hi\n"}, "status": "success"});
        let models = |out: Emit| {
            let events: Vec<Event> = out.events.into_values().map(|(_, e)| e).collect();
            crate::capture::sample::models(&events)
                .into_iter()
                .map(|(p, m)| (p.to_string(), m.map(str::to_string)))
                .collect::<Vec<_>>()
        };
        let out = feed(&[(0, meta()), (2, answer(json!([call.clone()])))]);
        assert_eq!(
            models(out),
            [("/r/a.txt".to_string(), Some("gemini-3-pro".to_string()))]
        );
        let mut unnamed = answer(json!([call]));
        unnamed.as_object_mut().unwrap().remove("model");
        let out = feed(&[(0, meta()), (2, unnamed)]);
        assert_eq!(models(out), [("/r/a.txt".to_string(), None)]);
    }

    #[test]
    fn a_failed_edit_is_marked_and_its_error_kept() {
        let call = json!({"id": "c1", "name": "replace", "args": {"file_path": "/r/a.txt", "old_string": "x", "new_string": "y"}, "status": "error",
            "result": [{"functionResponse": {"id": "c1", "name": "replace", "response": {"error": "could not find the string"}}}]});
        let out = feed(&[(0, meta()), (2, answer(json!([call])))]);
        let kinds: Vec<_> = out.events.values().map(|(_, e)| e.clone()).collect();
        assert!(
            kinds
                .iter()
                .any(|e| matches!(e, Event::ToolCall { ok: false, .. }))
        );
        assert!(
            kinds
                .iter()
                .any(|e| matches!(e, Event::FileTouch { failed: true, .. }))
        );
        assert!(kinds.iter().any(
            |e| matches!(e, Event::ToolOutput { excerpt, .. } if excerpt == "could not find the string")
        ));
    }

    #[test]
    fn a_shell_command_that_exits_non_zero_failed_and_a_commit_it_printed_is_recorded() {
        let shell = |id: &str, command: &str, output: &str| {
            json!({"id": id, "name": "run_shell_command", "args": {"command": command}, "status": "success",
                "result": [{"functionResponse": {"id": id, "name": "run_shell_command", "response": {"output": output}}}]})
        };
        let out = feed(&[
            (0, meta()),
            (
                2,
                answer(json!([
                    shell("c1", "cargo test", "Output: error[E0425]\nExit Code: 101"),
                    shell(
                        "c2",
                        "git commit -m x",
                        "Output: [main 1a2b3c4] x\n 1 file changed"
                    )
                ])),
            ),
        ]);
        let events: Vec<&Event> = out.events.values().map(|(_, e)| e).collect();
        assert!(matches!(events[2], Event::ToolCall { ok: false, .. }));
        assert!(events.iter().any(|e| matches!(
            e,
            Event::Committed { hash, .. } if hash == "1a2b3c4"
        )));
    }

    #[test]
    fn the_last_answer_before_the_next_prompt_closes_the_turn() {
        let out = feed(&[
            (0, meta()),
            (
                1,
                json!({"id": "m1", "type": "user", "timestamp": "2026-08-01T10:00:01Z", "content": "hi"}),
            ),
            (2, answer(json!([]))),
            (
                3,
                json!({"id": "m3", "type": "gemini", "timestamp": "2026-08-01T10:00:07Z", "content": "Done."}),
            ),
            (
                4,
                json!({"id": "m4", "type": "user", "timestamp": "2026-08-01T10:00:09Z", "content": "thanks"}),
            ),
        ]);
        assert_eq!(
            out.events[&Seq(49)].1,
            Event::FinalMsg {
                text: "Done.".into()
            }
        );
        assert!(matches!(out.events[&Seq(33)].1, Event::Said { .. }));
        assert!(matches!(
            &out.events[&Seq(0)].1,
            Event::SessionMeta { cwd, agent: Some(Agent::Gemini), .. } if cwd == "/r"
        ));
    }
}
