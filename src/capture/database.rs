//! The SQLite databases capture reads, one harness each: which harness a database is (by
//! its tables, see each adapter's `recognises`), the sessions it holds, and one session's
//! records since its cursor. The driver reads every database through here and knows no
//! harness's tables.

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::detect::Format;
use super::source::DbSession;
use super::{crush, goose, opencode, paired};

/// The harness that wrote `conn`, if any adapter recognises its tables.
pub(crate) fn recognise(conn: &Connection) -> Option<Format> {
    if opencode::recognises(conn) {
        Some(Format::OpenCode)
    } else if goose::recognises(conn) {
        Some(Format::Goose)
    } else if crush::recognises(conn) {
        Some(Format::Crush)
    } else {
        None
    }
}

/// Every session of the database `format` wrote, oldest first.
pub(crate) fn sessions(conn: &Connection, format: Format) -> rusqlite::Result<Vec<DbSession>> {
    match format {
        Format::Goose => goose::sessions(conn),
        Format::Crush => crush::sessions(conn),
        _ => opencode::sessions(conn),
    }
}

/// What a capture of one session has read: OpenCode's parts' and messages' newest updates,
/// or the mark of the rows the paired adapters read. Untagged, so an OpenCode cursor saved
/// before there was a second kind is read as it was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum Since {
    OpenCode(opencode::Since),
    Rows(paired::Mark),
}

impl Since {
    /// Nothing read yet, of a database `format` wrote.
    pub(crate) fn start(format: Format) -> Since {
        match format {
            Format::Goose | Format::Crush => Since::Rows(paired::Mark::default()),
            _ => Since::OpenCode(opencode::Since::default()),
        }
    }
}

/// Feed `f` the records of `session` changed since `since` (position and record); returns
/// what to start from next time. A cursor of another kind than `format` reads (a database
/// replaced by another harness's) starts over.
pub(crate) fn records(
    conn: &Connection,
    format: Format,
    session: &str,
    since: Since,
    f: impl FnMut(u64, &Value),
) -> rusqlite::Result<Since> {
    Ok(match (format, since) {
        (Format::Goose | Format::Crush, since) => {
            let table = match format {
                Format::Goose => goose::messages(conn),
                _ => &crush::MESSAGES,
            };
            let mark = match since {
                Since::Rows(mark) => mark,
                Since::OpenCode(_) => paired::Mark::default(),
            };
            Since::Rows(paired::records(conn, table, session, mark, f)?)
        }
        (_, Since::OpenCode(s)) => Since::OpenCode(opencode::records(conn, session, s, f)?),
        (_, Since::Rows(_)) => {
            Since::OpenCode(opencode::records(conn, session, Default::default(), f)?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_opencode_cursor_saved_before_reads_as_it_was_written() {
        let saved: Since = serde_json::from_str(r#"{"part":5,"message":7}"#).unwrap();
        assert!(matches!(saved, Since::OpenCode(_)));
        assert_eq!(
            serde_json::to_string(&saved).unwrap(),
            r#"{"part":5,"message":7}"#
        );
        let rows: Since = serde_json::from_str(r#"{"mark":3}"#).unwrap();
        assert_eq!(rows, Since::Rows(paired::Mark { mark: 3 }));
    }

    #[test]
    fn each_database_is_recognised_as_the_harness_whose_tables_it_has() {
        let of = |schema: &str| {
            let c = Connection::open_in_memory().unwrap();
            c.execute_batch(schema).unwrap();
            recognise(&c)
        };
        assert_eq!(
            of(include_str!("../../tests/fixtures/goose/schema.sql")),
            Some(Format::Goose)
        );
        assert_eq!(
            of(include_str!("../../tests/fixtures/crush/schema.sql")),
            Some(Format::Crush)
        );
        let opencode = include_str!("../../tests/fixtures/opencode/opencode.sql");
        assert_eq!(
            of(opencode.split("INSERT").next().unwrap()),
            Some(Format::OpenCode)
        );
        assert_eq!(of("CREATE TABLE sessions (id TEXT);"), None);
    }
}
