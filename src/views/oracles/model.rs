//! What the views must hold, computed by a plain scan of the events that shares no code with
//! the fold: no `Pending`, no `SessionRollup::apply`, no `TextRow::of`, no lane code. The
//! view types are only containers here. [`observe`] reads the same shape out of real views,
//! lanes included, so the two compare with `==`.

use std::collections::{BTreeMap, BTreeSet};

use super::ledgers::{Written, window};
use crate::embed::hash::HashEmbedder;
use crate::ledger::decode_event_key;
use crate::views::Views;
use crate::views::closings::{Closing, Closings};
use crate::views::rows::{
    EMBED_MIN_WORDS, EMBED_WINDOW, FileRow, SAID_MIN, TextFilter, TextKind, TextRow,
};
use crate::views::session::SessionRollup;
use crate::views::steps::Step;
use crate::views::tables::{CommitRow, DayStats, ObsRow, SessionDay, SubjectStats, Table};
use crate::views::vectors::dot_quantized;
use crate::vocab::change::{BlobId, Change};
use crate::vocab::diff::Size;
use crate::vocab::event::{Envelope, Event, EventId, Seq, SessionId};

/// Everything the views hold, as plain data.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Snapshot {
    pub(crate) sessions: BTreeMap<SessionId, SessionRollup>,
    pub(crate) days: BTreeMap<String, DayStats>,
    pub(crate) files: BTreeMap<(String, EventId), FileRow>,
    /// What each touch wrote to each path: its blob's bytes, when the store holds them.
    pub(crate) changes: BTreeMap<(String, EventId), String>,
    /// Each touched path, its bytes reversed, with the touch.
    pub(crate) tails: BTreeSet<(Vec<u8>, EventId)>,
    /// Each session's log steps: (event, index) → (time, step).
    pub(crate) steps: BTreeMap<(EventId, u16), (i64, Step)>,
    /// Each commit a commit command printed.
    pub(crate) commits: BTreeMap<EventId, CommitRow>,
    pub(crate) texts: BTreeMap<EventId, TextRow>,
    pub(crate) subjects: BTreeMap<String, SubjectStats>,
    pub(crate) evidence: BTreeMap<(String, EventId), ObsRow>,
    /// Each event's current version, whole.
    pub(crate) envelopes: BTreeMap<EventId, Envelope>,
    /// Each revised event's earlier versions, in the order they were written.
    pub(crate) past: BTreeMap<EventId, Vec<Envelope>>,
    /// The change blobs those earlier versions name, when the store holds them.
    pub(crate) past_blobs: BTreeMap<BlobId, Vec<u8>>,
    /// The keyword lane, document by document.
    pub(crate) keyword: BTreeMap<EventId, KeywordDoc>,
    /// The vector lane: each vector, as the text it was made from.
    pub(crate) vectors: BTreeMap<EventId, String>,
}

/// A keyword document as searches see it: its kind and time, which of the probe words find
/// it, and under which session and subject filters they do.
#[derive(Debug, PartialEq)]
pub(crate) struct KeywordDoc {
    pub(crate) kind: TextKind,
    pub(crate) ts_ms: i64,
    pub(crate) words: BTreeSet<String>,
    pub(crate) sessions: BTreeSet<SessionId>,
    pub(crate) subjects: BTreeSet<String>,
}

/// A view of the views, as a finding names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum View {
    Sessions,
    Days,
    Files,
    Changes,
    Tails,
    Steps,
    Commits,
    Texts,
    Subjects,
    Evidence,
    Envelopes,
    Past,
    PastBlobs,
    Keyword,
    Vectors,
    /// The texts waiting for the embedding pass.
    Queue,
    /// The views' meta records: the generation current, the ledger stamped.
    Meta,
    /// The closings file beside the views.
    Closings,
    /// The embedding cache beside the views (see [`cache_findings`]).
    Cache,
}

/// What a finding is about. A fault test names the kinds its fault must produce: a fault
/// caught only by a finding about something else is not caught.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum About {
    /// A view's rows differ from the model's.
    Differs(View),
    /// A replaced version can still be found in a view (by its own words, its vector, its
    /// log steps or its changes).
    Stale(View),
    /// A catch-up, rebuild, embedding pass or `asof` failed, and not by an interruption a
    /// test injected.
    Failed,
    /// An interruption armed at a flush did not fire though the catch-up has that many
    /// flushes by the model, or fired though it has fewer.
    Flushes,
    /// A lane's recorded position differs from the model's, or a reader was served views
    /// that were never completed.
    Positions,
    /// `asof` folded another number of events than the model of the cutoff holds.
    Folded,
    /// Today's lanes, searched for the texts at or before a cutoff (as `asof` with words
    /// searches when no event revised since had another version then), find other texts
    /// than the model of that moment holds.
    Cut(View),
    /// `asof` without words told other counts, or another newest session, than the model
    /// of the day's end holds (see `asof::held`).
    Held,
    /// A lane ranks its hits against the order it states (see [`ranks`]).
    Ranks(View),
    /// A view still holds a word redacted from the store (see [`unredacted`]).
    Unredacted(View),
}

/// One thing an oracle found wrong.
#[derive(Clone, Debug)]
pub(crate) struct Finding {
    pub(crate) about: About,
    pub(crate) what: String,
}

impl Finding {
    pub(crate) fn new(about: About, what: String) -> Finding {
        Finding { about, what }
    }
}

/// Where two snapshots differ, one finding per differing row (empty: identical).
pub(crate) fn diff(what: &str, got: &Snapshot, want: &Snapshot) -> Vec<Finding> {
    let mut out = Vec::new();
    differ(
        &mut out,
        what,
        View::Sessions,
        &got.sessions,
        &want.sessions,
    );
    differ(&mut out, what, View::Days, &got.days, &want.days);
    differ(&mut out, what, View::Files, &got.files, &want.files);
    differ(&mut out, what, View::Changes, &got.changes, &want.changes);
    let set = |s: &BTreeSet<(Vec<u8>, EventId)>| s.iter().map(|k| (k.clone(), ())).collect();
    let (gt, wt): (BTreeMap<_, ()>, BTreeMap<_, ()>) = (set(&got.tails), set(&want.tails));
    differ(&mut out, what, View::Tails, &gt, &wt);
    differ(&mut out, what, View::Steps, &got.steps, &want.steps);
    differ(&mut out, what, View::Commits, &got.commits, &want.commits);
    differ(&mut out, what, View::Texts, &got.texts, &want.texts);
    differ(
        &mut out,
        what,
        View::Subjects,
        &got.subjects,
        &want.subjects,
    );
    differ(
        &mut out,
        what,
        View::Evidence,
        &got.evidence,
        &want.evidence,
    );
    differ(
        &mut out,
        what,
        View::Envelopes,
        &got.envelopes,
        &want.envelopes,
    );
    differ(&mut out, what, View::Past, &got.past, &want.past);
    differ(
        &mut out,
        what,
        View::PastBlobs,
        &got.past_blobs,
        &want.past_blobs,
    );
    differ(&mut out, what, View::Keyword, &got.keyword, &want.keyword);
    differ(&mut out, what, View::Vectors, &got.vectors, &want.vectors);
    out
}

pub(crate) fn differ<K: Ord + std::fmt::Debug, V: PartialEq + std::fmt::Debug>(
    out: &mut Vec<Finding>,
    what: &str,
    view: View,
    got: &BTreeMap<K, V>,
    want: &BTreeMap<K, V>,
) {
    let keys: BTreeSet<&K> = got.keys().chain(want.keys()).collect();
    for k in keys {
        let (g, w) = (got.get(k), want.get(k));
        if g != w {
            out.push(Finding::new(
                About::Differs(view),
                format!("{what}: {view:?} {k:?}: views hold {g:?}, model says {w:?}"),
            ));
        }
    }
}

/// The calendar day `ts_ms` falls on where the views were opened.
fn day(ts_ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ts_ms)
        .map(|t| {
            t.to_zoned_datetime(super::tz())
                .strftime("%Y-%m-%d")
                .to_string()
        })
        .unwrap_or_else(|_| "0000-00-00".into())
}

fn count(map: &mut BTreeMap<String, i64>, key: &str) {
    *map.entry(key.to_string()).or_insert(0) += 1;
}

/// Whether an event is its session's activity, and so inside its span: anything with a
/// time, but a claim filed on the session or a retired distiller's note.
fn is_activity(env: &Envelope) -> bool {
    env.ts_ms > 0 && !matches!(env.kind, Event::Obs { .. } | Event::Distill { .. })
}

/// Each session's span by the rule the rollup documents: from the earliest to the latest
/// time of any version of its activity in `feed`, current or replaced (a span never
/// shrinks, even where a revision moved an event in time or out of the activity).
pub(crate) fn spans(feed: &[Written]) -> BTreeMap<SessionId, (i64, i64)> {
    let mut out: BTreeMap<SessionId, (i64, i64)> = BTreeMap::new();
    for w in feed.iter().filter(|w| is_activity(&w.env)) {
        let t = w.env.ts_ms;
        let span = out.entry(w.id.session.clone()).or_insert((t, t));
        *span = (span.0.min(t), span.1.max(t));
    }
    out
}

/// The searchable text of an event, by the rules the documentation states: claims, closing
/// messages, compaction summaries, the person's prompts, narration of at least
/// [`SAID_MIN`] bytes, what each tool call was given, and the excerpt of what it printed; never a blank text.
fn text_of(ts_ms: i64, e: &Event) -> Option<TextRow> {
    let plain = |kind, text: &str| TextRow {
        kind,
        ts_ms,
        cited: true,
        text: text.to_string(),
        subject: None,
        basis: None,
    };
    let row = match e {
        Event::Obs {
            subject,
            text,
            derived_from,
            basis,
        } => TextRow {
            kind: TextKind::Obs,
            ts_ms,
            cited: !derived_from.is_empty(),
            text: text.clone(),
            subject: Some(subject.clone()),
            basis: basis.clone(),
        },
        Event::FinalMsg { text } => plain(TextKind::Final, text),
        Event::CompactSummary { text } => plain(TextKind::Compact, text),
        Event::UserMsg {
            text,
            harness: false,
            ..
        } => plain(TextKind::User, text),
        Event::Said { text } if text.len() >= SAID_MIN => plain(TextKind::Said, text),
        Event::ToolCall { detail, .. } => plain(TextKind::Tool, detail),
        Event::ToolOutput { excerpt, .. } => plain(TextKind::Output, excerpt),
        _ => return None,
    };
    if row.text.trim().is_empty() {
        None
    } else {
        Some(row)
    }
}

/// Which searchable texts the vector lane embeds, stated once: the prose (not what a tool
/// was given or printed) of at least [`EMBED_MIN_WORDS`] words. The model embeds by it, and
/// [`text_findings`] holds the views to it.
fn embeddable(row: &TextRow) -> bool {
    row.kind.is_prose() && row.text.split_whitespace().count() >= EMBED_MIN_WORDS
}

/// Whether `window` is what the vector lane embeds of `text`, by the rule it states: the
/// text itself when it fits in [`EMBED_WINDOW`] bytes, else its longest prefix that fits
/// and ends on a character (the next character would not fit).
fn is_window(text: &str, window: &str) -> bool {
    let next = text[window.len().min(text.len())..].chars().next();
    text.starts_with(window)
        && window.len() <= EMBED_WINDOW
        && next.is_none_or(|c| window.len() + c.len_utf8() > EMBED_WINDOW)
}

/// Where `s` breaks which texts are searchable and embeddable, stated as properties of the
/// views rather than as a copy of the fold's rows (`TextRow::of`, `dense`, `embed_text`):
/// - a text row is its event's own text, verbatim, at its time, and never blank;
/// - narration is searchable from [`SAID_MIN`] bytes, a prompt only when the person wrote
///   it (these rows, and no others, hold their events' kinds);
/// - with the keyword lane at the tables (`keyword_at_tables`), it holds a document for
///   exactly the texts table's rows, of their kinds and times;
/// - the vector lane holds vectors of embeddable texts only ([`embeddable`]), of every one
///   once the embedding pass ran (`embedded`), each made from its text's window
///   ([`is_window`]).
pub(crate) fn text_findings(
    what: &str,
    s: &Snapshot,
    keyword_at_tables: bool,
    embedded: bool,
) -> Vec<Finding> {
    let mut found = Vec::new();
    let mut wrong = |view, rule: &str, id: &EventId| {
        found.push(Finding::new(
            About::Differs(view),
            format!("{what}: {id:?} breaks the rule that {rule}"),
        ));
    };
    for (id, row) in &s.texts {
        let env = s.envelopes.get(id);
        let own = env.is_some_and(|e| {
            e.ts_ms == row.ts_ms && format!("{:?}", e.kind).contains(&format!("{:?}", row.text))
        });
        if !own || row.text.trim().is_empty() {
            wrong(
                View::Texts,
                "a text row is its event's text, never blank",
                id,
            );
        }
        let kind_holds = match (row.kind, env.map(|e| &e.kind)) {
            (TextKind::Said, _) => row.text.len() >= SAID_MIN,
            (TextKind::User, Some(Event::UserMsg { harness, .. })) => !harness,
            (TextKind::User, _) => false,
            _ => true,
        };
        if !kind_holds {
            wrong(
                View::Texts,
                "narration is searchable from SAID_MIN bytes, a prompt when the person wrote it",
                id,
            );
        }
        if keyword_at_tables
            && s.keyword.get(id).map(|d| (d.kind, d.ts_ms)) != Some((row.kind, row.ts_ms))
        {
            wrong(
                View::Keyword,
                "each text row is one keyword document of its kind and time",
                id,
            );
        }
        match (s.vectors.get(id), embeddable(row)) {
            (Some(_), false) => wrong(View::Vectors, "only embeddable texts are embedded", id),
            (None, true) if embedded => wrong(
                View::Vectors,
                "every embeddable text is embedded once the pass ran",
                id,
            ),
            (Some(w), true) if !is_window(&row.text, w) => {
                wrong(View::Vectors, "a vector is made from its text's window", id)
            }
            _ => {}
        }
    }
    for id in s.keyword.keys().filter(|id| !s.texts.contains_key(*id)) {
        if keyword_at_tables {
            wrong(View::Keyword, "each keyword document is a text row", id);
        }
    }
    for id in s.vectors.keys().filter(|id| !s.texts.contains_key(*id)) {
        wrong(View::Vectors, "each vector is a text row's", id);
    }
    found
}

/// The lines a generated change added and removed, counted from its text: a write or a
/// notebook cell adds its lines; the generator's edits share no line between old and new,
/// so an edit removes all of its old lines and adds all of its new ones; a patch's or a
/// diff's lines are marked, and its context and headers (`---`, `+++`, `@@`) change
/// nothing; a deletion is no line (the file's lines are not recorded).
fn lines_changed(bytes: Option<&Vec<u8>>) -> Size {
    let count = |t: &str| t.split('\n').filter(|l| !l.is_empty()).count();
    let edit = |r: &crate::vocab::change::Replacement| Size {
        added: count(&r.new),
        removed: count(&r.old),
    };
    let marked = |lines: &mut dyn Iterator<Item = &str>| {
        let mut size = Size::default();
        for l in lines.filter(|l| !l.starts_with("---") && !l.starts_with("+++")) {
            size.added += usize::from(l.starts_with('+'));
            size.removed += usize::from(l.starts_with('-'));
        }
        size
    };
    match bytes.and_then(|b| serde_json::from_slice::<Change>(b).ok()) {
        Some(Change::Write { content, .. }) => Size {
            added: count(&content),
            removed: 0,
        },
        Some(Change::NotebookEdit { source, .. }) => Size {
            added: count(&source),
            removed: 0,
        },
        Some(Change::Edit(r)) => edit(&r),
        Some(Change::MultiEdit { edits }) => {
            edits.iter().map(edit).fold(Size::default(), |mut a, s| {
                a += s;
                a
            })
        }
        Some(Change::Patch { hunks, .. }) => marked(
            &mut hunks
                .iter()
                .flat_map(|h| h.lines.iter().map(String::as_str)),
        ),
        Some(Change::UnifiedDiff { diff, .. }) => marked(&mut diff.lines()),
        Some(Change::Delete) | None => Size::default(),
    }
}

/// The log steps of an event, by the rules `peat log` documents: prompts (the person's and
/// the harness's), tool calls, one edit per file touched, commits that name a hash, closing
/// messages, compactions and claims; nothing else.
pub(crate) fn steps_of(env: &Envelope, blobs: &BTreeMap<BlobId, Vec<u8>>) -> Vec<Step> {
    match &env.kind {
        Event::UserMsg { text, harness, .. } => vec![Step::Prompt {
            text: text.clone(),
            harness: *harness,
        }],
        Event::ToolCall {
            tool,
            detail,
            ok,
            agent,
        } => vec![Step::Tool {
            tool: tool.clone(),
            detail: detail.clone(),
            ok: *ok,
            agent: agent.clone(),
        }],
        Event::FileTouch {
            path,
            op,
            change,
            failed,
            more,
            model,
            ..
        } => {
            let mut files = vec![(path.clone(), *op, *change)];
            files.extend(more.iter().map(|t| (t.path.clone(), t.op, t.change)));
            files
                .into_iter()
                .map(|(path, op, change)| Step::Edit {
                    path,
                    op,
                    failed: *failed,
                    size: lines_changed(change.and_then(|c| blobs.get(&c))),
                    model: model.clone(),
                })
                .collect()
        }
        Event::Committed {
            vcs, hash, message, ..
        } => vec![Step::Commit {
            vcs: Some(*vcs),
            hash: hash.clone(),
            message: message.clone(),
        }],
        Event::Commit { hash, message } if !hash.is_empty() => vec![Step::Commit {
            vcs: None,
            hash: hash.clone(),
            message: message.clone(),
        }],
        Event::FinalMsg { text } => vec![Step::Closing { text: text.clone() }],
        Event::Compaction {} => vec![Step::Compaction],
        Event::Obs { subject, text, .. } => vec![Step::Obs {
            subject: subject.clone(),
            text: text.clone(),
        }],
        _ => Vec::new(),
    }
}

/// A recorded commit: its time, its hash and its message's first line.
fn commit_row(ts_ms: i64, hash: &str, message: &str) -> CommitRow {
    CommitRow {
        ts_ms,
        hash: hash.to_string(),
        subject: message.lines().next().unwrap_or("").to_string(),
    }
}

/// What each file a touch names was changed by: its change blob's bytes, when the store
/// holds them.
pub(crate) fn changes_of(
    id: &EventId,
    env: &Envelope,
    blobs: &BTreeMap<BlobId, Vec<u8>>,
) -> BTreeMap<(String, EventId), String> {
    let Event::FileTouch {
        path, change, more, ..
    } = &env.kind
    else {
        return BTreeMap::new();
    };
    std::iter::once((path, change))
        .chain(more.iter().map(|t| (&t.path, &t.change)))
        .filter_map(|(p, change)| {
            let bytes = change.as_ref().and_then(|c| blobs.get(c))?;
            let text = String::from_utf8_lossy(bytes).into_owned();
            Some(((p.clone(), id.clone()), text))
        })
        .collect()
}

/// What views over `events` (each event's current version, their change blobs in `blobs`)
/// hold; `probes` are the words the keyword lane is asked for.
pub(crate) fn model(
    events: &BTreeMap<EventId, Envelope>,
    blobs: &BTreeMap<BlobId, Vec<u8>>,
    probes: &BTreeSet<String>,
) -> Snapshot {
    let mut s = Snapshot::default();
    for (id, env) in events {
        s.envelopes.insert(id.clone(), env.clone());
        s.changes.extend(changes_of(id, env, blobs));
        for (i, step) in steps_of(env, blobs).into_iter().enumerate() {
            s.steps.insert((id.clone(), i as u16), (env.ts_ms, step));
        }
        let r = s.sessions.entry(id.session.clone()).or_default();
        let d = s.days.entry(day(env.ts_ms)).or_default();
        r.events += 1;
        d.events += 1;
        let mine = d
            .sessions
            .entry(id.session.as_str().to_string())
            .or_default();
        mine.events += 1;
        if is_activity(env) {
            r.start_ms = Some(r.start_ms.map_or(env.ts_ms, |t| t.min(env.ts_ms)));
            r.end_ms = Some(r.end_ms.map_or(env.ts_ms, |t| t.max(env.ts_ms)));
        }
        match &env.kind {
            Event::SessionMeta {
                cwd,
                branch,
                agent,
                parent,
                ..
            } => {
                r.cwd = Some(cwd.clone());
                r.branch = branch.clone().filter(|b| !b.is_empty());
                r.agent = *agent;
                r.parent = parent.clone();
            }
            Event::UserMsg { harness: false, .. } => {
                r.prompts += 1;
                r.prompt_seqs.insert(id.seq.0);
                d.prompts += 1;
                mine.prompts += 1;
            }
            Event::ToolCall { ok, .. } => {
                r.tools += 1;
                d.tools += 1;
                mine.tools += 1;
                if !ok {
                    r.failed_tools += 1;
                    d.fails += 1;
                    mine.fails += 1;
                }
            }
            Event::FileTouch {
                path,
                op,
                change,
                failed,
                more,
                model,
                ..
            } => {
                let mut touched = vec![(path, *op, *change)];
                touched.extend(more.iter().map(|t| (&t.path, t.op, t.change)));
                for (p, op, change) in touched {
                    count(&mut r.files, p);
                    count(&mut d.files, p);
                    let row = FileRow {
                        ts_ms: env.ts_ms,
                        op,
                        failed: *failed,
                        change,
                        model: model.clone(),
                    };
                    s.files.insert((p.clone(), id.clone()), row);
                    let tail: Vec<u8> = p.as_bytes().iter().rev().copied().collect();
                    s.tails.insert((tail, id.clone()));
                }
            }
            Event::Committed { hash, message, .. } => {
                count(&mut r.commits, hash);
                d.commits += 1;
                s.commits
                    .insert(id.clone(), commit_row(env.ts_ms, hash, message));
            }
            Event::Commit { hash, message } if !hash.is_empty() => {
                count(&mut r.commits, hash);
                d.commits += 1;
                s.commits
                    .insert(id.clone(), commit_row(env.ts_ms, hash, message));
            }
            Event::FinalMsg { .. } => {
                r.finals.insert((env.ts_ms, id.seq.0));
            }
            Event::Compaction {} => r.compactions += 1,
            Event::Obs {
                subject,
                text,
                derived_from,
                basis,
            } => {
                d.obs += 1;
                s.evidence.insert(
                    (subject.clone(), id.clone()),
                    ObsRow {
                        ts_ms: env.ts_ms,
                        text: text.clone(),
                        derived_from: derived_from.clone(),
                        basis: basis.clone(),
                    },
                );
            }
            _ => {}
        }
        if let Some(row) = text_of(env.ts_ms, &env.kind) {
            let words: BTreeSet<String> = row
                .text
                .split_whitespace()
                .filter(|w| probes.contains(*w))
                .map(str::to_string)
                .collect();
            // A document no probe finds is found under no filter either.
            let found = !words.is_empty();
            let doc = KeywordDoc {
                kind: row.kind,
                ts_ms: row.ts_ms,
                sessions: found.then(|| id.session.clone()).into_iter().collect(),
                subjects: row.subject.clone().filter(|_| found).into_iter().collect(),
                words,
            };
            s.keyword.insert(id.clone(), doc);
            if embeddable(&row) {
                s.vectors.insert(id.clone(), window(&row.text).to_string());
            }
            s.texts.insert(id.clone(), row);
        }
    }
    // A subject's claim is its newest observation by (time, session, seq).
    for ((subject, id), row) in &s.evidence {
        let st = s.subjects.entry(subject.clone()).or_insert(SubjectStats {
            count: 0,
            cited: 0,
            last_ms: i64::MIN,
            session: id.session.clone(),
            seq: id.seq,
            text: String::new(),
            basis: None,
        });
        st.count += 1;
        st.cited += i64::from(!row.derived_from.is_empty());
        if (row.ts_ms, &id.session, id.seq) >= (st.last_ms, &st.session, st.seq) {
            st.last_ms = row.ts_ms;
            st.session = id.session.clone();
            st.seq = id.seq;
            st.text = row.text.clone();
            st.basis = row.basis.clone();
        }
    }
    s
}

/// The past tables of views over `feed` (the change blobs the store holds in `blobs`): each
/// event's versions before its current one.
pub(crate) fn past(
    feed: &[Written],
    blobs: &BTreeMap<BlobId, Vec<u8>>,
) -> (BTreeMap<EventId, Vec<Envelope>>, BTreeMap<BlobId, Vec<u8>>) {
    let mut written: BTreeMap<&EventId, Vec<&Envelope>> = BTreeMap::new();
    for w in feed {
        written.entry(&w.id).or_default().push(&w.env);
    }
    let (mut past, mut kept) = (BTreeMap::new(), BTreeMap::new());
    for (id, mut all) in written {
        all.pop();
        if all.is_empty() {
            continue;
        }
        for env in &all {
            if let Event::FileTouch { change, more, .. } = &env.kind {
                for blob in change
                    .iter()
                    .chain(more.iter().filter_map(|t| t.change.as_ref()))
                {
                    if let Some(bytes) = blobs.get(blob) {
                        kept.insert(*blob, bytes.clone());
                    }
                }
            }
        }
        past.insert(id.clone(), all.into_iter().cloned().collect());
    }
    (past, kept)
}

/// Marks a keyword document of a kind a search finds only when asked for by its kind,
/// found by a search that did not ask.
const UNASKED: &str = "<found without asking for its kind>";

/// Where `s` breaks what a day counts, stated as properties of the views themselves rather
/// than as a fold: each event is counted on the calendar day its time falls on where the
/// views were opened, so a day counts exactly the events of that date, and a day's counts
/// are its events': per session its events, in all the person's prompts, the tool calls
/// and the failed ones that the sessions count, the commits the commits table lists, the
/// claims the evidence lists, and per path the touches the files view lists.
pub(crate) fn day_findings(what: &str, s: &Snapshot) -> Vec<Finding> {
    let mut found = Vec::new();
    let mut wrong = |rule: &str, got: String, want: String| {
        found.push(Finding::new(
            About::Differs(View::Days),
            format!("{what}: the days break the rule that {rule}: {got} against {want}"),
        ));
    };
    let mut dated: BTreeMap<String, i64> = BTreeMap::new();
    for env in s.envelopes.values() {
        count(&mut dated, &day(env.ts_ms));
    }
    let counted: BTreeMap<String, i64> = s
        .days
        .iter()
        .map(|(d, st)| (d.clone(), st.events))
        .collect();
    if counted != dated {
        wrong(
            "a day counts the events of its date",
            format!("{counted:?}"),
            format!("{dated:?}"),
        );
    }
    for (d, st) in &s.days {
        let by_session = |f: fn(&SessionDay) -> i64| st.sessions.values().map(f).sum::<i64>();
        let shares = [
            (
                "a day's events are its sessions'",
                by_session(|m| m.events),
                st.events,
            ),
            (
                "a day's prompts are its sessions'",
                by_session(|m| m.prompts),
                st.prompts,
            ),
            (
                "a day's tool calls are its sessions'",
                by_session(|m| m.tools),
                st.tools,
            ),
            (
                "a day's failures are its sessions'",
                by_session(|m| m.fails),
                st.fails,
            ),
        ];
        for (rule, got, want) in shares {
            if got != want {
                wrong(rule, format!("{d}: {got}"), want.to_string());
            }
        }
    }
    // Over its days, a session's shares are its own counts.
    for (id, r) in &s.sessions {
        let mut over_days = SessionDay::default();
        for mine in s.days.values().filter_map(|d| d.sessions.get(id.as_str())) {
            over_days.events += mine.events;
            over_days.prompts += mine.prompts;
            over_days.tools += mine.tools;
            over_days.fails += mine.fails;
        }
        let own = [r.events, r.prompts, r.tools, r.failed_tools];
        if <[i64; 4]>::from(over_days) != own {
            wrong(
                "a session's shares of its days are its counts",
                format!("{id:?}: {over_days:?}"),
                format!("{own:?}"),
            );
        }
    }
    let days = |f: fn(&DayStats) -> i64| s.days.values().map(f).sum::<i64>();
    let sessions = |f: fn(&SessionRollup) -> i64| s.sessions.values().map(f).sum::<i64>();
    let totals = [
        (
            "the days count the sessions' events",
            days(|d| d.events),
            sessions(|r| r.events),
        ),
        (
            "the days count the sessions' prompts",
            days(|d| d.prompts),
            sessions(|r| r.prompts),
        ),
        (
            "the days count the sessions' tool calls",
            days(|d| d.tools),
            sessions(|r| r.tools),
        ),
        (
            "the days count the sessions' failures",
            days(|d| d.fails),
            sessions(|r| r.failed_tools),
        ),
        (
            "the days count the commits listed",
            days(|d| d.commits),
            s.commits.len() as i64,
        ),
        (
            "the days count the claims filed",
            days(|d| d.obs),
            s.evidence.len() as i64,
        ),
    ];
    for (rule, got, want) in totals {
        if got != want {
            wrong(rule, got.to_string(), want.to_string());
        }
    }
    let mut touched: BTreeMap<String, i64> = BTreeMap::new();
    for (path, _) in s.files.keys() {
        count(&mut touched, path);
    }
    let mut by_day: BTreeMap<String, i64> = BTreeMap::new();
    for st in s.days.values() {
        for (path, n) in &st.files {
            *by_day.entry(path.clone()).or_insert(0) += n;
        }
    }
    if by_day != touched {
        wrong(
            "the days count the touches listed",
            format!("{by_day:?}"),
            format!("{touched:?}"),
        );
    }
    found
}

/// Where the embedding cache breaks its rule. It is keyed by the embedder's name and the
/// content hash of what was embedded, so each entry is the embedder's vector of its key's
/// text; that text is the embedded window of some version written to the ledger (`feed`),
/// current or replaced, for a retraction leaves a vector that is still its text's; and the
/// vector lane is filled through the cache, so the window of every vector it holds (`lane`,
/// as [`observe`] names them) is cached.
pub(crate) fn cache_findings(
    what: &str,
    views: &Views,
    model: &str,
    feed: &[Written],
    lane: &BTreeMap<EventId, String>,
) -> Vec<Finding> {
    use sha2::{Digest, Sha256};
    let key = |text: &str| {
        let mut k = model.as_bytes().to_vec();
        k.push(0);
        k.extend_from_slice(&Sha256::digest(text.as_bytes()));
        k
    };
    let windows: BTreeMap<Vec<u8>, String> = feed
        .iter()
        .filter_map(|w| text_of(w.env.ts_ms, &w.env.kind))
        .filter(embeddable)
        .map(|row| {
            let text = window(&row.text).to_string();
            (key(&text), text)
        })
        .collect();
    let mut found = Vec::new();
    let mut wrong = |s: String| found.push(Finding::new(About::Differs(View::Cache), s));
    let mut cached = BTreeSet::new();
    for kv in views.vectors.cache().iter() {
        let (k, v) = kv.into_inner().unwrap();
        match windows.get(&*k) {
            None => wrong(format!(
                "{what}: the cache holds a vector of no text written"
            )),
            Some(text) => {
                let exact: Vec<u8> = HashEmbedder::vector(text)
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect();
                if *v != *exact {
                    wrong(format!(
                        "{what}: the cache holds another vector for {text:?}"
                    ));
                }
            }
        }
        cached.insert(k.to_vec());
    }
    for (id, text) in lane {
        if windows.values().any(|t| t == text) && !cached.contains(&key(text)) {
            wrong(format!(
                "{what}: {id:?} has a vector of {text:?}, which the cache lacks"
            ));
        }
    }
    found
}

/// Everything `views` hold, in the model's shape. The keyword lane is asked for every probe
/// word; each vector is named by the text among `texts` it was made from.
pub(crate) fn observe(
    views: &Views,
    probes: &BTreeSet<String>,
    texts: &BTreeSet<String>,
) -> Snapshot {
    let t = &views.tables;
    let mut s = Snapshot {
        sessions: t.all_sessions().unwrap().into_iter().collect(),
        days: t.all_days().unwrap().into_iter().collect(),
        subjects: t.all_subjects().unwrap().into_iter().collect(),
        ..Snapshot::default()
    };
    let split = |k: &[u8]| -> (String, EventId) {
        let at = k.iter().position(|b| *b == 0).unwrap();
        (
            String::from_utf8(k[..at].to_vec()).unwrap(),
            decode_event_key(&k[at + 1..]).unwrap(),
        )
    };
    for r in t.scan(Table::Files, b"") {
        let (k, v) = r.unwrap();
        s.files
            .insert(split(&k), serde_json::from_slice(&v).unwrap());
    }
    for r in t.scan(Table::Changes, b"") {
        let (k, v) = r.unwrap();
        s.changes
            .insert(split(&k), String::from_utf8_lossy(&v).into_owned());
    }
    for r in t.scan(Table::Tails, b"") {
        let (k, _) = r.unwrap();
        let at = k.iter().position(|b| *b == 0).unwrap();
        s.tails
            .insert((k[..at].to_vec(), decode_event_key(&k[at + 1..]).unwrap()));
    }
    for r in t.scan(Table::Steps, b"") {
        let (k, v) = r.unwrap();
        let n = k.len() - 2;
        let index = u16::from_be_bytes([k[n], k[n + 1]]);
        s.steps.insert(
            (decode_event_key(&k[..n]).unwrap(), index),
            serde_json::from_slice(&v).unwrap(),
        );
    }
    for r in t.scan(Table::Commits, b"") {
        let (k, v) = r.unwrap();
        s.commits.insert(
            decode_event_key(&k).unwrap(),
            serde_json::from_slice(&v).unwrap(),
        );
    }
    for r in t.scan(Table::Evidence, b"") {
        let (k, v) = r.unwrap();
        s.evidence
            .insert(split(&k), serde_json::from_slice(&v).unwrap());
    }
    for r in t.scan(Table::Envelopes, b"") {
        let (k, v) = r.unwrap();
        s.envelopes.insert(
            decode_event_key(&k).unwrap(),
            serde_json::from_slice(&v).unwrap(),
        );
    }
    for r in t.past_versions() {
        let (id, _, env) = r.unwrap();
        s.past.entry(id).or_default().push(env);
    }
    for r in t.past_blobs() {
        let (id, bytes) = r.unwrap();
        s.past_blobs.insert(id, bytes);
    }
    for r in t.scan(Table::Texts, b"") {
        let (k, v) = r.unwrap();
        s.texts.insert(
            decode_event_key(&k).unwrap(),
            serde_json::from_slice(&v).unwrap(),
        );
    }
    for hit in views.keyword.dump().unwrap() {
        let doc = KeywordDoc {
            kind: hit.kind,
            ts_ms: hit.ts_ms,
            words: BTreeSet::new(),
            sessions: BTreeSet::new(),
            subjects: BTreeSet::new(),
        };
        s.keyword.insert(hit.id, doc);
    }
    // A search without a kind finds the prose kinds alone; what was run and printed is
    // found by asking for its kind. Each query runs both ways, and a document of another
    // kind found without asking is marked, so the model (which never marks one) differs.
    let search = |query: &str, filter: &TextFilter| {
        let mut ids = Vec::new();
        for hit in views.keyword.search(query, filter, 100_000).unwrap() {
            ids.push((hit.id, !hit.kind.is_prose()));
        }
        for kind in TextKind::ALL.into_iter().filter(|k| !k.is_prose()) {
            let asked = TextFilter {
                kind: Some(kind),
                ..filter.clone()
            };
            for hit in views.keyword.search(query, &asked, 100_000).unwrap() {
                ids.push((hit.id, false));
            }
        }
        ids
    };
    for probe in probes {
        for (id, unasked) in search(probe, &TextFilter::default()) {
            if let Some(doc) = s.keyword.get_mut(&id) {
                doc.words.insert(probe.clone());
                if unasked {
                    doc.words.insert(UNASKED.to_string());
                }
            }
        }
    }
    // Any probe word finds a document (the words of a query are alternatives): one search
    // per session, and per subject, says which documents each filter admits.
    let any = probes.iter().cloned().collect::<Vec<_>>().join(" ");
    let sessions: BTreeSet<SessionId> = s.keyword.keys().map(|id| id.session.clone()).collect();
    let filters: Vec<TextFilter> = sessions
        .into_iter()
        .map(|session| TextFilter {
            session: Some(session),
            ..TextFilter::default()
        })
        .chain(s.subjects.keys().map(|subject| TextFilter {
            subject: Some(subject.clone()),
            ..TextFilter::default()
        }))
        .collect();
    for filter in filters {
        for (id, _) in search(&any, &filter) {
            if let Some(doc) = s.keyword.get_mut(&id) {
                doc.sessions.extend(filter.session.clone());
                doc.subjects.extend(filter.subject.clone());
            }
        }
    }
    let embedded: Vec<(&String, Vec<f32>)> =
        texts.iter().map(|t| (t, HashEmbedder::vector(t))).collect();
    for (id, stored) in views.vectors.dump().unwrap() {
        let best = embedded
            .iter()
            .map(|(t, v)| (dot_quantized(v, &stored), *t))
            .max_by(|a, b| a.0.total_cmp(&b.0));
        let name = match best {
            Some((score, text)) if score > 0.98 => text.clone(),
            _ => "<a vector of no known text>".to_string(),
        };
        s.vectors.insert(id, name);
    }
    s
}

/// Where the lanes break the orders they state. The keyword lane ranks by BM25, equal
/// scores in event id order, and a search for fewer hits returns the first of the longer
/// list; the vector lane ranks nearest first. With every word of the record distinct
/// (see [`super::ledgers::text`]), BM25 settles three orders without computing a score:
/// - a query by every word of a text and one word of the shortest other text ranks the
///   first text, then the other (each word is in one text, so the first text matches as
///   many words as it holds, which outweighs one word in a text of any length);
/// - a query by one word of each text scores texts of equal length equally, so those are
///   listed by id;
/// - that query's hits, asked for fewer, are a prefix of them.
///
/// The vector lane, asked with the vector of a text's embedded window, ranks that text's
/// event first. Only texts a lane holds as the model says (`got` as `want`, the texts of
/// what the keyword lane folded in `texts`) are asked: a text the lane got wrong is the
/// content's finding, not an order's.
pub(crate) fn ranks(
    what: &str,
    views: &Views,
    got: &Snapshot,
    want: &Snapshot,
    texts: &BTreeMap<EventId, TextRow>,
) -> Vec<Finding> {
    let mut found = Vec::new();
    let mut wrong = |view, s: String| found.push(Finding::new(About::Ranks(view), s));
    // The prose texts a search without a kind ranks, with their words.
    let prose: Vec<(&EventId, Vec<&str>)> = want
        .keyword
        .iter()
        .filter(|(id, doc)| doc.kind.is_prose() && got.keyword.get(id) == Some(doc))
        .filter_map(|(id, _)| {
            let words: Vec<&str> = texts.get(id)?.text.split_whitespace().collect();
            (!words.is_empty()).then_some((id, words))
        })
        .collect();
    let search = |query: &str, limit| -> Vec<EventId> {
        let hits = views.keyword.search(query, &TextFilter::default(), limit);
        hits.unwrap().into_iter().map(|h| h.id).collect()
    };
    for (id, words) in prose.iter().filter(|(_, w)| w.len() >= 2) {
        let shortest = prose
            .iter()
            .filter(|(other, _)| other != id)
            .min_by_key(|(other, w)| (w.len(), *other));
        let Some((other, theirs)) = shortest else {
            continue;
        };
        let query = format!("{} {}", words.join(" "), theirs[0]);
        let got = search(&query, 10);
        if got != [(*id).clone(), (*other).clone()] {
            wrong(
                View::Keyword,
                format!(
                    "{what}: every word of {id:?}'s text and one of {other:?}'s ({} words) rank {got:?}",
                    theirs.len()
                ),
            );
        }
    }
    let query: Vec<&str> = prose.iter().map(|(_, w)| w[0]).collect();
    let all = search(&query.join(" "), prose.len() + 1);
    let length: BTreeMap<&EventId, usize> = prose.iter().map(|(id, w)| (*id, w.len())).collect();
    for (i, a) in all.iter().enumerate() {
        let later = all[i + 1..].iter().find(|b| length.get(b) == length.get(a));
        if let Some(b) = later.filter(|b| *b < a) {
            wrong(
                View::Keyword,
                format!(
                    "{what}: {a:?} ranks above {b:?}, a text of as many words and a smaller id"
                ),
            );
        }
    }
    for limit in 1..all.len() {
        let fewer = search(&query.join(" "), limit);
        if fewer[..] != all[..limit] {
            wrong(
                View::Keyword,
                format!(
                    "{what}: the best {limit} of one word of each text are {fewer:?}, not the first of {all:?}"
                ),
            );
        }
    }
    let lane = views.vectors.load(None).unwrap();
    for (id, window) in &want.vectors {
        if got.vectors.get(id) != Some(window) {
            continue;
        }
        let query = HashEmbedder::vector(window);
        let hits = lane.search(&query, lane.len(), f32::MIN, &mut |_| Ok(true));
        let first = hits.unwrap().into_iter().next().map(|h| h.id);
        if first.as_ref() != Some(id) {
            wrong(
                View::Vectors,
                format!("{what}: the vector of {id:?}'s window ranks {first:?} first"),
            );
        }
    }
    found
}

/// Where the views `got` still hold a word of `words`, each redacted from the store: by the
/// rule redaction states, once a word is redacted no table, lane or past version holds
/// it, whatever the model of the rest. A view holds it where it is one of its words.
pub(crate) fn unredacted(what: &str, got: &Snapshot, words: &[String]) -> Vec<Finding> {
    if words.is_empty() {
        return Vec::new();
    }
    let views = [
        (View::Sessions, format!("{:?}", got.sessions)),
        (View::Steps, format!("{:?}", got.steps)),
        (View::Commits, format!("{:?}", got.commits)),
        (View::Texts, format!("{:?}", got.texts)),
        (View::Subjects, format!("{:?}", got.subjects)),
        (View::Evidence, format!("{:?}", got.evidence)),
        (View::Envelopes, format!("{:?}", got.envelopes)),
        (View::Past, format!("{:?}", got.past)),
        // The words that find each document, and the text each vector was made from.
        (View::Keyword, format!("{:?}", got.keyword)),
        (View::Vectors, format!("{:?}", got.vectors)),
    ];
    let mut found = Vec::new();
    for (view, held) in views {
        let tokens: BTreeSet<&str> = held.split(|c: char| !c.is_alphanumeric()).collect();
        for word in words.iter().filter(|w| tokens.contains(w.as_str())) {
            found.push(Finding::new(
                About::Unredacted(view),
                format!("{what}: {view:?} still holds {word}, redacted"),
            ));
        }
    }
    found
}

/// The views' meta records, each value as JSON where it is JSON (else as its text).
pub(crate) fn meta(views: &Views) -> BTreeMap<String, serde_json::Value> {
    views
        .meta
        .iter()
        .map(|kv| {
            let (k, v) = kv.into_inner().unwrap();
            let text = || serde_json::Value::String(String::from_utf8_lossy(&v).into_owned());
            let value = serde_json::from_slice(&v).unwrap_or_else(|_| text());
            (String::from_utf8_lossy(&k).into_owned(), value)
        })
        .collect()
}

/// A session's closing as the closings file lists it, but for its handle (the handles'
/// own tests prove those): session, seq, end, directory, branch, text.
pub(crate) type Listed = (SessionId, Seq, i64, Option<String>, Option<String>, String);

/// The closings file's sessions, by place in the list.
pub(crate) fn listed(file: &Closings) -> BTreeMap<usize, Listed> {
    let row = |c: &Closing| {
        let (cwd, branch) = (c.cwd.clone(), c.branch.clone());
        (
            c.session.clone(),
            c.seq,
            c.end_ms,
            cwd,
            branch,
            c.text.clone(),
        )
    };
    file.sessions.iter().map(row).enumerate().collect()
}

/// The closings of views holding `s`, by the rule SessionStart documents: each session
/// that is no subagent's and has a closing message lists its newest one (by time, then
/// seq), unless that one is blank; newest session end first, equal ends by session.
pub(crate) fn closings(s: &Snapshot) -> BTreeMap<usize, Listed> {
    let mut newest: BTreeMap<&SessionId, (i64, Seq, &str)> = BTreeMap::new();
    for (id, env) in &s.envelopes {
        if let Event::FinalMsg { text } = &env.kind {
            let at = (env.ts_ms, id.seq, text.as_str());
            let n = newest.entry(&id.session).or_insert(at);
            *n = (*n).max(at);
        }
    }
    let mut out: Vec<Listed> = newest
        .into_iter()
        .filter(|(_, (_, _, text))| !text.trim().is_empty())
        .filter_map(|(session, (_, seq, text))| {
            let r = s.sessions.get(session).filter(|r| r.parent.is_none())?;
            let (cwd, branch) = (r.cwd.clone(), r.branch.clone());
            Some((
                session.clone(),
                seq,
                r.end_ms?,
                cwd,
                branch,
                text.to_string(),
            ))
        })
        .collect();
    out.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    out.into_iter().enumerate().collect()
}
