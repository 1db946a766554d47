//! The person's words are all kept, apart from what came with them, and every reply is
//! recorded: through the real binary, from transcripts written from formats.md.

use crate::support::Env;

fn fixture(rel: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel);
    path.to_str().unwrap().to_string()
}

/// `recall ARGS --json --full` in `env`: the hits, or none when it finds nothing (exit 1).
fn hits(env: &Env, args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = vec!["recall"];
    all.extend_from_slice(args);
    // Whole texts: these tests read what was kept.
    all.extend(["--json", "--full"]);
    let r = env.run(&all);
    match r.code {
        0 => {
            let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
            v["hits"].as_array().unwrap().clone()
        }
        1 => Vec::new(),
        _ => panic!("recall {args:?} failed: {}", r.stderr),
    }
}

#[test]
fn an_answer_to_the_agents_question_is_found_as_the_persons_words() {
    let env = Env::new();
    env.run(&["capture", &fixture("claude/ask-and-plan.jsonl")])
        .ok();
    let found = hits(&env, &["ai elements approach", "--kind", "user"]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0]["text"],
        "Remove anything custom we have and use the ai elements approach"
    );
    // `show` gives the question it answered.
    let seq = found[0]["seq"].as_u64().unwrap().to_string();
    let shown = env.run(&["show", "6b1d2c3e", &seq]).ok();
    assert!(
        shown.stdout.contains("the person:\nRemove anything custom")
            && shown.stdout.contains("Which approach should the chat use?"),
        "{}",
        shown.stdout
    );
}

#[test]
fn an_approved_plan_is_kept_whole_and_found_by_its_last_words() {
    let env = Env::new();
    env.run(&["capture", &fixture("claude/ask-and-plan.jsonl")])
        .ok();
    let found = hits(&env, &["markdown renderer differs snapshot"]);
    assert!(!found.is_empty(), "the plan's last sentence is searchable");
    let text = found[0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("# Plan: replace the custom chat widgets"),
        "{text}"
    );
    assert!(
        text.ends_with("snapshot tests will change."),
        "kept whole: {text}"
    );
    // The plan the person rejected is not kept as said.
    let router = hits(&env, &["swap the router for file routes"]);
    assert!(
        router
            .iter()
            .all(|h| !h["text"].as_str().unwrap().contains("Swap the router")),
        "{router:?}"
    );
}

#[test]
fn an_ide_prompt_reads_as_typed_and_its_context_matches_no_search() {
    let env = Env::new();
    env.run(&["capture", &fixture("codex/envelope_0_40.jsonl")])
        .ok();
    let found = hits(&env, &["rate limiter", "--kind", "user"]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["text"], "Add a rate limiter and document it");
    // The open tabs are the IDE's, not the person's words.
    assert!(hits(&env, &["open tabs", "--kind", "user"]).is_empty());
    // Kept: `show` has them.
    let seq = found[0]["seq"].as_u64().unwrap().to_string();
    let shown = env.run(&["show", "0199a1b2", &seq]).ok();
    assert!(shown.stdout.contains("## Open tabs:"), "{}", shown.stdout);
}

#[test]
fn a_rollout_whose_replies_are_only_agent_messages_has_its_closing_messages() {
    let env = Env::new();
    let line = |ts: &str, ty: &str, payload: &str| {
        format!(r#"{{"timestamp":"2026-05-04T10:{ts}.000Z","type":"{ty}","payload":{payload}}}"#)
    };
    let ev = |ts: &str, kind: &str, text: &str| {
        line(
            ts,
            "event_msg",
            &format!(r#"{{"type":"{kind}","message":"{text}"}}"#),
        )
    };
    let rollout = [
        line(
            "00:00",
            "session_meta",
            r#"{"id":"019a7c3e-aaaa-7d40-9c1e-2f6a8b0c4d11","cwd":"/home/dev/acme-api","cli_version":"0.128.0"}"#,
        ),
        ev("00:01", "user_message", "Add the token bucket to the server"),
        ev("00:05", "agent_message", "Reading src/server.ts first."),
        ev("00:09", "agent_message", "Added the token bucket limiter to src/server.ts."),
        // No task_complete: the next prompt closes the turn.
        ev("01:00", "user_message", "Now write its tests"),
        ev("01:30", "agent_message", "Wrote four tests for the limiter; all pass."),
    ]
    .join("\n");
    let path = env.path("rollout-2026-05-04T10-00-00-019a7c3e-aaaa-7d40-9c1e-2f6a8b0c4d11.jsonl");
    std::fs::write(&path, rollout + "\n").unwrap();
    env.run(&["capture", path.to_str().unwrap()]).ok();
    let closing: Vec<String> = hits(&env, &["limiter", "--kind", "final"])
        .iter()
        .map(|h| h["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        closing.len(),
        2,
        "each turn closes with its last reply: {closing:?}"
    );
    assert!(closing.contains(&"Added the token bucket limiter to src/server.ts.".to_string()));
    assert!(closing.contains(&"Wrote four tests for the limiter; all pass.".to_string()));
}
