//! A machine-wide record and reads scoped by project and agent: `peat setup --user`, the
//! user-level ledger the hooks of every project without its own capture into, reads scoped
//! to the repository they run in (`--project`, `--all-projects`), a project ledger's import
//! of that project alone, `--agent` on every read, and no ledger made unasked.

use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::{Claude, Env, NOW, Run, SESSION_A, SESSION_B, git, require_git};

const SESSION_WT: &str = "5c5c5c5c-0000-4b7e-9f0a-000000000003";
const CODEX_A: &str = "019a7c3e-5b21-7d40-9c1e-2f6a8b0c4d99";

/// A machine with two repositories, `acme` (with a git worktree `acme-wt`) and `bolt`, and
/// the agents' transcripts of them under HOME: Claude Code in acme, in its worktree and in
/// bolt, Codex in acme.
struct Machine {
    env: Env,
    acme: PathBuf,
    worktree: PathBuf,
    bolt: PathBuf,
}

impl Machine {
    fn new() -> Machine {
        let env = Env::new();
        let code = std::fs::canonicalize(env.path("work")).unwrap();
        let acme = code.join("acme");
        let bolt = code.join("bolt");
        for repo in [&acme, &bolt] {
            std::fs::create_dir_all(repo).unwrap();
            std::fs::write(repo.join("README.md"), "# r\n").unwrap();
            git(repo, &["init", "-q", "-b", "main"]);
            git(repo, &["add", "."]);
            git(repo, &["commit", "-q", "-m", "start"]);
        }
        let worktree = code.join("acme-wt");
        git(
            &acme,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "wt",
                worktree.to_str().unwrap(),
            ],
        );
        let m = Machine {
            env,
            acme,
            worktree,
            bolt,
        };
        m.claude(SESSION_A, &m.acme);
        m.claude(SESSION_WT, &m.worktree);
        m.claude(SESSION_B, &m.bolt);
        m.codex(CODEX_A, &m.acme);
        m
    }

    /// A Claude Code session that worked in `cwd`, where Claude Code keeps it.
    fn claude(&self, session: &str, cwd: &Path) {
        let text = Claude::session_of(session, 1)
            .text()
            .replace("/home/dev/acme-api", cwd.to_str().unwrap());
        let slug = cwd.to_str().unwrap().replace('/', "-");
        let path = self
            .env
            .path(&format!("home/.claude/projects/{slug}/{session}.jsonl"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// A Codex rollout that worked in `cwd`, where Codex keeps it.
    fn codex(&self, session: &str, cwd: &Path) {
        let line = |hh_mm: &str, ty: &str, payload: Value| {
            json!({"timestamp": format!("2026-07-14T{hh_mm}:00.000Z"), "type": ty, "payload": payload})
                .to_string()
        };
        let lines = [
            line(
                "10:00",
                "session_meta",
                json!({"id": session, "cwd": cwd, "originator": "codex_cli_rs",
                    "cli_version": "0.130.0", "source": "cli"}),
            ),
            line(
                "10:00",
                "response_item",
                json!({"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": "port the rate limiter to the router"}]}),
            ),
            line(
                "10:01",
                "response_item",
                json!({"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": "The rate limiter now guards the router."}]}),
            ),
        ];
        let path = self.env.path(&format!(
            "home/.codex/sessions/2026/07/14/rollout-2026-07-14T10-00-00-{session}.jsonl"
        ));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, lines.join("\n") + "\n").unwrap();
    }

    /// `peat ARGS` in `dir` with no PEAT_DB: the store is found, not named.
    fn peat(&self, dir: &Path, args: &[&str]) -> Run {
        Run::of(
            self.env
                .cmd()
                .env_remove("PEAT_DB")
                .env("PEAT_NOW", NOW)
                .current_dir(dir)
                .args(args)
                .output()
                .unwrap(),
        )
    }

    fn user_store(&self) -> PathBuf {
        self.env.path("home/.local/share/peat/db")
    }
}

/// The session ids `sessions --json` lists.
fn listed(r: &Run) -> BTreeSet<String> {
    let v: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {r:?}"));
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s["session"].as_str().unwrap().to_string())
        .collect()
}

fn ids(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_user_level_ledger_set_up_once_holds_every_project_and_reads_the_one_they_run_in() {
    require_git();
    let m = Machine::new();
    let home = m.env.path("home");
    let r = m.peat(&home, &["setup", "--user", "--no-model"]).ok();
    assert!(
        r.stderr.contains("imported 4 transcripts (4 sessions)"),
        "{}",
        r.stderr
    );
    assert!(m.user_store().join("fjall").is_dir(), "{}", r.stderr);
    // Its hooks are every project's: Claude Code's and Codex's user-level settings.
    for config in ["home/.claude/settings.json", "home/.codex/hooks.json"] {
        let text = std::fs::read_to_string(m.env.path(config)).unwrap();
        assert!(text.contains("peat"), "{config}: {text}");
    }
    assert!(m.env.path("home/.claude/skills/peat/SKILL.md").exists());
    // Set up once: a second run changes nothing and captures nothing new.
    let again = m.peat(&home, &["setup", "--user", "--no-model"]).ok();
    assert!(
        again.stderr.contains("= already current"),
        "{}",
        again.stderr
    );
    assert!(
        again.stderr.contains("(0 new, 0 revised)"),
        "{}",
        again.stderr
    );

    // No project has a ledger of its own, and none was made in either.
    let acme = [SESSION_A, SESSION_WT, CODEX_A];
    let sessions = |dir: &Path, more: &[&str]| {
        let mut args = vec!["sessions", "--json"];
        args.extend(more);
        listed(&m.peat(dir, &args).ok())
    };
    let all = ids(&[SESSION_A, SESSION_WT, CODEX_A, SESSION_B]);
    assert_eq!(sessions(&m.acme, &[]), ids(&acme));
    std::fs::create_dir_all(m.acme.join("src")).unwrap();
    assert_eq!(sessions(&m.acme.join("src"), &[]), ids(&acme));
    assert_eq!(sessions(&m.worktree, &[]), ids(&acme), "a worktree is acme");
    assert_eq!(sessions(&m.bolt, &[]), ids(&[SESSION_B]));
    assert_eq!(sessions(&m.acme, &["--all-projects"]), all);
    assert_eq!(
        sessions(&home, &[]),
        all,
        "outside a repository: every project"
    );
    let bolt = m.bolt.to_str().unwrap();
    assert_eq!(sessions(&m.acme, &["--project", bolt]), ids(&[SESSION_B]));
    assert!(!m.acme.join(".peat/db").exists() && !m.bolt.join(".peat/db").exists());
    // A session named by its id is read past the default scope: bolt's, from acme.
    let events = m
        .peat(&m.acme, &["events", "--json", "--session", &SESSION_B[..8]])
        .ok();
    assert!(
        events.stdout.lines().count() > 3 && events.stdout.contains(SESSION_B),
        "{events:?}"
    );

    // A hook fired in bolt, which has no ledger of its own, captures into the user-level one.
    const SESSION_NEW: &str = "9e9e9e9e-0000-4b7e-9f0a-000000000004";
    m.claude(SESSION_NEW, &m.bolt);
    let slug = m.bolt.to_str().unwrap().replace('/', "-");
    let transcript = m
        .env
        .path(&format!("home/.claude/projects/{slug}/{SESSION_NEW}.jsonl"));
    let mut hook = m.env.cmd();
    hook.env_remove("PEAT_DB").current_dir(&m.bolt).arg("hook");
    let stdin = json!({"hook_event_name": "Stop", "session_id": SESSION_NEW,
        "transcript_path": transcript, "cwd": m.bolt, "stop_hook_active": false});
    let r = Run::with_stdin(&mut hook, stdin.to_string().into_bytes());
    assert_eq!(r.code, 0, "{r:?}");
    crate::support::eventually("the hook's capture in bolt", || {
        sessions(&m.bolt, &[]).contains(SESSION_NEW)
    });
    assert!(!sessions(&m.acme, &[]).contains(SESSION_NEW));
    assert!(!m.bolt.join(".peat/db").exists());

    // The brief reads the same scope: bolt's files are not acme's.
    let brief = m.peat(&m.acme, &["brief", "--json"]).ok();
    assert!(!brief.stdout.contains("/bolt/"), "{}", brief.stdout);
    let brief = m.peat(&m.bolt, &["brief", "--json"]).ok();
    assert!(brief.stdout.contains("/bolt/"), "{}", brief.stdout);
    assert!(!brief.stdout.contains("/acme"), "{}", brief.stdout);

    // doctor says which store and why, and what reads see.
    let d = m.peat(&m.acme, &["doctor", "--json"]);
    let v: Value = serde_json::from_str(&d.stdout).unwrap_or_else(|e| panic!("{e}: {d:?}"));
    assert_eq!(
        Path::new(v["store"].as_str().unwrap()),
        m.user_store(),
        "{v}"
    );
    assert!(
        v["store_why"].as_str().unwrap().contains("user-level"),
        "{v}"
    );
    assert!(
        v["scope"].as_str().unwrap().contains("this repository's"),
        "{v}"
    );
}

#[test]
fn a_project_ledgers_import_leaves_out_other_projects_and_says_how_to_take_them() {
    require_git();
    let m = Machine::new();
    let r = m.peat(&m.acme, &["import"]).ok();
    assert!(
        r.stderr.contains("left out 1 session of other projects")
            && r.stderr.contains("`peat import --all`"),
        "{}",
        r.stderr
    );
    assert!(m.acme.join(".peat/db").exists());
    // Its worktree's and Codex's sessions in it are the project's.
    let got = listed(&m.peat(&m.acme, &["sessions", "--json"]).ok());
    assert_eq!(got, ids(&[SESSION_A, SESSION_WT, CODEX_A]));
    let r = m.peat(&m.acme, &["import", "--all"]).ok();
    assert!(!r.stderr.contains("left out"), "{}", r.stderr);
    let got = listed(&m.peat(&m.acme, &["sessions", "--json"]).ok());
    assert!(got.contains(SESSION_B), "{got:?}");
}

#[test]
fn agent_narrows_sessions_log_and_recall_and_every_line_names_its_agent() {
    require_git();
    let m = Machine::new();
    // A ledger PEAT_DB names is read whole: only --agent narrows it.
    let r = m.env.run(&["import", m.env.path("home").to_str().unwrap()]);
    r.ok();
    let codex = m.env.run(&["--agent", "codex", "sessions", "--json"]).ok();
    assert_eq!(listed(&codex), ids(&[CODEX_A]));
    let after = m.env.run(&["sessions", "--json", "--agent", "claude"]).ok();
    assert_eq!(listed(&after), ids(&[SESSION_A, SESSION_WT, SESSION_B]));
    let text = m.env.run(&["sessions"]).ok();
    let lines: Vec<&str> = text.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", text.stdout);
    for l in &lines {
        assert!(
            l.contains(" claude ") || l.contains(" codex "),
            "no agent in {l:?}"
        );
    }

    // log: a session of another agent is outside the scope, said so.
    let log = m.env.run(&["--agent", "codex", "log", &SESSION_A[..8]]);
    assert_eq!(log.code, 1, "{log:?}");
    assert!(
        log.stderr.contains("outside this read's scope") && log.stderr.contains("no --agent"),
        "{}",
        log.stderr
    );
    let log = m.env.run(&["--agent", "codex", "log", &CODEX_A[..8]]).ok();
    assert!(log.stdout.starts_with("== log "), "{}", log.stdout);
    assert!(log.stdout.lines().next().unwrap().contains(" · codex · "));

    // recall: both agents said "rate limiter"; --agent keeps one's.
    let hits = |args: &[&str]| {
        let mut all = vec!["recall", "--keyword-only", "--json", "rate", "limiter"];
        all.extend(args);
        let r = m.env.run(&all).ok();
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["session"].as_str().unwrap().to_string())
            .collect::<BTreeSet<_>>()
    };
    assert!(hits(&[]).contains(CODEX_A) && hits(&[]).contains(SESSION_A));
    assert_eq!(hits(&["--agent", "codex"]), ids(&[CODEX_A]));
    assert!(!hits(&["--agent", "claude"]).contains(CODEX_A));
    let r = m
        .env
        .run(&["recall", "--keyword-only", "router", "--agent", "codex"])
        .ok();
    assert!(r.stdout.contains(" · codex · "), "{}", r.stdout);

    // An unknown name is refused with the known ones.
    let bad = m.env.run(&["--agent", "gpt", "sessions"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.starts_with("peat: no agent is called \"gpt\"")
            && bad.stderr.contains("claude, codex"),
        "{}",
        bad.stderr
    );
}

#[test]
fn outside_any_repository_with_no_user_ledger_nothing_is_made_and_peat_says_how_to_choose() {
    let env = Env::new();
    let work = env.path("work");
    let no_db =
        |args: &[&str]| Run::of(env.cmd().env_remove("PEAT_DB").args(args).output().unwrap());
    for args in [&["import"][..], &["sessions"], &[], &["recall", "x"]] {
        let r = no_db(args);
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert!(
            r.stderr.starts_with("peat: no ledger here: ")
                && r.stderr.contains("peat setup --user")
                && r.stderr.contains("inside a repository"),
            "{args:?}: {}",
            r.stderr
        );
        assert!(!work.join(".peat").exists(), "{args:?} made a ledger");
    }
    // A hook there still exits 0, and makes nothing either.
    let mut c = env.cmd();
    c.env_remove("PEAT_DB").arg("hook");
    let r = Run::with_stdin(
        &mut c,
        br#"{"hook_event_name":"SessionStart","session_id":"s-1"}"#.to_vec(),
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!work.join(".peat").exists());
}

/// A database of OpenCode's and one of Goose's where each keeps it under HOME, holding a
/// session in acme, one in its worktree and one in bolt each; the connections stay open,
/// as the harnesses' do.
struct Databases {
    opencode: rusqlite::Connection,
    goose: rusqlite::Connection,
}

const OPENCODE_ACME: &str = "ses_0001acmeAAAAAAAAAAAAAAAA";
const OPENCODE_WT: &str = "ses_0002worktreeAAAAAAAAAAAA";
const OPENCODE_BOLT: &str = "ses_0003boltAAAAAAAAAAAAAAAA";
const GOOSE_ACME: &str = "20260714_1";
const GOOSE_WT: &str = "20260714_2";
const GOOSE_BOLT: &str = "20260714_3";

impl Machine {
    /// The schema of `agent`'s fixture file `name`: its statements before the first INSERT.
    fn schema(agent: &str, name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(agent)
            .join(name);
        let sql = std::fs::read_to_string(path).unwrap();
        sql.split("INSERT INTO `").next().unwrap().to_string()
    }

    fn databases(&self) -> Databases {
        let open = |rel: &str, schema: &str| {
            let path = self.env.path(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let conn = rusqlite::Connection::open(path).unwrap();
            conn.execute_batch("PRAGMA journal_mode=WAL;").unwrap();
            conn.execute_batch(schema).unwrap();
            conn
        };
        let opencode = open(
            "home/.local/share/opencode/opencode.db",
            &Self::schema("opencode", "opencode.sql"),
        );
        let goose = open(
            "home/.local/share/goose/sessions/sessions.db",
            &std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/goose/schema.sql"),
            )
            .unwrap(),
        );
        // OpenCode's sessions belong to a project row (its foreign key).
        opencode
            .execute_batch("INSERT INTO `project` VALUES ('p', '/', 'git', NULL, 1784019600000, 1784019600000);")
            .unwrap();
        let dbs = Databases { opencode, goose };
        let places = [
            (OPENCODE_ACME, GOOSE_ACME, &self.acme),
            (OPENCODE_WT, GOOSE_WT, &self.worktree),
            (OPENCODE_BOLT, GOOSE_BOLT, &self.bolt),
        ];
        for (n, (opencode, goose, dir)) in places.into_iter().enumerate() {
            dbs.opencode_session(opencode, dir, n as i64);
            dbs.opencode_prompt(opencode, 1, "add a token bucket limiter");
            dbs.goose_session(goose, dir, n as i64);
            dbs.goose_prompt(goose, "add a token bucket limiter");
        }
        dbs
    }
}

impl Databases {
    fn opencode_session(&self, id: &str, dir: &Path, n: i64) {
        let t = 1_784_019_600_000 + n * 60_000;
        self.opencode
            .execute(
                "INSERT INTO `session` (`id`, `project_id`, `slug`, `directory`, `title`, `version`, `time_created`, `time_updated`)
                 VALUES (?1, 'p', 'calm-otter', ?2, 'limiter', '1.18.34', ?3, ?3)",
                rusqlite::params![id, dir.to_str().unwrap(), t],
            )
            .unwrap();
    }

    /// The person's prompt `text`, the `n`th message of OpenCode session `id`.
    fn opencode_prompt(&self, id: &str, n: i64, text: &str) {
        let t = 1_784_019_660_000 + n * 1_000;
        let message = format!("msg_{id}_{n}");
        let data = serde_json::json!({"role": "user", "time": {"created": t}, "agent": "build",
            "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}});
        self.opencode
            .execute(
                "INSERT INTO `message` VALUES (?1, ?2, ?3, ?3, ?4)",
                rusqlite::params![message, id, t, data.to_string()],
            )
            .unwrap();
        let part = serde_json::json!({"type": "text", "text": text});
        self.opencode
            .execute(
                "INSERT INTO `part` VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
                rusqlite::params![format!("prt_{id}_{n}"), message, id, t, part.to_string()],
            )
            .unwrap();
    }

    fn goose_session(&self, id: &str, dir: &Path, n: i64) {
        self.goose
            .execute(
                "INSERT INTO sessions (id, name, session_type, working_dir, created_at, updated_at)
                 VALUES (?1, 'limiter', 'user', ?2, datetime(1784019600 + ?3 * 60, 'unixepoch'), datetime(1784019600, 'unixepoch'))",
                rusqlite::params![id, dir.to_str().unwrap(), n],
            )
            .unwrap();
    }

    fn goose_prompt(&self, id: &str, text: &str) {
        let content = serde_json::json!([{"type": "text", "text": text}]);
        self.goose
            .execute(
                "INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json)
                 VALUES (?1, 'user', ?2, 1784019660, '{\"userVisible\":true,\"agentVisible\":true}')",
                rusqlite::params![id, content.to_string()],
            )
            .unwrap();
    }
}

#[test]
fn a_project_ledger_takes_only_its_projects_sessions_of_a_database_and_the_rest_for_all() {
    require_git();
    let m = Machine::new();
    let dbs = m.databases();
    let r = m.peat(&m.acme, &["import"]).ok();
    // bolt's Claude Code session, and its OpenCode and Goose sessions.
    assert!(
        r.stderr.contains("left out 3 sessions of other projects"),
        "{}",
        r.stderr
    );
    let ours = ids(&[
        SESSION_A,
        SESSION_WT,
        CODEX_A,
        OPENCODE_ACME,
        OPENCODE_WT,
        GOOSE_ACME,
        GOOSE_WT,
    ]);
    let got = listed(&m.peat(&m.acme, &["sessions", "--json"]).ok());
    assert_eq!(got, ours);

    // Nothing new: nothing read, nothing written, nothing said of other projects.
    let r = m.peat(&m.acme, &["import"]).ok();
    assert!(
        r.stderr.contains("(0 new, 0 revised)") && !r.stderr.contains("left out"),
        "{}",
        r.stderr
    );

    // Both projects' sessions grow: only acme's growth is taken.
    for (opencode, goose) in [(OPENCODE_ACME, GOOSE_ACME), (OPENCODE_BOLT, GOOSE_BOLT)] {
        dbs.opencode_prompt(opencode, 2, "now refill it");
        dbs.goose_prompt(goose, "now refill it");
    }
    let r = m.peat(&m.acme, &["import"]).ok();
    assert!(
        r.stderr.contains("(2 new, 0 revised)")
            && r.stderr.contains("left out 2 sessions of other projects"),
        "{}",
        r.stderr
    );
    assert_eq!(listed(&m.peat(&m.acme, &["sessions", "--json"]).ok()), ours);

    // Named folders are read without the sweep's memory: the databases, unchanged since a
    // capture of this project's sessions, are not read again (only the three JSONL
    // sessions of acme are), yet the sessions they hold of bolt are counted as left out
    // with bolt's Claude Code session.
    let home = m.env.path("home");
    let r = m.peat(&m.acme, &["import", home.to_str().unwrap()]).ok();
    assert!(
        r.stderr.contains("(3 sessions)")
            && r.stderr.contains("(0 new, 0 revised)")
            && r.stderr.contains("left out 3 sessions of other projects"),
        "{}",
        r.stderr
    );
    // --all takes the rest, though neither database changed since.
    m.peat(&m.acme, &["import", "--all"]).ok();
    let got = listed(&m.peat(&m.acme, &["sessions", "--json"]).ok());
    assert!(
        got.contains(OPENCODE_BOLT) && got.contains(GOOSE_BOLT),
        "{got:?}"
    );
    // What the project ledger holds, taken in three imports and two places, is what one
    // capture of every session writes: the seqs are the source's.
    let whole = m.env.run(&["import", m.env.path("home").to_str().unwrap()]);
    whole.ok();
    let project = m.peat(&m.acme, &["events", "--json"]).ok();
    assert_eq!(project.stdout, m.env.dump());
    drop(dbs);
}

#[test]
fn a_scoped_brief_counts_what_its_projects_sessions_did_each_day_not_an_even_share() {
    require_git();
    let m = Machine::new();
    // An acme session over two days: a passing call on the first; a passing and a failing
    // one on the second.
    const SPAN: &str = "5a5a5a5a-0000-4b7e-9f0a-000000000005";
    let mut c = Claude::new(SPAN);
    c.user("start the limiter")
        .bash("t1", "cargo build", "built", false);
    let first_day = c.lines.len();
    c.user("now test it")
        .bash("t2", "cargo test", "ok", false)
        .bash("t3", "cargo test", "FAILED", true);
    for line in &mut c.lines[first_day..] {
        *line = line.replace("2026-07-14T", "2026-07-15T");
    }
    let acme = m.acme.to_str().unwrap();
    let slug = acme.replace('/', "-");
    let path = m
        .env
        .path(&format!("home/.claude/projects/{slug}/{SPAN}.jsonl"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, c.text().replace("/home/dev/acme-api", acme)).unwrap();
    let home = m.env.path("home");
    m.peat(&home, &["setup", "--user", "--no-model"]).ok();
    let brief = m.peat(&m.acme, &["brief", "--json"]).ok();
    let v: Value = serde_json::from_str(&brief.stdout).unwrap();
    let day = |date: &str| {
        let d = v["days"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["date"] == date)
            .unwrap_or_else(|| panic!("{date}: {v}"));
        let n = |k: &str| d[k].as_i64().unwrap();
        (n("prompts"), n("tools"), n("fails"))
    };
    // The 14th: its first prompt and call beside acme's other three sessions' (bolt's are
    // not acme's); the 15th: its second prompt and the two calls, one failed. An even share
    // of the session's counts would give each day one failure and two calls.
    assert_eq!(day("2026-07-14"), (4, 5, 0), "{v}");
    assert_eq!(day("2026-07-15"), (1, 2, 1), "{v}");
}
