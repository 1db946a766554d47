//! Ledgers for the oracles: every event kind, revisions of every kind, written in batches
//! with the views caught up (or interrupted mid-catch-up) in between. Every word of every
//! version's text names the version and its place in the text (see [`text`]), so each
//! lane's content names the version and the part it came from; texts run from empty to
//! thousands of bytes.

use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

use crate::views::fault::Midway;
use crate::vocab::change::{BlobId, Change, Hunk, Replacement};
use crate::vocab::event::{
    Agent, Basis, Envelope, Event, EventId, OBS_SEQ_BASE, Seq, SessionId, TouchOp, Touched, Vcs,
};

/// 2025-06-15, noon UTC: the generated record starts here.
pub(crate) const T0: i64 = 1_749_988_800_000;
pub(crate) const HOUR: i64 = 3_600_000;

/// The kind of one version, with what varies within the kind.
#[derive(Clone, Debug)]
pub(crate) enum Kind {
    Meta {
        cwd: u8,
        branch: u8,
        agent: u8,
        parent: bool,
    },
    User {
        harness: bool,
    },
    Tool {
        ok: bool,
    },
    /// A file touch of `paths` further files besides its own; `change` picks what the
    /// first one wrote (see [`touch_changes`]), and each further file the next kind.
    Touch {
        paths: u8,
        change: u8,
    },
    Commit {
        empty: bool,
    },
    Committed,
    Final,
    Compaction,
    Said,
    Summary,
    Obs {
        subject: u8,
        cites: bool,
        basis: bool,
    },
    Distill,
    /// A kind a newer peat wrote: carried, counted, never read.
    Unknown,
}

/// One version of one event: `reps` sets its text's length (0: empty, 1: blank).
#[derive(Clone, Debug)]
pub(crate) struct Version {
    pub(crate) session: u8,
    pub(crate) slot: u8,
    pub(crate) hours: i64,
    pub(crate) kind: Kind,
    pub(crate) reps: u16,
    /// Whether the version sits at its slot's seq whatever its kind (see [`envelope`]):
    /// where claims and the meta meet the other kinds, so revisions change events into
    /// and out of them.
    pub(crate) shared: bool,
}

/// A step of a case.
#[derive(Clone, Debug)]
pub(crate) enum Step {
    Write(Vec<Version>),
    /// Open the views (catching them up) folding `chunk` changes at a time; with `fail_at`,
    /// that flush fails at that point and the catch-up is abandoned.
    CatchUp {
        chunk: usize,
        fail_at: Option<(usize, Midway)>,
    },
    /// Close the ledger, leave its last-position hint this far from the truth (where a
    /// writer killed mid-commit, or a torn hint file, could leave it), reopen it and
    /// rebuild the views.
    RebuildWithHintOff(i64),
    /// Redact a word of a version written (see [`redacted_word`]) across the store, as
    /// `peat redact` does: every event holding it written again without it, the views
    /// caught up, the ledger scrubbed (every version), the past table refilled from it.
    Redact {
        version: usize,
        place: usize,
    },
    /// Open the views (caught up) and refill their past table from the ledger.
    RefillPast,
}

/// Revisions keep their event's time when `fixed_times` (as capture's do: the session
/// span is documented never to shrink), or move it anywhere when not (for `asof`).
pub(crate) fn steps(fixed_times: bool) -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        3 => prop::collection::vec(version(fixed_times), 1..8).prop_map(Step::Write),
        1 => (1usize..6, prop::option::of((1usize..4, midway())))
            .prop_map(|(chunk, fail_at)| Step::CatchUp { chunk, fail_at }),
        1 => (-2i64..3).prop_map(Step::RebuildWithHintOff),
        1 => (any::<usize>(), 0usize..4).prop_map(|(version, place)| Step::Redact { version, place }),
        1 => Just(Step::RefillPast),
    ];
    prop::collection::vec(step, 1..10)
}

/// Where an interrupted catch-up's flush fails: before its tables or after them.
fn midway() -> impl Strategy<Value = Midway> {
    prop_oneof![Just(Midway::BeforeTables), Just(Midway::BeforeKeyword)]
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        // Every agent peat reads: the fold treats a Gemini CLI or OpenCode session as it
        // treats a Claude Code one, and the ledgers mix them.
        (0u8..3, 0u8..3, 0u8..5, any::<bool>()).prop_map(|(cwd, branch, agent, parent)| {
            Kind::Meta {
                cwd,
                branch,
                agent,
                parent,
            }
        }),
        any::<bool>().prop_map(|harness| Kind::User { harness }),
        any::<bool>().prop_map(|ok| Kind::Tool { ok }),
        (0u8..3, 0u8..9).prop_map(|(paths, change)| Kind::Touch { paths, change }),
        any::<bool>().prop_map(|empty| Kind::Commit { empty }),
        Just(Kind::Committed),
        Just(Kind::Final),
        Just(Kind::Compaction),
        Just(Kind::Said),
        Just(Kind::Summary),
        (0u8..3, any::<bool>(), any::<bool>()).prop_map(|(subject, cites, basis)| Kind::Obs {
            subject,
            cites,
            basis
        }),
        Just(Kind::Distill),
        Just(Kind::Unknown),
    ]
}

fn version(fixed_times: bool) -> impl Strategy<Value = Version> {
    // Lengths cluster around the thresholds (narration's 80 bytes, a prompt's 400) and
    // reach a few thousand bytes.
    let reps = prop_oneof![0u16..12, 14u16..26, Just(200u16)];
    let shared = prop::bool::weighted(0.3);
    (0u8..3, 0u8..10, 0i64..120, kind(), reps, shared).prop_map(
        move |(session, slot, hours, kind, reps, shared)| Version {
            session,
            slot,
            hours: if fixed_times { -1 } else { hours },
            kind,
            reps,
            shared,
        },
    )
}

/// The text of the `n`th version: empty (`reps` 0), a blank (1), 1 to 4 words (8 to 11,
/// around the embedding minimum), or 4 words a rep. Each word names its version and its
/// place in the text (`w{n}p{i}`; odd versions spell it with an `é`, two bytes the
/// embedding window may cut), so a lane holding another part of a text, or another
/// version's, shows.
pub(crate) fn text(n: usize, reps: u16) -> String {
    let words = match reps {
        0 => return String::new(),
        1 => return "  \n ".to_string(),
        8..=11 => usize::from(reps) - 7,
        r => 4 * usize::from(r),
    };
    (0..words).map(|i| word(n, i)).collect::<Vec<_>>().join(" ")
}

/// The `i`th word of the `n`th version's text.
pub(crate) fn word(n: usize, i: usize) -> String {
    let p = if n % 2 == 1 { "é" } else { "p" };
    format!("w{n}{p}{i}")
}

/// The word that finds the `n`th version's text: its first.
pub(crate) fn probe(n: usize) -> String {
    word(n, 0)
}

/// The id and envelope of the `n`th version. A session's meta is its slot 0 (capture
/// writes one, first), so a session has one at most; observations and the retired
/// distiller's notes live in their own seq ranges, as they always did. A `shared` version
/// sits at its slot's seq whatever its kind, slot 0 included: the ledger takes any version
/// of any event, so the views must fold revisions of a transcript event into a claim or a
/// meta, and out of them, though capture writes none.
pub(crate) fn envelope(n: usize, v: &Version) -> (EventId, Envelope) {
    let session = SessionId(format!("s{}", v.session));
    let meta = matches!(v.kind, Kind::Meta { .. });
    let slot = match (meta, v.slot) {
        (true, _) => 0,
        (false, 0) if !v.shared => 1,
        (false, s) => u32::from(s),
    };
    let seq = match v.kind {
        _ if v.shared => slot * 16,
        Kind::Obs { .. } => OBS_SEQ_BASE + slot,
        Kind::Distill => crate::vocab::event::RESERVED_SEQ_BASE + slot,
        _ => slot * 16,
    };
    // A fixed time is a function of the event's id, so a revision keeps it.
    let hours = if v.hours < 0 {
        i64::from(v.session) * 5 + i64::from(slot) * 7
    } else {
        v.hours
    };
    let ts = T0 + hours * HOUR;
    let t = text(n, v.reps);
    let kind = match &v.kind {
        Kind::Meta {
            cwd,
            branch,
            agent,
            parent,
        } => Event::SessionMeta {
            cwd: format!("/work/p{cwd}"),
            branch: match branch {
                0 => None,
                1 => Some(String::new()),
                _ => Some(format!("b{n}")),
            },
            agent: match agent {
                0 => None,
                1 => Some(Agent::ClaudeCode),
                2 => Some(Agent::Codex),
                3 => Some(Agent::Gemini),
                _ => Some(Agent::OpenCode),
            },
            version: None,
            parent: parent.then(|| SessionId("s9".into())),
            subagent: None,
        },
        Kind::User { harness } => Event::UserMsg {
            text: t,
            harness: *harness,
            context: None,
        },
        Kind::Tool { ok } => Event::ToolCall {
            tool: "Bash".into(),
            detail: t,
            ok: *ok,
            agent: None,
        },
        Kind::Touch { paths, change } => {
            let ids: Vec<Option<BlobId>> = touch_changes(n, *paths, *change)
                .into_iter()
                .map(|c| c.map(|(change, _)| change.to_blob().0))
                .collect();
            Event::FileTouch {
                path: format!("src/f{}.rs", n % 3),
                op: op(n, 0),
                change: ids[0],
                failed: n % 5 == 4,
                more: (0..*paths)
                    .map(|p| Touched {
                        path: format!("/work/p{}/src/g{p}.rs", n % 2),
                        op: op(n, usize::from(p) + 1),
                        change: ids[usize::from(p) + 1],
                    })
                    .collect(),
                restores: None,
                // Some edits name no model, and a revision may name another.
                model: (n % 4 != 3).then(|| format!("model-{}", n % 2)),
            }
        }
        Kind::Commit { empty } => Event::Commit {
            hash: if *empty {
                String::new()
            } else {
                format!("c{n}")
            },
            message: t,
        },
        Kind::Committed => Event::Committed {
            vcs: Vcs::Git,
            hash: format!("h{}", n % 4),
            message: t,
            branch: None,
        },
        Kind::Final => Event::FinalMsg { text: t },
        Kind::Compaction => Event::Compaction {},
        Kind::Said => Event::Said { text: t },
        Kind::Summary => Event::CompactSummary { text: t },
        Kind::Obs {
            subject,
            cites,
            basis,
        } => Event::Obs {
            subject: format!("subject{subject}"),
            text: t,
            derived_from: if *cites { vec![16, 32] } else { vec![] },
            basis: basis.then(|| Basis {
                commit: format!("{n:040}"),
                dirty: n.is_multiple_of(2),
            }),
        },
        Kind::Unknown => Event::Unknown(serde_json::json!({ "Hologram": { "n": n } })),
        Kind::Distill => Event::Distill {
            lane: serde_json::Value::Null,
            key: format!("k{n}"),
            text: t,
            open: false,
            cites: vec![],
            src: 0,
            by: String::new(),
        },
    };
    (
        EventId {
            session: session.clone(),
            seq: Seq(seq),
        },
        Envelope::new(session, ts, kind),
    )
}

/// How the `n`th version's touch touched its `file`th file: every op, the one envelopes
/// from before the field read as included.
fn op(n: usize, file: usize) -> TouchOp {
    use TouchOp::*;
    [
        Edit,
        Write,
        MultiEdit,
        NotebookEdit,
        PatchAdd,
        PatchUpdate,
        PatchDelete,
        Unknown,
    ][(n + file) % 8]
}

/// What each file of the `n`th version's touch wrote (its own file first), and whether the
/// blob store holds it. Kinds by `change` (the further files take the next ones): 0 none,
/// 1 a whole write, 2 an edit whose old and new lines share no line, 3 a change whose blob
/// is missing from the store, 4 two such edits at once, 5 a notebook cell's source, 6 an
/// apply_patch update (a context line, lines removed and added), 7 a unified diff as Codex
/// records it (its `---`/`+++` header, a hunk header, a context line, lines removed and
/// added), 8 a deletion. No line of one is another's, and a patch's or diff's lines each
/// start with their mark.
pub(crate) fn touch_changes(n: usize, paths: u8, change: u8) -> Vec<Option<(Change, bool)>> {
    (0..=paths)
        .map(|p| {
            let lines = |tag: &str, k: u8| -> String {
                (0..k).map(|i| format!("{tag}{n}-{p}-{i}\n")).collect()
            };
            let marked = |mark: &str, tag: &str, k: u8| -> Vec<String> {
                lines(tag, k)
                    .lines()
                    .map(|l| format!("{mark}{l}"))
                    .collect()
            };
            let edit = |old: &str, new: &str, k: u8| Replacement {
                old: lines(old, k),
                new: lines(new, k + 2),
                replace_all: false,
            };
            match (change + p) % 9 {
                0 => None,
                1 => Some((Change::write(lines("w", p + 2)), true)),
                2 => Some((
                    Change::Edit(Replacement {
                        old: lines("o", p + 1),
                        new: lines("e", p + 3),
                        replace_all: false,
                    }),
                    true,
                )),
                3 => Some((Change::write(lines("lost", 1)), false)),
                4 => Some((
                    Change::MultiEdit {
                        edits: vec![edit("ma", "mb", 1), edit("mc", "md", 2)],
                    },
                    true,
                )),
                5 => Some((
                    Change::NotebookEdit {
                        cell_id: Some(format!("cell{n}")),
                        cell_type: Some("code".into()),
                        edit_mode: None,
                        source: lines("nb", p + 1),
                    },
                    true,
                )),
                6 => Some((
                    Change::Patch {
                        move_to: None,
                        hunks: vec![Hunk {
                            header: None,
                            lines: [
                                marked(" ", "pc", 1),
                                marked("-", "pr", p + 1),
                                marked("+", "pa", p + 2),
                            ]
                            .concat(),
                            end_of_file: false,
                        }],
                    },
                    true,
                )),
                7 => Some((
                    Change::UnifiedDiff {
                        move_to: None,
                        diff: [
                            vec![
                                format!("--- a/f{n}"),
                                format!("+++ b/f{n}"),
                                "@@ -1,3 +1,4 @@".into(),
                            ],
                            marked(" ", "uc", 1),
                            marked("-", "ur", 2),
                            marked("+", "ua", p + 3),
                        ]
                        .concat()
                        .join("\n"),
                    },
                    true,
                )),
                _ => Some((Change::Delete, true)),
            }
        })
        .collect()
}

/// The blobs the `n`th version's touch stores.
pub(crate) fn blobs_of(n: usize, v: &Version) -> Vec<(BlobId, Vec<u8>)> {
    match v.kind {
        Kind::Touch { paths, change } => touch_changes(n, paths, change)
            .into_iter()
            .flatten()
            .filter(|(_, stored)| *stored)
            .map(|(c, _)| c.to_blob())
            .collect(),
        _ => Vec::new(),
    }
}

/// Every version of a case, numbered in the order it is written.
fn written(steps: &[Step]) -> impl Iterator<Item = (usize, &Version)> {
    steps
        .iter()
        .filter_map(|s| match s {
            Step::Write(vs) => Some(vs),
            _ => None,
        })
        .flatten()
        .enumerate()
}

/// The word a [`Step::Redact`] redacts after `written` versions were written: the
/// `place`th word of one of them (`None`: none was written).
pub(crate) fn redacted_word(written: usize, version: usize, place: usize) -> Option<String> {
    (written > 0).then(|| word(version % written, place))
}

/// `text` without the word `word` (each occurrence of it, a word alone: `w1p1` is not
/// `w1p10`'s), a marker in its place: a word of its own, as every word of the record is (the
/// lanes' rank rules count on it), and no query syntax.
fn without(text: &str, word: &str) -> String {
    let marker = format!("redacted{word}");
    let words = text.split(' ').map(|w| if w == word { &marker } else { w });
    words.collect::<Vec<_>>().join(" ")
}

/// `env` without the word `word` in any of its texts (`None`: it held none).
pub(crate) fn redacted(env: &Envelope, word: &str) -> Option<Envelope> {
    let mut new = env.clone();
    let text = match &mut new.kind {
        Event::UserMsg { text, .. }
        | Event::FinalMsg { text }
        | Event::Said { text }
        | Event::CompactSummary { text }
        | Event::Obs { text, .. }
        | Event::Distill { text, .. } => text,
        Event::ToolCall { detail, .. } => detail,
        Event::Commit { message, .. } | Event::Committed { message, .. } => message,
        _ => return None,
    };
    let clean = without(text, word);
    if clean == *text {
        return None;
    }
    *text = clean;
    Some(new)
}

/// The words the redactions among `steps` redacted, in order.
pub(crate) fn redactions(steps: &[Step]) -> Vec<String> {
    let mut n = 0;
    let mut words = Vec::new();
    for step in steps {
        match step {
            Step::Write(vs) => n += vs.len(),
            Step::Redact { version, place } => words.extend(redacted_word(n, *version, *place)),
            _ => {}
        }
    }
    words
}

/// Every blob a case stores, by id.
pub(crate) fn all_blobs(steps: &[Step]) -> BTreeMap<BlobId, Vec<u8>> {
    written(steps).flat_map(|(n, v)| blobs_of(n, v)).collect()
}

/// One change of a case's ledger: the `n`th version written.
#[derive(Clone, Debug)]
pub(crate) struct Written {
    pub(crate) n: usize,
    pub(crate) id: EventId,
    pub(crate) env: Envelope,
}

/// The changes a case's writes make, in the order of their positions (a lane at position
/// `p` has folded the first `p`): every version written, but one equal to its event's
/// current version, which the ledger does not write. A redaction writes each event whose
/// current version holds its word again without it, then scrubs the word from every
/// version before (the ledger keeps the positions, and the versions are what was written
/// less the word).
pub(crate) fn feed(steps: &[Step]) -> Vec<Written> {
    let mut current: BTreeMap<EventId, (usize, Envelope)> = BTreeMap::new();
    let mut out: Vec<Written> = Vec::new();
    let mut n = 0;
    for step in steps {
        match step {
            Step::Write(vs) => {
                for v in vs {
                    let (id, env) = envelope(n, v);
                    if current.get(&id).map(|(_, e)| e) != Some(&env) {
                        current.insert(id.clone(), (n, env.clone()));
                        out.push(Written { n, id, env });
                    }
                    n += 1;
                }
            }
            Step::Redact { version, place } => {
                let Some(word) = redacted_word(n, *version, *place) else {
                    continue;
                };
                for (id, (m, env)) in current.iter_mut() {
                    if let Some(clean) = redacted(env, &word) {
                        *env = clean.clone();
                        out.push(Written {
                            n: *m,
                            id: id.clone(),
                            env: clean,
                        });
                    }
                }
                for w in out.iter_mut() {
                    if let Some(clean) = redacted(&w.env, &word) {
                        w.env = clean;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// What the vector lane embeds of a text: its first `EMBED_WINDOW` bytes, cut back to a
/// character boundary.
pub(crate) fn window(text: &str) -> &str {
    let mut end = text.len().min(crate::views::rows::EMBED_WINDOW);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The probe words and texts of every version of a case (and of its redacted versions).
pub(crate) fn vocabulary(steps: &[Step]) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut probes = BTreeSet::new();
    let mut texts = BTreeSet::new();
    let redacted = redactions(steps);
    // A redacted word finds nothing: the lane is asked for it.
    probes.extend(redacted.iter().cloned());
    for (n, v) in written(steps) {
        // The first word and the last: a lane that indexed only part of a text misses one.
        let mut text = text(n, v.reps);
        probes.extend(text.split_whitespace().next().map(str::to_string));
        probes.extend(text.split_whitespace().last().map(str::to_string));
        // A vector is made from its text's window (the whole text, when short): vectors are
        // named by windows, the text's after each redaction too.
        texts.insert(window(&text).to_string());
        for word in &redacted {
            text = without(&text, word);
            texts.insert(window(&text).to_string());
        }
    }
    (probes, texts)
}

/// Each event's newest version whose time is at or before `cutoff` (all of them: `i64::MAX`).
pub(crate) fn as_of(feed: &[Written], cutoff: i64) -> BTreeMap<EventId, Envelope> {
    let mut out = BTreeMap::new();
    for w in feed {
        if w.env.ts_ms <= cutoff {
            out.insert(w.id.clone(), w.env.clone());
        }
    }
    out
}
