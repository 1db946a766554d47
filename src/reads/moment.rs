//! The file as it stood at a moment: the repository's file at the last commit before the
//! moment (git or jj, read-only), with the recorded edits made after that commit and up to the
//! moment applied in order ([`crate::reads::blame::blame_at`] builds it). It never holds a line
//! written later; the lines neither the record nor the repository can settle are uncertain.
//!
//! `peat blame --at` shows it line by line, `peat restore` writes it back. The caller names
//! the file by its recorded paths (earlier names after a rename included, when it wants them)
//! and the moment already parsed, its session resolved: spelling a moment is the command
//! line's.

use std::collections::BTreeSet;

use crate::reads::blame::{Blame, LineOrigin, Placement, Record, blame_at};
use crate::reads::files::{FileEdit, applied_changes};
use crate::reads::vcs::FileHistory;
use crate::views::source::EventSource;
use crate::views::{ViewError, Views};
use crate::vocab::change::Change;
pub(crate) use crate::vocab::event::Moment;
use crate::vocab::event::{Event, EventId, SessionId};

/// A moment the views cannot place.
#[derive(Debug)]
pub(crate) enum MomentError {
    View(ViewError),
    /// The session holds no such event (or a capture has not folded it yet).
    NoEvent(EventId),
    /// The views hold no such session.
    NoSession(SessionId),
}

impl From<ViewError> for MomentError {
    fn from(e: ViewError) -> Self {
        MomentError::View(e)
    }
}

/// A moment placed on a file's record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cut {
    /// How many of the file's edits (ledger order) had happened.
    pub(crate) edits: usize,
    /// The moment, ms since the epoch (the repository's commits are read up to it).
    pub(crate) ms: i64,
}

/// A file's recorded edits that were applied (their changes kept), oldest first.
pub(crate) struct Recorded {
    pub(crate) edits: Vec<FileEdit>,
    changes: Vec<Change>,
    times: Vec<i64>,
    /// `(i, k)`: edit `i` is a restore of the file as it stood after edits `..k`.
    restores: Vec<(usize, usize)>,
}

/// The file as it stood at a moment.
#[derive(Clone, Debug)]
pub(crate) struct FileAt {
    /// Its text, `None` when it did not exist then.
    pub(crate) text: Option<String>,
    /// Each line's origin as of then, and each edit's placement (those after the moment
    /// [`Placement::Later`]).
    pub(crate) blame: Blame,
    pub(crate) cut: Cut,
}
impl FileAt {
    /// Whether the record and the repository settle every line of it.
    pub(crate) fn certain(&self) -> bool {
        !self.blame.lines.contains(&LineOrigin::Uncertain)
    }

    /// The indices (into [`Recorded::edits`]) of the edits applied to make it.
    pub(crate) fn applied(&self) -> impl Iterator<Item = usize> + '_ {
        self.blame
            .placement
            .iter()
            .enumerate()
            .filter(|(_, p)| **p == Placement::Placed)
            .map(|(i, _)| i)
    }
}

impl Recorded {
    /// The applied edits recorded under any of `paths`.
    pub(crate) fn of(views: &Views, paths: &BTreeSet<String>) -> Result<Recorded, ViewError> {
        let (edits, changes): (Vec<FileEdit>, Vec<Change>) =
            applied_changes(views, paths)?.into_iter().unzip();
        let times = edits.iter().map(|e| e.ts_ms).collect();
        let mut recorded = Recorded {
            edits,
            changes,
            times,
            restores: Vec::new(),
        };
        recorded.restores = recorded.restores(views)?;
        Ok(recorded)
    }

    /// Which edits are restores, and of which state: a restore records the moment it went
    /// back to, placed here among this file's edits. One whose moment cannot be placed (its
    /// event gone from the views) is a whole-file write like any other.
    fn restores(&self, views: &Views) -> Result<Vec<(usize, usize)>, ViewError> {
        let mut out = Vec::new();
        for (i, edit) in self.edits.iter().enumerate() {
            if !edit.session.is_restore() {
                continue;
            }
            let Some(env) = EventSource::of(views).get(&edit.id())? else {
                continue;
            };
            let Event::FileTouch {
                restores: Some(moment),
                ..
            } = env.kind
            else {
                continue;
            };
            match self.cut(views, &moment) {
                Ok(cut) if cut.edits < i => out.push((i, cut.edits)),
                Ok(_) | Err(MomentError::NoEvent(_) | MomentError::NoSession(_)) => {}
                Err(MomentError::View(e)) => return Err(e),
            }
        }
        Ok(out)
    }

    /// The edits as blame reads them.
    pub(crate) fn record(&self) -> Record<'_> {
        Record {
            changes: &self.changes,
            times: &self.times,
            restores: &self.restores,
        }
    }

    /// Where `moment` falls among the edits.
    pub(crate) fn cut(&self, views: &Views, moment: &Moment) -> Result<Cut, MomentError> {
        let by_time = |ms: i64| Cut {
            edits: self.edits.iter().filter(|e| e.ts_ms <= ms).count(),
            ms,
        };
        // An event's edits sort by (time, session, seq): the ledger order of two sessions
        // writing in the same millisecond.
        let by_event = |id: &EventId, include: bool| -> Result<Cut, MomentError> {
            let env = EventSource::of(views)
                .get(id)?
                .ok_or_else(|| MomentError::NoEvent(id.clone()))?;
            let key = (env.ts_ms, &id.session, id.seq);
            let edits = self
                .edits
                .iter()
                .filter(|e| {
                    let k = (e.ts_ms, &e.session, e.seq);
                    if include { k <= key } else { k < key }
                })
                .count();
            // Just before: a commit made in the event's own millisecond came after it.
            let ms = if include { env.ts_ms } else { env.ts_ms - 1 };
            Ok(Cut { edits, ms })
        };
        match moment {
            Moment::Instant(ms) => Ok(by_time(*ms)),
            Moment::After(id) => by_event(id, true),
            Moment::Before(id) => by_event(id, false),
            Moment::EndOf(session) => {
                let rollup = views
                    .tables
                    .session(session)?
                    .ok_or_else(|| MomentError::NoSession(session.clone()))?;
                Ok(rollup.end_ms.map_or(
                    Cut {
                        edits: 0,
                        ms: i64::MIN,
                    },
                    by_time,
                ))
            }
        }
    }

    /// The file as it stood at `moment`; `Ok(None)` when neither the record nor the
    /// repository can tell what it held. `current` is its text now (`None`: it does not
    /// exist), `past` its repository's history (`None`: no repository).
    pub(crate) fn at(
        &self,
        views: &Views,
        moment: &Moment,
        current: Option<&str>,
        past: &mut Option<FileHistory>,
    ) -> Result<Option<FileAt>, MomentError> {
        let cut = self.cut(views, moment)?;
        let Some(blame) = blame_at(current, self.record(), cut.edits, cut.ms, past) else {
            return Ok(None);
        };
        let exists = self.existed(cut, &blame, past);
        Ok(Some(FileAt {
            text: exists.then(|| blame.text.clone()),
            blame,
            cut,
        }))
    }

    /// Whether the file existed at `cut`: the later of the last edit before it and the last
    /// commit before it that changed the file says. A delete leaves no file, any other edit
    /// leaves one; a commit (or, with neither, the record undone from now) leaves one unless
    /// the text is empty: git and jj keep no empty file apart from a missing one here.
    fn existed(&self, cut: Cut, blame: &Blame, past: &Option<FileHistory>) -> bool {
        let last_edit = cut.edits.checked_sub(1);
        let commit_ms = past.as_ref().and_then(|h| h.at(cut.ms)).map(|c| c.ts_ms);
        match last_edit {
            // A commit holds the edits made within its second (as blame_at reads it).
            Some(i) if commit_ms.is_none_or(|c| self.times[i] >= c + 1000) => {
                !matches!(self.changes[i], Change::Delete)
            }
            _ => !blame.text.is_empty(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reads::files::fixture::{Store, touch};
    use crate::vocab::change::Replacement;
    use crate::vocab::event::{Seq, TouchOp};

    const FILE: &str = "/nowhere/peat-moment-test/f.txt";

    fn id(session: &str, seq: u32) -> EventId {
        EventId {
            session: SessionId(session.into()),
            seq: Seq(seq),
        }
    }

    /// s1 writes the file at 100 and edits it at 200; s2 deletes it at 300 and writes it
    /// anew at 400. No repository holds it.
    fn story() -> Store {
        let store = Store::new();
        let (one, three) = (Change::write("one\n"), Change::write("three\n"));
        let two = Change::Edit(Replacement {
            old: "one\n".into(),
            new: "two\n".into(),
            replace_all: false,
        });
        store.write(
            vec![
                ("s1", 2, 100, touch(FILE, TouchOp::Write, &one)),
                ("s1", 3, 200, touch(FILE, TouchOp::Edit, &two)),
                (
                    "s2",
                    2,
                    300,
                    touch(FILE, TouchOp::PatchDelete, &Change::Delete),
                ),
                ("s2", 4, 400, touch(FILE, TouchOp::Write, &three)),
            ],
            &[&one, &two, &Change::Delete, &three],
        );
        store
    }

    fn text_at(store: &Store, moment: Moment) -> Option<String> {
        let (_l, views) = store.open();
        let recorded = Recorded::of(&views, &BTreeSet::from([FILE.to_string()])).unwrap();
        let at = recorded
            .at(&views, &moment, Some("three\n"), &mut None)
            .unwrap()
            .unwrap();
        assert!(at.certain());
        at.text
    }

    #[test]
    fn just_before_an_event_leaves_it_out_and_just_after_takes_it_in() {
        let store = story();
        assert_eq!(
            text_at(&store, Moment::Before(id("s1", 3))),
            Some("one\n".into())
        );
        assert_eq!(
            text_at(&store, Moment::After(id("s1", 3))),
            Some("two\n".into())
        );
        assert_eq!(text_at(&store, Moment::Instant(150)), Some("one\n".into()));
        assert_eq!(
            text_at(&store, Moment::EndOf(SessionId("s1".into()))),
            Some("two\n".into())
        );
    }

    #[test]
    fn after_a_delete_the_file_did_not_exist_and_a_later_write_brings_it_back() {
        let store = story();
        assert_eq!(text_at(&store, Moment::Instant(350)), None);
        assert_eq!(text_at(&store, Moment::Before(id("s2", 4))), None);
        assert_eq!(
            text_at(&store, Moment::Instant(450)),
            Some("three\n".into())
        );
    }

    #[test]
    fn the_edits_applied_are_those_up_to_the_moment() {
        let store = story();
        let (_l, views) = store.open();
        let recorded = Recorded::of(&views, &BTreeSet::from([FILE.to_string()])).unwrap();
        let at = recorded
            .at(&views, &Moment::Instant(250), Some("three\n"), &mut None)
            .unwrap()
            .unwrap();
        assert_eq!(at.applied().collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(at.cut, Cut { edits: 2, ms: 250 });
    }

    #[test]
    fn an_event_the_session_does_not_hold_is_named() {
        let store = story();
        let (_l, views) = store.open();
        let recorded = Recorded::of(&views, &BTreeSet::from([FILE.to_string()])).unwrap();
        let err = recorded
            .cut(&views, &Moment::After(id("s1", 99)))
            .unwrap_err();
        assert!(matches!(err, MomentError::NoEvent(e) if e == id("s1", 99)));
    }
}
