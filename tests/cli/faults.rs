//! Faults: bad files, damaged stores, a full disk. Every run here is bounded: a command
//! that hangs is killed and the test fails, instead of hanging the suite.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{Claude, Env, Run};

const SESSION: &str = "5a0c1e2d-0000-4000-8000-00000000f001";

/// Run `cmd` to completion, or kill it after `limit` and fail the test.
#[track_caller]
fn bounded(cmd: &mut Command, limit: Duration) -> Run {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!(
                "still running after {limit:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Run::of(child.wait_with_output().unwrap())
}

fn peat(env: &Env, args: &[&str]) -> Run {
    bounded(env.cmd().args(args), Duration::from_secs(60))
}

fn transcript(env: &Env, name: &str, turns: usize) -> std::path::PathBuf {
    let t = env.path(name);
    Claude::session_of(SESSION, turns).write(&t);
    t
}

fn mkfifo(p: &Path) {
    assert!(Command::new("mkfifo").arg(p).status().unwrap().success());
}

#[test]
fn fifos_devices_and_folders_are_refused_at_once_without_the_lock() {
    let env = Env::new();
    let good = transcript(&env, "t.jsonl", 2);
    peat(&env, &["capture", good.to_str().unwrap()]).ok();
    let fifo = env.path("pipe.jsonl");
    mkfifo(&fifo);
    // A writer holds the lock: a refusal must not wait for it.
    let _held = peat::ledger::lock::acquire(
        &env.store().join("lock"),
        Duration::ZERO,
        "peat import (test)",
        &mut || {},
    )
    .unwrap();
    let folder = env.path("work");
    for (bad, kind) in [
        (fifo.as_path(), "FIFO"),
        (Path::new("/dev/zero"), "character device"),
        (Path::new("/dev/null"), "character device"),
        (folder.as_path(), "directory"),
    ] {
        let bad = bad.to_str().unwrap();
        let started = Instant::now();
        let r = bounded(
            env.cmd()
                .env("PEAT_LOCK_WAIT_SECS", "30")
                .args(["capture", bad]),
            Duration::from_secs(20),
        );
        assert_ne!(r.code, 0, "{bad}");
        assert_ne!(r.code, 75, "{bad} waited for the lock: {}", r.stderr);
        assert!(started.elapsed() < Duration::from_secs(10), "{bad}");
        assert!(r.stderr.contains(kind), "{bad}: {}", r.stderr);
        assert!(r.stderr.contains("not a regular file"), "{}", r.stderr);
    }
}

#[test]
fn a_fifo_among_good_files_does_not_stop_them() {
    let env = Env::new();
    let good = transcript(&env, "t.jsonl", 2);
    let fifo = env.path("pipe.jsonl");
    mkfifo(&fifo);
    let r = peat(
        &env,
        &["capture", fifo.to_str().unwrap(), good.to_str().unwrap()],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("FIFO"), "{}", r.stderr);
    assert!(r.stderr.contains("captured "), "{}", r.stderr);
    assert!(env.dump().contains(SESSION));
}

#[test]
fn exit_codes_follow_the_contract_in_the_help() {
    let env = Env::new();
    let help = peat(&env, &["--help"]).ok().stdout;
    for line in [
        "0   success",
        "1   nothing found",
        "2   an error",
        "75  the ledger",
    ] {
        assert!(help.contains(line), "--help lacks {line:?}");
    }
    // Nothing recorded yet, then no such session: nothing found.
    assert_eq!(peat(&env, &["sessions"]).code, 1);
    let good = transcript(&env, "t.jsonl", 2);
    peat(&env, &["capture", good.to_str().unwrap()]).ok();
    assert_eq!(peat(&env, &["show", "ffff"]).code, 1);
    // Bad usage and invalid input: an error.
    assert_eq!(peat(&env, &["sessions", "--no-such-flag"]).code, 2);
    assert_eq!(peat(&env, &["zoom", "lately"]).code, 2);
    let bad = env.path("notes.jsonl");
    std::fs::write(&bad, "{\"kind\":\"mystery\"}\n").unwrap();
    assert_eq!(peat(&env, &["capture", bad.to_str().unwrap()]).code, 2);
    assert_eq!(peat(&env, &["capture", "/dev/null"]).code, 2);
}
