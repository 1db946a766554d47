//! Observations: depositing claims, the claims register, a subject's evidence trail, and
//! `peat compact`.

use crate::support::{Claude, Env, SESSION_A, peat, repo, require_git};

/// A captured session A in a repository with one commit; returns the commit's full hash.
fn setup(env: &Env) -> String {
    let head = repo(env);
    let t = env.path("a.jsonl");
    Claude::session_of(SESSION_A, 1).write(&t);
    peat(env, &["capture", t.to_str().unwrap()]).ok();
    head
}

#[test]
fn a_claim_round_trips_through_subjects_and_its_trail() {
    require_git();
    let env = Env::new();
    let head = setup(&env);
    let basis = format!("@{}", &head[..8]);
    let r = peat(
        &env,
        &[
            "obs",
            "staging",
            "deploys go through the blue env first",
            "--from",
            "1,17",
            "--session",
            "3f6c",
        ],
    )
    .ok();
    assert!(
        r.stderr
            .contains("recorded → staging in session 3f6c2a9e (support 1)"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty(), "receipts go to stderr: {}", r.stdout);

    let r = peat(&env, &["subjects"]).ok();
    assert_eq!(
        r.stdout,
        format!(
            "  staging (1 obs, <1h, {basis}): deploys go through the blue env first  ▸ peat staging\n"
        )
    );
    let r = peat(&env, &["subjects", "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v[0]["subject"], "staging");
    assert_eq!(v[0]["cited"], true);
    assert_eq!(v[0]["basis"]["commit"], head.as_str());
    assert_eq!(v[0]["basis"]["dirty"], false);

    // A second claim on the subject becomes current; the trail keeps both, newest first.
    let later = "2026-07-20T13:00:00Z";
    let r = crate::support::Run::of(
        env.cmd()
            .env("PEAT_NOW", later)
            .args([
                "obs",
                "staging",
                "deploys",
                "go",
                "through",
                "green",
                "now",
                "--session",
                "3f6c",
            ])
            .output()
            .unwrap(),
    )
    .ok();
    assert!(
        r.stderr
            .contains("recorded → staging in session 3f6c2a9e (support 2)"),
        "{}",
        r.stderr
    );
    let r = peat(&env, &["staging"]).ok();
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines[0], "== subject staging ==");
    assert_eq!(lines[1], "staging — deploys go through green now (2 obs)");
    assert_eq!(
        lines[2],
        format!(
            "  [3f6c2a9e · <1h · uncited · {basis}] deploys go through green now  ▸ peat show 3f6c2a9e obs2"
        )
    );
    assert_eq!(
        lines[3],
        format!(
            "  [3f6c2a9e · <1h · cited · {basis}] deploys go through the blue env first  ▸ peat show 3f6c2a9e obs1"
        )
    );
    let r = peat(&env, &["staging", "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["result"]["support"], 2);
    assert_eq!(v["result"]["current"], "deploys go through green now");
    assert_eq!(v["result"]["evidence"][1]["derived_from"][1], 17);
    // The same trail through the explicit spellings.
    let via_subjects = peat(&env, &["subjects", "staging"]).ok();
    assert_eq!(via_subjects.stdout, lines[1..].join("\n") + "\n");
    let via_recall = peat(&env, &["recall", "--subject", "staging"]).ok();
    assert_eq!(via_recall.stdout, via_subjects.stdout);
}

#[test]
fn an_uncited_claim_is_marked_wherever_it_appears() {
    require_git();
    let env = Env::new();
    setup(&env);
    let r = peat(
        &env,
        &[
            "obs",
            "limiter",
            "capacity is 20 with refill 5/s",
            "--session",
            "3f6c",
        ],
    )
    .ok();
    assert!(r.stderr.contains("uncited"), "{}", r.stderr);
    let r = peat(&env, &["subjects"]).ok();
    assert!(r.stdout.contains("(1 obs, uncited, "), "{}", r.stdout);
    let r = peat(&env, &["limiter"]).ok();
    assert!(r.stdout.contains(" · uncited · "), "{}", r.stdout);
    let r = peat(&env, &["recall", "refill", "capacity"]).ok();
    assert!(r.stdout.contains("[obs·uncited · "), "{}", r.stdout);
}

#[test]
fn near_subject_names_are_printed_before_writing() {
    require_git();
    let env = Env::new();
    setup(&env);
    peat(
        &env,
        &[
            "obs",
            "fold-hnsw",
            "intra-tx upsert strands old vectors",
            "--session",
            "3f6c",
        ],
    )
    .ok();
    peat(&env, &["obs", "staging", "blue first", "--session", "3f6c"]).ok();
    let r = peat(
        &env,
        &[
            "obs",
            "fold-hnsw-perf",
            "search is 2ms at 40k",
            "--session",
            "3f6c",
        ],
    )
    .ok();
    let near = r
        .stderr
        .lines()
        .position(|l| l == "near subjects: fold-hnsw (1 obs)")
        .unwrap_or_else(|| panic!("{}", r.stderr));
    let recorded = r
        .stderr
        .lines()
        .position(|l| l.starts_with("recorded → fold-hnsw-perf"))
        .unwrap();
    assert!(near < recorded);
    let r = peat(&env, &["obs", "stagin", "typo", "--session", "3f6c"]).ok();
    assert!(
        r.stderr.contains("near subjects: staging (1 obs)"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_basis_marks_a_dirty_tree() {
    require_git();
    let env = Env::new();
    let head = setup(&env);
    std::fs::write(env.path("work/src/server.ts"), "changed\n").unwrap();
    peat(&env, &["obs", "server", "cors first", "--session", "3f6c"]).ok();
    let r = peat(&env, &["subjects"]).ok();
    assert!(
        r.stdout.contains(&format!("@{}+)", &head[..8])),
        "{}",
        r.stdout
    );
    // Outside any repository there is no basis.
    let env = Env::new();
    let t = env.path("a.jsonl");
    Claude::session_of(SESSION_A, 1).write(&t);
    peat(&env, &["capture", t.to_str().unwrap()]).ok();
    peat(&env, &["obs", "server", "cors first", "--session", "3f6c"]).ok();
    let r = peat(&env, &["subjects", "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(v[0]["basis"].is_null(), "{v}");
}

#[test]
fn at_files_the_claim_at_noon_that_day() {
    let env = Env::new();
    let t = env.path("a.jsonl");
    Claude::session_of(SESSION_A, 1).write(&t);
    peat(&env, &["capture", t.to_str().unwrap()]).ok();
    peat(
        &env,
        &[
            "obs",
            "staging",
            "blue first",
            "--session",
            "3f6c",
            "--at",
            "2026-07-01",
        ],
    )
    .ok();
    let r = peat(&env, &["staging", "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let ts = v["result"]["evidence"][0]["ts_ms"].as_i64().unwrap();
    assert_eq!(ts, 1_782_907_200_000, "2026-07-01T12:00:00Z");
    assert_eq!(v["result"]["evidence"][0]["age"], "19d");
    let bad = peat(
        &env,
        &[
            "obs",
            "staging",
            "x",
            "--session",
            "3f6c",
            "--at",
            "07/01/2026",
        ],
    );
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("bad --at date"), "{}", bad.stderr);
}

#[test]
fn the_session_comes_from_the_desk_or_beside_the_ledger_or_a_hint() {
    let env = Env::new();
    let t = env.path("a.jsonl");
    Claude::session_of(SESSION_A, 1).write(&t);
    peat(&env, &["capture", t.to_str().unwrap()]).ok();

    let r = peat(&env, &["obs", "staging", "blue first"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no session id"), "{}", r.stderr);
    assert!(r.stderr.contains("--session"), "{}", r.stderr);
    assert!(
        peat(&env, &["subjects", "--json"]).ok().stdout.trim() == "[]",
        "nothing was written"
    );

    // Beside the ledger (a shared store's current-session).
    std::fs::write(env.path("current-session"), format!("{SESSION_A}\n")).unwrap();
    let r = peat(&env, &["obs", "staging", "blue first"]).ok();
    // Typed in a shell, the file's session may not be the one meant: it says which.
    assert!(
        r.stderr
            .contains("filed under session 3f6c2a9e, which .peat/current-session names")
            && r.stderr.contains("--session ID files it elsewhere"),
        "{}",
        r.stderr
    );
    // The desk's own wins over the one beside the ledger.
    let other = "9b9b9b9b-0000-4000-8000-000000000009";
    std::fs::create_dir_all(env.path("work/.peat")).unwrap();
    std::fs::write(env.path("work/.peat/current-session"), other).unwrap();
    peat(&env, &["obs", "staging", "green now"]).ok();
    let r = peat(&env, &["staging", "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let sessions: Vec<&str> = v["result"]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["session"].as_str().unwrap())
        .collect();
    assert_eq!(sessions.len(), 2, "{v}");
    assert!(
        sessions.contains(&SESSION_A) && sessions.contains(&other),
        "{v}"
    );
}

#[test]
fn style_notes_advise_and_never_block() {
    let env = Env::new();
    let t = env.path("a.jsonl");
    Claude::session_of(SESSION_A, 1).write(&t);
    peat(&env, &["capture", t.to_str().unwrap()]).ok();
    let r = peat(
        &env,
        &[
            "obs",
            "deploy",
            "we shipped this fix today",
            "--session",
            "3f6c",
            "--from",
            "1",
        ],
    )
    .ok();
    assert!(
        r.stderr.contains("style: time-deictic phrase \"today\""),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("status-log phrase \"shipped\""),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("recorded → deploy"), "{}", r.stderr);
}

#[test]
fn compact_folds_the_journal() {
    let env = Env::new();
    let t = env.path("a.jsonl");
    Claude::session_of(SESSION_A, 3).write(&t);
    peat(&env, &["capture", t.to_str().unwrap()]).ok();
    let r = peat(&env, &["compact"]).ok();
    assert!(r.stderr.contains("compacted — journal "), "{}", r.stderr);
    // Everything is still there afterwards.
    let r = peat(&env, &["3f6c"]).ok();
    assert!(r.stdout.contains("3 prompts"), "{}", r.stdout);
}
