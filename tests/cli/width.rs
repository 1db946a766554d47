//! Text output fits the terminal's width, and only a terminal's: `peat` run under a real
//! pseudo-terminal of a known width, and the same commands piped.

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::Stdio;

use crate::support::{Claude, Env, NOW, SESSION_A};

/// A record whose listings run well past 60 columns: prompts (one in characters two columns
/// wide), a long closing message and hits, each line ending in the command that reads it.
fn record(env: &Env) {
    let mut c = Claude::session_of(SESSION_A, 2);
    c.user("make the token-bucket limiter configurable per route, with a burst size read from the environment and a sane default");
    c.user("limiter burst: ルートごとのバーストサイズを環境変数から読み込み、既定値は二十にしてください");
    c.said("The limiter now reads RATE_LIMIT_BURST per route (default 20); the middleware registers it after cors and the tests cover a burst of 21 requests.");
    let t = env.path("transcripts/a.jsonl");
    c.write(&t);
    env.run(&["capture", t.to_str().unwrap()]).ok();
}

/// The reads whose every line must fit.
const READS: [&[&str]; 5] = [
    &["brief"],
    &["sessions"],
    &["recall", "limiter", "burst"],
    &["log", "3f6c2a9e"],
    &["show", "3f6c2a9e"],
];

/// How `peat ARGS` prints on a terminal `cols` wide (and 500 rows, so no pager waits), with
/// `vars` set; a `less` that only copies stands in for the pager.
pub fn on_terminal(env: &Env, cols: u16, args: &[&str], vars: &[(&str, &str)]) -> String {
    let (mut master, mut slave) = (-1, -1);
    let mut size = libc::winsize {
        ws_row: 500,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let opened = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            // `*mut` where macOS wants one; Linux reads it as `*const`.
            &raw mut size,
        )
    };
    assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: openpty just opened both, and nothing else owns them.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let bin = env.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let less = bin.join("less");
    std::fs::write(&less, "#!/bin/sh\nexec cat\n").unwrap();
    std::fs::set_permissions(&less, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = env.cmd();
    cmd.env("PEAT_NOW", NOW)
        .env("PATH", path)
        .envs(vars.iter().copied())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(slave))
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    // Our copy of the terminal's other end must close for the reading below to end.
    drop(cmd);
    let mut screen = Vec::new();
    let mut master = std::fs::File::from(master);
    loop {
        let mut buf = [0u8; 4096];
        match master.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => screen.extend_from_slice(&buf[..n]),
            // Linux answers EIO once the last writer has closed the terminal.
            Err(e) if e.raw_os_error() == Some(libc::EIO) => break,
            Err(e) => panic!("reading the terminal: {e}"),
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "peat {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The terminal turns each newline into CR LF.
    String::from_utf8(screen).unwrap().replace("\r\n", "\n")
}

/// `peat ARGS` piped, with `vars` set.
fn piped(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> String {
    let out = env
        .cmd()
        .env("PEAT_NOW", NOW)
        .envs(vars.iter().copied())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The columns a line takes on a terminal: colour takes none.
fn columns(line: &str) -> usize {
    let plain = regex::Regex::new("\x1b\\[[0-?]*[@-~]")
        .unwrap()
        .replace_all(line, "")
        .into_owned();
    unicode_width::UnicodeWidthStr::width(plain.as_str())
}

fn widest(text: &str) -> usize {
    text.lines().map(columns).max().unwrap_or(0)
}

/// The `▸` commands of `text`, each to the end of its line.
fn commands(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.find('▸').map(|i| l[i..].to_string()))
        .collect()
}

#[test]
fn on_a_terminal_every_line_fits_and_every_command_stays_whole() {
    let env = Env::new();
    record(&env);
    for args in READS {
        let wide = piped(&env, args, &[]);
        assert!(
            widest(&wide) > 60,
            "{args:?} has no long line to fit:\n{wide}"
        );
        let narrow = on_terminal(&env, 60, args, &[]);
        assert!(widest(&narrow) <= 60, "{args:?} at 60 columns:\n{narrow}");
        let lines: Vec<&str> = narrow.lines().collect();
        for command in commands(&wide) {
            assert!(
                lines.iter().any(|l| l.ends_with(&command)),
                "{args:?}: {command:?} is not whole on a line of\n{narrow}"
            );
        }
        assert_eq!(commands(&narrow), commands(&wide), "{args:?}:\n{narrow}");
    }
}

#[test]
fn only_prose_is_shortened_and_handles_begin_their_lines_still() {
    let env = Env::new();
    record(&env);
    let wide = piped(&env, &["sessions"], &[]);
    let narrow = on_terminal(&env, 60, &["sessions"], &[]);
    for line in wide.lines() {
        let head = line.split("  ").next().unwrap();
        assert!(narrow.contains(head), "{head:?} is not whole in\n{narrow}");
    }
    // 90 columns: a hit's tag names its agent, and the prose left must still reach the
    // wide characters.
    let hits = on_terminal(&env, 90, &["recall", "limiter", "burst"], &[]);
    assert!(hits.contains('…'), "{hits}");
    // Cut by the columns its characters take, not by their count.
    let wide_chars = hits.lines().find(|l| l.contains("ルートごと")).unwrap();
    assert!(
        wide_chars.contains("…  ▸ peat show ") && columns(wide_chars) <= 90,
        "{hits}"
    );
    assert!(widest(&hits) <= 90, "{hits}");
}

#[test]
fn colour_takes_no_columns_when_fitting() {
    let env = Env::new();
    record(&env);
    // An empty NO_COLOR counts as unset.
    let colour = [("NO_COLOR", "")];
    for args in [&["log", "3f6c2a9e"][..], &["recall", "limiter", "burst"]] {
        let out = on_terminal(&env, 60, args, &colour);
        assert!(out.contains('\x1b'), "{args:?} not in colour:\n{out}");
        assert!(widest(&out) <= 60, "{args:?}:\n{out}");
        assert!(
            out.lines().any(|l| columns(l) >= 55),
            "{args:?} was cut to its bytes, not its columns:\n{out}"
        );
    }
}

#[test]
fn piped_output_is_never_fitted_not_even_with_columns_set() {
    let env = Env::new();
    record(&env);
    for args in READS {
        let plain = piped(&env, args, &[]);
        assert_eq!(piped(&env, args, &[("COLUMNS", "60")]), plain, "{args:?}");
        assert!(widest(&plain) > 60, "{args:?}");
        assert!(
            !plain.contains(['\u{FDD0}', '\u{FDD1}', '\u{FDD2}']),
            "{args:?} leaks a mark"
        );
    }
}

#[test]
fn columns_sets_the_width_on_a_terminal() {
    let env = Env::new();
    record(&env);
    let args = ["log", "3f6c2a9e"];
    let wide = on_terminal(&env, 200, &args, &[]);
    assert!(widest(&wide) > 60, "{wide}");
    let narrow = on_terminal(&env, 200, &args, &[("COLUMNS", "60")]);
    assert!(widest(&narrow) <= 60, "{narrow}");
    assert_eq!(commands(&narrow), commands(&wide));
}

#[test]
fn json_is_never_fitted() {
    let env = Env::new();
    record(&env);
    let args = ["recall", "limiter", "burst", "--json"];
    let on_tty = on_terminal(&env, 60, &args, &[]);
    // What a read answers, without how long it took.
    let answer = |s: &str| {
        let mut v: serde_json::Value = serde_json::from_str(s.trim()).unwrap();
        v.as_object_mut().unwrap().remove("timings");
        v
    };
    let hits = answer(&on_tty);
    assert_eq!(hits, answer(&piped(&env, &args, &[])));
    assert!(widest(&on_tty) > 60);
    assert!(
        hits["hits"].as_array().is_some_and(|h| !h.is_empty()),
        "{hits}"
    );
}

#[test]
fn a_status_report_wraps_to_the_terminal_and_keeps_every_word() {
    let env = Env::new();
    record(&env);
    let args = ["doctor"];
    let wide = piped(&env, &args, &[]);
    assert!(widest(&wide) > 60, "no long line to fit:\n{wide}");
    let narrow = on_terminal(&env, 60, &args, &[]);
    let words = |t: &str| t.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    for line in narrow.lines().filter(|l| columns(l) > 60) {
        assert!(
            !line.trim().contains(' '),
            "only a word wider than the terminal may pass its edge: {line:?} in\n{narrow}"
        );
    }
    assert_eq!(words(&narrow), words(&wide), "{narrow}");
}
