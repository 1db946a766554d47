use super::*;
use crate::vocab::change::{Change, Hunk, Replacement};
use proptest::prelude::*;

fn edit(old: &str, new: &str) -> Change {
    Change::Edit(Replacement {
        old: old.into(),
        new: new.into(),
        replace_all: false,
    })
}

/// An Edit of every occurrence of `old`.
fn replace_all(old: &str, new: &str) -> Change {
    Change::Edit(Replacement {
        old: old.into(),
        new: new.into(),
        replace_all: true,
    })
}

fn write(content: &str) -> Change {
    Change::write(content)
}

/// A Write of `content` whose tool said the file held `before` then.
fn write_over(before: &str, content: &str) -> Change {
    Change::Write {
        content: content.into(),
        before: Some(crate::vocab::change::Before::between(before, content)),
    }
}

use LineOrigin::{Edit as E, Unexplained as U};

/// One edit a minute from 09:00, the record's times for tests that need none in particular.
fn minutes(changes: &[Change]) -> Vec<i64> {
    (0..changes.len() as i64)
        .map(|i| NINE + i * MINUTE)
        .collect()
}

const NINE: i64 = 1_784_019_600_000; // 2026-07-14T09:00:00Z
const MINUTE: i64 = 60_000;

/// [`super::blame`] with no repository, the edits a minute apart.
fn blame(current: &str, changes: &[Change]) -> Blame {
    let times = minutes(changes);
    let record = Record {
        changes,
        times: &times,
        restores: &[],
    };
    super::blame(current, record, &mut None::<FileHistory>)
}

/// [`super::blame_at`] with no repository, the moment that of the last edit before the cut.
fn blame_at(current: Option<&str>, changes: &[Change], cut: usize) -> Option<Blame> {
    let times = minutes(changes);
    let record = Record {
        changes,
        times: &times,
        restores: &[],
    };
    let moment = NINE + cut as i64 * MINUTE - 1;
    super::blame_at(current, record, cut, moment, &mut None::<FileHistory>)
}

#[test]
fn a_write_then_an_edit_owns_exactly_the_lines_each_wrote() {
    let changes = [write("a\nb\nc\n"), edit("b\n", "B\nB2\n")];
    let b = blame("a\nB\nB2\nc\n", &changes);
    assert_eq!(b.lines, vec![E(0), E(1), E(1), E(0)]);
    assert_eq!(b.placed(), vec![true, true]);
}

#[test]
fn context_lines_an_edit_repeats_keep_their_origin() {
    let changes = [
        write("fn a() {\n    1\n}\n"),
        edit("fn a() {\n    1\n}\n", "fn a() {\n    2\n}\n"),
    ];
    let b = blame("fn a() {\n    2\n}\n", &changes);
    assert_eq!(b.lines, vec![E(0), E(1), E(0)]);
}

#[test]
fn an_edit_inside_a_line_owns_that_line() {
    let changes = [write("let x = foo(1);\nok\n"), edit("foo(1)", "foo(2)")];
    let b = blame("let x = foo(2);\nok\n", &changes);
    assert_eq!(b.lines, vec![E(1), E(0)]);
}

#[test]
fn a_file_that_predates_the_record_is_unexplained_except_where_edited() {
    let changes = [edit("two\n", "TWO\n")];
    let b = blame("one\nTWO\nthree\n", &changes);
    assert_eq!(b.lines, vec![U, E(0), U]);
}

#[test]
fn lines_changed_by_hand_after_the_last_edit_are_unexplained() {
    let changes = [write("a\nb\nc\n")];
    let b = blame("a\nhand\nc\n", &changes);
    assert_eq!(b.lines, vec![E(0), U, E(0)]);
}

#[test]
fn an_edit_whose_text_was_changed_by_hand_since_is_not_placed_and_nothing_older_is_guessed() {
    let changes = [write("a\nb\n"), edit("b\n", "b2\n")];
    // b2 was rewritten by hand: the edit cannot be located, so the Write behind it is unknown.
    let b = blame("a\nb3\n", &changes);
    assert_eq!(b.lines, vec![U, U]);
    assert_eq!(b.placed(), vec![false, false]);
}

#[test]
fn an_ambiguous_place_is_not_guessed() {
    // `x` occurs twice after the edit and either could have been `y` before it.
    let changes = [edit("y", "x")];
    let b = blame("x\nx\n", &changes);
    assert_eq!(b.lines, vec![U, U]);
    assert_eq!(b.placed(), vec![false]);
}

#[test]
fn replace_all_owns_every_line_it_rewrote() {
    let changes = [write("foo\nbar\nfoo\n"), replace_all("foo", "baz")];
    let b = blame("baz\nbar\nbaz\n", &changes);
    assert_eq!(b.lines, vec![E(1), E(0), E(1)]);
}

#[test]
fn multi_edit_replacements_apply_in_order() {
    let changes = [
        write("a\nb\nc\n"),
        Change::MultiEdit {
            edits: vec![
                Replacement {
                    old: "a\n".into(),
                    new: "A\n".into(),
                    replace_all: false,
                },
                Replacement {
                    old: "A\nb\n".into(),
                    new: "A\nB\n".into(),
                    replace_all: false,
                },
            ],
        },
    ];
    let b = blame("A\nB\nc\n", &changes);
    assert_eq!(b.lines, vec![E(1), E(1), E(0)]);
}

#[test]
fn patch_hunks_are_placed_by_their_context() {
    let changes = [
        write("def greet():\n    print('hi')\n\nx = 1\n"),
        Change::Patch {
            move_to: None,
            hunks: vec![Hunk {
                header: Some("def greet():".into()),
                lines: vec![
                    " def greet():".into(),
                    "-    print('hi')".into(),
                    "+    print('hello')".into(),
                    "+    return 1".into(),
                ],
                end_of_file: false,
            }],
        },
    ];
    let now = "def greet():\n    print('hello')\n    return 1\n\nx = 1\n";
    let b = blame(now, &changes);
    assert_eq!(b.lines, vec![E(0), E(1), E(1), E(0), E(0)]);
}

/// A patch of one hunk.
fn patch(lines: &[&str], end_of_file: bool) -> Change {
    Change::Patch {
        move_to: None,
        hunks: vec![Hunk {
            header: None,
            lines: lines.iter().map(|l| l.to_string()).collect(),
            end_of_file,
        }],
    }
}

#[test]
fn a_hunk_anchored_at_the_end_of_the_file_is_placed_there_when_its_lines_also_stand_earlier() {
    // The hunk's lines after it, `x = 1`, stand twice in the file; `*** End of File` says
    // which.
    let changes = [write("x = 1\nmid\nold\n"), patch(&["-old", "+x = 1"], true)];
    let b = blame("x = 1\nmid\nx = 1\n", &changes);
    assert_eq!(b.lines, vec![E(0), E(0), E(1)]);
    assert_eq!(b.placed(), vec![true, true]);
}

#[test]
fn a_hunk_that_only_removes_lines_leaves_no_blank_line_where_they_stood() {
    let changes = [write("a\nb\n"), patch(&["-a"], false)];
    let at = blame_at(None, &changes, 2).unwrap();
    assert_eq!(at.text, "b\n");
    assert_eq!(at.lines, vec![E(0)]);
}

#[test]
fn an_edit_below_an_empty_first_line_is_attributed_to_its_own_line() {
    let changes = [write("\nabc\n"), edit("abc", "abd")];
    let b = blame("\nabd\n", &changes);
    assert_eq!(b.lines, vec![E(0), E(1)]);
}

#[test]
fn unified_diffs_are_placed_like_patches() {
    let changes = [
        write("one\ntwo\nthree\n"),
        Change::UnifiedDiff {
            move_to: None,
            diff: "@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n".into(),
        },
    ];
    let b = blame("one\n2\nthree\n", &changes);
    assert_eq!(b.lines, vec![E(0), E(1), E(0)]);
}

#[test]
fn a_file_without_a_final_newline_is_attributed_to_its_last_line() {
    let changes = [write("a\nb"), edit("b", "b!")];
    let b = blame("a\nb!", &changes);
    assert_eq!(b.lines, vec![E(0), E(1)]);
}

#[test]
fn blame_at_a_cut_shows_the_file_as_it_stood() {
    let changes = [write("a\nb\n"), edit("b\n", "B\n"), edit("a\n", "A\n")];
    let now = "A\nB\n";
    // Before the Write, the record cannot tell whether the file existed.
    assert_eq!(blame_at(Some(now), &changes, 0), None);
    let at1 = blame_at(Some(now), &changes, 1).unwrap();
    assert_eq!(at1.text, "a\nb\n");
    assert_eq!(at1.lines, vec![E(0), E(0)]);
    let at2 = blame_at(Some(now), &changes, 2).unwrap();
    assert_eq!(at2.text, "a\nB\n");
    assert_eq!(at2.lines, vec![E(0), E(1)]);
    assert_eq!(
        blame_at(Some(now), &changes, 3).unwrap().lines,
        vec![E(2), E(1)]
    );
}

#[test]
fn a_cut_hidden_behind_a_later_write_is_replayed_forward_from_an_earlier_one() {
    let changes = [write("a\nb\n"), edit("b\n", "B\n"), write("new\n")];
    let at2 = blame_at(Some("new\n"), &changes, 2).unwrap();
    assert_eq!(at2.text, "a\nB\n");
    assert_eq!(at2.lines, vec![E(0), E(1)]);
    assert_eq!(
        at2.placement,
        vec![Placement::Placed, Placement::Placed, Placement::Later]
    );
    // A file that is gone is replayed forward from its last Write.
    let gone = blame_at(None, &changes[..2], 2).unwrap();
    assert_eq!(gone.text, "a\nB\n");
}

// ---------------------------------------------------------------------------------------
// With a repository: a fake one, its commits given as (minute past 09:00, hash, text, the
// commit that brought each line).

struct Repo {
    commits: Vec<FakeCommit>,
}

/// A commit of the fake repository: when, its hash, the file's text, and the commit that
/// brought each line.
struct FakeCommit {
    ms: i64,
    hash: String,
    text: String,
    by: Vec<String>,
}

impl Repo {
    /// Commits given as (minute past 09:00, hash, text, the commit of each line).
    fn of(commits: &[(i64, &str, &str, &[&str])]) -> Repo {
        Repo {
            commits: commits
                .iter()
                .map(|(minute, hash, text, by)| FakeCommit {
                    ms: NINE + minute * MINUTE,
                    hash: hash.to_string(),
                    text: text.to_string(),
                    by: by.iter().map(|h| h.to_string()).collect(),
                })
                .collect(),
        }
    }

    fn line_commit(&self, hash: &str) -> LineCommit {
        LineCommit {
            hash: hash.to_string(),
            author: format!("author of {hash}"),
            ts_ms: self
                .commits
                .iter()
                .find(|c| c.hash == hash)
                .map_or(0, |c| c.ms),
        }
    }
}

impl Past for Repo {
    fn known(&self) -> bool {
        true
    }

    fn at(&mut self, ms: i64) -> Option<Committed> {
        let c = self.commits.iter().rfind(|c| c.ms <= ms)?;
        Some(Committed {
            commit: c.hash.clone(),
            ts_ms: c.ms,
            text: c.text.clone(),
        })
    }

    fn annotate(&mut self, commit: Option<&str>) -> Option<Vec<(String, LineCommit)>> {
        let c = match commit {
            Some(h) => self.commits.iter().find(|c| c.hash == h)?,
            None => self.commits.last()?,
        };
        Some(
            c.text
                .lines()
                .zip(&c.by)
                .map(|(l, h)| (l.to_string(), self.line_commit(h)))
                .collect(),
        )
    }
}

/// The record at the given minutes past 09:00.
fn at_minutes(minutes: &[i64]) -> Vec<i64> {
    minutes.iter().map(|m| NINE + m * MINUTE).collect()
}

/// Each line's origin, with commits named by hash.
#[derive(Debug, PartialEq, Eq)]
enum Said {
    Edit(usize),
    Commit(&'static str),
    Uncommitted,
    Uncertain,
}

fn said(b: &Blame) -> Vec<Said> {
    b.lines
        .iter()
        .map(|o| match o {
            LineOrigin::Edit(i) => Said::Edit(*i),
            LineOrigin::Commit(c) => {
                let hash = b.commits[*c].hash.clone();
                Said::Commit(["c1", "c2", "c3"].into_iter().find(|h| *h == hash).unwrap())
            }
            LineOrigin::Uncommitted => Said::Uncommitted,
            LineOrigin::Uncertain => Said::Uncertain,
            LineOrigin::Unexplained => panic!("a repository was asked: nothing is unexplained"),
        })
        .collect()
}

/// A person commits `def add`; an agent's Write at 09:10 keeps those lines and adds others.
fn person_then_write() -> (Repo, Vec<Change>, Vec<i64>) {
    let repo = Repo::of(&[(0, "c1", "def add(a, b):\n    return a + b\n", &["c1", "c1"])]);
    let changes = vec![write(
        "import math\ndef add(a, b):\n    return a + b\ndef sub(a, b):\n    return a - b\n",
    )];
    (repo, changes, at_minutes(&[10]))
}

#[test]
fn a_write_keeps_the_commit_of_the_lines_it_left_as_they_were() {
    let (mut repo, changes, times) = person_then_write();
    let record = Record {
        changes: &changes,
        times: &times,
        restores: &[],
    };
    let b = super::blame(
        "import math\ndef add(a, b):\n    return a + b\ndef sub(a, b):\n    return a - b\n",
        record,
        &mut repo,
    );
    use Said::{Commit as C, Edit as W};
    assert_eq!(said(&b), vec![W(0), C("c1"), C("c1"), W(0), W(0)]);
    assert_eq!(b.commits[0].author, "author of c1");
    // Without a repository, nothing says what the write replaced: it owns every line.
    assert_eq!(
        super::blame(&b.text, record, &mut None::<FileHistory>).lines,
        vec![E(0); 5]
    );
}

#[test]
fn a_write_that_says_what_it_replaced_owns_only_the_lines_it_changed() {
    let now = "a\nB\nc\n";
    let over = [
        write("a\nb\n"),
        edit("b\n", "B\n"),
        write_over("a\nB\n", now),
    ];
    assert_eq!(blame(now, &over).lines, vec![E(0), E(1), E(2)]);
    assert_eq!(blame(now, &over).placement, vec![Placement::Placed; 3]);
    // At a moment, the same: after the write, and before it.
    let then = blame_at(Some(now), &over, 3).unwrap();
    assert_eq!(
        (then.text.as_str(), then.lines),
        (now, vec![E(0), E(1), E(2)])
    );
    let then = blame_at(Some(now), &over, 2).unwrap();
    assert_eq!(
        (then.text.as_str(), then.lines),
        ("a\nB\n", vec![E(0), E(1)])
    );
    // A write that does not say owns every line, with nothing to say what it replaced.
    let blind = [write("a\nb\n"), edit("b\n", "B\n"), write(now)];
    assert_eq!(blame(now, &blind).lines, vec![E(2); 3]);
    // Over a file the record never saw: the lines it kept are nobody's it knows.
    let first = [write_over("a\nB\n", now)];
    assert_eq!(blame(now, &first).lines, vec![U, U, E(0)]);
    // At a moment, undone from the text now: whether they were there then is not settled.
    let unsure = LineOrigin::Uncertain;
    assert_eq!(
        blame_at(Some(now), &first, 1).unwrap().lines,
        vec![unsure, unsure, E(0)]
    );
    // A write that made the file owns it whole.
    assert_eq!(blame(now, &[write_over("", now)]).lines, vec![E(0); 3]);
}

#[test]
fn what_a_write_says_it_replaced_wins_and_lines_changed_by_hand_before_it_are_uncommitted() {
    // c1 holds "a\nb\n"; a person changes b by hand, not committed; the Write at 09:10 keeps
    // that line and adds one.
    let repo = || Repo::of(&[(0, "c1", "a\nb\n", &["c1", "c1"])]);
    let now = "a\nb by hand\nc\n";
    let times = at_minutes(&[10]);
    let told = [write_over("a\nb by hand\n", now)];
    let record = Record {
        changes: &told,
        times: &times,
        restores: &[],
    };
    use Said::{Commit as C, Edit as W};
    let b = super::blame(now, record, &mut repo());
    assert_eq!(said(&b), vec![C("c1"), Said::Uncommitted, W(0)]);
    let b = super::blame_at(Some(now), record, 1, NINE + 11 * MINUTE, &mut repo()).unwrap();
    assert_eq!(said(&b), vec![C("c1"), Said::Uncommitted, W(0)]);
    // Not told, the repository's file is taken for what the write replaced: the write wrote
    // the person's line.
    let blind = [write(now)];
    let record = Record {
        changes: &blind,
        times: &times,
        restores: &[],
    };
    let b = super::blame(now, record, &mut repo());
    assert_eq!(said(&b), vec![C("c1"), W(0), W(0)]);
}

/// c1 at 09:00; an agent's edit at 09:05 (not committed) and its Write at 09:10, which keeps
/// the edit's line; a person commits a line of their own at 09:20 (c2); a last line typed by
/// hand is not committed.
fn edit_then_write_then_commit() -> (Repo, Vec<Change>, Vec<i64>) {
    let repo = Repo::of(&[
        (0, "c1", "a\nb\n", &["c1", "c1"]),
        (20, "c2", "x\na\nB\nc\n", &["c2", "c1", "c2", "c2"]),
    ]);
    let changes = vec![edit("b\n", "B\n"), write("a\nB\nc\n")];
    (repo, changes, at_minutes(&[5, 10]))
}

#[test]
fn an_edit_before_a_write_keeps_its_lines_and_unrecorded_lines_name_their_commit_or_none() {
    let (mut repo, changes, times) = edit_then_write_then_commit();
    let record = Record {
        changes: &changes,
        times: &times,
        restores: &[],
    };
    let b = super::blame("x\na\nB\nc\nhand\n", record, &mut repo);
    use Said::{Commit as C, Edit as W};
    assert_eq!(
        said(&b),
        vec![C("c2"), C("c1"), W(0), W(1), Said::Uncommitted]
    );
    assert_eq!(b.placement, vec![Placement::Placed; 2]);
}

#[test]
fn blame_at_a_moment_is_the_commit_before_it_and_the_recorded_edits_since() {
    let (mut repo, changes, times) = edit_then_write_then_commit();
    let record = Record {
        changes: &changes,
        times: &times,
        restores: &[],
    };
    let now = Some("x\na\nB\nc\nhand\n");
    use Said::{Commit as C, Edit as W};
    // Before the record: the commit alone.
    let b = super::blame_at(now, record, 0, NINE + 2 * MINUTE, &mut repo).unwrap();
    assert_eq!(
        (b.text.as_str(), said(&b)),
        ("a\nb\n", vec![C("c1"), C("c1")])
    );
    assert_eq!(b.placement, vec![Placement::Later; 2]);
    // After the edit: never the person's line of 09:20, nor the one typed by hand.
    let b = super::blame_at(now, record, 1, NINE + 6 * MINUTE, &mut repo).unwrap();
    assert_eq!((b.text.as_str(), said(&b)), ("a\nB\n", vec![C("c1"), W(0)]));
    assert_eq!(b.placement, vec![Placement::Placed, Placement::Later]);
    let b = super::blame_at(now, record, 2, NINE + 11 * MINUTE, &mut repo).unwrap();
    assert_eq!(
        (b.text.as_str(), said(&b)),
        ("a\nB\nc\n", vec![C("c1"), W(0), W(1)])
    );
    // After c2: its line, and the recorded ones it committed still the edits'.
    let b = super::blame_at(now, record, 2, NINE + 30 * MINUTE, &mut repo).unwrap();
    assert_eq!(
        (b.text.as_str(), said(&b)),
        ("x\na\nB\nc\n", vec![C("c2"), C("c1"), W(0), W(1)])
    );
}

#[test]
fn an_edit_that_cannot_be_placed_at_a_moment_leaves_what_it_may_have_replaced_uncertain() {
    let mut repo = Repo::of(&[(0, "c1", "a\nb\nz\n", &["c1", "c1", "c1"])]);
    // Its old text holds a line typed by hand and never committed.
    let changes = vec![edit("b\nhand\n", "b\nB\n")];
    let times = at_minutes(&[5]);
    let record = Record {
        changes: &changes,
        times: &times,
        restores: &[],
    };
    let b = super::blame_at(
        Some("a\nb\nB\nz\n"),
        record,
        1,
        NINE + 6 * MINUTE,
        &mut repo,
    )
    .unwrap();
    assert_eq!(b.text, "a\nb\nz\n");
    assert_eq!(
        said(&b),
        vec![Said::Commit("c1"), Said::Uncertain, Said::Commit("c1")]
    );
    assert_eq!(b.placement, vec![Placement::Missing]);
}

#[test]
fn before_the_repositorys_first_commit_the_file_is_what_the_record_made() {
    let (mut repo, _, _) = person_then_write();
    repo.commits[0].ms = NINE + 30 * MINUTE;
    let changes = [write("a\n"), edit("a\n", "a\nb\n")];
    let times = at_minutes(&[5, 6]);
    let record = Record {
        changes: &changes,
        times: &times,
        restores: &[],
    };
    let b = super::blame_at(None, record, 2, NINE + 7 * MINUTE, &mut repo).unwrap();
    assert_eq!(
        (b.text.as_str(), said(&b)),
        ("a\nb\n", vec![Said::Edit(0), Said::Edit(1)])
    );
}

#[test]
fn why_an_edit_was_not_placed_is_told_apart() {
    // Gone: what it wrote is no longer there.
    let b = blame("a\nc\n", &[edit("b\n", "B\n")]);
    assert_eq!(b.placement, vec![Placement::Missing]);
    // There twice: which one is not guessed.
    let b = blame("B\nB\n", &[edit("b\n", "B\n")]);
    assert_eq!(b.placement, vec![Placement::Ambiguous]);
    // Older than one that could not be placed, or than a write with nothing behind it.
    let b = blame("q\n", &[edit("x\n", "y\n"), edit("b\n", "B\n")]);
    assert_eq!(b.placement, vec![Placement::Behind, Placement::Missing]);
    let b = blame("w\n", &[edit("x\n", "y\n"), write("w\n")]);
    assert_eq!(b.placement, vec![Placement::Overwritten, Placement::Placed]);
    // A MultiEdit is missing when any of its replacements is.
    let multi = Change::MultiEdit {
        edits: vec![
            Replacement {
                old: "a\n".into(),
                new: "A\n".into(),
                replace_all: false,
            },
            Replacement {
                old: "b\n".into(),
                new: "B\n".into(),
                replace_all: false,
            },
        ],
    };
    assert_eq!(
        blame("A\nc\n", &[multi]).placement,
        vec![Placement::Missing]
    );
    // Replayed forward, it is the text replaced that is looked for: there twice, ambiguous.
    let mut repo = Repo::of(&[(0, "c1", "b\nb\n", &["c1", "c1"])]);
    let changes = [edit("b\n", "B\n")];
    let times = at_minutes(&[5]);
    let record = Record {
        changes: &changes,
        times: &times,
        restores: &[],
    };
    let b = super::blame_at(None, record, 1, NINE + 6 * MINUTE, &mut repo).unwrap();
    assert_eq!(b.placement, vec![Placement::Ambiguous]);
    assert_eq!(b.lines, vec![LineOrigin::Uncertain; 2]);
}

#[test]
fn an_edit_in_the_second_of_a_commit_is_taken_to_be_in_it() {
    let commit = NINE;
    let times = [commit - 1, commit + 999, commit + 1000];
    let record = Record {
        changes: &[edit("a", "b"), edit("b", "c"), edit("c", "d")],
        times: &times,
        restores: &[],
    };
    assert_eq!(record.before_commit(commit), 2);
}

// ---------------------------------------------------------------------------------------
// The reference: a file simulated as a list of (line, author), changed by random edits from
// several sessions and by hand. It knows who wrote each line because it wrote it; it shares
// no code with the attribution above (no diff, no search, no revert).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Author {
    Before,
    Hand,
    Edit(usize),
}

#[derive(Clone, Debug)]
struct Sim {
    lines: Vec<(String, Author)>,
    next_token: usize,
    changes: Vec<Change>,
    /// The file after each recorded change (for cuts).
    snapshots: Vec<Vec<(String, Author)>>,
    hand_edits: usize,
}

/// What one random step does, drawn by proptest.
#[derive(Clone, Debug)]
enum Op {
    /// Replace `len` lines at `at` (positions taken modulo the file) with `new` fresh lines,
    /// quoting `ctx` lines of context on each side.
    Lines {
        at: usize,
        len: usize,
        new: usize,
        ctx: usize,
    },
    /// Rewrite part of one line's token.
    InLine { at: usize },
    /// Two line replacements in one MultiEdit.
    Multi { a: usize, b: usize },
    /// Rewrite the whole file, keeping every `keep`-th line's text.
    Write { keep: usize, new: usize },
    /// An apply_patch hunk replacing `len` lines at `at` with `new`, with context.
    Patch { at: usize, len: usize, new: usize },
    /// A person's edit, never recorded.
    Hand { at: usize, len: usize, new: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..50usize, 0..3usize, 0..3usize, 0..2usize)
            .prop_map(|(at, len, new, ctx)| Op::Lines { at, len, new, ctx }),
        2 => (0..50usize).prop_map(|at| Op::InLine { at }),
        1 => (0..50usize, 0..50usize).prop_map(|(a, b)| Op::Multi { a, b }),
        1 => (1..4usize, 0..4usize).prop_map(|(keep, new)| Op::Write { keep, new }),
        2 => (0..50usize, 0..3usize, 0..3usize)
            .prop_map(|(at, len, new)| Op::Patch { at, len, new }),
        1 => (0..50usize, 0..2usize, 0..2usize)
            .prop_map(|(at, len, new)| Op::Hand { at, len, new }),
    ]
}

impl Sim {
    fn new(initial: usize, written: bool) -> Sim {
        let mut s = Sim {
            lines: Vec::new(),
            next_token: 0,
            changes: Vec::new(),
            snapshots: Vec::new(),
            hand_edits: 0,
        };
        let author = if written {
            Author::Edit(0)
        } else {
            Author::Before
        };
        for _ in 0..initial {
            let t = s.token();
            s.lines.push((t, author));
        }
        if written {
            let content = s.text();
            s.record(Change::write(content));
        }
        s
    }

    /// A fresh line, unique in the whole run and never a substring of another (`<n>`).
    fn token(&mut self) -> String {
        self.next_token += 1;
        format!("<{}>\n", self.next_token)
    }

    fn text(&self) -> String {
        self.lines.iter().map(|(l, _)| l.as_str()).collect()
    }

    fn joined(lines: &[(String, Author)]) -> String {
        lines.iter().map(|(l, _)| l.as_str()).collect()
    }

    fn record(&mut self, c: Change) {
        self.changes.push(c);
        self.snapshots.push(self.lines.clone());
    }

    /// Replace `len` lines at `at` with `new` fresh ones by `author`; returns the old and new
    /// text of the span including `ctx` lines of context on each side. `None` when the old
    /// and new spans would be empty or equal (nothing an edit could carry).
    fn replace(
        &mut self,
        at: usize,
        len: usize,
        new: usize,
        ctx: usize,
        author: Author,
        need_old: bool,
    ) -> Option<Replaced> {
        let n = self.lines.len();
        let at = if n == 0 { 0 } else { at % (n + 1) };
        let len = len.min(n - at);
        let fresh: Vec<(String, Author)> = (0..new).map(|_| (self.token(), author)).collect();
        let before_ctx: Vec<String> = self.lines[at.saturating_sub(ctx)..at]
            .iter()
            .map(|(l, _)| l.clone())
            .collect();
        let after_ctx: Vec<String> = self.lines[at + len..(at + len + ctx).min(n)]
            .iter()
            .map(|(l, _)| l.clone())
            .collect();
        let removed: Vec<String> = self.lines[at..at + len]
            .iter()
            .map(|(l, _)| l.clone())
            .collect();
        let added: Vec<String> = fresh.iter().map(|(l, _)| l.clone()).collect();
        if removed.is_empty() && added.is_empty() {
            return None;
        }
        let old = format!(
            "{}{}{}",
            before_ctx.concat(),
            removed.concat(),
            after_ctx.concat()
        );
        let new_text = format!(
            "{}{}{}",
            before_ctx.concat(),
            added.concat(),
            after_ctx.concat()
        );
        // An edit carries text on both sides (Claude Code's Edit has a non-empty old
        // string; a pure deletion quotes context), or it could not be placed.
        if new_text.is_empty() || (need_old && old.is_empty()) {
            return None;
        }
        self.lines.splice(at..at + len, fresh);
        Some(Replaced {
            old,
            new: new_text,
            before: before_ctx,
            removed,
            added,
            after: after_ctx,
        })
    }

    fn step(&mut self, op: &Op) {
        let me = Author::Edit(self.changes.len());
        match *op {
            Op::Lines { at, len, new, ctx } => {
                if let Some(Replaced { old, new, .. }) = self.replace(at, len, new, ctx, me, true) {
                    self.record(Change::Edit(Replacement {
                        old,
                        new,
                        replace_all: false,
                    }));
                }
            }
            Op::InLine { at } => {
                if self.lines.is_empty() {
                    return;
                }
                let i = at % self.lines.len();
                let old_line = self.lines[i].0.clone();
                let core = old_line.trim_end_matches('\n').trim_end_matches('>');
                self.next_token += 1;
                let new_line = format!("{core}.{}>\n", self.next_token);
                // Quote only the changed tail: an edit inside the line.
                let old = format!("{}>", &core[core.len() - 1..]);
                let new = format!("{}.{}>", &core[core.len() - 1..], self.next_token);
                if self.text().matches(&old).count() != 1 {
                    return;
                }
                self.lines[i] = (new_line, me);
                self.record(Change::Edit(Replacement {
                    old,
                    new,
                    replace_all: false,
                }));
            }
            Op::Multi { a, b } => {
                let mut edits = Vec::new();
                for at in [a, b] {
                    if let Some(Replaced { old, new, .. }) = self.replace(at, 1, 1, 1, me, true) {
                        edits.push(Replacement {
                            old,
                            new,
                            replace_all: false,
                        });
                    }
                }
                if !edits.is_empty() {
                    self.record(Change::MultiEdit { edits });
                }
            }
            Op::Write { keep, new } => {
                let mut lines: Vec<(String, Author)> = self
                    .lines
                    .iter()
                    .step_by(keep)
                    .map(|(l, _)| (l.clone(), me))
                    .collect();
                for _ in 0..new {
                    let t = self.token();
                    lines.push((t, me));
                }
                self.lines = lines;
                let content = self.text();
                self.record(Change::write(content));
            }
            Op::Patch { at, len, new } => {
                let Some(Replaced {
                    before,
                    removed,
                    added,
                    after,
                    ..
                }) = self.replace(at, len, new, 1, me, false)
                else {
                    return;
                };
                let strip = |l: &String| l.trim_end_matches('\n').to_string();
                let mut lines: Vec<String> =
                    before.iter().map(|l| format!(" {}", strip(l))).collect();
                lines.extend(removed.iter().map(|l| format!("-{}", strip(l))));
                lines.extend(added.iter().map(|l| format!("+{}", strip(l))));
                lines.extend(after.iter().map(|l| format!(" {}", strip(l))));
                self.record(Change::Patch {
                    move_to: None,
                    hunks: vec![Hunk {
                        header: None,
                        lines,
                        end_of_file: false,
                    }],
                });
            }
            Op::Hand { at, len, new } => {
                if self.replace(at, len, new, 0, Author::Hand, false).is_some() {
                    self.hand_edits += 1;
                }
            }
        }
    }
}

/// What one replacement quoted: the old and new text of the span, and its lines by part.
struct Replaced {
    old: String,
    new: String,
    before: Vec<String>,
    removed: Vec<String>,
    added: Vec<String>,
    after: Vec<String>,
}

fn expected(lines: &[(String, Author)]) -> Vec<LineOrigin> {
    lines
        .iter()
        .map(|(_, a)| match a {
            Author::Edit(i) => LineOrigin::Edit(*i),
            Author::Before | Author::Hand => LineOrigin::Unexplained,
        })
        .collect()
}

fn run(initial: usize, written: bool, ops: &[Op]) -> Sim {
    let mut sim = Sim::new(initial, written);
    for op in ops {
        sim.step(op);
    }
    sim
}

#[test]
fn a_multi_edit_that_cannot_be_placed_whole_leaves_the_text_as_it_was() {
    let rep = |old: &str, new: &str| Replacement {
        old: old.into(),
        new: new.into(),
        replace_all: false,
    };
    // The newer replacement reverts; the older one's text is gone (changed by hand since).
    let change = Change::MultiEdit {
        edits: vec![rep("a", "zzz"), rep("b", "x1")],
    };
    let mut state = "x1\ny2\n".to_string();
    assert_eq!(revert(&mut state, &change), Err(Placement::Missing));
    assert_eq!(state, "x1\ny2\n");
    let whole = Change::MultiEdit {
        edits: vec![rep("a", "y"), rep("b", "x1")],
    };
    assert!(revert(&mut state, &whole).is_ok());
    assert_eq!(state, "b\na2\n");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// With only recorded edits, every line is attributed exactly as the reference says: no
    /// line is off by one, none is left unexplained that an edit wrote.
    #[test]
    fn recorded_edits_are_attributed_exactly(
        initial in 0..12usize,
        written in any::<bool>(),
        ops in proptest::collection::vec(op(), 0..25),
    ) {
        let ops: Vec<Op> = ops.into_iter().filter(|o| !matches!(o, Op::Hand { .. })).collect();
        let sim = run(initial, written, &ops);
        let b = blame(&sim.text(), &sim.changes);
        prop_assert_eq!(&b.text, &sim.text());
        prop_assert_eq!(b.lines, expected(&sim.lines));
    }

    /// As of any cut, the file is the reference's file after that many edits, attributed as
    /// the reference attributed it then.
    #[test]
    fn blame_at_any_cut_equals_the_reference_then(
        initial in 0..8usize,
        ops in proptest::collection::vec(op(), 0..15),
        cut in 0..16usize,
    ) {
        let ops: Vec<Op> = ops.into_iter().filter(|o| !matches!(o, Op::Hand { .. })).collect();
        let sim = run(initial, true, &ops);
        let cut = cut.min(sim.changes.len());
        let b = blame_at(Some(&sim.text()), &sim.changes, cut);
        if cut == 0 {
            // Before the first Write, whether the file existed is unknown.
            prop_assert_eq!(b, None);
            return Ok(());
        }
        let b = b.expect("every cut after a Write can be recovered");
        let then = sim.snapshots[cut - 1].clone();
        prop_assert_eq!(&b.text, &Sim::joined(&then));
        prop_assert_eq!(b.lines, expected(&then));
    }

    /// With a person's edits in between, an attribution may be withheld (an edit whose text
    /// was changed by hand cannot be placed) but is never wrong: every attributed line was
    /// written by that edit, and a person's line is never given to a session.
    #[test]
    fn with_hand_edits_attribution_is_never_wrong(
        initial in 0..12usize,
        written in any::<bool>(),
        ops in proptest::collection::vec(op(), 0..25),
    ) {
        let sim = run(initial, written, &ops);
        let b = blame(&sim.text(), &sim.changes);
        let want = expected(&sim.lines);
        prop_assert_eq!(b.lines.len(), want.len());
        for (i, (got, want)) in b.lines.iter().zip(&want).enumerate() {
            if *got != LineOrigin::Unexplained {
                prop_assert_eq!(got, want, "line {}", i + 1);
            }
        }
        if sim.hand_edits == 0 {
            prop_assert_eq!(b.lines, want);
        }
    }
}

/// A run of the reference in which a person commits the file after some of the steps
/// (`commits[k]`: after step `k`), each step 10 seconds after the last from 09:00 and each
/// commit 5 seconds after its step; lines from before the record are committed first. The
/// record's times, the fake repository (each line's commit: the first that held it), and
/// every line text the file had held by the end of each step (`seen[k]`: after `k` steps).
fn run_with_commits(
    initial: usize,
    written: bool,
    ops: &[(Op, bool)],
) -> (Sim, Vec<i64>, Repo, Vec<std::collections::HashSet<String>>) {
    let step_ms = |k: usize| NINE + k as i64 * 10_000;
    let mut sim = Sim::new(initial, written);
    let mut times = vec![step_ms(0); sim.changes.len()];
    let mut repo = Repo { commits: vec![] };
    let mut seen = vec![
        sim.lines
            .iter()
            .map(|(l, _)| l.clone())
            .collect::<std::collections::HashSet<_>>(),
    ];
    let commit = |repo: &mut Repo, sim: &Sim, ms: i64| {
        let by: Vec<String> = sim
            .lines
            .iter()
            .map(|(l, _)| {
                repo.commits
                    .iter()
                    .find(|c| c.text.split_inclusive('\n').any(|t| t == l))
                    .map_or(format!("c{}", repo.commits.len()), |c| c.hash.clone())
            })
            .collect();
        let hash = format!("c{}", repo.commits.len());
        repo.commits.push(FakeCommit {
            ms,
            hash,
            text: sim.text(),
            by,
        });
    };
    if !written {
        commit(&mut repo, &sim, step_ms(0) - 5_000);
    }
    for (k, (op, commits)) in ops.iter().enumerate() {
        let recorded = sim.changes.len();
        sim.step(op);
        times.extend(std::iter::repeat_n(
            step_ms(k + 1),
            sim.changes.len() - recorded,
        ));
        let mut now = seen[k].clone();
        now.extend(sim.lines.iter().map(|(l, _)| l.clone()));
        seen.push(now);
        if *commits {
            commit(&mut repo, &sim, step_ms(k + 1) + 5_000);
        }
    }
    (sim, times, repo, seen)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// As of any moment, with a person's edits and commits in between, `blame_at` shows no
    /// line the file had not held by then: every line shown had been written, and its edit
    /// or commit had been made, at or before the moment; and with no person's edit, it shows
    /// the file exactly as it stood.
    #[test]
    fn blame_at_never_shows_a_line_written_after_its_moment(
        initial in 0..8usize,
        written in any::<bool>(),
        ops in proptest::collection::vec((op(), any::<bool>()), 0..20),
        at in 0..21usize,
    ) {
        let (sim, times, mut repo, seen) = run_with_commits(initial, written, &ops);
        let k = at.min(ops.len());
        // Just before step k + 1: after step k and its commit.
        let moment = NINE + k as i64 * 10_000 + 7_000;
        let cut = times.iter().filter(|t| **t <= moment).count();
        let record = Record { changes: &sim.changes, times: &times, restores: &[] };
        let b = super::blame_at(Some(&sim.text()), record, cut, moment, &mut repo)
            .expect("with a repository the file at any moment is known");
        for (n, (line, origin)) in b.text.split_inclusive('\n').zip(&b.lines).enumerate() {
            if *origin == LineOrigin::Uncertain {
                continue;
            }
            prop_assert!(seen[k].contains(line), "line {} {:?} written later", n + 1, line);
            match origin {
                LineOrigin::Edit(i) => prop_assert!(*i < cut, "line {} by a later edit", n + 1),
                LineOrigin::Commit(c) => prop_assert!(b.commits[*c].ts_ms <= moment),
                _ => {}
            }
        }
        let hand = ops[..k].iter().any(|(op, _)| matches!(op, Op::Hand { .. }));
        if !hand {
            prop_assert_eq!(b.text, Sim::joined(&run(initial, written, &ops[..k].iter().map(|(o, _)| o.clone()).collect::<Vec<_>>()).lines));
        }
    }

    /// With a repository, a person's edits and commits in between, each line of the file now
    /// names an edit whose result held it, a commit that holds it, or, when the last commit
    /// does not hold it, no commit.
    #[test]
    fn with_a_repository_every_line_names_an_edit_or_commit_that_held_it(
        initial in 0..8usize,
        written in any::<bool>(),
        ops in proptest::collection::vec((op(), any::<bool>()), 0..20),
    ) {
        let (sim, times, mut repo, _) = run_with_commits(initial, written, &ops);
        let record = Record { changes: &sim.changes, times: &times, restores: &[] };
        let b = super::blame(&sim.text(), record, &mut repo);
        prop_assert_eq!(&b.text, &sim.text());
        let last = repo.commits.last().map_or(String::new(), |c| c.text.clone());
        for (n, (line, origin)) in b.text.split_inclusive('\n').zip(&b.lines).enumerate() {
            let holds = |text: &str| text.split_inclusive('\n').any(|l| l == line);
            match origin {
                LineOrigin::Edit(i) => prop_assert!(
                    sim.snapshots[*i].iter().any(|(l, _)| l == line),
                    "line {} given to edit {}, whose result did not hold it", n + 1, i
                ),
                LineOrigin::Commit(c) => {
                    let hash = &b.commits[*c].hash;
                    let c = repo.commits.iter().find(|k| k.hash == *hash).unwrap();
                    prop_assert!(holds(&c.text), "line {} given to {}", n + 1, hash);
                }
                LineOrigin::Uncommitted => {
                    prop_assert!(!holds(&last), "line {} is committed", n + 1)
                }
                other => prop_assert!(false, "line {}: {:?}", n + 1, other),
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Checking where an edit's old text would occur without building the text before it
    /// answers as building it does, overlaps and repeats included (a two-letter alphabet
    /// makes them common; `é` puts char boundaries inside the window).
    #[test]
    fn placing_an_edit_without_building_the_text_before_agrees_with_building_it(
        after in "[abé\n]{0,24}",
        old in "[abé]{1,4}",
        new in "[abé]{1,4}",
    ) {
        let r = Replacement { old: old.clone(), new: new.clone(), replace_all: false };
        for start in match_positions(&after, &new) {
            let mut before = after.clone();
            before.replace_range(start..start + new.len(), &old);
            let mut at = match_positions(&before, &old);
            let built = matches!((at.next(), at.next()), (Some(i), None) if i == start);
            prop_assert_eq!(old_only_at(&after, start, &r), built, "start {}", start);
        }
    }
}

#[test]
fn without_a_repository_or_a_write_a_moment_is_walked_back_from_the_file_as_it_is() {
    // A file older than the record, two edits, no repository: the moment after the first
    // edit is the file as it is with the second undone.
    let changes = [edit("a\n", "A\n"), edit("b\n", "B\n")];
    let at1 = blame_at(Some("A\nB\nc\n"), &changes, 1).unwrap();
    assert_eq!(at1.text, "A\nb\nc\n");
    let unsure = LineOrigin::Uncertain;
    assert_eq!(at1.lines, vec![E(0), unsure, unsure]);
    assert_eq!(at1.placement, vec![Placement::Placed, Placement::Later]);
    // The second edit's line was changed by hand since: the walk stops there, so the moment
    // before it cannot be told, and the one after it is the file as it is.
    let changed = "A\nX\nc\n";
    assert_eq!(blame_at(Some(changed), &changes, 1), None);
    let at2 = blame_at(Some(changed), &changes, 2).unwrap();
    assert_eq!(at2.text, changed);
    assert_eq!(at2.lines, vec![unsure; 3]);
    assert_eq!(at2.placement[0], Placement::Behind);
}

#[test]
fn without_a_repository_a_moment_before_a_write_that_replaced_the_file_is_not_told() {
    // The write owns every line and said nothing of what it replaced: the walk back from the
    // file as it is stops there, so no moment before it, however many edits back, is known,
    // and the file as the write left it (a state after the moment) is never shown instead.
    let changes = [edit("a\n", "A\n"), edit("b\n", "B\n"), write("x\n")];
    for cut in 0..changes.len() {
        assert_eq!(blame_at(Some("x\n"), &changes, cut), None, "cut {cut}");
    }
}

#[test]
fn a_write_over_an_empty_or_absent_file_holds_nothing_older_so_earlier_edits_are_overwritten() {
    // The file was empty (or absent) when the write made it: the edit before it touched a
    // file the write replaced whole, so it was overwritten, not one that failed to place.
    for before in [Change::created("x\n"), write_over("", "x\n")] {
        let b = blame("x\n", &[edit("a\n", "b\n"), before]);
        assert_eq!(b.lines, vec![E(1)]);
        assert_eq!(b.placement, vec![Placement::Overwritten, Placement::Placed]);
    }
}

#[test]
fn a_hand_change_before_a_write_does_not_hide_the_recorded_edit_under_it() {
    // c1 holds "a\nb\n"; an agent's edit makes b B at 09:05; a person rewrites that line by
    // hand; the Write at 09:10 says what it replaced. The walk goes on from the file the
    // repository and the record rebuild, where the edit is, not from the one the tool saw.
    let repo = Repo::of(&[(0, "c1", "a\nb\n", &["c1", "c1"])]);
    let now = "a\nB by hand\nc\n";
    let changes = [edit("b\n", "B\n"), write_over("a\nB by hand\n", now)];
    let times = at_minutes(&[5, 10]);
    let record = Record {
        changes: &changes,
        times: &times,
        restores: &[],
    };
    let b = super::blame(now, record, &mut { repo });
    assert_eq!(b.placement, vec![Placement::Placed, Placement::Placed]);
    assert_eq!(
        said(&b),
        vec![Said::Commit("c1"), Said::Uncommitted, Said::Edit(1)]
    );
}

#[test]
fn a_unified_diff_that_cannot_be_placed_leaves_the_lines_it_named_uncertain() {
    // Its context holds a line typed by hand and never recorded, so it lands nowhere; the
    // lines it names (context and removed alike, not its file header) may be what it changed.
    let changes = [
        write("a\nb\nz\n"),
        Change::UnifiedDiff {
            move_to: None,
            diff: "--- a/f\n+++ b/f\n@@ -2,2 +2,2 @@\n b\n-hand\n+B\n".into(),
        },
    ];
    let b = blame_at(Some("a\nb\nB\nz\n"), &changes, 2).unwrap();
    assert_eq!(b.text, "a\nb\nz\n");
    assert_eq!(b.lines, vec![E(0), LineOrigin::Uncertain, E(0)]);
    assert_ne!(b.placement[1], Placement::Placed);
}

#[test]
fn a_hunk_not_placed_says_whether_its_lines_were_gone_or_there_twice() {
    let hunk = |old: &str, new: &str| Change::Patch {
        move_to: None,
        hunks: vec![Hunk {
            header: None,
            lines: vec![format!("-{old}"), format!("+{new}")],
            end_of_file: false,
        }],
    };
    let gone = blame("a\nc\n", &[hunk("b", "B")]);
    assert_eq!(gone.placement, vec![Placement::Missing]);
    let twice = blame("B\nB\n", &[hunk("b", "B")]);
    assert_eq!(twice.placement, vec![Placement::Ambiguous]);
}

#[test]
fn a_replace_all_replayed_forward_rewrites_every_place_and_only_those() {
    let changes = [
        write("foo\nbar\nfoo\n"),
        replace_all("foo", "baz"),
        edit("bar\n", "BAR\n"),
    ];
    let b = blame_at(Some("baz\nBAR\nbaz\n"), &changes, 2).unwrap();
    assert_eq!(b.text, "baz\nbar\nbaz\n");
    assert_eq!(b.lines, vec![E(1), E(0), E(1)]);
}

/// `changes` as a record whose restores are `restores`, the edits a minute apart.
fn blame_restored(current: &str, changes: &[Change], restores: &[(usize, usize)]) -> Blame {
    let times = minutes(changes);
    let record = Record {
        changes,
        times: &times,
        restores,
    };
    super::blame(current, record, &mut None::<FileHistory>)
}

#[test]
fn a_restored_line_keeps_the_origin_it_had_in_the_state_restored() {
    // 0 writes a and b; 1 changes b to c; 2 restores the file as it stood after 0 (the
    // restore's tool said what it replaced, as `peat restore` records it).
    let changes = [
        write("a\nb\n"),
        edit("b\n", "c\n"),
        write_over("a\nc\n", "a\nb\n"),
    ];
    let b = blame_restored("a\nb\n", &changes, &[(2, 1)]);
    assert_eq!(b.lines, vec![E(0), E(0)]);
    assert_eq!(b.placement, vec![Placement::Placed; 3]);
    // Without the restore known, the write of b is the restore's own, as any write's.
    let b = blame_restored("a\nb\n", &changes, &[]);
    assert_eq!(b.lines, vec![E(0), E(2)]);
}

#[test]
fn an_undone_restore_gives_back_the_lines_it_replaced_to_their_edits() {
    // 3 undoes the restore 2: the file as it stood after 0, 1 and nothing of 2.
    let changes = [
        write("a\nb\n"),
        edit("b\n", "c\n"),
        write_over("a\nc\n", "a\nb\n"),
        write_over("a\nb\n", "a\nc\n"),
    ];
    let b = blame_restored("a\nc\n", &changes, &[(2, 1), (3, 2)]);
    assert_eq!(b.lines, vec![E(0), E(1)]);
}

#[test]
fn what_a_restore_wrote_beyond_the_state_restored_is_its_own_and_later_edits_theirs() {
    // The restore kept a line the state it restored did not hold (a person's, saved with
    // --force is the like): that line is the restore's; 3 then edits a.
    let changes = [
        write("a\nb\n"),
        edit("b\n", "c\n"),
        write_over("a\nc\n", "a\nb\nkept\n"),
        edit("a\n", "A\n"),
    ];
    let b = blame_restored("A\nb\nkept\n", &changes, &[(2, 1)]);
    assert_eq!(b.lines, vec![E(3), E(0), E(2)]);
}

#[test]
fn blame_at_after_a_restore_shows_the_restored_lines_with_their_origins() {
    let changes = [
        write("a\nb\n"),
        edit("b\n", "c\n"),
        write_over("a\nc\n", "a\nb\n"),
        edit("a\n", "A\n"),
    ];
    let times = minutes(&changes);
    let record = Record {
        changes: &changes,
        times: &times,
        restores: &[(2, 1)],
    };
    // Just after the restore, before 3: forward from the write that owns every line.
    let moment = NINE + 3 * MINUTE - 1;
    let b = super::blame_at(Some("A\nb\n"), record, 3, moment, &mut None::<FileHistory>).unwrap();
    assert_eq!(b.text, "a\nb\n");
    assert_eq!(b.lines, vec![E(0), E(0)]);
}

#[test]
fn a_restore_of_a_state_older_than_the_walk_owns_what_it_wrote() {
    // The walk replays from the write 1 (it owns every line, nothing says what it replaced):
    // the state after edit 0 that 3 restores lies behind it, so 3 owns the lines it put back,
    // even the `a` that 1 also wrote (1's `a` is not the one 0 wrote and 3 restored).
    let changes = [
        write("a\nz\n"),
        write("a\nb\n"),
        edit("a\n", "q\n"),
        write_over("q\nb\n", "a\nz\n"),
    ];
    let b = blame_restored("a\nz\n", &changes, &[(3, 1)]);
    assert_eq!(b.lines, vec![E(3), E(3)]);
}
