//! Where a read of whole events (`show SESSION SEQ`, `events`, `blame --at SESSION:SEQ`, a
//! session's handle with a seq, `asof`) reads them: the views' copy of the ledger (the
//! envelopes table, and what each edit wrote from the changes table; for `asof`, the
//! versions revisions replaced and the blobs they name, from the past tables). Caught up, it holds what the
//! ledger holds (the replay oracle compares it with an independent model), and opening it
//! costs a read far less than opening the ledger's database; beside a writer it answers as
//! it stands (see [`Views::behind`]), where the ledger could not be opened at all.

use super::{ViewError, Views};
use crate::vocab::change::BlobId;
use crate::vocab::event::{Envelope, Event, EventId, SessionId};

/// The events a read sees: the views' copy of the ledger's.
#[derive(Clone, Copy)]
pub(crate) struct EventSource<'a>(&'a Views);

/// An envelope read from its JSON without decoding its kind: the kind's bytes as the views
/// hold them. The views wrote them with this binary, by encoding the decoded kind, so they
/// are what encoding it again would give; a change to how a kind encodes bumps
/// `VIEW_SCHEMA`, which rebuilds them.
#[derive(serde::Deserialize)]
pub(crate) struct StoredEnvelope<'a> {
    pub(crate) v: u16,
    pub(crate) ts_ms: i64,
    #[serde(borrow)]
    pub(crate) kind: &'a serde_json::value::RawValue,
}

impl<'a> StoredEnvelope<'a> {
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<StoredEnvelope<'a>, ViewError> {
        serde_json::from_slice(bytes)
            .map_err(|e| ViewError::Corrupt(format!("an envelope row: {e}")))
    }

    /// The kind, decoded (its tag, its summary).
    pub(crate) fn event(&self) -> Result<Event, ViewError> {
        serde_json::from_str(self.kind.get())
            .map_err(|e| ViewError::Corrupt(format!("an envelope row's kind: {e}")))
    }
}

/// A boxed iterator of events.
pub(crate) type EventIter<'a> =
    Box<dyn Iterator<Item = Result<(EventId, Envelope), ViewError>> + 'a>;

impl<'a> EventSource<'a> {
    pub(crate) fn of(views: &'a Views) -> EventSource<'a> {
        EventSource(views)
    }

    /// The current version of the event `id`.
    pub(crate) fn get(&self, id: &EventId) -> Result<Option<Envelope>, ViewError> {
        self.0.tables.envelope(id)
    }

    /// Every event in key order (by session, then seq); with a `session`, only its events.
    pub(crate) fn events(&self, session: Option<&SessionId>) -> EventIter<'a> {
        Box::new(self.0.tables.envelopes(session))
    }

    /// [`EventSource::events`], each envelope as its JSON (see [`StoredEnvelope`]).
    pub(crate) fn event_bytes(
        &self,
        session: Option<&SessionId>,
    ) -> impl Iterator<Item = Result<(EventId, fjall::Slice), ViewError>> + 'a {
        self.0.tables.envelope_bytes(session)
    }

    /// What the edit `id` wrote to `path` (the bytes of its change blob), if it was
    /// recorded. The views keep it by edit and path (the changes table).
    pub(crate) fn change(&self, id: &EventId, path: &str) -> Result<Option<Vec<u8>>, ViewError> {
        self.0.tables.change_bytes(path, id)
    }

    /// Every version a revision replaced, each event's in the order they were written
    /// (events in key order): the versions before each event's current one.
    pub(crate) fn past(&self) -> EventIter<'a> {
        Box::new(
            self.0
                .tables
                .past_versions()
                .map(|r| r.map(|(id, _, env)| (id, env))),
        )
    }

    /// What a past version's edit wrote: the bytes of the change blob `id`, if recorded.
    pub(crate) fn past_blob(&self, id: &BlobId) -> Result<Option<Vec<u8>>, ViewError> {
        self.0.tables.past_blob(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::Ledger;
    use crate::ledger::{Access, Mode, WriteSet};
    use crate::views::ModelSlot;
    use crate::vocab::change::{BlobId, Change};
    use crate::vocab::event::{Event, Seq};

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

    /// Everything the views' copy holds: every event, one session's, and what the edit wrote.
    fn read(
        source: EventSource<'_>,
        a: &SessionId,
        edit: &EventId,
    ) -> (Events, Events, Option<Vec<u8>>) {
        let all = source.events(None).collect::<Result<Vec<_>, _>>().unwrap();
        let of_a = source
            .events(Some(a))
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let change = source.change(edit, "/r/f.rs").unwrap();
        (all, of_a, change)
    }

    /// The same from the ledger itself.
    fn read_ledger(
        ledger: &Ledger,
        a: &SessionId,
        blob: &BlobId,
    ) -> (Events, Events, Option<Vec<u8>>) {
        let all = ledger.events().collect::<Result<Vec<_>, _>>().unwrap();
        let of_a = ledger
            .session_events(a)
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        (all, of_a, ledger.blob(blob).unwrap())
    }

    #[test]
    fn the_views_copy_of_the_events_follows_revisions_and_equals_the_ledger() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = open(dir.path());
        let (a, b) = (SessionId("a".into()), SessionId("ab".into()));
        let (blob, bytes) = Change::write("fn main() {}\n").to_blob();
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
                    restores: None,
                    model: None,
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
        let held = EventSource::of(&views).get(&first).unwrap().unwrap();
        assert_eq!(held, said(&a, "second version"));
        let from_views = read(EventSource::of(&views), &a, &edit);
        let from_ledger = read_ledger(&ledger, &a, &blob);
        assert_eq!(from_views, from_ledger);
        assert_eq!(from_views.0.len(), 3);
        // A session's prefix is not another session's: "a" lists none of "ab".
        assert_eq!(from_views.1.len(), 2);
        assert_eq!(from_views.2, Some(bytes));
        let missing = EventId {
            session: b,
            seq: Seq(9),
        };
        assert_eq!(EventSource::of(&views).get(&missing).unwrap(), None);
    }
}
