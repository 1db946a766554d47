//! The pieces of a turn: the turn's closing message, which every adapter but Codex's keeps
//! in a [`Closing`]; and, for the adapters whose records hold a tool call together with its
//! result (Gemini CLI, OpenCode), the call, the file it edited and what that wrote, what it
//! printed and the commit it made.

use serde::{Deserialize, Serialize};

use super::{Emit, LineSlots, commit};
use crate::vocab::change::Change;
use crate::vocab::event::{DETAIL_CAP, Event, Seq, TouchOp, Touched, cap};

/// A tool call whose result is known, as one record holds it.
#[derive(Debug)]
pub(crate) struct Call {
    pub(crate) tool: String,
    /// What it was called on (a path, a command), cut to [`DETAIL_CAP`] here.
    pub(crate) detail: String,
    pub(crate) ok: bool,
    /// The subagent it started (its session id).
    pub(crate) agent: Option<String>,
    /// The files it edited, how, and what it wrote to each (an apply_patch edits several).
    pub(crate) edits: Vec<(String, TouchOp, Change)>,
    /// What it printed, or the error it ended in.
    pub(crate) output: Option<String>,
    /// The output only echoes what the call was given or read (a file's content, "edited
    /// successfully"): kept only when the call failed, as `keeps_output` decides for the
    /// Claude and Codex parsers.
    pub(crate) echo: bool,
    /// The shell command it ran, for the commit it may have made.
    pub(crate) command: Option<String>,
    /// The model of the message that made it (see `Event::FileTouch`).
    pub(crate) model: Option<String>,
}

impl Call {
    /// Emit the call on `slots`: `ToolCall`, its `FileTouch`, its `ToolOutput`, the
    /// `Committed` its output reports. Returns how many events found no slot.
    pub(crate) fn emit(self, slots: &mut LineSlots, ts: i64, out: &mut Emit) -> u64 {
        let mut events = vec![Event::ToolCall {
            tool: self.tool,
            detail: cap(&self.detail, DETAIL_CAP),
            ok: self.ok,
            agent: self.agent,
        }];
        let mut edits = self.edits.iter();
        if let Some((path, op, change)) = edits.next() {
            // One touch holds every file of the call: a line's slots are few.
            let more = edits
                .map(|(path, op, change)| Touched {
                    path: path.clone(),
                    op: *op,
                    change: Some(out.change(change)),
                })
                .collect();
            events.push(Event::FileTouch {
                path: path.clone(),
                op: *op,
                change: Some(out.change(change)),
                failed: !self.ok,
                more,
                restores: None,
                model: self.model,
            });
        }
        let output = self.output.as_deref().unwrap_or("");
        let commit = self
            .command
            .as_deref()
            .filter(|_| self.ok)
            .and_then(commit::commit_command)
            .and_then(|pending| commit::commit_from_output(&pending, output));
        let Some(call) = slots.next() else {
            return events.len() as u64 + u64::from(commit.is_some());
        };
        let mut dropped = 0;
        let mut place = |event: Event, out: &mut Emit| match slots.next() {
            Some(seq) => out.event(seq, ts, event),
            None => dropped += 1,
        };
        let mut events = events.into_iter();
        if let Some(first) = events.next() {
            out.event(call, ts, first);
        }
        for event in events {
            place(event, out);
        }
        if (!self.ok || !self.echo)
            && let Some(event) = out.output(call, output)
        {
            place(event, out);
        }
        if let Some(event) = commit {
            place(event, out);
        }
        dropped
    }
}

/// The open turn's last prose: emitted as `Said`, and as the turn's `FinalMsg` when the
/// person speaks next (or provisionally, at flush). Every adapter but Codex's (whose two
/// copies of each message need rules of their own) keeps its turn here, and the saved form
/// is the text as emitted, `{seq, ts, text}` or `null`, as the Claude Code parser has always
/// saved it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct Closing {
    open: Option<OpenText>,
}

/// An agent text as emitted: where, when and what.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct OpenText {
    seq: Seq,
    ts: i64,
    text: String,
}

impl Closing {
    /// The agent said `text` at `seq`. A text at an earlier seq than the open one (a message
    /// the harness wrote again) is prose and leaves the turn's closing message as it was.
    pub(crate) fn said(&mut self, seq: Seq, ts: i64, text: &str, out: &mut Emit) {
        out.event(
            seq,
            ts,
            Event::Said {
                text: text.to_string(),
            },
        );
        if self.open.as_ref().is_some_and(|open| open.seq > seq) {
            return;
        }
        // The previous text is no longer the turn's last: an earlier capture may have
        // written it as a provisional closing message, so say it again as prose.
        if let Some(prev) = self.open.take().filter(|open| open.seq != seq) {
            out.event(prev.seq, prev.ts, Event::Said { text: prev.text });
        }
        let text = text.to_string();
        self.open = Some(OpenText { seq, ts, text });
    }

    /// The person spoke (or the harness timed the turn): the open text closed its turn.
    pub(crate) fn close(&mut self, out: &mut Emit) {
        if let Some(open) = self.open.take() {
            out.event(open.seq, open.ts, Event::FinalMsg { text: open.text });
        }
    }

    /// The open text, provisionally the turn's closing message (state unchanged).
    pub(crate) fn flush(&self, out: &mut Emit) {
        if let Some(open) = &self.open {
            let event = Event::FinalMsg {
                text: open.text.clone(),
            };
            out.event(open.seq, open.ts, event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::change::Replacement;

    fn call(ok: bool, echo: bool, output: &str) -> Call {
        Call {
            tool: "replace".into(),
            detail: "/r/a.txt".into(),
            ok,
            agent: None,
            edits: vec![(
                "/r/a.txt".into(),
                TouchOp::Edit,
                Change::Edit(Replacement {
                    old: "a".into(),
                    new: "b".into(),
                    replace_all: false,
                }),
            )],
            output: Some(output.into()),
            echo,
            command: None,
            model: Some("gemini-2.5-pro".into()),
        }
    }

    fn kinds(out: &Emit) -> Vec<&'static str> {
        out.events.values().map(|(_, e)| e.tag()).collect()
    }

    #[test]
    fn an_edit_is_a_call_and_a_touch_and_its_echo_is_kept_only_on_failure() {
        let mut out = Emit::default();
        call(true, true, "ok").emit(&mut LineSlots::new(2), 5, &mut out);
        assert_eq!(kinds(&out), ["tool", "file"]);
        assert_eq!(out.blobs.len(), 1);
        assert!(
            out.events.values().any(|(_, e)| matches!(
                e,
                Event::FileTouch { model: Some(m), .. } if m == "gemini-2.5-pro"
            )),
            "the touch names the model of the message that made the call"
        );
        let mut out = Emit::default();
        call(false, true, "no match").emit(&mut LineSlots::new(2), 5, &mut out);
        assert_eq!(kinds(&out), ["tool", "file", "output"]);
        assert!(
            out.events
                .values()
                .any(|(_, e)| matches!(e, Event::FileTouch { failed: true, .. }))
        );
    }

    #[test]
    fn a_commit_command_with_its_hash_in_the_output_is_a_commit() {
        let mut out = Emit::default();
        Call {
            tool: "run_shell_command".into(),
            detail: "git commit -m x".into(),
            ok: true,
            agent: None,
            edits: Vec::new(),
            output: Some("[main 1a2b3c4] x\n 1 file changed".into()),
            echo: false,
            command: Some("git commit -m x".into()),
            model: None,
        }
        .emit(&mut LineSlots::new(0), 1, &mut out);
        assert_eq!(kinds(&out), ["tool", "output", "commit"]);
    }

    #[test]
    fn the_last_text_closes_the_turn_and_a_rewritten_earlier_one_does_not() {
        let mut out = Emit::default();
        let mut c = Closing::default();
        c.said(Seq(17), 1, "looking", &mut out);
        c.said(Seq(33), 2, "done", &mut out);
        c.said(Seq(17), 1, "looking", &mut out);
        c.close(&mut out);
        assert_eq!(
            out.events[&Seq(33)].1,
            Event::FinalMsg {
                text: "done".into()
            }
        );
        assert_eq!(
            out.events[&Seq(17)].1,
            Event::Said {
                text: "looking".into()
            }
        );
    }
}
