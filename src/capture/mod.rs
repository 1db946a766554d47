//! Turning transcript files into ledger events.
//!
//! `source` says what kind of source a file is (JSONL lines, a JSON document rewritten
//! whole, a SQLite database, a session kept as JSON files, Markdown appended in sections) and how each yields records at
//! stable positions; `reader` yields raw lines (never holding the file), `detect`
//! recognises the format by a positive signature, and one parser per format (`claude`,
//! `codex`, `gemini`, `opencode`, `cursor`, `copilot`, `pi`, `qwen`, `droid`, `cline`,
//! `aider`, `amp`; the last eight share `chat`) turns records into events. `database` says
//! which harness a SQLite database is and reads its sessions; `goose` and `crush`, whose tool
//! results are rows of their own, read them through `paired`. A parser is a resumable state machine: its
//! state is saved beside the source's position in the capture cursor, in the same atomic
//! batch as the events, so a grown transcript ingests only its delta and the result equals
//! a full parse.

pub(crate) mod aider;
pub(crate) mod amp;
pub(crate) mod bignum;
pub(crate) mod blocks;
pub(crate) mod chat;
pub(crate) mod claude;
pub(crate) mod cline;
pub(crate) mod codex;
pub(crate) mod commit;
pub(crate) mod copilot;
pub(crate) mod crush;
pub(crate) mod cursor;
pub(crate) mod database;
pub(crate) mod detect;
mod driver;
pub(crate) mod droid;
pub(crate) mod gemini;
pub(crate) mod goose;
pub(crate) mod opencode;
pub(crate) mod paired;
pub(crate) mod patch;
pub(crate) mod pi;
pub(crate) mod qwen;
pub mod reader;
pub(crate) mod source;
pub(crate) mod turn;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

use crate::vocab::change::{BlobId, Change};
use crate::vocab::event::{Event, Seq, SessionId};

pub(crate) use driver::{CaptureError, CaptureOptions, Place, Receipt, capture_file};

/// Events and blobs produced by feeding lines to a parser. A later event at the same seq
/// replaces an earlier one (a parser revising what it said, e.g. a tool call that failed).
#[derive(Default, Debug)]
pub struct Emit {
    pub events: BTreeMap<Seq, (i64, Event)>,
    pub blobs: BTreeMap<BlobId, Vec<u8>>,
}

impl Emit {
    pub(crate) fn event(&mut self, seq: Seq, ts_ms: i64, event: Event) {
        self.events.insert(seq, (ts_ms, event));
    }

    /// Store `change` in the blob store and return the id a `FileTouch` refers to it by.
    pub(crate) fn change(&mut self, change: &Change) -> BlobId {
        let (id, bytes) = change.to_blob();
        self.blobs.entry(id).or_insert(bytes);
        id
    }

    /// Drop the blob `id` unless an event emitted so far names it: a change replaced by a
    /// fuller one before anything was written is not kept twice.
    pub(crate) fn forget(&mut self, id: BlobId) {
        // Asked once per Write answered: only the file touches are looked at, in place.
        let named = self.events.values().any(|(_, e)| match e {
            Event::FileTouch { change, more, .. } => {
                *change == Some(id) || more.iter().any(|t| t.change == Some(id))
            }
            _ => false,
        });
        if !named {
            self.blobs.remove(&id);
        }
    }

    /// What the tool call at `call` printed, `text`: its excerpt for the event, and the
    /// whole text in the blob store when the excerpt leaves some out (identical outputs
    /// are one blob). None for an output with nothing in it.
    pub(crate) fn output(&mut self, call: Seq, text: &str) -> Option<Event> {
        if text.trim().is_empty() {
            return None;
        }
        let excerpt = crate::vocab::event::excerpt(text);
        let output = (excerpt.len() < text.len()).then(|| {
            let id = BlobId::of(text.as_bytes());
            self.blobs
                .entry(id)
                .or_insert_with(|| text.as_bytes().to_vec());
            id
        });
        Some(Event::ToolOutput {
            call,
            excerpt,
            output,
            bytes: text.len() as u64,
        })
    }

    pub(crate) fn clear(&mut self) {
        self.events.clear();
        self.blobs.clear();
    }
}

/// The string at `key` of a JSON object, if it is one.
pub(crate) fn str_at<'a>(v: &'a serde_json::Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(serde_json::Value::as_str)
}

/// The model a message names, as `FileTouch` records it: `provider/model` where the format
/// names the provider beside the model (OpenCode, Pi, Cline, Goose, Crush: the form model
/// ids take in Agent Trace), else the model alone; `None` where it names none.
pub(crate) fn model_name(provider: Option<&str>, model: Option<&str>) -> Option<String> {
    let model = model.filter(|m| !m.trim().is_empty())?;
    Some(match provider.filter(|p| !p.trim().is_empty()) {
        Some(provider) => format!("{provider}/{model}"),
        None => model.to_string(),
    })
}

/// `path` made absolute against `base` by plain string joining (no filesystem access).
pub(crate) fn absolute(path: &str, base: Option<&str>) -> String {
    let is_abs = path.starts_with('/')
        || path.starts_with('\\')
        || path.starts_with('~')
        || path.as_bytes().get(1) == Some(&b':');
    match base.filter(|b| !b.is_empty()) {
        Some(base) if !is_abs => {
            let rel = path.trim_start_matches("./");
            if rel.is_empty() || rel == "." {
                return base.to_string();
            }
            format!("{}/{}", base.trim_end_matches('/'), rel)
        }
        _ => path.to_string(),
    }
}

/// What a command printed, as a tool result or a Codex `exec_command_end` records it apart:
/// its stdout and stderr, the empty ones left out, one after the other.
pub(crate) fn streams(v: &serde_json::Value) -> String {
    ["stdout", "stderr"]
        .iter()
        .filter_map(|k| str_at(v, k))
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether what a call of `tool` printed is kept: a failure's message always, a success's
/// unless it only echoes what the call was given or read (a file's content, already in the
/// repository and what `peat FILE` follows; an edit's "updated successfully"; a to-do
/// list). In the benchmark's sessions those echoes are half of all outputs and most of
/// their bytes, and no one searches them for what went wrong. Both parsers ask this.
pub(crate) fn keeps_output(tool: &str, failed: bool) -> bool {
    failed
        || !matches!(
            tool,
            "Read" | "Edit" | "Write" | "MultiEdit" | "NotebookEdit" | "TodoWrite" | "apply_patch"
        )
}

/// Hands out the seqs of one transcript line: slot 0 is the session's metadata, the rest
/// in the order the line's events arise. A pure function of the line, so a re-parse
/// assigns the same seqs. A line holds at most 15 events after its metadata.
#[derive(Debug)]
pub(crate) struct LineSlots {
    line: u64,
    next: u32,
}

/// The slot of the `SessionMeta` a line may carry.
pub(crate) const META_SLOT: u32 = 0;

impl LineSlots {
    pub(crate) fn new(line: u64) -> LineSlots {
        LineSlots { line, next: 1 }
    }

    /// The seq of slot 0 (the session's metadata).
    pub(crate) fn meta(&self) -> Seq {
        Seq::at_line(self.line, META_SLOT)
    }

    /// How many slots are left.
    pub(crate) fn left(&self) -> u32 {
        crate::vocab::event::SEQ_STRIDE.saturating_sub(self.next)
    }
}

impl Iterator for LineSlots {
    type Item = Seq;

    /// The next free seq on this line, or `None` when the line's 16 slots are used up.
    fn next(&mut self) -> Option<Seq> {
        if self.next >= crate::vocab::event::SEQ_STRIDE {
            return None;
        }
        let seq = Seq::at_line(self.line, self.next);
        self.next += 1;
        Some(seq)
    }
}

/// What the driver knows about the file, for parsers that derive identity from it.
#[derive(Clone, Debug, Default)]
pub struct FileHints {
    /// The file name without `.jsonl` / `.jsonl.zst`.
    pub(crate) stem: String,
    /// The file's path as given (Cursor's names the project folder it was written for).
    pub(crate) path: std::path::PathBuf,
    /// When the file was last written, in ms since the epoch, where the system says (Cursor's
    /// lines carry no time of their own).
    pub(crate) modified_ms: Option<i64>,
    /// For a file under a Gemini CLI `chats/` folder: the project folder the harness keeps
    /// in `.project_root` beside it (the recordings themselves do not name it).
    pub(crate) project_root: Option<String>,
    /// For a file one folder below `chats/` (a Gemini CLI subagent's): that folder's name,
    /// its parent session's id.
    pub(crate) parent: Option<String>,
}

impl FileHints {
    /// The hints of the file named `path`, which is `absolute` with every link resolved
    /// (the driver resolves it once, for the cursor's key): the name as given (a session
    /// may be named by a link), the folders as they are (Cursor's project folder is named
    /// in the path, which may be relative).
    pub(crate) fn of(path: &Path, absolute: &Path) -> FileHints {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stem = name
            .strip_suffix(".jsonl.zst")
            .or_else(|| name.strip_suffix(".jsonl"))
            .or_else(|| name.strip_suffix(".zst"))
            .unwrap_or(&name)
            .to_string();
        let modified_ms = std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .and_then(|d| i64::try_from(d.as_millis()).ok());
        let dir = path.parent();
        let chats = dir.filter(|d| d.file_name().is_some_and(|n| n == "chats"));
        let (chats, parent) = match chats {
            Some(c) => (Some(c), None),
            None => {
                let up = dir.and_then(Path::parent);
                let chats = up.filter(|d| d.file_name().is_some_and(|n| n == "chats"));
                let parent = chats
                    .and(dir)
                    .and_then(Path::file_name)
                    .map(|n| n.to_string_lossy().into_owned());
                (chats, parent)
            }
        };
        let project_root = chats
            .and_then(Path::parent)
            .and_then(|p| std::fs::read_to_string(p.join(".project_root")).ok())
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty());
        FileHints {
            stem,
            path: absolute.to_path_buf(),
            modified_ms,
            project_root,
            parent,
        }
    }
}

/// A transcript parser: fed complete JSON lines in file order, resumable from its state.
pub(crate) trait TranscriptParser {
    /// Feed the JSON value of raw line `line` (0-based, counting blank and bad lines).
    fn line(&mut self, line: u64, value: &serde_json::Value, out: &mut Emit);

    /// No more complete lines are available for now: emit what is provisional (the open
    /// turn's closing message). Must not change the parser's state, so that a later
    /// capture that resumes from the saved state revises these events if the file grows.
    fn flush(&self, out: &mut Emit);

    /// The session the transcript belongs to, once a line has said.
    fn session(&self) -> Option<SessionId>;

    /// The newest event timestamp seen so far (0 if none).
    fn last_ts(&self) -> i64;

    /// Events dropped because a line had no free slot left (see [`LineSlots`]).
    fn overflowed(&self) -> u64 {
        0
    }
}

/// The saved state of whichever parser a transcript needs.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "format", rename_all = "snake_case")]
pub(crate) enum ParserState {
    Claude(claude::Claude),
    Codex(codex::Codex),
    Cursor(cursor::Cursor),
    Copilot(copilot::Copilot),
    Pi(pi::Pi),
    Qwen(qwen::Qwen),
    Droid(droid::Droid),
    Gemini(gemini::Gemini),
    #[serde(rename = "opencode")]
    OpenCode(opencode::OpenCode),
    Goose(goose::Goose),
    Crush(crush::Crush),
    Cline(cline::Cline),
    Aider(aider::Aider),
    Amp(amp::Amp),
}

impl ParserState {
    pub(crate) fn new(format: detect::Format, hints: &FileHints) -> ParserState {
        match format {
            detect::Format::ClaudeCode => ParserState::Claude(claude::Claude::new(hints)),
            detect::Format::Codex => ParserState::Codex(codex::Codex::new(hints)),
            detect::Format::Cursor => ParserState::Cursor(cursor::Cursor::new(hints)),
            detect::Format::Copilot => ParserState::Copilot(copilot::Copilot::new(hints)),
            detect::Format::Pi => ParserState::Pi(pi::Pi::new(hints)),
            detect::Format::Qwen => ParserState::Qwen(qwen::Qwen::new(hints)),
            detect::Format::Droid => ParserState::Droid(droid::Droid::new(hints)),
            detect::Format::Gemini => ParserState::Gemini(gemini::Gemini::new(hints)),
            detect::Format::OpenCode => ParserState::OpenCode(opencode::OpenCode::default()),
            detect::Format::Goose => ParserState::Goose(goose::Goose::default()),
            detect::Format::Crush => ParserState::Crush(crush::Crush::new(hints)),
            detect::Format::Cline => ParserState::Cline(cline::Cline::new(hints)),
            detect::Format::Aider => ParserState::Aider(aider::Aider::new(hints)),
            detect::Format::Amp => ParserState::Amp(amp::Amp::new(hints)),
        }
    }

    /// A saved state is taken up again for the file `hints` describes: a format that dates
    /// lines by the file (Cursor's, whose lines carry no time) learns its newer time.
    pub(crate) fn reopened(&mut self, hints: &FileHints) {
        if let ParserState::Cursor(p) = self {
            p.reopened(hints);
        }
    }

    /// The format this state parses.
    pub(crate) fn format(&self) -> detect::Format {
        match self {
            ParserState::Claude(_) => detect::Format::ClaudeCode,
            ParserState::Codex(_) => detect::Format::Codex,
            ParserState::Cursor(_) => detect::Format::Cursor,
            ParserState::Copilot(_) => detect::Format::Copilot,
            ParserState::Pi(_) => detect::Format::Pi,
            ParserState::Qwen(_) => detect::Format::Qwen,
            ParserState::Droid(_) => detect::Format::Droid,
            ParserState::Gemini(_) => detect::Format::Gemini,
            ParserState::OpenCode(_) => detect::Format::OpenCode,
            ParserState::Goose(_) => detect::Format::Goose,
            ParserState::Crush(_) => detect::Format::Crush,
            ParserState::Cline(_) => detect::Format::Cline,
            ParserState::Aider(_) => detect::Format::Aider,
            ParserState::Amp(_) => detect::Format::Amp,
        }
    }

    pub(crate) fn parser(&mut self) -> &mut dyn TranscriptParser {
        match self {
            ParserState::Claude(p) => p,
            ParserState::Codex(p) => p,
            ParserState::Cursor(p) => p,
            ParserState::Copilot(p) => p,
            ParserState::Pi(p) => p,
            ParserState::Qwen(p) => p,
            ParserState::Droid(p) => p,
            ParserState::Gemini(p) => p,
            ParserState::OpenCode(p) => p,
            ParserState::Goose(p) => p,
            ParserState::Crush(p) => p,
            ParserState::Cline(p) => p,
            ParserState::Aider(p) => p,
            ParserState::Amp(p) => p,
        }
    }

    pub(crate) fn parser_ref(&self) -> &dyn TranscriptParser {
        match self {
            ParserState::Claude(p) => p,
            ParserState::Codex(p) => p,
            ParserState::Cursor(p) => p,
            ParserState::Copilot(p) => p,
            ParserState::Pi(p) => p,
            ParserState::Qwen(p) => p,
            ParserState::Droid(p) => p,
            ParserState::Gemini(p) => p,
            ParserState::OpenCode(p) => p,
            ParserState::Goose(p) => p,
            ParserState::Crush(p) => p,
            ParserState::Cline(p) => p,
            ParserState::Aider(p) => p,
            ParserState::Amp(p) => p,
        }
    }
}

/// Parse a whole transcript held in memory (tests, and the fixtures' golden checks).
/// Returns `None` when the text is not a recognised transcript.
pub fn parse_str(text: &str, hints: &FileHints) -> Option<(Option<SessionId>, Emit)> {
    let values: Vec<(u64, serde_json::Value)> = text
        .split('\n')
        .enumerate()
        .filter_map(|(i, l)| reader::parse_line(l.as_bytes()).map(|v| (i as u64, v)))
        .collect();
    let head: Vec<&serde_json::Value> = values
        .iter()
        .map(|(_, v)| v)
        .take(detect::HEAD_LINES)
        .collect();
    let format = detect::detect(&head)?;
    let mut state = ParserState::new(format, hints);
    let mut out = Emit::default();
    for (i, v) in &values {
        state.parser().line(*i, v, &mut out);
    }
    state.parser_ref().flush(&mut out);
    Some((state.parser_ref().session(), out))
}

/// What the adapters' unit tests ask of a parsed fixture.
#[cfg(test)]
pub(crate) mod sample {
    use super::{FileHints, parse_str};
    use crate::vocab::event::{Agent, Event, TouchOp};

    /// The events `text` parses to, in seq order, checking that it names `session`.
    pub(crate) fn events(text: &str, hints: &FileHints, session: &str) -> Vec<Event> {
        let (named, out) = parse_str(text, hints).expect("a transcript some adapter reads");
        assert_eq!(named.expect("a session").as_str(), session);
        out.events.into_values().map(|(_, e)| e).collect()
    }

    /// The session opens, in its first event, in `cwd` and names `agent`.
    #[track_caller]
    pub(crate) fn assert_opens(events: &[Event], cwd: &str, agent: Agent) {
        let Some(Event::SessionMeta {
            cwd: opened,
            agent: named,
            ..
        }) = events.first()
        else {
            panic!("the first event is not the session's: {:?}", events.first());
        };
        assert_eq!((opened.as_str(), *named), (cwd, Some(agent)));
    }

    /// The file touches among `events`: the path, how, and whether the call failed.
    pub(crate) fn touches(events: &[Event]) -> Vec<(&str, TouchOp, bool)> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::FileTouch {
                    path, op, failed, ..
                } => Some((path.as_str(), *op, *failed)),
                _ => None,
            })
            .collect()
    }

    /// The model each file touch among `events` names, with the touch's path (and the
    /// paths of the further files it holds, which share its model).
    pub(crate) fn models(events: &[Event]) -> Vec<(&str, Option<&str>)> {
        events
            .iter()
            .flat_map(|e| match e {
                Event::FileTouch {
                    path, more, model, ..
                } => std::iter::once(path.as_str())
                    .chain(more.iter().map(|t| t.path.as_str()))
                    .map(|p| (p, model.as_deref()))
                    .collect(),
                _ => Vec::new(),
            })
            .collect()
    }

    /// The turns' closing messages among `events`, in order.
    pub(crate) fn finals(events: &[Event]) -> Vec<&str> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::FinalMsg { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A transcript of each chat-shaped format captured up to any line, its state saved and
    /// taken up again for the rest, gives what one capture of the whole gives: the property
    /// the oracles prove of the ledger, here at the parser.
    #[test]
    fn a_chat_shaped_transcript_captured_at_any_cut_equals_one_capture_of_the_whole() {
        let fixtures = [
            include_str!("../../tests/fixtures/cursor/session.jsonl"),
            include_str!("../../tests/fixtures/copilot/events.jsonl"),
            include_str!("../../tests/fixtures/pi/session.jsonl"),
            include_str!("../../tests/fixtures/qwen/session.jsonl"),
            include_str!("../../tests/fixtures/droid/session.jsonl"),
        ];
        let hints = FileHints {
            stem: "s".into(),
            modified_ms: Some(1_784_000_000_000),
            ..FileHints::default()
        };
        for text in fixtures {
            let lines: Vec<(u64, serde_json::Value)> = text
                .lines()
                .enumerate()
                .filter_map(|(i, l)| reader::parse_line(l.as_bytes()).map(|v| (i as u64, v)))
                .collect();
            let head: Vec<&serde_json::Value> = lines.iter().map(|(_, v)| v).collect();
            let format = detect::detect(&head).expect("a known format");
            let mut full = ParserState::new(format, &hints);
            let mut whole = Emit::default();
            for (i, v) in &lines {
                full.parser().line(*i, v, &mut whole);
            }
            full.parser_ref().flush(&mut whole);
            for k in 0..=lines.len() {
                let mut state = ParserState::new(format, &hints);
                let mut events = BTreeMap::new();
                let mut blobs = BTreeMap::new();
                for part in [&lines[..k], &lines[k..]] {
                    let mut out = Emit::default();
                    for (i, v) in part {
                        state.parser().line(*i, v, &mut out);
                    }
                    state.parser_ref().flush(&mut out);
                    events.extend(out.events);
                    blobs.extend(out.blobs);
                    let saved = serde_json::to_vec(&state).unwrap();
                    state = serde_json::from_slice(&saved).unwrap();
                    state.reopened(&hints);
                }
                assert_eq!(events, whole.events, "{format:?} cut at line {k}");
                assert_eq!(blobs, whole.blobs, "{format:?} cut at line {k}");
                assert_eq!(state.parser_ref().session(), full.parser_ref().session());
                assert_eq!(state.parser_ref().last_ts(), full.parser_ref().last_ts());
            }
        }
    }
}
