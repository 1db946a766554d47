//! `peat diff SESSION`: the net change a session (a turn, a range of its steps) made, per
//! file, through the real binary in a real git repository (and a jj one). Where the session's
//! changes were committed, its diff is `git diff` (`jj diff --git`) between the commits before
//! and after it.

use serde_json::{Value, json};

use crate::blame::{as_subagent, prompt, tool, transcript};
use crate::blame_history::{Repo, Vcs};
use crate::support::{Env, SESSION_A, SESSION_B, have_jj, require_git};
use crate::width::on_terminal;

const ADD: &str = "def add(a, b):\n    return a + b\n";
const WRITTEN: &str = "\"\"\"Arithmetic.\"\"\"\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";

/// The work folder as a git repository whose commits Pat makes at given minutes past 09:00.
fn git_repo(env: &Env) -> Repo<'_> {
    require_git();
    Repo::new(env, Vcs::Git)
}

/// The absolute path of `rel` in `repo`, as an agent records it.
fn abs(repo: &Repo, rel: &str) -> String {
    repo.file(rel).to_string_lossy().into_owned()
}

/// An Edit of `file` at `minute`, as session `session`'s step `n`.
fn edit(session: &str, n: u32, minute: u32, file: &str, old: &str, new: &str) -> [String; 2] {
    tool(
        session,
        n,
        minute,
        "Edit",
        json!({"file_path": file, "old_string": old, "new_string": new, "replace_all": false}),
    )
}

/// 09:00 Pat commits `src/calc.py` (before). Session A: 09:05 "add subtraction", 09:06 an
/// Edit (step 2); 09:07 "a docstring", 09:08 a Write of the whole file keeping its lines
/// (step 5), and 09:09 a Write of a new `NOTES.md` (step 7). The working copy follows; Pat
/// commits it all at 09:15 (after).
fn one_session(env: &Env, repo: &Repo) -> (String, String) {
    let calc = abs(repo, "src/calc.py");
    repo.put("src/calc.py", ADD);
    repo.put("README.md", "# calc\n");
    let before = repo.commit(0, "add");
    let mut a = vec![prompt(SESSION_A, 1, 5, "add subtraction")];
    a.extend(edit(
        SESSION_A,
        2,
        6,
        &calc,
        "    return a + b\n",
        "    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
    ));
    a.push(prompt(SESSION_A, 4, 7, "a docstring, and notes"));
    a.extend(tool(
        SESSION_A,
        5,
        8,
        "Write",
        json!({"file_path": calc, "content": WRITTEN}),
    ));
    a.extend(tool(
        SESSION_A,
        7,
        9,
        "Write",
        json!({"file_path": abs(repo, "NOTES.md"), "content": "sub is new\n"}),
    ));
    repo.put("src/calc.py", WRITTEN);
    repo.put("NOTES.md", "sub is new\n");
    let after = repo.commit(15, "the session's work");
    let t = transcript(env, "a.jsonl", &a);
    env.run(&["capture", &t]).ok();
    (before, after)
}

/// The hunks of a unified diff, each as its lines (` `, `-`, `+` and the text), per file:
/// what two diffs of the same change share whatever their headers and notes.
fn hunks_of(diff: &str) -> Vec<(String, Vec<Vec<String>>)> {
    let mut files: Vec<(String, Vec<Vec<String>>)> = Vec::new();
    let (mut old_left, mut new_left) = (0usize, 0usize);
    for line in diff.lines() {
        if old_left > 0 || new_left > 0 {
            match line.as_bytes().first() {
                Some(b'-') => old_left -= 1,
                Some(b'+') => new_left -= 1,
                _ => {
                    old_left -= 1;
                    new_left -= 1;
                }
            }
            let (_, hunks) = files.last_mut().unwrap();
            hunks.last_mut().unwrap().push(line.to_string());
        } else if let Some(path) = line.strip_prefix("diff --git a/") {
            let path = path.split(" b/").next().unwrap().to_string();
            files.push((path, Vec::new()));
        } else if let Some(counts) = line.strip_prefix("@@ -") {
            let counts = counts.split(" @@").next().unwrap();
            let (old, new) = counts.split_once(" +").unwrap();
            let n = |side: &str| side.split_once(',').map_or(1, |(_, n)| n.parse().unwrap());
            (old_left, new_left) = (n(old), n(new));
            files.last_mut().unwrap().1.push(Vec::new());
        }
    }
    files
}

/// The seq of the tool call on line `line` (from 0) of a transcript: the ledger gives each
/// line 16 seqs, and a tool call takes the third.
fn call(line: u32) -> u32 {
    line * 16 + 2
}

fn json_of(env: &Env, args: &[&str]) -> Value {
    let r = env.run(args).ok();
    serde_json::from_str(&r.stdout).unwrap()
}

#[test]
fn a_sessions_diff_is_git_diff_between_the_commits_before_and_after_it() {
    let env = Env::new();
    let repo = git_repo(&env);
    let (before, after) = one_session(&env, &repo);
    let ours = env.run(&["diff", "3f6c2a9e"]).ok().stdout;
    let git = repo.git(
        30,
        &["diff", &before, &after, "--", "NOTES.md", "src/calc.py"],
    );
    assert!(!hunks_of(&git).is_empty(), "{git}");
    assert_eq!(
        hunks_of(&ours),
        hunks_of(&git),
        "peat:\n{ours}\ngit:\n{git}"
    );
    assert!(ours.contains("--- /dev/null\n+++ b/NOTES.md\n"), "{ours}");
    assert!(
        ours.contains("--- a/src/calc.py\n+++ b/src/calc.py\n"),
        "{ours}"
    );
}

#[test]
fn in_a_jj_repository_a_sessions_diff_is_jj_diff_between_the_commits_before_and_after_it() {
    if !have_jj() {
        return;
    }
    let env = Env::new();
    let repo = Repo::new(&env, Vcs::Jj { colocate: false });
    let (before, after) = one_session(&env, &repo);
    let ours = env.run(&["diff", "3f6c2a9e"]).ok().stdout;
    let jj = repo.jj(
        30,
        &[
            "diff",
            "--git",
            "--from",
            &before,
            "--to",
            &after,
            "NOTES.md",
            "src/calc.py",
        ],
    );
    assert!(!hunks_of(&jj).is_empty(), "{jj}");
    assert_eq!(hunks_of(&ours), hunks_of(&jj), "peat:\n{ours}\njj:\n{jj}");
}

#[test]
fn each_hunk_ends_in_the_command_that_shows_the_step_and_prompt_behind_it() {
    let env = Env::new();
    let repo = git_repo(&env);
    one_session(&env, &repo);
    let out = env.run(&["diff", "3f6c2a9e"]).ok().stdout;
    // The docstring is the Write's (step 5); `sub` is the Edit's (step 2), which the Write
    // kept.
    let docstring = out.find("+\"\"\"Arithmetic.\"\"\"").expect(&out);
    let sub = out.find("+def sub(a, b):").expect(&out);
    let show = |prompt: &str, line: u32| {
        let said = format!("\"{prompt}\"  ▸ peat show 3f6c2a9e {}", call(line));
        out.find(&said)
            .unwrap_or_else(|| panic!("no {said:?} in {out}"))
    };
    let (edit, write) = (
        show("add subtraction", 1),
        show("a docstring, and notes", 4),
    );
    assert!(docstring < write && sub < edit, "{out}");
    assert!(edit < write, "hunks in the file's order: {out}");
    show("a docstring, and notes", 6);
}

#[test]
fn a_turn_is_its_prompt_and_the_steps_it_led_to() {
    let env = Env::new();
    let repo = git_repo(&env);
    one_session(&env, &repo);
    // The first turn: the Edit alone, against the committed file.
    let first = json_of(&env, &["diff", &format!("3f6c2a9e:{}", call(1)), "--json"]);
    let files = first["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{first}");
    assert_eq!(files[0]["path"], "src/calc.py");
    assert_eq!(
        (&files[0]["added"], &files[0]["removed"]),
        (&json!(4), &json!(0))
    );
    // The prompts are the first events of lines 0 and 3: seqs 1 and 49.
    assert_eq!((&first["from"], &first["to"]), (&json!(1), &json!(48)));
    // The second turn, named by any seq in it: the Write's docstring and the new notes,
    // from the file as the Edit left it.
    let second = json_of(&env, &["diff", &format!("3f6c2a9e:{}", call(6)), "--json"]);
    let paths: Vec<&Value> = second["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["path"])
        .collect();
    assert_eq!(paths, vec!["NOTES.md", "src/calc.py"], "{second}");
    let calc = &second["files"][1];
    assert_eq!((&calc["added"], &calc["removed"]), (&json!(1), &json!(0)));
    assert_eq!(
        calc["hunks"][0]["lines"][0],
        json!({"op": "add", "text": "\"\"\"Arithmetic.\"\"\""})
    );
    assert_eq!(second["prompt"]["text"], "a docstring, and notes");
    let text = env
        .run(&["diff", &format!("3f6c2a9e:{}", call(6))])
        .ok()
        .stdout;
    assert!(
        text.starts_with("== diff turn 3f6c2a9e:49 · 2 files · +2 -0 ==\n\"a docstring, and notes\"  ▸ peat show 3f6c2a9e 49\n"),
        "{text}"
    );
    // A range of steps is the same as the turn it spans.
    let range = json_of(&env, &["diff", "3f6c2a9e", "48..200", "--json"]);
    assert_eq!(range["files"], second["files"]);
}

#[test]
fn stat_counts_each_files_added_and_removed_lines_as_git_diff_stat_does() {
    let env = Env::new();
    let repo = git_repo(&env);
    let (before, after) = one_session(&env, &repo);
    let ours = env.run(&["diff", "3f6c2a9e", "--stat"]).ok().stdout;
    assert!(ours.contains(" NOTES.md    | +1 -0\n"), "{ours}");
    assert!(ours.contains(" src/calc.py | +5 -0\n"), "{ours}");
    assert!(
        ours.contains(" 2 files changed, 6 insertions(+), 0 deletions(-)\n"),
        "{ours}"
    );
    let numstat = repo.git(30, &["diff", "--numstat", &before, &after]);
    assert_eq!(numstat, "1\t0\tNOTES.md\n5\t0\tsrc/calc.py");
}

#[test]
fn json_gives_files_hunks_lines_and_the_steps_behind_each_hunk() {
    let env = Env::new();
    let repo = git_repo(&env);
    one_session(&env, &repo);
    let doc = json_of(&env, &["diff", "3f6c2a9e", "--json"]);
    assert_eq!(doc["session"], SESSION_A);
    let notes = &doc["files"][0];
    assert_eq!(notes["path"], "NOTES.md");
    assert_eq!(notes["created"], true);
    let hunk = &notes["hunks"][0];
    assert_eq!(hunk["header"], "@@ -0,0 +1 @@");
    assert_eq!(hunk["lines"], json!([{"op": "add", "text": "sub is new"}]));
    let step = &hunk["steps"][0];
    assert_eq!(
        (&step["by"], &step["seq"], &step["in_span"], &step["show"]),
        (
            &json!("edit"),
            &json!(call(6)),
            &json!(true),
            &json!(format!("peat show 3f6c2a9e {}", call(6)))
        )
    );
    assert_eq!(step["prompt"]["text"], "a docstring, and notes");
    let calc = &doc["files"][1];
    let seqs: Vec<&Value> = calc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["seq"])
        .collect();
    assert_eq!(seqs, vec![call(1), call(4)]);
}

/// 09:00 Pat commits a five-line file. Session A edits line 1 (09:06) and line 5 (09:10);
/// between them session B edits line 3 (09:08). Nothing is committed after.
fn interleaved(env: &Env, repo: &Repo) {
    let f = abs(repo, "src/lines.txt");
    repo.put("src/lines.txt", "one\ntwo\nthree\nfour\nfive\n");
    repo.commit(0, "five lines");
    let mut a = vec![prompt(SESSION_A, 1, 5, "shout the ends")];
    a.extend(edit(SESSION_A, 2, 6, &f, "one\n", "ONE\n"));
    a.extend(edit(SESSION_A, 4, 10, &f, "five\n", "FIVE\n"));
    let mut b = vec![prompt(SESSION_B, 1, 7, "shout the middle")];
    b.extend(edit(SESSION_B, 2, 8, &f, "three\n", "THREE\n"));
    repo.put("src/lines.txt", "ONE\ntwo\nTHREE\nfour\nFIVE\n");
    let ta = transcript(env, "a.jsonl", &a);
    let tb = transcript(env, "b.jsonl", &b);
    env.run(&["capture", &ta, &tb]).ok();
}

#[test]
fn another_sessions_edit_in_between_is_in_the_net_change_and_said_under_the_file() {
    let env = Env::new();
    let repo = git_repo(&env);
    interleaved(&env, &repo);
    let out = env.run(&["diff", "3f6c2a9e"]).ok().stdout;
    let hunks = hunks_of(&out);
    let lines = [
        "-one", "+ONE", " two", "-three", "+THREE", " four", "-five", "+FIVE",
    ];
    assert_eq!(
        hunks,
        vec![(
            "src/lines.txt".to_string(),
            vec![lines.iter().map(|l| l.to_string()).collect::<Vec<_>>()]
        )],
        "{out}"
    );
    assert!(
        out.contains("note: an edit by another session landed in between (7a1b2c3d step 18 · 2026-07-14 09:08): its lines are in this diff  ▸ peat show 7a1b2c3d 18\n"),
        "{out}"
    );
    // Under the hunk, A's two steps answered one prompt, and read as one line; B's is its own.
    let causes: Vec<&str> = out.lines().filter(|l| l.starts_with('[')).collect();
    assert_eq!(
        causes,
        [
            "[steps 18, 50 · 2026-07-14 09:06] \"shout the ends\"  ▸ peat show 3f6c2a9e 18",
            "[another session's: 7a1b2c3d step 18 · 2026-07-14 09:08] \"shout the middle\"  ▸ peat show 7a1b2c3d 18",
        ],
        "{out}"
    );
    // B's own diff is its one line, with nothing in between.
    let b = json_of(&env, &["diff", "7a1b2c3d", "--json"]);
    let file = &b["files"][0];
    assert_eq!((&file["added"], &file["removed"]), (&json!(1), &json!(1)));
    assert_eq!(file["between"], json!([]));
    let doc = json_of(&env, &["diff", "3f6c2a9e", "--json"]);
    let between = &doc["files"][0]["between"];
    assert_eq!(between[0]["session"], SESSION_B, "{doc}");
    assert_eq!(between[0]["in_span"], false);
}

#[test]
fn a_hand_edit_a_commit_dates_between_two_steps_is_said_under_the_file() {
    let env = Env::new();
    let repo = git_repo(&env);
    let f = abs(&repo, "src/lines.txt");
    repo.put("src/lines.txt", "one\ntwo\nthree\n");
    repo.commit(0, "three lines");
    let mut a = vec![prompt(SESSION_A, 1, 5, "shout the ends")];
    a.extend(edit(SESSION_A, 2, 6, &f, "one\n", "ONE\n"));
    a.extend(edit(SESSION_A, 4, 10, &f, "three\n", "THREE\n"));
    // Pat changes the middle line by hand and commits it with A's first edit at 09:08.
    repo.put("src/lines.txt", "ONE\ntwo, by hand\nthree\n");
    repo.commit(8, "by hand");
    repo.put("src/lines.txt", "ONE\ntwo, by hand\nTHREE\n");
    let t = transcript(&env, "a.jsonl", &a);
    env.run(&["capture", &t]).ok();
    let out = env.run(&["diff", "3f6c2a9e"]).ok().stdout;
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines.contains(&"-two") && lines.contains(&"+two, by hand"),
        "{out}"
    );
    assert!(
        out.contains("[changed outside the record between 2026-07-14 09:06 and 2026-07-14 09:10]"),
        "the hunk names it too: {out}"
    );
    assert!(
        out.contains("note: changed outside the record in between (by hand or by a shell command, committed between 2026-07-14 09:06 and 2026-07-14 09:10)"),
        "{out}"
    );
    // Its own session's diff has no note, the hand edit being after it.
    let first = env.run(&["diff", "3f6c2a9e", "..20"]).ok().stdout;
    assert!(!first.contains("note:"), "{first}");
    assert!(!first.contains("by hand"), "{first}");
}

#[test]
fn on_a_narrow_terminal_the_diff_is_left_whole_and_only_the_lines_naming_a_step_are_fitted() {
    let env = Env::new();
    let repo = git_repo(&env);
    one_session(&env, &repo);
    let piped = env.run(&["diff", "3f6c2a9e"]).ok().stdout;
    let screen = on_terminal(&env, 30, &["diff", "3f6c2a9e"], &[]);
    assert_eq!(hunks_of(&screen), hunks_of(&piped), "{screen}");
    assert!(
        screen
            .lines()
            .any(|l| l == "diff --git a/src/calc.py b/src/calc.py"),
        "{screen}"
    );
    let commands = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.find('▸').map(|i| l[i..].to_string()))
            .collect()
    };
    assert_eq!(commands(&screen), commands(&piped), "{screen}");
    assert!(
        screen
            .lines()
            .any(|l| l.trim_start() == format!("▸ peat show 3f6c2a9e {}", call(1))),
        "a step's command moves to a line of its own: {screen}"
    );
}

#[test]
fn a_file_the_session_changed_back_is_no_change_and_said_on_stderr() {
    let env = Env::new();
    let repo = git_repo(&env);
    let f = abs(&repo, "src/lines.txt");
    repo.put("src/lines.txt", "one\ntwo\n");
    repo.commit(0, "two lines");
    let mut a = vec![prompt(SESSION_A, 1, 5, "try shouting")];
    a.extend(edit(SESSION_A, 2, 6, &f, "one\n", "ONE\n"));
    a.extend(edit(SESSION_A, 4, 7, &f, "ONE\n", "one\n"));
    let t = transcript(&env, "a.jsonl", &a);
    env.run(&["capture", &t]).ok();
    let r = env.run(&["diff", "3f6c2a9e"]);
    assert_eq!((r.code, r.stdout.as_str()), (1, ""), "{r:?}");
    assert!(
        r.stderr
            .contains("peat: session 3f6c2a9e changed no file\n")
            && r.stderr
                .contains("peat: edited, ended as they began: src/lines.txt\n"),
        "{}",
        r.stderr
    );
    // Its first step alone did change it.
    let first = json_of(&env, &["diff", "3f6c2a9e", "..20", "--json"]);
    assert_eq!(first["files"][0]["added"], 1, "{first}");
    assert_eq!(first["unchanged"], json!([]));
    let r = env.run(&["diff", "3f6c2a9e", "--json"]);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["unchanged"], json!(["src/lines.txt"]), "{doc}");
}

#[test]
fn an_unknown_session_is_a_clear_error() {
    let env = Env::new();
    let repo = git_repo(&env);
    one_session(&env, &repo);
    let r = env.run(&["diff", "deadbeef"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.is_empty(), "{r:?}");
    assert!(
        r.stderr.contains("peat: no session matches \"deadbeef\""),
        "{}",
        r.stderr
    );
    let r = env.run(&["diff", "3f6c2a9e:9999"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .contains(&format!("peat: session {SESSION_A} has no event 9999")),
        "{}",
        r.stderr
    );
    let r = env.run(&["diff", "3f6c2a9e", "9..4"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("not a range of steps"), "{}", r.stderr);
}

#[test]
fn a_sessions_diff_holds_its_subagents_edits_and_a_turn_those_of_the_subagents_it_started() {
    let env = Env::new();
    let repo = git_repo(&env);
    let calc = abs(&repo, "src/calc.py");
    repo.put("src/calc.py", ADD);
    repo.commit(0, "add");
    // Session A: 09:01 "delegate subtraction", 09:02 a Task whose result names agent
    // a1b2c3d, which edits calc.py at 09:03; 09:05 "a docstring", 09:06 A's own Edit.
    let mut a = vec![prompt(SESSION_A, 1, 1, "delegate subtraction")];
    let mut task = tool(
        SESSION_A,
        2,
        2,
        "Task",
        json!({"description": "subtraction", "prompt": "add sub"}),
    );
    let mut result: Value = serde_json::from_str(&task[1]).unwrap();
    result["toolUseResult"] = json!({"status": "completed", "agentId": "a1b2c3d"});
    task[1] = result.to_string();
    a.extend(task);
    a.push(prompt(SESSION_A, 4, 5, "a docstring"));
    a.extend(edit(
        SESSION_A,
        5,
        6,
        &calc,
        "def add(a, b):\n",
        "\"\"\"Arithmetic.\"\"\"\ndef add(a, b):\n",
    ));
    let sub = as_subagent(
        &edit(
            SESSION_A,
            1,
            3,
            &calc,
            "    return a + b\n",
            "    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
        ),
        "a1b2c3d",
    );
    repo.put(
        "src/calc.py",
        "\"\"\"Arithmetic.\"\"\"\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
    );
    let t = transcript(&env, "a.jsonl", &a);
    env.run(&["capture", &t]).ok();
    let dir = env.path(&format!("{SESSION_A}/subagents"));
    std::fs::create_dir_all(&dir).unwrap();
    let s = dir.join("agent-a1b2c3d.jsonl");
    std::fs::write(&s, sub.join("\n") + "\n").unwrap();
    env.run(&["capture", &s.to_string_lossy()]).ok();

    let whole = env.run(&["diff", "3f6c2a9e"]).ok().stdout;
    assert!(whole.contains("\n+    return a - b\n"), "{whole}");
    assert!(whole.contains("\n+\"\"\"Arithmetic.\"\"\"\n"), "{whole}");
    assert!(
        whole.contains("[subagent 3f6c2a9e/a1b2c3d: step"),
        "{whole}"
    );
    assert!(!whole.contains("another session"), "{whole}");
    // The first turn (its prompt is seq 1) is the subagent's edit; the second (seq 49), A's
    // own.
    let first = env.run(&["diff", "3f6c2a9e:1"]).ok().stdout;
    assert!(first.contains("\n+    return a - b\n"), "{first}");
    assert!(!first.contains("Arithmetic"), "{first}");
    let second = env.run(&["diff", "3f6c2a9e:49"]).ok().stdout;
    assert!(second.contains("\n+\"\"\"Arithmetic.\"\"\"\n"), "{second}");
    assert!(!second.contains("\n+    return a - b\n"), "{second}");
}
