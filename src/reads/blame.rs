//! Line attribution: which recorded edit last wrote each line of a file, and for the lines no
//! recorded edit wrote, which commit brought them.
//!
//! The recorded edits of a file (Edit, MultiEdit, Write, apply_patch hunks, unified diffs)
//! say what text each one left behind, not what the whole file was. So the file's history is
//! recovered backwards from the text it has now: each edit, newest first, is located by the
//! text it wrote and reverted to the text it replaced, which yields the state before it. A
//! revert is accepted only when applying the edit forward to the recovered state gives back
//! exactly the state after it (an Edit's old text must then occur once, as Claude Code
//! requires), so an edit is never placed where it did not happen. The walk stops at the first
//! edit it cannot place (its text was changed by hand since, or the change cannot be located):
//! that edit and every older one explain nothing.
//!
//! A `Write` replaces the whole file, so what it replaced cannot be read from its content.
//! Its tool may have said (Claude Code reports the file before the write), and that wins;
//! else the repository says (the file at the last commit before the write, with the recorded
//! edits made since that commit replayed on it). Where both speak and differ, the lines that
//! differ were changed by hand before the write, and the walk goes on from the repository's
//! file. A line the write left as it was keeps its earlier origin. With neither, the write is
//! where the walk ends, and it owns every line of its content.
//!
//! The recovered edits are then replayed forward, in ledger order, from the oldest state,
//! carrying each line's origin with a line diff (the `similar` crate) over the lines the edit
//! touched: a line the edit left as it was keeps its origin, a line it wrote takes the edit's.
//! Lines that no placed edit wrote are never guessed: the repository's blame names the commit
//! that brought them, or says no commit holds them (a person's change, not committed).
//!
//! The file as it stood at a moment ([`blame_at`]) is built forwards, so that it never holds a
//! line written later: the repository's file at the last commit before the moment, attributed
//! as of that commit, with the recorded edits made after the commit and up to the moment
//! applied in order.

use similar::{Algorithm, DiffOp, capture_diff_slices};
use std::collections::BTreeMap;

use crate::reads::vcs::{Committed, FileHistory, LineCommit};
use crate::vocab::change::{Change, Hunk, Replacement};

/// Who last wrote a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum LineOrigin {
    /// The edit at this index of the list [`blame`] was given.
    Edit(usize),
    /// No recorded edit wrote it; the commit at this index of [`Blame::commits`] brought it.
    Commit(usize),
    /// No recorded edit wrote it, and no commit holds it: changed by hand, not committed.
    Uncommitted,
    /// No recorded edit wrote it, and no repository can say who did.
    Unexplained,
    /// As of the moment asked, neither the record nor the repository settles the line: an
    /// edit that could not be placed may have changed it, or it may have been written later.
    Uncertain,
}

/// Whether a recorded edit was placed on the file's history, and if not, why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Placement {
    Placed,
    /// What it wrote (or, replayed forward, what it replaced) is not in the file where the
    /// walk looked: something the record does not hold changed it.
    Missing,
    /// Its text occurs in more than one place, and which one is not guessed.
    Ambiguous,
    /// A change that is not made of lines (a notebook cell), or a delete of a file that
    /// exists again.
    NotLines,
    /// Older than an edit that could not be placed: what the file held then is unknown.
    Behind,
    /// Older than a whole-file write, with no repository to say what the write replaced.
    Overwritten,
    /// Made after the moment asked.
    Later,
}

/// A file's lines with their origins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Blame {
    /// The text attributed: the current text, or the text as it stood at the moment.
    pub(crate) text: String,
    /// One origin per line of `text` (lines split after each `\n`).
    pub(crate) lines: Vec<LineOrigin>,
    /// One per edit: whether it was placed on the file's history.
    pub(crate) placement: Vec<Placement>,
    /// The commits [`LineOrigin::Commit`] names.
    pub(crate) commits: Vec<LineCommit>,
}

impl Blame {
    #[cfg(test)]
    pub(crate) fn placed(&self) -> Vec<bool> {
        self.placement
            .iter()
            .map(|p| *p == Placement::Placed)
            .collect()
    }
}

/// What the repository knows of the file's past. [`FileHistory`] asks git or jj; `None` is no
/// repository.
pub(crate) trait Past {
    /// Whether a repository holds the file (else the record alone speaks).
    fn known(&self) -> bool;
    /// The last commit made at or before `ms`, with the file as it held it; `None` when the
    /// repository has none so early.
    fn at(&mut self, ms: i64) -> Option<Committed>;
    /// The lines of the file at `commit` (`None`: the commit the working copy sits on), each
    /// with the commit that brought it; `None` when that commit does not hold the file.
    fn annotate(&mut self, commit: Option<&str>) -> Option<Vec<(String, LineCommit)>>;
}

impl Past for Option<FileHistory> {
    fn known(&self) -> bool {
        self.is_some()
    }

    fn at(&mut self, ms: i64) -> Option<Committed> {
        self.as_ref()?.at(ms)
    }

    fn annotate(&mut self, commit: Option<&str>) -> Option<Vec<(String, LineCommit)>> {
        self.as_ref()?.annotate(commit)
    }
}

/// The recorded edits of a file, in ledger order (oldest first), and when each was made.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Record<'a> {
    pub(crate) changes: &'a [Change],
    /// One per change, ms since the epoch.
    pub(crate) times: &'a [i64],
    /// The restores among them: `(i, k)` when change `i` put the file back as it stood after
    /// the first `k` changes (`k < i`), oldest first. Empty when none was.
    pub(crate) restores: &'a [(usize, usize)],
}

impl<'a> Record<'a> {
    fn len(&self) -> usize {
        self.changes.len()
    }

    fn upto(&self, n: usize) -> Record<'a> {
        Record {
            changes: &self.changes[..n],
            times: &self.times[..n],
            restores: &self.restores[..self.restores.partition_point(|(i, _)| *i < n)],
        }
    }

    /// The state change `i` restored, when it is a restore: how many changes had been made.
    fn restored(&self, i: usize) -> Option<usize> {
        let at = self.restores.binary_search_by_key(&i, |(i, _)| *i).ok()?;
        Some(self.restores[at].1)
    }

    /// How many of the edits the commit made at `commit_ms` (to the second) can hold: those
    /// made before the second after it.
    fn before_commit(&self, commit_ms: i64) -> usize {
        self.times.partition_point(|t| *t < commit_ms + 1000)
    }
}

/// Attribute every line of `current` to the edit of `record` that last wrote it, or to the
/// commit that brought it.
pub(crate) fn blame(current: &str, record: Record<'_>, past: &mut dyn Past) -> Blame {
    attribute(current, record, past, None)
}

/// [`blame`] of the file as the commit `then` holds it, from the edits it can hold: those
/// made before the second after it was committed.
pub(crate) fn blame_committed(then: &Committed, record: Record<'_>, past: &mut dyn Past) -> Blame {
    let start = record.before_commit(then.ts_ms);
    attribute(&then.text, record.upto(start), past, Some(&then.commit))
}

/// [`blame`] of `text` as the file stood at `commit` (`None`: now).
fn attribute(text: &str, record: Record<'_>, past: &mut dyn Past, commit: Option<&str>) -> Blame {
    let history = recover(text, record, past);
    let placement = history.placement(record.len());
    let (text, lines) = history.replay(record, record.len());
    let mut blame = Blame {
        text,
        lines,
        placement,
        commits: Vec::new(),
    };
    if past.known() && blame.lines.contains(&LineOrigin::Unexplained) {
        let annotated = past.annotate(commit).unwrap_or_default();
        settle_by_commits(&mut blame, &annotated);
    }
    blame
}

/// Give each unexplained line of `blame` the commit that brought it, by aligning the
/// repository's annotated lines with the text; a line no commit holds was not committed.
fn settle_by_commits(blame: &mut Blame, annotated: &[(String, LineCommit)]) {
    let ours: Vec<&str> = blame
        .text
        .split_inclusive('\n')
        .map(|l| l.strip_suffix('\n').unwrap_or(l))
        .collect();
    let theirs: Vec<&str> = annotated.iter().map(|(t, _)| t.as_str()).collect();
    let mut commit_of: Vec<Option<usize>> = vec![None; ours.len()];
    for op in capture_diff_slices(Algorithm::Myers, &theirs, &ours) {
        if let DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            for k in 0..len {
                commit_of[new_index + k] = Some(old_index + k);
            }
        }
    }
    for (origin, at) in blame.lines.iter_mut().zip(commit_of) {
        if *origin != LineOrigin::Unexplained {
            continue;
        }
        *origin = match at {
            Some(at) => {
                let c = &annotated[at].1;
                let i = match blame.commits.iter().position(|k| k.hash == c.hash) {
                    Some(i) => i,
                    None => {
                        blame.commits.push(c.clone());
                        blame.commits.len() - 1
                    }
                };
                LineOrigin::Commit(i)
            }
            None => LineOrigin::Uncommitted,
        };
    }
}

/// The file as it stood after the first `cut` edits of `record`, at the moment `moment_ms`
/// (no earlier than the last of them), attributed as it was then; `None` when neither the
/// record nor the repository can tell what the file held. `current` is the file's text now,
/// `None` when it no longer exists.
///
/// With a repository, the file at the last commit before the moment is attributed as of that
/// commit, and the recorded edits made after it up to the cut are applied in order. Without
/// one, the edits are replayed from the last `Write` before the cut that owns every line it
/// wrote ([`owns_every_line`]); failing that, undone from the current text, where a person's
/// change cannot be dated and its lines are uncertain.
pub(crate) fn blame_at(
    current: Option<&str>,
    record: Record<'_>,
    cut: usize,
    moment_ms: i64,
    past: &mut dyn Past,
) -> Option<Blame> {
    let cut = cut.min(record.len());
    let mut blame = if past.known() {
        match past.at(moment_ms) {
            Some(then) => {
                let start = record.before_commit(then.ts_ms).min(cut);
                let mut b = attribute(&then.text, record.upto(start), past, Some(&then.commit));
                forward(&mut b, record, (start, cut), true);
                unsettle(&mut b, record, cut, current);
                b
            }
            // Before the repository's first commit the file was only what the record made.
            None => from_nothing(record, cut, true),
        }
    } else if let Some(w) = record.changes[..cut].iter().rposition(owns_every_line) {
        let mut b = from_nothing(record, 0, false);
        b.placement = vec![Placement::Overwritten; w];
        forward(&mut b, record, (w, cut), false);
        unsettle(&mut b, record, cut, current);
        b
    } else {
        let current = current?;
        let history = recover(current, record, past);
        if !history.covers(cut) {
            return None;
        }
        let (text, lines) = history.replay(record, cut);
        Blame {
            text,
            // A line no edit wrote may have been written after the moment.
            lines: lines
                .into_iter()
                .map(|o| match o {
                    LineOrigin::Unexplained => LineOrigin::Uncertain,
                    o => o,
                })
                .collect(),
            placement: history.placement(cut),
            commits: Vec::new(),
        }
    };
    blame.placement.resize(record.len(), Placement::Later);
    Some(blame)
}

/// The lines of `b`, the file as of the moment after the first `cut` edits, that a recorded
/// edit composed and the edits recorded since do not carry to `current` (the file now) become
/// uncertain: a change nobody recorded met them, before the moment or after it, so the replay
/// may have made a line the file never held. (It cannot see a person's uncommitted change: an
/// edit quoting part of a line then lands on the line the commit had.) A line as a commit
/// held it stays: the file held it then, by the definition of the file at a moment.
fn unsettle(b: &mut Blame, record: Record<'_>, cut: usize, current: Option<&str>) {
    let Some(current) = current else { return };
    let mut text = b.text.clone();
    // Each line of the file at the moment, by its index there; what later edits wrote, none.
    let mut tags: Vec<Option<usize>> = (0..b.lines.len()).map(Some).collect();
    for change in &record.changes[cut..] {
        let placed = match change {
            Change::Write { content, .. } => Ok(vec![whole(&text, content)]),
            Change::Delete => Ok(vec![whole(&text, "")]),
            other => place_forward(&text, other),
        };
        // An edit that cannot be placed leaves the lines it would have changed unlike the
        // file now: they are marked below, as they should be.
        for s in placed.iter().flatten() {
            apply(&mut text, &mut tags, s, None);
        }
    }
    let then: Vec<&str> = text.split_inclusive('\n').collect();
    let now: Vec<&str> = current.split_inclusive('\n').collect();
    for op in capture_diff_slices(Algorithm::Myers, &then, &now) {
        if let DiffOp::Delete {
            old_index, old_len, ..
        }
        | DiffOp::Replace {
            old_index, old_len, ..
        } = op
        {
            for &line in tags[old_index..old_index + old_len].iter().flatten() {
                if let LineOrigin::Edit(_) = b.lines[line] {
                    b.lines[line] = LineOrigin::Uncertain;
                }
            }
        }
    }
}

/// An empty file with the first `n` edits of `record` applied ([`forward`] says how).
fn from_nothing(record: Record<'_>, n: usize, known: bool) -> Blame {
    let mut b = Blame {
        text: String::new(),
        lines: Vec::new(),
        placement: Vec::new(),
        commits: Vec::new(),
    };
    forward(&mut b, record, (0, n), known);
    b
}

/// Apply the edits `from..to` of `record` to `blame` in order, each where it lands. An edit
/// that cannot be placed is skipped, and the lines it may have replaced (those holding a line
/// of the text it replaced) become uncertain. A `Write` keeps the origin of the lines it left
/// as they were. Where the text before it is the record's alone (not `known` from the
/// repository), a write that did not say what it replaced only ever starts the walk
/// ([`blame_at`] starts at the last such write, from an empty file), so it owns every line:
/// the record may have missed a person's change that it kept. Each edit's placement is
/// pushed after those `blame` holds (one per edit before `from`, where they count).
fn forward(blame: &mut Blame, record: Record<'_>, (from, to): (usize, usize), known: bool) {
    let mut restored = Restored::new(record, (from, to), from);
    for (i, change) in record.changes.iter().enumerate().take(to).skip(from) {
        restored.pass(i, &blame.text, &blame.lines);
        // The file a write replaced, as its tool reported it, wins over the one rebuilt
        // here: the lines that differ were changed by hand before it.
        if let Some(own) = written_over(change).filter(|own| *own != blame.text) {
            let by_hand = match known {
                true => LineOrigin::Uncommitted,
                false => LineOrigin::Unexplained,
            };
            let splice = whole(&blame.text, &own);
            apply(&mut blame.text, &mut blame.lines, &splice, by_hand);
        }
        let placed = match change {
            Change::Write { content, .. } => Ok(vec![whole(&blame.text, content)]),
            Change::Delete => Ok(vec![whole(&blame.text, "")]),
            other => place_forward(&blame.text, other),
        };
        match placed {
            Ok(splices) => {
                for s in &splices {
                    apply(&mut blame.text, &mut blame.lines, s, LineOrigin::Edit(i));
                }
                restored.settle(i, &blame.text, &mut blame.lines);
                blame.placement.push(Placement::Placed);
            }
            Err(why) => {
                let replaced = old_lines(change);
                for (line, origin) in blame.text.split_inclusive('\n').zip(&mut blame.lines) {
                    if replaced.contains(&line.strip_suffix('\n').unwrap_or(line)) {
                        *origin = LineOrigin::Uncertain;
                    }
                }
                blame.placement.push(why);
            }
        }
    }
}

/// The states the restores of a walk went back to, taken as the walk passes them: a line a
/// restore put back keeps the origin it had in the state restored (the prompt that wrote it,
/// not the restore), and only the lines that differ from that state are the restore's. A state
/// older than where the walk starts cannot be taken; those restores own what they wrote, as
/// any whole-file write does.
struct Restored<'r> {
    record: Record<'r>,
    /// The states wanted, by how many edits had been made, ascending.
    wanted: Vec<usize>,
    taken: BTreeMap<usize, (String, Vec<LineOrigin>)>,
}

impl<'r> Restored<'r> {
    /// For the restores among edits `from..to` of a walk whose first state is the file after
    /// its first `start` edits.
    fn new(record: Record<'r>, (from, to): (usize, usize), start: usize) -> Restored<'r> {
        let mut wanted: Vec<usize> = record
            .restores
            .iter()
            .filter(|(i, k)| (from..to).contains(i) && *k >= start)
            .map(|(_, k)| *k)
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        Restored {
            record,
            wanted,
            taken: BTreeMap::new(),
        }
    }

    /// The walk is about to apply edit `i` to `text`: the file after its first `i` edits, and
    /// after every smaller number of them still wanted.
    fn pass(&mut self, i: usize, text: &str, lines: &[LineOrigin]) {
        let due = self.wanted.partition_point(|k| *k <= i);
        for k in self.wanted.drain(..due) {
            self.taken.insert(k, (text.to_string(), lines.to_vec()));
        }
    }

    /// Edit `i` made `text`: if it restored a state the walk took, its lines take their
    /// origins from that state where they stand in it.
    fn settle(&self, i: usize, text: &str, lines: &mut Vec<LineOrigin>) {
        let Some((then, origins)) = self.record.restored(i).and_then(|k| self.taken.get(&k)) else {
            return;
        };
        let (mut t, mut l) = (then.clone(), origins.clone());
        apply(&mut t, &mut l, &whole(then, text), LineOrigin::Edit(i));
        *lines = l;
    }
}

/// The splice that turns all of `text` into `new`.
fn whole(text: &str, new: &str) -> Splice {
    Splice {
        start: 0,
        old: text.to_string(),
        new: new.to_string(),
    }
}

/// The non-blank lines a change replaced, as it recorded them.
fn old_lines(change: &Change) -> Vec<&str> {
    let replaced: Vec<&str> = match change {
        Change::Edit(r) => r.old.lines().collect(),
        Change::MultiEdit { edits } => edits.iter().flat_map(|r| r.old.lines()).collect(),
        Change::Patch { hunks, .. } => hunks.iter().flat_map(|h| hunk_sides(h).0).collect(),
        // Unified hunks are parsed into owned lines; a diff's removed lines are read off it.
        Change::UnifiedDiff { diff, .. } => diff
            .lines()
            .filter(|l| !l.starts_with("---"))
            .filter_map(|l| l.strip_prefix('-').or_else(|| l.strip_prefix(' ')))
            .collect(),
        Change::Write { .. } | Change::Delete | Change::NotebookEdit { .. } => Vec::new(),
    };
    replaced
        .into_iter()
        .filter(|l| !l.trim().is_empty())
        .collect()
}

/// One step of the replay: at byte `start` of the state before it, `old` became `new`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Splice {
    start: usize,
    old: String,
    new: String,
}

/// A recovered step and who made it (`None`: a change no edit recorded).
#[derive(Clone, Debug)]
struct Step {
    by: Option<usize>,
    splice: Splice,
}

/// The recovered history: the oldest state reached, who wrote it (a `Write` the walk could
/// not see behind), and the steps from it to the current text, oldest first.
struct History {
    base: String,
    base_origin: Option<usize>,
    steps: Vec<Step>,
    /// The oldest edit from which on every edit was placed.
    first: usize,
    /// The edit the walk could not place, and why.
    stopped: Option<(usize, Placement)>,
}

impl History {
    /// Whether the state after the first `cut` edits lies on the recovered history.
    fn covers(&self, cut: usize) -> bool {
        match self.base_origin {
            Some(w) => cut > w,
            None => cut >= self.first,
        }
    }

    fn placement(&self, n: usize) -> Vec<Placement> {
        let older = match self.base_origin {
            Some(_) => Placement::Overwritten,
            None => Placement::Behind,
        };
        let mut placement = vec![older; n];
        if let Some((i, why)) = self.stopped
            && i < n
        {
            placement[i] = why;
        }
        for i in self
            .steps
            .iter()
            .filter_map(|s| s.by)
            .chain(self.base_origin)
        {
            if i < n {
                placement[i] = Placement::Placed;
            }
        }
        placement
    }

    /// Replay the steps of the first `cut` edits of `record` from the base: the text then,
    /// and each line's origin.
    fn replay(&self, record: Record<'_>, cut: usize) -> (String, Vec<LineOrigin>) {
        let mut text = self.base.clone();
        let origin = self
            .base_origin
            .map_or(LineOrigin::Unexplained, LineOrigin::Edit);
        let mut lines = vec![origin; line_count(&text)];
        // The base is the file after its first `first` edits, or after the write it is.
        let base = self.base_origin.map_or(self.first, |w| w + 1);
        let mut restored = Restored::new(record, (base, cut), base);
        for step in &self.steps {
            if step.by.is_some_and(|i| i >= cut) {
                break;
            }
            if let Some(i) = step.by {
                restored.pass(i, &text, &lines);
            }
            let origin = step.by.map_or(LineOrigin::Unexplained, LineOrigin::Edit);
            apply(&mut text, &mut lines, &step.splice, origin);
            if let Some(i) = step.by {
                restored.settle(i, &text, &mut lines);
            }
        }
        (text, lines)
    }
}

fn recover(current: &str, record: Record<'_>, past: &mut dyn Past) -> History {
    let mut state = current.to_string();
    // Discovered newest first; reversed at the end.
    let mut steps: Vec<Step> = Vec::new();
    let mut first = record.len();
    let mut stopped = None;
    for (i, change) in record.changes.iter().enumerate().rev() {
        match change {
            Change::Write { content, .. } => {
                // A person's changes since the write, as one diffed step.
                if *content != state {
                    steps.push(Step {
                        by: None,
                        splice: Splice {
                            start: 0,
                            old: content.clone(),
                            new: std::mem::take(&mut state),
                        },
                    });
                }
                // What the tool reported the write replaced wins over what the repository and
                // the record rebuild: the lines that differ were changed by hand before the
                // write, and the walk goes on from the rebuilt file, where the older edits
                // are. A write over nothing (the file was made, or empty) holds nothing older.
                let own = written_over(change);
                let rebuilt = match own.as_deref() {
                    Some("") => None,
                    _ => before_write(record, i, past),
                };
                let (before, by_hand) = match (own, rebuilt) {
                    (Some(own), _) if own.is_empty() => (None, None),
                    (Some(own), Some(rebuilt)) if rebuilt != own => (Some(own), Some(rebuilt)),
                    (Some(own), _) => (Some(own), None),
                    (None, rebuilt) => (rebuilt, None),
                };
                let Some(before) = before else {
                    // Nothing says what the write replaced: the walk ends, with its content
                    // as the base.
                    steps.reverse();
                    return History {
                        base: content.clone(),
                        base_origin: Some(i),
                        steps,
                        first: i,
                        stopped: None,
                    };
                };
                steps.push(Step {
                    by: Some(i),
                    splice: whole(&before, content),
                });
                state = before;
                first = i;
                if let Some(rebuilt) = by_hand {
                    steps.push(Step {
                        by: None,
                        splice: whole(&rebuilt, &state),
                    });
                    state = rebuilt;
                }
            }
            other => match revert(&mut state, other) {
                Ok(splices) => {
                    steps.extend(splices.into_iter().map(|splice| Step {
                        by: Some(i),
                        splice,
                    }));
                    first = i;
                }
                Err(why) => {
                    stopped = Some((i, why));
                    break;
                }
            },
        }
    }
    steps.reverse();
    History {
        base: state,
        base_origin: None,
        steps,
        first,
        stopped,
    }
}

/// The file a `Write` replaced, as its tool reported it (`None`: it did not say).
fn written_over(change: &Change) -> Option<String> {
    match change {
        Change::Write {
            content,
            before: Some(before),
        } => before.text(content),
        _ => None,
    }
}

/// Whether `change` is a whole-file write that owns every line it wrote when no repository
/// says what it replaced: its tool did not say either, or said the file was empty or absent.
fn owns_every_line(change: &Change) -> bool {
    matches!(change, Change::Write { .. }) && written_over(change).is_none_or(|t| t.is_empty())
}

/// The file just before the `Write` at index `w` of `record`, as the repository held it at
/// the last commit before the write, with the recorded edits made since that commit applied;
/// `None` without a repository.
fn before_write(record: Record<'_>, w: usize, past: &mut dyn Past) -> Option<String> {
    if !past.known() {
        return None;
    }
    let mut b = match past.at(record.times[w]) {
        Some(then) => {
            let start = record.before_commit(then.ts_ms).min(w);
            let mut b = Blame {
                lines: vec![LineOrigin::Unexplained; line_count(&then.text)],
                text: then.text,
                placement: Vec::new(),
                commits: Vec::new(),
            };
            forward(&mut b, record, (start, w), true);
            b
        }
        None => from_nothing(record, w, true),
    };
    Some(std::mem::take(&mut b.text))
}

/// Turn `state`, the text after `change`, into the text before it, returning the splices
/// that lead from one to the other (newest first); with `state` as it was, why not when the
/// change cannot be placed on it. The text is edited in place: copying a large file once per
/// recorded edit was most of a blame's time.
fn revert(state: &mut String, change: &Change) -> Result<Vec<Splice>, Placement> {
    let mut splices: Vec<Splice> = Vec::new();
    let mut step = |state: &mut String, s: Option<Splice>| match s {
        Some(s) => {
            state.replace_range(s.start..s.start + s.new.len(), &s.old);
            splices.push(s);
            true
        }
        None => false,
    };
    let placed = match change {
        Change::Edit(r) => step(state, revert_replacement(state, r)),
        Change::MultiEdit { edits } => edits
            .iter()
            .rev()
            .all(|r| step(state, revert_replacement(state, r))),
        Change::Patch { hunks, .. } => hunks
            .iter()
            .rev()
            .all(|h| step(state, revert_hunk(state, h))),
        Change::UnifiedDiff { diff, .. } => unified_hunks(diff)
            .iter()
            .rev()
            .all(|h| step(state, revert_hunk(state, h))),
        // A deleted file that exists now was made again by something unrecorded; a notebook
        // edit rewrites a JSON cell, not lines.
        Change::Delete | Change::NotebookEdit { .. } | Change::Write { .. } => false,
    };
    if !placed {
        // Replay what was undone, newest last, to give the text back as it was.
        for s in splices.iter().rev() {
            state.replace_range(s.start..s.start + s.old.len(), &s.new);
        }
        return Err(why_not(state, change, Side::After));
    }
    Ok(splices)
}

/// Which side of a change is looked for in a text: the one it replaced (placing it forward)
/// or the one it wrote (undoing it).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Before,
    After,
}

/// Why `change` could not be placed on `text`: a side of it is not in the text at all, or it
/// is, but not in exactly one place it could have been made.
fn why_not(text: &str, change: &Change, side: Side) -> Placement {
    let pick = |before: String, after: String| match side {
        Side::Before => before,
        Side::After => after,
    };
    let sought: Vec<String> = match change {
        Change::Edit(r) => vec![pick(r.old.clone(), r.new.clone())],
        Change::MultiEdit { edits } => edits
            .iter()
            .map(|r| pick(r.old.clone(), r.new.clone()))
            .collect(),
        Change::Patch { hunks, .. } => hunks.iter().map(|h| sides_joined(h, &pick)).collect(),
        Change::UnifiedDiff { diff, .. } => unified_hunks(diff)
            .iter()
            .map(|h| sides_joined(h, &pick))
            .collect(),
        Change::Delete | Change::NotebookEdit { .. } | Change::Write { .. } => {
            return Placement::NotLines;
        }
    };
    match sought.iter().all(|t| text.contains(t.as_str())) {
        true => Placement::Ambiguous,
        false => Placement::Missing,
    }
}

/// A hunk's two sides as text, one of them picked.
fn sides_joined(h: &Hunk, pick: &dyn Fn(String, String) -> String) -> String {
    let (before, after) = hunk_sides(h);
    pick(before.join("\n"), after.join("\n"))
}

/// Locate `change` on the state before it, for replaying forward: the splices it makes, in
/// order; why not when it cannot be placed (an Edit's old text must occur exactly once, a
/// hunk's old lines in exactly one place).
fn place_forward(before: &str, change: &Change) -> Result<Vec<Splice>, Placement> {
    let mut text = before.to_string();
    let state = &mut text;
    let mut out = Vec::new();
    let mut push = |state: &mut String, s: Option<Splice>| match s {
        Some(s) => {
            state.replace_range(s.start..s.start + s.old.len(), &s.new);
            out.push(s);
            true
        }
        None => false,
    };
    let placed = match change {
        Change::Edit(r) => push(state, forward_replacement(state, r)),
        Change::MultiEdit { edits } => edits
            .iter()
            .all(|r| push(state, forward_replacement(state, r))),
        Change::Patch { hunks, .. } => hunks.iter().all(|h| push(state, forward_hunk(state, h))),
        Change::UnifiedDiff { diff, .. } => unified_hunks(diff)
            .iter()
            .all(|h| push(state, forward_hunk(state, h))),
        Change::Delete | Change::NotebookEdit { .. } | Change::Write { .. } => false,
    };
    match placed {
        true => Ok(out),
        false => Err(why_not(before, change, Side::Before)),
    }
}

fn forward_replacement(before: &str, r: &Replacement) -> Option<Splice> {
    let mut at = match_positions(before, &r.old);
    let first = at.next()?;
    if r.replace_all {
        let last = at.last().unwrap_or(first);
        let end = last + r.old.len();
        let span = &before[first..end];
        return Some(Splice {
            start: first,
            old: span.to_string(),
            new: span.replace(&r.old, &r.new),
        });
    }
    at.next().is_none().then(|| Splice {
        start: first,
        old: r.old.clone(),
        new: r.new.clone(),
    })
}

/// Locate a hunk by the whole lines it replaces (context and removed lines).
fn forward_hunk(before: &str, h: &Hunk) -> Option<Splice> {
    let (old_lines, new_lines) = hunk_sides(h);
    locate_lines(before, &old_lines, &new_lines, h.end_of_file)
}

/// Locate one old/new replacement in the state after it. Every place its new text occurs is
/// tried; exactly one must revert to a state in which applying the edit forward gives back
/// `after`.
fn revert_replacement(after: &str, r: &Replacement) -> Option<Splice> {
    if r.old == r.new {
        return None;
    }
    if r.replace_all {
        return revert_replace_all(after, r);
    }
    let mut found: Option<usize> = None;
    for start in match_positions(after, &r.new) {
        if old_only_at(after, start, r) {
            if found.is_some() {
                return None;
            }
            found = Some(start);
        }
    }
    found.map(|start| Splice {
        start,
        old: r.old.clone(),
        new: r.new.clone(),
    })
}

/// Whether, once `r.new` at `start` of `after` is put back to `r.old`, that `r.old` is the
/// only occurrence of it in the text (so the edit, replayed forward, lands there). The text
/// before is never built: an occurrence lies wholly in the part before the splice, wholly
/// in the part after it, or overlaps the restored `r.old`, which a short window around it
/// shows.
fn old_only_at(after: &str, start: usize, r: &Replacement) -> bool {
    let (old, reach) = (r.old.as_str(), r.old.len().saturating_sub(1));
    if old.is_empty() {
        return false;
    }
    let head = &after[..start];
    let tail = &after[start + r.new.len()..];
    if match_positions(head, old).next().is_some() || match_positions(tail, old).next().is_some() {
        return false;
    }
    let from = floor_char_boundary(head, head.len().saturating_sub(reach));
    let to = ceil_char_boundary(tail, reach.min(tail.len()));
    let window = format!("{}{old}{}", &head[from..], &tail[..to]);
    let mut at = match_positions(&window, old);
    matches!((at.next(), at.next()), (Some(i), None) if i == head.len() - from)
}

/// The largest char boundary of `s` at or below `i`.
fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary of `s` at or above `i` (`i` at most `s.len()`).
fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// A replace-all edit is placed as one splice over the span from its first to its last
/// replacement, checked by replaying it forward.
fn revert_replace_all(after: &str, r: &Replacement) -> Option<Splice> {
    if r.new.is_empty() {
        return None;
    }
    let positions: Vec<usize> = match_positions(after, &r.new).collect();
    let first = *positions.first()?;
    let end = positions.last()? + r.new.len();
    let span_after = &after[first..end];
    let span_before = span_after.replace(&r.new, &r.old);
    let before = format!("{}{}{}", &after[..first], span_before, &after[end..]);
    (before.replace(&r.old, &r.new) == after).then(|| Splice {
        start: first,
        old: span_before,
        new: span_after.to_string(),
    })
}

/// Every start of `needle` in `hay`, overlapping ones included, so that an ambiguous place
/// is seen as such.
fn match_positions<'a>(hay: &'a str, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    // A vectorised searcher: placing each edit scans the whole file a few times.
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let mut from = 0;
    std::iter::from_fn(move || {
        if needle.is_empty() || from > hay.len() {
            return None;
        }
        let at = finder.find(&hay.as_bytes()[from..])? + from;
        from = at + hay[at..].chars().next().map_or(1, char::len_utf8);
        Some(at)
    })
}

/// Locate one hunk by the whole lines it leaves behind (context and added lines); it must
/// match in exactly one place.
fn revert_hunk(after: &str, h: &Hunk) -> Option<Splice> {
    let (before_lines, after_lines) = hunk_sides(h);
    let s = locate_lines(after, &after_lines, &before_lines, h.end_of_file)?;
    // Found as the text after the hunk: the splice leads from before to after.
    Some(Splice {
        start: s.start,
        old: s.new,
        new: s.old,
    })
}

/// A hunk's lines as they were before it (context and removed) and after it (context and
/// added), without their marks.
fn hunk_sides(h: &Hunk) -> (Vec<&str>, Vec<&str>) {
    let mut before = Vec::new();
    let mut after = Vec::new();
    for line in &h.lines {
        let (mark, rest) = match line.chars().next() {
            Some(c @ (' ' | '-' | '+')) => (c, &line[1..]),
            // A blank line inside a hunk is a blank context line.
            _ => (' ', line.as_str()),
        };
        match mark {
            '-' => before.push(rest),
            '+' => after.push(rest),
            _ => {
                before.push(rest);
                after.push(rest);
            }
        }
    }
    (before, after)
}

/// Find `find` as whole lines of `text`, in exactly one place (at the end with `at_end`), and
/// make the splice that replaces them with `put`. With nothing to find, only an empty text
/// has a place for `put`.
fn locate_lines(text: &str, find: &[&str], put: &[&str], at_end: bool) -> Option<Splice> {
    if find == put {
        return None;
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let starts = line_starts(&lines);
    let n = find.len();
    let at = if n == 0 {
        if !text.is_empty() {
            return None;
        }
        0
    } else {
        let trimmed: Vec<&str> = lines.iter().map(|l| l.trim_end_matches('\n')).collect();
        let mut found = (0..(trimmed.len() + 1).saturating_sub(n))
            .filter(|&at| trimmed[at..at + n] == *find)
            .filter(|&at| !at_end || at + n == trimmed.len());
        let at = found.next()?;
        if found.next().is_some() {
            return None;
        }
        at
    };
    let start = starts[at];
    let end = starts[at + n];
    // The replacement ends in a newline where the replaced lines did (or, replacing nothing,
    // always: the lines are whole).
    let newline = n == 0 || text[start..end].ends_with('\n');
    let mut new = put.join("\n");
    if newline && !put.is_empty() {
        new.push('\n');
    }
    Some(Splice {
        start,
        old: text[start..end].to_string(),
        new,
    })
}

/// The byte offset where each line starts, and the end as a last entry.
fn line_starts(lines: &[&str]) -> Vec<usize> {
    let mut out = Vec::with_capacity(lines.len() + 1);
    let mut at = 0;
    out.push(0);
    for l in lines {
        at += l.len();
        out.push(at);
    }
    out
}

/// The `@@` hunks of a unified diff, as apply_patch hunks.
fn unified_hunks(diff: &str) -> Vec<Hunk> {
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut open: Option<Hunk> = None;
    for line in diff.lines() {
        if line.starts_with("@@") {
            if let Some(h) = open.take() {
                hunks.push(h);
            }
            open = Some(Hunk {
                header: None,
                lines: Vec::new(),
                end_of_file: false,
            });
        } else if let Some(h) = open.as_mut() {
            if line.starts_with("\\ No newline") {
                continue;
            }
            if line.starts_with([' ', '+', '-']) || line.is_empty() {
                h.lines.push(line.to_string());
            }
        }
    }
    hunks.extend(open);
    hunks
}

fn line_count(text: &str) -> usize {
    text.split_inclusive('\n').count()
}

/// Apply `s` to `text`, carrying line origins: lines outside the splice's line window keep
/// theirs; inside it, a line diff keeps the origin of lines left as they were and gives
/// `origin` to the lines written.
fn apply<T: Copy>(text: &mut String, lines: &mut Vec<T>, s: &Splice, origin: T) {
    let old_end = s.start + s.old.len();
    let new_text = format!("{}{}{}", &text[..s.start], s.new, &text[old_end..]);
    // The window: from the start of the line the splice starts in to the end of the line its
    // end falls in, in both texts (their tails after the splice are equal bytes). A splice
    // that ends at a line's start takes in that whole line, unchanged in both windows: as
    // their common last element the diff keeps its origin.
    let win_start = memchr::memrchr(b'\n', &text.as_bytes()[..s.start]).map_or(0, |i| i + 1);
    let old_win_end =
        memchr::memchr(b'\n', &text.as_bytes()[old_end..]).map_or(text.len(), |i| old_end + i + 1);
    let new_win_end = old_win_end - s.old.len() + s.new.len();
    let first_line = memchr::memchr_iter(b'\n', &text.as_bytes()[..win_start]).count();
    let old_win: Vec<&str> = text[win_start..old_win_end].split_inclusive('\n').collect();
    let new_win: Vec<&str> = new_text[win_start..new_win_end]
        .split_inclusive('\n')
        .collect();
    let old_origins = &lines[first_line..first_line + old_win.len()];
    let mut carried = Vec::with_capacity(new_win.len());
    for op in capture_diff_slices(Algorithm::Myers, &old_win, &new_win) {
        match op {
            DiffOp::Equal { old_index, len, .. } => {
                carried.extend_from_slice(&old_origins[old_index..old_index + len]);
            }
            DiffOp::Insert { new_len, .. } | DiffOp::Replace { new_len, .. } => {
                carried.extend(std::iter::repeat_n(origin, new_len));
            }
            DiffOp::Delete { .. } => {}
        }
    }
    lines.splice(first_line..first_line + old_win.len(), carried);
    *text = new_text;
    debug_assert_eq!(lines.len(), line_count(text));
}

#[cfg(test)]
mod tests;
