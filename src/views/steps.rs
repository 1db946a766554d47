//! The steps of a session as its log shows them, made by the views' fold from each event:
//! a log is then a prefix scan of the steps table (see [`crate::reads::log`]).

use serde::{Deserialize, Serialize};

use crate::views::ViewError;
use crate::vocab::change::BlobId;
use crate::vocab::diff::Size;
use crate::vocab::event::{Event, TouchOp, Vcs};

/// What one step of a session was.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Step {
    /// The person's prompt (or, with `harness`, text the harness sent in their place).
    Prompt { text: String, harness: bool },
    /// A tool call: its name, what it was given, and whether it failed.
    Tool {
        tool: String,
        detail: String,
        ok: bool,
        /// The subagent the call started (see [`Event::ToolCall`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    /// A file an edit changed, with the size of the change and the model that made it
    /// (where the harness says).
    Edit {
        path: String,
        op: TouchOp,
        failed: bool,
        #[serde(flatten)]
        size: Size,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    Commit {
        vcs: Option<Vcs>,
        hash: String,
        message: String,
    },
    /// What the agent said last in a turn.
    Closing { text: String },
    /// The context window was compacted here.
    Compaction,
    /// A claim deposited with `peat obs`.
    Obs { subject: String, text: String },
}

/// The steps one event makes (a multi-file edit makes one per file, each sized by `size`
/// from the change it names); none for events the log leaves out (the session's metadata,
/// mid-turn narration).
pub(crate) fn steps_of(
    event: &Event,
    size: impl Fn(&Option<BlobId>) -> Result<Size, ViewError>,
) -> Result<Vec<Step>, ViewError> {
    let one = |s| Ok(vec![s]);
    match event {
        Event::UserMsg { text, harness, .. } => one(Step::Prompt {
            text: text.clone(),
            harness: *harness,
        }),
        Event::ToolCall {
            tool,
            detail,
            ok,
            agent,
        } => one(Step::Tool {
            tool: tool.clone(),
            detail: detail.clone(),
            ok: *ok,
            agent: agent.clone(),
        }),
        Event::FileTouch {
            path,
            op,
            change,
            failed,
            more,
            model,
            ..
        } => {
            let mut steps = vec![Step::Edit {
                path: path.clone(),
                op: *op,
                failed: *failed,
                size: size(change)?,
                model: model.clone(),
            }];
            for t in more {
                steps.push(Step::Edit {
                    path: t.path.clone(),
                    op: t.op,
                    failed: *failed,
                    size: size(&t.change)?,
                    model: model.clone(),
                });
            }
            Ok(steps)
        }
        Event::Committed {
            vcs, hash, message, ..
        } => one(Step::Commit {
            vcs: Some(*vcs),
            hash: hash.clone(),
            message: message.clone(),
        }),
        Event::Commit { hash, message } if !hash.is_empty() => one(Step::Commit {
            vcs: None,
            hash: hash.clone(),
            message: message.clone(),
        }),
        Event::FinalMsg { text } => one(Step::Closing { text: text.clone() }),
        Event::Compaction {} => one(Step::Compaction),
        Event::Obs { subject, text, .. } => one(Step::Obs {
            subject: subject.clone(),
            text: text.clone(),
        }),
        _ => Ok(Vec::new()),
    }
}
