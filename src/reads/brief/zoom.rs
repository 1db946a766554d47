//! Zoom: one window of time read one rung finer. Its counts, its parts (each with the
//! command that reads it), the sessions of a single day, and the accountable texts inside:
//! closing messages, compaction summaries, observations.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

use super::{
    Heads, day_end_ms, day_rows, day_start_ms, decode_days, local_date, scoped_days, short,
};
use crate::reads::commits::made_by;
use crate::reads::ladder::{self, DayRow, Tally};
use crate::views::handle::Handles;
use crate::views::rows::{TextKind, TextRow};
use crate::views::session::{SessionSet, admitted};
use crate::views::tables::{ObsRow, Table, split_key};
use crate::views::{ViewError, Views};
use crate::vocab::event::{EventId, Seq, SessionId};
use crate::vocab::time::age;
use crate::vocab::window::{Kind, Window};
use jiff::civil::Date;

const TEXTS_SHOWN: usize = 4;
const OBS_SHOWN: usize = 8;
/// How many of the window's most touched files it lists.
const FILES_SHOWN: usize = 8;

#[derive(Clone, Debug, Serialize)]
pub(crate) struct Zoom {
    pub(crate) window: WindowInfo,
    pub(crate) totals: Tally,
    /// The window's parts one rung finer, quiet ones left out.
    pub(crate) children: Vec<ChildLine>,
    /// A single day's sessions, earliest first.
    pub(crate) sessions: Vec<SessionLine>,
    /// The newest closing messages (one per session) and compaction summaries in the window,
    /// newest first.
    pub(crate) texts: Vec<TextLine>,
    /// The newest observations in the window, newest first.
    pub(crate) observations: Vec<ObsLine>,
    /// The files most touched in the window (the brief lists a day's the same way).
    pub(crate) files: Vec<super::FileLine>,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct WindowInfo {
    pub(crate) label: String,
    pub(crate) key: String,
    pub(crate) start: String,
    pub(crate) end: String,
    /// The days, for people; `None` when the label says it.
    pub(crate) span: Option<String>,
    pub(crate) handle: String,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct ChildLine {
    pub(crate) label: String,
    pub(crate) start: String,
    pub(crate) end: String,
    #[serde(flatten)]
    pub(crate) tally: Tally,
    pub(crate) handle: String,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct SessionLine {
    pub(crate) session: SessionId,
    pub(crate) short: String,
    pub(crate) place: String,
    /// The agent that ran it, as `--agent` names it.
    pub(crate) agent: Option<&'static str>,
    pub(crate) cwd: Option<String>,
    pub(crate) branch: Option<String>,
    pub(crate) start_ms: Option<i64>,
    pub(crate) end_ms: Option<i64>,
    /// Local `HH:MM` of its first and last event.
    pub(crate) from: String,
    pub(crate) to: String,
    pub(crate) tools: i64,
    pub(crate) commits: usize,
    pub(crate) handle: String,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct TextLine {
    pub(crate) kind: TextKind,
    pub(crate) session: SessionId,
    pub(crate) seq: Seq,
    pub(crate) ts_ms: i64,
    pub(crate) age: String,
    pub(crate) place: String,
    pub(crate) text: String,
    pub(crate) handle: String,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct ObsLine {
    pub(crate) subject: String,
    pub(crate) session: SessionId,
    pub(crate) seq: Seq,
    pub(crate) ts_ms: i64,
    pub(crate) age: String,
    pub(crate) cited: bool,
    pub(crate) text: String,
    pub(crate) handle: String,
}

/// A text row's kind and time, read without its text.
#[derive(Deserialize)]
struct Stamp {
    kind: TextKind,
    ts_ms: i64,
}

/// Whether the window's label already names its days: a day, or a range of days.
fn spelled_in_days(w: &Window) -> bool {
    match w.kind {
        Kind::Day => true,
        Kind::Range => w.key.split("..").all(|k| k.len() == 10),
        _ => false,
    }
}

/// Read `w` from the views, with "now" and the time zone as inputs. Its commits are those
/// the one resolution ties to any session (see [`crate::reads::commits`]), counted where
/// they were committed, so the zoom names the same commits `peat COMMIT` and `show` do.
pub(crate) fn assemble(
    views: &Views,
    w: &Window,
    now_ms: i64,
    tz: &jiff::tz::TimeZone,
    cwd: &std::path::Path,
    only: Option<&SessionSet>,
) -> Result<Zoom, ViewError> {
    let tables = &views.tables;
    let today = local_date(now_ms, tz);
    let raw = day_rows(tables)?;
    let mut owned = decode_days(&raw)?;
    if let Some(only) = only {
        owned = scoped_days(tables, owned, only)?;
    }
    let days: Vec<DayRow> = owned.iter().map(|(d, s)| (*d, s)).collect();
    let inside = ladder::within(&days, w.start, w.end);
    let (from_ms, to_ms) = (day_start_ms(w.start, tz), day_end_ms(w.end, tz));
    let ids: BTreeSet<&str> = inside
        .iter()
        .flat_map(|(_, s)| s.sessions.iter().map(|(s, _)| s.as_ref()))
        .collect();
    // Every session's commits: one made in the window may carry the lines of a session that
    // ran before it (the content route), and `peat COMMIT` names that session.
    let mut all = tables.session_ids()?;
    all.retain(|s| admitted(only, s));
    let made = made_by(views, &all, Some(cwd))?;
    let tally = |start: Date, end: Date| {
        let mut t = Tally::of(inside, start, end);
        t.commits = made.count_between(day_start_ms(start, tz), day_end_ms(end, tz)) as i64;
        t
    };

    let children = ladder::children(w.start, w.end, today)
        .into_iter()
        .map(|c| ChildLine {
            label: c.label,
            start: c.window.start.to_string(),
            end: c.window.end.to_string(),
            tally: tally(c.window.start, c.window.end),
            handle: format!("▸ {}", c.window.handle()),
        })
        .filter(|c| !c.tally.is_quiet())
        .collect();

    // The sessions active in the window, newest ending first.
    let mut heads = Heads::new(tables);
    let handles = Handles::new(tables);
    let mut active = Vec::new();
    for id in ids {
        if let Some(h) = heads.get(id)? {
            active.push((h.end_ms.unwrap_or(0).min(to_ms), id));
        }
    }
    active.sort_by(|a, b| b.cmp(a));

    let mut sessions = Vec::new();
    if w.start == w.end {
        for (_, id) in &active {
            let Some(h) = heads.get(id)? else { continue };
            if h.parent.is_some() {
                continue;
            }
            // A time on another day than the one zoomed into says its day, so a session
            // that ran over midnight does not read as a quarter of an hour.
            let hm = |ms: Option<i64>| {
                ms.and_then(|ms| jiff::Timestamp::from_millisecond(ms).ok())
                    .map(|t| {
                        let local = t.to_zoned_datetime(tz.clone());
                        let format = if local.date() == w.start {
                            "%H:%M"
                        } else {
                            "%b %-d %H:%M"
                        };
                        local.strftime(format).to_string()
                    })
                    .unwrap_or_else(|| "?".into())
            };
            sessions.push(SessionLine {
                session: SessionId(id.to_string()),
                short: short(&handles, id),
                place: h.place(),
                agent: h.agent.map(crate::vocab::event::Agent::label),
                cwd: h.cwd.clone(),
                branch: h.branch.clone(),
                start_ms: h.start_ms,
                end_ms: h.end_ms,
                from: hm(h.start_ms),
                to: hm(h.end_ms),
                tools: h.tools,
                commits: made.of(&SessionId(id.to_string())).len(),
                handle: format!("▸ peat show {}", short(&handles, id)),
            });
        }
        sessions.sort_by(|a, b| a.start_ms.cmp(&b.start_ms).then(a.session.cmp(&b.session)));
    }

    // Closing messages and summaries: scan the sessions newest-ending first, and stop once
    // no session left can hold a text newer than the ones found.
    let mut found: Vec<(i64, String, u32)> = Vec::new();
    for (end, id) in &active {
        if found.len() >= TEXTS_SHOWN && *end < found[TEXTS_SHOWN - 1].0 {
            break;
        }
        let mut prefix = id.as_bytes().to_vec();
        prefix.push(0);
        // A session closes many turns; only its newest closing message in the window speaks
        // for it. Every compaction summary is its own account.
        let mut last_final: Option<(i64, String, u32)> = None;
        for kv in tables.scan(Table::Texts, &prefix) {
            let (k, v) = kv?;
            let Ok(stamp) = serde_json::from_slice::<Stamp>(&v) else {
                continue;
            };
            if !matches!(stamp.kind, TextKind::Final | TextKind::Compact)
                || stamp.ts_ms < from_ms
                || stamp.ts_ms > to_ms
            {
                continue;
            }
            let Some((_, seq)) = split_key(&k) else {
                continue;
            };
            let hit = (stamp.ts_ms, id.to_string(), seq.0);
            if stamp.kind == TextKind::Compact {
                found.push(hit);
            } else if last_final
                .as_ref()
                .is_none_or(|l| (l.0, l.2) < (hit.0, hit.2))
            {
                last_final = Some(hit);
            }
        }
        found.extend(last_final);
        found.sort_by(|a, b| b.cmp(a));
        found.truncate(TEXTS_SHOWN);
    }
    let mut texts = Vec::new();
    for (ts, id, seq) in found {
        let eid = EventId {
            session: SessionId(id.clone()),
            seq: Seq(seq),
        };
        let Some(row): Option<TextRow> = tables.text(&eid)? else {
            continue;
        };
        let place = heads.get(&id)?.map(|h| h.place()).unwrap_or_default();
        texts.push(TextLine {
            kind: row.kind,
            handle: format!("▸ peat show {} {}", short(&handles, &id), eid.seq),
            session: eid.session,
            seq: eid.seq,
            ts_ms: ts,
            age: age(now_ms, ts, tz),
            place,
            text: row.text,
        });
    }

    // Observations: the evidence of every subject, filtered to the window.
    let mut obs = Vec::new();
    if inside.iter().any(|(_, s)| s.obs > 0) {
        for kv in tables.scan(Table::Evidence, b"") {
            let (k, v) = kv?;
            let Some(nul) = k.iter().position(|b| *b == 0) else {
                continue;
            };
            let Ok(row) = serde_json::from_slice::<ObsRow>(&v) else {
                continue;
            };
            if row.ts_ms < from_ms || row.ts_ms > to_ms {
                continue;
            }
            let Some((session, seq)) = split_key(&k[nul + 1..]) else {
                continue;
            };
            let subject = String::from_utf8_lossy(&k[..nul]).into_owned();
            obs.push(ObsLine {
                subject,
                handle: format!("▸ peat show {} {seq}", handles.of(&session)),
                session,
                seq,
                ts_ms: row.ts_ms,
                age: age(now_ms, row.ts_ms, tz),
                cited: !row.derived_from.is_empty(),
                text: row.text,
            });
        }
        obs.sort_by(|a, b| {
            b.ts_ms
                .cmp(&a.ts_ms)
                .then_with(|| (&a.session, a.seq).cmp(&(&b.session, b.seq)))
        });
        obs.truncate(OBS_SHOWN);
    }

    Ok(Zoom {
        window: WindowInfo {
            label: w.label.clone(),
            key: w.key.clone(),
            start: w.start.to_string(),
            end: w.end.to_string(),
            span: (!spelled_in_days(w)).then(|| w.span()),
            handle: format!("▸ {}", w.handle()),
        },
        totals: tally(w.start, w.end),
        files: super::files_of(tables, &handles, inside, cwd, FILES_SHOWN)?,
        children,
        sessions,
        texts,
        observations: obs,
    })
}
