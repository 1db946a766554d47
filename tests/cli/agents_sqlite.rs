//! The Goose and Crush adapters through the real binary, on databases built at test time
//! from the schemas and rows written from their formats (tests/fixtures/goose,
//! tests/fixtures/crush): each is captured whole while the harness holds it open, captured
//! again as a no-op, captured grown, and answers `peat FILE` and `peat blame FILE` for the
//! file its agent edited; `--agent` lists only its sessions. HOME and the project are in the
//! test's own folder.

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::Value;

use crate::agents::{assert_limiter_answers, events, fixture, of_kind};
use crate::support::{Env, repo, require_git};

pub(crate) const GOOSE_SESSION: &str = "20260714_1";
const CRUSH_SESSION: &str = "1f0c6a7e-3b2d-4c5e-8f9a-0b1c2d3e4f50";
const CRUSH_CHILD: &str = "9d8e7f60-0002-4a5b-8c7d-6e5f4a3b2c10$$toolu_01Review";

/// The prompts of the fixtures' two turns, each of which wrote one line of the limiter.
const PROMPTS: [&str; 2] = [
    "add a token bucket limiter in src/limiter.rs",
    "refill five tokens a second, then commit",
];

/// The closing messages of the two turns, once the database has grown.
const FINALS: [&str; 2] = [
    "The limiter is written; the build fails on `add`, which the refill will need.",
    "Refill is five tokens a second, committed as 1a2b3c4.",
];

/// `agent`'s database at `path`, in WAL mode, with its tables (`schema.sql`) and the
/// fixture's session (`session.sql`); the connection stays open, as the harness's does.
fn database(env: &Env, agent: &str, path: PathBuf) -> (PathBuf, Connection) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let conn = Connection::open(&path).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    for name in ["schema.sql", "session.sql"] {
        conn.execute_batch(&fixture(env, agent, name)).unwrap();
    }
    (path, conn)
}

/// Goose's database where it keeps it under HOME.
pub(crate) fn goose_db(env: &Env) -> (PathBuf, Connection) {
    let path = env.path("home/.local/share/goose/sessions/sessions.db");
    database(env, "goose", path)
}

/// Crush's database in the project's `.crush` folder.
fn crush_db(env: &Env) -> (PathBuf, Connection) {
    database(env, "crush", env.path("work/.crush/crush.db"))
}

/// Each tool `session` called, and whether it succeeded, in order.
fn tools(env: &Env, session: &str) -> Vec<(String, bool)> {
    of_kind(env, session, "tool")
        .iter()
        .map(|c| {
            let call = &c["event"]["ToolCall"];
            (
                call["tool"].as_str().unwrap().to_string(),
                call["ok"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn finals(env: &Env, session: &str) -> Vec<String> {
    of_kind(env, session, "final")
        .iter()
        .map(|e| e["event"]["FinalMsg"]["text"].as_str().unwrap().to_string())
        .collect()
}

/// Capturing `db` again, with nothing new, writes nothing.
fn assert_recapture_is_a_no_op(env: &Env, db: &Path) {
    let again = env.run(&["capture", db.to_str().unwrap()]).ok().receipt();
    assert_eq!((again.1, again.2), (0, 0), "capturing again writes nothing");
}

/// Grow the database by the fixture's `grow.sql` while its harness holds it, and capture
/// it: the new turn is new, and something read before is revised.
fn grow(env: &Env, agent: &str, harness: &Connection, db: &Path) {
    harness
        .execute_batch(&fixture(env, agent, "grow.sql"))
        .unwrap();
    let (_, new, revised) = env.run(&["capture", db.to_str().unwrap()]).ok().receipt();
    assert!(new > 0, "the second turn is new");
    assert!(revised > 0, "what finished since is revised");
    let mode: String = harness
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal", "the journal mode is as the harness set it");
}

fn commit_hash(env: &Env, session: &str) -> Value {
    of_kind(env, session, "commit")[0]["event"]["Committed"]["hash"].clone()
}

#[test]
fn a_goose_database_is_captured_once_grown_and_answers_for_the_file_it_edited() {
    require_git();
    let env = Env::new();
    repo(&env);
    let (db, harness) = goose_db(&env);
    let r = env.run(&["import"]).ok();
    assert!(
        r.stderr.contains("imported 1 transcripts (1 sessions)"),
        "import finds Goose's database under HOME: {}",
        r.stderr
    );
    assert_recapture_is_a_no_op(&env, &db);
    let meta = &of_kind(&env, GOOSE_SESSION, "meta")[0]["event"]["SessionMeta"];
    assert_eq!(meta["agent"], "goose");
    assert!(meta["cwd"].as_str().unwrap().ends_with("/work"), "{meta}");
    // The build's response is not written yet: the call is recorded as it stands.
    assert_eq!(
        tools(&env, GOOSE_SESSION),
        [("write".to_string(), true), ("shell".to_string(), true)]
    );

    grow(&env, "goose", &harness, &db);
    let tools = tools(&env, GOOSE_SESSION);
    let names: Vec<(&str, bool)> = tools.iter().map(|(t, ok)| (t.as_str(), *ok)).collect();
    assert_eq!(
        names,
        [
            ("write", true),
            ("shell", false),
            ("edit", true),
            ("shell", true)
        ],
        "the build's response, in a later row, failed its call"
    );
    assert_eq!(finals(&env, GOOSE_SESSION), FINALS);
    assert_eq!(commit_hash(&env, GOOSE_SESSION), "1a2b3c4");
    let prompts: Vec<Value> = of_kind(&env, GOOSE_SESSION, "user")
        .iter()
        .map(|e| e["event"]["UserMsg"]["text"].clone())
        .collect();
    assert_eq!(prompts, PROMPTS);
    assert_limiter_answers(&env, GOOSE_SESSION, PROMPTS);
}

#[test]
fn a_crush_database_in_the_project_is_captured_once_grown_and_answers_for_the_file_it_edited() {
    require_git();
    let env = Env::new();
    repo(&env);
    let (db, harness) = crush_db(&env);
    let r = env.run(&["import"]).ok();
    assert!(
        r.stderr.contains("imported 1 transcripts (2 sessions)"),
        "import finds the project's Crush database, and not its titling session: {}",
        r.stderr
    );
    assert_recapture_is_a_no_op(&env, &db);
    let meta = &of_kind(&env, CRUSH_SESSION, "meta")[0]["event"]["SessionMeta"];
    assert_eq!(meta["agent"], "crush");
    assert!(
        meta["cwd"].as_str().unwrap().ends_with("/work"),
        "the folder holding .crush: {meta}"
    );
    let child = &of_kind(&env, CRUSH_CHILD, "meta")[0]["event"]["SessionMeta"];
    assert_eq!(
        child["parent"], CRUSH_SESSION,
        "a child session is a subagent"
    );
    let calls = of_kind(&env, CRUSH_SESSION, "tool");
    assert_eq!(
        calls[2]["event"]["ToolCall"]["agent"], CRUSH_CHILD,
        "the agent call names its subagent"
    );
    assert_eq!(
        tools(&env, CRUSH_SESSION),
        [
            ("write".to_string(), true),
            ("bash".to_string(), false),
            ("agent".to_string(), true)
        ]
    );
    // The answer was still streaming: a text, not yet the turn's close.
    assert!(finals(&env, CRUSH_SESSION).is_empty());

    grow(&env, "crush", &harness, &db);
    assert_eq!(finals(&env, CRUSH_SESSION), FINALS);
    assert_eq!(commit_hash(&env, CRUSH_SESSION), "1a2b3c4");
    assert_limiter_answers(&env, CRUSH_SESSION, PROMPTS);
}

#[test]
fn agent_lists_only_that_harnesss_sessions() {
    require_git();
    let env = Env::new();
    repo(&env);
    let _goose = goose_db(&env);
    let _crush = crush_db(&env);
    env.run(&["import"]).ok();
    let listed = |agent: &str| -> Vec<String> {
        let r = env.run(&["--agent", agent, "sessions", "--json"]).ok();
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        let mut ids: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["session"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(listed("goose"), [GOOSE_SESSION]);
    let mut crush = vec![CRUSH_SESSION.to_string(), CRUSH_CHILD.to_string()];
    crush.sort();
    assert_eq!(listed("crush"), crush);
    assert!(!events(&env, GOOSE_SESSION).is_empty() && !events(&env, CRUSH_SESSION).is_empty());
}
