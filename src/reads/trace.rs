//! Attributed lines as an Agent Trace record: the open format (v0.1.0, by Cursor and
//! partners) in which tools exchange which conversation wrote which lines of a file, at which
//! revision. A file's lines are grouped into conversations (one per recorded session, one per
//! commit for lines no recorded edit wrote, one per other kind of origin), each with the line
//! ranges it accounts for, their content hashes and who contributed them. What peat adds
//! beyond the spec sits under the reverse-domain key `dev.peat`, as the spec's extensibility
//! section asks.
//!
//! The mapping from peat's origins to the spec's contributor types is the one place a reader
//! of a record learns how far to trust it:
//! - a line a recorded edit wrote is `ai` (a restore peat itself made is `unknown`: it put back
//!   lines whose writer the restore does not carry);
//! - a line blame says a person wrote (committed with no recorded edit behind it, or changed
//!   and not committed) is `human`;
//! - a line from before the record, or that neither the record nor the repository settles,
//!   is `unknown`.

use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

use crate::reads::attribution::{Attributed, Origin};
use crate::reads::blame::LineOrigin;
use crate::reads::files::Prompts;
use crate::views::{ViewError, Views};
use crate::vocab::event::{Agent, SessionId, Vcs};

/// The version of the Agent Trace specification the records follow.
pub(crate) const SPEC_VERSION: &str = "0.1.0";

/// One file to trace.
pub(crate) struct Traced<'a> {
    /// Relative to the repository's root (or the path as it was asked for, outside one).
    pub(crate) path: String,
    pub(crate) attributed: &'a Attributed,
    /// Only these lines (from 1, ascending): the lines a commit added. `None`: every line.
    pub(crate) lines: Option<Vec<usize>>,
}

/// What a record says of itself, beside the files.
pub(crate) struct Header {
    /// A fresh random id.
    pub(crate) id: uuid::Uuid,
    /// When the record was made (ms since the epoch).
    pub(crate) now_ms: i64,
    /// The revision the line numbers refer to; `None` outside a repository.
    pub(crate) revision: Option<(Vcs, String)>,
    /// peat's own account of what was traced: under `metadata."dev.peat"`.
    pub(crate) detail: serde_json::Value,
}

/// An Agent Trace record (the spec's `TraceRecord`).
#[derive(Debug, Serialize)]
pub(crate) struct TraceRecord {
    version: &'static str,
    id: String,
    timestamp: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    vcs: Option<VcsRevision>,
    tool: Tool,
    files: Vec<TraceFile>,
    metadata: BTreeMap<&'static str, serde_json::Value>,
}

#[derive(Debug, Serialize)]
struct VcsRevision {
    #[serde(rename = "type")]
    kind: Vcs,
    revision: String,
}

#[derive(Debug, Serialize)]
struct Tool {
    name: &'static str,
    version: &'static str,
}

#[derive(Debug, Serialize)]
struct TraceFile {
    path: String,
    conversations: Vec<Conversation>,
}

#[derive(Debug, Serialize)]
struct Conversation {
    /// `peat://session/ID`: the session `peat show ID` reads.
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    contributor: Contributor,
    ranges: Vec<Range>,
    /// The prompts the session's edits answered, as `peat://session/ID/SEQ`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related: Vec<Related>,
    #[serde(rename = "dev.peat")]
    peat: ConversationDetail,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
struct Contributor {
    #[serde(rename = "type")]
    kind: ContributorType,
    /// The model, as models.dev names it (`provider/model`): see [`model_id`].
    #[serde(skip_serializing_if = "Option::is_none")]
    model_id: Option<String>,
}

/// The spec's contributor types, of which peat says three (never `mixed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum ContributorType {
    Ai,
    Human,
    Unknown,
}

#[derive(Debug, Serialize)]
struct Range {
    start_line: usize,
    end_line: usize,
    /// `sha256:` and the hex digest of the range's lines, each without its line break,
    /// joined by `\n`.
    content_hash: String,
    /// The range's own model, where the conversation's edits were made by more than one.
    #[serde(skip_serializing_if = "Option::is_none")]
    contributor: Option<Contributor>,
    #[serde(rename = "dev.peat", skip_serializing_if = "Option::is_none")]
    peat: Option<RangeDetail>,
}

/// The recorded edit that wrote a range.
#[derive(Debug, Serialize)]
struct RangeDetail {
    /// Its seq in the session.
    edit: u32,
    /// When it was made (RFC 3339).
    at: String,
    /// The seq of the prompt it answered, if one came before it.
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt: Option<u32>,
}

#[derive(Debug, Serialize)]
struct Related {
    #[serde(rename = "type")]
    kind: &'static str,
    url: String,
}

/// Where a conversation's lines came from, in peat's words.
#[derive(Debug, Serialize)]
struct ConversationDetail {
    origin: Origin,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<&'static str>,
    /// The command that reads the session.
    #[serde(skip_serializing_if = "Option::is_none")]
    show: Option<String>,
    /// The commit that brought the lines, and its author.
    #[serde(skip_serializing_if = "Option::is_none")]
    commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    author: Option<String>,
}

/// Which conversation a line belongs to.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Session(SessionId),
    Commit(Origin, String),
    Other(Origin),
}

/// The record of `files` (each file's lines grouped into conversations in the order they
/// first appear, each conversation's ranges maximal runs of consecutive lines from one edit,
/// or one origin).
pub(crate) fn record(
    views: &Views,
    files: &[Traced<'_>],
    header: Header,
) -> Result<TraceRecord, ViewError> {
    let mut prompts = Prompts::default();
    let mut agents: BTreeMap<SessionId, Option<Agent>> = BTreeMap::new();
    let mut traced = Vec::with_capacity(files.len());
    for file in files {
        traced.push(trace_file(views, file, &mut prompts, &mut agents)?);
    }
    Ok(TraceRecord {
        version: SPEC_VERSION,
        id: header.id.hyphenated().to_string(),
        timestamp: crate::vocab::time::format_iso_ms(header.now_ms),
        vcs: header
            .revision
            .map(|(kind, revision)| VcsRevision { kind, revision }),
        tool: Tool {
            name: "peat",
            version: env!("CARGO_PKG_VERSION"),
        },
        files: traced,
        metadata: BTreeMap::from([("dev.peat", header.detail)]),
    })
}

fn trace_file(
    views: &Views,
    file: &Traced<'_>,
    prompts: &mut Prompts,
    agents: &mut BTreeMap<SessionId, Option<Agent>>,
) -> Result<TraceFile, ViewError> {
    let a = file.attributed;
    let text: Vec<&str> = a
        .blame
        .text
        .split_inclusive('\n')
        .map(|l| l.strip_suffix('\n').unwrap_or(l))
        .collect();
    let numbers: Vec<usize> = match &file.lines {
        Some(lines) => lines
            .iter()
            .copied()
            .filter(|n| (1..=text.len()).contains(n))
            .collect(),
        None => (1..=text.len()).collect(),
    };
    // Runs of consecutive lines from one edit (or one origin), in file order.
    let mut runs: Vec<(Key, Option<usize>, usize, usize)> = Vec::new();
    for n in numbers {
        let line = a.blame.lines[n - 1];
        let (key, edit) = match line {
            LineOrigin::Edit(i) => (Key::Session(a.edits[i].session.clone()), Some(i)),
            LineOrigin::Commit(c) => (
                Key::Commit(a.origin(n), a.blame.commits[c].hash.clone()),
                None,
            ),
            _ => (Key::Other(a.origin(n)), None),
        };
        match runs.last_mut() {
            Some((k, e, _, end)) if *k == key && *e == edit && *end + 1 == n => *end = n,
            _ => runs.push((key, edit, n, n)),
        }
    }
    let mut conversations: Vec<(Key, Conversation)> = Vec::new();
    for (key, edit, start, end) in runs {
        let at = match conversations.iter().position(|(k, _)| *k == key) {
            Some(at) => at,
            None => {
                let c = conversation(views, &key, a, agents)?;
                conversations.push((key.clone(), c));
                conversations.len() - 1
            }
        };
        let conversation = &mut conversations[at].1;
        let detail = match edit {
            Some(i) => {
                let e = &a.edits[i];
                let prompt = prompts
                    .answered_by(views, &e.session, e.seq)?
                    .map(|p| p.seq.0);
                if let Some(seq) = prompt {
                    let url = format!("{}/{seq}", session_url(&e.session));
                    if !conversation.related.iter().any(|r| r.url == url) {
                        conversation.related.push(Related {
                            kind: "prompt",
                            url,
                        });
                    }
                }
                Some(RangeDetail {
                    edit: e.seq.0,
                    at: crate::vocab::time::format_iso_ms(e.ts_ms),
                    prompt,
                })
            }
            None => None,
        };
        let model = match (&key, edit) {
            (Key::Session(session), Some(i)) => a.edits[i]
                .model
                .as_deref()
                .map(|m| model_id(m, agents.get(session).copied().flatten())),
            _ => None,
        };
        conversation.ranges.push(Range {
            start_line: start,
            end_line: end,
            content_hash: content_hash(&text[start - 1..end]),
            contributor: model.map(|m| Contributor {
                kind: conversation.contributor.kind,
                model_id: Some(m),
            }),
            peat: detail,
        });
    }
    Ok(TraceFile {
        path: file.path.clone(),
        conversations: conversations
            .into_iter()
            .map(|(_, c)| c.with_one_model())
            .collect(),
    })
}

/// A conversation for `key`, with no ranges yet.
fn conversation(
    views: &Views,
    key: &Key,
    a: &Attributed,
    agents: &mut BTreeMap<SessionId, Option<Agent>>,
) -> Result<Conversation, ViewError> {
    let (contributor, url, peat) = match key {
        Key::Session(session) => {
            let agent = match agents.get(session) {
                Some(agent) => *agent,
                None => {
                    let agent = views.tables.session(session)?.and_then(|r| r.agent);
                    agents.insert(session.clone(), agent);
                    agent
                }
            };
            // A restore is peat's own session: it put lines back, it did not write them.
            let kind = match agent {
                Some(Agent::Peat) => ContributorType::Unknown,
                _ => ContributorType::Ai,
            };
            (
                kind,
                Some(session_url(session)),
                ConversationDetail {
                    session: Some(session.as_str().to_string()),
                    agent: agent.map(Agent::label),
                    show: Some(format!("peat show {}", session.as_str())),
                    ..ConversationDetail::of(Origin::Edit)
                },
            )
        }
        Key::Commit(origin, hash) => {
            let author = a
                .blame
                .commits
                .iter()
                .find(|c| c.hash == *hash)
                .map(|c| c.author.clone());
            let detail = ConversationDetail {
                commit: Some(hash.clone()),
                author,
                ..ConversationDetail::of(*origin)
            };
            (contributor_of(*origin), None, detail)
        }
        Key::Other(origin) => (
            contributor_of(*origin),
            None,
            ConversationDetail::of(*origin),
        ),
    };
    Ok(Conversation {
        url,
        contributor: Contributor {
            kind: contributor,
            model_id: None,
        },
        ranges: Vec::new(),
        related: Vec::new(),
        peat,
    })
}

impl Conversation {
    /// Where every range names the same model, the conversation names it once (the spec's
    /// reading: the conversation's contributor, overridden per range only where it differs).
    fn with_one_model(mut self) -> Conversation {
        let mut models = self
            .ranges
            .iter()
            .map(|r| r.contributor.as_ref().and_then(|c| c.model_id.clone()));
        if let Some(Some(first)) = models.next()
            && models.all(|m| m.as_ref() == Some(&first))
        {
            self.contributor.model_id = Some(first);
            for r in &mut self.ranges {
                r.contributor = None;
            }
        }
        self
    }
}

/// `model` as the models.dev convention names it (`provider/model`), as the spec asks: as
/// recorded when it names its provider (OpenCode's do), else with the provider its name or
/// its harness implies, else as recorded. At most the spec's 250 characters.
fn model_id(model: &str, agent: Option<Agent>) -> String {
    let lower = model.to_ascii_lowercase();
    let by_name = [
        ("claude", "anthropic"),
        ("gpt", "openai"),
        ("codex", "openai"),
        ("o1", "openai"),
        ("o3", "openai"),
        ("o4", "openai"),
        ("gemini", "google"),
        ("qwen", "alibaba"),
    ]
    .into_iter()
    .find(|(prefix, _)| lower.starts_with(prefix))
    .map(|(_, provider)| provider);
    let by_agent = match agent {
        Some(Agent::ClaudeCode) => Some("anthropic"),
        Some(Agent::Codex) => Some("openai"),
        Some(Agent::Gemini) => Some("google"),
        _ => None,
    };
    let id = match by_name.or(by_agent) {
        Some(provider) if !model.contains('/') => format!("{provider}/{model}"),
        _ => model.to_string(),
    };
    id.chars().take(250).collect()
}

impl ConversationDetail {
    /// Lines of `origin`, with nothing more said of them.
    fn of(origin: Origin) -> ConversationDetail {
        ConversationDetail {
            origin,
            session: None,
            agent: None,
            show: None,
            commit: None,
            author: None,
        }
    }
}

/// Who contributed a line no recorded edit wrote, as far as blame can say.
fn contributor_of(origin: Origin) -> ContributorType {
    match origin {
        Origin::Edit => ContributorType::Ai,
        Origin::CommittedByHand | Origin::Uncommitted => ContributorType::Human,
        Origin::BeforeRecord | Origin::Unexplained | Origin::Uncertain => ContributorType::Unknown,
    }
}

/// `peat://session/ID`, the id percent-encoded where it holds more than a URI's unreserved
/// characters.
fn session_url(session: &SessionId) -> String {
    let mut url = String::from("peat://session/");
    for b in session.as_str().bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            url.push(b as char);
        } else {
            url.push_str(&format!("%{b:02X}"));
        }
    }
    url
}

/// `sha256:` and the hex digest of `lines` joined by `\n`.
fn content_hash(lines: &[&str]) -> String {
    let digest = Sha256::digest(lines.join("\n").as_bytes());
    format!("sha256:{}", hex::encode(digest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_is_named_with_its_provider_as_models_dev_names_it() {
        let id = |m, a| model_id(m, a);
        assert_eq!(
            id("claude-opus-4-5-20251101", Some(Agent::ClaudeCode)),
            "anthropic/claude-opus-4-5-20251101"
        );
        assert_eq!(id("gpt-5-codex", Some(Agent::Codex)), "openai/gpt-5-codex");
        // The name says more than the harness: Cursor runs every provider's models.
        assert_eq!(
            id("gemini-2.5-pro", Some(Agent::Cursor)),
            "google/gemini-2.5-pro"
        );
        // A harness whose models are its provider's, under a name that does not say it.
        assert_eq!(id("sonnet", Some(Agent::ClaudeCode)), "anthropic/sonnet");
        // Already `provider/model` (OpenCode), or unknown: as recorded.
        assert_eq!(
            id("openrouter/qwen3-coder", Some(Agent::OpenCode)),
            "openrouter/qwen3-coder"
        );
        assert_eq!(id("mystery-1", Some(Agent::Goose)), "mystery-1");
        assert_eq!(id(&"x".repeat(300), None).len(), 250);
    }
}
