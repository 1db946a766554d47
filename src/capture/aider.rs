//! Aider's chat history: `.aider.chat.history.md` in the folder Aider ran in (the git
//! repository's root), Markdown appended to as the chat goes; each run starts a section,
//! one session each (see `source`'s text sections). Fed one line at a time, a line's
//! position its line number in the file, and grouped here into blocks: a block's events
//! take the seqs of the line it starts on.
//!
//! Follows Aider 0.86 (`aider/io.py`: `InputOutput.__init__` writes `# aider chat started
//! at <%Y-%m-%d %H:%M:%S>`, local time with no zone, read here as UTC; `user_input` each
//! prompt line as `#### <line>`; `ai_output` the reply's text between blank lines;
//! `tool_output`, `tool_error` and `confirm_ask` their lines as `> <text>`. The replies'
//! edits are `aider/coders/editblock_coder.py`'s SEARCH/REPLACE blocks (the `diff` and
//! `diff-fenced` edit formats), each after the file's name; `base_coder.py` prints `Applied
//! edit to <path>` for each file it wrote and, for a block that did not match,
//! `SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in <path>`;
//! `repo.py` prints `Commit <hash> <message>` for each commit it makes; the first lines name
//! the version (`Aider v0.86.1`) and the model (`Main model: <name> with diff edit format`,
//! or `Model:`; in architect mode the `Editor model:` after it writes the edits), which the
//! run's edits record.
//!
//! Not in the format: the time of anything but a section's start (every event of a session
//! is dated then), a session id (one is made from the file and the section's line), the
//! branch, compactions (Aider summarises the chat without a word in the file), what a
//! command printed (only `Running <command>`). The `whole` and `udiff` edit formats, which
//! write a file whole or as a unified diff, are not read as edits.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::chat::{Call, Chat, ChatFormat, Line};
use super::{Emit, FileHints, META_SLOT, absolute, blocks};
use crate::vocab::change::Change;
use crate::vocab::event::{Agent, COMMIT_MESSAGE_CAP, Event, Seq, SessionId, TouchOp, Vcs, cap};
use crate::vocab::time::parse_iso_ms;

/// The file Aider keeps its chat history in, by default.
pub(crate) const HISTORY_FILE: &str = ".aider.chat.history.md";

/// The line that starts each run's section.
const HEADER: &str = "# aider chat started at ";

/// What a prompt's lines start with.
const PROMPT: &str = "####";

/// What Aider says when a SEARCH block did not match its file.
const NO_MATCH: &str = "This SEARCH block failed to exactly match lines in ";

/// The kind of block being read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum Kind {
    Prompt,
    Reply,
}

/// A block not yet ended: its kind, the line it started on, its text so far.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Open {
    kind: Kind,
    line: u64,
    text: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Aider {
    /// The history file's path, which with a section's line names its session.
    file: String,
    cwd: Option<String>,
    session: Option<SessionId>,
    /// The section's header line and time.
    header: Option<(u64, i64)>,
    version: Option<String>,
    /// The model the run's edits are written by, as its announcement names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    /// The session's metadata is emitted with its first prompt: a run the person typed
    /// nothing in is no session.
    meta_done: bool,
    open: Option<Open>,
    chat: Chat,
}

impl Aider {
    pub(crate) fn new(hints: &FileHints) -> Aider {
        let file = hints.path.to_string_lossy().into_owned();
        Aider {
            cwd: hints
                .path
                .parent()
                .map(|p| p.to_string_lossy().into_owned()),
            file,
            ..Aider::default()
        }
    }

    fn ts(&self) -> i64 {
        self.header.map_or(0, |(_, ts)| ts)
    }

    fn start(&mut self, line: u64, time: &str) {
        let ts = parse_iso_ms(&format!("{}Z", time.trim().replace(' ', "T"))).unwrap_or(0);
        let id = Sha256::digest(format!("{}#{line} {time}", self.file));
        self.session = Some(SessionId(format!("aider-{}", &hex::encode(id)[..16])));
        self.header = Some((line, ts));
        self.model = None;
        self.chat.saw(ts);
    }

    /// The open block is over: its events.
    fn end(&mut self, out: &mut Emit) {
        let Some(open) = self.open.take() else { return };
        let mut cx = Line::new(open.line, self.ts());
        match open.kind {
            Kind::Prompt => {
                let text = open.text.trim();
                if text.is_empty() || text == "<blank>" {
                    return;
                }
                self.meta(out);
                self.chat.prompt(text, false, None, &mut cx, out);
                if let Some(command) = text.strip_prefix("/run ").or(text.strip_prefix("!")) {
                    self.shell(command, &mut cx, out);
                }
            }
            Kind::Reply => self.reply(&open.text, &mut cx, out),
        }
    }

    fn meta(&mut self, out: &mut Emit) {
        if self.meta_done {
            return;
        }
        self.meta_done = true;
        let Some((line, ts)) = self.header else {
            return;
        };
        let meta = Event::SessionMeta {
            cwd: self.cwd.clone().unwrap_or_default(),
            branch: None,
            agent: Some(Agent::Aider),
            version: self.version.clone(),
            parent: None,
            subagent: None,
        };
        out.event(Seq::at_line(line, META_SLOT), ts, meta);
    }

    /// A reply: its prose, and an edit of each file its SEARCH/REPLACE blocks name. The
    /// prose is said without the blocks, as another agent's text is without its tool calls:
    /// the edits record what they wrote.
    fn reply(&mut self, text: &str, cx: &mut Line, out: &mut Emit) {
        let found = blocks::edit_blocks(text);
        self.chat
            .said(blocks::prose(text, &found).trim(), true, cx, out);
        let mut files: Vec<(String, Vec<crate::vocab::change::Replacement>)> = Vec::new();
        for block in found {
            let Some(file) = block.file else { continue };
            match files.iter_mut().find(|(f, _)| *f == file) {
                Some((_, edits)) => edits.push(block.edit),
                None => files.push((file, vec![block.edit])),
            }
        }
        for (file, mut edits) in files {
            let path = absolute(&file, self.cwd.as_deref());
            // One block with nothing to find makes the file with what it puts in.
            let (op, change) = match edits.len() {
                1 if edits[0].old.is_empty() => {
                    (TouchOp::Write, Change::write(edits.remove(0).new))
                }
                1 => (TouchOp::Edit, Change::Edit(edits.remove(0))),
                _ => (TouchOp::Edit, Change::MultiEdit { edits }),
            };
            let call = Call {
                id: Some(edit_id(&file)),
                tool: "edit".into(),
                detail: path.clone(),
                edits: vec![(path, op, change)],
                command: None,
                echoes: true,
                model: self.model.clone(),
            };
            self.chat.call(call, cx, out);
        }
    }

    fn shell(&mut self, command: &str, cx: &mut Line, out: &mut Emit) {
        let call = Call {
            id: None,
            tool: "shell".into(),
            detail: command.trim().to_string(),
            edits: Vec::new(),
            command: None,
            echoes: false,
            model: None,
        };
        self.chat.call(call, cx, out);
    }

    /// A `> ` line: what Aider said of what it did.
    fn said(&mut self, line: u64, text: &str, out: &mut Emit) {
        let mut cx = Line::new(line, self.ts());
        if let Some(version) = text.strip_prefix("Aider v") {
            self.version = Some(version.trim().to_string());
        } else if let Some(model) = announced_model(text) {
            self.model = Some(model.to_string());
        } else if let Some(file) = text.strip_prefix("Applied edit to ") {
            self.chat
                .result(&edit_id(file.trim()), false, "", &mut cx, out);
        } else if let Some(at) = text.find(NO_MATCH) {
            let file = text[at + NO_MATCH.len()..].trim();
            self.chat.result(&edit_id(file), true, text, &mut cx, out);
        } else if let Some(command) = text.strip_prefix("Running ") {
            self.shell(command, &mut cx, out);
        } else if let Some(commit) = text.strip_prefix("Commit ") {
            let (hash, message) = commit.split_once(' ').unwrap_or((commit, ""));
            if hash.len() >= 7 && hash.chars().all(|c| c.is_ascii_hexdigit()) {
                let event = Event::Committed {
                    vcs: Vcs::Git,
                    hash: hash.to_string(),
                    message: cap(message.trim(), COMMIT_MESSAGE_CAP),
                    branch: None,
                };
                self.chat.emit(&mut cx, event, out);
            }
        }
    }
}

/// The model an announcement line names for the edits: `Model: <name> with <format> edit
/// format` (`Main model:` when a weak model is set apart), and in architect mode the
/// `Editor model:` after it, which writes the edits.
fn announced_model(text: &str) -> Option<&str> {
    let named = ["Main model: ", "Model: ", "Editor model: "]
        .iter()
        .find_map(|p| text.strip_prefix(p))?;
    let name = named
        .split_once(" with ")
        .map_or(named, |(name, _)| name)
        .trim();
    (!name.is_empty()).then_some(name)
}

/// The id an edit of `file` waits under for Aider's word on it.
fn edit_id(file: &str) -> String {
    format!("edit:{file}")
}

impl ChatFormat for Aider {
    fn read(&mut self, line: u64, value: &Value, out: &mut Emit) {
        let Some(text) = value.as_str() else { return };
        if let Some(time) = text.strip_prefix(HEADER) {
            self.end(out);
            self.start(line, time);
            return;
        }
        if self.header.is_none() {
            return;
        }
        if let Some(prompt) = text.strip_prefix(PROMPT) {
            let prompt = prompt.strip_prefix(' ').unwrap_or(prompt);
            // `user_input` ends each line but the last with two spaces, Markdown's break.
            let prompt = prompt.strip_suffix("  ").unwrap_or(prompt);
            match &mut self.open {
                Some(open) if open.kind == Kind::Prompt => {
                    open.text.push('\n');
                    open.text.push_str(prompt);
                }
                _ => {
                    self.end(out);
                    self.open = Some(Open {
                        kind: Kind::Prompt,
                        line,
                        text: prompt.to_string(),
                    });
                }
            }
            return;
        }
        if text == ">" || text.starts_with("> ") {
            self.end(out);
            let said = text[1..].trim();
            self.said(line, said.strip_suffix("  ").unwrap_or(said), out);
            return;
        }
        match &mut self.open {
            Some(open) if open.kind == Kind::Reply => {
                open.text.push('\n');
                open.text.push_str(text);
            }
            // A blank line ends a prompt; between blocks it is nothing.
            _ if text.trim().is_empty() => self.end(out),
            _ => {
                self.end(out);
                self.open = Some(Open {
                    kind: Kind::Reply,
                    line,
                    text: text.to_string(),
                });
            }
        }
    }

    fn chat(&self) -> &Chat {
        &self.chat
    }

    fn session_id(&self) -> Option<SessionId> {
        self.session.clone()
    }

    fn provisional(&self, out: &mut Emit) {
        // The block still open is whole as far as the file goes: ended on a copy, so a
        // later capture that reads on revises it.
        let mut ended = self.clone();
        ended.end(out);
        ended.chat.flush(out);
    }
}

/// Whether `line` starts a section of Aider's chat history.
pub(crate) fn is_header(line: &str) -> bool {
    line.starts_with(HEADER)
}

/// Whether `text` is Aider's chat history: its first line with anything on it starts a
/// section.
pub(crate) fn is_history(text: &[u8]) -> bool {
    text.split(|b| *b == b'\n')
        .map(|l| String::from_utf8_lossy(l).trim_end().to_string())
        .find(|l| !l.is_empty())
        .is_some_and(|l| is_header(&l))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::TranscriptParser;

    fn feed(text: &str) -> (Option<SessionId>, Vec<Event>) {
        let mut p = Aider::new(&FileHints {
            path: "/w/app/.aider.chat.history.md".into(),
            ..FileHints::default()
        });
        let mut out = Emit::default();
        for (i, line) in text.lines().enumerate() {
            p.line(i as u64, &Value::String(line.into()), &mut out);
        }
        p.flush(&mut out);
        (
            p.session(),
            out.events.into_values().map(|(_, e)| e).collect(),
        )
    }

    const SESSION: &str = "\n# aider chat started at 2026-07-14 09:00:00\n\n> Aider v0.86.1  \n\
        > Main model: claude-sonnet-4-5 with diff edit format  \n\n\
        #### add a greeting  \n#### in src/greet.py  \n\n\
        Here it is.\n\nsrc/greet.py\n```python\n<<<<<<< SEARCH\n=======\ndef greet():\n    pass\n>>>>>>> REPLACE\n```\n\n\
        > Applied edit to src/greet.py  \n> Commit 1a2b3c4 feat: add greet  \n";

    #[test]
    fn a_section_is_a_session_of_its_prompts_replies_edits_and_commits() {
        let (session, events) = feed(SESSION);
        assert!(session.unwrap().as_str().starts_with("aider-"));
        assert!(matches!(
            &events[0],
            Event::SessionMeta { cwd, agent: Some(Agent::Aider), version: Some(v), .. }
                if cwd == "/w/app" && v == "0.86.1"
        ));
        assert!(
            matches!(&events[1], Event::UserMsg { text, .. } if text == "add a greeting\nin src/greet.py")
        );
        assert!(matches!(&events[2], Event::FinalMsg { text } if text == "Here it is."));
        assert!(matches!(&events[3], Event::ToolCall { tool, ok: true, .. } if tool == "edit"));
        assert!(matches!(
            &events[4],
            Event::FileTouch { path, op: TouchOp::Write, failed: false, model: Some(m), .. }
                if path == "/w/app/src/greet.py" && m == "claude-sonnet-4-5"
        ));
        assert!(matches!(&events[5], Event::Committed { hash, .. } if hash == "1a2b3c4"));
        assert_eq!(events.len(), 6);
    }

    #[test]
    fn an_edit_names_the_model_announced_for_its_run_the_editor_in_architect_mode() {
        let model = |text: &str| {
            let (_, events) = feed(text);
            events.into_iter().find_map(|e| match e {
                Event::FileTouch { model, .. } => Some(model),
                _ => None,
            })
        };
        let architect = SESSION.replace(
            "with diff edit format  \n",
            "with architect edit format  \n> Editor model: gpt-4.1 with editor-diff edit format  \n\
             > Weak model: claude-haiku-4-5  \n",
        );
        assert_eq!(model(&architect), Some(Some("gpt-4.1".to_string())));
        let single = SESSION.replace("> Main model: ", "> Model: ");
        assert_eq!(model(&single), Some(Some("claude-sonnet-4-5".to_string())));
        // A run that announces none names none, whatever an earlier run announced.
        let later = format!(
            "{SESSION}{}",
            SESSION
                .replace("2026-07-14 09:00:00", "2026-07-14 10:00:00")
                .replace(
                    "> Main model: claude-sonnet-4-5 with diff edit format  \n",
                    ""
                )
        );
        let (_, events) = feed(&later);
        let named: Vec<Option<String>> = events
            .into_iter()
            .filter_map(|e| match e {
                Event::FileTouch { model, .. } => Some(model),
                _ => None,
            })
            .collect();
        assert_eq!(named, [Some("claude-sonnet-4-5".to_string()), None]);
    }

    #[test]
    fn a_block_that_did_not_match_marks_its_edit_failed() {
        let text = SESSION.replace(
            "> Applied edit to src/greet.py",
            "> ## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in src/greet.py",
        );
        let (_, events) = feed(&text);
        assert!(
            events
                .iter()
                .any(|e| matches!(e, Event::ToolCall { ok: false, .. }))
        );
        assert!(
            events
                .iter()
                .any(|e| matches!(e, Event::FileTouch { failed: true, .. }))
        );
    }

    #[test]
    fn a_run_nothing_was_typed_in_is_no_session_and_only_a_header_starts_the_history() {
        let (_, events) =
            feed("\n# aider chat started at 2026-07-14 09:00:00\n\n> Aider v0.86.1  \n");
        assert!(events.is_empty());
        assert!(is_history(SESSION.as_bytes()));
        assert!(!is_history(
            b"# Notes\n\n# aider chat started at 2026-07-14 09:00:00\n"
        ));
    }
}
