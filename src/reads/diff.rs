//! The net change a session made, per file: for a whole session, one turn of it, or a range
//! of its steps.
//!
//! Net means: for each file the span's steps touched, the file as it stood just before the
//! span's first change to it against the file as it stood just after the span's last change
//! to it, with everything that happened in between (another session's edit, a change the
//! record can date only by the repository's commits). Both states, and each one in between,
//! are the file as it stood at a moment ([`crate::reads::moment`]), as `blame --at` shows it.
//!
//! Each hunk names the steps behind it: the file's lines are followed through every recorded
//! edit between the two states, so a line the net diff adds is the step that wrote it, and a
//! line it removes the step that removed it.

use serde::Serialize;
use similar::{Algorithm, DiffOp, capture_diff_slices, group_diff_ops};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::reads::files::FileEdit;
use crate::reads::moment::{FileAt, Moment, MomentError, Recorded};
use crate::reads::span::Span;
use crate::reads::vcs::{FileHistory, Repo};
use crate::views::Views;

/// Lines of context around each change, as `git diff` shows them.
const CONTEXT: usize = 3;

/// What made a line of the net change.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub(crate) enum Cause {
    /// A recorded edit: one of the span's steps (`in_span`), or one made in between by
    /// another session (or by this one, outside the span).
    Edit {
        #[serde(flatten)]
        edit: FileEdit,
        in_span: bool,
    },
    /// A change no recorded edit made (by hand, or by a shell command), which the repository
    /// dates: the file's last commit before `before_ms` holds it, and the recorded edit at
    /// `after_ms` had not made it.
    Outside { after_ms: i64, before_ms: i64 },
}

/// Whether a line of a hunk is kept, removed or added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Op {
    Context,
    Remove,
    Add,
}

impl Op {
    /// Its mark in a unified diff.
    pub(crate) fn mark(self) -> char {
        match self {
            Op::Context => ' ',
            Op::Remove => '-',
            Op::Add => '+',
        }
    }
}

/// One line of a hunk.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Line {
    pub(crate) op: Op,
    /// Without its newline.
    pub(crate) text: String,
    /// The file's last line, with no newline after it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) no_newline: bool,
}

/// One hunk of a file's net change, numbered as `git diff` numbers it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct NetHunk {
    pub(crate) old_start: usize,
    pub(crate) old_lines: usize,
    pub(crate) new_start: usize,
    pub(crate) new_lines: usize,
    pub(crate) lines: Vec<Line>,
    /// What made its removed and added lines, oldest first.
    pub(crate) causes: Vec<Cause>,
}

impl NetHunk {
    /// `@@ -a,b +c,d @@`, with git's spelling of a one-line and an empty side.
    pub(crate) fn header(&self) -> String {
        let side = |start: usize, n: usize| match n {
            1 => start.to_string(),
            _ => format!("{start},{n}"),
        };
        format!(
            "@@ -{} +{} @@",
            side(self.old_start, self.old_lines),
            side(self.new_start, self.new_lines)
        )
    }
}

/// The net change to one file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct FileDiff {
    /// Relative to the repository's root (else the session's directory), as `git diff`
    /// names it.
    pub(crate) path: String,
    /// The paths the agents recorded it by.
    pub(crate) recorded: BTreeSet<String>,
    /// The file did not exist before the span's first change to it (`--- /dev/null`).
    pub(crate) created: bool,
    /// The file did not exist after the span's last change to it (`+++ /dev/null`).
    pub(crate) deleted: bool,
    /// Some line of a state the diff compares is one neither the record nor the repository
    /// settles (an edit that could not be placed may have changed it).
    pub(crate) uncertain: bool,
    pub(crate) added: usize,
    pub(crate) removed: usize,
    pub(crate) hunks: Vec<NetHunk>,
    /// The span's steps that changed the file, in ledger order.
    pub(crate) steps: Vec<FileEdit>,
    /// What else changed the file between the span's first and last change to it.
    pub(crate) between: Vec<Cause>,
}

/// The net change of a span, per file.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct NetDiff {
    /// The files it changed, by path.
    pub(crate) files: Vec<FileDiff>,
    /// Files the span edited that ended as they began.
    pub(crate) unchanged: Vec<String>,
    /// Files the span edited whose states neither the record nor a repository can tell.
    pub(crate) unknown: Vec<String>,
}

/// The net change `span` made to each file it (or a subagent of it) edited.
pub(crate) fn net_diff(views: &Views, span: &Span) -> Result<NetDiff, MomentError> {
    // Each file once, under every name the session and its subagents recorded it by (a path
    // recorded relative, as a patch may name it, is its session directory's), shown relative
    // to the session's own directory where no repository holds it.
    let mut cwd = String::new();
    let mut files: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
    for (i, session) in std::iter::once(&span.session)
        .chain(&span.subagents)
        .enumerate()
    {
        let rollup = views.tables.session(session)?.unwrap_or_default();
        if i == 0 {
            cwd = rollup.cwd.clone().unwrap_or_default();
        }
        let dir = rollup.cwd.unwrap_or_else(|| cwd.clone());
        for recorded in rollup.files.into_keys() {
            let abs = Path::new(&dir).join(&recorded);
            files.entry(abs).or_default().insert(recorded);
        }
    }
    let mut out = NetDiff::default();
    for (abs, recorded) in files {
        let path = shown_path(&abs, &cwd);
        match file_diff(views, span, &recorded, &abs, path.clone())? {
            Outcome::Changed(d) => out.files.push(d),
            Outcome::Unchanged => out.unchanged.push(path),
            Outcome::Unknown => out.unknown.push(path),
            Outcome::Untouched => {}
        }
    }
    out.files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

enum Outcome {
    Changed(FileDiff),
    Unchanged,
    Unknown,
    Untouched,
}

/// A recorded file (`abs`) relative to its repository's root, else to the session's directory
/// `cwd`, else its absolute path without the leading slash.
fn shown_path(abs: &Path, cwd: &str) -> String {
    if let Some((_, rel)) = Repo::of_file(abs) {
        return rel;
    }
    let shown = match abs.strip_prefix(cwd) {
        Ok(rel) if !cwd.is_empty() && !rel.as_os_str().is_empty() => rel,
        _ => abs,
    };
    shown.to_string_lossy().trim_start_matches('/').to_string()
}

fn file_diff(
    views: &Views,
    span: &Span,
    recorded: &BTreeSet<String>,
    abs: &Path,
    path: String,
) -> Result<Outcome, MomentError> {
    let record = Recorded::of(views, recorded)?;
    let edits = &record.edits;
    let ours: Vec<usize> = (0..edits.len())
        .filter(|&i| span.holds(&edits[i]))
        .collect();
    let (Some(&first), Some(&last)) = (ours.first(), ours.last()) else {
        return Ok(Outcome::Untouched);
    };
    let current = std::fs::read_to_string(abs).ok();
    let mut past = FileHistory::of(abs);
    // A change no edit recorded shows only through a commit of the file (the file at a moment
    // is the last commit's before it, with the recorded edits since): with no commit made
    // between two edits, the file just before the second is the file just after the first,
    // and is not asked for again.
    let commit_at = |ms: i64| past.as_ref().and_then(|h| h.at(ms)).map(|c| c.commit);
    let committed_between: Vec<bool> = (first..=last)
        .map(|k| k > first && commit_at(edits[k - 1].ts_ms) != commit_at(edits[k].ts_ms - 1))
        .collect();
    let mut uncertain = false;
    // The file just before or just after the edit at index `k`.
    let mut stood = |k: usize, after: bool| -> Result<Option<Option<String>>, MomentError> {
        let id = edits[k].id();
        let moment = if after {
            Moment::After(id)
        } else {
            Moment::Before(id)
        };
        let at: Option<FileAt> = record.at(views, &moment, current.as_deref(), &mut past)?;
        Ok(at.map(|at| {
            uncertain |= !at.certain();
            at.text
        }))
    };

    // The chain of states from just before the first change to just after the last: each
    // edit's own, and any change the repository dates between two of them.
    let Some(before) = stood(first, false)? else {
        return Ok(Outcome::Unknown);
    };
    let mut causes: Vec<Cause> = Vec::new();
    let mut tracker = Tracker::new(text(&before));
    let mut state = before.clone();
    for k in first..=last {
        if committed_between[k - first] {
            let Some(then) = stood(k, false)? else {
                return Ok(Outcome::Unknown);
            };
            if then != state {
                causes.push(Cause::Outside {
                    after_ms: edits[k - 1].ts_ms,
                    before_ms: edits[k].ts_ms,
                });
                tracker.step(text(&state), text(&then), causes.len() - 1);
                state = then;
            }
        }
        let Some(after) = stood(k, true)? else {
            return Ok(Outcome::Unknown);
        };
        causes.push(Cause::Edit {
            edit: edits[k].clone(),
            in_span: span.holds(&edits[k]),
        });
        tracker.step(text(&state), text(&after), causes.len() - 1);
        state = after;
    }
    if state == before {
        return Ok(Outcome::Unchanged);
    }
    let hunks = net_hunks(text(&before), text(&state), &tracker, &causes);
    let count = |op: Op| {
        hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter(|l| l.op == op)
            .count()
    };
    Ok(Outcome::Changed(FileDiff {
        path,
        recorded: recorded.clone(),
        created: before.is_none(),
        deleted: state.is_none(),
        uncertain,
        added: count(Op::Add),
        removed: count(Op::Remove),
        hunks,
        steps: ours.iter().map(|&i| edits[i].clone()).collect(),
        between: causes
            .into_iter()
            .filter(|c| !matches!(c, Cause::Edit { in_span: true, .. }))
            .collect(),
    }))
}

/// Where a line of the file came from, since the first state: a line of that state, or one a
/// later change wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// The line at this index of the first state.
    First(usize),
    /// Written by the cause at this index.
    By(usize),
}

/// Each line of the file followed from the first state through every change: where each
/// line now came from, and which change removed each line of the first state.
struct Tracker {
    origin: Vec<Origin>,
    removed_by: Vec<Option<usize>>,
}

impl Tracker {
    fn new(first: &str) -> Tracker {
        let n = lines(first).len();
        Tracker {
            origin: (0..n).map(Origin::First).collect(),
            removed_by: vec![None; n],
        }
    }

    /// The file went from `from` to `to` by the cause at index `cause`.
    fn step(&mut self, from: &str, to: &str, cause: usize) {
        let (old, new) = (lines(from), lines(to));
        let mut next = Vec::with_capacity(new.len());
        for op in capture_diff_slices(Algorithm::Myers, &old, &new) {
            let (removed, added) = match op {
                DiffOp::Equal { old_index, len, .. } => {
                    next.extend_from_slice(&self.origin[old_index..old_index + len]);
                    continue;
                }
                DiffOp::Delete {
                    old_index, old_len, ..
                } => (old_index..old_index + old_len, 0),
                DiffOp::Insert { new_len, .. } => (0..0, new_len),
                DiffOp::Replace {
                    old_index,
                    old_len,
                    new_len,
                    ..
                } => (old_index..old_index + old_len, new_len),
            };
            for i in removed {
                if let Origin::First(j) = self.origin[i] {
                    self.removed_by[j] = Some(cause);
                }
            }
            next.extend(std::iter::repeat_n(Origin::By(cause), added));
        }
        self.origin = next;
    }
}

/// A state's text: a file that did not exist has none.
fn text(state: &Option<String>) -> &str {
    state.as_deref().unwrap_or_default()
}

/// `text`'s lines, each with its newline.
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// The hunks from `before` to `after`, each with the causes of its changed lines (`tracker`
/// followed the file from `before` to `after` through `causes`).
fn net_hunks(before: &str, after: &str, tracker: &Tracker, causes: &[Cause]) -> Vec<NetHunk> {
    let (old, new) = (lines(before), lines(after));
    let ops = capture_diff_slices(Algorithm::Myers, &old, &new);
    let line = |op: Op, text: &str| Line {
        op,
        text: text.strip_suffix('\n').unwrap_or(text).to_string(),
        no_newline: !text.ends_with('\n'),
    };
    let mut hunks = Vec::new();
    for group in group_diff_ops(ops, CONTEXT) {
        let mut lines = Vec::new();
        let mut by = BTreeSet::new();
        for op in &group {
            let (o, n) = (op.old_range(), op.new_range());
            if let DiffOp::Equal { .. } = op {
                lines.extend(old[o].iter().map(|t| line(Op::Context, t)));
                continue;
            }
            by.extend(o.clone().filter_map(|j| tracker.removed_by[j]));
            by.extend(n.clone().filter_map(|i| match tracker.origin[i] {
                Origin::By(c) => Some(c),
                Origin::First(_) => None,
            }));
            lines.extend(old[o].iter().map(|t| line(Op::Remove, t)));
            lines.extend(new[n].iter().map(|t| line(Op::Add, t)));
        }
        let (Some(head), Some(tail)) = (group.first(), group.last()) else {
            continue;
        };
        let old_lines = tail.old_range().end - head.old_range().start;
        let new_lines = tail.new_range().end - head.new_range().start;
        // git numbers an empty side by the line before it.
        let start = |from: usize, n: usize| if n == 0 { from } else { from + 1 };
        hunks.push(NetHunk {
            old_start: start(head.old_range().start, old_lines),
            old_lines,
            new_start: start(head.new_range().start, new_lines),
            new_lines,
            lines,
            causes: by.into_iter().map(|c| causes[c].clone()).collect(),
        });
    }
    hunks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(n: u32) -> Cause {
        Cause::Outside {
            after_ms: i64::from(n),
            before_ms: i64::from(n) + 1,
        }
    }

    /// The net hunks from `states[0]` to the last state, each state after the first made by
    /// the cause of its index less one.
    fn followed(states: &[&str]) -> Vec<NetHunk> {
        let causes: Vec<Cause> = (0..states.len() as u32 - 1).map(step).collect();
        let mut tracker = Tracker::new(states[0]);
        for (i, pair) in states.windows(2).enumerate() {
            tracker.step(pair[0], pair[1], i);
        }
        net_hunks(states[0], states[states.len() - 1], &tracker, &causes)
    }

    fn headers(hunks: &[NetHunk]) -> Vec<String> {
        hunks.iter().map(NetHunk::header).collect()
    }

    #[test]
    fn hunks_are_numbered_as_git_numbers_them() {
        assert_eq!(headers(&followed(&["", "a\nb\n"])), ["@@ -0,0 +1,2 @@"]);
        assert_eq!(headers(&followed(&["a\n", ""])), ["@@ -1 +0,0 @@"]);
        assert_eq!(
            headers(&followed(&["a\nb\n", "a\nx\nb\n"])),
            ["@@ -1,2 +1,3 @@"]
        );
        let ten = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        assert_eq!(
            headers(&followed(&[ten, &ten.replace("5\n", "")])),
            ["@@ -2,7 +2,6 @@"]
        );
        let hunk = &followed(&["a", "b"])[0];
        assert_eq!(hunk.header(), "@@ -1 +1 @@");
        assert!(hunk.lines.iter().all(|l| l.no_newline), "{hunk:?}");
    }

    #[test]
    fn each_hunk_names_the_changes_that_added_or_removed_its_lines_and_no_other() {
        let ten = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        let first = ten.replace("1\n", "one\n");
        let last = first.replace("10\n", "ten\n");
        // A line written and then removed again is in no hunk, nor is its change.
        let (with_tmp, without) = (last.replace("5\n", "5\ntmp\n"), last.clone());
        let hunks = followed(&[ten, &first, &last, &with_tmp, &without]);
        assert_eq!(headers(&hunks), ["@@ -1,4 +1,4 @@", "@@ -7,4 +7,4 @@"]);
        assert_eq!(hunks[0].causes, [step(0)]);
        assert_eq!(hunks[1].causes, [step(1)]);
        // A line removed is the change that removed it.
        let hunks = followed(&["a\nb\n", "a\nb\nc\n", "a\nc\n"]);
        assert_eq!(hunks[0].causes, [step(0), step(1)]);
    }
}
