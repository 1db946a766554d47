//! Checking the views' copies against the ledger (`peat doctor`): the copy of every event
//! (what `show` and `events` read) and every version a revision replaced (what `asof`
//! reads), each compared by its identity and a digest of its envelope with what the ledger
//! holds. The caller digests the ledger's side with [`digest`]; how the views key and encode
//! their rows stays here. Each problem is a [`Finding`], which the caller words.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use super::{ViewError, Views};
use crate::ledger::Ledger;
use crate::vocab::change::BlobId;
use crate::vocab::event::{Envelope, EventId};

/// Envelopes' digests (see [`digest`]), by which version each is: an event's current
/// version by its id, a replaced version by its id and the change that replaced it.
pub(crate) type Digests<K> = HashMap<K, u64>;

/// Which of the views' copies a finding is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rows {
    /// The copy of every event's current version.
    Events,
    /// The versions revisions replaced.
    Past,
}

/// A version of an event the views keep a copy of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Version {
    /// An event's current version.
    Event(EventId),
    /// A version of the event that the change numbered `.1` replaced.
    Past(EventId, u64),
}

/// What a comparison found wrong.
#[derive(Debug)]
pub(crate) enum Finding {
    /// A row of the copies did not read.
    Unreadable(Rows, ViewError),
    /// A copy of a version the ledger does not hold.
    Extra(Version),
    /// A copy that is not the version the ledger holds.
    Differs(Version),
    /// How many of the ledger's versions have no copy.
    Missing(Rows, usize),
    /// A change blob a past version names, which the ledger holds and the views do not keep.
    BlobMissing(BlobId, Version),
}

/// An envelope's digest, the same for the ledger's version and the views' copy of it.
pub(crate) fn digest(env: &Envelope) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_vec(env).unwrap_or_default().hash(&mut h);
    h.finish()
}

/// Errors in a row past which a scan stops: a damaged table can fail every step.
pub(crate) const STUCK: usize = 1_000;

/// Compare the views' copy of the events with the ledger's current versions (`want`): every
/// event there, none more, each the version the ledger holds. Returns how many copies were
/// read.
pub(crate) fn events(
    views: &Views,
    want: &Digests<EventId>,
    found: &mut dyn FnMut(Finding),
) -> u64 {
    let rows = views
        .tables
        .envelopes(None)
        .map(|row| row.map(|(id, env)| (id.clone(), Version::Event(id), env)));
    compare(rows, Rows::Events, want, found, |_, _, _| {})
}

/// Compare the views' past versions with the ones the ledger's feed says revisions replaced
/// (`want`): every one there, none more, each the version replaced, and every change blob
/// they name that the ledger holds kept beside them. Returns how many were read.
pub(crate) fn past(
    views: &Views,
    ledger: &Ledger,
    want: &Digests<(EventId, u64)>,
    found: &mut dyn FnMut(Finding),
) -> u64 {
    let rows = views
        .tables
        .past_versions()
        .map(|row| row.map(|(id, lsn, env)| ((id.clone(), lsn), Version::Past(id, lsn), env)));
    compare(rows, Rows::Past, want, found, |env, copy, found| {
        for blob in env.kind.change_blobs() {
            let kept = views.tables.past_blob(&blob).ok().flatten().is_some();
            if !kept && matches!(ledger.blob(&blob), Ok(Some(_))) {
                found(Finding::BlobMissing(blob, copy.clone()));
            }
        }
    })
}

/// Compare `rows` (each with its key in `want`) with `want`: every one there, none more,
/// each of the digest `want` holds; `each` checks a row further. Returns how many rows were
/// read.
fn compare<K: Hash + Eq>(
    rows: impl Iterator<Item = Result<(K, Version, Envelope), ViewError>>,
    which: Rows,
    want: &Digests<K>,
    found: &mut dyn FnMut(Finding),
    mut each: impl FnMut(&Envelope, &Version, &mut dyn FnMut(Finding)),
) -> u64 {
    let (mut seen, mut matched) = (0, 0);
    let mut failing = 0;
    for item in rows {
        let (key, copy, env) = match item {
            Ok(row) => row,
            Err(e) => {
                found(Finding::Unreadable(which, e));
                failing += 1;
                if failing >= STUCK {
                    break;
                }
                continue;
            }
        };
        failing = 0;
        seen += 1;
        match want.get(&key) {
            None => found(Finding::Extra(copy.clone())),
            Some(d) => {
                matched += 1;
                if *d != digest(&env) {
                    found(Finding::Differs(copy.clone()));
                }
            }
        }
        each(&env, &copy, found);
    }
    if matched < want.len() {
        found(Finding::Missing(which, want.len() - matched));
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::{WriteSet, open_for_test};
    use crate::views::ModelSlot;
    use crate::vocab::event::{Event, Seq, SessionId};

    #[test]
    fn a_copy_the_ledger_lacks_and_a_version_the_views_lack_are_both_found() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = open_for_test(dir.path());
        let mut set = WriteSet::default();
        let said = |text: &str| Event::Said { text: text.into() };
        for (seq, text) in [(0, "first"), (1, "second")] {
            set.event(
                Seq(seq),
                Envelope::new(SessionId("s".into()), 1_000, said(text)),
            );
        }
        ledger.write(set).unwrap();
        let mut model = ModelSlot::new(None, || unreachable!("no model"));
        let views = Views::open(&ledger, &mut model, jiff::tz::TimeZone::UTC, &mut |_| {}).unwrap();
        let id = |seq| EventId {
            session: SessionId("s".into()),
            seq: Seq(seq),
        };
        let mut want: Digests<EventId> = ledger
            .events()
            .map(|e| e.map(|(id, env)| (id, digest(&env))).unwrap())
            .collect();
        let mut found = Vec::new();
        assert_eq!(events(&views, &want, &mut |f| found.push(f)), 2);
        assert!(found.is_empty(), "{found:?}");

        want.remove(&id(1));
        want.insert(id(2), 0);
        events(&views, &want, &mut |f| found.push(f));
        assert!(
            matches!(
                found.as_slice(),
                [
                    Finding::Extra(Version::Event(extra)),
                    Finding::Missing(Rows::Events, 1),
                ] if *extra == id(1)
            ),
            "{found:?}"
        );
    }
}
