//! The brief and zoom through the real binary, on a fixed record with a pinned "now".

use crate::support::{Claude, Env, NOW, Run, peat};

/// A closing message longer than any listing shows: text output clips it, `--json` never.
const LONG_FINAL: &str = "Committed the limiter as 1a2b3c4; the suite passes and the endpoint now returns 429 after 20 requests. ";

/// A session of `turns` turns on `day` (from `hour`:00 UTC), in `cwd`.
fn session(id: &str, day: &str, hour: u32, cwd: &str, turns: usize) -> String {
    Claude::session_of(id, turns)
        .text()
        .replace("2026-07-14T09", &format!("{day}T{hour:02}"))
        .replace("/home/dev/acme-api", cwd)
}

/// Five sessions over nine months: one active now on this desk (with a commit), one two
/// days ago here, one last week in another checkout, one in May here, one last November in
/// another repository; and two observations.
fn record(env: &Env) {
    std::fs::create_dir_all(env.path("work/.git")).unwrap();
    let work = env.path("work");
    let work = work.to_str().unwrap();
    let mut now = Claude::session_of("b0000000-0000-4000-8000-000000000001", 1);
    now.bash(
        "toolu_c",
        "git commit -am 'add rate limiter'",
        "[main 1a2b3c4] add rate limiter\n 1 file changed",
        false,
    );
    now.said(&LONG_FINAL.repeat(5));
    let sessions = [
        now.text()
            .replace("2026-07-14T09", "2026-07-20T11")
            .replace("/home/dev/acme-api", work),
        session(
            "a0000000-0000-4000-8000-000000000002",
            "2026-07-18",
            15,
            work,
            3,
        ),
        session(
            "c0000000-0000-4000-8000-000000000003",
            "2026-07-14",
            9,
            "/home/dev/acme-api",
            2,
        ),
        session(
            "d0000000-0000-4000-8000-000000000004",
            "2026-05-06",
            10,
            work,
            1,
        ),
        session(
            "e0000000-0000-4000-8000-000000000005",
            "2025-11-03",
            8,
            "/home/dev/herald",
            2,
        ),
    ];
    let mut paths = Vec::new();
    for (i, s) in sessions.iter().enumerate() {
        let p = env.path(&format!("t{i}.jsonl"));
        std::fs::write(&p, s).unwrap();
        paths.push(p.to_str().unwrap().to_string());
    }
    let mut args = vec!["capture"];
    args.extend(paths.iter().map(String::as_str));
    env.run(&args).ok();
    peat(
        env,
        &[
            "obs",
            "rate-limit",
            "the limiter allows 20 requests, refilling 5/s",
            "--session",
            "b0000000",
            "--from",
            "145",
        ],
    )
    .ok();
    peat(
        env,
        &[
            "obs",
            "cors",
            "cors must stay the first middleware",
            "--session",
            "a0000000",
            "--at",
            "2026-07-18",
        ],
    )
    .ok();
}

/// `peat ARGS` at the pinned now with colour allowed: piped output must still be plain.
fn peat_colour_allowed(env: &Env, args: &[&str]) -> Run {
    Run::of(
        env.cmd()
            .env("PEAT_NOW", NOW)
            .env_remove("NO_COLOR")
            .env("TERM", "xterm-256color")
            .args(args)
            .output()
            .unwrap(),
    )
}

#[test]
fn the_brief_of_a_fixed_record() {
    let env = Env::new();
    record(&env);
    let r = peat(&env, &["brief"]).ok();
    assert_eq!(r.stdout, BRIEF, "{}", r.stdout);
    assert_eq!(r.stderr, "");
    // Bare `peat` is the brief.
    assert_eq!(peat(&env, &[]).ok().stdout, BRIEF);
}

const BRIEF: &str = r#"== peat · 2026-07-20 ==

active in the last hour:
  work · claude [b0000000] — <1h ago, 1 commit  ▸ peat show b0000000

the last days with activity:
  today: 3 tools · 1 commit · 1 session · 1 obs · …/src/server.ts  ▸ peat 2026-07-20
  2d ago: 6 tools · 1 session · 1 obs · …/src/server.ts  ▸ peat 2026-07-18
  6d ago: 4 tools · 1 session · …/src/server.ts  ▸ peat 2026-07-14

further back:
  [q2 · apr 1 – may 31] 2 tools · 1 session · …/src/server.ts  ▸ peat 2026-q2
  [2025 · nov 3 – dec 31] 4 tools · 1 session · …/src/server.ts  ▸ peat 2025

last session (<1h ago, claude, feat/rate-limit):
  Committed the limiter as 1a2b3c4; the suite passes and the endpoint now returns 429 after 20 requests. Committed the limiter as 1a2b3c4; the suite passes and the endpoint now returns 429 after 20 requests. Committed the limiter as 1a2b3c4; the suite passes and the endpoint now returns 429 after 20 requests. Committed the limiter as 1a2b3c4; the suite passes and the endpoint now returns 429 after 2…  ▸ peat show b0000000 145

recently touched files:
  src/server.ts (4 edits) — a0000000, b0000000  ▸ peat src/server.ts
  …/src/server.ts (2 edits) — c0000000  ▸ peat /home/dev/acme-api/src/server.ts

current understanding (agent-asserted, newest wins):
  rate-limit (1 obs, <1h): the limiter allows 20 requests, refilling 5/s  ▸ peat rate-limit
  cors (1 obs, uncited, 2d): cors must stay the first middleware  ▸ peat cors
"#;

#[test]
fn zoom_lists_the_parts_the_sessions_and_what_was_said() {
    let env = Env::new();
    record(&env);
    let month = peat(&env, &["zoom", "2026-07"]).ok();
    assert_eq!(month.stdout, ZOOM_MONTH, "{}", month.stdout);
    let day = peat(&env, &["zoom", "2026-07-20"]).ok();
    assert_eq!(day.stdout, ZOOM_DAY, "{}", day.stdout);
    let week = peat(&env, &["zoom", "w29"]).ok();
    assert_eq!(week.stdout, ZOOM_WEEK, "{}", week.stdout);
    let year = peat(&env, &["zoom", "2026"]).ok();
    assert_eq!(year.stdout, ZOOM_YEAR, "{}", year.stdout);
}

const ZOOM_MONTH: &str = r#"== jul 2026 · jul 1–20 == 13 tools · 1 commit · 3 sessions · 2 obs

within:
  [w29 · jul 13–19] 10 tools · 2 sessions · 1 obs · …/src/server.ts  ▸ peat 2026-w29
  [w30 · jul 20] 3 tools · 1 commit · 1 session · 1 obs · …/src/server.ts  ▸ peat 2026-w30

files touched most:
  src/server.ts (4 edits) — a0000000, b0000000  ▸ peat src/server.ts
  …/src/server.ts (2 edits) — c0000000  ▸ peat /home/dev/acme-api/src/server.ts

closing messages:
  [final · <1h · work] Committed the limiter as 1a2b3c4; the suite passes and the endpoint now returns 429 after 20 requests. Committed the limiter as 1a2b3c4; the suite passes and the endpoint now retur…  ▸ peat show b0000000 145
  [final · 2d · work] Turn 2 done: the limiter is registered after cors, with capacity 20 and refill 5/s.  ▸ peat show a0000000 321
  [final · 6d · acme-api] Turn 1 done: the limiter is registered after cors, with capacity 20 and refill 5/s.  ▸ peat show c0000000 209

observations:
  [rate-limit · <1h · cited] the limiter allows 20 requests, refilling 5/s  ▸ peat show b0000000 obs1
  [cors · 2d · uncited] cors must stay the first middleware  ▸ peat show a0000000 obs1
"#;

const ZOOM_DAY: &str = r#"== jul 20 2026 == 3 tools · 1 commit · 1 session · 1 obs

sessions:
  [b0000000] 11:00–11:00 work · claude · feat/rate-limit · 3 tools · 1 commit  ▸ peat show b0000000

files touched most:
  src/server.ts (1 edit) — b0000000  ▸ peat src/server.ts

closing messages:
  [final · <1h · work] Committed the limiter as 1a2b3c4; the suite passes and the endpoint now returns 429 after 20 requests. Committed the limiter as 1a2b3c4; the suite passes and the endpoint now retur…  ▸ peat show b0000000 145

observations:
  [rate-limit · <1h · cited] the limiter allows 20 requests, refilling 5/s  ▸ peat show b0000000 obs1
"#;

const ZOOM_WEEK: &str = r#"== w29 2026 · jul 13–19 == 10 tools · 2 sessions · 1 obs

within:
  [jul 14] 4 tools · 1 session · …/src/server.ts  ▸ peat 2026-07-14
  [jul 18] 6 tools · 1 session · 1 obs · …/src/server.ts  ▸ peat 2026-07-18

files touched most:
  src/server.ts (3 edits) — a0000000  ▸ peat src/server.ts
  …/src/server.ts (2 edits) — c0000000  ▸ peat /home/dev/acme-api/src/server.ts

closing messages:
  [final · 2d · work] Turn 2 done: the limiter is registered after cors, with capacity 20 and refill 5/s.  ▸ peat show a0000000 321
  [final · 6d · acme-api] Turn 1 done: the limiter is registered after cors, with capacity 20 and refill 5/s.  ▸ peat show c0000000 209

observations:
  [cors · 2d · uncited] cors must stay the first middleware  ▸ peat show a0000000 obs1
"#;

const ZOOM_YEAR: &str = r#"== 2026 · jan 1 – jul 20 == 15 tools · 1 commit · 4 sessions · 2 obs

within:
  [may 2026] 2 tools · 1 session · …/src/server.ts  ▸ peat 2026-05
  [jul 2026] 13 tools · 1 commit · 3 sessions · 2 obs · …/src/server.ts  ▸ peat 2026-07

files touched most:
  src/server.ts (5 edits) — a0000000, b0000000, d0000000  ▸ peat src/server.ts
  …/src/server.ts (2 edits) — c0000000  ▸ peat /home/dev/acme-api/src/server.ts

closing messages:
  [final · <1h · work] Committed the limiter as 1a2b3c4; the suite passes and the endpoint now returns 429 after 20 requests. Committed the limiter as 1a2b3c4; the suite passes and the endpoint now retur…  ▸ peat show b0000000 145
  [final · 2d · work] Turn 2 done: the limiter is registered after cors, with capacity 20 and refill 5/s.  ▸ peat show a0000000 321
  [final · 6d · acme-api] Turn 1 done: the limiter is registered after cors, with capacity 20 and refill 5/s.  ▸ peat show c0000000 209
  [final · 75d · work] Turn 0 done: the limiter is registered after cors, with capacity 20 and refill 5/s.  ▸ peat show d0000000 97

observations:
  [rate-limit · <1h · cited] the limiter allows 20 requests, refilling 5/s  ▸ peat show b0000000 obs1
  [cors · 2d · uncited] cors must stay the first middleware  ▸ peat show a0000000 obs1
"#;

#[test]
fn every_line_of_the_brief_ends_in_a_handle() {
    let env = Env::new();
    record(&env);
    let r = peat(&env, &["brief"]).ok();
    for line in r.stdout.lines().filter(|l| l.starts_with("  ")) {
        assert!(line.contains("  ▸ peat "), "no handle: {line:?}");
    }
}

#[test]
fn brief_json_is_the_whole_structure_unclipped() {
    let env = Env::new();
    record(&env);
    let r = peat(&env, &["brief", "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["today"], "2026-07-20");
    assert_eq!(v["last_session"]["text"], LONG_FINAL.repeat(5));
    assert_eq!(v["last_session"]["here"], true);
    assert_eq!(
        v["active"][0]["session"],
        "b0000000-0000-4000-8000-000000000001"
    );
    assert_eq!(v["days"].as_array().unwrap().len(), 3);
    assert_eq!(v["further"][0]["handle"], "▸ peat 2026-q2");
    assert_eq!(v["subjects"][1]["uncited"], true);
    assert!(!r.stdout.contains('\x1b'));

    let z = peat(&env, &["zoom", "2026-07", "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&z.stdout).unwrap();
    assert_eq!(v["window"]["key"], "2026-07");
    assert_eq!(v["window"]["end"], "2026-07-20");
    assert_eq!(v["totals"]["tools"], 13);
    assert_eq!(v["children"][0]["handle"], "▸ peat 2026-w29");
    assert_eq!(v["texts"][0]["text"], LONG_FINAL.repeat(5));
    assert_eq!(v["observations"].as_array().unwrap().len(), 2);
}

#[test]
fn the_budget_bounds_the_bands_from_the_flag_or_the_environment() {
    let env = Env::new();
    record(&env);
    let bands = |r: Run| -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(&r.ok().stdout).unwrap();
        v["further"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["handle"].as_str().unwrap().to_string())
            .collect()
    };
    let one = bands(peat(&env, &["brief", "--json", "--periods", "1"]));
    assert_eq!(one, ["▸ peat 2025-11-03..2026-07-13"]);
    let env_one = Run::of(
        env.cmd()
            .env("PEAT_NOW", NOW)
            .env("PEAT_BRIEF_BUDGET", "1")
            .args(["brief", "--json"])
            .output()
            .unwrap(),
    );
    assert_eq!(bands(env_one), one);
    let five = bands(peat(&env, &["brief", "--json", "--periods", "5"]));
    // Weeks and months before jul 14 were quiet; the fifth band takes the rest.
    assert_eq!(five, ["▸ peat 2025-11-03..2026-05-31"]);
}

#[test]
fn a_desk_template_replaces_the_embedded_one() {
    let env = Env::new();
    record(&env);
    let tmpl = env.path("work/.peat/brief.tmpl");
    std::fs::create_dir_all(tmpl.parent().unwrap()).unwrap();
    std::fs::write(
        &tmpl,
        "{{ today }}: {{ active | length }} active; {{ last_session.text | clip(9) }} {{ 14200 | k }} {{ 'x' | h1 | dim | warn | accent }}\n",
    )
    .unwrap();
    let r = peat(&env, &["brief"]).ok();
    assert_eq!(r.stdout, "2026-07-20: 1 active; Committed… 14k x\n");
    // `--json` is the context, whatever the template.
    assert!(
        peat(&env, &["brief", "--json"])
            .ok()
            .stdout
            .starts_with('{')
    );

    std::fs::write(&tmpl, "{% if %}").unwrap();
    let bad = peat(&env, &["brief"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr
            .starts_with(&format!("peat: template error in {}: ", tmpl.display())),
        "{}",
        bad.stderr
    );
    assert!(bad.stderr.contains("--json"), "{}", bad.stderr);
    assert_eq!(bad.stdout, "");
}

#[test]
fn a_string_that_is_not_a_window_is_refused_with_the_grammar() {
    let env = Env::new();
    record(&env);
    let want = "(want w33, 2026-w33, 2026-07, 2026-08-14, q3, 2026, or a..b)";
    for bad in ["w54", "q5", "2026-08..2026-07", "lately"] {
        let r = peat(&env, &["zoom", bad]);
        assert_eq!(r.code, 2, "{bad}");
        assert!(
            r.stderr
                .starts_with(&format!("peat: not a window: \"{bad}\" {want}\n")),
            "{}",
            r.stderr
        );
    }
    // A mistyped date says what is wrong with it.
    let r = peat(&env, &["zoom", "2026-02-30"]);
    assert_eq!(
        r.code, 2,
        "invalid input exits 2, by the exit-code contract"
    );
    assert!(
        r.stderr.starts_with(&format!(
            "peat: 2026-02-30 is not a date: feb 2026 has 28 days {want}\n"
        )),
        "{}",
        r.stderr
    );
}

#[test]
fn piped_output_is_plain_even_where_colour_is_allowed() {
    let env = Env::new();
    record(&env);
    for args in [
        &["brief"][..],
        &["zoom", "2026-07"],
        &["zoom", "2026-07-20"],
    ] {
        let r = peat_colour_allowed(&env, args).ok();
        assert!(!r.stdout.contains('\x1b'), "{args:?}: {:?}", r.stdout);
    }
    // NO_COLOR or not, piped bytes are the same.
    assert_eq!(
        peat_colour_allowed(&env, &["brief"]).stdout,
        peat(&env, &["brief"]).stdout
    );
}

#[test]
fn an_empty_record_says_how_to_start_and_exits_1_as_nothing_found() {
    let env = Env::new();
    let r = peat(&env, &["brief"]);
    assert_eq!(r.code, 1, "nothing recorded yet is nothing found");
    assert_eq!(peat(&env, &[]).code, 1);
    assert_eq!(
        r.stdout,
        "== peat · 2026-07-20 ==\n\nNothing is recorded here yet. Set this project up (ledger, hooks, model, its past\ntranscripts), or capture every transcript on this machine:\n  ▸ peat setup\n  ▸ peat import\n"
    );
    let json = peat(&env, &["brief", "--json"]);
    assert_eq!(json.code, 1);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["events"], 0);
}
