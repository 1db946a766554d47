//! The command line: parse, resolve the context once, dispatch to a verb.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

use crate::commands;
use crate::error::CliError;
use crate::ledger::{self, Access, Ledger, Location, Mode};
use crate::ui::Ui;
use crate::views::{ModelSlot, Views};

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
  peat peat-8nj             a bead id: every text that mentions it
  peat rate limiter         anything else: keyword + semantic search
A shape whose lookup finds nothing falls through to the next (a hex word that is
neither a session nor a commit is searched). `peat show`, `peat zoom`,
`peat subjects NAME` and `peat recall` are the explicit spellings.

DEPOSITING:
  peat obs staging \"deploys go through the blue env first\" --from 1042

EXIT STATUS (like grep and ripgrep):
  0   success
  1   nothing found (no hits, no such session or subject, nothing recorded yet)
  2   an error: bad usage, invalid input (a file that is not a transcript), a store failure
  75  the ledger stayed busy for the whole wait (PEAT_LOCK_WAIT_SECS, default 120)
`peat hook` runs always exit 0: a hook never breaks an agent session.

Start with `peat setup` in a project, or `peat import` for every transcript on this
machine. The ledger lives in .peat/db beside the nearest .git or .jj (or $PEAT_DB).";

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
pub struct Cli {
    /// Full structured output (the API form: never clipped, never styled)
    #[arg(long, global = true)]
    pub json: bool,

    /// How many further-back bands the brief shows (bare `peat`; see `peat brief --help`)
    #[arg(long, value_name = "N")]
    pub budget: Option<usize>,

    /// Words to search for (the same as `peat recall WORDS`)
    #[arg(value_name = "WORDS")]
    pub words: Vec<String>,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
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
}

/// How long a writer waits for the lock unless `PEAT_LOCK_WAIT_SECS` says otherwise.
const DEFAULT_LOCK_WAIT_SECS: u64 = 120;

/// What every command works with, resolved once: no verb reads the environment itself.
pub struct Ctx {
    pub ui: Ui,
    pub json: bool,
    pub cwd: PathBuf,
    pub home: Option<PathBuf>,
    pub location: Location,
    /// "Now", read once here (or pinned by `PEAT_NOW` for reproducible output).
    pub now_ms: i64,
    pub lock_wait: Duration,
    /// What this process is doing, for the lock's holder line.
    pub who: String,
    /// The time zone calendar days are counted in.
    pub tz: jiff::tz::TimeZone,
}

impl Ctx {
    /// Resolve the context; an invalid environment value is an error.
    fn resolve(json: bool) -> Result<Ctx, CliError> {
        let (ctx, mut problems) = Ctx::resolve_lenient(json)?;
        match problems.is_empty() {
            true => Ok(ctx),
            false => Err(problems.remove(0)),
        }
    }

    /// Resolve the context, taking the default for an invalid environment value and
    /// returning what was wrong: a hook must still run, and say so in its log.
    fn resolve_lenient(json: bool) -> Result<(Ctx, Vec<CliError>), CliError> {
        let mut problems = Vec::new();
        let cwd = std::env::current_dir()
            .map_err(|e| CliError::user(format!("cannot read the current directory: {e}")))?;
        let env_db = std::env::var_os("PEAT_DB").map(PathBuf::from);
        let location = ledger::locate(&cwd, env_db.as_deref());
        let now = jiff::Timestamp::now().as_millisecond();
        let now_ms = match std::env::var("PEAT_NOW") {
            Ok(s) => crate::time::parse_iso_ms(&s).unwrap_or_else(|| {
                problems.push(
                    CliError::user(format!("PEAT_NOW is not an ISO-8601 instant: {s:?}"))
                        .hint("Use a form like 2026-08-10T19:18:11Z, or unset it."),
                );
                now
            }),
            Err(_) => now,
        };
        let lock_wait = match std::env::var("PEAT_LOCK_WAIT_SECS") {
            Ok(s) => Duration::from_secs(s.trim().parse().unwrap_or_else(|_| {
                problems.push(
                    CliError::user(format!(
                        "PEAT_LOCK_WAIT_SECS is not a number of seconds: {s:?}"
                    ))
                    .hint("Set it to a whole number like 30, or unset it for the default (120)."),
                );
                DEFAULT_LOCK_WAIT_SECS
            })),
            Err(_) => Duration::from_secs(DEFAULT_LOCK_WAIT_SECS),
        };
        let who: Vec<String> = std::env::args().take(3).collect();
        let ctx = Ctx {
            ui: Ui::detect(),
            json,
            cwd,
            home: std::env::var_os("HOME").map(PathBuf::from),
            location,
            now_ms,
            lock_wait,
            who: who.join(" "),
            tz: jiff::tz::TimeZone::system(),
        };
        Ok((ctx, problems))
    }

    /// Open the ledger, waiting for the lock as configured.
    pub fn open(&self, mode: Mode) -> Result<Ledger, CliError> {
        let ui = self.ui;
        let wait = self.lock_wait;
        let mut on_wait = move || {
            ui.note(&format!(
                "peat: the ledger is busy (another peat process); waiting up to {}s…",
                wait.as_secs()
            ))
        };
        let ledger = Ledger::open(
            &self.location.store,
            Access {
                mode,
                wait: self.lock_wait,
                who: &self.who,
                on_wait: &mut on_wait,
            },
        )?;
        if let Some(damage) = ledger::damage::noted(ledger.path()) {
            self.ui.warn(&format!(
                "the ledger is damaged: {damage}. Answers may miss what the damaged part held; `peat doctor` says what to run."
            ));
        }
        if ledger.tightened > 0 {
            self.ui.note(&format!(
                "peat: the store at {} was open to other users: {} files and folders made private",
                self.location.store.display(),
                ledger.tightened
            ));
        }
        let mut ledger = ledger;
        if mode == Mode::Create {
            commands::redact::upgrade(self, &mut ledger)?;
        }
        Ok(ledger)
    }
}

impl Ctx {
    /// The embedding model, if installed (loaded only when something needs it), set up
    /// for a few texts at a time.
    pub fn model_slot(&self) -> Result<ModelSlot, CliError> {
        Ok(ModelSlot::installed(crate::embed::Profile::OneShot)?)
    }

    /// The embedding model set up for embedding many texts (import, rebuild).
    pub fn bulk_model_slot(&self) -> Result<ModelSlot, CliError> {
        let ui = self.ui;
        Ok(
            ModelSlot::installed(crate::embed::Profile::Bulk)?.announcing(move |n| {
                ui.note(&format!(
                    "peat: embedding {n} texts for the semantic lane (about {} s; done once, cached)…",
                    (n / 80).max(1)
                ))
            }),
        )
    }

    /// Open the ledger and its views, caught up. A rebuild says so on stderr.
    pub fn open_views(&self) -> Result<(Ledger, Views, ModelSlot), CliError> {
        let ledger = self.open(Mode::Existing)?;
        let mut model = self.model_slot()?;
        let ui = self.ui;
        let views = crate::views::stamp::open_recovering(
            &ledger,
            &mut model,
            self.tz.clone(),
            &mut |line| ui.note(line),
        )?;
        Ok((ledger, views, model))
    }
}

/// Parse the command line and run it. Returns the process exit code.
pub fn run() -> u8 {
    // A hook must never break the agent's session: whatever goes wrong before the hook
    // itself runs (a bad flag, an unreadable environment) exits 0 too. `hook install` is a
    // person's command and reports its errors.
    crate::embed::onnx::keep_runtime_out_of_home();
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
    let mut cli = cli;
    if let (Some(n), Some(Command::Brief(b))) = (cli.budget, &mut cli.command) {
        b.budget.get_or_insert(n);
    } else if cli.budget.is_some() && cli.command.is_some() {
        let e = CliError::user("--budget before a verb: it belongs to the bare brief")
            .hint("Write `peat brief --budget N` (or `peat --budget N` alone).");
        eprintln!("{e}");
        return 2;
    }
    let resolved = if hook_run {
        // A hook runs with the defaults and logs what was wrong with its environment.
        Ctx::resolve_lenient(cli.json).map(|(ctx, problems)| {
            // Only where hooks act: logging creates the desk's `.peat`.
            if crate::hook::enabled(&ctx.location) {
                for p in problems {
                    crate::hook::log(&ctx, "environment", None, &p.to_string());
                }
            }
            ctx
        })
    } else {
        Ctx::resolve(cli.json)
    };
    let result = resolved.and_then(|ctx| match &cli.command {
        Some(command) => dispatch(&ctx, command),
        None if cli.words.is_empty() => {
            commands::brief::run(&ctx, &commands::brief::BriefArgs { budget: cli.budget })
        }
        None => commands::dispatch::run(&ctx, &cli.words),
    });
    match result {
        Ok(code) => code,
        Err(e) if e.broken_pipe => 0,
        Err(_) if hook_run => 0,
        Err(e) => {
            eprintln!("{e}");
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
