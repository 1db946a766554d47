//! Where a transcript's records come from. Every kind yields records (a JSON value each) at
//! stable positions, and a record's events take the seqs of its position
//! ([`super::LineSlots`]), so seqs stay a pure function of the source whatever its kind:
//!
//! - [`Kind::Lines`]: a JSONL file, read from the byte offset the cursor saved (`reader`);
//!   a record's position is its raw line index.
//! - [`Kind::Document`]: one JSON document the harness rewrites whole (Gemini CLI's older
//!   `chats/session-*.json`, a Cline task's `api_conversation_history.json`, an Amp
//!   thread). Position 0 is the document without its records array (nothing, for a
//!   document that is the array), and record `i` of the array is at position `i + 1`. A document whose [`Fingerprint`] is
//!   unchanged is skipped; a changed one is parsed again from a fresh parser state and
//!   upserted, so what did not change is a no-op and a message the harness rewrote is a
//!   revision of the same seqs.
//! - [`Kind::Database`]: a SQLite database (OpenCode's `opencode.db`, Goose's `sessions.db`,
//!   Crush's `crush.db`; `database` says which), opened read-only so the harness writing it
//!   is never locked out. The adapter that reads it names the positions (a part's rowid, a
//!   message's rank in its session); the database is skipped while its fingerprint and its
//!   `-wal` file's are unchanged.
//! - [`Kind::Stored`]: a session kept as a tree of small JSON files, one record each
//!   (OpenCode before 1.2: `storage/session/<project>/<id>.json`, its messages and their
//!   parts in folders beside it). A record's position is its order by creation (the ids
//!   ascend with time); the tree is skipped while the fingerprint of its files' names,
//!   lengths and times is unchanged, and otherwise read again like a document.
//! - [`Kind::Markdown`]: a text file appended to in sections, one session each (Aider's
//!   `.aider.chat.history.md`, a section per run from its `# aider chat started at` line).
//!   A record is a line, at its line number: the adapter groups lines into blocks, and a
//!   block's events take the seqs of the line it starts on. The cursor keeps the file's
//!   fingerprint and where its last section starts: an unchanged file is skipped, a grown
//!   one is read from there (the sections before it ended when the next one began), each
//!   section again from a fresh parser state, so its unchanged blocks are no-ops and only
//!   what was appended is new. A file that no longer holds a section's start there was
//!   rewritten, and is read again from its first line.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The first bytes of every SQLite database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// How a database is fingerprinted without reading it whole: its header (which holds the
/// change counter) and this many bytes from its start.
const DB_HEAD: usize = 4096;

/// Which kind of source a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Lines,
    Document,
    Database,
    Stored,
    Markdown,
}

/// The kind of `path`, from its first bytes and its name: a SQLite header makes a database,
/// a `.json` in a `storage/session/<project>/` folder a stored session, any other `.json` a
/// document, a `.md` Markdown, anything else is read as lines (and refused there if no adapter recognises
/// them).
pub(crate) fn kind_of(path: &Path) -> io::Result<Kind> {
    super::reader::regular_file(path)?;
    let mut head = [0u8; 16];
    let n = read_up_to(&mut File::open(path)?, &mut head)?;
    if n == head.len() && &head == SQLITE_MAGIC {
        return Ok(Kind::Database);
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    Ok(match name {
        Some(n) if n.ends_with(".json") && stored_root(path).is_some() => Kind::Stored,
        Some(n) if n.ends_with(".json") => Kind::Document,
        Some(n) if n.ends_with(".md") => Kind::Markdown,
        _ => Kind::Lines,
    })
}

/// The `storage` folder a stored session's file sits in, three folders up
/// (`storage/session/<project>/<id>.json`), when it does.
pub(crate) fn stored_root(path: &Path) -> Option<&Path> {
    let project = path.parent()?;
    let session = project.parent()?;
    let storage = session.parent()?;
    let named = |p: &Path, name: &str| p.file_name().is_some_and(|n| n == name);
    (named(session, "session") && named(storage, "storage")).then_some(storage)
}

fn read_up_to(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// What a file was when it was last captured: its length, its modification time and a hash
/// (of the whole of a document, of a database's head). Equal fingerprints mean the capture
/// would find nothing new.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Fingerprint {
    len: u64,
    mtime_ns: u128,
    hash: String,
}

impl Fingerprint {
    /// The fingerprint of a document read whole as `bytes`.
    pub(crate) fn of_document(meta: &std::fs::Metadata, bytes: &[u8]) -> Fingerprint {
        Fingerprint {
            len: meta.len(),
            mtime_ns: mtime_ns(meta),
            hash: hex::encode(Sha256::digest(bytes)),
        }
    }

    /// The fingerprint of a tree of files from their names, lengths and modification times
    /// (read with a `stat` each, never opened): a file added, removed or rewritten changes it.
    pub(crate) fn of_tree(files: &[PathBuf]) -> io::Result<Fingerprint> {
        let mut hash = Sha256::new();
        let (mut len, mut newest) = (0u64, 0u128);
        for file in files {
            let meta = std::fs::metadata(file)?;
            let mtime = mtime_ns(&meta);
            hash.update(file.as_os_str().as_encoded_bytes());
            hash.update(meta.len().to_le_bytes());
            hash.update(mtime.to_le_bytes());
            len += meta.len();
            newest = newest.max(mtime);
        }
        Ok(Fingerprint {
            len,
            mtime_ns: newest,
            hash: hex::encode(hash.finalize()),
        })
    }

    /// The fingerprint of a database file from its head, or `None` when it does not exist
    /// (a database with no `-wal` beside it).
    pub(crate) fn of_database(path: &Path) -> io::Result<Option<Fingerprint>> {
        let mut file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let meta = file.metadata()?;
        let mut head = vec![0u8; DB_HEAD];
        let n = read_up_to(&mut file, &mut head)?;
        Ok(Some(Fingerprint {
            len: meta.len(),
            mtime_ns: mtime_ns(&meta),
            hash: hex::encode(Sha256::digest(&head[..n])),
        }))
    }
}

fn mtime_ns(meta: &std::fs::Metadata) -> u128 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

/// A database and its write-ahead log, as last captured, and how many sessions of other
/// places that capture left out (then a capture of every session still has them to read,
/// however unchanged the files are, and a capture of the same place that skips the files
/// still counts them). A print saved before there were places reads as one that left none
/// out; one saved before the count (`"partial": true`) as one that left one out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct DatabasePrint {
    db: Option<Fingerprint>,
    wal: Option<Fingerprint>,
    #[serde(
        default,
        alias = "partial",
        skip_serializing_if = "is_zero",
        deserialize_with = "count_or_flag"
    )]
    pub(crate) left_out: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A count, or the flag that stood for "some" before there was one.
fn count_or_flag<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum CountOrFlag {
        Count(usize),
        Flag(bool),
    }
    Ok(match CountOrFlag::deserialize(d)? {
        CountOrFlag::Count(n) => n,
        CountOrFlag::Flag(some) => usize::from(some),
    })
}

impl DatabasePrint {
    /// The database at `path` and its log as they are now.
    pub(crate) fn of(path: &Path) -> io::Result<DatabasePrint> {
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        Ok(DatabasePrint {
            db: Fingerprint::of_database(path)?,
            wal: Fingerprint::of_database(&PathBuf::from(wal))?,
            left_out: 0,
        })
    }

    /// Whether the files are as they were when `self` was taken.
    pub(crate) fn same_files(&self, now: &DatabasePrint) -> bool {
        self.db == now.db && self.wal == now.wal
    }
}

/// Open `path` read-only: no write lock is ever taken and the journal mode is left as the
/// harness set it, so the harness can go on writing while it is read.
///
/// A database in WAL mode that no one has open has no `-shm` beside it (the last connection
/// to close removes it, and its `-wal`). A read-only connection would create both, and
/// could not remove them: files peat left in the harness's folder, or a database it
/// cannot open where that folder is read-only. Then the file is the whole database, and
/// it is opened immutable: no locks and no files, so a harness that starts writing is
/// never locked out (what it writes goes to its `-wal`, which changes the print, and is
/// read by the next capture). A `-wal` with frames but no `-shm` beside it (copied
/// without it) is opened as usual, so its frames are read.
pub(crate) fn open_database(path: &Path) -> rusqlite::Result<rusqlite::Connection> {
    use rusqlite::OpenFlags;
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = if unopened(path) {
        rusqlite::Connection::open_with_flags(
            immutable_uri(path),
            flags | OpenFlags::SQLITE_OPEN_URI,
        )?
    } else {
        rusqlite::Connection::open_with_flags(path, flags)?
    };
    // A harness mid-write holds its lock for milliseconds; wait that long, not forever.
    conn.busy_timeout(std::time::Duration::from_secs(2))?;
    Ok(conn)
}

/// Whether no connection has the database at `path` open in WAL mode: no `-shm` beside it,
/// and no `-wal` holding frames.
fn unopened(path: &Path) -> bool {
    let beside = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    !beside("-shm").exists() && std::fs::metadata(beside("-wal")).map_or(true, |m| m.len() == 0)
}

/// The `file:` URI that opens `path` immutable, its `%`, `?` and `#` escaped.
fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            c => uri.push(c),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// The records of a document: the document without its `array` first, then each element
/// of `array` (at positions 1, 2, …). A document without that array is one record.
pub(crate) fn document_records(mut doc: Value, array: &str) -> Vec<Value> {
    let items = match doc.as_object_mut().and_then(|o| o.remove(array)) {
        Some(Value::Array(items)) => items,
        Some(other) => {
            doc[array] = other;
            Vec::new()
        }
        None => Vec::new(),
    };
    std::iter::once(doc).chain(items).collect()
}

/// The records of a document that is an array (a Cline task's conversation): an empty
/// head at position 0, as a document without its array would be, then each element.
pub(crate) fn array_records(doc: Value) -> Vec<Value> {
    let items = match doc {
        Value::Array(items) => items,
        other => vec![other],
    };
    std::iter::once(Value::Object(serde_json::Map::new()))
        .chain(items)
        .collect()
}

/// A section of a text source: where it starts (its byte offset and line number) and its
/// lines, without their line ends.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Section {
    pub(crate) offset: u64,
    pub(crate) line: u64,
    pub(crate) lines: Vec<String>,
}

/// The sections of `text` from `from` (the byte offset and line number of a section's
/// start, or of the file's), each starting at a line `starts` recognises. Only whole lines
/// are read: a last line without its newline may still be being written. Lines before the
/// first section's start are in none.
pub(crate) fn text_sections(
    text: &[u8],
    (offset, line): (u64, u64),
    starts: impl Fn(&str) -> bool,
) -> Vec<Section> {
    let mut sections: Vec<Section> = Vec::new();
    let (mut at, mut number) = (offset as usize, line);
    while at < text.len() {
        let Some(len) = text[at..].iter().position(|b| *b == b'\n') else {
            break;
        };
        let raw = &text[at..at + len];
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let content = String::from_utf8_lossy(raw).into_owned();
        if starts(&content) {
            sections.push(Section {
                offset: at as u64,
                line: number,
                lines: Vec::new(),
            });
        }
        if let Some(section) = sections.last_mut() {
            section.lines.push(content);
        }
        at += len + 1;
        number += 1;
    }
    sections
}

/// One session of a database: its id, and the folder it worked in where the database says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DbSession {
    pub(crate) id: String,
    pub(crate) dir: Option<String>,
}

impl DbSession {
    /// A row of `id, folder`.
    pub(crate) fn of_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<DbSession> {
        Ok(DbSession {
            id: r.get(0)?,
            dir: r.get::<_, Option<String>>(1)?.filter(|d| !d.is_empty()),
        })
    }
}

/// Whether `conn` has `table` with every one of `columns`: how a database is recognised.
pub(crate) fn has_columns(conn: &rusqlite::Connection, table: &str, columns: &[&str]) -> bool {
    let Ok(mut stmt) = conn.prepare("SELECT name FROM pragma_table_info(?1)") else {
        return false;
    };
    let Ok(names) = stmt
        .query_map([table], |r| r.get::<_, String>(0))
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
    else {
        return false;
    };
    columns.iter().all(|c| names.iter().any(|n| n == c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_document_is_its_head_then_each_record_of_its_array() {
        let records = document_records(
            json!({"sessionId": "s", "messages": [{"id": "a"}, {"id": "b"}]}),
            "messages",
        );
        assert_eq!(
            records,
            vec![
                json!({"sessionId": "s"}),
                json!({"id": "a"}),
                json!({"id": "b"})
            ]
        );
        // Not an array: kept where it was, and no records follow.
        assert_eq!(
            document_records(json!({"messages": 3}), "messages"),
            vec![json!({"messages": 3})]
        );
    }

    #[test]
    fn the_kind_is_read_from_the_header_then_the_name() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("x.db");
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute_batch("CREATE TABLE t(a); INSERT INTO t VALUES (1);")
            .unwrap();
        assert_eq!(kind_of(&db).unwrap(), Kind::Database);
        let doc = dir.path().join("session-1.json");
        std::fs::write(&doc, "{}").unwrap();
        assert_eq!(kind_of(&doc).unwrap(), Kind::Document);
        let md = dir.path().join(".aider.chat.history.md");
        std::fs::write(&md, "\n# aider chat started at 2026-07-14 09:00:00\n").unwrap();
        assert_eq!(kind_of(&md).unwrap(), Kind::Markdown);
        let lines = dir.path().join("a.jsonl");
        std::fs::write(&lines, "{}\n").unwrap();
        assert_eq!(kind_of(&lines).unwrap(), Kind::Lines);
        let stored = dir.path().join("storage/session/p1");
        std::fs::create_dir_all(&stored).unwrap();
        std::fs::write(stored.join("ses_1.json"), "{}").unwrap();
        assert_eq!(kind_of(&stored.join("ses_1.json")).unwrap(), Kind::Stored);
        // A `.json` name on a database is still a database.
        let named = dir.path().join("odd.json");
        std::fs::copy(&db, &named).unwrap();
        assert_eq!(kind_of(&named).unwrap(), Kind::Database);
    }

    #[test]
    fn a_text_is_cut_into_sections_at_their_start_lines_and_only_whole_lines_are_read() {
        let text = b"preamble\n# s 1\na\r\n# s 2\nb\nstill be";
        let starts = |l: &str| l.starts_with("# s ");
        let all = text_sections(text, (0, 0), starts);
        let at = |s: &Section| (s.offset, s.line, s.lines.clone());
        assert_eq!(
            all.iter().map(at).collect::<Vec<_>>(),
            vec![
                (9, 1, vec!["# s 1".to_string(), "a".to_string()]),
                (18, 3, vec!["# s 2".to_string(), "b".to_string()]),
            ]
        );
        // Read from the last section's start: the same section, at the same place.
        assert_eq!(text_sections(text, (18, 3), starts), all[1..]);
    }

    #[test]
    fn a_fingerprint_changes_with_the_bytes_and_not_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("d.json");
        std::fs::write(&p, "{\"a\":1}").unwrap();
        let meta = std::fs::metadata(&p).unwrap();
        let one = Fingerprint::of_document(&meta, b"{\"a\":1}");
        assert_eq!(one, Fingerprint::of_document(&meta, b"{\"a\":1}"));
        // Same length and time, other bytes: the hash tells them apart.
        assert_ne!(one, Fingerprint::of_document(&meta, b"{\"a\":2}"));
    }

    #[test]
    fn a_tree_fingerprint_changes_when_a_file_is_added_or_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        std::fs::write(&a, "{}").unwrap();
        let one = Fingerprint::of_tree(std::slice::from_ref(&a)).unwrap();
        assert_eq!(one, Fingerprint::of_tree(std::slice::from_ref(&a)).unwrap());
        let b = dir.path().join("b.json");
        std::fs::write(&b, "{}").unwrap();
        let two = Fingerprint::of_tree(&[a.clone(), b]).unwrap();
        assert_ne!(one, two);
        std::fs::write(&a, "{\"x\":1}").unwrap();
        assert_ne!(one, Fingerprint::of_tree(&[a]).unwrap());
    }

    #[test]
    fn a_wal_database_without_its_shm_is_read_without_a_file_made_beside_it_or_a_writer_locked_out()
    {
        let dir = tempfile::tempdir().unwrap();
        // A `?` and a `#` in the folder's name: the URI escapes them.
        let folder = dir.path().join("gooses?#%");
        std::fs::create_dir(&folder).unwrap();
        let p = folder.join("sessions.db");
        let harness = rusqlite::Connection::open(&p).unwrap();
        harness
            .execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t(a); INSERT INTO t VALUES (1);")
            .unwrap();
        drop(harness);
        let files = || {
            let mut names: Vec<String> = std::fs::read_dir(&folder)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        assert_eq!(files(), ["sessions.db"], "the harness closed it: no -shm");
        let count = |c: &rusqlite::Connection| {
            c.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
                .unwrap()
        };
        let reader = open_database(&p).unwrap();
        assert_eq!(count(&reader), 1);
        assert_eq!(files(), ["sessions.db"], "reading made no file beside it");
        // The harness starts again while peat still holds the database open.
        let harness = rusqlite::Connection::open(&p).unwrap();
        harness
            .execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (2); COMMIT;")
            .unwrap();
        assert!(reader.execute("INSERT INTO t VALUES (3)", []).is_err());
        drop(reader);
        // While the harness has it open, its -shm is there and the reader sees its log.
        assert_eq!(count(&open_database(&p).unwrap()), 2);
        drop(harness);

        // A folder peat may not write in: read all the same (only where the permission
        // holds: root writes anywhere).
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o555)).unwrap();
        let probe = folder.join("probe");
        if std::fs::write(&probe, "").is_ok() {
            std::fs::remove_file(&probe).unwrap();
        } else {
            assert_eq!(count(&open_database(&p).unwrap()), 2);
        }
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn a_database_print_saved_before_places_or_counts_reads_as_it_meant() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("opencode.db");
        std::fs::write(&p, "SQLite format 3\0").unwrap();
        let print = DatabasePrint::of(&p).unwrap();
        let before = serde_json::to_string(&print).unwrap();
        assert!(!before.contains("left_out"), "{before}");
        let saved: DatabasePrint = serde_json::from_str(&before).unwrap();
        assert!(saved.left_out == 0 && saved.same_files(&print));
        let counted = DatabasePrint {
            left_out: 3,
            ..print.clone()
        };
        let read: DatabasePrint =
            serde_json::from_str(&serde_json::to_string(&counted).unwrap()).unwrap();
        assert_eq!(read, counted);
        let flagged = before.replace('}', r#","partial":true}"#);
        let read: DatabasePrint = serde_json::from_str(&flagged).unwrap();
        assert!(read.left_out == 1 && read.same_files(&print), "{flagged}");
    }

    #[test]
    fn a_database_is_read_without_a_lock_while_its_writer_holds_one() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("h.db");
        let writer = rusqlite::Connection::open(&p).unwrap();
        writer
            .execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t(a); INSERT INTO t VALUES (1);")
            .unwrap();
        let before = DatabasePrint::of(&p).unwrap();
        // The harness is mid-transaction while peat reads.
        writer
            .execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (2);")
            .unwrap();
        let reader = open_database(&p).unwrap();
        let n: i64 = reader
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1, "the reader sees what was committed");
        assert!(reader.execute("INSERT INTO t VALUES (3)", []).is_err());
        drop(reader);
        // The writer was never locked out, and its journal mode is as it set it.
        writer.execute_batch("COMMIT;").unwrap();
        let mode: String = writer
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        assert_ne!(DatabasePrint::of(&p).unwrap(), before, "the WAL grew");
    }
}
