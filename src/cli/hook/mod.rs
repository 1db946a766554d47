//! `peat hook`: the one command every harness moment runs.
//!
//! The harness (Claude Code or Codex) writes one JSON object on stdin and reads stdout: for
//! SessionStart, plain stdout is injected into the agent's context, so nothing else may ever
//! be printed there. A hook that misbehaves breaks the user's agent, so this module keeps
//! three promises on every path: exit 0, never block (no `decision: block`, no exit 2, no
//! long lock waits, captures detached), and load no model. What goes wrong is appended to
//! `<desk>/.peat/hook.log`.
//!
//! The pieces are pure where they can be ([`Input::parse`], [`plan`]) and the effects are
//! kept in [`fire`].

pub(crate) mod desk;
pub(crate) mod install;
pub(crate) mod mcp_entry;
pub(crate) mod spool;

use serde_json::{Value, json};
use std::fs::{self, OpenOptions};
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::cli::ctx::Ctx;
use crate::cli::ui::{LOG_TAG_VAR, log_line};
use crate::ledger::Location;

/// The most stdin a hook reads. Harness payloads are a few KB; beyond this the input is
/// treated as garbage (read to the end and ignored, so the harness never sees a broken pipe).
pub(crate) const STDIN_CAP: usize = 16 << 20;

/// How long the hook waits for the harness to close stdin before going on without it.
const STDIN_WAIT: Duration = Duration::from_secs(3);

/// How long SessionStart waits for the ledger lock: a capture may be writing. Past this, the
/// hook prints only the lookup line.
pub(crate) const START_LOCK_WAIT: Duration = Duration::from_millis(300);

/// The log is moved aside to `hook.log.1` once it grows past this.
const LOG_CAP: u64 = 256 << 10;
/// The most of the closing message the Stop hook hands its capture in the environment
/// (Linux refuses a single environment string of 128 KiB or more).
const ENV_TEXT_MAX: usize = 120 << 10;

/// The events `peat hook install` wires, in the order they happen.
pub(crate) const EVENTS: [&str; 4] = ["SessionStart", "Stop", "PreCompact", "SessionEnd"];

/// The one line SessionStart always prints: how to look things up.
pub(crate) const LOOKUP_LINE: &str = "peat: this project's agent sessions are recorded; `peat <words>` searches them, `peat` shows the brief.";

/// What the hook reads from the harness's stdin. Every field is optional: a missing or
/// malformed field is `None`, never an error.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Input {
    /// `hook_event_name`, as sent ("" when absent).
    pub(crate) event: String,
    pub(crate) session_id: Option<String>,
    pub(crate) transcript_path: Option<PathBuf>,
    pub(crate) cwd: Option<PathBuf>,
    /// Stop: the agent's closing message, authoritative (the transcript may lag).
    pub(crate) last_assistant_message: Option<String>,
    /// SessionStart: startup, resume, clear, compact, fork.
    pub(crate) source: Option<String>,
    /// Which harness sent it, as far as the payload tells.
    pub(crate) agent: Agent,
}

/// The harness a hook fired in: for the log, for where its transcripts are, and for how it
/// reads SessionStart's output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Agent {
    Claude,
    Codex,
    Gemini,
    Qwen,
    Cursor,
    Copilot,
    Droid,
    /// Its plugin (see `install`) runs the hook with no payload: the capture is the sweep.
    OpenCode,
    /// Its hook scripts (see `install`) are told the task, whose folder holds the transcript.
    Cline,
    /// Its plugin's hooks name the session but no transcript (its sessions are rows of
    /// `sessions.db`): the capture is the sweep, which reads that database.
    Goose,
    /// Neither the payload, the hook's `--agent` nor the environment says.
    #[default]
    Unknown,
}

impl Agent {
    /// Every harness peat's hook knows, as `--agent` names them.
    const NAMED: [Agent; 10] = [
        Agent::Claude,
        Agent::Codex,
        Agent::Gemini,
        Agent::Qwen,
        Agent::Cursor,
        Agent::Copilot,
        Agent::Droid,
        Agent::OpenCode,
        Agent::Cline,
        Agent::Goose,
    ];

    pub(crate) fn label(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Qwen => "qwen",
            Agent::Cursor => "cursor",
            Agent::Copilot => "copilot",
            Agent::Droid => "droid",
            Agent::OpenCode => "opencode",
            Agent::Cline => "cline",
            Agent::Goose => "goose",
            Agent::Unknown => "agent?",
        }
    }

    /// The harness `peat hook --agent NAME` names; a name peat does not know is no harness
    /// (the hook still runs: it never fails on its arguments' values).
    pub(crate) fn named(name: &str) -> Agent {
        Agent::NAMED
            .into_iter()
            .find(|a| a.label().eq_ignore_ascii_case(name.trim()))
            .unwrap_or_default()
    }

    /// What the payload tells positively. Cline sends `clineVersion`; Goose sends
    /// `matcher_context` (null outside tool events); Cursor sends `cursor_version`; Copilot
    /// CLI's camelCase payloads send `sessionId`; Codex sends `turn_id` on turn events, names its
    /// transcripts `rollout-*` and may send `transcript_path: null`; Gemini CLI, Qwen Code
    /// and droid send Claude Code's fields, told apart by where the transcript is. Claude
    /// Code always names a transcript (and sets `CLAUDE_PROJECT_DIR` for its hooks: see
    /// [`fire`]); the hooks peat installs for the others say `--agent`, which wins.
    fn of(v: &serde_json::Map<String, Value>) -> Agent {
        let path = v.get("transcript_path");
        let text = path.and_then(Value::as_str).unwrap_or_default();
        let under = |folder: &str| {
            Path::new(text)
                .components()
                .any(|c| c.as_os_str() == folder)
        };
        let rollout = Path::new(text)
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("rollout-"));
        if v.contains_key("clineVersion") {
            Agent::Cline
        } else if v.contains_key("matcher_context") {
            Agent::Goose
        } else if v.contains_key("cursor_version") {
            Agent::Cursor
        } else if v.contains_key("sessionId") {
            Agent::Copilot
        } else if v.contains_key("turn_id") || rollout || path.is_some_and(Value::is_null) {
            Agent::Codex
        } else if under(".gemini") {
            Agent::Gemini
        } else if under(".qwen") {
            Agent::Qwen
        } else if under(".factory") {
            Agent::Droid
        } else if !text.is_empty() {
            Agent::Claude
        } else {
            Agent::Unknown
        }
    }

    /// SessionStart's text as this harness puts it into the agent's context. Claude Code,
    /// Codex and droid take plain stdout; Gemini CLI and Qwen Code parse stdout as JSON (plain
    /// text would only be shown to the person) and read `additionalContext`; Cursor reads
    /// `additional_context`, Copilot CLI `additionalContext`, Cline `contextModification`
    /// (with `cancel: false`, its answer to every hook). Goose shows only a `banner` from
    /// stdout, to the person: plain text is ignored there.
    pub(crate) fn context(self, text: &str) -> String {
        let wrapped = match self {
            Agent::Cline => json!({ "cancel": false, "contextModification": text }),
            Agent::Gemini | Agent::Qwen => json!({"hookSpecificOutput": {
                "hookEventName": "SessionStart",
                "additionalContext": text,
            }}),
            Agent::Cursor => json!({ "additional_context": text }),
            Agent::Copilot => json!({ "additionalContext": text }),
            Agent::Claude
            | Agent::Codex
            | Agent::Droid
            | Agent::OpenCode
            | Agent::Goose
            | Agent::Unknown => {
                return text.to_string();
            }
        };
        format!("{wrapped}\n")
    }

    /// What the hook prints when it has nothing to say: Cline reads every hook's stdout
    /// for its decision, and is told to go on; the others are told nothing.
    pub(crate) fn nothing(self) -> String {
        match self {
            Agent::Cline => format!("{}\n", json!({ "cancel": false })),
            _ => String::new(),
        }
    }

    /// Whether this harness's hooks never name the transcript (OpenCode's plugin runs the
    /// hook with no payload; Goose's sessions are rows of a database): its capture is the
    /// sweep, as a matter of course.
    fn swept(self) -> bool {
        matches!(self, Agent::OpenCode | Agent::Goose)
    }
}

impl Input {
    /// Parse the harness's stdin leniently: anything that is not a JSON object gives the
    /// defaults (and so does nothing).
    pub fn parse(raw: &[u8]) -> Input {
        let Ok(Value::Object(v)) = serde_json::from_slice::<Value>(raw) else {
            return Input::default();
        };
        let text = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.trim().is_empty())
                .map(str::to_string)
        };
        // Each harness's spelling: Copilot CLI's camelCase, Cursor's `conversation_id`
        // (its `session_id` is the same id, on some events only), Gemini CLI's
        // `prompt_response` for the turn's closing message, Cline's `hookName` and
        // `taskId`, Goose's `event`.
        let first = |keys: &[&str]| keys.iter().find_map(|k| text(k));
        Input {
            event: first(&["hook_event_name", "hookName", "event"]).unwrap_or_default(),
            session_id: first(&["session_id", "sessionId", "conversation_id", "taskId"])
                .filter(|s| plausible_id(s)),
            transcript_path: first(&["transcript_path", "transcriptPath"]).map(PathBuf::from),
            cwd: text("cwd").map(PathBuf::from),
            last_assistant_message: first(&["last_assistant_message", "prompt_response"]),
            source: text("source"),
            agent: Agent::of(&v),
        }
    }
}

/// A session id is used in file names and searches: no separators, no control characters.
fn plausible_id(s: &str) -> bool {
    s.len() <= 200
        && !s.contains(['/', '\\', '\0'])
        && !s.chars().any(char::is_control)
        && s != "."
        && s != ".."
}

/// The moments peat acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Moment {
    SessionStart,
    Stop,
    PreCompact,
    SessionEnd,
}

impl Moment {
    /// The harness's event name, matched loosely (`Stop`, `stop`, `session_end`,
    /// `session-end`), with each harness's name for the end of a turn (Gemini CLI's
    /// `AfterAgent`, Copilot CLI's `agentStop`, Cline's `TaskComplete`), for compaction
    /// (Gemini CLI's `PreCompress`) and for a session's start and end (Cline's `TaskStart`
    /// and `TaskResume`, `TaskCancel`).
    pub(crate) fn of(name: &str) -> Option<Moment> {
        let norm: String = name
            .chars()
            .filter(|c| *c != '_' && *c != '-')
            .collect::<String>()
            .to_ascii_lowercase();
        Some(match norm.as_str() {
            "sessionstart" | "taskstart" | "taskresume" => Moment::SessionStart,
            "stop" | "afteragent" | "agentstop" | "taskcomplete" => Moment::Stop,
            "precompact" | "precompress" => Moment::PreCompact,
            "sessionend" | "taskcancel" => Moment::SessionEnd,
            _ => return None,
        })
    }
}

/// What one hook firing does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Record the desk's current session and print the previous closing message.
    Start { session: Option<String> },
    /// Capture the transcript in a detached process (Stop: with the closing message), then
    /// sweep the known roots.
    Capture {
        /// The transcript as the harness named it; `None`: find it by session id, or leave
        /// the session to the sweep.
        transcript: Option<PathBuf>,
        session: Option<String>,
        final_msg: Option<String>,
    },
    /// Every other event (UserPromptSubmit, PostToolUse, anything new): nothing.
    Nothing,
}

/// Decide what to do. `event_override` is `peat hook --event NAME`.
pub fn plan(input: &Input, event_override: Option<&str>) -> Action {
    let name = event_override.unwrap_or(&input.event);
    match Moment::of(name) {
        Some(Moment::SessionStart) => Action::Start {
            session: input.session_id.clone(),
        },
        // With neither a transcript nor a session to find it by, the capture is the sweep
        // of the known roots alone.
        Some(m @ (Moment::Stop | Moment::PreCompact | Moment::SessionEnd)) => Action::Capture {
            transcript: input.transcript_path.clone(),
            session: input.session_id.clone(),
            final_msg: if m == Moment::Stop {
                input.last_assistant_message.clone()
            } else {
                None
            },
        },
        None => Action::Nothing,
    }
}

/// Hooks act only where a ledger exists and nobody paused them with `.peat/off` (in the
/// desk, or beside a shared ledger).
pub(crate) fn enabled(loc: &Location) -> bool {
    crate::ledger::recorded(&loc.store) && paused_by(loc).is_none()
}

/// The `off` file that pauses hooks here, if any.
pub(crate) fn paused_by(loc: &Location) -> Option<PathBuf> {
    let mut places = vec![loc.desk.join("off")];
    if let Some(beside) = loc.store.parent() {
        places.push(beside.join("off"));
    }
    places.into_iter().find(|p| p.exists())
}

/// Read all of stdin, up to [`STDIN_CAP`]. `None`: too large, unreadable, or never closed
/// within a few seconds. A terminal is not read at all (someone ran `peat hook` by hand).
pub(crate) fn read_stdin() -> Option<Vec<u8>> {
    if std::io::stdin().is_terminal() {
        return Some(Vec::new());
    }
    let (tx, rx) = std::sync::mpsc::channel();
    // A reader thread, so a harness that never closes stdin cannot hold the session: the
    // process exits (and the thread with it) once the wait is over.
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut lock = stdin.lock();
        let mut buf = Vec::new();
        let read = (&mut lock).take(STDIN_CAP as u64 + 1).read_to_end(&mut buf);
        let whole = read.is_ok() && buf.len() <= STDIN_CAP;
        if !whole {
            buf = Vec::new();
            let _ = std::io::copy(&mut lock, &mut std::io::sink());
        }
        let _ = tx.send(whole.then_some(buf));
    });
    rx.recv_timeout(STDIN_WAIT).ok().flatten()
}

/// `peat hook`: where hooks are enabled, read stdin and [`fire`]. Elsewhere stdin is not
/// even read (harnesses take a hook that ignores its stdin in their stride).
pub(crate) fn run(ctx: &Ctx, event_override: Option<&str>, agent: Agent) -> String {
    if !enabled(&ctx.location) {
        return agent.nothing();
    }
    fire(ctx, event_override, agent, read_stdin())
}

/// Decide and act on stdin as read (`None`: unreadable or too large), for the harness
/// `agent` names (`Unknown`: as the payload tells). Returns the text for stdout
/// (SessionStart only), as that harness reads it. Never fails and never panics outward: what
/// goes wrong is logged in the desk.
pub(crate) fn fire(
    ctx: &Ctx,
    event_override: Option<&str>,
    agent: Agent,
    raw: Option<Vec<u8>>,
) -> String {
    let loc = &ctx.location;
    if !enabled(loc) {
        return String::new();
    }
    // A panic is caught below and logged; the default report on stderr would only add noise
    // to the harness's debug log.
    std::panic::set_hook(Box::new(|_| {}));
    let mut input = raw.as_deref().map(Input::parse).unwrap_or_default();
    if agent != Agent::Unknown {
        input.agent = agent;
    }
    if input.agent == Agent::Unknown && ctx.claude_hook_env {
        input.agent = Agent::Claude;
    }
    let action = plan(&input, event_override);
    let event_name = event_override.unwrap_or(&input.event).to_string();
    let tag = Tag {
        agent: input.agent,
        event: &event_name,
        session: input.session_id.as_deref(),
    };
    if raw.is_none() {
        log(
            ctx,
            &tag,
            &format!(
                "stdin ignored: over {} MiB, unreadable, or not closed within {}s",
                STDIN_CAP >> 20,
                STDIN_WAIT.as_secs()
            ),
        );
    }
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        act(ctx, &input, &action, &tag)
    }));
    let out = match outcome {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => {
            log(ctx, &tag, &e.0);
            e.1
        }
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            log(ctx, &tag, &format!("panic: {msg}"));
            match action {
                Action::Start { .. } => format!("{LOOKUP_LINE}\n"),
                _ => String::new(),
            }
        }
    };
    match action {
        Action::Start { .. } if !out.is_empty() => input.agent.context(&out),
        _ if out.is_empty() => input.agent.nothing(),
        _ => out,
    }
}

/// A failure to log, and what to print anyway.
struct Failed(String, String);

fn act(ctx: &Ctx, input: &Input, action: &Action, tag: &Tag<'_>) -> Result<String, Failed> {
    match action {
        Action::Nothing => Ok(String::new()),
        Action::Start { session } => {
            let mut problems = Vec::new();
            if let Some(s) = session
                && let Err(e) = desk::write_current_session(&ctx.location.desk, s)
            {
                problems.push(e);
            }
            let mut out = String::new();
            match desk::previous_closing(ctx, session.as_deref()) {
                Ok(Some(c)) => out.push_str(&c.render(ctx.now_ms, &ctx.tz)),
                Ok(None) => {}
                Err(e) => problems.push(e),
            }
            out.push_str(LOOKUP_LINE);
            out.push('\n');
            // The agent's first search then finds the model loaded (a spawn, never waited for).
            crate::embed::resident::warm_up(&ctx.model_lookup, ctx.residency);
            if problems.is_empty() {
                Ok(out)
            } else {
                Err(Failed(problems.join("; "), out))
            }
        }
        Action::Capture {
            transcript,
            session,
            final_msg,
        } => {
            let path = transcript
                .clone()
                .filter(|p| p.is_file())
                .or_else(|| find_transcript(ctx, input, session.as_deref()));
            let Some(path) = path else {
                // The sweep that every hook's capture runs catches the session up from the
                // harness's root instead (Cursor CLI names no transcript, and Copilot CLI
                // sends none at the end of a session).
                let named = match transcript {
                    Some(t) => format!("{} does not exist", t.display()),
                    None => "transcript_path is empty".to_string(),
                };
                if input.agent.swept() {
                    return spawn_capture(ctx, &[], None, tag)
                        .map(|()| String::new())
                        .map_err(|e| Failed(e, String::new()));
                }
                log(
                    ctx,
                    tag,
                    &format!(
                        "nothing to capture: {named}, and no transcript is named after session {}; sweeping the known roots",
                        session.as_deref().unwrap_or("?")
                    ),
                );
                return spawn_capture(ctx, &[], None, tag)
                    .map(|()| String::new())
                    .map_err(|e| Failed(e, String::new()));
            };
            let mut files = vec![path];
            if final_msg.is_none() {
                files.extend(subagent_transcripts(&files[0]));
            }
            spawn_capture(ctx, &files, final_msg.as_deref(), tag)
                .map(|()| String::new())
                .map_err(|e| Failed(e, String::new()))
        }
    }
}

/// The transcript of `session` when the harness did not name it: Cursor's
/// `projects/<folder>/agent-transcripts/<id>.jsonl` (or `<id>/<id>.jsonl`), Copilot CLI's
/// `session-state/<id>/events.jsonl`, a Cline task's `tasks/<id>/api_conversation_history.json`
/// in its CLI's or its VS Code extension's folder, else a Codex rollout named after the
/// thread id, else the Claude Code session file for this cwd. None for the harnesses whose
/// sessions only the sweep reads.
fn find_transcript(ctx: &Ctx, input: &Input, session: Option<&str>) -> Option<PathBuf> {
    let session = session?;
    match input.agent {
        Agent::Cline => {
            return ctx.cline_dirs.iter().find_map(|dir| {
                let file = dir
                    .join("tasks")
                    .join(session)
                    .join(crate::capture::cline::HISTORY_FILE);
                file.is_file().then_some(file)
            });
        }
        agent if agent.swept() => return None,
        Agent::Cursor => return cursor_transcript(&ctx.cursor_home.join("projects"), session),
        Agent::Copilot => {
            let file = ctx
                .copilot_home
                .join("session-state")
                .join(session)
                .join("events.jsonl");
            return file.is_file().then_some(file);
        }
        _ => {}
    }
    if let Some(found) = find_rollout(&ctx.codex_home.join("sessions"), session) {
        return Some(found);
    }
    let claude = &ctx.claude_home;
    let cwd = input.cwd.clone().unwrap_or_else(|| ctx.cwd.clone());
    let file = claude
        .join("projects")
        .join(claude_slug(&cwd))
        .join(format!("{session}.jsonl"));
    file.is_file().then_some(file)
}

/// Cursor's transcript of `conversation` in any of its project folders: the CLI's flat
/// `<id>.jsonl`, or the editor's `<id>/<id>.jsonl`.
fn cursor_transcript(projects: &Path, conversation: &str) -> Option<PathBuf> {
    let name = format!("{conversation}.jsonl");
    fs::read_dir(projects)
        .ok()?
        .flatten()
        .map(|d| d.path().join("agent-transcripts"))
        .flat_map(|dir| [dir.join(&name), dir.join(conversation).join(&name)])
        .find(|f| f.is_file())
}

/// Claude Code's project folder name for a cwd: every character that is not an ASCII letter
/// or digit becomes `-` (one per UTF-16 unit, as Claude Code counts them).
pub fn claude_slug(cwd: &Path) -> String {
    let s = cwd.to_string_lossy();
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            for _ in 0..c.len_utf16() {
                out.push('-');
            }
        }
    }
    out
}

/// The newest `rollout-*<session>*.jsonl` (or `.jsonl.zst`) under `root`, searching the
/// newest date folders first and at most six levels deep. A plain file wins over its
/// compressed twin (Codex appends to the plain one when a thread resumes).
pub(crate) fn find_rollout(root: &Path, session: &str) -> Option<PathBuf> {
    if session.is_empty() {
        return None;
    }
    let matching = |name: &str| {
        name.starts_with("rollout-")
            && (name.ends_with(".jsonl") || name.ends_with(".jsonl.zst"))
            && name.contains(session)
    };
    walkdir::WalkDir::new(root)
        .min_depth(1)
        // Six folder levels below `root`: their files are entries at depth seven.
        .max_depth(7)
        // In each folder: its files before its folders, plain before compressed, and
        // newest first (date folders and rollout names sort by time).
        .sort_by_key(|e| {
            let name = e.file_name().to_owned();
            let zst = name.to_string_lossy().ends_with(".zst");
            (e.file_type().is_dir(), zst, std::cmp::Reverse(name))
        })
        .into_iter()
        // A folder the hook cannot read holds no rollout it could capture: it looks on.
        .filter_map(Result::ok)
        .find(|e| !e.file_type().is_dir() && matching(&e.file_name().to_string_lossy()))
        .map(walkdir::DirEntry::into_path)
}

/// A Claude Code session's subagent transcripts (`<session>/subagents/agent-*.jsonl` beside
/// `<session>.jsonl`). The salvage moments capture them with the session; Stop does not,
/// since its closing message belongs to the main transcript only.
fn subagent_transcripts(transcript: &Path) -> Vec<PathBuf> {
    let Some(stem) = transcript
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".jsonl"))
    else {
        return Vec::new();
    };
    let dir = transcript.with_file_name(stem).join("subagents");
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("agent-") && n.ends_with(".jsonl"))
        })
        .collect();
    out.sort();
    out
}

/// Start `peat capture` on `transcripts`, detached: its own process group, no stdin or
/// stdout, stderr appended to the hook log, never waited for. The ledger is fixed now
/// (`PEAT_DB`), so the capture writes where this hook resolved, whatever its cwd.
///
/// It runs under `nice -n 10` where `nice` exists: the capture yields the CPU to the agent
/// (and to this hook, which then returns sooner: spawning waits only for the small `nice`
/// to start, not for peat's own binary to load).
fn spawn_capture(
    ctx: &Ctx,
    transcripts: &[PathBuf],
    final_msg: Option<&str>,
    tag: &Tag<'_>,
) -> Result<(), String> {
    let exe = &ctx.exe;
    // Every hook's capture also sweeps the known roots: a session no hook announced (a
    // harness without hooks, `codex exec`, Cursor's `-p`) is caught up by the next one.
    let mut args: Vec<std::ffi::OsString> = vec!["capture".into(), "--sweep".into()];
    let store = &ctx.location.store;
    let Some(main) = transcripts.first() else {
        let log = open_log(&ctx.location.desk);
        return spawn_niced(exe, |cmd| detached_env(ctx, cmd, tag, &args, log.as_ref()))
            .map(|_| ())
            .map_err(|e| format!("cannot start {} capture: {e}", exe.display()));
    };
    // The closing message is spooled, whole, before anything waits: whichever capture gets
    // the lock records it, and it survives a capture that gives up waiting. Only when it
    // cannot be spooled does it travel in the environment (only this user can read that;
    // the command line would show it in `ps`), where the kernel refuses one string past
    // 128 KiB, so it travels cut (the transcript's own copy is captured whole).
    let mut in_env = None;
    if let Some(m) = final_msg.map(|m| m.replace('\0', ""))
        && let Err(e) = spool::put(store, main, &m)
    {
        log(ctx, tag, &format!("cannot spool the closing message: {e}"));
        in_env = Some(crate::vocab::event::cap(&m, ENV_TEXT_MAX));
    }
    // A capture already waiting for this transcript reads the file to its end and the
    // spool once it has the lock: no other is started. A message that could not be
    // spooled reaches only the capture started with it, so that one always starts, and
    // leaves the claim to the waiting capture.
    let claimed = in_env.is_none()
        && match spool::claim(store, main) {
            Ok(false) => return Ok(()),
            Ok(true) => true,
            Err(_) => false,
        };
    args.push("--".into());
    args.extend(transcripts.iter().map(|p| p.clone().into_os_string()));
    let log = open_log(&ctx.location.desk);
    let started = |child: std::process::Child| {
        if claimed {
            spool::waiter(store, main, child.id())
        }
    };
    spawn_niced(exe, |cmd| {
        detached_env(ctx, cmd, tag, &args, log.as_ref());
        if let Some(m) = &in_env {
            cmd.env("PEAT_FINAL_MSG", m);
        }
    })
    .map(started)
    .map_err(|e| {
        if claimed {
            spool::release(store, main);
        }
        format!("cannot start {} capture: {e}", exe.display())
    })
}

/// A hook's detached capture: its arguments, the ledger fixed now (`PEAT_DB`, so it writes
/// where this hook resolved, whatever its cwd), and its stderr into the hook log.
fn detached_env(
    ctx: &Ctx,
    cmd: &mut Command,
    tag: &Tag<'_>,
    args: &[std::ffi::OsString],
    log: Option<&fs::File>,
) {
    cmd.args(args)
        .env("PEAT_DB", &ctx.location.store)
        // What this hook resolved, so an invalid value (logged) does not fail it.
        .env("PEAT_LOCK_WAIT_SECS", ctx.lock_wait.as_secs().to_string())
        // Its stderr lines go into the hook log: they say when, and for whom.
        .env(LOG_TAG_VAR, tag.to_string())
        .env_remove("PEAT_FINAL_MSG");
    if ctx.now_pinned {
        cmd.env("PEAT_NOW", crate::vocab::time::format_iso_ms(ctx.now_ms));
    } else {
        cmd.env_remove("PEAT_NOW");
    }
    cmd.stderr(
        log.and_then(|f| f.try_clone().ok())
            .map_or_else(Stdio::null, Stdio::from),
    );
}

/// Start `exe` detached: its own process group, no stdin or stdout (`configure` adds the
/// arguments, the environment and stderr), never waited for, under `nice -n 10` where
/// `nice` exists.
pub(crate) fn spawn_niced(
    exe: &Path,
    configure: impl Fn(&mut Command),
) -> std::io::Result<std::process::Child> {
    let detached = |program: &std::ffi::OsStr, before: &[&std::ffi::OsStr]| {
        let mut cmd = Command::new(program);
        cmd.args(before).stdin(Stdio::null()).stdout(Stdio::null());
        configure(&mut cmd);
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        cmd.spawn()
    };
    #[cfg(unix)]
    match detached(
        "nice".as_ref(),
        &["-n".as_ref(), "10".as_ref(), exe.as_os_str()],
    ) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        other => return other,
    }
    detached(exe.as_os_str(), &[])
}

/// Who a hook log line is about: the harness, the moment, the session.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tag<'a> {
    pub(crate) agent: Agent,
    pub(crate) event: &'a str,
    pub(crate) session: Option<&'a str>,
}

impl Tag<'_> {
    /// A line about the hook's own environment, before any payload is read.
    pub(crate) const ENVIRONMENT: Tag<'static> = Tag {
        agent: Agent::Unknown,
        event: "environment",
        session: None,
    };
}

impl std::fmt::Display for Tag<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let event = if self.event.is_empty() {
            "?"
        } else {
            self.event
        };
        write!(f, "{} {event}", self.agent.label())?;
        if let Some(s) = self.session {
            write!(f, " {}", s.chars().take(8).collect::<String>())?;
        }
        Ok(())
    }
}

/// Append one line to the desk's hook log: the time it is written, who it is about, what.
pub(crate) fn log(ctx: &Ctx, tag: &Tag<'_>, msg: &str) {
    let Some(mut f) = open_log(&ctx.location.desk) else {
        return;
    };
    let _ = writeln!(f, "{}", log_line(&tag.to_string(), msg));
}

/// The desk's `hook.log` for appending, moved aside first when it is too large.
fn open_log(desk: &Path) -> Option<fs::File> {
    desk::ensure_desk(desk).ok()?;
    let path = desk.join("hook.log");
    if fs::metadata(&path).is_ok_and(|m| m.len() > LOG_CAP) {
        let _ = fs::rename(&path, desk.join("hook.log.1"));
    }
    OpenOptions::new().create(true).append(true).open(path).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_and_empty_input_parse_to_defaults() {
        for raw in [
            &b""[..],
            b"not json",
            b"[1,2]",
            b"{\"hook_event_name\": 7}",
            b"\xff\xfe",
        ] {
            assert_eq!(Input::parse(raw), Input::default(), "{raw:?}");
            assert_eq!(plan(&Input::parse(raw), None), Action::Nothing);
        }
    }

    #[test]
    fn the_agent_is_told_by_the_payload() {
        let agent = |raw: &str| Input::parse(raw.as_bytes()).agent;
        assert_eq!(
            agent(
                r#"{"transcript_path":"/h/.codex/sessions/2026/05/04/rollout-2026-05-04T12-15-02-019a.jsonl"}"#
            ),
            Agent::Codex
        );
        assert_eq!(agent(r#"{"transcript_path":null}"#), Agent::Codex);
        assert_eq!(
            agent(r#"{"transcript_path":"/x/a.jsonl","turn_id":"t"}"#),
            Agent::Codex
        );
        assert_eq!(
            agent(r#"{"transcript_path":"/h/.claude/projects/-h/3f6c.jsonl"}"#),
            Agent::Claude
        );
    }

    #[test]
    fn each_harness_is_told_by_its_payload_or_by_name() {
        let agent = |raw: &str| Input::parse(raw.as_bytes()).agent;
        assert_eq!(
            agent(
                r#"{"conversation_id":"c1","cursor_version":"2026.02.13","hook_event_name":"stop","transcript_path":null}"#
            ),
            Agent::Cursor
        );
        assert_eq!(
            agent(r#"{"sessionId":"s1","timestamp":1,"cwd":"/w","reason":"complete"}"#),
            Agent::Copilot
        );
        assert_eq!(
            agent(r#"{"transcript_path":"/h/.gemini/tmp/acme/chats/session-1.jsonl"}"#),
            Agent::Gemini
        );
        assert_eq!(
            agent(r#"{"transcript_path":"/h/.qwen/projects/-w/chats/s.jsonl"}"#),
            Agent::Qwen
        );
        assert_eq!(
            agent(r#"{"transcript_path":"/h/.factory/sessions/-w/s.jsonl"}"#),
            Agent::Droid
        );
        assert_eq!(
            agent(
                r#"{"clineVersion":"3.36.0","hookName":"TaskComplete","taskId":"1784019600000"}"#
            ),
            Agent::Cline
        );
        assert_eq!(
            agent(r#"{"event":"Stop","session_id":"20260714_1","matcher_context":null}"#),
            Agent::Goose
        );
        assert_eq!(Agent::named("Gemini"), Agent::Gemini);
        assert_eq!(Agent::named("droid"), Agent::Droid);
        assert_eq!(Agent::named("vim"), Agent::Unknown);
    }

    #[test]
    fn each_harness_gets_session_start_text_where_it_reads_context() {
        let text = "peat: hi\n";
        assert_eq!(Agent::Claude.context(text), text);
        assert_eq!(Agent::Droid.context(text), text);
        let gemini: Value = serde_json::from_str(&Agent::Gemini.context(text)).unwrap();
        assert_eq!(gemini["hookSpecificOutput"]["additionalContext"], text);
        assert_eq!(
            gemini["hookSpecificOutput"]["hookEventName"],
            "SessionStart"
        );
        let cursor: Value = serde_json::from_str(&Agent::Cursor.context(text)).unwrap();
        assert_eq!(cursor["additional_context"], text);
        let copilot: Value = serde_json::from_str(&Agent::Copilot.context(text)).unwrap();
        assert_eq!(copilot["additionalContext"], text);
    }

    #[test]
    fn each_harness_spelling_of_the_fields_is_read() {
        let copilot = Input::parse(
            br#"{"sessionId":"s1","transcriptPath":"/t/events.jsonl","stopReason":"end_turn"}"#,
        );
        assert_eq!(copilot.session_id.as_deref(), Some("s1"));
        assert_eq!(
            copilot.transcript_path,
            Some(PathBuf::from("/t/events.jsonl"))
        );
        let cursor = Input::parse(br#"{"conversation_id":"c1","cursor_version":"1"}"#);
        assert_eq!(cursor.session_id.as_deref(), Some("c1"));
        let gemini = Input::parse(
            br#"{"session_id":"g","hook_event_name":"AfterAgent","prompt_response":"Done."}"#,
        );
        assert_eq!(gemini.last_assistant_message.as_deref(), Some("Done."));
        assert!(matches!(
            plan(&gemini, None),
            Action::Capture {
                final_msg: Some(_),
                ..
            }
        ));
        assert_eq!(Moment::of("agentStop"), Some(Moment::Stop));
        assert_eq!(Moment::of("PreCompress"), Some(Moment::PreCompact));
        let cline = Input::parse(
            br#"{"clineVersion":"3.36.0","hookName":"TaskComplete","taskId":"1784019600000"}"#,
        );
        assert_eq!(
            (cline.event.as_str(), cline.session_id.as_deref()),
            ("TaskComplete", Some("1784019600000"))
        );
        assert_eq!(Moment::of("TaskStart"), Some(Moment::SessionStart));
        assert_eq!(Moment::of("TaskResume"), Some(Moment::SessionStart));
        assert_eq!(Moment::of("TaskComplete"), Some(Moment::Stop));
        assert_eq!(Moment::of("TaskCancel"), Some(Moment::SessionEnd));
        let goose = Input::parse(
            br#"{"event":"SessionEnd","session_id":"20260714_1","matcher_context":null}"#,
        );
        assert_eq!(goose.event, "SessionEnd");
    }

    #[test]
    fn cursor_transcripts_are_found_flat_or_nested() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("work-app/agent-transcripts");
        fs::create_dir_all(dir.join("c2")).unwrap();
        fs::write(dir.join("c1.jsonl"), "").unwrap();
        fs::write(dir.join("c2/c2.jsonl"), "").unwrap();
        assert_eq!(
            cursor_transcript(t.path(), "c1"),
            Some(dir.join("c1.jsonl"))
        );
        assert_eq!(
            cursor_transcript(t.path(), "c2"),
            Some(dir.join("c2/c2.jsonl"))
        );
        assert_eq!(cursor_transcript(t.path(), "c3"), None);
    }

    #[test]
    fn a_claude_stop_plans_a_capture_with_the_closing_message() {
        let raw = br#"{"session_id":"3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b","transcript_path":"/home/dev/.claude/projects/-home-dev-acme-api/3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b.jsonl","cwd":"/home/dev/acme-api","permission_mode":"acceptEdits","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Tests added and passing."}"#;
        let input = Input::parse(raw);
        assert_eq!(
            plan(&input, None),
            Action::Capture {
                transcript: Some(PathBuf::from(
                    "/home/dev/.claude/projects/-home-dev-acme-api/3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b.jsonl"
                )),
                session: Some("3f6c2a9e-8d41-4b7e-9f0a-5c1d2e3f4a5b".into()),
                final_msg: Some("Tests added and passing.".into()),
            }
        );
    }

    #[test]
    fn salvage_moments_capture_without_a_closing_message() {
        for ev in ["PreCompact", "SessionEnd"] {
            let raw = format!(
                r#"{{"session_id":"s1","transcript_path":"/t.jsonl","hook_event_name":"{ev}","last_assistant_message":"x"}}"#
            );
            match plan(&Input::parse(raw.as_bytes()), None) {
                Action::Capture { final_msg, .. } => assert_eq!(final_msg, None),
                other => panic!("{ev}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_codex_event_without_a_transcript_still_captures_by_session() {
        let raw = br#"{"session_id":"019a7c3e-5b21-7d40-9c1e-2f6a8b0c4d11","transcript_path":null,"cwd":"/home/dev/acme-api","hook_event_name":"Stop","model":"gpt-5.3-codex","turn_id":"t","stop_hook_active":false,"last_assistant_message":null}"#;
        let input = Input::parse(raw);
        assert_eq!(input.transcript_path, None);
        assert_eq!(input.last_assistant_message, None);
        assert!(matches!(
            plan(&input, None),
            Action::Capture {
                transcript: None,
                session: Some(_),
                final_msg: None
            }
        ));
        // With neither a transcript nor a session, the capture is the sweep alone.
        let bare = Input::parse(br#"{"hook_event_name":"Stop"}"#);
        assert_eq!(
            plan(&bare, None),
            Action::Capture {
                transcript: None,
                session: None,
                final_msg: None
            }
        );
    }

    #[test]
    fn other_events_do_nothing_and_the_override_wins() {
        let raw = br#"{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"hi"}"#;
        let input = Input::parse(raw);
        assert_eq!(plan(&input, None), Action::Nothing);
        assert_eq!(
            plan(&input, Some("SessionStart")),
            Action::Start {
                session: Some("s".into())
            }
        );
        for ev in [
            "PostToolUse",
            "Notification",
            "SubagentStop",
            "Whatever",
            "",
        ] {
            let raw =
                format!(r#"{{"session_id":"s","transcript_path":"/t","hook_event_name":"{ev}"}}"#);
            assert_eq!(
                plan(&Input::parse(raw.as_bytes()), None),
                Action::Nothing,
                "{ev}"
            );
        }
    }

    #[test]
    fn event_names_match_loosely() {
        assert_eq!(Moment::of("SessionStart"), Some(Moment::SessionStart));
        assert_eq!(Moment::of("session_end"), Some(Moment::SessionEnd));
        assert_eq!(Moment::of("pre-compact"), Some(Moment::PreCompact));
        assert_eq!(Moment::of("STOP"), Some(Moment::Stop));
        assert_eq!(Moment::of("SubagentStop"), None);
    }

    #[test]
    fn a_session_id_that_could_escape_a_folder_is_ignored() {
        let input = Input::parse(br#"{"hook_event_name":"SessionStart","session_id":"../../etc"}"#);
        assert_eq!(input.session_id, None);
    }

    #[test]
    fn claude_slugs_replace_every_non_alphanumeric() {
        assert_eq!(
            claude_slug(Path::new("/Users/me/my_proj")),
            "-Users-me-my-proj"
        );
        assert_eq!(claude_slug(Path::new("/a/b.c d")), "-a-b-c-d");
        assert_eq!(claude_slug(Path::new("/x/😀")), "-x---");
    }

    #[test]
    fn the_log_is_moved_aside_past_its_cap() {
        let t = tempfile::tempdir().unwrap();
        let desk = t.path().join(".peat");
        drop(open_log(&desk).unwrap());
        assert_eq!(fs::read_to_string(desk.join(".gitignore")).unwrap(), "*\n");
        fs::write(desk.join("hook.log"), vec![b'x'; LOG_CAP as usize + 1]).unwrap();
        let mut f = open_log(&desk).unwrap();
        writeln!(f, "fresh").unwrap();
        assert_eq!(
            fs::read_to_string(desk.join("hook.log")).unwrap(),
            "fresh\n"
        );
        assert_eq!(
            fs::metadata(desk.join("hook.log.1")).unwrap().len(),
            LOG_CAP + 1
        );
    }

    #[test]
    fn subagent_transcripts_sit_beside_their_session() {
        let t = tempfile::tempdir().unwrap();
        let main = t.path().join("3f6c.jsonl");
        assert!(subagent_transcripts(&main).is_empty());
        let dir = t.path().join("3f6c/subagents");
        fs::create_dir_all(&dir).unwrap();
        for name in [
            "agent-b.jsonl",
            "agent-a.jsonl",
            "agent-a.meta.json",
            "notes.txt",
        ] {
            fs::write(dir.join(name), "").unwrap();
        }
        assert_eq!(
            subagent_transcripts(&main),
            vec![dir.join("agent-a.jsonl"), dir.join("agent-b.jsonl")]
        );
    }

    #[test]
    fn rollouts_are_found_by_session_id_newest_first() {
        let t = tempfile::tempdir().unwrap();
        let sid = "019a7c3e-5b21-7d40-9c1e-2f6a8b0c4d11";
        let day = |d: &str| t.path().join(d);
        fs::create_dir_all(day("2026/05/03")).unwrap();
        fs::create_dir_all(day("2026/05/04")).unwrap();
        let old = day(&format!(
            "2026/05/03/rollout-2026-05-03T10-00-00-{sid}.jsonl.zst"
        ));
        fs::write(&old, b"").unwrap();
        fs::write(
            day("2026/05/04/rollout-2026-05-04T10-00-00-other.jsonl"),
            b"",
        )
        .unwrap();
        assert_eq!(find_rollout(t.path(), sid), Some(old.clone()));
        let new = day(&format!(
            "2026/05/04/rollout-2026-05-04T12-15-02-{sid}.jsonl"
        ));
        fs::write(&new, b"").unwrap();
        assert_eq!(find_rollout(t.path(), sid), Some(new));
        assert_eq!(find_rollout(t.path(), "nothing-like-it"), None);
        assert_eq!(find_rollout(t.path(), ""), None);
    }
}
