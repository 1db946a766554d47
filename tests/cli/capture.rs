//! Capture and import through the real binary: idempotence, increments, bad input,
//! concurrency and the busy-lock exit.

use crate::support::{Claude, Env, SESSION_A, SESSION_B};
use std::io::Write;

/// The ledger a single capture of the whole transcript gives, for comparison.
fn full_capture(whole: &Claude) -> String {
    let fresh = Env::new();
    let t = fresh.path("t.jsonl");
    whole.write(&t);
    fresh.run(&["capture", t.to_str().unwrap()]).ok();
    fresh.dump()
}

#[test]
fn capturing_twice_leaves_the_ledger_identical() {
    let env = Env::new();
    let t = env
        .path("home/.claude/projects/-home-dev-acme-api")
        .join(format!("{SESSION_A}.jsonl"));
    Claude::session_of(SESSION_A, 3).write(&t);
    let first = env.run(&["capture", t.to_str().unwrap()]).ok();
    let (events, new, revised) = first.receipt();
    assert_eq!(
        events,
        1 + 3 * 7,
        "meta, then per turn: prompt, 2 said, 2 tools, the search's output (the edit's \
         \"updated successfully\" is not kept), 1 file: {}",
        first.stderr
    );
    assert_eq!((new, revised), (events, 0));
    let before = env.dump();
    let second = env.run(&["capture", t.to_str().unwrap()]).ok();
    let (_, new, revised) = second.receipt();
    assert_eq!((new, revised), (0, 0), "{}", second.stderr);
    assert_eq!(env.dump(), before);
}

#[test]
fn a_grown_transcript_ingests_only_its_delta_and_equals_a_full_capture() {
    let env = Env::new();
    let whole = Claude::session_of(SESSION_A, 4);
    let lines = whole.lines.clone();
    let t = env.path("t.jsonl");
    for cut in [3, lines.len() / 2, lines.len() - 1] {
        std::fs::write(&t, format!("{}\n", lines[..cut].join("\n"))).unwrap();
        env.run(&["capture", t.to_str().unwrap()]).ok();
    }
    std::fs::write(&t, whole.text()).unwrap();
    let last = env.run(&["capture", t.to_str().unwrap()]).ok();
    let (events, _, _) = last.receipt();
    assert!(
        events <= 4,
        "only the last line (and the turn it closes) is read again: {}",
        last.stderr
    );

    assert_eq!(env.dump(), full_capture(&whole));
}

#[test]
fn a_last_line_still_being_written_is_left_for_the_next_capture() {
    let env = Env::new();
    let whole = Claude::session_of(SESSION_A, 2);
    let text = whole.text();
    let cut = text.len() - 40;
    let t = env.path("t.jsonl");
    std::fs::write(&t, &text[..cut]).unwrap();
    let r = env.run(&["capture", t.to_str().unwrap()]).ok();
    assert!(r.stderr.contains("still being written"), "{}", r.stderr);
    std::fs::write(&t, &text).unwrap();
    env.run(&["capture", t.to_str().unwrap()]).ok();

    assert_eq!(env.dump(), full_capture(&whole));
}

#[test]
fn garbage_truncated_and_non_utf8_lines_never_fail_a_file() {
    let env = Env::new();
    let mut c = Claude::new(SESSION_A);
    c.user("first prompt");
    c.raw("not even json");
    c.raw("{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"te");
    c.raw("[1,2,3]");
    c.raw("{\"type\":\"totally-new-thing\",\"payload\":{\"deep\":[1,2,3]}}");
    c.said("the answer after the noise");
    let t = env.path("t.jsonl");
    let mut bytes = c.text().into_bytes();
    bytes.extend_from_slice(b"\xff\xfe\xfd broken bytes\n");
    bytes.extend_from_slice(b"\0\0\0\0\n");
    std::fs::write(&t, &bytes).unwrap();
    let r = env.run(&["capture", t.to_str().unwrap()]).ok();
    assert!(r.stderr.contains("4 bad lines skipped"), "{}", r.stderr);
    let dump = env.dump();
    assert!(dump.contains("first prompt"));
    assert!(dump.contains("the answer after the noise"));
}

#[test]
fn an_unknown_format_is_rejected_with_what_it_expected() {
    let env = Env::new();
    let t = env.path("mystery.jsonl");
    std::fs::write(
        &t,
        "{\"kind\":\"mystery\",\"data\":1}\n{\"kind\":\"mystery\"}\n",
    )
    .unwrap();
    let r = env.run(&["capture", t.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("not a recognised transcript"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("Codex"), "{}", r.stderr);
    let missing = env.run(&["capture", "/nonexistent/x.jsonl"]);
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.starts_with("peat: cannot read"),
        "{}",
        missing.stderr
    );
}

#[test]
fn eight_processes_capturing_at_once_lose_nothing() {
    let env = Env::new();
    let mut expected = 0;
    let mut children = Vec::new();
    for i in 0..8 {
        let session = format!("00000000-0000-4000-8000-00000000000{i}");
        let t = env.path(&format!("t{i}.jsonl"));
        Claude::session_of(&session, 5).write(&t);
        let solo = Env::new();
        let (n, _, _) = solo.run(&["capture", t.to_str().unwrap()]).ok().receipt();
        expected += n;
        children.push(
            env.cmd()
                .args(["capture", t.to_str().unwrap()])
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap(),
        );
    }
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert_eq!(env.dump().lines().count(), expected);
    let sessions = env.run(&["sessions", "--json", "--budget", "0"]).ok();
    let v: serde_json::Value = serde_json::from_str(&sessions.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 8);
}

#[test]
fn a_ledger_held_too_long_exits_75_naming_the_holder() {
    let env = Env::new();
    let t = env.path("t.jsonl");
    Claude::session_of(SESSION_A, 1).write(&t);
    env.run(&["capture", t.to_str().unwrap()]).ok();
    let _held = env.hold_lock("peat import (test)");
    let r = Run::of(
        env.cmd()
            .env("PEAT_LOCK_WAIT_SECS", "1")
            .args(["capture", t.to_str().unwrap()])
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 75, "{}", r.stderr);
    assert!(r.stderr.contains("peat import (test)"), "{}", r.stderr);
    assert!(r.stderr.contains("PEAT_LOCK_WAIT_SECS"), "{}", r.stderr);
}

use crate::support::Run;

#[test]
fn import_finds_claude_and_codex_transcripts_and_is_incremental() {
    let env = Env::new();
    Claude::session_of(SESSION_A, 2).write(
        &env.path("home/.claude/projects/-home-dev-acme-api")
            .join(format!("{SESSION_A}.jsonl")),
    );
    Claude::session_of(SESSION_B, 2).write(
        &env.path("home/.claude/projects/-home-dev-other")
            .join(format!("{SESSION_B}.jsonl")),
    );
    let codex = env.path("home/.codex/sessions/2026/05/04/rollout-2026-05-04T12-15-02-019a7c3e-5b21-7d40-9c1e-2f6a8b0c4d11.jsonl");
    std::fs::create_dir_all(codex.parent().unwrap()).unwrap();
    std::fs::write(&codex, concat!(
        r#"{"timestamp":"2026-05-04T10:15:02.311Z","type":"session_meta","payload":{"id":"019a7c3e-5b21-7d40-9c1e-2f6a8b0c4d11","timestamp":"2026-05-04T10:15:02.120Z","cwd":"/home/dev/acme-api","originator":"codex_cli_rs","cli_version":"0.128.0"}}"#, "\n",
        r#"{"timestamp":"2026-05-04T10:15:02.332Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Add a token-bucket rate limiter"}]}}"#, "\n",
        r#"{"timestamp":"2026-05-04T10:15:14.111Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Added the limiter middleware in src/server.ts."}]}}"#, "\n",
    )).unwrap();
    std::fs::write(
        env.path("home/.claude/projects/-home-dev-acme-api/notes.jsonl"),
        "{\"kind\":\"mystery\"}\n",
    )
    .unwrap();
    let r = env.run(&["import"]).ok();
    assert!(
        r.stderr.contains("imported 3 transcripts (3 sessions)"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("1 files were not transcripts"),
        "{}",
        r.stderr
    );
    let before = env.dump();
    let again = env.run(&["import"]).ok();
    assert!(
        again.stderr.contains("(0 new, 0 revised)"),
        "{}",
        again.stderr
    );
    assert_eq!(env.dump(), before);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&codex)
        .unwrap();
    writeln!(f, r#"{{"timestamp":"2026-05-04T10:16:00.000Z","type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"now add tests"}}]}}}}"#).unwrap();
    let grown = env.run(&["import"]).ok();
    // The turn the new prompt closes was already written as its provisional closing message.
    assert!(
        grown.stderr.contains("(1 new, 0 revised)"),
        "{}",
        grown.stderr
    );
}

/// A folder the import cannot open is named on stderr and counted, never taken for an empty
/// one; the import goes on with the rest. These tests run as root, whom permission bits do
/// not stop, so the folder is one whose path is longer than any process may open (PATH_MAX).
#[test]
fn import_reports_a_folder_it_cannot_read_instead_of_finding_no_transcripts() {
    let env = Env::new();
    let root = env.path("transcripts");
    std::fs::create_dir_all(&root).unwrap();
    // GNU mkdir -p makes each level relative to the one before, past the length a path may
    // have.
    let deep = vec!["d".repeat(200); 25].join("/");
    let made = std::process::Command::new("mkdir")
        .arg("-p")
        .arg(&deep)
        .current_dir(&root)
        .status()
        .unwrap();
    assert!(made.success(), "mkdir -p could not make the deep folder");
    let unreadable = format!("peat: cannot read {}/ddd", root.display());

    // Exit 2, as for a file that cannot be read: not 1, "nothing found".
    let r = env.run(&["import", root.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains(&unreadable), "{}", r.stderr);
    assert!(r.stderr.contains("File name too long"), "{}", r.stderr);
    assert!(
        r.stderr.contains("; 1 folders could not be read"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("no transcripts found"), "{}", r.stderr);

    Claude::session_of(SESSION_A, 1).write(&root.join("readable/a.jsonl"));
    let r = env.run(&["import", root.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains(&unreadable), "{}", r.stderr);
    assert!(
        r.stderr.contains("imported 1 transcripts (1 sessions)"),
        "{}",
        r.stderr
    );
}

#[test]
fn show_and_events_read_back_what_was_captured() {
    let env = Env::new();
    let t = env.path("t.jsonl");
    let mut c = Claude::session_of(SESSION_A, 1);
    c.bash(
        "toolu_c",
        "git commit -m 'Add limiter'",
        "[feat/rate-limit 4be1c0a] Add limiter\n 1 file changed",
        false,
    );
    c.write(&t);
    env.run(&["capture", t.to_str().unwrap()]).ok();
    let show = env.run(&["show", "3f6c"]).ok();
    assert!(
        show.stdout
            .contains("== session 3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b =="),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout.contains("add a token-bucket rate limiter"),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout
            .contains("4be1c0a Add limiter  [made in it, by the commit command the session ran]"),
        "{}",
        show.stdout
    );
    assert!(
        show.stdout.contains("▸ peat events --session 3f6c2a9e"),
        "{}",
        show.stdout
    );
    let files = env.run(&["events", "--kind", "file", "--json"]).ok();
    let row: serde_json::Value =
        serde_json::from_str(files.stdout.lines().next().unwrap()).unwrap();
    let seq = row["seq"].as_u64().unwrap().to_string();
    let one = env.run(&["show", SESSION_A, &seq, "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&one.stdout).unwrap();
    assert_eq!(v["change"]["kind"], "edit");
    assert_eq!(
        v["change"]["new"],
        "app.use(cors());\napp.use(rateLimit());"
    );
    let none = env.run(&["show", "ffff"]);
    assert_eq!(none.code, 1);
    assert!(none.stderr.contains("peat sessions"), "{}", none.stderr);
    let plain = env.run(&["events"]).ok();
    assert!(!plain.stdout.contains('\x1b'));
}

#[test]
fn reading_before_anything_was_captured_says_what_to_run() {
    let env = Env::new();
    let r = env.run(&["sessions"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("peat import"), "{}", r.stderr);
    assert!(!env.store().exists(), "a read never creates the store");
}

/// The real transcripts in `../shared/fixtures`, when that folder is there.
#[test]
fn the_shared_real_transcripts_capture_cleanly() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        crate::support::skip(&format!("{} is not here", dir.display()), false);
        return;
    };
    let env = Env::new();
    let mut seen = 0;
    for e in entries {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "jsonl") {
            seen += 1;
            let r = env.run(&["capture", p.to_str().unwrap()]).ok();
            let (events, new, _) = r.receipt();
            assert!(
                events > 10 && new == events,
                "{}: {}",
                p.display(),
                r.stderr
            );
            assert!(!r.stderr.contains("bad lines"), "{}", r.stderr);
            let again = env.run(&["capture", p.to_str().unwrap()]).ok();
            assert_eq!(again.receipt().1, 0);
        }
    }
    assert_eq!(seen, 2);
    let s = env.run(&["sessions", "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&s.stdout).unwrap();
    let ids: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"2d984148-cddb-4605-aac1-13e720fe613c"),
        "{ids:?}"
    );
    assert!(
        ids.contains(&"01997e76-d124-7592-9cac-2ec05abbca08"),
        "{ids:?}"
    );
    for s in v.as_array().unwrap() {
        assert!(!s["files"].as_object().unwrap().is_empty(), "{s}");
        assert!(s["closing"].is_object(), "{s}");
    }
}

/// The fixtures of the shapes capture once got wrong, each with the path (under a
/// transcript root) it is written to: a subagent's file name and folder carry its identity.
const SHAPES: &[(&str, &str)] = &[
    (
        "claude/turn-duration.jsonl",
        "projects/-home-dev-ledgerly/d1e2f3a4-5b6c-4d7e-8f90-a1b2c3d4e5f6.jsonl",
    ),
    (
        "claude/big-number.jsonl",
        "projects/-home-dev-metrics/b16b0e55-2c3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl",
    ),
    (
        "claude/3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b/subagents/agent-acompact-5d1e0f.jsonl",
        "projects/-home-dev-acme-api/3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b/subagents/agent-acompact-5d1e0f.jsonl",
    ),
    (
        "claude/agent-a7c19e2.jsonl",
        "projects/-home-dev-acme-api/3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b/subagents/agent-a7c19e2.jsonl",
    ),
    (
        "codex/desktop_2026.jsonl",
        "sessions/2026/02/23/rollout-2026-02-23T10-00-00-019c8a4c-1d2e-7f30-8a41-5b6c7d8e9f01.jsonl",
    ),
    (
        "codex/exec_command_end_2026.jsonl",
        "sessions/2026/09/14/rollout-2026-09-14T08-30-00-019b2d10-7a3e-7c41-9e5f-3a4b5c6d7e80.jsonl",
    ),
];

fn fixture(rel: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Write every shape into `env`'s home; returns the paths written.
fn write_shapes(env: &Env) -> Vec<String> {
    SHAPES
        .iter()
        .map(|(from, to)| {
            let p = env.path("home/roots").join(to);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, fixture(from)).unwrap();
            p.to_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn every_capture_fidelity_shape_is_idempotent_grows_to_a_full_capture_and_unions() {
    let whole = Env::new();
    let paths = write_shapes(&whole);
    for p in &paths {
        let r = whole.run(&["capture", p]).ok();
        assert!(!r.stderr.contains("bad line"), "{p}: {}", r.stderr);
    }
    let full = whole.dump();
    for p in &paths {
        let again = whole.run(&["capture", p]).ok();
        assert_eq!(
            again.receipt().1..=again.receipt().2,
            0..=0,
            "{p}: {}",
            again.stderr
        );
    }
    assert_eq!(whole.dump(), full, "capturing again changes nothing");

    // Every file captured as it grows, one line at a time.
    let grown = Env::new();
    let grown_paths = write_shapes(&grown);
    for p in &grown_paths {
        let text = std::fs::read_to_string(p).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for cut in 1..=lines.len() {
            std::fs::write(p, format!("{}\n", lines[..cut].join("\n"))).unwrap();
            grown.run(&["capture", p]).ok();
        }
    }
    assert_eq!(
        grown.dump(),
        full,
        "growing captures equal one full capture"
    );

    // All of them in one command: the union of the single captures.
    let union = Env::new();
    let union_paths = write_shapes(&union);
    let mut args = vec!["capture"];
    args.extend(union_paths.iter().map(String::as_str));
    union.run(&args).ok();
    assert_eq!(
        union.dump(),
        full,
        "one capture of all files is their union"
    );
}

/// The sessions view's summary of `session`, from `peat sessions --json`.
fn summary(env: &Env, session: &str) -> serde_json::Value {
    let r = env.run(&["sessions", "--json"]).ok();
    let all: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    all.as_array()
        .unwrap()
        .iter()
        .find(|s| s["session"] == session)
        .unwrap_or_else(|| panic!("no {session} in {}", r.stdout))
        .clone()
}

fn events(env: &Env, args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = vec!["events", "--json"];
    all.extend_from_slice(args);
    env.run(&all)
        .ok()
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn each_shape_reads_back_as_it_happened() {
    let env = Env::new();
    let paths = write_shapes(&env);
    let mut args = vec!["capture"];
    args.extend(paths.iter().map(String::as_str));
    env.run(&args).ok();

    // Codex: prompts given only as user_message events, one written both ways, once.
    let desktop = summary(&env, "019c8a4c-1d2e-7f30-8a41-5b6c7d8e9f01");
    assert_eq!(desktop["prompts"], 2, "{desktop}");
    assert_eq!(
        desktop["closing"]["text"],
        "Fixed: Sunday maps to 0 now, and the export ran clean (1,204 rows)."
    );
    let tools: Vec<(String, String, bool)> =
        events(&env, &["--session", "019c8a4c", "--kind", "tool"])
            .iter()
            .map(|e| {
                let c = &e["event"]["ToolCall"];
                (
                    c["tool"].as_str().unwrap().to_string(),
                    c["detail"].as_str().unwrap().to_string(),
                    c["ok"].as_bool().unwrap(),
                )
            })
            .collect();
    assert_eq!(
        tools[0],
        (
            "web_search".into(),
            "cron day-of-week 0 or 7 for Sunday".into(),
            true
        )
    );
    let oks: Vec<(&str, bool)> = tools.iter().map(|(t, _, ok)| (t.as_str(), *ok)).collect();
    assert_eq!(
        oks,
        vec![
            ("web_search", true),
            ("exec_command", false),
            ("write_stdin", true),
            ("write_stdin", false),
            ("web_search", true),
            ("exec_command", true),
            ("write_stdin", true),
        ]
    );
    assert_eq!(desktop["failed_tools"], 2, "{desktop}");

    // Claude: the timed turn keeps its closing message; the notification's reply is its own.
    let finals: Vec<String> = events(&env, &["--session", "d1e2f3a4", "--kind", "final"])
        .iter()
        .map(|e| e["event"]["FinalMsg"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(finals.len(), 3, "{finals:?}");
    assert!(finals[0].starts_with("The export is running"), "{finals:?}");
    assert!(finals[1].starts_with("The export finished"), "{finals:?}");

    // The line with 1e999999 in its tool result still gives its prompt and the failure.
    let big = summary(&env, "b16b0e55-2c3d-4e5f-8a9b-0c1d2e3f4a5b");
    assert_eq!(big["prompts"], 2, "{big}");
    assert_eq!(big["failed_tools"], 1, "{big}");

    // The harness's compactor is no one's prompt; a task subagent's prompt is.
    let parent = "3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b";
    let compactor = summary(&env, &format!("{parent}/agent-acompact-5d1e0f"));
    assert_eq!(compactor["prompts"], 0, "{compactor}");
    assert_eq!(
        summary(&env, &format!("{parent}/agent-a7c19e2"))["prompts"],
        1
    );
}

#[test]
fn a_subagents_handle_is_what_listings_print_and_every_hint_with_it_works() {
    let env = Env::new();
    let paths = write_shapes(&env);
    for p in &paths {
        env.run(&["capture", p]).ok();
    }
    let listing = env.run(&["sessions"]).ok();
    for handle in ["3f6c2a9e/a7c19e2", "3f6c2a9e/acompact-5d1e0f"] {
        assert!(
            listing.stdout.contains(&format!("▸ peat show {handle}")),
            "{handle}: {}",
            listing.stdout
        );
        let show = env.run(&["show", handle]).ok();
        assert!(
            show.stdout.contains("subagent of 3f6c2a9e"),
            "{}",
            show.stdout
        );
        // Every reading hint the session's page prints runs, as printed.
        let hints: Vec<Vec<String>> = show
            .stdout
            .lines()
            .filter_map(|l| l.split("▸ peat ").nth(1))
            .filter(|h| h.contains(handle))
            .map(|h| h.split_whitespace().map(str::to_string).collect())
            .collect();
        assert!(hints.len() >= 2, "{}", show.stdout);
        for hint in &hints {
            let args: Vec<&str> = hint.iter().map(String::as_str).collect();
            let r = env.run(&args);
            assert_eq!(r.code, 0, "peat {}: {}", hint.join(" "), r.stderr);
        }
        // The bare form reads an event of the subagent, not of its parent.
        let seq = hints
            .iter()
            .find(|h| h.len() == 3 && h[0] == "show")
            .map(|h| h[2].clone())
            .expect("a hint naming one event");
        let bare = env.run(&[handle, &seq]).ok();
        assert!(
            bare.stdout
                .contains(&format!("== session {handle} event {seq}")),
            "{}",
            bare.stdout
        );
        let listed = events(&env, &["--session", handle]);
        assert!(!listed.is_empty());
        assert!(listed.iter().all(|e| {
            e["session"]
                .as_str()
                .unwrap()
                .ends_with(handle.split('/').nth(1).unwrap())
        }));
    }
}

#[test]
fn long_texts_are_kept_whole_and_their_last_words_are_found() {
    let env = Env::new();
    let prompt = format!("{} pelicanquill", "the prompt goes on. ".repeat(3_000));
    let closing = format!("{} zanzibarquux", "the answer goes on. ".repeat(3_000));
    let mut c = Claude::new(SESSION_A);
    c.user(&prompt);
    c.said(&closing);
    let t = env.path("t.jsonl");
    c.write(&t);
    env.run(&["capture", t.to_str().unwrap()]).ok();
    let texts: Vec<String> = events(&env, &[])
        .iter()
        .filter_map(|e| {
            let ev = &e["event"];
            ev["UserMsg"]["text"]
                .as_str()
                .or(ev["FinalMsg"]["text"].as_str())
                .map(str::to_string)
        })
        .collect();
    assert_eq!(texts, vec![prompt.clone(), closing.clone()]);
    for (word, whole) in [("pelicanquill", &prompt), ("zanzibarquux", &closing)] {
        let r = env.run(&["recall", word, "--json", "--full"]).ok();
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(
            v["hits"][0]["text"].as_str(),
            Some(whole.as_str()),
            "{word}"
        );
        // Without --full, a preview that says how long the whole is.
        let r = env.run(&["recall", word, "--json"]).ok();
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(v["hits"][0]["cut"], true, "{word}");
        assert_eq!(v["hits"][0]["chars"], whole.chars().count(), "{word}");
    }
    // Displays clip; --json --full above did not.
    let shown = env.run(&["show", "3f6c"]).ok();
    assert!(shown.stdout.len() < 4_000, "{} bytes", shown.stdout.len());
}

#[cfg(unix)]
#[test]
fn a_transcript_whose_name_is_not_utf8_is_captured() {
    use std::os::unix::ffi::OsStrExt;
    let env = Env::new();
    let t = env
        .path("t")
        .with_file_name(std::ffi::OsStr::from_bytes(b"t-\xff.jsonl"));
    Claude::session_of(SESSION_A, 1).write(&t);
    let mut c = env.cmd();
    c.arg("capture").arg(&t);
    let r = Run::with_stdin(&mut c, Vec::new());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("captured"), "{}", r.stderr);
}
