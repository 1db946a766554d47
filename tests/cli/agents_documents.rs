//! The agents whose sessions are JSON documents rewritten whole or Markdown appended to
//! (Cline's `api_conversation_history.json`, Amp's threads, Aider's `.aider.chat.history.md`)
//! through the real binary, on fixtures written from their formats: each is captured whole, captured
//! again as a no-op, captured grown, and answers `peat FILE` and `peat blame FILE` for the
//! file its agent edited. HOME and the agents' folders are in the test's own folder.

use std::path::PathBuf;

use serde_json::Value;

use crate::agents::{assert_limiter_answers, assert_refused, events, fixture, of_kind};
use crate::support::{Env, repo, require_git};

const AMP_THREAD: &str = "T-7e3f1a2b-4c5d-4e6f-8a9b-0c1d2e3f4a5b";
pub(crate) const CLINE_TASK: &str = "1784019600000";
const CLINE_FILE: &str = "tasks/1784019600000/api_conversation_history.json";

/// The two prompts of every fixture's session: the first writes the limiter, the second
/// refills it and commits.
const PROMPTS: [&str; 2] = [
    "add a token bucket limiter in src/limiter.rs",
    "refill five tokens a second, then commit",
];

/// The Cline task laid in the CLI's data folder under HOME, as its first turn left it.
pub(crate) fn cline_task(env: &Env) -> PathBuf {
    let file = env.path("home/.cline/data").join(CLINE_FILE);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, fixture(env, "cline", CLINE_FILE)).unwrap();
    file
}

/// The text of each event of `session` of kind `tag` at `field` of its `variant`.
fn texts(env: &Env, session: &str, tag: &str, variant: &str, field: &str) -> Vec<String> {
    of_kind(env, session, tag)
        .iter()
        .map(|e| e["event"][variant][field].as_str().unwrap().to_string())
        .collect()
}

/// The sessions `peat sessions` lists with `args` before it, by id.
fn listed(env: &Env, args: &[&str]) -> Vec<String> {
    let mut argv = args.to_vec();
    argv.extend(["sessions", "--json"]);
    let r = env.run(&argv).ok();
    let rows: Value = serde_json::from_str(&r.stdout).unwrap();
    rows.as_array()
        .unwrap()
        .iter()
        .map(|row| row["session"].as_str().unwrap().to_string())
        .collect()
}

/// `peat import` with no folder finds `file` where its agent keeps it (under HOME, or in the
/// repository it runs in), and capturing it again reads nothing.
fn imported_once(env: &Env, file: &std::path::Path) {
    let r = env.run(&["import"]).ok();
    assert!(
        r.stderr.contains("imported 1 transcripts (1 sessions)"),
        "import finds {}: {}",
        file.display(),
        r.stderr
    );
    assert_eq!(
        env.run(&["capture", file.to_str().unwrap()]).ok().receipt(),
        (0, 0, 0),
        "an unchanged file is not read again"
    );
}

#[test]
fn a_cline_task_is_captured_once_then_rewritten_grown_and_answers_for_the_file_it_edited() {
    require_git();
    let env = Env::new();
    repo(&env);
    let file = cline_task(&env);
    imported_once(&env, &file);
    let f = file.to_str().unwrap();

    let meta = &of_kind(&env, CLINE_TASK, "meta")[0]["event"]["SessionMeta"];
    assert_eq!(meta["agent"], "cline");
    assert_eq!(
        meta["cwd"],
        env.path("work").to_str().unwrap(),
        "the cwd is the one the first message's environment details name"
    );
    assert_eq!(
        tools(&env, CLINE_TASK),
        [
            ("write_to_file".to_string(), true),
            ("execute_command".to_string(), false)
        ]
    );
    // The completion is the turn's closing message so far.
    assert_eq!(
        texts(&env, CLINE_TASK, "final", "FinalMsg", "text"),
        ["The limiter is written; the build fails on `add`, which the refill will need."]
    );
    let before = events(&env, CLINE_TASK).len();

    // Cline writes the whole task again with the person's feedback and the turn after it.
    std::fs::write(
        &file,
        fixture(&env, "cline", "api_conversation_history.grown.json"),
    )
    .unwrap();
    let (_, new, revised) = env.run(&["capture", f]).ok().receipt();
    assert!(new > 0, "the second turn is new");
    assert_eq!(revised, 0, "what was there is as it was: no revision");
    assert!(events(&env, CLINE_TASK).len() > before);
    assert_eq!(
        texts(&env, CLINE_TASK, "user", "UserMsg", "text"),
        PROMPTS,
        "the task and the feedback are the prompts, the environment details are not"
    );
    assert_eq!(
        texts(&env, CLINE_TASK, "final", "FinalMsg", "text"),
        [
            "The limiter is written; the build fails on `add`, which the refill will need.",
            "Refill is five tokens a second, committed as 1a2b3c4."
        ]
    );
    let commits = of_kind(&env, CLINE_TASK, "commit");
    assert_eq!(commits[0]["event"]["Committed"]["hash"], "1a2b3c4");
    assert_limiter_answers(&env, CLINE_TASK, PROMPTS);
}

#[test]
fn agent_cline_lists_only_clines_sessions_beside_another_agents() {
    let env = Env::new();
    let task = cline_task(&env);
    let gemini = env.path("home/.gemini/tmp/acme-api/chats");
    std::fs::create_dir_all(&gemini).unwrap();
    let name = "session-2026-07-14T09-29-2b7d4e91.json";
    std::fs::write(gemini.join(name), fixture(&env, "gemini", name)).unwrap();
    env.run(&["capture", task.to_str().unwrap()]).ok();
    env.run(&["capture", gemini.join(name).to_str().unwrap()])
        .ok();
    assert_eq!(listed(&env, &[]).len(), 2);
    assert_eq!(listed(&env, &["--agent", "cline"]), [CLINE_TASK]);
}

/// Aider's history as the first run left it, in the work folder Aider ran in.
fn aider_history(env: &Env) -> PathBuf {
    let file = env.path("work/.aider.chat.history.md");
    std::fs::write(&file, fixture(env, "aider", "chat.history.md")).unwrap();
    file
}

#[test]
fn aiders_history_is_captured_once_grown_by_a_turn_and_a_run_and_answers_for_the_file_it_edited() {
    require_git();
    let env = Env::new();
    repo(&env);
    let file = aider_history(&env);
    imported_once(&env, &file);
    let f = file.to_str().unwrap();
    let sessions = listed(&env, &["--agent", "aider"]);
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let session = sessions[0].as_str();
    let meta = &of_kind(&env, session, "meta")[0]["event"]["SessionMeta"];
    assert_eq!(meta["agent"], "aider");
    assert_eq!(meta["version"], "0.86.1");
    assert_eq!(meta["cwd"], env.path("work").to_str().unwrap());
    let tools = texts(&env, session, "tool", "ToolCall", "tool");
    assert_eq!(tools, ["edit", "shell"], "the edit, then the build it ran");
    let before = events(&env, session);

    // The run goes on with a turn, and a second run starts below it.
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(&fixture(&env, "aider", "chat.history.grown.md"));
    std::fs::write(&file, text).unwrap();
    let (_, new, revised) = env.run(&["capture", f]).ok().receipt();
    assert!(new > 0, "the appended turn and run are new");
    assert_eq!(revised, 0, "what was there is as it was");
    let after = events(&env, session);
    assert_eq!(
        after[..before.len()],
        before[..],
        "the first turn's events keep their seqs"
    );
    assert_eq!(
        listed(&env, &["--agent", "aider"]).len(),
        2,
        "a session a run"
    );
    assert_eq!(texts(&env, session, "user", "UserMsg", "text"), PROMPTS);
    let commits = texts(&env, session, "commit", "Committed", "hash");
    assert_eq!(commits, ["0f1e2d3", "1a2b3c4"]);
    assert_limiter_answers(&env, session, PROMPTS);
}

#[test]
fn a_clines_panel_file_its_messages_under_another_name_and_other_markdown_are_refused() {
    let env = Env::new();
    let dir = env.path("home/.cline/data/tasks/1784019600000");
    std::fs::create_dir_all(&dir).unwrap();
    let messages = fixture(&env, "cline", CLINE_FILE);
    // The panel's copy of the task, and the conversation copied under another name.
    let panel = dir.join("ui_messages.json");
    std::fs::write(
        &panel,
        r#"[{"ts": 1784019601000, "type": "say", "say": "task", "text": "hi"}]"#,
    )
    .unwrap();
    let copy = dir.join("copy.json");
    std::fs::write(&copy, messages).unwrap();
    // Markdown with a prompt's and a quote's look that no Aider run started.
    let notes = env.path("work/NOTES.md");
    std::fs::write(&notes, "# Notes\n\n#### a heading\n> a quote\n").unwrap();
    assert_refused(&env, &[panel, copy, notes]);
}

/// The tools `session` called, each with whether it succeeded.
fn tools(env: &Env, session: &str) -> Vec<(String, bool)> {
    of_kind(env, session, "tool")
        .iter()
        .map(|c| {
            let c = &c["event"]["ToolCall"];
            (
                c["tool"].as_str().unwrap().into(),
                c["ok"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn an_amp_thread_is_captured_once_then_rewritten_grown_and_answers_for_the_file_it_edited() {
    require_git();
    let env = Env::new();
    repo(&env);
    let name = format!("{AMP_THREAD}.json");
    let file = env.path("home/.local/share/amp/threads").join(&name);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, fixture(&env, "amp", &format!("threads/{name}"))).unwrap();
    imported_once(&env, &file);
    let f = file.to_str().unwrap();
    let meta = &of_kind(&env, AMP_THREAD, "meta")[0]["event"]["SessionMeta"];
    assert_eq!(meta["agent"], "amp");
    assert_eq!(meta["cwd"], env.path("work").to_str().unwrap());
    assert_eq!(
        tools(&env, AMP_THREAD),
        [
            ("create_file".to_string(), true),
            ("Bash".to_string(), false)
        ],
        "the build exited 101"
    );

    std::fs::write(
        &file,
        fixture(&env, "amp", &format!("{AMP_THREAD}.grown.json")),
    )
    .unwrap();
    let (_, new, revised) = env.run(&["capture", f]).ok().receipt();
    assert!(new > 0, "the second turn is new");
    assert_eq!(revised, 0, "what was there is as it was");
    assert_eq!(texts(&env, AMP_THREAD, "user", "UserMsg", "text"), PROMPTS);
    assert_eq!(
        texts(&env, AMP_THREAD, "final", "FinalMsg", "text"),
        [
            "The limiter is written; the build fails on `add`, which the refill will need.",
            "Refill is five tokens a second, committed as 1a2b3c4."
        ]
    );
    let commits = texts(&env, AMP_THREAD, "commit", "Committed", "hash");
    assert_eq!(commits, ["1a2b3c4"]);
    assert_limiter_answers(&env, AMP_THREAD, PROMPTS);
}

/// An Aider history of `runs` runs, a prompt and a reply each.
fn aider_runs(runs: usize) -> String {
    (0..runs)
        .map(|n| {
            format!(
                "\n# aider chat started at 2026-07-{:02} 09:{:02}:00\n\n> Aider v0.86.1  \n\n#### question {n}  \n\nAnswer {n}.\n\n",
                n / 60 + 1,
                n % 60
            )
        })
        .collect()
}

/// `peat events --json` of the store at `store`, for the files of `env`.
fn dump_of(env: &Env, store: &std::path::Path) -> String {
    let r = env
        .cmd()
        .env("PEAT_DB", store)
        .args(["events", "--json"])
        .output()
        .unwrap();
    assert!(r.status.success());
    String::from_utf8(r.stdout).unwrap()
}

#[test]
fn an_aider_capture_killed_between_runs_loses_nothing_and_a_rewritten_history_is_read_again() {
    let env = Env::new();
    let file = env.path("work/.aider.chat.history.md");
    std::fs::write(&file, aider_runs(300)).unwrap();
    let f = file.to_str().unwrap();
    // A capture of 300 runs, each its own batch, takes far longer than these.
    let running: Vec<bool> = [40, 80, 160, 320]
        .into_iter()
        .map(|ms| {
            crate::support::kill_after(&env, &["capture", f], std::time::Duration::from_millis(ms))
        })
        .collect();
    assert!(running.contains(&true), "no kill landed while capturing");
    env.run(&["capture", f]).ok();
    let whole = env.path("whole");
    let r = env
        .cmd()
        .env("PEAT_DB", &whole)
        .args(["capture", f])
        .output()
        .unwrap();
    assert!(r.status.success());
    let (got, want) = (env.dump(), dump_of(&env, &whole));
    assert_eq!(
        want.lines().count(),
        300 * 3,
        "a meta, a prompt, an answer each"
    );
    assert!(got == want, "the ledgers differ after the kills");

    // The history cleared and begun again: read from its first line, not where it stopped.
    std::fs::write(&file, aider_runs(1)).unwrap();
    let (events, new, revised) = env.run(&["capture", f]).ok().receipt();
    assert_eq!(
        (events, new, revised),
        (3, 0, 0),
        "its one run is as it was"
    );
}
