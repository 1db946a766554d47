//! Blame that is true, through the real binary in a real git repository and a real jj one: a
//! person's commit, an agent's whole-file Write over it, edits by two agents, a line committed
//! by hand and one typed and never committed, a rename (git) and a deleted file. Each line of
//! the file, now and at several moments, names what wrote it; `--at` never shows a line
//! written after its moment. The same holds once the agents' commits are squashed into one or
//! rebased onto a new base (new hashes), and `peat COMMIT` and `peat show SESSION` name the
//! session that wrote the rewritten commit's lines. A Write whose result says what the file held before it (as
//! Claude Code's does) owns only the lines it changed, with or without a repository.

use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;

use crate::blame::{line, prompt, tool, transcript};
use crate::support::{Env, SESSION_A, SESSION_B, git_by, have_jj, require_git};

/// Which tool keeps the repository.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Vcs {
    Git,
    /// jj alone, or colocated with git (which then answers peat's questions).
    Jj {
        colocate: bool,
    },
}

/// A repository in the work folder whose commits are made by "Pat" at given minutes past
/// 09:00 on 2026-07-14; remembers each commit's hash.
pub struct Repo<'a> {
    env: &'a Env,
    work: PathBuf,
    vcs: Vcs,
}

fn at(minute: u32) -> String {
    format!("2026-07-14T09:{minute:02}:00Z")
}

impl Repo<'_> {
    pub fn new(env: &Env, vcs: Vcs) -> Repo<'_> {
        let repo = Repo {
            env,
            work: env.path("work"),
            vcs,
        };
        match vcs {
            Vcs::Git => repo.git(0, &["init", "-q", "-b", "main"]),
            Vcs::Jj { colocate: false } => repo.jj(0, &["git", "init", "--no-colocate"]),
            Vcs::Jj { colocate: true } => repo.jj(0, &["git", "init", "--colocate"]),
        };
        repo
    }

    pub fn file(&self, rel: &str) -> PathBuf {
        self.work.join(rel)
    }

    pub fn put(&self, rel: &str, text: &str) {
        let f = self.file(rel);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, text).unwrap();
    }

    /// Commit everything in the working copy at `minute`; the new commit's hash.
    pub fn commit(&self, minute: u32, message: &str) -> String {
        match self.vcs {
            Vcs::Git => {
                self.git(minute, &["add", "-A"]);
                self.git(minute, &["commit", "-q", "-m", message]);
                self.git(minute, &["rev-parse", "HEAD"])
            }
            Vcs::Jj { .. } => {
                self.jj(minute, &["commit", "-m", message]);
                self.jj(
                    minute,
                    &["log", "-r", "@-", "--no-graph", "-T", "commit_id"],
                )
            }
        }
    }

    pub fn git(&self, minute: u32, args: &[&str]) -> String {
        git_by(&self.work, "Pat", &at(minute), args)
    }

    pub fn jj(&self, minute: u32, args: &[&str]) -> String {
        let config = self.env.path("jj-config.toml");
        std::fs::write(
            &config,
            "[user]\nname = \"Pat\"\nemail = \"pat@example.com\"\n[ui]\npaginate = \"never\"\n",
        )
        .unwrap();
        let out = Command::new("jj")
            .args(args)
            .current_dir(&self.work)
            .env("JJ_CONFIG", &config)
            .env("HOME", self.env.path("home"))
            .env(
                "JJ_TIMESTAMP",
                format!("2026-07-14T09:{minute:02}:00+00:00"),
            )
            .output()
            .unwrap();
        assert!(out.status.success(), "jj {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }
}

const ADD: &str = "def add(a, b):\n    return a + b\n";
const WRITTEN: &str =
    "import math\ndef add(a, b):\n    return a + b\ndef sub(a, b):\n    return a - b\n";

/// The commits of the scenario.
struct Story {
    c1: String,
    c3: String,
}

/// 09:00 Pat commits `src/calc.py` (c1). 09:06 session A Writes it whole, keeping Pat's two
/// lines; 09:12 session B edits A's last line; 09:15 Pat commits both (c2); 09:20 Pat adds a
/// line by hand, committed at 09:25 (c3); 09:40 session A edits its first line; Pat renames
/// the file to `src/maths.py` and commits both at 09:45 (c4). Last, a line typed by hand and
/// never committed. Session B also Writes `src/notes.md` at 09:50, which Pat commits at 09:52
/// and deletes at 09:55.
fn story(repo: &Repo) -> Story {
    let env = repo.env;
    let calc = repo.file("src/calc.py").to_string_lossy().into_owned();
    let notes = repo.file("src/notes.md").to_string_lossy().into_owned();
    repo.put("src/calc.py", ADD);
    let c1 = repo.commit(0, "add");

    let mut a = vec![prompt(SESSION_A, 1, 5, "add subtraction")];
    a.extend(tool(
        SESSION_A,
        2,
        6,
        "Write",
        json!({"file_path": calc, "content": WRITTEN}),
    ));
    a.push(prompt(SESSION_A, 4, 39, "import sys too"));
    a.extend(tool(
        SESSION_A,
        5,
        40,
        "Edit",
        json!({"file_path": calc, "old_string": "import math\n", "new_string": "import math, sys\n", "replace_all": false}),
    ));
    let mut b = vec![prompt(SESSION_B, 1, 10, "mark sub as checked")];
    b.extend(tool(
        SESSION_B,
        2,
        12,
        "Edit",
        json!({"file_path": calc, "old_string": "    return a - b\n", "new_string": "    return a - b  # checked\n", "replace_all": false}),
    ));
    b.push(prompt(SESSION_B, 4, 49, "jot down notes"));
    b.extend(tool(
        SESSION_B,
        5,
        50,
        "Write",
        json!({"file_path": notes, "content": "B's notes\n"}),
    ));

    // The working copy follows the sessions; Pat commits between them.
    repo.put(
        "src/calc.py",
        "import math\ndef add(a, b):\n    return a + b\ndef sub(a, b):\n    return a - b  # checked\n",
    );
    repo.commit(15, "the agents' work");
    let by_hand = "import math\ndef add(a, b):\n    return a + b\ndef sub(a, b):\n    return a - b  # checked\n# by hand, committed\n";
    repo.put("src/calc.py", by_hand);
    let c3 = repo.commit(25, "a note by hand");
    let edited = by_hand.replace("import math\n", "import math, sys\n");
    repo.put("src/calc.py", &edited);
    std::fs::rename(repo.file("src/calc.py"), repo.file("src/maths.py")).unwrap();
    repo.commit(45, "A's import");
    repo.put("src/notes.md", "B's notes\n");
    repo.commit(52, "B's notes");
    std::fs::remove_file(repo.file("src/notes.md")).unwrap();
    repo.commit(55, "no notes");
    let now = format!("{edited}# typed, not committed\n");
    repo.put("src/maths.py", &now);

    let ta = transcript(env, "a.jsonl", &a);
    let tb = transcript(env, "b.jsonl", &b);
    env.run(&["capture", &ta, &tb]).ok();
    Story { c1, c3 }
}

/// What a line of `peat blame --json` says wrote it.
#[derive(Debug, PartialEq, Eq)]
enum Who {
    /// A session's edit, with the prompt it answered.
    Agent(&'static str, &'static str),
    BeforeRecord(String),
    ByHand(String),
    Uncommitted,
    /// No recorded edit wrote it, and no repository says who did.
    Unexplained,
}

/// Each line's text and origin in `peat blame FILE [ARGS] --json`.
fn blamed(env: &Env, file: &str, args: &[&str]) -> Vec<(String, Who)> {
    let doc = blame_json(env, file, args);
    let edits = doc["edits"].as_array().unwrap();
    doc["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let text = l["text"].as_str().unwrap().to_string();
            let commit = || l["commit"]["hash"].as_str().unwrap().to_string();
            let who = match l["origin"].as_str().unwrap() {
                "edit" => {
                    let e = &edits[l["edit"].as_u64().unwrap() as usize];
                    let session = [SESSION_A, SESSION_B]
                        .into_iter()
                        .find(|s| e["session"] == *s)
                        .unwrap();
                    let prompt = [
                        "add subtraction",
                        "import sys too",
                        "mark sub as checked",
                        "jot down notes",
                    ]
                    .into_iter()
                    .find(|p| e["prompt"]["text"] == *p)
                    .unwrap();
                    Who::Agent(session, prompt)
                }
                "before_record" => Who::BeforeRecord(commit()),
                "committed_by_hand" => Who::ByHand(commit()),
                "uncommitted" => Who::Uncommitted,
                "unexplained" => Who::Unexplained,
                other => panic!("line {text:?}: {other}"),
            };
            (text, who)
        })
        .collect()
}

fn blame_json(env: &Env, file: &str, args: &[&str]) -> Value {
    let mut all = vec!["blame", file];
    all.extend_from_slice(args);
    all.push("--json");
    let r = env.run(&all).ok();
    serde_json::from_str(&r.stdout).unwrap()
}

fn lines(expected: &[(&str, Who)]) -> Vec<(String, Who)> {
    expected
        .iter()
        .map(|(t, w)| {
            let who = match w {
                Who::Agent(s, p) => Who::Agent(s, p),
                Who::BeforeRecord(c) => Who::BeforeRecord(c.clone()),
                Who::ByHand(c) => Who::ByHand(c.clone()),
                Who::Uncommitted => Who::Uncommitted,
                Who::Unexplained => Who::Unexplained,
            };
            (t.to_string(), who)
        })
        .collect()
}

/// The seq of the prompt the edit at index `i` of `peat blame FILE --json` answered, and the
/// edit's own seq.
fn seqs(env: &Env, file: &str, i: usize) -> (u64, u64) {
    let doc = blame_json(env, file, &[]);
    let e = &doc["edits"][i];
    (
        e["prompt"]["seq"].as_u64().unwrap(),
        e["seq"].as_u64().unwrap(),
    )
}

/// Every check of the scenario, on the renamed file.
fn every_line_and_moment_names_what_wrote_it(env: &Env, s: &Story) {
    let file = "src/maths.py";
    let a_write = || Who::Agent(SESSION_A, "add subtraction");
    let b_edit = || Who::Agent(SESSION_B, "mark sub as checked");
    let a_edit = || Who::Agent(SESSION_A, "import sys too");
    let c1 = || Who::BeforeRecord(s.c1.clone());
    let c3 = || Who::ByHand(s.c3.clone());
    assert_eq!(
        blamed(env, file, &[]),
        lines(&[
            ("import math, sys", a_edit()),
            ("def add(a, b):", c1()),
            ("    return a + b", c1()),
            ("def sub(a, b):", a_write()),
            ("    return a - b  # checked", b_edit()),
            ("# by hand, committed", c3()),
            ("# typed, not committed", Who::Uncommitted),
        ]),
        "now"
    );
    assert_eq!(
        blame_json(env, file, &[])["origins"],
        json!({"edit": 3, "before_record": 2, "committed_by_hand": 1, "uncommitted": 1}),
        "the header's counts, for --json"
    );
    // Before the record: Pat's commit alone.
    assert_eq!(
        blamed(env, file, &["--at", &at(3)]),
        lines(&[("def add(a, b):", c1()), ("    return a + b", c1())]),
    );
    // After A's Write, before B's edit: Pat's lines are still Pat's.
    let after_write = lines(&[
        ("import math", a_write()),
        ("def add(a, b):", c1()),
        ("    return a + b", c1()),
        ("def sub(a, b):", a_write()),
        ("    return a - b", a_write()),
    ]);
    assert_eq!(blamed(env, file, &["--at", &at(11)]), after_write);
    // Just after B's edit (by SESSION:SEQ), and just before A's second one: neither the line
    // Pat added at 09:20 nor A's later edit, nor the line never committed.
    let (_, b_seq) = seqs(env, file, 1);
    let after_b = format!("{}:{b_seq}", &SESSION_B[..8]);
    let mut then = after_write;
    then[4] = ("    return a - b  # checked".to_string(), b_edit());
    assert_eq!(blamed(env, file, &["--at", &after_b]), then);
    let (prompt_seq, _) = seqs(env, file, 2);
    let before_a = format!("{}:{prompt_seq}", &SESSION_A[..8]);
    then.push(("# by hand, committed".to_string(), c3()));
    assert_eq!(blamed(env, file, &["--at", &before_a]), then);
    // After Pat's 09:45 commit: A's edit, committed; still not the line never committed.
    then[0] = ("import math, sys".to_string(), a_edit());
    assert_eq!(blamed(env, file, &["--at", &at(50)]), then);
    // No moment shows a line written after it.
    for m in [3, 11, 30, 50] {
        let texts: Vec<String> = blamed(env, file, &["--at", &at(m)])
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        assert!(
            !texts.iter().any(|t| t == "# typed, not committed"),
            "{m}: {texts:?}"
        );
        if m < 20 {
            assert!(!texts.iter().any(|t| t.contains("by hand")), "{m}");
        }
    }

    // The header says what happened, and only that.
    let r = env.run(&["blame", file]).ok();
    let head: Vec<&str> = r.stdout.lines().take(2).collect();
    assert_eq!(
        head[1],
        "   3 lines by recorded edits · 2 lines from before the record · 1 line committed by hand · 1 line changed by hand, not committed",
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("could not be placed"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains(&format!("[before the record: {} Pat", &s.c1[..8])),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains(&format!("[committed by hand: {} Pat", &s.c3[..8])),
        "{}",
        r.stdout
    );
    let r = env.run(&["blame", file, "--at", &after_b]).ok();
    assert!(
        r.stdout
            .contains("\n   1 edit after that moment, not applied"),
        "{}",
        r.stdout
    );

    // The deleted file: as B wrote it, before Pat committed it and after; gone once deleted.
    for m in [51, 53] {
        assert_eq!(
            blamed(env, "src/notes.md", &["--at", &at(m)]),
            lines(&[("B's notes", Who::Agent(SESSION_B, "jot down notes"))]),
            "{m}"
        );
    }
    assert_eq!(blamed(env, "src/notes.md", &["--at", &at(56)]), lines(&[]));
}

#[test]
fn in_a_git_repository_every_line_and_moment_names_what_wrote_it_across_a_rename() {
    require_git();
    let env = Env::new();
    let repo = Repo::new(&env, Vcs::Git);
    let s = story(&repo);
    every_line_and_moment_names_what_wrote_it(&env, &s);
}

#[test]
fn in_a_jj_repository_every_line_and_moment_names_what_wrote_it_across_a_rename() {
    if !have_jj() {
        return;
    }
    let env = Env::new();
    let repo = Repo::new(&env, Vcs::Jj { colocate: false });
    assert!(!env.path("work/.git").exists(), "a jj-only repository");
    let s = story(&repo);
    every_line_and_moment_names_what_wrote_it(&env, &s);
}

#[test]
fn in_a_jj_repository_colocated_with_git_every_line_and_moment_names_what_wrote_it() {
    if !have_jj() {
        return;
    }
    let env = Env::new();
    let repo = Repo::new(&env, Vcs::Jj { colocate: true });
    assert!(env.path("work/.git").exists(), "colocated with git");
    let s = story(&repo);
    every_line_and_moment_names_what_wrote_it(&env, &s);
}

/// Session A's Write of `content` over `file` at 09:06, answering "add subtraction", and its
/// result as Claude Code records it, with `said` (what the file was before) in its
/// `toolUseResult`; captured.
pub fn write_saying(env: &Env, file: &str, content: &str, said: Value) {
    let id = "toolu_write_over";
    let mut result = json!({"type": "update", "filePath": file, "content": content});
    for (k, v) in said.as_object().unwrap() {
        result[k] = v.clone();
    }
    let lines = [
        prompt(SESSION_A, 1, 5, "add subtraction"),
        line(
            SESSION_A,
            2,
            6,
            "assistant",
            json!({"message": {"id": "msg_2", "role": "assistant", "type": "message",
                "content": [{"type": "tool_use", "id": id, "name": "Write",
                    "input": {"file_path": file, "content": content}}]}}),
        ),
        line(
            SESSION_A,
            3,
            6,
            "user",
            json!({"message": {"role": "user", "content": [{"tool_use_id": id, "type": "tool_result",
                "content": format!("The file {file} has been updated successfully.")}]},
                "toolUseResult": result}),
        ),
    ];
    let t = transcript(env, "a.jsonl", &lines);
    env.run(&["capture", &t]).ok();
}

const KEPT: &str = "def add(a, b):\n    return a + b\n";

#[test]
fn a_write_over_a_file_in_no_repository_owns_only_the_lines_its_result_says_it_changed() {
    let env = Env::new();
    let file = env.path("work/calc.py").to_string_lossy().into_owned();
    std::fs::write(&file, WRITTEN).unwrap();
    write_saying(
        &env,
        &file,
        WRITTEN,
        json!({"originalFile": KEPT, "structuredPatch": [{"oldStart": 1, "oldLines": 2,
            "newStart": 1, "newLines": 5, "lines": ["+import math", " def add(a, b):",
            "     return a + b", "+def sub(a, b):", "+    return a - b"]}]}),
    );
    let a = || Who::Agent(SESSION_A, "add subtraction");
    let expected = lines(&[
        ("import math", a()),
        ("def add(a, b):", Who::Unexplained),
        ("    return a + b", Who::Unexplained),
        ("def sub(a, b):", a()),
        ("    return a - b", a()),
    ]);
    assert_eq!(blamed(&env, "calc.py", &[]), expected);
    let r = env.run(&["blame", "calc.py"]).ok();
    assert!(
        r.stdout.contains("3 lines by recorded edits"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_write_over_a_file_in_no_repository_that_does_not_say_what_it_replaced_owns_every_line() {
    let env = Env::new();
    let file = env.path("work/calc.py").to_string_lossy().into_owned();
    std::fs::write(&file, WRITTEN).unwrap();
    write_saying(&env, &file, WRITTEN, json!({}));
    let a = || Who::Agent(SESSION_A, "add subtraction");
    assert_eq!(
        blamed(&env, "calc.py", &[]),
        lines(&[
            ("import math", a()),
            ("def add(a, b):", a()),
            ("    return a + b", a()),
            ("def sub(a, b):", a()),
            ("    return a - b", a()),
        ]),
        "nothing says what the write replaced"
    );
}

#[test]
fn a_write_over_a_file_never_committed_leaves_the_lines_its_result_says_it_kept_uncommitted() {
    require_git();
    let env = Env::new();
    let repo = Repo::new(&env, Vcs::Git);
    repo.put("README.md", "# calc\n");
    repo.commit(0, "readme");
    let file = repo.file("calc.py").to_string_lossy().into_owned();
    repo.put("calc.py", WRITTEN);
    // Only the hunks, as an older Claude Code reports a Write.
    let hunks = json!([{"oldStart": 1, "oldLines": 2, "newStart": 1, "newLines": 5,
        "lines": ["+import math", " def add(a, b):", "     return a + b", "+def sub(a, b):",
        "+    return a - b"]}]);
    write_saying(&env, &file, WRITTEN, json!({"structuredPatch": hunks}));
    let a = || Who::Agent(SESSION_A, "add subtraction");
    assert_eq!(
        blamed(&env, "calc.py", &[]),
        lines(&[
            ("import math", a()),
            ("def add(a, b):", Who::Uncommitted),
            ("    return a + b", Who::Uncommitted),
            ("def sub(a, b):", a()),
            ("    return a - b", a()),
        ])
    );
}

/// Pat commits `calc.py` at 09:00 (c1) and changes a line by hand at 09:03, not committed;
/// session A's Write at 09:06 keeps that change.
fn a_hand_edit_then_a_write(said: bool) -> (Env, String) {
    require_git();
    let env = Env::new();
    let repo = Repo::new(&env, Vcs::Git);
    repo.put("calc.py", KEPT);
    let c1 = repo.commit(0, "add");
    let by_hand = KEPT.replace("a + b\n", "a + b  # by hand\n");
    let content = WRITTEN.replace("a + b\n", "a + b  # by hand\n");
    repo.put("calc.py", &content);
    let file = repo.file("calc.py").to_string_lossy().into_owned();
    let told = match said {
        true => json!({"originalFile": by_hand, "structuredPatch": []}),
        false => json!({}),
    };
    write_saying(&env, &file, &content, told);
    (env, c1)
}

#[test]
fn what_a_writes_result_says_it_replaced_wins_over_the_repository_and_the_hand_edit_stays_a_persons()
 {
    let (env, c1) = a_hand_edit_then_a_write(true);
    let a = || Who::Agent(SESSION_A, "add subtraction");
    let c1 = || Who::BeforeRecord(c1.clone());
    assert_eq!(
        blamed(&env, "calc.py", &[]),
        lines(&[
            ("import math", a()),
            ("def add(a, b):", c1()),
            ("    return a + b  # by hand", Who::Uncommitted),
            ("def sub(a, b):", a()),
            ("    return a - b", a()),
        ])
    );
    // Just after the write, the same.
    assert_eq!(
        blamed(&env, "calc.py", &["--at", &at(7)]),
        blamed(&env, "calc.py", &[])
    );
    // Not told, the write is taken to have replaced the committed file: it wrote the line.
    let (env, _) = a_hand_edit_then_a_write(false);
    assert_eq!(
        blamed(&env, "calc.py", &[])[2],
        ("    return a + b  # by hand".to_string(), a())
    );
}

/// How the agents' two commits are rewritten.
#[derive(Clone, Copy)]
enum Rewrite {
    /// Into one commit.
    Squash,
    /// Onto a commit of Pat's made beside them.
    Rebase,
}

const CHECKED: &str =
    "import math\ndef add(a, b):\n    return a + b\ndef sub(a, b):\n    return a - b  # checked\n";

/// 09:00 Pat commits `src/calc.py` (c1); session A Writes it at 09:06, committed at 09:08;
/// session B edits A's last line at 09:12, committed at 09:15. At 09:20 the two commits are
/// squashed into one, or rebased onto Pat's 09:18 commit of the README made beside them. Pat's
/// first commit and the commits as they are after the rewrite, oldest first.
fn rewritten(repo: &Repo, how: Rewrite) -> (String, Vec<String>) {
    let env = repo.env;
    let calc = repo.file("src/calc.py").to_string_lossy().into_owned();
    repo.put("src/calc.py", ADD);
    repo.put("README.md", "# calc\n");
    let c1 = repo.commit(0, "add");
    repo.put("src/calc.py", WRITTEN);
    repo.commit(8, "subtraction");
    repo.put("src/calc.py", CHECKED);
    repo.commit(15, "checked");
    let head = |rev: &str| match repo.vcs {
        Vcs::Git => repo.git(20, &["rev-parse", rev]),
        Vcs::Jj { .. } => repo.jj(20, &["log", "-r", rev, "--no-graph", "-T", "commit_id"]),
    };
    let after = match (how, repo.vcs) {
        (Rewrite::Squash, Vcs::Git) => {
            repo.git(20, &["reset", "-q", "--soft", &c1]);
            repo.git(20, &["commit", "-q", "-m", "subtraction, checked"]);
            vec![head("HEAD")]
        }
        (Rewrite::Squash, Vcs::Jj { .. }) => {
            let m = "subtraction, checked";
            repo.jj(20, &["squash", "--from", "@-", "--into", "@--", "-m", m]);
            vec![head("@-")]
        }
        (Rewrite::Rebase, Vcs::Git) => {
            repo.git(18, &["checkout", "-q", "-b", "readme", &c1]);
            repo.put("README.md", "# calc, by Pat\n");
            repo.commit(18, "readme");
            repo.git(20, &["checkout", "-q", "main"]);
            repo.git(20, &["rebase", "-q", "readme"]);
            vec![head("HEAD~1"), head("HEAD")]
        }
        (Rewrite::Rebase, Vcs::Jj { .. }) => {
            let change =
                |rev: &str| repo.jj(18, &["log", "-r", rev, "--no-graph", "-T", "change_id"]);
            let (x, y) = (change("@--"), change("@-"));
            repo.jj(18, &["new", &c1]);
            repo.put("README.md", "# calc, by Pat\n");
            repo.commit(18, "readme");
            repo.jj(20, &["rebase", "-s", &x, "-d", "@-"]);
            repo.jj(20, &["new", &y]);
            vec![head(&x), head(&y)]
        }
    };
    assert_eq!(std::fs::read_to_string(&calc).unwrap(), CHECKED);

    let mut a = vec![prompt(SESSION_A, 1, 5, "add subtraction")];
    a.extend(tool(
        SESSION_A,
        2,
        6,
        "Write",
        json!({"file_path": calc, "content": WRITTEN}),
    ));
    let mut b = vec![prompt(SESSION_B, 1, 10, "mark sub as checked")];
    b.extend(tool(
        SESSION_B,
        2,
        12,
        "Edit",
        json!({"file_path": calc, "old_string": "    return a - b\n", "new_string": "    return a - b  # checked\n", "replace_all": false}),
    ));
    let ta = transcript(env, "a.jsonl", &a);
    let tb = transcript(env, "b.jsonl", &b);
    env.run(&["capture", &ta, &tb]).ok();
    (c1, after)
}

/// The sessions `peat COMMIT` names for `commit`, by the route it took.
fn named(env: &Env, commit: &str) -> (String, Vec<String>) {
    let r = env.run(&[&commit[..10], "--json"]).ok();
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let sessions = v["result"]["sessions"].as_array().unwrap();
    (
        v["result"]["route"].as_str().unwrap_or("").to_string(),
        sessions
            .iter()
            .map(|s| s["session"].as_str().unwrap().to_string())
            .collect(),
    )
}

/// The commits `peat show SESSION` says the session made.
fn made(env: &Env, session: &str) -> Vec<String> {
    let r = env.run(&["show", session, "--json"]).ok();
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    v["made_commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["hash"].as_str().unwrap().to_string())
        .collect()
}

/// Every line of the rewritten file, now and at moments before and after the rewrite, names
/// the session and prompt that wrote it, and the rewritten commits name their sessions.
fn rewritten_commits_keep_their_lines_and_sessions(vcs: Vcs, how: Rewrite) {
    let env = Env::new();
    let repo = Repo::new(&env, vcs);
    let (c1, after) = rewritten(&repo, how);
    let file = "src/calc.py";
    let a = || Who::Agent(SESSION_A, "add subtraction");
    let b = || Who::Agent(SESSION_B, "mark sub as checked");
    let c1 = || Who::BeforeRecord(c1.clone());
    let now = lines(&[
        ("import math", a()),
        ("def add(a, b):", c1()),
        ("    return a + b", c1()),
        ("def sub(a, b):", a()),
        ("    return a - b  # checked", b()),
    ]);
    assert_eq!(blamed(&env, file, &[]), now, "now");
    assert_eq!(
        blamed(&env, file, &["--at", &at(21)]),
        now,
        "after the rewrite"
    );
    let (_, b_seq) = seqs(&env, file, 1);
    let after_b = format!("{}:{b_seq}", &SESSION_B[..8]);
    assert_eq!(
        blamed(&env, file, &["--at", &after_b]),
        now,
        "after B's edit"
    );
    let mut then = now;
    then[4] = ("    return a - b".to_string(), a());
    assert_eq!(
        blamed(&env, file, &["--at", &at(7)]),
        then,
        "after A's write"
    );

    let content = "content".to_string();
    match how {
        // A wrote two of the three lines the squashed commit added, B one.
        Rewrite::Squash => {
            assert_eq!(
                named(&env, &after[0]),
                (content, vec![SESSION_A.to_string()])
            );
            assert_eq!(made(&env, SESSION_A), vec![after[0].clone()]);
            assert_eq!(made(&env, SESSION_B), Vec::<String>::new());
        }
        Rewrite::Rebase => {
            assert_eq!(
                named(&env, &after[0]),
                (content.clone(), vec![SESSION_A.to_string()])
            );
            assert_eq!(
                named(&env, &after[1]),
                (content, vec![SESSION_B.to_string()])
            );
            assert_eq!(made(&env, SESSION_A), vec![after[0].clone()]);
            assert_eq!(made(&env, SESSION_B), vec![after[1].clone()]);
        }
    }
}

#[test]
fn in_git_a_squash_of_the_agents_commits_keeps_every_line_and_the_commit_its_session() {
    require_git();
    rewritten_commits_keep_their_lines_and_sessions(Vcs::Git, Rewrite::Squash);
}

#[test]
fn in_git_a_rebase_of_the_agents_commits_keeps_every_line_and_each_commit_its_session() {
    require_git();
    rewritten_commits_keep_their_lines_and_sessions(Vcs::Git, Rewrite::Rebase);
}

#[test]
fn in_jj_a_squash_of_the_agents_commits_keeps_every_line_and_the_commit_its_session() {
    if !have_jj() {
        return;
    }
    rewritten_commits_keep_their_lines_and_sessions(Vcs::Jj { colocate: false }, Rewrite::Squash);
}

#[test]
fn in_jj_a_rebase_of_the_agents_commits_keeps_every_line_and_each_commit_its_session() {
    if !have_jj() {
        return;
    }
    rewritten_commits_keep_their_lines_and_sessions(Vcs::Jj { colocate: false }, Rewrite::Rebase);
}

#[test]
fn in_jj_colocated_with_git_a_squash_and_a_rebase_keep_every_line_and_each_commit_its_session() {
    if !have_jj() {
        return;
    }
    for how in [Rewrite::Squash, Rewrite::Rebase] {
        rewritten_commits_keep_their_lines_and_sessions(Vcs::Jj { colocate: true }, how);
    }
}

#[test]
fn blame_walks_a_renamed_files_renames_once() {
    require_git();
    let env = Env::new();
    let repo = Repo::new(&env, Vcs::Git);
    story(&repo);
    // A git that notes each of its runs, in front of the real one.
    let path = std::env::var("PATH").unwrap();
    let real = std::env::split_paths(&path)
        .map(|d| d.join("git"))
        .find(|g| g.is_file())
        .unwrap();
    let shim = env.path("shim");
    std::fs::create_dir_all(&shim).unwrap();
    let runs = env.path("git-runs");
    std::fs::write(
        shim.join("git"),
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            runs.display(),
            real.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(shim.join("git"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = env
        .cmd()
        .env("PATH", format!("{}:{path}", shim.display()))
        .args(["blame", "src/maths.py"])
        .output()
        .unwrap();
    let r = crate::support::Run::of(out).ok();
    assert!(r.stdout.contains("add subtraction"), "{}", r.stdout);
    let runs = std::fs::read_to_string(&runs).unwrap();
    let walks: Vec<&str> = runs
        .lines()
        .filter(|l| l.contains(" log --follow -M --name-status "))
        .collect();
    assert_eq!(walks.len(), 1, "{runs}");
}
