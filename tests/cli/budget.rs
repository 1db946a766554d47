//! Answers sized for a context window: lists bounded by `--limit` and `--since`, previews of
//! long texts with the whole one a handle (or `--full`) away, `log` folding runs of tool
//! calls, and text held to a byte budget whose last line is the command for the rest.

use std::path::Path;

use crate::support::{Env, Run, listed_sessions, peat};

/// The budget a pipe gets by default.
const BUDGET: usize = 4096;

/// The fixture's session, and how many copies of it the ledger holds.
const FIXTURE_ID: &str = "4a7f1c2e-6b3d-4e8f-9a0b-1c2d3e4f5a6b";
const COPIES: usize = 30;

/// The session id of copy `i`: its first eight digits its own, so handles stay short.
fn copy_id(i: usize) -> String {
    format!("{:08x}-6b3d-4e8f-9a0b-1c2d3e4f5a6b", 0x1000_0000 + i)
}

/// A ledger of the full-session fixture imported `COPIES` times, copy `i` under its own
/// session id and moved to day `i` of 2026-07 (the fixture ran on 2026-07-14). Copy 1 runs
/// the fixture's work four times over, an hour apart from 10:00 (a log longer than the
/// budget), and the harness's caveat is made longer than a preview in every copy.
fn ledger() -> Env {
    let env = Env::new();
    let fixture = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude/full-session.jsonl"),
    )
    .unwrap();
    let dir = env.path("transcripts");
    std::fs::create_dir_all(&dir).unwrap();
    let fixture = fixture.replace(
        "explicitly asks you to.",
        "explicitly asks you to, in words of their own.",
    );
    for i in 1..=COPIES {
        let text = fixture
            .replace(FIXTURE_ID, &copy_id(i))
            .replace("2026-07-14T", &format!("2026-07-{i:02}T"));
        let text = match i {
            1 => (0..4)
                .map(|k| text.replace("T09:", &format!("T1{k}:")))
                .collect(),
            _ => text,
        };
        std::fs::write(dir.join(format!("{}.jsonl", copy_id(i))), text).unwrap();
    }
    peat(&env, &["import", dir.to_str().unwrap()]).ok();
    env
}

/// `peat` with the budget given in the environment.
fn with_budget(env: &Env, budget: &str, args: &[&str]) -> Run {
    Run::of(
        env.cmd()
            .env("PEAT_NOW", crate::support::NOW)
            .env("PEAT_BUDGET", budget)
            .args(args)
            .output()
            .unwrap(),
    )
}

/// The command a line's closing `▸` names, as words (without `peat`).
fn handle(line: &str) -> Vec<String> {
    let (_, cmd) = line.rsplit_once("▸ ").expect(line);
    let words: Vec<String> = cmd.split_whitespace().map(String::from).collect();
    assert_eq!(words[0], "peat", "{line}");
    words[1..].to_vec()
}

fn run_words(env: &Env, words: &[String]) -> Run {
    let args: Vec<&str> = words.iter().map(String::as_str).collect();
    peat(env, &args).ok()
}

#[test]
fn sessions_log_and_recall_stay_within_the_budget_by_default_in_text_and_json() {
    let env = ledger();
    let log = copy_id(1);
    let reads: [&[&str]; 3] = [
        &["sessions"],
        &["log", &log],
        &["recall", "--keyword-only", "rate", "limiter"],
    ];
    for read in reads {
        for json in [false, true] {
            let mut args = read.to_vec();
            if json {
                args.push("--json");
            }
            let r = peat(&env, &args).ok();
            assert!(
                r.stdout.len() <= BUDGET,
                "{args:?}: {} bytes\n{}",
                r.stdout.len(),
                r.stdout
            );
            if json {
                // Shorter, never cut: the answer is one whole JSON document.
                serde_json::from_str::<serde_json::Value>(&r.stdout).expect(&r.stdout);
            }
            // Without the bounds, the same read is longer than the budget: the ledger is
            // large enough for the budget to matter.
            let mut whole = args.clone();
            let every = if read[0] == "recall" { "40" } else { "0" };
            whole.extend(["--budget", "0", "--full", "--limit", every]);
            let all = peat(&env, &whole).ok();
            assert!(all.stdout.len() > BUDGET, "{whole:?}: {}", all.stdout.len());
        }
    }
}

#[test]
fn text_past_the_budget_stops_at_a_line_and_its_last_line_runs_as_the_rest() {
    let env = ledger();
    let r = peat(&env, &["sessions", "--limit", "0"]).ok();
    assert!(r.stdout.len() <= BUDGET, "{}", r.stdout.len());
    let last = r.stdout.lines().last().unwrap();
    assert!(
        last.starts_with("… cut at the 4096-byte budget: "),
        "{last}"
    );
    let rest = handle(last);
    assert_eq!(rest, ["sessions", "--limit", "0", "--budget", "0"]);
    let all = run_words(&env, &rest);
    // Every session, and every line the cut one showed, whole.
    assert_eq!(all.stdout.lines().count(), COPIES);
    let kept: Vec<&str> = r.stdout.lines().filter(|l| !l.starts_with('…')).collect();
    assert!(all.stdout.starts_with(&(kept.join("\n") + "\n")));
    assert!(!all.stdout.contains("cut at the"));
    // A budget of its own, from the flag or the environment.
    for small in [
        peat(&env, &["sessions", "--budget", "1000"]),
        with_budget(&env, "1000", &["sessions"]),
    ] {
        let small = small.ok();
        assert!(small.stdout.len() <= 1000, "{}", small.stdout.len());
        assert!(small.stdout.contains("cut at the 1000-byte budget"));
    }
    assert!(
        !with_budget(&env, "0", &["sessions", "--limit", "0"])
            .ok()
            .stdout
            .contains("cut at the")
    );
}

#[test]
fn limit_and_since_bound_the_sessions_list_and_say_how_to_list_the_rest() {
    let env = ledger();
    let r = peat(&env, &["sessions", "--limit", "3"]).ok();
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", r.stdout);
    // Newest first: the copies of the last days of the month.
    for (line, i) in lines.iter().zip([30, 29, 28]) {
        assert!(line.starts_with(&copy_id(i)[..8]), "{line}");
    }
    assert!(lines[3].starts_with("… 27 more sessions"), "{}", lines[3]);
    assert_eq!(handle(lines[3]), ["sessions", "--limit", "0"]);
    // The default is 20.
    let r = peat(&env, &["sessions"]).ok();
    assert_eq!(r.stdout.lines().count(), 21);
    let since = peat(&env, &["sessions", "--since", "2026-07-26"]).ok();
    assert_eq!(since.stdout.lines().count(), 5, "{}", since.stdout);
    assert!(!since.stdout.contains("more sessions"));
    let json = peat(&env, &["sessions", "--json", "--since", "2026-07-29"]).ok();
    assert_eq!(listed_sessions(&json.stdout), [copy_id(30), copy_id(29)]);
    // A bad time is said in the grammar every verb reads.
    let bad = peat(&env, &["sessions", "--since", "soonish"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("2026-11-01"), "{}", bad.stderr);
}

#[test]
fn previews_mark_what_they_cut_and_full_gives_the_whole_text() {
    let env = ledger();
    const ASKED: &str =
        "Add a token-bucket rate limiter to src/server.ts, make the tests pass, and commit it.";
    let line = peat(&env, &["sessions", "--limit", "1"]).ok().stdout;
    assert!(
        !line.contains(ASKED) && line.contains("make the tests pass,…"),
        "{line}"
    );
    let full = peat(&env, &["sessions", "--limit", "1", "--full"])
        .ok()
        .stdout;
    assert!(full.contains(ASKED), "{full}");

    // The harness's caveat is past a preview's 200 characters.
    let log = copy_id(1);
    let entry = |args: &[&str]| -> serde_json::Value {
        let v: serde_json::Value = serde_json::from_str(&peat(&env, args).ok().stdout).unwrap();
        v["entries"][0].clone()
    };
    let cut = entry(&["log", &log, "--json"]);
    let text = cut["text"].as_str().unwrap();
    assert_eq!(cut["cut"], true);
    assert!(text.ends_with('…') && text.chars().count() == 201, "{text}");
    let whole = entry(&["log", &log, "--json", "--full"]);
    assert_eq!(whole["cut"], serde_json::Value::Null);
    assert_eq!(
        cut["chars"].as_u64().unwrap() as usize,
        whole["text"].as_str().unwrap().chars().count()
    );
    assert!(
        whole["text"]
            .as_str()
            .unwrap()
            .starts_with(&text[..text.len() - '…'.len_utf8()])
    );
}

#[test]
fn log_folds_a_run_of_tool_calls_into_a_line_whose_handle_shows_them() {
    let env = ledger();
    let log = copy_id(1);
    let short = &log[..8];
    let r = peat(&env, &["log", &log]).ok();
    let fold = r
        .stdout
        .lines()
        .find(|l| {
            l.contains("… 7 tool calls: Read, Edit, Write, Bash ×3, MultiEdit (1 failed) · 3 edits")
        })
        .unwrap_or_else(|| panic!("{}", r.stdout));
    // The steps it folds are not listed one by one.
    assert!(!r.stdout.contains("$ Read "), "{}", r.stdout);
    let words = handle(fold);
    assert_eq!(words[..3], ["log", short, "--full"]);
    let shown = run_words(&env, &words).stdout;
    let steps: Vec<&str> = shown
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with('…'))
        .collect();
    // The folded run: ten steps, from the read to the last test run.
    assert_eq!(steps.len(), 10, "{shown}");
    assert!(steps[0].contains("$ Read "), "{shown}");
    assert!(steps[9].contains("$ Bash git add -A"), "{shown}");
    // `--full` folds nothing.
    let full = peat(&env, &["log", &log, "--full"]).ok().stdout;
    assert!(
        !full.contains("tool calls:") && full.contains("$ Read "),
        "{full}"
    );
    // `--limit` and `--since` bound the steps.
    let two = peat(&env, &["log", &log, "--limit", "2"]).ok().stdout;
    assert_eq!(two.lines().count(), 4, "{two}");
    assert!(
        two.lines().nth(3).unwrap().starts_with("… 130 more steps"),
        "{two}"
    );
    let late = peat(&env, &["log", &log, "--since", "2026-07-01T13:02:30Z"])
        .ok()
        .stdout;
    assert!(
        !late.contains("token-bucket") && late.contains("Want me to commit"),
        "{late}"
    );
}

#[test]
fn recall_full_prints_whole_texts_and_json_hits_carry_previews() {
    let env = ledger();
    // A plan of 1655 characters, past every preview.
    peat(
        &env,
        &[
            "capture",
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/claude/ask-and-plan.jsonl")
                .to_str()
                .unwrap(),
        ],
    )
    .ok();
    let args = [
        "recall",
        "--keyword-only",
        "delete",
        "custombubble",
        "styles",
        "--limit",
        "1",
    ];
    let json = |extra: &[&str]| -> serde_json::Value {
        let r = peat(&env, &[&args[..], extra].concat()).ok();
        serde_json::from_str(&r.stdout).unwrap()
    };
    let (cut, whole) = (json(&["--json"]), json(&["--json", "--full"]));
    let (hit, full) = (&cut["hits"][0], &whole["hits"][0]);
    let text = full["text"].as_str().unwrap();
    assert_eq!(text.chars().count(), 1655);
    assert_eq!(hit["cut"], true);
    assert_eq!(hit["chars"], 1655);
    assert_eq!(hit["text"].as_str().unwrap().chars().count(), 201);
    assert_eq!(full["cut"], serde_json::Value::Null);
    // As text: a preview ending in `…` before its handle, or the whole text.
    let line = peat(&env, &args).ok().stdout;
    assert!(line.contains("…  ▸ peat show"), "{line}");
    let whole_line = peat(&env, &[&args[..], &["--full"]].concat()).ok().stdout;
    assert!(
        !whole_line.contains('…') && whole_line.len() > 1600,
        "{whole_line}"
    );
}

#[test]
fn zoom_takes_the_newest_of_each_list_since_a_moment() {
    let env = ledger();
    let texts = |args: &[&str]| -> Vec<i64> {
        let r = peat(&env, &[&["zoom", "2026-07", "--json"][..], args].concat()).ok();
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        v["texts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["ts_ms"].as_i64().unwrap())
            .collect()
    };
    let all = texts(&[]);
    assert!(all.len() > 2, "{all:?}");
    assert_eq!(texts(&["--limit", "2"]), all[..2]);
    // 2026-07-20T00:00:00Z ("now" is noon that day)
    let since = 1_784_505_600_000;
    let late = texts(&["--since", "2026-07-20"]);
    assert!(!late.is_empty() && late.len() < all.len(), "{late:?}");
    assert!(late.iter().all(|&t| t >= since), "{late:?}");
    let text = peat(&env, &["zoom", "2026-07", "--limit", "1"]).ok().stdout;
    let last = text.lines().last().unwrap();
    assert!(
        last.starts_with("… ") && last.contains("more items"),
        "{text}"
    );
    assert_eq!(handle(last), ["zoom", "2026-07", "--limit", "0"]);
}

#[test]
fn a_files_edits_end_with_the_command_that_lists_them_all_read_bare_or_by_verb() {
    let env = ledger();
    const PATH: &str = "/home/dev/acme-api/src/server.ts";
    // Bare `peat PATH` takes no `--limit`: the rest is spelled with the verb.
    for read in [&[PATH][..], &["file", PATH]] {
        let r = peat(&env, read).ok();
        let last = r.stdout.lines().last().unwrap();
        assert!(last.starts_with("  … "), "{}", r.stdout);
        assert_eq!(handle(last), ["file", PATH, "--limit", "0"]);
        let mut rest = handle(last);
        rest.extend(["--budget".into(), "0".into()]);
        let all = run_words(&env, &rest);
        assert!(!all.stdout.contains("more edit"), "{}", all.stdout);
        // Each copy edits it three times, copy 1 four times over.
        let edits = all
            .stdout
            .lines()
            .filter(|l| l.contains("▸ peat show"))
            .count();
        assert_eq!(edits, 3 * (COPIES + 3), "{}", all.stdout);
    }
}

#[test]
fn a_sessions_json_keeps_the_prompts_that_fit_and_says_how_many_it_left_out() {
    let env = ledger();
    let show = |args: &[&str]| -> serde_json::Value {
        let r = peat(
            &env,
            &[&["show", &copy_id(1)[..8], "--json"][..], args].concat(),
        )
        .ok();
        serde_json::from_str(&r.stdout).unwrap()
    };
    let whole = show(&[]);
    assert_eq!(whole["prompts_list"].as_array().unwrap().len(), 16);
    assert_eq!(whole["omitted"], serde_json::Value::Null);
    let r = peat(
        &env,
        &["show", &copy_id(1)[..8], "--json", "--budget", "1500"],
    )
    .ok();
    assert!(r.stdout.len() <= 1500, "{}", r.stdout.len());
    let small: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let kept = small["prompts_list"].as_array().unwrap().len();
    assert!((1..16).contains(&kept), "{kept}");
    assert_eq!(small["omitted"], 16 - kept);
    assert_eq!(small["prompts_list"][0], whole["prompts_list"][0]);
    assert!(
        r.stderr.contains("--budget 0` prints them all"),
        "{}",
        r.stderr
    );
}
