//! The reading surface's rough edges (issue 14): flags before the verb, observations that
//! are not activity, citations that must exist, dates, wording.

use serde_json::Value;

use crate::support::{Claude, Env, Run, SESSION_A, SESSION_B};

const NOW: &str = "2026-07-14T10:00:00Z";

fn peat(env: &Env, args: &[&str]) -> Run {
    Run::of(env.cmd().env("PEAT_NOW", NOW).args(args).output().unwrap())
}

/// Session A ran three days before session B (B ran on 2026-07-14 around 09:00 UTC).
fn two_sessions(env: &Env) {
    let old = Claude::session_of(SESSION_A, 1)
        .text()
        .replace("2026-07-14T", "2026-07-11T");
    let a = env.path("a.jsonl");
    std::fs::write(&a, old).unwrap();
    let b = env.path("b.jsonl");
    Claude::session_of(SESSION_B, 1).write(&b);
    for t in [&a, &b] {
        peat(env, &["capture", t.to_str().unwrap()]).ok();
    }
}

/// `peat obs staging … --session SESSION --from FROM`.
fn claim(env: &Env, session: &str, from: &str) -> Run {
    let args = ["obs", "staging", "deploys go blue first"];
    let mut args = args.to_vec();
    args.extend(["--session", session, "--from", from]);
    peat(env, &args)
}

fn json(r: &Run) -> Value {
    serde_json::from_str(r.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {}", r.stdout))
}

#[test]
fn json_before_the_verb_works_as_after_it() {
    let env = Env::new();
    let t = env.path("b.jsonl");
    Claude::session_of(SESSION_B, 1).write(&t);
    // Before a writing verb: it captures (it used to search for the word "capture").
    let r = peat(&env, &["--json", "capture", t.to_str().unwrap()]).ok();
    assert!(r.receipt().1 > 0, "{}", r.stderr);
    for verb in [
        &["sessions"][..],
        &["events", "--session", "7a1b"],
        &["brief"],
        &["show", "7a1b"],
    ] {
        let mut front = vec!["--json"];
        front.extend_from_slice(verb);
        let mut back = verb.to_vec();
        back.push("--json");
        let f = peat(&env, &front).ok();
        let b = peat(&env, &back).ok();
        assert_eq!(
            f.stdout, b.stdout,
            "peat {front:?} differs from peat {back:?}"
        );
        assert!(
            f.stdout.trim_start().starts_with(['[', '{']),
            "peat {front:?} is not JSON: {}",
            f.stdout
        );
    }
    // Words after a search word are still searched, not taken for a verb.
    let r = peat(&env, &["limiter", "sessions"]).ok();
    assert!(
        r.stdout.starts_with("== search: \"limiter sessions\""),
        "{}",
        r.stdout
    );
}

#[test]
fn a_claim_on_an_old_session_does_not_make_it_current() {
    let env = Env::new();
    two_sessions(&env);
    let r = claim(&env, "3f6c", "1").ok();
    assert!(r.stderr.contains("recorded"), "{}", r.stderr);

    let r = peat(&env, &["sessions", "--json"]).ok();
    let v = json(&r);
    let order: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session"].as_str().unwrap())
        .collect();
    assert_eq!(order, [SESSION_B, SESSION_A]);

    let r = peat(&env, &["brief", "--json"]).ok();
    let v = json(&r);
    let active: Vec<&str> = v["active"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session"].as_str().unwrap())
        .collect();
    assert!(!active.contains(&SESSION_A), "{active:?}");
    assert_eq!(v["last_session"]["session"], SESSION_B);
}

#[test]
fn a_claim_citing_a_missing_event_is_refused_with_the_nearest_ones() {
    let env = Env::new();
    two_sessions(&env);
    let r = claim(&env, "7a1b", "17,99999");
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("--from 99999: session 7a1b2c3d has no such event"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("The nearest events it holds:"),
        "{}",
        r.stderr
    );
    // The nearest below 99999 are the session's last events: its closing message among them.
    assert!(r.stderr.contains("final"), "{}", r.stderr);
    // The command the hint names lists the events it means, each with its seq.
    let hinted = r
        .stderr
        .split('`')
        .find(|c| c.starts_with("peat "))
        .unwrap_or_else(|| panic!("{}", r.stderr));
    let args: Vec<&str> = hinted.split_whitespace().skip(1).collect();
    let listed = peat(&env, &args).ok().stdout;
    let nearest: Vec<&str> = r
        .stderr
        .lines()
        .skip_while(|l| !l.contains("The nearest events it holds:"))
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.chars().all(|c| c.is_ascii_digit()))
        .collect();
    assert!(!nearest.is_empty(), "{}", r.stderr);
    for seq in nearest {
        assert!(
            listed.split_whitespace().any(|w| w == seq),
            "`{hinted}` does not list seq {seq}:\n{listed}"
        );
    }
    let r = peat(&env, &["subjects", "--json"]).ok();
    assert_eq!(json(&r), serde_json::json!([]), "nothing was recorded");
}

#[test]
fn a_mistyped_date_is_refused_not_searched() {
    let env = Env::new();
    two_sessions(&env);
    let r = peat(&env, &["2026-13-01"]);
    assert_ne!(r.code, 0);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr
            .contains("2026-13-01 is not a date: there is no month 13"),
        "{}",
        r.stderr
    );
}

#[test]
fn asof_takes_relative_days_and_refuses_the_future() {
    let env = Env::new();
    two_sessions(&env);
    // Now is 2026-07-14: three days back is the day session A ran, yesterday had no B yet.
    for (day, sessions) in [("3d", 1), ("3 days ago", 1), ("yesterday", 1), ("today", 2)] {
        let r = peat(&env, &["asof", day, "--json"]).ok();
        assert_eq!(json(&r)["sessions"], sessions, "asof {day}: {}", r.stdout);
    }
    let r = peat(&env, &["asof", "2w", "--json"]);
    assert_eq!(json(&r)["date"], "2026-06-30");
    let r = peat(&env, &["asof", "2026-08-01"]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr
            .contains("2026-08-01 is in the future (today is 2026-07-14)"),
        "{}",
        r.stderr
    );
    let r = peat(&env, &["asof", "someday"]);
    assert!(r.stderr.contains("want a date like"), "{}", r.stderr);
}

#[test]
fn setup_in_a_project_without_sessions_says_to_start_an_agent() {
    let env = Env::new();
    let r = peat(&env, &["setup", "--no-model"]).ok();
    assert!(!r.stdout.contains("peat setup"), "{}", r.stdout);
    assert!(
        r.stderr
            .contains("Start an agent here (Claude Code, Codex, Gemini CLI"),
        "{}",
        r.stderr
    );
}

#[test]
fn loading_the_model_writes_nothing_under_home() {
    let Some(data) = crate::support::model_data_dir() else {
        return;
    };
    let env = Env::new();
    let t = env.path("b.jsonl");
    Claude::session_of(SESSION_B, 1).write(&t);
    let with_model = |args: &[&str]| {
        Run::of(
            env.cmd()
                .env("PEAT_DATA_DIR", &data)
                .args(args)
                .output()
                .unwrap(),
        )
        .ok()
    };
    let r = with_model(&["capture", t.to_str().unwrap()]);
    assert!(!r.stderr.contains("semantic lane off"), "{}", r.stderr);
    with_model(&["model", "embed"]);
    let r = with_model(&["recall", "--json", "where does the limiter go"]);
    assert!(r.stdout.contains("semantic"), "{}", r.stdout);
    let written: Vec<_> = walkdir::WalkDir::new(env.path("home"))
        .min_depth(1)
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .collect();
    assert!(written.is_empty(), "written under HOME: {written:?}");
}

#[test]
fn show_and_zoom_without_an_argument_read_the_latest_session_and_today() {
    let env = Env::new();
    two_sessions(&env);
    let r = peat(&env, &["show"]).ok();
    assert!(
        r.stdout.starts_with(&format!("== session {SESSION_B} ==")),
        "{}",
        r.stdout
    );
    // One event, one prompt: singular nouns.
    assert!(r.stdout.contains(" · 1 prompt · "), "{}", r.stdout);
    let r = peat(&env, &["zoom"]).ok();
    assert!(r.stdout.starts_with("== jul 14 2026 == "), "{}", r.stdout);
    assert!(r.stdout.contains("[7a1b2c3d]"), "{}", r.stdout);
    let r = peat(&env, &["zoom", "3d"]).ok();
    assert!(r.stdout.starts_with("== jul 11 2026 == "), "{}", r.stdout);
}

#[test]
fn a_session_or_window_read_by_shape_has_one_title() {
    let env = Env::new();
    two_sessions(&env);
    for (words, title) in [
        (
            &["7a1b"][..],
            "== session 7a1b2c3d (matched prefix 7a1b) ==",
        ),
        (&["2026-07-14"], "== window 2026-07-14 =="),
    ] {
        let r = peat(&env, words).ok();
        let titles = r.stdout.lines().filter(|l| l.starts_with("==")).count();
        assert!(r.stdout.starts_with(title), "{}", r.stdout);
        assert_eq!(titles, 1, "{words:?} prints two titles:\n{}", r.stdout);
    }
}

#[test]
fn show_names_files_as_the_brief_does() {
    let env = Env::new();
    let work = env.path("work");
    let text = Claude::session_of(SESSION_B, 1)
        .text()
        .replace("/home/dev/acme-api", work.to_str().unwrap());
    let t = env.path("b.jsonl");
    std::fs::write(&t, text).unwrap();
    peat(&env, &["capture", t.to_str().unwrap()]).ok();
    let show = peat(&env, &["show", "7a1b"]).ok();
    assert!(
        show.stdout.contains("\nfiles:\n  src/server.ts (1 edit)\n"),
        "{}",
        show.stdout
    );
    let brief = peat(&env, &["brief"]).ok();
    assert!(
        brief.stdout.contains("\n  src/server.ts (1 edit)"),
        "{}",
        brief.stdout
    );
}

#[test]
fn events_json_prints_each_kind_as_decoding_and_encoding_it_would() {
    let env = Env::new();
    two_sessions(&env);
    let c = env.path("c.jsonl");
    Claude::session_of("5e6f7a8b-0000-4000-8000-00000000000c", 3).write(&c);
    peat(&env, &["capture", c.to_str().unwrap()]).ok();
    claim(&env, SESSION_B, "1").ok();
    let r = peat(&env, &["events", "--json"]).ok();
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        #[serde(borrow)]
        event: &'a serde_json::value::RawValue,
    }
    let mut kinds = std::collections::BTreeSet::new();
    for line in r.stdout.lines() {
        let raw = serde_json::from_str::<Line>(line).unwrap().event.get();
        let event: peat::vocab::event::Event = serde_json::from_str(raw).unwrap();
        assert_eq!(raw, serde_json::to_string(&event).unwrap(), "{line}");
        kinds.insert(event.tag());
    }
    for kind in ["meta", "user", "tool", "file", "final", "obs"] {
        assert!(kinds.contains(kind), "no {kind} event in {kinds:?}");
    }
    // Filters decode the kind: the same lines, fewer of them.
    let finals = peat(&env, &["events", "--json", "--kind", "final"]).ok();
    let want: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.contains("\"FinalMsg\""))
        .collect();
    assert_eq!(finals.stdout.lines().collect::<Vec<_>>(), want);
}
