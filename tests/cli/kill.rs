//! A process killed mid-way (SIGKILL: no destructor, no flush) never leaves the views
//! ahead of the ledger or counting twice: the next open ends where a rebuild from scratch
//! ends. Each kill is timed from something the process writes (the views lock naming what
//! it is doing, the ledger's position hint), so that it lands in the phase it aims at
//! however slow the machine or its start.

use std::time::{Duration, Instant};

use crate::support::{Claude, Env, kill_after, kill_when};

/// Sessions of `turns` turns each, written as transcripts under HOME.
fn transcripts(env: &Env, first: usize, sessions: usize, turns: usize) {
    for s in first..first + sessions {
        let id = format!("0199a1b2-c3d4-7e5f-8a9b-{s:012x}");
        Claude::session_of(&id, turns).write(
            &env.path("home/.claude/projects/-home-dev-acme-api")
                .join(format!("{id}.jsonl")),
        );
    }
}

/// What the views answer: every session's rollup and two searches, whole (no limit, no
/// previews, no budget), as JSON lines (one per session or hit, without the searches'
/// timings).
fn answers(env: &Env) -> Vec<String> {
    let mut out = Vec::new();
    for args in [
        &[
            "sessions", "--json", "--limit", "0", "--full", "--budget", "0",
        ][..],
        &[
            "recall", "--json", "--limit", "200", "--full", "--budget", "0", "rate", "limiter",
        ],
        &[
            "recall",
            "--json",
            "--limit",
            "200",
            "--full",
            "--budget",
            "0",
            "turn 7 done",
        ],
    ] {
        let v: serde_json::Value = serde_json::from_str(&env.run(args).ok().stdout).unwrap();
        let rows = match &v {
            serde_json::Value::Array(rows) => rows.clone(),
            other => other["hits"].as_array().cloned().unwrap_or_default(),
        };
        out.extend(rows.iter().map(|r| r.to_string()));
    }
    out
}

/// The first row where two answers differ, for a readable failure.
#[track_caller]
fn same(got: &[String], want: &[String], what: &str) {
    if let Some(i) = (0..got.len().max(want.len())).find(|&i| got.get(i) != want.get(i)) {
        panic!(
            "{what}: {} rows vs {} after a rebuild; first difference at row {i}:\n  {:?}\n  {:?}",
            got.len(),
            want.len(),
            got.get(i),
            want.get(i)
        );
    }
}

fn timed(env: &Env, args: &[&str]) -> Duration {
    let t = Instant::now();
    env.run(args).ok();
    t.elapsed()
}

#[test]
fn a_rebuild_killed_mid_way_leaves_views_equal_to_a_rebuild() {
    let env = Env::new();
    transcripts(&env, 0, 20, 50);
    env.run(&["import"]).ok();
    let full = timed(&env, &["rebuild"]);
    let want = answers(&env);
    assert!(
        want.len() > 200,
        "the answers compared are too few to prove anything"
    );
    // Readers and catch-ups name themselves otherwise in the views lock: it names a
    // rebuild once the process has started folding, whatever its start cost.
    let views_lock = env.store().join("views.lock");
    let rebuilding =
        || std::fs::read_to_string(&views_lock).is_ok_and(|h| h.contains("rebuilding the views"));
    let mut mid_way = 0;
    for tenths in [0, 1, 3, 5, 7] {
        if kill_when(&env, &["rebuild"], rebuilding, full * tenths / 10) {
            mid_way += 1;
        }
        same(
            &answers(&env),
            &want,
            &format!("after a rebuild killed at {tenths}/10"),
        );
    }
    env.run(&["rebuild"]).ok();
    same(&answers(&env), &want, "after the last rebuild");
    eprintln!("rebuild: {full:?}; {mid_way} of 5 kills landed while it ran");
    assert!(
        mid_way > 0,
        "no kill landed mid-rebuild: the test proved nothing"
    );
}

/// Where a kill lands: a moment into the ledger's first commit, into the views' catch-up,
/// or a fraction of a full run measured beforehand.
#[derive(Clone, Copy, Debug)]
enum Moment {
    FirstCommit,
    CatchUp(Duration),
    Fraction(u32),
}

#[test]
fn a_capture_killed_mid_catch_up_leaves_views_equal_to_a_rebuild() {
    // Time a full import of the second half on a scratch copy of the scenario.
    let probe = Env::new();
    transcripts(&probe, 0, 5, 40);
    probe.run(&["import"]).ok();
    transcripts(&probe, 5, 10, 40);
    let full = timed(&probe, &["import"]);

    let mut mid_way = 0;
    let moments = [
        Moment::FirstCommit,
        Moment::CatchUp(Duration::ZERO),
        Moment::CatchUp(Duration::from_millis(20)),
        Moment::Fraction(6),
    ];
    for moment in moments {
        let env = Env::new();
        transcripts(&env, 0, 5, 40);
        env.run(&["import"]).ok();
        transcripts(&env, 5, 10, 40);
        let hint = env.store().join("ledger.lsn");
        let before = std::fs::read_to_string(&hint).unwrap_or_default();
        let views_lock = env.store().join("views.lock");
        let landed = match moment {
            // The hint moves as the first batch commits: the kill lands mid-commit or
            // just after it, with the views not yet caught up.
            Moment::FirstCommit => kill_when(
                &env,
                &["import"],
                || std::fs::read_to_string(&hint).unwrap_or_default() != before,
                Duration::ZERO,
            ),
            Moment::CatchUp(after) => kill_when(
                &env,
                &["import"],
                || {
                    std::fs::read_to_string(&hint).unwrap_or_default() != before
                        && std::fs::read_to_string(&views_lock)
                            .is_ok_and(|h| h.contains("writing the views"))
                },
                after,
            ),
            Moment::Fraction(tenths) => kill_after(&env, &["import"], full * tenths / 10),
        };
        mid_way += usize::from(landed);
        // The next open catches up from wherever the killed process left the views, and
        // must end where a rebuild of the same ledger ends.
        let resumed = answers(&env);
        env.run(&["rebuild"]).ok();
        same(
            &resumed,
            &answers(&env),
            &format!("import killed at {moment:?}"),
        );
    }
    eprintln!(
        "import: {full:?}; {mid_way} of {} kills landed while it ran",
        moments.len()
    );
    assert!(
        mid_way > 0,
        "no kill landed mid-import: the test proved nothing"
    );
}
