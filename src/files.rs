//! The recorded edits of a file: which recorded paths a path on this disk names, the edits
//! made to them in ledger order, what each wrote, and the prompt each edit answered.
//!
//! Paths are recorded absolute, as the agent saw them. A path names its exact recording
//! first (a prefix scan of the files view); failing that, its path relative to the repository
//! root matched as a suffix, which finds edits made in another checkout of the same
//! repository, or of a file that no longer exists here.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

use crate::change::{BlobId, Change};
use crate::event::{Event, EventId, Seq, SessionId, TouchOp};
use crate::ledger::Ledger;
use crate::views::rows::{TextKind, TextRow};
use crate::views::tables::Table;
use crate::views::{ViewError, Views};

/// What a path given on the command line is, relative to the record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wanted {
    /// The absolute path (canonical where it exists).
    pub abs: String,
    /// The same path relative to the repository root, when it lies inside it.
    pub rel: Option<String>,
    /// Everything under it is wanted (a directory).
    pub dir: bool,
}

/// One recorded edit of a file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FileEdit {
    pub session: SessionId,
    pub seq: u32,
    pub ts_ms: i64,
    pub op: TouchOp,
    /// The path as the agent recorded it.
    pub path: String,
    /// The tool reported an error: the edit was not applied.
    pub failed: bool,
    /// What the edit wrote, in the blob store.
    #[serde(skip)]
    pub change: Option<BlobId>,
}

impl FileEdit {
    pub fn id(&self) -> EventId {
        EventId {
            session: self.session.clone(),
            seq: Seq(self.seq),
        }
    }
}

/// The recorded paths `wanted` names: its exact recording (or those under it), else those
/// whose tail is its repository-relative path.
pub fn recorded_paths(views: &Views, wanted: &Wanted) -> Result<BTreeSet<String>, ViewError> {
    if !wanted.dir && !views.tables.touches_of(&wanted.abs)?.is_empty() {
        return Ok(BTreeSet::from([wanted.abs.clone()]));
    }
    let abs = wanted.abs.trim_end_matches('/');
    let mut exact = BTreeSet::new();
    let mut suffix = BTreeSet::new();
    for (_, rollup) in views.tables.all_sessions()? {
        for p in rollup.files.keys() {
            if *p == wanted.abs || (wanted.dir && p.starts_with(&format!("{abs}/"))) {
                exact.insert(p.clone());
            } else if let Some(rel) = &wanted.rel {
                let tail = format!("/{rel}");
                if p.ends_with(&tail) || (wanted.dir && p.contains(&format!("{tail}/"))) {
                    suffix.insert(p.clone());
                }
            }
        }
    }
    Ok(if exact.is_empty() { suffix } else { exact })
}

/// Every recorded edit of `paths`, in ledger order (by time, then session and seq).
pub fn edits_of(
    ledger: &Ledger,
    views: &Views,
    paths: &BTreeSet<String>,
) -> Result<Vec<FileEdit>, ViewError> {
    let mut out = Vec::new();
    for p in paths {
        for id in views.tables.touches_of(p)? {
            let Some(env) = ledger.get(&id)? else {
                continue;
            };
            let Event::FileTouch {
                path: first,
                op,
                change,
                failed,
                more,
            } = &env.kind
            else {
                continue;
            };
            let (op, change) = if first == p {
                (*op, *change)
            } else {
                more.iter()
                    .find(|t| &t.path == p)
                    .map_or((*op, None), |t| (t.op, t.change))
            };
            out.push(FileEdit {
                session: id.session,
                seq: id.seq.0,
                ts_ms: env.ts_ms,
                op,
                path: p.clone(),
                failed: *failed,
                change,
            });
        }
    }
    out.sort_by(|a, b| (a.ts_ms, &a.session, a.seq).cmp(&(b.ts_ms, &b.session, b.seq)));
    Ok(out)
}

/// What an edit wrote, from the blob store. `None` when it recorded no change or the blob
/// does not parse (an edit from before changes were kept).
pub fn change_of(ledger: &Ledger, edit: &FileEdit) -> Result<Option<Change>, ViewError> {
    let Some(id) = edit.change else {
        return Ok(None);
    };
    Ok(ledger
        .blob(&id)?
        .and_then(|bytes| serde_json::from_slice(&bytes).ok()))
}

/// A prompt, as an edit's reason.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prompt {
    pub seq: u32,
    pub ts_ms: i64,
    pub text: String,
}

/// The person's prompts of each session asked about, read once from the texts view.
#[derive(Default)]
pub struct Prompts {
    by_session: BTreeMap<SessionId, Vec<Prompt>>,
}

impl Prompts {
    /// The prompt the event at `seq` of `session` answered: the person's last prompt before it
    /// in that session.
    pub fn answered_by(
        &mut self,
        views: &Views,
        session: &SessionId,
        seq: u32,
    ) -> Result<Option<Prompt>, ViewError> {
        if !self.by_session.contains_key(session) {
            let mut prefix = session.as_str().as_bytes().to_vec();
            prefix.push(0);
            let mut prompts = Vec::new();
            for row in views.tables.scan(Table::Texts, &prefix) {
                let (key, value) = row?;
                let Some(id) = crate::ledger::decode_event_key(&key) else {
                    continue;
                };
                let Ok(text) = serde_json::from_slice::<TextRow>(&value) else {
                    continue;
                };
                if text.kind == TextKind::User {
                    prompts.push(Prompt {
                        seq: id.seq.0,
                        ts_ms: text.ts_ms,
                        text: text.text,
                    });
                }
            }
            self.by_session.insert(session.clone(), prompts);
        }
        let prompts = &self.by_session[session];
        let before = prompts.partition_point(|p| p.seq < seq);
        Ok(before.checked_sub(1).map(|i| prompts[i].clone()))
    }
}
