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
