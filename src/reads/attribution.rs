//! A file's lines attributed to the recorded edits that wrote them, or to the commits that
//! brought them: as the file is now, as it stood at a moment, or as a commit holds it. The
//! edits recorded under the file's earlier names count too; they are looked for only when the
//! edits under its name now leave a line unexplained. `peat blame` prints the answer, `peat
//! trace` exports it as an Agent Trace record.

use serde::Serialize;
use std::collections::BTreeSet;

use crate::reads::blame::{Blame, LineOrigin, blame, blame_committed};
use crate::reads::files::{FileEdit, Wanted, edits_of, recorded_paths, under_names};
use crate::reads::moment::{Moment, MomentError, Recorded};
use crate::reads::vcs::{Committed, FileHistory};
use crate::views::{ViewError, Views};

/// Which state of the file is attributed.
#[derive(Clone, Copy, Debug)]
pub(crate) enum When<'a> {
    /// As it is now, with this text.
    Now(&'a str),
    /// As it stood at a moment, with its text now (`None`: it no longer exists).
    At(&'a Moment, Option<&'a str>),
    /// As a commit holds it.
    Committed(&'a Committed),
}

/// A file's lines with their origins, and the edits they name.
#[derive(Clone, Debug)]
pub(crate) struct Attributed {
    /// The recorded paths whose edits were read (earlier names included when they were).
    pub(crate) paths: BTreeSet<String>,
    /// The applied edits, oldest first: [`LineOrigin::Edit`] indexes them.
    pub(crate) edits: Vec<FileEdit>,
    pub(crate) blame: Blame,
    /// When the record of this file begins: its first recorded edit. A commit before it is
    /// from before the record.
    record_starts_ms: i64,
}

impl Attributed {
    /// What line `n` (from 1) of the attributed text came from, in words a reader can act on.
    pub(crate) fn origin(&self, n: usize) -> Origin {
        Origin::of(self.blame.lines[n - 1], self)
    }
}

/// Why a file's lines cannot be attributed.
#[derive(Debug)]
pub(crate) enum AttributionError {
    View(ViewError),
    /// The moment asked cannot be placed.
    Moment(MomentError),
    /// Neither the record nor the repository can tell what the file held at the moment asked.
    Unknowable,
}

impl From<ViewError> for AttributionError {
    fn from(e: ViewError) -> Self {
        AttributionError::View(e)
    }
}

/// What a line's origin is, in words a reader can act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Origin {
    /// A recorded edit wrote it.
    Edit,
    /// A commit made before the first recorded edit of the file brought it.
    BeforeRecord,
    /// A commit made since brought it, and no recorded edit wrote it.
    CommittedByHand,
    /// Changed by hand and not committed.
    Uncommitted,
    /// No recorded edit wrote it, and no repository says who did.
    Unexplained,
    /// Neither the record nor the repository settles it, as of the moment asked.
    Uncertain,
}

impl Origin {
    pub(crate) fn of(origin: LineOrigin, attributed: &Attributed) -> Origin {
        match origin {
            LineOrigin::Edit(_) => Origin::Edit,
            LineOrigin::Commit(c)
                if attributed.blame.commits[c].ts_ms < attributed.record_starts_ms =>
            {
                Origin::BeforeRecord
            }
            LineOrigin::Commit(_) => Origin::CommittedByHand,
            LineOrigin::Uncommitted => Origin::Uncommitted,
            LineOrigin::Unexplained => Origin::Unexplained,
            LineOrigin::Uncertain => Origin::Uncertain,
        }
    }
}

/// The lines of the file `wanted` names, as of `when`, each with the recorded edit that last
/// wrote it or the commit that brought it; `Ok(None)` when no recorded edit touched the file.
/// `past` is its repository's history (`None`: no repository).
pub(crate) fn attribute(
    views: &Views,
    wanted: &Wanted,
    past: &mut Option<FileHistory>,
    when: When<'_>,
) -> Result<Option<Attributed>, AttributionError> {
    let mut paths = recorded_paths(views, wanted)?;
    let first = attribute_under(views, &paths, past, when);
    let explained = matches!(&first, Ok(Some((_, b))) if b.lines.iter().all(|l| matches!(l, LineOrigin::Edit(_))));
    // The file's edits under the names it had before a rename count too. They are looked
    // for (two git or jj processes, most of a blame's time) only when the edits under its
    // name now leave a line unexplained: the last edit to write a line is what blame names,
    // and edits under an earlier name came before every edit under this one. The names come
    // from the file's history, whose one walk of the renames also reads its past under them.
    let attributed = if explained {
        first
    } else {
        let known = paths.len();
        let names = past
            .as_ref()
            .map(FileHistory::earlier_names)
            .unwrap_or_default();
        paths.extend(under_names(views, names)?);
        match paths.len() > known {
            true => attribute_under(views, &paths, past, when),
            false => first,
        }
    };
    Ok(attributed?.map(|(edits, blame)| Attributed {
        paths,
        record_starts_ms: edits.iter().map(|e| e.ts_ms).min().unwrap_or(i64::MAX),
        edits,
        blame,
    }))
}

/// [`attribute`] from the edits recorded under `paths`.
fn attribute_under(
    views: &Views,
    paths: &BTreeSet<String>,
    past: &mut Option<FileHistory>,
    when: When<'_>,
) -> Result<Option<(Vec<FileEdit>, Blame)>, AttributionError> {
    let recorded = Recorded::of(views, paths)?;
    // Edits recorded before their changes were kept explain no line, but they did happen.
    if recorded.edits.is_empty() && !edits_of(views, paths)?.iter().any(|e| !e.failed) {
        return Ok(None);
    }
    let blame = match when {
        When::Now(current) => blame(current, recorded.record(), past),
        When::At(moment, current) => {
            recorded
                .at(views, moment, current, past)
                .map_err(AttributionError::Moment)?
                .ok_or(AttributionError::Unknowable)?
                .blame
        }
        When::Committed(then) => blame_committed(then, recorded.record(), past),
    };
    Ok(Some((recorded.edits, blame)))
}
