//! The two oracles. Each has an ignored red twin asserting the opposite, which `tests/run`
//! requires to FAIL: an oracle that cannot fail proves nothing.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::{ModelSlot, Views};
use crate::embed::hash::HashEmbedder;
use crate::event::{Envelope, Event, EventId, OBS_SEQ_BASE, Seq, SessionId};
use crate::ledger::{Access, Ledger, Mode, WriteSet};

const DAY_MS: i64 = 86_400_000;

fn open(dir: &Path) -> Ledger {
    Ledger::open(
        dir,
        Access {
            mode: Mode::Create,
            wait: Duration::from_secs(5),
            who: "oracle",
            on_wait: &mut || {},
        },
    )
    .unwrap()
}

fn views(ledger: &Ledger) -> (Views, ModelSlot) {
    let mut slot = ModelSlot::with(Box::new(HashEmbedder::new()));
    let v = Views::open(ledger, &mut slot, jiff::tz::TimeZone::UTC, &mut |_| {}).unwrap();
    (v, slot)
}

fn write(ledger: &mut Ledger, events: &[(Seq, Envelope)]) {
    let mut set = WriteSet::default();
    for (seq, env) in events {
        set.event(*seq, env.clone());
    }
    ledger.write(set).unwrap();
}

fn obs(session: &str, ts: i64, subject: &str, text: &str) -> Envelope {
    Envelope::new(
        SessionId(session.into()),
        ts,
        Event::Obs {
            subject: subject.into(),
            text: text.into(),
            derived_from: vec![],
            basis: None,
        },
    )
}

fn keyword(v: &Views, probe: &str) -> Vec<EventId> {
    v.keyword
        .search(probe, 10)
        .unwrap()
        .into_iter()
        .map(|h| h.id)
        .collect()
}

fn nearest(v: &Views, probe: &str) -> EventId {
    v.vectors
        .search(&HashEmbedder::vector(probe), 1)
        .unwrap()
        .remove(0)
        .id
}

fn revised_store(dir: &Path) -> (EventId, EventId) {
    let id = EventId {
        session: SessionId("s1".into()),
        seq: Seq(OBS_SEQ_BASE),
    };
    let control = EventId {
        session: SessionId("s1".into()),
        seq: Seq(OBS_SEQ_BASE + 1),
    };
    let mut ledger = open(dir);
    write(
        &mut ledger,
        &[
            (
                id.seq,
                obs("s1", 1000, "staging", "runs on the raspberry pi"),
            ),
            (
                control.seq,
                obs(
                    "s1",
                    1000,
                    "hardware",
                    "a raspberry pi lives under the desk",
                ),
            ),
        ],
    );
    let (v, _) = views(&ledger);
    assert!(
        keyword(&v, "raspberry").contains(&id),
        "sanity: the first version is findable"
    );
    drop(v);
    write(
        &mut ledger,
        &[(id.seq, obs("s1", 2000, "staging", "moved to a cloud vm"))],
    );
    (id, control)
}

/// Retraction is observable: a revised event's old text is unfindable in both lanes, also
/// after reopening the store. A nearest-neighbour search always returns something, so
/// "unfindable" means the revised event loses to a control that truly carries the old text.
#[test]
fn retraction_makes_the_old_text_unfindable_in_both_lanes() {
    let dir = tempfile::tempdir().unwrap();
    let (id, control) = revised_store(dir.path());
    for reopened in [false, true] {
        let ledger = open(dir.path());
        let (v, _) = views(&ledger);
        assert!(
            !keyword(&v, "raspberry").contains(&id),
            "keyword lane, reopened: {reopened}"
        );
        assert!(keyword(&v, "cloud vm").contains(&id));
        assert_eq!(
            nearest(&v, "runs on the raspberry pi"),
            control,
            "vector lane, reopened: {reopened}"
        );
        assert_eq!(nearest(&v, "raspberry pi under a desk"), control);
        assert_eq!(nearest(&v, "moved to a cloud vm"), id);
        let staging = v.tables.subject("staging").unwrap().unwrap();
        assert_eq!(
            (staging.text.as_str(), staging.count),
            ("moved to a cloud vm", 1)
        );
    }
}

#[test]
#[ignore = "red twin: must FAIL when run explicitly (tests/run checks it)"]
fn retraction_oracle_is_red_capable() {
    let dir = tempfile::tempdir().unwrap();
    let (id, _) = revised_store(dir.path());
    let ledger = open(dir.path());
    let (v, _) = views(&ledger);
    assert!(
        keyword(&v, "raspberry").contains(&id),
        "correct behaviour: this assertion is meant to fail"
    );
}

/// A deterministic ledger: three sessions of tool calls (every fifth fails) and
/// observations on two subjects, spread over days. No randomness, no clock.
fn synthetic() -> Vec<(Seq, Envelope)> {
    let mut out = Vec::new();
    for s in 0..3i64 {
        let sid = format!("s{s}");
        for n in 0..20i64 {
            let ts = s * DAY_MS / 2 + n * 3_600_000;
            let ev = Event::ToolCall {
                tool: "Bash".into(),
                detail: format!("cmd-{n}"),
                ok: n % 5 != 0,
            };
            out.push((
                Seq(n as u32 * 16 + 2),
                Envelope::new(SessionId(sid.clone()), ts, ev),
            ));
        }
        for n in 0..4i64 {
            let ts = s * DAY_MS / 2 + n * 7_200_000;
            let subject = if n % 2 == 0 { "staging" } else { "gate" };
            out.push((
                Seq(OBS_SEQ_BASE + n as u32),
                obs(&sid, ts, subject, &format!("claim {s}-{n}")),
            ));
        }
    }
    out.sort_by_key(|(seq, e)| (e.ts_ms, e.session.clone(), *seq));
    out
}

type Days = BTreeMap<String, (i64, i64)>;
type Subjects = BTreeMap<String, (String, i64)>;

/// What the views must hold after folding `events`, by a plain scan that shares no code
/// with the views.
fn predict(events: &[(Seq, Envelope)]) -> (Days, Subjects) {
    let mut days: Days = BTreeMap::new();
    // subject -> (newest key, its text, count)
    type Newest = ((i64, SessionId, Seq), String, i64);
    let mut newest: BTreeMap<String, Newest> = BTreeMap::new();
    for (seq, e) in events {
        let day = jiff::Timestamp::from_millisecond(e.ts_ms)
            .unwrap()
            .strftime("%Y-%m-%d")
            .to_string();
        match &e.kind {
            Event::ToolCall { ok, .. } => {
                let d = days.entry(day).or_default();
                d.0 += 1;
                d.1 += i64::from(!ok);
            }
            Event::Obs { subject, text, .. } => {
                let key = (e.ts_ms, e.session.clone(), *seq);
                let entry = newest
                    .entry(subject.clone())
                    .or_insert((key.clone(), text.clone(), 0));
                if key >= entry.0 {
                    entry.0 = key;
                    entry.1 = text.clone();
                }
                entry.2 += 1;
            }
            _ => {}
        }
    }
    let subjects = newest
        .into_iter()
        .map(|(k, (_, text, n))| (k, (text, n)))
        .collect();
    (days, subjects)
}

fn observe(v: &Views) -> (Days, Subjects) {
    let days = v
        .tables
        .all_days()
        .unwrap()
        .into_iter()
        .filter(|(_, d)| d.tools > 0)
        .map(|(k, d)| (k, (d.tools, d.fails)))
        .collect();
    let subjects = v
        .tables
        .all_subjects()
        .unwrap()
        .into_iter()
        .map(|(k, s)| (k, (s.text, s.count)))
        .collect();
    (days, subjects)
}

/// Replay determinism: the record as of any cut equals an independent prediction from the
/// events up to that cut. The cut goes through `asof`'s own fold.
#[test]
fn folding_any_prefix_equals_an_independent_prediction() {
    let all = synthetic();
    let dir = tempfile::tempdir().unwrap();
    let mut ledger = open(&dir.path().join("real"));
    write(&mut ledger, &all);
    let (real_views, mut slot) = views(&ledger);
    for cut in [0usize, 1, 7, 24, all.len()] {
        let cutoff = if cut == 0 { -1 } else { all[cut - 1].1.ts_ms };
        let prefix: Vec<_> = all
            .iter()
            .filter(|(_, e)| e.ts_ms <= cutoff)
            .cloned()
            .collect();
        let scratch = dir.path().join(format!("cut{cut}"));
        let past = crate::asof::fold_until(
            &ledger,
            &real_views,
            cutoff,
            &scratch,
            &mut slot,
            jiff::tz::TimeZone::UTC,
        )
        .unwrap();
        assert_eq!(past.events, prefix.len());
        assert_eq!(observe(&past.views), predict(&prefix), "cut at {cut}");
    }
}

#[test]
#[ignore = "red twin: must FAIL when run explicitly (tests/run checks it)"]
fn replay_oracle_is_red_capable() {
    let all = synthetic();
    let dir = tempfile::tempdir().unwrap();
    let mut ledger = open(dir.path());
    write(&mut ledger, &all[..7]);
    let (v, _) = views(&ledger);
    assert_eq!(
        observe(&v),
        predict(&all[..8]),
        "correct behaviour: this assertion is meant to fail"
    );
}

/// How events are batched into transactions is unobservable.
#[test]
fn batching_is_unobservable() {
    let all = synthetic();
    let one = tempfile::tempdir().unwrap();
    let mut a = open(one.path());
    write(&mut a, &all);
    let (va, _) = views(&a);
    let many = tempfile::tempdir().unwrap();
    let mut b = open(many.path());
    for (i, e) in all.iter().enumerate() {
        write(&mut b, std::slice::from_ref(e));
        // Views catch up at arbitrary points in between, as reads would.
        if i % 7 == 3 {
            views(&b);
        }
    }
    let (vb, _) = views(&b);
    assert_eq!(observe(&va), observe(&vb));
    assert_eq!(
        va.tables.all_sessions().unwrap(),
        vb.tables.all_sessions().unwrap()
    );
    assert_eq!(va.tables.all_days().unwrap(), vb.tables.all_days().unwrap());
}

#[test]
fn equal_timestamp_observations_resolve_by_seq() {
    for _ in 0..8 {
        let dir = tempfile::tempdir().unwrap();
        let mut l = open(dir.path());
        write(
            &mut l,
            &[
                (Seq(OBS_SEQ_BASE + 1), obs("s", 5000, "x", "second claim")),
                (Seq(OBS_SEQ_BASE), obs("s", 5000, "x", "first claim")),
            ],
        );
        let (v, _) = views(&l);
        assert_eq!(v.tables.subject("x").unwrap().unwrap().text, "second claim");
    }
}
