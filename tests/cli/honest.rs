//! Reads that never mislead, through the real binary: one time grammar for every verb, and
//! the small things a newcomer trips on.

use crate::recall::write_two_sessions;
use crate::support::{Env, NOW};

/// What a `--json` read answered: `recall`'s hits (its timings vary run to run), or every
/// event `events` printed.
fn answer(r: &crate::support::Run) -> String {
    match serde_json::from_str::<serde_json::Value>(&r.stdout) {
        Ok(v) if v.get("hits").is_some() => match v["hits"].as_array() {
            Some(h) if h.is_empty() => String::new(),
            _ => v["hits"].to_string(),
        },
        _ => r.stdout.clone(),
    }
}

#[test]
fn recall_and_events_read_every_day_asof_and_zoom_read() {
    let env = Env::new();
    let [a, b] = write_two_sessions(&env);
    env.run(&["capture", &a, &b]).ok();
    let run = |args: &[&str]| {
        crate::support::Run::of(env.cmd().env("PEAT_NOW", NOW).args(args).output().unwrap())
    };
    // Each reads as the start of the day `asof` would name (NOW is Monday 2026-07-20, UTC).
    for (since, date) in [
        ("yesterday", "2026-07-19"),
        ("monday", "2026-07-13"),
        ("last week", "2026-07-13"),
        ("3 days ago", "2026-07-17"),
        ("1m", "2026-06-20"),
    ] {
        for verb in ["events", "recall"] {
            let words: &[&str] = if verb == "recall" { &["sidebar"] } else { &[] };
            let with = |s: &str| {
                let mut args = vec![verb];
                args.extend_from_slice(words);
                args.extend_from_slice(&["--since", s, "--json"]);
                run(&args)
            };
            let (named, dated) = (with(since), with(date));
            assert!(named.code <= 1, "{verb} --since {since}: {}", named.stderr);
            assert_eq!(answer(&named), answer(&dated), "{verb} --since {since}");
        }
    }
    // The sessions ran on Tuesday the 14th: since Monday finds them, since yesterday not.
    assert!(!answer(&run(&["recall", "sidebar", "--since", "monday", "--json"])).is_empty());
    assert!(
        answer(&run(&[
            "recall",
            "sidebar",
            "--since",
            "yesterday",
            "--json"
        ]))
        .is_empty()
    );
    // The same spelling `asof` takes.
    let asof = env
        .cmd()
        .env("PEAT_NOW", NOW)
        .args(["asof", "yesterday"])
        .output()
        .unwrap();
    assert!(crate::support::Run::of(asof).code <= 1);
    let bad = env.run(&["recall", "sidebar", "--since", "the other day"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("not a time") && bad.stderr.contains("yesterday"),
        "{}",
        bad.stderr
    );
}

#[test]
fn a_writer_that_waited_for_the_ledger_says_when_it_went_on() {
    let env = Env::new();
    let [a, _] = write_two_sessions(&env);
    env.run(&["capture", &a]).ok();
    let lock = env.hold_lock("a test holding the ledger");
    let child = env
        .cmd()
        .args(["capture", &a])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    drop(lock);
    let r = crate::support::Run::of(child.wait_with_output().unwrap());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let busy = r.stderr.find("the ledger is busy").expect(&r.stderr);
    let free = r
        .stderr
        .find("the ledger is free again after")
        .expect(&r.stderr);
    assert!(busy < free, "{}", r.stderr);
}

#[test]
fn a_session_that_ran_over_midnight_shows_the_day_it_began() {
    let env = Env::new();
    let mut c = crate::support::Claude::new(crate::support::SESSION_A);
    c.user("migrate the invoices table overnight");
    c.said("The migration finished; 41,000 invoices moved.");
    let text = c
        .text()
        .replace("2026-07-14T09:00:01.000Z", "2026-07-13T23:54:00.000Z")
        .replace("2026-07-14T09:00:02.000Z", "2026-07-14T00:09:00.000Z");
    let path = env.path("midnight.jsonl");
    std::fs::write(&path, text).unwrap();
    env.run(&["capture", path.to_str().unwrap()]).ok();
    let day = env.run(&["zoom", "2026-07-14"]).ok();
    assert!(day.stdout.contains("Jul 13 23:54–00:09"), "{}", day.stdout);
}

#[test]
fn setup_says_how_much_the_model_it_fetches_weighs() {
    let env = Env::new();
    let r = env
        .cmd()
        .env("PEAT_PYTHON", env.path("no-python-here"))
        .arg("setup")
        .output()
        .unwrap();
    let r = crate::support::Run::of(r);
    let said = r
        .stderr
        .lines()
        .find(|l| l.contains("fetching the model"))
        .unwrap_or_else(|| panic!("{}", r.stderr));
    // The model, its tokenizer and the runtime for this machine: 53 MB on x86_64 Linux,
    // between 45 and 60 on every platform the lock pins.
    let mb: u64 = said
        .split("(once, ")
        .nth(1)
        .and_then(|rest| rest.split(" MB").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{said}"));
    assert!((45..=60).contains(&mb), "{said}");
}

#[test]
fn help_uses_no_word_a_newcomer_cannot_know() {
    let env = Env::new();
    for args in [&["--help"][..], &["brief", "--help"], &["zoom", "--help"]] {
        let help = env.run(args).ok().stdout;
        for jargon in ["bead id:", "band", "beside a writer", "desk"] {
            assert!(
                !help.contains(jargon),
                "peat {args:?} says {jargon:?}:\n{help}"
            );
        }
    }
}

#[test]
fn the_wiring_check_and_doctor_look_at_every_agent_installed_or_found() {
    let env = Env::new();
    std::fs::create_dir_all(env.path("home/.claude")).unwrap();
    std::fs::create_dir_all(env.path("home/.codex")).unwrap();
    env.run(&["hook", "install"]).ok();
    env.run(&["hook", "install", "--codex"]).ok();
    let [a, _] = write_two_sessions(&env);
    env.run(&["capture", &a]).ok();
    let r = env.run(&["hook", "install", "--check"]).ok();
    for file in [".claude/settings.json", ".codex/hooks.json"] {
        assert!(
            r.stderr.contains(&format!("✓ {file}: peat hook on")),
            "{}",
            r.stderr
        );
    }
    let doctor = env.run(&["doctor"]).ok();
    assert!(
        doctor.stdout.contains("✓ hooks: Claude Code, Codex"),
        "{}",
        doctor.stdout
    );

    // Codex's hooks removed (its folder gone from this machine too): still checked, since
    // peat's skill for it is laid here.
    std::fs::remove_file(env.path("work/.codex/hooks.json")).unwrap();
    std::fs::remove_dir_all(env.path("home/.codex")).unwrap();
    let r = env.run(&["hook", "install", "--check"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains(".codex/hooks.json: missing — run: peat hook install --codex"),
        "{}",
        r.stderr
    );
    // doctor reports it too, and its exit status stays the store's.
    let doctor = env.run(&["doctor"]).ok();
    assert!(
        doctor.stdout.contains("✗ hooks: Claude Code, Codex"),
        "{}",
        doctor.stdout
    );
    assert!(
        doctor
            .stdout
            .contains(".codex/hooks.json: missing — run: peat hook install --codex"),
        "{}",
        doctor.stdout
    );
    let v: serde_json::Value =
        serde_json::from_str(&env.run(&["doctor", "--json"]).ok().stdout).unwrap();
    assert_eq!(v["hooks"]["ok"], false);
}

#[test]
fn a_closing_message_the_hook_also_recorded_is_said_once_and_no_hint_shows_an_internal_seq() {
    let env = Env::new();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude/ask-and-plan.jsonl");
    let closing =
        "The chat now renders with the ai elements components; the custom bubble is gone.";
    env.run(&["capture", fixture.to_str().unwrap(), "--final-msg", closing])
        .ok();
    env.run(&[
        "obs",
        "chat-ui",
        "renders with ai elements",
        "--session",
        "6b1d2c3e",
        "--from",
        "end",
    ])
    .ok();

    let log = env.run(&["log", "6b1d2c3e"]).ok().stdout;
    assert_eq!(log.matches(closing).count(), 1, "{log}");
    // Every read names the hook's copy and the observation as a person types them.
    let reads = [
        env.run(&["log", "6b1d2c3e"]).ok().stdout,
        env.run(&["show", "6b1d2c3e"]).ok().stdout,
        env.run(&["events", "--session", "6b1d2c3e"]).ok().stdout,
        env.run(&["brief"]).stdout,
        env.run(&["chat-ui"]).ok().stdout,
    ];
    for out in &reads {
        assert!(!out.contains("2147483"), "{out}");
    }
    assert!(
        reads[1].contains("▸ peat show 6b1d2c3e end"),
        "{}",
        reads[1]
    );
    assert!(
        reads[2].contains(" end ") && reads[2].contains(" obs1 "),
        "{}",
        reads[2]
    );
    // And every read takes them back.
    let end = env.run(&["show", "6b1d2c3e", "end"]).ok().stdout;
    assert!(end.contains(closing), "{end}");
    assert!(env.run(&["6b1d2c3e", "end"]).ok().stdout.contains(closing));
    let obs = env.run(&["show", "6b1d2c3e", "obs1"]).ok().stdout;
    assert!(obs.contains("renders with ai elements"), "{obs}");
    let bad = env.run(&["show", "6b1d2c3e", "obs0"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("obs1, obs2"), "{}", bad.stderr);
}
