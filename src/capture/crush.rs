//! Crush sessions, from the SQLite database it keeps in the project (`.crush/crush.db`, its
//! `options.data_directory`).
//!
//! Follows charmbracelet/crush `internal/db/migrations/*.sql` and `internal/message/
//! content.go`, `message.go` (v0.90, 2026): a `sessions` row `{id, parent_session_id,
//! created_at}` and its `messages` rows `{id, role (user|assistant|tool), parts, model,
//! created_at, updated_at, is_summary_message}`, times in seconds. A message is written when
//! it starts and updated in place as it streams (`updated_at` moves on). `parts` is a JSON
//! list of `{type, data}`: `text` `{text}`, `reasoning`, `tool_call` `{id, name, input (JSON
//! text), finished}`, `tool_result` `{tool_call_id, name, content, is_error}` (in the `tool`
//! message after the call), `finish` `{reason (end_turn|tool_use|…), time}`,
//! `shell_command`, `image_url`, `binary`. Tools: `bash` `{command}`, `write` `{file_path,
//! content}`, `edit` `{file_path, old_string, new_string, replace_all}`, `multiedit`
//! `{file_path, edits}`, `view`, `agent` (a subagent, run in a child session whose id is
//! `<message id>$$<tool call id>` and whose `parent_session_id` is the caller's).
//!
//! The sessions table does not say where a session ran: the database is in its project, so
//! the folder holding `.crush` is the cwd. A summarised session's summary is an assistant
//! message with `is_summary_message`. Not in the format: the branch, the version. The model
//! is each message's (`provider`, `model`), recorded on its edits as `provider/model`.
//! `title-<id>` sessions (the harness naming a session) are not work and are not read.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::paired::{self, Head, Paired, Parts, Table};
use super::source;
use super::source::DbSession;
use super::turn::Call;
use super::{Emit, FileHints, absolute, model_name, str_at};
use crate::vocab::change::{Change, Replacement};
use crate::vocab::event::{Agent, Event, TouchOp};

/// The tools whose output only echoes what they were given or read.
const ECHO_TOOLS: &[&str] = &["view", "edit", "write", "multiedit", "todos"];

/// The folder Crush keeps its database in, inside the project.
pub(crate) const DATA_DIR: &str = ".crush";

/// Its database's name.
pub(crate) const DB: &str = "crush.db";

/// Its sessions and messages, each message with the tool results after it. The sessions
/// table keeps no cwd.
pub(crate) const MESSAGES: Table = Table {
    session: "SELECT NULL, parent_session_id, created_at * 1000, NULL, NULL
              FROM sessions WHERE id = ?1",
    name: "messages",
    mark: "updated_at",
    // Times are in seconds: a message updated again in the second last read is read again.
    strict: false,
    answers: "role = 'tool'",
    // Its times are seconds (`strftime('%s', 'now')`), peat's milliseconds.
    columns: "id, role, parts, created_at * 1000, is_summary_message, provider, model",
    row: message_row,
};

/// Whether `conn` is a Crush database: its sessions and messages tables with the columns
/// read here.
pub(crate) fn recognises(conn: &Connection) -> bool {
    source::has_columns(
        conn,
        "sessions",
        &["id", "parent_session_id", "title", "created_at"],
    ) && source::has_columns(
        conn,
        "messages",
        &[
            "id",
            "session_id",
            "role",
            "parts",
            "created_at",
            "updated_at",
            "is_summary_message",
            "provider",
            "model",
        ],
    )
}

/// Every session in the database but the harness's own titling ones, oldest first. None
/// names a folder: the database is in the project.
pub(crate) fn sessions(conn: &Connection) -> rusqlite::Result<Vec<DbSession>> {
    let mut stmt = conn.prepare(
        "SELECT id, NULL FROM sessions WHERE id NOT LIKE 'title-%' ORDER BY created_at, rowid",
    )?;
    stmt.query_map([], DbSession::of_row)?.collect()
}

fn message_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Value> {
    Ok(json!({
        "id": r.get::<_, Option<String>>(2)?,
        "role": r.get::<_, Option<String>>(3)?,
        "parts": paired::json_column(r, 4)?,
        "created": r.get::<_, Option<i64>>(5)?,
        "summary": r.get::<_, Option<bool>>(6)?.unwrap_or(false),
        "model": model_name(
            r.get::<_, Option<String>>(7)?.as_deref(),
            r.get::<_, Option<String>>(8)?.as_deref(),
        ),
    }))
}

/// The `data` of a part of type `kind`.
fn data_of<'a>(part: &'a Value, kind: &str) -> Option<&'a Value> {
    (str_at(part, "type") == Some(kind)).then(|| part.get("data").unwrap_or(&Value::Null))
}

/// The Crush parser: what one session's records need remembered between captures.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Crush {
    head: Head,
}

impl Crush {
    /// The database at `hints.path` is in `<project>/.crush/`: the project is the cwd.
    pub(crate) fn new(hints: &FileHints) -> Crush {
        let cwd = hints
            .path
            .parent()
            .and_then(Path::parent)
            .map(|p| p.to_string_lossy().into_owned());
        Crush {
            head: Head::in_folder(cwd),
        }
    }

    fn read(&mut self, position: u64, v: &Value, out: &mut Emit) {
        let message = v.get("message").unwrap_or(&Value::Null);
        let ts = message.get("created").and_then(Value::as_i64).unwrap_or(0);
        self.head.saw(ts);
        let user = str_at(message, "role") == Some("user");
        let summary = message.get("summary").and_then(Value::as_bool) == Some(true);
        let parts: Vec<&Value> = message
            .get("parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .collect();
        let results: HashMap<&str, &Value> = v
            .get("results")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| r.get("parts").and_then(Value::as_array))
            .flatten()
            .filter_map(|p| data_of(p, "tool_result"))
            .filter_map(|d| Some((str_at(d, "tool_call_id")?, d)))
            .collect();
        // An answer that finished its turn closes it with its last text.
        let closes = parts
            .iter()
            .filter_map(|p| data_of(p, "finish"))
            .any(|d| str_at(d, "reason") == Some("end_turn"));
        let last_text = parts.iter().rposition(|p| data_of(p, "text").is_some());
        let mut slots = Parts::new(position);
        for (i, part) in parts.iter().enumerate() {
            let slots = slots.of(i);
            if let Some(data) = data_of(part, "text") {
                let text = str_at(data, "text").unwrap_or("").to_string();
                if text.trim().is_empty() {
                    continue;
                }
                let mut events = Vec::new();
                if user {
                    events.push(Event::UserMsg {
                        text,
                        harness: false,
                        context: None,
                    });
                } else if summary {
                    events.push(Event::Compaction {});
                    events.push(Event::CompactSummary { text });
                } else if closes && Some(i) == last_text {
                    events.push(Event::FinalMsg { text });
                } else {
                    events.push(Event::Said { text });
                }
                for event in events {
                    match slots.next() {
                        Some(seq) => out.event(seq, ts, event),
                        None => self.head.overflowed += 1,
                    }
                }
            } else if let Some(data) = data_of(part, "tool_call") {
                let id = str_at(data, "id").unwrap_or("");
                let call = self.call(message, data, results.get(id).copied());
                self.head.overflowed += call.emit(slots, ts, out);
            }
        }
    }

    fn call(&self, message: &Value, data: &Value, result: Option<&Value>) -> Call {
        let tool = str_at(data, "name").unwrap_or("unknown");
        // The input is the model's JSON as text (partial while it streams).
        let input: Value = str_at(data, "input")
            .and_then(|i| serde_json::from_str(i).ok())
            .unwrap_or(Value::Null);
        let arg = |k: &str| str_at(&input, k);
        let cwd = self.head.cwd();
        let path = arg("file_path").map(|p| absolute(p, cwd));
        let replacement = |e: &Value| Replacement {
            old: str_at(e, "old_string").unwrap_or("").to_string(),
            new: str_at(e, "new_string").unwrap_or("").to_string(),
            replace_all: e.get("replace_all").and_then(Value::as_bool) == Some(true),
        };
        let change = match tool {
            "write" => Some((TouchOp::Write, Change::write(arg("content").unwrap_or("")))),
            "edit" => Some((TouchOp::Edit, Change::Edit(replacement(&input)))),
            "multiedit" => Some((
                TouchOp::MultiEdit,
                Change::MultiEdit {
                    edits: input
                        .get("edits")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .map(replacement)
                        .collect(),
                },
            )),
            _ => None,
        };
        let edits = match (change, &path) {
            (Some((op, change)), Some(p)) => vec![(p.clone(), op, change)],
            _ => Vec::new(),
        };
        let command = (tool == "bash")
            .then(|| arg("command").map(str::to_string))
            .flatten();
        let detail = paired::detail(
            path.as_ref(),
            command.as_ref(),
            &input,
            &["description", "pattern", "url", "prompt"],
        );
        // The agent tool runs its subagent in a session named for the message and the call.
        let agent = (tool == "agent")
            .then(|| {
                Some(format!(
                    "{}$${}",
                    str_at(message, "id")?,
                    str_at(data, "id")?
                ))
            })
            .flatten();
        Call {
            tool: tool.to_string(),
            detail,
            ok: result.is_none_or(|r| r.get("is_error").and_then(Value::as_bool) != Some(true)),
            agent,
            edits,
            output: result
                .and_then(|r| str_at(r, "content"))
                .map(str::to_string),
            echo: ECHO_TOOLS.contains(&tool),
            command,
            model: str_at(message, "model").map(str::to_string),
        }
    }
}

paired::paired_parser!(Crush);

impl Paired for Crush {
    const AGENT: Agent = Agent::Crush;

    fn head(&self) -> &Head {
        &self.head
    }

    fn head_mut(&mut self) -> &mut Head {
        &mut self.head
    }

    fn message(&mut self, position: u64, v: &Value, out: &mut Emit) {
        self.read(position, v, out);
    }

    /// Nothing is provisional: a message's closing text is decided by the message itself,
    /// and read again when the message is updated.
    fn provisional(&self, _out: &mut Emit) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::TranscriptParser;
    use crate::capture::paired::Mark;
    use crate::vocab::event::Seq;

    fn db() -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(include_str!("../../tests/fixtures/crush/schema.sql"))
            .unwrap();
        c.execute_batch(r#"
            INSERT INTO sessions (id, title, created_at, updated_at) VALUES ('s1', 'limiter', 1784019600, 1784019600);
            INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES
              ('m1', 's1', 'user', '[{"type":"text","data":{"text":"add a"}}]', 1784019660, 1784019660),
              ('m2', 's1', 'assistant', '[{"type":"text","data":{"text":"writing a"}},{"type":"tool_call","data":{"id":"c1","name":"write","input":"{\"file_path\":\"a.txt\",\"content\":\"a\\n\"}","finished":true}}]', 1784019661, 1784019661);
            "#).unwrap();
        c
    }

    fn capture(c: &Connection, since: Mark, p: &mut Crush) -> (Mark, Emit) {
        let mut out = Emit::default();
        let next =
            paired::records(c, &MESSAGES, "s1", since, |pos, v| p.line(pos, v, &mut out)).unwrap();
        (next, out)
    }

    #[test]
    fn the_cwd_is_the_folder_holding_crush_and_a_result_revises_its_call() {
        let c = db();
        let mut p = Crush::new(&FileHints {
            path: "/r/.crush/crush.db".into(),
            ..FileHints::default()
        });
        let (since, first) = capture(&c, Mark::default(), &mut p);
        assert!(matches!(
            &first.events[&Seq(0)].1,
            Event::SessionMeta { cwd, agent: Some(Agent::Crush), .. } if cwd == "/r"
        ));
        c.execute_batch(r#"
            INSERT INTO messages (id, session_id, role, parts, created_at, updated_at) VALUES
              ('m3', 's1', 'tool', '[{"type":"tool_result","data":{"tool_call_id":"c1","name":"write","content":"permission denied","is_error":true}}]', 1784019662, 1784019662);
            UPDATE messages SET parts = json_insert(parts, '$[#]', json('{"type":"finish","data":{"reason":"end_turn","time":1784019663}}')), updated_at = 1784019663 WHERE id = 'm2';
            "#).unwrap();
        let (_, second) = capture(&c, since, &mut p);
        assert!(second.events.values().any(|(_, e)| matches!(
            e,
            Event::FileTouch { path, failed: true, .. } if path == "/r/a.txt"
        )));
        assert!(
            second
                .events
                .values()
                .any(|(_, e)| matches!(e, Event::FinalMsg { text } if text == "writing a"))
        );
        assert!(
            !second
                .events
                .values()
                .any(|(_, e)| matches!(e, Event::UserMsg { .. })),
            "the prompt before was not read again: {:?}",
            second.events
        );
    }

    #[test]
    fn an_edit_names_the_provider_and_model_of_its_message() {
        let model = |c: &Connection| {
            let (_, out) = capture(c, Mark::default(), &mut Crush::default());
            out.events.values().find_map(|(_, e)| match e {
                Event::FileTouch { model, .. } => Some(model.clone()),
                _ => None,
            })
        };
        let c = db();
        assert_eq!(model(&c), Some(None), "a message with no model names none");
        c.execute_batch(
            "UPDATE messages SET provider = 'anthropic', model = 'claude-sonnet-4-5' WHERE id = 'm2'",
        )
        .unwrap();
        assert_eq!(
            model(&c),
            Some(Some("anthropic/claude-sonnet-4-5".to_string()))
        );
        c.execute_batch("UPDATE messages SET provider = NULL WHERE id = 'm2'")
            .unwrap();
        assert_eq!(model(&c), Some(Some("claude-sonnet-4-5".to_string())));
    }

    #[test]
    fn a_summary_message_is_a_compaction_and_titling_sessions_are_not_read() {
        let c = db();
        c.execute_batch(r#"
            INSERT INTO sessions (id, parent_session_id, title, created_at, updated_at) VALUES ('title-s1', 's1', 't', 1784019601, 1784019601);
            INSERT INTO messages (id, session_id, role, parts, created_at, updated_at, is_summary_message) VALUES
              ('m9', 's1', 'assistant', '[{"type":"text","data":{"text":"so far: a limiter"}}]', 1784019700, 1784019700, 1);
            "#).unwrap();
        let ids: Vec<String> = sessions(&c).unwrap().into_iter().map(|s| s.id).collect();
        assert_eq!(ids, ["s1"]);
        let (_, out) = capture(&c, Mark::default(), &mut Crush::default());
        let kinds: Vec<&str> = out.events.values().map(|(_, e)| e.tag()).collect();
        assert_eq!(kinds.last_chunk::<2>(), Some(&["compacted", "compact"]));
    }

    #[test]
    fn a_database_of_the_shape_is_recognised_and_gooses_is_not() {
        assert!(recognises(&db()));
        let goose = Connection::open_in_memory().unwrap();
        goose
            .execute_batch(include_str!("../../tests/fixtures/goose/schema.sql"))
            .unwrap();
        assert!(!recognises(&goose));
        assert!(!super::super::goose::recognises(&db()));
    }
}
