//! The resident embedder (`peat model serve`) through the real binary, with the pinned
//! model: a second search is answered by it with the in-process results, a killed one is
//! replaced, an idle one exits, and `PEAT_EMBED_IDLE_SECS=0` starts none. Every test stops
//! the server it started ([`Resident`]'s drop), so none outlives the suite.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::recall::write_two_sessions;
use crate::support::{Env, Run, eventually, model_data_dir};
use peat::embed::Lookup;
use peat::embed::resident::{Client, Status};

const QUERY: &str = "why did compiling for M1 macs break";

/// A test environment with the model installed under `data`, the resident embedder's
/// socket in the test's own `run/`, and the server stopped when dropped.
struct Resident {
    env: Env,
    data: PathBuf,
}

impl Resident {
    /// Two sessions captured and embedded.
    fn new(data: PathBuf) -> Resident {
        let r = Resident {
            env: Env::new(),
            data,
        };
        let [a, b] = write_two_sessions(&r.env);
        r.run("0", &["capture", &a, &b]).ok();
        r.run("0", &["model", "embed"]).ok();
        r
    }

    /// `peat ARGS` with `PEAT_EMBED_IDLE_SECS=idle`.
    fn cmd(&self, idle: &str, args: &[&str]) -> Command {
        let mut c = self.env.cmd();
        c.env("PEAT_DATA_DIR", &self.data)
            .env("XDG_RUNTIME_DIR", self.run_dir())
            .env("PEAT_EMBED_IDLE_SECS", idle)
            .args(args);
        c
    }

    fn run(&self, idle: &str, args: &[&str]) -> Run {
        Run::of(self.cmd(idle, args).output().unwrap())
    }

    fn run_dir(&self) -> PathBuf {
        self.env.path("run")
    }

    fn socket(&self) -> PathBuf {
        self.run_dir().join("peat/embed-all-MiniLM-L6-v2-int8.sock")
    }

    /// A hybrid search's `--json` answer.
    fn search(&self, idle: &str) -> serde_json::Value {
        let r = self.run(idle, &["recall", QUERY, "--json"]).ok();
        serde_json::from_str(&r.stdout).unwrap()
    }

    /// `peat model status --json`'s `resident` (the command hashes every file: seconds in
    /// a debug build).
    fn status(&self) -> serde_json::Value {
        let r = self.run("60", &["model", "status", "--json"]).ok();
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        v["resident"].clone()
    }

    /// What runs, asked on the socket as `peat model status` asks, without hashing.
    fn quick_status(&self) -> Status {
        let (data, run) = (self.data.clone(), self.run_dir());
        let lookup = Lookup::from_vars(
            |k| match k {
                "PEAT_DATA_DIR" => Some(data.clone().into()),
                "XDG_RUNTIME_DIR" => Some(run.clone().into()),
                _ => None,
            },
            None,
            None,
        );
        Client::installed(&lookup).unwrap().unwrap().status()
    }

    /// The pid of the server once it answers (started by a search, it loads first).
    fn running_pid(&self) -> u32 {
        let mut pid = None;
        eventually("the resident embedder answers", || {
            if let Status::Running(r) = self.quick_status() {
                pid = Some(r.pid);
            }
            pid.is_some()
        });
        pid.unwrap()
    }
}

impl Drop for Resident {
    fn drop(&mut self) {
        let _ = self.cmd("60", &["model", "stop"]).output();
    }
}

/// Whether process `pid` is gone (or a zombie, its parent not having reaped it yet).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

fn embedder(v: &serde_json::Value) -> &str {
    v["semantic"]["embedder"].as_str().unwrap_or("none")
}

#[test]
fn a_second_search_is_answered_by_the_resident_embedder_with_the_in_process_results() {
    let Some(data) = model_data_dir() else { return };
    let r = Resident::new(data);
    let in_process = r.search("0");
    assert_eq!(embedder(&in_process), "in-process", "{in_process}");
    assert!(
        !in_process["hits"].as_array().unwrap().is_empty(),
        "{in_process}"
    );
    // The first search finds no server: it embeds itself and starts one.
    let first = r.search("60");
    assert_eq!(embedder(&first), "in-process", "{first}");
    let pid = r.running_pid();
    let second = r.search("60");
    assert_eq!(embedder(&second), "resident", "{second}");
    // The same hits, similarities to the last bit.
    assert_eq!(second["hits"], in_process["hits"]);
    let status = r.status();
    assert_eq!(status["state"], "running", "{status}");
    assert_eq!(status["pid"], pid, "{status}");
    assert_eq!(status["served"], 1, "{status}");
    assert!(status["rss_bytes"].as_u64().unwrap() > 1 << 20, "{status}");
    // A second server finding this one at work leaves at once, quietly.
    let again = r.run("60", &["model", "serve"]).ok();
    assert!(again.stderr.is_empty(), "{}", again.stderr);
    assert_eq!(r.running_pid(), pid);
    let mode = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    };
    assert_eq!(mode(&r.socket()), 0o600);
    assert_eq!(mode(r.socket().parent().unwrap()), 0o700);
    let stop = r.run("60", &["model", "stop"]).ok();
    assert!(
        stop.stderr.contains(&format!("pid {pid}")),
        "{}",
        stop.stderr
    );
    eventually("the stopped server is gone", || gone(pid));
    assert_eq!(r.quick_status(), Status::Stopped);
}

#[test]
fn a_killed_resident_embedder_is_replaced_and_its_search_embeds_in_process() {
    let Some(data) = model_data_dir() else { return };
    let r = Resident::new(data);
    r.search("60");
    let pid = r.running_pid();
    // SAFETY: kill(2) on the server this test started.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    eventually("the killed server is gone", || gone(pid));
    assert!(r.socket().exists(), "the killed server leaves its socket");
    let fallback = r.search("60");
    assert_eq!(embedder(&fallback), "in-process", "{fallback}");
    let replacement = r.running_pid();
    assert_ne!(replacement, pid);
    let warm = r.search("60");
    assert_eq!(embedder(&warm), "resident", "{warm}");
    assert_eq!(warm["hits"], fallback["hits"]);
}

#[test]
fn with_idle_secs_zero_no_search_starts_a_resident_embedder() {
    let Some(data) = model_data_dir() else { return };
    let r = Resident::new(data);
    for _ in 0..2 {
        let v = r.search("0");
        assert_eq!(embedder(&v), "in-process", "{v}");
    }
    // Nothing was started to come up later.
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(!r.run_dir().exists(), "a socket directory was made");
    assert_eq!(r.quick_status(), Status::Stopped);
    let off = r.run("0", &["model", "status", "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&off.stdout).unwrap();
    assert_eq!(v["resident"]["state"], "off", "{v}");
    let serve = r.run("0", &["model", "serve"]);
    assert_eq!(serve.code, 2);
    assert!(
        serve.stderr.contains("PEAT_EMBED_IDLE_SECS=0"),
        "{}",
        serve.stderr
    );
}

#[test]
fn an_idle_resident_embedder_exits_on_its_own() {
    let Some(data) = model_data_dir() else { return };
    let r = Resident::new(data);
    r.search("2");
    let pid = r.running_pid();
    eventually("the idle server exits", || gone(pid));
    assert_eq!(r.quick_status(), Status::Stopped);
    assert!(!r.socket().exists(), "an idle exit removes the socket");
}

#[test]
fn an_idle_time_that_is_not_a_number_is_refused_naming_the_variable() {
    let env = Env::new();
    let mut c = env.cmd();
    c.env("PEAT_EMBED_IDLE_SECS", "15m")
        .args(["recall", "anything"]);
    let r = Run::of(c.output().unwrap());
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("PEAT_EMBED_IDLE_SECS"), "{}", r.stderr);
}

#[test]
fn session_start_starts_a_resident_embedder_for_the_first_search() {
    let Some(data) = model_data_dir() else { return };
    let r = Resident::new(data);
    let payload = br#"{"hook_event_name":"SessionStart","session_id":"s1","source":"startup"}"#;
    let hook = Run::with_stdin(&mut r.cmd("60", &["hook"]), payload.to_vec());
    assert_eq!(hook.code, 0, "{}", hook.stderr);
    assert!(hook.stdout.contains("peat"), "{}", hook.stdout);
    r.running_pid();
    let first = r.search("60");
    assert_eq!(embedder(&first), "resident", "{first}");
}
