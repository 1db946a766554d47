//! What the chat-shaped formats share (Cursor, Copilot CLI, Pi): a line's events in its
//! slots, the open turn whose last text becomes its closing message, and the tool calls
//! waiting for their results.
//!
//! Each adapter reads its own shapes and names its own tools; it hands this module a prompt,
//! a text, a [`Call`] or a result, and this module records them the way the Claude Code
//! parser does: a call's failure revises the call and its file touches, a commit is read
//! from its command's output, and what a call printed is kept unless it only echoes what it
//! was given. Everything here is saved in the capture cursor with the adapter's state.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::commit::{self, PendingCommit};
use super::turn::Closing;
use super::{Emit, LineSlots, TranscriptParser, str_at};
use crate::vocab::change::Change;
use crate::vocab::event::{DETAIL_CAP, Event, Seq, SessionId, TouchOp, cap};
use serde_json::Value;

/// Unanswered tool calls kept at most; past this the oldest is forgotten (its result, if it
/// ever comes, is then ignored). Keeps the saved state small when results go missing.
const MAX_PENDING: usize = 128;

/// The bookkeeping of one transcript, saved with its adapter's state.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Chat {
    /// The open turn's last agent text: its closing message so far.
    turn: Closing,
    /// Tool calls waiting for their result, by call id.
    pending: BTreeMap<String, Pending>,
    /// The newest timestamp seen.
    max_ts: i64,
    /// Events dropped because their line had no slot left.
    overflowed: u64,
}

/// A tool call whose result has not been seen yet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Pending {
    /// The raw line the call was on (for forgetting the oldest).
    line: u64,
    ts: i64,
    /// The `ToolCall` as emitted, if it got a slot.
    call: Option<(Seq, Event)>,
    /// The `FileTouch`es as emitted, one per file the call edits.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    touches: Vec<(Seq, Event)>,
    /// A commit-making command, waiting for the output that names the commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    commit: Option<PendingCommit>,
    /// Its output only echoes what it was given (a file read or written): kept only when it
    /// failed (see [`super::keeps_output`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    echoes: bool,
}

/// One line being recorded: its slots and its timestamp.
pub(crate) struct Line {
    pub(crate) slots: LineSlots,
    pub(crate) ts: i64,
    /// The raw line's index, for forgetting the oldest unanswered call.
    line: u64,
}

impl Line {
    pub(crate) fn new(line: u64, ts: i64) -> Line {
        Line {
            slots: LineSlots::new(line),
            ts,
            line,
        }
    }
}

/// A tool call as an adapter read it.
pub(crate) struct Call {
    /// The id its result will name; `None` when the format gives none (no result is then
    /// ever matched to it).
    pub(crate) id: Option<String>,
    pub(crate) tool: String,
    /// What it is about, in one line (capped here).
    pub(crate) detail: String,
    /// The files it edits: path, how, and what it wrote.
    pub(crate) edits: Vec<(String, TouchOp, Change)>,
    /// The shell command it runs, if it runs one (for the commits it makes).
    pub(crate) command: Option<String>,
    /// Its output only echoes what it was given (a file read, an edit's "done").
    pub(crate) echoes: bool,
    /// The model of the message that made it (see `Event::FileTouch`).
    pub(crate) model: Option<String>,
}

/// A chat-shaped adapter: it reads each line into its [`Chat`], which answers the rest of
/// what a transcript parser is asked.
pub(crate) trait ChatFormat {
    /// Read the JSON value of raw line `line` (as [`TranscriptParser::line`]).
    fn read(&mut self, line: u64, v: &Value, out: &mut Emit);

    fn chat(&self) -> &Chat;

    /// The session the transcript belongs to, once it has said.
    fn session_id(&self) -> Option<SessionId>;

    /// What is provisional when no more records are available for now (see
    /// [`TranscriptParser::flush`]): the open turn's last text, unless the format has more.
    fn provisional(&self, out: &mut Emit) {
        self.chat().flush(out);
    }
}

impl<T: ChatFormat> TranscriptParser for T {
    fn line(&mut self, line: u64, v: &Value, out: &mut Emit) {
        self.read(line, v, out);
    }

    fn flush(&self, out: &mut Emit) {
        self.provisional(out);
    }

    fn session(&self) -> Option<SessionId> {
        self.session_id()
    }

    fn last_ts(&self) -> i64 {
        self.chat().last_ts()
    }

    fn overflowed(&self) -> u64 {
        self.chat().overflowed()
    }
}

impl Chat {
    /// The line's next slot, counting the event dropped when there is none.
    pub(crate) fn slot(&mut self, cx: &mut Line) -> Option<Seq> {
        let seq = cx.slots.next();
        if seq.is_none() {
            self.overflowed += 1;
        }
        seq
    }

    /// Record `event` in the line's next slot.
    pub(crate) fn emit(&mut self, cx: &mut Line, event: Event, out: &mut Emit) {
        if let Some(seq) = self.slot(cx) {
            out.event(seq, cx.ts, event);
        }
    }

    /// A line's timestamp was read: the newest is what `last_ts` reports.
    pub(crate) fn saw(&mut self, ts: i64) {
        self.max_ts = self.max_ts.max(ts);
    }

    pub(crate) fn last_ts(&self) -> i64 {
        self.max_ts
    }

    pub(crate) fn overflowed(&self) -> u64 {
        self.overflowed
    }

    /// What the person said, or with `harness`, what the harness said on their behalf. A
    /// person's words close the open turn; the harness's do not.
    pub(crate) fn prompt(
        &mut self,
        text: &str,
        harness: bool,
        context: Option<String>,
        cx: &mut Line,
        out: &mut Emit,
    ) {
        if text.trim().is_empty() {
            return;
        }
        if !harness {
            self.close_turn(out);
        }
        let event = Event::UserMsg {
            text: text.to_string(),
            harness,
            context,
        };
        self.emit(cx, event, out);
    }

    /// Prose the agent wrote. With `main`, it is the main agent's and the open turn's last
    /// text so far; a subagent's prose is recorded but closes nothing.
    pub(crate) fn said(&mut self, text: &str, main: bool, cx: &mut Line, out: &mut Emit) {
        if text.trim().is_empty() {
            return;
        }
        let Some(seq) = self.slot(cx) else { return };
        if main {
            self.turn.said(seq, cx.ts, text, out);
        } else {
            let text = text.to_string();
            out.event(seq, cx.ts, Event::Said { text });
        }
    }

    /// The open turn is over: its last text becomes its `FinalMsg`.
    pub(crate) fn close_turn(&mut self, out: &mut Emit) {
        self.turn.close(out);
    }

    /// The context window was compacted, leaving `summary` (when the format keeps it).
    pub(crate) fn compaction(&mut self, summary: Option<&str>, cx: &mut Line, out: &mut Emit) {
        self.emit(cx, Event::Compaction {}, out);
        if let Some(text) = summary.filter(|s| !s.trim().is_empty()) {
            let event = Event::CompactSummary {
                text: text.to_string(),
            };
            self.emit(cx, event, out);
        }
    }

    /// A tool call: its `ToolCall`, a `FileTouch` per file it edits, and, when it has an
    /// id, what its result must revise.
    pub(crate) fn call(&mut self, call: Call, cx: &mut Line, out: &mut Emit) {
        let event = Event::ToolCall {
            tool: call.tool,
            detail: cap(&call.detail, DETAIL_CAP),
            ok: true,
            agent: None,
        };
        let emitted = self.slot(cx).map(|seq| {
            out.event(seq, cx.ts, event.clone());
            (seq, event)
        });
        let mut touches = Vec::new();
        for (path, op, change) in call.edits {
            if path.is_empty() {
                continue;
            }
            let event = Event::FileTouch {
                path,
                op,
                change: Some(out.change(&change)),
                failed: false,
                more: Vec::new(),
                restores: None,
                model: call.model.clone(),
            };
            if let Some(seq) = self.slot(cx) {
                out.event(seq, cx.ts, event.clone());
                touches.push((seq, event));
            }
        }
        let commit = call.command.as_deref().and_then(commit::commit_command);
        let Some(id) = call.id.filter(|id| !id.is_empty()) else {
            return;
        };
        self.pending.insert(
            id,
            Pending {
                line: cx.line,
                ts: cx.ts,
                call: emitted,
                touches,
                commit,
                echoes: call.echoes,
            },
        );
        while self.pending.len() > MAX_PENDING {
            let oldest = self
                .pending
                .iter()
                .min_by_key(|(_, p)| p.line)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => self.pending.remove(&k),
                None => break,
            };
        }
    }

    /// The result of the call `id`: a failure revises the call and its touches, a commit
    /// is read from what it printed, and what it printed is recorded unless it only echoes
    /// what the call was given. A result for no call remembered is ignored.
    pub(crate) fn result(
        &mut self,
        id: &str,
        failed: bool,
        printed: &str,
        cx: &mut Line,
        out: &mut Emit,
    ) {
        let Some(pending) = self.pending.remove(id) else {
            return;
        };
        if failed {
            if let Some((seq, Event::ToolCall { tool, detail, .. })) = &pending.call {
                let call = Event::ToolCall {
                    tool: tool.clone(),
                    detail: detail.clone(),
                    ok: false,
                    agent: None,
                };
                out.event(*seq, pending.ts, call);
            }
            for (seq, mut touch) in pending.touches {
                if let Event::FileTouch { failed, .. } = &mut touch {
                    *failed = true;
                }
                out.event(seq, pending.ts, touch);
            }
        }
        if let Some(pc) = &pending.commit
            && let Some(event) = commit::commit_from_output(pc, printed)
        {
            self.emit(cx, event, out);
        }
        if let Some((call, _)) = pending.call
            && (failed || !pending.echoes)
            && let Some(event) = out.output(call, printed)
        {
            self.emit(cx, event, out);
        }
    }

    /// No more lines for now: the open turn's last text is its closing message so far.
    pub(crate) fn flush(&self, out: &mut Emit) {
        self.turn.flush(out);
    }
}

/// What a call of a tool with no rule of its own is about: the file it names, else its
/// arguments as JSON (nothing when it has none).
pub(crate) fn other_detail(path: Option<&str>, args: &Value) -> String {
    match (path, args) {
        (Some(path), _) => path.to_string(),
        (None, Value::Null) => String::new(),
        (None, v) => v.to_string(),
    }
}

/// What a search is about: its pattern, and where it looked when the call says.
pub(crate) fn search_detail(pattern: &str, at: Option<&str>) -> String {
    match at {
        Some(at) => format!("{pattern} in {at}"),
        None => pattern.to_string(),
    }
}

/// The text of a message's or a result's `content`: a string, or the `text` of its blocks
/// joined by newlines (images and other blocks left out).
pub(crate) fn text_of(content: Option<&serde_json::Value>) -> String {
    match content {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| str_at(b, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(out: &Emit, seq: Seq) -> Option<&Event> {
        out.events.get(&seq).map(|(_, e)| e)
    }

    #[test]
    fn a_provisional_closing_message_is_said_again_as_prose_when_the_turn_goes_on() {
        let mut chat = Chat::default();
        let mut first = Emit::default();
        let mut cx = Line::new(1, 10);
        chat.said("looking", true, &mut cx, &mut first);
        chat.flush(&mut first);
        let a = Seq::at_line(1, 1);
        assert!(matches!(said(&first, a), Some(Event::FinalMsg { text }) if text == "looking"));

        // A later capture resumes from the saved state: the text is no longer the last.
        let mut chat: Chat = serde_json::from_str(&serde_json::to_string(&chat).unwrap()).unwrap();
        let mut second = Emit::default();
        let mut cx = Line::new(2, 20);
        chat.said("done", true, &mut cx, &mut second);
        chat.flush(&mut second);
        assert!(matches!(said(&second, a), Some(Event::Said { text }) if text == "looking"));
        let b = Seq::at_line(2, 1);
        assert!(matches!(said(&second, b), Some(Event::FinalMsg { text }) if text == "done"));
    }

    #[test]
    fn a_subagents_prose_and_the_harnesss_words_leave_the_turn_open() {
        let mut chat = Chat::default();
        let mut out = Emit::default();
        let mut cx = Line::new(1, 10);
        chat.said("main", true, &mut cx, &mut out);
        chat.said("sub", false, &mut cx, &mut out);
        chat.prompt("<reminder>", true, None, &mut cx, &mut out);
        assert!(
            !out.events
                .values()
                .any(|(_, e)| matches!(e, Event::FinalMsg { .. }))
        );
        chat.prompt("next", false, None, &mut cx, &mut out);
        let finals: Vec<&Event> = out
            .events
            .values()
            .map(|(_, e)| e)
            .filter(|e| matches!(e, Event::FinalMsg { .. }))
            .collect();
        assert_eq!(
            finals,
            [&Event::FinalMsg {
                text: "main".into()
            }]
        );
    }

    #[test]
    fn a_failed_call_revises_the_call_and_its_touch_and_keeps_what_it_printed() {
        let mut chat = Chat::default();
        let mut out = Emit::default();
        let mut cx = Line::new(1, 10);
        let call = Call {
            id: Some("c".into()),
            tool: "edit".into(),
            detail: "/w/a".into(),
            edits: vec![("/w/a".into(), TouchOp::Edit, Change::write("x"))],
            command: None,
            echoes: true,
            model: None,
        };
        chat.call(call, &mut cx, &mut out);
        let mut cx = Line::new(2, 20);
        chat.result("c", true, "no such file", &mut cx, &mut out);
        assert!(matches!(
            said(&out, Seq::at_line(1, 1)),
            Some(Event::ToolCall { ok: false, .. })
        ));
        assert!(matches!(
            said(&out, Seq::at_line(1, 2)),
            Some(Event::FileTouch { failed: true, .. })
        ));
        assert!(matches!(
            said(&out, Seq::at_line(2, 1)),
            Some(Event::ToolOutput { excerpt, .. }) if excerpt == "no such file"
        ));
        // The same call succeeding prints an echo that is not kept.
        let mut chat = Chat::default();
        let mut out = Emit::default();
        let mut cx = Line::new(1, 10);
        let call = Call {
            id: Some("c".into()),
            tool: "edit".into(),
            detail: String::new(),
            edits: Vec::new(),
            command: None,
            echoes: true,
            model: None,
        };
        chat.call(call, &mut cx, &mut out);
        chat.result("c", false, "updated", &mut Line::new(2, 20), &mut out);
        assert_eq!(out.events.len(), 1);
    }
}
