//! What an edit wrote, as a person reads it: a unified diff, and its size in lines.

use similar::TextDiff;

use crate::vocab::change::{Before, Change, Hunk, Replacement};

/// Lines an edit added and removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Size {
    pub(crate) added: usize,
    pub(crate) removed: usize,
}

impl std::ops::AddAssign for Size {
    fn add_assign(&mut self, o: Size) {
        self.added += o.added;
        self.removed += o.removed;
    }
}

/// How many lines `change` added and removed.
pub(crate) fn size(change: &Change) -> Size {
    let lines = |s: &str| s.lines().count();
    match change {
        Change::Edit(r) => replacement_size(r),
        Change::MultiEdit { edits } => {
            let mut total = Size::default();
            for r in edits {
                total += replacement_size(r);
            }
            total
        }
        // A write over a file it says it replaced changed only the lines that differ.
        Change::Write {
            before: Some(Before::File { differs }),
            ..
        } => Size {
            added: differs.iter().map(|d| d.len).sum(),
            removed: differs.iter().map(|d| d.was.len()).sum(),
        },
        Change::Write { content, .. } => Size {
            added: lines(content),
            removed: 0,
        },
        Change::NotebookEdit { source, .. } => Size {
            added: lines(source),
            removed: 0,
        },
        Change::Patch { hunks, .. } => hunks_size(hunks),
        Change::UnifiedDiff { diff, .. } => {
            let mut s = Size::default();
            for l in diff.lines() {
                if l.starts_with("+++") || l.starts_with("---") {
                    continue;
                }
                if l.starts_with('+') {
                    s.added += 1;
                } else if l.starts_with('-') {
                    s.removed += 1;
                }
            }
            s
        }
        Change::Delete => Size::default(),
    }
}

fn replacement_size(r: &Replacement) -> Size {
    let diff = TextDiff::from_lines(&r.old, &r.new);
    let mut s = Size::default();
    for op in diff.ops() {
        for change in diff.iter_changes(op) {
            match change.tag() {
                similar::ChangeTag::Insert => s.added += 1,
                similar::ChangeTag::Delete => s.removed += 1,
                similar::ChangeTag::Equal => {}
            }
        }
    }
    s
}

fn hunks_size(hunks: &[Hunk]) -> Size {
    let mut s = Size::default();
    for h in hunks {
        for l in &h.lines {
            if l.starts_with('+') {
                s.added += 1;
            } else if l.starts_with('-') {
                s.removed += 1;
            }
        }
    }
    s
}

/// `change` to `path` as a unified diff. An Edit's old and new text are diffed by line; a
/// whole write is diffed against the file it replaced where its tool said what that was, and
/// shown as added lines otherwise.
pub(crate) fn unified(path: &str, change: &Change) -> String {
    let mut out = String::new();
    let header = |out: &mut String, from: &str, to: &str| {
        out.push_str(&format!("--- {from}\n+++ {to}\n"));
    };
    match change {
        Change::Edit(r) => {
            header(&mut out, path, path);
            replacement_diff(&mut out, r);
        }
        Change::MultiEdit { edits } => {
            header(&mut out, path, path);
            for r in edits {
                replacement_diff(&mut out, r);
            }
        }
        Change::Write { content, before } => match before.as_ref().and_then(|b| b.text(content)) {
            Some(was) if !was.is_empty() => {
                header(&mut out, path, path);
                // The whole file on both sides: the hunks carry its own line numbers.
                let body = TextDiff::from_lines(&was, content)
                    .unified_diff()
                    .context_radius(3)
                    .missing_newline_hint(false)
                    .to_string();
                out.push_str(&body);
            }
            _ => {
                header(&mut out, "/dev/null", path);
                added_lines(&mut out, content);
            }
        },
        Change::NotebookEdit {
            cell_id, source, ..
        } => {
            header(&mut out, path, path);
            out.push_str(&format!(
                "@@ cell {} @@\n",
                cell_id.as_deref().unwrap_or("(new)")
            ));
            for l in source.lines() {
                out.push_str(&format!("+{l}\n"));
            }
        }
        Change::Patch { move_to, hunks } => {
            header(&mut out, path, move_to.as_deref().unwrap_or(path));
            for h in hunks {
                match &h.header {
                    Some(anchor) => out.push_str(&format!("@@ {anchor}\n")),
                    None => out.push_str("@@\n"),
                }
                for l in &h.lines {
                    if l.is_empty() {
                        out.push_str(" \n");
                    } else {
                        out.push_str(l);
                        out.push('\n');
                    }
                }
            }
        }
        Change::UnifiedDiff { move_to, diff } => {
            if !diff.starts_with("---") {
                header(&mut out, path, move_to.as_deref().unwrap_or(path));
            }
            out.push_str(diff);
            if !diff.ends_with('\n') {
                out.push('\n');
            }
        }
        Change::Delete => {
            header(&mut out, path, "/dev/null");
            out.push_str("(the file was deleted)\n");
        }
    }
    out
}

fn replacement_diff(out: &mut String, r: &Replacement) {
    let diff = TextDiff::from_lines(&r.old, &r.new);
    let body = diff
        .unified_diff()
        .context_radius(3)
        .missing_newline_hint(false)
        .to_string();
    if r.replace_all {
        out.push_str("@@ (every occurrence) @@\n");
    }
    // similar numbers hunks from the edit's own text: the file's line numbers are not
    // recorded with an Edit.
    out.push_str(&body);
    if !body.ends_with('\n') {
        out.push('\n');
    }
}

fn added_lines(out: &mut String, content: &str) {
    let n = content.lines().count();
    out.push_str(&format!("@@ -0,0 +1,{n} @@\n"));
    for l in content.lines() {
        out.push_str(&format!("+{l}\n"));
    }
}

/// The lines a unified diff adds, grouped by the file each `+++` header names (`None` for
/// lines before any header, as in a one-file patch). A header is read only between hunks:
/// inside one, the `@@` counts say how many lines follow, so an added line whose text begins
/// `++ ` is a line, not a header.
pub(crate) fn added_by_file(diff: &str) -> Vec<(Option<String>, Vec<String>)> {
    added_numbered(diff)
        .into_iter()
        .map(|(path, lines)| (path, lines.into_iter().map(|(_, l)| l).collect()))
        .collect()
}

/// An added line's number (from 1) in the file the diff makes, and its text.
pub(crate) type Numbered = (usize, String);

/// [`added_by_file`], each added line with its number (from 1) in the file the diff makes:
/// from its hunk's `+c` start, counted over the lines the new side keeps. A hunk without
/// counts numbers from 1.
pub(crate) fn added_numbered(diff: &str) -> Vec<(Option<String>, Vec<Numbered>)> {
    let mut out: Vec<(Option<String>, Vec<Numbered>)> = Vec::new();
    let (mut old_left, mut new_left) = (0usize, 0usize);
    let mut number = 1usize;
    for line in diff.lines() {
        if old_left == 0 && new_left == 0 {
            if let Some(path) = line.strip_prefix("+++ ") {
                out.push((
                    Some(path.strip_prefix("b/").unwrap_or(path).to_string()),
                    Vec::new(),
                ));
            } else if let Some((old, new, start)) = hunk_counts(line) {
                (old_left, new_left) = (old, new);
                number = start;
            } else if line.starts_with("@@") {
                // A hunk without counts runs to the end of the diff.
                (old_left, new_left) = (usize::MAX, usize::MAX);
                number = 1;
            }
            continue;
        }
        match line.as_bytes().first() {
            Some(b'+') => {
                new_left = new_left.saturating_sub(1);
                if out.is_empty() {
                    out.push((None, Vec::new()));
                }
                if let Some((_, lines)) = out.last_mut() {
                    lines.push((number, line[1..].to_string()));
                }
                number += 1;
            }
            Some(b'-') => old_left = old_left.saturating_sub(1),
            Some(b'\\') => {}
            _ => {
                old_left = old_left.saturating_sub(1);
                new_left = new_left.saturating_sub(1);
                number += 1;
            }
        }
    }
    out
}

/// The old and new line counts of a `@@ -a[,b] +c[,d] @@` header (a missing count is 1),
/// and the new side's first line `c` (at least 1: an empty new side says 0).
fn hunk_counts(line: &str) -> Option<(usize, usize, usize)> {
    let mut sides = line.strip_prefix("@@ -")?.split(" @@").next()?.split(" +");
    let parse = |side: &str| -> Option<(usize, usize)> {
        match side.split_once(',') {
            Some((start, n)) => Some((start.parse().ok()?, n.parse().ok()?)),
            None => Some((side.parse().ok()?, 1)),
        }
    };
    let (_, old) = parse(sides.next()?)?;
    let (start, new) = parse(sides.next()?)?;
    Some((old, new, start.max(1)))
}

#[cfg(test)]
mod tests {

    #[test]
    fn added_lines_are_numbered_as_in_the_file_the_diff_makes() {
        // Two hunks of one file (the second after a deletion), and a new file.
        let diff = "--- a/x\n+++ b/x\n@@ -2,0 +3,2 @@\n+three\n+four\n@@ -9,2 +11,2 @@\n keep\n-gone\n+twelve\n--- /dev/null\n+++ b/y\n@@ -0,0 +1 @@\n+only\n";
        assert_eq!(
            super::added_numbered(diff),
            vec![
                (
                    Some("x".to_string()),
                    vec![
                        (3, "three".to_string()),
                        (4, "four".to_string()),
                        (12, "twelve".to_string())
                    ]
                ),
                (Some("y".to_string()), vec![(1, "only".to_string())]),
            ]
        );
    }

    #[test]
    fn an_added_line_that_begins_with_two_pluses_is_a_line_not_a_header() {
        let diff = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,3 @@\n keep\n-old\n+++ up\n+new\n\\ No newline at end of file\ndiff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -0,0 +1 @@\n+only\n";
        assert_eq!(
            added_by_file(diff),
            vec![
                (
                    Some("x".to_string()),
                    vec!["++ up".to_string(), "new".to_string()]
                ),
                (Some("y".to_string()), vec!["only".to_string()]),
            ]
        );
        assert_eq!(
            added_by_file("@@ -1 +1,2 @@\n-a\n+b\n+c\n"),
            vec![(None, vec!["b".to_string(), "c".to_string()])]
        );
    }
    use super::*;

    fn edit(old: &str, new: &str) -> Change {
        Change::Edit(Replacement {
            old: old.into(),
            new: new.into(),
            replace_all: false,
        })
    }

    #[test]
    fn an_edit_is_a_line_diff_of_its_old_and_new_text() {
        let d = unified("src/a.rs", &edit("a\nb\nc\n", "a\nB\nc\n"));
        assert!(d.starts_with("--- src/a.rs\n+++ src/a.rs\n"), "{d}");
        assert!(d.contains("\n-b\n+B\n"), "{d}");
        assert!(d.contains("\n a\n"), "context is kept: {d}");
        assert_eq!(
            size(&edit("a\nb\nc\n", "a\nB\nc\n")),
            Size {
                added: 1,
                removed: 1
            }
        );
    }

    #[test]
    fn a_write_is_all_added_lines_from_nothing() {
        let w = Change::write("x\ny\n");
        let d = unified("n.txt", &w);
        assert_eq!(d, "--- /dev/null\n+++ n.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n");
        assert_eq!(
            size(&w),
            Size {
                added: 2,
                removed: 0
            }
        );
    }

    #[test]
    fn a_write_that_says_what_it_replaced_shows_only_the_lines_it_changed() {
        let was = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let content = "a\nb\nc\nd\ne\nf\ng\nH\n";
        let w = Change::Write {
            content: content.into(),
            before: Some(crate::vocab::change::Before::between(was, content)),
        };
        assert_eq!(
            unified("n.txt", &w),
            "--- n.txt\n+++ n.txt\n@@ -5,4 +5,4 @@\n e\n f\n g\n-h\n+H\n"
        );
    }

    #[test]
    fn a_write_that_changes_one_line_of_a_ten_line_file_is_one_line_added_and_one_removed() {
        let was: String = (1..=10).map(|n| format!("line {n}\n")).collect();
        let content = was.replace("line 7\n", "line seven\n");
        let over = |before| Change::Write {
            content: content.clone(),
            before,
        };
        assert_eq!(
            size(&over(Some(Before::between(&was, &content)))),
            Size {
                added: 1,
                removed: 1
            }
        );
        // A write that made the file, or that does not say what it replaced, wrote it all.
        for before in [Some(Before::Nothing), None] {
            assert_eq!(
                size(&over(before)),
                Size {
                    added: 10,
                    removed: 0
                }
            );
        }
    }

    #[test]
    fn patch_hunks_keep_their_marks_and_count_them() {
        let p = Change::Patch {
            move_to: Some("b.py".into()),
            hunks: vec![Hunk {
                header: Some("def f():".into()),
                lines: vec![" def f():".into(), "-    1".into(), "+    2".into()],
                end_of_file: false,
            }],
        };
        let d = unified("a.py", &p);
        assert!(d.starts_with("--- a.py\n+++ b.py\n@@ def f():\n def f():\n-    1\n+    2\n"));
        assert_eq!(
            size(&p),
            Size {
                added: 1,
                removed: 1
            }
        );
    }

    #[test]
    fn a_unified_diff_counts_no_file_headers() {
        let u = Change::UnifiedDiff {
            move_to: None,
            diff: "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n".into(),
        };
        assert_eq!(
            size(&u),
            Size {
                added: 1,
                removed: 1
            }
        );
    }
}
