//! Cursor's agent transcripts: `~/.cursor/projects/<encoded path>/agent-transcripts/<id>.jsonl`
//! as the CLI (`cursor-agent`) writes them, and `agent-transcripts/<id>/<id>.jsonl` as the
//! editor's agent does, in the shape both have written since early 2026 (builds 2026.01 and
//! later). Cursor publishes neither its source nor a schema; the shapes followed here are the
//! ones its files hold and the public readers of them agree on:
//!
//! - `{"role":"user"|"assistant","message":{"content":[…]}}`, with Claude-API-style blocks:
//!   `text`, `tool_use {id?, name, input}`, and `tool_result {tool_use_id, content,
//!   is_error}` in user lines;
//! - `{"type":"turn_ended","status":…}` when a turn ends;
//! - the person's words inside `<user_query>…</user_query>`, with what the editor attached
//!   around them, and newer builds a `<timestamp>Friday, Jul 31, 2026, 5:10 PM
//!   (UTC-5)</timestamp>` before them.
//!
//! No line names the session, the folder or the time. The session is the file's name. The
//! working directory is the project folder's name decoded against the disk (Cursor writes
//! the path with every character that is not a letter or a digit as `-`, which loses
//! information): taken only when exactly one folder on this machine encodes to that name,
//! and left empty otherwise. A line's time is the last `<timestamp>` a prompt carried. In a
//! file with none (older builds), a line takes the file's modification time when the capture
//! that read it began: the one instant the file itself vouches for, and a bound on when the
//! line was written that is as tight as captures are frequent (the hooks capture each
//! turn). A line keeps the time it was given: re-capturing reads nothing again, and a
//! turn's closing message keeps its own time when a later capture revises it. No line
//! names a branch, a version or a model: none is recorded.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::absolute;
use super::chat::{Call, Chat, ChatFormat, Line, other_detail, search_detail, text_of};

use super::{Emit, FileHints, patch, str_at};
use crate::vocab::change::{Change, Replacement};
use crate::vocab::event::{Agent, Event, SessionId, TouchOp};

/// The Cursor parser and what it must remember between captures.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Cursor {
    session: Option<SessionId>,
    /// The working directory, when the project folder's name decodes to one folder.
    cwd: Option<String>,
    /// The time lines are given: the last `<timestamp>` read, else the file's modification
    /// time when this capture began.
    clock: i64,
    /// A prompt has carried a `<timestamp>`: the file's time no longer dates lines.
    anchored: bool,
    meta_done: bool,
    chat: Chat,
}

impl Cursor {
    pub(crate) fn new(hints: &FileHints) -> Cursor {
        Cursor {
            session: (!hints.stem.is_empty()).then(|| SessionId(hints.stem.clone())),
            cwd: project_dir(&hints.path).and_then(|slug| decode_project(&slug)),
            clock: hints.modified_ms.unwrap_or(0),
            ..Cursor::default()
        }
    }

    /// A later capture takes the saved state up again: until a prompt has carried a time,
    /// the lines it reads were written by the file's newer modification time.
    pub(crate) fn reopened(&mut self, hints: &FileHints) {
        if !self.anchored {
            self.clock = self.clock.max(hints.modified_ms.unwrap_or(0));
        }
    }

    fn user(&mut self, blocks: &[Value], cx: &mut Line, out: &mut Emit) {
        for block in blocks {
            match str_at(block, "type") {
                Some("text") => {
                    let Some(text) = str_at(block, "text") else {
                        continue;
                    };
                    let (words, context) = split_query(text);
                    // Untagged text the editor put in (a reminder, a file's content) is the
                    // harness's; untagged plain words are taken as typed (older builds).
                    let harness = context.is_none() && words.trim_start().starts_with('<');
                    self.chat.prompt(words, harness, context, cx, out);
                }
                Some("tool_result") => {
                    let Some(id) = str_at(block, "tool_use_id") else {
                        continue;
                    };
                    let failed = block.get("is_error").and_then(Value::as_bool) == Some(true);
                    let printed = text_of(block.get("content"));
                    self.chat.result(id, failed, &printed, cx, out);
                }
                _ => {}
            }
        }
    }

    fn assistant(&mut self, blocks: &[Value], cx: &mut Line, out: &mut Emit) {
        for block in blocks {
            match str_at(block, "type") {
                Some("text") => {
                    if let Some(text) = str_at(block, "text") {
                        self.chat.said(text, true, cx, out);
                    }
                }
                Some("tool_use") => {
                    let call = self.call(block);
                    self.chat.call(call, cx, out);
                }
                _ => {}
            }
        }
    }

    /// A `tool_use` block as a call, in Cursor's tool names.
    fn call(&self, block: &Value) -> Call {
        let name = str_at(block, "name").unwrap_or("unknown");
        let input = block.get("input").unwrap_or(&Value::Null);
        let base = self.cwd.as_deref();
        // Builds differ on the key (`path`, and `file_path` in some).
        let path = str_at(input, "path")
            .or_else(|| str_at(input, "file_path"))
            .map(|p| absolute(p, base));
        let field = |key: &str| str_at(input, key).unwrap_or("").to_string();
        let mut edits = Vec::new();
        let detail = match name {
            "Write" => {
                if let Some(path) = &path {
                    let content = str_at(input, "contents").or_else(|| str_at(input, "content"));
                    let change = Change::write(content.unwrap_or(""));
                    edits.push((path.clone(), TouchOp::Write, change));
                }
                path.clone().unwrap_or_default()
            }
            "StrReplace" => {
                if let Some(path) = &path {
                    let change = Change::Edit(Replacement {
                        old: field("old_string"),
                        new: field("new_string"),
                        replace_all: input.get("replace_all").and_then(Value::as_bool)
                            == Some(true),
                    });
                    edits.push((path.clone(), TouchOp::Edit, change));
                }
                path.clone().unwrap_or_default()
            }
            // The input is the patch itself, in the apply_patch grammar Codex uses.
            "ApplyPatch" => {
                let text = input.as_str().unwrap_or("");
                edits.extend(
                    super::patch::parse_patch(text)
                        .into_iter()
                        .map(|op| patch::touch(op, base)),
                );
                let paths: Vec<&str> = edits.iter().map(|(p, _, _)| p.as_str()).collect();
                paths.join(", ")
            }
            "Shell" => field("command"),
            "Grep" | "Glob" => {
                let pattern = str_at(input, "pattern").or_else(|| str_at(input, "glob_pattern"));
                match pattern {
                    Some(p) => search_detail(p, path.as_deref()),
                    None => path.clone().unwrap_or_default(),
                }
            }
            "Task" => field("description"),
            _ => other_detail(path.as_deref(), input),
        };
        Call {
            id: str_at(block, "id").map(str::to_string),
            tool: name.to_string(),
            detail,
            edits,
            command: (name == "Shell").then(|| field("command")),
            echoes: matches!(name, "Read" | "Write" | "StrReplace" | "ApplyPatch"),
            model: None,
        }
    }
}

impl ChatFormat for Cursor {
    fn read(&mut self, line: u64, v: &Value, out: &mut Emit) {
        let blocks = v
            .get("message")
            .and_then(|m| m.get("content"))
            .and_then(Value::as_array);
        // A prompt's `<timestamp>` dates the line it is on and those after it.
        if str_at(v, "role") == Some("user")
            && let Some(ts) = blocks
                .into_iter()
                .flatten()
                .filter_map(|b| str_at(b, "text"))
                .find_map(prompt_time)
        {
            self.clock = ts;
            self.anchored = true;
        }
        let mut cx = Line::new(line, self.clock);
        self.chat.saw(self.clock);
        if !self.meta_done {
            self.meta_done = true;
            let meta = Event::SessionMeta {
                cwd: self.cwd.clone().unwrap_or_default(),
                branch: None,
                agent: Some(Agent::Cursor),
                version: None,
                parent: None,
                subagent: None,
            };
            out.event(cx.slots.meta(), cx.ts, meta);
        }
        if str_at(v, "type") == Some("turn_ended") {
            self.chat.close_turn(out);
            return;
        }
        let Some(blocks) = blocks else { return };
        match str_at(v, "role") {
            Some("user") => self.user(blocks, &mut cx, out),
            Some("assistant") => self.assistant(blocks, &mut cx, out),
            _ => {}
        }
    }

    fn chat(&self) -> &Chat {
        &self.chat
    }

    fn session_id(&self) -> Option<SessionId> {
        self.session.clone()
    }
}

/// The person's words inside `<user_query>`, and what came around them (the timestamp and
/// the editor's attachments) as their context; text without the tag, as it is.
fn split_query(text: &str) -> (&str, Option<String>) {
    const OPEN: &str = "<user_query>";
    const CLOSE: &str = "</user_query>";
    let Some(start) = text.find(OPEN) else {
        return (text, None);
    };
    let inner_start = start + OPEN.len();
    let inner_end = text[inner_start..]
        .find(CLOSE)
        .map_or(text.len(), |i| inner_start + i);
    let after = (inner_end + CLOSE.len()).min(text.len());
    let around = format!("{}{}", &text[..start], &text[after..]);
    let around = around.trim();
    let context = (!around.is_empty()).then(|| around.to_string());
    (text[inner_start..inner_end].trim(), context)
}

/// The instant a prompt's `<timestamp>Friday, Jul 31, 2026, 5:10 PM (UTC-5)</timestamp>`
/// names, in ms since the epoch.
fn prompt_time(text: &str) -> Option<i64> {
    let start = text.find("<timestamp>")? + "<timestamp>".len();
    let end = start + text[start..].find("</timestamp>")?;
    let stamp = text[start..end].trim();
    // "Friday, " names the day the date already names.
    let stamp = stamp.split_once(", ").map_or(stamp, |(_, rest)| rest);
    let (civil, zone) = stamp.rsplit_once(" (UTC")?;
    let zone = zone.strip_suffix(')')?;
    let seconds = match zone {
        "" => 0,
        z => {
            // By prefix, not by byte: a damaged zone may open with a character of any width.
            let (sign, z) = match (z.strip_prefix('+'), z.strip_prefix('-')) {
                (Some(rest), _) => (1, rest),
                (_, Some(rest)) => (-1, rest),
                _ => return None,
            };
            let (h, m) = z.split_once(':').unwrap_or((z, "0"));
            sign * (h.parse::<i32>().ok()? * 3600 + m.parse::<i32>().ok()? * 60)
        }
    };
    let offset = jiff::tz::Offset::from_seconds(seconds).ok()?;
    let dt = jiff::civil::DateTime::strptime("%b %d, %Y, %I:%M %p", civil).ok()?;
    let ts = offset.to_timestamp(dt).ok()?;
    Some(ts.as_millisecond())
}

/// The project folder's name in a transcript's path: the parent of its `agent-transcripts`.
fn project_dir(path: &Path) -> Option<String> {
    let mut ancestors = path.ancestors();
    ancestors.find(|a| a.file_name().is_some_and(|n| n == "agent-transcripts"))?;
    let project = ancestors.next()?.file_name()?;
    Some(project.to_string_lossy().into_owned())
}

/// The one folder on this machine whose absolute path Cursor would encode as `slug`, if
/// exactly one does. The encoding writes each character that is not an ASCII letter or
/// digit as `-` and drops the leading `/`, so a dash may stand for a separator, a dot, a
/// space or a dash: each reading is tried against the folders that exist.
fn decode_project(slug: &str) -> Option<String> {
    let mut found = Vec::new();
    decode_below(Path::new("/"), slug, &mut found);
    match found.as_slice() {
        [one] => Some(one.to_string_lossy().into_owned()),
        _ => None,
    }
}

/// Collect into `found` the folders below `dir` whose path from `dir` encodes as `rest`;
/// stops once a second is found (the name is then ambiguous).
fn decode_below(dir: &Path, rest: &str, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if found.len() > 1 {
            return;
        }
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let name = entry.file_name();
        let encoded: String = name
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        if encoded.is_empty() {
            continue;
        }
        if rest == encoded {
            found.push(entry.path());
        } else if let Some(below) = rest
            .strip_prefix(encoded.as_str())
            .and_then(|r| r.strip_prefix('-'))
        {
            decode_below(&entry.path(), below, found);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::parse_str;
    use crate::capture::sample::{events, finals, touches};

    const SESSION: &str = include_str!("../../tests/fixtures/cursor/session.jsonl");

    fn parse(text: &str) -> Vec<Event> {
        let hints = FileHints {
            stem: "5d2c1f0e-7a44-4d0b-9d8e-2c6b1a3f9e10".into(),
            modified_ms: Some(1_700_000_000_000),
            ..FileHints::default()
        };
        events(text, &hints, "5d2c1f0e-7a44-4d0b-9d8e-2c6b1a3f9e10")
    }

    #[test]
    fn the_prompt_is_the_user_query_and_what_came_around_it_is_its_context() {
        let (words, context) = split_query(
            "<timestamp>Friday, Jul 31, 2026, 5:10 PM (UTC-5)</timestamp>\n<user_query>\nfix it\n</user_query>",
        );
        assert_eq!(words, "fix it");
        assert_eq!(
            context.as_deref(),
            Some("<timestamp>Friday, Jul 31, 2026, 5:10 PM (UTC-5)</timestamp>")
        );
        assert_eq!(split_query("plain words"), ("plain words", None));
    }

    #[test]
    fn a_prompt_timestamp_is_read_with_its_offset() {
        // 5:10 PM at UTC-5 is 22:10 UTC.
        let ms = prompt_time("<timestamp>Friday, Jul 31, 2026, 5:10 PM (UTC-5)</timestamp>");
        assert_eq!(ms, crate::vocab::time::parse_iso_ms("2026-07-31T22:10:00Z"));
        let half = prompt_time("<timestamp>Monday, Mar 2, 2026, 9:05 AM (UTC+5:30)</timestamp>");
        assert_eq!(
            half,
            crate::vocab::time::parse_iso_ms("2026-03-02T03:35:00Z")
        );
        assert_eq!(prompt_time("<timestamp>soon</timestamp>"), None);
        // A zone opening with a character wider than a byte is no zone (it panicked once).
        assert_eq!(
            prompt_time("<timestamp>Jul 31, 2026, 5:10 PM (UTC\u{fffd}-5)</timestamp>"),
            None
        );
        assert_eq!(prompt_time("no stamp"), None);
    }

    #[test]
    fn lines_take_the_last_prompt_time_and_before_any_the_files_modification_time() {
        let hints = FileHints {
            stem: "s".into(),
            modified_ms: Some(1_700_000_000_000),
            ..FileHints::default()
        };
        let (_, out) = parse_str(SESSION, &hints).unwrap();
        let times: Vec<i64> = out.events.values().map(|(ts, _)| *ts).collect();
        let first_prompt = crate::vocab::time::parse_iso_ms("2026-07-31T22:10:00Z").unwrap();
        // The fixture's first prompt carries a timestamp: nothing falls back to the mtime.
        assert!(times.iter().all(|t| *t >= first_prompt), "{times:?}");
        let untimed = r#"{"role":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}"#;
        let (_, out) = parse_str(untimed, &hints).unwrap();
        assert!(out.events.values().all(|(ts, _)| *ts == 1_700_000_000_000));
    }

    #[test]
    fn a_later_capture_dates_untimed_lines_by_the_files_newer_time_until_a_prompt_has_one() {
        let at = |ms| FileHints {
            stem: "s".into(),
            modified_ms: Some(ms),
            ..FileHints::default()
        };
        let said = |text: &str| serde_json::json!({"role":"assistant","message":{"content":[{"type":"text","text":text}]}});
        let mut p = Cursor::new(&at(1_000));
        let mut out = Emit::default();
        p.read(0, &said("one"), &mut out);
        p.reopened(&at(5_000));
        p.read(1, &said("two"), &mut out);
        // A file's time never goes back (a file restored from a backup).
        p.reopened(&at(2_000));
        p.read(2, &said("three"), &mut out);
        let times: Vec<i64> = out.events.values().map(|(ts, _)| *ts).collect();
        assert_eq!(times, [1_000, 1_000, 5_000, 5_000]);

        let prompt = serde_json::json!({"role":"user","message":{"content":[{"type":"text",
            "text":"<timestamp>Friday, Jul 31, 2026, 5:10 PM (UTC-5)</timestamp>\n<user_query>go</user_query>"}]}});
        p.read(3, &prompt, &mut out);
        p.reopened(&at(9_000_000_000_000));
        p.read(4, &said("four"), &mut out);
        let stamp = crate::vocab::time::parse_iso_ms("2026-07-31T22:10:00Z").unwrap();
        assert_eq!(out.events.values().last().map(|(ts, _)| *ts), Some(stamp));
    }

    #[test]
    fn edits_become_file_touches_with_what_they_wrote_and_a_failed_one_is_marked() {
        let events = parse(SESSION);
        let touches = touches(&events);
        assert!(touches.contains(&("/work/app/src/greet.py", TouchOp::Write, false)));
        assert!(touches.contains(&("/work/app/src/greet.py", TouchOp::Edit, false)));
        assert!(touches.contains(&("/work/app/README.md", TouchOp::PatchAdd, false)));
        assert!(
            touches.contains(&("/work/app/src/missing.py", TouchOp::Edit, true)),
            "{touches:?}"
        );
        let failed_calls = events
            .iter()
            .filter(|e| matches!(e, Event::ToolCall { ok: false, .. }))
            .count();
        assert_eq!(failed_calls, 1);
    }

    #[test]
    fn a_turn_ends_with_its_last_text_and_a_commit_is_read_from_the_shell_output() {
        let events = parse(SESSION);
        let finals = finals(&events);
        assert_eq!(finals, ["Greeting added and README written.", "Committed."]);
        assert!(events.iter().any(|e| matches!(
            e,
            Event::Committed { hash, message, .. } if hash == "4f2a9c1" && message == "add greeting"
        )));
        let prompts: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                Event::UserMsg {
                    text,
                    harness: false,
                    ..
                } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(prompts, ["add a greeting module", "commit it"]);
    }

    #[test]
    fn the_session_meta_names_cursor_and_an_undecodable_folder_leaves_the_cwd_empty() {
        let events = parse(SESSION);
        let Event::SessionMeta { cwd, agent, .. } = &events[0] else {
            panic!("{:?}", events[0]);
        };
        assert_eq!(*agent, Some(Agent::Cursor));
        assert_eq!(cwd, "");
    }

    #[test]
    fn a_project_folder_decodes_only_to_the_one_folder_that_encodes_to_it() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("my.app/src")).unwrap();
        let encode = |p: &Path| -> String {
            p.to_string_lossy()
                .trim_start_matches('/')
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect()
        };
        let slug = encode(&root.join("my.app/src"));
        assert_eq!(
            decode_project(&slug).as_deref(),
            Some(root.join("my.app/src").to_str().unwrap())
        );
        // A second folder that encodes the same way makes the name ambiguous.
        std::fs::create_dir_all(root.join("my-app/src")).unwrap();
        assert_eq!(decode_project(&slug), None);
        assert_eq!(decode_project(&encode(&root.join("nowhere"))), None);
        let transcript = root.join("p/agent-transcripts/x/x.jsonl");
        assert_eq!(project_dir(&transcript).as_deref(), Some("p"));
        assert_eq!(project_dir(&root.join("p/x.jsonl")), None);
    }

    #[test]
    fn a_write_keeps_its_content_whole() {
        let line = r#"{"role":"assistant","message":{"content":[{"type":"tool_use","id":"w","name":"Write","input":{"path":"/w/a.txt","contents":"one\ntwo\n"}}]}}"#;
        let hints = FileHints {
            stem: "s".into(),
            ..FileHints::default()
        };
        let (_, out) = parse_str(line, &hints).unwrap();
        let change = Change::write("one\ntwo\n");
        let (id, _) = change.to_blob();
        assert!(out.blobs.contains_key(&id));
        assert!(out.events.values().any(|(_, e)| matches!(
            e,
            Event::FileTouch { change: Some(c), .. } if *c == id
        )));
    }
}
