//! Claude Code session transcripts (`~/.claude/projects/<slug>/<session>.jsonl`, and the
//! subagents' `agent-<id>.jsonl`).
//!
//! One JSON object per line, discriminated by its top-level `type`. `user` and `assistant`
//! lines carry `message.content` (a string or an array of blocks), an assistant's with the
//! `message.model` its file touches record (but `<synthetic>`, the harness's own API-error
//! lines, which name no model); everything else is metadata that at most seeds the
//! session's identity. Each line's events take the slots of that line (see [`LineSlots`]),
//! so a re-parse assigns the same seqs.
//!
//! What spans lines lives in the parser's state, which is saved in the capture cursor:
//! - tool calls waiting for their `tool_result` (a later user line), to mark a failure on
//!   the call and its file touch, to read a commit's hash from its output, and to keep on a
//!   Write's change what the file held before it;
//! - the open turn's last assistant text, which becomes the turn's `FinalMsg` when the
//!   person next speaks (or provisionally, at [`TranscriptParser::flush`]).
//!
//! Every field access tolerates absence and wrong types: an odd line yields fewer events,
//! never an error.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::commit::{self, PendingCommit};
use super::turn::Closing;
use super::{Emit, FileHints, LineSlots, TranscriptParser, model_name, str_at, streams};
use crate::vocab::change::{Before, Change, Replacement};
use crate::vocab::event::{
    Agent, COMPACTOR_AGENT, DETAIL_CAP, Event, Seq, SessionId, TouchOp, Touched, cap,
};
use crate::vocab::time::parse_iso_ms;

/// Unanswered tool calls kept at most; past this the oldest is forgotten (its result, if it
/// ever comes, is then ignored). Keeps the saved state small when results go missing.
const MAX_PENDING: usize = 128;

/// User text that the harness wrote, not the person.
const HARNESS_PREFIXES: &[&str] = &[
    "<command-name>",
    "<command-message>",
    "<local-command-",
    "<system-reminder>",
    "<task-notification>",
    "<bash-input>",
    "<bash-stdout>",
    "<user-memory-input>",
    "Caveat: ",
    INTERRUPTED,
];

/// The marker the harness writes when the person interrupts a turn.
const INTERRUPTED: &str = "[Request interrupted";

/// The model an assistant line the harness wrote itself (an API error) names.
const SYNTHETIC_MODEL: &str = "<synthetic>";

/// The Claude Code parser and everything it must remember between captures.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Claude {
    /// The session, once known.
    session: Option<SessionId>,
    /// The file is a subagent transcript (`agent-<id>.jsonl`): the id from its name.
    subagent: Option<String>,
    /// The subagent is the harness's own compactor (`agent-acompact-…`): the texts it is
    /// given are the harness's, never the person's.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    compactor: bool,
    /// For a subagent transcript: the session that spawned it.
    parent: Option<SessionId>,
    /// `SessionMeta` has been emitted.
    meta_done: bool,
    /// The previous line's timestamp, carried by lines without one.
    ts: i64,
    /// The newest timestamp seen.
    max_ts: i64,
    /// The last conversation line was a `compact_boundary`: the summary that follows is
    /// already marked.
    after_boundary: bool,
    /// The open turn's last assistant text: its closing message so far.
    turn: Closing,
    /// Tool calls waiting for their result, by `tool_use` id.
    pending: BTreeMap<String, Pending>,
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
    #[serde(default)]
    call: Option<(Seq, Event)>,
    /// The `FileTouch` as emitted, if the tool edits a file and it got a slot.
    #[serde(default)]
    touch: Option<(Seq, Event)>,
    /// A commit-making command, waiting for the output that names the commit.
    #[serde(default)]
    commit: Option<PendingCommit>,
    /// An `ExitPlanMode` call's plan, kept whole once the person approves it (the result
    /// then carries the plan as approved, which wins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    plan: Option<String>,
}

/// What one line is emitting: its slots, its timestamp, the model of its assistant
/// message, its last `FileTouch` (which further touches fold into when the slots run out),
/// and the outputs of the tool calls it answers, recorded after everything else on it (see
/// [`Claude::outputs`]).
struct LineCx {
    slots: LineSlots,
    ts: i64,
    model: Option<String>,
    touch: Option<LineTouch>,
    outputs: Vec<(Seq, String)>,
}

struct LineTouch {
    seq: Seq,
    event: Event,
    /// The tool call that owns it, whose pending entry must see any fold.
    owner: Option<String>,
}

impl Claude {
    pub(crate) fn new(hints: &FileHints) -> Claude {
        let stem = hints.stem.as_str();
        Claude {
            session: is_uuid(stem).then(|| SessionId(stem.to_string())),
            subagent: stem
                .strip_prefix("agent-")
                .filter(|id| !id.is_empty())
                .map(str::to_string),
            compactor: stem
                .strip_prefix("agent-")
                .is_some_and(|id| id.starts_with(COMPACTOR_AGENT)),
            ..Claude::default()
        }
    }

    fn slot(&mut self, cx: &mut LineCx) -> Option<Seq> {
        let seq = cx.slots.next();
        if seq.is_none() {
            self.overflowed += 1;
        }
        seq
    }

    /// Learn the session from the first line that names one.
    fn learn_session(&mut self, v: &Value) {
        if self.session.is_some() {
            return;
        }
        let Some(sid) = str_at(v, "sessionId")
            .or_else(|| str_at(v, "session_id"))
            .filter(|s| !s.is_empty())
        else {
            return;
        };
        match &self.subagent {
            // A subagent's lines carry the parent's session id; the agent id is on every
            // line (and in the file name, for lines that lack it).
            Some(stem_id) => {
                let agent = str_at(v, "agentId")
                    .filter(|a| !a.is_empty())
                    .unwrap_or(stem_id);
                self.session = Some(SessionId(format!("{sid}/agent-{agent}")));
                self.parent = Some(SessionId(sid.to_string()));
            }
            None => self.session = Some(SessionId(sid.to_string())),
        }
    }

    fn meta(&mut self, v: &Value, cx: &LineCx, out: &mut Emit) {
        if self.meta_done {
            return;
        }
        let Some(cwd) = str_at(v, "cwd") else { return };
        self.meta_done = true;
        out.event(
            cx.slots.meta(),
            cx.ts,
            Event::SessionMeta {
                cwd: cwd.to_string(),
                branch: str_at(v, "gitBranch")
                    .filter(|b| !b.is_empty())
                    .map(str::to_string),
                agent: Some(Agent::ClaudeCode),
                version: str_at(v, "version").map(str::to_string),
                parent: self.parent.clone(),
                subagent: None,
            },
        );
    }

    /// An inline sidechain line: a side conversation inside the main transcript.
    fn inline_sidechain(&self, v: &Value) -> bool {
        self.subagent.is_none() && flag(v, "isSidechain")
    }

    fn system(&mut self, v: &Value, cx: &mut LineCx, out: &mut Emit) {
        match str_at(v, "subtype") {
            Some("compact_boundary") => {
                if let Some(seq) = self.slot(cx) {
                    out.event(seq, cx.ts, Event::Compaction {});
                }
                self.after_boundary = true;
                return;
            }
            // The harness timed the turn: it is over, and its last text is its closing
            // message. A later reply (to a background task's notification, say) opens a
            // new turn instead of replacing this one's.
            Some("turn_duration") if !self.inline_sidechain(v) => self.turn.close(out),
            _ => {}
        }
        self.after_boundary = false;
    }

    fn user(&mut self, v: &Value, cx: &mut LineCx, out: &mut Emit) {
        let content = v.get("message").and_then(|m| m.get("content"));
        if flag(v, "isCompactSummary") {
            if !self.after_boundary
                && let Some(seq) = self.slot(cx)
            {
                out.event(seq, cx.ts, Event::Compaction {});
            }
            self.after_boundary = false;
            let text = text_of(content);
            if !text.trim().is_empty()
                && let Some(seq) = self.slot(cx)
            {
                out.event(seq, cx.ts, Event::CompactSummary { text });
            }
            return;
        }
        self.after_boundary = false;
        let meta = flag(v, "isMeta") || self.compactor;
        let side = self.inline_sidechain(v);
        let mut closes = false;
        let mut prompt = |this: &mut Claude, text: &str, cx: &mut LineCx, out: &mut Emit| {
            if text.trim().is_empty() {
                return;
            }
            let lead = text.trim_start();
            let interrupted = lead.starts_with(INTERRUPTED);
            let harness = meta || side || HARNESS_PREFIXES.iter().any(|p| lead.starts_with(p));
            if !meta && !side && (!harness || interrupted) {
                closes = true;
            }
            if let Some(seq) = this.slot(cx) {
                out.event(
                    seq,
                    cx.ts,
                    Event::UserMsg {
                        text: text.to_string(),
                        harness,
                        context: None,
                    },
                );
            }
        };
        match content {
            Some(Value::String(text)) => prompt(self, text, cx, out),
            Some(Value::Array(blocks)) => {
                for block in blocks {
                    match str_at(block, "type") {
                        Some("text") => {
                            if let Some(text) = str_at(block, "text") {
                                prompt(self, text, cx, out);
                            }
                        }
                        Some("tool_result") => self.tool_result(v, block, cx, out),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        if closes {
            self.turn.close(out);
        }
    }

    /// Record what the tool calls this line answers printed, in the slots left after its
    /// other events: those keep the seqs they had before outputs were recorded, so a store
    /// captured then gains the outputs on a re-parse and nothing moves.
    fn outputs(&mut self, cx: &mut LineCx, out: &mut Emit) {
        for (call, printed) in std::mem::take(&mut cx.outputs) {
            if let Some(event) = out.output(call, &printed)
                && let Some(seq) = self.slot(cx)
            {
                out.event(seq, cx.ts, event);
            }
        }
    }

    fn tool_result(&mut self, v: &Value, block: &Value, cx: &mut LineCx, out: &mut Emit) {
        let Some(id) = str_at(block, "tool_use_id") else {
            return;
        };
        let Some(pending) = self.pending.remove(id) else {
            return;
        };
        let result = v.get("toolUseResult");
        let failed = flag(block, "is_error")
            || match result {
                Some(Value::String(s)) => s.starts_with("Error"),
                Some(r @ Value::Object(_)) => flag(r, "is_error"),
                _ => false,
            };
        // What it printed is kept unless it only echoes what the call read or wrote.
        let call = match &pending.call {
            Some((seq, Event::ToolCall { tool, .. })) if super::keeps_output(tool, failed) => {
                Some(*seq)
            }
            _ => None,
        };
        if !failed {
            self.persons_words(&pending, result, cx, out);
        }
        // A Task/Agent call's result names the subagent it started: its log nests there.
        let agent = result
            .and_then(|r| str_at(r, "agentId"))
            .filter(|a| !a.is_empty());
        if (failed || agent.is_some())
            && let Some((seq, Event::ToolCall { tool, detail, .. })) = pending.call
        {
            let call = Event::ToolCall {
                tool,
                detail,
                ok: !failed,
                agent: agent.map(str::to_string),
            };
            out.event(seq, pending.ts, call);
        }
        if !failed && let Some((seq, touch)) = &pending.touch {
            write_over(touch, result, (*seq, pending.ts), out);
        }
        if failed && let Some((seq, mut touch)) = pending.touch {
            if let Event::FileTouch { failed, .. } = &mut touch {
                *failed = true;
            }
            out.event(seq, pending.ts, touch);
        }
        if pending.commit.is_none() && call.is_none() {
            return;
        }
        let content = text_of(block.get("content"));
        let streams = result.map(streams).unwrap_or_default();
        if let Some(pc) = &pending.commit
            && let Some(event) = commit::commit_from_output(pc, &format!("{content}\n{streams}"))
            && let Some(seq) = self.slot(cx)
        {
            out.event(seq, cx.ts, event);
        }
        // What it printed, as the model read it (the streams when the content is empty).
        if let Some(call) = call {
            let printed = if content.trim().is_empty() {
                streams
            } else {
                content
            };
            cx.outputs.push((call, printed));
        }
    }

    /// What the person said through a tool the agent called: the answers to its
    /// `AskUserQuestion` (the person's words, with the questions as their context), and the
    /// plan they approved when it called `ExitPlanMode` (kept whole, as the agent's words).
    fn persons_words(
        &mut self,
        pending: &Pending,
        result: Option<&Value>,
        cx: &mut LineCx,
        out: &mut Emit,
    ) {
        let tool = match &pending.call {
            Some((_, Event::ToolCall { tool, .. })) => tool.as_str(),
            _ => return,
        };
        let event = match tool {
            "AskUserQuestion" => {
                let Some(answers) = result
                    .and_then(|r| r.get("answers"))
                    .and_then(Value::as_object)
                    .filter(|a| !a.is_empty())
                else {
                    return;
                };
                let said = |v: &Value| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let text = answers.values().map(said).collect::<Vec<_>>().join("\n");
                let asked = answers.keys().map(|q| format!("- {q}")).collect::<Vec<_>>();
                Event::UserMsg {
                    text,
                    harness: false,
                    context: Some(format!("answering:\n{}", asked.join("\n"))),
                }
            }
            "ExitPlanMode" => {
                let approved = result.and_then(|r| str_at(r, "plan"));
                match approved.or(pending.plan.as_deref()) {
                    Some(plan) if !plan.trim().is_empty() => Event::Said {
                        text: plan.to_string(),
                    },
                    _ => return,
                }
            }
            _ => return,
        };
        if let Some(seq) = self.slot(cx) {
            out.event(seq, cx.ts, event);
        }
    }

    fn assistant(&mut self, v: &Value, line: u64, cx: &mut LineCx, out: &mut Emit) {
        self.after_boundary = false;
        let content = v.get("message").and_then(|m| m.get("content"));
        let speaks = !flag(v, "isApiErrorMessage");
        let main = !self.inline_sidechain(v);
        // An API error's line names the model `<synthetic>`: the harness wrote it, no model.
        let named = v.get("message").and_then(|m| str_at(m, "model"));
        cx.model = model_name(None, named.filter(|m| *m != SYNTHETIC_MODEL));
        match content {
            Some(Value::String(text)) if speaks => self.said(text, main, cx, out),
            Some(Value::Array(blocks)) => {
                for block in blocks {
                    match str_at(block, "type") {
                        Some("text") if speaks => {
                            if let Some(text) = str_at(block, "text") {
                                self.said(text, main, cx, out);
                            }
                        }
                        Some("tool_use") => self.tool_use(block, line, cx, out),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    fn said(&mut self, text: &str, main: bool, cx: &mut LineCx, out: &mut Emit) {
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

    fn tool_use(&mut self, block: &Value, line: u64, cx: &mut LineCx, out: &mut Emit) {
        let name = str_at(block, "name").unwrap_or("unknown");
        let input = block.get("input");
        let id = str_at(block, "id").filter(|id| !id.is_empty());
        let call = Event::ToolCall {
            tool: name.to_string(),
            detail: detail(name, input),
            ok: true,
            agent: None,
        };
        let call = self.slot(cx).map(|seq| {
            out.event(seq, cx.ts, call.clone());
            (seq, call)
        });
        let touch = input
            .and_then(|input| edit(name, input))
            .filter(|(path, _, _)| !path.is_empty())
            .and_then(|(path, op, change)| {
                let touched = Touched {
                    path,
                    op,
                    change: Some(out.change(&change)),
                };
                self.touch(touched, id, cx, out)
            });
        let commit = match name {
            "Bash" => input
                .and_then(|i| str_at(i, "command"))
                .and_then(commit::commit_command),
            _ => None,
        };
        let plan = match name {
            "ExitPlanMode" => input.and_then(|i| str_at(i, "plan")).map(str::to_string),
            _ => None,
        };
        let Some(id) = id else { return };
        if call.is_none() && touch.is_none() && commit.is_none() {
            return;
        }
        self.pending.insert(
            id.to_string(),
            Pending {
                line,
                ts: cx.ts,
                call,
                touch,
                commit,
                plan,
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

    /// Emit a `FileTouch` in the line's next slot, or fold it into the line's previous one
    /// when the slots are used up. Returns the event when it has a slot of its own.
    fn touch(
        &mut self,
        touched: Touched,
        owner: Option<&str>,
        cx: &mut LineCx,
        out: &mut Emit,
    ) -> Option<(Seq, Event)> {
        if let Some(seq) = cx.slots.next() {
            let event = Event::FileTouch {
                path: touched.path,
                op: touched.op,
                change: touched.change,
                failed: false,
                more: Vec::new(),
                restores: None,
                model: cx.model.clone(),
            };
            out.event(seq, cx.ts, event.clone());
            cx.touch = Some(LineTouch {
                seq,
                event: event.clone(),
                owner: owner.map(str::to_string),
            });
            return Some((seq, event));
        }
        let Some(prev) = cx.touch.as_mut() else {
            self.overflowed += 1;
            return None;
        };
        if let Event::FileTouch { more, .. } = &mut prev.event {
            more.push(touched);
        }
        out.event(prev.seq, cx.ts, prev.event.clone());
        if let Some(p) = prev.owner.as_ref().and_then(|o| self.pending.get_mut(o))
            && let Some((seq, event)) = p.touch.as_mut()
            && *seq == prev.seq
        {
            *event = prev.event.clone();
        }
        None
    }
}

impl TranscriptParser for Claude {
    fn line(&mut self, line: u64, v: &Value, out: &mut Emit) {
        let ts = str_at(v, "timestamp")
            .and_then(parse_iso_ms)
            .unwrap_or(self.ts);
        self.ts = ts;
        self.max_ts = self.max_ts.max(ts);
        self.learn_session(v);
        let mut cx = LineCx {
            slots: LineSlots::new(line),
            ts,
            model: None,
            touch: None,
            outputs: Vec::new(),
        };
        self.meta(v, &cx, out);
        match str_at(v, "type") {
            Some("user") => self.user(v, &mut cx, out),
            Some("assistant") => self.assistant(v, line, &mut cx, out),
            Some("system") => self.system(v, &mut cx, out),
            // Legacy `summary` titles, file-history snapshots, attachments, progress, modes,
            // titles, queue operations, and whatever comes next: nothing to record.
            _ => {}
        }
        self.outputs(&mut cx, out);
    }

    fn flush(&self, out: &mut Emit) {
        self.turn.flush(out);
    }

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

fn flag(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool) == Some(true)
}

/// The text of a content value: a string, or its `text` blocks joined by newlines.
fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| str_at(b, "type") == Some("text"))
            .filter_map(|b| str_at(b, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A shell tool's result streams (`toolUseResult.stdout`, `.stderr`), the non-empty ones
/// joined by a newline.
/// 8-4-4-4-12 hex digits.
fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()))
}

/// What a tool call is about, in one short line.
fn detail(name: &str, input: Option<&Value>) -> String {
    let field = |key: &str| input.and_then(|i| str_at(i, key)).unwrap_or("").to_string();
    let text = match name {
        "Bash" => field("command"),
        "Read" | "Edit" | "Write" | "MultiEdit" => field("file_path"),
        "NotebookEdit" => field("notebook_path"),
        "Glob" | "Grep" => {
            let mut s = field("pattern");
            let path = field("path");
            if !path.is_empty() {
                s.push_str(" in ");
                s.push_str(&path);
            }
            s
        }
        "Task" | "Agent" => field("description"),
        "WebFetch" => field("url"),
        "WebSearch" => field("query"),
        // The plan's first line (its title); the whole plan is kept once approved.
        "ExitPlanMode" => field("plan")
            .lines()
            .map(|l| l.trim_start_matches('#').trim())
            .find(|l| !l.is_empty())
            .unwrap_or("")
            .to_string(),
        "AskUserQuestion" => input
            .and_then(|i| i.get("questions"))
            .and_then(Value::as_array)
            .map(|qs| {
                qs.iter()
                    .filter_map(|q| str_at(q, "question"))
                    .collect::<Vec<_>>()
                    .join(" | ")
            })
            .unwrap_or_default(),
        _ => match input {
            None | Some(Value::Null) => String::new(),
            Some(v) => v.to_string(),
        },
    };
    cap(&text, DETAIL_CAP)
}

/// Emit `touch`, a Write's, again at `seq`, its change now holding what the file was before the
/// write as the result reports it: `originalFile`, else its `structuredPatch` undone on the
/// content written, and nothing when it made the file. Nothing when the touch is no Write's or
/// the result does not say.
fn write_over(touch: &Event, result: Option<&Value>, (seq, ts): (Seq, i64), out: &mut Emit) {
    let Event::FileTouch {
        path,
        op: TouchOp::Write,
        change: Some(written),
        failed,
        more,
        model,
        ..
    } = touch
    else {
        return;
    };
    let Some(result) = result else { return };
    let Some(content) = str_at(result, "content") else {
        return;
    };
    let before = match (str_at(result, "originalFile"), str_at(result, "type")) {
        (Some(original), _) => Before::between(original, content),
        (None, Some("create")) => Before::Nothing,
        (None, _) => {
            let Some(was) = result
                .get("structuredPatch")
                .and_then(Value::as_array)
                .filter(|hunks| !hunks.is_empty())
                .and_then(|hunks| unpatched(content, hunks))
            else {
                return;
            };
            Before::between(&was, content)
        }
    };
    let change = Change::Write {
        content: content.to_string(),
        before: Some(before),
    };
    let event = Event::FileTouch {
        path: path.clone(),
        op: TouchOp::Write,
        change: Some(out.change(&change)),
        failed: *failed,
        more: more.clone(),
        restores: None,
        model: model.clone(),
    };
    out.event(seq, ts, event);
    out.forget(*written);
}

/// The file a Write replaced, from the hunks its result reports (jsdiff's `structuredPatch`:
/// lines marked ` `, `-`, `+` or `\` for "no newline at end of file"): `content` with each
/// hunk's kept and added lines put back to its kept and removed ones. `None` when a hunk does
/// not fit the content.
fn unpatched(content: &str, hunks: &[Value]) -> Option<String> {
    let lines: Vec<&str> = content.split_inclusive('\n').collect();
    let mut out = String::with_capacity(content.len());
    let mut next = 0;
    for h in hunks {
        let start = h.get("newStart").and_then(Value::as_u64)? as usize;
        let body: Vec<&str> = h
            .get("lines")
            .and_then(Value::as_array)?
            .iter()
            .map(Value::as_str)
            .collect::<Option<_>>()?;
        let after: Vec<&str> = body
            .iter()
            .filter_map(|l| l.strip_prefix(' ').or_else(|| l.strip_prefix('+')))
            .collect();
        let fits = |at: usize| {
            at >= next
                && at + after.len() <= lines.len()
                && lines[at..at + after.len()]
                    .iter()
                    .zip(&after)
                    .all(|(l, a)| l.strip_suffix('\n').unwrap_or(l) == *a)
        };
        // Lines count from 1; a hunk that keeps and adds nothing names the line before it.
        let at = [start.saturating_sub(1), start]
            .into_iter()
            .find(|&at| fits(at))?;
        out.extend(lines[next..at].iter().copied());
        for (k, line) in body.iter().enumerate() {
            if let Some(was) = line.strip_prefix(' ').or_else(|| line.strip_prefix('-')) {
                out.push_str(was);
                if !body.get(k + 1).is_some_and(|n| n.starts_with('\\')) {
                    out.push('\n');
                }
            }
        }
        next = at + after.len();
    }
    out.extend(lines[next..].iter().copied());
    Some(out)
}

/// The file an edit tool changes, how, and what it wrote.
fn edit(name: &str, input: &Value) -> Option<(String, TouchOp, Change)> {
    let field = |key: &str| str_at(input, key).unwrap_or("").to_string();
    let opt = |key: &str| str_at(input, key).map(str::to_string);
    let replacement = |v: &Value| Replacement {
        old: str_at(v, "old_string").unwrap_or("").to_string(),
        new: str_at(v, "new_string").unwrap_or("").to_string(),
        replace_all: flag(v, "replace_all"),
    };
    Some(match name {
        "Edit" => (
            field("file_path"),
            TouchOp::Edit,
            Change::Edit(replacement(input)),
        ),
        "Write" => (
            field("file_path"),
            TouchOp::Write,
            Change::write(field("content")),
        ),
        "MultiEdit" => {
            let edits = input
                .get("edits")
                .and_then(Value::as_array)
                .map(|edits| {
                    edits
                        .iter()
                        .filter(|e| e.is_object())
                        .map(replacement)
                        .collect()
                })
                .unwrap_or_default();
            (
                field("file_path"),
                TouchOp::MultiEdit,
                Change::MultiEdit { edits },
            )
        }
        "NotebookEdit" => (
            field("notebook_path"),
            TouchOp::NotebookEdit,
            Change::NotebookEdit {
                cell_id: opt("cell_id"),
                cell_type: opt("cell_type"),
                edit_mode: opt("edit_mode"),
                source: field("new_source"),
            },
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::{ParserState, parse_str, reader};
    use crate::vocab::change::BlobId;
    use crate::vocab::event::{SEQ_STRIDE, Vcs};
    use serde_json::json;

    const CONTENT_SHAPES: &str = include_str!("../../tests/fixtures/claude/content-shapes.jsonl");
    const SPLIT_RESPONSE: &str = include_str!("../../tests/fixtures/claude/split-response.jsonl");
    const EDITS: &str = include_str!("../../tests/fixtures/claude/edits.jsonl");
    const TOOL_ERRORS: &str = include_str!("../../tests/fixtures/claude/tool-errors.jsonl");
    const GIT_COMMIT: &str = include_str!("../../tests/fixtures/claude/git-commit.jsonl");
    const COMPACTION: &str = include_str!("../../tests/fixtures/claude/compaction.jsonl");
    const ASK_AND_PLAN: &str = include_str!("../../tests/fixtures/claude/ask-and-plan.jsonl");
    const LEGACY_SUMMARIES: &str =
        include_str!("../../tests/fixtures/claude/legacy-summaries.jsonl");
    const HARNESS: &str = include_str!("../../tests/fixtures/claude/harness.jsonl");
    const SUBAGENT: &str = include_str!("../../tests/fixtures/claude/agent-a7c19e2.jsonl");
    const GARBAGE: &str = include_str!("../../tests/fixtures/claude/garbage.jsonl");
    const FULL_SESSION: &str = include_str!("../../tests/fixtures/claude/full-session.jsonl");
    const TURN_DURATION: &str = include_str!("../../tests/fixtures/claude/turn-duration.jsonl");
    const BIG_NUMBER: &str = include_str!("../../tests/fixtures/claude/big-number.jsonl");
    const COMPACTOR: &str = include_str!(
        "../../tests/fixtures/claude/3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b/subagents/agent-acompact-5d1e0f.jsonl"
    );

    const ALL: &[(&str, &str)] = &[
        ("content-shapes", CONTENT_SHAPES),
        ("split-response", SPLIT_RESPONSE),
        ("edits", EDITS),
        ("tool-errors", TOOL_ERRORS),
        ("git-commit", GIT_COMMIT),
        ("compaction", COMPACTION),
        ("legacy-summaries", LEGACY_SUMMARIES),
        ("harness", HARNESS),
        ("agent-a7c19e2", SUBAGENT),
        ("garbage", GARBAGE),
        ("full-session", FULL_SESSION),
        ("turn-duration", TURN_DURATION),
        ("big-number", BIG_NUMBER),
        ("agent-acompact-5d1e0f", COMPACTOR),
    ];

    fn hints(stem: &str) -> FileHints {
        FileHints {
            stem: stem.to_string(),
            ..FileHints::default()
        }
    }

    fn parse(text: &str, stem: &str) -> (Option<SessionId>, Emit) {
        parse_str(text, &hints(stem)).expect("a Claude Code transcript")
    }

    /// The seq of `slot` on raw line `line`.
    fn at(line: u32, slot: u32) -> Seq {
        Seq(line * SEQ_STRIDE + slot)
    }

    fn event(out: &Emit, seq: Seq) -> &Event {
        &out.events
            .get(&seq)
            .unwrap_or_else(|| panic!("no event at {seq}"))
            .1
    }

    fn tagged<'a>(out: &'a Emit, tag: &str) -> Vec<(Seq, &'a Event)> {
        out.events
            .iter()
            .filter(|(_, (_, e))| e.tag() == tag)
            .map(|(s, (_, e))| (*s, e))
            .collect()
    }

    fn texts(out: &Emit, tag: &str) -> Vec<(Seq, String)> {
        tagged(out, tag)
            .into_iter()
            .map(|(s, e)| match e {
                Event::UserMsg { text, .. }
                | Event::Said { text }
                | Event::FinalMsg { text }
                | Event::CompactSummary { text } => (s, text.clone()),
                other => panic!("{other:?} has no text"),
            })
            .collect()
    }

    fn user_msgs(out: &Emit) -> Vec<(Seq, bool, String)> {
        tagged(out, "user")
            .into_iter()
            .map(|(s, e)| match e {
                Event::UserMsg { text, harness, .. } => (s, *harness, text.clone()),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    fn change_of(out: &Emit, id: Option<BlobId>) -> Change {
        let id = id.expect("a change blob");
        let bytes = out.blobs.get(&id).expect("the blob was emitted");
        serde_json::from_slice(bytes).expect("the blob is a Change")
    }

    /// The parsed lines of a transcript, as the driver feeds them.
    fn values(text: &str) -> Vec<(u64, Value)> {
        text.split('\n')
            .enumerate()
            .filter_map(|(i, l)| reader::parse_line(l.as_bytes()).map(|v| (i as u64, v)))
            .collect()
    }

    type Ledger = BTreeMap<Seq, (i64, Event)>;

    fn apply(ledger: &mut Ledger, out: &Emit) {
        for (seq, ev) in &out.events {
            ledger.insert(*seq, ev.clone());
        }
    }

    /// Feed `lines` to a parser restored from `state`, flush, and write it all to `ledger`;
    /// returns the state to save.
    fn capture(state: &str, lines: &[(u64, Value)], ledger: &mut Ledger) -> String {
        let mut state: ParserState = serde_json::from_str(state).expect("state restores");
        let mut out = Emit::default();
        for (i, v) in lines {
            state.parser().line(*i, v, &mut out);
        }
        state.parser_ref().flush(&mut out);
        apply(ledger, &out);
        serde_json::to_string(&state).expect("state saves")
    }

    #[test]
    fn string_and_block_content_both_parse() {
        let (session, out) = parse(CONTENT_SHAPES, "content-shapes");
        assert_eq!(
            session.as_ref().map(SessionId::as_str),
            Some("5b7e2c1a-9d3f-4e8b-a2c6-0f1e2d3c4b5a")
        );
        match event(&out, at(0, 0)) {
            Event::SessionMeta {
                cwd,
                branch,
                agent,
                version,
                parent,
                subagent,
            } => {
                assert_eq!(cwd, "/home/dev/tidepool");
                assert_eq!(branch.as_deref(), Some("main"));
                assert_eq!(*agent, Some(Agent::ClaudeCode));
                assert_eq!(version.as_deref(), Some("2.1.190"));
                assert_eq!(*parent, None);
                assert_eq!(*subagent, None);
            }
            other => panic!("{other:?}"),
        }
        // A string prompt and a prompt of text blocks (beside an image).
        assert_eq!(
            user_msgs(&out),
            vec![
                (
                    at(0, 1),
                    false,
                    "Rename the `retry` helper to `with_backoff` across src/net.".to_string()
                ),
                (
                    at(5, 1),
                    false,
                    "Also add a line to CHANGELOG.md, like in this screenshot.".to_string()
                ),
            ]
        );
        // Assistant text from a block, and from a plain string content.
        assert_eq!(
            texts(&out, "said"),
            vec![(at(1, 1), "I'll find every call site first.".to_string())]
        );
        assert_eq!(
            texts(&out, "final"),
            vec![
                (
                    at(4, 1),
                    "Renamed in both files; `cargo check` is clean.".to_string()
                ),
                (
                    at(6, 1),
                    "Added under **Unreleased → Changed**: `retry` is now `with_backoff`."
                        .to_string()
                ),
            ]
        );
        assert_eq!(
            event(&out, at(2, 1)),
            &Event::ToolCall {
                tool: "Grep".into(),
                detail: "retry\\( in /home/dev/tidepool/src/net".into(),
                ok: true,
                agent: None,
            }
        );
        // The tool-result-only line says what the call printed, and nothing else.
        let on_result: Vec<&str> = out
            .events
            .iter()
            .filter(|(s, _)| s.0 / SEQ_STRIDE == 3)
            .map(|(_, (_, e))| e.tag())
            .collect();
        assert_eq!(on_result, vec!["output"]);
    }

    #[test]
    fn one_response_split_over_several_lines_keeps_each_lines_seq_and_time() {
        let (_, out) = parse(SPLIT_RESPONSE, "split-response");
        // The thinking line says nothing; text and the two parallel calls each sit on
        // their own line, at that line's time.
        assert!(!out.events.keys().any(|s| s.0 / SEQ_STRIDE == 1));
        assert_eq!(
            texts(&out, "said"),
            vec![(
                at(2, 1),
                "Two likely suspects: an open DB handle or a watcher. Checking the jest config and the test script.".to_string()
            )]
        );
        let calls: Vec<(Seq, String, String)> = tagged(&out, "tool")
            .into_iter()
            .map(|(s, e)| match e {
                Event::ToolCall {
                    tool, detail, ok, ..
                } => {
                    assert!(ok);
                    (s, tool.clone(), detail.clone())
                }
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            calls,
            vec![
                (
                    at(3, 1),
                    "Read".into(),
                    "/home/dev/acme-api/jest.config.js".into()
                ),
                (
                    at(4, 1),
                    "Bash".into(),
                    "cat package.json | jq .scripts".into()
                ),
            ]
        );
        let ts = |seq| out.events[&seq].0;
        let line_ts = |n: usize| {
            let v: Value = serde_json::from_str(SPLIT_RESPONSE.lines().nth(n).unwrap()).unwrap();
            parse_iso_ms(v["timestamp"].as_str().unwrap()).unwrap()
        };
        assert_eq!(ts(at(2, 1)), line_ts(2));
        assert_eq!(ts(at(3, 1)), line_ts(3));
        assert_eq!(ts(at(4, 1)), line_ts(4));
        assert_eq!(tagged(&out, "final").len(), 1);
        assert_eq!(tagged(&out, "final")[0].0, at(7, 1));
    }

    #[test]
    fn edit_write_multiedit_and_notebookedit_each_touch_a_file_with_its_change() {
        let (_, out) = parse(EDITS, "edits");
        let touches: Vec<(Seq, String, TouchOp, Change)> = tagged(&out, "file")
            .into_iter()
            .map(|(s, e)| match e {
                Event::FileTouch {
                    path,
                    op,
                    change,
                    failed,
                    more,
                    ..
                } => {
                    assert!(!failed);
                    assert!(more.is_empty());
                    (s, path.clone(), *op, change_of(&out, *change))
                }
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(touches.len(), 4);
        // Each touch sits right after its call.
        for (seq, path, _, _) in &touches {
            match event(&out, Seq(seq.0 - 1)) {
                Event::ToolCall { detail, ok, .. } => {
                    assert_eq!(detail, path);
                    assert!(ok);
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(
            touches[0],
            (
                at(1, 2),
                "/home/dev/acme-api/src/server.ts".into(),
                TouchOp::Edit,
                Change::Edit(Replacement {
                    old: "app.use(cors());".into(),
                    new: "app.use(cors());\napp.use(rateLimit({ capacity: 20, refillPerSec: 5 }));"
                        .into(),
                    replace_all: false,
                })
            )
        );
        assert_eq!(touches[1].0, at(3, 2));
        assert_eq!(touches[1].1, "/home/dev/acme-api/test/limit.test.ts");
        assert_eq!(touches[1].2, TouchOp::Write);
        match &touches[1].3 {
            Change::Write { content, .. } => {
                assert!(content.starts_with("import { rateLimit }"));
                assert!(content.ends_with("});\n"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            touches[2],
            (
                at(5, 2),
                "/home/dev/acme-api/src/limit.ts".into(),
                TouchOp::MultiEdit,
                Change::MultiEdit {
                    edits: vec![
                        Replacement {
                            old: "import {Request} from 'express'".into(),
                            new: "import type { Request } from \"express\";".into(),
                            replace_all: false,
                        },
                        Replacement {
                            old: "var".into(),
                            new: "let".into(),
                            replace_all: true,
                        },
                    ]
                }
            )
        );
        assert_eq!(
            touches[3],
            (
                at(7, 2),
                "/home/dev/acme-api/notebooks/load.ipynb".into(),
                TouchOp::NotebookEdit,
                Change::NotebookEdit {
                    cell_id: Some("c7f3a1".into()),
                    cell_type: Some("code".into()),
                    edit_mode: Some("replace".into()),
                    source: "plt.plot(rps, p99)\nplt.title(\"p99 under load\")".into(),
                }
            )
        );
        assert_eq!(out.blobs.len(), 4);
    }

    /// A Write of `content` to /r/f.txt and its result, whose `toolUseResult` carries `extra`.
    fn write_and_result(content: &str, extra: Value) -> String {
        let call = json!({"type":"assistant","sessionId":"s1","timestamp":"2026-07-14T10:00:00.000Z",
            "message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"w1","name":"Write",
            "input":{"file_path":"/r/f.txt","content":content}}]}});
        let mut result = json!({"filePath":"/r/f.txt","content":content});
        for (k, v) in extra.as_object().unwrap() {
            result[k] = v.clone();
        }
        let answer = json!({"type":"user","sessionId":"s1","timestamp":"2026-07-14T10:00:01.000Z",
            "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"w1","content":"ok"}]},
            "toolUseResult":result});
        format!("{call}\n{answer}\n")
    }

    /// What the file was before the Write of `write_and_result`, as its change keeps it
    /// (`None`: the change does not say), and how many blobs were emitted.
    fn before_the_write(text: &str) -> (Option<String>, usize) {
        let (_, out) = parse(text, "s1");
        let Event::FileTouch { change, .. } = event(&out, at(0, 2)) else {
            panic!("no touch")
        };
        let Change::Write { content, before } = change_of(&out, *change) else {
            panic!("not a write")
        };
        (before.map(|b| b.text(&content).unwrap()), out.blobs.len())
    }

    #[test]
    fn an_edit_names_the_model_of_the_assistant_message_that_called_it() {
        let (_, out) = parse(EDITS, "edits");
        let events: Vec<Event> = out.events.into_values().map(|(_, e)| e).collect();
        let named = crate::capture::sample::models(&events);
        assert_eq!(named.len(), 4);
        assert!(
            named.iter().all(|(_, m)| *m == Some("claude-sonnet-4-6")),
            "{named:?}"
        );
        // A Write its result revises keeps its model; a line the harness wrote itself (an
        // API error's, model `<synthetic>`) names none.
        let write = json!({"type":"assistant","sessionId":"s","message":{"model":"claude-opus-4-1",
            "content":[{"type":"tool_use","id":"w","name":"Write",
                        "input":{"file_path":"/r/a.txt","content":"new\n"}}]}});
        let result = json!({"type":"user","sessionId":"s","message":{"content":[
            {"type":"tool_result","tool_use_id":"w","content":"ok"}]},
            "toolUseResult":{"type":"update","filePath":"/r/a.txt","content":"new\n",
                             "originalFile":"old\n"}});
        let synthetic = json!({"type":"assistant","sessionId":"s","message":{"model":"<synthetic>",
            "content":[{"type":"tool_use","id":"e","name":"Edit",
                        "input":{"file_path":"/r/b.txt","old_string":"a","new_string":"b"}}]}});
        let mut p = Claude::new(&hints("x"));
        let mut out = Emit::default();
        for (i, v) in [write, result, synthetic].iter().enumerate() {
            p.line(i as u64, v, &mut out);
        }
        match event(&out, at(0, 2)) {
            Event::FileTouch { model, change, .. } => {
                assert_eq!(model.as_deref(), Some("claude-opus-4-1"));
                assert!(matches!(
                    change_of(&out, *change),
                    Change::Write {
                        before: Some(_),
                        ..
                    }
                ));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            event(&out, at(2, 2)),
            Event::FileTouch { model: None, .. }
        ));
    }

    #[test]
    fn a_writes_result_keeps_the_file_it_replaced_on_its_change() {
        let content = "one\nTWO\nthree\nfour\n";
        let original = "one\ntwo\nthree\n";
        let said = |extra: Value| before_the_write(&write_and_result(content, extra));
        // The file before, whole.
        assert_eq!(
            said(json!({"type":"update","originalFile":original,"structuredPatch":[]})),
            (Some(original.to_string()), 1),
            "the change without it is not kept beside it"
        );
        // Only the hunks: undone on the content.
        let hunks = json!([{"oldStart":1,"oldLines":3,"newStart":1,"newLines":4,
            "lines":[" one","-two","+TWO"," three","+four"]}]);
        assert_eq!(
            said(json!({"type":"update","structuredPatch":hunks})),
            (Some(original.to_string()), 1)
        );
        // A file without a newline at its end.
        let hunks = json!([{"oldStart":3,"oldLines":1,"newStart":3,"newLines":2,
            "lines":["-three","\\ No newline at end of file","+three","+four"]}]);
        let cut = "one\nTWO\nthree";
        assert_eq!(
            said(json!({"type":"update","structuredPatch":hunks})),
            (Some(cut.to_string()), 1)
        );
        // Made by the write: nothing before it.
        assert_eq!(
            said(json!({"type":"create","structuredPatch":[]})),
            (Some(String::new()), 1)
        );
        // Hunks that do not fit the content, or no word of what it replaced: as the call said.
        let wrong =
            json!([{"oldStart":1,"oldLines":1,"newStart":1,"newLines":1,"lines":["-x","+y"]}]);
        assert_eq!(
            said(json!({"type":"update","structuredPatch":wrong})),
            (None, 1)
        );
        assert_eq!(said(json!({"type":"update"})), (None, 1));
    }

    #[test]
    fn an_error_result_marks_the_call_failed_and_its_file_touch_failed() {
        let (_, out) = parse(TOOL_ERRORS, "tool-errors");
        let ok_of = |seq| match event(&out, seq) {
            Event::ToolCall { ok, .. } => *ok,
            other => panic!("{other:?}"),
        };
        // Edit (is_error + "Error: …" string), Read (fine), Bash (is_error), Write (rejected
        // by the user), an MCP tool whose structured result says is_error.
        assert!(!ok_of(at(1, 1)));
        assert!(ok_of(at(3, 1)));
        assert!(!ok_of(at(5, 1)));
        assert!(!ok_of(at(7, 1)));
        assert!(!ok_of(at(9, 1)));
        for seq in [at(1, 2), at(7, 2)] {
            match event(&out, seq) {
                Event::FileTouch { failed, change, .. } => {
                    assert!(failed);
                    assert!(change.is_some());
                }
                other => panic!("{other:?}"),
            }
        }
        // The revised call keeps its own line's time, not the result's.
        let call_ts = out.events[&at(1, 1)].0;
        let v: Value = serde_json::from_str(TOOL_ERRORS.lines().nth(1).unwrap()).unwrap();
        assert_eq!(
            call_ts,
            parse_iso_ms(v["timestamp"].as_str().unwrap()).unwrap()
        );
        match event(&out, at(9, 1)) {
            Event::ToolCall { tool, detail, .. } => {
                assert_eq!(tool, "mcp__tracker__create_issue");
                assert_eq!(
                    detail,
                    r#"{"labels":["test"],"title":"pool::drains is flaky"}"#
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_commit_takes_its_hash_from_the_next_lines_result() {
        let (_, out) = parse(GIT_COMMIT, "git-commit");
        let commits = tagged(&out, "commit");
        assert_eq!(commits.len(), 2, "{commits:?}");
        assert_eq!(
            commits[0],
            (
                at(4, 1),
                &Event::Committed {
                    vcs: Vcs::Git,
                    hash: "4be1c0a".into(),
                    message: "Add token-bucket rate limiter".into(),
                    branch: Some("feat/rate-limit".into()),
                }
            )
        );
        // jj reports on stderr, which only toolUseResult carries.
        assert_eq!(
            commits[1],
            (
                at(6, 1),
                &Event::Committed {
                    vcs: Vcs::Jj,
                    hash: "9f8e7d6c".into(),
                    message: "docs: rate limiting".into(),
                    branch: None,
                }
            )
        );
        // At the result line's time.
        let v: Value = serde_json::from_str(GIT_COMMIT.lines().nth(4).unwrap()).unwrap();
        assert_eq!(
            out.events[&at(4, 1)].0,
            parse_iso_ms(v["timestamp"].as_str().unwrap()).unwrap()
        );
        // `git status` is not a commit.
        assert!(matches!(
            event(&out, at(1, 1)),
            Event::ToolCall { ok: true, .. }
        ));
    }

    #[test]
    fn a_compaction_boundary_and_its_summary_make_one_compaction_and_one_summary() {
        let (_, out) = parse(COMPACTION, "compaction");
        let compactions = tagged(&out, "compacted");
        assert_eq!(compactions.len(), 1);
        assert_eq!(compactions[0].0, at(4, 1));
        let summaries = texts(&out, "compact");
        assert_eq!(summaries.len(), 1);
        assert_eq!(summaries[0].0, at(5, 1));
        assert!(
            summaries[0]
                .1
                .starts_with("This session is being continued")
        );
        // The summary is not a prompt, and neither the command nor the summary closes the
        // turn: the next real prompt does.
        assert!(user_msgs(&out).iter().all(|(s, _, _)| *s != at(5, 1)));
        assert_eq!(
            texts(&out, "final"),
            vec![
                (
                    at(1, 1),
                    "The `/metrics` handler now exports bucket fill levels.".to_string()
                ),
                (
                    at(9, 1),
                    "Added `dashboards/limiter.json` with fill-level and rejection panels."
                        .to_string()
                ),
            ]
        );
    }

    #[test]
    fn a_summary_without_a_boundary_still_marks_a_compaction() {
        let text = [
            json!({"type":"user","sessionId":"s1","cwd":"/r","timestamp":"2026-07-14T10:00:00.000Z",
                   "isCompactSummary":true,"isVisibleInTranscriptOnly":true,
                   "message":{"role":"user","content":[{"type":"text","text":"This session is being continued…"},{"type":"text","text":"Summary: more"}]}}),
            json!({"type":"system","subtype":"compact_boundary","sessionId":"s1","timestamp":"2026-07-14T11:00:00.000Z","content":"Conversation compacted"}),
            json!({"type":"file-history-snapshot","messageId":"m","snapshot":{}}),
            json!({"type":"user","sessionId":"s1","timestamp":"2026-07-14T11:00:00.100Z","isCompactSummary":true,
                   "message":{"role":"user","content":"Second summary"}}),
        ]
        .map(|v| v.to_string())
        .join("\n");
        let (_, out) = parse(&text, "x");
        let compactions: Vec<Seq> = tagged(&out, "compacted").iter().map(|(s, _)| *s).collect();
        assert_eq!(compactions, vec![at(0, 1), at(1, 1)]);
        assert_eq!(
            texts(&out, "compact"),
            vec![
                (
                    at(0, 2),
                    "This session is being continued…\nSummary: more".to_string()
                ),
                (at(3, 1), "Second summary".to_string()),
            ]
        );
    }

    #[test]
    fn legacy_summary_lines_at_the_top_yield_nothing() {
        let (session, out) = parse(LEGACY_SUMMARIES, "legacy-summaries");
        assert_eq!(
            session.as_ref().map(SessionId::as_str),
            Some("d1e2f3a4-b5c6-4d7e-8f90-a1b2c3d4e5f6")
        );
        let lines: Vec<u32> = out.events.keys().map(|s| s.0 / SEQ_STRIDE).collect();
        assert_eq!(lines, vec![4, 4, 5]);
        assert!(matches!(event(&out, at(4, 0)), Event::SessionMeta { .. }));
        assert_eq!(user_msgs(&out).len(), 1);
        assert_eq!(tagged(&out, "final").len(), 1);
    }

    #[test]
    fn meta_command_and_injected_lines_are_harness() {
        let (_, out) = parse(HARNESS, "harness");
        let msgs = user_msgs(&out);
        let person: Vec<u32> = msgs
            .iter()
            .filter(|(_, h, _)| !h)
            .map(|(s, _, _)| s.0 / SEQ_STRIDE)
            .collect();
        let harness: Vec<u32> = msgs
            .iter()
            .filter(|(_, h, _)| *h)
            .map(|(s, _, _)| s.0 / SEQ_STRIDE)
            .collect();
        assert_eq!(person, vec![3, 13, 16]);
        // Caveat, /model, its stdout, ! bash input and output, # memory, a system reminder,
        // a skill body (isMeta), a task notification, an inline side question, and the
        // interruption marker.
        assert_eq!(harness, vec![0, 1, 2, 5, 6, 7, 8, 9, 10, 11, 15]);
        // The side answer is prose but not the turn's closing message; the interruption
        // closes the turn it cut short.
        assert_eq!(
            texts(&out, "said"),
            vec![(at(12, 1), "`max_idle` defaults to 4.".to_string())]
        );
        let finals: Vec<Seq> = tagged(&out, "final").iter().map(|(s, _)| *s).collect();
        assert_eq!(finals, vec![at(4, 1), at(14, 1), at(17, 1)]);
    }

    #[test]
    fn a_subagent_file_is_its_own_session_under_its_parent() {
        let (session, out) = parse(SUBAGENT, "agent-a7c19e2");
        assert_eq!(
            session.as_ref().map(SessionId::as_str),
            Some("3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b/agent-a7c19e2")
        );
        match event(&out, at(0, 0)) {
            Event::SessionMeta { parent, cwd, .. } => {
                assert_eq!(
                    parent.as_ref().map(SessionId::as_str),
                    Some("3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b")
                );
                assert_eq!(cwd, "/home/dev/acme-api");
            }
            other => panic!("{other:?}"),
        }
        // The task prompt opens the subagent's turn like a prompt; its last text closes it.
        assert!(!user_msgs(&out)[0].1);
        assert_eq!(tagged(&out, "final")[0].0, at(3, 1));
        // The same lines in the parent's own file would be an inline sidechain: harness.
        let (session, out) = parse(SUBAGENT, "3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b");
        assert_eq!(
            session.as_ref().map(SessionId::as_str),
            Some("3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b")
        );
        assert!(user_msgs(&out)[0].1);
        assert!(tagged(&out, "final").is_empty());
        // A subagent line without an agent id takes it from the file name.
        let line = json!({"type":"user","isSidechain":true,"sessionId":"p1","cwd":"/r",
                          "message":{"role":"user","content":"go"}})
        .to_string();
        let (session, _) = parse(&line, "agent-b81d03f");
        assert_eq!(
            session.as_ref().map(SessionId::as_str),
            Some("p1/agent-b81d03f")
        );
    }

    #[test]
    fn a_uuid_file_name_names_the_session() {
        let line = json!({"type":"user","sessionId":"0f0e0d0c-0000-4000-8000-000000000000",
                          "cwd":"/r","message":{"role":"user","content":"hi"}})
        .to_string();
        let stem = "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d";
        let (session, _) = parse(&line, stem);
        assert_eq!(session.as_ref().map(SessionId::as_str), Some(stem));
        let (session, _) = parse(&line, "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4");
        assert_eq!(
            session.as_ref().map(SessionId::as_str),
            Some("0f0e0d0c-0000-4000-8000-000000000000")
        );
        // snake_case copy, when that is all a line has.
        let mut p = Claude::new(&hints("x"));
        p.line(
            0,
            &json!({"type":"mode","mode":"normal","session_id":"snake"}),
            &mut Emit::default(),
        );
        assert_eq!(p.session().as_ref().map(SessionId::as_str), Some("snake"));
        assert!(Claude::new(&hints("x")).session().is_none());
    }

    #[test]
    fn each_closed_turn_gets_a_final_message_and_the_open_one_a_provisional_one() {
        let (_, out) = parse(FULL_SESSION, "full-session");
        let finals = texts(&out, "final");
        let seqs: Vec<Seq> = finals.iter().map(|(s, _)| *s).collect();
        // Closed by the next prompt, by an interruption, by a prompt after a compaction,
        // and the last turn still open at the end of the file.
        assert_eq!(seqs, vec![at(25, 1), at(28, 1), at(39, 1), at(50, 1)]);
        assert_eq!(finals[3].1, "Want me to commit this too?");
        // Every other assistant text is prose, including the short ones and the inline
        // side answer; the API error line says nothing.
        let said: Vec<Seq> = tagged(&out, "said").iter().map(|(s, _)| *s).collect();
        assert_eq!(
            said,
            vec![
                at(7, 1),
                at(10, 1),
                at(18, 1),
                at(33, 1),
                at(45, 1),
                at(46, 1),
                at(49, 1)
            ]
        );
        assert!(!out.events.keys().any(|s| s.0 / SEQ_STRIDE == 36));
        // Without a flush, the open turn's text stays prose.
        let mut p = Claude::new(&hints("full-session"));
        let mut no_flush = Emit::default();
        for (i, v) in values(FULL_SESSION) {
            p.line(i, &v, &mut no_flush);
        }
        assert!(matches!(event(&no_flush, at(50, 1)), Event::Said { .. }));
        assert_eq!(tagged(&no_flush, "final").len(), 3);
    }

    #[test]
    fn the_richest_session_yields_what_it_holds() {
        let (session, out) = parse(FULL_SESSION, "full-session");
        assert_eq!(
            session.as_ref().map(SessionId::as_str),
            Some("4a7f1c2e-6b3d-4e8f-9a0b-1c2d3e4f5a6b")
        );
        // Meta from the first line with a cwd (line 0 is a snapshot).
        assert!(matches!(event(&out, at(1, 0)), Event::SessionMeta { .. }));
        assert_eq!(tagged(&out, "meta").len(), 1);
        let failed: Vec<Seq> = tagged(&out, "tool")
            .into_iter()
            .filter(|(_, e)| matches!(e, Event::ToolCall { ok: false, .. }))
            .map(|(s, _)| s)
            .collect();
        assert_eq!(failed, vec![at(16, 1), at(29, 1)]);
        let touches: Vec<(Seq, bool)> = tagged(&out, "file")
            .into_iter()
            .map(|(s, e)| match e {
                Event::FileTouch { failed, .. } => (s, *failed),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            touches,
            vec![
                (at(11, 2), false),
                (at(14, 2), false),
                (at(18, 3), false),
                (at(29, 2), true),
                (at(37, 2), false),
                (at(46, 4), false),
            ]
        );
        assert!(matches!(
            event(&out, at(24, 1)),
            Event::Committed { hash, .. } if hash == "7c3e9a1"
        ));
        assert!(
            matches!(
                event(&out, at(34, 1)),
                Event::ToolCall { tool, detail, ok: true, agent: Some(agent) }
                    if tool == "Task" && detail == "Find prom-client usage" && agent == "b81d03f"
            ),
            "the Task call names the subagent its result says it started"
        );
        assert_eq!(tagged(&out, "compacted").len(), 1);
        assert_eq!(tagged(&out, "compact").len(), 1);
        // The Glob call at the end has no result yet.
        assert!(matches!(
            event(&out, at(52, 1)),
            Event::ToolCall { ok: true, .. }
        ));
    }

    #[test]
    fn a_timed_turn_keeps_its_closing_message_when_a_notification_reply_follows() {
        let (_, out) = parse(TURN_DURATION, "d1e2f3a4-5b6c-4d7e-8f90-a1b2c3d4e5f6");
        assert_eq!(
            texts(&out, "final"),
            vec![
                (
                    at(4, 1),
                    "The export is running in the background; nothing is off so far, and I \
                     will report when it finishes."
                        .to_string()
                ),
                // The reply to the harness's <task-notification> is a turn of its own.
                (
                    at(7, 1),
                    "The export finished: 1,204 rows written, no errors.".to_string()
                ),
                (
                    at(10, 1),
                    "Archived to exports/2026-07-15.tar.gz.".to_string()
                ),
            ]
        );
        assert_eq!(
            texts(&out, "said"),
            vec![(
                at(1, 1),
                "Starting the export in the background.".to_string()
            )]
        );
        let prompts: Vec<Seq> = user_msgs(&out)
            .into_iter()
            .filter(|(_, harness, _)| !harness)
            .map(|(s, _, _)| s)
            .collect();
        assert_eq!(prompts, vec![at(0, 1), at(9, 1)]);
    }

    #[test]
    fn the_harness_compactor_is_a_subagent_whose_instructions_are_no_prompt() {
        let (session, out) = parse(COMPACTOR, "agent-acompact-5d1e0f");
        assert_eq!(
            session.as_ref().map(SessionId::as_str),
            Some("3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b/agent-acompact-5d1e0f")
        );
        let users = user_msgs(&out);
        assert_eq!(users.len(), 1);
        assert!(users[0].1, "the compactor's instructions are the harness's");
        assert!(
            users[0]
                .2
                .starts_with("Your task is to create a detailed summary")
        );
        // A task subagent's first text is still its prompt.
        let (_, out) = parse(SUBAGENT, "agent-a7c19e2");
        assert!(!user_msgs(&out)[0].1);
    }

    #[test]
    fn a_line_with_an_out_of_range_number_still_yields_its_prompt_and_failure() {
        let (_, out) = parse(BIG_NUMBER, "b16b0e55-2c3d-4e5f-8a9b-0c1d2e3f4a5b");
        assert!(matches!(
            event(&out, at(1, 1)),
            Event::ToolCall { ok: false, .. }
        ));
        assert_eq!(
            user_msgs(&out)[1],
            (
                at(2, 1),
                false,
                "That overflowed; use the p95 latency instead.".to_string()
            )
        );
    }

    #[test]
    fn prompts_texts_and_summaries_are_kept_whole() {
        let long = format!("{} tailword", "word ".repeat(20_000));
        let text = [
            json!({"type":"user","sessionId":"s","cwd":"/r","message":{"role":"user","content":long}}),
            json!({"type":"assistant","message":{"content":[{"type":"text","text":long}]}}),
            json!({"type":"user","isCompactSummary":true,"message":{"role":"user","content":long}}),
        ]
        .map(|v| v.to_string())
        .join("\n");
        let (_, out) = parse(&text, "x");
        assert_eq!(texts(&out, "user"), vec![(at(0, 1), long.clone())]);
        assert_eq!(texts(&out, "final"), vec![(at(1, 1), long.clone())]);
        assert_eq!(texts(&out, "compact"), vec![(at(2, 2), long)]);
    }

    #[test]
    fn resuming_from_saved_state_at_any_line_equals_a_full_parse() {
        for (name, text) in ALL {
            let lines = values(text);
            let fresh = serde_json::to_string(&ParserState::Claude(Claude::new(&hints(name))))
                .expect("state saves");
            let mut full = Ledger::new();
            let end = capture(&fresh, &lines, &mut full);
            let end: ParserState = serde_json::from_str(&end).unwrap();
            for k in 0..=lines.len() {
                let mut ledger = Ledger::new();
                let mid = capture(&fresh, &lines[..k], &mut ledger);
                let last = capture(&mid, &lines[k..], &mut ledger);
                assert_eq!(ledger, full, "{name}: resumed after {k} parsed lines");
                let last: ParserState = serde_json::from_str(&last).unwrap();
                assert_eq!(last.parser_ref().session(), end.parser_ref().session());
                assert_eq!(last.parser_ref().last_ts(), end.parser_ref().last_ts());
            }
        }
    }

    #[test]
    fn resuming_twice_equals_a_full_parse() {
        let lines = values(FULL_SESSION);
        let fresh = serde_json::to_string(&ParserState::Claude(Claude::new(&hints("f"))))
            .expect("state saves");
        let mut full = Ledger::new();
        capture(&fresh, &lines, &mut full);
        for a in 0..=lines.len() {
            for b in a..=lines.len() {
                let mut ledger = Ledger::new();
                let s = capture(&fresh, &lines[..a], &mut ledger);
                let s = capture(&s, &lines[a..b], &mut ledger);
                capture(&s, &lines[b..], &mut ledger);
                assert_eq!(ledger, full, "cuts at {a} and {b}");
            }
        }
    }

    #[test]
    fn garbage_lines_interleaved_never_fail() {
        let (session, out) = parse(GARBAGE, "garbage");
        assert_eq!(
            session.as_ref().map(SessionId::as_str),
            Some("f00dbabe-0000-4111-8222-333344445555")
        );
        let person: Vec<String> = user_msgs(&out)
            .into_iter()
            .filter(|(_, h, _)| !h)
            .map(|(_, _, t)| t)
            .collect();
        assert_eq!(
            person,
            vec![
                "Print the first ten primes in Rust.".to_string(),
                "Thanks, now make it print them space-separated.".to_string()
            ]
        );
        assert_eq!(tagged(&out, "final").len(), 2);
        // The API error line is not prose.
        assert!(
            texts(&out, "said")
                .iter()
                .all(|(_, t)| !t.starts_with("API Error"))
        );
        assert!(tagged(&out, "commit").is_empty());
        // An edit that names no file touches none.
        assert!(tagged(&out, "file").is_empty());
        // Anything at all, fed straight to the parser.
        let odd = [
            json!(null),
            json!(7),
            json!("user"),
            json!([{"type":"user"}]),
            json!({"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Edit","input":[]}]}}),
            json!({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":[null,{"type":"text"}]}]},"toolUseResult":"Error"}),
            json!({"type":"assistant","message":{"content":[{"type":"tool_use","id":"u","name":"Bash","input":{"command":"git commit -m x"}}]}}),
            json!({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"u","content":7}]},"toolUseResult":{"stdout":["x"],"stderr":null}}),
            json!({"type":"system","subtype":"compact_boundary"}),
            json!({"type":"user","isCompactSummary":true}),
            json!({"sessionId":"","cwd":"","gitBranch":7,"version":[]}),
        ];
        let mut p = Claude::new(&hints("agent-"));
        let mut out = Emit::default();
        for (i, v) in odd.iter().enumerate() {
            p.line(i as u64, v, &mut out);
        }
        p.flush(&mut out);
        assert!(p.session().is_none());
    }

    #[test]
    fn timestamps_carry_over_lines_without_one() {
        let text = [
            json!({"type":"user","sessionId":"s","timestamp":"2026-07-14T10:00:05.000Z","message":{"content":"a"}}),
            json!({"type":"user","sessionId":"s","timestamp":"2026-07-14T10:00:01.000Z","message":{"content":"<system-reminder>b</system-reminder>"}}),
            json!({"type":"assistant","sessionId":"s","message":{"content":[{"type":"text","text":"c"}]}}),
            json!({"type":"assistant","sessionId":"s","timestamp":"not a time","message":{"content":[{"type":"text","text":"d"}]}}),
        ]
        .map(|v| v.to_string())
        .join("\n");
        let mut p = Claude::new(&hints("x"));
        assert_eq!(p.last_ts(), 0);
        let mut out = Emit::default();
        for (i, v) in values(&text) {
            p.line(i, &v, &mut out);
        }
        let t1 = parse_iso_ms("2026-07-14T10:00:01.000Z").unwrap();
        let t5 = parse_iso_ms("2026-07-14T10:00:05.000Z").unwrap();
        assert_eq!(out.events[&at(2, 1)].0, t1);
        assert_eq!(out.events[&at(3, 1)].0, t1);
        assert_eq!(p.last_ts(), t5);
        // A file whose first lines have no time at all starts at 0.
        let mut p = Claude::new(&hints("x"));
        let mut out = Emit::default();
        p.line(
            0,
            &json!({"type":"assistant","message":{"content":"hi"}}),
            &mut out,
        );
        assert_eq!(out.events[&at(0, 1)].0, 0);
    }

    #[test]
    fn the_answer_to_an_ask_user_question_is_the_persons_words_with_the_question_as_context() {
        let (_, out) = parse(ASK_AND_PLAN, "ask-and-plan");
        let persons: Vec<(String, Option<String>)> = out
            .events
            .values()
            .filter_map(|(_, e)| match e {
                Event::UserMsg {
                    text,
                    harness: false,
                    context,
                } => Some((text.clone(), context.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            persons,
            vec![
                (
                    "Clean up the chat UI, it has grown too many custom pieces.".to_string(),
                    None
                ),
                (
                    "Remove anything custom we have and use the ai elements approach".to_string(),
                    Some("answering:\n- Which approach should the chat use?".to_string())
                ),
            ]
        );
        // At the answer's line, and the call names its question.
        assert!(matches!(event(&out, at(2, 1)), Event::UserMsg { .. }));
        assert!(matches!(
            event(&out, at(1, 1)),
            Event::ToolCall { tool, detail, ok: true, .. }
                if tool == "AskUserQuestion" && detail == "Which approach should the chat use?"
        ));
    }

    #[test]
    fn an_approved_plan_is_kept_whole_and_a_rejected_one_is_only_named() {
        let (_, out) = parse(ASK_AND_PLAN, "ask-and-plan");
        let v: Value = serde_json::from_str(ASK_AND_PLAN.lines().nth(3).unwrap()).unwrap();
        let plan = v["message"]["content"][0]["input"]["plan"]
            .as_str()
            .unwrap();
        assert!(plan.len() > DETAIL_CAP * 2);
        // Approved: the whole plan, at the approval's line.
        assert_eq!(event(&out, at(4, 1)), &Event::Said { text: plan.into() });
        assert!(matches!(
            event(&out, at(3, 1)),
            Event::ToolCall { tool, detail, .. }
                if tool == "ExitPlanMode" && detail == "Plan: replace the custom chat widgets"
        ));
        // Rejected: the call (failed) names it; its text is not kept as said.
        assert!(matches!(
            event(&out, at(5, 1)),
            Event::ToolCall { detail, ok: false, .. } if detail == "Plan: also rewrite the router"
        ));
        assert!(
            !out.events.values().any(
                |(_, e)| matches!(e, Event::Said { text } if text.contains("Swap the router"))
            )
        );
        // The plan is no closing message: the turn's last text is.
        assert_eq!(
            texts(&out, "final"),
            vec![(
                at(7, 1),
                "The chat now renders with the ai elements components; the custom bubble is gone."
                    .to_string()
            )]
        );
    }

    #[test]
    fn tool_details_name_what_the_call_is_about() {
        let d = |name: &str, input: Value| detail(name, Some(&input));
        assert_eq!(d("Bash", json!({"command":"ls -la"})), "ls -la");
        assert_eq!(d("Read", json!({"file_path":"/a"})), "/a");
        assert_eq!(
            d("NotebookEdit", json!({"notebook_path":"/n.ipynb"})),
            "/n.ipynb"
        );
        assert_eq!(d("Glob", json!({"pattern":"**/*.rs"})), "**/*.rs");
        assert_eq!(
            d("Grep", json!({"pattern":"fn main","path":"/src"})),
            "fn main in /src"
        );
        assert_eq!(d("Task", json!({"description":"Scan"})), "Scan");
        assert_eq!(d("Agent", json!({"description":"Scan"})), "Scan");
        assert_eq!(d("WebFetch", json!({"url":"https://x"})), "https://x");
        assert_eq!(d("WebSearch", json!({"query":"q"})), "q");
        assert_eq!(d("TodoWrite", json!({"todos":[]})), r#"{"todos":[]}"#);
        assert_eq!(detail("ExitPlanMode", None), "");
        assert_eq!(d("ExitPlanMode", Value::Null), "");
        assert_eq!(d("Bash", json!({"command":["git","commit"]})), "");
        let long = "x".repeat(DETAIL_CAP * 2);
        assert_eq!(d("Bash", json!({ "command": long })).len(), DETAIL_CAP);
    }

    #[test]
    fn a_line_past_its_slots_folds_touches_and_counts_what_it_drops() {
        let blocks: Vec<Value> = (0..20)
            .map(|i| {
                json!({"type":"tool_use","id":format!("t{i}"),"name":"Edit",
                       "input":{"file_path":format!("/f{i}"),"old_string":"a","new_string":"b"}})
            })
            .collect();
        let call = json!({"type":"assistant","sessionId":"s","message":{"content":blocks}});
        let result = json!({"type":"user","sessionId":"s","message":{"content":[
            {"type":"tool_result","tool_use_id":"t6","content":"Error: no","is_error":true},
            {"type":"tool_result","tool_use_id":"t19","content":"ok"}]}});
        let mut p = Claude::new(&hints("x"));
        let mut out = Emit::default();
        p.line(0, &call, &mut out);
        // 7 calls with their touches fill slots 1-14, the 8th call takes slot 15; its touch
        // and all later ones fold into the 7th touch, and the 12 later calls are dropped.
        assert_eq!(out.events.len(), 15);
        assert_eq!(p.overflowed(), 12);
        assert_eq!(ParserState::Claude(p.clone()).parser_ref().overflowed(), 12);
        let more_paths = |e: &Event| match e {
            Event::FileTouch { more, path, .. } => {
                assert_eq!(path, "/f6");
                more.iter().map(|t| t.path.clone()).collect::<Vec<_>>()
            }
            other => panic!("{other:?}"),
        };
        let expect: Vec<String> = (7..20).map(|i| format!("/f{i}")).collect();
        assert_eq!(more_paths(event(&out, at(0, 14))), expect);
        assert!(
            matches!(event(&out, at(0, 14)), Event::FileTouch { more, .. } if more.iter().all(|t| t.op == TouchOp::Edit && t.change.is_some()))
        );
        // A failure re-emits the touch with everything folded into it.
        let state = serde_json::to_string(&p).unwrap();
        let mut p: Claude = serde_json::from_str(&state).unwrap();
        let mut out = Emit::default();
        p.line(1, &result, &mut out);
        match event(&out, at(0, 14)) {
            e @ Event::FileTouch { failed: true, .. } => assert_eq!(more_paths(e), expect),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            event(&out, at(0, 13)),
            Event::ToolCall { ok: false, .. }
        ));
        // And the result's own line records what the call printed.
        assert!(matches!(
            event(&out, at(1, 1)),
            Event::ToolOutput { call, .. } if *call == at(0, 13)
        ));
        assert_eq!(out.events.len(), 3);
    }

    #[test]
    fn the_saved_state_stays_small() {
        let mut p = Claude::new(&hints("full-session"));
        let mut out = Emit::default();
        for (i, v) in values(FULL_SESSION) {
            p.line(i, &v, &mut out);
        }
        // Only the unanswered Glob call and the open turn's text are carried.
        assert_eq!(p.pending.len(), 1);
        assert_ne!(p.turn, Closing::default());
        let state = serde_json::to_string(&p).unwrap();
        assert!(state.len() < 1024, "{state}");
        // Unanswered calls are forgotten oldest first past the bound.
        let mut p = Claude::new(&hints("x"));
        for i in 0..(MAX_PENDING as u64 + 10) {
            let v = json!({"type":"assistant","message":{"content":[
                {"type":"tool_use","id":format!("t{i}"),"name":"Bash","input":{"command":"true"}}]}});
            p.line(i, &v, &mut out);
        }
        assert_eq!(p.pending.len(), MAX_PENDING);
        assert!(!p.pending.contains_key("t0"));
        assert!(p.pending.contains_key(&format!("t{}", MAX_PENDING + 9)));
    }

    /// A real Claude Code 2.0.27 transcript (third-party; read from the shared folder when
    /// it is there, never copied into the repository).
    #[test]
    fn a_real_2_0_27_transcript_parses() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/fixtures/claude-2.0.27_agentcmd_full-session-four.jsonl");
        let Ok(text) = std::fs::read_to_string(&path) else {
            crate::testing::skip(&format!("{} is not here", path.display()), false);
            return;
        };
        let (session, out) = parse(&text, "claude-2.0.27_agentcmd_full-session-four");
        assert_eq!(
            session.as_ref().map(SessionId::as_str),
            Some("2d984148-cddb-4605-aac1-13e720fe613c")
        );
        let touches: Vec<(TouchOp, Change)> = tagged(&out, "file")
            .into_iter()
            .map(|(_, e)| match e {
                Event::FileTouch { op, change, .. } => (*op, change_of(&out, *change)),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            touches
                .iter()
                .filter(|(op, _)| *op == TouchOp::Edit)
                .count(),
            10
        );
        assert!(touches.iter().all(|(op, c)| match c {
            Change::Edit(_) => *op == TouchOp::Edit,
            Change::Write { .. } => *op == TouchOp::Write,
            _ => false,
        }));
        assert_eq!(
            touches
                .iter()
                .filter(|(op, _)| *op == TouchOp::Write)
                .count(),
            1
        );
        let calls = tagged(&out, "tool");
        assert_eq!(calls.len(), 27);
        let failed: Vec<&Event> = calls
            .iter()
            .filter(|(_, e)| matches!(e, Event::ToolCall { ok: false, .. }))
            .map(|(_, e)| *e)
            .collect();
        assert_eq!(failed.len(), 1);
        assert!(matches!(failed[0], Event::ToolCall { tool, .. } if tool == "Bash"));
        let msgs = user_msgs(&out);
        assert_eq!(msgs.iter().filter(|(_, h, _)| !h).count(), 3);
        assert_eq!(msgs.iter().filter(|(_, h, _)| *h).count(), 3);
        assert_eq!(tagged(&out, "final").len(), 3);
        assert_eq!(tagged(&out, "said").len(), 19);
        assert_eq!(tagged(&out, "meta").len(), 1);
        assert!(tagged(&out, "commit").is_empty());
    }
}
