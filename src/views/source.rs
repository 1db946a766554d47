//! Where a read of whole events (`show SESSION SEQ`, `events`, `blame --at SESSION:SEQ`, a
//! session's handle with a seq) reads them: the ledger when this process holds the store,
//! else the views' copy of it (the envelopes table, and what each edit wrote from the changes
//! table), which a writer beside the reader never blocks. One read path serves both.

use super::{ViewError, Views};
use crate::change::BlobId;
use crate::event::{Envelope, EventId, SessionId};
use crate::ledger::Ledger;

/// The events a read sees: the ledger itself, or the views' copy of it.
#[derive(Clone, Copy)]
pub enum EventSource<'a> {
    Ledger(&'a Ledger),
    Views(&'a Views),
}

/// A boxed iterator of events, from either source.
pub type EventIter<'a> = Box<dyn Iterator<Item = Result<(EventId, Envelope), ViewError>> + 'a>;

impl<'a> EventSource<'a> {
    /// The ledger when `ledger` holds the store lock; the views (as they stand, see
    /// [`Views::behind`]) while a writer holds it.
    pub fn of(ledger: &'a Ledger, views: &'a Views) -> EventSource<'a> {
        match ledger.is_locked() {
            true => EventSource::Ledger(ledger),
            false => EventSource::Views(views),
        }
    }

    /// The current version of the event `id`.
    pub fn get(&self, id: &EventId) -> Result<Option<Envelope>, ViewError> {
        match self {
            EventSource::Ledger(l) => Ok(l.get(id)?),
            EventSource::Views(v) => v.tables.envelope(id),
        }
    }

    /// Every event in key order (by session, then seq); with a `session`, only its events.
    pub fn events(&self, session: Option<&SessionId>) -> EventIter<'a> {
        match (*self, session) {
            (EventSource::Ledger(l), Some(s)) => {
                Box::new(l.session_events(s).map(|r| r.map_err(ViewError::from)))
            }
            (EventSource::Ledger(l), None) => {
                Box::new(l.events().map(|r| r.map_err(ViewError::from)))
            }
            (EventSource::Views(v), s) => Box::new(v.tables.envelopes(s)),
        }
    }

    /// What the edit `id` wrote to `path` (its change blob `blob`), if it was recorded.
    /// The views keep it by edit and path (the changes table), folded from the same blob.
    pub fn change(
        &self,
        id: &EventId,
        path: &str,
        blob: &BlobId,
    ) -> Result<Option<Vec<u8>>, ViewError> {
        match self {
            EventSource::Ledger(l) => Ok(l.blob(blob)?),
            EventSource::Views(v) => v.tables.change_bytes(path, id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::change::Change;
    use crate::event::{Event, Seq};
    use crate::ledger::{Access, Mode, WriteSet};
    use crate::views::ModelSlot;

    fn open(dir: &std::path::Path) -> Ledger {
        Ledger::open(
            dir,
            Access {
                mode: Mode::Create,
                wait: std::time::Duration::from_secs(5),
                who: "test",
                on_wait: &mut || {},
            },
        )
        .unwrap()
    }

    fn said(session: &SessionId, text: &str) -> Envelope {
        Envelope::new(session.clone(), 1_000, Event::Said { text: text.into() })
    }

    type Events = Vec<(EventId, Envelope)>;

    /// Everything `source` holds: every event, one session's, and what the edit wrote.
    fn read(
        source: EventSource<'_>,
        a: &SessionId,
        edit: &EventId,
        blob: &BlobId,
    ) -> (Events, Events, Option<Vec<u8>>) {
        let all = source.events(None).collect::<Result<Vec<_>, _>>().unwrap();
        let of_a = source
            .events(Some(a))
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let change = source.change(edit, "/r/f.rs", blob).unwrap();
        (all, of_a, change)
    }

    #[test]
    fn the_views_copy_of_the_events_follows_revisions_and_equals_the_ledger() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = open(dir.path());
        let (a, b) = (SessionId("a".into()), SessionId("ab".into()));
        let (blob, bytes) = Change::Write {
            content: "fn main() {}\n".into(),
        }
        .to_blob();
        let edit = EventId {
            session: a.clone(),
            seq: Seq(2),
        };
        let mut set = WriteSet::default();
        set.event(Seq(1), said(&a, "first version"));
        set.event(
            Seq(2),
            Envelope::new(
                a.clone(),
                2_000,
                Event::FileTouch {
                    path: "/r/f.rs".into(),
                    op: Default::default(),
                    change: Some(blob),
                    failed: false,
                    more: Vec::new(),
                },
            ),
        );
        set.event(Seq(1), said(&b, "another session"));
        set.blobs.push((blob, bytes.clone()));
        ledger.write(set).unwrap();
        let mut model = ModelSlot::new(None, || unreachable!("no model"));
        drop(Views::open(&ledger, &mut model, jiff::tz::TimeZone::UTC, &mut |_| {}).unwrap());
        // A revision: the views must hold the new version only.
        let mut set = WriteSet::default();
        set.event(Seq(1), said(&a, "second version"));
        ledger.write(set).unwrap();
        let views = Views::open(&ledger, &mut model, jiff::tz::TimeZone::UTC, &mut |_| {}).unwrap();

        let first = EventId {
            session: a.clone(),
            seq: Seq(1),
        };
        let held = EventSource::Views(&views).get(&first).unwrap().unwrap();
        assert_eq!(held, said(&a, "second version"));
        let from_views = read(EventSource::Views(&views), &a, &edit, &blob);
        let from_ledger = read(EventSource::Ledger(&ledger), &a, &edit, &blob);
        assert_eq!(from_views, from_ledger);
        assert_eq!(from_views.0.len(), 3);
        // A session's prefix is not another session's: "a" lists none of "ab".
        assert_eq!(from_views.1.len(), 2);
        assert_eq!(from_views.2, Some(bytes));
        let missing = EventId {
            session: b,
            seq: Seq(9),
        };
        assert_eq!(EventSource::Views(&views).get(&missing).unwrap(), None);
        // This process holds the store: reads go to the ledger itself.
        assert!(matches!(
            EventSource::of(&ledger, &views),
            EventSource::Ledger(_)
        ));
    }
}
