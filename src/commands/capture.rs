use clap::Args;
use std::path::PathBuf;

use crate::capture::{self, CaptureOptions, Receipt};
use crate::cli::Ctx;
use crate::error::CliError;
use crate::event::SessionId;
use crate::ledger::Mode;

/// Capture transcripts into the ledger
///
/// Reads Claude Code session transcripts and Codex rollouts (plain or .zst), detected by
/// their content. Only what was added since the last capture of a file is read; capturing
/// again is harmless. A malformed line is skipped and counted, never fatal; a number too
/// large for a double (1e999999) is kept as its text instead of losing the line.
///
/// What is recorded: every prompt (Codex prompts from either of the two copies a rollout
/// writes, once), and text the harness wrote on the person's behalf marked as such
/// (commands, notifications, the instructions of Claude's compaction agent); every turn's
/// closing message (a turn ends at the next prompt, Claude's turn_duration line, or Codex's
/// task_complete); every tool call, hosted web searches included, with its failure where
/// it happened (a process left running by exec_command fails that call when a later
/// write_stdin poll reads a non-zero exit). Prompts, agent texts and compaction summaries
/// are kept whole: listings clip them, --json and `peat show SESSION SEQ` never do.
#[derive(Args, Debug)]
pub struct CaptureArgs {
    /// Transcript files
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Attribute the events to this session instead of the one the transcript names
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// The agent's closing message, as the Stop hook received it (authoritative)
    #[arg(
        long,
        value_name = "TEXT",
        env = "PEAT_FINAL_MSG",
        hide_env_values = true
    )]
    pub final_msg: Option<String>,
}

pub fn run(ctx: &Ctx, args: &CaptureArgs) -> Result<u8, CliError> {
    let opts = CaptureOptions {
        session: args.session.clone().map(SessionId),
        final_msg: args.final_msg.clone(),
    };
    let mut ledger = ctx.open(Mode::Create)?;
    let mut failed = 0;
    for file in &args.files {
        match capture::capture_file(&mut ledger, file, &opts) {
            Ok(r) => ctx.ui.note(&receipt_line(&r)),
            Err(e) => {
                failed += 1;
                let e = CliError::from(e);
                if e.code != 1 {
                    return Err(e);
                }
                eprintln!("{e}");
            }
        }
    }
    ledger.sync()?;
    catch_up_views(ctx, &ledger, ctx.model_slot()?)?;
    Ok(if failed > 0 { 1 } else { 0 })
}

/// `captured 161 events (161 new, 0 revised) from session 2d984148-…; 2 bad lines skipped`
pub fn receipt_line(r: &Receipt) -> String {
    let session = r
        .session
        .as_ref()
        .map_or_else(|| "(none yet)".to_string(), |s| s.to_string());
    let mut line = format!(
        "captured {} events ({} new, {} revised) from session {session}",
        r.events, r.written.new, r.written.replaced
    );
    if r.skipped > 0 {
        line.push_str(&format!("; {} bad lines skipped", r.skipped));
    }
    if r.overflowed > 0 {
        line.push_str(&format!(
            "; {} events did not fit their line's slots",
            r.overflowed
        ));
    }
    if r.partial_tail {
        line.push_str("; the last line is still being written, left for the next capture");
    }
    line
}

/// Bring the views up to date with what was just written, while the lock is still held:
/// the next read then starts warm.
pub fn catch_up_views(
    ctx: &Ctx,
    ledger: &crate::ledger::Ledger,
    mut model: crate::views::ModelSlot,
) -> Result<(), CliError> {
    let ui = ctx.ui;
    crate::views::Views::open(ledger, &mut model, ctx.tz.clone(), &mut |line| {
        ui.note(line)
    })?;
    Ok(())
}
