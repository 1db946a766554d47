//! What a restore would write, and what a restore did.
//!
//! A restore puts a file back as it stood at a moment ([`crate::reads::moment`]). Before it
//! writes, the file's content now is checked against the record: lines no recorded edit or
//! commit explains were written by a person or a shell command the record does not hold, and
//! a restore would lose them. The bytes before are stored once: the ledger keeps a blob it
//! already holds as it is. A restore is recorded as a session of its own (its id begins
//! [`RESTORE_PREFIX`](crate::vocab::event::RESTORE_PREFIX)): its command as the prompt, then
//! per file a `restore` tool call, whose output's blob holds the file's bytes before it
//! exactly, and the file touch that wrote it (a whole write, what it replaced included, or a
//! delete), naming the moment it went back to. So blame gives a restored line the origin it
//! had at that moment, `peat log` and `peat FILE` list the restore, and an undo reads back
//! the bytes.

use std::path::PathBuf;

use crate::reads::blame::{LineOrigin, blame};
use crate::reads::files::{FileEdit, Wanted, recorded_paths, under_names};
use crate::reads::moment::{Moment, MomentError, Recorded};
use crate::reads::vcs::FileHistory;
use crate::views::{ViewError, Views};
use crate::vocab::change::{BlobId, Change};
use crate::vocab::event::{Event, EventId, SessionId};

/// The tool name of a restore's tool calls.
pub(crate) const TOOL: &str = "restore";

/// One file's restore: what it holds now and what it held at the moment.
#[derive(Clone, Debug)]
pub(crate) struct FilePlan {
    /// Absolute.
    pub(crate) path: PathBuf,
    /// Its bytes now; `None`: there is no file.
    pub(crate) now: Option<Vec<u8>>,
    /// Its bytes as restored; `None`: there was no file.
    pub(crate) then: Option<Vec<u8>>,
    /// Whether the record and the repository settle every line of `then`.
    pub(crate) certain: bool,
    /// The lines of the file now (1-based, with their text) that no recorded edit or commit
    /// explains: a restore would lose them.
    pub(crate) unexplained: Vec<(usize, String)>,
    /// The recorded edits applied to make `then`.
    pub(crate) applied: Vec<FileEdit>,
    /// The recorded edits of the file made after the moment.
    pub(crate) later: Vec<FileEdit>,
    /// The moment `then` is the file at: what the restore records it went back to.
    pub(crate) to: Moment,
}

/// Why a file cannot be planned.
#[derive(Debug)]
pub(crate) enum PlanError {
    Moment(MomentError),
    /// It is not UTF-8 text: blame and restore read text.
    NotText,
    /// No recorded edit touched it.
    NoRecord,
    /// Neither the record nor the repository can tell what it held then.
    Unknown,
}

impl From<ViewError> for PlanError {
    fn from(e: ViewError) -> Self {
        PlanError::Moment(MomentError::View(e))
    }
}

impl From<MomentError> for PlanError {
    fn from(e: MomentError) -> Self {
        PlanError::Moment(e)
    }
}

/// The file `wanted` names, now and as it stood at `moment`. Its edits recorded under the
/// names it had before a rename count too.
pub(crate) fn plan_file(
    views: &Views,
    wanted: &Wanted,
    moment: &Moment,
) -> Result<FilePlan, PlanError> {
    let path = PathBuf::from(&wanted.abs);
    let now = match std::fs::read(&path) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(_) => return Err(PlanError::NotText),
    };
    let text = match &now {
        Some(bytes) => Some(
            std::str::from_utf8(bytes)
                .map_err(|_| PlanError::NotText)?
                .to_string(),
        ),
        None => None,
    };
    let mut past = FileHistory::of(&path);
    let mut paths = recorded_paths(views, wanted)?;
    let earlier = past
        .as_ref()
        .map(FileHistory::earlier_names)
        .unwrap_or_default();
    paths.extend(under_names(views, earlier)?);
    let recorded = Recorded::of(views, &paths)?;
    if recorded.edits.is_empty() {
        return Err(PlanError::NoRecord);
    }
    let unexplained = match &text {
        Some(text) => unexplained(text, &recorded, &mut past),
        None => Vec::new(),
    };
    let at = recorded
        .at(views, moment, text.as_deref(), &mut past)?
        .ok_or(PlanError::Unknown)?;
    Ok(FilePlan {
        certain: at.certain(),
        applied: at.applied().map(|i| recorded.edits[i].clone()).collect(),
        then: at.text.map(String::into_bytes),
        later: recorded.edits[at.cut.edits..].to_vec(),
        path,
        now,
        unexplained,
        to: moment.clone(),
    })
}

/// The lines of `text` that neither a recorded edit nor a commit explains.
fn unexplained(
    text: &str,
    recorded: &Recorded,
    past: &mut Option<FileHistory>,
) -> Vec<(usize, String)> {
    let b = blame(text, recorded.record(), past);
    b.text
        .split_inclusive('\n')
        .zip(&b.lines)
        .enumerate()
        .filter(|(_, (_, o))| matches!(o, LineOrigin::Uncommitted | LineOrigin::Unexplained))
        .map(|(i, (l, _))| (i + 1, l.trim_end_matches('\n').to_string()))
        .collect()
}

/// One file a restore wrote.
#[derive(Clone, Debug)]
pub(crate) struct RestoredFile {
    pub(crate) path: PathBuf,
    /// The blob holding its bytes before; `None`: there was no file.
    pub(crate) before: Option<BlobId>,
    /// What the restore left; `None`: no file.
    pub(crate) after: Option<String>,
    /// The touch that wrote it: an undo goes back to just before it.
    pub(crate) touch: EventId,
}

/// The restores recorded, oldest first.
pub(crate) fn restores(views: &Views) -> Result<Vec<SessionId>, ViewError> {
    let mut all: Vec<(i64, SessionId)> = Vec::new();
    for (id, rollup) in views.tables.all_sessions()? {
        if id.is_restore() {
            all.push((rollup.end_ms.unwrap_or(i64::MIN), id));
        }
    }
    all.sort();
    Ok(all.into_iter().map(|(_, id)| id).collect())
}

/// The files the restore recorded as `session` wrote; `None` when it is not a restore.
pub(crate) fn restored(
    views: &Views,
    session: &SessionId,
) -> Result<Option<Vec<RestoredFile>>, ViewError> {
    if !session.is_restore() {
        return Ok(None);
    }
    let mut out = Vec::new();
    let mut before = None;
    for row in views.tables.envelopes(Some(session)) {
        let (id, env) = row?;
        match env.kind {
            Event::ToolCall { .. } => before = None,
            Event::ToolOutput { output, .. } => before = output,
            Event::FileTouch {
                path,
                change: Some(_),
                ..
            } => {
                let after = match views
                    .tables
                    .change_bytes(&path, &id)?
                    .and_then(|b| serde_json::from_slice::<Change>(&b).ok())
                {
                    Some(Change::Write { content, .. }) => Some(content),
                    _ => None,
                };
                out.push(RestoredFile {
                    path: PathBuf::from(path),
                    before: before.take(),
                    after,
                    touch: id,
                });
            }
            _ => {}
        }
    }
    Ok(Some(out))
}
