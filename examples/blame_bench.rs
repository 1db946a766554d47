//! `peat blame` beside `git blame`, on the same file in one run: a file of 1,000 lines with a
//! 500-commit git history and 50 recorded edits (a Claude Code session's `Edit`s, made after
//! the last commit and not committed). Prints each one's fastest and median time and the
//! ratio; it asserts nothing.
//!
//! ```text
//! cargo build --release && cargo run --release --example blame_bench -- \
//!     [--peat target/release/peat] [--runs 9] [--lines 1000] [--commits 500] [--edits 50]
//! ```
//!
//! The history is written with one `git fast-import`; every commit rewrites a few lines, so
//! `git blame` has work to do across it. Everything lives in a temporary folder (HOME, the
//! store, the repository), removed at the end (kept, and named, with `BENCH_KEEP=1`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio, exit};
use std::time::{Duration, Instant};

use serde_json::json;

const USAGE: &str = "\
usage: blame_bench [--peat PATH] [--runs N] [--lines N] [--commits N] [--edits N]
  --peat PATH    the peat binary (default target/release/peat)
  --runs N       timed runs of each (default 9)
  --lines N      lines of the file (default 1000)
  --commits N    commits in its history (default 500)
  --edits N      recorded edits after the last commit (default 50)
";

/// 2026-06-01T00:00:00Z: the first commit; one an hour after it.
const START_S: i64 = 1_780_272_000;
const SESSION: &str = "5e55a0a1-0000-4000-8000-00000000b1a3";

struct Args {
    peat: PathBuf,
    runs: usize,
    lines: usize,
    commits: usize,
    edits: usize,
}

fn args() -> Args {
    let mut a = Args {
        peat: PathBuf::from("target/release/peat"),
        runs: 9,
        lines: 1000,
        commits: 500,
        edits: 50,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| usage());
        let n = || value.parse::<usize>().unwrap_or_else(|_| usage());
        match flag.as_str() {
            "--peat" => a.peat = PathBuf::from(&value),
            "--runs" => a.runs = n().max(1),
            "--lines" => a.lines = n().max(1),
            "--commits" => a.commits = n().max(1),
            "--edits" => a.edits = n(),
            _ => usage(),
        }
    }
    a
}

fn usage() -> ! {
    eprint!("{USAGE}");
    exit(2)
}

/// The file after `commit` commits: line `i` names the last commit that rewrote it.
fn text_at(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// The lines commit `k` (from 1) rewrites: three, spread over the file.
fn rewritten(k: usize, n: usize) -> [usize; 3] {
    [(k * 7919) % n, (k * 104_729 + 13) % n, (k * 31 + 500) % n]
}

fn git(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> String {
    let mut c = Command::new("git");
    c.args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = c.spawn().expect("git runs");
    if let Some(bytes) = stdin {
        child.stdin.take().unwrap().write_all(bytes).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?} failed");
    String::from_utf8(out.stdout).unwrap()
}

/// A repository at `work` whose `src/big.txt` has `a.commits` commits, an hour apart.
fn history(work: &Path, a: &Args) -> Vec<String> {
    git(work, &["init", "-q", "-b", "main"], None);
    let mut lines: Vec<String> = (0..a.lines)
        .map(|i| format!("line {i}: from the first commit"))
        .collect();
    let mut stream = Vec::new();
    for k in 0..a.commits {
        if k > 0 {
            for i in rewritten(k, a.lines) {
                lines[i] = format!("line {i}: rewritten by commit {k}");
            }
        }
        let text = text_at(&lines);
        let msg = format!("commit {k}\n");
        let when = START_S + k as i64 * 3600;
        write!(
            stream,
            "commit refs/heads/main\nmark :{m}\ncommitter Pat <pat@example.com> {when} +0000\ndata {}\n{msg}",
            msg.len(),
            m = k + 1
        )
        .unwrap();
        if k > 0 {
            writeln!(stream, "from :{k}").unwrap();
        }
        write!(
            stream,
            "M 100644 inline src/big.txt\ndata {}\n{text}\n",
            text.len()
        )
        .unwrap();
    }
    git(work, &["fast-import", "--quiet"], Some(&stream));
    git(work, &["checkout", "-q", "-f", "main"], None);
    lines
}

/// One Claude Code line of the session at `ms`.
fn line(n: usize, ms: i64, ty: &str, body: serde_json::Value) -> String {
    let ts = jiff::Timestamp::from_millisecond(ms).unwrap();
    let mut v = json!({
        "parentUuid": null, "isSidechain": false, "userType": "external", "cwd": "/bench",
        "sessionId": SESSION, "version": "2.1.190", "type": ty,
        "uuid": format!("00000000-0000-4000-8000-{n:012}"),
        "timestamp": ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
    });
    for (k, val) in body.as_object().unwrap() {
        v[k] = val.clone();
    }
    v.to_string()
}

/// `a.edits` recorded Edits of the file, a minute apart from a day after the last commit,
/// applied to the working copy; the transcript's path.
fn session(dir: &Path, file: &Path, lines: &mut [String], a: &Args) -> PathBuf {
    let start_ms = (START_S + a.commits as i64 * 3600 + 86_400) * 1000;
    let path = file.to_string_lossy().into_owned();
    let mut out = vec![line(
        0,
        start_ms,
        "user",
        json!({"message": {"role": "user", "content": "tidy the big file"}}),
    )];
    for j in 0..a.edits {
        let i = (j * 389 + 7) % lines.len();
        let new = format!("line {i}: edited by the agent, edit {j}");
        let ms = start_ms + (j as i64 + 1) * 60_000;
        let id = format!("toolu_bench_{j}");
        let input = json!({"file_path": path, "old_string": format!("{}\n", lines[i]),
            "new_string": format!("{new}\n"), "replace_all": false});
        out.push(line(
            2 * j + 1,
            ms,
            "assistant",
            json!({"message": {"id": format!("msg_{j}"), "role": "assistant", "type": "message",
                "content": [{"type": "tool_use", "id": id, "name": "Edit", "input": input}]}}),
        ));
        out.push(line(
            2 * j + 2,
            ms,
            "user",
            json!({"message": {"role": "user", "content": [{"tool_use_id": id, "type": "tool_result", "content": "ok"}]}}),
        ));
        lines[i] = new;
    }
    std::fs::write(file, text_at(lines)).unwrap();
    let t = dir.join("session.jsonl");
    std::fs::write(&t, out.join("\n") + "\n").unwrap();
    t
}

/// The wall time of each of `runs` runs of `cmd`, which must succeed.
fn time(runs: usize, mut cmd: impl FnMut() -> Command) -> Vec<Duration> {
    let mut out: Vec<Duration> = (0..runs)
        .map(|_| {
            let mut c = cmd();
            let t = Instant::now();
            let status = c
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .unwrap();
            let took = t.elapsed();
            assert!(status.success(), "{c:?} failed");
            took
        })
        .collect();
    out.sort();
    out
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let a = args();
    let peat = std::fs::canonicalize(&a.peat).unwrap_or_else(|_| {
        eprintln!("blame_bench: no peat binary at {}", a.peat.display());
        eprintln!("Build one (cargo build --release) or name it with --peat PATH.");
        exit(1)
    });
    let tmp = tempfile::tempdir().unwrap();
    let (home, work) = (tmp.path().join("home"), tmp.path().join("work"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let t = Instant::now();
    let mut lines = history(&work, &a);
    let file = std::fs::canonicalize(&work).unwrap().join("src/big.txt");
    let transcript = session(tmp.path(), &file, &mut lines, &a);
    let peat_cmd = |args: &[&str]| {
        let mut c = Command::new(&peat);
        c.args(args)
            .current_dir(&work)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("PEAT_DB", tmp.path().join("store"))
            .env("TZ", "UTC")
            .env("NO_COLOR", "1")
            .env("PEAT_EMBED_IDLE_SECS", "0");
        c
    };
    let status = peat_cmd(&["capture", &transcript.to_string_lossy()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "peat capture failed");
    println!(
        "blame_bench: {} lines, {} commits, {} recorded edits (set up in {:.1} s)",
        a.lines,
        a.commits,
        a.edits,
        t.elapsed().as_secs_f64()
    );

    // What peat says, once: every recorded edit placed, every other line named by a commit.
    let out = peat_cmd(&["blame", "src/big.txt", "--json"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("blame --json");
    let by_edit = doc["lines"]
        .as_array()
        .map_or(0, |l| l.iter().filter(|l| l["origin"] == "edit").count());
    let placed = doc["edits"]
        .as_array()
        .map_or(0, |e| e.iter().filter(|e| e["placed"] == true).count());
    println!("peat blame: {by_edit} lines by recorded edits, {placed} edits placed");

    let git_times = time(a.runs, || {
        let mut c = Command::new("git");
        c.args(["blame", "src/big.txt"])
            .current_dir(&work)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1");
        c
    });
    let peat_times = time(a.runs, || peat_cmd(&["blame", "src/big.txt"]));
    let row = |name: &str, t: &[Duration]| {
        println!(
            "{name:<11} fastest {:>8.1} ms   median {:>8.1} ms   ({} runs)",
            ms(t[0]),
            ms(t[t.len() / 2]),
            t.len()
        )
    };
    row("git blame", &git_times);
    row("peat blame", &peat_times);
    if std::env::var_os("BENCH_KEEP").is_some() {
        eprintln!("blame_bench: kept {}", tmp.keep().display());
    }
    println!(
        "ratio       fastest {:>8.2}x     median {:>8.2}x   (target: within 2x)",
        ms(peat_times[0]) / ms(git_times[0]),
        ms(peat_times[peat_times.len() / 2]) / ms(git_times[git_times.len() / 2])
    );
}
