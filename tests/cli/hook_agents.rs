//! The hooks of Gemini CLI, Qwen Code, Cursor, Copilot CLI, Factory droid, Goose and Cline
//! through the real binary: each harness's payload (as its source and docs give it) captures its session from
//! a fixture transcript under the test's home, SessionStart answers where the harness reads
//! context, installing twice merges one entry beside the user's own hooks and `--check`
//! passes, and a session no hook announced is caught up by the sweep the next capture runs.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

use crate::agents::{OPENCODE_SESSION, opencode_db};
use crate::agents_documents::{CLINE_TASK, cline_task};
use crate::agents_sqlite::{GOOSE_SESSION, goose_db};
use crate::hook::{golden, make_ledger, normalized};
use crate::support::{Env, Run, eventually};

const LOOKUP: &str = "peat: this project's agent sessions are recorded; `peat <words>` searches them, `peat` shows the brief.\n";

const GEMINI: &str = "8c1f7e2a-4b3d-4e5f-9a0b-1c2d3e4f5a6b";
const QWEN: &str = "9a7b6c5d-4e3f-4a2b-8c1d-0e9f8a7b6c5d";
const CURSOR: &str = "5d2c1f0e-7a44-4d0b-9d8e-2c6b1a3f9e10";
const COPILOT: &str = "3b9d2e71-6c4a-4f0e-a8d5-9e1f2a3b4c5d";
const DROID: &str = "4c3b2a19-8f7e-4d6c-9b5a-3e2d1c0b9a8f";
const PI: &str = "7c1e4b2a-9f3d-4e6a-8b5c-1d2e3f4a5b6c";

/// The fixture `tests/fixtures/<path>`.
fn fixture_text(path: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The fixture `tests/fixtures/<path>`, `@ROOT@` standing for the work folder.
fn fixture(env: &Env, path: &str) -> String {
    fixture_text(path).replace("@ROOT@", env.path("work").to_str().unwrap())
}

/// Write `text` at `path` below the test's home, its folders made; returns the path.
fn lay(env: &Env, path: &str, text: &str) -> PathBuf {
    let p = env.path("home").join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

/// `peat hook ARGS` in the work folder with `payload` on stdin.
fn fire(env: &Env, args: &[&str], payload: Value) -> Run {
    let mut c = env.cmd();
    c.arg("hook").args(args);
    let r = Run::with_stdin(&mut c, payload.to_string().into_bytes());
    assert_eq!(r.code, 0, "a hook exits 0: {}", r.stderr);
    r
}

/// Whether the ledger holds events of `session`.
fn recorded(env: &Env, session: &str) -> bool {
    let r = env.run(&["events", "--session", session, "--json"]);
    r.code == 0 && !r.stdout.trim().is_empty()
}

/// The closing messages recorded for `session`.
fn finals(env: &Env, session: &str) -> Vec<String> {
    env.run(&["events", "--session", session, "--kind", "final", "--json"])
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["event"]["FinalMsg"]["text"].as_str().map(str::to_string))
        .collect()
}

fn hook_log(env: &Env) -> String {
    std::fs::read_to_string(env.path("work/.peat/hook.log")).unwrap_or_default()
}

/// Wait for `session` to be recorded, then for the hook log to tag a line `tag` (the
/// harness, the moment and the session's first eight characters).
#[track_caller]
fn captured(env: &Env, session: &str, tag: &str) {
    eventually(tag, || recorded(env, session));
    let log = hook_log(env);
    assert!(log.contains(tag), "{tag}: {log}");
}

#[test]
fn gemini_cli_gets_its_lookup_line_as_json_and_its_turn_captured_with_the_closing_message() {
    let env = Env::new();
    make_ledger(&env);
    let transcript = lay(
        &env,
        ".gemini/tmp/acme-api/chats/session-2026-07-14T09-00-8c1f7e2a.jsonl",
        &fixture(&env, "gemini/session-2026-07-14T09-00-8c1f7e2a.jsonl"),
    );
    std::fs::write(
        env.path("home/.gemini/tmp/acme-api/.project_root"),
        env.path("work").to_str().unwrap(),
    )
    .unwrap();
    let base = json!({
        "session_id": GEMINI,
        "transcript_path": transcript,
        "cwd": env.path("work"),
        "timestamp": "2026-07-14T09:05:00.000Z",
    });
    let mut start = base.clone();
    start["hook_event_name"] = json!("SessionStart");
    start["source"] = json!("startup");
    let r = fire(&env, &["--agent", "gemini"], start);
    // Gemini CLI parses stdout as JSON: plain text would only be shown to the person.
    let out: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(out["hookSpecificOutput"]["hookEventName"], "SessionStart");
    assert_eq!(out["hookSpecificOutput"]["additionalContext"], LOOKUP);

    let mut after = base;
    after["hook_event_name"] = json!("AfterAgent");
    after["prompt"] = json!("add a rate limiter");
    after["prompt_response"] = json!("The limiter refills by five now.");
    after["stop_hook_active"] = json!(false);
    let r = fire(&env, &["--agent", "gemini"], after);
    assert_eq!(r.stdout, "", "only SessionStart prints");
    eventually("the Gemini CLI turn's closing message", || {
        finals(&env, GEMINI).contains(&"The limiter refills by five now.".to_string())
    });
    assert!(
        hook_log(&env).contains("gemini AfterAgent 8c1f7e2a"),
        "{}",
        hook_log(&env)
    );
}

#[test]
fn qwen_code_and_droid_are_told_by_their_transcripts_folder_and_captured_at_stop() {
    let env = Env::new();
    make_ledger(&env);
    let qwen = lay(
        &env,
        &format!(".qwen/projects/-work-app/chats/{QWEN}.jsonl"),
        &fixture(&env, "qwen/session.jsonl"),
    );
    let droid = lay(
        &env,
        &format!(".factory/sessions/-work-app/{DROID}.jsonl"),
        &fixture(&env, "droid/session.jsonl"),
    );
    // No --agent: the payloads are Claude Code's shape, and only the folder tells them.
    let r = fire(
        &env,
        &[],
        json!({"session_id": QWEN, "transcript_path": qwen, "cwd": "/work/app",
               "hook_event_name": "Stop", "stop_hook_active": false,
               "last_assistant_message": "Added the greeting module."}),
    );
    assert_eq!(r.stdout, "");
    fire(
        &env,
        &[],
        json!({"session_id": DROID, "transcript_path": droid, "cwd": "/work/app",
               "permission_mode": "auto-medium", "hook_event_name": "Stop",
               "stop_hook_active": false}),
    );
    eventually("Qwen Code's closing message", || {
        finals(&env, QWEN).contains(&"Added the greeting module.".to_string())
    });
    captured(&env, QWEN, "qwen Stop 9a7b6c5d");
    captured(&env, DROID, "droid Stop 4c3b2a19");
    // droid's SessionStart, like Claude Code's, is plain text.
    let r = fire(
        &env,
        &["--agent", "droid"],
        json!({"session_id": DROID, "transcript_path": droid, "hook_event_name": "SessionStart", "source": "startup"}),
    );
    assert!(r.stdout.ends_with(LOOKUP), "{}", r.stdout);
}

#[test]
fn cursor_names_no_transcript_and_is_found_by_its_conversation() {
    let env = Env::new();
    make_ledger(&env);
    lay(
        &env,
        &format!(".cursor/projects/work-app/agent-transcripts/{CURSOR}.jsonl"),
        &fixture(&env, "cursor/session.jsonl"),
    );
    let common = json!({
        "conversation_id": CURSOR, "generation_id": "0b1c2d3e", "model": "gpt-5",
        "cursor_version": "2026.02.13-41ac335", "workspace_roots": ["/work/app"],
        "user_email": "dev@example.com", "transcript_path": null,
    });
    let mut start = common.clone();
    start["hook_event_name"] = json!("sessionStart");
    start["session_id"] = json!(CURSOR);
    start["is_background_agent"] = json!(false);
    let r = fire(&env, &["--agent", "cursor"], start);
    let out: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(out["additional_context"], LOOKUP);

    let mut stop = common;
    stop["hook_event_name"] = json!("stop");
    stop["status"] = json!("completed");
    stop["loop_count"] = json!(0);
    // Without --agent too: `cursor_version` says it.
    fire(&env, &[], stop);
    captured(&env, CURSOR, "cursor stop 5d2c1f0e");
}

#[test]
fn copilot_cli_camel_case_payloads_capture_the_session_state_folder() {
    let env = Env::new();
    make_ledger(&env);
    lay(
        &env,
        &format!(".copilot/session-state/{COPILOT}/events.jsonl"),
        &fixture(&env, "copilot/events.jsonl"),
    );
    let r = fire(
        &env,
        &["--agent", "copilot", "--event", "sessionStart"],
        json!({"sessionId": COPILOT, "timestamp": 1784023200000u64, "cwd": "/work/app", "source": "new"}),
    );
    let out: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(out["additionalContext"], LOOKUP);
    // sessionEnd names neither its event nor the transcript: the installed command does
    // the one, the session id finds the other.
    fire(
        &env,
        &["--agent", "copilot", "--event", "sessionEnd"],
        json!({"sessionId": COPILOT, "timestamp": 1784023500000u64, "cwd": "/work/app", "reason": "complete"}),
    );
    captured(&env, COPILOT, "copilot sessionEnd 3b9d2e71");
}

#[test]
fn goose_names_no_transcript_so_its_hook_sweeps_its_database() {
    let env = Env::new();
    make_ledger(&env);
    let (_db, _harness) = goose_db(&env);
    let base = json!({"session_id": GOOSE_SESSION, "matcher_context": null,
                      "working_dir": env.path("work")});
    let mut start = base.clone();
    start["event"] = json!("SessionStart");
    // Goose shows only a JSON `banner` of a hook's stdout, to the person: plain text is
    // ignored there, as it is meant for agents that read it.
    let r = fire(&env, &[], start);
    assert!(r.stdout.ends_with(LOOKUP), "{}", r.stdout);
    let mut stop = base;
    stop["event"] = json!("Stop");
    stop["last_assistant_message"] = json!("Refill is five tokens a second.");
    // Without --agent: `matcher_context` says Goose. Stop's stdout is Goose's decision
    // channel, where nothing means go on.
    let r = fire(&env, &[], stop);
    assert_eq!(r.stdout, "");
    captured(&env, GOOSE_SESSION, "goose Stop 20260714");
    let log = hook_log(&env);
    assert!(
        log.contains("swept: imported 1 transcripts") && !log.contains("nothing to capture"),
        "the sweep is Goose's capture, as a matter of course: {log}"
    );
}

#[test]
fn cline_tasks_are_found_by_their_id_and_every_hook_answers_json() {
    let env = Env::new();
    make_ledger(&env);
    cline_task(&env);
    let base = json!({"clineVersion": "3.36.0", "timestamp": "1784019660000",
                      "taskId": CLINE_TASK, "workspaceRoots": [env.path("work")],
                      "userId": "cl-0a1b2c"});
    let mut start = base.clone();
    start["hookName"] = json!("TaskStart");
    start["taskStart"] = json!({"taskMetadata": {"taskId": CLINE_TASK,
        "ulid": "01K0A1B2C3D4E5F6G7H8J9K0LM", "initialTask": "add a token bucket limiter"}});
    let r = fire(&env, &[], start);
    let out: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(out, json!({"cancel": false, "contextModification": LOOKUP}));

    let mut done = base;
    done["hookName"] = json!("TaskComplete");
    done["taskComplete"] = json!({"taskMetadata": {"taskId": CLINE_TASK,
        "ulid": "01K0A1B2C3D4E5F6G7H8J9K0LM", "result": "The limiter is written.", "command": ""}});
    // Cline reads every hook's stdout for its answer: go on.
    let r = fire(&env, &["--agent", "cline"], done);
    let out: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(out, json!({"cancel": false}));
    captured(&env, CLINE_TASK, "cline TaskComplete 17840196");
}

#[test]
fn the_sweep_catches_a_session_no_hook_announced_and_reads_nothing_unchanged() {
    let env = Env::new();
    make_ledger(&env);
    // Pi fires no hooks: its session is only on disk.
    let pi = lay(
        &env,
        &format!(".pi/agent/sessions/--work-app--/2026-07-14T09-00-00-000Z_{PI}.jsonl"),
        &fixture(&env, "pi/session.jsonl"),
    );
    // A Copilot CLI sessionEnd without a session id: nothing to find, so the sweep alone.
    fire(
        &env,
        &["--agent", "copilot", "--event", "sessionEnd"],
        json!({"timestamp": 1784023500000u64, "cwd": "/work/app", "reason": "complete"}),
    );
    eventually("Pi's session, swept", || recorded(&env, PI));
    assert!(
        hook_log(&env).contains("sweeping the known roots"),
        "{}",
        hook_log(&env)
    );

    // Nothing changed since: `peat import` (waiting for the hook's capture to let go of
    // the ledger) reads nothing and says so.
    let r = env.run(&["import"]).ok();
    assert!(
        r.stderr.contains("imported 0 transcripts (0 sessions)")
            && r.stderr.contains("1 unchanged since the last import"),
        "{}",
        r.stderr
    );
    // A transcript that grew is read again, from where its capture stopped.
    let mut text = std::fs::read_to_string(&pi).unwrap();
    text.push_str(r#"{"type":"message","id":"b0000001","parentId":"a0000015","timestamp":"2026-07-14T09:05:00.000Z","message":{"role":"user","content":"thank you","timestamp":1784019900000}}"#);
    text.push('\n');
    std::fs::write(&pi, text).unwrap();
    let r = env.run(&["import"]).ok();
    assert!(
        r.stderr.contains("imported 1 transcripts (1 sessions)"),
        "{}",
        r.stderr
    );
}

// ---- install ---------------------------------------------------------------------------

#[test]
fn each_harness_config_gets_one_peat_entry_beside_the_users_hooks_and_passes_check() {
    for (agent, file, name, skill) in [
        (
            "gemini",
            ".gemini/settings.json",
            "gemini-settings",
            ".gemini/skills",
        ),
        (
            "qwen",
            ".qwen/settings.json",
            "qwen-settings",
            ".qwen/skills",
        ),
        (
            "cursor",
            ".cursor/hooks.json",
            "cursor-hooks",
            ".cursor/skills",
        ),
        (
            "copilot",
            ".github/hooks/peat.json",
            "copilot-hooks",
            ".github/skills",
        ),
        (
            "droid",
            ".factory/settings.json",
            "droid-settings",
            ".factory/skills",
        ),
        (
            "goose",
            ".agents/plugins/peat/hooks/hooks.json",
            "goose-hooks",
            ".goose/skills",
        ),
    ] {
        let env = Env::new();
        let config = env.path("work").join(file);
        std::fs::create_dir_all(config.parent().unwrap()).unwrap();
        std::fs::write(&config, golden(&format!("{name}.before.json"))).unwrap();

        let r = env.run(&["hook", "install", "--agent", agent]).ok();
        assert!(
            r.stderr.contains(&format!("✓ {file}: peat hook on ")),
            "{agent}: {}",
            r.stderr
        );
        let skill = format!("{skill}/peat/SKILL.md");
        assert!(
            r.stderr.contains(&format!("✓ {skill}: written")),
            "{agent}: {}",
            r.stderr
        );
        assert_eq!(
            normalized(&config),
            golden(&format!("{name}.after.json")),
            "{agent}"
        );
        assert_eq!(
            std::fs::read_to_string(env.path("work").join(&skill)).unwrap(),
            env.run(&["skill"]).ok().stdout
        );

        let again = env.run(&["hook", "install", "--agent", agent]).ok();
        assert!(
            again.stderr.contains(&format!("= {file}: already current")),
            "{agent}: {}",
            again.stderr
        );
        assert_eq!(normalized(&config), golden(&format!("{name}.after.json")));

        let check = env.run(&["hook", "install", "--check", "--agent", agent]);
        assert_eq!(check.code, 0, "{agent}: {}", check.stderr);
    }
}

#[test]
fn setup_wires_each_harness_found_in_the_home_folder_and_check_sees_them_all() {
    let env = Env::new();
    for dir in [".gemini", ".cursor", ".factory"] {
        std::fs::create_dir_all(env.path("home").join(dir)).unwrap();
    }
    let r = env.run(&["setup", "--no-model"]).ok();
    for line in [
        "✓ .gemini/settings.json: peat hook on SessionStart, AfterAgent, PreCompress, SessionEnd",
        "✓ .cursor/hooks.json: peat hook on sessionStart, stop, preCompact, sessionEnd",
        "✓ .factory/settings.json: peat hook on SessionStart, Stop, PreCompact, SessionEnd",
    ] {
        assert!(r.stderr.contains(line), "{line}\n{}", r.stderr);
    }
    // Not installed here: neither wired nor checked.
    assert!(!env.path("work/.qwen").exists());
    assert!(!env.path("work/.github").exists());
    let check = env.run(&["hook", "install", "--check"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    assert!(
        check
            .stderr
            .contains("✓ .cursor/skills/peat/SKILL.md: current"),
        "{}",
        check.stderr
    );

    // A user's edit that drops one event is said, with the command that mends it.
    let gemini = env.path("work/.gemini/settings.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&gemini).unwrap()).unwrap();
    v["hooks"].as_object_mut().unwrap().remove("AfterAgent");
    std::fs::write(&gemini, v.to_string()).unwrap();
    let check = env.run(&["hook", "install", "--check"]);
    assert_ne!(check.code, 0, "{}", check.stderr);
    assert!(
        check.stderr.contains(
            ".gemini/settings.json: peat hook missing on AfterAgent — run: peat hook install --agent gemini"
        ),
        "{}",
        check.stderr
    );
}

#[test]
fn opencode_gets_a_plugin_whose_hook_sweeps_its_database() {
    let env = Env::new();
    let plugin = env.path("work/.opencode/plugins/peat.js");
    let r = env.run(&["hook", "install", "--agent", "opencode"]).ok();
    assert!(
        r.stderr
            .contains("✓ .opencode/plugins/peat.js: peat hook on session.idle"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("✓ .opencode/skills/peat/SKILL.md: written"),
        "{}",
        r.stderr
    );
    let text = normalized(&plugin);
    // --print shows the plugin whole, and writes nothing.
    let printed = env
        .run(&["hook", "install", "--agent", "opencode", "--print"])
        .ok();
    assert_eq!(printed.stdout, std::fs::read_to_string(&plugin).unwrap());
    assert!(
        text.contains(r#"Bun.spawn(["sh", "-c", "[ -x '/ABS/peat' ] && exec '/ABS/peat' hook --agent opencode --event Stop || exec peat hook --agent opencode --event Stop"], { stdin: "ignore""#),
        "{text}"
    );
    assert!(text.contains(r#"event.type === "session.idle""#), "{text}");
    let again = env.run(&["hook", "install", "--agent", "opencode"]).ok();
    assert!(
        again
            .stderr
            .contains("= .opencode/plugins/peat.js: already current"),
        "{}",
        again.stderr
    );
    let check = env.run(&["hook", "install", "--check", "--agent", "opencode"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    // An older plugin is stale: check names the fix.
    std::fs::write(&plugin, "export const Peat = async () => ({});\n").unwrap();
    let check = env.run(&["hook", "install", "--check", "--agent", "opencode"]);
    assert_ne!(check.code, 0, "{}", check.stderr);
    assert!(
        check.stderr.contains(
            ".opencode/plugins/peat.js: peat hook missing on plugin — run: peat hook install --agent opencode"
        ),
        "{}",
        check.stderr
    );

    // What the plugin runs: no payload, so the capture is the sweep, OpenCode's database in it.
    let (_db, _open) = opencode_db(&env);
    let mut c = env.cmd();
    c.args(["hook", "--agent", "opencode", "--event", "Stop"]);
    let r = Run::with_stdin(&mut c, Vec::new());
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    captured(&env, OPENCODE_SESSION, "opencode Stop");
}

#[test]
fn cline_gets_a_script_under_each_hook_name_that_runs_in_its_project() {
    const HOOKS: [&str; 5] = [
        "TaskStart",
        "TaskResume",
        "TaskComplete",
        "PreCompact",
        "TaskCancel",
    ];
    let env = Env::new();
    let dir = env.path("work/.clinerules/hooks");
    // One of the user's own is left alone, and nothing of peat's is written beside it.
    std::fs::create_dir_all(&dir).unwrap();
    let theirs = "#!/bin/sh\necho '{\"cancel\": false}'\n";
    std::fs::write(dir.join("TaskStart"), theirs).unwrap();
    let r = env.run(&["hook", "install", "--agent", "cline"]);
    assert_ne!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("TaskStart: your own Cline hook")
            && r.stderr.contains("move it aside first"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("TaskStart")).unwrap(),
        theirs
    );
    assert!(!dir.join("TaskComplete").exists());
    std::fs::remove_file(dir.join("TaskStart")).unwrap();

    let r = env.run(&["hook", "install", "--agent", "cline"]).ok();
    assert!(
        r.stderr.contains(
            "✓ .clinerules/hooks: peat hook on TaskStart, TaskResume, TaskComplete, PreCompact, TaskCancel (a script each)"
        ),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("✓ .cline/skills/peat/SKILL.md: written"),
        "{}",
        r.stderr
    );
    let printed = env
        .run(&["hook", "install", "--agent", "cline", "--print"])
        .ok()
        .stdout;
    assert!(
        printed.starts_with("#!/bin/sh\n") && printed.contains("hook --agent cline"),
        "{printed}"
    );
    use std::os::unix::fs::PermissionsExt;
    for hook in HOOKS {
        let file = dir.join(hook);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), printed, "{hook}");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o111, 0o111, "{hook} is executable: {mode:o}");
    }
    let again = env.run(&["hook", "install", "--agent", "cline"]).ok();
    assert!(
        again
            .stderr
            .contains("= .clinerules/hooks: already current"),
        "{}",
        again.stderr
    );
    let check = env.run(&["hook", "install", "--check", "--agent", "cline"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    std::fs::write(dir.join("PreCompact"), "#!/bin/sh\n").unwrap();
    let check = env.run(&["hook", "install", "--check", "--agent", "cline"]);
    assert!(
        check.code != 0
            && check.stderr.contains(
                ".clinerules/hooks: peat hook missing on PreCompact — run: peat hook install --agent cline"
            ),
        "{}",
        check.stderr
    );

    // Cline runs the script in its own folder: the script goes to its project first, so
    // the hook logs in the project's desk, and its task is captured.
    cline_task(&env);
    let payload = json!({"clineVersion": "3.36.0", "hookName": "TaskComplete",
        "timestamp": "1784019660000", "taskId": CLINE_TASK, "workspaceRoots": [],
        "userId": "cl-0a1b2c", "taskComplete": {"taskMetadata": {"taskId": CLINE_TASK}}});
    let peat = env.cmd();
    let mut script = std::process::Command::new(dir.join("TaskComplete"));
    script
        .env_clear()
        .envs(peat.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(env.path("home"));
    let r = Run::with_stdin(&mut script, payload.to_string().into_bytes());
    assert_eq!(
        (r.code, r.stdout.trim()),
        (0, r#"{"cancel":false}"#),
        "{}",
        r.stderr
    );
    captured(&env, CLINE_TASK, "cline TaskComplete 17840196");
    assert!(!env.path("home/.peat").exists());
}

#[test]
fn an_agent_peat_has_no_hooks_for_is_refused_by_name() {
    let env = Env::new();
    let r = env.run(&["hook", "install", "--agent", "pi"]);
    assert_ne!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("peat: no hooks for an agent named \"pi\""),
        "{}",
        r.stderr
    );
    // The hook itself never fails on its arguments' values (`fire` asserts the exit 0).
    let r = fire(
        &env,
        &["--agent", "nonesuch"],
        json!({"hook_event_name": "Stop"}),
    );
    assert_eq!(r.stdout, "");
}
