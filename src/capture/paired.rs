//! A database's messages whose tool results arrive in the rows after them (Goose's
//! `messages`, Crush's `messages`): what a capture of one session reads, and each record it
//! makes, a message with the results that answer its calls.
//!
//! A message's position is its order in the session (its rowid's rank, from 1; the session
//! row is position 0), never the rowid itself: a harness that deletes a session's rows and
//! writes them again (Goose compacting a conversation) gives the same message the same
//! position, so what it wrote again is a no-op and not a second copy. Each message spans
//! [`PARTS`] positions, one per part, so a message with many calls never runs out of slots.
//!
//! A capture reads from the last message that is not only results, at or before the first
//! row changed since the cursor's mark: the message whose calls a new result answers is
//! read again with it (a no-op for what it had already said, a revision for the call that
//! finished).

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Emit, META_SLOT, model_name, str_at};
use crate::vocab::event::{Agent, Event, Seq, SessionId};

/// The positions one message spans: its parts', in order.
pub(crate) const PARTS: u64 = 64;

/// Where one session's capture stopped: the greatest mark (a rowid, or an update time) it
/// read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Mark {
    pub(crate) mark: i64,
}

/// How a harness keeps its sessions and their messages.
pub(crate) struct Table {
    /// The query of session `?1`'s cwd, parent session, creation time in milliseconds, and
    /// the provider and model it runs on (`NULL` where the harness does not keep one).
    pub(crate) session: &'static str,
    /// The messages table.
    pub(crate) name: &'static str,
    /// The column each row's mark is read from, and whether a row at the saved mark is
    /// new (a rowid: no; an update time in seconds: yes, it may have changed again in the
    /// same second).
    pub(crate) mark: &'static str,
    pub(crate) strict: bool,
    /// An SQL condition true of a row that holds only tool results.
    pub(crate) answers: &'static str,
    /// The columns a row's record is made of, read by `row` from index 2 on.
    pub(crate) columns: &'static str,
    /// A row as the adapter reads it: the message, or the results it holds.
    pub(crate) row: fn(&rusqlite::Row<'_>) -> rusqlite::Result<Value>,
}

/// Feed `f` the records of `session` changed since `since`: the session at position 0
/// (`{"session": {id, cwd, parent, created, provider, model}}`), then each message at its
/// first position, with `results` (the rows of results after it, as `row` read them).
/// Returns what to start from next time.
pub(crate) fn records(
    conn: &Connection,
    table: &Table,
    session: &str,
    since: Mark,
    mut f: impl FnMut(u64, &Value),
) -> rusqlite::Result<Mark> {
    let head = conn
        .query_row(table.session, [session], |r| {
            Ok(json!({"session": {
                "id": session,
                "cwd": r.get::<_, Option<String>>(0)?,
                "parent": r.get::<_, Option<String>>(1)?,
                "created": r.get::<_, Option<i64>>(2)?,
                "provider": r.get::<_, Option<String>>(3)?,
                "model": r.get::<_, Option<String>>(4)?,
            }}))
        })
        .optional()?;
    let Some(head) = head else { return Ok(since) };
    f(0, &head);
    let t = table.name;
    let cmp = if table.strict { ">" } else { ">=" };
    let first: Option<i64> = conn.query_row(
        &format!(
            "SELECT min(rowid) FROM {t} WHERE session_id = ?1 AND {} {cmp} ?2",
            table.mark
        ),
        params![session, since.mark],
        |r| r.get(0),
    )?;
    let Some(first) = first else { return Ok(since) };
    let start: i64 = conn.query_row(
        &format!(
            "SELECT coalesce(max(rowid), ?2) FROM {t}
             WHERE session_id = ?1 AND rowid <= ?2 AND NOT ({})",
            table.answers
        ),
        params![session, first],
        |r| r.get(0),
    )?;
    let before: i64 = conn.query_row(
        &format!("SELECT count(*) FROM {t} WHERE session_id = ?1 AND rowid < ?2"),
        params![session, start],
        |r| r.get(0),
    )?;
    let mut stmt = conn.prepare(&format!(
        "SELECT {}, ({}), {} FROM {t} WHERE session_id = ?1 AND rowid >= ?2 ORDER BY rowid",
        table.mark, table.answers, table.columns
    ))?;
    let mut rows = stmt.query(params![session, start])?;
    let mut next = since;
    let mut open: Option<(u64, Value, Vec<Value>)> = None;
    let mut ordinal = u64::try_from(before).unwrap_or(0);
    while let Some(r) = rows.next()? {
        ordinal += 1;
        next.mark = next.mark.max(r.get::<_, Option<i64>>(0)?.unwrap_or(0));
        let answers: bool = r.get::<_, Option<bool>>(1)?.unwrap_or(false);
        let value = (table.row)(r)?;
        if answers {
            // Results before any message of this read answer nothing it reads again.
            if let Some((_, _, results)) = open.as_mut() {
                results.push(value);
            }
            continue;
        }
        if let Some((position, message, results)) = open.take() {
            f(position, &record(message, results));
        }
        open = Some((ordinal * PARTS, value, Vec::new()));
    }
    if let Some((position, message, results)) = open {
        f(position, &record(message, results));
    }
    Ok(next)
}

fn record(message: Value, results: Vec<Value>) -> Value {
    json!({"message": message, "results": results})
}

/// A column holding JSON text, parsed; `null` where it is not JSON (a row that says
/// nothing readable).
pub(crate) fn json_column(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Value> {
    let text: Option<String> = r.get(i)?;
    Ok(text
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null))
}

/// The positions of a message's parts from its first, `base`: part `i` at `base + i`, the
/// parts past the span sharing its last position (and its slots).
pub(crate) struct Parts {
    base: u64,
    slots: Option<(u64, super::LineSlots)>,
}

impl Parts {
    pub(crate) fn new(base: u64) -> Parts {
        Parts { base, slots: None }
    }

    /// The slots of part `i`.
    pub(crate) fn of(&mut self, i: usize) -> &mut super::LineSlots {
        let position = self.base + (i as u64).min(PARTS - 1);
        if self.slots.as_ref().is_none_or(|(p, _)| *p != position) {
            self.slots = Some((position, super::LineSlots::new(position)));
        }
        &mut self.slots.as_mut().expect("set above").1
    }
}

/// What every session of a paired database has, whatever the harness: its id, where it ran,
/// the model it runs on, the newest time seen, the events that found no slot; the metadata
/// written once.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Head {
    pub(crate) session: Option<SessionId>,
    cwd: Option<String>,
    /// The session's model as its row names it when last read (see [`model_name`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    meta_done: bool,
    pub(crate) max_ts: i64,
    pub(crate) overflowed: u64,
}

impl Head {
    /// A session whose cwd is known before its row says (or when it never does).
    pub(crate) fn in_folder(cwd: Option<String>) -> Head {
        Head {
            cwd,
            ..Head::default()
        }
    }

    /// The session's record (position 0), written by `agent`: its `SessionMeta`, once.
    pub(crate) fn row(&mut self, s: &Value, agent: Agent, out: &mut Emit) {
        let Some(id) = str_at(s, "id") else { return };
        self.session = Some(SessionId(id.to_string()));
        if let Some(cwd) = str_at(s, "cwd") {
            self.cwd = Some(cwd.to_string());
        }
        self.model = model_name(str_at(s, "provider"), str_at(s, "model"));
        let ts = s.get("created").and_then(Value::as_i64).unwrap_or(0);
        self.saw(ts);
        if self.meta_done {
            return;
        }
        self.meta_done = true;
        out.event(
            Seq::at_line(0, META_SLOT),
            ts,
            Event::SessionMeta {
                cwd: self.cwd.clone().unwrap_or_default(),
                branch: None,
                agent: Some(agent),
                version: None,
                parent: str_at(s, "parent").map(|p| SessionId(p.to_string())),
                subagent: None,
            },
        );
    }

    pub(crate) fn saw(&mut self, ts: i64) {
        self.max_ts = self.max_ts.max(ts);
    }

    pub(crate) fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    pub(crate) fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }
}

/// A parser of a paired database's records: the session's `Head` and what a message says.
/// Each is a `TranscriptParser` through it.
pub(crate) trait Paired {
    /// The harness whose sessions these are.
    const AGENT: Agent;

    fn head(&self) -> &Head;

    fn head_mut(&mut self) -> &mut Head;

    /// The message record at `position` (see [`records`]).
    fn message(&mut self, position: u64, v: &Value, out: &mut Emit);

    /// What is provisional at the end of a capture (see `TranscriptParser::flush`).
    fn provisional(&self, out: &mut Emit);
}

/// Feed a [`Paired`] parser one record: the session's row, or a message.
pub(crate) fn read<T: Paired>(parser: &mut T, position: u64, value: &Value, out: &mut Emit) {
    match value.get("session") {
        Some(s) => parser.head_mut().row(s, T::AGENT, out),
        None => parser.message(position, value, out),
    }
}

/// A [`Paired`] parser's `TranscriptParser`, answered through its [`Head`]. A macro where a
/// blanket impl would overlap the chat adapters' ([`super::chat::ChatFormat`]).
macro_rules! paired_parser {
    ($parser:ty) => {
        impl $crate::capture::TranscriptParser for $parser {
            fn line(
                &mut self,
                line: u64,
                value: &serde_json::Value,
                out: &mut $crate::capture::Emit,
            ) {
                $crate::capture::paired::read(self, line, value, out);
            }

            fn flush(&self, out: &mut $crate::capture::Emit) {
                $crate::capture::paired::Paired::provisional(self, out);
            }

            fn session(&self) -> Option<$crate::vocab::event::SessionId> {
                $crate::capture::paired::Paired::head(self).session.clone()
            }

            fn last_ts(&self) -> i64 {
                $crate::capture::paired::Paired::head(self).max_ts
            }

            fn overflowed(&self) -> u64 {
                $crate::capture::paired::Paired::head(self).overflowed
            }
        }
    };
}
pub(crate) use paired_parser;

/// What a call was made on, for its `ToolCall`: the file, else the command, else the first
/// of `keys` its input has.
pub(crate) fn detail(
    path: Option<&String>,
    command: Option<&String>,
    input: &Value,
    keys: &[&str],
) -> String {
    path.or(command)
        .cloned()
        .or_else(|| {
            keys.iter()
                .find_map(|k| str_at(input, k))
                .map(str::to_string)
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: Table = Table {
        session: "SELECT NULL, NULL, NULL, NULL, NULL FROM m WHERE session_id = ?1 LIMIT 1",
        name: "m",
        mark: "rowid",
        strict: true,
        answers: "kind = 'result'",
        columns: "body",
        row: |r| Ok(Value::String(r.get(2)?)),
    };

    fn read(c: &Connection, since: Mark) -> (Mark, Vec<(u64, Value)>) {
        let mut got = Vec::new();
        let next = records(c, &TABLE, "s", since, |p, v| {
            // The session's own record, at 0, is the adapters' to read.
            if p > 0 {
                got.push((p, v.clone()))
            }
        })
        .unwrap();
        (next, got)
    }

    fn db() -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE TABLE m (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, kind TEXT, body TEXT);
             INSERT INTO m (session_id, kind, body) VALUES ('s', 'prompt', 'p1'), ('s', 'call', 'c1');",
        )
        .unwrap();
        c
    }

    #[test]
    fn a_result_that_arrives_later_reads_its_call_again_with_it_and_nothing_before() {
        let c = db();
        let (mark, first) = read(&c, Mark::default());
        assert_eq!(
            first,
            [
                (PARTS, json!({"message": "p1", "results": []})),
                (2 * PARTS, json!({"message": "c1", "results": []}))
            ]
        );
        c.execute_batch("INSERT INTO m (session_id, kind, body) VALUES ('s', 'result', 'r1'), ('t', 'prompt', 'other');")
            .unwrap();
        let (mark, second) = read(&c, mark);
        assert_eq!(
            second,
            [(2 * PARTS, json!({"message": "c1", "results": ["r1"]}))]
        );
        let (_, third) = read(&c, mark);
        assert!(third.is_empty(), "nothing changed: {third:?}");
    }

    #[test]
    fn rows_written_again_keep_their_positions() {
        let c = db();
        let (mark, first) = read(&c, Mark::default());
        // The harness deletes the session's rows and writes them again, one more at the end.
        c.execute_batch(
            "DELETE FROM m WHERE session_id = 's';
             INSERT INTO m (session_id, kind, body) VALUES ('s', 'prompt', 'p1'), ('s', 'call', 'c1'), ('s', 'prompt', 'p2');",
        )
        .unwrap();
        let (_, second) = read(&c, mark);
        assert_eq!(second[..2], first[..]);
        assert_eq!(
            second[2],
            (3 * PARTS, json!({"message": "p2", "results": []}))
        );
    }

    #[test]
    fn parts_past_the_span_share_its_last_position() {
        let mut parts = Parts::new(PARTS);
        assert_eq!(
            parts.of(0).meta(),
            crate::vocab::event::Seq::at_line(PARTS, 0)
        );
        let last = parts.of(PARTS as usize - 1).next().unwrap();
        let past = parts.of(PARTS as usize + 3).next().unwrap();
        assert_eq!(past.0, last.0 + 1, "the same line's next slot");
    }
}
