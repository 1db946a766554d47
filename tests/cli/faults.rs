//! Faults: bad files, damaged stores, a full disk. Every run here is bounded: a command
//! that hangs is killed and the test fails, instead of hanging the suite.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{Claude, Env, Run, eventually, kill_after, skip};

const SESSION: &str = "5a0c1e2d-0000-4000-8000-00000000f001";

/// Run `cmd` to completion, or kill it after `limit` and fail the test. Its output is
/// drained while it runs, so a large answer cannot stall it on a full pipe.
#[track_caller]
pub(crate) fn bounded(cmd: &mut Command, limit: Duration) -> Run {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let err = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
            panic!("still running after {limit:?}: {err}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run::of(std::process::Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    })
}

/// `peat ARGS` in `env`, killed and failed if it runs past a minute.
pub(crate) fn peat(env: &Env, args: &[&str]) -> Run {
    bounded(env.cmd().args(args), Duration::from_secs(60))
}

fn transcript(env: &Env, name: &str, turns: usize) -> std::path::PathBuf {
    let t = env.path(name);
    Claude::session_of(SESSION, turns).write(&t);
    t
}

/// A 3 MB transcript of text that does not compress: the ledger outgrows a small disk,
/// and closing it writes tables (not only a journal).
fn incompressible(path: &Path) {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut noise = |n: usize| -> String {
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                format!("{x:016x}")
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut c = Claude::new(SESSION);
    for t in 0..200 {
        c.user(&format!("turn {t}: explain the limiter"));
        c.said(&format!("turn {t}: {}", noise(1000)));
    }
    c.write(path);
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
    let _held = env.hold_lock("peat import (test)");
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

/// A small tmpfs of its own, unmounted when dropped. Mounting needs root (CI runs as root);
/// elsewhere the test says so, and fails under `CI=true` rather than skip silently.
struct SmallDisk {
    at: std::path::PathBuf,
}

impl SmallDisk {
    #[track_caller]
    fn mount(at: std::path::PathBuf, size: &str) -> Option<SmallDisk> {
        std::fs::create_dir_all(&at).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&at)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            skip("cannot mount a tmpfs (needs root)", false);
            return None;
        }
        Some(SmallDisk { at })
    }

    fn grow(&self, size: &str) {
        let ok = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.at)
            .status()
            .unwrap();
        assert!(ok.success());
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.at).status();
    }
}

#[test]
fn a_full_disk_fails_promptly_names_the_disk_loses_nothing_and_resumes() {
    let env = Env::new();
    let Some(disk) = SmallDisk::mount(env.path("disk"), "1m") else {
        return;
    };
    let t = env.path("big.jsonl");
    incompressible(&t);
    let on_disk = |args: &[&str]| {
        bounded(
            env.cmd().env("PEAT_DB", disk.at.join("db")).args(args),
            Duration::from_secs(60),
        )
    };
    let full = on_disk(&["capture", t.to_str().unwrap()]);
    assert_eq!(full.code, 2, "{}", full.stderr);
    let mount = disk.at.canonicalize().unwrap();
    for said in [
        "is full",
        &format!("mounted at {}", mount.display()),
        "needs about",
        "Nothing was lost",
    ] {
        assert!(full.stderr.contains(said), "{said:?} in {}", full.stderr);
    }
    for raw in ["Poisoned", "FjallError", "Os {"] {
        assert!(!full.stderr.contains(raw), "{raw:?} in {}", full.stderr);
    }
    // The lock was released: the next writer is refused for space, not for a busy ledger.
    let again = on_disk(&["capture", t.to_str().unwrap()]);
    assert_eq!(again.code, 2, "{}", again.stderr);

    disk.grow("64m");
    on_disk(&["capture", t.to_str().unwrap()]).ok();
    let dump = on_disk(&["events", "--json"]).ok().stdout;
    let fresh = Env::new();
    fresh.run(&["capture", t.to_str().unwrap()]).ok();
    assert_eq!(dump, fresh.dump(), "the resumed capture equals a clean one");
}

#[test]
fn reads_on_a_full_disk_answer_from_the_views_as_they_stand_and_say_how_far_behind() {
    let env = Env::new();
    let Some(disk) = SmallDisk::mount(env.path("disk"), "16m") else {
        return;
    };
    let store = disk.at.join("db");
    let on_disk = |args: &[&str]| {
        bounded(
            env.cmd().env("PEAT_DB", &store).args(args),
            Duration::from_secs(60),
        )
    };
    let first = transcript(&env, "first.jsonl", 2);
    on_disk(&["capture", first.to_str().unwrap()]).ok();
    // The views as they stood after the first session, put back after a second is recorded:
    // views behind their ledger, which any read would catch up, writing.
    let saved = env.path("saved");
    std::fs::create_dir_all(&saved).unwrap();
    for p in view_parts(&store) {
        copy_tree(&p, &saved.join(p.file_name().unwrap()));
    }
    // Enough that catching up needs fresh room (the store's files keep some spare).
    let second = env.path("second.jsonl");
    Claude::session_of(OTHER, 200).write(&second);
    on_disk(&["capture", second.to_str().unwrap()]).ok();
    for p in view_parts(&store) {
        std::fs::remove_dir_all(p).unwrap();
    }
    for p in view_parts(&saved) {
        copy_tree(&p, &store.join(p.file_name().unwrap()));
    }
    // Fill the disk to its last byte.
    let mut fill = std::fs::File::create(disk.at.join("fill")).unwrap();
    let block = vec![0u8; 64 * 1024];
    while std::io::Write::write_all(&mut fill, &block).is_ok() {}
    while std::io::Write::write_all(&mut fill, &[0]).is_ok() {}
    drop(fill);

    let r = on_disk(&["sessions", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let ids: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![SESSION], "the views as they stood");
    for said in [
        "could not be brought up to date",
        "is full",
        "recorded changes behind",
        "free some room",
    ] {
        assert!(r.stderr.contains(said), "{said:?} in {}", r.stderr);
    }
    // Every read answers: a search, a session's log, the brief.
    on_disk(&["recall", "limiter"]).ok();
    on_disk(&["log", "5a0c1e2d"]).ok();
    assert!(on_disk(&["brief"]).code <= 1);

    // With room again, the views catch up and the second session is there.
    std::fs::remove_file(disk.at.join("fill")).unwrap();
    let r = on_disk(&["sessions", "--json"]).ok();
    assert!(r.stdout.contains(OTHER), "{}", r.stdout);
    assert!(!r.stderr.contains("behind"), "{}", r.stderr);
}

const OTHER: &str = "5a0c1e2d-0000-4000-8000-00000000f002";

/// Copy a directory tree (the views of a store, a ledger's backup).
fn copy_tree(from: &Path, to: &Path) {
    let ok = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(ok.success());
}

fn sessions(env: &Env) -> (Vec<String>, String) {
    let r = peat(env, &["sessions", "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let ids = v
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session"].as_str().unwrap().to_string())
        .collect();
    (ids, r.stderr)
}

/// The view parts of a store: the views database and the keyword index generations.
fn view_parts(store: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(store)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n == "views" || n.starts_with("keyword.")
        })
        .collect()
}

#[test]
fn views_folded_from_another_ledger_are_rebuilt_not_served() {
    let env = Env::new();
    let t = transcript(&env, "t.jsonl", 2);
    peat(&env, &["capture", t.to_str().unwrap()]).ok();
    let other = Env::new();
    let o = other.path("o.jsonl");
    Claude::session_of(OTHER, 2).write(&o);
    peat(&other, &["capture", o.to_str().unwrap()]).ok();
    assert_eq!(sessions(&other).0, vec![OTHER]);

    for p in view_parts(&env.store()) {
        std::fs::remove_dir_all(p).unwrap();
    }
    for p in view_parts(&other.store()) {
        copy_tree(&p, &env.store().join(p.file_name().unwrap()));
    }
    let (ids, stderr) = sessions(&env);
    assert_eq!(ids, vec![SESSION], "{stderr}");
    assert!(stderr.contains("another ledger"), "{stderr}");
    // Rebuilt once: the next read is quiet.
    assert_eq!(sessions(&env).1, "");
}

#[test]
fn views_ahead_of_a_restored_older_ledger_are_rebuilt() {
    let env = Env::new();
    let t = transcript(&env, "t.jsonl", 2);
    peat(&env, &["capture", t.to_str().unwrap()]).ok();
    let backup = env.path("backup");
    copy_tree(&env.store(), &backup);
    let o = env.path("o.jsonl");
    Claude::session_of(OTHER, 2).write(&o);
    peat(&env, &["capture", o.to_str().unwrap()]).ok();
    assert_eq!(sessions(&env).0.len(), 2);

    // The ledger (and its hints) come back from the backup; the newer views stay.
    for part in ["fjall", "ledger.lsn", "ledger.id"] {
        let p = env.store().join(part);
        if p.is_dir() {
            std::fs::remove_dir_all(&p).unwrap();
        } else {
            std::fs::remove_file(&p).unwrap();
        }
        copy_tree(&backup.join(part), &p);
    }
    let (ids, stderr) = sessions(&env);
    assert_eq!(ids, vec![SESSION], "{stderr}");
    assert!(stderr.contains("older ledger restored"), "{stderr}");
}

/// Zero a file in place, keeping its length.
fn zero(p: &Path) {
    let len = std::fs::metadata(p).unwrap().len() as usize;
    std::fs::write(p, vec![0u8; len]).unwrap();
}

/// Every table file under `dir`, cut to its first 100 bytes.
fn truncate_tables(dir: &Path) -> usize {
    let mut n = 0;
    for ks in std::fs::read_dir(dir.join("keyspaces")).unwrap() {
        let tables = ks.unwrap().path().join("tables");
        for t in std::fs::read_dir(&tables).into_iter().flatten() {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(t.unwrap().path())
                .unwrap();
            f.set_len(100).unwrap();
            n += 1;
        }
    }
    n
}

#[test]
fn rebuild_reads_and_capture_recover_from_damaged_views() {
    let env = Env::new();
    let t = transcript(&env, "t.jsonl", 30);
    peat(&env, &["capture", t.to_str().unwrap()]).ok();
    let want = sessions(&env).0;
    let views = env.store().join("views");

    zero(&views.join("version"));
    let r = peat(&env, &["rebuild"]).ok();
    assert!(r.stderr.contains("damaged"), "{}", r.stderr);
    assert_eq!(sessions(&env).0, want);

    assert!(truncate_tables(&views) > 0, "the views wrote no table");
    let (got, stderr) = sessions(&env);
    assert_eq!(got, want, "a read rebuilds damaged views: {stderr}");
    assert!(stderr.contains("damaged"), "{stderr}");

    zero(&views.join("version"));
    let o = env.path("o.jsonl");
    Claude::session_of(OTHER, 2).write(&o);
    let r = peat(&env, &["capture", o.to_str().unwrap()]).ok();
    assert!(r.stderr.contains("damaged"), "{}", r.stderr);
    assert_eq!(sessions(&env).0.len(), 2);
}

#[test]
fn doctor_passes_a_sound_store_and_names_damaged_views() {
    let env = Env::new();
    let t = transcript(&env, "t.jsonl", 3);
    peat(&env, &["capture", t.to_str().unwrap()]).ok();
    let r = peat(&env, &["doctor"]).ok();
    assert!(r.stdout.contains("✓ ledger"), "{}", r.stdout);
    assert!(r.stdout.contains("all is well"), "{}", r.stdout);
    let v: serde_json::Value =
        serde_json::from_str(&peat(&env, &["doctor", "--json"]).ok().stdout).unwrap();
    assert_eq!(v["ledger"]["ok"], true);
    assert_eq!(v["run"].as_array().unwrap().len(), 0);

    for p in view_parts(&env.store()) {
        std::fs::remove_dir_all(p).unwrap();
    }
    let r = peat(&env, &["doctor"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stdout.contains("✗ views"), "{}", r.stdout);
    assert!(r.stdout.contains("peat rebuild"), "{}", r.stdout);
    peat(&env, &["rebuild"]).ok();
    peat(&env, &["doctor"]).ok();
}

#[test]
fn doctor_names_a_closings_file_that_does_not_list_what_the_views_hold() {
    let env = Env::new();
    let t = transcript(&env, "t.jsonl", 3);
    peat(&env, &["capture", t.to_str().unwrap()]).ok();
    let file = env.store().join("closings.json");
    let written = std::fs::read_to_string(&file).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&written).unwrap();
    assert!(!v["sessions"].as_array().unwrap().is_empty(), "{written}");
    v["sessions"][0]["text"] = "not what the views hold".into();
    std::fs::write(&file, v.to_string()).unwrap();
    let r = peat(&env, &["doctor"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stdout.contains("closings.json"), "{}", r.stdout);
    assert!(r.stdout.contains("peat rebuild"), "{}", r.stdout);
    peat(&env, &["rebuild"]).ok();
    peat(&env, &["doctor"]).ok();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), written);
}

/// Flip 64 bytes in the middle of the ledger's events table. fjall numbers keyspaces in
/// the order they are first opened, and the ledger opens `events` first: keyspace 1.
fn flip_ledger_table(store: &Path) {
    let tables = store.join("fjall/keyspaces/1/tables");
    let table = std::fs::read_dir(&tables)
        .unwrap()
        .map(|e| e.unwrap().path())
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .expect("the ledger wrote an events table");
    let mut bytes = std::fs::read(&table).unwrap();
    let mid = bytes.len() / 2;
    for b in &mut bytes[mid..mid + 64] {
        *b ^= 0xff;
    }
    std::fs::write(&table, bytes).unwrap();
}

#[test]
fn a_corrupt_ledger_is_reported_by_doctor_capture_and_every_read() {
    let env = Env::new();
    let t = env.path("big.jsonl");
    incompressible(&t);
    peat(&env, &["capture", t.to_str().unwrap()]).ok();
    flip_ledger_table(&env.store());

    // The same transcript under another name reads every stored event back to compare.
    let again = env.path("again.jsonl");
    std::fs::copy(&t, &again).unwrap();
    let r = peat(&env, &["capture", again.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("checksum"), "{}", r.stderr);

    let r = peat(&env, &["doctor"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stdout.contains("✗ ledger"), "{}", r.stdout);
    assert!(r.stdout.contains("cp -a"), "{}", r.stdout);
    for r in [r.stdout.as_str(), r.stderr.as_str()] {
        for bad in ["aside", "rm -", "delete the"] {
            assert!(!r.contains(bad), "a hint discards the ledger: {r}");
        }
    }
    for read in [
        &["sessions"][..],
        &["brief"],
        &["recall", "limiter"],
        &["show", &SESSION[..8]],
    ] {
        let r = peat(&env, read);
        assert!(
            r.stderr.contains("the ledger is damaged"),
            "{read:?} is silent: {}",
            r.stderr
        );
    }
}

#[test]
fn a_deleted_lock_file_neither_hides_the_ledger_nor_admits_a_second_writer() {
    let env = Env::new();
    let t = transcript(&env, "t.jsonl", 2);
    peat(&env, &["capture", t.to_str().unwrap()]).ok();
    let lock = env.store().join("lock");
    std::fs::remove_file(&lock).unwrap();
    assert_eq!(sessions(&env).0, vec![SESSION]);

    let _held =
        peat::ledger::lock::acquire(&lock, Duration::ZERO, "peat import (test)", &mut || {})
            .unwrap();
    std::fs::remove_file(&lock).unwrap();
    let r = bounded(
        env.cmd()
            .env("PEAT_LOCK_WAIT_SECS", "1")
            .args(["capture", t.to_str().unwrap()]),
        Duration::from_secs(30),
    );
    assert_eq!(r.code, 75, "a second writer got in: {}", r.stderr);
}

/// `peat hook` with a Stop payload for `t`, as Claude Code runs it.
fn stop_hook(env: &Env, t: &Path, closing: &str, vars: &[(&str, &str)]) -> Run {
    let payload = serde_json::json!({
        "hook_event_name": "Stop",
        "session_id": SESSION,
        "transcript_path": t,
        "cwd": env.path("work"),
        "stop_hook_active": false,
        "last_assistant_message": closing,
    });
    crate::hook::fire_in(
        env,
        &env.path("work"),
        payload.to_string().into_bytes(),
        vars,
    )
}

/// Processes whose environment points at `store` (the hook's detached captures).
fn captures_of(store: &Path) -> usize {
    let want = format!("PEAT_DB={}", store.display());
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .chars()
                .all(|c| c.is_ascii_digit())
        })
        .filter(|e| {
            std::fs::read(e.path().join("environ"))
                .map(|b| b.split(|c| *c == 0).any(|v| v == want.as_bytes()))
                .unwrap_or(false)
                && std::fs::read(e.path().join("cmdline"))
                    .map(|b| b.split(|c| *c == 0).any(|a| a == b"capture"))
                    .unwrap_or(false)
        })
        .count()
}

fn final_msgs(env: &Env) -> Vec<String> {
    env.dump()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["event"]["FinalMsg"]["text"].as_str().map(String::from))
        .collect()
}

#[test]
fn a_closing_message_outlives_a_lock_wait_that_ran_out() {
    let env = Env::new();
    let t = transcript(&env, "t.jsonl", 2);
    peat(&env, &["capture", t.to_str().unwrap()]).ok();
    let held = env.hold_lock("peat import (test)");
    let r = stop_hook(
        &env,
        &t,
        "Closing: the limiter ships.",
        &[("PEAT_LOCK_WAIT_SECS", "1")],
    );
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    eventually("the detached capture gives up", || {
        std::thread::sleep(Duration::from_millis(300));
        captures_of(&env.store()) == 0
    });
    let log = std::fs::read_to_string(env.path("work/.peat/hook.log")).unwrap();
    assert!(log.contains("busy"), "{log}");
    drop(held);
    assert!(!final_msgs(&env).iter().any(|m| m.contains("limiter ships")));
    // The next capture, of anything, records it.
    let other = env.path("o.jsonl");
    Claude::session_of(OTHER, 1).write(&other);
    peat(&env, &["capture", other.to_str().unwrap()]).ok();
    assert!(
        final_msgs(&env)
            .iter()
            .any(|m| m == "Closing: the limiter ships."),
        "{:?}",
        final_msgs(&env)
    );
    assert!(
        std::fs::read_dir(env.store().join("spool"))
            .unwrap()
            .all(|e| { !e.unwrap().file_name().to_string_lossy().ends_with(".final") })
    );
}

#[test]
fn stop_hooks_behind_a_stuck_capture_coalesce_and_the_last_message_wins() {
    let env = Env::new();
    let t = transcript(&env, "t.jsonl", 2);
    peat(&env, &["capture", t.to_str().unwrap()]).ok();
    let held = env.hold_lock("peat import (test)");
    for i in 0..20 {
        let r = stop_hook(
            &env,
            &t,
            &format!("closing {i}"),
            &[("PEAT_LOCK_WAIT_SECS", "60")],
        );
        assert_eq!(r.code, 0);
    }
    std::thread::sleep(Duration::from_millis(500));
    let waiting = captures_of(&env.store());
    assert_eq!(waiting, 1, "{waiting} captures wait for one transcript");
    drop(held);
    eventually("the waiting capture records the last message", || {
        final_msgs(&env).iter().any(|m| m == "closing 19")
    });
    eventually("the capture ends", || captures_of(&env.store()) == 0);
}

#[test]
fn a_hook_with_a_bad_environment_still_captures_and_logs_why() {
    let env = Env::new();
    let t = transcript(&env, "t.jsonl", 2);
    peat(&env, &["capture", t.to_str().unwrap()]).ok();
    let r = stop_hook(
        &env,
        &t,
        "closing despite the environment",
        &[("PEAT_LOCK_WAIT_SECS", "soon"), ("PEAT_NOW", "yesterday")],
    );
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "", ""));
    let log = std::fs::read_to_string(env.path("work/.peat/hook.log")).unwrap();
    assert!(log.contains("PEAT_LOCK_WAIT_SECS is not a number"), "{log}");
    assert!(log.contains("PEAT_NOW is not an ISO-8601 instant"), "{log}");
    eventually("the capture records the message", || {
        final_msgs(&env)
            .iter()
            .any(|m| m == "closing despite the environment")
    });
}

// A kill between fjall's first journal and its version marker once left a store that would
// not open again ("File exists"); `ledger::clear_unfinished_creation` is why it passes.
#[test]
fn sigkill_during_capture_import_and_rebuild_loses_and_duplicates_nothing() {
    let env = Env::new();
    let t = env.path("home/.claude/projects/-home-dev-acme-api/big.jsonl");
    std::fs::create_dir_all(t.parent().unwrap()).unwrap();
    incompressible(&t);
    let clean = Env::new();
    clean.run(&["capture", t.to_str().unwrap()]).ok();
    let want = clean.dump();

    // Killed at moments spread over a capture's life (start, mid-write, closing).
    for ms in [10u64, 150, 600] {
        kill_after(
            &env,
            &["capture", t.to_str().unwrap()],
            Duration::from_millis(ms),
        );
    }
    kill_after(&env, &["import"], Duration::from_millis(100));
    kill_after(&env, &["rebuild"], Duration::from_millis(100));
    peat(&env, &["capture", t.to_str().unwrap()]).ok();
    assert_eq!(env.dump(), want);
    assert_eq!(sessions(&env).0, vec![SESSION]);
    peat(&env, &["doctor"]).ok();
}
