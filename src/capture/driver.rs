//! Capture one transcript file into the ledger, resuming from its cursor.
//!
//! The cursor (byte offset, raw line index, parser state) is written in the same atomic
//! batch as the events it covers, so a crash mid-capture loses nothing and re-does nothing
//! twice. Events are written in chunks, so memory stays flat however large the file.
//!
//! A JSON document's (or a stored session's) cursor is its fingerprint, written with all its
//! events in one batch; a Markdown history's, where its last section starts, written with
//! each section's events;
//! a database's sessions (OpenCode's, Goose's, Crush's, read through `database`) each have
//! their own cursor (`<db>#<session>`, what was read and the parser's state), written with
//! that session's events, and the database's own cursor (its fingerprints) is written after
//! them (see `source`).

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::detect::{self, Format};
use super::reader::{LineReader, Parsed, classify_line};
use super::source::DbSession;
use super::source::{self, DatabasePrint, Fingerprint, Kind};
use super::{Emit, FileHints, ParserState, aider, database, opencode};
use crate::ledger::{Ledger, LedgerError, WriteSet, Written};
use crate::redact::StoreRedactor;
use crate::vocab::event::{Envelope, Event, HOOK_FINAL_SEQ, Seq, SessionId};

/// Commit a chunk once this many events or blob bytes are pending.
const CHUNK_EVENTS: usize = 5_000;
const CHUNK_BLOB_BYTES: usize = 64 << 20;

#[derive(Clone, Debug, Default)]
pub(crate) struct CaptureOptions {
    /// Attribute every event to this session instead of the one the transcript names.
    pub(crate) session: Option<SessionId>,
    /// The Stop hook's authoritative closing message.
    pub(crate) final_msg: Option<String>,
    /// Only the sessions of a database that worked in this place (a project ledger's
    /// project); `None`: every session.
    pub(crate) place: Option<Place>,
}

/// Which folders a capture takes a database's sessions from: a session that names its
/// folder is taken when this holds for it, one that names none is taken (a database kept
/// in its project, as Crush's is). A JSONL transcript is one session and is chosen before
/// its capture; a database holds every project's, so only its capture can choose.
#[derive(Clone)]
pub(crate) struct Place(Rc<dyn Fn(&str) -> bool>);

impl Place {
    pub(crate) fn new(holds: impl Fn(&str) -> bool + 'static) -> Place {
        Place(Rc::new(holds))
    }

    fn takes(&self, session: &DbSession) -> bool {
        session.dir.as_deref().is_none_or(|dir| (self.0)(dir))
    }
}

impl std::fmt::Debug for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Place")
    }
}

/// What one capture did.
#[derive(Clone, Debug, Default)]
pub(crate) struct Receipt {
    pub(crate) session: Option<SessionId>,
    pub(crate) format: Option<Format>,
    /// Events emitted by this capture (new, revised or already stored).
    pub(crate) events: usize,
    pub(crate) written: Written,
    /// Raw lines read this time.
    pub(crate) lines: u64,
    /// Lines that were not JSON and were skipped.
    pub(crate) skipped: u64,
    /// Events a line had no room for (see `LineSlots`).
    pub(crate) overflowed: u64,
    /// The file ends in a line without a newline that is not yet whole: left for next time.
    pub(crate) partial_tail: bool,
    /// A database's sessions this capture read, besides `session` (the last of them).
    pub(crate) others: Vec<SessionId>,
    /// A database's sessions left out: they worked outside the capture's [`Place`].
    pub(crate) left_out: usize,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum CaptureError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a recognised transcript (expected a session .jsonl of Claude Code, Cursor, Copilot CLI, Pi, Qwen Code or Factory droid, a Codex rollout, a Gemini CLI chat recording, an OpenCode, Goose or Crush database, a Cline task's api_conversation_history.json, an Amp thread or Aider's .aider.chat.history.md)", .0.display())]
    NotATranscript(PathBuf),
    #[error("cannot read the database {}: {source}", path.display())]
    Database {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("no session id found in {}", .0.display())]
    NoSession(PathBuf),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The store's redaction key or rules could not be read: nothing is written unredacted.
    #[error(transparent)]
    Redact(#[from] crate::redact::RedactError),
}

/// Where a transcript's capture stopped.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Cursor {
    /// Byte offset just past the last whole line consumed.
    offset: u64,
    /// Raw index of the next line.
    line: u64,
    state: ParserState,
}

/// Capture `path` into `ledger`: only what was added since the last capture of this file.
pub(crate) fn capture_file(
    ledger: &mut Ledger,
    redactor: &StoreRedactor,
    path: &Path,
    opts: &CaptureOptions,
) -> Result<Receipt, CaptureError> {
    let io = |source| CaptureError::Io {
        path: path.to_path_buf(),
        source,
    };
    let absolute = std::fs::canonicalize(path).map_err(io)?;
    let cursor_key = absolute.to_string_lossy().into_owned();
    match source::kind_of(path).map_err(io)? {
        Kind::Lines => capture_lines(ledger, redactor, path, &cursor_key, opts),
        Kind::Document => capture_document(ledger, redactor, path, &cursor_key, opts),
        Kind::Database => capture_database(ledger, redactor, path, &cursor_key, opts),
        Kind::Stored => capture_stored(ledger, redactor, path, &cursor_key, opts),
        Kind::Markdown => capture_markdown(ledger, redactor, path, &cursor_key, opts),
    }
}

/// A JSONL transcript, from the byte offset and parser state its cursor saved.
fn capture_lines(
    ledger: &mut Ledger,
    redactor: &StoreRedactor,
    path: &Path,
    cursor_key: &str,
    opts: &CaptureOptions,
) -> Result<Receipt, CaptureError> {
    let io = |source| CaptureError::Io {
        path: path.to_path_buf(),
        source,
    };
    let hints = FileHints::of(path, Path::new(cursor_key));
    let mut receipt = Receipt::default();

    let saved: Option<Cursor> = ledger
        .cursor(cursor_key)?
        .and_then(|b| serde_json::from_slice(&b).ok());
    let (mut cursor, mut reader) = match saved {
        // Nothing was consumed: the format was guessed from an empty file (or a first line
        // still being written), so it is detected again now that there may be lines.
        Some(c) if c.offset == 0 => fresh(path, &hints)?,
        Some(mut c) => match LineReader::open(path, c.offset).map_err(io)? {
            Some(r) => {
                c.state.reopened(&hints);
                (c, r)
            }
            // The file is shorter than where we stopped: it was replaced. Start over;
            // upserts make the overlap harmless.
            None => fresh(path, &hints)?,
        },
        None => fresh(path, &hints)?,
    };
    receipt.format = Some(cursor.state.format());

    let mut emit = Emit::default();
    let mut blob_bytes = 0usize;
    let mut tail_state: Option<ParserState> = None;
    while let Some(line) = reader.next_line().map_err(io)? {
        receipt.lines += 1;
        if line.too_long {
            receipt.skipped += 1;
            advance(&mut cursor, line.end);
            continue;
        }
        let parsed = classify_line(&line.bytes);
        if !line.terminated {
            // Possibly still being written. A whole JSON record is ingested now, but the
            // cursor stays before it so the next capture reads it again once it ends.
            match parsed {
                Parsed::Json(v) => {
                    let mut state = cursor.state.clone();
                    state.parser().line(cursor.line, &v, &mut emit);
                    tail_state = Some(state);
                }
                Parsed::Blank | Parsed::Bad => receipt.partial_tail = true,
            }
            receipt.lines -= 1;
            break;
        }
        match parsed {
            Parsed::Json(v) => {
                let before = emit.blobs.len();
                cursor.state.parser().line(cursor.line, &v, &mut emit);
                if emit.blobs.len() != before {
                    blob_bytes = emit.blobs.values().map(Vec::len).sum();
                }
            }
            Parsed::Blank => {}
            Parsed::Bad => receipt.skipped += 1,
        }
        advance(&mut cursor, line.end);
        if emit.events.len() >= CHUNK_EVENTS || blob_bytes >= CHUNK_BLOB_BYTES {
            let session = session_of(&cursor.state, opts);
            if session.is_some() {
                commit(
                    ledger,
                    redactor,
                    &mut emit,
                    session.as_ref(),
                    (cursor_key, &cursor),
                    &mut receipt,
                )?;
                blob_bytes = 0;
            }
        }
    }

    let last = tail_state.as_ref().unwrap_or(&cursor.state);
    finish(last, opts, &mut emit);
    receipt.overflowed = last.parser_ref().overflowed();
    let session = match tail_state.as_ref() {
        Some(t) => opts.session.clone().or_else(|| t.parser_ref().session()),
        None => session_of(&cursor.state, opts),
    };
    if session.is_none() && !emit.events.is_empty() {
        return Err(CaptureError::NoSession(path.to_path_buf()));
    }
    commit(
        ledger,
        redactor,
        &mut emit,
        session.as_ref(),
        (cursor_key, &cursor),
        &mut receipt,
    )?;
    receipt.session = session;
    Ok(receipt)
}

/// What every capture ends with: the parser's provisional events, and the Stop hook's
/// closing message when it gave one.
fn finish(state: &ParserState, opts: &CaptureOptions, emit: &mut Emit) {
    state.parser_ref().flush(emit);
    if let Some(text) = opts.final_msg.as_deref().filter(|t| !t.trim().is_empty()) {
        let ts = state.parser_ref().last_ts();
        emit.event(
            Seq(HOOK_FINAL_SEQ),
            ts,
            Event::FinalMsg {
                text: text.to_string(),
            },
        );
    }
}

/// The cursor of a source read whole each time it changed (a JSON document, a stored
/// session): what it was when it was captured, and whose it is.
#[derive(Debug, Serialize, Deserialize)]
struct WholeCursor {
    print: Fingerprint,
    session: Option<SessionId>,
}

/// What a source read whole yields: its format, its records (record `i` at position `i`)
/// and how many it had to skip.
struct Whole {
    format: Format,
    records: Vec<serde_json::Value>,
    skipped: u64,
}

/// A JSON document rewritten whole (see `source`).
fn capture_document(
    ledger: &mut Ledger,
    redactor: &StoreRedactor,
    path: &Path,
    cursor_key: &str,
    opts: &CaptureOptions,
) -> Result<Receipt, CaptureError> {
    let (bytes, print) = read_whole(path)?;
    let read = || {
        let not_a_transcript = || CaptureError::NotATranscript(path.to_path_buf());
        let doc: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|_| not_a_transcript())?;
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let format = detect::detect_document(&name, &doc).ok_or_else(not_a_transcript)?;
        let records = match format {
            Format::Cline => source::array_records(doc),
            _ => source::document_records(doc, "messages"),
        };
        Ok(Whole {
            format,
            records,
            skipped: 0,
        })
    };
    capture_whole(ledger, redactor, (path, cursor_key), opts, print, read)
}

/// A file read whole, and its fingerprint.
fn read_whole(path: &Path) -> Result<(Vec<u8>, Fingerprint), CaptureError> {
    let io = |source| CaptureError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    let bytes = std::fs::read(path).map_err(io)?;
    let print = Fingerprint::of_document(&meta, &bytes);
    Ok((bytes, print))
}

/// A session kept as a tree of JSON files (OpenCode's older storage, see `source`).
fn capture_stored(
    ledger: &mut Ledger,
    redactor: &StoreRedactor,
    path: &Path,
    cursor_key: &str,
    opts: &CaptureOptions,
) -> Result<Receipt, CaptureError> {
    let io = |source| CaptureError::Io {
        path: path.to_path_buf(),
        source,
    };
    let not_a_transcript = || CaptureError::NotATranscript(path.to_path_buf());
    let storage = source::stored_root(path).ok_or_else(not_a_transcript)?;
    let info: serde_json::Value = serde_json::from_slice(&std::fs::read(path).map_err(io)?)
        .map_err(|_| not_a_transcript())?;
    if !opencode::is_session_info(&info) {
        return Err(not_a_transcript());
    }
    let tree = opencode::StoredTree::list(storage, &info).map_err(io)?;
    let print = Fingerprint::of_tree(&tree.files(path)).map_err(io)?;
    let read = || {
        let (records, skipped) = tree.records(&info);
        Ok(Whole {
            format: Format::OpenCode,
            records,
            skipped,
        })
    };
    capture_whole(ledger, redactor, (path, cursor_key), opts, print, read)
}

/// A source read whole: skipped while its fingerprint is unchanged, otherwise `read` and
/// parsed again from a fresh parser state and upserted, all in one batch with its cursor
/// (what did not change is a no-op; what the harness rewrote, a revision).
fn capture_whole(
    ledger: &mut Ledger,
    redactor: &StoreRedactor,
    (path, cursor_key): (&Path, &str),
    opts: &CaptureOptions,
    print: Fingerprint,
    read: impl FnOnce() -> Result<Whole, CaptureError>,
) -> Result<Receipt, CaptureError> {
    let saved: Option<WholeCursor> = ledger
        .cursor(cursor_key)?
        .and_then(|b| serde_json::from_slice(&b).ok());
    if let Some(saved) = saved.filter(|c| c.print == print) {
        return Ok(Receipt {
            session: opts.session.clone().or(saved.session),
            ..Receipt::default()
        });
    }
    let whole = read()?;
    let mut receipt = Receipt {
        format: Some(whole.format),
        skipped: whole.skipped,
        ..Receipt::default()
    };
    let mut state = ParserState::new(whole.format, &FileHints::of(path, Path::new(cursor_key)));
    let mut emit = Emit::default();
    for (position, record) in whole.records.iter().enumerate() {
        receipt.lines += 1;
        state.parser().line(position as u64, record, &mut emit);
    }
    finish(&state, opts, &mut emit);
    receipt.overflowed = state.parser_ref().overflowed();
    let session = session_of(&state, opts);
    if session.is_none() && !emit.events.is_empty() {
        return Err(CaptureError::NoSession(path.to_path_buf()));
    }
    let cursor = WholeCursor {
        print,
        session: session.clone(),
    };
    commit(
        ledger,
        redactor,
        &mut emit,
        session.as_ref(),
        (cursor_key, &cursor),
        &mut receipt,
    )?;
    receipt.session = session;
    Ok(receipt)
}

/// The cursor of a text appended to in sections (see `source`): where its last section
/// starts, and the fingerprint of the file once it was read to its end (`None` while a
/// capture is between sections: the file is read again from `offset`).
#[derive(Debug, Serialize, Deserialize)]
struct TextCursor {
    print: Option<Fingerprint>,
    offset: u64,
    line: u64,
    session: Option<SessionId>,
}

/// Aider's chat history: skipped while unchanged, otherwise read from its last section's
/// start, each section a session captured in its own batch.
fn capture_markdown(
    ledger: &mut Ledger,
    redactor: &StoreRedactor,
    path: &Path,
    cursor_key: &str,
    opts: &CaptureOptions,
) -> Result<Receipt, CaptureError> {
    let (text, print) = read_whole(path)?;
    let saved: Option<TextCursor> = ledger
        .cursor(cursor_key)?
        .and_then(|b| serde_json::from_slice(&b).ok());
    if let Some(saved) = saved.as_ref().filter(|c| c.print.as_ref() == Some(&print)) {
        return Ok(Receipt {
            session: opts.session.clone().or(saved.session.clone()),
            ..Receipt::default()
        });
    }
    if !aider::is_history(&text) {
        return Err(CaptureError::NotATranscript(path.to_path_buf()));
    }
    // The file only grew when a section still starts where the last one did.
    let from = saved
        .map(|c| (c.offset, c.line))
        .filter(|(offset, _)| {
            text.get(*offset as usize..).is_some_and(|rest| {
                let head = &rest[..rest.len().min(64)];
                aider::is_header(&String::from_utf8_lossy(head))
            })
        })
        .unwrap_or((0, 0));
    let mut sections = source::text_sections(&text, from, aider::is_header);
    let hints = FileHints::of(path, Path::new(cursor_key));
    let mut receipt = Receipt {
        format: Some(Format::Aider),
        ..Receipt::default()
    };
    let mut written = Vec::new();
    for i in 0..sections.len() {
        let mut state = ParserState::new(Format::Aider, &hints);
        let mut emit = Emit::default();
        // Each line is read once: moved into the value the parser reads, not copied.
        let lines = std::mem::take(&mut sections[i].lines);
        let section = &sections[i];
        for (n, line) in lines.into_iter().enumerate() {
            receipt.lines += 1;
            let value = serde_json::Value::String(line);
            state
                .parser()
                .line(section.line + n as u64, &value, &mut emit);
        }
        let next = sections.get(i + 1);
        match next {
            None => finish(&state, opts, &mut emit),
            Some(_) => state.parser_ref().flush(&mut emit),
        }
        receipt.overflowed += state.parser_ref().overflowed();
        let session = session_of(&state, opts);
        // After a section the next one is where a killed capture starts again; after the
        // last, the file is read.
        let cursor = TextCursor {
            print: next.is_none().then(|| print.clone()),
            offset: next.map_or(section.offset, |s| s.offset),
            line: next.map_or(section.line, |s| s.line),
            session: session.clone(),
        };
        let before = receipt.events;
        commit(
            ledger,
            redactor,
            &mut emit,
            session.as_ref(),
            (cursor_key, &cursor),
            &mut receipt,
        )?;
        // A run the person typed nothing in recorded nothing: it is no session.
        if receipt.events > before {
            written.extend(session);
        }
    }
    receipt.session = written.pop();
    written.dedup();
    receipt.others = written;
    Ok(receipt)
}

/// One session of a database: what was read of it, and the parser's state.
#[derive(Debug, Serialize, Deserialize)]
struct SessionCursor {
    since: database::Since,
    state: ParserState,
}

/// A SQLite database holding many sessions, read read-only: skipped while it and its
/// write-ahead log are as they were (and the last reading took every session this one
/// would); otherwise each session this capture takes is captured from its own cursor, in
/// its own batch. A session left out keeps its cursor as it was, so a later capture of it
/// starts where the last one of it ended, at the same seqs.
fn capture_database(
    ledger: &mut Ledger,
    redactor: &StoreRedactor,
    path: &Path,
    cursor_key: &str,
    opts: &CaptureOptions,
) -> Result<Receipt, CaptureError> {
    let io = |source| CaptureError::Io {
        path: path.to_path_buf(),
        source,
    };
    let db = |source| CaptureError::Database {
        path: path.to_path_buf(),
        source,
    };
    let print = DatabasePrint::of(path).map_err(io)?;
    let saved: Option<DatabasePrint> = ledger
        .cursor(cursor_key)?
        .and_then(|b| serde_json::from_slice(&b).ok());
    if let Some(c) = saved.filter(|c| c.same_files(&print))
        && (c.left_out == 0 || opts.place.is_some())
    {
        return Ok(Receipt {
            left_out: c.left_out,
            ..Receipt::default()
        });
    }
    let conn = source::open_database(path).map_err(db)?;
    let format = database::recognise(&conn)
        .ok_or_else(|| CaptureError::NotATranscript(path.to_path_buf()))?;
    let mut receipt = Receipt {
        format: Some(format),
        ..Receipt::default()
    };
    // A harness that names no cwd for its sessions (Crush) keeps its database in the project.
    let hints = FileHints::of(path, Path::new(cursor_key));
    let mut written = Vec::new();
    for session in database::sessions(&conn, format).map_err(db)? {
        if opts.place.as_ref().is_some_and(|p| !p.takes(&session)) {
            receipt.left_out += 1;
            continue;
        }
        let id = session.id;
        let key = format!("{cursor_key}#{id}");
        let saved_bytes = ledger.cursor(&key)?;
        let saved: Option<SessionCursor> = saved_bytes
            .as_ref()
            .and_then(|b| serde_json::from_slice(b).ok());
        let (since, mut state) = match saved {
            Some(c) => (c.since, c.state),
            None => (
                database::Since::start(format),
                ParserState::new(format, &hints),
            ),
        };
        let mut emit = Emit::default();
        let parser = state.parser();
        let since = database::records(&conn, format, &id, since, |position, record| {
            receipt.lines += 1;
            parser.line(position, record, &mut emit);
        })
        .map_err(db)?;
        finish(&state, opts, &mut emit);
        let session = session_of(&state, opts);
        receipt.overflowed += state.parser_ref().overflowed();
        let cursor = SessionCursor { since, state };
        // A session nothing happened in since its last capture costs no write.
        let unchanged = emit.events.is_empty()
            && saved_bytes.is_some_and(|b| serde_json::to_vec(&cursor).is_ok_and(|c| c == b));
        if !unchanged {
            commit(
                ledger,
                redactor,
                &mut emit,
                session.as_ref(),
                (&key, &cursor),
                &mut receipt,
            )?;
        }
        written.extend(session);
    }
    // The database's own cursor last: a capture killed before it reads the database again
    // next time, and every session from its own cursor.
    let mut cursor = print;
    cursor.left_out = receipt.left_out;
    let mut set = WriteSet {
        cursor: Some((
            cursor_key.to_string(),
            serde_json::to_vec(&cursor).unwrap_or_default(),
        )),
        ..WriteSet::default()
    };
    crate::redact::apply::write_set(redactor.get()?, &mut set);
    receipt.written += ledger.write(set)?;
    receipt.session = written.pop();
    receipt.others = written;
    Ok(receipt)
}

fn advance(cursor: &mut Cursor, end: u64) {
    cursor.offset = end;
    cursor.line += 1;
}

fn session_of(state: &ParserState, opts: &CaptureOptions) -> Option<SessionId> {
    opts.session
        .clone()
        .or_else(|| state.parser_ref().session())
}

/// A cursor at the start of a file whose format is detected from its first lines.
fn fresh(path: &Path, hints: &FileHints) -> Result<(Cursor, LineReader), CaptureError> {
    let io = |source| CaptureError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut head_reader = LineReader::open(path, 0)
        .map_err(io)?
        .ok_or_else(|| CaptureError::NotATranscript(path.to_path_buf()))?;
    let mut head = Vec::new();
    let mut saw_text = false;
    while head.len() < detect::HEAD_LINES {
        let Some(line) = head_reader.next_line().map_err(io)? else {
            break;
        };
        match classify_line(&line.bytes) {
            Parsed::Json(v) => head.push(v),
            Parsed::Bad => saw_text = true,
            Parsed::Blank => {}
        }
    }
    let format = match detect::detect(&head.iter().collect::<Vec<_>>()) {
        Some(f) => f,
        // An empty file (a session that has not written yet) is not an error.
        None if head.is_empty() && !saw_text => Format::ClaudeCode,
        None => return Err(CaptureError::NotATranscript(path.to_path_buf())),
    };
    let reader = LineReader::open(path, 0)
        .map_err(io)?
        .ok_or_else(|| CaptureError::NotATranscript(path.to_path_buf()))?;
    let cursor = Cursor {
        offset: 0,
        line: 0,
        state: ParserState::new(format, hints),
    };
    Ok((cursor, reader))
}

/// Write what `emit` holds, with the cursor, in one batch.
fn commit(
    ledger: &mut Ledger,
    redactor: &StoreRedactor,
    emit: &mut Emit,
    session: Option<&SessionId>,
    (cursor_key, cursor): (&str, &impl Serialize),
    receipt: &mut Receipt,
) -> Result<(), CaptureError> {
    let mut set = WriteSet::default();
    if let Some(session) = session {
        for (seq, (ts, event)) in std::mem::take(&mut emit.events) {
            set.event(seq, Envelope::new(session.clone(), ts, event));
        }
    }
    receipt.events += set.events.len();
    set.blobs = std::mem::take(&mut emit.blobs).into_iter().collect();
    // Serializing the parser state (plain data) cannot fail.
    set.cursor = Some((
        cursor_key.to_string(),
        serde_json::to_vec(cursor).unwrap_or_default(),
    ));
    // Secrets never reach the store: redacted before the write, blobs and cursor included.
    crate::redact::apply::write_set(redactor.get()?, &mut set);
    receipt.written += ledger.write(set)?;
    emit.clear();
    Ok(())
}
