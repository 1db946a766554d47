//! Line attribution: which recorded edit last wrote each line of a file.
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
//! The recovered edits are then replayed forward, in ledger order, from the oldest state,
//! carrying each line's origin with a line diff (the `similar` crate) over the lines the edit
//! touched: a line the edit left as it was keeps its origin, a line it wrote takes the edit's.
//! Lines that no placed edit wrote are unexplained (a person's edit, or code from before the
//! record), never guessed. A `Write` wrote every line of its content; a person's changes between
//! a `Write` and the next edit are found by a diff against that content.

use similar::{Algorithm, DiffOp, capture_diff_slices};

use crate::vocab::change::{Change, Hunk, Replacement};

/// Who last wrote a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum LineOrigin {
    /// The edit at this index of the list [`blame`] was given.
    Edit(usize),
    /// No recorded edit explains the line.
    Unexplained,
}

/// A file's lines with their origins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Blame {
    /// The text attributed: the current text, or the text as it stood at the cut.
    pub(crate) text: String,
    /// One origin per line of `text` (lines split after each `\n`).
    pub(crate) lines: Vec<LineOrigin>,
    /// Which edits were placed on the file's history (false: not located, or older than one
    /// that was not).
    pub(crate) placed: Vec<bool>,
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

/// Attribute every line of `current` to the edit in `changes` (ledger order, oldest first)
/// that last wrote it.
pub(crate) fn blame(current: &str, changes: &[Change]) -> Blame {
    let history = recover(current, changes);
    let placed = history.placed(changes.len());
    let (text, lines) = history.replay(changes.len());
    debug_assert_eq!(text, current, "replay must end at the current text");
    Blame {
        text,
        lines,
        placed,
    }
}

/// The file as it stood after the first `cut` edits of `changes`, attributed as it was then;
/// `None` when the record cannot tell what the file held at that moment. `current` is the
/// file's text now, `None` when it no longer exists.
///
/// From the current text, the edits after the cut are undone; where a later `Write` hides the
/// past (or the file is gone), the file is replayed forward instead from the last `Write`
/// before the cut. A person's unrecorded changes cannot be dated: those the current text
/// holds stay in it.
pub(crate) fn blame_at(current: Option<&str>, changes: &[Change], cut: usize) -> Option<Blame> {
    let cut = cut.min(changes.len());
    if let Some(current) = current {
        let history = recover(current, changes);
        if history.covers(cut) {
            let placed = history.placed(cut);
            let (text, lines) = history.replay(cut);
            return Some(Blame {
                text,
                lines,
                placed,
            });
        }
    }
    let w = changes[..cut]
        .iter()
        .rposition(|c| matches!(c, Change::Write { .. }))?;
    let Change::Write { content } = &changes[w] else {
        return None;
    };
    let mut text = content.clone();
    let mut lines = vec![LineOrigin::Edit(w); line_count(&text)];
    let mut placed = vec![false; cut];
    placed[w] = true;
    for (i, change) in changes.iter().enumerate().take(cut).skip(w + 1) {
        for splice in place_forward(&text, change)? {
            apply(&mut text, &mut lines, &splice, LineOrigin::Edit(i));
        }
        placed[i] = true;
    }
    Some(Blame {
        text,
        lines,
        placed,
    })
}

/// The recovered history: the oldest state reached, who wrote it (a `Write`), and the steps
/// from it to the current text, oldest first.
struct History {
    base: String,
    base_origin: Option<usize>,
    steps: Vec<Step>,
    /// The oldest edit from which on every edit was placed.
    first: usize,
}

impl History {
    /// Whether the state after the first `cut` edits lies on the recovered history.
    fn covers(&self, cut: usize) -> bool {
        match self.base_origin {
            Some(w) => cut > w,
            None => cut >= self.first,
        }
    }

    fn placed(&self, n: usize) -> Vec<bool> {
        let mut placed = vec![false; n];
        for i in self
            .steps
            .iter()
            .filter_map(|s| s.by)
            .chain(self.base_origin)
        {
            if i < n {
                placed[i] = true;
            }
        }
        placed
    }

    /// Replay the steps of the first `cut` edits from the base: the text then, and each
    /// line's origin.
    fn replay(&self, cut: usize) -> (String, Vec<LineOrigin>) {
        let mut text = self.base.clone();
        let origin = self
            .base_origin
            .map_or(LineOrigin::Unexplained, LineOrigin::Edit);
        let mut lines = vec![origin; line_count(&text)];
        for step in &self.steps {
            if step.by.is_some_and(|i| i >= cut) {
                break;
            }
            let origin = step.by.map_or(LineOrigin::Unexplained, LineOrigin::Edit);
            apply(&mut text, &mut lines, &step.splice, origin);
        }
        (text, lines)
    }
}

fn recover(current: &str, changes: &[Change]) -> History {
    let mut state = current.to_string();
    // Discovered newest first; reversed at the end.
    let mut steps: Vec<Step> = Vec::new();
    let mut first = changes.len();
    for (i, change) in changes.iter().enumerate().rev() {
        match change {
            Change::Write { content } => {
                // Everything before a Write is gone from the file: the walk ends here, with
                // the content as the base and a person's changes since as one diffed step.
                if *content != state {
                    steps.push(Step {
                        by: None,
                        splice: Splice {
                            start: 0,
                            old: content.clone(),
                            new: state,
                        },
                    });
                }
                steps.reverse();
                return History {
                    base: content.clone(),
                    base_origin: Some(i),
                    steps,
                    first: i,
                };
            }
            other => match revert(&mut state, other) {
                Some(splices) => {
                    steps.extend(splices.into_iter().map(|splice| Step {
                        by: Some(i),
                        splice,
                    }));
                    first = i;
                }
                None => break,
            },
        }
    }
    steps.reverse();
    History {
        base: state,
        base_origin: None,
        steps,
        first,
    }
}

/// Turn `state`, the text after `change`, into the text before it, returning the splices
/// that lead from one to the other (newest first). `None`, with `state` as it was, when the
/// change cannot be placed on it. The text is edited in place: copying a large file once
/// per recorded edit was most of a blame's time.
fn revert(state: &mut String, change: &Change) -> Option<Vec<Splice>> {
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
        return None;
    }
    Some(splices)
}

/// Locate `change` on the state before it, for replaying forward: the splices it makes, in
/// order. `None` when it cannot be placed (an Edit's old text must occur exactly once, a
/// hunk's old lines in exactly one place).
fn place_forward(before: &str, change: &Change) -> Option<Vec<Splice>> {
    let mut state = before.to_string();
    let mut out = Vec::new();
    let mut push = |state: &mut String, s: Splice| {
        state.replace_range(s.start..s.start + s.old.len(), &s.new);
        out.push(s);
    };
    match change {
        Change::Edit(r) => {
            let s = forward_replacement(&state, r)?;
            push(&mut state, s);
        }
        Change::MultiEdit { edits } => {
            for r in edits {
                let s = forward_replacement(&state, r)?;
                push(&mut state, s);
            }
        }
        Change::Patch { hunks, .. } => {
            for h in hunks {
                let s = forward_hunk(&state, h)?;
                push(&mut state, s);
            }
        }
        Change::UnifiedDiff { diff, .. } => {
            for h in &unified_hunks(diff) {
                let s = forward_hunk(&state, h)?;
                push(&mut state, s);
            }
        }
        Change::Delete | Change::NotebookEdit { .. } | Change::Write { .. } => return None,
    }
    Some(out)
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
fn apply(text: &mut String, lines: &mut Vec<LineOrigin>, s: &Splice, origin: LineOrigin) {
    let old_end = s.start + s.old.len();
    let new_text = format!("{}{}{}", &text[..s.start], s.new, &text[old_end..]);
    // The window: from the start of the line the splice starts in, to the first point at or
    // after its end that is a line boundary in both texts (their tails are equal bytes).
    let win_start = memchr::memrchr(b'\n', &text.as_bytes()[..s.start]).map_or(0, |i| i + 1);
    let new_end_of_splice = s.start + s.new.len();
    let boundary = |t: &str, at: usize| at == 0 || at == t.len() || t.as_bytes()[at - 1] == b'\n';
    let old_win_end = if boundary(text, old_end) && boundary(&new_text, new_end_of_splice) {
        old_end
    } else {
        text[old_end..]
            .find('\n')
            .map_or(text.len(), |i| old_end + i + 1)
    };
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
