//! Readers never wait behind a writer: while a real `peat capture` holds the store, a read
//! answers from the views as they stand (whole events from their copy of the ledger, and
//! for `asof` the earlier versions the views keep too) and says how far behind they are;
//! and readers killed beside a writer leave the store as sound as a rebuild.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::faults::{bounded, peat};
use crate::support::{Claude, Env, SESSION_A};

/// The session the long capture writes.
const BIG: &str = "b16b16b1-0000-4000-8000-0000000000b1";

/// Capture one small session into the store.
fn small_store(env: &Env) {
    let small = env.path("small.jsonl");
    Claude::session_of(SESSION_A, 2).write(&small);
    peat(env, &["capture", small.to_str().unwrap()]).ok();
}

/// A store holding one small session, and a transcript large enough that capturing it
/// takes seconds (a debug build writes a few thousand events a second).
fn scenario(env: &Env) -> PathBuf {
    small_store(env);
    let big = env.path("big.jsonl");
    Claude::session_of(BIG, 3000).write(&big);
    big
}

/// The ledger's last change, as the hint beside it says.
fn last_change(store: &Path) -> u64 {
    std::fs::read_to_string(store.join("ledger.lsn"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// Start capturing `big`, and return once it has written part of it to the ledger: the
/// writer then holds the store, in the middle of its long phase.
fn capture_running(env: &Env, big: &Path) -> Child {
    let before = last_change(&env.store());
    let mut child = env
        .cmd()
        .args(["capture", big.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while last_change(&env.store()) == before {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the capture ended before writing"
        );
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no write in 60s"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    child
}

/// Fails the test when the writer finished before the reads did: they then proved nothing.
#[track_caller]
fn still_writing(child: &mut Child) {
    assert!(
        child.try_wait().unwrap().is_none(),
        "the capture finished before the reads: the transcript must be larger"
    );
}

#[test]
fn reads_during_a_capture_answer_from_the_views_as_they_stand_and_say_how_far_behind() {
    let env = Env::new();
    let big = scenario(&env);
    let mut writer = capture_running(&env, &big);

    let sessions = peat(&env, &["sessions"]).ok();
    let brief = peat(&env, &["brief"]).ok();
    let search = peat(&env, &["recall", "limiter"]).ok();
    let json = peat(&env, &["sessions", "--json"]).ok();
    let short = &SESSION_A[..8];
    let log = peat(&env, &["log", short]).ok();
    still_writing(&mut writer);

    assert!(sessions.stdout.contains(short), "{}", sessions.stdout);
    assert!(search.stdout.contains("limiter"), "{}", search.stdout);
    assert!(
        log.stdout.contains(&format!("peat show {short}")),
        "{}",
        log.stdout
    );
    for (what, r) in [
        ("sessions", &sessions),
        ("brief", &brief),
        ("recall", &search),
        ("log", &log),
    ] {
        assert!(
            r.stderr.contains("recorded changes behind") && r.stderr.contains("peat capture"),
            "{what} did not say it is behind the capture: {}",
            r.stderr
        );
    }
    // stdout stays an API: the note is on stderr only.
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert!(
        v.as_array()
            .unwrap()
            .iter()
            .any(|s| s["session"] == SESSION_A)
    );

    assert!(writer.wait().unwrap().success());
    let after = peat(&env, &["sessions"]).ok();
    assert!(after.stdout.contains(&BIG[..8]), "{}", after.stdout);
    assert!(!after.stderr.contains("behind"), "{}", after.stderr);
}

/// The seq of session A's first recorded edit, as `events` lists it.
fn first_edit(env: &Env) -> u64 {
    let short = &SESSION_A[..8];
    let listed = peat(
        env,
        &["events", "--session", short, "--kind", "file", "--json"],
    )
    .ok();
    let first: serde_json::Value =
        serde_json::from_str(listed.stdout.lines().next().unwrap()).unwrap();
    first["seq"].as_u64().unwrap()
}

#[test]
fn reads_of_whole_events_during_a_capture_answer_from_the_views_copy_without_waiting() {
    let env = Env::new();
    let big = scenario(&env);
    let short = &SESSION_A[..8];
    let seq = first_edit(&env).to_string();
    // What each read says with the store idle: beside the writer it must say the same.
    let idle = |args: &[&str]| peat(&env, args).ok().stdout;
    let reads: [&[&str]; 6] = [
        &["show", short, &seq],
        &["events", "--session", short, "--json"],
        &["events", "--session", short],
        &["recall", "--session", short, "--keyword-only", "limiter"],
        &[short],
        &[short, &seq],
    ];
    let before: Vec<String> = reads.iter().map(|a| idle(a)).collect();
    let shown: serde_json::Value =
        serde_json::from_str(&idle(&["show", "--json", short, &seq])).unwrap();
    assert_eq!(shown["behind"], 0, "{shown}");

    let mut writer = capture_running(&env, &big);
    let during: Vec<_> = reads.iter().map(|a| peat(&env, a).ok()).collect();
    let json = peat(&env, &["show", "--json", short, &seq]).ok();
    let recall = peat(
        &env,
        &[
            "recall",
            "--json",
            "--session",
            short,
            "--keyword-only",
            "limiter",
        ],
    )
    .ok();
    still_writing(&mut writer);

    for ((args, was), now) in reads.iter().zip(&before).zip(&during) {
        assert_eq!(
            &now.stdout, was,
            "{args:?} answered otherwise beside the writer"
        );
        assert!(
            now.stderr.contains("recorded changes behind") && now.stderr.contains("peat capture"),
            "{args:?} did not say it is behind the capture: {}",
            now.stderr
        );
    }
    // What the edit wrote is shown from the views' changes table.
    assert!(
        during[0].stdout.contains("+app.use(rateLimit());"),
        "{}",
        during[0].stdout
    );
    for (what, doc) in [("show", &json.stdout), ("recall", &recall.stdout)] {
        let v: serde_json::Value = serde_json::from_str(doc).unwrap();
        assert!(v["behind"].as_u64().unwrap() > 0, "{what}: {v}");
    }
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["change"], shown["change"]);

    // An event the views do not show yet is not found, and the error says why.
    let missing = peat(&env, &["show", short, "99999"]);
    assert_eq!(missing.code, 1, "{}", missing.stderr);
    assert!(
        missing.stderr.contains("still writing"),
        "{}",
        missing.stderr
    );
    assert!(writer.wait().unwrap().success());
}

#[test]
fn reads_beside_a_held_store_answer_at_once_asof_too() {
    let env = Env::new();
    small_store(&env);
    let short = &SESSION_A[..8];
    let seq = first_edit(&env).to_string();
    let idle = peat(&env, &["asof", "today", "--json"]).ok().stdout;
    let held = peat::ledger::lock::acquire(
        &env.store().join("lock"),
        Duration::ZERO,
        "peat import (test)",
        &mut || {},
    )
    .unwrap();

    // The views are caught up: they answer at once, with no note. A writer that never
    // lets go (the lock wait is 1 s here) would turn any read that waits into a 75.
    for args in [
        &["sessions"][..],
        &["events", "--json"],
        &["show", short],
        &["show", short, &seq],
        &["recall", "--session", short, "--keyword-only", "limiter"],
        &["asof", "today"],
    ] {
        let r = bounded(
            env.cmd().args(args).env("PEAT_LOCK_WAIT_SECS", "1"),
            Duration::from_secs(30),
        );
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert!(!r.stdout.is_empty(), "{args:?}");
        assert!(!r.stderr.contains("behind"), "{args:?}: {}", r.stderr);
    }
    let beside = peat(&env, &["asof", "today", "--json"]).ok().stdout;
    assert_eq!(beside, idle);
    drop(held);
}

/// The store of [`scenario`], its long transcript recorded days after the small session's
/// day (2026-07-14): `asof` that day must not change while it is captured.
fn later_scenario(env: &Env) -> PathBuf {
    small_store(env);
    let big = env.path("big.jsonl");
    let text = Claude::session_of(BIG, 3000)
        .text()
        .replace("2026-07-14T", "2026-07-20T");
    std::fs::write(&big, text).unwrap();
    big
}

/// `asof --json` without its `behind` field, and that field.
fn without_behind(doc: &str) -> (serde_json::Value, u64) {
    let mut v: serde_json::Value = serde_json::from_str(doc).unwrap();
    let behind = v["behind"].as_u64().unwrap();
    v["behind"] = serde_json::Value::Null;
    (v, behind)
}

#[test]
fn asof_during_a_capture_answers_from_the_views_as_they_stand_without_waiting() {
    let env = Env::new();
    let big = later_scenario(&env);
    let reads: [&[&str]; 3] = [
        &["asof", "2026-07-14"],
        &["asof", "2026-07-14", "limiter"],
        &["asof", "2026-07-14", "--json"],
    ];
    let before: Vec<String> = reads.iter().map(|a| peat(&env, a).ok().stdout).collect();
    let (idle_json, idle_behind) = without_behind(&before[2]);
    assert_eq!(idle_behind, 0, "{}", before[2]);

    let mut writer = capture_running(&env, &big);
    let during: Vec<_> = reads.iter().map(|a| peat(&env, a)).collect();
    still_writing(&mut writer);

    for ((args, was), now) in reads.iter().zip(&before).zip(&during) {
        assert_eq!(now.code, 0, "{args:?}: {}", now.stderr);
        assert!(
            now.stderr.contains("recorded changes behind") && now.stderr.contains("peat capture"),
            "{args:?} did not say it is behind the capture: {}",
            now.stderr
        );
        if args.contains(&"--json") {
            let (json, behind) = without_behind(&now.stdout);
            assert_eq!(json, idle_json);
            assert!(behind > 0, "{}", now.stdout);
        } else {
            assert_eq!(
                &now.stdout, was,
                "{args:?} answered otherwise beside the writer"
            );
        }
    }
    assert!(before[1].contains("limiter"), "{}", before[1]);
    assert!(writer.wait().unwrap().success());
}

#[test]
fn readers_killed_beside_a_writer_leave_the_store_as_sound_as_a_rebuild() {
    let env = Env::new();
    let big = scenario(&env);
    let mut writer = capture_running(&env, &big);
    let mut killed = 0;
    for i in 0..12u64 {
        if writer.try_wait().unwrap().is_some() {
            break;
        }
        let args: &[&str] = match i % 3 {
            0 => &["sessions"],
            1 => &["recall", "limiter"],
            _ => &["brief"],
        };
        let mut reader = env
            .cmd()
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Spread over the read: before, during and after it opens the views.
        std::thread::sleep(Duration::from_millis(3 * i));
        if reader.try_wait().unwrap().is_none() {
            killed += 1;
        }
        reader.kill().ok();
        reader.wait().unwrap();
    }
    still_writing(&mut writer);
    assert!(writer.wait().unwrap().success());
    assert!(
        killed > 0,
        "no reader was killed mid-read: the test proved nothing"
    );

    let doctor = peat(&env, &["doctor"]).ok();
    assert!(doctor.stdout.contains("all is well"), "{}", doctor.stdout);
    let served = peat(&env, &["sessions", "--json"]).ok().stdout;
    let found = peat(&env, &["recall", "--json", "--limit", "50", "limiter"]).ok();
    peat(&env, &["rebuild"]).ok();
    assert_eq!(served, peat(&env, &["sessions", "--json"]).ok().stdout);
    let strip = |s: &str| {
        let mut v: serde_json::Value = serde_json::from_str(s).unwrap();
        v["timings"] = serde_json::Value::Null;
        v
    };
    let rebuilt = peat(&env, &["recall", "--json", "--limit", "50", "limiter"]).ok();
    assert_eq!(strip(&found.stdout), strip(&rebuilt.stdout));
}
