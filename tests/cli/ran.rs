//! What the agent ran is searchable: the tool calls (`--kind tool`) and what they printed
//! (`--kind output`), through the real binary.

use crate::support::{Claude, Env, SESSION_A, SESSION_B, files_holding};

/// A failing build's log: hundreds of lines of progress, the error at the very end (past
/// any head a search might read alone).
fn failing_build() -> String {
    let mut log: String = (0..300)
        .map(|i| format!("   Compiling dependency-{i} v0.{i}.0\n"))
        .collect();
    log.push_str(
        "error[E0502]: cannot borrow `v` as mutable because it is also borrowed as immutable\n  \
         --> src/lib.rs:7:5\nerror: could not compile `parser` (lib test) due to 1 previous error",
    );
    log
}

/// Session A ran `cargo test`, which failed (see [`failing_build`]); session B only listed
/// files. Written and captured into `env`.
fn ran_failing_test(env: &Env) {
    let mut a = Claude::new(SESSION_A);
    a.user("make the parser tests pass").bash(
        "toolu_a1",
        "cargo test --lib parser",
        &failing_build(),
        true,
    );
    a.write(&env.path("a.jsonl"));
    let mut b = Claude::new(SESSION_B);
    b.user("what is in the source folder")
        .bash("toolu_b1", "ls src", "lib.rs\nmain.rs", false);
    b.write(&env.path("b.jsonl"));
    let (a, b) = (env.path("a.jsonl"), env.path("b.jsonl"));
    env.run(&["capture", a.to_str().unwrap(), b.to_str().unwrap()])
        .ok();
}

/// The sessions of the hits of `recall ARGS --json`; none when it found nothing
/// (exit 1, the answer still JSON).
fn sessions_found(env: &Env, args: &[&str]) -> Vec<String> {
    let mut all = vec!["recall"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = env.run(&all);
    assert!(out.code <= 1, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["session"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_session_that_ran_a_command_is_found_by_the_command_as_kind_tool() {
    let env = Env::new();
    ran_failing_test(&env);
    assert_eq!(
        sessions_found(&env, &["cargo test", "--kind", "tool"]),
        vec![SESSION_A.to_string()]
    );
    // The person's words are not what was run.
    assert!(sessions_found(&env, &["source folder", "--kind", "tool"]).is_empty());
    // A search in words finds what was said: what was run and printed only when asked for.
    for words in ["cargo test", "E0502"] {
        let out = env.run(&["recall", words, "--json"]);
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        let kinds: Vec<&str> = v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["kind"].as_str().unwrap())
            .collect();
        assert!(
            kinds.iter().all(|k| *k != "tool" && *k != "output"),
            "{words}: {kinds:?}"
        );
    }
    assert_eq!(
        sessions_found(&env, &["E0502", "--kind", "output"]),
        vec![SESSION_A.to_string()]
    );
}

/// The seq of the hit of `recall WORDS --kind KIND` in session A.
fn seq_of(env: &Env, words: &str, kind: &str) -> String {
    let out = env.run(&["recall", words, "--kind", kind, "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let hit = &v["hits"][0];
    assert_eq!(hit["session"], SESSION_A, "{v}");
    hit["seq"].to_string()
}

/// Every `ToolOutput` event of the ledger, as `events --json` prints it.
fn outputs(env: &Env) -> Vec<serde_json::Value> {
    env.dump()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v.to_string().contains("ToolOutput"))
        .collect()
}

#[test]
fn the_session_that_hit_an_error_is_found_by_its_output_as_kind_output() {
    let env = Env::new();
    ran_failing_test(&env);
    // The error is the last line of a long log: the tail is searchable.
    assert_eq!(
        sessions_found(&env, &["E0502", "--kind", "output"]),
        vec![SESSION_A.to_string()]
    );
    assert!(sessions_found(&env, &["main.rs", "--kind", "output"]).contains(&SESSION_B.into()));
    // What was run is not what it printed.
    assert!(sessions_found(&env, &["E0502", "--kind", "tool"]).is_empty());
}

#[test]
fn show_of_a_tool_call_prints_its_output_clipped_and_json_carries_it_whole() {
    let env = Env::new();
    ran_failing_test(&env);
    let seq = seq_of(&env, "cargo test", "tool");
    let text = env.run(&["show", SESSION_A, &seq]).ok().stdout;
    assert!(text.contains("cargo test --lib parser"), "{text}");
    assert!(text.contains("Compiling dependency-0 "), "{text}");
    assert!(text.contains("more bytes cut"), "{text}");
    assert!(
        !text.contains("E0502"),
        "the text answer is clipped: {text}"
    );
    let json = env.run(&["show", SESSION_A, &seq, "--json"]).ok().stdout;
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["printed"]["text"], failing_build(), "{v}");
    assert_eq!(v["printed"]["whole"], true);
    // The output's own event shows the same.
    let at = v["printed"]["seq"].to_string();
    let own = env.run(&["show", SESSION_A, &at, "--json"]).ok().stdout;
    let own: serde_json::Value = serde_json::from_str(&own).unwrap();
    assert_eq!(own["printed"]["text"], failing_build());
}

#[test]
fn the_same_output_in_two_sessions_is_one_blob() {
    let env = Env::new();
    for (session, file) in [(SESSION_A, "a.jsonl"), (SESSION_B, "b.jsonl")] {
        let mut c = Claude::new(session);
        c.user("build it")
            .bash("toolu_1", "cargo build", &failing_build(), true);
        c.write(&env.path(file));
    }
    let (a, b) = (env.path("a.jsonl"), env.path("b.jsonl"));
    env.run(&["capture", a.to_str().unwrap(), b.to_str().unwrap()])
        .ok();
    let blobs: Vec<String> = outputs(&env)
        .iter()
        .map(|v| v.pointer("/event/ToolOutput/output").unwrap().to_string())
        .collect();
    assert_eq!(blobs.len(), 2, "{blobs:?}");
    assert_eq!(blobs[0], blobs[1], "one content-addressed blob for both");
}

#[test]
fn a_secret_in_an_output_is_stored_redacted() {
    const AWS: &str = "AKIAZ7Q2XWJ4VHMK3PLN";
    let env = Env::new();
    let mut c = Claude::new(SESSION_A);
    // In the middle of a long output: only the blob holds it, not the excerpt.
    let printed = format!(
        "{}AWS_ACCESS_KEY_ID={AWS}\n{}",
        failing_build(),
        failing_build()
    );
    c.user("show the environment")
        .bash("toolu_1", "env", &printed, false);
    c.write(&env.path("a.jsonl"));
    env.run(&["capture", env.path("a.jsonl").to_str().unwrap()])
        .ok();
    assert!(files_holding(&env.store(), AWS).is_empty());
    let seq = seq_of(&env, "env", "tool");
    let json = env.run(&["show", SESSION_A, &seq, "--json"]).ok().stdout;
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let text = v["printed"]["text"].as_str().unwrap();
    assert!(!text.contains(AWS), "{text}");
    assert!(
        text.contains("AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key:"),
        "{text}"
    );
    assert_eq!(v["printed"]["whole"], true);
}

/// The Codex session of `tests/fixtures/codex/exec_command_end_2026.jsonl`, which persists
/// `exec_command_end`: a failing `cargo test` (its whole log there, the model's shortened
/// copy in the `function_call_output` after it) and an interrupted `cargo clippy` (no
/// `function_call_output` at all).
const CODEX_SESSION: &str = "019b2d10-7a3e-7c41-9e5f-3a4b5c6d7e80";

fn captured_codex_exec_ends(env: &Env) {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/codex/exec_command_end_2026.jsonl");
    let to = env.path(&format!(
        "rollout-2026-09-14T08-30-00-{CODEX_SESSION}.jsonl"
    ));
    std::fs::copy(&fixture, &to).unwrap();
    env.run(&["capture", to.to_str().unwrap()]).ok();
}

#[test]
fn a_codex_exec_command_end_is_the_output_of_its_call_recorded_once() {
    let env = Env::new();
    captured_codex_exec_ends(&env);
    // The error is the tail of the whole log, which only exec_command_end carries.
    assert_eq!(
        sessions_found(&env, &["error[E0502]", "--kind", "output"]),
        vec![CODEX_SESSION.to_string()]
    );
    // An interrupted call's output is on disk only as its exec_command_end (stderr).
    assert_eq!(
        sessions_found(&env, &["unused variable", "--kind", "output"]),
        vec![CODEX_SESSION.to_string()]
    );
    // One output per call, though the rollout answers the first call twice.
    assert_eq!(outputs(&env).len(), 2, "{:?}", outputs(&env));
    let out = env
        .run(&["recall", "cargo test", "--kind", "tool", "--json"])
        .ok();
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let seq = v["hits"][0]["seq"].to_string();
    let json = env
        .run(&["show", CODEX_SESSION, &seq, "--json"])
        .ok()
        .stdout;
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let text = v["printed"]["text"].as_str().unwrap();
    assert!(text.starts_with("   Compiling dep-0 "), "{text}");
    assert!(text.contains("Compiling dep-299 "), "the whole log: {text}");
    assert!(text.contains("error[E0502]"), "{text}");
    assert_eq!(v["printed"]["whole"], true);
}
