//! The Gemini CLI and OpenCode adapters through the real binary, on fixtures written from
//! their formats (tests/fixtures/gemini, tests/fixtures/opencode): each is captured whole,
//! captured again as a no-op, captured grown (or rewritten), and answers `peat FILE` and
//! `peat blame FILE` for the file its agent edited. HOME and the harnesses' folders are in
//! the test's own folder.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::blame::blamed;
use crate::support::{Env, repo, require_git};

const GEMINI_SESSION: &str = "8c1f7e2a-4b3d-4e5f-9a0b-1c2d3e4f5a6b";
const GEMINI_DOCUMENT_SESSION: &str = "2b7d4e91-6a3c-4f8e-b1d2-9e0f1a2b3c4d";
pub const OPENCODE_SESSION: &str = "ses_7f3a1c2e9ffeAbCdEfGh1234";
const OPENCODE_CHILD: &str = "ses_7f3a1c40affeQrStUvWx5678";

/// What `src/limiter.rs` holds once each fixture's session, grown, has run.
pub(crate) const LIMITER: &str = "pub struct Bucket;\nfn refill() { add(5) }\n";

/// A fixture with `@ROOT@` standing for the project folder (the test's work folder).
pub(crate) fn fixture(env: &Env, agent: &str, name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(agent)
        .join(name);
    std::fs::read_to_string(path)
        .unwrap()
        .replace("@ROOT@", env.path("work").to_str().unwrap())
}

/// Gemini CLI's folder for the work folder's project, with the `.project_root` it keeps.
fn gemini_project(env: &Env) -> PathBuf {
    let project = env.path("home/.gemini/tmp/acme-api");
    std::fs::create_dir_all(project.join("chats")).unwrap();
    std::fs::write(
        project.join(".project_root"),
        env.path("work").to_str().unwrap(),
    )
    .unwrap();
    project
}

/// Every event of `session`, as `peat events --json` prints them.
pub(crate) fn events(env: &Env, session: &str) -> Vec<Value> {
    env.run(&["events", "--session", session, "--json"])
        .ok()
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The events of `session` of kind `tag`.
pub(crate) fn of_kind(env: &Env, session: &str, tag: &str) -> Vec<Value> {
    env.run(&["events", "--session", session, "--kind", tag, "--json"])
        .ok()
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The limiter as the two turns left it, and what `peat FILE` and `peat blame` say of it:
/// each line is the prompt of the turn that wrote it.
pub(crate) fn assert_limiter_answers(env: &Env, session: &str, prompts: [&str; 2]) {
    std::fs::write(env.path("work/src/limiter.rs"), LIMITER).unwrap();
    assert_eq!(
        blamed(env, "src/limiter.rs"),
        vec![
            Some((session.to_string(), prompts[0].to_string())),
            Some((session.to_string(), prompts[1].to_string())),
        ]
    );
    let r = env.run(&["src/limiter.rs", "--json"]).ok();
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["reading"]["kind"], "file", "{}", r.stdout);
    let touches = v["result"]["touches"].as_array().unwrap();
    assert_eq!(touches.len(), 2, "{}", r.stdout);
    assert!(
        touches.iter().all(|t| t["path"]
            .as_str()
            .unwrap()
            .ends_with("/work/src/limiter.rs")),
        "{}",
        r.stdout
    );
}

#[test]
fn a_gemini_cli_recording_is_captured_once_grown_and_answers_for_the_file_it_edited() {
    require_git();
    let env = Env::new();
    repo(&env);
    let chats = gemini_project(&env).join("chats");
    let file = chats.join("session-2026-07-14T09-00-8c1f7e2a.jsonl");
    std::fs::write(
        &file,
        fixture(&env, "gemini", "session-2026-07-14T09-00-8c1f7e2a.jsonl"),
    )
    .unwrap();
    let f = file.to_str().unwrap();

    let (events_first, new, revised) = env.run(&["capture", f]).ok().receipt();
    assert!(
        new > 0 && new == events_first && revised == 0,
        "{new} {revised}"
    );
    let again = env.run(&["capture", f]).ok().receipt();
    assert_eq!((again.1, again.2), (0, 0), "capturing again writes nothing");

    let meta = &of_kind(&env, GEMINI_SESSION, "meta")[0];
    assert_eq!(meta["event"]["SessionMeta"]["agent"], "gemini");
    assert_eq!(
        meta["event"]["SessionMeta"]["cwd"],
        env.path("work").to_str().unwrap(),
        "the project folder is the one Gemini CLI keeps in .project_root"
    );
    // The write was appended three times as the harness updated its message: one call.
    let calls = of_kind(&env, GEMINI_SESSION, "tool");
    let tools: Vec<(&str, bool)> = calls
        .iter()
        .map(|c| {
            let c = &c["event"]["ToolCall"];
            (c["tool"].as_str().unwrap(), c["ok"].as_bool().unwrap())
        })
        .collect();
    assert_eq!(
        tools,
        [("write_file", true), ("run_shell_command", true)],
        "each call once; the build is still running"
    );

    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(&fixture(
        &env,
        "gemini",
        "session-2026-07-14T09-00-8c1f7e2a.grown.jsonl",
    ));
    std::fs::write(&file, text).unwrap();
    let (_, new, revised) = env.run(&["capture", f]).ok().receipt();
    assert!(new > 0, "the grown part is new");
    // The build's message, appended again with its result, revises its call (it failed);
    // the text that was the turn's provisional closing message is prose now.
    assert_eq!(revised, 2);
    let tools: Vec<(String, bool)> = of_kind(&env, GEMINI_SESSION, "tool")
        .iter()
        .map(|c| {
            let c = &c["event"]["ToolCall"];
            (
                c["tool"].as_str().unwrap().into(),
                c["ok"].as_bool().unwrap(),
            )
        })
        .collect();
    let tools: Vec<(&str, bool)> = tools.iter().map(|(t, ok)| (t.as_str(), *ok)).collect();
    assert_eq!(
        tools,
        [
            ("write_file", true),
            ("run_shell_command", false),
            ("replace", true),
            ("run_shell_command", true)
        ]
    );
    let commits = of_kind(&env, GEMINI_SESSION, "commit");
    assert_eq!(commits[0]["event"]["Committed"]["hash"], "1a2b3c4");
    let finals: Vec<String> = of_kind(&env, GEMINI_SESSION, "final")
        .iter()
        .map(|e| e["event"]["FinalMsg"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        finals,
        [
            "The limiter is written; the build fails on `add`, which the refill will need.",
            "Refill is five tokens a second, committed as 1a2b3c4."
        ]
    );

    assert_limiter_answers(
        &env,
        GEMINI_SESSION,
        [
            "add a token bucket limiter in src/limiter.rs",
            "refill five tokens a second, then commit",
        ],
    );
}

#[test]
fn a_recording_captured_while_still_empty_is_read_as_what_it_becomes() {
    let env = Env::new();
    let file = gemini_project(&env)
        .join("chats")
        .join("session-2026-07-14T09-00-8c1f7e2a.jsonl");
    std::fs::write(&file, "").unwrap();
    let f = file.to_str().unwrap();
    assert_eq!(env.run(&["capture", f]).ok().receipt(), (0, 0, 0));
    std::fs::write(
        &file,
        fixture(&env, "gemini", "session-2026-07-14T09-00-8c1f7e2a.jsonl"),
    )
    .unwrap();
    let (_, new, _) = env.run(&["capture", f]).ok().receipt();
    assert!(new > 0);
    let meta = &of_kind(&env, GEMINI_SESSION, "meta")[0];
    assert_eq!(meta["event"]["SessionMeta"]["agent"], "gemini");
}

#[test]
fn a_gemini_cli_document_is_read_again_only_when_rewritten_and_a_changed_message_is_a_revision() {
    let env = Env::new();
    let chats = gemini_project(&env).join("chats");
    let file = chats.join("session-2026-07-14T09-29-2b7d4e91.json");
    std::fs::write(
        &file,
        fixture(&env, "gemini", "session-2026-07-14T09-29-2b7d4e91.json"),
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let (_, new, revised) = env.run(&["capture", f]).ok().receipt();
    assert!(new > 0 && revised == 0);
    let before = events(&env, GEMINI_DOCUMENT_SESSION);
    assert_eq!(
        env.run(&["capture", f]).ok().receipt(),
        (0, 0, 0),
        "an unchanged document is not read again"
    );

    std::fs::write(
        &file,
        fixture(
            &env,
            "gemini",
            "session-2026-07-14T09-29-2b7d4e91.rewritten.json",
        ),
    )
    .unwrap();
    let (_, new, revised) = env.run(&["capture", f]).ok().receipt();
    // The new turn (a prompt, its answer) is new; the earlier answer the harness rewrote
    // is a revision; everything else is as it was.
    assert_eq!((new, revised), (2, 1));
    let after = events(&env, GEMINI_DOCUMENT_SESSION);
    let said = |evs: &[Value], seq: u64| -> Value {
        evs.iter().find(|e| e["seq"] == seq).unwrap()["event"].clone()
    };
    let changed = before
        .iter()
        .find(|e| e["event"]["Said"]["text"] == "Writing NOTES.md.")
        .unwrap()["seq"]
        .as_u64()
        .unwrap();
    assert_eq!(
        said(&after, changed)["Said"]["text"],
        "Writing NOTES.md, one line on the refill.",
        "the rewritten message is a revision of the same seq"
    );
    assert_eq!(after.len(), before.len() + 2);
}

#[test]
fn a_gemini_cli_document_migrated_to_jsonl_on_resume_is_not_recorded_twice() {
    let env = Env::new();
    let chats = gemini_project(&env).join("chats");
    let name = "session-2026-07-14T09-29-2b7d4e91.json";
    let doc = chats.join(name);
    std::fs::write(&doc, fixture(&env, "gemini", name)).unwrap();
    env.run(&["capture", doc.to_str().unwrap()]).ok();
    let before = events(&env, GEMINI_DOCUMENT_SESSION).len();
    // Resuming the chat, Gemini CLI writes the document again as `<name>l`: its metadata,
    // then each message, one a line, then what the chat goes on with.
    let mut v: Value = serde_json::from_str(&fixture(&env, "gemini", name)).unwrap();
    let messages = v.as_object_mut().unwrap().remove("messages").unwrap();
    let mut lines = vec![v.to_string()];
    lines.extend(messages.as_array().unwrap().iter().map(Value::to_string));
    lines.push(
        serde_json::json!({"id": "9a0b1c2d-0009-4e5f-8a9b-0c1d2e3f4a5b", "timestamp": "2026-07-14T10:00:00.000Z", "type": "user", "content": "one more thing"})
            .to_string(),
    );
    let jsonl = chats.join(format!("{name}l"));
    std::fs::write(&jsonl, lines.join("\n") + "\n").unwrap();
    let (_, new, revised) = env
        .run(&["capture", jsonl.to_str().unwrap()])
        .ok()
        .receipt();
    // The copied messages land on the seqs the document gave them: only the new prompt is
    // new (and the closing message it settles, unchanged, is no revision).
    assert_eq!((new, revised), (1, 0));
    assert_eq!(events(&env, GEMINI_DOCUMENT_SESSION).len(), before + 1);
}

/// OpenCode's database under HOME, in WAL mode as OpenCode keeps it, with the fixture's
/// rows; the connection stays open, as OpenCode's does.
pub fn opencode_db(env: &Env) -> (PathBuf, rusqlite::Connection) {
    let dir = env.path("home/.local/share/opencode");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("opencode.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    conn.execute_batch(&fixture(env, "opencode", "opencode.sql"))
        .unwrap();
    (path, conn)
}

#[test]
fn opencode_sessions_are_read_from_its_database_without_locking_it_out_each_from_its_own_cursor() {
    require_git();
    let env = Env::new();
    repo(&env);
    let (db, harness) = opencode_db(&env);
    // OpenCode is mid-write while peat reads: what it has not committed is not read, and
    // it is never locked out.
    harness
        .execute_batch("BEGIN IMMEDIATE; UPDATE `session` SET `title` = 'renamed';")
        .unwrap();
    let r = env.run(&["import"]).ok();
    assert!(
        r.stderr.contains("imported 1 transcripts (2 sessions)"),
        "import finds OpenCode's database under HOME: {}",
        r.stderr
    );
    harness.execute_batch("COMMIT;").unwrap();
    let d = db.to_str().unwrap();
    // Its title changed, nothing peat records: every session's capture is a no-op.
    let again = env.run(&["capture", d]).ok().receipt();
    assert_eq!((again.1, again.2), (0, 0), "capturing again writes nothing");

    let meta = &of_kind(&env, OPENCODE_CHILD, "meta")[0]["event"]["SessionMeta"];
    assert_eq!(meta["agent"], "opencode");
    assert_eq!(
        meta["parent"], OPENCODE_SESSION,
        "a child session is its parent's subagent"
    );
    let calls: Vec<Value> = of_kind(&env, OPENCODE_SESSION, "tool")
        .iter()
        .map(|c| c["event"]["ToolCall"].clone())
        .collect();
    let tools: Vec<(&str, bool)> = calls
        .iter()
        .map(|c| (c["tool"].as_str().unwrap(), c["ok"].as_bool().unwrap()))
        .collect();
    assert_eq!(tools, [("write", true), ("bash", false), ("task", true)]);
    assert_eq!(
        calls[2]["agent"], OPENCODE_CHILD,
        "the task names its subagent"
    );
    // The answer was still streaming: a provisional text, not yet the turn's close.
    assert!(of_kind(&env, OPENCODE_SESSION, "final").is_empty());

    harness
        .execute_batch(&fixture(&env, "opencode", "grow.sql"))
        .unwrap();
    let (_, new, revised) = env.run(&["capture", d]).ok().receipt();
    assert!(new > 0, "the second turn is new");
    assert_eq!(
        revised, 1,
        "the answer that finished is its turn's closing message"
    );
    let finals: Vec<String> = of_kind(&env, OPENCODE_SESSION, "final")
        .iter()
        .map(|e| e["event"]["FinalMsg"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        finals,
        [
            "The limiter is written; the build fails on `add`, which the refill will need.",
            "Refill is five tokens a second, committed as 1a2b3c4."
        ]
    );
    let commits = of_kind(&env, OPENCODE_SESSION, "commit");
    assert_eq!(commits[0]["event"]["Committed"]["hash"], "1a2b3c4");
    let mode: String = harness
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal", "the journal mode is as OpenCode set it");

    assert_limiter_answers(
        &env,
        OPENCODE_SESSION,
        [
            "add a token bucket limiter in src/limiter.rs",
            "refill five tokens a second, then commit",
        ],
    );
}

/// Copy the fixture folder `tests/fixtures/<agent>/<name>` into `to`, `@ROOT@` standing for
/// the project folder in every file.
fn fixture_tree(env: &Env, agent: &str, name: &str, to: &Path) {
    fn copy(env: &Env, from: &Path, rel: &Path, to: &Path, agent: &str, name: &str) {
        for entry in std::fs::read_dir(from.join(rel)).unwrap() {
            let entry = entry.unwrap();
            let rel = rel.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy(env, from, &rel, to, agent, name);
            } else {
                let text = fixture(env, agent, &format!("{name}/{}", rel.display()));
                std::fs::create_dir_all(to.join(&rel).parent().unwrap()).unwrap();
                std::fs::write(to.join(&rel), text).unwrap();
            }
        }
    }
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(agent)
        .join(name);
    copy(env, &from, Path::new(""), to, agent, name);
}

#[test]
fn opencode_sessions_kept_as_json_files_are_captured_once_grown_and_answer_for_the_file() {
    require_git();
    let env = Env::new();
    repo(&env);
    let storage = env.path("home/.local/share/opencode/storage");
    fixture_tree(&env, "opencode", "storage", &storage);
    let r = env.run(&["import"]).ok();
    assert!(
        r.stderr.contains("imported 2 transcripts (2 sessions)"),
        "import finds OpenCode's older storage under HOME: {}",
        r.stderr
    );
    let session = storage.join(format!("session/4b9e2c1d0a7f/{OPENCODE_SESSION}.json"));
    let f = session.to_str().unwrap();
    assert_eq!(
        env.run(&["capture", f]).ok().receipt(),
        (0, 0, 0),
        "a session whose files are unchanged is not read again"
    );
    let meta = &of_kind(&env, OPENCODE_CHILD, "meta")[0]["event"]["SessionMeta"];
    assert_eq!(meta["agent"], "opencode");
    assert_eq!(meta["parent"], OPENCODE_SESSION);
    let tools: Vec<String> = of_kind(&env, OPENCODE_SESSION, "tool")
        .iter()
        .map(|c| c["event"]["ToolCall"]["tool"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(tools, ["write", "bash", "task"]);

    // OpenCode rewrites the answer that was streaming and adds a turn.
    fixture_tree(&env, "opencode", "storage-grown", &storage);
    let (_, new, revised) = env.run(&["capture", f]).ok().receipt();
    assert!(new > 0, "the second turn is new");
    assert_eq!(
        revised, 1,
        "the answer that finished is its turn's closing message"
    );
    let commits = of_kind(&env, OPENCODE_SESSION, "commit");
    assert_eq!(commits[0]["event"]["Committed"]["hash"], "1a2b3c4");
    assert_limiter_answers(
        &env,
        OPENCODE_SESSION,
        [
            "add a token bucket limiter in src/limiter.rs",
            "refill five tokens a second, then commit",
        ],
    );
}

#[test]
fn import_walks_gemini_cli_home_for_both_forms_of_recording_and_nothing_else() {
    let env = Env::new();
    // GEMINI_CLI_HOME stands for the home folder Gemini CLI keeps `.gemini` in.
    let home = env.path("elsewhere");
    let project = home.join(".gemini/tmp/acme-api");
    std::fs::create_dir_all(project.join("chats")).unwrap();
    for name in [
        "session-2026-07-14T09-00-8c1f7e2a.jsonl",
        "session-2026-07-14T09-29-2b7d4e91.json",
    ] {
        std::fs::write(
            project.join("chats").join(name),
            fixture(&env, "gemini", name),
        )
        .unwrap();
    }
    // Gemini CLI's other files there are not transcripts, and are not looked at.
    std::fs::write(project.join("logs.json"), "[]").unwrap();
    std::fs::write(project.join("chats/notes.json"), "{}").unwrap();
    let r = env
        .cmd()
        .env("GEMINI_CLI_HOME", &home)
        .arg("import")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(r.status.success(), "{stderr}");
    assert!(
        stderr.contains("imported 2 transcripts (2 sessions)"),
        "{stderr}"
    );
    assert!(!stderr.contains("not transcripts"), "{stderr}");
}

/// An OpenCode database of `sessions` small sessions at `path`, the same bytes of content
/// wherever it is made (its folder is a fixed one, not the test's).
fn many_sessions(path: &Path, sessions: usize) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
        .unwrap();
    let schema = fixture_schema();
    conn.execute_batch(&schema).unwrap();
    let tx = conn.unchecked_transaction().unwrap();
    tx.execute(
        "INSERT INTO project VALUES ('p', '/home/dev/acme-api', 'git', NULL, 1, 1)",
        [],
    )
    .unwrap();
    for s in 0..sessions {
        let t = 1_784_019_600_000i64 + s as i64 * 10_000;
        let id = format!("ses_{s:08}");
        tx.execute(
            "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (?1, 'p', 's', '/home/dev/acme-api', 't', '1.18.34', ?2, ?2)",
            rusqlite::params![id, t],
        )
        .unwrap();
        for (n, role, text) in [(0, "user", "add a limiter"), (1, "assistant", "Added it.")] {
            let msg = format!("msg_{s:08}{n}");
            let data =
                serde_json::json!({"role": role, "time": {"created": t + n}, "finish": "stop"});
            tx.execute(
                "INSERT INTO message VALUES (?1, ?2, ?3, ?3, ?4)",
                rusqlite::params![msg, id, t + n, data.to_string()],
            )
            .unwrap();
            let part = serde_json::json!({"type": "text", "text": format!("{text} ({s})")});
            tx.execute(
                "INSERT INTO part VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
                rusqlite::params![format!("prt_{s:08}{n}"), msg, id, t + n, part.to_string()],
            )
            .unwrap();
        }
    }
    tx.commit().unwrap();
}

/// The tables of the OpenCode fixture, without its rows.
fn fixture_schema() -> String {
    let sql = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/opencode/opencode.sql"),
    )
    .unwrap();
    sql.split("INSERT").next().unwrap().to_string()
}

#[test]
fn an_opencode_capture_killed_midway_loses_nothing_and_the_next_ends_where_one_whole_capture_ends()
{
    let killed = Env::new();
    let db = killed.path("opencode.db");
    many_sessions(&db, 300);
    let d = db.to_str().unwrap();
    // A capture of 300 sessions takes far longer than these: each kill lands mid-way.
    let running: Vec<bool> = [40, 80, 160, 320]
        .into_iter()
        .map(|ms| {
            crate::support::kill_after(
                &killed,
                &["capture", d],
                std::time::Duration::from_millis(ms),
            )
        })
        .collect();
    assert!(running.contains(&true), "no kill landed while capturing");
    killed.run(&["capture", d]).ok();

    let whole = Env::new();
    let db = whole.path("opencode.db");
    many_sessions(&db, 300);
    whole.run(&["capture", db.to_str().unwrap()]).ok();
    let (got, want) = (killed.dump(), whole.dump());
    assert_eq!(
        want.lines().count(),
        300 * 3,
        "a meta, a prompt, an answer each"
    );
    assert!(got == want, "the ledgers differ after the kills");
}

#[test]
fn a_database_or_a_json_document_no_adapter_knows_is_refused() {
    let env = Env::new();
    let db = env.path("other.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE TABLE notes (id TEXT, body TEXT);")
        .unwrap();
    let settings = env.path("settings.json");
    std::fs::write(&settings, r#"{"sessionId": "x", "theme": "dark"}"#).unwrap();
    assert_refused(&env, &[db, settings]);
}

/// Each of `paths` is refused as no transcript, and nothing of them is recorded.
pub(crate) fn assert_refused(env: &Env, paths: &[PathBuf]) {
    for path in paths {
        let r = env.run(&["capture", path.to_str().unwrap()]);
        assert_ne!(r.code, 0);
        assert!(
            r.stderr.contains("is not a recognised transcript"),
            "{}",
            r.stderr
        );
    }
    assert!(!env.store().join("db").exists() || env.dump().is_empty());
}
