//! A run of one session's steps, with the subagents those steps started: what `peat diff`
//! shows the net change of, and what `peat restore --session`/`--turn` puts back.
//!
//! A subagent's edits are its parent's work (a Task the parent called, a Codex thread it
//! spawned), so they belong to the span that started it, as `peat log` places them.

use serde::Serialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::reads::files::FileEdit;
use crate::reads::log::{SessionLog, session_log};
use crate::views::{ViewError, Views};
use crate::vocab::event::{Event, EventId, Seq, SessionId};

/// The steps of one session asked about: seqs `from` to `to`, inclusive, either end open,
/// with the subagents those steps started, whose edits are the span's too.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Span {
    pub(crate) session: SessionId,
    pub(crate) from: Option<Seq>,
    pub(crate) to: Option<Seq>,
    /// The subagents (and theirs) placed under a step of the span, as `peat log` places them;
    /// with the start open, those started before the session's first step too.
    pub(crate) subagents: BTreeSet<SessionId>,
}

impl Span {
    /// Steps `from` to `to` of `session`, with the subagents they started.
    pub(crate) fn of(
        views: &Views,
        session: SessionId,
        from: Option<Seq>,
        to: Option<Seq>,
    ) -> Result<Span, ViewError> {
        let log = session_log(views, &session)?;
        let within = |seq: Seq| from.is_none_or(|f| seq >= f) && to.is_none_or(|t| seq <= t);
        let mut subagents = BTreeSet::new();
        let started = log.entries.iter().filter(|e| within(e.seq));
        for sub in started.flat_map(|e| &e.subagents) {
            with_subagents(sub, &mut subagents);
        }
        if from.is_none() {
            for sub in &log.unplaced_subagents {
                with_subagents(sub, &mut subagents);
            }
        }
        Ok(Span {
            session,
            from,
            to,
            subagents,
        })
    }

    /// Every step of `session`, and every subagent it started.
    pub(crate) fn whole(views: &Views, session: SessionId) -> Result<Span, ViewError> {
        Span::of(views, session, None, None)
    }

    /// The turn of `session` that holds `seq`: the last prompt at or before it (the session's
    /// start when none) up to the step before the next prompt (its end when none).
    pub(crate) fn turn(views: &Views, session: SessionId, seq: Seq) -> Result<Span, ViewError> {
        let prompts = views
            .tables
            .session(&session)?
            .map(|r| r.prompt_seqs)
            .unwrap_or_default();
        let from = prompts.range(..=seq.0).next_back().map(|s| Seq(*s));
        let to = prompts.range(seq.0 + 1..).next().map(|next| Seq(next - 1));
        Span::of(views, session, from, to)
    }

    /// Whether `seq` of the span's own session falls inside it.
    fn within(&self, seq: Seq) -> bool {
        self.from.is_none_or(|f| seq >= f) && self.to.is_none_or(|t| seq <= t)
    }

    /// Whether the edit is one of the span's: a step of it, or a subagent's.
    pub(crate) fn holds(&self, e: &FileEdit) -> bool {
        (e.session == self.session && self.within(e.seq)) || self.subagents.contains(&e.session)
    }

    /// Whether `session` is the span's own or one of its subagents.
    pub(crate) fn is_its(&self, session: &SessionId) -> bool {
        *session == self.session || self.subagents.contains(session)
    }

    /// The span's first event: the moment it started. `None` when it holds no event.
    pub(crate) fn first(&self, views: &Views) -> Result<Option<EventId>, ViewError> {
        for row in views.tables.envelopes(Some(&self.session)) {
            let (id, _) = row?;
            if self.within(id.seq) {
                return Ok(Some(id));
            }
        }
        Ok(None)
    }

    /// The files the span's steps and its subagents touched (failed touches left out),
    /// absolute (a relative path is its session's directory's), each once, in the order
    /// first touched: the session's own, then each subagent's.
    pub(crate) fn touched(&self, views: &Views) -> Result<Vec<PathBuf>, ViewError> {
        let own = views.tables.session(&self.session)?.and_then(|r| r.cwd);
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for session in std::iter::once(&self.session).chain(&self.subagents) {
            let cwd = match session == &self.session {
                true => own.clone(),
                false => views.tables.session(session)?.and_then(|r| r.cwd),
            };
            let root = cwd.or_else(|| own.clone()).map(PathBuf::from);
            for row in views.tables.envelopes(Some(session)) {
                let (id, env) = row?;
                if session == &self.session && !self.within(id.seq) {
                    continue;
                }
                let Event::FileTouch {
                    path,
                    more,
                    failed: false,
                    ..
                } = &env.kind
                else {
                    continue;
                };
                for p in std::iter::once(path).chain(more.iter().map(|m| &m.path)) {
                    let p = Path::new(p);
                    let abs = match (&root, p.is_absolute()) {
                        (Some(root), false) => root.join(p),
                        _ => p.to_path_buf(),
                    };
                    if seen.insert(abs.clone()) {
                        out.push(abs);
                    }
                }
            }
        }
        Ok(out)
    }
}

/// `log`'s session and every subagent nested in it, into `out`.
fn with_subagents(log: &SessionLog, out: &mut BTreeSet<SessionId>) {
    out.insert(log.session.clone());
    let nested = log.entries.iter().flat_map(|e| &e.subagents);
    for sub in nested.chain(&log.unplaced_subagents) {
        with_subagents(sub, out);
    }
}
