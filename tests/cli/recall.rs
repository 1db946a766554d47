//! Recall through the real binary: keyword-only without a model, hybrid with the pinned one.

use crate::support::{Claude, Env, SESSION_A, SESSION_B, model_data_dir};

/// Sessions A and B saying `a` and `b` in turns (the person, then the agent, and so on),
/// written into `env`; returns their transcript paths.
fn write_pair<S: AsRef<str>>(env: &Env, a: &[S], b: &[S]) -> [String; 2] {
    let write = |session: &str, texts: &[S], file: &str| {
        let mut c = Claude::new(session);
        for (i, text) in texts.iter().enumerate() {
            match i % 2 {
                0 => c.user(text.as_ref()),
                _ => c.said(text.as_ref()),
            };
        }
        let path = env.path(file);
        c.write(&path);
        path.to_str().unwrap().to_string()
    };
    [
        write(SESSION_A, a, "a.jsonl"),
        write(SESSION_B, b, "b.jsonl"),
    ]
}

/// Two sessions on unrelated work, written into `env`; returns their transcript paths.
pub(crate) fn write_two_sessions(env: &Env) -> [String; 2] {
    write_pair(
        env,
        &[
            "the deploy script fails on arm64 runners",
            "Fixed the release pipeline so Apple silicon builds link against the right target; the arm64 job is green again.",
        ],
        &[
            "rename the sidebar css classes to match the design tokens",
            "Renamed the sidebar classes and updated every stylesheet that used the old names.",
        ],
    )
}

/// One match buried under a crowd: session A says `buried` once, session B says
/// `crowd(n)` for each of seventy turns (texts in turns, as [`write_pair`]), so A's text
/// ranks below B's seventy in either lane unless the filter runs inside the lane. Written
/// into `env`, not captured; returns the transcript paths.
fn buried_match(env: &Env, buried: &[&str], crowd: impl Fn(usize) -> Vec<String>) -> [String; 2] {
    let buried: Vec<String> = buried.iter().map(|s| s.to_string()).collect();
    let crowd: Vec<String> = (0..70).flat_map(crowd).collect();
    write_pair(env, &buried, &crowd)
}

/// Run peat in `env` with the model installed under `data`.
fn run_with_model(env: &Env, data: &std::path::Path, args: &[&str]) -> crate::support::Run {
    crate::support::Run::of(model_cmd(env, data, args).output().unwrap())
}

/// Whether `v` (a `recall --json` answer) has hits and every one has `field` equal to `want`.
fn every_hit(v: &serde_json::Value, field: &str, want: &str) -> bool {
    let hits = v["hits"].as_array().unwrap();
    !hits.is_empty() && hits.iter().all(|h| h[field] == want)
}

fn two_sessions(env: &Env) {
    let [a, b] = write_two_sessions(env);
    env.run(&["capture", &a, &b]).ok();
}

#[test]
fn without_a_model_recall_is_keyword_only_and_says_so() {
    let env = Env::new();
    two_sessions(&env);
    let r = env.run(&["sidebar", "classes"]).ok();
    assert!(
        r.stderr
            .contains("semantic lane off: run `peat model fetch`"),
        "{}",
        r.stderr
    );
    assert!(
        r.stdout
            .starts_with("== search: \"sidebar classes\" (tried first: subject) =="),
        "{}",
        r.stdout
    );
    let first = r.stdout.lines().nth(1).unwrap();
    assert!(first.contains("sidebar"), "{}", r.stdout);
    assert!(first.contains("▸ peat show 7a1b2c3d"), "{first}");
    let json = env.run(&["recall", "sidebar", "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["semantic"]["state"], "off");
    assert_eq!(v["hits"][0]["session"], SESSION_B);
    assert!(
        v["hits"][0]["text"].as_str().unwrap().len() > 40,
        "--json carries full text"
    );
    let none = env.run(&["recall", "zeppelin"]);
    assert_eq!(none.code, 1);
    assert!(none.stderr.contains("no hits"), "{}", none.stderr);
}

#[test]
fn filters_narrow_recall_by_kind_and_session() {
    let env = Env::new();
    two_sessions(&env);
    let r = env
        .run(&["recall", "sidebar", "--kind", "final", "--json"])
        .ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(every_hit(&v, "kind", "final"), "{v}");
    let r = env
        .run(&["recall", "sidebar", "arm64", "--session", "3f6c", "--json"])
        .ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(every_hit(&v, "session", SESSION_A), "{v}");
    let bad = env.run(&["recall", "x", "--kind", "bogus"]);
    assert_eq!(bad.code, 2);
}

/// `peat ARGS` in `env` with the installed model's data directory.
fn model_cmd(env: &Env, data: &std::path::Path, args: &[&str]) -> std::process::Command {
    let mut c = env.cmd();
    c.env("PEAT_DATA_DIR", data).args(args);
    c
}

#[test]
fn with_the_pinned_model_a_paraphrase_is_found_by_meaning() {
    let Some(data) = model_data_dir() else { return };
    let env = Env::new();
    let with_model = |args: &[&str]| run_with_model(&env, &data, args);
    let [a, b] = write_two_sessions(&env);
    with_model(&["capture", &a, &b]).ok();
    // The capture left the vectors to a pass of their own: wait for it.
    with_model(&["model", "embed"]).ok();
    let r = with_model(&["recall", "why did compiling for M1 macs break", "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["semantic"]["state"], "on", "{v}");
    assert_eq!(v["hits"][0]["session"], SESSION_A, "{v}");
    assert!(v["hits"][0]["vector_rank"].is_number(), "{v}");
}

#[test]
fn a_filtered_search_finds_a_match_ranked_below_the_unfiltered_top() {
    let env = Env::new();
    // Session B says "deploy" seventy times over, session A once among other words.
    let [a, b] = buried_match(
        &env,
        &[
            "while you are at it, the deploy step of the nightly job prints a warning about the cache size; look at the css later",
            "The nightly job's warning came from an outdated cache setting; raised the limit and the warning is gone from the logs.",
        ],
        |n| {
            vec![
                format!("deploy the deploy pipeline to staging, deploy number {n}"),
                format!(
                    "Deployed: the pipeline ran deploy {n} to staging and every deploy check passed."
                ),
            ]
        },
    );
    env.run(&["capture", &a, &b]).ok();
    let unfiltered = env
        .run(&["recall", "deploy", "--limit", "60", "--json"])
        .ok();
    let v: serde_json::Value = serde_json::from_str(&unfiltered.stdout).unwrap();
    assert!(
        every_hit(&v, "session", SESSION_B),
        "the buried match is not in the unfiltered top 60: {v}"
    );
    for filter in [
        &["--session", "3f6c"][..],
        &["--since", "2026-07-01", "--session", SESSION_A][..],
    ] {
        let mut args = vec!["recall", "deploy", "--json"];
        args.extend_from_slice(filter);
        let r = env.run(&args).ok();
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(v["hits"][0]["session"], SESSION_A, "{filter:?}: {v}");
        assert!(v["hits"][0]["keyword_rank"].is_number(), "{v}");
    }
}

#[test]
fn with_the_pinned_model_a_filtered_scan_finds_a_match_ranked_below_the_unfiltered_top() {
    let Some(data) = model_data_dir() else { return };
    let env = Env::new();
    let with_model = |args: &[&str]| run_with_model(&env, &data, args);
    // Session B's seventy prompts mean what the query means; session A's one does not.
    let [a, b] = buried_match(
        &env,
        &["the nightly job prints a warning about the cache size"],
        |n| {
            vec![format!(
                "ship release {n} of the service to the staging cluster"
            )]
        },
    );
    with_model(&["capture", &a, &b]).ok();
    with_model(&["model", "embed"]).ok();
    // Meaning only, so the keyword lane cannot be what finds it; no floor, so only the
    // filter decides.
    let q = [
        "recall",
        "rolling out a new version to the servers",
        "--semantic-only",
    ];
    let r = with_model(
        &[
            &q[..],
            &["--floor", "0", "--limit", "60", "--json", "--budget", "0"],
        ]
        .concat(),
    )
    .ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let hits = v["hits"].as_array().unwrap();
    assert!(hits.len() >= 50, "{v}");
    assert!(every_hit(&v, "session", SESSION_B), "{v}");
    let r = with_model(&[&q[..], &["--floor", "0", "--session", "3f6c", "--json"]].concat()).ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["hits"][0]["session"], SESSION_A, "{v}");
    assert!(v["hits"][0]["vector_rank"].is_number(), "{v}");
}

#[test]
fn with_the_pinned_model_a_query_about_nothing_recorded_finds_nothing() {
    let Some(data) = model_data_dir() else { return };
    let env = Env::new();
    let with_model = |args: &[&str]| run_with_model(&env, &data, args);
    let [a, b] = write_two_sessions(&env);
    with_model(&["capture", &a, &b]).ok();
    with_model(&["model", "embed"]).ok();
    for q in ["sourdough bread starter hydration", "xyzzy quux frobnicate"] {
        let none = with_model(&["recall", q]);
        assert_eq!(none.code, 1, "{q}: {}", none.stdout);
        assert!(none.stdout.is_empty(), "{}", none.stdout);
        assert!(none.stderr.contains("no hits"), "{}", none.stderr);
        assert!(none.stderr.contains("similarity 0.30"), "{}", none.stderr);
        let json = with_model(&["recall", q, "--json"]);
        assert_eq!(json.code, 1, "--json follows the exit-code contract too");
        let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
        assert_eq!(v["hits"].as_array().unwrap().len(), 0, "{v}");
        // Without the floor, the nearest texts come back, each with its low similarity.
        let all = with_model(&["recall", q, "--floor", "0", "--semantic-only", "--json"]).ok();
        let v: serde_json::Value = serde_json::from_str(&all.stdout).unwrap();
        let sims: Vec<f64> = v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["similarity"].as_f64().unwrap())
            .collect();
        assert!(!sims.is_empty() && sims.iter().all(|s| *s < 0.30), "{v}");
    }
    // A real question clears the floor, and its hit shows how strong it is.
    let r = with_model(&["recall", "why did compiling for M1 macs break"]).ok();
    let first = r.stdout.lines().next().unwrap();
    assert!(first.contains("▸ peat show 3f6c2a9e"), "{}", r.stdout);
    assert!(first.contains('●'), "{first}");
}

#[test]
fn each_hit_shows_its_strength_and_a_lane_can_be_chosen() {
    let env = Env::new();
    two_sessions(&env);
    let r = env
        .run(&["recall", "sidebar", "classes", "--keyword-only"])
        .ok();
    let first = r.stdout.lines().next().unwrap();
    assert!(first.contains("sidebar"), "{}", r.stdout);
    assert!(
        first.contains("●●●●●"),
        "every word matched is a strong hit: {first}"
    );
    assert!(
        !r.stderr.contains("semantic lane off"),
        "words only was asked for: {}",
        r.stderr
    );
    let weak = env
        .run(&[
            "recall", "sidebar", "zeppelin", "airship", "blimp", "--json",
        ])
        .ok();
    let v: serde_json::Value = serde_json::from_str(&weak.stdout).unwrap();
    let strong = env.run(&["recall", "sidebar", "--json"]).ok();
    let s: serde_json::Value = serde_json::from_str(&strong.stdout).unwrap();
    assert!(
        v["hits"][0]["score"].as_f64() < s["hits"][0]["score"].as_f64(),
        "one word of four is a weaker match than the one word asked: {v} {s}"
    );
    // Meaning only, without the model: a clear error, not an empty answer.
    let no_model = env.run(&["recall", "sidebar", "--semantic-only"]);
    assert_eq!(no_model.code, 2);
    assert!(
        no_model.stderr.contains("peat model fetch"),
        "{}",
        no_model.stderr
    );
    let both = env.run(&["recall", "x", "--keyword-only", "--semantic-only"]);
    assert_eq!(both.code, 2);
    let bad = env.run(&["recall", "x", "--floor", "high"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("cosine"), "{}", bad.stderr);
}

#[test]
fn a_capture_never_waits_for_the_model_and_searches_say_what_is_not_embedded_yet() {
    let Some(data) = model_data_dir() else { return };
    let env = Env::new();
    let with_model = |args: &[&str]| run_with_model(&env, &data, args);
    // Holding the pass's lock keeps the capture's background pass from starting (it sees
    // one at work), so the backlog stays put while it is looked at.
    std::fs::create_dir_all(env.store()).unwrap();
    let held = std::fs::File::create(env.store().join("embed.lock")).unwrap();
    held.lock().unwrap();
    let [a, b] = write_two_sessions(&env);
    with_model(&["capture", &a, &b]).ok();

    let r = with_model(&["recall", "arm64", "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let queued = v["semantic"]["queued"].as_u64().unwrap();
    assert!(queued >= 4, "{v}");
    assert_eq!(
        v["hits"][0]["session"], SESSION_A,
        "keywords still find it: {v}"
    );
    assert!(v["hits"][0]["vector_rank"].is_null(), "{v}");
    // Half the words of a text waiting for the pass: judged by them alone, not taken for a
    // text far from the query's meaning (which both lanes would drop).
    let r = with_model(&[
        "recall", "deploy", "fails", "on", "windows", "laptops", "--json",
    ])
    .ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["hits"][0]["session"], SESSION_A, "{v}");
    let r = with_model(&["recall", "arm64"]).ok();
    assert!(
        r.stderr.contains(&format!(
            "peat: {queued} texts are not embedded yet, found by keywords only (the embedding pass is at work)"
        )),
        "{}",
        r.stderr
    );
    let st = with_model(&["model", "status", "--json"]).ok();
    let st: serde_json::Value = serde_json::from_str(&st.stdout).unwrap();
    assert_eq!(st["backlog"]["queued"].as_u64(), Some(queued), "{st}");

    drop(held);
    let r = with_model(&["model", "embed"]).ok();
    assert!(
        r.stderr.contains(&format!("embedded {queued} texts")),
        "{}",
        r.stderr
    );
    let r = with_model(&["recall", "why did compiling for M1 macs break", "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["semantic"]["queued"], 0, "{v}");
    assert_eq!(v["hits"][0]["session"], SESSION_A, "{v}");
    assert!(v["hits"][0]["vector_rank"].is_number(), "{v}");
    let st = with_model(&["model", "status"]).ok();
    assert!(
        st.stdout.contains("every text of this ledger embedded"),
        "{}",
        st.stdout
    );
}

#[test]
fn an_embedding_pass_killed_midway_keeps_what_it_stored_and_the_next_one_finishes() {
    let Some(data) = model_data_dir() else { return };
    let env = Env::new();
    let with_model = |args: &[&str]| model_cmd(&env, &data, args);
    let queued = || {
        let out = with_model(&["model", "status", "--json"]).output().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["backlog"]["queued"].as_u64().unwrap()
    };
    // Four of the pass's batches (256 texts each): a loaded machine may finish two between
    // the polls below, and the kill must still land with texts waiting.
    let mut s = Claude::new(SESSION_A);
    for i in 0..800 {
        s.user(&format!(
            "step {i}: check the retry budget of worker {} before the deploy",
            i * 7919 % 1000
        ));
    }
    let t = env.path("long.jsonl");
    s.write(&t);
    std::fs::create_dir_all(env.store()).unwrap();
    let held = std::fs::File::create(env.store().join("embed.lock")).unwrap();
    held.lock().unwrap();
    crate::support::Run::of(
        with_model(&["capture", t.to_str().unwrap()])
            .output()
            .unwrap(),
    )
    .ok();
    let before = queued();
    assert!(before >= 800, "{before}");
    drop(held);

    let mut pass = with_model(&["model", "embed"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let mut midway = before;
    while midway == before && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(200));
        midway = queued();
    }
    pass.kill().unwrap();
    pass.wait().unwrap();
    assert!(midway < before, "the pass stored nothing in 120 s");
    let after_kill = queued();
    assert!(after_kill <= midway, "{after_kill} > {midway}");

    let r = crate::support::Run::of(with_model(&["model", "embed"]).output().unwrap()).ok();
    assert!(
        r.stderr.contains(&format!("embedded {after_kill} texts")),
        "{}",
        r.stderr
    );
    assert_eq!(queued(), 0);
}

#[test]
fn a_search_answers_the_same_from_the_lanes_file_as_from_its_rows() {
    let Some(data) = model_data_dir() else { return };
    let env = Env::new();
    let with_model = |args: &[&str]| run_with_model(&env, &data, args);
    let [a, b] = write_two_sessions(&env);
    with_model(&["capture", &a, &b]).ok();
    with_model(&["model", "embed"]).ok();
    // A rebuild writes the file from every row (the vectors come from the cache).
    with_model(&["rebuild"]).ok();
    let files: Vec<std::path::PathBuf> = std::fs::read_dir(env.store())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("vectors.v")
        })
        .collect();
    assert_eq!(
        files.len(),
        1,
        "the lane's file, the old one's gone: {files:?}"
    );
    let q = [
        "recall",
        "why did compiling for M1 macs break",
        "--semantic-only",
        "--floor",
        "0",
        "--json",
    ];
    let answer = || {
        let v: serde_json::Value = serde_json::from_str(&with_model(&q).ok().stdout).unwrap();
        let hits = v["hits"].as_array().unwrap().clone();
        assert!(!hits.is_empty(), "{v}");
        hits.iter()
            .map(|h| {
                (
                    h["session"].clone(),
                    h["seq"].clone(),
                    h["similarity"].clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    let from_file = answer();
    // Without its file the lane is read from the rows, as before the file existed.
    std::fs::remove_file(&files[0]).unwrap();
    assert_eq!(answer(), from_file);
}
