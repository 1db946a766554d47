//! `peat export` through the real binary: a captured session as Markdown, as JSON, cut by
//! seq, redacted, and as one HTML page that a real headless browser (Chromium) renders with
//! every link landing in the page and nothing fetched or run from elsewhere.

use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

use crate::blame::{prompt, tool, transcript};
use crate::support::{Env, SESSION_A};

/// The full-session fixture: four prompts, prose, edits, a failed test run, a commit.
const FULL: &str = "4a7f1c2e";

fn captured() -> Env {
    let env = Env::new();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude/full-session.jsonl");
    env.run(&["capture", fixture.to_str().unwrap()]).ok();
    env
}

#[test]
fn markdown_has_the_prompts_the_prose_the_calls_folded_the_diffs_and_the_commits() {
    let env = captured();
    let md = env.run(&["export", FULL]).ok().stdout;
    assert!(md.starts_with("# Session 4a7f1c2e-"), "{md}");
    assert!(
        md.contains("> Add a token-bucket rate limiter to src/server.ts"),
        "{md}"
    );
    assert!(md.contains("I'll add the limiter as middleware."), "{md}");
    assert!(
        md.contains(
            "<details><summary>Edit: /home/dev/acme-api/src/server.ts · claude-sonnet-4-6</summary>"
        ),
        "{md}"
    );
    assert!(
        md.contains("```diff\n--- /home/dev/acme-api/src/server.ts"),
        "{md}"
    );
    assert!(
        md.contains("+app.use(rateLimit({ capacity: 20, refillPerSec: 5 }));"),
        "{md}"
    );
    assert!(
        md.contains("Bash: npm test -- --runInBand (failed)"),
        "{md}"
    );
    assert!(md.contains("**Closing message**"), "{md}");
    assert!(md.contains("## Commits made in this session\n\n- `7c3e9a1` Add token-bucket rate limiter (recorded)"), "{md}");
    // Every fold is closed.
    assert_eq!(
        md.matches("<details>").count(),
        md.matches("</details>").count()
    );
}

#[test]
fn json_is_the_same_transcript_as_data_and_a_seq_range_cuts_a_part() {
    let env = captured();
    let whole: Value =
        serde_json::from_str(&env.run(&["export", FULL, "--json"]).ok().stdout).unwrap();
    let items = whole["items"].as_array().unwrap();
    let kinds: std::collections::BTreeSet<&str> =
        items.iter().map(|i| i["kind"].as_str().unwrap()).collect();
    for kind in ["prompt", "said", "call", "closing", "commit"] {
        assert!(kinds.contains(kind), "{kind} in {kinds:?}");
    }
    let edit = items
        .iter()
        .flat_map(|i| i["edits"].as_array().into_iter().flatten())
        .find(|e| e["path"] == "/home/dev/acme-api/src/server.ts")
        .unwrap();
    assert!(
        edit["diff"]
            .as_str()
            .unwrap()
            .contains("+app.use(rateLimit"),
        "{edit}"
    );
    assert_eq!(whole["commits"][0]["hash"], "7c3e9a1");

    // The second prompt's turn only.
    let seqs: Vec<u64> = items
        .iter()
        .filter(|i| i["kind"] == "prompt")
        .map(|i| i["seq"].as_u64().unwrap())
        .collect();
    let (from, to) = (seqs[1], seqs[2] - 1);
    let part: Value = serde_json::from_str(
        &env.run(&[
            "export",
            FULL,
            "--json",
            "--since",
            &from.to_string(),
            "--until",
            &to.to_string(),
        ])
        .ok()
        .stdout,
    )
    .unwrap();
    let cut = part["items"].as_array().unwrap();
    assert!(!cut.is_empty());
    assert!(
        cut.iter()
            .all(|i| (from..=to).contains(&i["seq"].as_u64().unwrap())),
        "{part}"
    );
    assert_eq!(cut[0]["text"], "Also expose the bucket state at /metrics.");
    let md = env
        .run(&[
            "export",
            FULL,
            "--since",
            &from.to_string(),
            "--until",
            &to.to_string(),
        ])
        .ok()
        .stdout;
    assert!(md.contains(&format!("Seqs {from} to {to} only.")), "{md}");
    assert!(!md.contains("Add a token-bucket rate limiter"), "{md}");
}

#[test]
fn an_export_holds_what_the_store_holds_redacted() {
    let env = Env::new();
    let key = "AKIAZ7Q2XWJ4VHMK3PLN";
    let mut lines = vec![prompt(
        SESSION_A,
        1,
        1,
        &format!("deploy with {key} please"),
    )];
    lines.extend(tool(
        SESSION_A,
        2,
        2,
        "Bash",
        json!({"command": format!("AWS_KEY={key} ./deploy")}),
    ));
    let t = transcript(&env, "a.jsonl", &lines);
    env.run(&["capture", &t]).ok();
    for form in [&[][..], &["--json"][..], &["--html"][..]] {
        let mut args = vec!["export", &SESSION_A[..8]];
        args.extend_from_slice(form);
        let out = env.run(&args).ok().stdout;
        assert!(out.contains("deploy with"), "{out}");
        assert!(!out.contains(key), "{form:?}: {out}");
        assert!(out.contains("REDACTED"), "{form:?}: {out}");
    }
}

#[test]
fn bad_requests_say_what_was_wrong() {
    let env = captured();
    let r = env.run(&["export", FULL, "--html", "--json"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--html and --json"), "{}", r.stderr);
    let r = env.run(&["export", FULL, "--since", "9", "--until", "3"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--since 9 comes after --until 3"),
        "{}",
        r.stderr
    );
    let r = env.run(&["export", "ffffffff"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.starts_with("peat: "), "{}", r.stderr);
}

/// The Chromium Debian packages, or None (the test then skips, or fails under CI).
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"]
        .into_iter()
        .find(|c| peat::testing::on_path(c))
}

#[test]
fn the_html_page_renders_in_a_real_browser_with_every_link_in_the_page_and_no_script() {
    let Some(browser) = chromium() else {
        peat::testing::skip(
            "Chromium is not installed (Debian: apt-get install chromium)",
            false,
        );
        return;
    };
    let env = captured();
    let page = env.path("session.html");
    env.run(&["export", FULL, "--html", "-o", page.to_str().unwrap()])
        .ok();
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: no script at all, nothing loaded from elsewhere, and a policy that
    // forbids both should a transcript's text ever try.
    assert!(!html.to_lowercase().contains("<script"), "{html}");
    assert!(!html.contains("src="), "{html}");
    assert!(html.contains("default-src 'none'"), "{html}");

    let profile = env.path("chromium-profile");
    let dom = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .env("HOME", env.path("home"))
        .output()
        .unwrap();
    assert!(dom.status.success(), "{dom:?}");
    let dom = String::from_utf8_lossy(&dom.stdout).into_owned();
    // The browser parsed it into the document we meant: the prompts, the folds, the diff.
    assert!(
        dom.contains("Also expose the bucket state at /metrics."),
        "{dom}"
    );
    assert!(dom.contains("<details class=\"failed\">"), "{dom}");
    assert!(
        dom.contains("<span class=\"add\">+app.use(rateLimit"),
        "{dom}"
    );
    // Every link is to a place in the page, and that place exists.
    let hrefs: Vec<&str> = dom
        .split("href=\"")
        .skip(1)
        .map(|rest| &rest[..rest.find('"').unwrap()])
        .collect();
    assert!(hrefs.len() >= 4, "{hrefs:?}");
    for href in hrefs {
        let id = href
            .strip_prefix('#')
            .unwrap_or_else(|| panic!("a link out of the page: {href}"));
        assert!(dom.contains(&format!("id=\"{id}\"")), "no {id} for {href}");
    }
}
