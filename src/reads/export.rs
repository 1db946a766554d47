//! A session as a transcript to hand on (a pull request, an issue): the person's prompts, the
//! agent's prose and closing messages, each tool call with what it printed, each edit with
//! what it wrote, compactions, and the commits the session made, in the order they happened.
//!
//! Read from the views as every answer is, so it holds only what the store holds: redacted
//! before it was written. The harness's own words (caveats, reminders, injected context) are
//! left out: they are not the conversation. The subagents the span started are named, each
//! exported on its own.

use serde::Serialize;

use crate::reads::commits::{MadeCommit, made_by};
use crate::reads::span::Span;
use crate::views::source::EventSource;
use crate::views::{ViewError, Views};
use crate::vocab::change::{BlobId, Change};
use crate::vocab::event::{Agent, Event, EventId, Seq, SessionId, TouchOp};

/// One session's transcript, or the part of it between two seqs.
#[derive(Debug, Serialize)]
pub(crate) struct Transcript {
    pub(crate) session: SessionId,
    pub(crate) agent: Option<Agent>,
    pub(crate) cwd: Option<String>,
    pub(crate) branch: Option<String>,
    pub(crate) start_ms: Option<i64>,
    pub(crate) end_ms: Option<i64>,
    /// The session that started this one, for a subagent.
    pub(crate) parent: Option<SessionId>,
    /// The part asked for: seqs `from` to `to`, inclusive, either end open.
    pub(crate) from: Option<Seq>,
    pub(crate) to: Option<Seq>,
    pub(crate) items: Vec<Item>,
    /// The commits made in the session (as `peat COMMIT` answers for each), whole sessions
    /// only: a part lists those its own commit commands printed, as items.
    pub(crate) commits: Vec<MadeCommit>,
    /// The subagents the part started, each its own transcript.
    pub(crate) subagents: Vec<SessionId>,
}

/// One moment of the conversation.
#[derive(Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Item {
    Prompt {
        seq: Seq,
        ts_ms: i64,
        text: String,
    },
    Said {
        seq: Seq,
        ts_ms: i64,
        text: String,
    },
    /// The turn's last words.
    Closing {
        seq: Seq,
        ts_ms: i64,
        text: String,
    },
    Call {
        seq: Seq,
        ts_ms: i64,
        tool: String,
        detail: String,
        ok: bool,
        /// What it printed (its head and tail when long).
        output: Option<String>,
        edits: Vec<Edit>,
    },
    Compaction {
        seq: Seq,
        ts_ms: i64,
        summary: Option<String>,
    },
    /// A commit the session's own command printed.
    Commit {
        seq: Seq,
        ts_ms: i64,
        hash: String,
        message: String,
    },
}

/// A file a call changed, and what it wrote as a unified diff (when recorded).
#[derive(Debug, Serialize)]
pub(crate) struct Edit {
    pub(crate) path: String,
    pub(crate) op: TouchOp,
    pub(crate) failed: bool,
    pub(crate) diff: Option<String>,
    /// The model that made it, where the harness says.
    pub(crate) model: Option<String>,
}

impl Transcript {
    /// `session`'s transcript from seq `from` to `to` (inclusive, either end open). `here`
    /// is where the person asks, whose repository may hold the session's commits.
    pub(crate) fn of(
        views: &Views,
        session: SessionId,
        (from, to): (Option<Seq>, Option<Seq>),
        here: Option<&std::path::Path>,
    ) -> Result<Transcript, ViewError> {
        let rollup = views.tables.session(&session)?.unwrap_or_default();
        let span = Span::of(views, session.clone(), from, to)?;
        let within = |seq: Seq| from.is_none_or(|f| seq >= f) && to.is_none_or(|t| seq <= t);
        let source = EventSource::of(views);
        let mut items: Vec<Item> = Vec::new();
        for found in source.events(Some(&session)) {
            let (id, envelope) = found?;
            if !within(id.seq) {
                continue;
            }
            item(&source, &id, envelope.ts_ms, envelope.kind, &mut items)?;
        }
        let commits = match (from, to) {
            (None, None) => made_by(views, std::slice::from_ref(&session), here)?
                .of(&session)
                .to_vec(),
            _ => Vec::new(),
        };
        Ok(Transcript {
            session,
            agent: rollup.agent,
            cwd: rollup.cwd,
            branch: rollup.branch,
            start_ms: rollup.start_ms,
            end_ms: rollup.end_ms,
            parent: rollup.parent,
            from,
            to,
            items,
            commits,
            subagents: span.subagents.into_iter().collect(),
        })
    }
}

/// Add what `event` says to `items`: most kinds are an item of their own; an edit and what a
/// call printed belong to the call before them.
fn item(
    source: &EventSource<'_>,
    id: &EventId,
    ts_ms: i64,
    event: Event,
    items: &mut Vec<Item>,
) -> Result<(), ViewError> {
    let seq = id.seq;
    match event {
        Event::UserMsg {
            text,
            harness: false,
            ..
        } => items.push(Item::Prompt { seq, ts_ms, text }),
        Event::Said { text } => items.push(Item::Said { seq, ts_ms, text }),
        Event::FinalMsg { text } => items.push(Item::Closing { seq, ts_ms, text }),
        Event::ToolCall {
            tool, detail, ok, ..
        } => items.push(Item::Call {
            seq,
            ts_ms,
            tool,
            detail,
            ok,
            output: None,
            edits: Vec::new(),
        }),
        Event::ToolOutput { call, excerpt, .. } => {
            if let Some(Item::Call { output, .. }) = call_at(items, call) {
                *output = Some(excerpt);
            }
        }
        Event::FileTouch {
            path,
            op,
            change,
            failed,
            more,
            model,
            ..
        } => {
            let mut edits = vec![edit(source, id, (path, op, change), failed, &model)?];
            for t in more {
                edits.push(edit(source, id, (t.path, t.op, t.change), failed, &model)?);
            }
            match items.last_mut() {
                Some(Item::Call { edits: of_call, .. }) => of_call.extend(edits),
                // An edit no call was recorded for (a restore's): a call of its own.
                _ => items.push(Item::Call {
                    seq,
                    ts_ms,
                    tool: "edit".into(),
                    detail: edits[0].path.clone(),
                    ok: !failed,
                    output: None,
                    edits,
                }),
            }
        }
        Event::Compaction {} => items.push(Item::Compaction {
            seq,
            ts_ms,
            summary: None,
        }),
        Event::CompactSummary { text } => match items.last_mut() {
            Some(Item::Compaction { summary, .. }) if summary.is_none() => *summary = Some(text),
            _ => items.push(Item::Compaction {
                seq,
                ts_ms,
                summary: Some(text),
            }),
        },
        Event::Committed { hash, message, .. } => items.push(Item::Commit {
            seq,
            ts_ms,
            hash,
            message,
        }),
        // The harness's words, where and on what it ran, notes deposited later, and the
        // retired kinds: not the conversation.
        _ => {}
    }
    Ok(())
}

/// The call item at `seq`, searched from the newest (its output follows it closely).
fn call_at(items: &mut [Item], seq: Seq) -> Option<&mut Item> {
    items
        .iter_mut()
        .rev()
        .find(|i| matches!(i, Item::Call { seq: s, .. } if *s == seq))
}

/// One file of an edit, with its diff when what it wrote was recorded.
fn edit(
    source: &EventSource<'_>,
    id: &EventId,
    (path, op, change): (String, TouchOp, Option<BlobId>),
    failed: bool,
    model: &Option<String>,
) -> Result<Edit, ViewError> {
    let diff = match change {
        Some(_) => source
            .change(id, &path)?
            .and_then(|bytes| serde_json::from_slice::<Change>(&bytes).ok())
            .map(|c| crate::vocab::diff::unified(&path, &c)),
        None => None,
    };
    Ok(Edit {
        path,
        op,
        failed,
        diff,
        model: model.clone(),
    })
}
