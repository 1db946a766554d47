//! Time travel: the record as it stood at the end of a past day.
//!
//! The past is, for every event, its newest version at or before the cutoff: the version
//! the ledger holds today when that version's time is at or before the cutoff and nothing
//! replaced it, otherwise the newest of its earlier versions (the old halves of the feed's
//! revisions, which the views keep in their past table) whose time is. A revision made later never leaks into the past, and an
//! event revised after the cutoff still shows the version it had then.
//!
//! Both reads of it start from today's views. An event whose version today is at or
//! before the cutoff had that version then (the newest written wins), so the past is
//! today's record cut at the cutoff, plus the versions then of the events revised since
//! (the [`Tally`]). What the record held ([`Tally::held`]: how many events, sessions and
//! days, and the newest session as it stood) is the days table up to the cutoff's day plus
//! those versions; only the newest session is replayed, for its summary. A search of the
//! past is a search of today's lanes for the texts at or before the cutoff, unless an
//! event revised since had another version then: that past is replayed whole
//! ([`copy_past`], then [`replay`]) through the same pipeline into a scratch store. The
//! fold reads no clock, and vectors come from a copy of the real store's cache: nothing is
//! embedded again. Searching today's lanes scores words by today's statistics, a replay by
//! the past's: the texts searched are the same, their scores (and so their order, and
//! which of the weakest pass) may differ.
//!
//! The past is copied out of the views first (one scan of their copy of the events and of
//! the versions revisions replaced), then replayed holding nothing of the store. Neither
//! reads the ledger: beside a writer the copy is taken from the views as they stand, like
//! every other read's answer.
//!
//! A version's time is its envelope's (the transcript's) time: the ledger keeps no capture
//! clock. Versions of equal time are told apart by the order they were written in.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use crate::ledger::LedgerError;
use crate::views::fault::{self, Fault};
use crate::views::session::{SessionSet, SessionSummary, admitted, is_activity};
use crate::views::source::EventSource;
use crate::views::tables::DayStats;
use crate::views::{ModelSlot, Scratch, ViewError, Views};
use crate::vocab::change::BlobId;
use crate::vocab::event::{Envelope, EventId, SessionId};

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
    let revisions = if fault::active(Fault::AsofReadsToday) {
        Revisions::default()
    } else {
        Revisions::as_of(EventSource::of(real), cutoff_ms)?
    };
    copy_versions(real, cutoff_ms, scratch, search, None, revisions.then)
}

/// [`copy_past`] of one `session` (all of them: `None`), with the versions as of the
/// cutoff of the events revised since (`then`, see [`Revisions`]) already read.
fn copy_versions(
    real: &Views,
    cutoff_ms: i64,
    scratch: &Path,
    search: bool,
    session: Option<&SessionId>,
    mut then: HashMap<EventId, Envelope>,
) -> Result<Copied, ViewError> {
    let source = EventSource::of(real);
    let seeded = Views::seed_scratch(scratch, real, search)?;
    let path = scratch.join("past.ndjson");
    let io = |source| ViewError::Io {
        path: path.clone(),
        source,
    };
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).map_err(io)?);
    let mut blobs = HashMap::new();
    let mut events = 0;
    for item in source.events(session) {
        let (id, today) = item?;
        // The current version is the newest written: it wins when it is old enough.
        let (env, current) = if today.ts_ms <= cutoff_ms {
            (today, true)
        } else {
            match then.remove(&id) {
                Some(then) => (then, false),
                None => continue,
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

/// What the revisions say of a cutoff.
#[derive(Default)]
struct Revisions {
    /// For every event ever revised, its newest earlier version (in write order) at or
    /// before the cutoff, where it has one. Its version as of the cutoff when today's is
    /// later.
    then: HashMap<EventId, Envelope>,
    /// The sessions with a revised event: a rollup stretches its span over the versions
    /// revisions replaced (see `SessionRollup::stretch`), so theirs is not the past's.
    sessions: HashSet<SessionId>,
}

impl Revisions {
    /// Read from the past table. Only revised events are held in memory.
    fn as_of(source: EventSource<'_>, cutoff_ms: i64) -> Result<Revisions, ViewError> {
        let mut r = Revisions::default();
        for version in source.past() {
            let (id, env) = version?;
            r.sessions.insert(id.session.clone());
            if env.ts_ms <= cutoff_ms {
                r.then.insert(id, env);
            }
        }
        Ok(r)
    }
}

/// What the record held at a cutoff, as `asof` without words tells it.
#[derive(Debug, PartialEq)]
pub(crate) struct Held {
    /// Its events; in a scope, its sessions' events.
    pub(crate) events: usize,
    pub(crate) sessions: usize,
    /// The local days with an event of a session in scope.
    pub(crate) days: usize,
    /// The session in scope with the latest activity by then, as it stood then.
    pub(crate) last: Option<SessionSummary>,
}

/// The record at the end of a past day, counted from today's views without replaying the
/// past (see the module's head): the days table up to that day, plus the versions then of
/// the events revised since.
pub(crate) struct Tally {
    cutoff_ms: i64,
    days: BTreeMap<String, DayStats>,
    /// The versions then of the events whose version today is later: the only versions of
    /// the past the days table does not count, and the only texts today's lanes lack.
    then: HashMap<EventId, Envelope>,
    /// The sessions with a revised event (see [`Revisions`]).
    revised: HashSet<SessionId>,
}

impl Tally {
    /// At the end of local `day`, in the zone the views were folded in.
    pub(crate) fn at(real: &Views, day: jiff::civil::Date) -> Result<Tally, ViewError> {
        let cutoff_ms = crate::vocab::time::day_end_ms(day, &real.tz);
        let source = EventSource::of(real);
        let revisions = if fault::active(Fault::TallySkipsRevisions) {
            Revisions::default()
        } else {
            Revisions::as_of(source, cutoff_ms)?
        };
        let last_day = day.to_string();
        let mut days: BTreeMap<String, DayStats> = real
            .tables
            .all_days()?
            .into_iter()
            .filter(|(d, _)| *d <= last_day)
            .collect();
        let mut then = HashMap::new();
        for (id, env) in revisions.then {
            if source
                .get(&id)?
                .is_some_and(|today| today.ts_ms <= cutoff_ms)
            {
                continue;
            }
            days.entry(real.day_of(env.ts_ms))
                .or_default()
                .apply(&env, 1);
            then.insert(id, env);
        }
        Ok(Tally {
            cutoff_ms,
            days,
            then,
            revised: revisions.sessions,
        })
    }

    /// The end of the day, as a time.
    pub(crate) fn cutoff_ms(&self) -> i64 {
        self.cutoff_ms
    }

    /// Every session's events by then.
    pub(crate) fn events(&self) -> usize {
        let n: i64 = self.days.values().map(|d| d.events).sum();
        usize::try_from(n).unwrap_or(0)
    }

    /// Whether today's lanes, searched for texts at or before the cutoff, search the past:
    /// they do unless an event revised since had another version then.
    pub(crate) fn searchable_today(&self) -> bool {
        self.then.is_empty() || fault::active(Fault::AsofSearchesToday)
    }

    /// What the record held among the sessions `only` admits: the counts from the days;
    /// the newest session found day by day backwards, each day's sessions' latest activity
    /// read from their rollups (or, for a session revised since or active past the cutoff,
    /// from its events); that session alone replayed into `scratch` for its summary. A
    /// session's scope is what the record says of it today.
    pub(crate) fn held(
        self,
        real: &Views,
        only: Option<&SessionSet>,
        scratch: &Path,
        model: &mut ModelSlot,
    ) -> Result<Held, ViewError> {
        let Tally {
            cutoff_ms,
            mut days,
            then,
            revised,
        } = self;
        days.retain(|_, d| {
            d.sessions
                .keys()
                .any(|s| admitted(only, &SessionId(s.clone())))
        });
        let mut sessions: BTreeSet<&str> = BTreeSet::new();
        let mut events = 0;
        for d in days.values() {
            for (s, share) in &d.sessions {
                if admitted(only, &SessionId(s.clone())) {
                    sessions.insert(s);
                    events += share.events;
                }
            }
        }

        // The newest session: its latest activity is on the latest day holding one of the
        // sessions' latest activity, and it is active that day.
        let mut ends: HashMap<&str, Option<i64>> = HashMap::new();
        let mut newest: Option<(SessionId, i64)> = None;
        for (d, stats) in days.iter().rev() {
            for s in stats.sessions.keys() {
                let id = SessionId(s.clone());
                if !admitted(only, &id) {
                    continue;
                }
                let end = match ends.get(s.as_str()) {
                    Some(end) => *end,
                    None => {
                        let end = end_then(real, &id, cutoff_ms, &revised, &then)?;
                        ends.insert(s, end);
                        end
                    }
                };
                let Some(end) = end.filter(|e| real.day_of(*e) == *d) else {
                    continue;
                };
                // As newest_first orders them: the latest activity, then the smaller id.
                if newest
                    .as_ref()
                    .is_none_or(|(n, e)| end > *e || (end == *e && id < *n))
                {
                    newest = Some((id, end));
                }
            }
            if newest.is_some() {
                break;
            }
        }
        // No activity at all by then: the first session by id, as newest_first orders them.
        let newest = newest
            .map(|(s, _)| s)
            .or_else(|| sessions.first().map(|s| SessionId(s.to_string())));
        let last = match newest {
            Some(s) => {
                let mine = then
                    .iter()
                    .filter(|(id, _)| id.session == s)
                    .map(|(id, env)| (id.clone(), env.clone()))
                    .collect();
                let copied = copy_versions(real, cutoff_ms, scratch, false, Some(&s), mine)?;
                let past = replay(copied, model, real.tz.clone())?;
                past.views
                    .tables
                    .session(&s)?
                    .map(|rollup| past.views.summary(s, rollup))
            }
            None => None,
        };
        Ok(Held {
            events: usize::try_from(events).unwrap_or(0),
            sessions: sessions.len(),
            days: days.len(),
            last,
        })
    }
}

/// When `session` was last active at or before `cutoff_ms`. Its rollup says so unless a
/// revision replaced one of its events (its span covers replaced versions) or its span
/// reaches past the cutoff: then its versions as of the cutoff are read (`then`: those of
/// events whose version today is later).
fn end_then(
    real: &Views,
    session: &SessionId,
    cutoff_ms: i64,
    revised: &HashSet<SessionId>,
    then: &HashMap<EventId, Envelope>,
) -> Result<Option<i64>, ViewError> {
    if !revised.contains(session)
        && let Some(rollup) = real.tables.session(session)?
        && rollup.end_ms.is_none_or(|e| e <= cutoff_ms)
    {
        return Ok(rollup.end_ms);
    }
    let mut end = None;
    for item in EventSource::of(real).events(Some(session)) {
        let (id, today) = item?;
        let version = if today.ts_ms <= cutoff_ms {
            today
        } else {
            match then.get(&id) {
                Some(env) => env.clone(),
                None => continue,
            }
        };
        if version.ts_ms > 0 && is_activity(&version.kind) {
            end = end.max(Some(version.ts_ms));
        }
    }
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::{Access, Ledger, Mode, WriteSet};
    use crate::vocab::event::{Event, Seq};

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

    fn said_in(session: &str, ts_ms: i64, text: &str) -> Envelope {
        Envelope {
            session: SessionId(session.into()),
            ..said(ts_ms, text)
        }
    }

    /// The newest session of the record at the end of 1970-01-01 (UTC), as `asof` without
    /// words tells it.
    fn newest_then(ledger: &Ledger, dir: &Path) -> Option<SessionId> {
        let real = views(ledger);
        let day = jiff::civil::date(1970, 1, 1);
        let mut model = ModelSlot::new(None, || unreachable!("no model"));
        let tally = Tally::at(&real, day).unwrap();
        let held = tally.held(&real, None, &dir.join("scratch"), &mut model);
        let held = held.unwrap();
        held.last.map(|s| s.session)
    }

    #[test]
    fn the_newest_session_then_is_judged_by_its_versions_then_not_its_span_today() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = open(&dir.path().join("store"), Mode::Create);
        write(&mut ledger, 1, said_in("a", 100, "a's first"));
        write(&mut ledger, 2, said_in("a", 300, "a's second"));
        write(&mut ledger, 1, said_in("b", 200, "b's only"));
        // Revised to an earlier moment: a's span today still reaches 300 (the version it
        // replaced), but its versions then end at 100, before b's.
        write(&mut ledger, 2, said_in("a", 50, "a's second, revised"));
        assert_eq!(
            newest_then(&ledger, dir.path()),
            Some(SessionId("b".into()))
        );
    }

    #[test]
    fn of_two_sessions_last_active_at_the_same_moment_the_smaller_id_is_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = open(&dir.path().join("store"), Mode::Create);
        write(&mut ledger, 1, said_in("b", 200, "b's only"));
        write(&mut ledger, 1, said_in("a", 200, "a's only"));
        assert_eq!(
            newest_then(&ledger, dir.path()),
            Some(SessionId("a".into()))
        );
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
