//! Codex CLI rollouts (`~/.codex/sessions/**/rollout-*.jsonl`), all three generations
//! (formats.md §3): the pre-envelope files of mid-2025 (a bare header, `record_type` markers,
//! bare Responses items), the `{timestamp, type, payload}` envelope, and the 2026 additions
//! (`ordinal`, paginated history with `item_completed`).
//!
//! Prompts and replies come from either copy, `response_item` messages or `event_msg`
//! `user_message` / `agent_message` (some rollouts write only the latter), and a message
//! written both ways is recorded once (see [`Echo`] and [`Codex::reply_copy`]). Hosted web searches are tool calls; a process
//! `exec_command` leaves running is polled by `write_stdin`, and its exit status, arriving in
//! a poll, revises the `exec_command`'s own event. A turn's last assistant text is
//! its closing message, written as `FinalMsg` when the turn closes (a real prompt,
//! `task_complete`, `turn_aborted`) and provisionally by `flush`. Tool calls are remembered by
//! `call_id` until their output says whether they failed; apply_patch calls, in whichever of
//! their encodings, become one `FileTouch` per file, each naming the turn's model (the latest
//! `turn_context.model`, or a `session_meta`'s `model` before any; older rollouts name
//! none).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::commit::{self, PendingCommit};
use super::patch;
use super::{Emit, FileHints, LineSlots, TranscriptParser, absolute, model_name, str_at, streams};
use crate::vocab::change::Change;
use crate::vocab::event::{
    Agent, DETAIL_CAP, Event, Seq, SessionId, Subagent, TouchOp, Touched, cap,
};
use crate::vocab::time::parse_iso_ms;

/// Calls waiting for their output (or, for patches, their `patch_apply_end`) beyond this
/// many are forgotten, oldest answered first: a call is answered within its turn.
const MAX_CALLS: usize = 32;
/// Processes an `exec_command` left running (polled by `write_stdin`) remembered at most;
/// past this the oldest is forgotten.
const MAX_EXEC_SESSIONS: usize = 16;

/// The multi-agent tool whose output names the agent thread it started.
const SPAWN_TOOL: &str = "spawn_agent";

/// Prefixes of user-role messages the harness injected.
const HARNESS_PREFIXES: &[&str] = &[
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<INSTRUCTIONS>",
    "<user_shell_command>",
    "<turn_aborted>",
];

/// Tools whose arguments carry a shell command (`command` argv or string, or `cmd`).
const SHELL_TOOLS: &[&str] = &[
    "shell",
    "shell_command",
    "container.exec",
    "exec_command",
    "local_shell",
];

/// The parser's resumable state. Kept small: it is saved in the capture cursor.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Codex {
    /// The thread id in the file name, used when no line names the session.
    #[serde(skip_serializing_if = "Option::is_none")]
    fallback: Option<String>,
    /// From the first `session_meta` (`id`, else `session_id`) or pre-envelope header.
    session: Option<String>,
    /// The `SessionMeta` emitted, kept to re-emit it once a missing cwd is learnt. Boxed:
    /// set once per file, inline it makes `ParserState` (either parser's state) far larger
    /// than Claude's state needs (clippy's `large_enum_variant`).
    meta: Option<Box<Meta>>,
    /// The latest `turn_context.cwd` (or `<environment_context>` cwd).
    #[serde(skip_serializing_if = "Option::is_none")]
    turn_cwd: Option<String>,
    /// The current turn's model: the latest `turn_context.model`, else the one a
    /// `session_meta` names. What the turn's edits were made with.
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    /// The current line's timestamp, carried forward over lines without one.
    ts: i64,
    /// The newest timestamp seen.
    max_ts: i64,
    /// The open turn's last assistant text.
    #[serde(skip_serializing_if = "Option::is_none")]
    last: Option<Text>,
    /// Tool calls waiting for their output, oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    calls: Vec<Call>,
    /// Processes an `exec_command` left running, by the session id `write_stdin` polls
    /// them with: their exit status (and a commit's hash) arrives in a poll's output.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    exec_sessions: Vec<ExecSession>,
    /// Prompts recorded from one copy (`response_item` or `event_msg`) whose other copy
    /// has not been seen yet; cleared once the agent answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    echo: Option<Echo>,
    /// A reply read from an `agent_message`, held until the next line shows whether its
    /// `response_item` copy follows (see [`Codex::reply_copy`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    held_reply: Option<Text>,
    /// A `response_item` user or assistant message was seen: `item_completed` messages
    /// (paginated history) are then duplicates.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    item_messages: bool,
    /// Events dropped because their line's slots were used up.
    #[serde(skip_serializing_if = "is_zero")]
    overflowed: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Meta {
    seq: Seq,
    ts: i64,
    cwd: Option<String>,
    branch: Option<String>,
    version: Option<String>,
    parent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    subagent: Option<Subagent>,
}

impl Meta {
    fn event(&self) -> Event {
        Event::SessionMeta {
            cwd: self.cwd.clone().unwrap_or_default(),
            branch: self.branch.clone(),
            agent: Some(Agent::Codex),
            version: self.version.clone(),
            parent: self.parent.clone().map(SessionId),
            subagent: self.subagent.clone(),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Text {
    seq: Seq,
    ts: i64,
    text: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Call {
    id: String,
    seq: Seq,
    ts: i64,
    tool: String,
    detail: String,
    /// The `FileTouch` events emitted for the call (seq, ts, event), re-emitted as failed
    /// if it fails.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    touches: Vec<(Seq, i64, Event)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    commit: Option<PendingCommit>,
    /// For `write_stdin`: the exec session it polls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    poll: Option<String>,
    /// For `spawn_agent`: the agent its output says it started (see [`spawned_agent`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    agent: Option<String>,
    /// The output arrived; kept (until the turn closes) only for a later patch_apply_end.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    answered: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    failed: bool,
}

impl Call {
    /// The call's ToolCall event as now known: failed or not, and the agent it started.
    fn event(&self) -> Event {
        Event::ToolCall {
            tool: self.tool.clone(),
            detail: self.detail.clone(),
            ok: !self.failed,
            agent: self.agent.clone(),
        }
    }

    /// Re-emit the call as failed: its ToolCall with `ok: false`, its touches `failed`.
    fn fail(&mut self, out: &mut Emit) {
        self.failed = true;
        out.event(self.seq, self.ts, self.event());
        for (seq, ts, touch) in &mut self.touches {
            if let Event::FileTouch { failed, .. } = touch {
                *failed = true;
            }
            out.event(*seq, *ts, touch.clone());
        }
    }
}

/// A process an `exec_command` started and left running.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct ExecSession {
    /// The process's session id, as `write_stdin` names it.
    id: String,
    /// The `exec_command` that started it, to revise when the process fails.
    call: Call,
}

/// Where a message was read from. Legacy rollouts write every prompt twice, as a
/// `response_item` user message (what the model saw) and an `event_msg` `user_message`
/// (what was typed), in either order, and every reply twice, as an `event_msg`
/// `agent_message` followed by a `response_item` assistant message; some write only the
/// `event_msg` copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum MessageCopy {
    Item,
    Event,
}

/// `n` prompts were recorded from `from` since the agent last spoke: the next `n` from the
/// other copy are the same prompts again.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Echo {
    from: MessageCopy,
    n: u32,
}

impl Echo {
    /// Whether a prompt read from `copy` is new (to record) rather than the other copy of
    /// one already recorded, keeping the count in `echo`.
    fn is_new(echo: &mut Option<Echo>, copy: MessageCopy) -> bool {
        match echo {
            Some(e) if e.from != copy => {
                e.n -= 1;
                if e.n == 0 {
                    *echo = None;
                }
                false
            }
            Some(e) => {
                e.n += 1;
                true
            }
            None => {
                *echo = Some(Echo { from: copy, n: 1 });
                true
            }
        }
    }
}

/// A tool call as read from its line, before it is recorded.
struct NewCall {
    id: String,
    tool: String,
    detail: String,
    /// apply_patch text, and the directory its relative paths are against.
    patch: Option<(String, Option<String>)>,
    commit: Option<PendingCommit>,
    poll: Option<String>,
}

impl Codex {
    pub(crate) fn new(hints: &FileHints) -> Codex {
        Codex {
            fallback: thread_id_in_stem(&hints.stem),
            ..Codex::default()
        }
    }

    fn slot(&mut self, slots: &mut LineSlots) -> Option<Seq> {
        let seq = slots.next();
        if seq.is_none() {
            self.overflowed += 1;
        }
        seq
    }

    /// Emit `event` at the line's next slot (counted as overflow if there is none).
    fn emit(&mut self, slots: &mut LineSlots, event: Event, out: &mut Emit) {
        if let Some(seq) = self.slot(slots) {
            out.event(seq, self.ts, event);
        }
    }

    // ---- identity ---------------------------------------------------------------------------

    fn session_meta(&mut self, p: &Value, slots: &LineSlots, out: &mut Emit) {
        if self.model.is_none() {
            self.model = model_name(None, str_at(p, "model"));
        }
        if self.meta.is_some() {
            return; // a resumed or forked session repeats it; the first owns identity
        }
        let id = [str_at(p, "id"), str_at(p, "session_id")]
            .into_iter()
            .flatten()
            .find(|id| !id.is_empty());
        if self.session.is_none() {
            self.session = id.map(str::to_string);
        }
        let subagent = subagent_of(p);
        // A review or compaction sub-thread names no spawning thread in older builds, but is
        // forked from the thread it serves.
        let forked_from = || {
            matches!(subagent, Some(Subagent::Review | Subagent::Compact))
                .then(|| str_at(p, "forked_from_id"))
                .flatten()
        };
        let parent = p
            .pointer("/source/subagent/thread_spawn/parent_thread_id")
            .and_then(Value::as_str)
            .or_else(|| str_at(p, "parent_thread_id"))
            .or_else(forked_from)
            .map(str::to_string);
        self.start_meta(p, parent, subagent, slots, out);
    }

    /// The pre-envelope header line: `{id, timestamp, instructions|git, …}`.
    fn header(&mut self, v: &Value, slots: &LineSlots, out: &mut Emit) {
        if self.meta.is_some() || self.session.is_some() {
            return;
        }
        let Some(id) = str_at(v, "id").filter(|id| !id.is_empty()) else {
            return;
        };
        if v.get("instructions").is_none() && v.get("git").is_none() && v.get("cwd").is_none() {
            return;
        }
        self.session = Some(id.to_string());
        self.start_meta(v, None, None, slots, out);
    }

    fn start_meta(
        &mut self,
        p: &Value,
        parent: Option<String>,
        subagent: Option<Subagent>,
        slots: &LineSlots,
        out: &mut Emit,
    ) {
        let meta = Meta {
            seq: slots.meta(),
            ts: self.ts,
            cwd: str_at(p, "cwd")
                .filter(|c| !c.is_empty())
                .map(str::to_string),
            branch: p
                .pointer("/git/branch")
                .and_then(Value::as_str)
                .filter(|b| !b.is_empty())
                .map(str::to_string),
            version: str_at(p, "cli_version").map(str::to_string),
            parent,
            subagent,
        };
        out.event(meta.seq, meta.ts, meta.event());
        self.meta = Some(Box::new(meta));
    }

    /// A cwd learnt after the session's metadata was written without one.
    fn learn_cwd(&mut self, cwd: &str, out: &mut Emit) {
        if let Some(meta) = &mut self.meta
            && meta.cwd.is_none()
        {
            meta.cwd = Some(cwd.to_string());
            out.event(meta.seq, meta.ts, meta.event());
        }
    }

    /// What relative paths are against when a call names no directory.
    fn base_dir(&self) -> Option<String> {
        self.turn_cwd
            .clone()
            .or_else(|| self.meta.as_ref().and_then(|m| m.cwd.clone()))
    }

    // ---- turns ------------------------------------------------------------------------------

    /// Close the open turn: its last text is the closing message. Whether there was one.
    fn close_turn(&mut self, out: &mut Emit) -> bool {
        self.calls.retain(|c| !c.answered);
        match self.last.take() {
            Some(last) => {
                out.event(last.seq, last.ts, Event::FinalMsg { text: last.text });
                true
            }
            None => false,
        }
    }

    /// A prompt from one of its two copies: recorded, unless it is the other copy of one
    /// just recorded.
    fn prompt_copy(
        &mut self,
        text: &str,
        copy: MessageCopy,
        slots: &mut LineSlots,
        out: &mut Emit,
    ) {
        if text.trim().is_empty() {
            return;
        }
        if is_harness(text) {
            return self.user_text(text, slots, out);
        }
        if Echo::is_new(&mut self.echo, copy) {
            self.user_text(text, slots, out);
        }
    }

    /// A reply read from one of its two copies, recorded once. The `response_item` copy is
    /// the one recorded where both are written (at its own line, as peat always has, so a
    /// file captured again yields the same events); an `agent_message` is held until the
    /// next line that says anything, and recorded at its own line if no copy came, so a
    /// rollout that writes only `agent_message` still has its replies and closing message.
    fn reply_copy(&mut self, text: &str, copy: MessageCopy, slots: &mut LineSlots, out: &mut Emit) {
        if text.trim().is_empty() {
            return;
        }
        match copy {
            MessageCopy::Item => {
                if let Some(held) = self.held_reply.take()
                    && held.text != text
                {
                    self.reply(held, out);
                }
                self.assistant_text(text, slots, out);
            }
            MessageCopy::Event => {
                self.settle(out);
                self.echo = None;
                let Some(seq) = self.slot(slots) else { return };
                self.held_reply = Some(Text {
                    seq,
                    ts: self.ts,
                    text: text.to_string(),
                });
            }
        }
    }

    fn user_text(&mut self, text: &str, slots: &mut LineSlots, out: &mut Emit) {
        if text.trim().is_empty() {
            return;
        }
        let harness = is_harness(text);
        if harness {
            if let Some(cwd) = environment_cwd(text) {
                self.turn_cwd = Some(cwd.clone());
                self.learn_cwd(&cwd, out);
            }
        } else {
            self.close_turn(out);
        }
        let (typed, context) = split_ide_context(text);
        let event = Event::UserMsg {
            text: typed.to_string(),
            harness,
            context: context.map(str::to_string),
        };
        self.emit(slots, event, out);
    }

    fn assistant_text(&mut self, text: &str, slots: &mut LineSlots, out: &mut Emit) {
        if text.trim().is_empty() {
            return;
        }
        self.echo = None;
        let Some(seq) = self.slot(slots) else { return };
        let reply = Text {
            seq,
            ts: self.ts,
            text: text.to_string(),
        };
        self.reply(reply, out);
    }

    /// Record `reply` as the turn's latest text.
    fn reply(&mut self, reply: Text, out: &mut Emit) {
        if let Some(prev) = self.last.take() {
            // No longer the turn's last: undo a provisional FinalMsg from an earlier flush.
            out.event(prev.seq, prev.ts, Event::Said { text: prev.text });
        }
        let said = Event::Said {
            text: reply.text.clone(),
        };
        out.event(reply.seq, reply.ts, said);
        self.last = Some(reply);
    }

    /// Record the `agent_message` reply held back, now that its `response_item` copy did not
    /// follow it.
    fn settle(&mut self, out: &mut Emit) {
        if let Some(reply) = self.held_reply.take() {
            self.reply(reply, out);
        }
    }

    // ---- response items ---------------------------------------------------------------------

    fn response_item(&mut self, p: &Value, slots: &mut LineSlots, out: &mut Emit) {
        match str_at(p, "type").unwrap_or("") {
            "message" => {
                let role = str_at(p, "role").unwrap_or("");
                if !matches!(role, "user" | "assistant") {
                    return; // developer / system: instructions, not conversation
                }
                self.item_messages = true;
                let text = content_text(p.get("content"));
                if role == "user" {
                    self.prompt_copy(&text, MessageCopy::Item, slots, out);
                } else {
                    self.reply_copy(&text, MessageCopy::Item, slots, out);
                }
            }
            "function_call" => {
                let call = self.function_call(p);
                self.record_call(call, slots, out);
            }
            "custom_tool_call" => {
                let name = str_at(p, "name").unwrap_or("unknown");
                let input = raw_string(p.get("input"));
                let patch =
                    (name == "apply_patch").then(|| (input.clone(), self.call_base(None, None)));
                let call = NewCall {
                    id: call_id(p),
                    tool: name.to_string(),
                    detail: input,
                    patch,
                    commit: None,
                    poll: None,
                };
                self.record_call(call, slots, out);
            }
            "local_shell_call" => {
                let action = p.get("action");
                let cmd = action
                    .and_then(|a| a.get("command"))
                    .map(command_string)
                    .unwrap_or_default();
                let workdir = action
                    .and_then(|a| str_at(a, "working_directory"))
                    .map(str::to_string);
                let call = self.shell_call(call_id(p), "local_shell", cmd, workdir);
                self.record_call(call, slots, out);
            }
            "function_call_output" | "custom_tool_call_output" => {
                self.tool_output(&call_id(p), Output::of(p.get("output")), slots, out);
            }
            // A hosted search: no output item follows, its status is its result.
            "web_search_call" => {
                let action = p.get("action");
                let field = |k: &str| action.and_then(|a| str_at(a, k)).unwrap_or("");
                let queries = action
                    .and_then(|a| a.get("queries"))
                    .and_then(Value::as_array)
                    .map(|q| {
                        q.iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(" | ")
                    })
                    .unwrap_or_default();
                let detail = [field("query"), &queries, field("url"), field("pattern")]
                    .into_iter()
                    .find(|d| !d.is_empty())
                    .unwrap_or("")
                    .to_string();
                self.echo = None;
                let Some(seq) = self.slot(slots) else { return };
                let event = Event::ToolCall {
                    tool: "web_search".to_string(),
                    detail: cap(&detail, DETAIL_CAP),
                    ok: str_at(p, "status") != Some("failed"),
                    agent: None,
                };
                out.event(seq, self.ts, event);
            }
            _ => {}
        }
    }

    fn function_call(&self, p: &Value) -> NewCall {
        let name = str_at(p, "name").unwrap_or("unknown").to_string();
        let raw = raw_string(p.get("arguments"));
        let args: Option<Value> = match p.get("arguments") {
            Some(v @ Value::Object(_)) => Some(v.clone()),
            _ => serde_json::from_str::<Value>(&raw)
                .ok()
                .filter(Value::is_object),
        };
        let arg = |k: &str| args.as_ref().and_then(|a| str_at(a, k)).map(str::to_string);
        let workdir = arg("workdir")
            .or_else(|| arg("cwd"))
            .or_else(|| arg("working_directory"));
        let id = call_id(p);
        if name == "apply_patch" {
            let text = arg("input").or_else(|| arg("patch")).or_else(|| {
                // Arguments that are not JSON may still be the patch itself.
                raw.contains("*** Begin Patch").then(|| raw.clone())
            });
            let detail = text.clone().unwrap_or_else(|| raw.clone());
            let base = self.call_base(workdir.as_deref(), None);
            return NewCall {
                id,
                tool: name,
                detail,
                patch: text.map(|t| (t, base)),
                commit: None,
                poll: None,
            };
        }
        if SHELL_TOOLS.contains(&name.as_str()) {
            let cmd = args.as_ref().and_then(|a| {
                a.get("cmd")
                    .or_else(|| a.get("command"))
                    .map(command_string)
            });
            if let Some(cmd) = cmd.filter(|c| !c.is_empty()) {
                return self.shell_call(id, &name, cmd, workdir);
            }
        }
        let poll = (name == "write_stdin")
            .then(|| {
                args.as_ref()
                    .and_then(|a| a.get("session_id"))
                    .map(scalar_string)
            })
            .flatten();
        NewCall {
            id,
            tool: name,
            detail: raw,
            patch: None,
            commit: None,
            poll,
        }
    }

    fn shell_call(&self, id: String, tool: &str, cmd: String, workdir: Option<String>) -> NewCall {
        let patch = patch::patch_in_command(&cmd).map(|text| {
            let cd = patch::cd_before_patch(&cmd);
            (text, self.call_base(workdir.as_deref(), cd.as_deref()))
        });
        let commit = if patch.is_none() {
            commit::commit_command(&cmd)
        } else {
            None
        };
        NewCall {
            id,
            tool: tool.to_string(),
            detail: cmd,
            patch,
            commit,
            poll: None,
        }
    }

    /// The directory a call's relative paths are against: its workdir (itself relative to
    /// the turn's cwd), then a `cd` in its command.
    fn call_base(&self, workdir: Option<&str>, cd: Option<&str>) -> Option<String> {
        let base = self.base_dir();
        let base = match workdir.filter(|w| !w.is_empty()) {
            Some(w) => Some(absolute(w, base.as_deref())),
            None => base,
        };
        match cd {
            Some(cd) => Some(absolute(cd, base.as_deref())),
            None => base,
        }
    }

    fn record_call(&mut self, call: NewCall, slots: &mut LineSlots, out: &mut Emit) {
        self.echo = None;
        let Some(seq) = self.slot(slots) else { return };
        let detail = cap(&call.detail, DETAIL_CAP);
        let event = Event::ToolCall {
            tool: call.tool.clone(),
            detail: detail.clone(),
            ok: true,
            agent: None,
        };
        out.event(seq, self.ts, event);
        let touches = match &call.patch {
            Some((text, base)) => {
                let items = patch::parse_patch(text)
                    .into_iter()
                    .map(|op| patch::touch(op, base.as_deref()))
                    .collect();
                self.emit_touches(items, false, slots, out)
            }
            None => Vec::new(),
        };
        if call.id.is_empty() {
            return;
        }
        self.calls.retain(|c| c.id != call.id);
        self.calls.push(Call {
            id: call.id,
            seq,
            ts: self.ts,
            tool: call.tool,
            detail,
            touches,
            commit: call.commit,
            poll: call.poll,
            agent: None,
            answered: false,
            failed: false,
        });
        while self.calls.len() > MAX_CALLS {
            let i = self.calls.iter().position(|c| c.answered).unwrap_or(0);
            self.calls.remove(i);
        }
    }

    /// One `FileTouch` per file on the line's free slots; files past the last slot ride in
    /// the last touch's `more`.
    fn emit_touches(
        &mut self,
        items: Vec<(String, TouchOp, Change)>,
        failed: bool,
        slots: &mut LineSlots,
        out: &mut Emit,
    ) -> Vec<(Seq, i64, Event)> {
        let mut touches: Vec<(Seq, i64, Event)> = Vec::new();
        for (path, op, change) in items {
            if slots.left() > 0
                && let Some(seq) = slots.next()
            {
                let id = out.change(&change);
                let event = Event::FileTouch {
                    path,
                    op,
                    change: Some(id),
                    failed,
                    more: Vec::new(),
                    restores: None,
                    model: self.model.clone(),
                };
                touches.push((seq, self.ts, event));
            } else if let Some((_, _, Event::FileTouch { more, .. })) = touches.last_mut() {
                let id = out.change(&change);
                more.push(Touched {
                    path,
                    op,
                    change: Some(id),
                });
            } else {
                self.overflowed += 1;
            }
        }
        for (seq, ts, event) in &touches {
            out.event(*seq, *ts, event.clone());
        }
        touches
    }

    /// Re-emit call `i` as failed: its ToolCall with `ok: false`, its touches `failed`.
    fn fail_call(&mut self, i: usize, out: &mut Emit) {
        if let Some(call) = self.calls.get_mut(i) {
            call.fail(out);
        }
    }

    /// The call `id` answered with `output`. Its first answer counts: a rollout that
    /// persists `exec_command_end` also writes the `function_call_output` of the same call.
    fn tool_output(&mut self, id: &str, output: Output, slots: &mut LineSlots, out: &mut Emit) {
        let Some(i) = self
            .calls
            .iter()
            .position(|c| c.id == id && !id.is_empty() && !c.answered)
        else {
            return;
        };
        let call_seq = self.calls[i].seq;
        let call = &self.calls[i];
        let said_failed = said_it_failed(&call.tool, &output.text);
        match call.poll.clone() {
            // A poll's exit status is its process's, not its own.
            Some(process) => {
                let exited = header_exit_code(&output.text);
                let k = self.exec_sessions.iter().position(|s| s.id == process);
                // A poll of a process whose start is not on record carries its failure.
                let own = said_failed
                    || refused(&output.text)
                    || (k.is_none() && exited.is_some_and(|c| c != 0));
                if own && !self.calls[i].failed {
                    self.fail_call(i, out);
                }
                if let Some(k) = k {
                    self.polled(k, exited, said_failed, &output.text, slots, out);
                }
            }
            None => {
                if (output.failed() || said_failed) && !call.failed {
                    self.fail_call(i, out);
                }
                if self.calls[i].tool == SPAWN_TOOL
                    && let Some(agent) = spawned_agent(&output.text)
                {
                    let call = &mut self.calls[i];
                    call.agent = Some(agent);
                    out.event(call.seq, call.ts, call.event());
                }
                let call = &self.calls[i];
                match running_session(&output.text) {
                    Some(process) => {
                        let session = ExecSession {
                            id: process,
                            call: call.clone(),
                        };
                        self.exec_sessions.retain(|s| s.id != session.id);
                        self.exec_sessions.push(session);
                        if self.exec_sessions.len() > MAX_EXEC_SESSIONS {
                            self.exec_sessions.remove(0);
                        }
                    }
                    None => {
                        if let Some(pending) = &call.commit
                            && let Some(event) = commit::commit_from_output(pending, &output.text)
                        {
                            self.emit(slots, event, out);
                        }
                    }
                }
            }
        }
        // What it printed: after the line's other events, which keep the seqs they had
        // before outputs were recorded.
        let call = &self.calls[i];
        if super::keeps_output(&call.tool, call.failed)
            && let Some(event) = out.output(call_seq, &output.text)
        {
            self.emit(slots, event, out);
        }
        // Forget the call, unless a patch_apply_end may still name it.
        if self.calls[i].touches.is_empty() {
            self.calls.remove(i);
        } else {
            self.calls[i].answered = true;
        }
    }

    /// A poll of running process `k` answered: a non-zero exit fails the `exec_command`
    /// that started it (its own event, revised), a commit it made is read from the output,
    /// and a process that is no longer running is forgotten.
    fn polled(
        &mut self,
        k: usize,
        exited: Option<i64>,
        poll_failed: bool,
        text: &str,
        slots: &mut LineSlots,
        out: &mut Emit,
    ) {
        let session = &mut self.exec_sessions[k];
        if exited.is_some_and(|c| c != 0) && !session.call.failed {
            session.call.fail(out);
        }
        let found = session
            .call
            .commit
            .as_ref()
            .and_then(|pending| commit::commit_from_output(pending, text));
        // Exited, unknown to the harness (a failed poll), or no longer said to be running.
        let ended = poll_failed || exited.is_some() || running_session(text).is_none();
        if let Some(event) = found {
            self.emit(slots, event, out);
        }
        if ended {
            self.exec_sessions.remove(k);
        }
    }

    // ---- events -----------------------------------------------------------------------------

    fn event_msg(&mut self, p: &Value, slots: &mut LineSlots, out: &mut Emit) {
        match str_at(p, "type").unwrap_or("") {
            "user_message" => {
                let text = str_at(p, "message").unwrap_or("");
                self.prompt_copy(text, MessageCopy::Event, slots, out);
            }
            "agent_message" => {
                let text = str_at(p, "message").unwrap_or("");
                self.reply_copy(text, MessageCopy::Event, slots, out);
            }
            "task_complete" | "turn_complete" => {
                self.echo = None;
                if !self.close_turn(out)
                    && let Some(text) = str_at(p, "last_agent_message")
                    && !text.trim().is_empty()
                {
                    let event = Event::FinalMsg {
                        text: text.to_string(),
                    };
                    self.emit(slots, event, out);
                }
            }
            "turn_aborted" => {
                self.echo = None;
                self.close_turn(out);
            }
            "exec_command_end" => {
                self.tool_output(&call_id(p), Output::of_exec_end(p), slots, out);
            }
            "patch_apply_end" => {
                let success = p.get("success").and_then(Value::as_bool) != Some(false);
                let id = call_id(p);
                self.applied(&id, success, p.get("changes"), slots, out);
            }
            "item_completed" => {
                if let Some(item) = p.get("item") {
                    self.item_completed(item, slots, out);
                }
            }
            _ => {}
        }
    }

    /// Paginated history: `item_completed` items (PascalCase `item.type`).
    fn item_completed(&mut self, item: &Value, slots: &mut LineSlots, out: &mut Emit) {
        match str_at(item, "type").unwrap_or("") {
            "UserMessage" | "userMessage" if !self.item_messages => {
                let text = item_text(item);
                self.user_text(&text, slots, out);
            }
            "AgentMessage" | "agentMessage" if !self.item_messages => {
                let text = item_text(item);
                self.assistant_text(&text, slots, out);
            }
            "FileChange" | "fileChange" => {
                let status = str_at(item, "status").unwrap_or("").to_ascii_lowercase();
                let failed = matches!(
                    status.as_str(),
                    "failed" | "declined" | "rejected" | "error" | "errored"
                ) || item.get("success").and_then(Value::as_bool) == Some(false);
                let id = str_at(item, "call_id")
                    .or_else(|| str_at(item, "id"))
                    .unwrap_or("")
                    .to_string();
                self.applied(&id, !failed, item.get("changes"), slots, out);
            }
            _ => {}
        }
    }

    /// A patch's applied result (`patch_apply_end`, a `FileChange` item). If its call already
    /// has touches, only a failure matters; otherwise the touches come from `changes`.
    fn applied(
        &mut self,
        id: &str,
        success: bool,
        changes: Option<&Value>,
        slots: &mut LineSlots,
        out: &mut Emit,
    ) {
        let base = self.base_dir();
        let items = changes
            .map(|c| change_items(c, base.as_deref()))
            .unwrap_or_default();
        let by_id = self.calls.iter().position(|c| c.id == id && !id.is_empty());
        let with_touches = match by_id {
            Some(i) => (!self.calls[i].touches.is_empty()).then_some(i),
            None => {
                // An id no call has: the latest call whose parsed patch touched the same
                // files is the one applied.
                let mut paths: Vec<&str> = items.iter().map(|(p, _, _)| p.as_str()).collect();
                paths.sort_unstable();
                (!paths.is_empty())
                    .then(|| {
                        self.calls
                            .iter()
                            .rposition(|c| !c.touches.is_empty() && touched_paths(c) == paths)
                    })
                    .flatten()
            }
        };
        if let Some(i) = with_touches {
            if !success && !self.calls[i].failed {
                self.fail_call(i, out);
            }
            return;
        }
        let touches = self.emit_touches(items, !success, slots, out);
        if let Some(i) = by_id {
            self.calls[i].touches = touches;
            if !success && !self.calls[i].failed {
                self.fail_call(i, out);
            }
        }
    }

    fn compacted(&mut self, p: &Value, slots: &mut LineSlots, out: &mut Emit) {
        self.emit(slots, Event::Compaction {}, out);
        // An encrypted (remote) compaction leaves `message` empty; `replacement_history` is
        // the new model-visible history, not a summary.
        if let Some(text) = str_at(p, "message")
            && !text.trim().is_empty()
        {
            let event = Event::CompactSummary {
                text: text.to_string(),
            };
            self.emit(slots, event, out);
        }
    }

    fn turn_context(&mut self, p: &Value, out: &mut Emit) {
        if let Some(model) = model_name(None, str_at(p, "model")) {
            self.model = Some(model);
        }
        if let Some(cwd) = str_at(p, "cwd").filter(|c| !c.is_empty()) {
            self.turn_cwd = Some(cwd.to_string());
            self.learn_cwd(cwd, out);
        }
    }
}

impl TranscriptParser for Codex {
    fn line(&mut self, line: u64, value: &Value, out: &mut Emit) {
        if !value.is_object() {
            return;
        }
        if let Some(ts) = value
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(parse_iso_ms)
        {
            self.ts = ts;
            self.max_ts = self.max_ts.max(ts);
        }
        let mut slots = LineSlots::new(line);
        let ty = str_at(value, "type");
        let payload = value.get("payload").filter(|p| p.is_object());
        if self.held_reply.is_some() && !quiet_or_reply_item(ty, payload) {
            self.settle(out);
        }
        match (ty, payload) {
            (Some(ty), Some(p)) => match ty {
                "session_meta" => self.session_meta(p, &slots, out),
                "response_item" => self.response_item(p, &mut slots, out),
                "event_msg" => self.event_msg(p, &mut slots, out),
                "turn_context" => self.turn_context(p, out),
                "compacted" => self.compacted(p, &mut slots, out),
                _ => {}
            },
            // Pre-envelope: a bare Responses item.
            (Some(_), None) => self.response_item(value, &mut slots, out),
            (None, _) => self.header(value, &slots, out),
        }
    }

    fn flush(&self, out: &mut Emit) {
        // A held reply is the turn's last text when no `response_item` copy can follow it:
        // the file has never written one. Otherwise it waits for the next capture.
        let last = match &self.held_reply {
            Some(held) if !self.item_messages => Some(held),
            _ => self.last.as_ref(),
        };
        if let Some(last) = last {
            out.event(
                last.seq,
                last.ts,
                Event::FinalMsg {
                    text: last.text.clone(),
                },
            );
        }
    }

    fn session(&self) -> Option<SessionId> {
        self.session
            .clone()
            .filter(|s| !s.is_empty())
            .or_else(|| self.fallback.clone())
            .map(SessionId)
    }

    fn last_ts(&self) -> i64 {
        self.max_ts
    }

    fn overflowed(&self) -> u64 {
        self.overflowed
    }
}

// ---- helpers ----------------------------------------------------------------------------------

/// A call's id: `call_id`, else the item `id`.
fn call_id(p: &Value) -> String {
    str_at(p, "call_id")
        .or_else(|| str_at(p, "id"))
        .unwrap_or("")
        .to_string()
}

/// A string field as is; anything else as its JSON text (null as "").
fn raw_string(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => String::new(),
        Some(other) => other.to_string(),
    }
}

fn scalar_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A command given as a string, or as an argv: `["bash","-lc",script]` is the script,
/// anything else its words joined by spaces.
fn command_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let words: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            if let [shell, flag, script] = words.as_slice() {
                let name = shell.rsplit('/').next().unwrap_or(shell);
                if matches!(name, "bash" | "sh" | "zsh" | "dash" | "ksh")
                    && flag.starts_with('-')
                    && flag.contains('c')
                {
                    return script.to_string();
                }
            }
            words.join(" ")
        }
        _ => String::new(),
    }
}

/// The text of a message's content: its text parts joined by newlines (images skipped).
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| match part {
                Value::String(s) => Some(s.as_str()),
                Value::Object(_) => {
                    let ty = str_at(part, "type").unwrap_or("text");
                    if ty.contains("image") {
                        None
                    } else {
                        str_at(part, "text")
                    }
                }
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The text of an `item_completed` message item, wherever it lives.
fn item_text(item: &Value) -> String {
    for key in ["text", "message"] {
        if let Some(s) = str_at(item, key) {
            return s.to_string();
        }
    }
    match item.get("content") {
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| {
                str_at(part, "text").or_else(|| {
                    // `{"Text": {"text": …}}`
                    part.as_object()?
                        .values()
                        .find_map(|inner| str_at(inner, "text"))
                })
            })
            .collect::<Vec<_>>()
            .join("\n"),
        other => content_text(other),
    }
}

/// IDE clients wrap the person's words in a preamble (`# Context from my IDE setup:` …
/// `## My request for Codex:` …): the words typed, and the context apart, so the prompt
/// reads as typed and the active file and open tabs match no search for other words.
fn split_ide_context(text: &str) -> (&str, Option<&str>) {
    const MARK: &str = "## My request for Codex:";
    if !text.trim_start().starts_with("# Context from my IDE setup") {
        return (text, None);
    }
    match text.split_once(MARK) {
        Some((context, request)) => (request.trim(), Some(context.trim())),
        None => (text, None),
    }
}

/// Whether a line leaves a held `agent_message` reply held: a line that records nothing
/// (token counts, reasoning, turn settings) or the reply's `response_item` copy itself.
fn quiet_or_reply_item(ty: Option<&str>, payload: Option<&Value>) -> bool {
    let kind = payload.and_then(|p| str_at(p, "type")).unwrap_or("");
    match ty {
        Some("turn_context") => true,
        Some("event_msg") => matches!(
            kind,
            "token_count" | "agent_reasoning" | "agent_reasoning_raw_content" | "task_started"
        ),
        Some("response_item") => {
            kind == "reasoning"
                || (kind == "message"
                    && payload.and_then(|p| str_at(p, "role")) == Some("assistant"))
        }
        _ => false,
    }
}

fn is_harness(text: &str) -> bool {
    let t = text.trim_start();
    HARNESS_PREFIXES.iter().any(|p| t.starts_with(p))
}

/// `<cwd>…</cwd>` inside an `<environment_context>` message.
fn environment_cwd(text: &str) -> Option<String> {
    let start = text.find("<cwd>")? + "<cwd>".len();
    let end = start + text[start..].find("</cwd>")?;
    let cwd = text[start..end].trim();
    (!cwd.is_empty()).then(|| cwd.to_string())
}

/// The files in a `patch_apply_end.changes` map (or a `FileChange` item's `changes` map or
/// list), in every shape Codex has written.
fn change_items(changes: &Value, base: Option<&str>) -> Vec<(String, TouchOp, Change)> {
    let entries: Vec<(String, &Value)> = match changes {
        Value::Object(map) => map.iter().map(|(k, v)| (k.clone(), v)).collect(),
        Value::Array(list) => list
            .iter()
            .filter_map(|c| Some((str_at(c, "path")?.to_string(), c)))
            .collect(),
        _ => Vec::new(),
    };
    entries
        .into_iter()
        .filter_map(|(path, c)| {
            let (op, change) = file_change(c, base)?;
            Some((absolute(&path, base), op, change))
        })
        .collect()
}

fn file_change(c: &Value, base: Option<&str>) -> Option<(TouchOp, Change)> {
    // `{"type":"add",…}`, `{"kind":"add"}`, `{"kind":{"type":"update","move_path":…}}`, or
    // the older `{"add":{…}}`.
    let kind_obj = c.get("kind").filter(|k| k.is_object());
    let tagged = str_at(c, "type")
        .or_else(|| str_at(c, "kind"))
        .or_else(|| kind_obj.and_then(|k| str_at(k, "type")));
    let (kind, body) = match tagged {
        Some(kind) => (kind.to_ascii_lowercase(), c),
        None => ["add", "delete", "update"]
            .iter()
            .find_map(|k| c.get(*k).map(|b| (k.to_string(), b)))?,
    };
    let text = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| str_at(body, k).or_else(|| str_at(c, k)))
            .unwrap_or("")
            .to_string()
    };
    match kind.as_str() {
        "add" | "create" => Some((
            TouchOp::PatchAdd,
            Change::created(text(&["content", "diff"])),
        )),
        "delete" | "remove" => Some((TouchOp::PatchDelete, Change::Delete)),
        "update" | "modify" => {
            let move_to = str_at(body, "move_path")
                .or_else(|| kind_obj.and_then(|k| str_at(k, "move_path")))
                .filter(|m| !m.is_empty())
                .map(|m| absolute(m, base));
            Some((
                TouchOp::PatchUpdate,
                Change::UnifiedDiff {
                    move_to,
                    diff: text(&["unified_diff", "diff"]),
                },
            ))
        }
        _ => None,
    }
}

/// The sorted paths a call touched (its `more` included).
fn touched_paths(call: &Call) -> Vec<&str> {
    let mut paths = Vec::new();
    for (_, _, touch) in &call.touches {
        if let Event::FileTouch { path, more, .. } = touch {
            paths.push(path.as_str());
            paths.extend(more.iter().map(|t| t.path.as_str()));
        }
    }
    paths.sort_unstable();
    paths
}

/// What a tool's output says, in any of its shapes.
#[derive(Default)]
struct Output {
    text: String,
    exit_code: Option<i64>,
    success: Option<bool>,
}

impl Output {
    fn of(v: Option<&Value>) -> Output {
        match v {
            Some(Value::String(s)) => {
                // Older shell output: a JSON string `{"output":…,"metadata":{"exit_code":N}}`.
                if s.trim_start().starts_with('{')
                    && let Ok(inner @ Value::Object(_)) = serde_json::from_str::<Value>(s)
                    && let Some(out) = Output::of_object(&inner)
                {
                    return out;
                }
                Output {
                    text: s.clone(),
                    ..Output::default()
                }
            }
            Some(Value::Array(_)) => Output {
                text: content_text(v),
                ..Output::default()
            },
            Some(obj @ Value::Object(_)) => Output::of_object(obj).unwrap_or_default(),
            _ => Output::default(),
        }
    }

    /// An `exec_command_end` event: what the process printed (`aggregated_output`, else its
    /// stdout and stderr) and its exit code.
    fn of_exec_end(p: &Value) -> Output {
        let field = |k: &str| str_at(p, k).unwrap_or("");
        let text = match field("aggregated_output") {
            "" => streams(p),
            all => all.to_string(),
        };
        Output {
            text,
            exit_code: p.get("exit_code").and_then(Value::as_i64),
            success: None,
        }
    }

    fn of_object(o: &Value) -> Option<Output> {
        let text = ["output", "content", "text"]
            .iter()
            .find_map(|k| match o.get(*k) {
                Some(Value::String(s)) => Some(s.clone()),
                Some(a @ Value::Array(_)) => Some(content_text(Some(a))),
                _ => None,
            });
        let exit_code = o
            .pointer("/metadata/exit_code")
            .or_else(|| o.get("exit_code"))
            .and_then(Value::as_i64);
        let success = o.get("success").and_then(Value::as_bool);
        if text.is_none() && exit_code.is_none() && success.is_none() {
            return None;
        }
        Some(Output {
            text: text.unwrap_or_default(),
            exit_code,
            success,
        })
    }

    /// Whether the call failed: a non-zero exit code (structured, or in the output's
    /// header), an explicit failure, or a rejection.
    fn failed(&self) -> bool {
        if let Some(code) = self.exit_code {
            return code != 0;
        }
        if self.success == Some(false) {
            return true;
        }
        header_exit_code(&self.text).is_some_and(|c| c != 0) || refused(&self.text)
    }
}

/// What kind of subagent a `session_meta` says its thread is (`source.subagent`): a spawned
/// thread's agent path (newer builds also write it beside `source`), or a review or
/// compaction sub-thread. Other sources (a spawned thread with no path, `other`, memory
/// consolidation) say nothing that places the thread.
fn subagent_of(p: &Value) -> Option<Subagent> {
    let source = p.pointer("/source/subagent")?;
    match source.as_str() {
        Some("review") => Some(Subagent::Review),
        Some("compact") => Some(Subagent::Compact),
        Some(_) => None,
        None => {
            let spawn = source.get("thread_spawn")?;
            str_at(spawn, "agent_path")
                .or_else(|| str_at(p, "agent_path"))
                .filter(|path| !path.is_empty())
                .map(|path| Subagent::Spawned {
                    path: path.to_string(),
                })
        }
    }
}

/// The agent a `spawn_agent` call started, from its output (a JSON object): the new
/// thread's id (`agent_id`), which is the subagent rollout's session id, else the task name
/// multi-agent v2 answers with instead (`task_name`, the agent's path).
fn spawned_agent(text: &str) -> Option<String> {
    let v: Value = serde_json::from_str(text.trim()).ok()?;
    ["agent_id", "task_name"]
        .into_iter()
        .find_map(|k| str_at(&v, k))
        .filter(|a| !a.is_empty())
        .map(str::to_string)
}

/// The exit code in an output's header: `Exit code: N`, `Process exited with code N`, or the
/// sandbox's `…, exit code: N, stdout: …`. The header is what precedes the `Output:` line, or
/// the first line when there is none.
fn header_exit_code(text: &str) -> Option<i64> {
    let has_body = text.lines().any(|l| l.trim() == "Output:");
    let header: Vec<&str> = if has_body {
        text.lines().take_while(|l| l.trim() != "Output:").collect()
    } else {
        text.lines().take(1).collect()
    };
    header.iter().find_map(|line| {
        let lower = line.to_ascii_lowercase();
        ["exit code:", "exited with code"].iter().find_map(|pat| {
            let at = lower.find(pat)? + pat.len();
            let rest = lower[at..].trim_start();
            let end = rest
                .char_indices()
                .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
                .map_or(rest.len(), |(i, _)| i);
            rest[..end].parse().ok()
        })
    })
}

/// Outputs that say the call did not run or was refused.
fn refused(text: &str) -> bool {
    let first = text
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    first.starts_with("patch rejected")
        || first.contains("rejected by user")
        || first.starts_with("apply_patch verification failed")
        || first.starts_with("failed in sandbox")
        || first.starts_with("execution error")
        || first == "aborted"
        || first.starts_with("aborted by user")
}

/// The harness's own word that a call failed: `write_stdin failed: Unknown process id 7`,
/// `exec_command failed: …` (the tool's name, then `failed:`, opening the output).
fn said_it_failed(tool: &str, text: &str) -> bool {
    text.trim_start()
        .strip_prefix(tool)
        .is_some_and(|rest| rest.starts_with(" failed:"))
}

/// `Process running with session ID N`: an exec_command that has not finished yet.
fn running_session(text: &str) -> Option<String> {
    let at =
        text.find("Process running with session ID")? + "Process running with session ID".len();
    let id: String = text[at..]
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    (!id.is_empty()).then_some(id)
}

/// The thread id in a rollout file name: the first UUID after `rollout-<local time>-`
/// (a reverted thread's name carries `<thread>_<rollout>`).
fn thread_id_in_stem(stem: &str) -> Option<String> {
    let bytes = stem.as_bytes();
    (0..bytes.len().saturating_sub(35)).find_map(|i| {
        let window = bytes.get(i..i + 36)?;
        let is_uuid = window.iter().enumerate().all(|(j, b)| match j {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        });
        let boundary = i == 0 || !bytes[i - 1].is_ascii_hexdigit();
        (is_uuid && boundary).then(|| String::from_utf8_lossy(window).to_ascii_lowercase())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::{parse_str, reader};
    use crate::vocab::change::Before;
    use crate::vocab::event::Vcs;
    use serde_json::json;
    use std::collections::BTreeMap;

    const PRE_ENVELOPE: &str = include_str!("../../tests/fixtures/codex/pre_envelope_2025.jsonl");
    const ENVELOPE_040: &str = include_str!("../../tests/fixtures/codex/envelope_0_40.jsonl");
    const LEGACY_2026: &str = include_str!("../../tests/fixtures/codex/legacy_2026.jsonl");
    const PAGINATED_2026: &str = include_str!("../../tests/fixtures/codex/paginated_2026.jsonl");
    const DESKTOP_2026: &str = include_str!("../../tests/fixtures/codex/desktop_2026.jsonl");
    const FIXTURES: [&str; 5] = [
        LEGACY_2026,
        ENVELOPE_040,
        PRE_ENVELOPE,
        PAGINATED_2026,
        DESKTOP_2026,
    ];

    /// A real rollout in the shared fixtures folder beside the repository.
    const REAL_040: &str = "../shared/fixtures/codex-0.40.0_agentcmd_rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl";

    fn parse(text: &str) -> (Option<SessionId>, Emit) {
        parse_str(text, &FileHints::default()).expect("recognised as a Codex rollout")
    }

    fn values(text: &str) -> Vec<(u64, Value)> {
        text.split('\n')
            .enumerate()
            .filter_map(|(i, l)| reader::parse_line(l.as_bytes()).map(|v| (i as u64, v)))
            .collect()
    }

    /// Feed lines straight to a fresh parser (no format detection) and flush.
    fn feed(lines: &[Value], hints: &FileHints) -> (Codex, Emit) {
        let mut p = Codex::new(hints);
        let mut out = Emit::default();
        for (i, v) in lines.iter().enumerate() {
            p.line(i as u64, v, &mut out);
        }
        p.flush(&mut out);
        (p, out)
    }

    fn all(out: &Emit) -> Vec<&Event> {
        out.events.values().map(|(_, e)| e).collect()
    }

    fn tools(out: &Emit) -> Vec<(String, String, bool)> {
        out.events
            .values()
            .filter_map(|(_, e)| match e {
                Event::ToolCall {
                    tool, detail, ok, ..
                } => Some((tool.clone(), detail.clone(), *ok)),
                _ => None,
            })
            .collect()
    }

    fn tool(out: &Emit, detail_prefix: &str) -> (String, String, bool) {
        tools(out)
            .into_iter()
            .find(|(_, d, _)| d.starts_with(detail_prefix))
            .unwrap_or_else(|| panic!("no tool call {detail_prefix:?} in {:?}", tools(out)))
    }

    /// (seq, path, op, failed, change) of every FileTouch.
    fn touches(out: &Emit) -> Vec<(Seq, String, TouchOp, bool, Option<Change>)> {
        out.events
            .iter()
            .filter_map(|(seq, (_, e))| match e {
                Event::FileTouch {
                    path,
                    op,
                    change,
                    failed,
                    ..
                } => {
                    let change = change
                        .and_then(|id| out.blobs.get(&id))
                        .and_then(|b| serde_json::from_slice(b).ok());
                    Some((*seq, path.clone(), *op, *failed, change))
                }
                _ => None,
            })
            .collect()
    }

    fn touch(out: &Emit, path: &str) -> (Seq, String, TouchOp, bool, Option<Change>) {
        let found: Vec<_> = touches(out).into_iter().filter(|t| t.1 == path).collect();
        assert_eq!(found.len(), 1, "{path}: {:?}", touches(out));
        found.into_iter().next().unwrap()
    }

    fn texts(out: &Emit, tag: &str) -> Vec<String> {
        out.events
            .values()
            .filter(|(_, e)| e.tag() == tag)
            .map(|(_, e)| e.summary())
            .collect()
    }

    fn user_msgs(out: &Emit) -> Vec<(String, bool)> {
        out.events
            .values()
            .filter_map(|(_, e)| match e {
                Event::UserMsg { text, harness, .. } => Some((text.clone(), *harness)),
                _ => None,
            })
            .collect()
    }

    fn commits(out: &Emit) -> Vec<(Vcs, String, String, Option<String>)> {
        out.events
            .values()
            .filter_map(|(_, e)| match e {
                Event::Committed {
                    vcs,
                    hash,
                    message,
                    branch,
                } => Some((*vcs, hash.clone(), message.clone(), branch.clone())),
                _ => None,
            })
            .collect()
    }

    fn meta(out: &Emit) -> (Seq, Event) {
        let metas: Vec<_> = out
            .events
            .iter()
            .filter(|(_, (_, e))| e.tag() == "meta")
            .map(|(s, (_, e))| (*s, e.clone()))
            .collect();
        assert_eq!(metas.len(), 1, "{metas:?}");
        metas.into_iter().next().unwrap()
    }

    #[test]
    fn pre_envelope_rollouts_read_bare_items_and_the_header() {
        let (session, out) = parse(PRE_ENVELOPE);
        assert_eq!(
            session.unwrap().as_str(),
            "5a1e0c7d-3b2f-4e8a-9c61-0d4f7b2e9a13"
        );
        // The header has no cwd: the environment context supplies it.
        let (seq, m) = meta(&out);
        assert_eq!(seq, Seq(0));
        assert_eq!(
            m,
            Event::SessionMeta {
                cwd: "/home/dev/tiny-api".into(),
                branch: Some("main".into()),
                agent: Some(Agent::Codex),
                version: None,
                parent: None,
                subagent: None,
            }
        );
        let users = user_msgs(&out);
        assert_eq!(users.len(), 3);
        assert!(users[0].1, "environment context is harness");
        assert_eq!(
            users[1],
            ("list the routes and add a health check".into(), false)
        );
        assert!(tool(&out, "rg -n routes src").2);
        let (name, detail, ok) = tool(&out, "apply_patch *** Begin Patch");
        assert_eq!(name, "shell");
        assert!(ok);
        assert!(detail.contains("*** Add File: src/routes/health.ts"));
        assert!(!tool(&out, "npm test").2, "exit_code 1 fails the call");
        let add = touch(&out, "/home/dev/tiny-api/src/routes/health.ts");
        assert_eq!(add.2, TouchOp::PatchAdd);
        assert_eq!(
            add.4,
            Some(Change::created("export const health = () => \"ok\";\n"))
        );
        let upd = touch(&out, "/home/dev/tiny-api/src/routes/index.ts");
        assert_eq!(upd.2, TouchOp::PatchUpdate);
        assert_eq!(
            texts(&out, "final"),
            vec![
                "There is one route list in src/routes/index.ts; I added a health route next to it.",
                "One test fails: the health route is not registered yet."
            ]
        );
        // No per-line timestamps: every event carries the header's.
        let header_ts = crate::vocab::time::parse_iso_ms("2025-07-20T13:20:47.060Z").unwrap();
        assert!(out.events.values().all(|(ts, _)| *ts == header_ts));
    }

    #[test]
    fn envelope_0_40_rollouts_with_shell_argv_heredoc_patches_and_json_outputs() {
        let (session, out) = parse(ENVELOPE_040);
        assert_eq!(
            session.unwrap().as_str(),
            "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
        );
        let (_, m) = meta(&out);
        assert_eq!(
            m,
            Event::SessionMeta {
                cwd: "/Users/dev/acme-web".into(),
                branch: Some("feat/rate-limit".into()),
                agent: Some(Agent::Codex),
                version: Some("0.40.0".into()),
                parent: None,
                subagent: None,
            }
        );
        // The IDE preamble is the person's prompt, not harness.
        let users = user_msgs(&out);
        assert!(users[0].1);
        // The words typed are the prompt; the IDE context is kept apart from them.
        assert_eq!(users[1].0, "Add a rate limiter and document it");
        assert!(!users[1].1);
        let contexts: Vec<Option<String>> = out
            .events
            .values()
            .filter_map(|(_, e)| match e {
                Event::UserMsg { context, .. } => Some(context.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            contexts[1].as_deref(),
            Some("# Context from my IDE setup:\n\n## Open tabs:\n- server.ts: src/server.ts")
        );
        assert_eq!(contexts[0], None, "harness text has no context");
        assert_eq!(
            users.len(),
            4,
            "event_msg user_message is not a second copy"
        );
        assert!(users[3].1, "<turn_aborted> is harness");

        assert_eq!(
            tool(&out, "sed -n '1,80p' src/server.ts"),
            ("shell".into(), "sed -n '1,80p' src/server.ts".into(), true)
        );
        // A non-zero exit code in the JSON-encoded output fails the call and its touches.
        assert!(
            !tool(
                &out,
                "apply_patch <<'PATCH'\n*** Begin Patch\n*** Update File: src/missing.ts"
            )
            .2
        );
        let missing = touch(&out, "/Users/dev/acme-web/src/missing.ts");
        assert!(missing.3, "the failed patch's touch is marked failed");
        // The sandbox's plain-text refusal and a rejected patch fail too.
        assert!(!tool(&out, "ls src/(protected)").2);
        assert!(
            !tool(
                &out,
                "apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: src/secret.ts"
            )
            .2
        );
        assert!(touch(&out, "/Users/dev/acme-web/src/secret.ts").3);
        let plan = tool(&out, "{\"plan\"");
        assert_eq!(plan.0, "update_plan");
        assert!(plan.2);

        assert_eq!(
            texts(&out, "final"),
            vec![
                "Added the limiter, documented it in docs/limits.md and committed it as 4be1c0a9.",
                "Looking at the existing test layout first."
            ]
        );
        assert!(texts(&out, "said").is_empty());
    }

    #[test]
    fn a_multi_file_patch_touches_each_file_with_add_move_and_delete() {
        let (_, out) = parse(ENVELOPE_040);
        let (call_seq, ..) = out
            .events
            .iter()
            .find(|(_, (_, e))| matches!(e, Event::ToolCall { detail, .. } if detail.contains("docs/limits.md")))
            .map(|(s, (ts, e))| (*s, *ts, e.clone()))
            .unwrap();
        let add = touch(&out, "/Users/dev/acme-web/docs/limits.md");
        let upd = touch(&out, "/Users/dev/acme-web/src/server.ts");
        let del = touch(&out, "/Users/dev/acme-web/src/old_limits.ts");
        // Right after the ToolCall, in patch order.
        assert_eq!(
            [add.0, upd.0, del.0],
            [
                Seq(call_seq.0 + 1),
                Seq(call_seq.0 + 2),
                Seq(call_seq.0 + 3)
            ]
        );
        assert_eq!(add.2, TouchOp::PatchAdd);
        assert_eq!(
            add.4,
            Some(Change::created("# Rate limits\n20 req/s per token.\n"))
        );
        assert_eq!(upd.2, TouchOp::PatchUpdate);
        match upd.4 {
            Some(Change::Patch { move_to, hunks }) => {
                assert_eq!(move_to.as_deref(), Some("/Users/dev/acme-web/src/app.ts"));
                assert_eq!(hunks.len(), 1);
                assert_eq!(
                    hunks[0].header.as_deref(),
                    Some("import express from \"express\";")
                );
                assert_eq!(
                    hunks[0].lines,
                    vec![
                        " const app = express();",
                        "-app.use(cors());",
                        "+app.use(cors());",
                        "+app.use(rateLimit({ capacity: 20 }));"
                    ]
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(del.2, TouchOp::PatchDelete);
        assert_eq!(del.4, Some(Change::Delete));
        assert!(!add.3 && !upd.3 && !del.3);
    }

    #[test]
    fn a_git_commit_hash_comes_from_the_output() {
        let (_, out) = parse(ENVELOPE_040);
        assert_eq!(
            commits(&out),
            vec![(
                Vcs::Git,
                "4be1c0a9".into(),
                "feat: add rate limiter".into(),
                Some("feat/rate-limit".into())
            )]
        );
        // It sits on the output's line.
        let (seq, _) = out
            .events
            .iter()
            .find(|(_, (_, e))| e.tag() == "commit")
            .unwrap();
        let (out_line, _) = values(ENVELOPE_040)
            .into_iter()
            .find(|(_, v)| v.to_string().contains("[feat/rate-limit 4be1c0a9]"))
            .unwrap();
        assert_eq!(*seq, Seq::at_line(out_line, 1));
    }

    #[test]
    fn a_commit_finishing_in_a_polled_exec_session_is_found() {
        let (_, out) = parse(LEGACY_2026);
        assert!(commits(&out).contains(&(
            Vcs::Git,
            "0a1b2c3d".into(),
            "chore: hooks".into(),
            Some("feat/rate-limit".into())
        )));
    }

    #[test]
    fn jj_describe_reports_the_working_copy_commit() {
        let (_, out) = parse(LEGACY_2026);
        assert!(commits(&out).contains(&(
            Vcs::Jj,
            "9f8e7d6c".into(),
            "feat: rate limiter".into(),
            None
        )));
    }

    #[test]
    fn legacy_2026_rollouts_with_exec_command_custom_patches_and_patch_apply_end() {
        let (session, out) = parse(LEGACY_2026);
        // payload.id is the thread; payload.session_id is the root thread.
        assert_eq!(
            session.unwrap().as_str(),
            "019a7c3e-5b21-7d40-9c1e-2f6a8b0c4d11"
        );
        let (_, m) = meta(&out);
        match m {
            Event::SessionMeta {
                cwd,
                branch,
                version,
                parent,
                ..
            } => {
                assert_eq!(cwd, "/home/dev/acme-api");
                assert_eq!(branch.as_deref(), Some("feat/rate-limit"));
                assert_eq!(version.as_deref(), Some("0.128.0"));
                assert_eq!(
                    parent.map(|p| p.0).as_deref(),
                    Some("019a7c00-0000-7000-8000-000000000001")
                );
            }
            other => panic!("{other:?}"),
        }
        let users = user_msgs(&out);
        let prompts: Vec<&str> = users
            .iter()
            .filter(|(_, h)| !h)
            .map(|(t, _)| t.as_str())
            .collect();
        assert_eq!(
            prompts,
            vec![
                "Add a token-bucket rate limiter to src/server.ts",
                "now tune the refill rate",
                "and summarise"
            ]
        );
        assert_eq!(
            users.iter().filter(|(_, h)| *h).count(),
            2,
            "AGENTS.md + env"
        );
        assert!(
            !users
                .iter()
                .any(|(t, _)| t.contains("permissions instructions")),
            "developer messages are not user messages"
        );

        assert_eq!(
            tool(&out, "rg -n"),
            ("exec_command".into(), "rg -n \"app.use\" src".into(), true)
        );
        // custom_tool_call apply_patch: one touch, not duplicated by its patch_apply_end.
        let (name, detail, ok) = tool(&out, "*** Begin Patch\n*** Update File: src/server.ts");
        assert_eq!(name, "apply_patch");
        assert!(detail.starts_with("*** Begin Patch"));
        assert!(ok);
        let server = touch(&out, "/home/dev/acme-api/src/server.ts");
        assert!(matches!(server.4, Some(Change::Patch { .. })));
        // exec_command heredoc after `cd test`.
        let test = touch(&out, "/home/dev/acme-api/test/limiter.test.ts");
        assert_eq!(test.2, TouchOp::PatchAdd);
        // function_call apply_patch {"input": …}.
        let gone = touch(&out, "/home/dev/acme-api/src/legacy_limits.ts");
        assert_eq!(gone.2, TouchOp::PatchDelete);
        assert_eq!(
            tool(&out, "*** Begin Patch\n*** Delete File").0,
            "apply_patch"
        );
        // A sanitized patch: the touches come from patch_apply_end, old and new shapes.
        let readme = touch(&out, "/home/dev/acme-api/README.md");
        assert_eq!(readme.2, TouchOp::PatchUpdate);
        assert_eq!(
            readme.4,
            Some(Change::UnifiedDiff {
                move_to: None,
                diff: "@@ -1 +1,2 @@\n # acme-api\n+Rate limited.\n".into()
            })
        );
        assert_eq!(
            touch(&out, "/home/dev/acme-api/docs/new.md").4,
            Some(Change::created("# New\n"))
        );
        assert_eq!(
            touch(&out, "/home/dev/acme-api/docs/gone.md").4,
            Some(Change::Delete)
        );
        // patch_apply_end success:false fails the call's touches.
        let config = touch(&out, "/home/dev/acme-api/src/config.ts");
        assert!(config.3);
        assert!(!tool(&out, "*** Begin Patch\n*** Update File: src/config.ts").2);

        // compacted with an empty (encrypted) message: no summary, and never the
        // replacement history's first message.
        assert_eq!(
            all(&out).iter().filter(|e| e.tag() == "compacted").count(),
            1
        );
        assert!(texts(&out, "compact").is_empty());

        assert_eq!(
            texts(&out, "said"),
            vec!["I'll add the middleware after cors."]
        );
        assert_eq!(
            texts(&out, "final"),
            vec![
                "Added the limiter middleware in src/server.ts.",
                // turn 2 only has task_complete.last_agent_message
                "Set refillPerSec to 10.",
                // turn 3 is open: flush's provisional closing message
                "Summary: limiter added, tests pending."
            ]
        );
    }

    #[test]
    fn the_newest_timestamp_is_last_ts() {
        let lines: Vec<Value> = values(LEGACY_2026).into_iter().map(|(_, v)| v).collect();
        let (p, _) = feed(&lines, &FileHints::default());
        assert_eq!(
            p.last_ts(),
            crate::vocab::time::parse_iso_ms("2026-05-04T10:53:05.000Z").unwrap()
        );
    }

    #[test]
    fn paginated_rollouts_use_item_completed_messages_and_file_changes() {
        let (session, out) = parse(PAGINATED_2026);
        // Only session_id is present.
        assert_eq!(
            session.unwrap().as_str(),
            "01a07a18-2f55-78c3-9976-e71905ebb698"
        );
        let (_, m) = meta(&out);
        assert!(matches!(
            m,
            Event::SessionMeta { parent: Some(ref p), ref version, .. }
                if p.as_str() == "01a07a00-1111-7222-8333-444455556666"
                    && version.as_deref() == Some("0.153.4")
        ));
        assert_eq!(
            user_msgs(&out),
            vec![
                ("create hello.txt containing hi, then run ls".into(), false),
                ("delete it again".into(), false)
            ]
        );
        assert_eq!(texts(&out, "final"), vec!["Created hello.txt."]);
        let hello = touch(&out, "/tmp/codex-run/hello.txt");
        assert_eq!(hello.2, TouchOp::PatchAdd);
        assert_eq!(hello.4, Some(Change::created("hi\n")));
        let notes = touch(&out, "/tmp/codex-run/notes.md");
        assert_eq!(notes.2, TouchOp::PatchUpdate);
        assert!(matches!(
            notes.4,
            Some(Change::UnifiedDiff { move_to: None, .. })
        ));
        assert!(
            touch(&out, "/tmp/codex-run/blocked.txt").3,
            "failed FileChange"
        );
    }

    #[test]
    fn item_completed_messages_are_ignored_once_response_items_carry_them() {
        let lines = [
            json_line(
                r#"{"timestamp":"2026-09-07T04:20:00.000Z","type":"session_meta","payload":{"id":"s1","cwd":"/w"}}"#,
            ),
            json_line(
                r#"{"timestamp":"2026-09-07T04:20:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}}"#,
            ),
            json_line(
                r#"{"timestamp":"2026-09-07T04:20:01.000Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","id":"u","content":[{"type":"text","text":"hello"}]}}}"#,
            ),
            json_line(
                r#"{"timestamp":"2026-09-07T04:20:02.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}}"#,
            ),
            json_line(
                r#"{"timestamp":"2026-09-07T04:20:02.000Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"AgentMessage","id":"a","content":[{"type":"Text","text":"hi"}]}}}"#,
            ),
        ];
        let (_, out) = feed(&lines, &FileHints::default());
        assert_eq!(user_msgs(&out).len(), 1);
        assert_eq!(texts(&out, "final"), vec!["hi"]);
        assert!(texts(&out, "said").is_empty());
    }

    fn json_line(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn the_session_id_is_payload_id_else_session_id_else_the_file_name() {
        let both = json_line(
            r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"thread-a","session_id":"root-b","cwd":"/w"}}"#,
        );
        let (p, _) = feed(&[both], &FileHints::default());
        assert_eq!(p.session().unwrap().as_str(), "thread-a");

        let only = json_line(
            r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"session_id":"root-b","cwd":"/w"}}"#,
        );
        let (p, _) = feed(&[only], &FileHints::default());
        assert_eq!(p.session().unwrap().as_str(), "root-b");

        // The first session_meta owns identity; a resumed one does not re-mint metadata.
        let first = json_line(r#"{"type":"session_meta","payload":{"id":"first","cwd":"/a"}}"#);
        let second = json_line(r#"{"type":"session_meta","payload":{"id":"second","cwd":"/b"}}"#);
        let (p, out) = feed(&[first, second], &FileHints::default());
        assert_eq!(p.session().unwrap().as_str(), "first");
        assert_eq!(meta(&out).1.summary(), "/a · codex");

        // No line names it: the thread id in the file name (of a reverted thread, too).
        let hints = FileHints {
            stem: "rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08_0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000".into(),
            ..FileHints::default()
        };
        let item = json_line(
            r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"x"}]}"#,
        );
        let (p, _) = feed(&[item], &hints);
        assert_eq!(
            p.session().unwrap().as_str(),
            "01997e76-d124-7592-9cac-2ec05abbca08"
        );
        // Which survives the state's round trip.
        let back: Codex = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back.session(), p.session());
        assert_eq!(
            Codex::new(&FileHints {
                stem: "notes".into(),
                ..FileHints::default()
            })
            .session(),
            None
        );
    }

    /// The agent each `spawn_agent` call's event records, in call order.
    fn spawned(out: &Emit) -> Vec<Option<String>> {
        out.events
            .values()
            .filter_map(|(_, e)| match e {
                Event::ToolCall { tool, agent, .. } if tool == SPAWN_TOOL => Some(agent.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_spawn_agent_call_records_the_thread_its_output_names() {
        let line = |payload: &str| {
            json_line(&format!(
                r#"{{"timestamp":"2026-05-04T10:00:00Z","type":"response_item","payload":{payload}}}"#
            ))
        };
        let lines = [
            json_line(r#"{"type":"session_meta","payload":{"id":"parent","cwd":"/w"}}"#),
            line(
                r#"{"type":"function_call","name":"spawn_agent","arguments":"{\"message\":\"map the routes\"}","call_id":"call_v1"}"#,
            ),
            line(
                r#"{"type":"function_call_output","call_id":"call_v1","output":"{\"agent_id\":\"019a7c3e-0001-7d40-9c1e-2f6a8b0c4d11\",\"nickname\":\"Ada\"}"}"#,
            ),
            // Multi-agent v2 answers with the agent's task path instead of its thread.
            line(
                r#"{"type":"function_call","name":"spawn_agent","arguments":"{\"message\":\"test it\",\"task_name\":\"tester\"}","call_id":"call_v2"}"#,
            ),
            line(
                r#"{"type":"function_call_output","call_id":"call_v2","output":"{\"task_name\":\"/root/tester\",\"nickname\":null}"}"#,
            ),
            // A refusal names no agent.
            line(
                r#"{"type":"function_call","name":"spawn_agent","arguments":"{\"message\":\"again\"}","call_id":"call_deep"}"#,
            ),
            line(
                r#"{"type":"function_call_output","call_id":"call_deep","output":"Agent depth limit reached. Solve the task yourself."}"#,
            ),
        ];
        let (_, out) = feed(&lines, &FileHints::default());
        assert_eq!(
            spawned(&out),
            vec![
                Some("019a7c3e-0001-7d40-9c1e-2f6a8b0c4d11".to_string()),
                Some("/root/tester".to_string()),
                None
            ]
        );
        // Another tool's output that happens to be such an object names no agent.
        let other = [
            lines[0].clone(),
            line(r#"{"type":"function_call","name":"wait","arguments":"{}","call_id":"call_w"}"#),
            line(
                r#"{"type":"function_call_output","call_id":"call_w","output":"{\"agent_id\":\"x\"}"}"#,
            ),
        ];
        let (_, out) = feed(&other, &FileHints::default());
        assert!(
            out.events
                .values()
                .all(|(_, e)| !matches!(e, Event::ToolCall { agent: Some(_), .. })),
            "{:?}",
            all(&out)
        );
    }

    /// The parent and subagent kind a rollout's `session_meta` payload gives its thread.
    fn placed_by(payload: &str) -> (Option<String>, Option<Subagent>) {
        let line = json_line(&format!(r#"{{"type":"session_meta","payload":{payload}}}"#));
        let (_, out) = feed(&[line], &FileHints::default());
        match meta(&out).1 {
            Event::SessionMeta {
                parent, subagent, ..
            } => (parent.map(|p| p.0), subagent),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_spawned_thread_records_the_agent_path_a_v2_spawn_agent_names_it_by() {
        let spawned = |path: &str| Subagent::Spawned { path: path.into() };
        assert_eq!(
            placed_by(
                r#"{"id":"c1","cwd":"/w","source":{"subagent":{"thread_spawn":{"parent_thread_id":"p1","depth":1,"agent_path":"/root/tester","agent_nickname":"Ada","agent_role":"worker"}}}}"#
            ),
            (Some("p1".into()), Some(spawned("/root/tester")))
        );
        // Newer builds also write the path beside `source`.
        assert_eq!(
            placed_by(
                r#"{"id":"c2","cwd":"/w","agent_path":"/root/tester/deep","source":{"subagent":{"thread_spawn":{"parent_thread_id":"p1","depth":2}}}}"#
            ),
            (Some("p1".into()), Some(spawned("/root/tester/deep")))
        );
        // Multi-agent v1 gives no path: the parent's spawn_agent names the thread id instead.
        assert_eq!(
            placed_by(
                r#"{"id":"c3","cwd":"/w","source":{"subagent":{"thread_spawn":{"parent_thread_id":"p1","depth":1}}}}"#
            ),
            (Some("p1".into()), None)
        );
        // A path beside a source that is not a spawned thread says nothing.
        assert_eq!(
            placed_by(r#"{"id":"c4","cwd":"/w","agent_path":"/root/x","source":"cli"}"#),
            (None, None)
        );
    }

    #[test]
    fn a_review_or_compaction_sub_thread_records_its_kind_and_the_thread_it_forked_from() {
        assert_eq!(
            placed_by(
                r#"{"id":"c1","cwd":"/w","forked_from_id":"p1","source":{"subagent":"compact"}}"#
            ),
            (Some("p1".into()), Some(Subagent::Compact))
        );
        assert_eq!(
            placed_by(
                r#"{"id":"c2","cwd":"/w","parent_thread_id":"p2","forked_from_id":"p1","source":{"subagent":"review"}}"#
            ),
            (Some("p2".into()), Some(Subagent::Review))
        );
        // Another kind of sub-thread is recorded as no kind.
        assert_eq!(
            placed_by(
                r#"{"id":"c3","cwd":"/w","parent_thread_id":"p2","source":{"subagent":{"other":"guardian"}}}"#
            ),
            (Some("p2".into()), None)
        );
        // A session the person forked is not a subagent of the one it forked from.
        assert_eq!(
            placed_by(r#"{"id":"c4","cwd":"/w","forked_from_id":"p1","source":"cli"}"#),
            (None, None)
        );
    }

    #[test]
    fn an_add_file_records_that_the_file_did_not_exist_before() {
        let patch = "*** Begin Patch\n*** Add File: docs/new.md\n+# New\n+two\n*** Update File: src/a.rs\n@@\n-a\n+b\n*** End Patch\n";
        let lines = [
            json!({"type": "session_meta", "payload": {"id": "s", "cwd": "/w"}}),
            json!({"type": "response_item", "payload": {"type": "custom_tool_call",
                "name": "apply_patch", "call_id": "c1", "input": patch}}),
            // What patch_apply_end says Codex applied: an add, in its own shape.
            json!({"type": "event_msg", "payload": {"type": "patch_apply_end", "call_id": "c2",
                "success": true, "changes": {"/w/docs/other.md": {"type": "add", "content": "other\n"}}}}),
        ];
        let (_, out) = feed(&lines, &FileHints::default());
        let new = touch(&out, "/w/docs/new.md");
        assert_eq!(new.2, TouchOp::PatchAdd);
        assert_eq!(
            new.4,
            Some(Change::Write {
                content: "# New\ntwo\n".into(),
                before: Some(Before::Nothing)
            })
        );
        assert!(matches!(
            touch(&out, "/w/src/a.rs").4,
            Some(Change::Patch { .. })
        ));
        assert_eq!(
            touch(&out, "/w/docs/other.md").4,
            Some(Change::Write {
                content: "other\n".into(),
                before: Some(Before::Nothing)
            })
        );
    }

    #[test]
    fn an_edit_names_the_model_of_its_turn_and_a_patchs_files_share_it() {
        let events =
            |out: Emit| -> Vec<Event> { out.events.into_values().map(|(_, e)| e).collect() };
        let named = events(parse(ENVELOPE_040).1);
        let named = crate::capture::sample::models(&named);
        assert!(!named.is_empty());
        assert!(
            named.iter().all(|(_, m)| *m == Some("gpt-5-codex")),
            "{named:?}"
        );
        let unnamed = events(parse(PRE_ENVELOPE).1);
        assert!(
            crate::capture::sample::models(&unnamed)
                .iter()
                .all(|(_, m)| m.is_none())
        );

        // More files than a line has slots: the ones past them ride in the last touch.
        let files: String = (0..20)
            .map(|i| format!("*** Add File: f{i}.txt\n+{i}\n"))
            .collect();
        let patch = |files: &str| format!("*** Begin Patch\n{files}*** End Patch\n");
        let call = |id: &str, patch: String| {
            json!({"type": "response_item", "payload": {"type": "custom_tool_call",
                "name": "apply_patch", "call_id": id, "input": patch}})
        };
        let lines = [
            json!({"type": "session_meta", "payload": {"id": "s", "cwd": "/w", "model": "gpt-5"}}),
            call("c1", patch("*** Add File: a.txt\n+a\n")),
            json!({"type": "turn_context", "payload": {"cwd": "/w", "model": "gpt-5.3-codex"}}),
            call("c2", patch(&files)),
        ];
        let (_, out) = feed(&lines, &FileHints::default());
        let events = events(out);
        let named = crate::capture::sample::models(&events);
        assert_eq!(named[0], ("/w/a.txt", Some("gpt-5")));
        assert_eq!(named.len(), 21);
        assert!(
            named[1..].iter().all(|(_, m)| *m == Some("gpt-5.3-codex")),
            "{named:?}"
        );
        assert!(
            events
                .iter()
                .any(|e| matches!(e, Event::FileTouch { more, .. } if !more.is_empty())),
            "some files ride in a touch's `more`"
        );
    }

    #[test]
    fn arguments_that_are_not_json_are_kept_raw() {
        let lines = [
            json_line(r#"{"type":"session_meta","payload":{"id":"s","cwd":"/w"}}"#),
            json_line(
                r#"{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"[REDACTED len=12]","call_id":"c1"}}"#,
            ),
            json_line(
                r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"[REDACTED len=99]"}}"#,
            ),
            json_line(
                r#"{"type":"response_item","payload":{"type":"function_call","name":"apply_patch","arguments":"*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch","call_id":"c2"}}"#,
            ),
            json_line(
                r#"{"type":"response_item","payload":{"type":"function_call","name":"mcp__db__query","arguments":"{\"sql\": \"select 1\"","call_id":"c3"}}"#,
            ),
            json_line(
                r#"{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":{"command":["ls","-la"]},"call_id":"c4"}}"#,
            ),
        ];
        let (_, out) = feed(&lines, &FileHints::default());
        assert_eq!(
            tools(&out),
            vec![
                ("shell".into(), "[REDACTED len=12]".into(), true),
                (
                    "apply_patch".into(),
                    "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch".into(),
                    true
                ),
                (
                    "mcp__db__query".into(),
                    "{\"sql\": \"select 1\"".into(),
                    true
                ),
                ("shell".into(), "ls -la".into(), true),
            ]
        );
        assert_eq!(touch(&out, "/w/a.txt").2, TouchOp::PatchAdd);
    }

    #[test]
    fn output_shapes_and_exit_codes_decide_failure() {
        let failed = |v: Value| Output::of(Some(&v)).failed();
        let s = |t: &str| Value::String(t.to_string());
        assert!(!failed(s(
            "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok\n"
        )));
        assert!(failed(s("Exit code: 2\nWall time: 0.1 seconds\nOutput:\n")));
        assert!(failed(s(
            "Chunk ID: a\nWall time: 1 seconds\nProcess exited with code 101\nOutput:\nerror\n"
        )));
        assert!(!failed(s(
            "Chunk ID: a\nProcess exited with code 0\nOutput:\nExit code: 3 was printed by the program\n"
        )));
        assert!(failed(s(
            r#"{"output":"boom","metadata":{"exit_code":1,"duration_seconds":0.1}}"#
        )));
        assert!(!failed(s(
            r#"{"output":"fine","metadata":{"exit_code":0}}"#
        )));
        assert!(
            !failed(s(r#"{"rows":[1,2]}"#)),
            "a JSON document is just text"
        );
        assert!(!failed(
            serde_json::json!([{"type":"input_text","text":"Exit code: 0"}])
        ));
        assert!(failed(
            serde_json::json!({"content":"nope","success":false})
        ));
        assert!(failed(s("patch rejected by user")));
        assert!(failed(s("aborted")));
        assert!(!failed(s("Plan updated")));
        assert!(!failed(Value::Null));
    }

    #[test]
    fn replies_written_only_as_agent_messages_give_the_turn_its_closing_message() {
        let ev = |kind: &str, field: &str, text: &str| {
            json_line(&format!(
                r#"{{"type":"event_msg","payload":{{"type":"{kind}","{field}":"{text}"}}}}"#
            ))
        };
        let lines = [
            json_line(r#"{"type":"session_meta","payload":{"id":"s","cwd":"/w"}}"#),
            ev("user_message", "message", "add the limiter"),
            ev("agent_message", "message", "Looking at the server first."),
            ev(
                "agent_message",
                "message",
                "Added the limiter to src/server.ts.",
            ),
            // No task_complete: the next prompt closes the turn.
            ev("user_message", "message", "now the tests"),
            ev("agent_message", "message", "Tests added."),
            json_line(
                r#"{"type":"event_msg","payload":{"type":"task_complete","last_agent_message":"Tests added."}}"#,
            ),
        ];
        let (_, out) = feed(&lines, &FileHints::default());
        assert_eq!(texts(&out, "said"), vec!["Looking at the server first."]);
        assert_eq!(
            texts(&out, "final"),
            vec!["Added the limiter to src/server.ts.", "Tests added."]
        );
    }

    #[test]
    fn a_reply_written_as_agent_message_then_item_is_recorded_once_at_the_items_line() {
        let item = |text: &str| {
            json_line(&format!(
                r#"{{"type":"response_item","payload":{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"{text}"}}]}}}}"#
            ))
        };
        let event = |text: &str| {
            json_line(&format!(
                r#"{{"type":"event_msg","payload":{{"type":"agent_message","message":"{text}"}}}}"#
            ))
        };
        let prompt = |text: &str| {
            json_line(&format!(
                r#"{{"type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{text}"}}]}}}}"#
            ))
        };
        let tokens = json_line(r#"{"type":"event_msg","payload":{"type":"token_count"}}"#);
        let lines = [
            json_line(r#"{"type":"session_meta","payload":{"id":"s","cwd":"/w"}}"#),
            prompt("go"),
            event("one"),
            tokens.clone(),
            item("one"),
            event("two"),
            item("two"),
            prompt("again"),
            event("three"),
            item("three"),
        ];
        let (_, out) = feed(&lines, &FileHints::default());
        assert_eq!(texts(&out, "said"), vec!["one"]);
        assert_eq!(texts(&out, "final"), vec!["two", "three"]);
        // Each at its item's line, as before agent messages were read.
        let lines_of = |tag| -> Vec<u64> {
            at_seqs(&out, tag)
                .iter()
                .map(|(s, _)| u64::from(*s) / 16)
                .collect()
        };
        assert_eq!(lines_of("said"), vec![4]);
        assert_eq!(lines_of("final"), vec![6, 9]);
    }

    #[test]
    fn harness_messages_do_not_close_a_turn_but_prompts_do() {
        let lines = [
            json_line(r#"{"type":"session_meta","payload":{"id":"s","cwd":"/w"}}"#),
            json_line(
                r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}}"#,
            ),
            json_line(
                r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"one"}]}}"#,
            ),
            json_line(
                r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<user_shell_command>ls</user_shell_command>"}]}}"#,
            ),
            json_line(
                r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"two"},{"type":"output_text","text":"lines"}]}}"#,
            ),
            json_line(
                r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"next"},{"type":"input_image","image_url":"data:image/png;base64,AAAA"}]}}"#,
            ),
            json_line(
                r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"  "}]}}"#,
            ),
        ];
        let (_, out) = feed(&lines, &FileHints::default());
        assert_eq!(texts(&out, "said"), vec!["one"]);
        assert_eq!(texts(&out, "final"), vec!["two\nlines"]);
        assert_eq!(
            user_msgs(&out).last().unwrap(),
            &("next".to_string(), false)
        );
    }

    #[test]
    fn a_later_text_turns_a_flushed_final_message_back_into_said() {
        let first = [
            json_line(r#"{"type":"session_meta","payload":{"id":"s","cwd":"/w"}}"#),
            json_line(
                r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"working"}]}}"#,
            ),
        ];
        let mut p = Codex::new(&FileHints::default());
        let mut out = Emit::default();
        for (i, v) in first.iter().enumerate() {
            p.line(i as u64, v, &mut out);
        }
        p.flush(&mut out);
        assert_eq!(texts(&out, "final"), vec!["working"]);
        let next = json_line(
            r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}"#,
        );
        p.line(2, &next, &mut out);
        p.flush(&mut out);
        assert_eq!(texts(&out, "said"), vec!["working"]);
        assert_eq!(texts(&out, "final"), vec!["done"]);
    }

    #[test]
    fn a_calls_output_is_recorded_on_its_line_naming_the_call() {
        let meta = json_line(r#"{"type":"session_meta","payload":{"id":"s","cwd":"/w"}}"#);
        let call = json_line(
            r#"{"type":"response_item","payload":{"type":"function_call","name":"shell","call_id":"c","arguments":"{\"command\":[\"cargo\",\"test\"]}"}}"#,
        );
        let output = json_line(
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"Exit code: 101\nOutput:\nerror[E0502]: cannot borrow\n"}}"#,
        );
        let (_, out) = feed(&[meta, call, output], &FileHints::default());
        let (_, (_, event)) = out
            .events
            .range(Seq::at_line(2, 0)..Seq::at_line(3, 0))
            .next()
            .unwrap();
        match event {
            Event::ToolOutput {
                call,
                excerpt,
                output,
                ..
            } => {
                assert_eq!(*call, Seq::at_line(1, 1));
                assert!(excerpt.contains("error[E0502]"), "{excerpt}");
                assert!(output.is_none(), "short: the excerpt is all of it");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_exec_command_end_answers_its_call_once_and_its_exit_code_fails_it() {
        let meta = json_line(r#"{"type":"session_meta","payload":{"id":"s","cwd":"/w"}}"#);
        let call = json_line(
            r#"{"type":"response_item","payload":{"type":"function_call","name":"exec_command","call_id":"c","arguments":"{\"cmd\":\"cargo test\"}"}}"#,
        );
        let end = json_line(
            r#"{"type":"event_msg","payload":{"type":"exec_command_end","call_id":"c","exit_code":101,"stdout":"","stderr":"error[E0502]: cannot borrow\n","aggregated_output":""}}"#,
        );
        let copy = json_line(
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"Process exited with code 101\nOutput:\n[... omitted ...]\n"}}"#,
        );
        let (_, out) = feed(&[meta, call, end, copy], &FileHints::default());
        let printed: Vec<(Seq, &str)> = out
            .events
            .iter()
            .filter_map(|(seq, (_, e))| match e {
                Event::ToolOutput { excerpt, .. } => Some((*seq, excerpt.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(
            printed,
            vec![(Seq::at_line(2, 1), "error[E0502]: cannot borrow\n")]
        );
        assert!(!tool(&out, "cargo test").2, "exit code 101 fails the call");
    }

    #[test]
    fn a_patch_over_more_files_than_slots_folds_the_rest_into_more() {
        let mut patch = String::from("*** Begin Patch\n");
        for i in 0..20 {
            patch.push_str(&format!("*** Add File: f{i:02}.txt\n+{i}\n"));
        }
        patch.push_str("*** End Patch\n");
        let call = serde_json::json!({"type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","call_id":"c","input":patch}});
        let meta = json_line(r#"{"type":"session_meta","payload":{"id":"s","cwd":"/w"}}"#);
        let fail = json_line(
            r#"{"type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c","output":"Exit code: 1\nOutput:\nerror\n"}}"#,
        );
        let (p, out) = feed(&[meta, call, fail], &FileHints::default());
        let on_line: Vec<&Event> = out
            .events
            .range(Seq::at_line(1, 0)..Seq::at_line(2, 0))
            .map(|(_, (_, e))| e)
            .collect();
        assert_eq!(on_line.len(), 15, "a ToolCall and 14 touches");
        match on_line.last().unwrap() {
            Event::FileTouch {
                path, more, failed, ..
            } => {
                assert_eq!(path, "/w/f13.txt");
                assert!(*failed);
                let rest: Vec<&str> = more.iter().map(|t| t.path.as_str()).collect();
                assert_eq!(
                    rest,
                    vec![
                        "/w/f14.txt",
                        "/w/f15.txt",
                        "/w/f16.txt",
                        "/w/f17.txt",
                        "/w/f18.txt",
                        "/w/f19.txt"
                    ]
                );
                assert!(
                    more.iter()
                        .all(|t| t.op == TouchOp::PatchAdd && t.change.is_some())
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(p.overflowed(), 0);
        assert_eq!(out.blobs.len(), 20);
    }

    #[test]
    fn patch_apply_end_adds_touches_only_where_no_call_has_them() {
        let lines = [
            json_line(r#"{"type":"session_meta","payload":{"id":"s","cwd":"/w"}}"#),
            json_line(r#"{"type":"turn_context","payload":{"cwd":"/w/sub"}}"#),
            // A parsed patch, then its result under an id no call has: not a second touch.
            json_line(
                r#"{"type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","call_id":"c1","input":"*** Begin Patch\n*** Update File: a.rs\n@@\n-x\n+y\n*** End Patch"}}"#,
            ),
            json_line(
                r#"{"type":"event_msg","payload":{"type":"patch_apply_end","call_id":"other","success":true,"changes":{"/w/sub/a.rs":{"type":"update","unified_diff":"@@ -1 +1 @@\n-x\n+y\n"}}}}"#,
            ),
            json_line(
                r#"{"type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c1","output":"Exit code: 0\nOutput:\nSuccess.\n"}}"#,
            ),
            // A sanitized patch on the same file: its own result gives its touch.
            json_line(
                r#"{"type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","call_id":"c2","input":"[REDACTED len=50]"}}"#,
            ),
            json_line(
                r#"{"type":"event_msg","payload":{"type":"patch_apply_end","call_id":"c2","success":false,"changes":{"/w/sub/a.rs":{"type":"update","unified_diff":"@@ -1 +1 @@\n-y\n+z\n"}}}}"#,
            ),
            // A result for a call never seen.
            json_line(
                r#"{"type":"event_msg","payload":{"type":"patch_apply_end","call_id":"ghost","success":true,"changes":{"b.rs":{"type":"add","content":"fn b() {}\n"}}}}"#,
            ),
        ];
        let (_, out) = feed(&lines, &FileHints::default());
        let all = touches(&out);
        let seqs: Vec<(Seq, &str, bool)> = all.iter().map(|t| (t.0, t.1.as_str(), t.3)).collect();
        assert_eq!(
            seqs,
            vec![
                (Seq::at_line(2, 2), "/w/sub/a.rs", false),
                (Seq::at_line(6, 1), "/w/sub/a.rs", true),
                (Seq::at_line(7, 1), "/w/sub/b.rs", false),
            ]
        );
        assert!(
            !tool(&out, "[REDACTED").2,
            "a failed patch_apply_end fails its call"
        );
    }

    #[test]
    fn local_shell_calls_run_commands_and_patches_in_their_working_directory() {
        let patch =
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch\nEOF\n";
        let call = serde_json::json!({"type":"response_item","payload":{"type":"local_shell_call","call_id":"ls1","status":"completed","action":{"type":"exec","command":["bash","-lc",patch],"working_directory":"/repo/pkg"}}});
        let lines = [
            json_line(r#"{"type":"session_meta","payload":{"id":"s","cwd":"/repo"}}"#),
            call,
            json_line(
                r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"ls1","output":"{\"output\":\"denied\",\"metadata\":{\"exit_code\":1}}"}}"#,
            ),
        ];
        let (_, out) = feed(&lines, &FileHints::default());
        let (name, detail, ok) = tool(&out, "apply_patch <<'EOF'");
        assert_eq!(name, "local_shell");
        assert_eq!(detail, patch);
        assert!(!ok);
        let t = touch(&out, "/repo/pkg/x.txt");
        assert!(t.3);
    }

    #[test]
    fn compaction_summaries_are_kept_when_readable() {
        let lines = [
            json_line(r#"{"type":"session_meta","payload":{"id":"s","cwd":"/w"}}"#),
            json_line(r#"{"type":"compacted","payload":{"message":"We added a limiter."}}"#),
            json_line(
                r#"{"type":"compacted","payload":{"message":"  ","replacement_history":[{"type":"message","role":"user","content":[{"type":"input_text","text":"first prompt"}]}]}}"#,
            ),
            json_line(r#"{"type":"event_msg","payload":{"type":"context_compacted"}}"#),
        ];
        let (_, out) = feed(&lines, &FileHints::default());
        assert_eq!(
            all(&out).iter().filter(|e| e.tag() == "compacted").count(),
            2
        );
        assert_eq!(texts(&out, "compact"), vec!["We added a limiter."]);
    }

    /// Feeding lines 0..k, saving the state, applying its flush, then resuming with k..n
    /// equals one full parse, at every cut.
    fn assert_incremental_equals_full(text: &str) {
        let lines = values(text);
        let hints = FileHints {
            stem: "rollout-2026-05-04T12-15-02-019a7c3e-5b21-7d40-9c1e-2f6a8b0c4d11".into(),
            ..FileHints::default()
        };
        let mut full = Codex::new(&hints);
        let mut full_out = Emit::default();
        for (i, v) in &lines {
            full.line(*i, v, &mut full_out);
        }
        full.flush(&mut full_out);
        for k in 0..=lines.len() {
            let mut applied: BTreeMap<Seq, (i64, Event)> = BTreeMap::new();
            let mut p = Codex::new(&hints);
            let mut out = Emit::default();
            for (i, v) in &lines[..k] {
                p.line(*i, v, &mut out);
            }
            p.flush(&mut out);
            applied.extend(out.events);
            let saved = serde_json::to_string(&crate::capture::ParserState::Codex(p)).unwrap();
            let crate::capture::ParserState::Codex(mut p) =
                serde_json::from_str::<crate::capture::ParserState>(&saved).unwrap()
            else {
                panic!("state came back as another parser")
            };
            let mut out = Emit::default();
            for (i, v) in &lines[k..] {
                p.line(*i, v, &mut out);
            }
            p.flush(&mut out);
            applied.extend(out.events);
            assert_eq!(applied, full_out.events, "cut at parsed line {k}");
            assert_eq!(p.session(), full.session());
            assert_eq!(p.last_ts(), full.last_ts());
        }
    }

    /// (seq, text) of every event with tag `tag`.
    fn at_seqs(out: &Emit, tag: &str) -> Vec<(u32, String)> {
        out.events
            .iter()
            .filter(|(_, (_, e))| e.tag() == tag)
            .map(|(s, (_, e))| (s.0, e.summary()))
            .collect()
    }

    #[test]
    fn a_prompt_given_only_as_a_user_message_event_is_recorded_and_closes_its_turn() {
        let (_, out) = parse(DESKTOP_2026);
        let prompts: Vec<String> = user_msgs(&out)
            .into_iter()
            .filter(|(_, harness)| !harness)
            .map(|(t, _)| t)
            .collect();
        // The second prompt is written twice (event first, then the item): recorded once.
        assert_eq!(
            prompts,
            vec![
                "Why does the nightly export fail on Sundays?",
                "Fix it and run it again."
            ]
        );
        // Each turn's last text is its closing message, at the item's own line.
        assert_eq!(
            at_seqs(&out, "final"),
            vec![
                (
                    15 * 16 + 1,
                    "Sunday is passed as 7, but the export's cron parser only accepts 0-6, so \
                     every Sunday run exits with code 1."
                        .to_string()
                ),
                (
                    25 * 16 + 1,
                    "Fixed: Sunday maps to 0 now, and the export ran clean (1,204 rows)."
                        .to_string()
                ),
            ]
        );
    }

    #[test]
    fn a_prompt_copy_is_dropped_in_either_order_but_a_repeated_prompt_is_kept() {
        let item = |t: &str| {
            json!({"type":"response_item","payload":{"type":"message","role":"user",
                   "content":[{"type":"input_text","text":t}]}})
        };
        let event =
            |t: &str| json!({"type":"event_msg","payload":{"type":"user_message","message":t}});
        let reply = |t: &str| {
            json!({"type":"response_item","payload":{"type":"message","role":"assistant",
                   "content":[{"type":"output_text","text":t}]}})
        };
        let lines = vec![
            json!({"type":"session_meta","payload":{"id":"s1","cwd":"/r"}}),
            item("go on"),
            event("go on"),
            reply("done one"),
            event("go on"),
            item("go on"),
            reply("done two"),
            // Two steering inputs written as two items, then their two events.
            item("also a"),
            item("also b"),
            event("also a"),
            event("also b"),
            reply("done three"),
            event("only typed"),
            event("typed twice"),
        ];
        let (_, out) = feed(&lines, &FileHints::default());
        let prompts: Vec<String> = user_msgs(&out).into_iter().map(|(t, _)| t).collect();
        assert_eq!(
            prompts,
            vec![
                "go on",
                "go on",
                "also a",
                "also b",
                "only typed",
                "typed twice"
            ]
        );
    }

    #[test]
    fn web_search_calls_are_tool_calls_with_the_query_as_detail() {
        let (_, out) = parse(DESKTOP_2026);
        let searches: Vec<_> = tools(&out)
            .into_iter()
            .filter(|(t, _, _)| t == "web_search")
            .collect();
        assert_eq!(
            searches,
            vec![
                (
                    "web_search".to_string(),
                    "cron day-of-week 0 or 7 for Sunday".to_string(),
                    true
                ),
                ("web_search".to_string(), String::new(), true),
            ]
        );
        let failed = json!({"type":"response_item","payload":{"type":"web_search_call",
            "status":"failed","action":{"type":"open_page","url":"https://example.com/cron"}}});
        let (_, out) = feed(&[failed], &FileHints::default());
        assert_eq!(
            tools(&out),
            vec![(
                "web_search".to_string(),
                "https://example.com/cron".to_string(),
                false
            )]
        );
    }

    #[test]
    fn a_process_exit_in_a_poll_fails_the_exec_command_that_started_it() {
        let (_, out) = parse(DESKTOP_2026);
        let calls: Vec<(u32, String, bool)> = out
            .events
            .iter()
            .filter_map(|(s, (_, e))| match e {
                Event::ToolCall { tool, ok, .. } if tool != "web_search" => {
                    Some((s.0 / 16, tool.clone(), *ok))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            calls,
            vec![
                // Its process exited 1 in the poll on line 11: the failure is the command's.
                (8, "exec_command".to_string(), false),
                // The poll that read the exit status is just a poll.
                (10, "write_stdin".to_string(), true),
                // A poll the harness refused ("write_stdin failed: Unknown process id").
                (12, "write_stdin".to_string(), false),
                // A process that exited 0: both stay ok.
                (21, "exec_command".to_string(), true),
                (23, "write_stdin".to_string(), true),
            ]
        );
        // A poll of a process whose start is not on record keeps the failure itself.
        let orphan = [
            json!({"type":"response_item","payload":{"type":"function_call","name":"write_stdin",
                   "arguments":"{\"session_id\":5}","call_id":"c1"}}),
            json!({"type":"response_item","payload":{"type":"function_call_output","call_id":"c1",
                   "output":"Chunk ID: 1\nProcess exited with code 2\nOutput:\n"}}),
        ];
        let (_, out) = feed(&orphan, &FileHints::default());
        assert!(!tools(&out)[0].2);
    }

    #[test]
    fn prompts_and_replies_are_kept_whole() {
        let long = format!("{} tailword", "word ".repeat(20_000));
        let lines = [
            json!({"type":"session_meta","payload":{"id":"s1","cwd":"/r"}}),
            json!({"type":"event_msg","payload":{"type":"user_message","message":long}}),
            json!({"type":"response_item","payload":{"type":"message","role":"assistant",
                   "content":[{"type":"output_text","text":long}]}}),
            json!({"type":"compacted","payload":{"message":long}}),
        ];
        let (_, out) = feed(&lines, &FileHints::default());
        assert_eq!(user_msgs(&out), vec![(long.clone(), false)]);
        assert_eq!(texts(&out, "final"), vec![long.clone()]);
        assert_eq!(texts(&out, "compact"), vec![long]);
    }

    #[test]
    fn incremental_parsing_equals_a_full_parse_at_every_cut() {
        for fixture in FIXTURES {
            assert_incremental_equals_full(fixture);
        }
    }

    #[test]
    fn the_saved_state_stays_small() {
        for fixture in FIXTURES {
            let lines: Vec<Value> = values(fixture).into_iter().map(|(_, v)| v).collect();
            let (p, _) = feed(&lines, &FileHints::default());
            let saved = serde_json::to_string(&p).unwrap();
            assert!(saved.len() < 2048, "{} bytes: {saved}", saved.len());
        }
    }

    #[test]
    fn garbage_lines_never_fail() {
        let junk = [
            "null",
            "42",
            "\"text\"",
            "[1,2,3]",
            "{}",
            r#"{"type":7}"#,
            r#"{"type":"session_meta"}"#,
            r#"{"type":"session_meta","payload":{"id":5,"cwd":["x"],"git":"no","source":{"subagent":7}}}"#,
            r#"{"type":"response_item","payload":[]}"#,
            r#"{"type":"response_item","payload":{"type":"message","role":"user","content":7}}"#,
            r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[null,1,{"type":"output_text"},{"text":"ok"}]}}"#,
            r#"{"type":"response_item","payload":{"type":"function_call","name":null,"arguments":null}}"#,
            r#"{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":7}","call_id":"x"}}"#,
            r#"{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"apply_patch <<EOF\\n*** Begin Patch\"}","call_id":"y"}}"#,
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"x","output":{"metadata":"x"}}}"#,
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"y","output":"Exit code: 99999999999999999999999"}}"#,
            r#"{"type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":{"not":"text"}}}"#,
            r#"{"type":"response_item","payload":{"type":"local_shell_call","action":{"command":"ls"}}}"#,
            r#"{"type":"event_msg","payload":{"type":"patch_apply_end","call_id":7,"changes":["a",{"path":3}]}}"#,
            r#"{"type":"event_msg","payload":{"type":"patch_apply_end","changes":{"/a":{"type":"weird"},"/b":null,"/c":{"update":7}}}}"#,
            r#"{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"FileChange","changes":7}}}"#,
            r#"{"type":"event_msg","payload":{"type":"item_completed","item":null}}"#,
            r#"{"type":"event_msg","payload":{"type":"task_complete","last_agent_message":7}}"#,
            r#"{"type":"turn_context","payload":{"cwd":null}}"#,
            r#"{"type":"compacted","payload":{"message":null}}"#,
            r#"{"type":"future_kind","payload":{"anything":true}}"#,
            r#"{"timestamp":"not a time","type":"event_msg","payload":{"type":"task_started"}}"#,
            r#"{"timestamp":12345,"record_type":"state"}"#,
            r#"{"id":null,"timestamp":"2025-01-01T00:00:00Z","instructions":null}"#,
        ];
        let mut p = Codex::new(&FileHints::default());
        let mut out = Emit::default();
        for (i, line) in junk.iter().enumerate() {
            let v: Value = serde_json::from_str(line).unwrap();
            p.line(i as u64, &v, &mut out);
        }
        p.flush(&mut out);
        let back: Codex = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        back.flush(&mut out);
        // And through the whole pipeline, with lines that are not JSON at all.
        let text = format!(
            "{}\nnot json\n{{\"truncated\": \n\u{0}\u{0}\n\n{}",
            r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"g","cwd":"/w"}}"#,
            junk.join("\n")
        );
        let (session, _) = parse(&text);
        assert_eq!(session.unwrap().as_str(), "g");
    }

    #[test]
    fn the_real_0_40_rollout_parses_when_present() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(REAL_040);
        let Ok(text) = std::fs::read_to_string(&path) else {
            // The shared fixtures are not part of a fresh clone.
            crate::testing::skip(&format!("{} is not here", path.display()), false);
            return;
        };
        let (session, out) = parse_str(&text, &FileHints::of(&path, &path)).unwrap();
        assert_eq!(
            session.unwrap().as_str(),
            "01997e76-d124-7592-9cac-2ec05abbca08"
        );
        let (_, m) = meta(&out);
        assert!(matches!(
            m,
            Event::SessionMeta { ref branch, ref version, .. }
                if branch.as_deref() == Some("fix/team-optimization-v2")
                    && version.as_deref() == Some("0.40.0")
        ));
        // Observed: 120 shell + 3 update_plan calls; 12 failed (JSON exit codes, sandbox
        // denials, two rejected patches); 29 heredoc apply_patch calls of one file each.
        let calls = tools(&out);
        assert_eq!(calls.len(), 123);
        assert_eq!(calls.iter().filter(|c| !c.2).count(), 12);
        assert_eq!(calls.iter().filter(|c| c.0 == "update_plan").count(), 3);
        let touches = touches(&out);
        assert_eq!(touches.len(), 29);
        assert_eq!(touches.iter().filter(|t| t.3).count(), 2);
        assert!(touches.iter().all(|t| t.4.is_some()));
        let users = user_msgs(&out);
        assert_eq!(users.len(), 15);
        assert_eq!(users.iter().filter(|u| u.1).count(), 2);
        assert_eq!(texts(&out, "final").len(), 9);
        // `git commit` found nothing to commit: no commit event.
        assert!(commits(&out).is_empty());
        assert!(touches.iter().all(|t| t.1.starts_with("/Users/jnarowski/")));
    }
}
