//! Bare `peat THING`: the reading chosen by shape, named in the first line of the answer.

use crate::support::{Claude, Env, SESSION_A, SESSION_B, git, peat, repo, require_git};

/// Session A edits src/server.ts; session B commits `made` (the repository's commit) and
/// `abc1234` (one this repository does not have) and mentions a bead.
fn record(env: &Env, made: &str) {
    let a = Claude::session_of(SESSION_A, 2);
    let mut b = Claude::new(SESSION_B);
    b.user("close peat-8nj: the limiter needs a burst allowance");
    b.bash(
        "toolu_c1",
        "git commit -m 'add the server'",
        &format!("[main {}] add the server", &made[..7]),
        false,
    );
    b.bash("toolu_c2", "git commit -m x", "[main abc1234] x", false);
    b.said("Committed the server and the burst allowance; peat-8nj can be closed now that both landed.");
    let (ta, tb) = (env.path("a.jsonl"), env.path("b.jsonl"));
    a.write(&ta);
    b.write(&tb);
    peat(
        env,
        &["capture", ta.to_str().unwrap(), tb.to_str().unwrap()],
    )
    .ok();
    peat(
        env,
        &[
            "obs",
            "staging",
            "deploys go through the blue env first",
            "--session",
            "3f6c",
            "--from",
            "1",
        ],
    )
    .ok();
}

/// The seq of the first event of `session` whose tag is `tag`.
fn seq_of(env: &Env, session: &str, tag: &str) -> u64 {
    let r = peat(
        env,
        &["events", "--session", session, "--kind", tag, "--json"],
    )
    .ok();
    let line = r.stdout.lines().next().expect("an event");
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    v["seq"].as_u64().unwrap()
}

#[test]
fn the_dispatch_table() {
    require_git();
    let env = Env::new();
    let head = repo(&env);
    record(&env, &head);
    let prompt = seq_of(&env, "3f6c", "user").to_string();
    let short = &head[..7];
    let table: Vec<(Vec<&str>, String)> = vec![
        // 1. a file a session touched (recorded in another checkout of the repository)
        (vec!["src/server.ts"], "== file src/server.ts ==".into()),
        (
            vec!["src/server.ts:1"],
            "== file src/server.ts line 1 ==".into(),
        ),
        (vec!["src"], "== file src ==".into()),
        // an existing file no session touched is nothing recorded, never a search
        (
            vec!["README.md"],
            "== file README.md: nothing recorded ==".into(),
        ),
        // 2. windows, before session prefixes
        (vec!["2026-07-14"], "== window 2026-07-14 ==".into()),
        (vec!["w29"], "== window 2026-w29 ==".into()),
        (vec!["2026-07"], "== window 2026-07 ==".into()),
        (
            vec!["1042"],
            "== search: \"1042\" (tried first: session id, subject) ==".into(),
        ),
        // 3. a session prefix, with a seq
        (
            vec!["3f6c"],
            "== session 3f6c2a9e (matched prefix 3f6c) ==".into(),
        ),
        (
            vec!["3f6c", prompt.as_str()],
            format!("== session 3f6c2a9e event {prompt} (matched prefix 3f6c) =="),
        ),
        (vec![SESSION_B], "== session 7a1b2c3d ==".into()),
        // 4. commits: the repository's, and one only the record knows
        (vec![short], format!("== commit {short} ==")),
        (vec![head.as_str()], format!("== commit {head} ==")),
        (vec!["abc1234"], "== commit abc1234 ==".into()),
        // hex neither a session nor a commit is searched for
        (
            vec!["0123456"],
            "== search: \"0123456\" (tried first: session id, commit, subject) ==".into(),
        ),
        // 5. an exact subject
        (vec!["staging"], "== subject staging ==".into()),
        // 6. a bead id
        (vec!["peat-8nj"], "== bead peat-8nj ==".into()),
        // 7. anything else
        (
            vec!["burst", "allowance"],
            "== search: \"burst allowance\" (tried first: subject) ==".into(),
        ),
        (
            vec!["cafe"],
            "== search: \"cafe\" (tried first: subject) ==".into(),
        ),
    ];
    let mut wrong = Vec::new();
    for (words, want) in &table {
        let r = peat(&env, words);
        let got = r.stdout.lines().next().unwrap_or("");
        if got != want {
            wrong.push(format!(
                "{words:?}: got {got:?}, want {want:?} (exit {}, stderr {:?})",
                r.code, r.stderr
            ));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

#[test]
fn a_commit_names_the_session_that_made_it() {
    require_git();
    let env = Env::new();
    let head = repo(&env);
    record(&env, &head);
    let committed = seq_of(&env, "7a1b", "commit");
    let r = peat(&env, &[&head[..7]]).ok();
    assert!(r.stdout.contains("add the server"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains(&format!("▸ peat show 7a1b2c3d {committed}")),
        "{}",
        r.stdout
    );
    // Known only to the record: still found, by the hash the agent's command printed.
    let r = peat(&env, &["abc1234", "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["reading"]["kind"], "commit");
    assert_eq!(v["reading"]["hash"], serde_json::Value::Null);
    assert_eq!(v["result"]["sessions"][0]["session"], SESSION_B);
    // A commit no recorded session made: said so, with where to look instead.
    std::fs::write(env.path("work/README.md"), "# acme, by hand\n").unwrap();
    git(
        &env.path("work"),
        &["commit", "-q", "-am", "edit the readme by hand"],
    );
    let other = git(&env.path("work"), &["rev-parse", "--short=7", "HEAD"]);
    let r = peat(&env, &[&other]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stdout.contains(&format!(
            "commit {other} (edit the readme by hand) was not made by a recorded session"
        )),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("▸ peat 2026-07-14"), "{}", r.stdout);
    assert!(
        r.stderr.contains(&format!("git show {other}")),
        "{}",
        r.stderr
    );
}

#[test]
fn a_file_lists_the_edits_sessions_made_to_it() {
    require_git();
    let env = Env::new();
    let head = repo(&env);
    record(&env, &head);
    let r = peat(&env, &["src/server.ts"]).ok();
    let rows: Vec<&str> = r.stdout.lines().skip(1).collect();
    assert_eq!(rows.len(), 3, "one line per edit, then blame: {}", r.stdout);
    // The tag names the session, the age and the model its transcript named.
    assert!(
        rows[0].starts_with("  [3f6c2a9e · 6d · claude-sonnet-4-6] edit"),
        "{}",
        rows[0]
    );
    assert!(
        rows[0].contains("\"turn 1: add a token-bucket rate limiter"),
        "each edit names its prompt: {}",
        rows[0]
    );
    assert!(rows[0].contains("▸ peat show 3f6c2a9e "), "{}", rows[0]);
    assert!(
        rows[2].contains("▸ peat blame src/server.ts"),
        "{}",
        rows[2]
    );
    let r = peat(&env, &["src/server.ts", "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["reading"]["kind"], "file");
    assert_eq!(
        v["result"]["touches"][0]["path"],
        "/home/dev/acme-api/src/server.ts"
    );
}

#[test]
fn fall_throughs_are_explained_and_json_wraps_the_reading() {
    let env = Env::new();
    let mut a = Claude::new(SESSION_A);
    a.user("the limiter drops bursts at 0123456 requests");
    let t = env.path("a.jsonl");
    a.write(&t);
    peat(&env, &["capture", t.to_str().unwrap()]).ok();
    let r = peat(&env, &["0123456"]).ok();
    assert_eq!(
        r.stdout.lines().next(),
        Some("== search: \"0123456\" (tried first: session id, commit, subject) ==")
    );
    assert!(
        r.stderr.contains("0123456: no session id starts with it"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.contains("▸ peat show 3f6c2a9e"), "{}", r.stdout);
    let r = peat(&env, &["0123456", "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["reading"]["kind"], "search");
    assert_eq!(v["reading"]["passed"][0]["shape"], "session");
    assert_eq!(v["result"]["hits"][0]["session"], SESSION_A);
    // A delegated reading is wrapped too: one JSON document.
    let r = peat(&env, &["3f6c", "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["reading"]["kind"], "session");
    assert_eq!(v["result"]["session"], SESSION_A);
    let r = peat(&env, &["2026-07-14", "--json"]).ok();
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["reading"]["kind"], "window");
    assert!(v["result"].is_object(), "{v}");
}

/// Capture a session `id` of one prompt (`work in ID`) and `said`, on `day`.
fn one_prompt_session(env: &Env, id: &str, said: Option<&str>, day: &str) {
    let mut c = Claude::new(id);
    c.user(&format!("work in {id}"));
    if let Some(text) = said {
        c.said(text);
    }
    let path = env.path(&format!("{id}.jsonl"));
    std::fs::write(&path, c.text().replace("2026-07-14", day)).unwrap();
    peat(env, &["capture", path.to_str().unwrap()]).ok();
}

#[test]
fn a_prefix_several_sessions_share_lists_them() {
    let env = Env::new();
    let one = "5e5e0001-0000-4000-8000-000000000001";
    let two = "5e5e0002-0000-4000-8000-000000000002";
    for id in [one, two] {
        one_prompt_session(&env, id, None, "2026-07-14");
    }
    let r = peat(&env, &["5e5e"]).ok();
    assert_eq!(
        r.stdout.lines().next(),
        Some("== sessions matching 5e5e (2) ==")
    );
    assert!(
        r.stdout.contains(&format!("▸ peat show {one}")),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(&format!("▸ peat show {two}")),
        "{}",
        r.stdout
    );
}

#[test]
fn sessions_sharing_their_first_ten_characters_get_handles_that_tell_them_apart() {
    let env = Env::new();
    let one = "5e5e0001-0a00-4000-8000-000000000001";
    let two = "5e5e0001-0b00-4000-8000-000000000002";
    let other = "9a9a0003-0000-4000-8000-000000000003";
    for id in [one, two, other] {
        one_prompt_session(&env, id, Some("done"), "2026-07-14");
    }
    let listing = peat(&env, &["sessions"]).ok().stdout;
    let events = peat(&env, &["events"]).ok().stdout;
    for (id, handle) in [
        (one, "5e5e0001-0a"),
        (two, "5e5e0001-0b"),
        (other, "9a9a0003"),
    ] {
        assert!(
            listing.contains(&format!("▸ peat show {handle}\n")),
            "{id} is listed as {handle}:\n{listing}"
        );
        assert!(
            events.contains(&format!(" {handle} ")),
            "{id} is listed as {handle}:\n{events}"
        );
        let header = peat(&env, &[handle, "1"]).ok().stdout;
        assert_eq!(
            header.lines().next(),
            Some(format!("== session {handle} event 1 (matched prefix {handle}) ==").as_str()),
            "{header}"
        );
        let r = peat(&env, &[handle, "--json"]).ok();
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(v["reading"]["kind"], "session", "{handle}");
        assert_eq!(v["result"]["session"], id, "{handle}");
        let shown = peat(&env, &["show", handle]).ok().stdout;
        assert!(
            shown.lines().next().unwrap().contains(handle)
                && shown.contains(&format!("work in {id}")),
            "peat show {handle}:\n{shown}"
        );
    }
}

#[test]
fn asof_names_a_session_by_the_handle_the_store_resolves_today() {
    let env = Env::new();
    let early = "5e5e0001-0a00-4000-8000-000000000001";
    let later = "5e5e0001-0b00-4000-8000-000000000002";
    for (id, day) in [(early, "2026-07-14"), (later, "2026-07-16")] {
        one_prompt_session(&env, id, Some("done with the parser"), day);
    }
    // On the 14th only the early session was recorded, and eight characters named it then;
    // they name both now.
    let r = peat(&env, &["asof", "2026-07-14", "parser"]).ok();
    assert!(
        r.stdout.contains("▸ peat show 5e5e0001-0a "),
        "{}",
        r.stdout
    );
    let v: serde_json::Value =
        serde_json::from_str(&peat(&env, &["5e5e0001-0a", "--json"]).ok().stdout).unwrap();
    assert_eq!(v["result"]["session"], early);
}

/// The repository of [`repo`], and a session that talked about its server but edited nothing:
/// a search for the server's path would find it.
fn talked_but_edited_nothing(env: &Env) {
    repo(env);
    let mut a = Claude::new(SESSION_A);
    a.user("why does src/server.ts print README.md:1 and 0123456 at start?");
    a.said("The Phoenix server is starting: src/server.ts logs README.md:1 and 0123456.");
    let t = env.path("a.jsonl");
    a.write(&t);
    peat(env, &["capture", t.to_str().unwrap()]).ok();
}

#[test]
fn a_file_here_no_session_touched_is_nothing_recorded_and_never_a_search() {
    require_git();
    let env = Env::new();
    talked_but_edited_nothing(&env);
    for (words, said) in [
        (
            "src/server.ts",
            "peat: no recorded session touched src/server.ts",
        ),
        ("src", "peat: no recorded session touched src"),
        ("README.md:1", "peat: no recorded session touched README.md"),
        (
            "gone.rs:3",
            "peat: no file gone.rs here, and no recorded session touched one by that name",
        ),
        (
            "0123456789abcdef0123456789abcdef01234567",
            "peat: 0123456789abcdef0123456789abcdef01234567 is not a commit of this repository nor one a recorded session made",
        ),
    ] {
        let r = peat(&env, &[words]);
        assert_eq!(r.code, 1, "peat {words}: {r:?}");
        assert!(r.stderr.contains(said), "peat {words}: {}", r.stderr);
        assert!(r.stderr.contains("peat recall"), "a hint: {}", r.stderr);
        assert!(
            !r.stdout.contains("search") && !r.stdout.contains("▸ peat show"),
            "peat {words} searched: {}",
            r.stdout
        );
        let r = peat(&env, &[words, "--json"]);
        assert_eq!(r.code, 1, "peat {words} --json: {r:?}");
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(v["reading"]["kind"], "missed", "{v}");
        assert_eq!(v["result"], serde_json::Value::Null, "{v}");
    }
}

#[test]
fn a_bare_word_still_searches_and_its_header_names_what_was_tried_first() {
    require_git();
    let env = Env::new();
    talked_but_edited_nothing(&env);
    let r = peat(&env, &["0123456"]).ok();
    assert_eq!(
        r.stdout.lines().next(),
        Some("== search: \"0123456\" (tried first: session id, commit, subject) ==")
    );
    assert!(r.stdout.contains("▸ peat show 3f6c2a9e"), "{}", r.stdout);
    let r = peat(&env, &["phoenix"]).ok();
    assert_eq!(
        r.stdout.lines().next(),
        Some("== search: \"phoenix\" (tried first: subject) ==")
    );
}
