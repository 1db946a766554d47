//! The JSONL agents beyond Claude Code and Codex (Cursor CLI, Copilot CLI, Pi, Qwen Code,
//! Factory droid) through the real binary: each one's fixture laid where the agent keeps its sessions,
//! captured whole, again as a no-op, grown, and read back by `peat FILE`, `peat blame` and
//! `peat sessions` in a real git repository.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{Env, git};

/// The folder every fixture names as its project; replaced by the test's work folder.
const PROJECT: &str = "/work/app";
/// The file every fixture writes and then edits, and what it holds after both.
const EDITED: &str = "src/greet.py";
const EDITED_CONTENT: &str = "def greet(name):\n    return 'hello, ' + name\n";

struct Agent {
    label: &'static str,
    session: &'static str,
    fixture: &'static str,
    /// Lines a session appends after the fixture (a prompt and its answer).
    grown: &'static [&'static str],
    /// Where the agent keeps the session, below the test's home, for the work folder `work`.
    place: fn(home: &Path, work: &str) -> PathBuf,
}

const CURSOR: Agent = Agent {
    label: "cursor",
    session: "5d2c1f0e-7a44-4d0b-9d8e-2c6b1a3f9e10",
    fixture: include_str!("../fixtures/cursor/session.jsonl"),
    grown: &[
        r#"{"role":"user","message":{"content":[{"type":"text","text":"<timestamp>Friday, Jul 31, 2026, 5:20 PM (UTC-5)</timestamp>\n<user_query>\nthank you\n</user_query>"}]}}"#,
        r#"{"role":"assistant","message":{"content":[{"type":"text","text":"You're welcome."}]}}"#,
    ],
    place: |home, work| {
        let encoded: String = work
            .trim_start_matches('/')
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        home.join(".cursor/projects")
            .join(encoded)
            .join("agent-transcripts/5d2c1f0e-7a44-4d0b-9d8e-2c6b1a3f9e10.jsonl")
    },
};

const COPILOT: Agent = Agent {
    label: "copilot",
    session: "3b9d2e71-6c4a-4f0e-a8d5-9e1f2a3b4c5d",
    fixture: include_str!("../fixtures/copilot/events.jsonl"),
    grown: &[
        r#"{"type":"user.message","data":{"content":"thank you"},"id":"00000000-0000-4000-9000-000000000100","timestamp":"2026-07-14T10:05:00.000Z","parentId":"00000000-0000-4000-9000-000000000032"}"#,
        r#"{"type":"assistant.message","data":{"messageId":"m9","content":"You're welcome.","toolRequests":[]},"id":"00000000-0000-4000-9000-000000000101","timestamp":"2026-07-14T10:05:02.000Z","parentId":"00000000-0000-4000-9000-000000000100"}"#,
    ],
    place: |home, _| {
        home.join(".copilot/session-state/3b9d2e71-6c4a-4f0e-a8d5-9e1f2a3b4c5d/events.jsonl")
    },
};

const PI: Agent = Agent {
    label: "pi",
    session: "7c1e4b2a-9f3d-4e6a-8b5c-1d2e3f4a5b6c",
    fixture: include_str!("../fixtures/pi/session.jsonl"),
    grown: &[
        r#"{"type":"message","id":"b0000001","parentId":"a0000015","timestamp":"2026-07-14T09:05:00.000Z","message":{"role":"user","content":"thank you","timestamp":1784019900000}}"#,
        r#"{"type":"message","id":"b0000002","parentId":"b0000001","timestamp":"2026-07-14T09:05:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"You're welcome."}],"stopReason":"stop","timestamp":1784019902000}}"#,
    ],
    place: |home, work| {
        // pi-mono's getDefaultSessionDir: the cwd without its leading `/`, `/` as `-`.
        let folder = format!("--{}--", work.trim_start_matches('/').replace('/', "-"));
        home.join(".pi/agent/sessions")
            .join(folder)
            .join("2026-07-14T09-00-00-000Z_7c1e4b2a-9f3d-4e6a-8b5c-1d2e3f4a5b6c.jsonl")
    },
};

const QWEN: Agent = Agent {
    label: "qwen",
    session: "9a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d",
    fixture: include_str!("../fixtures/qwen/session.jsonl"),
    grown: &[
        r#"{"uuid":"60000001-0000-4000-8000-000000000001","parentUuid":"50000014-0000-4000-8000-000000000014","sessionId":"9a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d","timestamp":"2026-07-14T11:05:00.000Z","type":"user","cwd":"/work/app","version":"0.24.7","gitBranch":"main","provenance":"real_user","message":{"role":"user","parts":[{"text":"thank you"}]}}"#,
        r#"{"uuid":"60000002-0000-4000-8000-000000000002","parentUuid":"60000001-0000-4000-8000-000000000001","sessionId":"9a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d","timestamp":"2026-07-14T11:05:02.000Z","type":"assistant","cwd":"/work/app","version":"0.24.7","gitBranch":"main","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":"You're welcome."}]}}"#,
    ],
    place: |home, work| {
        // qwen-code's project folder: the cwd with every other character than a letter or a
        // digit as `-` (any name would do: its records name their cwd).
        let folder: String = work
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        home.join(".qwen/projects")
            .join(folder)
            .join("chats/9a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d.jsonl")
    },
};

const DROID: Agent = Agent {
    label: "droid",
    session: "4c3b2a19-8f7e-4d6c-9b5a-3e2d1c0b9a8f",
    fixture: include_str!("../fixtures/droid/session.jsonl"),
    grown: &[
        r#"{"type":"message","id":"msg-0101","timestamp":"2026-07-14T12:05:00.000Z","parentId":"msg-0016","message":{"role":"user","content":[{"type":"text","text":"thank you"}]}}"#,
        r#"{"type":"message","id":"msg-0102","timestamp":"2026-07-14T12:05:02.000Z","parentId":"msg-0101","message":{"role":"assistant","content":[{"type":"text","text":"You're welcome."}]}}"#,
    ],
    place: |home, work| {
        // droid's folder: the cwd with `/` as `-` (any name would do: the start names the cwd).
        home.join(".factory/sessions")
            .join(work.replace('/', "-"))
            .join("4c3b2a19-8f7e-4d6c-9b5a-3e2d1c0b9a8f.jsonl")
    },
};

/// The work folder as a repository, with the file the agent wrote not yet committed (the
/// test's commits are dated before some of the sessions, which would then predate them).
fn work_repo(env: &Env) -> String {
    let work = env.path("work");
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::write(work.join("README.md"), "# app\n").unwrap();
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "start"]);
    std::fs::write(work.join(EDITED), EDITED_CONTENT).unwrap();
    work.to_string_lossy().into_owned()
}

/// Lay `agent`'s fixture (and, with `grown`, its appended lines) where the agent keeps it.
fn lay(env: &Env, agent: &Agent, grown: bool) -> PathBuf {
    let work = env.path("work").to_string_lossy().into_owned();
    let path = (agent.place)(&env.path("home"), &work);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut text = agent.fixture.replace(PROJECT, &work);
    if grown {
        for line in agent.grown {
            text.push_str(line);
            text.push('\n');
        }
    }
    std::fs::write(&path, text).unwrap();
    path
}

/// The ledger as NDJSON with the test's own folder written as the fixtures' project, so
/// two environments' ledgers compare.
fn dump(env: &Env) -> String {
    env.dump()
        .replace(env.path("work").to_str().unwrap(), PROJECT)
}

fn json(env: &Env, args: &[&str]) -> Value {
    let r = env.run(args).ok();
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout))
}

/// Everything the task asks of an adapter, through the binary.
fn captured_whole_again_and_grown_then_read_back(agent: &Agent) {
    let env = Env::new();
    let work = work_repo(&env);
    let t = lay(&env, agent, false);
    let t = t.to_str().unwrap();

    let first = env.run(&["capture", t]).ok();
    let (events, new, revised) = first.receipt();
    assert!(events > 10, "{}: {}", agent.label, first.stderr);
    assert_eq!((new, revised), (events, 0), "{}", first.stderr);

    let before = env.dump();
    let again = env.run(&["capture", t]).ok();
    let (_, new, revised) = again.receipt();
    assert_eq!((new, revised), (0, 0), "{}: {}", agent.label, again.stderr);
    assert_eq!(env.dump(), before, "{}", agent.label);

    lay(&env, agent, true);
    let grown = env.run(&["capture", t]).ok();
    let (_, new, _) = grown.receipt();
    assert!(new >= 2, "the prompt and the reply: {}", grown.stderr);
    // The increments equal one capture of the grown file.
    let fresh = Env::new();
    std::fs::create_dir_all(fresh.path("work")).unwrap();
    let whole = lay(&fresh, agent, true);
    fresh.run(&["capture", whole.to_str().unwrap()]).ok();
    assert_eq!(dump(&env), dump(&fresh), "{}", agent.label);

    let sessions = json(&env, &["sessions", "--json"]);
    let row = &sessions[0];
    assert_eq!(row["session"], agent.session);
    assert_eq!(row["agent"], agent.label);
    assert_eq!(row["cwd"], work.as_str(), "{}", agent.label);
    assert_eq!(row["prompts"], 3, "{row}");
    assert_eq!(row["closing"]["text"], "You're welcome.");

    // Every line of the file is the session's, written by its first prompt's edits.
    let blame = json(&env, &["blame", EDITED, "--json"]);
    let lines = blame["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 2, "{blame}");
    for line in lines {
        assert_eq!(line["origin"], "edit", "{blame}");
        let edit = &blame["edits"][line["edit"].as_u64().unwrap() as usize];
        assert_eq!(edit["session"], agent.session, "{blame}");
        assert_eq!(edit["prompt"]["text"], "add a greeting module");
    }
    let file = json(&env, &[EDITED, "--json"]);
    let ops: Vec<&str> = file["result"]["touches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["op"].as_str().unwrap())
        .collect();
    assert_eq!(ops, ["edit", "write"], "{file}");
}

#[test]
fn a_cursor_transcript_is_captured_incrementally_and_answers_for_the_files_it_edited() {
    captured_whole_again_and_grown_then_read_back(&CURSOR);
}

#[test]
fn a_copilot_log_is_captured_incrementally_and_answers_for_the_files_it_edited() {
    captured_whole_again_and_grown_then_read_back(&COPILOT);
}

#[test]
fn a_pi_session_is_captured_incrementally_and_answers_for_the_files_it_edited() {
    captured_whole_again_and_grown_then_read_back(&PI);
}

#[test]
fn a_qwen_chat_is_captured_incrementally_and_answers_for_the_files_it_edited() {
    captured_whole_again_and_grown_then_read_back(&QWEN);
}

#[test]
fn a_droid_session_is_captured_incrementally_and_answers_for_the_files_it_edited() {
    captured_whole_again_and_grown_then_read_back(&DROID);
}

#[test]
fn import_without_folders_finds_each_agent_where_it_keeps_its_sessions() {
    let env = Env::new();
    work_repo(&env);
    for agent in [&CURSOR, &COPILOT, &QWEN, &DROID] {
        lay(&env, agent, false);
    }
    // Pi's folder moved by its own variable: the default one is left empty.
    let pi_home = env.path("pi-home");
    let moved = lay(&env, &PI, false);
    let below = moved
        .strip_prefix(env.path("home/.pi/agent"))
        .unwrap()
        .to_path_buf();
    std::fs::create_dir_all(pi_home.join(&below).parent().unwrap()).unwrap();
    std::fs::rename(&moved, pi_home.join(&below)).unwrap();

    let r = crate::support::Run::of(
        env.cmd()
            .env("PI_CODING_AGENT_DIR", &pi_home)
            .arg("import")
            .output()
            .unwrap(),
    )
    .ok();
    assert!(r.stderr.contains("(5 sessions)"), "{}", r.stderr);
    let sessions = json(&env, &["sessions", "--json"]);
    let mut agents: Vec<&str> = sessions
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["agent"].as_str().unwrap())
        .collect();
    agents.sort_unstable();
    assert_eq!(agents, ["copilot", "cursor", "droid", "pi", "qwen"]);
}

#[test]
fn a_cursor_transcript_given_by_a_relative_path_still_finds_its_folder() {
    let env = Env::new();
    let work = work_repo(&env);
    let t = lay(&env, &CURSOR, false);
    let project = t.parent().unwrap().parent().unwrap();
    let r = crate::support::Run::of(
        env.cmd()
            .current_dir(project)
            .args([
                "capture",
                "agent-transcripts/5d2c1f0e-7a44-4d0b-9d8e-2c6b1a3f9e10.jsonl",
            ])
            .output()
            .unwrap(),
    )
    .ok();
    assert!(r.stderr.contains("captured "), "{}", r.stderr);
    let sessions = json(&env, &["sessions", "--json"]);
    assert_eq!(sessions[0]["cwd"], work.as_str());
}
