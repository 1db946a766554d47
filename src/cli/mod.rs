//! The command line: parse, resolve the context once, dispatch to a verb.

pub(crate) mod budget;
pub(crate) mod commands;
pub(crate) mod ctx;
pub(crate) mod embed_pass;
pub(crate) mod error;
pub(crate) mod fit;
pub mod hook;
pub(crate) mod listing;
pub(crate) mod scope;
pub(crate) mod shared;
pub(crate) mod sweep;
pub(crate) mod template;
pub(crate) mod transcripts;
pub(crate) mod ui;

use clap::{Parser, Subcommand};

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;

const AFTER_HELP: &str = "\
READING BY SHAPE (bare `peat THING`; the first reading that answers wins, and the
first line of the answer says which was chosen):
  peat                      the brief: recent work, the ladder of further-back windows
  peat src/server.rs        a file or directory, here or not: the recorded edits of it
  peat src/server.rs:42     one line: the session and prompt that last wrote it
  peat 2026-w33             a window: w33, 2026-07, 2026-08-14, q3, 2026, a..b
  peat 3f6c2a9e [SEQ]       a session by id prefix; one event with SEQ
  peat 4be1c0a              a commit (or jj change id): the session that made it, by its
                            Peat-Session trailer, the recorded commit command, the session
                            in this workspace then, or the edits that wrote its lines
  peat staging              a subject's full evidence trail (exact name)
  peat peat-8nj             an issue id (a Beads tracker id): every text that mentions it
  peat rate limiter         anything else: keyword + semantic search
A shape whose lookup finds nothing falls through to the next (a hex word that is
neither a session nor a commit is searched, and the search's first line says what was
tried first). A path here, FILE:LINE or a whole commit hash that names nothing recorded
is never searched for: peat says so and exits 1. `peat show`, `peat zoom`,
`peat subjects NAME` and `peat recall` are the explicit spellings.

DEPOSITING:
  peat obs staging \"deploys go through the blue env first\" --from 1042

EXIT STATUS (like grep and ripgrep):
  0   success
  1   nothing found (no hits, no such session or subject, nothing recorded yet)
  2   an error: bad usage, invalid input (a file that is not a transcript), a store failure
  75  the ledger stayed busy for the whole wait (PEAT_LOCK_WAIT_SECS, default 120): only
      writers wait; every read (`asof` too) answers while a writer holds the ledger, saying how far behind
`peat hook` runs always exit 0: a hook never breaks an agent session.

Start with `peat setup` in a project, or `peat setup --user` once for every project and
agent. The ledger lives in .peat/db beside the nearest .git or .jj, else in the user-level
ledger (or $PEAT_DB; `peat doctor` says which and why). Reads of the user-level ledger show
the current repository's sessions: --project PATH another's, --all-projects every one's;
--agent NAME (claude, codex) one agent's, in any ledger.";

/// The record of what coding agents did.
///
/// Hooks capture every Claude Code and Codex session into one append-only ledger; every
/// read is a view over it.
#[derive(Parser, Debug)]
// No `args_conflicts_with_subcommands`: with it, any flag before the verb (`peat --json
// sessions`) turned the verb into search words. Once a search word is read, later words
// are never taken for verbs (`peat fix the show bug` searches), which is what that
// setting was for.
#[command(name = "peat", version, propagate_version = true)]
#[command(after_help = AFTER_HELP)]
pub(crate) struct Cli {
    /// Structured output (the API form: whole JSON, never styled; a list's long texts are
    /// previews marked `cut` and it keeps the entries that fit the budget: `--full`,
    /// `--budget 0` for all)
    #[arg(long, global = true)]
    pub(crate) json: bool,

    /// At most this many bytes of text, ending with the command that prints the rest (0: no
    /// limit) [default: 4096 on a pipe, none on a terminal]
    #[arg(long, global = true, value_name = "BYTES", env = "PEAT_BUDGET")]
    pub(crate) budget: Option<usize>,

    #[command(flatten)]
    pub(crate) scope: scope::ScopeArgs,

    /// Words to search for (the same as `peat recall WORDS`)
    #[arg(value_name = "WORDS")]
    pub(crate) words: Vec<String>,

    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    Capture(commands::capture::CaptureArgs),
    Import(commands::import::ImportArgs),
    Events(commands::events::EventsArgs),
    Sessions(commands::sessions::SessionsArgs),
    Show(commands::show::ShowArgs),
    Brief(commands::brief::BriefArgs),
    Zoom(commands::zoom::ZoomArgs),
    Recall(commands::recall::RecallArgs),
    Asof(commands::asof::AsofArgs),
    Blame(commands::blame::BlameArgs),
    Diff(commands::diff::DiffArgs),
    File(commands::file::FileArgs),
    Log(commands::log::LogArgs),
    Trailer(commands::trailer::TrailerArgs),
    Rebuild(commands::rebuild::RebuildArgs),
    Doctor(commands::doctor::DoctorArgs),
    Obs(commands::obs::ObsArgs),
    Subjects(commands::subjects::SubjectsArgs),
    Compact(commands::compact::CompactArgs),
    Hook(commands::hook::HookArgs),
    Setup(commands::setup::SetupArgs),
    Skill(commands::skill::SkillArgs),
    Model(commands::model::ModelArgs),
    Redact(commands::redact::RedactArgs),
    Restore(commands::restore::RestoreArgs),
    Resume(commands::resume::ResumeArgs),
    Export(commands::export::ExportArgs),
    Trace(commands::trace::TraceArgs),
    Mcp(commands::mcp::McpArgs),
}

/// Parse the command line and run it. Returns the process exit code.
pub fn run() -> u8 {
    // A hook must never break the agent's session: whatever goes wrong before the hook
    // itself runs (a bad flag, an unreadable environment) exits 0 too. `hook install` is a
    // person's command and reports its errors.
    crate::embed::onnx::keep_runtime_out_of_home();
    if let Some(tag) = std::env::var_os(crate::cli::ui::LOG_TAG_VAR) {
        crate::cli::ui::stderr_is_hook_log(tag.to_string_lossy().into_owned());
    }
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let hook_run = args.get(1).is_some_and(|a| a == "hook")
        && !args
            .get(2)
            .is_some_and(|a| a == "install" || a == "--help" || a == "-h");
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(_) if hook_run => return 0,
        Err(e) => e.exit(),
    };
    let resolved = if hook_run {
        // A hook runs with the defaults and logs what was wrong with its environment.
        Ctx::resolve_lenient(cli.json, cli.budget, &cli.scope).map(|(ctx, problems)| {
            // Only where hooks act: logging creates the desk's `.peat`.
            if crate::cli::hook::enabled(&ctx.location) {
                for p in problems {
                    crate::cli::hook::log(
                        &ctx,
                        &crate::cli::hook::Tag::ENVIRONMENT,
                        &p.to_string(),
                    );
                }
            }
            ctx
        })
    } else {
        Ctx::resolve(cli.json, cli.budget, &cli.scope)
    };
    let result = resolved.and_then(|ctx| match &cli.command {
        Some(command) => dispatch(&ctx, command),
        None if cli.words.is_empty() => {
            commands::brief::run(&ctx, &commands::brief::BriefArgs::default())
        }
        None => commands::dispatch::run(&ctx, &cli.words),
    });
    match result {
        Ok(code) => code,
        Err(e) if e.broken_pipe => 0,
        Err(_) if hook_run => 0,
        Err(e) => {
            crate::cli::ui::stderr_line(&e.to_string());
            e.code
        }
    }
}

fn dispatch(ctx: &Ctx, command: &Command) -> Result<u8, CliError> {
    match command {
        Command::Capture(a) => commands::capture::run(ctx, a),
        Command::Import(a) => commands::import::run(ctx, a),
        Command::Events(a) => commands::events::run(ctx, a),
        Command::Sessions(a) => commands::sessions::run(ctx, a),
        Command::Show(a) => commands::show::run(ctx, a),
        Command::Brief(a) => commands::brief::run(ctx, a),
        Command::Zoom(a) => commands::zoom::run(ctx, a),
        Command::Recall(a) => commands::recall::run(ctx, a),
        Command::Asof(a) => commands::asof::run(ctx, a),
        Command::Blame(a) => commands::blame::run(ctx, a),
        Command::Diff(a) => commands::diff::run(ctx, a),
        Command::File(a) => commands::file::run(ctx, a),
        Command::Log(a) => commands::log::run(ctx, a),
        Command::Trailer(a) => commands::trailer::run(ctx, a),
        Command::Rebuild(a) => commands::rebuild::run(ctx, a),
        Command::Doctor(a) => commands::doctor::run(ctx, a),
        Command::Obs(a) => commands::obs::run(ctx, a),
        Command::Subjects(a) => commands::subjects::run(ctx, a),
        Command::Compact(a) => commands::compact::run(ctx, a),
        Command::Hook(a) => commands::hook::run(ctx, a),
        Command::Setup(a) => commands::setup::run(ctx, a),
        Command::Skill(a) => commands::skill::run(ctx, a),
        Command::Model(a) => commands::model::run(ctx, a),
        Command::Redact(a) => commands::redact::run(ctx, a),
        Command::Restore(a) => commands::restore::run(ctx, a),
        Command::Resume(a) => commands::resume::run(ctx, a),
        Command::Export(a) => commands::export::run(ctx, a),
        Command::Trace(a) => commands::trace::run(ctx, a),
        Command::Mcp(a) => commands::mcp::run(ctx, a),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
