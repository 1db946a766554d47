//! The newest closing messages, in a small file beside the views (`<store>/closings.json`):
//! what the SessionStart hook announces, read without opening the views.
//!
//! A writer folding a long catch-up holds the views a chunk at a time (tens of ms, more
//! when it merges tables), and a hook must answer in milliseconds: the file is written
//! whole (a rename) each time the views are brought up to date, so a reader sees the
//! closings of one consistent state of the views, as a read of the views as they stand
//! would. It is stamped with the ledger's identity and the change it reaches: one from
//! another ledger, or ahead of this one (an older ledger restored), is never used. It is
//! derived like every view: `peat rebuild` writes it again, and the views' fold writes it
//! again after `peat redact` rewrites the texts.

use serde::{Deserialize, Serialize};
use std::path::Path;

use super::handle::Handles;
use super::rows::TextKind;
use super::{ViewError, Views};
use crate::ledger::Ledger;
use crate::views::session::{SessionRollup, newest_first};
use crate::vocab::event::{EventId, Seq, SessionId};

/// The file, in the store.
pub(crate) const FILE: &str = "closings.json";

/// How many sessions the file keeps, newest first.
const KEEP: usize = 64;

/// The closings the file holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Closings {
    /// The identity of the ledger the views were folded from.
    ledger: String,
    /// The ledger change the views had reached.
    lsn: u64,
    /// Older closings were left out: a session not listed may still have one.
    pub(crate) truncated: bool,
    /// Newest end first.
    pub(crate) sessions: Vec<Closing>,
}

/// A top-level session's closing message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Closing {
    pub(crate) session: SessionId,
    /// Its handle when the file was written (see [`crate::views::handle`]).
    pub(crate) handle: String,
    pub(crate) seq: Seq,
    pub(crate) end_ms: i64,
    pub(crate) cwd: Option<String>,
    pub(crate) branch: Option<String>,
    pub(crate) text: String,
}

/// Reads a closing message's text: hears the closing event and the text view's row for it.
pub(crate) type TextOf<'a> =
    dyn FnMut(&EventId, Option<String>) -> Result<Option<String>, ViewError> + 'a;

/// The closings of `views`, newest end first: each top-level session (not a subagent) whose
/// last closing message `text_of` can read, skipping those `skip` names, at most `limit`.
pub(crate) fn newest(
    views: &Views,
    skip: &dyn Fn(&SessionId, &SessionRollup) -> bool,
    limit: usize,
    text_of: &mut TextOf<'_>,
) -> Result<(Vec<Closing>, bool), ViewError> {
    let mut ended: Vec<(i64, SessionId, Seq, SessionRollup)> = views
        .tables
        .all_sessions()?
        .into_iter()
        .filter_map(|(session, r)| {
            let end = r.end_ms?;
            let seq = r.closing_seq()?;
            (r.parent.is_none() && !skip(&session, &r)).then_some((end, session, seq, r))
        })
        .collect();
    ended.sort_by(|a, b| newest_first((&a.1, &a.3), (&b.1, &b.3)));
    let handles = Handles::new(&views.tables);
    let mut out = Vec::new();
    for (end_ms, session, seq, r) in ended {
        if out.len() == limit {
            return Ok((out, true));
        }
        let id = EventId {
            session: session.clone(),
            seq,
        };
        let row = views
            .tables
            .text(&id)?
            .filter(|row| row.kind == TextKind::Final)
            .map(|row| row.text);
        let Some(text) = text_of(&id, row)?.filter(|t| !t.trim().is_empty()) else {
            continue;
        };
        out.push(Closing {
            handle: handles.of(&session),
            session,
            seq,
            end_ms,
            cwd: r.cwd,
            branch: r.branch,
            text,
        });
    }
    Ok((out, false))
}

/// What the file holds for `views`: the closings, and whether older ones were left out.
fn kept(views: &Views) -> Result<(Vec<Closing>, bool), ViewError> {
    newest(views, &|_, _| false, KEEP, &mut |_, row| Ok(row))
}

/// Whether `file` lists what the views hold (`peat doctor`, on caught-up views).
pub(crate) fn agrees(file: &Closings, views: &Views) -> Result<bool, ViewError> {
    let (sessions, truncated) = kept(views)?;
    Ok(file.sessions == sessions && file.truncated == truncated)
}

/// Write the file for `views`, folded from `ledger` up to their current position.
pub(crate) fn write(views: &Views, ledger: &Ledger) -> Result<(), ViewError> {
    let (sessions, truncated) = kept(views)?;
    let closings = Closings {
        ledger: ledger.identity()?,
        lsn: views.tables.applied()?,
        truncated,
        sessions,
    };
    let store = ledger.path();
    let path = store.join(FILE);
    let tmp = store.join(format!("{FILE}.{}", std::process::id()));
    let io = |source| ViewError::Io {
        path: path.clone(),
        source,
    };
    std::fs::write(&tmp, super::tables::encode_json(&closings)).map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })
}

/// The file of the store `ledger` is in, if it is there and fits the ledger (its identity,
/// and no further than its last change). Never opens the ledger's database while its hints
/// are there.
pub(crate) fn read(ledger: &Ledger) -> Option<Closings> {
    let bytes = std::fs::read(ledger.path().join(FILE)).ok()?;
    let closings: Closings = serde_json::from_slice(&bytes).ok()?;
    let fits =
        ledger.identity().ok()? == closings.ledger && ledger.last_lsn().ok()? >= closings.lsn;
    fits.then_some(closings)
}

/// The ledger change the file was written at, if it is there and this ledger's: what an open
/// compares with its tables, on every read, so the closings themselves are skipped over,
/// not built.
pub(crate) fn written_at(ledger: &Ledger) -> Option<u64> {
    #[derive(Deserialize)]
    struct Stamp {
        ledger: String,
        lsn: u64,
    }
    let bytes = std::fs::read(ledger.path().join(FILE)).ok()?;
    let stamp: Stamp = serde_json::from_slice(&bytes).ok()?;
    (ledger.identity().ok()? == stamp.ledger).then_some(stamp.lsn)
}

/// Remove the file (with the views it was derived from).
pub(crate) fn discard(store: &Path) {
    let _ = std::fs::remove_file(store.join(FILE));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::{WriteSet, open_for_test};
    use crate::views::ModelSlot;
    use crate::vocab::event::{Envelope, Event};

    fn meta(parent: Option<&str>) -> Event {
        Event::SessionMeta {
            cwd: "/w".into(),
            branch: None,
            agent: None,
            version: None,
            parent: parent.map(|p| SessionId(p.into())),
            subagent: None,
        }
    }

    /// Sessions `a` (closed at 100, then again at 300), `b` (closed at 200), `sub` (a
    /// subagent of `a`, closed at 400) and `open` (no closing message).
    fn store(dir: &Path) -> (Ledger, Views) {
        let mut ledger = open_for_test(dir);
        let mut set = WriteSet::default();
        let mut put = |s: &str, seq: u32, ts: i64, kind: Event| {
            set.event(Seq(seq), Envelope::new(SessionId(s.into()), ts, kind));
        };
        let fin = |t: &str| Event::FinalMsg { text: t.into() };
        put("a", 0, 50, meta(None));
        put("a", 1, 100, fin("a first"));
        put("a", 2, 300, fin("a last"));
        put("b", 0, 150, meta(None));
        put("b", 1, 200, fin("b done"));
        put("sub", 0, 350, meta(Some("a")));
        put("sub", 1, 400, fin("sub done"));
        put("open", 0, 500, meta(None));
        ledger.write(set).unwrap();
        let mut model = ModelSlot::new(None, || unreachable!("no model"));
        let views = Views::open(&ledger, &mut model, jiff::tz::TimeZone::UTC, &mut |_| {}).unwrap();
        (ledger, views)
    }

    #[test]
    fn the_file_lists_each_top_level_sessions_last_closing_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let (ledger, views) = store(dir.path());
        let file = read(&ledger).expect("opening the views wrote the file");
        let got: Vec<(&str, u32, i64, &str)> = file
            .sessions
            .iter()
            .map(|c| (c.session.as_str(), c.seq.0, c.end_ms, c.text.as_str()))
            .collect();
        assert_eq!(got, vec![("a", 2, 300, "a last"), ("b", 1, 200, "b done")]);
        assert!(!file.truncated);
        assert_eq!(file.sessions[0].cwd.as_deref(), Some("/w"));

        let (first, truncated) = newest(&views, &|_, _| false, 1, &mut |_, r| Ok(r)).unwrap();
        assert_eq!((first.len(), truncated), (1, true));
    }

    #[test]
    fn a_rebuild_writes_the_file_again_though_it_reaches_the_same_change() {
        let dir = tempfile::tempdir().unwrap();
        let (ledger, views) = store(dir.path());
        drop(views);
        // A file at the views' change that says otherwise (as one of another schema's
        // rules could): only a write after the rebuild puts the views' closings in it.
        let path = ledger.path().join(FILE);
        let mut file: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        file["sessions"][0]["text"] = "from other views".into();
        std::fs::write(&path, serde_json::to_vec(&file).unwrap()).unwrap();
        let mut model = ModelSlot::new(None, || unreachable!("no model"));
        let elsewhere = jiff::tz::TimeZone::fixed(jiff::tz::Offset::constant(3));
        drop(Views::open(&ledger, &mut model, elsewhere, &mut |_| {}).unwrap());
        assert_eq!(read(&ledger).unwrap().sessions[0].text, "a last");
    }

    #[test]
    fn a_write_of_the_ledger_is_in_the_file_once_the_views_catch_up() {
        let dir = tempfile::tempdir().unwrap();
        let (mut ledger, mut views) = store(dir.path());
        let mut set = WriteSet::default();
        let later = Envelope::new(
            SessionId("b".into()),
            600,
            Event::FinalMsg {
                text: "b again".into(),
            },
        );
        set.event(Seq(2), later);
        ledger.write(set).unwrap();
        // The file is what the views held: b's new closing is not in it yet.
        assert_eq!(read(&ledger).unwrap().sessions[0].text, "a last");
        let mut model = ModelSlot::new(None, || unreachable!("no model"));
        views.catch_up(&ledger, &mut model).unwrap();
        let file = read(&ledger).unwrap();
        assert_eq!(file.sessions[0].text, "b again");
        assert_eq!(file.lsn, ledger.last_lsn().unwrap());
    }
}
