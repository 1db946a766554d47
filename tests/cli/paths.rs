//! A path looked up by every read (`peat PATH`, `peat file`, `peat blame`) finds its history
//! wherever it was recorded: relative to each session's root, directories included, and
//! under the names it had before a rename.

use serde_json::Value;

use crate::blame::{blamed, committed_to_git, origins_of_two_sessions};
use crate::support::{Claude, Env, NOW, Run, SESSION_A, git, peat, repo, require_git};

/// Session A, working in another checkout (`/home/dev/acme-api`, not on this disk), edits two
/// files under `lib/spotter_web/live` four times.
fn edits_under_another_root(env: &Env) {
    let mut a = Claude::new(SESSION_A);
    a.user("split the live views into a page and a nav");
    for (n, file) in ["page.ex", "nav.ex", "page.ex", "nav.ex"]
        .iter()
        .enumerate()
    {
        a.edit(
            &format!("toolu_live_{n}"),
            &format!("/home/dev/acme-api/lib/spotter_web/live/{file}"),
            &format!("step {n}"),
            &format!("step {}", n + 1),
        );
    }
    a.said("The page and the nav are separate live views now.");
    let t = env.path("a.jsonl");
    a.write(&t);
    peat(env, &["capture", t.to_str().unwrap()]).ok();
}

/// `peat ARGS` at [`NOW`], run in `dir`.
fn peat_in(env: &Env, dir: &std::path::Path, args: &[&str]) -> Run {
    std::fs::create_dir_all(dir).unwrap();
    let out = env
        .cmd()
        .env("PEAT_NOW", NOW)
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    Run::of(out)
}

#[test]
fn a_directory_edited_under_another_checkouts_root_is_found_by_its_relative_path() {
    require_git();
    let env = Env::new();
    repo(&env);
    edits_under_another_root(&env);
    // In a checkout that has no such directory, and in a folder outside any repository.
    for dir in [env.path("work"), env.path("elsewhere")] {
        let r = peat_in(&env, &dir, &["file", "lib/spotter_web/live", "--json"]).ok();
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        let touches = v["touches"].as_array().unwrap();
        assert_eq!(touches.len(), 4, "in {}: {}", dir.display(), r.stdout);
        assert_eq!(
            touches[0]["path"],
            "/home/dev/acme-api/lib/spotter_web/live/nav.ex"
        );
        let r = peat_in(&env, &dir, &["lib/spotter_web"]).ok();
        assert_eq!(
            r.stdout.lines().next(),
            Some("== file lib/spotter_web =="),
            "in {}: {}",
            dir.display(),
            r.stdout
        );
        let edits = r.stdout.matches("▸ peat show 3f6c2a9e ").count();
        assert_eq!(edits, 4, "{}", r.stdout);
    }
}

/// `peat NEW`, `peat file NEW` and `peat blame NEW` all name the edits made under `src/old.rs`.
#[track_caller]
fn every_read_follows_the_rename(env: &Env) {
    let r = env.run(&["src/new.rs"]).ok();
    assert_eq!(
        r.stdout.lines().next(),
        Some("== file src/new.rs =="),
        "{r:?}"
    );
    for prompt in ["add a token bucket limiter", "refill five tokens a second"] {
        assert!(r.stdout.contains(prompt), "{}", r.stdout);
    }
    let r = env.run(&["file", "src/new.rs", "--json"]).ok();
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let paths: Vec<&str> = v["touches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 2, "{}", r.stdout);
    assert!(
        paths.iter().all(|p| p.ends_with("/src/old.rs")),
        "{paths:?}"
    );
    assert_eq!(blamed(env, "src/new.rs"), origins_of_two_sessions());
}

#[test]
fn after_git_mv_every_read_shows_the_edits_made_under_the_old_name() {
    require_git();
    let env = Env::new();
    let work = committed_to_git(&env);
    git(&work, &["mv", "src/old.rs", "src/new.rs"]);
    // Staged only: the index already knows the rename.
    every_read_follows_the_rename(&env);
    git(&work, &["commit", "-q", "-m", "rename the limiter"]);
    every_read_follows_the_rename(&env);
}
