//! The oracles: replaying the ledger is the truth, and every view must agree with it.
//!
//! Each oracle returns what it found wrong (empty: nothing), so the same code runs green on
//! the real fold and red on a deliberately broken one (see [`super::fault`]): the `*_goes_red_*`
//! tests turn each fault on and require the oracle to report it. `tests/oracles` runs them all.

mod ledgers;
mod model;

use proptest::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::fault::{self, Fault};
use super::{ModelSlot, Views};
use crate::embed::hash::HashEmbedder;
use crate::ledger::{Access, Ledger, Mode, WriteSet};
use crate::vocab::event::{Envelope, EventId};
use ledgers::{HOUR, Kind, Step, T0, Version};
use model::{diff, model, observe};

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

fn open_views(ledger: &Ledger, slot: &mut ModelSlot) -> Result<Views, super::ViewError> {
    Views::open(ledger, slot, jiff::tz::TimeZone::UTC, &mut |_| {})
}

/// Run `steps` against a fresh store in `dir`: writes, and catch-ups that may be chunked
/// small and interrupted. Returns what went wrong on the way (a catch-up failing for any
/// reason but the injected interruption).
fn play(dir: &Path, steps: &[Step]) -> Vec<String> {
    let mut found = Vec::new();
    let mut ledger = open(dir);
    let mut n = 0;
    let mut catch_ups = 0;
    for step in steps {
        match step {
            Step::Write(vs) => {
                let mut set = WriteSet::default();
                for v in vs {
                    let (id, env) = ledgers::envelope(n, v);
                    set.blobs.extend(ledgers::blobs_of(n, v));
                    set.event(id.seq, env);
                    n += 1;
                }
                ledger.write(set).unwrap();
            }
            Step::CatchUp { chunk, fail_at } => {
                fault::set_chunk(Some(*chunk));
                fault::fail_flush_in(*fail_at);
                let r = open_views(&ledger, &mut deferred());
                fault::set_chunk(None);
                fault::fail_flush_in(None);
                // Every other catch-up is followed by the embedding pass: later revisions
                // then meet texts embedded, and texts still queued.
                catch_ups += 1;
                let r = r.and_then(|v| match catch_ups % 2 {
                    0 => embed_queued(&v).map(|_| ()),
                    _ => Ok(()),
                });
                if let Err(e) = r
                    && !e.to_string().contains("injected")
                {
                    found.push(format!("a catch-up failed: {e}"));
                }
            }
            Step::RebuildWithHintOff(off) => {
                let last = ledger.last_lsn().unwrap();
                drop(ledger);
                let hint = last.saturating_add_signed(*off);
                std::fs::write(dir.join("ledger.lsn"), hint.to_string()).unwrap();
                ledger = open(dir);
                if let Err(e) =
                    Views::rebuild_now(&ledger, &mut deferred(), jiff::tz::TimeZone::UTC)
                {
                    found.push(format!("a rebuild with the hint at {hint} failed: {e}"));
                }
            }
        }
    }
    found
}

/// Replay determinism: after `steps`, the views caught up incrementally, the views reopened,
/// and the views rebuilt from scratch all equal the independent model of the ledger.
fn replay_findings(steps: &[Step]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    replay_findings_in(dir.path(), steps)
}

fn replay_findings_in(dir: &Path, steps: &[Step]) -> Vec<String> {
    let mut found = play(dir, steps);
    let (probes, texts) = ledgers::vocabulary(steps);
    let blobs = ledgers::all_blobs(steps);
    let versions = ledgers::versions(steps);
    let mut want = model(&ledgers::as_of(&versions, i64::MAX), &blobs, &probes);
    (want.past, want.past_blobs) = model::past(&versions, &blobs);
    // Before the embedding pass no vector may be stale; after it, every lane equals the
    // model.
    let mut check = |what: &str, views: Result<Views, super::ViewError>| match views {
        Ok(v) => {
            found.extend(superseded_findings(
                &format!("{what}, before the embedding pass"),
                &v,
                &versions,
            ));
            if let Err(e) = embed_queued(&v) {
                found.push(format!("{what}: the embedding pass failed: {e}"));
            }
            found.extend(diff(what, &observe(&v, &probes, &texts), &want));
            found.extend(superseded_findings(what, &v, &versions));
        }
        Err(e) => found.push(format!("{what}: the views did not open: {e}")),
    };
    {
        let ledger = open(dir);
        check("caught up", open_views(&ledger, &mut deferred()));
    }
    {
        let ledger = open(dir);
        check("reopened", open_views(&ledger, &mut deferred()));
        check(
            "rebuilt",
            Views::rebuild_now(&ledger, &mut deferred(), jiff::tz::TimeZone::UTC),
        );
    }
    let ledger = open(dir);
    check(
        "reopened after the rebuild",
        open_views(&ledger, &mut deferred()),
    );
    found
}

/// `asof` at each cutoff equals the model of each event's newest version at or before it,
/// from the views caught up and from the views rebuilt (whose past versions a rebuild
/// fills from the feed's revisions, not from the changes as they come).
fn asof_findings(steps: &[Step], cutoffs: &[i64]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut found = play(&dir.path().join("store"), steps);
    let (probes, texts) = ledgers::vocabulary(steps);
    let versions = ledgers::versions(steps);
    let blobs = ledgers::all_blobs(steps);
    let ledger = open(&dir.path().join("store"));
    let mut slot = slot();
    for how in ["caught up", "rebuilt"] {
        let opened = match how {
            "caught up" => open_views(&ledger, &mut slot),
            _ => Views::rebuild_now(&ledger, &mut slot, jiff::tz::TimeZone::UTC),
        };
        let real = match opened {
            Ok(v) => v,
            Err(e) => return vec![format!("the views did not open ({how}): {e}")],
        };
        for (i, cutoff) in cutoffs.iter().enumerate() {
            let then = ledgers::as_of(&versions, *cutoff);
            // As `peat asof` does: copy the past out of the views, then replay it.
            let scratch = dir.path().join(format!("asof-{how}-{i}"));
            let past =
                crate::views::asof::copy_past(&real, *cutoff, &scratch, true).and_then(|copied| {
                    crate::views::asof::replay(copied, &mut slot, jiff::tz::TimeZone::UTC)
                });
            let what = format!("asof {cutoff} from the views {how}");
            match past {
                Ok(p) => {
                    if p.events != then.len() {
                        found.push(format!(
                            "{what}: {} events folded, the model has {}",
                            p.events,
                            then.len()
                        ));
                    }
                    found.extend(diff(
                        &what,
                        &observe(&p.views, &probes, &texts),
                        &model(&then, &blobs, &probes),
                    ));
                }
                Err(e) => found.push(format!("{what} failed: {e}")),
            }
        }
    }
    found
}

fn v(session: u8, slot: u8, kind: Kind, reps: u16) -> Version {
    Version {
        session,
        slot,
        hours: -1,
        kind,
        reps,
    }
}

/// Every revision path that only retraction can clean up, for texts of every length, with
/// interrupted catch-ups on the way: a provisional closing message rewritten as narration
/// (long and short), narration shrunk below the indexing minimum and grown above it, a
/// prompt that becomes harness text or outgrows embedding, claims and summaries emptied or
/// blanked, texts turned into tool calls and back. Plus one event of every other kind.
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
            fail_at: Some(2),
        },
        Step::CatchUp {
            chunk: 4,
            fail_at: None,
        },
        Step::Write(revised[..7].to_vec()),
        // The tables get five changes ahead of the keyword lane, then a catch-up one change
        // at a time is interrupted while the tables are still ahead: positions must hold.
        Step::CatchUp {
            chunk: 5,
            fail_at: Some(1),
        },
        Step::CatchUp {
            chunk: 1,
            fail_at: Some(2),
        },
        Step::Write(revised[7..].to_vec()),
        // A catch-up whose only flush fails after the tables: they are current, the
        // keyword lane is not, and the next open must still catch it up.
        Step::CatchUp {
            chunk: 1000,
            fail_at: Some(1),
        },
    ]
}

/// The old text of a revised event is unfindable and the new one findable, in both lanes,
/// as caught up, reopened and rebuilt: the replay oracle over every revision path, whose
/// checks include each superseded version searched for by its own words.
fn retraction_findings() -> Vec<String> {
    replay_findings(&revision_paths())
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

/// Every version that was replaced is searched for by name: its words must not find its
/// event in the keyword lane, and its event's vector must not be made from it.
fn superseded_findings(what: &str, views: &Views, versions: &[(EventId, Envelope)]) -> Vec<String> {
    let mut found = Vec::new();
    let now = ledgers::as_of(versions, i64::MAX);
    let vectors: BTreeMap<EventId, Vec<u8>> = views.vectors.dump().unwrap().into_iter().collect();
    for (n, (id, env)) in versions.iter().enumerate() {
        if now.get(id) == Some(env) || words_of(env).is_none_or(|t| t.trim().is_empty()) {
            continue;
        }
        let hits = views
            .keyword
            .search(&ledgers::probe(n), &Default::default(), 1000)
            .unwrap();
        if hits.iter().any(|h| &h.id == id) {
            found.push(format!(
                "{what}: keyword lane: {id:?} is still found by the words of version {n}"
            ));
        }
        if let (Some(stored), Some(text)) = (vectors.get(id), words_of(env)) {
            let like = |t: &str| super::vectors::dot_quantized(&HashEmbedder::vector(t), stored);
            let score = like(text);
            // An old version whose words are near the current one's (a long text cut by the
            // embedding window, a revision that changed little) is near the right vector
            // too: stale means nearer the old words than the current ones.
            let current = now.get(id).and_then(words_of).map_or(f32::MIN, like);
            if score > 0.5 && score > current {
                found.push(format!(
                    "{what}: vector lane: {id:?} holds the vector of version {n}"
                ));
            }
        }
    }
    found
}

/// The embedding pass takes a batch; the text is revised and caught up before the pass
/// stores it: the revision wins (no vector of the old text), and the next pass embeds it.
fn revised_while_embedding_findings() -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut ledger = open(dir.path());
    let mut versions = Vec::new();
    let mut write = |ledger: &mut Ledger, n: usize| {
        let v = Version {
            session: 0,
            slot: 1,
            hours: -1,
            kind: Kind::Final,
            reps: 6,
        };
        let (id, env) = ledgers::envelope(n, &v);
        let mut set = WriteSet::default();
        set.event(id.seq, env.clone());
        ledger.write(set).unwrap();
        versions.push((id, env));
    };
    write(&mut ledger, 0);
    let batch = {
        let views = open_views(&ledger, &mut deferred()).unwrap();
        views.vectors.take(100).unwrap()
    };
    write(&mut ledger, 1);
    let views = open_views(&ledger, &mut deferred()).unwrap();
    let done = batch.embed(&mut HashEmbedder::new()).unwrap();
    let model = views.model().unwrap().to_string();
    views.vectors.store(&model, done).unwrap();
    let mut found = superseded_findings("stored after a revision", &views, &versions);
    if views.vectors.queued().unwrap() != 1 {
        found.push("the revised text left the queue unembedded".into());
    }
    embed_queued(&views).unwrap();
    let (id, newest) = &versions[1];
    let stored = views.vectors.dump().unwrap();
    let ok = stored.iter().any(|(i, v)| {
        i == id
            && words_of(newest)
                .is_some_and(|t| super::vectors::dot_quantized(&HashEmbedder::vector(t), v) > 0.98)
    });
    if !ok {
        found.push("after the next pass the event has no vector of its newest text".into());
    }
    found
}

fn report(found: &[String]) -> String {
    let mut s = format!("{} discrepancies:\n", found.len());
    for f in found.iter().take(12) {
        s.push_str(f);
        s.push('\n');
    }
    s
}

#[test]
fn retraction_oracle_holds_over_every_revision_path() {
    let found = retraction_findings();
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

#[test]
fn replay_oracle_holds_over_every_revision_path() {
    let found = replay_findings(&revision_paths());
    assert!(found.is_empty(), "{}", report(&found));
}

/// Readers beside the writer keep asking for the views: every catch-up pauses for them,
/// mid-chunk (holding what it folded, its keyword writer open) and after flushes, and
/// still ends where the model and a rebuild do.
#[test]
fn replay_oracle_holds_while_readers_keep_pausing_the_catch_up() {
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
    let found = replay_findings_in(&store, &revision_paths());
    let paused = fault::pauses() - before;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let served = reader.join().unwrap();
    assert!(found.is_empty(), "{}", report(&found));
    assert!(served > 10, "the reader got the views only {served} times");
    // Without this, readers served only between catch-ups would pass as well.
    assert!(paused > 0, "no catch-up ever paused for the reader");
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

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(24)
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
}

fn findings_under(oracle: Oracle, fault: Fault) -> Vec<String> {
    let _on = fault::inject(fault);
    match oracle {
        Oracle::Retraction => retraction_findings(),
        Oracle::Replay => replay_findings(&revision_paths()),
        Oracle::Asof => asof_findings(&revisions_in_time(), &asof_cutoffs()),
    }
}

fn goes_red(oracle: Oracle, fault: Fault) {
    let found = findings_under(oracle, fault);
    assert!(
        !found.is_empty(),
        "the {oracle:?} oracle passed with the fold broken by {fault:?}: it cannot fail"
    );
    eprintln!("{oracle:?} oracle under {fault:?}: {}", found[0]);
}

#[test]
fn a_text_revised_while_the_pass_embeds_it_keeps_no_old_vector() {
    let found = revised_while_embedding_findings();
    assert!(found.is_empty(), "{}", report(&found));
}

#[test]
fn the_revision_check_goes_red_when_the_pass_ignores_revisions() {
    let _on = fault::inject(Fault::PassIgnoresRevisions);
    assert!(!revised_while_embedding_findings().is_empty());
}

#[test]
fn retraction_oracle_goes_red_when_a_queued_text_keeps_its_old_vector() {
    goes_red(Oracle::Retraction, Fault::QueueKeepsOldVector);
}

#[test]
fn retraction_oracle_goes_red_without_keyword_retraction() {
    goes_red(Oracle::Retraction, Fault::SkipKeywordRetract);
}

#[test]
fn retraction_oracle_goes_red_without_vector_retraction() {
    goes_red(Oracle::Retraction, Fault::SkipVectorRetract);
}

#[test]
fn replay_oracle_goes_red_without_keyword_retraction() {
    goes_red(Oracle::Replay, Fault::SkipKeywordRetract);
}

#[test]
fn replay_oracle_goes_red_without_vector_retraction() {
    goes_red(Oracle::Replay, Fault::SkipVectorRetract);
}

#[test]
fn replay_oracle_goes_red_when_a_kind_is_dropped() {
    goes_red(Oracle::Replay, Fault::DropToolCalls);
}

#[test]
fn replay_oracle_goes_red_when_a_change_is_applied_twice() {
    goes_red(Oracle::Replay, Fault::ApplyTwice);
}

#[test]
fn replay_oracle_goes_red_when_positions_move_backwards() {
    goes_red(Oracle::Replay, Fault::RawPositions);
}

#[test]
fn replay_oracle_goes_red_when_replaced_edits_keep_their_changes_and_steps() {
    goes_red(Oracle::Replay, Fault::KeepStaleChanges);
}

#[test]
fn retraction_oracle_goes_red_when_replaced_edits_keep_their_changes_and_steps() {
    goes_red(Oracle::Retraction, Fault::KeepStaleChanges);
}

#[test]
fn replay_oracle_goes_red_when_a_revised_event_keeps_its_old_envelope() {
    goes_red(Oracle::Replay, Fault::KeepOldEnvelopes);
}

#[test]
fn replay_oracle_goes_red_when_a_revisions_old_version_is_not_kept() {
    goes_red(Oracle::Replay, Fault::DropPastVersions);
}

#[test]
fn asof_oracle_goes_red_when_a_revisions_old_version_is_not_kept() {
    goes_red(Oracle::Asof, Fault::DropPastVersions);
}

#[test]
fn asof_oracle_goes_red_when_asof_reads_todays_versions() {
    goes_red(Oracle::Asof, Fault::AsofReadsToday);
}

#[test]
fn asof_oracle_goes_red_when_a_kind_is_dropped() {
    goes_red(Oracle::Asof, Fault::DropToolCalls);
}

#[test]
fn asof_oracle_goes_red_when_a_change_is_applied_twice() {
    goes_red(Oracle::Asof, Fault::ApplyTwice);
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
