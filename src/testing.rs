//! Helpers for the tests (the library's unit tests and `tests/cli`), not for peat itself.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A test that cannot run says so where the suite's reader sees it (written to stderr
/// directly, past the harness's output capture), and fails instead when the run requires
/// it: under `CI=true`, or when `required` (e.g. `PEAT_REQUIRE_MODEL=1`). The caller
/// returns right after.
#[track_caller]
pub fn skip(reason: &str, required: bool) {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let at = std::panic::Location::caller();
    assert!(
        !(ci || required),
        "{at}: this test cannot run, and this run requires it: {reason}"
    );
    let _ = writeln!(std::io::stderr(), "SKIP ({at}): {reason}");
}

/// Tests that read commits through git would prove nothing without it, so they fail rather
/// than skip.
#[track_caller]
pub fn require_git() {
    assert!(on_path("git"), "these tests need git on PATH");
}

/// Whether `program --version` runs and succeeds: the tool a test drives is installed.
pub fn on_path(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Run git in `dir` with a fixed identity and date (2026-07-14T09:30:00Z) and no user or
/// system configuration; its stdout, trimmed.
#[track_caller]
pub fn git(dir: &Path, args: &[&str]) -> String {
    git_at(dir, "2026-07-14T09:30:00Z", args)
}

/// [`git`] with its commits dated `date` (an ISO 8601 moment).
#[track_caller]
pub fn git_at(dir: &Path, date: &str, args: &[&str]) -> String {
    git_by(dir, "t", date, args)
}

/// [`git_at`] with its commits made by `who` (`who@example.com`), for tests whose answers
/// name the author.
#[track_caller]
pub fn git_by(dir: &Path, who: &str, date: &str, args: &[&str]) -> String {
    let email = format!("{}@example.com", who.to_lowercase());
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", who)
        .env("GIT_AUTHOR_EMAIL", &email)
        .env("GIT_COMMITTER_NAME", who)
        .env("GIT_COMMITTER_EMAIL", &email)
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Every file under `dir` whose bytes contain `needle`: the scan that proves a secret is
/// gone from a store.
pub fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .filter(|e| {
            std::fs::read(e.path())
                .is_ok_and(|bytes| memchr::memmem::find(&bytes, needle.as_bytes()).is_some())
        })
        .map(walkdir::DirEntry::into_path)
        .collect()
}
