//! `peat COMMIT` by every route, against real git repositories: a trailer, the recorded
//! commit command, the workspace and span, and content (amended, rebased, squashed).

use serde_json::{Value, json};

use crate::blame::{prompt, tool, transcript};
use crate::support::{Env, SESSION_A, SESSION_B, git, git_at, peat, require_git};

/// The lines session A writes into src/limiter.rs.
const WRITTEN: &str =
    "pub fn refill(rate: u32) -> u32 {\n    let burst = rate * 4;\n    burst.min(MAX_TOKENS)\n}\n";

/// A repository in the test's work folder with one commit, and session A (which ran in
/// another checkout, 09:01-09:02) writing src/limiter.rs.
fn setup(env: &Env, cwd: &str) -> String {
    setup_until(env, cwd, None)
}

/// As [`setup`]; with `last`, session A also asks something at that minute past 09:00.
fn setup_until(env: &Env, cwd: &str, last: Option<u32>) -> String {
    let work = env.path("work");
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::write(work.join("README.md"), "# acme\n").unwrap();
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "start"]);
    let file = format!("{cwd}/src/limiter.rs");
    let mut a = vec![prompt(SESSION_A, 1, 1, "write the refill function")];
    a.extend(tool(
        SESSION_A,
        2,
        2,
        "Write",
        json!({"file_path": file, "content": WRITTEN}),
    ));
    if let Some(minute) = last {
        a.push(prompt(SESSION_A, 4, minute, "anything else?"));
    }
    let lines: Vec<String> = a
        .into_iter()
        .map(|l| l.replace("/home/dev/acme-api", cwd))
        .collect();
    let t = transcript(env, "a.jsonl", &lines);
    env.run(&["capture", &t]).ok();
    std::fs::write(work.join("src/limiter.rs"), WRITTEN).unwrap();
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "add the refill function"]);
    git(&work, &["rev-parse", "HEAD"])
}

fn json_of(env: &Env, rev: &str) -> (i32, Value) {
    let r = peat(env, &[rev, "--json"]);
    (
        r.code,
        serde_json::from_str(&r.stdout).unwrap_or(Value::Null),
    )
}

#[test]
fn a_commit_with_an_agents_lines_resolves_by_content_with_the_share_explained() {
    require_git();
    let env = Env::new();
    let head = setup(&env, "/elsewhere/acme-api");
    let (code, v) = json_of(&env, &head[..8]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["result"]["route"], "content");
    assert_eq!(v["result"]["sessions"][0]["session"], SESSION_A);
    assert_eq!(v["result"]["sessions"][0]["share"], 1.0);
    let text = peat(&env, &[&head[..8]]).ok().stdout;
    assert!(
        text.contains("by the recorded edits that wrote its lines"),
        "{text}"
    );
    assert!(text.contains("wrote 100% of its lines"), "{text}");
    assert!(text.contains("\"write the refill function\""), "{text}");
}

#[test]
fn amended_rebased_and_squashed_commits_still_resolve_by_content() {
    require_git();
    let env = Env::new();
    setup(&env, "/elsewhere/acme-api");
    let work = env.path("work");
    git(
        &work,
        &["commit", "-q", "--amend", "-m", "refill, reworded"],
    );
    let amended = git(&work, &["rev-parse", "HEAD"]);
    assert_eq!(json_of(&env, &amended[..8]).1["result"]["route"], "content");
    // Squash it with a person's follow-up: the session still wrote most of the lines.
    std::fs::write(
        work.join("README.md"),
        "# acme\n\nThe refill function lives in src.\n",
    )
    .unwrap();
    git(&work, &["commit", "-q", "-am", "docs"]);
    git(&work, &["reset", "-q", "--soft", "HEAD~2"]);
    git(&work, &["commit", "-q", "-m", "squashed"]);
    let squashed = git(&work, &["rev-parse", "HEAD"]);
    let (code, v) = json_of(&env, &squashed[..8]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["result"]["route"], "content");
    let share = v["result"]["sessions"][0]["share"].as_f64().unwrap();
    assert!((0.7..1.0).contains(&share), "3 of 4 lines: {share}");
}

#[test]
fn a_trailer_names_the_session_before_any_other_route() {
    require_git();
    let env = Env::new();
    setup(&env, "/elsewhere/acme-api");
    let work = env.path("work");
    // Session B exists in the record; the trailer names it by prefix.
    let b = vec![prompt(SESSION_B, 1, 40, "tidy the readme")];
    let t = transcript(&env, "b.jsonl", &b);
    env.run(&["capture", &t]).ok();
    std::fs::write(work.join("README.md"), "# acme, tidied\n").unwrap();
    git(
        &work,
        &[
            "commit",
            "-q",
            "-am",
            &format!("tidy\n\nPeat-Session: {}", &SESSION_B[..8]),
        ],
    );
    let head = git(&work, &["rev-parse", "HEAD"]);
    let (code, v) = json_of(&env, &head[..8]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["result"]["route"], "trailer");
    assert_eq!(v["result"]["sessions"][0]["session"], SESSION_B);
}

#[test]
fn a_session_in_this_workspace_when_the_commit_was_made_explains_it() {
    require_git();
    let env = Env::new();
    let root = std::fs::canonicalize(env.path("work"))
        .unwrap_or_else(|_| env.path("work"))
        .to_string_lossy()
        .into_owned();
    std::fs::create_dir_all(&root).unwrap();
    // Session A ran in this very workspace, from 09:01 to 09:31 (the commit is at 09:30).
    setup_until(&env, &root, Some(31));
    let work = env.path("work");
    std::fs::write(work.join("README.md"), "# acme, by hand meanwhile\n").unwrap();
    git(&work, &["commit", "-q", "-am", "readme by hand"]);
    let head = git(&work, &["rev-parse", "HEAD"]);
    let (code, v) = json_of(&env, &head[..8]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["result"]["route"], "workspace");
    assert_eq!(v["result"]["sessions"][0]["session"], SESSION_A);
}

#[test]
fn a_commit_no_route_explains_says_so_with_the_nearest_candidates() {
    require_git();
    let env = Env::new();
    setup(&env, "/elsewhere/acme-api");
    let work = env.path("work");
    // One line of the session's among three of a person's: a candidate, not an answer.
    std::fs::write(
        work.join("src/limiter.rs"),
        format!("{WRITTEN}    let burst = rate * 4;\nfn person_wrote_this_one() {{}}\nfn and_this_one_as_well() {{}}\nconst ALSO_BY_HAND: u8 = 1;\n"),
    )
    .unwrap();
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "mostly by hand"]);
    let head = git(&work, &["rev-parse", "HEAD"]);
    let r = peat(&env, &[&head[..8]]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stdout.contains("was not made by a recorded session"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("nearest candidates"), "{}", r.stdout);
    assert!(r.stdout.contains("wrote 25% of its lines"), "{}", r.stdout);
}

#[test]
fn peat_trailer_prints_the_trailer_that_names_this_session() {
    let env = Env::new();
    let desk = env.path("work/.peat");
    std::fs::create_dir_all(&desk).unwrap();
    std::fs::write(desk.join("current-session"), format!("{SESSION_B}\n")).unwrap();
    let r = env.run(&["trailer"]).ok();
    assert_eq!(r.stdout, format!("Peat-Session: {SESSION_B}\n"));
    std::fs::remove_file(desk.join("current-session")).unwrap();
    let r = env.run(&["trailer"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("current-session"), "{}", r.stderr);
}

/// The sessions each view names for each commit, as (short hash, session, route).
type Named = Vec<(String, String, String)>;

fn named(list: &Value, session: &str) -> Named {
    list.as_array()
        .unwrap_or_else(|| panic!("no commit list: {list}"))
        .iter()
        .map(|c| {
            (
                c["hash"].as_str().unwrap()[..8].to_string(),
                session.to_string(),
                c["route"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn every_view_names_the_same_session_for_each_commit() {
    use crate::log::at;
    require_git();
    let env = Env::new();
    let work = env.path("work");
    let root = std::fs::canonicalize(&work)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let commit_at = |when: &str, file: &str, text: &str, message: &str| {
        std::fs::write(work.join(file), text).unwrap();
        git_at(&work, when, &["add", "."]);
        git_at(&work, when, &["commit", "-q", "-m", message]);
        git(&work, &["rev-parse", "HEAD"])
    };
    std::fs::create_dir_all(work.join("src")).unwrap();
    git(&work, &["init", "-q", "-b", "main"]);
    commit_at("2026-07-14T08:00:00Z", "README.md", "# acme\n", "start");
    // By hand in A's workspace while A ran (09:01-09:10): the workspace route.
    let during = commit_at(
        "2026-07-14T09:05:00Z",
        "NOTES.md",
        "notes the person typed meanwhile\n",
        "notes",
    );
    // B's own commit command printed it: the recorded route.
    let recorded = commit_at(
        "2026-07-14T10:03:00Z",
        "src/config.rs",
        "pub const CONFIG_VERSION: u32 = 2;\n",
        "bump the config",
    );
    // A's lines, committed by hand long after A ended: the content route.
    let lines = commit_at(
        "2026-07-14T12:00:00Z",
        "src/limiter.rs",
        WRITTEN,
        "add the refill function",
    );
    // A trailer naming B, on lines nobody recorded.
    let trailer = commit_at(
        "2026-07-14T12:05:00Z",
        "README.md",
        "# acme, tidied by hand\n",
        &format!("tidy\n\nPeat-Session: {}", &SESSION_B[..8]),
    );
    // Nobody's.
    commit_at(
        "2026-07-14T13:00:00Z",
        "CHANGES.md",
        "a person wrote this alone\n",
        "changes",
    );

    let in_work = |l: String| l.replace("/home/dev/acme-api", &root);
    let a: Vec<String> = [
        vec![at(
            SESSION_A,
            1,
            "09:01",
            "user",
            json!({"message": {"role": "user", "content": "write the refill function"}}),
        )],
        tool(
            SESSION_A,
            2,
            2,
            "Write",
            json!({"file_path": format!("{root}/src/limiter.rs"), "content": WRITTEN}),
        )
        .to_vec(),
        vec![at(
            SESSION_A,
            4,
            "09:10",
            "user",
            json!({"message": {"role": "user", "content": "anything else?"}}),
        )],
    ]
    .concat()
    .into_iter()
    .map(in_work)
    .collect();
    // B ran in another checkout, 10:01-10:05.
    let elsewhere = |l: String| l.replace("/home/dev/acme-api", "/elsewhere/acme-api");
    let b: Vec<String> = [
        at(
            SESSION_B,
            1,
            "10:01",
            "user",
            json!({"message": {"role": "user", "content": "bump the config version"}}),
        ),
        at(
            SESSION_B,
            2,
            "10:03",
            "assistant",
            json!({"message": {"id": "msg_b2", "role": "assistant", "type": "message",
                "content": [{"type": "tool_use", "id": "toolu_commit", "name": "Bash",
                    "input": {"command": "git commit -am 'bump the config'"}}]}}),
        ),
        at(
            SESSION_B,
            3,
            "10:03",
            "user",
            json!({"message": {"role": "user", "content": [{"tool_use_id": "toolu_commit", "type": "tool_result",
                "content": format!("[main {}] bump the config\n 1 file changed, 1 insertion(+)", &recorded[..7])}]}}),
        ),
        at(
            SESSION_B,
            4,
            "10:05",
            "user",
            json!({"message": {"role": "user", "content": "thanks"}}),
        ),
    ]
    .into_iter()
    .map(elsewhere)
    .collect();
    let ta = transcript(&env, "a.jsonl", &a);
    let tb = transcript(&env, "b.jsonl", &b);
    env.run(&["capture", &ta, &tb]).ok();

    let short = |h: &str| h[..8].to_string();
    let mut want: Named = vec![
        (short(&during), SESSION_A.into(), "workspace".into()),
        (short(&lines), SESSION_A.into(), "content".into()),
        (short(&recorded), SESSION_B.into(), "recorded".into()),
        (short(&trailer), SESSION_B.into(), "trailer".into()),
    ];
    want.sort();
    let sorted = |mut n: Named| {
        n.sort();
        n
    };

    // `peat COMMIT`, for each commit.
    let by_commit: Named = [&during, &lines, &recorded, &trailer]
        .iter()
        .map(|h| {
            let (code, v) = json_of(&env, &h[..8]);
            assert_eq!(code, 0, "{v}");
            let sessions = v["result"]["sessions"].as_array().unwrap();
            assert_eq!(sessions.len(), 1, "{v}");
            (
                short(h),
                sessions[0]["session"].as_str().unwrap().to_string(),
                v["result"]["route"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(sorted(by_commit), want, "peat COMMIT");

    // `peat show` and `peat log`, session by session.
    for view in ["show", "log"] {
        let mut seen = Named::new();
        for s in [SESSION_A, SESSION_B] {
            let v: Value =
                serde_json::from_str(&peat(&env, &[view, &s[..8], "--json"]).ok().stdout).unwrap();
            seen.extend(named(&v["made_commits"], s));
        }
        assert_eq!(sorted(seen), want, "peat {view}");
    }
    let text = peat(&env, &["show", &SESSION_A[..8]]).ok().stdout;
    assert!(text.contains(" · 2 commits"), "{text}");
    assert!(
        text.contains(
            "[made in it, by the recorded edits that wrote its lines, 100% of its lines]"
        ),
        "{text}"
    );
    let text = peat(&env, &["log", &SESSION_A[..8]]).ok().stdout;
    assert!(text.contains(&short(&lines)), "{text}");

    // `peat sessions --json`.
    let v: Value = serde_json::from_str(&peat(&env, &["sessions", "--json"]).ok().stdout).unwrap();
    let mut seen = Named::new();
    for s in v.as_array().unwrap() {
        seen.extend(named(&s["made_commits"], s["session"].as_str().unwrap()));
    }
    assert_eq!(sorted(seen), want, "peat sessions");

    // `peat zoom` of the day: four commits tied to sessions, two each.
    let v: Value =
        serde_json::from_str(&peat(&env, &["zoom", "2026-07-14", "--json"]).ok().stdout).unwrap();
    assert_eq!(v["totals"]["commits"], 4, "{v}");
    let per: Vec<(String, u64)> = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["session"].as_str().unwrap().to_string(),
                s["commits"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        per,
        vec![(SESSION_A.to_string(), 2), (SESSION_B.to_string(), 2)],
        "{v}"
    );

    // The brief: the day counts the same four.
    let v: Value = serde_json::from_str(&peat(&env, &["--json"]).ok().stdout).unwrap();
    let day = v["days"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["date"] == "2026-07-14")
        .unwrap_or_else(|| panic!("no such day in the brief: {v}"));
    assert_eq!(day["commits"], 4, "{v}");
}

/// A repository in the work folder, and a way to commit a file to it at a moment: returns
/// the commit's full hash.
fn committer(work: &std::path::Path) -> impl Fn(&str, &str, &str, &str) -> String + '_ {
    std::fs::create_dir_all(work.join("src")).unwrap();
    git(work, &["init", "-q", "-b", "main"]);
    move |when: &str, file: &str, text: &str, message: &str| {
        std::fs::write(work.join(file), text).unwrap();
        git_at(work, when, &["add", "."]);
        git_at(work, when, &["commit", "-q", "-m", message]);
        git(work, &["rev-parse", "HEAD"])
    }
}

/// Session B's lines on the 15th, in another checkout (10:01-10:05): its commit command
/// printed `recorded`.
fn b_commits_on_the_15th(recorded: &str) -> Vec<String> {
    use crate::log::at;
    let commit = json!({"message": {"id": "msg_b2", "role": "assistant", "type": "message",
        "content": [{"type": "tool_use", "id": "toolu_commit", "name": "Bash",
            "input": {"command": "git commit -am 'bump the config'"}}]}});
    let printed = format!("[main {}] bump the config\n 1 file changed", &recorded[..7]);
    let result = json!({"message": {"role": "user", "content": [{"tool_use_id": "toolu_commit",
        "type": "tool_result", "content": printed}]}});
    let ask = |text: &str| json!({"message": {"role": "user", "content": text}});
    [
        at(
            SESSION_B,
            1,
            "10:01",
            "user",
            ask("bump the config version"),
        ),
        at(SESSION_B, 2, "10:03", "assistant", commit),
        at(SESSION_B, 3, "10:03", "user", result),
        at(SESSION_B, 4, "10:05", "user", ask("thanks")),
    ]
    .into_iter()
    .map(|l| {
        l.replace("2026-07-14T", "2026-07-15T")
            .replace("/home/dev/acme-api", "/elsewhere/acme-api")
    })
    .collect()
}

#[test]
fn a_days_zoom_and_brief_count_a_commit_of_lines_a_session_wrote_days_before() {
    require_git();
    let env = Env::new();
    let work = env.path("work");
    let commit_at = committer(&work);
    commit_at("2026-07-14T08:00:00Z", "README.md", "# acme\n", "start");
    let recorded = commit_at(
        "2026-07-15T10:03:00Z",
        "src/config.rs",
        "pub const CONFIG_VERSION: u32 = 2;\n",
        "bump the config",
    );
    // A's lines (written on the 14th), committed by hand on the 15th.
    let lines = commit_at(
        "2026-07-15T11:00:00Z",
        "src/limiter.rs",
        WRITTEN,
        "add the refill function",
    );
    let mut a = vec![prompt(SESSION_A, 1, 1, "write the refill function")];
    a.extend(tool(
        SESSION_A,
        2,
        2,
        "Write",
        json!({"file_path": "/elsewhere/acme-api/src/limiter.rs", "content": WRITTEN}),
    ));
    let a: Vec<String> = a
        .into_iter()
        .map(|l| l.replace("/home/dev/acme-api", "/elsewhere/acme-api"))
        .collect();
    let ta = transcript(&env, "a.jsonl", &a);
    let tb = transcript(&env, "b.jsonl", &b_commits_on_the_15th(&recorded));
    env.run(&["capture", &ta, &tb]).ok();

    let (code, v) = json_of(&env, &lines[..8]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["result"]["route"], "content", "{v}");
    assert_eq!(v["result"]["sessions"][0]["session"], SESSION_A, "{v}");
    let v: Value =
        serde_json::from_str(&peat(&env, &["zoom", "2026-07-15", "--json"]).ok().stdout).unwrap();
    assert_eq!(v["totals"]["commits"], 2, "{v}");
    let v: Value = serde_json::from_str(&peat(&env, &["--json"]).ok().stdout).unwrap();
    let day = v["days"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["date"] == "2026-07-15")
        .unwrap_or_else(|| panic!("no such day in the brief: {v}"));
    assert_eq!(day["commits"], 2, "{v}");
}

#[test]
fn a_commit_made_after_a_read_is_named_by_the_next_read() {
    require_git();
    let env = Env::new();
    let work = env.path("work");
    let commit_at = committer(&work);
    let recorded = commit_at(
        "2026-07-15T10:03:00Z",
        "src/config.rs",
        "pub const CONFIG_VERSION: u32 = 2;\n",
        "bump the config",
    );
    let tb = transcript(&env, "b.jsonl", &b_commits_on_the_15th(&recorded));
    env.run(&["capture", &tb]).ok();
    let made = |env: &Env| -> Vec<String> {
        let v: Value =
            serde_json::from_str(&peat(env, &["show", &SESSION_B[..8], "--json"]).ok().stdout)
                .unwrap();
        v["made_commits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["route"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(made(&env), vec!["recorded"]);
    assert_eq!(
        made(&env),
        vec!["recorded"],
        "asked again of the same views"
    );
    // A commit naming B in its trailer, made after the reads: the views are as they were,
    // the repository is not.
    commit_at(
        "2026-07-15T12:00:00Z",
        "README.md",
        "# acme\n",
        &format!("readme\n\nPeat-Session: {}", &SESSION_B[..8]),
    );
    assert_eq!(made(&env), vec!["recorded", "trailer"]);
}

#[test]
fn a_trailer_names_its_session_even_on_lines_that_session_wrote() {
    use crate::log::at;
    require_git();
    let env = Env::new();
    let work = env.path("work");
    let root = std::fs::canonicalize(&work)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    std::fs::create_dir_all(work.join("src")).unwrap();
    git(&work, &["init", "-q", "-b", "main"]);
    std::fs::write(work.join("README.md"), "# acme\n").unwrap();
    git_at(&work, "2026-07-14T08:00:00Z", &["add", "."]);
    git_at(
        &work,
        "2026-07-14T08:00:00Z",
        &["commit", "-q", "-m", "start"],
    );
    // A writes the limiter at 09:02; the person commits it at noon with A's trailer. Both the
    // trailer and the content name A: the surer route, the trailer, is the one said.
    let a: Vec<String> = [
        vec![at(
            SESSION_A,
            1,
            "09:01",
            "user",
            json!({"message": {"role": "user", "content": "write the refill function"}}),
        )],
        tool(
            SESSION_A,
            2,
            2,
            "Write",
            json!({"file_path": format!("{root}/src/limiter.rs"), "content": WRITTEN}),
        )
        .to_vec(),
    ]
    .concat()
    .into_iter()
    .map(|l| l.replace("/home/dev/acme-api", &root))
    .collect();
    std::fs::write(work.join("src/limiter.rs"), WRITTEN).unwrap();
    git_at(&work, "2026-07-14T12:00:00Z", &["add", "."]);
    let message = format!(
        "add the refill function\n\nPeat-Session: {}",
        &SESSION_A[..8]
    );
    git_at(
        &work,
        "2026-07-14T12:00:00Z",
        &["commit", "-q", "-m", &message],
    );
    let t = transcript(&env, "a.jsonl", &a);
    env.run(&["capture", &t]).ok();
    for view in ["show", "log"] {
        let v: Value =
            serde_json::from_str(&peat(&env, &[view, &SESSION_A[..8], "--json"]).ok().stdout)
                .unwrap();
        let routes: Vec<&str> = v["made_commits"]
            .as_array()
            .unwrap_or_else(|| panic!("peat {view}: {v}"))
            .iter()
            .map(|c| c["route"].as_str().unwrap())
            .collect();
        assert_eq!(routes, vec!["trailer"], "peat {view}: {v}");
    }
}

#[test]
fn a_file_of_the_same_name_in_another_folder_ties_no_commit_in_any_view() {
    use crate::log::at;
    require_git();
    let env = Env::new();
    let work = env.path("work");
    let root = std::fs::canonicalize(&work)
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let commit = committer(&work);
    commit("2026-07-14T08:00:00Z", "README.md", "# acme\n", "start");
    // A writes docs/notes.md in this workspace, 09:01-09:02.
    let write = json!({"message": {"id": "msg_a", "role": "assistant", "type": "message",
        "content": [{"type": "tool_use", "id": "toolu_w", "name": "Write",
            "input": {"file_path": format!("{root}/docs/notes.md"), "content": WRITTEN}}]}});
    let a = vec![
        at(
            SESSION_A,
            1,
            "09:01",
            "user",
            json!({"message": {"role": "user", "content": "write the notes"}}),
        )
        .replace("/home/dev/acme-api", &root),
        at(SESSION_A, 2, "09:02", "assistant", write).replace("/home/dev/acme-api", &root),
    ];
    let t = transcript(&env, "a.jsonl", &a);
    env.run(&["capture", &t]).ok();
    // Hours later a person commits a top-level notes.md holding the same lines: another
    // file, which A never wrote.
    let hash = commit("2026-07-14T12:00:00Z", "notes.md", WRITTEN, "top notes");
    let (_, v) = json_of(&env, &hash[..8]);
    let show: Value =
        serde_json::from_str(&peat(&env, &["show", &SESSION_A[..8], "--json"]).ok().stdout)
            .unwrap();
    assert_eq!(v["result"]["sessions"], json!([]), "{v}");
    assert_eq!(show["made_commits"], json!([]), "{show}");
}
