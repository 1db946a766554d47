//! `peat resume` through the real binary: the command that resumes a session in its own
//! harness and folder, a subagent resumed through the session that started it, and `--exec`
//! running the harness there.

use serde_json::{Value, json};
use std::path::Path;

use crate::blame::{prompt, tool, transcript};
use crate::support::{Claude, Env, SESSION_A};

fn fixture(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_claude_session_resumes_with_claude_resume_in_its_folder() {
    let env = Env::new();
    let t = env.path("a.jsonl");
    Claude::session_of(SESSION_A, 1).write(&t);
    env.run(&["capture", &t.to_string_lossy()]).ok();
    let r = env.run(&["resume", &SESSION_A[..8]]).ok();
    assert_eq!(
        r.stdout,
        format!("cd /home/dev/acme-api && claude --resume {SESSION_A}\n")
    );
    let j: Value =
        serde_json::from_str(&env.run(&["resume", &SESSION_A[..8], "--json"]).ok().stdout).unwrap();
    assert_eq!(
        j["argv"],
        serde_json::json!(["claude", "--resume", SESSION_A])
    );
    assert_eq!(j["cwd"], "/home/dev/acme-api");
    assert_eq!(j["agent"], "claude");
}

#[test]
fn a_codex_session_resumes_with_codex_resume() {
    let env = Env::new();
    env.run(&["capture", &fixture("codex/envelope_0_40.jsonl")])
        .ok();
    let r = env.run(&["resume", "0199a1b2"]).ok();
    assert_eq!(
        r.stdout,
        "cd /Users/dev/acme-web && codex resume 0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b\n"
    );
}

#[test]
fn a_subagent_is_resumed_through_the_session_that_started_it() {
    let env = Env::new();
    let sub = fixture(
        "claude/3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b/subagents/agent-acompact-5d1e0f.jsonl",
    );
    let t = env.path("a.jsonl");
    Claude::session_of(SESSION_A, 1).write(&t);
    env.run(&["capture", &t.to_string_lossy(), &sub]).ok();
    let sessions: Value =
        serde_json::from_str(&env.run(&["sessions", "--json"]).ok().stdout).unwrap();
    let child = sessions
        .as_array()
        .into_iter()
        .flatten()
        .chain(sessions["sessions"].as_array().into_iter().flatten())
        .filter_map(|s| s["session"].as_str())
        .find(|s| s.contains('/'))
        .unwrap_or_else(|| panic!("no subagent in {sessions}"))
        .to_string();
    let r = env.run(&["resume", &child]).ok();
    assert_eq!(
        r.stdout,
        "cd /home/dev/acme-api && claude --resume 3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b\n"
    );
    assert!(r.stderr.contains("is a subagent: resuming"), "{}", r.stderr);
}

#[test]
fn exec_runs_the_harness_in_the_sessions_folder_and_exits_as_it_does() {
    let env = Env::new();
    // The session ran in the test's work folder; a `claude` on PATH records how it was run.
    let work = env.path("work");
    let mut c = Claude::session_of(SESSION_A, 1);
    for l in &mut c.lines {
        *l = l.replace("/home/dev/acme-api", &work.to_string_lossy());
    }
    let t = env.path("a.jsonl");
    c.write(&t);
    env.run(&["capture", &t.to_string_lossy()]).ok();
    let bin = env.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("claude");
    std::fs::write(
        &fake,
        "#!/bin/sh\npwd > \"$RAN\"\necho \"$@\" >> \"$RAN\"\nexit 7\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ran = env.path("ran.txt");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = env
        .cmd()
        .env("PATH", path)
        .env("RAN", &ran)
        .current_dir(env.path("home"))
        .args(["resume", &SESSION_A[..8], "--exec"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7), "{out:?}");
    let said = std::fs::read_to_string(&ran).unwrap();
    let real = std::fs::canonicalize(&work).unwrap();
    assert_eq!(said, format!("{}\n--resume {SESSION_A}\n", real.display()));
}

#[test]
fn exec_without_the_harness_on_path_says_what_to_install() {
    let env = Env::new();
    let work = env.path("work");
    let mut c = Claude::session_of(SESSION_A, 1);
    for l in &mut c.lines {
        *l = l.replace("/home/dev/acme-api", &work.to_string_lossy());
    }
    let t = env.path("a.jsonl");
    c.write(&t);
    env.run(&["capture", &t.to_string_lossy()]).ok();
    let r = crate::support::Run::of(
        env.cmd()
            .env("PATH", env.path("nothing-here"))
            .args(["resume", &SESSION_A[..8], "--exec"])
            .output()
            .unwrap(),
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("claude is not on PATH"), "{}", r.stderr);
}

#[test]
fn a_restore_cannot_be_resumed_and_says_how_to_undo_it() {
    let env = Env::new();
    let work = env.path("work");
    let app = work.join("app.py").to_string_lossy().into_owned();
    let mut a = vec![prompt(SESSION_A, 1, 5, "write the app")];
    a.extend(tool(
        SESSION_A,
        2,
        5,
        "Write",
        json!({"file_path": app, "content": "one\n"}),
    ));
    a.extend(tool(
        SESSION_A,
        4,
        6,
        "Edit",
        json!({"file_path": app, "old_string": "one\n", "new_string": "two\n", "replace_all": false}),
    ));
    std::fs::write(&app, "two\n").unwrap();
    let t = transcript(&env, "a.jsonl", &a);
    env.run(&["capture", &t]).ok();
    let blamed: Value =
        serde_json::from_str(&env.run(&["blame", "app.py", "--json"]).ok().stdout).unwrap();
    let before = format!("{}:{}", &SESSION_A[..8], blamed["edits"][1]["seq"]);
    env.run(&["restore", "app.py", "--before", &before, "--yes"])
        .ok();
    let r = env.run(&["resume", "restore-"]);
    assert_ne!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains("no command to resume"), "{}", r.stderr);
    assert!(r.stderr.contains("peat restore --undo"), "{}", r.stderr);
}

#[test]
fn an_unknown_session_is_a_clear_error() {
    let env = Env::new();
    let t = env.path("a.jsonl");
    Claude::session_of(SESSION_A, 1).write(&t);
    env.run(&["capture", &t.to_string_lossy()]).ok();
    let r = env.run(&["resume", "nosuchsession"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("no session matches"), "{}", r.stderr);
}
