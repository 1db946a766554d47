//! `peat COMMIT` against real jj repositories: by change id and by commit id, in a jj-only
//! repository and in one colocated with git.

use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

use crate::blame::{blamed, edited_at_old_path, origins_of_two_sessions, prompt, tool, transcript};
use crate::support::{Env, SESSION_A, SESSION_B, have_jj, peat};

/// Run jj in `dir` with a fixed identity and no user configuration.
fn jj(env: &Env, dir: &Path, args: &[&str]) -> String {
    let config = env.path("jj-config.toml");
    if !config.exists() {
        std::fs::write(
            &config,
            "[user]\nname = \"t\"\nemail = \"t@example.com\"\n[ui]\npaginate = \"never\"\n",
        )
        .unwrap();
    }
    let out = Command::new("jj")
        .args(args)
        .current_dir(dir)
        .env("JJ_CONFIG", &config)
        .env("HOME", env.path("home"))
        .env("JJ_TIMESTAMP", "2026-07-14T09:30:00+00:00")
        .output()
        .unwrap();
    assert!(out.status.success(), "jj {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

const WRITTEN: &str =
    "pub fn refill(rate: u32) -> u32 {\n    let burst = rate * 4;\n    burst.min(MAX_TOKENS)\n}\n";

/// A jj repository in the work folder (`init` are the extra `jj git init` flags) whose last
/// commit holds the lines session A wrote in another checkout; returns (change id, commit id).
fn repo_with_an_agents_commit(env: &Env, init: &[&str]) -> (String, String) {
    let work = env.path("work");
    let mut args = vec!["git", "init"];
    args.extend_from_slice(init);
    jj(env, &work, &args);
    let file = "/elsewhere/acme-api/src/limiter.rs";
    let mut a = vec![prompt(SESSION_A, 1, 1, "write the refill function")];
    a.extend(tool(
        SESSION_A,
        2,
        2,
        "Write",
        json!({"file_path": file, "content": WRITTEN}),
    ));
    let t = transcript(env, "a.jsonl", &a);
    env.run(&["capture", &t]).ok();
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::write(work.join("src/limiter.rs"), WRITTEN).unwrap();
    jj(env, &work, &["commit", "-m", "add the refill function"]);
    let change = jj(
        env,
        &work,
        &["log", "-r", "@-", "--no-graph", "-T", "change_id"],
    );
    let commit = jj(
        env,
        &work,
        &["log", "-r", "@-", "--no-graph", "-T", "commit_id"],
    );
    (change, commit)
}

fn route_of(env: &Env, rev: &str) -> (i32, Value) {
    let r = peat(env, &[rev, "--json"]);
    (
        r.code,
        serde_json::from_str(&r.stdout).unwrap_or(Value::Null),
    )
}

#[test]
fn a_jj_change_id_and_its_commit_id_name_the_session_that_wrote_it() {
    if !have_jj() {
        return;
    }
    let env = Env::new();
    let (change, commit) = repo_with_an_agents_commit(&env, &["--no-colocate"]);
    assert!(!env.path("work/.git").exists(), "a jj-only repository");
    for rev in [&change[..12], &commit[..12]] {
        let (code, v) = route_of(&env, rev);
        assert_eq!(code, 0, "{rev}: {v}");
        assert_eq!(v["reading"]["kind"], "commit", "{rev}: {v}");
        assert_eq!(v["reading"]["hash"], commit.as_str(), "{rev}: {v}");
        assert_eq!(v["result"]["route"], "content", "{rev}: {v}");
        assert_eq!(v["result"]["sessions"][0]["session"], SESSION_A);
    }
}

#[test]
fn a_colocated_jj_repository_answers_by_change_id_too() {
    if !have_jj() {
        return;
    }
    let env = Env::new();
    let (change, commit) = repo_with_an_agents_commit(&env, &["--colocate"]);
    assert!(env.path("work/.git").exists(), "colocated with git");
    let (code, v) = route_of(&env, &change[..12]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["reading"]["hash"], commit.as_str());
    assert_eq!(v["result"]["sessions"][0]["session"], SESSION_A);
}

#[test]
fn blame_follows_a_file_renamed_in_a_jj_repository() {
    if !have_jj() {
        return;
    }
    let env = Env::new();
    let work = edited_at_old_path(&env);
    jj(&env, &work, &["git", "init", "--no-colocate"]);
    jj(&env, &work, &["commit", "-m", "the limiter"]);
    let first = jj(
        &env,
        &work,
        &["log", "-r", "@-", "--no-graph", "-T", "commit_id"],
    );
    std::fs::rename(work.join("src/old.rs"), work.join("src/new.rs")).unwrap();
    jj(&env, &work, &["commit", "-m", "rename the limiter"]);
    assert_eq!(blamed(&env, "src/new.rs"), origins_of_two_sessions());
    // The line typed by hand was committed before the rename: jj's annotation gives it to
    // the renaming commit, and the line is followed to the commit that brought it.
    let doc: Value =
        serde_json::from_str(&env.run(&["blame", "src/new.rs", "--json"]).ok().stdout).unwrap();
    let by_hand = &doc["lines"][2];
    assert_eq!(by_hand["origin"], "committed_by_hand", "{doc}");
    assert_eq!(by_hand["commit"]["hash"], first.as_str(), "{doc}");
    // Dated as jj dated it (JJ_TIMESTAMP), in milliseconds.
    assert_eq!(by_hand["commit"]["ts_ms"], 1_784_021_400_000_i64, "{doc}");
}

#[test]
fn in_a_jj_repository_every_view_names_the_same_session_for_each_commit() {
    if !have_jj() {
        return;
    }
    let env = Env::new();
    let (_, lines) = repo_with_an_agents_commit(&env, &["--no-colocate"]);
    let work = env.path("work");
    let b = transcript(
        &env,
        "b.jsonl",
        &[prompt(SESSION_B, 1, 40, "tidy the readme")],
    );
    env.run(&["capture", &b]).ok();
    std::fs::write(work.join("README.md"), "# acme, tidied by hand\n").unwrap();
    let message = format!("tidy\n\nPeat-Session: {}", &SESSION_B[..8]);
    jj(&env, &work, &["commit", "-m", &message]);
    let trailer = jj(
        &env,
        &work,
        &["log", "-r", "@-", "--no-graph", "-T", "commit_id"],
    );
    std::fs::write(work.join("CHANGES.md"), "a person wrote this alone\n").unwrap();
    jj(&env, &work, &["commit", "-m", "changes"]);
    let want = [
        (lines.clone(), SESSION_A, "content"),
        (trailer.clone(), SESSION_B, "trailer"),
    ];
    for (hash, session, route) in &want {
        let (code, v) = route_of(&env, &hash[..12]);
        assert_eq!(code, 0, "{v}");
        assert_eq!(v["result"]["route"], *route, "{v}");
        assert_eq!(v["result"]["sessions"][0]["session"], *session, "{v}");
        for view in ["show", "log"] {
            let v: Value =
                serde_json::from_str(&peat(&env, &[view, &session[..8], "--json"]).ok().stdout)
                    .unwrap();
            let made: Vec<(&str, &str)> = v["made_commits"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| (c["hash"].as_str().unwrap(), c["route"].as_str().unwrap()))
                .collect();
            assert_eq!(made, vec![(hash.as_str(), *route)], "peat {view} {session}");
        }
    }
    let v: Value =
        serde_json::from_str(&peat(&env, &["zoom", "2026-07-14", "--json"]).ok().stdout).unwrap();
    assert_eq!(v["totals"]["commits"], 2, "{v}");
}
