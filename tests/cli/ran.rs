//! What the agent ran is searchable: the tool calls (`--kind tool`) and what they printed
//! (`--kind output`), through the real binary.

use crate::support::{Claude, Env, SESSION_A, SESSION_B};

/// The failing test run every test here looks for.
const BORROW_ERROR: &str = "error[E0502]: cannot borrow `v` as mutable because it is also \
                            borrowed as immutable\n  --> src/lib.rs:7:5";

/// Session A ran `cargo test`, which failed with [`BORROW_ERROR`]; session B only listed
/// files. Written and captured into `env`.
fn ran_failing_test(env: &Env) {
    let mut a = Claude::new(SESSION_A);
    a.user("make the parser tests pass").bash(
        "toolu_a1",
        "cargo test --lib parser",
        BORROW_ERROR,
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
}
