//! OpenCode sessions, from its SQLite database (`~/.local/share/opencode/opencode.db`,
//! OpenCode 1.2 and later), and from the JSON files it kept them in before
//! (`storage/session/<project>/<id>.json`, `storage/message/<session>/<id>.json`,
//! `storage/part/<message>/<id>.json`: the same session, message and part objects, with
//! their ids and `parentID`/`projectID` spelt so).
//!
//! Follows `packages/opencode/src/session/session.sql.ts` and `message-v2.ts` (OpenCode
//! 1.14): a `session` row `{id, parent_id, directory, version, time_created}`, its
//! `message` rows (`data`: a user message `{role, time, agent, model}` or an assistant one
//! `{role, modelID, providerID, path: {cwd, root}, finish, summary, error}`, whose model
//! each of its edits records as `provider/model`) and their `part` rows
//! (`data`: `{type: text|tool|compaction|reasoning|step-start|…}`; a tool part holds its
//! call and its result together: `{tool, callID, state: {status, input, output | error,
//! metadata, time}}`). Parts are updated in place as they stream (a tool goes pending,
//! running, completed), keeping their rowid.
//!
//! One database holds every session: each is captured as its own unit, with its own
//! cursor. A record's position is its part's rowid (the session row is position 0), so a
//! part updated in place is a revision of the same seqs; a capture reads only the parts
//! (and the parts of the messages) updated since the newest update it saw.
//!
//! A child session (`parent_id`) is a subagent: its `task` call in the parent names it.
//! Not in the format: the branch. Reasoning, step and snapshot parts say nothing a
//! person reads.

use std::io;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::source;
use super::source::DbSession;
use super::turn::Call;
use super::{Emit, LineSlots, META_SLOT, TranscriptParser, absolute, model_name, patch, str_at};
use crate::vocab::change::{Change, Replacement};
use crate::vocab::event::{Agent, Event, Seq, SessionId, TouchOp};

/// The tools whose output only echoes what they were given or read.
const ECHO_TOOLS: &[&str] = &[
    "read",
    "edit",
    "write",
    "multiedit",
    "todowrite",
    "todoread",
];

/// Whether `conn` is an OpenCode database: its session, message and part tables, with the
/// columns read here. Anything else is refused.
pub(crate) fn recognises(conn: &Connection) -> bool {
    let has = |table: &str, columns: &[&str]| source::has_columns(conn, table, columns);
    has(
        "session",
        &["id", "parent_id", "directory", "version", "time_created"],
    ) && has("message", &["id", "session_id", "time_updated", "data"])
        && has(
            "part",
            &["id", "message_id", "session_id", "time_updated", "data"],
        )
}

/// Every session in the database with the folder it worked in, oldest first.
pub(crate) fn sessions(conn: &Connection) -> rusqlite::Result<Vec<DbSession>> {
    let mut stmt = conn.prepare("SELECT id, directory FROM session ORDER BY time_created, id")?;
    stmt.query_map([], DbSession::of_row)?.collect()
}

/// The newest updates a capture of one session has read: its parts' and its messages'.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Since {
    part: i64,
    message: i64,
}

/// Feed `f` the records of `session` updated since `since` (position and record): the
/// session row at position 0, then each part at its rowid. Returns what to start from next
/// time. An update in the same millisecond as the newest one read is read again, which
/// costs a no-op upsert and never misses it.
pub(crate) fn records(
    conn: &Connection,
    session: &str,
    since: Since,
    mut f: impl FnMut(u64, &Value),
) -> rusqlite::Result<Since> {
    let row = conn
        .query_row(
            "SELECT directory, parent_id, version, time_created FROM session WHERE id = ?1",
            [session],
            |r| {
                Ok(session_record(
                    session,
                    r.get::<_, Option<String>>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<i64>>(3)?,
                ))
            },
        )
        .optional()?;
    let Some(row) = row else { return Ok(since) };
    f(0, &row);
    // `last_text`: the part is its message's last text part, the one a finished answer
    // closes its turn with.
    let mut stmt = conn.prepare(
        "SELECT p.rowid, p.data, m.data, p.time_updated, m.time_updated,
                p.id = (SELECT max(q.id) FROM part q WHERE q.message_id = p.message_id
                        AND json_extract(q.data, '$.type') = 'text')
         FROM part p JOIN message m ON m.id = p.message_id
         WHERE p.session_id = ?1 AND (p.time_updated >= ?2 OR m.time_updated >= ?3)
         ORDER BY p.rowid",
    )?;
    let mut rows = stmt.query(params![session, since.part, since.message])?;
    let mut next = since;
    while let Some(r) = rows.next()? {
        let rowid: i64 = r.get(0)?;
        let part: String = r.get(1)?;
        let message: String = r.get(2)?;
        next.part = next.part.max(r.get::<_, Option<i64>>(3)?.unwrap_or(0));
        next.message = next.message.max(r.get::<_, Option<i64>>(4)?.unwrap_or(0));
        let last_text: Option<bool> = r.get(5)?;
        // A row whose JSON does not parse is skipped: it says nothing readable.
        let (Ok(part), Ok(message)) = (
            serde_json::from_str::<Value>(&part),
            serde_json::from_str::<Value>(&message),
        ) else {
            continue;
        };
        let record = part_record(part, message, last_text == Some(true));
        f(u64::try_from(rowid).unwrap_or(0), &record);
    }
    Ok(next)
}

/// The record of a session, at position 0, whichever store it came from.
fn session_record(
    id: &str,
    directory: Option<String>,
    parent: Option<String>,
    version: Option<String>,
    created: Option<i64>,
) -> Value {
    json!({"session": {
        "id": id,
        "directory": directory,
        "parent_id": parent,
        "version": version,
        "time_created": created,
    }})
}

/// The record of a part, with its message and whether it is its message's last text.
fn part_record(part: Value, message: Value, last_text: bool) -> Value {
    json!({"part": part, "message": message, "last_text": last_text})
}

/// Whether `v` is an OpenCode session as its older storage kept it.
pub(crate) fn is_session_info(v: &Value) -> bool {
    str_at(v, "id").is_some_and(|id| id.starts_with("ses"))
        && str_at(v, "projectID").is_some()
        && str_at(v, "directory").is_some()
        && v.get("time").is_some_and(Value::is_object)
}

/// A stored session's files: each message's, with its parts', oldest first (their ids
/// ascend with time, so their names sort in the order they were made).
pub(crate) struct StoredTree {
    messages: Vec<(PathBuf, Vec<PathBuf>)>,
}

impl StoredTree {
    /// The files of the session `info` under `storage`. A folder that does not exist holds
    /// nothing yet (a session with no message, a message with no part).
    pub(crate) fn list(storage: &Path, info: &Value) -> io::Result<StoredTree> {
        let id = str_at(info, "id").unwrap_or_default();
        let mut messages = Vec::new();
        for message in json_files(&storage.join("message").join(id))? {
            let stem = message.file_stem().unwrap_or_default().to_owned();
            let parts = json_files(&storage.join("part").join(stem))?;
            messages.push((message, parts));
        }
        Ok(StoredTree { messages })
    }

    /// Every file of the session, its own `session` file first: what its fingerprint is of.
    pub(crate) fn files(&self, session: &Path) -> Vec<PathBuf> {
        std::iter::once(session.to_path_buf())
            .chain(
                self.messages
                    .iter()
                    .flat_map(|(m, parts)| std::iter::once(m).chain(parts))
                    .cloned(),
            )
            .collect()
    }

    /// The session's records: the session at position 0, then each part in order. A file
    /// that cannot be read or is not JSON is skipped and counted, and keeps its position.
    pub(crate) fn records(&self, info: &Value) -> (Vec<Value>, u64) {
        let text = |k: &str| str_at(info, k).map(str::to_string);
        let created = info
            .get("time")
            .and_then(|t| t.get("created"))
            .and_then(Value::as_i64);
        let id = str_at(info, "id").unwrap_or_default();
        let mut records = vec![session_record(
            id,
            text("directory"),
            text("parentID"),
            text("version"),
            created,
        )];
        let mut skipped = 0;
        let read =
            |p: &Path| -> Option<Value> { serde_json::from_slice(&std::fs::read(p).ok()?).ok() };
        for (message, parts) in &self.messages {
            let message = read(message);
            let parts: Vec<Option<Value>> = parts.iter().map(|p| read(p)).collect();
            let last_text = parts
                .iter()
                .rposition(|p| p.as_ref().and_then(|p| str_at(p, "type")) == Some("text"));
            for (i, part) in parts.into_iter().enumerate() {
                match (part, &message) {
                    (Some(part), Some(message)) => {
                        records.push(part_record(part, message.clone(), Some(i) == last_text));
                    }
                    _ => {
                        skipped += 1;
                        records.push(Value::Null);
                    }
                }
            }
        }
        (records, skipped)
    }
}

/// The `.json` files directly in `dir`, by name; none when it does not exist.
fn json_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "json") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// The OpenCode parser: what one session's records need remembered between captures.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct OpenCode {
    session: Option<SessionId>,
    cwd: Option<String>,
    meta_done: bool,
    max_ts: i64,
    overflowed: u64,
}

impl OpenCode {
    fn session_row(&mut self, position: u64, s: &Value, out: &mut Emit) {
        let Some(id) = str_at(s, "id") else { return };
        self.session = Some(SessionId(id.to_string()));
        self.cwd = str_at(s, "directory").map(str::to_string);
        let ts = s.get("time_created").and_then(Value::as_i64).unwrap_or(0);
        self.max_ts = self.max_ts.max(ts);
        if self.meta_done {
            return;
        }
        self.meta_done = true;
        out.event(
            Seq::at_line(position, META_SLOT),
            ts,
            Event::SessionMeta {
                cwd: self.cwd.clone().unwrap_or_default(),
                branch: None,
                agent: Some(Agent::OpenCode),
                version: str_at(s, "version").map(str::to_string),
                parent: str_at(s, "parent_id").map(|p| SessionId(p.to_string())),
                subagent: None,
            },
        );
    }

    fn part(&mut self, position: u64, v: &Value, out: &mut Emit) {
        let part = v.get("part").unwrap_or(&Value::Null);
        let message = v.get("message").unwrap_or(&Value::Null);
        let created = message
            .get("time")
            .and_then(|t| t.get("created"))
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let mut slots = LineSlots::new(position);
        match str_at(part, "type") {
            Some("text") => {
                let ts = part
                    .get("time")
                    .and_then(|t| t.get("start"))
                    .and_then(Value::as_i64)
                    .unwrap_or(created);
                self.max_ts = self.max_ts.max(ts);
                let text = str_at(part, "text").unwrap_or("").to_string();
                if text.trim().is_empty()
                    || part.get("ignored").and_then(Value::as_bool) == Some(true)
                {
                    return;
                }
                let event = if str_at(message, "role") == Some("user") {
                    Event::UserMsg {
                        text,
                        harness: part.get("synthetic").and_then(Value::as_bool) == Some(true),
                        context: None,
                    }
                } else if message.get("summary").and_then(Value::as_bool) == Some(true) {
                    Event::CompactSummary { text }
                } else if closes_turn(message) && v.get("last_text") == Some(&Value::Bool(true)) {
                    Event::FinalMsg { text }
                } else {
                    Event::Said { text }
                };
                if let Some(seq) = slots.next() {
                    out.event(seq, ts, event);
                }
            }
            Some("tool") => {
                let state = part.get("state").unwrap_or(&Value::Null);
                let ts = state
                    .get("time")
                    .and_then(|t| t.get("start"))
                    .and_then(Value::as_i64)
                    .unwrap_or(created);
                self.max_ts = self.max_ts.max(ts);
                let tool = str_at(part, "tool").unwrap_or("unknown");
                let call = self.call(tool, state, model_of(message));
                self.overflowed += call.emit(&mut slots, ts, out);
            }
            Some("compaction") => {
                self.max_ts = self.max_ts.max(created);
                if let Some(seq) = slots.next() {
                    out.event(seq, created, Event::Compaction {});
                }
            }
            _ => {}
        }
    }

    /// A tool part's call, in the message the model `model` wrote.
    fn call(&self, tool: &str, state: &Value, model: Option<String>) -> Call {
        let input = state.get("input").unwrap_or(&Value::Null);
        let arg = |k: &str| str_at(input, k);
        let status = str_at(state, "status");
        let ok = status != Some("error");
        let cwd = self.cwd.as_deref();
        let path = arg("filePath").map(|p| absolute(p, cwd));
        let replacement = |e: &Value| Replacement {
            old: str_at(e, "oldString").unwrap_or("").to_string(),
            new: str_at(e, "newString").unwrap_or("").to_string(),
            replace_all: e.get("replaceAll").and_then(Value::as_bool) == Some(true),
        };
        let edits = match (tool, &path) {
            ("write", Some(p)) => vec![(
                p.clone(),
                TouchOp::Write,
                Change::write(arg("content").unwrap_or("")),
            )],
            ("edit", Some(p)) => vec![(p.clone(), TouchOp::Edit, Change::Edit(replacement(input)))],
            ("multiedit", Some(p)) => vec![(
                p.clone(),
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
            )],
            // The patch format Codex's apply_patch reads, given to models that prefer it.
            ("apply_patch", _) => patch::parse_patch(arg("patchText").unwrap_or(""))
                .into_iter()
                .map(|op| patch::touch(op, cwd))
                .collect(),
            _ => Vec::new(),
        };
        let command = (tool == "bash")
            .then(|| arg("command").map(str::to_string))
            .flatten();
        let detail = path
            .clone()
            .or_else(|| command.clone())
            .or_else(|| arg("description").map(str::to_string))
            .or_else(|| arg("pattern").map(str::to_string))
            .or_else(|| arg("url").map(str::to_string))
            .unwrap_or_default();
        let output = match status {
            Some("error") => str_at(state, "error"),
            _ => str_at(state, "output"),
        };
        Call {
            tool: tool.to_string(),
            detail,
            ok,
            // A `task` call's metadata names the child session it ran the subagent in.
            agent: state
                .get("metadata")
                .and_then(|m| str_at(m, "sessionId"))
                .map(str::to_string),
            edits,
            output: output.map(str::to_string),
            echo: ECHO_TOOLS.contains(&tool),
            command,
            model,
        }
    }
}

/// The model an assistant message names (`providerID`, `modelID`), as `provider/model`.
fn model_of(message: &Value) -> Option<String> {
    model_name(str_at(message, "providerID"), str_at(message, "modelID"))
}

/// Whether an assistant message ended its turn: it finished, and not to call tools.
fn closes_turn(message: &Value) -> bool {
    str_at(message, "role") == Some("assistant")
        && matches!(str_at(message, "finish"), Some(f) if f != "tool-calls" && f != "unknown")
}

impl TranscriptParser for OpenCode {
    fn line(&mut self, line: u64, value: &Value, out: &mut Emit) {
        match value.get("session") {
            Some(s) => self.session_row(line, s, out),
            None => self.part(line, value, out),
        }
    }

    /// Nothing is provisional: a message's closing text is decided by the message itself,
    /// and read again when the message is updated.
    fn flush(&self, _out: &mut Emit) {}

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

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = "
        CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, slug TEXT,
            directory TEXT NOT NULL, title TEXT, version TEXT, time_created INTEGER, time_updated INTEGER);
        CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER,
            time_updated INTEGER, data TEXT NOT NULL);
        CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT,
            time_created INTEGER, time_updated INTEGER, data TEXT NOT NULL);";

    fn db() -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(SCHEMA).unwrap();
        c.execute_batch(r#"
            INSERT INTO session VALUES ('ses_1', 'p', NULL, 's', '/r', 't', '1.14.0', 1000, 1000);
            INSERT INTO message VALUES ('msg_1', 'ses_1', 1001, 1001, '{"role":"user","time":{"created":1001}}');
            INSERT INTO part VALUES ('prt_1', 'msg_1', 'ses_1', 1001, 1001, '{"type":"text","text":"add a"}');
            INSERT INTO message VALUES ('msg_2', 'ses_1', 1002, 1002, '{"role":"assistant","time":{"created":1002}}');
            INSERT INTO part VALUES ('prt_2', 'msg_2', 'ses_1', 1002, 1002,
                '{"type":"tool","tool":"write","callID":"c","state":{"status":"running","input":{"filePath":"a.txt","content":"a\n"},"time":{"start":1002}}}');
            "#).unwrap();
        c
    }

    fn capture(c: &Connection, since: Since, p: &mut OpenCode) -> (Since, Emit) {
        let mut out = Emit::default();
        let next = records(c, "ses_1", since, |pos, v| p.line(pos, v, &mut out)).unwrap();
        (next, out)
    }

    #[test]
    fn an_apply_patch_over_two_files_is_one_touch_holding_both_under_its_messages_model() {
        let mut p = OpenCode {
            cwd: Some("/r".into()),
            ..OpenCode::default()
        };
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-old\n+new\n*** Add File: src/b.rs\n+fresh\n*** End Patch";
        let record = json!({"part": {"type": "tool", "tool": "apply_patch", "callID": "c",
            "state": {"status": "completed", "input": {"patchText": patch}, "output": "Success.", "time": {"start": 5}}},
            "message": {"role": "assistant", "time": {"created": 4},
                        "providerID": "openai", "modelID": "gpt-5.1-codex"}});
        let mut out = Emit::default();
        p.line(3, &record, &mut out);
        let events: Vec<Event> = out.events.values().map(|(_, e)| e.clone()).collect();
        assert_eq!(
            crate::capture::sample::models(&events),
            [
                ("/r/src/a.rs", Some("openai/gpt-5.1-codex")),
                ("/r/src/b.rs", Some("openai/gpt-5.1-codex")),
            ]
        );
        let touch = out
            .events
            .values()
            .find_map(|(_, e)| match e {
                Event::FileTouch { path, op, more, .. } => Some((path.clone(), *op, more.clone())),
                _ => None,
            })
            .unwrap();
        assert_eq!(touch.0, "/r/src/a.rs");
        assert_eq!(touch.1, TouchOp::PatchUpdate);
        assert_eq!(touch.2.len(), 1);
        assert_eq!(touch.2[0].path, "/r/src/b.rs");
        assert_eq!(touch.2[0].op, TouchOp::PatchAdd);
        assert_eq!(out.blobs.len(), 2, "each file's change is kept");
    }

    #[test]
    fn a_database_of_the_shape_is_recognised_and_another_refused() {
        assert!(recognises(&db()));
        let other = Connection::open_in_memory().unwrap();
        other
            .execute_batch("CREATE TABLE session (id TEXT, data TEXT);")
            .unwrap();
        assert!(!recognises(&other));
    }

    #[test]
    fn a_part_updated_in_place_is_read_again_at_its_seqs_and_nothing_else_is() {
        let c = db();
        let mut p = OpenCode::default();
        let (since, first) = capture(&c, Since::default(), &mut p);
        assert_eq!(first.events.len(), 4, "{:?}", first.events);
        assert!(matches!(
            &first.events[&Seq(0)].1,
            Event::SessionMeta { cwd, agent: Some(Agent::OpenCode), .. } if cwd == "/r"
        ));
        // The tool finishes: its row is updated where it was.
        c.execute_batch(r#"UPDATE part SET time_updated = 1005, data = '{"type":"tool","tool":"write","callID":"c","state":{"status":"error","error":"disk full","input":{"filePath":"a.txt","content":"a\n"},"time":{"start":1002,"end":1005}}}' WHERE id = 'prt_2';"#).unwrap();
        let (_, second) = capture(&c, since, &mut p);
        let seqs: Vec<Seq> = second.events.keys().copied().collect();
        // The session row (a no-op) and the tool's own slots, rowid 2: nothing of rowid 1.
        assert!(seqs.iter().all(|s| s.0 == 0 || s.0 / 16 == 2), "{seqs:?}");
        assert!(second.events.values().any(|(_, e)| matches!(
            e,
            Event::FileTouch { path, failed: true, .. } if path == "/r/a.txt"
        )));
    }
}
