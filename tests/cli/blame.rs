//! Line blame through the real binary: recorded edits of two sessions and a person's line.

use serde_json::{Value, json};

use crate::support::{Env, SESSION_A, SESSION_B, git};

/// One Claude Code transcript line at `minute` past 09:00 on 2026-07-14.
pub fn line(session: &str, n: u32, minute: u32, ty: &str, body: Value) -> String {
    let mut v = json!({
        "parentUuid": null, "isSidechain": false, "userType": "external",
        "cwd": "/home/dev/acme-api", "sessionId": session, "version": "2.1.190",
        "type": ty, "uuid": format!("00000000-0000-4000-8000-{n:012}"),
        "timestamp": format!("2026-07-14T09:{minute:02}:00.000Z"),
    });
    for (k, val) in body.as_object().unwrap() {
        v[k] = val.clone();
    }
    v.to_string()
}

pub fn prompt(session: &str, n: u32, minute: u32, text: &str) -> String {
    line(
        session,
        n,
        minute,
        "user",
        json!({"message": {"role": "user", "content": text}}),
    )
}

/// A tool call and its successful result.
pub fn tool(session: &str, n: u32, minute: u32, name: &str, input: Value) -> [String; 2] {
    let id = format!("toolu_{session}_{n}");
    [
        line(
            session,
            n,
            minute,
            "assistant",
            json!({"message": {"id": format!("msg_{n}"), "role": "assistant", "type": "message",
                "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]}}),
        ),
        line(
            session,
            n + 1,
            minute,
            "user",
            json!({"message": {"role": "user", "content": [{"tool_use_id": id, "type": "tool_result", "content": "ok"}]}}),
        ),
    ]
}

/// `lines` as a subagent's transcript: each line marked a sidechain of agent `agent`.
pub fn as_subagent(lines: &[String], agent: &str) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v["isSidechain"] = json!(true);
            v["agentId"] = json!(agent);
            v.to_string()
        })
        .collect()
}

pub fn transcript(env: &Env, name: &str, lines: &[String]) -> String {
    let p = env.path(name);
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    p.to_string_lossy().into_owned()
}

/// Session A writes the file; session B edits its second line a minute later; a person adds
/// a third line by hand.
fn two_sessions_and_a_person(env: &Env) -> String {
    two_sessions_and_a_person_at(env, "src/limiter.rs")
}

/// [`two_sessions_and_a_person`] with the file at `rel` in the work folder.
pub fn two_sessions_and_a_person_at(env: &Env, rel: &str) -> String {
    let file = env.path("work").join(rel);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let f = file.to_string_lossy().into_owned();
    let mut a = vec![prompt(SESSION_A, 1, 1, "add a token bucket limiter")];
    a.extend(tool(
        SESSION_A,
        2,
        2,
        "Write",
        json!({"file_path": f, "content": "pub struct Bucket;\nfn refill() {}\n"}),
    ));
    let mut b = vec![prompt(SESSION_B, 1, 10, "refill five tokens a second")];
    b.extend(tool(
        SESSION_B,
        2,
        11,
        "Edit",
        json!({"file_path": f, "old_string": "fn refill() {}", "new_string": "fn refill() { add(5) }", "replace_all": false}),
    ));
    let ta = transcript(env, "a.jsonl", &a);
    let tb = transcript(env, "b.jsonl", &b);
    std::fs::write(
        &file,
        "pub struct Bucket;\nfn refill() { add(5) }\n// tuned by hand\n",
    )
    .unwrap();
    env.run(&["capture", &ta, &tb]).ok();
    f
}

#[test]
fn blame_gives_each_line_the_session_and_prompt_that_wrote_it() {
    let env = Env::new();
    two_sessions_and_a_person(&env);
    // A's line, B's, and the person's (unexplained).
    assert_eq!(blamed(&env, "src/limiter.rs"), origins_of_two_sessions());
    let r = env.run(&["blame", "src/limiter.rs", "--json"]).ok();
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["lines"][2]["text"], "// tuned by hand");
}

#[test]
fn the_text_reading_names_the_prompt_and_the_command_that_shows_the_edit() {
    let env = Env::new();
    two_sessions_and_a_person(&env);
    let r = env.run(&["blame", "src/limiter.rs"]).ok();
    assert!(
        r.stdout.contains("\"refill five tokens a second\""),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("▸ peat show 7a1b2c3d"), "{}", r.stdout);
    assert!(r.stdout.contains("[unexplained"), "{}", r.stdout);
    assert!(
        r.stdout.contains("2 │ fn refill() { add(5) }"),
        "{}",
        r.stdout
    );
}

#[test]
fn file_colon_line_is_the_blame_of_that_line() {
    let env = Env::new();
    two_sessions_and_a_person(&env);
    let r = env.run(&["src/limiter.rs:2"]).ok();
    assert!(
        r.stdout.starts_with("== file src/limiter.rs line 2 =="),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("refill five tokens a second"),
        "{}",
        r.stdout
    );
    assert!(
        !r.stdout.contains("pub struct Bucket"),
        "only line 2: {}",
        r.stdout
    );
    let r = env.run(&["src/limiter.rs:3"]).ok();
    assert!(r.stdout.contains("[unexplained"), "{}", r.stdout);
}

#[test]
fn blame_at_a_past_moment_shows_the_file_as_it_stood() {
    let env = Env::new();
    two_sessions_and_a_person(&env);
    // After session A, before session B: the file as A wrote it. The person's line is not
    // in it: nothing dates it, and a line written later is never shown.
    let r = env
        .run(&[
            "blame",
            "src/limiter.rs",
            "--at",
            "2026-07-14T09:05:00Z",
            "--json",
        ])
        .ok();
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let texts: Vec<&str> = doc["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["pub struct Bucket;", "fn refill() {}"]);
    let r = env.run(&["blame", "src/limiter.rs", "--at", &SESSION_A[..8]]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("fn refill() {}"), "{}", r.stdout);
}

#[test]
fn a_file_no_edit_touched_says_so_and_exits_1() {
    let env = Env::new();
    two_sessions_and_a_person(&env);
    std::fs::write(env.path("work/plain.txt"), "x\n").unwrap();
    let r = env.run(&["blame", "plain.txt"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains("no recorded edit touched plain.txt"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_bad_line_range_is_a_usage_error() {
    let env = Env::new();
    two_sessions_and_a_person(&env);
    let r = env.run(&["blame", "src/limiter.rs", "-L", "9,3"]);
    assert_eq!(r.code, 2, "a usage error: {r:?}");
    assert!(r.stderr.contains("not a line range"), "{}", r.stderr);
}

#[test]
fn a_file_deleted_since_still_lists_its_edits_by_path() {
    let env = Env::new();
    two_sessions_and_a_person(&env);
    std::fs::remove_file(env.path("work/src/limiter.rs")).unwrap();
    let r = env.run(&["src/limiter.rs"]).ok();
    assert!(
        r.stdout.starts_with("== file src/limiter.rs =="),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("\"refill five tokens a second\""),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("▸ peat show 3f6c2a9e "), "{}", r.stdout);
    let r = env.run(&["file", "src/limiter.rs", "--json"]).ok();
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let touches = v["touches"].as_array().unwrap();
    assert_eq!(touches.len(), 2, "{}", r.stdout);
    assert_eq!(touches[0]["session"], SESSION_B, "newest first");
    // Blame needs the text: it says so, and where to look.
    let r = env.run(&["blame", "src/limiter.rs"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("does not exist here"), "{}", r.stderr);
    let r = env
        .run(&["blame", "src/limiter.rs", "--at", "2026-07-14", "--json"])
        .ok();
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        v["lines"][1]["text"], "fn refill() { add(5) }",
        "{}",
        r.stdout
    );
}

#[test]
fn a_path_the_record_does_not_know_is_searched_and_says_why() {
    let env = Env::new();
    two_sessions_and_a_person(&env);
    let r = env.run(&["src/nowhere.rs"]);
    assert!(
        r.stderr
            .contains("src/nowhere.rs: no recorded session touched it"),
        "{}",
        r.stderr
    );
    let r = env.run(&["file", "src/nowhere.rs"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("no recorded edit touched src/nowhere.rs"),
        "{}",
        r.stderr
    );
}

/// [`two_sessions_and_a_person`] at `src/old.rs`; returns the work folder.
pub fn edited_at_old_path(env: &Env) -> std::path::PathBuf {
    two_sessions_and_a_person_at(env, "src/old.rs");
    env.path("work")
}

/// [`edited_at_old_path`], committed to a new git repository.
pub fn committed_to_git(env: &Env) -> std::path::PathBuf {
    let work = edited_at_old_path(env);
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "the limiter"]);
    work
}

/// Each line's session and prompt in `peat blame FILE --json` (None: unexplained).
pub fn blamed(env: &Env, file: &str) -> Vec<Option<(String, String)>> {
    let r = env.run(&["blame", file, "--json"]).ok();
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let edits = doc["edits"].as_array().unwrap();
    doc["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let e = &edits[l["edit"].as_u64()? as usize];
            Some((
                e["session"].as_str().unwrap().to_string(),
                e["prompt"]["text"].as_str().unwrap().to_string(),
            ))
        })
        .collect()
}

/// What [`two_sessions_and_a_person`] attributes: A's line, B's, the person's.
pub fn origins_of_two_sessions() -> Vec<Option<(String, String)>> {
    vec![
        Some((SESSION_A.into(), "add a token bucket limiter".into())),
        Some((SESSION_B.into(), "refill five tokens a second".into())),
        None,
    ]
}

#[test]
fn blame_follows_a_file_renamed_by_git_mv_to_the_edits_under_its_old_name() {
    let env = Env::new();
    let work = committed_to_git(&env);
    git(&work, &["mv", "src/old.rs", "src/new.rs"]);
    // Staged only: the index already knows the rename.
    assert_eq!(blamed(&env, "src/new.rs"), origins_of_two_sessions());
    git(&work, &["commit", "-q", "-a", "-m", "rename the limiter"]);
    assert_eq!(blamed(&env, "src/new.rs"), origins_of_two_sessions());
}

#[test]
fn blame_follows_a_file_an_agent_moved_with_mv_once_it_is_committed() {
    let env = Env::new();
    let work = committed_to_git(&env);
    std::fs::rename(work.join("src/old.rs"), work.join("src/new.rs")).unwrap();
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "move the limiter"]);
    assert_eq!(blamed(&env, "src/new.rs"), origins_of_two_sessions());
}

#[test]
fn the_header_says_an_edit_before_a_whole_write_was_overwritten_not_changed_by_hand() {
    let env = Env::new();
    let file = env.path("work/notes.txt");
    let f = file.to_string_lossy().into_owned();
    let mut a = vec![prompt(SESSION_A, 1, 1, "start the notes")];
    a.extend(tool(
        SESSION_A,
        2,
        2,
        "Write",
        json!({"file_path": f, "content": "a\nb\n"}),
    ));
    a.push(prompt(SESSION_A, 4, 20, "start over"));
    a.extend(tool(
        SESSION_A,
        5,
        21,
        "Write",
        json!({"file_path": f, "content": "x\ny\n"}),
    ));
    let mut b = vec![prompt(SESSION_B, 1, 10, "capitalise b")];
    b.extend(tool(
        SESSION_B,
        2,
        11,
        "Edit",
        json!({"file_path": f, "old_string": "b\n", "new_string": "B\n", "replace_all": false}),
    ));
    let ta = transcript(&env, "a.jsonl", &a);
    let tb = transcript(&env, "b.jsonl", &b);
    std::fs::write(&file, "x\ny\n").unwrap();
    env.run(&["capture", &ta, &tb]).ok();
    let r = env.run(&["blame", "notes.txt"]).ok();
    let head: Vec<&str> = r.stdout.lines().take(3).collect();
    assert_eq!(
        head,
        [
            "== blame notes.txt · 2 lines · 3 edits by 2 sessions ==",
            "   2 lines by recorded edits",
            "   2 edits not placed: older than a whole-file write, and no repository says what that write replaced",
        ],
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("by hand"), "{}", r.stdout);
}

/// `lines` with each assistant message naming `model`, as Claude Code writes it.
pub fn by_model(lines: &[String], model: &str) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if v["type"] == "assistant" {
                v["message"]["model"] = json!(model);
            }
            v.to_string()
        })
        .collect()
}

#[test]
fn each_edit_names_the_model_its_assistant_message_named_in_blame_show_and_the_listing() {
    let env = Env::new();
    let file = env.path("work").join("src/limiter.rs");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let f = file.to_string_lossy().into_owned();
    let mut a = vec![prompt(SESSION_A, 1, 1, "add a token bucket limiter")];
    a.extend(by_model(
        &tool(
            SESSION_A,
            2,
            2,
            "Write",
            json!({"file_path": f, "content": "pub struct Bucket;\nfn refill() {}\n"}),
        ),
        "claude-opus-4-1",
    ));
    // B's message names no model: its edit names none.
    let mut b = vec![prompt(SESSION_B, 1, 10, "refill five tokens a second")];
    b.extend(tool(
        SESSION_B,
        2,
        11,
        "Edit",
        json!({"file_path": f, "old_string": "fn refill() {}", "new_string": "fn refill() { add(5) }", "replace_all": false}),
    ));
    let ta = transcript(&env, "a.jsonl", &a);
    let tb = transcript(&env, "b.jsonl", &b);
    std::fs::write(&file, "pub struct Bucket;\nfn refill() { add(5) }\n").unwrap();
    env.run(&["capture", &ta, &tb]).ok();

    let r = env.run(&["blame", "src/limiter.rs", "--json"]).ok();
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let edit_of =
        |line: usize| &doc["edits"][doc["lines"][line]["edit"].as_u64().unwrap() as usize];
    assert_eq!(edit_of(0)["session"], SESSION_A);
    assert_eq!(edit_of(0)["model"], "claude-opus-4-1");
    assert_eq!(edit_of(1)["session"], SESSION_B);
    assert_eq!(edit_of(1)["model"], Value::Null);

    // `peat show` of the edit names its model; the file's listing carries it.
    let show = edit_of(0)["show"].as_str().unwrap().to_string();
    let args: Vec<&str> = show.split_whitespace().skip(1).collect();
    let shown = env.run(&args).ok();
    assert!(
        shown.stdout.contains("[write] by claude-opus-4-1"),
        "{}",
        shown.stdout
    );
    let r = env.run(&["file", "src/limiter.rs", "--json"]).ok();
    let listed: Value = serde_json::from_str(&r.stdout).unwrap();
    let models: Vec<(&str, &Value)> = listed["touches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["session"].as_str().unwrap(), &t["model"]))
        .collect();
    assert_eq!(
        models,
        [
            (SESSION_B, &Value::Null),
            (SESSION_A, &json!("claude-opus-4-1"))
        ]
    );
}
