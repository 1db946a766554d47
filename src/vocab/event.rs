//! The ledger's vocabulary: envelopes, event kinds, ids and the seq layout.
//!
//! Every envelope ever written must parse forever. Envelopes are stored as JSON so that
//! evolution is additive: a new kind is a new variant, a new field is optional with a default.
//! A kind this binary does not know (written by a newer peat) parses as [`Event::Unknown`]
//! and is carried through untouched instead of failing the read.

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::vocab::change::BlobId;

/// The schema version this binary writes into every envelope.
pub(crate) const SCHEMA_VERSION: u16 = 3;

/// Transcript-derived events live at `line_index * SEQ_STRIDE + slot`.
pub(crate) const SEQ_STRIDE: u32 = 16;
/// The Stop hook's authoritative closing message (`capture --final-msg`).
pub(crate) const HOOK_FINAL_SEQ: u32 = (1 << 31) - 1;
/// Observations take the first free seq from here on, per session.
pub(crate) const OBS_SEQ_BASE: u32 = 1 << 31;
/// Reserved (the original's distiller sidecar); nothing in the ledger is written here.
pub(crate) const RESERVED_SEQ_BASE: u32 = 3 << 30;

/// Caps in bytes, cut at a char boundary, for what is a pointer rather than a text: a tool
/// call's detail and a commit's message. What was said (prompts, agent texts, compaction
/// summaries) is never cut at capture: displays clip it, `--json` carries it whole.
pub(crate) const DETAIL_CAP: usize = 500;
pub(crate) const COMMIT_MESSAGE_CAP: usize = 500;
/// What a tool printed is kept whole in the blob store; its first and last this many bytes
/// are its excerpt, the part search reads (an error sits at the end of a build log, the
/// command's own echo at its start).
pub(crate) const EXCERPT_SIDE: usize = 2048;
/// Where an excerpt leaves out the middle of an output.
pub(crate) const EXCERPT_GAP: &str = "\n[…]\n";

/// A session: a Claude Code session uuid, a Codex thread id, or a subagent's derived id.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SessionId(pub String);

impl SessionId {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
    /// For a Claude subagent's id, `<parent>/agent-<id>`: the parent's id and the agent's.
    pub(crate) fn subagent(&self) -> Option<(&str, &str)> {
        let (parent, child) = self.0.split_once('/')?;
        Some((parent, child.strip_prefix("agent-").unwrap_or(child)))
    }
    /// The harness's own compaction agent (`<parent>/agent-acompact-…`), which writes the
    /// summary a compaction leaves rather than answering a tool call.
    pub(crate) fn is_compactor(&self) -> bool {
        self.subagent()
            .is_some_and(|(_, agent)| agent.starts_with(COMPACTOR_AGENT))
    }
    /// A session `peat restore` recorded.
    pub(crate) fn is_restore(&self) -> bool {
        self.0.starts_with(RESTORE_PREFIX)
    }
}

/// How a restore's session id begins (then the moment it ran, in ms): `peat restore` records
/// itself as a session of its own.
pub(crate) const RESTORE_PREFIX: &str = "restore-";

/// How Claude Code names its compaction agent's id (`acompact-<hex>`).
pub(crate) const COMPACTOR_AGENT: &str = "acompact";

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Position of an event within its session. See the module constants for the layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Seq(pub u32);

impl Seq {
    /// The seq of `slot` on raw transcript line `line` (0-based, blank lines counted).
    pub(crate) fn at_line(line: u64, slot: u32) -> Seq {
        debug_assert!(slot < SEQ_STRIDE);
        let line = u32::try_from(line).unwrap_or(u32::MAX / SEQ_STRIDE);
        Seq(line
            .saturating_mul(SEQ_STRIDE)
            .saturating_add(slot)
            .min(HOOK_FINAL_SEQ - 1))
    }
}

/// A seq as a person reads and types it: a transcript event's number as it is; the Stop
/// hook's closing message `end`; the Nth observation deposited in a session `obsN`, from 1;
/// the reserved range (which nothing writes) `rN`. The layout's large numbers never show.
impl fmt::Display for Seq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            n if n < HOOK_FINAL_SEQ => write!(f, "{n}"),
            HOOK_FINAL_SEQ => f.write_str("end"),
            n if n < RESERVED_SEQ_BASE => write!(f, "obs{}", n - OBS_SEQ_BASE + 1),
            n => write!(f, "r{}", n - RESERVED_SEQ_BASE),
        }
    }
}

/// What [`Seq`]'s `Display` writes, read back; a plain number is taken as it is, whatever
/// its range, so a seq from `--json` is accepted too.
impl std::str::FromStr for Seq {
    type Err = String;
    fn from_str(s: &str) -> Result<Seq, String> {
        let s = s.trim();
        let numbered = |prefix: &str, base: u32, from: u32, last: u32| -> Option<Seq> {
            let n: u32 = s.strip_prefix(prefix)?.parse().ok()?;
            let seq = base.checked_add(n.checked_sub(from)?)?;
            (seq <= last).then_some(Seq(seq))
        };
        if let Ok(n) = s.parse::<u32>() {
            return Ok(Seq(n));
        }
        match s {
            "end" => Ok(Seq(HOOK_FINAL_SEQ)),
            _ => numbered("obs", OBS_SEQ_BASE, 1, RESERVED_SEQ_BASE - 1)
                .or_else(|| numbered("r", RESERVED_SEQ_BASE, 0, u32::MAX))
                .ok_or_else(|| {
                    format!(
                        "not an event: {s:?} (want its number, like 1042; end, the closing message the Stop hook recorded; or obs1, obs2, … for the observations)"
                    )
                }),
        }
    }
}

/// An event's identity: upserting the same id again replaces it (identical bytes: no-op).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct EventId {
    pub(crate) session: SessionId,
    pub(crate) seq: Seq,
}

/// What is stored for every event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Envelope {
    /// The schema version the envelope was written under.
    pub(crate) v: u16,
    /// Milliseconds since the Unix epoch, from the transcript (never the wall clock).
    pub(crate) ts_ms: i64,
    pub(crate) session: SessionId,
    pub(crate) kind: Event,
}

impl Envelope {
    pub(crate) fn new(session: SessionId, ts_ms: i64, kind: Event) -> Envelope {
        Envelope {
            v: SCHEMA_VERSION,
            ts_ms,
            session,
            kind,
        }
    }
}

/// A moment of the record: what `blame --at` and `restore` go back to, and what a restore
/// records it put a file back to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Moment {
    /// An instant, ms since the epoch: everything recorded at or before it had happened.
    Instant(i64),
    /// Just after this event: it had happened, nothing recorded later had.
    After(EventId),
    /// Just before this event: neither it nor anything recorded later had happened.
    Before(EventId),
    /// Just after the session's last event (a session with none: before everything).
    EndOf(SessionId),
}

/// Which harness wrote a transcript.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Agent {
    ClaudeCode,
    Codex,
    Cursor,
    Copilot,
    Pi,
    Qwen,
    Droid,
    Gemini,
    #[serde(rename = "opencode")]
    OpenCode,
    Goose,
    Crush,
    Cline,
    Aider,
    Amp,
    /// peat itself: a restore is recorded as a session of its own.
    Peat,
}

impl Agent {
    /// Every agent, for `--agent` to name: a new variant is listed here too.
    pub(crate) const ALL: &[Agent] = &[
        Agent::ClaudeCode,
        Agent::Codex,
        Agent::Gemini,
        Agent::OpenCode,
        Agent::Cursor,
        Agent::Copilot,
        Agent::Pi,
        Agent::Qwen,
        Agent::Droid,
        Agent::Goose,
        Agent::Crush,
        Agent::Cline,
        Agent::Aider,
        Agent::Amp,
        Agent::Peat,
    ];

    pub(crate) fn label(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude",
            Agent::Codex => "codex",
            Agent::Cursor => "cursor",
            Agent::Copilot => "copilot",
            Agent::Pi => "pi",
            Agent::Qwen => "qwen",
            Agent::Droid => "droid",
            Agent::Gemini => "gemini",
            Agent::OpenCode => "opencode",
            Agent::Goose => "goose",
            Agent::Crush => "crush",
            Agent::Cline => "cline",
            Agent::Aider => "aider",
            Agent::Amp => "amp",
            Agent::Peat => "peat",
        }
    }

    /// The command that resumes session `id` in this harness, run in the session's folder;
    /// `None` when the harness has none.
    pub(crate) fn resume(self, id: &str) -> Option<Vec<String>> {
        let argv = |args: &[&str]| Some(args.iter().map(|a| a.to_string()).collect());
        match self {
            Agent::ClaudeCode => argv(&["claude", "--resume", id]),
            Agent::Codex => argv(&["codex", "resume", id]),
            Agent::Cursor => argv(&["cursor-agent", "--resume", id]),
            Agent::Copilot => argv(&["copilot", "--resume", id]),
            Agent::Gemini => argv(&["gemini", "--resume", id]),
            Agent::OpenCode => argv(&["opencode", "--session", id]),
            Agent::Goose => argv(&["goose", "session", "--resume", "--session-id", id]),
            Agent::Crush => argv(&["crush", "--session", id]),
            Agent::Amp => argv(&["amp", "threads", "continue", id]),
            // Pi resumes by its session file's path, which the record does not keep; for
            // Qwen Code and droid no command taking a session id is documented: peat says
            // it cannot, rather than guess one.
            Agent::Pi | Agent::Qwen | Agent::Droid | Agent::Peat => None,
            // Cline resumes a task from its panel's history; it has no command for one.
            Agent::Cline => None,
            // Aider starts a new chat each run (`--restore-chat-history` replays the file).
            Agent::Aider => None,
        }
    }
}

/// What a subagent's own transcript says it is, where that places it better than its parent
/// id alone (Codex's `session_meta.source.subagent`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Subagent {
    /// Started by a multi-agent tool call, at this agent path (`/root/tester`): multi-agent
    /// v2's `spawn_agent` answers with the path, not the thread id.
    Spawned { path: String },
    /// A code review the harness ran on the parent's behalf (`/review`), not a tool call.
    Review,
    /// The harness's compaction agent, which writes the summary a compaction leaves.
    Compact,
}

/// Which version-control tool made a commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Vcs {
    Git,
    Jj,
}

/// How a file was touched. `Unknown` is what an envelope from before this field reads as.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TouchOp {
    #[default]
    Unknown,
    Edit,
    Write,
    MultiEdit,
    NotebookEdit,
    PatchAdd,
    PatchUpdate,
    PatchDelete,
}

/// One more file in a `FileTouch` that holds several.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Touched {
    pub(crate) path: String,
    #[serde(default)]
    pub(crate) op: TouchOp,
    #[serde(default)]
    pub(crate) change: Option<BlobId>,
}

/// The commit an observation was deposited against.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Basis {
    /// Full hash of HEAD (in a colocated jj repo, `@-`).
    pub(crate) commit: String,
    /// The working tree had uncommitted changes to tracked files.
    pub(crate) dirty: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The event kinds. Declaration order does not matter (the encoding is by name), but no
/// variant may ever be removed or renamed, and fields may only be added as optional.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Event {
    /// Where and on what the session ran: from the first line that names a working directory.
    SessionMeta {
        cwd: String,
        #[serde(default)]
        branch: Option<String>,
        #[serde(default)]
        agent: Option<Agent>,
        /// The harness version that wrote the transcript.
        #[serde(default)]
        version: Option<String>,
        /// For a subagent's transcript: the session that spawned it.
        #[serde(default)]
        parent: Option<SessionId>,
        /// For a subagent's transcript, what it is, where the harness says (see [`Subagent`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        subagent: Option<Subagent>,
    },
    /// What the person (or, with `harness`, the harness on their behalf) said.
    UserMsg {
        text: String,
        /// Injected by the harness (slash-command expansions, caveats, environment context,
        /// interruption markers), not typed by the person.
        #[serde(default, skip_serializing_if = "is_false")]
        harness: bool,
        /// What the words answered or came with, kept apart so `text` reads as typed and is
        /// all that search matches: an IDE's preamble (the active file, the open tabs), or
        /// the question an answer to `AskUserQuestion` replies to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context: Option<String>,
    },
    ToolCall {
        tool: String,
        detail: String,
        ok: bool,
        /// The subagent this call started (its agent id, as the harness named it in the
        /// call's result): where the subagent's log nests. Absent for other calls, and for
        /// calls captured before it was recorded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    /// What the tool call at `call` (same session) printed: on the line its result came.
    ToolOutput {
        call: Seq,
        /// Its head and tail (see [`EXCERPT_SIDE`]); the whole output when that is short.
        excerpt: String,
        /// The whole output in the blob store (its bytes), when the excerpt left some out.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<BlobId>,
        /// The whole output's length in bytes.
        bytes: u64,
    },
    /// A file an edit tool changed; `change` names what it wrote in the blob store.
    FileTouch {
        path: String,
        #[serde(default)]
        op: TouchOp,
        #[serde(default)]
        change: Option<BlobId>,
        /// The tool reported an error: the edit was not applied.
        #[serde(default, skip_serializing_if = "is_false")]
        failed: bool,
        /// Further files the same call touched, when a line has more than its slots hold
        /// (an apply_patch over many files).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        more: Vec<Touched>,
        /// A restore's: the moment it put the file back to, whose lines keep the origins
        /// they had then (blame credits the restore only with what differs).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        restores: Option<Moment>,
        /// The model, as the harness names it, of the agent message whose tool call made
        /// the edit (every file of the call). Absent where the format names none, and for
        /// edits captured before it was recorded.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// Retired (the original's commit event, whose hash was usually empty): parse only.
    Commit { hash: String, message: String },
    /// The last thing the agent said in a turn: the closing message.
    FinalMsg { text: String },
    /// The context window was compacted here.
    Compaction {},
    /// Anything else the agent said in prose.
    Said { text: String },
    /// The compactor's summary of everything before it.
    CompactSummary { text: String },
    /// A claim deposited with `peat obs`, optionally citing the seqs it derives from.
    #[serde(alias = "Obs2")]
    Obs {
        subject: String,
        text: String,
        #[serde(default)]
        derived_from: Vec<u32>,
        #[serde(default)]
        basis: Option<Basis>,
    },
    /// Retired (the original's distiller output): parse only.
    Distill {
        #[serde(default)]
        lane: serde_json::Value,
        key: String,
        text: String,
        #[serde(default)]
        open: bool,
        #[serde(default)]
        cites: Vec<(String, u32)>,
        #[serde(default)]
        src: u64,
        #[serde(default)]
        by: String,
    },
    /// A commit the agent made, with the hash its command printed.
    Committed {
        vcs: Vcs,
        hash: String,
        message: String,
        #[serde(default)]
        branch: Option<String>,
    },
    /// A kind written by a newer peat: kept as it was, shown as raw JSON.
    #[serde(untagged)]
    Unknown(serde_json::Value),
}

impl Event {
    /// The change blobs this event names: an edit's, one per file it touched that recorded
    /// what it wrote; none for any other kind.
    pub(crate) fn change_blobs(&self) -> Vec<BlobId> {
        self.changes().into_iter().map(|(_, blob)| blob).collect()
    }

    /// Every blob this event names: its change blobs, and a tool output's whole text.
    pub(crate) fn blobs(&self) -> Vec<BlobId> {
        match self {
            Event::ToolOutput { output, .. } => output.iter().copied().collect(),
            _ => self.change_blobs(),
        }
    }

    /// [`Event::change_blobs`], each with the path it was written to.
    pub(crate) fn changes(&self) -> Vec<(&str, BlobId)> {
        match self {
            Event::FileTouch {
                path, change, more, ..
            } => change
                .map(|c| (path.as_str(), c))
                .into_iter()
                .chain(
                    more.iter()
                        .filter_map(|t| Some((t.path.as_str(), t.change?))),
                )
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The short tag used by `--kind` and in listings.
    pub fn tag(&self) -> &'static str {
        match self {
            Event::SessionMeta { .. } => "meta",
            Event::UserMsg { .. } => "user",
            Event::ToolCall { .. } => "tool",
            Event::ToolOutput { .. } => "output",
            Event::FileTouch { .. } => "file",
            Event::Commit { .. } | Event::Committed { .. } => "commit",
            Event::FinalMsg { .. } => "final",
            Event::Compaction {} => "compacted",
            Event::Said { .. } => "said",
            Event::CompactSummary { .. } => "compact",
            Event::Obs { .. } => "obs",
            Event::Distill { .. } => "distill",
            Event::Unknown(_) => "unknown",
        }
    }

    /// Every tag `--kind` accepts.
    pub(crate) const TAGS: &'static [&'static str] = &[
        "meta",
        "user",
        "tool",
        "output",
        "file",
        "commit",
        "final",
        "compacted",
        "said",
        "compact",
        "obs",
        "distill",
        "unknown",
    ];

    /// One line describing the event, unclipped (renderers clip).
    pub(crate) fn summary(&self) -> String {
        match self {
            Event::SessionMeta {
                cwd, branch, agent, ..
            } => {
                let mut s = cwd.clone();
                if let Some(b) = branch.as_deref().filter(|b| !b.is_empty()) {
                    s.push_str(" · ");
                    s.push_str(b);
                }
                if let Some(a) = agent {
                    s.push_str(" · ");
                    s.push_str(a.label());
                }
                s
            }
            Event::UserMsg { text, .. }
            | Event::FinalMsg { text }
            | Event::Said { text }
            | Event::CompactSummary { text } => text.clone(),
            Event::ToolCall {
                tool, detail, ok, ..
            } => {
                let failed = if *ok { "" } else { " FAILED" };
                format!("{tool}{failed} {detail}")
            }
            Event::ToolOutput { call, excerpt, .. } => format!("output of {call}: {excerpt}"),
            Event::FileTouch {
                path, op, failed, ..
            } => {
                let failed = if *failed { " (failed)" } else { "" };
                format!("{path} [{}]{failed}", serde_plain(op))
            }
            Event::Commit { hash, message } | Event::Committed { hash, message, .. } => {
                let short: String = hash.chars().take(8).collect();
                format!("{short} {message}")
            }
            Event::Compaction {} => "— context window compacted —".to_string(),
            Event::Obs {
                subject,
                text,
                derived_from,
                basis,
            } => {
                let mut s = format!("{subject}: {text}");
                if !derived_from.is_empty() {
                    s.push_str(&format!(" [cites {} events]", derived_from.len()));
                }
                if let Some(b) = basis {
                    let short: String = b.commit.chars().take(8).collect();
                    s.push_str(&format!(" @{short}{}", if b.dirty { "+" } else { "" }));
                }
                s
            }
            Event::Distill { key, text, .. } => format!("{key}: {text}"),
            Event::Unknown(v) => v.to_string(),
        }
    }
}

/// A value as its serialized name: a unit variant as its bare snake_case word.
pub(crate) fn serde_plain<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// The excerpt of a tool's output `text` (see [`EXCERPT_SIDE`]): the text itself when it
/// is short, else its head and tail around [`EXCERPT_GAP`], cut at character boundaries.
pub(crate) fn excerpt(text: &str) -> String {
    if text.len() <= 2 * EXCERPT_SIDE + EXCERPT_GAP.len() {
        return text.to_string();
    }
    let mut tail = text.len() - EXCERPT_SIDE;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{}{EXCERPT_GAP}{}", cap(text, EXCERPT_SIDE), &text[tail..])
}

/// Cut `s` to at most `max` bytes without splitting a character.
pub(crate) fn cap(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seqs_read_as_people_type_them_and_back() {
        let cases = [
            (Seq(0), "0"),
            (Seq(1042), "1042"),
            (Seq(HOOK_FINAL_SEQ - 1), "2147483646"),
            (Seq(HOOK_FINAL_SEQ), "end"),
            (Seq(OBS_SEQ_BASE), "obs1"),
            (Seq(OBS_SEQ_BASE + 41), "obs42"),
            (Seq(RESERVED_SEQ_BASE - 1), "obs1073741824"),
            (Seq(RESERVED_SEQ_BASE), "r0"),
            (Seq(u32::MAX), "r1073741823"),
        ];
        for (seq, shown) in cases {
            assert_eq!(seq.to_string(), shown);
            assert_eq!(shown.parse::<Seq>(), Ok(seq), "{shown}");
        }
        // The raw numbers a --json answer carries are read too.
        assert_eq!("2147483648".parse::<Seq>(), Ok(Seq(OBS_SEQ_BASE)));
        for bad in ["obs0", "obs", "end2", "-1", "r1073741824", "x"] {
            assert!(bad.parse::<Seq>().is_err(), "{bad}");
        }
    }

    #[test]
    fn cap_never_splits_a_character() {
        let s = "aé€😀";
        for max in 0..=s.len() {
            let c = cap(s, max);
            assert!(c.len() <= max);
            assert!(s.starts_with(&c));
        }
        assert_eq!(cap("short", 500), "short");
    }

    #[test]
    fn seq_layout_matches_the_original() {
        assert_eq!(Seq::at_line(0, 0), Seq(0));
        assert_eq!(Seq::at_line(3, 2), Seq(50));
        assert_eq!(HOOK_FINAL_SEQ, 2_147_483_647);
        assert_eq!(OBS_SEQ_BASE, 2_147_483_648);
        assert_eq!(RESERVED_SEQ_BASE, 3_221_225_472);
    }

    #[test]
    fn original_envelopes_still_parse() {
        // Shapes the original wrote (schema v1-v3), including the retired kinds.
        let lines = [
            r#"{"v":3,"ts_ms":1,"session":"s","kind":{"SessionMeta":{"cwd":"/r","branch":null,"ese_version":"ese dim=512"}}}"#,
            r#"{"v":3,"ts_ms":1,"session":"s","kind":{"Commit":{"hash":"","message":"fix"}}}"#,
            r#"{"v":4,"ts_ms":1,"session":"s","kind":{"Distill":{"lane":"Ruling","key":"k","text":"t","open":true,"cites":[["s",3]],"src":9,"by":"claude"}}}"#,
            r#"{"v":2,"ts_ms":1,"session":"s","kind":{"Obs":{"subject":"a","text":"b","derived_from":[1]}}}"#,
            r#"{"v":3,"ts_ms":1,"session":"s","kind":{"Obs2":{"subject":"a","text":"b","derived_from":[],"basis":{"commit":"abc","dirty":true}}}}"#,
            r#"{"v":3,"ts_ms":1,"session":"s","kind":{"FileTouch":{"path":"/a.rs"}}}"#,
            r#"{"v":3,"ts_ms":1,"session":"s","kind":{"Compaction":{}}}"#,
        ];
        for line in lines {
            let env: Envelope =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert!(
                !matches!(env.kind, Event::Unknown(_)),
                "{line} fell through"
            );
        }
    }

    #[test]
    fn a_kind_from_a_newer_peat_is_carried_not_rejected() {
        let line = r#"{"v":9,"ts_ms":5,"session":"s","kind":{"Hologram":{"depth":3}}}"#;
        let env: Envelope = serde_json::from_str(line).unwrap();
        assert_eq!(env.kind.tag(), "unknown");
        let back = serde_json::to_string(&env).unwrap();
        assert_eq!(back, line);
    }

    #[test]
    fn envelopes_round_trip_byte_for_byte() {
        let env = Envelope::new(
            SessionId("abc".into()),
            42,
            Event::FileTouch {
                path: "/x".into(),
                op: TouchOp::Edit,
                change: None,
                failed: false,
                more: vec![],
                restores: None,
                model: Some("claude-sonnet-4-6".into()),
            },
        );
        let a = serde_json::to_vec(&env).unwrap();
        let back: Envelope = serde_json::from_slice(&a).unwrap();
        assert_eq!(back, env);
        assert_eq!(serde_json::to_vec(&back).unwrap(), a);
    }

    #[test]
    fn an_edit_that_names_no_model_keeps_the_bytes_it_had_before_models_were_recorded() {
        let before = r#"{"v":4,"ts_ms":1,"session":"s","kind":{"FileTouch":{"path":"/a.rs","op":"edit","change":null}}}"#;
        let env: Envelope = serde_json::from_str(before).unwrap();
        assert!(matches!(&env.kind, Event::FileTouch { model: None, .. }));
        assert_eq!(serde_json::to_string(&env).unwrap(), before);
    }

    #[test]
    fn an_excerpt_keeps_a_long_outputs_head_and_tail_and_a_short_one_whole() {
        assert_eq!(excerpt("ok\n"), "ok\n");
        let mut long = "é".repeat(EXCERPT_SIDE);
        long.push_str(&"middle ".repeat(1000));
        long.push_str("error[E0502] at the end");
        let e = excerpt(&long);
        assert!(e.len() <= 2 * EXCERPT_SIDE + EXCERPT_GAP.len());
        assert!(e.starts_with("éé"));
        assert!(e.ends_with("error[E0502] at the end"));
        assert!(e.contains(EXCERPT_GAP));
        assert!(e.len() < long.len() / 2, "the middle is left out");
    }
}
