//! Secrets: redacted before they are stored, a private store, and `peat redact`.
//!
//! The proof is a scan of every byte under the store for each secret. The scan is shown to
//! be able to fail: with redaction switched off (`PEAT_REDACT=off`, the benchmark switch)
//! the same capture leaves the secrets on disk, and the scan finds them.

use std::path::{Path, PathBuf};

use crate::support::{Claude, Env, SESSION_A, files_holding};

/// Secrets of three formats, as a new user would paste them.
const AWS: &str = "AKIAZ7Q2XWJ4VHMK3PLN";
const GITHUB: &str = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
const ANTHROPIC: &str = "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0Ed-Cb9Az8Yx7Wv6Ut5Sr4Qp3On2Ml1Kj0Ih9Gf8Ed7Cb6Az5Yx4Wv3Ut2Sr1Qp0-AbCdEfGh";
/// Not a built-in format: only a user rule redacts it.
const LICENSE: &str = "ACME-LIC-7F3A9C2E5B1D8F4A6C0E2B9D";

/// A session that leaks each secret where transcripts leak them: a prompt, a command and
/// its output, an edit that writes a `.env` file, and the agent's prose.
fn leaky_session() -> Claude {
    let mut c = Claude::new(SESSION_A);
    c.user(&format!(
        "deploy with AWS key {AWS} and push with {GITHUB}; licence {LICENSE}"
    ));
    c.bash(
        "toolu_1",
        &format!("curl -H 'x-api-key: {ANTHROPIC}' https://api.example.com/v1/messages"),
        &format!("ANTHROPIC_API_KEY={ANTHROPIC}\nGITHUB_TOKEN={GITHUB}"),
        false,
    );
    c.edit(
        "toolu_2",
        "/home/dev/acme-api/.env",
        "AWS_ACCESS_KEY_ID=",
        &format!("AWS_ACCESS_KEY_ID={AWS}\nLICENSE={LICENSE}"),
    );
    c.said(&format!(
        "Configured the deploy with {AWS}; the licence {LICENSE} is in .env."
    ));
    c
}

fn capture(env: &Env, redaction: bool) {
    let t = env.path("a.jsonl");
    leaky_session().write(&t);
    let mut cmd = env.cmd();
    if !redaction {
        cmd.env("PEAT_REDACT", "off");
    }
    let out = cmd.args(["capture", t.to_str().unwrap()]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn captured_secrets_never_reach_the_store() {
    let env = Env::new();
    capture(&env, true);
    let leaked = left_on_disk(&env.store(), &[AWS, GITHUB, ANTHROPIC]);
    assert!(leaked.is_empty(), "on disk: {leaked:?}");
    let dump = env.dump();
    for secret in [AWS, GITHUB, ANTHROPIC] {
        assert!(!dump.contains(secret), "{secret} in events --json");
    }
    assert!(dump.contains("[REDACTED:aws-access-key:"), "{dump}");
    assert!(dump.contains("[REDACTED:github-token:"), "{dump}");
    assert!(dump.contains("[REDACTED:anthropic-key:"), "{dump}");
    // Equal secrets correlate: the AWS key has one marker wherever it appears.
    let markers: std::collections::BTreeSet<&str> = dump
        .match_indices("[REDACTED:aws-access-key:")
        .map(|(i, _)| &dump[i..i + "[REDACTED:aws-access-key:".len() + 9])
        .collect();
    assert_eq!(markers.len(), 1, "{markers:?}");
    let recall = env.run(&["recall", "deploy"]).ok();
    for secret in [AWS, GITHUB, ANTHROPIC] {
        assert!(!recall.stdout.contains(secret), "{}", recall.stdout);
    }
}

#[test]
fn the_scan_finds_secrets_when_redaction_is_off() {
    // The scan above can fail: the same capture with redaction off leaves the secrets.
    let env = Env::new();
    capture(&env, false);
    let leaked = left_on_disk(&env.store(), &[AWS, GITHUB, ANTHROPIC]);
    for secret in [AWS, GITHUB, ANTHROPIC] {
        assert!(
            leaked.iter().any(|(t, _)| t == secret),
            "{secret} not found: the scan proves nothing"
        );
    }
}

#[test]
fn an_observation_is_redacted_before_it_is_stored() {
    let env = Env::new();
    capture(&env, true);
    let r = env.run(&[
        "obs",
        "deploy",
        &format!("the deploy key is {GITHUB}, rotate monthly"),
        "--session",
        SESSION_A,
    ]);
    let r = r.ok();
    assert!(!r.stdout.contains(GITHUB) && !r.stderr.contains(GITHUB));
    assert!(files_holding(&env.store(), GITHUB).is_empty());
    let trail = env.run(&["subjects", "deploy", "--json"]).ok();
    assert!(
        trail.stdout.contains("[REDACTED:github-token:"),
        "{}",
        trail.stdout
    );
}

#[cfg(unix)]
#[test]
fn the_store_is_private_from_the_start() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    capture(&env, true);
    let mut stack = vec![env.store()];
    let mut seen = 0;
    while let Some(d) = stack.pop() {
        let mode = std::fs::metadata(&d).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", d.display());
        for entry in std::fs::read_dir(&d).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
                assert_eq!(mode, 0o600, "{}", p.display());
                seen += 1;
            }
        }
    }
    assert!(seen > 5, "only {seen} files checked");
}

#[cfg(unix)]
#[test]
fn an_open_store_is_tightened_with_a_note() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    capture(&env, true);
    let journal_dir = env.store().join("fjall");
    for p in [env.store(), journal_dir.clone()] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let r = env.run(&["events"]).ok();
    assert!(
        r.stderr.contains("made private"),
        "no note in {:?}",
        r.stderr
    );
    let mode = std::fs::metadata(&journal_dir)
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o700);
    let again = env.run(&["events"]).ok();
    assert!(!again.stderr.contains("made private"), "{}", again.stderr);
}

/// What of `secret` could be on disk: itself; the tail of each long alphanumeric run (a
/// compressed table block keeps a random run as literal bytes even where a repeated prefix
/// became a back-reference); and that tail lower-cased (the keyword index's tokens).
fn traces(secret: &str) -> Vec<String> {
    let mut out = vec![secret.to_string()];
    for run in secret.split(|c: char| !c.is_ascii_alphanumeric()) {
        if run.len() >= 12 {
            let tail = &run[run.len() - 12..];
            out.push(tail.to_string());
            out.push(tail.to_ascii_lowercase());
        }
    }
    out
}

/// Every trace of every secret, with the files holding it.
fn left_on_disk(store: &Path, secrets: &[&str]) -> Vec<(String, Vec<PathBuf>)> {
    secrets
        .iter()
        .flat_map(|s| traces(s))
        .map(|t| {
            let held = files_holding(store, &t);
            (t, held)
        })
        .filter(|(_, held)| !held.is_empty())
        .collect()
}

/// A store recorded without redaction (as an older peat did), searched so every view holds
/// the texts, with a user rule for the licence added afterwards.
fn unredacted_store(env: &Env) {
    capture(env, false);
    env.run(&["recall", "deploy"]).ok();
    let leaked = left_on_disk(&env.store(), &[AWS, GITHUB, ANTHROPIC, LICENSE]);
    assert!(
        leaked.len() >= 4,
        "the store should hold the secrets: {leaked:?}"
    );
    std::fs::write(
        env.store().join("redact.toml"),
        "[[rule]]\nkind = \"acme-license\"\nregex = \"ACME-LIC-[0-9A-F]{24}\"\n",
    )
    .unwrap();
}

#[test]
fn peat_redact_leaves_no_byte_of_a_secret_on_disk() {
    let env = Env::new();
    unredacted_store(&env);
    let before = env.dump();
    let r = env.run(&["redact", "--json"]).ok();
    let report: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert!(
        report["revised"].as_u64().unwrap_or(0) >= 4,
        "{report}\n{}",
        r.stderr
    );
    assert_eq!(report["blobs"], 1, "{report}");
    let leaked = left_on_disk(&env.store(), &[AWS, GITHUB, ANTHROPIC, LICENSE]);
    assert!(leaked.is_empty(), "left on disk: {leaked:?}");
    // Nothing else changed: the same events, with markers where the secrets were.
    let after = env.dump();
    assert_eq!(before.lines().count(), after.lines().count());
    assert!(after.contains("[REDACTED:acme-license:"), "{after}");
    assert!(after.contains("[REDACTED:aws-access-key:"), "{after}");
    // The views followed: search finds the redacted text, never the secret.
    let hits = env.run(&["recall", "deploy", "--json"]).ok();
    assert!(hits.stdout.contains("[REDACTED:"), "{}", hits.stdout);
    assert!(!hits.stdout.contains(AWS));
    // The store still works for writing: a second capture of the same file is a no-op.
    let t = env.path("a.jsonl");
    let again = env.run(&["capture", t.to_str().unwrap()]).ok();
    assert_eq!(again.receipt().1, 0, "{}", again.stderr);
    // And running it again finds nothing more to do.
    let r2 = env.run(&["redact", "--json"]).ok();
    let report2: serde_json::Value = serde_json::from_str(r2.stdout.trim()).unwrap();
    assert_eq!(report2["revised"], 0, "{report2}");
}

#[test]
fn a_store_from_before_redaction_is_redacted_when_a_writer_opens_it() {
    let env = Env::new();
    unredacted_store(&env);
    // An older peat recorded no rule-set version.
    std::fs::remove_file(env.store().join("redact.version")).unwrap();
    let r = env
        .run(&[
            "obs",
            "deploy",
            "deploys go through the blue env first",
            "--session",
            SESSION_A,
        ])
        .ok();
    let notes: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("redacting it"))
        .collect();
    assert_eq!(notes.len(), 1, "{}", r.stderr);
    let leaked = left_on_disk(&env.store(), &[AWS, GITHUB, ANTHROPIC, LICENSE]);
    assert!(leaked.is_empty(), "left on disk: {leaked:?}");
    // Once: the next writer says nothing.
    let again = env
        .run(&[
            "obs",
            "deploy",
            "blue first, then green",
            "--session",
            SESSION_A,
        ])
        .ok();
    assert!(!again.stderr.contains("redacting it"), "{}", again.stderr);
}

#[test]
fn check_shows_what_would_be_redacted_and_stores_nothing() {
    let env = Env::new();
    let f = env.path("work/.env");
    std::fs::write(
        &f,
        format!("# deploy\nAWS_ACCESS_KEY_ID={AWS}\nREGION=eu-west-1\nGITHUB_TOKEN={GITHUB}\n"),
    )
    .unwrap();
    let r = env.run(&["redact", "--check", f.to_str().unwrap()]).ok();
    assert!(!env.store().exists(), "a check created the store");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", r.stdout);
    assert!(
        lines[0].contains(":2:19  aws-access-key  AKIAZ…  → [REDACTED:aws-access-key:"),
        "{}",
        lines[0]
    );
    assert!(lines[1].contains(":4:14  github-token"), "{}", lines[1]);
    assert!(
        !r.stdout.contains(AWS) && !r.stdout.contains(GITHUB),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains("2 secrets would be redacted"),
        "{}",
        r.stderr
    );
    let j = env
        .run(&["redact", "--check", f.to_str().unwrap(), "--json"])
        .ok();
    let v: serde_json::Value = serde_json::from_str(j.stdout.trim()).unwrap();
    assert_eq!(v["findings"].as_array().unwrap().len(), 2, "{v}");
    assert_eq!(v["findings"][1]["kind"], "github-token");
    assert_eq!(v["findings"][1]["line"], 4);
    let missing = env.run(&["redact", "--check", "nope.txt"]);
    assert_eq!(missing.code, 2, "an error, by the exit-code contract");
    assert!(
        missing.stderr.starts_with("peat: cannot read nope.txt"),
        "{}",
        missing.stderr
    );
}

#[test]
fn a_broken_rules_file_stops_capture_and_says_where() {
    let env = Env::new();
    std::fs::create_dir_all(env.store()).unwrap();
    std::fs::write(
        env.store().join("redact.toml"),
        "[[rule]]\nkind = \"x\"\nregex = \"(\"\n",
    )
    .unwrap();
    let t = env.path("a.jsonl");
    leaky_session().write(&t);
    let r = env.run(&["capture", t.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("redact.toml: rule 1 (x): not a regex"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("Nothing was written"), "{}", r.stderr);
    assert!(files_holding(&env.store(), AWS).is_empty());
}

#[test]
fn setup_ignores_the_desk_once_unless_it_is_ignored_already() {
    crate::support::require_git();
    let env = Env::new();
    crate::support::repo(&env);
    let setup = || {
        crate::support::Run::of(
            env.cmd()
                .env("PEAT_PYTHON", env.path("no-python-here"))
                .args(["setup", "--no-model"])
                .output()
                .unwrap(),
        )
        .ok()
    };
    let r = setup();
    assert!(
        r.stderr.contains(".gitignore: .peat/ added"),
        "{}",
        r.stderr
    );
    let work = env.path("work");
    crate::support::git(&work, &["check-ignore", "-q", ".peat/"]);
    setup();
    let text = std::fs::read_to_string(work.join(".gitignore")).unwrap();
    assert_eq!(text.matches(".peat/").count(), 1, "{text}");

    // A repository that ignores it its own way is left alone.
    let other = Env::new();
    crate::support::repo(&other);
    std::fs::write(other.path("work/.gitignore"), "target\n/.peat\n").unwrap();
    let r = crate::support::Run::of(
        other
            .cmd()
            .env("PEAT_PYTHON", other.path("no-python-here"))
            .args(["setup", "--no-model"])
            .output()
            .unwrap(),
    )
    .ok();
    assert!(!r.stderr.contains(".peat/ added"), "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(other.path("work/.gitignore")).unwrap(),
        "target\n/.peat\n"
    );
}

#[test]
fn the_session_start_text_and_the_brief_show_only_markers() {
    let env = Env::new();
    let work = env.path("work");
    let t = env.path("a.jsonl");
    let text = leaky_session()
        .text()
        .replace("/home/dev/acme-api", work.to_str().unwrap());
    std::fs::write(&t, text).unwrap();
    // As the Stop hook passes it: the closing message holds a secret too.
    let out = env
        .cmd()
        .env("PEAT_FINAL_MSG", format!("Done: deployed with {GITHUB}."))
        .args(["capture", t.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let start = serde_json::json!({"hook_event_name": "SessionStart", "session_id": crate::support::SESSION_B, "source": "startup", "cwd": work});
    let r = crate::hook::fire_in(
        &env,
        &work,
        start.to_string().into_bytes(),
        &[("PEAT_NOW", "2026-07-14T12:00:00Z")],
    );
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("[REDACTED:github-token:"), "{}", r.stdout);
    let brief = crate::support::Run::of(
        env.cmd()
            .env("PEAT_NOW", "2026-07-14T12:00:00Z")
            .output()
            .unwrap(),
    )
    .ok();
    assert!(brief.stdout.contains("[REDACTED:"), "{}", brief.stdout);
    for secret in [AWS, GITHUB, ANTHROPIC] {
        assert!(!r.stdout.contains(secret) && !r.stderr.contains(secret));
        assert!(!brief.stdout.contains(secret), "{}", brief.stdout);
    }
}
