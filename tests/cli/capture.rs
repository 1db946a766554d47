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
        1 + 3 * 6,
        "meta, then per turn: prompt, 2 said, 2 tools, 1 file: {}",
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
    let sessions = env.run(&["sessions", "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&sessions.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 8);
}

#[test]
fn a_ledger_held_too_long_exits_75_naming_the_holder() {
    let env = Env::new();
    let t = env.path("t.jsonl");
    Claude::session_of(SESSION_A, 1).write(&t);
    env.run(&["capture", t.to_str().unwrap()]).ok();
    let _held = peat::ledger::lock::acquire(
        &env.store().join("lock"),
        std::time::Duration::ZERO,
        "peat import (test)",
        &mut || {},
    )
    .unwrap();
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
    assert!(show.stdout.contains("commits: 4be1c0a"), "{}", show.stdout);
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
        eprintln!("skipped: {} is not here", dir.display());
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
