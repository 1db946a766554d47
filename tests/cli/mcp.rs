//! `peat mcp` through a real MCP client (the SDK's, over the binary's stdio): it initializes,
//! lists the ten tools with their schemas, calls each against a recorded session, follows a
//! cursor to the end of a long answer, and gets tool errors for bad arguments while the
//! server goes on answering.

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::blame::{line, prompt, tool, transcript};
use crate::support::{Env, NOW, SESSION_A, git, peat, repo, require_git};

/// How many commands session A runs after writing the file: enough that its log is longer
/// than one page, as text and as JSON.
const STEPS: u32 = 70;

const WRITTEN: &str =
    "pub fn refill(rate: u32) -> u32 {\n    let burst = rate * 4;\n    burst.min(MAX_TOKENS)\n}\n";

/// A repository whose last commit holds the file session A wrote, session A captured (a
/// prompt, the write, many commands, a closing message), and one observation. Returns the
/// commit's hash.
fn recorded(env: &Env) -> String {
    repo(env);
    let work = env.path("work");
    let cwd = work.to_string_lossy().into_owned();
    let mut a = vec![prompt(
        SESSION_A,
        1,
        1,
        "write the refill function for the token bucket",
    )];
    a.extend(tool(
        SESSION_A,
        2,
        2,
        "Write",
        json!({"file_path": format!("{cwd}/src/limiter.rs"), "content": WRITTEN}),
    ));
    for i in 0..STEPS {
        let command = format!(
            "cargo test --package limiter step{i} -- {}",
            "x".repeat(160)
        );
        a.extend(tool(
            SESSION_A,
            10 + 2 * i,
            3,
            "Bash",
            json!({"command": command}),
        ));
    }
    a.push(line(
        SESSION_A,
        10 + 2 * STEPS,
        4,
        "assistant",
        json!({"message": {"id": "msg_end", "role": "assistant", "type": "message",
            "content": [{"type": "text", "text": "The refill function caps the burst at MAX_TOKENS."}]}}),
    ));
    let lines: Vec<String> = a
        .into_iter()
        .map(|l| l.replace("/home/dev/acme-api", &cwd))
        .collect();
    let t = transcript(env, "a.jsonl", &lines);
    peat(env, &["capture", &t]).ok();
    std::fs::write(work.join("src/limiter.rs"), WRITTEN).unwrap();
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "add the refill function"]);
    peat(
        env,
        &[
            "obs",
            "staging",
            "deploys go through the blue env first",
            "--session",
            SESSION_A,
            "--from",
            "1",
        ],
    )
    .ok();
    git(&work, &["rev-parse", "HEAD"])
}

/// The SDK's client, with `peat mcp` as its child process.
async fn connect(env: &Env) -> RunningService<RoleClient, ()> {
    let mut cmd = env.cmd();
    cmd.env("PEAT_NOW", NOW).arg("mcp");
    let (transport, _) = TokioChildProcess::builder(tokio::process::Command::from(cmd))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    ().serve(transport).await.unwrap()
}

async fn call(client: &RunningService<RoleClient, ()>, name: &str, args: Value) -> CallToolResult {
    let params = CallToolRequestParams::new(name.to_string())
        .with_arguments(args.as_object().unwrap().clone());
    client.call_tool(params).await.unwrap()
}

/// A successful call's structured answer and its text.
async fn answered(
    client: &RunningService<RoleClient, ()>,
    name: &str,
    args: Value,
) -> (Value, String) {
    let r = call(client, name, args.clone()).await;
    let text = text_of(&r);
    assert_ne!(r.is_error, Some(true), "{name} {args}: {text}");
    (r.structured_content.unwrap(), text)
}

fn text_of(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

/// A call that fails as a tool error (not a protocol error), with its sentence.
async fn refused(client: &RunningService<RoleClient, ()>, name: &str, args: Value) -> String {
    let r = call(client, name, args).await;
    assert_eq!(r.is_error, Some(true), "{}", text_of(&r));
    text_of(&r)
}

#[tokio::test]
async fn a_real_client_lists_the_ten_tools_and_every_one_answers_from_the_record() {
    require_git();
    let env = Env::new();
    let head = recorded(&env);
    let client = connect(&env).await;
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "peat");

    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "asof", "blame", "brief", "commit", "file", "log", "search", "sessions", "show",
            "subjects"
        ]
    );
    for t in &tools {
        assert!(
            t.description.as_ref().is_some_and(|d| d.len() > 40),
            "{}",
            t.name
        );
        let props = t.input_schema["properties"].as_object().unwrap();
        assert!(props.contains_key("cursor"), "{}", t.name);
        assert!(
            props.values().all(|p| p["description"].is_string()),
            "{}",
            t.name
        );
    }

    let (v, text) = answered(
        &client,
        "search",
        json!({"query": "refill", "keyword_only": true}),
    )
    .await;
    assert_eq!(v["answer"]["hits"][0]["session"], SESSION_A);
    assert!(text.contains("write the refill function"), "{text}");

    let (v, _) = answered(&client, "show", json!({"session": "3f6c"})).await;
    assert_eq!(v["answer"]["session"], SESSION_A);
    assert_eq!(v["answer"]["made_commits"][0]["hash"], head.as_str());
    let (_, text) = answered(&client, "show", json!({"session": "3f6c", "seq": 1})).await;
    assert!(
        text.contains("write the refill function for the token bucket"),
        "{text}"
    );

    let (v, text) = answered(&client, "blame", json!({"file": "src/limiter.rs:2"})).await;
    assert_eq!(
        v["answer"]["lines"],
        json!([{"commit": null, "edit": 0, "line": 2, "origin": "edit", "text": "    let burst = rate * 4;"}])
    );
    assert_eq!(v["answer"]["edits"][0]["session"], SESSION_A);
    assert!(text.contains("let burst"), "{text}");
    let (v, _) = answered(
        &client,
        "blame",
        json!({"file": "src/limiter.rs", "at": SESSION_A}),
    )
    .await;
    assert!(
        v["answer"]["at"].is_object() || v["answer"]["at"].is_string(),
        "{v}"
    );
    assert_eq!(v["answer"]["lines"].as_array().unwrap().len(), 4);

    let (v, _) = answered(&client, "file", json!({"path": "src/limiter.rs"})).await;
    assert_eq!(v["answer"]["touches"][0]["session"], SESSION_A);
    assert_eq!(v["answer"]["touches"][0]["op"], "write");

    let (v, text) = answered(&client, "commit", json!({"rev": &head[..8]})).await;
    assert_eq!(v["answer"]["result"]["route"], "content");
    assert_eq!(v["answer"]["result"]["sessions"][0]["session"], SESSION_A);
    assert!(text.contains("wrote 100% of its lines"), "{text}");

    let (v, _) = answered(&client, "asof", json!({"day": "2026-07-15"})).await;
    assert_eq!(v["answer"]["sessions"], 1);
    let (v, _) = answered(&client, "asof", json!({"day": "2026-07-13"})).await;
    assert_eq!(
        v["answer"]["sessions"], 0,
        "nothing was recorded by then: {v}"
    );

    let (v, text) = answered(&client, "sessions", json!({})).await;
    assert_eq!(v["answer"][0]["session"], SESSION_A);
    assert_eq!(v["shown"]["total"], 1);
    assert!(text.contains("3f6c2a9e"), "{text}");

    let (v, _) = answered(&client, "brief", json!({})).await;
    assert_eq!(v["answer"]["today"], "2026-07-20");
    assert_eq!(v["answer"]["last_session"]["session"], SESSION_A);

    let (v, _) = answered(&client, "subjects", json!({})).await;
    assert_eq!(v["answer"][0]["subject"], "staging");
    let (v, text) = answered(&client, "subjects", json!({"name": "staging"})).await;
    assert_eq!(
        v["answer"]["current"],
        "deploys go through the blue env first"
    );
    assert!(text.contains("staging"), "{text}");

    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_long_log_comes_in_pages_that_a_cursor_follows_to_its_end() {
    require_git();
    let env = Env::new();
    recorded(&env);
    let client = connect(&env).await;
    let whole: Value = serde_json::from_str(
        &peat(&env, &["log", SESSION_A, "--json", "--budget", "0"])
            .ok()
            .stdout,
    )
    .unwrap();
    let total = whole["entries"].as_array().unwrap().len();

    let (mut seqs, mut text, mut pages) = (Vec::new(), String::new(), 0);
    let mut args = json!({"session": "3f6c"});
    loop {
        let (v, t) = answered(&client, "log", args.clone()).await;
        pages += 1;
        assert_eq!(v["shown"]["total"], total);
        assert_eq!(
            v["answer"]["session"], SESSION_A,
            "each page keeps the rest of the answer"
        );
        seqs.extend(
            v["answer"]["entries"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["seq"].clone()),
        );
        let Some(next) = v["next_cursor"].as_str() else {
            assert!(!t.contains("… more"), "{t}");
            text.push_str(&t);
            break;
        };
        assert!(
            t.contains(&format!("cursor \"{next}\"")),
            "the text says how to go on: {t}"
        );
        text.push_str(t.rsplit_once("… more").unwrap().0);
        args["cursor"] = json!(next);
        assert!(pages < 50, "the cursor never ends");
    }
    assert!(pages > 1, "the log fits one page: the test proves nothing");
    let all: Vec<Value> = whole["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].clone())
        .collect();
    assert_eq!(seqs, all, "the pages hold every entry once, in order");
    let printed = peat(&env, &["log", SESSION_A, "--budget", "0"]).ok().stdout;
    assert_eq!(
        text, printed,
        "the text pages join into what the command prints"
    );

    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_bad_argument_is_a_tool_error_and_the_server_answers_after_it() {
    require_git();
    let env = Env::new();
    recorded(&env);
    let client = connect(&env).await;

    for (tool, args, said) in [
        (
            "log",
            json!({"session": 42}),
            "the arguments to `log` are not valid",
        ),
        (
            "log",
            json!({"sesion": "3f6c"}),
            "takes no argument `sesion`",
        ),
        ("search", json!({}), "missing field `query`"),
        // The command's own sentence: what is wrong, and what to run.
        ("log", json!({"session": "ffffffff"}), "peat: "),
        (
            "blame",
            json!({"file": "src/limiter.rs", "at": "not a time"}),
            "peat: ",
        ),
        (
            "log",
            json!({"session": "3f6c", "cursor": "not-a-cursor"}),
            "leave it out for the first page",
        ),
        ("commit", json!({"rev": "HEAD~1"}), "is not a commit"),
        ("commit", json!({"rev": "abcdef12"}), "as a commit"),
        ("forget", json!({}), "there is no tool `forget`"),
    ] {
        let e = refused(&client, tool, args).await;
        assert!(e.contains(said), "{tool}: {e}");
    }

    let (v, _) = answered(&client, "sessions", json!({})).await;
    assert_eq!(v["answer"][0]["session"], SESSION_A);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_tools_answer_while_a_writer_holds_the_store() {
    require_git();
    let env = Env::new();
    recorded(&env);
    let client = connect(&env).await;
    let _writer = env.hold_lock("peat capture (a test)");
    let (v, _) = answered(&client, "log", json!({"session": "3f6c"})).await;
    assert_eq!(v["answer"]["session"], SESSION_A);
    let (v, _) = answered(
        &client,
        "search",
        json!({"query": "refill", "keyword_only": true}),
    )
    .await;
    assert_eq!(v["answer"]["hits"][0]["session"], SESSION_A);
    client.cancel().await.unwrap();
}

#[test]
fn hook_install_registers_the_server_once_beside_the_users_own_and_check_reports_it() {
    let env = Env::new();
    std::fs::create_dir_all(env.path("work/.git")).unwrap();
    std::fs::create_dir_all(env.path("home/.claude")).unwrap();
    std::fs::create_dir_all(env.path("home/.codex")).unwrap();
    let claude_json = env.path("home/.claude.json");
    let codex_toml = env.path("home/.codex/config.toml");
    std::fs::write(
        &claude_json,
        r#"{"theme": "dark", "mcpServers": {"github": {"type": "stdio", "command": "gh-mcp", "args": []}}}"#,
    )
    .unwrap();
    std::fs::write(
        &codex_toml,
        "# mine\nmodel = \"o4\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n",
    )
    .unwrap();

    let before = env.run(&["hook", "install", "--check"]);
    assert_eq!(before.code, 1, "{}", before.stderr);
    assert!(
        before.stderr.contains(
            ".claude.json: peat mcp not registered for Claude Code — run: peat hook install"
        ),
        "{}",
        before.stderr
    );

    for _ in 0..2 {
        env.run(&["hook", "install"]).ok();
        env.run(&["hook", "install", "--codex"]).ok();
    }
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&claude_json).unwrap()).unwrap();
    assert_eq!(v["theme"], "dark");
    assert_eq!(v["mcpServers"]["github"]["command"], "gh-mcp");
    let ours = &v["mcpServers"]["peat"];
    assert_eq!(ours["args"], json!(["mcp"]));
    assert!(
        ours["command"].as_str().unwrap().ends_with("/peat"),
        "{ours}"
    );
    assert_eq!(v["mcpServers"].as_object().unwrap().len(), 2);
    let toml = std::fs::read_to_string(&codex_toml).unwrap();
    assert!(
        toml.starts_with("# mine\nmodel = \"o4\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n"),
        "{toml}"
    );
    assert_eq!(toml.matches("[mcp_servers.peat]").count(), 1, "{toml}");
    assert!(toml.contains("args = [\"mcp\"]"), "{toml}");

    let again = env.run(&["hook", "install"]).ok();
    assert!(
        again
            .stderr
            .contains(".claude.json: peat mcp already registered"),
        "{}",
        again.stderr
    );
    let check = env.run(&["hook", "install", "--check"]).ok();
    for file in [".claude.json", ".codex/config.toml"] {
        assert!(
            check.stderr.lines().any(|l| l.starts_with('✓')
                && l.contains(file)
                && l.contains("peat mcp registered")),
            "{file}: {}",
            check.stderr
        );
    }
}

#[test]
fn setup_registers_the_server_for_each_agent_found_in_a_project_and_for_the_user() {
    for args in [
        &["setup", "--no-model"][..],
        &["setup", "--user", "--no-model"],
    ] {
        let env = Env::new();
        std::fs::create_dir_all(env.path("work/.git")).unwrap();
        std::fs::create_dir_all(env.path("home/.claude")).unwrap();
        std::fs::create_dir_all(env.path("home/.codex")).unwrap();
        let r = env.run(args).ok();
        let claude = std::fs::read_to_string(env.path("home/.claude.json")).unwrap();
        let v: Value = serde_json::from_str(&claude).unwrap();
        assert_eq!(
            v["mcpServers"]["peat"]["args"],
            json!(["mcp"]),
            "{args:?}: {}",
            r.stderr
        );
        let codex = std::fs::read_to_string(env.path("home/.codex/config.toml")).unwrap();
        assert!(codex.contains("[mcp_servers.peat]"), "{args:?}: {codex}");
    }
}
