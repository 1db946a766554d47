//! `peat mcp`: the reads as tools of an MCP server on stdio, for agents that speak MCP.
//!
//! Each call runs the read's own command (this binary, `--json` for the structured answer and
//! again for its text), so a tool answers exactly what the command prints and no read is
//! written twice. A child per call also keeps the protocol's stdout free of anything a read
//! prints, and opens the store as every read does: never holding it between calls, never
//! waiting for a writer (`PEAT_LOCK_WAIT_SECS=0`: a read that would have to wait says the
//! store is busy instead).

mod page;
mod tools;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use clap::Args;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool as McpTool,
    ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Value, json};

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use page::Cursor;
use tools::{Read, Tool};

/// Serve peat's reads to an agent over MCP (stdio)
///
/// The tools are the reads: search, show, log, blame, file, commit, asof, sessions, brief,
/// subjects. Each answers with the JSON its command prints with `--json` and a short text,
/// paged with a cursor. Read-only: it never waits for a writer. `peat setup` and
/// `peat hook install` register it for Claude Code and Codex.
#[derive(Args, Debug)]
pub(crate) struct McpArgs {}

/// What the server tells a client about itself.
const INSTRUCTIONS: &str = "peat records coding agents' sessions (Claude Code, Codex and others) into one ledger. These tools read it: `brief` for recent work, `search` for what was said or done, `sessions`/`log`/`show` for a session, `blame`/`file`/`commit` for who wrote code and why. Each answer's structured content is {answer: what the command prints with --json, shown: which entries of its list this page holds, next_cursor}; its text is the command's own. Answers are paged: when one ends with a next_cursor, call the tool again with the same arguments and that cursor for more.";

pub(crate) fn run(ctx: &Ctx, _args: &McpArgs) -> Result<u8, CliError> {
    let server = Server {
        exe: ctx.exe.clone(),
        tools: tools::all(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::user(format!("cannot start the MCP server: {e}")))?;
    runtime.block_on(async {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| CliError::user(format!("the MCP client did not start a session: {e}")))?;
        running
            .waiting()
            .await
            .map_err(|e| CliError::user(format!("the MCP server stopped: {e}")))?;
        Ok(0)
    })
}

struct Server {
    /// The binary whose commands answer the tools.
    exe: PathBuf,
    tools: Vec<Tool>,
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("peat", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.tools.iter().map(listed).collect(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<McpTool> {
        self.tools.iter().find(|t| t.name == name).map(listed)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = self.tools.iter().find(|t| t.name == request.name) else {
            let names: Vec<&str> = self.tools.iter().map(|t| t.name).collect();
            return Ok(failed(format!(
                "there is no tool `{}`; the tools are: {}",
                request.name,
                names.join(", ")
            ))
            .into());
        };
        let args = request.arguments.unwrap_or_default();
        let cursor = match args.get(tools::CURSOR) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                return Ok(
                    failed("`cursor` is a string: pass `next_cursor` as it was given").into(),
                );
            }
        };
        let read = match tool.read(args) {
            Ok(read) => read,
            Err(why) => {
                return Ok(failed(format!(
                    "{why}. The tool's input schema says what each argument takes."
                ))
                .into());
            }
        };
        let exe = self.exe.clone();
        let name = tool.name;
        let answered =
            tokio::task::spawn_blocking(move || answer(&exe, name, &read, cursor.as_deref()))
                .await
                .unwrap_or_else(|e| failed(format!("the read stopped unexpectedly: {e}")));
        Ok(answered.into())
    }
}

/// A tool as the client lists it: read-only, answering from the record alone.
fn listed(t: &Tool) -> McpTool {
    McpTool::new(t.name, t.description, t.schema.clone())
        .with_title(t.title)
        .with_annotations(
            ToolAnnotations::with_title(t.title)
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        )
}

/// A tool error: what was wrong, and what to do.
fn failed(why: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(why)])
}

/// What a child `peat` printed, and how it ended.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn peat(exe: &Path, argv: &[String]) -> Ran {
    let out = Command::new(exe)
        .args(argv)
        .env("PEAT_LOCK_WAIT_SECS", "0")
        // The server pages an answer itself, by its cursor: the child gives it whole.
        .env("PEAT_BUDGET", "0")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output();
    match out {
        Ok(o) => Ran {
            code: o.status.code(),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        },
        Err(e) => Ran {
            code: None,
            stdout: String::new(),
            stderr: format!("peat: cannot run {}: {e}", exe.display()),
        },
    }
}

/// Answer one call: the read's JSON and text, run side by side, and the page `cursor` asks for.
fn answer(exe: &Path, tool: &str, read: &Read, cursor: Option<&str>) -> CallToolResult {
    let json_argv = read.argv(true);
    let at = match cursor {
        None => Cursor::default(),
        Some(c) => match Cursor::decode(c, tool, &json_argv) {
            Some(at) => at,
            None => {
                return failed(format!(
                    "that cursor is not one `{tool}` handed out for these arguments: pass `next_cursor` from the previous page with the same other arguments, or leave it out for the first page"
                ));
            }
        },
    };
    let (json, text) = std::thread::scope(|s| {
        let text = s.spawn(|| peat(exe, &read.argv(false)));
        (peat(exe, &json_argv), text.join())
    });
    // Exit 1 is "nothing found": its JSON is still the answer.
    let parsed = match json.code {
        Some(0 | 1) => serde_json::from_str::<Value>(&json.stdout).ok(),
        _ => None,
    };
    let Some(value) = parsed else {
        return failed(said(&json));
    };
    if let Some(kind) = read.reading
        && value.pointer("/reading/kind").and_then(Value::as_str) != Some(kind)
    {
        return failed(format!(
            "nothing recorded answers to {:?} as a {kind}; `search` looks for it as words",
            read.words.join(" ")
        ));
    }
    let text = text.unwrap_or_else(|_| Ran {
        code: None,
        stdout: String::new(),
        stderr: String::new(),
    });
    let page = page::cut(value, read.list, &text.stdout, at);
    let next = page.next.map(|c| c.encode(tool, &json_argv));
    let mut rendered = page.text;
    // Notes a person sees on stderr (how far behind the views are, what was searched).
    for note in text.stderr.lines().filter(|l| !l.trim().is_empty()) {
        rendered.push_str(note);
        rendered.push('\n');
    }
    if let Some(next) = &next {
        rendered.push_str(&format!(
            "… more: call `{tool}` again with the same arguments and cursor \"{next}\"\n"
        ));
    }
    let mut structured = json!({ "answer": page.json });
    if let Some(shown) = page.shown {
        structured["shown"] = json!(shown);
    }
    if let Some(next) = next {
        structured["next_cursor"] = json!(next);
    }
    let mut result = CallToolResult::structured(structured);
    result.content = vec![ContentBlock::text(rendered)];
    result
}

/// What a read that did not answer said: its error and hint, with the commands it names
/// read as the tools of the same name.
fn said(ran: &Ran) -> String {
    let err = ran.stderr.trim();
    match (ran.code, err.is_empty()) {
        (_, false) => format!(
            "{err}\n(The commands named here are the tools of the same name: `peat log` is `log`.)"
        ),
        (Some(code), true) => format!("peat ended with exit code {code} and said nothing"),
        (None, true) => "peat was stopped before it answered".to_string(),
    }
}
