//! `peat trace` through the real binary, in a real git repository and a real jj one: the
//! Agent Trace record of a commit (the lines it added) and of a file (every line now), each
//! valid under the specification's JSON schema (formats checked), with each line in the
//! conversation of what wrote it: a session's edit, a commit by hand, a line from before the
//! record, a line typed and never committed; the agent's lines name the model that wrote them.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::blame::{by_model, prompt, tool, transcript};
use crate::blame_history::{Repo, Vcs};
use crate::support::{Env, SESSION_A, have_jj, require_git};

const ADD: &str = "def add(a, b):\n    return a + b\n";
const SUB: &str = "def sub(a, b):\n    return a - b\n";

/// 09:00 Pat commits `src/calc.py` (c1); 09:06 session A adds `sub` below `add`, asked at
/// 09:05; Pat adds a note by hand and commits both at 09:10 (c2); then types a line and does
/// not commit it. Returns c2.
fn story(env: &Env, repo: &Repo) -> String {
    let calc = repo.file("src/calc.py").to_string_lossy().into_owned();
    repo.put("src/calc.py", ADD);
    repo.commit(0, "add");
    let mut a = vec![prompt(SESSION_A, 1, 5, "add subtraction")];
    // The assistant message that made the edit names its model, as Claude Code's do.
    a.extend(by_model(
        &tool(
            SESSION_A,
            2,
            6,
            "Edit",
            json!({"file_path": calc, "old_string": "    return a + b\n", "new_string": format!("    return a + b\n{SUB}"), "replace_all": false}),
        ),
        "claude-opus-4-5-20251101",
    ));
    repo.put("src/calc.py", &format!("{ADD}{SUB}# by hand\n"));
    let c2 = repo.commit(10, "sub, and a note");
    repo.put("src/calc.py", &format!("{ADD}{SUB}# by hand\n# typed\n"));
    let ta = transcript(env, "a.jsonl", &a);
    env.run(&["capture", &ta]).ok();
    c2
}

/// The record `peat trace ARGS` prints, after checking it against the spec's schema.
fn trace(env: &Env, args: &[&str]) -> Value {
    let mut all = vec!["trace"];
    all.extend_from_slice(args);
    let r = env.run(&all).ok();
    let record: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_valid(&record);
    record
}

fn assert_valid(record: &Value) {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/agent-trace/trace-record.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap();
    let errors: Vec<String> = validator
        .iter_errors(record)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\n{record:#}");
}

fn hash(lines: &str) -> String {
    format!(
        "sha256:{}",
        hex::encode(Sha256::digest(lines.trim_end_matches('\n').as_bytes()))
    )
}

/// A conversation: its contributor type, peat's origin, and its ranges as (start, end).
type Said = (String, String, Vec<(u64, u64)>);

/// Each conversation of the record's one file.
fn conversations(record: &Value) -> Vec<Said> {
    let files = record["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{record:#}");
    assert_eq!(files[0]["path"], "src/calc.py");
    files[0]["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["contributor"]["type"].as_str().unwrap().to_string(),
                c["dev.peat"]["origin"].as_str().unwrap().to_string(),
                c["ranges"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| {
                        (
                            r["start_line"].as_u64().unwrap(),
                            r["end_line"].as_u64().unwrap(),
                        )
                    })
                    .collect(),
            )
        })
        .collect()
}

fn owned(kind: &str, origin: &str, ranges: &[(u64, u64)]) -> Said {
    (kind.to_string(), origin.to_string(), ranges.to_vec())
}

/// The agent's conversation: its url names session A, its one range is `sub` with that
/// text's hash, and its related prompt is the one the range's edit answered.
fn assert_the_agents_conversation(record: &Value) {
    let ai = &record["files"][0]["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["contributor"]["type"] == "ai")
        .unwrap()
        .clone();
    assert_eq!(ai["url"], format!("peat://session/{SESSION_A}"));
    assert_eq!(
        ai["contributor"],
        json!({"type": "ai", "model_id": "anthropic/claude-opus-4-5-20251101"})
    );
    assert_eq!(ai["dev.peat"]["agent"], "claude");
    assert_eq!(ai["ranges"][0]["content_hash"], hash(SUB));
    let prompt = ai["ranges"][0]["dev.peat"]["prompt"].as_u64().unwrap();
    assert_eq!(
        ai["related"],
        json!([{"type": "prompt", "url": format!("peat://session/{SESSION_A}/{prompt}")}])
    );
}

fn a_commit_and_a_file_are_traced(vcs: Vcs) {
    let env = Env::new();
    let repo = Repo::new(&env, vcs);
    let c2 = story(&env, &repo);

    // The commit: only the lines it added, each with what wrote it.
    let record = trace(&env, &[&c2[..10]]);
    assert_eq!(record["version"], "0.1.0");
    assert_eq!(record["tool"]["name"], "peat");
    match vcs {
        Vcs::Git => assert_eq!(record["vcs"], json!({"type": "git", "revision": c2})),
        Vcs::Jj { .. } => {
            assert_eq!(record["vcs"]["type"], "jj");
            let change = repo.jj(30, &["log", "-r", &c2, "--no-graph", "-T", "change_id"]);
            assert_eq!(record["vcs"]["revision"], change);
        }
    }
    assert_eq!(
        conversations(&record),
        [
            owned("ai", "edit", &[(3, 4)]),
            owned("human", "committed_by_hand", &[(5, 5)]),
        ]
    );
    assert_the_agents_conversation(&record);
    let by_hand = &record["files"][0]["conversations"][1];
    assert_eq!(by_hand["dev.peat"]["commit"], c2);
    assert_eq!(by_hand["dev.peat"]["author"], "Pat");
    assert_eq!(by_hand["ranges"][0]["content_hash"], hash("# by hand"));

    // The file as it is now: every line, at the commit the working copy sits on.
    let record = trace(&env, &["src/calc.py"]);
    assert_eq!(
        conversations(&record),
        [
            owned("unknown", "before_record", &[(1, 2)]),
            owned("ai", "edit", &[(3, 4)]),
            owned("human", "committed_by_hand", &[(5, 5)]),
            owned("human", "uncommitted", &[(6, 6)]),
        ]
    );
    assert_the_agents_conversation(&record);
    assert_eq!(record["metadata"]["dev.peat"]["commit"], c2);
    assert_eq!(record["metadata"]["dev.peat"]["differs"], true);
    // Two records are two ids.
    assert_ne!(trace(&env, &["src/calc.py"])["id"], record["id"]);
}

#[test]
fn in_git_a_commit_and_a_file_trace_as_valid_agent_trace_records() {
    require_git();
    a_commit_and_a_file_are_traced(Vcs::Git);
}

#[test]
fn in_jj_a_trace_names_the_revision_by_its_change_id() {
    if have_jj() {
        a_commit_and_a_file_are_traced(Vcs::Jj { colocate: false });
    }
}

#[test]
fn a_trace_of_what_the_record_does_not_hold_says_so() {
    require_git();
    let env = Env::new();
    let repo = Repo::new(&env, Vcs::Git);
    story(&env, &repo);
    repo.put("plain.txt", "x\n");
    let r = env.run(&["trace", "plain.txt"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains("no recorded edit touched plain.txt"),
        "{}",
        r.stderr
    );
    let record: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_valid(&record);
    assert_eq!(record["files"], json!([]));

    let r = env.run(&["trace", "nothing-here"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(
        r.stderr
            .contains("nothing-here is neither a file here nor a commit"),
        "{}",
        r.stderr
    );
    let r = env.run(&["trace", "src"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("src is a directory"), "{}", r.stderr);
}
