//! A hermetic environment per test and helpers to write transcripts line by line.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub struct Env {
    pub dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        Env { dir }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn store(&self) -> PathBuf {
        self.path("store")
    }

    /// `peat` with a clean environment: HOME, the store and the cwd inside the test folder.
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_peat"));
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path("home"))
            .env("PEAT_DB", self.store())
            .env("TZ", "UTC")
            .env("NO_COLOR", "1")
            // No search starts a resident embedder that would outlive the test (the tests
            // of the resident embedder turn it on, and stop it).
            .env("PEAT_EMBED_IDLE_SECS", "0")
            .current_dir(self.path("work"));
        c
    }

    pub fn run(&self, args: &[&str]) -> Run {
        Run::of(self.cmd().args(args).output().unwrap())
    }

    /// The store's writer lock, held as a writer would hold it (as `who`) until dropped.
    pub fn hold_lock(&self, who: &str) -> peat::ledger::lock::StoreLock {
        peat::ledger::lock::acquire(
            &self.store().join("lock"),
            std::time::Duration::ZERO,
            who,
            &mut || {},
        )
        .unwrap()
    }

    /// Every event as NDJSON, the ledger's content in a comparable form.
    pub fn dump(&self) -> String {
        let r = self.run(&["events", "--json"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stdout
    }
}

#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Run `c` to its end with `stdin` written from a thread of its own (a child that
    /// answers before reading all of it cannot stall the test), its output captured.
    pub fn with_stdin(c: &mut Command, stdin: Vec<u8>) -> Run {
        let mut child = c
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut sin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            let _ = sin.write_all(&stdin);
        });
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        Run::of(out)
    }

    pub fn of(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }

    #[track_caller]
    pub fn ok(self) -> Run {
        assert_eq!(
            self.code, 0,
            "stdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// The `(events, new, revised)` of a capture receipt.
    pub fn receipt(&self) -> (usize, usize, usize) {
        let line = self
            .stderr
            .lines()
            .find(|l| l.starts_with("captured "))
            .unwrap_or_else(|| panic!("no receipt in {:?}", self.stderr));
        let nums: Vec<usize> = line
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .take(3)
            .map(|s| s.parse().unwrap())
            .collect();
        (nums[0], nums[1], nums[2])
    }
}

/// Builds a Claude Code transcript one realistic line at a time.
pub struct Claude {
    pub session: String,
    pub lines: Vec<String>,
    n: u64,
}

impl Claude {
    pub fn new(session: &str) -> Claude {
        Claude {
            session: session.to_string(),
            lines: Vec::new(),
            n: 0,
        }
    }

    fn ts(&self) -> String {
        let secs = self.n;
        format!(
            "2026-07-14T09:{:02}:{:02}.000Z",
            (secs / 60) % 60,
            secs % 60
        )
    }

    fn envelope(&mut self, ty: &str, body: serde_json::Value) -> String {
        self.n += 1;
        let mut v = serde_json::json!({
            "parentUuid": null, "isSidechain": false, "userType": "external",
            "cwd": "/home/dev/acme-api", "sessionId": self.session, "version": "2.1.190",
            "gitBranch": "feat/rate-limit", "type": ty,
            "uuid": format!("00000000-0000-4000-8000-{:012}", self.n), "timestamp": self.ts(),
        });
        for (k, val) in body.as_object().unwrap() {
            v[k] = val.clone();
        }
        v.to_string()
    }

    pub fn user(&mut self, text: &str) -> &mut Claude {
        let l = self.envelope(
            "user",
            serde_json::json!({"message": {"role": "user", "content": text}}),
        );
        self.lines.push(l);
        self
    }

    pub fn said(&mut self, text: &str) -> &mut Claude {
        let l = self.envelope("assistant", serde_json::json!({"message": {"model": "claude-sonnet-4-6", "id": format!("msg_{}", self.n), "type": "message", "role": "assistant", "content": [{"type": "text", "text": text}]}}));
        self.lines.push(l);
        self
    }

    pub fn bash(&mut self, id: &str, command: &str, stdout: &str, is_error: bool) -> &mut Claude {
        let l = self.envelope("assistant", serde_json::json!({"message": {"model": "claude-sonnet-4-6", "id": format!("msg_{}", self.n), "type": "message", "role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}}]}}));
        self.lines.push(l);
        let l = self.envelope("user", serde_json::json!({"message": {"role": "user", "content": [{"tool_use_id": id, "type": "tool_result", "content": stdout, "is_error": is_error}]}, "toolUseResult": {"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false}}));
        self.lines.push(l);
        self
    }

    pub fn edit(&mut self, id: &str, path: &str, old: &str, new: &str) -> &mut Claude {
        let l = self.envelope("assistant", serde_json::json!({"message": {"model": "claude-sonnet-4-6", "id": format!("msg_{}", self.n), "type": "message", "role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Edit", "input": {"file_path": path, "old_string": old, "new_string": new, "replace_all": false}}]}}));
        self.lines.push(l);
        let l = self.envelope("user", serde_json::json!({"message": {"role": "user", "content": [{"tool_use_id": id, "type": "tool_result", "content": "The file has been updated successfully."}]}}));
        self.lines.push(l);
        self
    }

    pub fn raw(&mut self, line: &str) -> &mut Claude {
        self.lines.push(line.to_string());
        self
    }

    /// A small but complete session of `turns` turns.
    pub fn session_of(session: &str, turns: usize) -> Claude {
        let mut c = Claude::new(session);
        for t in 0..turns {
            c.user(&format!(
                "turn {t}: add a token-bucket rate limiter to src/server.ts"
            ));
            c.said("I'll look at the middleware setup first.");
            c.bash(
                &format!("toolu_{t}_a"),
                "rg -n app.use src",
                "src/server.ts:3:app.use(cors());",
                false,
            );
            c.edit(
                &format!("toolu_{t}_b"),
                "/home/dev/acme-api/src/server.ts",
                "app.use(cors());",
                "app.use(cors());\napp.use(rateLimit());",
            );
            c.said(&format!("Turn {t} done: the limiter is registered after cors, with capacity 20 and refill 5/s."));
        }
        c
    }

    pub fn text(&self) -> String {
        let mut s = self.lines.join("\n");
        s.push('\n');
        s
    }

    pub fn write(&self, path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, self.text()).unwrap();
    }
}

/// Start `peat ARGS` in `env`, kill it with SIGKILL after `after` (std's kill: no destructor,
/// no flush), reap it, and say whether it was still running when killed.
pub fn kill_after(env: &Env, args: &[&str], after: std::time::Duration) -> bool {
    kill_when(env, args, || true, after)
}

/// [`kill_after`], counting `after` from the moment `ready` holds (polled every
/// millisecond): a kill that lands in a given phase of the process whatever the machine's
/// speed. Whether it was still running when killed.
pub fn kill_when(
    env: &Env,
    args: &[&str],
    ready: impl Fn() -> bool,
    after: std::time::Duration,
) -> bool {
    let mut child = env
        .cmd()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    while !ready() && child.try_wait().unwrap().is_none() {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    std::thread::sleep(after);
    let running = child.try_wait().unwrap().is_none();
    child.kill().ok();
    child.wait().unwrap();
    running
}

/// Wait for `ok` to hold (a detached capture finishes on its own time), polling every
/// 100 ms; fail the test after 30 s, an anti-hang bound and not a measurement.
#[track_caller]
pub fn eventually(what: &str, mut ok: impl FnMut() -> bool) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !ok() {
        assert!(std::time::Instant::now() < until, "{what}: not after 30s");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

pub const SESSION_A: &str = "3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b";
pub const SESSION_B: &str = "7a1b2c3d-0000-4b7e-9f0a-000000000002";

/// "Now" for the commands [`peat`] runs: six days after the transcripts' day.
pub const NOW: &str = "2026-07-20T12:00:00Z";

/// `peat ARGS` at [`NOW`].
/// The session ids a `sessions --json` answer lists, in its order.
pub fn listed_sessions(stdout: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s["session"].as_str().unwrap().to_string())
        .collect()
}

pub fn peat(env: &Env, args: &[&str]) -> Run {
    Run::of(env.cmd().env("PEAT_NOW", NOW).args(args).output().unwrap())
}

/// Make the test's working directory a repository with one commit of `src/server.ts` and
/// `README.md`; returns the commit's full hash.
pub fn repo(env: &Env) -> String {
    let work = env.path("work");
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::write(work.join("src/server.ts"), "app.use(cors());\n").unwrap();
    std::fs::write(work.join("README.md"), "# acme\n").unwrap();
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "add the server"]);
    git(&work, &["rev-parse", "HEAD"])
}

/// The data directory holding the installed model, found by the library's own rule from the
/// environment running the tests; `None` (and a note) when it is not installed and not
/// required.
#[track_caller]
pub fn model_data_dir() -> Option<PathBuf> {
    let dir = peat::embed::Lookup::from_process().data_dir?;
    if dir.join("models").is_dir() {
        return Some(dir);
    }
    skip(
        &format!("no model under {} (run `peat model fetch`)", dir.display()),
        std::env::var("PEAT_REQUIRE_MODEL").as_deref() == Ok("1"),
    );
    None
}

pub use peat::testing::{files_holding, git, git_at, git_by, on_path, require_git, skip};

/// Whether jj is here, for a test of the jj route, which without it would prove nothing.
/// Under CI its absence fails the test; elsewhere the test says so (past the harness's
/// capture) and stops.
#[track_caller]
pub fn have_jj() -> bool {
    let ok = on_path("jj");
    if !ok {
        skip("jj is not on PATH (.ci/run installs it)", false);
    }
    ok
}
