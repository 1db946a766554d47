//! Time travel: the record as it stood at the end of a past day.
//!
//! The past is, for every event, its newest version at or before the cutoff: the version
//! the ledger holds today when that version's time is at or before the cutoff and nothing
//! replaced it, otherwise the newest of its earlier versions (the old halves of the feed's
//! revisions, which the views keep in their past table) whose time is. A revision made later never leaks into the past, and an
//! event revised after the cutoff still shows the version it had then. Those versions are
//! folded through the same pipeline into a scratch store; the fold reads no clock. Vectors
//! come from a copy of the real store's cache: nothing is embedded again.
//!
//! The past is copied out of the views first ([`copy_past`]: one scan of their copy of
//! the events and of the versions revisions replaced, which the views keep too), then
//! replayed ([`replay`]) holding nothing of the store. Neither reads the ledger: beside a
//! writer the copy is taken from the views as they stand, like every other read's answer.
//!
//! A version's time is its envelope's (the transcript's) time: the ledger keeps no capture
//! clock. Versions of equal time are told apart by the order they were written in.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use crate::ledger::LedgerError;
use crate::views::fault::{self, Fault};
use crate::views::source::EventSource;
use crate::views::{ModelSlot, Scratch, ViewError, Views};
use crate::vocab::change::BlobId;
use crate::vocab::event::{Envelope, EventId};

/// The record as of a cutoff: views folded from the ledger's past versions.
pub(crate) struct Past {
    pub(crate) views: Views,
    pub(crate) events: usize,
}

/// The past copied out of a store, in a scratch folder: everything [`replay`] reads.
pub(crate) struct Copied {
    scratch: Scratch,
    /// Each event's version as of the cutoff, one `[id, envelope]` JSON line each, in key
    /// order.
    versions: PathBuf,
    /// The change blobs those versions name.
    blobs: HashMap<BlobId, Vec<u8>>,
    pub(crate) events: usize,
}

/// Copy into `scratch` each event's newest version at or before `cutoff_ms`, the change
/// blobs they name, and (to `search` it) the vector cache, all from `real` (the store's
/// views, which keep the versions revisions replaced: see [`EventSource::past`]). Without
/// `search`, the replay folds the tables alone (see [`Views::seed_scratch`]).
pub(crate) fn copy_past(
    real: &Views,
    cutoff_ms: i64,
    scratch: &Path,
    search: bool,
) -> Result<Copied, ViewError> {
    let source = EventSource::of(real);
    let mut revised = if fault::active(Fault::AsofReadsToday) {
        HashMap::new()
    } else {
        revised_as_of(source, cutoff_ms)?
    };
    let seeded = Views::seed_scratch(scratch, real, search)?;
    let path = scratch.join("past.ndjson");
    let io = |source| ViewError::Io {
        path: path.clone(),
        source,
    };
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).map_err(io)?);
    let mut blobs = HashMap::new();
    let mut events = 0;
    for item in source.events(None) {
        let (id, today) = item?;
        // The current version is the newest written: it wins when it is old enough.
        let (env, current) = if today.ts_ms <= cutoff_ms {
            (today, true)
        } else {
            match revised.remove(&id) {
                Some(Some(then)) => (then, false),
                _ => continue,
            }
        };
        for (touched, blob) in env.kind.changes() {
            if blobs.contains_key(&blob) {
                continue;
            }
            let bytes = if current {
                source.change(&id, touched)?
            } else {
                source.past_blob(&blob)?
            };
            if let Some(bytes) = bytes {
                blobs.insert(blob, bytes);
            }
        }
        serde_json::to_writer(&mut out, &(&id, &env)).map_err(|e| io(e.into()))?;
        out.write_all(b"\n").map_err(io)?;
        events += 1;
    }
    out.flush().map_err(io)?;
    Ok(Copied {
        scratch: seeded,
        versions: path,
        blobs,
        events,
    })
}

/// Fold what [`copy_past`] copied into views in its scratch folder. Reads nothing of the
/// real store.
pub(crate) fn replay(
    copied: Copied,
    model: &mut ModelSlot,
    tz: jiff::tz::TimeZone,
) -> Result<Past, ViewError> {
    let path = &copied.versions;
    let broken = |detail: String| LedgerError::Store {
        path: path.clone(),
        detail,
    };
    let file = std::fs::File::open(path).map_err(|source| ViewError::Io {
        path: path.clone(),
        source,
    })?;
    let versions = std::io::BufReader::new(file).lines().map(|line| {
        let line = line.map_err(|e| broken(e.to_string()))?;
        serde_json::from_str::<(EventId, Envelope)>(&line).map_err(|e| broken(e.to_string()))
    });
    let blobs = |id: &BlobId| Ok(copied.blobs.get(id).cloned());
    let views = Views::fold_scratch(copied.scratch, &blobs, versions, model, tz)?;
    Ok(Past {
        views,
        events: copied.events,
    })
}

/// For every event that was ever revised, its newest earlier version (in write order) at
/// or before `cutoff_ms` (`None`: none was). Only revised events are held in memory.
fn revised_as_of(
    source: EventSource<'_>,
    cutoff_ms: i64,
) -> Result<HashMap<EventId, Option<Envelope>>, ViewError> {
    let mut then: HashMap<EventId, Option<Envelope>> = HashMap::new();
    for version in source.past() {
        let (id, env) = version?;
        let slot = then.entry(id).or_default();
        if env.ts_ms <= cutoff_ms {
            *slot = Some(env);
        }
    }
    Ok(then)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::{Access, Ledger, Mode, WriteSet};
    use crate::vocab::event::{Event, Seq, SessionId};

    fn open(dir: &Path, mode: Mode) -> Ledger {
        Ledger::open(
            dir,
            Access {
                mode,
                wait: std::time::Duration::ZERO,
                who: "test",
                on_wait: &mut || {},
            },
        )
        .unwrap()
    }

    fn said(ts_ms: i64, text: &str) -> Envelope {
        let kind = Event::Said { text: text.into() };
        Envelope::new(SessionId("s".into()), ts_ms, kind)
    }

    fn write(ledger: &mut Ledger, seq: u32, env: Envelope) {
        let mut set = WriteSet::default();
        set.event(Seq(seq), env);
        ledger.write(set).unwrap();
    }

    fn views(ledger: &Ledger) -> Views {
        let mut model = ModelSlot::new(None, || unreachable!("no model"));
        Views::open(ledger, &mut model, jiff::tz::TimeZone::UTC, &mut |_| {}).unwrap()
    }

    #[test]
    fn the_replay_holds_nothing_of_the_store_and_sees_only_the_copied_past() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("store");
        let mut ledger = open(&store, Mode::Create);
        write(&mut ledger, 1, said(100, "before the cutoff"));
        write(&mut ledger, 2, said(100, "first version"));
        // Revised after the cutoff: the past keeps the first version.
        write(&mut ledger, 2, said(300, "revised later"));
        write(&mut ledger, 3, said(300, "after the cutoff"));
        let real = views(&ledger);
        let copied = copy_past(&real, 200, &dir.path().join("scratch"), true).unwrap();
        drop(real);
        drop(ledger);

        // A writer takes the store and its views and records more while the past replays.
        let mut writer = open(&store, Mode::Existing);
        write(&mut writer, 4, said(150, "recorded after the copy"));
        let held = views(&writer);
        let mut model = ModelSlot::new(None, || unreachable!("no model"));
        let past = replay(copied, &mut model, jiff::tz::TimeZone::UTC).unwrap();
        drop(held);

        let texts: Vec<(u32, Envelope)> = past
            .views
            .tables
            .envelopes(None)
            .map(|r| r.map(|(id, env)| (id.seq.0, env)))
            .collect::<Result<_, _>>()
            .unwrap();
        let want = vec![
            (1, said(100, "before the cutoff")),
            (2, said(100, "first version")),
        ];
        assert_eq!(texts, want);
        assert_eq!(past.events, 2);
    }
}
