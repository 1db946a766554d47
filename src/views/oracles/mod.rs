//! The oracles: replaying the ledger is the truth, and every view must agree with it.
//!
//! Each oracle returns what it found wrong (empty: nothing), each finding typed by what it
//! is about, so the same code runs green on the real fold and red on a deliberately broken
//! one (see [`super::fault`]): the `*_goes_red_*` tests turn each fault on and require the
//! oracle to report it with the finding that fault is about. `tests/oracles` runs them all.

mod ledgers;
mod model;

use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use super::fault::{self, Fault, Midway};
use super::{ModelSlot, Views};
use crate::embed::hash::HashEmbedder;
use crate::ledger::{Access, Ledger, Mode, WriteSet};
use crate::vocab::event::{Envelope, EventId};
use ledgers::{HOUR, Kind, Step, T0, Version, Written};
use model::{About, Finding, View, diff, model, observe};

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

fn slot() -> ModelSlot {
    ModelSlot::with(Box::new(HashEmbedder::new()))
}

/// A slot as the command line has one: folds queue texts for the embedding pass.
fn deferred() -> ModelSlot {
    slot().deferred()
}

/// The embedding pass, in small batches (so a revision can land between two of them).
fn embed_queued(views: &Views) -> Result<usize, super::ViewError> {
    views.embed_queued(&mut slot(), 3)
}

/// The time zone the views are opened in: behind UTC and half an hour off the hour, so the
/// record's days (it starts at noon UTC) split where UTC's do not.
fn tz() -> jiff::tz::TimeZone {
    jiff::tz::TimeZone::fixed(jiff::tz::Offset::from_seconds(-(9 * 3600 + 1800)).unwrap())
}

fn open_views(ledger: &Ledger, slot: &mut ModelSlot) -> Result<Views, super::ViewError> {
    Views::open(ledger, slot, tz(), &mut |_| {})
}

/// What a reader is served: the views as they stand, nothing caught up.
fn peek(ledger: &Ledger) -> Result<Option<Views>, super::ViewError> {
    Views::peek(ledger, tz(), Duration::from_secs(30))
}

/// What views were folded from: the feed up to each lane's position, and whether the
/// embedding pass ran since (if not, texts a fold queued have no vector yet); with what
/// the store beside them must say of them.
#[derive(Clone, Copy)]
struct Seen<'a> {
    tables: &'a [Written],
    keyword: &'a [Written],
    embedded: bool,
    store: Store<'a>,
}

/// The store beside the views: its ledger, the feed written to it, what it records of
/// the views, and the words redacted from it.
#[derive(Clone, Copy)]
struct Store<'a> {
    ledger: &'a Ledger,
    feed: &'a [Written],
    record: Record,
    redacted: &'a [String],
}

/// What the store records of its views, by the catch-ups' model: the generation they are
/// in (0: none completed), the tables' position (`None`: no views completed), and how many
/// changes of the feed the closings file was written from (`None`: never).
#[derive(Clone, Copy, Default)]
struct Record {
    generation: u32,
    tables: Option<usize>,
    closings: Option<usize>,
}

impl Record {
    /// After views are opened (caught up, or `rebuilt`) over the first `last` changes of
    /// the feed.
    /// The first views completed are generation 1, a rebuild makes the next. Every open
    /// leaves the closings file written from the views it opened, even when the tables
    /// were already there (a catch-up interrupted after flushing them).
    fn opened(&mut self, last: usize, rebuilt: bool) {
        self.generation = match rebuilt {
            true => self.generation + 1,
            false => self.generation.max(1),
        };
        self.closings = Some(last);
        self.tables = Some(last);
    }
}

impl<'a> Seen<'a> {
    /// Both lanes at the end of the store's feed.
    fn all(store: Store<'a>, embedded: bool) -> Seen<'a> {
        Seen {
            tables: store.feed,
            keyword: store.feed,
            embedded,
            store,
        }
    }
}

/// An oracle's comparison of open views with what they were folded from.
type Judge<'a> = dyn Fn(&str, &Views, Seen<'_>) -> Vec<Finding> + 'a;

/// What a catch-up does, by the rules the fold documents: a rebuild (no views yet) folds
/// every change of the feed, each event's current version and each revision's old one; a
/// catch-up folds the changes after the lower lane's position. Either flushes after each
/// `chunk` changes and once at the end, and a catch-up with nothing behind not at all. A
/// flush writes the tables, then commits the keyword lane, each up to the change it
/// reached, never moving a lane back; a rebuild becomes current only after its last flush.
/// Returns whether an interruption armed at flush `fail_at` fires, and the lanes' positions
/// after the catch-up (`None`: no views were ever completed): a flush failing before its
/// tables moves neither lane, one failing before the keyword lane moves the tables alone.
fn catch_up_model(
    at: Option<(usize, usize)>,
    last: usize,
    chunk: usize,
    fail_at: Option<(usize, Midway)>,
) -> (bool, Option<(usize, usize)>) {
    let from = at.map_or(0, |(t, k)| t.min(k));
    let flushes = match at {
        Some(_) if from == last => 0,
        _ => (last - from) / chunk + 1,
    };
    let reached = |flush: usize| (from + flush * chunk).min(last);
    match (fail_at.filter(|(f, _)| *f <= flushes), at) {
        (None, _) => (false, Some((last, last))),
        (Some(_), None) => (true, None),
        (Some((f, Midway::BeforeTables)), Some((t, k))) => {
            (true, Some((t.max(reached(f - 1)), k.max(reached(f - 1)))))
        }
        (Some((f, Midway::BeforeKeyword)), Some((t, k))) => {
            (true, Some((t.max(reached(f)), k.max(reached(f - 1)))))
        }
    }
}

/// Whether `r` is the failure of a flush a test armed with [`fault::fail_flush_in`].
fn interrupted<T>(r: &Result<T, super::ViewError>) -> bool {
    matches!(r, Err(e) if e.to_string().contains("injected"))
}

/// Run `steps` against a fresh store in `dir`: writes, catch-ups that may be chunked small
/// and interrupted, rebuilds. After every step but a write, `judge` compares the views a
/// reader is then served with the feed up to their lanes' positions, which the catch-ups'
/// model predicts, as it predicts which armed interruptions fire. Returns what went wrong.
fn play(dir: &Path, steps: &[Step], judge: &Judge<'_>) -> (Vec<Finding>, Record) {
    let mut found = Vec::new();
    let mut ledger = open(dir);
    let mut n = 0;
    let mut catch_ups = 0;
    let mut at = None;
    let mut record = Record::default();
    for (i, step) in steps.iter().enumerate() {
        if let Step::Write(vs) = step {
            let mut set = WriteSet::default();
            for v in vs {
                let (id, env) = ledgers::envelope(n, v);
                set.blobs.extend(ledgers::blobs_of(n, v));
                set.event(id.seq, env);
                n += 1;
            }
            ledger.write(set).unwrap();
            continue;
        }
        let feed = ledgers::feed(&steps[..=i]);
        let redacted = ledgers::redactions(&steps[..=i]);
        let mut embedded = false;
        let what = match step {
            Step::Write(_) => unreachable!("a write is judged with the next step"),
            Step::CatchUp { chunk, fail_at } => {
                let what = format!("after step {i}, a catch-up by {chunk} failing at {fail_at:?}");
                let (fires, then) = catch_up_model(at, feed.len(), *chunk, *fail_at);
                fault::set_chunk(Some(*chunk));
                fault::fail_flush_in(*fail_at);
                let r = open_views(&ledger, &mut deferred());
                fault::set_chunk(None);
                fault::fail_flush_in(None);
                // Every other catch-up is followed by the embedding pass: later revisions
                // then meet texts embedded, and texts still queued.
                catch_ups += 1;
                embedded = r.is_ok() && catch_ups % 2 == 0;
                let r = r.and_then(|v| match embedded {
                    true => embed_queued(&v).map(|_| ()),
                    false => Ok(()),
                });
                let fired = interrupted(&r);
                if fired != fires {
                    found.push(Finding::new(
                        About::Flushes,
                        format!("{what}: the interruption fired: {fired}, the model says {fires}"),
                    ));
                }
                if let Err(e) = r
                    && !fired
                {
                    found.push(Finding::new(About::Failed, format!("{what}: {e}")));
                }
                match fires {
                    false => record.opened(feed.len(), false),
                    true => record.tables = then.map(|(t, _)| t),
                }
                at = then;
                what
            }
            Step::RebuildWithHintOff(off) => {
                let last = ledger.last_lsn().unwrap();
                drop(ledger);
                let hint = last.saturating_add_signed(*off);
                let what = format!("after step {i}, a rebuild with the hint at {hint}");
                std::fs::write(dir.join("ledger.lsn"), hint.to_string()).unwrap();
                ledger = open(dir);
                let r = Views::rebuild_now(&ledger, &mut deferred(), tz());
                if let Err(e) = r {
                    found.push(Finding::new(About::Failed, format!("{what}: {e}")));
                }
                at = Some((feed.len(), feed.len()));
                record.opened(feed.len(), true);
                what
            }
            Step::Redact { version, place } => {
                let Some(word) = ledgers::redacted_word(n, *version, *place) else {
                    continue;
                };
                let what = format!("after step {i}, a redaction of {word}");
                if let Err(e) = redact(&mut ledger, &word) {
                    found.push(Finding::new(About::Failed, format!("{what}: {e}")));
                }
                at = Some((feed.len(), feed.len()));
                record.opened(feed.len(), false);
                what
            }
            Step::RefillPast => {
                let what = format!("after step {i}, a refill of the past table");
                found.extend(refill_findings(&what, &ledger));
                at = Some((feed.len(), feed.len()));
                record.opened(feed.len(), false);
                what
            }
        };
        let store = Store {
            ledger: &ledger,
            feed: &feed,
            record,
            redacted: &redacted,
        };
        found.extend(served(&what, store, at, embedded, judge));
    }
    (found, record)
}

/// Redact `word` from the store as `peat redact` does (`redact::retro`, which this layer
/// cannot call): every event whose current version holds it written again without it, then
/// the same [`super::scrubbed::after_redaction`] the command calls.
fn redact(ledger: &mut Ledger, word: &str) -> Result<(), super::ViewError> {
    let mut set = WriteSet::default();
    let mut old = Vec::new();
    let mut embedded = |env: &Envelope| {
        if let Some(row) = super::rows::TextRow::of(env.ts_ms, &env.kind) {
            old.push(row.embed_text().to_string());
        }
    };
    for item in ledger.events() {
        let (id, env) = item?;
        if let Some(clean) = ledgers::redacted(&env, word) {
            embedded(&env);
            set.event(id.seq, clean);
        }
    }
    for entry in ledger.revisions() {
        if let Some(env) = entry?.old.filter(|e| ledgers::redacted(e, word).is_some()) {
            embedded(&env);
        }
    }
    if !set.events.is_empty() {
        ledger.write(set)?;
    }
    let scrub = super::scrubbed::Scrub {
        envelope: &|env| ledgers::redacted(env, word),
        cursor: &|_| None,
        drop_blob: &|_| false,
    };
    super::scrubbed::after_redaction(ledger, &mut deferred(), tz(), &mut |_| {}, &old, scrub)?;
    Ok(())
}

/// The views opened (caught up) and their past table refilled from the ledger: by the rule
/// `refill_past` states, a refill puts back what the ledger's revisions say, which the
/// past table already holds, so every table is as it was before.
fn refill_findings(what: &str, ledger: &Ledger) -> Vec<Finding> {
    let failed = |e: super::ViewError| vec![Finding::new(About::Failed, format!("{what}: {e}"))];
    let mut views = match open_views(ledger, &mut deferred()) {
        Ok(v) => v,
        Err(e) => return failed(e),
    };
    let none = BTreeSet::new();
    let before = observe(&views, &none, &none);
    if let Err(e) = views.refill_past(ledger) {
        return failed(e);
    }
    diff(
        &format!("{what}, against the tables before it"),
        &observe(&views, &none, &none),
        &before,
    )
}

/// What a reader is served after a step, judged against the feed up to the positions the
/// model has for the lanes (`at`; `None`: no views were ever completed, nothing is served).
fn served(
    what: &str,
    store: Store<'_>,
    at: Option<(usize, usize)>,
    embedded: bool,
    judge: &Judge<'_>,
) -> Vec<Finding> {
    let position = |s: String| vec![Finding::new(About::Positions, format!("{what}: {s}"))];
    let views = match (peek(store.ledger), at) {
        (Err(e), _) => return vec![Finding::new(About::Failed, format!("{what}: {e}"))],
        (Ok(None), None) => return Vec::new(),
        (Ok(Some(_)), None) => return position("a reader is served views never completed".into()),
        (Ok(None), Some(_)) => return position("a reader is served no views".into()),
        (Ok(Some(v)), Some(_)) => v,
    };
    let (t, k) = at.unwrap();
    let held = (views.tables.applied().unwrap(), views.keyword.applied_lsn());
    if held != (t as u64, k as u64) {
        return position(format!(
            "the tables and the keyword lane are at {held:?}, the model says {:?}",
            (t, k)
        ));
    }
    let seen = Seen {
        tables: &store.feed[..t],
        keyword: &store.feed[..k],
        embedded,
        store,
    };
    judge(what, &views, seen)
}

/// The replay oracle's judge: the views equal the independent model of what they folded,
/// every table, both lanes, the embedding queue and cache (a lane behind the other compared with
/// its own prefix; before the embedding pass, the vectors the fold did not queue), and
/// both lanes rank as they state.
fn replay_judge(steps: &[Step]) -> impl Fn(&str, &Views, Seen<'_>) -> Vec<Finding> + '_ {
    let (probes, texts) = ledgers::vocabulary(steps);
    let blobs = ledgers::all_blobs(steps);
    move |what, views, seen| {
        let now = |feed| ledgers::as_of(feed, i64::MAX);
        let mut want = folded(seen.tables, &blobs, &probes);
        (want.past, want.past_blobs) = model::past(seen.tables, &blobs);
        // The texts the keyword lane folded, when it is behind the tables.
        let mut behind = None;
        if seen.keyword.len() != seen.tables.len() {
            let mut lane = model(&now(seen.keyword), &blobs, &probes);
            want.keyword = std::mem::take(&mut lane.keyword);
            behind = Some(lane.texts);
        }
        let got = observe(views, &probes, &texts);
        let mut found = Vec::new();
        // Every text to embed has its vector or waits in the queue, never both: the queue
        // holds exactly the texts without one (none after the pass).
        let missing = want
            .vectors
            .keys()
            .filter(|id| !got.vectors.contains_key(id));
        let (missing, queued) = (missing.count(), views.vectors.queued().unwrap());
        if queued != missing {
            found.push(Finding::new(
                About::Differs(View::Queue),
                format!("{what}: {queued} texts queued, {missing} have no vector"),
            ));
        }
        // What a day counts holds of the model and of the views, whatever either folded.
        found.extend(model::day_findings(&format!("{what}, the model"), &want));
        found.extend(model::day_findings(what, &got));
        // Which texts are searchable and embeddable, likewise.
        let level = behind.is_none();
        let of_model = format!("{what}, the model");
        found.extend(model::text_findings(&of_model, &want, level, true));
        found.extend(model::text_findings(what, &got, level, seen.embedded));
        let model = slot().id.clone().unwrap();
        let feed = seen.store.feed;
        found.extend(model::cache_findings(
            what,
            views,
            &model,
            feed,
            &got.vectors,
        ));
        if !seen.embedded {
            want.vectors.retain(|id, _| got.vectors.contains_key(id));
        }
        found.extend(diff(what, &got, &want));
        let texts = behind.as_ref().unwrap_or(&want.texts);
        found.extend(model::ranks(what, views, &got, &want, texts));
        found.extend(store_findings(what, views, seen.store, &blobs));
        found.extend(model::unredacted(what, &got, seen.store.redacted));
        found
    }
}

/// What views folded from `feed` hold: the model of each event's current version, each
/// session spanning every version of its activity folded (see [`model::spans`]).
fn folded(
    feed: &[Written],
    blobs: &BTreeMap<crate::vocab::change::BlobId, Vec<u8>>,
    probes: &BTreeSet<String>,
) -> model::Snapshot {
    let mut s = model(&ledgers::as_of(feed, i64::MAX), blobs, probes);
    let spans = model::spans(feed);
    for (session, r) in s.sessions.iter_mut() {
        (r.start_ms, r.end_ms) = spans.get(session).copied().unzip();
    }
    s
}

/// The records the store keeps of its views, against the catch-ups' model: the views'
/// meta records (the generation they are in, built for the embedder and the zone they were
/// opened with; the ledger they were folded from) and the closings file (the closings of
/// the views as they were last opened).
fn store_findings(
    what: &str,
    views: &Views,
    store: Store<'_>,
    blobs: &BTreeMap<crate::vocab::change::BlobId, Vec<u8>>,
) -> Vec<Finding> {
    let current = super::Current::of(store.record.generation, slot().id.as_deref(), &tz());
    let want = BTreeMap::from([
        (
            "current".to_string(),
            serde_json::to_value(current).unwrap(),
        ),
        (
            "ledger".to_string(),
            serde_json::Value::String(store.ledger.identity().unwrap()),
        ),
    ]);
    let mut found = Vec::new();
    model::differ(&mut found, what, View::Meta, &model::meta(views), &want);
    let file = super::closings::read(store.ledger);
    let listed = file.as_ref().map(model::listed);
    let opened = |feed| folded(feed, blobs, &BTreeSet::new());
    let written = store.record.closings.map(|c| &store.feed[..c]);
    let closings = written.map(|feed| model::closings(&opened(feed)));
    match (listed, closings) {
        (Some(got), Some(want)) => {
            model::differ(&mut found, what, View::Closings, &got, &want);
            if file.is_some_and(|f| f.truncated) {
                found.push(Finding::new(
                    About::Differs(View::Closings),
                    format!("{what}: the closings file left sessions out, of fewer than a hundred"),
                ));
            }
        }
        (None, None) => {}
        (got, want) => found.push(Finding::new(
            About::Differs(View::Closings),
            format!("{what}: the closings file holds {got:?}, the model {want:?}"),
        )),
    }
    found
}

/// The retraction oracle's judge: no replaced version can be found by its own content.
fn retraction_judge(steps: &[Step]) -> impl Fn(&str, &Views, Seen<'_>) -> Vec<Finding> + '_ {
    let blobs = ledgers::all_blobs(steps);
    let (probes, texts) = ledgers::vocabulary(steps);
    move |what, views, seen| {
        let mut found = superseded_findings(what, views, seen, &blobs);
        if !seen.store.redacted.is_empty() {
            let got = observe(views, &probes, &texts);
            found.extend(model::unredacted(what, &got, seen.store.redacted));
        }
        found
    }
}

/// After `steps` (judged after each), the views caught up incrementally, the views
/// reopened, the views rebuilt from scratch and reopened again, each before and after the
/// embedding pass, as `judge` finds them.
fn findings_in(dir: &Path, steps: &[Step], judge: &Judge<'_>) -> Vec<Finding> {
    let (mut found, mut record) = play(dir, steps, judge);
    let feed = ledgers::feed(steps);
    let redacted = ledgers::redactions(steps);
    let mut check = |what: &str, ledger: &Ledger, rebuilt, views| match views {
        Ok(v) => {
            record.opened(feed.len(), rebuilt);
            let store = |ledger| Store {
                ledger,
                feed: &feed,
                record,
                redacted: &redacted,
            };
            let seen = |embedded| Seen::all(store(ledger), embedded);
            let before = format!("{what}, before the embedding pass");
            found.extend(judge(&before, &v, seen(false)));
            if let Err(e) = embed_queued(&v) {
                found.push(Finding::new(
                    About::Failed,
                    format!("{what}: the embedding pass failed: {e}"),
                ));
            }
            found.extend(judge(what, &v, seen(true)));
        }
        Err(e) => found.push(Finding::new(
            About::Failed,
            format!("{what}: the views did not open: {e}"),
        )),
    };
    {
        let ledger = open(dir);
        check(
            "caught up",
            &ledger,
            false,
            open_views(&ledger, &mut deferred()),
        );
    }
    {
        let ledger = open(dir);
        check(
            "reopened",
            &ledger,
            false,
            open_views(&ledger, &mut deferred()),
        );
        let rebuilt = Views::rebuild_now(&ledger, &mut deferred(), tz());
        check("rebuilt", &ledger, true, rebuilt);
    }
    let ledger = open(dir);
    let reopened = open_views(&ledger, &mut deferred());
    check("reopened after the rebuild", &ledger, false, reopened);
    found
}

/// Replay determinism: after every step of `steps` and at their end, the views caught up
/// incrementally, reopened, and rebuilt from scratch all equal the independent model.
fn replay_findings(steps: &[Step]) -> Vec<Finding> {
    let dir = tempfile::tempdir().unwrap();
    findings_in(dir.path(), steps, &replay_judge(steps))
}

/// Retraction: after every step of `steps` and at their end, no version a revision
/// replaced is found in any lane, nor its steps and changes in the tables.
fn retraction_findings(steps: &[Step]) -> Vec<Finding> {
    let dir = tempfile::tempdir().unwrap();
    findings_in(dir.path(), steps, &retraction_judge(steps))
}

/// `asof` at each cutoff, with words and without (the tables alone), equals the model of
/// each event's newest version at or before it, from the views caught up and from the
/// views rebuilt (whose past versions a rebuild fills from the feed's revisions, not from
/// the changes as they come). The views themselves, whose revisions move in time, are
/// judged after every step as the replay oracle judges them.
fn asof_findings(steps: &[Step], cutoffs: &[i64]) -> Vec<Finding> {
    let dir = tempfile::tempdir().unwrap();
    let judge = replay_judge(steps);
    let (mut found, mut record) = play(&dir.path().join("store"), steps, &judge);
    let (probes, texts) = ledgers::vocabulary(steps);
    let feed = ledgers::feed(steps);
    let redacted = ledgers::redactions(steps);
    let blobs = ledgers::all_blobs(steps);
    let ledger = open(&dir.path().join("store"));
    let mut slot = slot();
    for how in ["caught up", "rebuilt"] {
        let opened = match how {
            "caught up" => open_views(&ledger, &mut slot),
            _ => Views::rebuild_now(&ledger, &mut slot, tz()),
        };
        let real = match opened {
            Ok(v) => {
                record.opened(feed.len(), how == "rebuilt");
                // What play's catch-ups queued stays queued; a rebuild embeds everything.
                let store = Store {
                    ledger: &ledger,
                    feed: &feed,
                    record,
                    redacted: &redacted,
                };
                let seen = Seen::all(store, how == "rebuilt");
                found.extend(judge(&format!("the views {how}"), &v, seen));
                v
            }
            Err(e) => {
                found.push(Finding::new(
                    About::Failed,
                    format!("the views did not open ({how}): {e}"),
                ));
                return found;
            }
        };
        // Every other cutoff is asked without words.
        for (i, cutoff) in cutoffs.iter().enumerate() {
            let search = i % 2 == 0;
            let then = ledgers::as_of(&feed, *cutoff);
            // As `peat asof` does: copy the past out of the views, then replay it.
            let scratch = dir.path().join(format!("asof-{how}-{i}-{search}"));
            // Without words, with a slot as the command line has one: the texts the copied
            // cache lacks (all of them) wait for a pass that never comes.
            let mut without = deferred();
            let folding = if search { &mut slot } else { &mut without };
            let past = crate::views::asof::copy_past(&real, *cutoff, &scratch, search)
                .and_then(|copied| crate::views::asof::replay(copied, folding, tz()));
            let what = format!("asof {cutoff} from the views {how}, search: {search}");
            match past {
                Ok(p) => {
                    if p.events != then.len() {
                        found.push(Finding::new(
                            About::Folded,
                            format!(
                                "{what}: {} events folded, the model has {}",
                                p.events,
                                then.len()
                            ),
                        ));
                    }
                    let mut want = model(&then, &blobs, &probes);
                    if !search {
                        (want.keyword, want.vectors) = Default::default();
                    }
                    found.extend(diff(&what, &observe(&p.views, &probes, &texts), &want));
                }
                Err(e) => found.push(Finding::new(About::Failed, format!("{what} failed: {e}"))),
            }
        }
        let days = Held {
            feed: &feed,
            blobs: &blobs,
            probes: &probes,
            how,
            dir: dir.path(),
        };
        found.extend(days.findings(&real, cutoffs));
    }
    found
}

/// What `asof` without words is judged against: the record of each moment, as the model
/// folds it.
struct Held<'a> {
    feed: &'a [Written],
    blobs: &'a BTreeMap<crate::vocab::change::BlobId, Vec<u8>>,
    probes: &'a BTreeSet<String>,
    /// Which views are read ("caught up", "rebuilt").
    how: &'a str,
    dir: &'a Path,
}

impl Held<'_> {
    /// At the end of each cutoff's local day, what `asof` without words tells
    /// (`Tally::held`) equals what the model of that moment holds (its events, sessions and
    /// days, its newest session's summary), in the whole record and among every other
    /// session; and where `asof` with words would search today's lanes, they find the texts
    /// of that moment (see [`cut_findings`]).
    fn findings(&self, real: &Views, cutoffs: &[i64]) -> Vec<Finding> {
        use crate::views::session::SessionSet;
        let days: BTreeSet<jiff::civil::Date> = cutoffs
            .iter()
            .filter(|c| jiff::Timestamp::from_millisecond(**c).is_ok())
            .map(|c| crate::vocab::time::local_date(*c, &tz()))
            .collect();
        let sessions: BTreeSet<&crate::vocab::event::SessionId> =
            self.feed.iter().map(|w| &w.id.session).collect();
        let every_other = SessionSet::new(sessions.into_iter().step_by(2).cloned().collect());
        let mut found = Vec::new();
        for (i, day) in days.iter().enumerate() {
            let cutoff = crate::vocab::time::day_end_ms(*day, &tz());
            let then = model(&ledgers::as_of(self.feed, cutoff), self.blobs, self.probes);
            for only in [None, Some(&every_other)] {
                let what = format!(
                    "asof {day} without words from the views {}{}",
                    self.how,
                    if only.is_some() {
                        ", every other session"
                    } else {
                        ""
                    }
                );
                let scratch = self
                    .dir
                    .join(format!("held-{}-{i}-{}", self.how, only.is_some()));
                let tally = crate::views::asof::Tally::at(real, *day);
                if only.is_none()
                    && let Ok(t) = &tally
                    && t.searchable_today()
                {
                    let what = format!("asof {day} with words from the views {}", self.how);
                    found.extend(cut_findings(real, cutoff, &then, self.probes, &what));
                }
                match tally.and_then(|t| t.held(real, only, &scratch, &mut deferred())) {
                    Ok(got) => {
                        let want = held_in(&then, only);
                        if got != want {
                            found.push(Finding::new(
                                About::Held,
                                format!("{what}: {got:?}, the model holds {want:?}"),
                            ));
                        }
                    }
                    Err(e) => {
                        found.push(Finding::new(About::Failed, format!("{what} failed: {e}")))
                    }
                }
            }
        }
        found
    }
}

/// Today's lanes searched for the texts at or before `cutoff`, as `asof` with words
/// searches them, find the texts `then` (the model of that moment) holds: each probe word in
/// the texts of every kind holding it then, and no vector but one of a text then, the same.
fn cut_findings(
    real: &Views,
    cutoff: i64,
    then: &model::Snapshot,
    probes: &BTreeSet<String>,
    what: &str,
) -> Vec<Finding> {
    use crate::views::rows::{TextFilter, TextKind};
    let mut found = Vec::new();
    let cut = TextFilter {
        until_ms: Some(cutoff),
        ..TextFilter::default()
    };
    let kinds = std::iter::once(None).chain(
        TextKind::ALL
            .into_iter()
            .filter(|k| !k.is_prose())
            .map(Some),
    );
    for probe in probes {
        let mut got = BTreeSet::new();
        for kind in kinds.clone() {
            let filter = TextFilter {
                kind,
                ..cut.clone()
            };
            let hits = real.keyword.search(probe, &filter, 100_000).unwrap();
            got.extend(hits.into_iter().map(|h| h.id));
        }
        let want: BTreeSet<EventId> = then
            .keyword
            .iter()
            .filter(|(_, doc)| doc.words.contains(probe))
            .map(|(id, _)| id.clone())
            .collect();
        if got != want {
            found.push(Finding::new(
                About::Cut(View::Keyword),
                format!("{what}: searched for {probe:?} at or before {cutoff}, the keyword lane finds {got:?}, the model of then {want:?}"),
            ));
        }
    }
    for (id, _) in real.vectors.dump().unwrap() {
        let today = real.tables.text(&id).unwrap();
        let scored = today.as_ref().is_some_and(|row| {
            TextFilter {
                kind: Some(row.kind),
                ..cut.clone()
            }
            .admits(&id, row)
        });
        let was = today.is_some_and(|row| then.texts.get(&id).is_some_and(|r| r.text == row.text));
        if scored != was {
            found.push(Finding::new(
                About::Cut(View::Vectors),
                format!("{what}: at or before {cutoff}, the vector of {id:?} is scored: {scored}; its text is the model's then: {was}"),
            ));
        }
    }
    found
}

/// What a snapshot of the record holds among the sessions `only` admits, as `asof` without
/// words tells it: the newest session by `newest_first`, its texts from the snapshot.
fn held_in(
    s: &model::Snapshot,
    only: Option<&crate::views::session::SessionSet>,
) -> crate::views::asof::Held {
    use crate::views::session::{SessionSummary, admitted, newest_first};
    use crate::vocab::event::SessionId;
    let sessions: Vec<_> = s
        .sessions
        .iter()
        .filter(|(id, _)| admitted(only, id))
        .collect();
    let days = s
        .days
        .values()
        .filter(|d| {
            d.sessions
                .keys()
                .any(|k| admitted(only, &SessionId(k.clone())))
        })
        .count();
    let last = sessions
        .iter()
        .min_by(|a, b| newest_first(**a, **b))
        .map(|(id, rollup)| {
            SessionSummary::hydrate((*id).clone(), (*rollup).clone(), |seq| {
                let at = EventId {
                    session: (*id).clone(),
                    seq,
                };
                s.texts.get(&at).map(|row| (row.ts_ms, row.text.clone()))
            })
        });
    crate::views::asof::Held {
        events: sessions.iter().map(|(_, r)| r.events.max(0) as usize).sum(),
        sessions: sessions.len(),
        days,
        last,
    }
}

fn v(session: u8, slot: u8, kind: Kind, reps: u16) -> Version {
    Version {
        session,
        slot,
        hours: -1,
        kind,
        reps,
        shared: false,
    }
}

/// [`v`] at its slot's seq whatever its kind (see [`ledgers::envelope`]).
fn shared(session: u8, slot: u8, kind: Kind, reps: u16) -> Version {
    Version {
        shared: true,
        ..v(session, slot, kind, reps)
    }
}

/// Every revision path that only retraction can clean up, for texts of every length, with
/// interrupted catch-ups on the way: a provisional closing message rewritten as narration
/// (long and short), narration shrunk below the indexing minimum and grown above it, a
/// prompt that becomes harness text or outgrows embedding, claims and summaries emptied or
/// blanked, texts shrunk below the embedding minimum and grown above it, texts turned into
/// tool calls and back, a kind from a newer peat turned into a closing message, metas and
/// claims turned into other kinds and other kinds into them. Plus one event of every other
/// kind.
fn revision_paths() -> Vec<Step> {
    use Kind::*;
    let said = || Said;
    let first = vec![
        v(
            0,
            0,
            Meta {
                cwd: 0,
                branch: 2,
                agent: 1,
                parent: false,
            },
            0,
        ),
        v(0, 1, Final, 6),
        v(0, 2, Final, 20),
        v(0, 3, said(), 20),
        v(0, 4, User { harness: false }, 3),
        v(0, 5, User { harness: false }, 3),
        v(
            0,
            6,
            Obs {
                subject: 0,
                cites: true,
                basis: true,
            },
            5,
        ),
        v(0, 7, Summary, 200),
        v(0, 8, Tool { ok: true }, 2),
        v(0, 9, Final, 2),
        v(1, 1, said(), 2),
        v(
            1,
            2,
            Touch {
                paths: 2,
                change: 1,
            },
            0,
        ),
        v(
            1,
            10,
            Touch {
                paths: 1,
                change: 2,
            },
            0,
        ),
        v(1, 3, Commit { empty: false }, 2),
        v(1, 4, Committed, 2),
        v(1, 5, Compaction, 0),
        v(1, 6, Distill, 2),
        v(
            1,
            7,
            Obs {
                subject: 0,
                cites: false,
                basis: false,
            },
            3,
        ),
        v(1, 8, Summary, 4),
        v(1, 9, Tool { ok: false }, 2),
        v(1, 11, Final, 6),
        v(1, 12, User { harness: false }, 9),
        v(1, 13, Unknown, 0),
        v(
            1,
            0,
            Meta {
                cwd: 2,
                branch: 2,
                agent: 2,
                parent: true,
            },
            0,
        ),
        shared(
            2,
            0,
            Obs {
                subject: 2,
                cites: true,
                basis: true,
            },
            5,
        ),
        shared(2, 3, Tool { ok: false }, 2),
        shared(
            2,
            4,
            Obs {
                subject: 2,
                cites: false,
                basis: false,
            },
            4,
        ),
        shared(2, 5, Final, 9),
    ];
    let revised = vec![
        v(0, 1, said(), 2),                   // closing message → short narration
        v(0, 2, said(), 20),                  // closing message → long narration
        v(0, 3, said(), 3),                   // narration shrunk below the minimum
        v(0, 4, User { harness: true }, 3),   // a prompt becomes harness text
        v(0, 5, User { harness: false }, 25), // a prompt outgrows embedding
        v(
            0,
            6,
            Obs {
                subject: 0,
                cites: true,
                basis: true,
            },
            0,
        ), // a claim emptied
        v(0, 7, Summary, 1),                  // a summary blanked
        v(0, 8, Final, 7),                    // a tool call becomes a closing message
        v(0, 9, Tool { ok: false }, 2),       // a closing message becomes a tool call
        v(1, 1, said(), 17),                  // narration grows above the minimum
        v(
            1,
            2,
            Touch {
                paths: 0,
                change: 3,
            },
            0,
        ), // a touch loses files, and its change is now one the store lacks
        v(1, 10, Tool { ok: true }, 2),       // a touch becomes a tool call
        v(
            1,
            7,
            Obs {
                subject: 1,
                cites: true,
                basis: false,
            },
            3,
        ), // a claim changes subject
        v(1, 8, Summary, 5),                  // a summary rewritten
        v(1, 9, Tool { ok: true }, 2),        // a failure becomes a success
        v(1, 11, Final, 10),                  // a closing message shrinks below embedding
        v(1, 12, User { harness: false }, 5), // a two-word prompt grows to be embedded
        v(1, 13, Final, 6),                   // a newer peat's kind becomes a closing message
        shared(1, 0, Said, 20),               // a meta becomes narration: no agent, no parent
        v(
            2,
            0,
            Meta {
                cwd: 1,
                branch: 2,
                agent: 1,
                parent: true,
            },
            0,
        ), // a claim becomes the session's meta
        shared(
            2,
            3,
            Obs {
                subject: 2,
                cites: false,
                basis: true,
            },
            6,
        ), // a tool call becomes a claim
        shared(2, 4, User { harness: false }, 3), // a claim becomes a prompt
        shared(
            2,
            5,
            Obs {
                subject: 1,
                cites: false,
                basis: false,
            },
            3,
        ), // the session's last activity becomes a claim: its span keeps the time
        v(
            0,
            0,
            Meta {
                cwd: 1,
                branch: 0,
                agent: 2,
                parent: true,
            },
            0,
        ),
    ];
    vec![
        Step::Write(first),
        Step::CatchUp {
            chunk: 3,
            fail_at: Some((2, Midway::BeforeKeyword)),
        },
        Step::CatchUp {
            chunk: 4,
            fail_at: None,
        },
        Step::Write(revised[..7].to_vec()),
        // The tables get five changes ahead of the keyword lane, then a catch-up one change
        // at a time is interrupted (before its second flush writes anything) while the
        // tables are still ahead: positions must hold.
        Step::CatchUp {
            chunk: 5,
            fail_at: Some((1, Midway::BeforeKeyword)),
        },
        Step::CatchUp {
            chunk: 1,
            fail_at: Some((2, Midway::BeforeTables)),
        },
        Step::Write(revised[7..].to_vec()),
        // A catch-up whose second flush, the first to take the tables further, fails
        // before writing them: neither lane may move past its first flush.
        Step::CatchUp {
            chunk: 3,
            fail_at: Some((2, Midway::BeforeTables)),
        },
        // A catch-up whose only flush fails after the tables: they are current, the
        // keyword lane is not, and the next open must still catch it up.
        Step::CatchUp {
            chunk: 1000,
            fail_at: Some((1, Midway::BeforeKeyword)),
        },
    ]
}

/// The searchable text an envelope carries, whatever its kind.
fn words_of(env: &Envelope) -> Option<&str> {
    use crate::vocab::event::Event::*;
    match &env.kind {
        FinalMsg { text } | Said { text } | CompactSummary { text } | UserMsg { text, .. } => {
            Some(text)
        }
        Obs { text, .. } => Some(text),
        _ => None,
    }
}

/// The versions of `feed` a later one replaced, with their event's current version.
fn replaced(feed: &[Written]) -> impl Iterator<Item = (&Written, Envelope)> {
    let now = ledgers::as_of(feed, i64::MAX);
    feed.iter().filter_map(move |w| {
        let current = &now[&w.id];
        (current != &w.env).then(|| (w, current.clone()))
    })
}

/// Every version that was replaced is searched for by its own content: its words must not
/// find its event in the keyword lane, its event's vector must not be made from it, and
/// the log steps and changes it had (and its current version has not) must be gone.
fn superseded_findings(
    what: &str,
    views: &Views,
    seen: Seen<'_>,
    blobs: &BTreeMap<crate::vocab::change::BlobId, Vec<u8>>,
) -> Vec<Finding> {
    let mut found = Vec::new();
    let mut stale = |view: View, s: String| found.push(Finding::new(About::Stale(view), s));
    for (w, _) in replaced(seen.keyword) {
        if words_of(&w.env).is_none_or(|t| t.trim().is_empty()) {
            continue;
        }
        let hits = views
            .keyword
            .search(&ledgers::probe(w.n), &Default::default(), 1000)
            .unwrap();
        if hits.iter().any(|h| h.id == w.id) {
            stale(
                View::Keyword,
                format!(
                    "{what}: {:?} is still found by the words of version {}",
                    w.id, w.n
                ),
            );
        }
    }
    let vectors: BTreeMap<EventId, Vec<u8>> = views.vectors.dump().unwrap().into_iter().collect();
    let held = observe(views, &Default::default(), &Default::default());
    for (w, current) in replaced(seen.tables) {
        if let (Some(stored), Some(text)) = (vectors.get(&w.id), words_of(&w.env)) {
            let like = |t: &str| super::vectors::dot_quantized(&HashEmbedder::vector(t), stored);
            let score = like(text);
            // An old version whose words are near the current one's (a long text cut by the
            // embedding window, a revision that changed little) is near the right vector
            // too: stale means nearer the old words than the current ones.
            if score > 0.5 && score > words_of(&current).map_or(f32::MIN, like) {
                stale(
                    View::Vectors,
                    format!("{what}: {:?} holds the vector of version {}", w.id, w.n),
                );
            }
        }
        let now = model::steps_of(&current, blobs);
        for step in model::steps_of(&w.env, blobs) {
            let kept = held
                .steps
                .iter()
                .any(|((id, _), (_, s))| id == &w.id && s == &step);
            if kept && !now.contains(&step) {
                stale(
                    View::Steps,
                    format!(
                        "{what}: {:?} keeps the step {step:?} of version {}",
                        w.id, w.n
                    ),
                );
            }
        }
        let changes = |env: &Envelope| model::changes_of(&w.id, env, blobs);
        let now = changes(&current);
        for (key, text) in changes(&w.env) {
            if held.changes.get(&key) == Some(&text) && now.get(&key) != Some(&text) {
                stale(
                    View::Changes,
                    format!("{what}: {key:?} keeps the change of version {}", w.n),
                );
            }
        }
    }
    found
}

/// The embedding pass takes a batch; the text is revised and caught up before the pass
/// stores it: the revision wins (no vector of the old text), and the next pass embeds it.
fn revised_while_embedding_findings() -> Vec<Finding> {
    let dir = tempfile::tempdir().unwrap();
    let mut ledger = open(dir.path());
    let mut feed = Vec::new();
    let mut write = |ledger: &mut Ledger, n: usize| {
        let v = Version {
            session: 0,
            slot: 1,
            hours: -1,
            kind: Kind::Final,
            reps: 6,
            shared: false,
        };
        let (id, env) = ledgers::envelope(n, &v);
        let mut set = WriteSet::default();
        set.event(id.seq, env.clone());
        ledger.write(set).unwrap();
        feed.push(Written { n, id, env });
    };
    write(&mut ledger, 0);
    let batch = {
        let views = open_views(&ledger, &mut deferred()).unwrap();
        let model = views.model().unwrap().to_string();
        views.vectors.take(&model, 100).unwrap()
    };
    write(&mut ledger, 1);
    let views = open_views(&ledger, &mut deferred()).unwrap();
    let done = batch.embed(Some(&mut HashEmbedder::new())).unwrap();
    let model = views.model().unwrap().to_string();
    views.vectors.store(&model, done).unwrap();
    let what = "stored after a revision";
    let record = Record {
        generation: 1,
        tables: Some(feed.len()),
        closings: Some(feed.len()),
    };
    let store = Store {
        ledger: &ledger,
        feed: &feed,
        record,
        redacted: &[],
    };
    let seen = Seen::all(store, false);
    let mut found = superseded_findings(what, &views, seen, &BTreeMap::new());
    // The batch's vector is cached under the text that was embedded, the one revised away.
    let lane = BTreeMap::new();
    found.extend(model::cache_findings(what, &views, &model, &feed, &lane));
    if views.vectors.queued().unwrap() != 1 {
        found.push(Finding::new(
            About::Differs(View::Vectors),
            "the revised text left the queue unembedded".into(),
        ));
    }
    embed_queued(&views).unwrap();
    let newest = &feed[1];
    let stored = views.vectors.dump().unwrap();
    let ok = stored.iter().any(|(i, v)| {
        i == &newest.id
            && words_of(&newest.env)
                .is_some_and(|t| super::vectors::dot_quantized(&HashEmbedder::vector(t), v) > 0.98)
    });
    if !ok {
        found.push(Finding::new(
            About::Differs(View::Vectors),
            "after the next pass the event has no vector of its newest text".into(),
        ));
    }
    found
}

/// Where the lane as a search scores it holds a vector that is not of its event's current
/// text in `feed`, or of no event of `feed`.
fn own_vector_findings(what: &str, views: &Views, feed: &[Written]) -> Vec<Finding> {
    let current: BTreeMap<&EventId, &Envelope> = feed.iter().map(|w| (&w.id, &w.env)).collect();
    let mut found = Vec::new();
    for (id, stored) in views.vectors.dump().unwrap() {
        let near = |t: &str| super::vectors::dot_quantized(&HashEmbedder::vector(t), &stored);
        let why = match current.get(&id).and_then(|env| words_of(env)) {
            Some(text) if near(text) > 0.98 => continue,
            Some(_) => "a vector of another text than its current one",
            None => "a vector of no event of this ledger",
        };
        found.push(Finding::new(
            About::Differs(View::Vectors),
            format!("{what}: {id:?} holds {why}"),
        ));
    }
    found
}

/// The lane's file beside other files: whatever lies at its path (another store's file, an
/// older write of its own, a file cut short), a search scores the rows' vectors and no
/// other.
fn vector_file_findings() -> Vec<Finding> {
    let v = Version {
        session: 0,
        slot: 1,
        hours: -1,
        kind: Kind::Final,
        reps: 6,
        shared: false,
    };
    let write = |ledger: &mut Ledger, feed: &mut Vec<Written>, n: usize| {
        let (id, env) = ledgers::envelope(n, &v);
        let mut set = WriteSet::default();
        set.event(id.seq, env.clone());
        ledger.write(set).unwrap();
        feed.push(Written { n, id, env });
    };
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let file = |dir: &Path| super::vectorfile::path(dir, 1);
    let mut found = Vec::new();

    // Another store's file, of the same event id and another text.
    let (mut ledger_a, mut feed_a) = (open(a.path()), Vec::new());
    write(&mut ledger_a, &mut feed_a, 0);
    drop(open_views(&ledger_a, &mut slot()).unwrap());
    let (mut ledger, mut feed) = (open(b.path()), Vec::new());
    write(&mut ledger, &mut feed, 1);
    drop(open_views(&ledger, &mut slot()).unwrap());
    let own = std::fs::read(file(b.path())).unwrap();
    std::fs::copy(file(a.path()), file(b.path())).unwrap();
    let views = open_views(&ledger, &mut slot()).unwrap();
    found.extend(own_vector_findings("another store's file", &views, &feed));
    drop(views);

    // Its own file cut short.
    std::fs::write(file(b.path()), &own[..own.len() - 1]).unwrap();
    let views = open_views(&ledger, &mut slot()).unwrap();
    found.extend(own_vector_findings("its file cut short", &views, &feed));
    drop(views);

    // An older write of its own file, from before a revision the pass since embedded.
    std::fs::write(file(b.path()), &own).unwrap();
    write(&mut ledger, &mut feed, 2);
    let views = open_views(&ledger, &mut deferred()).unwrap();
    embed_queued(&views).unwrap();
    drop(views);
    std::fs::write(file(b.path()), &own).unwrap();
    let views = open_views(&ledger, &mut slot()).unwrap();
    found.extend(own_vector_findings(
        "an older write of its file",
        &views,
        &feed,
    ));
    found
}

#[test]
fn the_lane_scores_its_own_vectors_whatever_file_lies_beside_it() {
    let found = vector_file_findings();
    assert!(found.is_empty(), "{}", report(&found));
}

#[test]
fn the_vector_file_check_goes_red_when_the_stamp_is_not_checked() {
    goes_red(
        Oracle::VectorFile,
        Fault::VectorFileUnstamped,
        About::Differs(View::Vectors),
        &[],
    );
}

#[test]
fn retraction_oracle_goes_red_when_a_changed_vector_is_not_recorded() {
    goes_red(
        Oracle::Retraction,
        Fault::VectorChangesUnrecorded,
        About::Stale(View::Vectors),
        &[],
    );
}

#[test]
fn replay_oracle_goes_red_when_searches_ignore_the_changes_table() {
    // A queued text's old vector, still in the file, is what the queue's check sees too.
    goes_red(
        Oracle::Replay,
        Fault::VectorChangesIgnored,
        About::Differs(View::Vectors),
        &[About::Differs(View::Queue)],
    );
}

fn report(found: &[Finding]) -> String {
    let mut kinds = BTreeMap::new();
    for f in found {
        *kinds.entry(format!("{:?}", f.about)).or_insert(0) += 1;
    }
    let mut s = format!("{} discrepancies {kinds:?}:\n", found.len());
    for f in found.iter().take(12) {
        s.push_str(&format!("[{:?}] {}\n", f.about, f.what));
    }
    s
}

#[test]
fn retraction_oracle_holds_over_every_revision_path() {
    let found = retraction_findings(&revision_paths());
    assert!(found.is_empty(), "{}", report(&found));
}

/// Cutoffs at every hour boundary the generated record spans, and before and after it.
fn asof_cutoffs() -> Vec<i64> {
    let mut c: Vec<i64> = (0..=120).step_by(7).map(|h| T0 + h * HOUR).collect();
    c.extend([T0 - 1, T0 + 50 * HOUR - 1, i64::MAX]);
    c
}

/// A ledger whose revisions move in time: earlier and later than the version they replace.
fn revisions_in_time() -> Vec<Step> {
    let at = |slot, hours, kind, reps| Version {
        session: 0,
        slot,
        hours,
        kind,
        reps,
        shared: false,
    };
    vec![
        Step::Write(vec![
            at(1, 10, Kind::Final, 3),
            at(
                2,
                30,
                Kind::Obs {
                    subject: 0,
                    cites: false,
                    basis: false,
                },
                3,
            ),
            at(3, 5, Kind::Tool { ok: true }, 2),
            at(4, 40, Kind::User { harness: false }, 3),
        ]),
        Step::CatchUp {
            chunk: 2,
            fail_at: None,
        },
        Step::Write(vec![
            at(1, 60, Kind::Said, 2), // revised later
            at(
                2,
                20,
                Kind::Obs {
                    subject: 0,
                    cites: true,
                    basis: false,
                },
                4,
            ), // revised earlier
            at(3, 70, Kind::Tool { ok: false }, 2),
            at(
                2,
                90,
                Kind::Obs {
                    subject: 1,
                    cites: false,
                    basis: false,
                },
                2,
            ),
        ]),
    ]
}

#[test]
fn asof_folds_each_events_newest_version_at_the_cutoff() {
    let found = asof_findings(&revisions_in_time(), &asof_cutoffs());
    assert!(found.is_empty(), "{}", report(&found));
}

/// The revision paths, then redactions of a word of a replaced text (a closing message
/// rewritten), of a word in the embedded window of a replaced summary (its vector was
/// cached), of a word of a current text, the views behind (an interrupted catch-up) at the
/// last, and a refill of the past table.
fn redactions() -> Vec<Step> {
    let mut steps = revision_paths();
    steps.extend([
        Step::Redact {
            version: 1,
            place: 2,
        },
        Step::Redact {
            version: 7,
            place: 1,
        },
        Step::Write(vec![v(2, 9, Kind::Final, 9)]),
        Step::CatchUp {
            chunk: 1,
            fail_at: Some((1, Midway::BeforeKeyword)),
        },
        Step::Redact {
            version: 28,
            place: 1,
        },
        Step::RefillPast,
    ]);
    steps
}

#[test]
fn replay_and_retraction_hold_over_redactions_and_refills() {
    let found = replay_findings(&redactions());
    assert!(found.is_empty(), "replay: {}", report(&found));
    let found = retraction_findings(&redactions());
    assert!(found.is_empty(), "retraction: {}", report(&found));
}

#[test]
fn replay_oracle_goes_red_when_a_refill_leaves_the_past_unredacted() {
    goes_red(
        Oracle::Redactions,
        Fault::RefillLeavesPast,
        About::Unredacted(View::Past),
        &[About::Differs(View::Past)],
    );
}

#[test]
fn replay_oracle_goes_red_when_a_refill_drops_the_past_blobs() {
    goes_red(
        Oracle::Redactions,
        Fault::RefillDropsBlobs,
        About::Differs(View::PastBlobs),
        &[],
    );
}

#[test]
fn replay_oracle_holds_over_every_revision_path() {
    let found = replay_findings(&revision_paths());
    assert!(found.is_empty(), "{}", report(&found));
}

/// 600 changes in two batches, 75 events revised again and again (kinds and lengths
/// changing, touches writing every kind of change): positions run past 256, where LSN keys in the wrong byte order would list a
/// revision's later versions before its earlier ones.
fn hundreds_of_changes() -> Vec<Step> {
    // A run of 75 versions shares a kind (the last run, each event's current version, is
    // touches); a touch's files and changes vary by version.
    let kind = |i: usize| match i / 75 % 5 {
        0 => Kind::Final,
        1 => Kind::User {
            harness: i.is_multiple_of(4),
        },
        2 => Kind::Touch {
            paths: (i % 3) as u8,
            change: (i % 9) as u8,
        },
        3 => Kind::Tool {
            ok: i.is_multiple_of(3),
        },
        _ => Kind::Said,
    };
    let batch = |from: usize| {
        let reps = [2, 3, 5, 9, 10, 17, 0, 1];
        (from..from + 300)
            .map(|i| v((i % 3) as u8, (i / 3 % 25 + 1) as u8, kind(i), reps[i % 8]))
            .collect()
    };
    vec![
        Step::Write(batch(0)),
        Step::CatchUp {
            chunk: 128,
            fail_at: Some((2, Midway::BeforeKeyword)),
        },
        Step::Write(batch(300)),
        Step::CatchUp {
            chunk: 100,
            fail_at: None,
        },
    ]
}

#[test]
fn replay_oracle_holds_past_the_256th_change() {
    let found = replay_findings(&hundreds_of_changes());
    assert!(found.is_empty(), "{}", report(&found));
}

/// 67,072 changes, cheap to fold: 256 tool calls without a text (nothing for the lanes),
/// each revised 261 times (its outcome flipping), a round of revisions a write. Positions
/// run past 2^8 and 2^16, both byte boundaries of an LSN key, and every event's earlier
/// versions straddle both: past keys in the wrong byte order list them out of order.
/// Caught up three times on the way (past each boundary), then as `findings_in` does.
fn thousands_of_changes() -> Vec<Step> {
    let round = |r: usize| {
        let version = |i: u8| {
            v(
                i % 4,
                i / 4 + 1,
                Kind::Tool {
                    ok: r.is_multiple_of(2),
                },
                0,
            )
        };
        Step::Write((0..=u8::MAX).map(version).collect())
    };
    let catch_up = Step::CatchUp {
        chunk: 20_000,
        fail_at: None,
    };
    let mut steps: Vec<Step> = (0..262).map(round).collect();
    for at in [257, 129, 2] {
        steps.insert(at, catch_up.clone());
    }
    steps
}

#[test]
fn replay_oracle_holds_past_the_65536th_change() {
    let steps = thousands_of_changes();
    assert!(ledgers::feed(&steps).len() > 1 << 16);
    let found = replay_findings(&steps);
    assert!(found.is_empty(), "{}", report(&found));
}

#[test]
fn replay_oracle_goes_red_when_past_keys_are_little_endian() {
    goes_red(
        Oracle::Thousands,
        Fault::PastKeyLittleEndian,
        About::Differs(View::Past),
        &[],
    );
}

/// Readers beside the writer keep asking for the views: every catch-up pauses for them,
/// mid-chunk (holding what it folded, its keyword writer open) and after flushes, and
/// still ends where the model and a rebuild do. The first checks for a reader wait until
/// the reader asks, so the pauses happen however the threads are scheduled (a reader that
/// merely races the writer may never ask at a check).
#[test]
fn replay_oracle_holds_while_readers_keep_pausing_the_catch_up() {
    const AWAITED: usize = 6;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().to_path_buf();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (s, halt) = (store.clone(), stop.clone());
    let reader = std::thread::spawn(move || {
        let mut served = 0;
        while !halt.load(std::sync::atomic::Ordering::Relaxed) {
            let held =
                crate::ledger::lock::ViewsLock::acquire(&s, Duration::from_secs(30), "reader");
            served += usize::from(held.is_ok());
            std::thread::sleep(Duration::from_millis(1));
        }
        served
    });
    let before = fault::pauses();
    let steps = revision_paths();
    fault::await_readers(AWAITED);
    let found = findings_in(&store, &steps, &replay_judge(&steps));
    fault::await_readers(0);
    let paused = fault::pauses() - before;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let served = reader.join().unwrap();
    assert!(found.is_empty(), "{}", report(&found));
    assert!(served > 0, "the reader never got the views");
    // Without this, readers served only between catch-ups would pass as well.
    assert!(
        paused >= AWAITED,
        "the folds paused {paused} times for a reader that asked at each of their first {AWAITED} checks"
    );
}

/// A rebuild records the position the ledger's database holds, whatever the hint beside
/// it says: a position taken from a hint behind it applies the last changes twice at the
/// next catch-up, one ahead of it skips the next writes.
#[test]
fn replay_oracle_holds_over_rebuilds_beside_a_wrong_hint() {
    for off in [-2, -1, 1, 3] {
        let mut steps = revision_paths();
        let at = steps.len() / 2;
        steps.insert(at, Step::RebuildWithHintOff(off));
        let found = replay_findings(&steps);
        assert!(found.is_empty(), "hint off by {off}: {}", report(&found));
    }
}

/// Fewer random cases than this prove next to nothing, and none nothing at all: the random
/// oracles refuse to run with fewer under CI (`CI=true`) and under `tests/oracles`, which CI
/// and the flake's check (whose sandbox sets no `CI`) run, and which sets
/// `PEAT_ORACLES_FLOOR=1`.
const CASES_FLOOR: u32 = 24;

/// Random cases per proptest: `PROPTEST_CASES`, or the floor.
fn cases() -> u32 {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(CASES_FLOOR);
    let set = |var| std::env::var(var).is_ok_and(|v| v == "true" || v == "1");
    let floored = set("CI") || set("PEAT_ORACLES_FLOOR");
    assert!(
        cases > 0 && (cases >= CASES_FLOOR || !floored),
        "PROPTEST_CASES={cases}: the random oracles run at least {CASES_FLOOR} cases under CI and tests/oracles, and never none"
    );
    cases
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// Random ledgers, random batches, random (and interrupted) catch-ups: the views equal
    /// a rebuild and the independent model.
    #[test]
    fn replay_equals_rebuild_and_the_model_on_random_ledgers(steps in ledgers::steps(true)) {
        let found = replay_findings(&steps);
        prop_assert!(found.is_empty(), "{}", report(&found));
    }

    /// Random ledgers whose revisions move in time, at random cutoffs: `asof` equals the
    /// model of each event's newest version at or before the cutoff.
    #[test]
    fn asof_equals_the_model_at_random_cutoffs(
        steps in ledgers::steps(false),
        cutoffs in prop::collection::vec(-2i64..125, 1..4),
    ) {
        let cutoffs: Vec<i64> = cutoffs.iter().map(|h| T0 + h * HOUR).collect();
        let found = asof_findings(&steps, &cutoffs);
        prop_assert!(found.is_empty(), "{}", report(&found));
    }
}

/// Which oracle a fault must turn red.
#[derive(Clone, Copy, Debug)]
enum Oracle {
    Retraction,
    Replay,
    Asof,
    RevisedWhileEmbedding,
    /// The replay oracle over [`thousands_of_changes`].
    Thousands,
    /// The replay oracle over [`redactions`].
    Redactions,
    /// [`vector_file_findings`].
    VectorFile,
}

fn findings_under(oracle: Oracle, fault: Fault) -> Vec<Finding> {
    let _on = fault::inject(fault);
    match oracle {
        Oracle::Retraction => retraction_findings(&revision_paths()),
        Oracle::Replay => replay_findings(&revision_paths()),
        Oracle::Asof => asof_findings(&revisions_in_time(), &asof_cutoffs()),
        Oracle::RevisedWhileEmbedding => revised_while_embedding_findings(),
        Oracle::Thousands => replay_findings(&thousands_of_changes()),
        Oracle::Redactions => replay_findings(&redactions()),
        Oracle::VectorFile => vector_file_findings(),
    }
}

/// Under `fault`, `oracle` reports it with a finding `about` what the fault breaks, and
/// with no finding but those and its `consequences`: a fault caught by an unrelated
/// difference, or by a failure, is not caught.
fn goes_red(oracle: Oracle, fault: Fault, about: About, consequences: &[About]) {
    let found = findings_under(oracle, fault);
    assert!(
        found.iter().any(|f| f.about == about),
        "the {oracle:?} oracle has no {about:?} finding with the fold broken by {fault:?}: {}",
        report(&found)
    );
    let other: Vec<Finding> = found
        .iter()
        .filter(|f| f.about != about && !consequences.contains(&f.about))
        .cloned()
        .collect();
    assert!(
        other.is_empty(),
        "the {oracle:?} oracle went red under {fault:?} for more than {about:?}: {}",
        report(&other)
    );
    eprintln!("{oracle:?} oracle under {fault:?}: {}", report(&found));
}

/// `asof` folding other versions than the cutoff's shows in every view those versions
/// feed, and in the count of events it folded; never as a failure, a flush or a position.
const ASOF_VERSIONS: &[About] = &[
    About::Differs(View::Sessions),
    About::Differs(View::Days),
    About::Differs(View::Files),
    About::Differs(View::Changes),
    About::Differs(View::Tails),
    About::Differs(View::Steps),
    About::Differs(View::Texts),
    About::Differs(View::Subjects),
    About::Differs(View::Evidence),
    About::Differs(View::Envelopes),
    About::Differs(View::Keyword),
    About::Differs(View::Vectors),
];

#[test]
fn a_text_revised_while_the_pass_embeds_it_keeps_no_old_vector() {
    let found = revised_while_embedding_findings();
    assert!(found.is_empty(), "{}", report(&found));
}

#[test]
fn the_revision_check_goes_red_when_the_pass_ignores_revisions() {
    goes_red(
        Oracle::RevisedWhileEmbedding,
        Fault::PassIgnoresRevisions,
        About::Stale(View::Vectors),
        &[About::Differs(View::Vectors)],
    );
}

#[test]
fn the_revision_check_goes_red_when_the_pass_caches_a_vector_under_the_revised_text() {
    // The next pass takes its vectors from the cache: the misfiled one reaches the lane.
    goes_red(
        Oracle::RevisedWhileEmbedding,
        Fault::CacheMisfiled,
        About::Differs(View::Cache),
        &[About::Differs(View::Vectors)],
    );
}

#[test]
fn replay_oracle_goes_red_when_the_pass_caches_nothing() {
    goes_red(
        Oracle::Replay,
        Fault::PassCachesNothing,
        About::Differs(View::Cache),
        &[],
    );
}

#[test]
fn retraction_oracle_goes_red_when_a_queued_text_keeps_its_old_vector() {
    goes_red(
        Oracle::Retraction,
        Fault::QueueKeepsOldVector,
        About::Stale(View::Vectors),
        &[],
    );
}

#[test]
fn retraction_oracle_goes_red_without_keyword_retraction() {
    goes_red(
        Oracle::Retraction,
        Fault::SkipKeywordRetract,
        About::Stale(View::Keyword),
        &[],
    );
}

#[test]
fn retraction_oracle_goes_red_without_vector_retraction() {
    goes_red(
        Oracle::Retraction,
        Fault::SkipVectorRetract,
        About::Stale(View::Vectors),
        &[],
    );
}

#[test]
fn replay_oracle_goes_red_without_keyword_retraction() {
    goes_red(
        Oracle::Replay,
        Fault::SkipKeywordRetract,
        About::Differs(View::Keyword),
        &[],
    );
}

#[test]
fn replay_oracle_goes_red_without_vector_retraction() {
    goes_red(
        Oracle::Replay,
        Fault::SkipVectorRetract,
        About::Differs(View::Vectors),
        &[],
    );
}

#[test]
fn replay_oracle_goes_red_when_a_queued_text_keeps_its_old_vector() {
    goes_red(
        Oracle::Replay,
        Fault::QueueKeepsOldVector,
        About::Differs(View::Queue),
        &[About::Differs(View::Vectors)],
    );
}

#[test]
fn replay_oracle_goes_red_when_queueing_a_text_leaves_the_queue_marked_empty() {
    goes_red(
        Oracle::Replay,
        Fault::QueueMarkKept,
        About::Differs(View::Queue),
        &[],
    );
}

#[test]
fn replay_oracle_goes_red_when_a_kind_is_dropped() {
    goes_red(
        Oracle::Replay,
        Fault::DropToolCalls,
        About::Differs(View::Envelopes),
        &[
            About::Differs(View::Sessions),
            About::Differs(View::Days),
            About::Differs(View::Steps),
            About::Differs(View::Texts),
            About::Differs(View::Keyword),
        ],
    );
}

#[test]
fn replay_oracle_goes_red_when_a_meta_revised_away_leaves_its_agent_and_parent() {
    goes_red(
        Oracle::Replay,
        Fault::MetaRetractKeepsAgent,
        About::Differs(View::Sessions),
        &[About::Differs(View::Closings)],
    );
}

#[test]
fn replay_oracle_goes_red_when_a_rebuild_spans_current_versions_only() {
    goes_red(
        Oracle::Replay,
        Fault::RebuildSpansCurrent,
        About::Differs(View::Sessions),
        &[About::Differs(View::Closings)],
    );
}

#[test]
fn replay_oracle_goes_red_when_the_keyword_lane_ignores_scores() {
    goes_red(
        Oracle::Replay,
        Fault::KeywordUnranked,
        About::Ranks(View::Keyword),
        &[],
    );
}

#[test]
fn replay_oracle_goes_red_when_the_vector_lane_ignores_scores() {
    goes_red(
        Oracle::Replay,
        Fault::VectorsUnranked,
        About::Ranks(View::Vectors),
        &[],
    );
}

#[test]
fn replay_oracle_goes_red_when_a_change_is_applied_twice() {
    goes_red(
        Oracle::Replay,
        Fault::ApplyTwice,
        About::Differs(View::Sessions),
        &[About::Differs(View::Days)],
    );
}

#[test]
fn replay_oracle_goes_red_when_positions_move_backwards() {
    goes_red(
        Oracle::Replay,
        Fault::RawPositions,
        About::Positions,
        &[About::Differs(View::Sessions), About::Differs(View::Days)],
    );
}

#[test]
fn replay_oracle_goes_red_when_replaced_edits_keep_their_changes_and_steps() {
    goes_red(
        Oracle::Replay,
        Fault::KeepStaleChanges,
        About::Differs(View::Steps),
        &[About::Differs(View::Changes)],
    );
}

#[test]
fn retraction_oracle_goes_red_when_replaced_edits_keep_their_changes_and_steps() {
    goes_red(
        Oracle::Retraction,
        Fault::KeepStaleChanges,
        About::Stale(View::Steps),
        &[About::Stale(View::Changes)],
    );
}

#[test]
fn replay_oracle_goes_red_when_a_revised_event_keeps_its_old_envelope() {
    goes_red(
        Oracle::Replay,
        Fault::KeepOldEnvelopes,
        About::Differs(View::Envelopes),
        // A revised event's text row is then another version's than its envelope.
        &[About::Differs(View::Texts)],
    );
}

#[test]
fn replay_oracle_goes_red_when_a_revisions_old_version_is_not_kept() {
    goes_red(
        Oracle::Replay,
        Fault::DropPastVersions,
        About::Differs(View::Past),
        &[About::Differs(View::PastBlobs)],
    );
}

#[test]
fn asof_oracle_goes_red_when_a_revisions_old_version_is_not_kept() {
    // The views the past is read from lack it too, and so does what asof reads of them
    // without a replay.
    let lacking = [
        About::Differs(View::Past),
        About::Differs(View::PastBlobs),
        About::Held,
        About::Cut(View::Keyword),
        About::Cut(View::Vectors),
    ];
    goes_red(
        Oracle::Asof,
        Fault::DropPastVersions,
        About::Folded,
        &[ASOF_VERSIONS, &lacking].concat(),
    );
}

#[test]
fn asof_oracle_goes_red_when_asof_searches_todays_lanes_past_a_revision() {
    goes_red(
        Oracle::Asof,
        Fault::AsofSearchesToday,
        About::Cut(View::Keyword),
        &[About::Cut(View::Vectors)],
    );
}

#[test]
fn asof_oracle_goes_red_when_asof_misses_the_versions_revised_since() {
    goes_red(
        Oracle::Asof,
        Fault::TallySkipsRevisions,
        About::Held,
        &[About::Cut(View::Keyword), About::Cut(View::Vectors)],
    );
}

#[test]
fn asof_oracle_goes_red_when_asof_reads_todays_versions() {
    goes_red(
        Oracle::Asof,
        Fault::AsofReadsToday,
        About::Folded,
        ASOF_VERSIONS,
    );
}

#[test]
fn asof_oracle_goes_red_when_a_kind_is_dropped() {
    goes_red(
        Oracle::Asof,
        Fault::DropToolCalls,
        About::Folded,
        &[
            About::Differs(View::Sessions),
            About::Differs(View::Days),
            About::Differs(View::Steps),
            About::Differs(View::Envelopes),
            About::Differs(View::Texts),
            About::Differs(View::Keyword),
            About::Held,
        ],
    );
}

#[test]
fn asof_oracle_goes_red_when_a_change_is_applied_twice() {
    goes_red(
        Oracle::Asof,
        Fault::ApplyTwice,
        About::Differs(View::Sessions),
        &[About::Differs(View::Days), About::Held],
    );
}

/// The cases proptest once shrank failures of the random asof oracle to, as written: their
/// seeds were recorded before the generator changed, and no longer draw them.
#[test]
fn asof_holds_on_the_cases_proptest_recorded() {
    use Kind::*;
    let at = |slot, hours, kind, reps| Version {
        session: 0,
        slot,
        hours,
        kind,
        reps,
        shared: false,
    };
    let meta = |cwd, branch| Meta {
        cwd,
        branch,
        agent: 2,
        parent: true,
    };
    let cases = [
        (vec![at(0, 0, Summary, 200)], vec![0]),
        (vec![at(0, 45, Compaction, 200)], vec![7, 89]),
        (
            vec![at(5, 1, meta(0, 2), 200), at(2, 73, meta(1, 0), 23)],
            vec![7, 111],
        ),
    ];
    for (written, hours) in cases {
        let cutoffs: Vec<i64> = hours.iter().map(|h| T0 + h * HOUR).collect();
        let found = asof_findings(&[Step::Write(written)], &cutoffs);
        assert!(found.is_empty(), "{}", report(&found));
    }
}

/// The case proptest once shrank a failure of the random replay oracle to, as written (its
/// seed no longer draws it): five batches revising a meta, closing messages, prompts and
/// compactions, none caught up until the end.
#[test]
fn replay_holds_on_the_case_proptest_recorded() {
    use Kind::*;
    let meta = Meta {
        cwd: 0,
        branch: 0,
        agent: 0,
        parent: false,
    };
    let user = |harness| User { harness };
    let steps = [
        vec![
            v(0, 0, meta.clone(), 0),
            v(0, 0, meta, 0),
            v(0, 0, Distill, 17),
            v(0, 4, Final, 200),
            v(1, 5, Compaction, 4),
        ],
        vec![v(2, 9, Tool { ok: true }, 15)],
        vec![
            v(1, 0, Final, 1),
            v(2, 1, user(true), 1),
            v(0, 0, Committed, 20),
        ],
        vec![
            v(2, 8, Said, 3),
            v(0, 0, Said, 18),
            v(2, 3, Compaction, 23),
            v(1, 9, Compaction, 200),
            v(2, 1, user(true), 200),
            v(0, 3, user(false), 0),
        ],
        vec![
            v(0, 2, user(false), 200),
            v(1, 8, Compaction, 200),
            v(2, 1, Final, 200),
        ],
    ];
    let found = replay_findings(&steps.map(Step::Write));
    assert!(found.is_empty(), "{}", report(&found));
}

#[test]
fn equal_timestamp_observations_resolve_by_seq() {
    let obs = |text: &str| {
        Envelope::new(
            crate::vocab::event::SessionId("s".into()),
            5000,
            crate::vocab::event::Event::Obs {
                subject: "x".into(),
                text: text.into(),
                derived_from: vec![],
                basis: None,
            },
        )
    };
    for _ in 0..8 {
        let dir = tempfile::tempdir().unwrap();
        let mut l = open(dir.path());
        let mut set = WriteSet::default();
        set.event(
            crate::vocab::event::Seq(crate::vocab::event::OBS_SEQ_BASE + 1),
            obs("second claim"),
        );
        set.event(
            crate::vocab::event::Seq(crate::vocab::event::OBS_SEQ_BASE),
            obs("first claim"),
        );
        l.write(set).unwrap();
        let v = open_views(&l, &mut slot()).unwrap();
        assert_eq!(v.tables.subject("x").unwrap().unwrap().text, "second claim");
    }
}

/// Write closing messages `ns` (one new event each) in one batch.
fn write_closings(ledger: &mut Ledger, ns: std::ops::Range<usize>) {
    let mut set = WriteSet::default();
    for n in ns {
        let slot = u8::try_from(n + 1).unwrap();
        let (id, env) = ledgers::envelope(n, &v(0, slot, Kind::Final, 3));
        set.event(id.seq, env);
    }
    ledger.write(set).unwrap();
}

/// Open the views of `ledger` folding `chunk` changes at a time, the `fail_at`th flush
/// failing: whether it failed (and by nothing else).
fn open_failing_at(ledger: &Ledger, chunk: usize, fail_at: usize) -> bool {
    fault::set_chunk(Some(chunk));
    fault::fail_flush_in(Some((fail_at, Midway::BeforeKeyword)));
    let r = open_views(ledger, &mut slot());
    fault::set_chunk(None);
    fault::fail_flush_in(None);
    assert!(r.is_ok() || interrupted(&r), "{:?}", r.err());
    interrupted(&r)
}

/// A rebuild flushes after every chunk and once at the end (10 changes by 3: four
/// flushes), so a reader waits for one chunk's write at most, and a rebuild beside readers
/// can pause between chunks. The fourth flush exists and no fifth does.
#[test]
fn a_rebuild_flushes_once_a_chunk_and_once_at_the_end() {
    for (fail_at, exists) in [(4, true), (5, false)] {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = open(dir.path());
        write_closings(&mut ledger, 0..10);
        assert_eq!(
            open_failing_at(&ledger, 3, fail_at),
            exists,
            "a rebuild of 10 changes by 3 flushes 4 times; flush {fail_at} exists: {exists}"
        );
    }
}

/// A catch-up flushes after every chunk, and a chunk flushed stays applied when a later
/// flush fails: interrupted at its third flush, a catch-up of 10 changes by 3 leaves both
/// lanes 6 changes on, and the tables (written before the keyword lane) 9.
#[test]
fn an_interrupted_catch_up_keeps_every_chunk_it_flushed() {
    let dir = tempfile::tempdir().unwrap();
    let mut ledger = open(dir.path());
    write_closings(&mut ledger, 0..4);
    drop(open_views(&ledger, &mut slot()).unwrap());
    write_closings(&mut ledger, 4..14);
    assert!(open_failing_at(&ledger, 3, 3), "no third flush");
    let views = peek(&ledger).unwrap().unwrap();
    let at = (views.tables.applied().unwrap(), views.keyword.applied_lsn());
    assert_eq!(at, (4 + 9, 4 + 6));
}

/// Opening views that are caught up writes nothing: not one flush (nor a sync of the
/// ledger), however often the views are opened.
#[test]
fn opening_caught_up_views_flushes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut ledger = open(dir.path());
    write_closings(&mut ledger, 0..5);
    drop(open_views(&ledger, &mut slot()).unwrap());
    assert!(
        !open_failing_at(&ledger, 3, 1),
        "opening caught-up views flushed"
    );
}
