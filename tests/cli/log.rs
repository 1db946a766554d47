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
    // The Task call's result here names no agent (as before calls recorded it): the time
    // rule placed it, and the log says so.
    assert_eq!(sub["placed"], "time");
    assert!(
        text.contains("· placed by time: no recorded call names it =="),
        "{text}"
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

/// A line of `session`'s transcript at `hh:mm` on the test day.
pub fn at(session: &str, n: u32, hh_mm: &str, ty: &str, body: Value) -> String {
    let mut body = body;
    body["timestamp"] = json!(format!("2026-07-14T{hh_mm}:00.000Z"));
    line(session, n, 0, ty, body)
}

/// A Task call and the result that names the agent it started.
fn task(n: u32, hh_mm: &str, agent: &str) -> [String; 2] {
    let id = format!("toolu_task_{agent}");
    [
        at(
            SESSION_A,
            n,
            hh_mm,
            "assistant",
            json!({"message": {"id": format!("msg_{n}"), "role": "assistant", "type": "message",
                "content": [{"type": "tool_use", "id": id, "name": "Task",
                    "input": {"description": format!("task {agent}"), "prompt": "look around", "run_in_background": true}}]}}),
        ),
        at(
            SESSION_A,
            n + 1,
            hh_mm,
            "user",
            json!({"message": {"role": "user", "content": [{"tool_use_id": id, "type": "tool_result", "content": "Async agent launched"}]},
                "toolUseResult": {"status": "async_launched", "agentId": agent}}),
        ),
    ]
}

/// A subagent transcript of session A, from `from` to `to`.
fn subagent(env: &Env, agent: &str, from: &str, to: &str) -> String {
    let body = |n: u32, hh_mm: &str, ty: &str, message: Value| {
        json!({"parentUuid": null, "isSidechain": true, "agentId": agent, "userType": "external",
            "cwd": "/home/dev/acme-api", "sessionId": SESSION_A, "version": "2.1.190", "type": ty,
            "uuid": format!("00000000-0000-4000-9000-{n:012}"),
            "timestamp": format!("2026-07-14T{hh_mm}:00.000Z"), "message": message})
        .to_string()
    };
    let lines = [
        body(
            1,
            from,
            "user",
            json!({"role": "user", "content": "look around"}),
        ),
        body(
            2,
            to,
            "assistant",
            json!({"id": "msg_s", "role": "assistant", "type": "message",
                "content": [{"type": "text", "text": format!("{agent} looked around")}]}),
        ),
    ];
    let dir = env.path(&format!("{SESSION_A}/subagents"));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("agent-{agent}.jsonl"));
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn a_subagent_sits_under_its_own_call_and_a_compaction_agent_at_its_compaction() {
    let env = Env::new();
    let mut lines = vec![at(
        SESSION_A,
        1,
        "09:01",
        "user",
        json!({"message": {"role": "user", "content": "survey the repo"}}),
    )];
    lines.extend(task(2, "09:02", "a1b2c3d"));
    lines.extend(task(4, "09:05", "e4f5a6b"));
    lines.push(at(
        SESSION_A,
        6,
        "13:40",
        "system",
        json!({"subtype": "compact_boundary", "content": "Conversation compacted", "level": "info",
            "compactMetadata": {"trigger": "auto", "preTokens": 160000, "postTokens": 9000}}),
    ));
    let parent = transcript(&env, "parent.jsonl", &lines);
    // a1b2c3d ran four hours after the last Task call (e4f5a6b's); the compactor ran just
    // before the compaction it wrote.
    let late = subagent(&env, "a1b2c3d", "13:10", "13:20");
    let other = subagent(&env, "e4f5a6b", "09:05", "09:06");
    let compactor = subagent(&env, "acompact-5d1e0f", "13:30", "13:39");
    env.run(&["capture", &parent, &late, &other, &compactor])
        .ok();
    let r = env.run(&["log", &SESSION_A[..8], "--json"]).ok();
    let log: Value = serde_json::from_str(&r.stdout).unwrap();
    let nested: Vec<(String, String, String)> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| {
            let at = format!("{} {}", e["kind"], e["detail"].as_str().unwrap_or(""));
            e["subagents"]
                .as_array()
                .into_iter()
                .flatten()
                .map(move |s| {
                    let agent = s["session"].as_str().unwrap().rsplit("/agent-").next();
                    (
                        agent.unwrap().to_string(),
                        at.clone(),
                        s["placed"].as_str().unwrap_or("").to_string(),
                    )
                })
        })
        .collect();
    let want = |agent: &str, at: &str, placed: &str| (agent.into(), at.into(), placed.into());
    assert_eq!(
        nested,
        vec![
            want("a1b2c3d", "\"tool\" task a1b2c3d", "call"),
            want("e4f5a6b", "\"tool\" task e4f5a6b", "call"),
            want("acompact-5d1e0f", "\"compaction\" ", "compaction"),
        ],
        "{}",
        r.stdout
    );
    let text = env.run(&["log", &SESSION_A[..8]]).ok().stdout;
    assert!(!text.contains("placed by time"), "{text}");
}

const CODEX_PARENT: &str = "019a7c3e-5b21-7d40-9c1e-2f6a8b0c4d11";
const CODEX_EXPLORER: &str = "019a7c41-0001-7d40-9c1e-2f6a8b0c4d11";
const CODEX_TESTER: &str = "019a7c41-0002-7d40-9c1e-2f6a8b0c4d11";
const CODEX_COMPACTOR: &str = "019a7c41-0003-7d40-9c1e-2f6a8b0c4d11";

/// A Codex rollout line at `hh:mm` on the test day.
fn codex_line(hh_mm: &str, ty: &str, payload: Value) -> String {
    json!({"timestamp": format!("2026-07-14T{hh_mm}:00.000Z"), "type": ty, "payload": payload})
        .to_string()
}

/// A `spawn_agent` call and its output, which names the agent it started (`named`: the
/// thread's `agent_id` in multi-agent v1, its `task_name` path in v2).
fn spawn_agent(hh_mm: &str, call: &str, message: &str, named: Value) -> [String; 2] {
    let mut output = json!({"nickname": null});
    output
        .as_object_mut()
        .unwrap()
        .extend(named.as_object().unwrap().clone());
    [
        codex_line(
            hh_mm,
            "response_item",
            json!({"type": "function_call", "name": "spawn_agent", "call_id": call,
                "arguments": json!({"message": message}).to_string()}),
        ),
        codex_line(
            hh_mm,
            "response_item",
            json!({"type": "function_call_output", "call_id": call,
                "output": output.to_string()}),
        ),
    ]
}

/// The parent's rollout: asked at 09:00, then `body`.
fn codex_parent(env: &Env, body: Vec<String>) -> String {
    let mut lines = vec![
        codex_line(
            "09:00",
            "session_meta",
            json!({"id": CODEX_PARENT, "cwd": "/home/dev/acme-api", "originator": "codex_cli_rs",
                "cli_version": "0.130.0", "source": "cli"}),
        ),
        codex_line(
            "09:00",
            "response_item",
            json!({"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "map the routes, then test them"}]}),
        ),
    ];
    lines.extend(body);
    transcript(
        env,
        &format!("rollout-2026-07-14T09-00-00-{CODEX_PARENT}.jsonl"),
        &lines,
    )
}

/// The `session_meta` fields of a thread the parent's `spawn_agent` started, with its agent
/// path under multi-agent v2 (v1 gives none).
fn thread_spawn(path: Option<&str>) -> Value {
    let mut spawn = json!({"parent_thread_id": CODEX_PARENT, "depth": 1,
        "agent_nickname": "Ada", "agent_role": "explorer"});
    if let Some(path) = path {
        spawn["agent_path"] = json!(path);
    }
    json!({"source": {"subagent": {"thread_spawn": spawn}}})
}

/// A sub-thread's own rollout, its `session_meta` saying what it is (`meta`), asked at
/// `from`, answering at `to`.
fn codex_subagent(env: &Env, thread: &str, meta: Value, from: &str, to: &str) -> String {
    let mut payload = json!({"id": thread, "cwd": "/home/dev/acme-api",
        "originator": "codex_cli_rs", "cli_version": "0.130.0"});
    payload
        .as_object_mut()
        .unwrap()
        .extend(meta.as_object().unwrap().clone());
    let lines = [
        codex_line(from, "session_meta", payload),
        codex_line(
            from,
            "response_item",
            json!({"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "look around"}]}),
        ),
        codex_line(
            to,
            "response_item",
            json!({"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": format!("{thread} looked around")}]}),
        ),
    ];
    transcript(
        env,
        &format!(
            "rollout-2026-07-14T{}-00-{thread}.jsonl",
            from.replace(':', "-")
        ),
        &lines,
    )
}

/// Each sub-thread nested in the parent's log: (its session, where it sits: the call's tool
/// and detail or the step's kind, what placed it).
fn codex_nested(env: &Env, threads: &[&str]) -> Vec<(String, String, String)> {
    let mut args = vec!["capture"];
    args.extend(threads);
    env.run(&args).ok();
    let r = env.run(&["log", &CODEX_PARENT[..8], "--json"]).ok();
    let log: Value = serde_json::from_str(&r.stdout).unwrap();
    let text = env.run(&["log", &CODEX_PARENT[..8]]).ok().stdout;
    assert!(text.contains("looked around"), "{text}");
    log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| {
            let at = match e["tool"].as_str() {
                Some(tool) => format!("{tool} {}", e["detail"].as_str().unwrap_or("")),
                None => e["kind"].as_str().unwrap_or("").to_string(),
            };
            e["subagents"]
                .as_array()
                .into_iter()
                .flatten()
                .map(move |s| {
                    let field = |k: &str| s[k].as_str().unwrap_or("").to_string();
                    (field("session"), at.clone(), field("placed"))
                })
        })
        .collect()
}

/// A sub-thread nested under the `spawn_agent` call asked `message`, placed by its record.
fn under_spawn(thread: &str, message: &str) -> (String, String, String) {
    let detail = json!({"message": message}).to_string();
    (
        thread.into(),
        format!("spawn_agent {detail}"),
        "call".into(),
    )
}

#[test]
fn a_codex_subagent_sits_under_the_spawn_agent_call_that_named_its_thread() {
    let env = Env::new();
    let mut body = Vec::new();
    body.extend(spawn_agent(
        "09:01",
        "call_explore",
        "map the routes",
        json!({"agent_id": CODEX_EXPLORER}),
    ));
    body.extend(spawn_agent(
        "09:05",
        "call_test",
        "test them",
        json!({"agent_id": CODEX_TESTER}),
    ));
    body.push(codex_line(
        "09:40",
        "response_item",
        json!({"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "Both agents reported back."}]}),
    ));
    let parent = codex_parent(&env, body);
    // The explorer's thread began after the tester's call: by time it would sit there.
    let explorer = codex_subagent(&env, CODEX_EXPLORER, thread_spawn(None), "09:20", "09:30");
    let tester = codex_subagent(&env, CODEX_TESTER, thread_spawn(None), "09:05", "09:10");
    assert_eq!(
        codex_nested(&env, &[&parent, &explorer, &tester]),
        vec![
            under_spawn(CODEX_EXPLORER, "map the routes"),
            under_spawn(CODEX_TESTER, "test them"),
        ],
    );
}

#[test]
fn a_codex_v2_subagent_sits_under_the_spawn_agent_call_that_named_its_agent_path() {
    let env = Env::new();
    let mut body = Vec::new();
    body.extend(spawn_agent(
        "09:01",
        "call_explore",
        "map the routes",
        json!({"task_name": "/root/explorer"}),
    ));
    body.extend(spawn_agent(
        "09:05",
        "call_test",
        "test them",
        json!({"task_name": "/root/tester"}),
    ));
    let parent = codex_parent(&env, body);
    // The explorer began after the tester's call: by time it would sit under that.
    let explorer = codex_subagent(
        &env,
        CODEX_EXPLORER,
        thread_spawn(Some("/root/explorer")),
        "09:20",
        "09:30",
    );
    let tester = codex_subagent(
        &env,
        CODEX_TESTER,
        thread_spawn(Some("/root/tester")),
        "09:05",
        "09:10",
    );
    assert_eq!(
        codex_nested(&env, &[&parent, &explorer, &tester]),
        vec![
            under_spawn(CODEX_EXPLORER, "map the routes"),
            under_spawn(CODEX_TESTER, "test them"),
        ],
    );
}

#[test]
fn a_codex_compaction_sub_thread_sits_at_the_compaction_it_wrote() {
    let env = Env::new();
    let mut body = Vec::new();
    body.extend(spawn_agent(
        "09:01",
        "call_explore",
        "map the routes",
        json!({"agent_id": CODEX_EXPLORER}),
    ));
    body.push(codex_line(
        "09:30",
        "compacted",
        json!({"message": "We mapped the routes."}),
    ));
    body.push(codex_line(
        "09:30",
        "event_msg",
        json!({"type": "context_compacted"}),
    ));
    let parent = codex_parent(&env, body);
    // Forked from the parent to summarise it, just before the compaction it wrote; by time
    // it would sit under the spawn_agent call.
    let compactor = codex_subagent(
        &env,
        CODEX_COMPACTOR,
        json!({"forked_from_id": CODEX_PARENT, "source": {"subagent": "compact"}}),
        "09:25",
        "09:29",
    );
    assert_eq!(
        codex_nested(&env, &[&parent, &compactor]),
        vec![(
            CODEX_COMPACTOR.to_string(),
            "compaction".to_string(),
            "compaction".to_string()
        )],
    );
}

#[test]
fn a_write_over_a_file_it_says_it_replaced_is_sized_by_the_lines_it_changed() {
    let env = Env::new();
    let file = env.path("work/calc.py").to_string_lossy().into_owned();
    let was: String = (1..=10).map(|n| format!("x{n} = {n}\n")).collect();
    let content = was.replace("x7 = 7\n", "x7 = 70\n");
    std::fs::create_dir_all(env.path("work")).unwrap();
    std::fs::write(&file, &content).unwrap();
    crate::blame_history::write_saying(&env, &file, &content, json!({"originalFile": was}));
    let r = env.run(&["log", &SESSION_A[..8], "--json"]).ok();
    let log: Value = serde_json::from_str(&r.stdout).unwrap();
    let edit = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "edit")
        .unwrap_or_else(|| panic!("no edit: {}", r.stdout));
    assert_eq!(
        (edit["added"].as_u64(), edit["removed"].as_u64()),
        (Some(1), Some(1)),
        "{edit}"
    );
    let text = env.run(&["log", &SESSION_A[..8]]).ok().stdout;
    assert!(text.contains("+1 −1"), "{text}");
}

#[test]
fn the_head_names_the_models_that_made_the_edits_and_with_two_each_edit_names_its_own() {
    let env = Env::new();
    let mut c = crate::support::Claude::new(SESSION_A);
    c.user("make the limiter configurable").edit(
        "toolu_a",
        "/home/dev/acme-api/src/a.rs",
        "1",
        "2",
    );
    let path = env.path("one.jsonl");
    c.write(&path);
    env.run(&["capture", path.to_str().unwrap()]).ok();
    let log = env.run(&["log", &SESSION_A[..8], "--full"]).ok();
    assert!(
        log.stdout.contains("edits by claude-sonnet-4-6 =="),
        "{}",
        log.stdout
    );
    assert!(!log.stdout.contains("+1 −1 · claude"), "{}", log.stdout);

    // The person switches models: the second edit is another model's.
    c.edit("toolu_b", "/home/dev/acme-api/src/b.rs", "3", "4");
    let last = c.lines.len() - 2;
    c.lines[last] = c.lines[last].replace("claude-sonnet-4-6", "claude-opus-4-5");
    c.write(&path);
    env.run(&["capture", path.to_str().unwrap()]).ok();
    let log = env.run(&["log", &SESSION_A[..8], "--full"]).ok();
    assert!(
        log.stdout
            .contains("edits by claude-sonnet-4-6, claude-opus-4-5 =="),
        "{}",
        log.stdout
    );
    assert!(
        log.stdout.contains("a.rs edit +1 −1 · claude-sonnet-4-6"),
        "{}",
        log.stdout
    );
    assert!(
        log.stdout.contains("b.rs edit +1 −1 · claude-opus-4-5"),
        "{}",
        log.stdout
    );
    let json = env.run(&["log", &SESSION_A[..8], "--json"]).ok();
    assert!(
        json.stdout.contains(r#""model":"claude-opus-4-5""#),
        "{}",
        json.stdout
    );
}
