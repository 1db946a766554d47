//! The command line: parse, resolve the context once, dispatch to a verb.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

use crate::commands;
use crate::error::CliError;
use crate::ledger::{self, Access, Ledger, Location, Mode};
use crate::ui::Ui;
use crate::views::{ModelSlot, Views};

/// The record of what coding agents did.
///
/// Hooks capture every Claude Code and Codex session into one append-only ledger; every
/// read is a view over it.
#[derive(Parser, Debug)]
#[command(
    name = "peat",
    version,
    propagate_version = true,
    arg_required_else_help = true
)]
#[command(
    after_help = "Start with `peat import` to capture the transcripts already on this machine.\nThe ledger lives in .peat/db beside the nearest .git or .jj (or $PEAT_DB)."
)]
pub struct Cli {
    /// Full structured output (the API form: never clipped, never styled)
    #[arg(long, global = true)]
    pub json: bool,

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
    Recall(commands::recall::RecallArgs),
    Asof(commands::asof::AsofArgs),
    Rebuild(commands::rebuild::RebuildArgs),
    Model(commands::model::ModelArgs),
}

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
    fn resolve(json: bool) -> Result<Ctx, CliError> {
        let cwd = std::env::current_dir()
            .map_err(|e| CliError::user(format!("cannot read the current directory: {e}")))?;
        let env_db = std::env::var_os("PEAT_DB").map(PathBuf::from);
        let location = ledger::locate(&cwd, env_db.as_deref());
        let now_ms = match std::env::var("PEAT_NOW") {
            Ok(s) => crate::time::parse_iso_ms(&s).ok_or_else(|| {
                CliError::user(format!("PEAT_NOW is not an ISO-8601 instant: {s:?}"))
                    .hint("Use a form like 2026-08-10T19:18:11Z, or unset it.")
            })?,
            Err(_) => jiff::Timestamp::now().as_millisecond(),
        };
        let lock_wait = match std::env::var("PEAT_LOCK_WAIT_SECS") {
            Ok(s) => Duration::from_secs(s.trim().parse().map_err(|_| {
                CliError::user(format!(
                    "PEAT_LOCK_WAIT_SECS is not a number of seconds: {s:?}"
                ))
            })?),
            Err(_) => Duration::from_secs(120),
        };
        let who: Vec<String> = std::env::args().take(3).collect();
        Ok(Ctx {
            ui: Ui::detect(),
            json,
            cwd,
            home: std::env::var_os("HOME").map(PathBuf::from),
            location,
            now_ms,
            lock_wait,
            who: who.join(" "),
            tz: jiff::tz::TimeZone::system(),
        })
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
        Ok(Ledger::open(
            &self.location.store,
            Access {
                mode,
                wait: self.lock_wait,
                who: &self.who,
                on_wait: &mut on_wait,
            },
        )?)
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
        Ok(ModelSlot::installed(crate::embed::Profile::Bulk)?)
    }

    /// Open the ledger and its views, caught up. A rebuild says so on stderr.
    pub fn open_views(&self) -> Result<(Ledger, Views, ModelSlot), CliError> {
        let ledger = self.open(Mode::Existing)?;
        let mut model = self.model_slot()?;
        let ui = self.ui;
        let views = Views::open(&ledger, &mut model, self.tz.clone(), &mut |line| {
            ui.note(line)
        })?;
        Ok((ledger, views, model))
    }
}

/// Parse the command line and run it. Returns the process exit code.
pub fn run() -> u8 {
    let cli = Cli::parse();
    let result = Ctx::resolve(cli.json).and_then(|ctx| match &cli.command {
        Some(command) => dispatch(&ctx, command),
        None => commands::recall::run(
            &ctx,
            &commands::recall::RecallArgs {
                words: cli.words.clone(),
                limit: 12,
                ..Default::default()
            },
        ),
    });
    match result {
        Ok(code) => code,
        Err(e) if e.broken_pipe => 0,
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
        Command::Recall(a) => commands::recall::run(ctx, a),
        Command::Asof(a) => commands::asof::run(ctx, a),
        Command::Rebuild(a) => commands::rebuild::run(ctx, a),
        Command::Model(a) => commands::model::run(ctx, a),
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
