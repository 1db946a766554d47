//! The one error type at the command boundary: what happened, what to do, and the exit code.
//!
//! Exit codes are a contract, as with grep and ripgrep: 0 success, [`EXIT_NOT_FOUND`] when
//! the answer is empty, [`EXIT_ERROR`] for bad usage, invalid input or a store failure, and
//! [`EXIT_BUSY`] when the lock wait ran out.

use std::fmt;

use crate::capture::CaptureError;
use crate::ledger::lock::Held;
use crate::ledger::{LedgerError, LockError};

/// Nothing matched (no hits, no such session or subject, nothing recorded yet).
pub(crate) const EXIT_NOT_FOUND: u8 = 1;
/// Bad usage, invalid input, a store failure (clap's own usage errors exit 2 too).
pub(crate) const EXIT_ERROR: u8 = 2;
/// `EX_TEMPFAIL`: the ledger stayed locked for the whole wait.
pub(crate) const EXIT_BUSY: u8 = 75;

#[derive(Debug)]
pub(crate) struct CliError {
    pub(crate) code: u8,
    pub(crate) message: String,
    pub(crate) hint: Option<String>,
    /// stdout was closed by its reader (`peat events | head`): not an error to report.
    pub(crate) broken_pipe: bool,
}

impl CliError {
    /// An error: bad usage, invalid input, a store failure (exit 2).
    pub(crate) fn user(message: impl Into<String>) -> CliError {
        CliError {
            code: EXIT_ERROR,
            message: message.into(),
            hint: None,
            broken_pipe: false,
        }
    }

    /// What was asked for does not exist (exit 1): not an error of the tool or its input.
    pub(crate) fn not_found(message: impl Into<String>) -> CliError {
        CliError {
            code: EXIT_NOT_FOUND,
            message: message.into(),
            hint: None,
            broken_pipe: false,
        }
    }

    pub(crate) fn hint(mut self, hint: impl Into<String>) -> CliError {
        self.hint = Some(hint.into());
        self
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "peat: {}", self.message)?;
        if let Some(h) = &self.hint {
            write!(f, "\n{h}")?;
        }
        Ok(())
    }
}

/// An error writing stdout (the product): a closed pipe ends the command quietly. This is
/// the only I/O error `?` may turn into a `CliError`; opening or locking a file names the
/// file and what was being done instead (see `embed_pass::pass_lock`).
impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> CliError {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return CliError {
                code: 0,
                message: String::new(),
                hint: None,
                broken_pipe: true,
            };
        }
        CliError::user(format!("cannot write output: {e}"))
    }
}

impl From<LedgerError> for CliError {
    fn from(e: LedgerError) -> CliError {
        match e {
            LedgerError::Lock(LockError::Busy { held, .. }) => CliError {
                code: EXIT_BUSY,
                message: e.to_string(),
                hint: Some(match held {
                    Held::Ledger => "Another peat process is writing (a bulk import can take minutes). Retry shortly, or raise PEAT_LOCK_WAIT_SECS.",
                    Held::Views => "Another peat process has the views open (rebuilding them or catching them up). Retry once it finishes.",
                }.into()),
                broken_pipe: false,
            },
            LedgerError::Missing(ref p) => CliError::not_found(e.to_string()).hint(format!(
                "Nothing has been captured here yet. `peat import` captures the transcripts already on this machine; `peat capture FILE` one transcript. (Looked at {}; set PEAT_DB to use another ledger.)",
                p.display()
            )),
            LedgerError::DiskFull { ref short, .. } => CliError::user(e.to_string()).hint(format!(
                "Nothing was lost: the ledger is as it was before this write. Free at least {} on {} and run the command again; a capture resumes where it stopped.",
                crate::ledger::space::human(short.needed.saturating_sub(short.free)),
                short.mount.as_ref().map_or_else(|| "that disk".to_string(), |m| m.display().to_string())
            )),
            LedgerError::Store { .. } | LedgerError::Corrupt { .. } => {
                CliError::user(e.to_string()).hint(
                    "The store was left as it is. `peat doctor` checks the ledger and the views and says exactly what to run. Never delete the ledger: observations and closing messages exist only there.",
                )
            }
            LedgerError::Lock(LockError::Io { .. }) | LedgerError::Create { .. } => {
                CliError::user(e.to_string())
            }
        }
    }
}

impl From<CaptureError> for CliError {
    fn from(e: CaptureError) -> CliError {
        match e {
            CaptureError::Ledger(l) => l.into(),
            CaptureError::Redact(r) => r.into(),
            CaptureError::NoSession(_) => CliError::user(e.to_string())
                .hint("Name the session it belongs to with --session ID."),
            CaptureError::NotATranscript(_) => CliError::user(e.to_string()).hint(
                "peat reads Claude Code transcripts (~/.claude/projects/*/*.jsonl), Codex rollouts (~/.codex/sessions/**/rollout-*.jsonl[.zst]), Gemini CLI chats (~/.gemini/tmp/*/chats/session-*.json[l]) and OpenCode's database (~/.local/share/opencode/opencode.db).",
            ),
            CaptureError::Io { .. } => CliError::user(e.to_string()),
            CaptureError::Database { .. } => CliError::user(e.to_string()).hint(
                "peat only reads it (the harness keeps writing); if the harness is mid-migration, try again once it has started.",
            ),
        }
    }
}

impl From<crate::views::ViewError> for CliError {
    fn from(e: crate::views::ViewError) -> CliError {
        match e {
            crate::views::ViewError::Ledger(l) => l.into(),
            crate::views::ViewError::Embed(e) => e.into(),
            other => CliError::user(other.to_string()).hint(
                "The views are derived from the ledger: `peat rebuild` discards damaged views and folds them again from the ledger, which it never changes.",
            ),
        }
    }
}

impl From<crate::embed::EmbedError> for CliError {
    fn from(e: crate::embed::EmbedError) -> CliError {
        let hint = e.hint().unwrap_or_else(|| {
            "`peat model status` says what is installed; `peat model fetch` installs the pinned model.".into()
        });
        CliError::user(e.to_string()).hint(hint)
    }
}

impl From<crate::redact::RedactError> for CliError {
    fn from(e: crate::redact::RedactError) -> CliError {
        CliError::user(e.to_string()).hint(
            "Nothing was written: peat stores nothing it cannot redact. Fix the file named above (`peat redact --check FILE` tries the rules on a file).",
        )
    }
}
