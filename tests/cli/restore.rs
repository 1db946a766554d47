//! `peat restore` through the real binary in real git (and jj) repositories: a file back to
//! before an edit, between two sessions' edits, a deleted file brought back, a whole session
//! undone, a line typed by hand refused, and `--undo` putting back the exact bytes.

use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;

use crate::blame::{as_subagent, prompt, tool, transcript};
use crate::support::{Env, SESSION_A, SESSION_B, git_by, have_jj, peat, require_git};

const SESSION_C: &str = "c0ffee00-0000-4b7e-9f0a-000000000003";

const COMMITTED: &str = "def main():\n    pass\n";
const AFTER_A: &str = "def main():\n    run()\n";
const AFTER_B: &str = "def main():\n    run(fast=True)\n";

/// A repository in the work folder (git, or jj alone) with Pat's commit of `src/app.py` at
/// 09:00; then session A edits it at 09:06 and session B at 09:11 and Writes `src/notes.md`
/// at 09:12; session C edits the notes at 09:30. Nothing after Pat's commit is committed: the
/// working copy is what the sessions left.
struct Story {
    env: Env,
    work: PathBuf,
}

fn git(env: &Env, args: &[&str]) -> String {
    git_by(&env.path("work"), "Pat", "2026-07-14T09:00:00Z", args)
}

fn jj(env: &Env, args: &[&str]) {
    let config = env.path("jj-config.toml");
    std::fs::write(
        &config,
        "[user]\nname = \"Pat\"\nemail = \"pat@example.com\"\n",
    )
    .unwrap();
    let out = Command::new("jj")
        .args(args)
        .current_dir(env.path("work"))
        .env("JJ_CONFIG", &config)
        .env("HOME", env.path("home"))
        .env("JJ_TIMESTAMP", "2026-07-14T09:00:00+00:00")
        .output()
        .unwrap();
    assert!(out.status.success(), "jj {args:?}: {out:?}");
}

fn story(jj_repo: bool) -> Story {
    let env = Env::new();
    let work = env.path("work");
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::write(work.join("src/app.py"), COMMITTED).unwrap();
    if jj_repo {
        jj(&env, &["git", "init", "--no-colocate"]);
        jj(&env, &["commit", "-m", "add the app"]);
    } else {
        git(&env, &["init", "-q", "-b", "main"]);
        git(&env, &["add", "-A"]);
        git(&env, &["commit", "-q", "-m", "add the app"]);
    }
    let app = work.join("src/app.py").to_string_lossy().into_owned();
    let notes = work.join("src/notes.md").to_string_lossy().into_owned();
    let mut a = vec![prompt(SESSION_A, 1, 5, "call run")];
    a.extend(tool(
        SESSION_A,
        2,
        6,
        "Edit",
        json!({"file_path": app, "old_string": "    pass\n", "new_string": "    run()\n", "replace_all": false}),
    ));
    let mut b = vec![prompt(SESSION_B, 1, 10, "make it fast")];
    b.extend(tool(
        SESSION_B,
        2,
        11,
        "Edit",
        json!({"file_path": app, "old_string": "    run()\n", "new_string": "    run(fast=True)\n", "replace_all": false}),
    ));
    b.extend(tool(
        SESSION_B,
        4,
        12,
        "Write",
        json!({"file_path": notes, "content": "fast by default\n"}),
    ));
    let mut c = vec![prompt(SESSION_C, 1, 29, "note why")];
    c.extend(tool(
        SESSION_C,
        2,
        30,
        "Edit",
        json!({"file_path": notes, "old_string": "fast by default\n", "new_string": "fast by default, since users asked\n", "replace_all": false}),
    ));
    std::fs::write(work.join("src/app.py"), AFTER_B).unwrap();
    std::fs::write(
        work.join("src/notes.md"),
        "fast by default, since users asked\n",
    )
    .unwrap();
    let ta = transcript(&env, "a.jsonl", &a);
    let tb = transcript(&env, "b.jsonl", &b);
    let tc = transcript(&env, "c.jsonl", &c);
    env.run(&["capture", &ta, &tb, &tc]).ok();
    Story { env, work }
}

impl Story {
    fn read(&self, rel: &str) -> Option<Vec<u8>> {
        std::fs::read(self.work.join(rel)).ok()
    }

    fn text(&self, rel: &str) -> String {
        String::from_utf8(self.read(rel).expect(rel)).unwrap()
    }

    /// `SESSION:SEQ` of the `n`th recorded edit (oldest first) of `rel`.
    fn edit(&self, rel: &str, n: usize) -> String {
        let r = self.env.run(&["blame", rel, "--json"]).ok();
        let doc: Value = serde_json::from_str(&r.stdout).unwrap();
        let e = &doc["edits"][n];
        format!("{}:{}", &e["session"].as_str().unwrap()[..8], e["seq"])
    }
}

#[test]
fn restore_before_an_edit_prints_the_diff_and_writes_only_with_yes() {
    require_git();
    let s = story(false);
    let before_a = s.edit("src/app.py", 0);
    let r = s.env.run(&["restore", "src/app.py", "--before", &before_a]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stdout.contains("--- a/src/app.py\n+++ b/src/app.py\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("\n-    run(fast=True)\n+    pass\n"),
        "{}",
        r.stdout
    );
    assert!(r.stderr.contains("--yes"), "{}", r.stderr);
    assert_eq!(
        s.text("src/app.py"),
        AFTER_B,
        "nothing written without --yes"
    );

    s.env
        .run(&["restore", "src/app.py", "--before", &before_a, "--yes"])
        .ok();
    assert_eq!(s.text("src/app.py"), COMMITTED);
    // The restore is a session of its own that the file's history names; blame gives the
    // line it put back to Pat's commit, which brought it, not to the restore.
    let r = s.env.run(&["file", "src/app.py", "--json"]).ok();
    assert!(r.stdout.contains("restore-"), "{}", r.stdout);
    let r = s.env.run(&["blame", "src/app.py", "--json"]).ok();
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["origins"]["before_record"], 2, "{doc}");
    assert_eq!(doc["origins"]["edit"], Value::Null, "{doc}");
}

#[test]
fn restore_at_a_moment_between_two_sessions_edits_keeps_the_first_and_drops_the_second() {
    require_git();
    let s = story(false);
    let after_a = s.edit("src/app.py", 0);
    let r = s
        .env
        .run(&["restore", "src/app.py", "--at", &after_a, "--json"]);
    assert_eq!(r.code, 1, "{r:?}");
    let plan: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(plan["applied"], false);
    assert_eq!(plan["files"][0]["action"], "write");
    assert_eq!(plan["files"][0]["certain"], true);
    assert_eq!(plan["files"][0]["edits"][0]["session"], SESSION_A);
    s.env
        .run(&["restore", "src/app.py", "--at", &after_a, "--yes"])
        .ok();
    assert_eq!(s.text("src/app.py"), AFTER_A);
}

#[test]
fn a_deleted_file_comes_back_and_one_that_did_not_exist_then_is_deleted() {
    require_git();
    let s = story(false);
    let written = s.edit("src/notes.md", 0);
    std::fs::remove_file(s.work.join("src/notes.md")).unwrap();
    s.env
        .run(&["restore", "src/notes.md", "--at", &written, "--yes"])
        .ok();
    assert_eq!(s.text("src/notes.md"), "fast by default\n");
    let r = s
        .env
        .run(&["restore", "src/notes.md", "--before", &written, "--yes"])
        .ok();
    assert!(r.stdout.contains("+++ /dev/null"), "{}", r.stdout);
    assert_eq!(s.read("src/notes.md"), None);
}

#[test]
fn a_whole_session_goes_back_to_before_it_started_leaving_files_others_changed_since() {
    require_git();
    let s = story(false);
    let b = &SESSION_B[..8];
    let r = s
        .env
        .run(&["restore", "--session", b, "--before", "--yes"])
        .ok();
    assert_eq!(s.text("src/app.py"), AFTER_A);
    // C edited the notes after B wrote them: listed, and left as C left them.
    assert!(
        r.stdout
            .contains("src/notes.md: left alone: changed since by c0ffee00"),
        "{}",
        r.stdout
    );
    assert_eq!(
        s.text("src/notes.md"),
        "fast by default, since users asked\n"
    );
    // Named, it goes back too: it did not exist before B.
    s.env
        .run(&[
            "restore",
            "--session",
            b,
            "--before",
            "src/notes.md",
            "--yes",
        ])
        .ok();
    assert_eq!(s.read("src/notes.md"), None);
}

#[test]
fn a_turn_goes_back_to_before_its_prompt() {
    require_git();
    let s = story(false);
    let turn = s.edit("src/app.py", 1);
    s.env.run(&["restore", "--turn", &turn, "--yes"]).ok();
    assert_eq!(s.text("src/app.py"), AFTER_A);
}

#[test]
fn a_line_typed_by_hand_is_refused_by_name_and_force_keeps_it_for_undo_byte_for_byte() {
    require_git();
    let s = story(false);
    // Typed by hand, never committed, and no newline at the end.
    let now = format!("{AFTER_B}# tuned by hand");
    std::fs::write(s.work.join("src/app.py"), &now).unwrap();
    let before_a = s.edit("src/app.py", 0);
    let r = s
        .env
        .run(&["restore", "src/app.py", "--before", &before_a, "--yes"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr.contains("src/app.py:3: # tuned by hand"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("--force"), "{}", r.stderr);
    assert_eq!(s.text("src/app.py"), now);

    s.env
        .run(&[
            "restore",
            "src/app.py",
            "--before",
            &before_a,
            "--force",
            "--yes",
        ])
        .ok();
    assert_eq!(s.text("src/app.py"), COMMITTED);
    s.env.run(&["restore", "--undo", "--yes"]).ok();
    assert_eq!(s.read("src/app.py").unwrap(), now.as_bytes());
}

#[test]
fn undo_of_a_restore_that_deleted_a_file_brings_back_its_exact_bytes() {
    require_git();
    let s = story(false);
    let written = s.edit("src/notes.md", 0);
    let was = s.read("src/notes.md").unwrap();
    s.env
        .run(&["restore", "src/notes.md", "--before", &written, "--yes"])
        .ok();
    assert_eq!(s.read("src/notes.md"), None);
    let r = s.env.run(&["restore", "--undo"]);
    assert_eq!(r.code, 1, "asks before undoing too: {r:?}");
    assert_eq!(s.read("src/notes.md"), None);
    s.env.run(&["restore", "--undo", "--yes"]).ok();
    assert_eq!(s.read("src/notes.md").unwrap(), was);
}

#[test]
fn paths_outside_the_repository_and_symlinks_out_of_it_are_refused() {
    require_git();
    let s = story(false);
    let before_a = s.edit("src/app.py", 0);
    let outside = s.env.path("outside.txt");
    std::fs::write(&outside, "keep me\n").unwrap();
    let r = s
        .env
        .run(&["restore", "../outside.txt", "--before", &before_a, "--yes"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("outside"), "{}", r.stderr);
    std::os::unix::fs::symlink(&outside, s.work.join("src/link.txt")).unwrap();
    let r = s
        .env
        .run(&["restore", "src/link.txt", "--before", &before_a, "--yes"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("outside"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep me\n");
}

#[test]
fn the_plan_needs_no_writer_lock_so_a_busy_ledger_does_not_stop_the_diff() {
    require_git();
    let s = story(false);
    let before_a = s.edit("src/app.py", 0);
    let _held = s.env.hold_lock("a capture");
    let r = s.env.run(&["restore", "src/app.py", "--before", &before_a]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stdout.contains("+    pass\n"), "{}", r.stdout);
}

#[test]
fn restore_before_an_edit_in_a_jj_repository() {
    if !have_jj() {
        return;
    }
    let s = story(true);
    let before_b = s.edit("src/app.py", 1);
    s.env
        .run(&["restore", "src/app.py", "--before", &before_b, "--yes"])
        .ok();
    assert_eq!(s.text("src/app.py"), AFTER_A);
    s.env.run(&["restore", "--undo", "--yes"]).ok();
    assert_eq!(s.text("src/app.py"), AFTER_B);
}

#[test]
fn the_help_and_the_skill_say_when_to_restore_and_how_to_undo() {
    let env = Env::new();
    let help = env.run(&["restore", "--help"]).ok().stdout;
    for said in [
        "five minutes ago",
        "--undo",
        "--yes",
        "--force",
        "--session",
    ] {
        assert!(help.contains(said), "{said}: {help}");
    }
    let skill = env.run(&["skill"]).ok().stdout;
    assert!(skill.contains("`--undo --yes` reverts"), "{skill}");
    assert!(skill.contains("peat restore FILE --before"), "{skill}");
}

#[test]
fn a_file_holding_a_secret_is_never_overwritten_since_the_ledger_cannot_keep_it_whole() {
    require_git();
    let s = story(false);
    let now = format!("{AFTER_B}KEY = \"AKIAZ7Q2XWJ4VHMK3PLN\"\n");
    std::fs::write(s.work.join("src/app.py"), &now).unwrap();
    let before_a = s.edit("src/app.py", 0);
    let r = s.env.run(&[
        "restore",
        "src/app.py",
        "--before",
        &before_a,
        "--force",
        "--yes",
    ]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("redaction rules"), "{}", r.stderr);
    assert_eq!(s.text("src/app.py"), now);
}

#[test]
fn without_a_repository_the_record_alone_restores_inside_the_project_folder() {
    let env = Env::new();
    let work = env.path("work");
    std::fs::create_dir_all(work.join("src")).unwrap();
    let app = work.join("src/app.py").to_string_lossy().into_owned();
    let mut a = vec![prompt(SESSION_A, 1, 5, "write the app")];
    a.extend(tool(
        SESSION_A,
        2,
        5,
        "Write",
        json!({"file_path": app, "content": COMMITTED}),
    ));
    a.extend(tool(
        SESSION_A,
        4,
        6,
        "Edit",
        json!({"file_path": app, "old_string": "    pass\n", "new_string": "    run()\n", "replace_all": false}),
    ));
    std::fs::write(work.join("src/app.py"), AFTER_A).unwrap();
    let ta = transcript(&env, "a.jsonl", &a);
    env.run(&["capture", &ta]).ok();
    let s = Story { env, work };
    let edit = s.edit("src/app.py", 1);
    s.env
        .run(&["restore", "src/app.py", "--before", &edit, "--yes"])
        .ok();
    assert_eq!(s.text("src/app.py"), COMMITTED);
    let r = s
        .env
        .run(&["restore", "../a.jsonl", "--before", &edit, "--yes"]);
    assert!(r.stderr.contains("outside"), "{}", r.stderr);
}

/// Session D in the story's repository: at 10:01 it delegates to subagent `a1b2c3d`, whose
/// transcript Writes `src/helper.py` (a file that did not exist) at 10:02; at 10:05 D itself
/// edits `src/app.py`. The working copy is what they left.
fn delegated(s: &Story) -> String {
    let app = s.work.join("src/app.py").to_string_lossy().into_owned();
    let helper = s.work.join("src/helper.py").to_string_lossy().into_owned();
    let mut d = vec![prompt(SESSION_D, 1, 41, "delegate a helper")];
    let mut task = tool(
        SESSION_D,
        2,
        41,
        "Task",
        json!({"description": "helper", "prompt": "write a helper"}),
    );
    let mut result: Value = serde_json::from_str(&task[1]).unwrap();
    result["toolUseResult"] = json!({"status": "completed", "agentId": "a1b2c3d"});
    task[1] = result.to_string();
    d.extend(task);
    d.extend(tool(
        SESSION_D,
        4,
        45,
        "Edit",
        json!({"file_path": app, "old_string": "    run(fast=True)\n", "new_string": "    run(fast=True, helped=True)\n", "replace_all": false}),
    ));
    let sub = as_subagent(
        &tool(
            SESSION_D,
            1,
            42,
            "Write",
            json!({"file_path": helper, "content": "def help():\n    pass\n"}),
        ),
        "a1b2c3d",
    );
    std::fs::write(s.work.join("src/helper.py"), "def help():\n    pass\n").unwrap();
    std::fs::write(
        s.work.join("src/app.py"),
        "def main():\n    run(fast=True, helped=True)\n",
    )
    .unwrap();
    let t = transcript(&s.env, "d.jsonl", &d);
    s.env.run(&["capture", &t]).ok();
    let dir = s.env.path(&format!("{SESSION_D}/subagents"));
    std::fs::create_dir_all(&dir).unwrap();
    let sub_path = dir.join("agent-a1b2c3d.jsonl");
    std::fs::write(&sub_path, sub.join("\n") + "\n").unwrap();
    s.env.run(&["capture", &sub_path.to_string_lossy()]).ok();
    SESSION_D[..8].to_string()
}

const SESSION_D: &str = "d0d0d0d0-0000-4b7e-9f0a-000000000004";

#[test]
fn a_whole_session_goes_back_with_the_files_its_subagents_wrote() {
    require_git();
    let s = story(false);
    let d = delegated(&s);
    let r = s
        .env
        .run(&["restore", "--session", &d, "--before", "--yes"])
        .ok();
    assert_eq!(s.text("src/app.py"), AFTER_B, "{}", r.stdout);
    // The subagent's file did not exist before D started: it goes.
    assert_eq!(s.read("src/helper.py"), None, "{}", r.stdout);
    // And the undo brings both back.
    s.env.run(&["restore", "--undo", "--yes"]).ok();
    assert_eq!(s.text("src/helper.py"), "def help():\n    pass\n");
}

#[test]
fn a_restore_is_a_session_whose_agent_is_peat() {
    require_git();
    let s = story(false);
    let before_a = s.edit("src/app.py", 0);
    s.env
        .run(&["restore", "src/app.py", "--before", &before_a, "--yes"])
        .ok();
    let r = s.env.run(&["sessions", "--json"]).ok();
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let sessions = doc["sessions"]
        .as_array()
        .unwrap_or_else(|| doc.as_array().unwrap());
    let restore = sessions
        .iter()
        .find(|x| x["session"].as_str().unwrap_or("").starts_with("restore-"))
        .unwrap_or_else(|| panic!("no restore session in {doc}"));
    assert_eq!(restore["agent"], "peat", "{restore}");
}

/// `peat ARGS` run under `script`, so that stdin and stdout are a terminal, with `typed` as
/// what the person types. `None` when this machine has no `script`.
fn at_a_terminal(env: &Env, args: &[&str], typed: &str) -> Option<crate::support::Run> {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: no `script` to give peat a terminal");
        return None;
    }
    let base = env.cmd();
    let mut line = String::from(env!("CARGO_BIN_EXE_peat"));
    for a in args {
        line.push_str(&format!(" '{a}'"));
    }
    let mut c = Command::new("script");
    c.args(["-qec", &line, "/dev/null"]).env_clear();
    for (k, v) in base.get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    c.current_dir(env.path("work"));
    Some(crate::support::Run::with_stdin(
        &mut c,
        typed.as_bytes().to_vec(),
    ))
}

#[test]
fn at_a_terminal_the_restore_asks_and_writes_only_on_yes() {
    require_git();
    let s = story(false);
    let before_a = s.edit("src/app.py", 0);
    let args = ["restore", "src/app.py", "--before", &before_a];
    let Some(no) = at_a_terminal(&s.env, &args, "n\n") else {
        return;
    };
    assert!(no.stdout.contains("Apply this restore? [y/N]"), "{no:?}");
    assert_eq!(s.text("src/app.py"), AFTER_B, "{no:?}");
    let yes = at_a_terminal(&s.env, &args, "y\n").unwrap();
    assert!(yes.stdout.contains("-    run(fast=True)"), "{yes:?}");
    assert_eq!(s.text("src/app.py"), COMMITTED, "{yes:?}");
}

/// The session `peat blame` credits with each line of `rel` (`None`: no recorded edit).
fn credited(s: &Story, rel: &str) -> Vec<Option<String>> {
    let r = s.env.run(&["blame", rel, "--json"]).ok();
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    doc["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            l["edit"].as_u64().map(|i| {
                doc["edits"][i as usize]["session"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
        })
        .collect()
}

#[test]
fn after_a_restore_blame_credits_the_restored_lines_to_the_edits_that_wrote_them() {
    require_git();
    let s = story(false);
    let before_b = s.edit("src/app.py", 1);
    s.env
        .run(&["restore", "src/app.py", "--before", &before_b, "--yes"])
        .ok();
    assert_eq!(s.text("src/app.py"), AFTER_A);
    // `run()` is A's again, as it was before B: not the restore's.
    assert_eq!(
        credited(&s, "src/app.py"),
        vec![None, Some(SESSION_A.to_string())]
    );
    // Undone, B's line is B's again.
    s.env.run(&["restore", "--undo", "--yes"]).ok();
    assert_eq!(s.text("src/app.py"), AFTER_B);
    assert_eq!(
        credited(&s, "src/app.py"),
        vec![None, Some(SESSION_B.to_string())]
    );
}

#[test]
fn a_restore_committed_afterwards_still_credits_the_restored_lines_as_of_a_later_moment() {
    require_git();
    let s = story(false);
    let before_b = s.edit("src/app.py", 1);
    // The restore at NOW, committed five minutes later.
    peat(
        &s.env,
        &["restore", "src/app.py", "--before", &before_b, "--yes"],
    )
    .ok();
    git_by(&s.work, "Pat", "2026-07-20T12:05:00Z", &["add", "-A"]);
    git_by(
        &s.work,
        "Pat",
        "2026-07-20T12:05:00Z",
        &["commit", "-q", "-m", "back to run()"],
    );
    // As of a moment after that commit the file is the commit's, whose `run()` came back
    // with the restore: it is still A's, the prompt that first wrote it.
    let r = peat(
        &s.env,
        &[
            "blame",
            "src/app.py",
            "--at",
            "2026-07-20T12:10:00Z",
            "--json",
        ],
    )
    .ok();
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let run = &doc["lines"][1];
    assert_eq!(run["text"], "    run()", "{doc}");
    let edit = run["edit"].as_u64().expect("written by a recorded edit") as usize;
    assert_eq!(doc["edits"][edit]["session"], SESSION_A, "{doc}");
}
