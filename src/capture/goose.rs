//! Goose sessions, from its SQLite database (`~/.local/share/goose/sessions/sessions.db` on
//! Linux, `$GOOSE_PATH_ROOT/data/sessions/sessions.db` when that is set).
//!
//! Follows block/goose `crates/goose/src/session/session_manager.rs` and `migrations.rs`
//! (schema version 13, Goose 1.x in 2026): a `sessions` row `{id, working_dir, session_type,
//! created_at}` and its `messages` rows `{session_id, role, content_json, created_timestamp
//! (seconds), metadata_json}`, one row per whole message, never updated in place (a
//! compaction deletes the session's rows and writes them again). `content_json` is a list of
//! `MessageContent` (`conversation/message/content_types.rs`), tagged by `type`: `text`,
//! `toolRequest` `{id, toolCall: {status, value: {name, arguments}}}`, `toolResponse` `{id,
//! toolResult: {status, value: {content, isError} | [content], error}}` (in the user message
//! after the request), `thinking`, `systemNotification`, …; `metadata_json` says who sees a
//! message (`userVisible`, `agentVisible`: a compaction's summary, written as a user message,
//! and the harness's tagged insertions such as `<subdirectory-hints>` are for the agent
//! only; the metadata does not say which is which, so an agent-only text that opens with a
//! tag is taken for the harness speaking and any other for a summary). Tools are named `<extension>__<tool>`: the developer extension's
//! `shell`, `write` `{path, content}`, `edit` `{path, before, after}` and, before them,
//! `text_editor` `{command: write|str_replace|…, path, file_text, old_str, new_str}`.
//!
//! Not in the format: the branch, the version. The model is the session's, not each
//! message's: `provider_name` and `model_config_json.model_name` (schema version 6 on), as
//! the row holds them when a capture reads it (the person switching models rewrites them),
//! recorded on each edit as `provider/model`; a database older than those columns is read
//! all the same, its edits naming no model. A subagent's session says it is one
//! (`session_type = 'sub_agent'`) but not whose. The JSONL files Goose kept sessions in
//! before its database are imported into it by Goose itself, and are not read here.

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::paired::{self, Head, Paired, Parts, Table};
use super::source;
use super::source::DbSession;
use super::turn::{Call, Closing};
use super::{Emit, absolute, str_at};
use crate::vocab::change::{Change, Replacement};
use crate::vocab::event::{Agent, Event, TouchOp};

/// The tools whose output only echoes what they were given or read.
const ECHO_TOOLS: &[&str] = &["text_editor", "write", "edit", "read", "todo_write"];

/// Its sessions and messages, each message with the tool responses after it.
const MESSAGES: Table = Table {
    session: "SELECT working_dir, NULL, CAST(strftime('%s', created_at) AS INTEGER) * 1000,
                     provider_name,
                     CASE WHEN json_valid(model_config_json)
                          THEN json_extract(model_config_json, '$.model_name') END
              FROM sessions WHERE id = ?1",
    name: "messages",
    mark: "rowid",
    strict: true,
    // A user message of nothing but tool responses answers the calls before it.
    answers: "role = 'user' AND json_valid(content_json) AND NOT EXISTS
              (SELECT 1 FROM json_each(content_json)
               WHERE json_extract(value, '$.type') <> 'toolResponse')",
    columns: "role, content_json, created_timestamp, metadata_json",
    row: message_row,
};

/// A database from before Goose kept the session's model (schema version 5 and older).
const MESSAGES_WITHOUT_MODEL: Table = Table {
    session: "SELECT working_dir, NULL, CAST(strftime('%s', created_at) AS INTEGER) * 1000,
                     NULL, NULL
              FROM sessions WHERE id = ?1",
    ..MESSAGES
};

/// How `conn`'s messages are read: with the session's model where its schema keeps one.
pub(crate) fn messages(conn: &Connection) -> &'static Table {
    if source::has_columns(conn, "sessions", &["provider_name", "model_config_json"]) {
        &MESSAGES
    } else {
        &MESSAGES_WITHOUT_MODEL
    }
}

/// Whether `conn` is a Goose database: its sessions and messages tables with the columns
/// every schema version read here has.
pub(crate) fn recognises(conn: &Connection) -> bool {
    source::has_columns(
        conn,
        "sessions",
        &["id", "working_dir", "session_type", "created_at"],
    ) && source::has_columns(
        conn,
        "messages",
        &[
            "session_id",
            "role",
            "content_json",
            "created_timestamp",
            "metadata_json",
        ],
    )
}

/// Every session in the database with the folder it worked in, oldest first.
pub(crate) fn sessions(conn: &Connection) -> rusqlite::Result<Vec<DbSession>> {
    let mut stmt = conn.prepare("SELECT id, working_dir FROM sessions ORDER BY created_at, id")?;
    stmt.query_map([], DbSession::of_row)?.collect()
}

fn message_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Value> {
    Ok(json!({
        "role": r.get::<_, Option<String>>(2)?,
        "content": paired::json_column(r, 3)?,
        "created": r.get::<_, Option<i64>>(4)?,
        "metadata": paired::json_column(r, 5)?,
    }))
}

/// The Goose parser: what one session's records need remembered between captures.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Goose {
    head: Head,
    closing: Closing,
}

impl Goose {
    fn read(&mut self, position: u64, v: &Value, out: &mut Emit) {
        let message = v.get("message").unwrap_or(&Value::Null);
        let ts = message
            .get("created")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            .saturating_mul(1000);
        self.head.saw(ts);
        let user = str_at(message, "role") == Some("user");
        let metadata = message.get("metadata").unwrap_or(&Value::Null);
        // A message only the agent sees: a compaction's summary, the harness's hints.
        let agent_only = metadata.get("userVisible") == Some(&Value::Bool(false));
        let responses: Vec<&Value> = v
            .get("results")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| r.get("content").and_then(Value::as_array))
            .flatten()
            .filter(|c| str_at(c, "type") == Some("toolResponse"))
            .collect();
        let mut parts = Parts::new(position);
        let content = message.get("content").and_then(Value::as_array);
        for (i, item) in content.into_iter().flatten().enumerate() {
            let slots = parts.of(i);
            match str_at(item, "type") {
                Some("text") => {
                    let text = str_at(item, "text").unwrap_or("");
                    if text.trim().is_empty() {
                        continue;
                    }
                    let Some(seq) = slots.next() else {
                        self.head.overflowed += 1;
                        continue;
                    };
                    match (user, agent_only) {
                        (true, false) => {
                            self.closing.close(out);
                            let event = Event::UserMsg {
                                text: text.to_string(),
                                harness: false,
                                context: None,
                            };
                            out.event(seq, ts, event);
                        }
                        (true, true) if !text.trim_start().starts_with('<') => {
                            out.event(seq, ts, Event::Compaction {});
                            let text = text.to_string();
                            match slots.next() {
                                Some(seq) => out.event(seq, ts, Event::CompactSummary { text }),
                                None => self.head.overflowed += 1,
                            }
                        }
                        (true, true) => {
                            let event = Event::UserMsg {
                                text: text.to_string(),
                                harness: true,
                                context: None,
                            };
                            out.event(seq, ts, event);
                        }
                        (false, false) => self.closing.said(seq, ts, text, out),
                        // The harness's own words to the agent (continuing after a
                        // compaction): nothing the agent said.
                        (false, true) => {}
                    }
                }
                Some("toolRequest") => {
                    let id = str_at(item, "id");
                    let response = responses
                        .iter()
                        .find(|r| id.is_some() && str_at(r, "id") == id);
                    let call = self.call(item, response.copied());
                    self.head.overflowed += call.emit(slots, ts, out);
                }
                _ => {}
            }
        }
    }

    fn call(&self, request: &Value, response: Option<&Value>) -> Call {
        let tool_call = request.get("toolCall").unwrap_or(&Value::Null);
        let value = tool_call.get("value").unwrap_or(&Value::Null);
        let full = str_at(value, "name").unwrap_or("unknown");
        // `developer__shell`: the tool, without the extension that serves it.
        let tool = full.rsplit_once("__").map_or(full, |(_, t)| t);
        let args = value.get("arguments").unwrap_or(&Value::Null);
        let arg = |k: &str| str_at(args, k);
        let cwd = self.head.cwd();
        let path = arg("path").map(|p| absolute(p, cwd));
        let edit = |old: &str, new: &str| {
            Change::Edit(Replacement {
                old: arg(old).unwrap_or("").to_string(),
                new: arg(new).unwrap_or("").to_string(),
                replace_all: false,
            })
        };
        let change = match (tool, arg("command")) {
            ("write", _) => Some((TouchOp::Write, Change::write(arg("content").unwrap_or("")))),
            ("edit", _) => Some((TouchOp::Edit, edit("before", "after"))),
            ("text_editor", Some("write")) => Some((
                TouchOp::Write,
                Change::write(arg("file_text").unwrap_or("")),
            )),
            ("text_editor", Some("str_replace")) => {
                Some((TouchOp::Edit, edit("old_str", "new_str")))
            }
            _ => None,
        };
        let edits = match (change, &path) {
            (Some((op, change)), Some(p)) => vec![(p.clone(), op, change)],
            _ => Vec::new(),
        };
        let command = (tool == "shell")
            .then(|| arg("command").map(str::to_string))
            .flatten();
        let detail = paired::detail(path.as_ref(), command.as_ref(), args, &["pattern", "url"]);
        // A request the model could not make (bad arguments) failed before it ran.
        let (ok, output) = match (str_at(tool_call, "status"), response) {
            (Some("error"), _) => (false, str_at(tool_call, "error").map(str::to_string)),
            (_, Some(r)) => outcome(r.get("toolResult").unwrap_or(&Value::Null)),
            (_, None) => (true, None),
        };
        Call {
            tool: tool.to_string(),
            detail,
            ok,
            agent: None,
            edits,
            output,
            echo: ECHO_TOOLS.contains(&tool),
            command,
            // Goose keeps one model per session, not per message.
            model: self.head.model().map(str::to_string),
        }
    }
}

/// Whether a tool's result is a success, and its text: `{status: "success", value:
/// {content, isError}}` (or, in older sessions, `value` the content list itself), or
/// `{status: "error", error}`.
fn outcome(result: &Value) -> (bool, Option<String>) {
    if str_at(result, "status") == Some("error") {
        return (false, str_at(result, "error").map(str::to_string));
    }
    let value = result.get("value").unwrap_or(&Value::Null);
    let content = value.get("content").unwrap_or(value);
    let text: Vec<&str> = content
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| str_at(c, "text"))
        .collect();
    let failed = value.get("isError").and_then(Value::as_bool) == Some(true);
    (!failed, (!text.is_empty()).then(|| text.join("\n")))
}

paired::paired_parser!(Goose);

impl Paired for Goose {
    const AGENT: Agent = Agent::Goose;

    fn head(&self) -> &Head {
        &self.head
    }

    fn head_mut(&mut self) -> &mut Head {
        &mut self.head
    }

    fn message(&mut self, position: u64, v: &Value, out: &mut Emit) {
        self.read(position, v, out);
    }

    /// The open turn's last text, provisionally its closing message.
    fn provisional(&self, out: &mut Emit) {
        self.closing.flush(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::TranscriptParser;
    use crate::capture::paired::Mark;
    use crate::vocab::event::Seq;

    fn db() -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(include_str!("../../tests/fixtures/goose/schema.sql"))
            .unwrap();
        c.execute_batch(r#"
            INSERT INTO sessions (id, name, working_dir, created_at) VALUES ('20260714_1', 'limiter', '/r', '2026-07-14 09:00:00');
            INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES
              ('20260714_1', 'user', '[{"type":"text","text":"add a"}]', 1784019660, '{"userVisible":true,"agentVisible":true}'),
              ('20260714_1', 'assistant', '[{"type":"text","text":"writing a"},{"type":"toolRequest","id":"t1","toolCall":{"status":"success","value":{"name":"developer__write","arguments":{"path":"a.txt","content":"a\n"}}}}]', 1784019661, '{"userVisible":true,"agentVisible":true}');
            "#).unwrap();
        c
    }

    fn capture(c: &Connection, since: Mark, p: &mut Goose) -> (Mark, Emit) {
        let mut out = Emit::default();
        let next = paired::records(c, messages(c), "20260714_1", since, |pos, v| {
            p.line(pos, v, &mut out)
        })
        .unwrap();
        p.flush(&mut out);
        (next, out)
    }

    fn touch_failed(out: &Emit) -> Option<bool> {
        out.events.values().find_map(|(_, e)| match e {
            Event::FileTouch { path, failed, .. } if path == "/r/a.txt" => Some(*failed),
            _ => None,
        })
    }

    #[test]
    fn a_response_in_a_later_row_revises_its_request_and_the_next_prompt_closes_the_turn() {
        let c = db();
        let mut p = Goose::default();
        let (since, first) = capture(&c, Mark::default(), &mut p);
        assert!(matches!(
            &first.events[&Seq(0)].1,
            Event::SessionMeta { cwd, agent: Some(Agent::Goose), .. } if cwd == "/r"
        ));
        assert_eq!(touch_failed(&first), Some(false), "{:?}", first.events);
        c.execute_batch(r#"
            INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES
              ('20260714_1', 'user', '[{"type":"toolResponse","id":"t1","toolResult":{"status":"success","value":{"content":[{"type":"text","text":"disk full"}],"isError":true}}}]', 1784019662, '{"userVisible":true,"agentVisible":true}'),
              ('20260714_1', 'user', '[{"type":"text","text":"try again"}]', 1784019700, '{"userVisible":true,"agentVisible":true}');
            "#).unwrap();
        let (_, second) = capture(&c, since, &mut p);
        assert_eq!(
            touch_failed(&second),
            Some(true),
            "the response failed the write"
        );
        let finals: Vec<&Event> = second
            .events
            .values()
            .map(|(_, e)| e)
            .filter(|e| matches!(e, Event::FinalMsg { text } if text == "writing a"))
            .collect();
        assert_eq!(
            finals.len(),
            1,
            "the prompt closed the turn: {:?}",
            second.events
        );
        // Nothing of the first prompt's message was read again.
        assert!(
            second
                .events
                .keys()
                .all(|s| s.0 == 0 || s.0 >= Seq::at_line(2 * paired::PARTS, 0).0)
        );
    }

    #[test]
    fn an_edit_names_the_sessions_provider_and_model_as_its_row_holds_them() {
        let model = |c: &Connection| {
            let (_, out) = capture(c, Mark::default(), &mut Goose::default());
            out.events.values().find_map(|(_, e)| match e {
                Event::FileTouch { model, .. } => Some(model.clone()),
                _ => None,
            })
        };
        let c = db();
        assert_eq!(model(&c), Some(None), "a session with no model names none");
        c.execute_batch(
            r#"UPDATE sessions SET provider_name = 'anthropic',
            model_config_json = '{"model_name":"claude-sonnet-4-5","context_limit":200000}'"#,
        )
        .unwrap();
        assert_eq!(
            model(&c),
            Some(Some("anthropic/claude-sonnet-4-5".to_string()))
        );
        c.execute_batch("UPDATE sessions SET model_config_json = 'not json'")
            .unwrap();
        assert_eq!(
            model(&c),
            Some(None),
            "a config that does not parse names none"
        );
        // Schema version 5: the columns did not exist yet.
        c.execute_batch(
            "ALTER TABLE sessions DROP COLUMN provider_name;
             ALTER TABLE sessions DROP COLUMN model_config_json;",
        )
        .unwrap();
        assert!(
            recognises(&c),
            "a database from before the model is Goose's"
        );
        assert_eq!(model(&c), Some(None), "and its edits name no model");
    }

    #[test]
    fn a_compaction_that_writes_the_sessions_rows_again_records_only_its_summary_anew() {
        let c = db();
        let mut p = Goose::default();
        let (since, first) = capture(&c, Mark::default(), &mut p);
        // Goose's `replace_conversation`: every row deleted and written again (new rowids),
        // the summary after them.
        c.execute_batch(r#"
            CREATE TEMP TABLE kept AS SELECT session_id, role, content_json, created_timestamp, metadata_json
              FROM messages WHERE session_id = '20260714_1' ORDER BY id;
            DELETE FROM messages WHERE session_id = '20260714_1';
            INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) SELECT * FROM kept;
            INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES
              ('20260714_1', 'user', '[{"type":"text","text":"so far: a"}]', 1784019700, '{"userVisible":false,"agentVisible":true}');
            "#).unwrap();
        let (_, second) = capture(&c, since, &mut p);
        // The metadata is written once; every message is read again as it was.
        for (seq, event) in first.events.iter().filter(|(seq, _)| seq.0 > 0) {
            assert_eq!(second.events.get(seq), Some(event), "{seq:?} is as it was");
        }
        let new: Vec<&str> = second
            .events
            .iter()
            .filter(|(seq, _)| seq.0 > 0 && !first.events.contains_key(seq))
            .map(|(_, (_, e))| e.tag())
            .collect();
        assert_eq!(new, ["compacted", "compact"]);
    }

    #[test]
    fn a_summary_only_the_agent_sees_is_a_compaction_and_a_hint_is_the_harness_speaking() {
        let mut p = Goose::default();
        let mut out = Emit::default();
        let agent_only = |text: &str| {
            json!({"message": {"role": "user", "created": 5,
                "content": [{"type": "text", "text": text}],
                "metadata": {"userVisible": false, "agentVisible": true}},
                "results": []})
        };
        p.line(paired::PARTS, &agent_only("so far: a limiter"), &mut out);
        let hints = "<subdirectory-hints>\nuse tabs\n</subdirectory-hints>";
        p.line(2 * paired::PARTS, &agent_only(hints), &mut out);
        let kinds: Vec<&str> = out.events.values().map(|(_, e)| e.tag()).collect();
        assert_eq!(kinds, ["compacted", "compact", "user"]);
        assert!(matches!(
            out.events.values().last().unwrap().1,
            Event::UserMsg { harness: true, .. }
        ));
    }

    #[test]
    fn a_database_of_the_shape_is_recognised_and_opencodes_is_not() {
        assert!(recognises(&db()));
        let other = Connection::open_in_memory().unwrap();
        other
            .execute_batch("CREATE TABLE sessions (id TEXT, title TEXT); CREATE TABLE messages (id TEXT, data TEXT);")
            .unwrap();
        assert!(!recognises(&other));
    }
}
