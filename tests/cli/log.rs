//! `peat log` and `peat show SESSION SEQ` through the real binary.

use serde_json::{Value, json};
use std::path::Path;

use crate::blame::{line, prompt, tool, transcript};
use crate::support::{Env, SESSION_A};

/// A session that asks, runs a failing command, edits a file, starts a subagent and closes;
/// and that subagent's own transcript.
fn session_with_a_subagent(env: &Env) {
    let s = SESSION_A;
    let mut lines = vec![prompt(s, 1, 1, "make the limiter configurable")];
    lines.push(line(
        s,
        2,
        2,
        "assistant",
        json!({"message": {"id": "msg_b", "role": "assistant", "type": "message",
            "content": [{"type": "tool_use", "id": "toolu_bash", "name": "Bash", "input": {"command": "cargo test"}}]}}),
    ));
    lines.push(line(
        s,
        3,
        2,
        "user",
        json!({"message": {"role": "user", "content": [{"tool_use_id": "toolu_bash", "type": "tool_result", "content": "error: 2 tests failed", "is_error": true}]}}),
    ));
    lines.extend(tool(
        s,
        4,
        3,
        "Edit",
        json!({"file_path": "/home/dev/acme-api/src/limiter.rs", "old_string": "const RATE: u32 = 5;\n", "new_string": "const RATE: u32 = 10;\nconst BURST: u32 = 20;\n", "replace_all": false}),
    ));
    lines.extend(tool(
        s,
        6,
        19,
        "Task",
        json!({"description": "find middleware", "prompt": "Find every place that registers Express middleware and report file:line."}),
    ));
    lines.push(line(
        s,
        8,
        30,
        "assistant",
        json!({"message": {"id": "msg_end", "role": "assistant", "type": "message",
            "content": [{"type": "text", "text": "The limiter now reads RATE and BURST; tests pass."}]}}),
    ));
    let parent = transcript(env, "parent.jsonl", &lines);
    let sub_dir = env.path(&format!("{SESSION_A}/subagents"));
    std::fs::create_dir_all(&sub_dir).unwrap();
    let sub = sub_dir.join("agent-a7c19e2.jsonl");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude/agent-a7c19e2.jsonl"),
        &sub,
    )
    .unwrap();
    env.run(&["capture", &parent, &sub.to_string_lossy()]).ok();
}

#[test]
fn log_lists_a_session_in_causal_order_with_sizes_and_failures() {
    let env = Env::new();
    session_with_a_subagent(&env);
    let r = env.run(&["log", &SESSION_A[..8], "--json"]).ok();
    let log: Value = serde_json::from_str(&r.stdout).unwrap();
    let kinds: Vec<&str> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    let first = |k: &str| kinds.iter().position(|x| *x == k).unwrap();
    assert!(first("prompt") < first("tool"), "{kinds:?}");
    assert!(first("tool") < first("edit"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"closing"), "{kinds:?}");
    let entries = log["entries"].as_array().unwrap();
    let failed = entries
        .iter()
        .find(|e| e["kind"] == "tool" && e["tool"] == "Bash")
        .unwrap();
    assert_eq!(failed["ok"], false);
    let edit = entries.iter().find(|e| e["kind"] == "edit").unwrap();
    assert_eq!(
        (edit["added"].as_u64(), edit["removed"].as_u64()),
        (Some(2), Some(1))
    );
}

#[test]
fn a_subagent_is_nested_under_the_call_that_started_it() {
    let env = Env::new();
    session_with_a_subagent(&env);
    let r = env.run(&["log", &SESSION_A[..8], "--json"]).ok();
    let log: Value = serde_json::from_str(&r.stdout).unwrap();
    let starter = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["subagents"].is_array())
        .unwrap_or_else(|| panic!("no nested subagent: {}", r.stdout));
    assert_eq!(starter["tool"], "Task");
    let sub = &starter["subagents"][0];
    assert_eq!(sub["session"], format!("{SESSION_A}/agent-a7c19e2"));
    assert!(!sub["entries"].as_array().unwrap().is_empty());
    let text = env.run(&["log", &SESSION_A[..8]]).ok().stdout;
    assert!(text.contains("✗ Bash cargo test"), "{text}");
    assert!(
        text.contains("    == log "),
        "the subagent's log is indented: {text}"
    );
}

#[test]
fn show_prints_an_edit_as_a_unified_diff_and_a_message_as_text() {
    let env = Env::new();
    session_with_a_subagent(&env);
    let log: Value =
        serde_json::from_str(&env.run(&["log", &SESSION_A[..8], "--json"]).ok().stdout).unwrap();
    let seq_of = |kind: &str| {
        log["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["kind"] == kind)
            .unwrap()["seq"]
            .as_u64()
            .unwrap()
            .to_string()
    };
    let edit = env
        .run(&["show", &SESSION_A[..8], &seq_of("edit")])
        .ok()
        .stdout;
    assert!(
        edit.contains("-const RATE: u32 = 5;\n+const RATE: u32 = 10;\n+const BURST: u32 = 20;\n"),
        "{edit}"
    );
    assert!(!edit.contains("\\n"), "no escaped JSON: {edit}");
    let prompt = env
        .run(&["show", &SESSION_A[..8], &seq_of("prompt")])
        .ok()
        .stdout;
    assert!(
        prompt.contains("the person:\nmake the limiter configurable"),
        "{prompt}"
    );
    let json = env
        .run(&["show", &SESSION_A[..8], &seq_of("edit"), "--json"])
        .ok()
        .stdout;
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        v["change"]["kind"], "edit",
        "--json keeps the structure: {json}"
    );
}
