use clap::Args;
use std::path::PathBuf;

use crate::capture::{self, CaptureOptions, Receipt};
use crate::cli::ctx::Ctx;
use crate::cli::error::{CliError, EXIT_ERROR};
use crate::cli::hook::spool::{self, Spooled};
use crate::ledger::{LedgerError, Mode, damage};
use crate::vocab::event::SessionId;

/// Capture transcripts into the ledger
///
/// Reads Claude Code session transcripts and Codex rollouts (plain or .zst), Gemini CLI chat
/// recordings (.jsonl, and the older session-*.json), OpenCode's database (opencode.db,
/// read only, every session in it) and its older storage/session/<project>/<id>.json
/// sessions, detected by their content. Only what was added since
/// the last capture of a file is read (a rewritten JSON document is read again when it
/// changed, and what it changed is a revision); capturing again is harmless. A malformed line is skipped and counted, never fatal; a number too
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
pub(crate) struct CaptureArgs {
    /// Transcript files
    #[arg(required_unless_present = "sweep", value_name = "FILE")]
    pub(crate) files: Vec<PathBuf>,
    /// Then catch up every known root, as `peat import` does: only the transcripts that
    /// changed since the last sweep are read (what the hooks' captures run)
    #[arg(long)]
    pub(crate) sweep: bool,
    /// Attribute the events to this session instead of the one the transcript names
    #[arg(long, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// The agent's closing message, as the Stop hook received it (authoritative)
    #[arg(
        long,
        value_name = "TEXT",
        env = "PEAT_FINAL_MSG",
        hide_env_values = true
    )]
    pub(crate) final_msg: Option<String>,
}

pub(crate) fn run(ctx: &Ctx, args: &CaptureArgs) -> Result<u8, CliError> {
    // What cannot be read is refused before the lock is taken: a FIFO or a device would
    // hold it forever, and a missing file need not wait behind a writer.
    let mut failed = 0;
    let mut files = Vec::new();
    for file in &args.files {
        match capture::reader::regular_file(file) {
            Ok(()) => files.push(file),
            Err(source) => {
                failed += 1;
                let e = CliError::from(capture::CaptureError::Io {
                    path: file.clone(),
                    source,
                });
                crate::cli::ui::stderr_line(&e.to_string());
            }
        }
    }
    if files.is_empty() && !args.sweep {
        return Ok(EXIT_ERROR);
    }
    let store = &ctx.location.store;
    // A closing message is spooled before the wait: if the wait runs out, the next capture
    // records it. Without a spool it is still passed straight through.
    let mut direct = None;
    if let Some(msg) = args.final_msg.as_deref().filter(|m| !m.trim().is_empty()) {
        for file in &files {
            if let Err(e) = spool::put(store, file, msg) {
                ctx.ui
                    .warn(&format!("cannot spool the closing message: {e}"));
                direct = Some(msg.to_string());
            }
        }
    }
    let opened = ctx.open(Mode::Create);
    // Whether it got the lock or gave up, this capture no longer waits for it.
    for file in &files {
        spool::release(store, file);
    }
    let mut ledger = opened?;
    let redactor = ctx.redactor();
    for (file, spooled, named) in with_spool(store, &files) {
        let opts = CaptureOptions {
            // --session names the files given, not those the spool adds.
            session: args.session.clone().filter(|_| named).map(SessionId),
            final_msg: match &spooled {
                Some(s) => Some(s.final_msg.clone()),
                None => direct.clone().filter(|_| named),
            },
            // A file named is captured whole, every session of a database included.
            place: None,
        };
        match capture::capture_file(&mut ledger, &redactor, &file, &opts) {
            Ok(r) => {
                if let Some(s) = &spooled {
                    spool::done(store, s);
                }
                ctx.ui.note(&receipt_line(&r))
            }
            // The store failing (busy, full, damaged) stops the capture; a bad file does not.
            Err(capture::CaptureError::Ledger(e)) => {
                if matches!(e, LedgerError::Store { .. } | LedgerError::Corrupt { .. }) {
                    damage::record(ledger.path(), &e.to_string(), "peat capture");
                }
                return Err(e.into());
            }
            Err(capture::CaptureError::Redact(e)) => return Err(e.into()),
            Err(e) => {
                failed += 1;
                crate::cli::ui::stderr_line(&CliError::from(e).to_string());
            }
        }
    }
    if args.sweep {
        let swept = super::import::sweep(ctx, &mut ledger, &redactor, false)?;
        failed += swept.failed;
        ctx.ui.note(&format!("swept: {}", swept.line()));
    }
    ledger.sync()?;
    crate::cli::shared::catch_up_views(ctx, &ledger, ctx.model_slot()?)?;
    // Recorded, but into a ledger known to be damaged (the warning said so): not a success.
    let damaged = damage::noted(ledger.path()).is_some();
    Ok(if failed > 0 || damaged { EXIT_ERROR } else { 0 })
}

/// The files to capture, each with its spooled closing message: those named, then every
/// other transcript the spool holds a message for (left by a capture that gave up), and
/// whether it was named.
fn with_spool(
    store: &std::path::Path,
    files: &[&PathBuf],
) -> Vec<(PathBuf, Option<Spooled>, bool)> {
    let mut spooled = spool::pending(store);
    let mut out = Vec::new();
    for file in files {
        let real = spool::canonical(file);
        let at = spooled.iter().position(|s| s.transcript == real);
        out.push((file.to_path_buf(), at.map(|i| spooled.remove(i)), true));
    }
    for s in spooled {
        if capture::reader::regular_file(&s.transcript).is_ok() {
            out.push((s.transcript.clone(), Some(s), false));
        }
    }
    out
}

/// `captured 161 events (161 new, 0 revised) from session 2d984148-…; 2 bad lines skipped`
pub(crate) fn receipt_line(r: &Receipt) -> String {
    let session = match (&r.session, r.others.len()) {
        (None, _) => "session (none yet)".to_string(),
        (Some(s), 0) => format!("session {s}"),
        // A database holds many sessions.
        (Some(_), others) => format!("{} sessions", others + 1),
    };
    let mut line = format!(
        "captured {} events ({} new, {} revised) from {session}",
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
