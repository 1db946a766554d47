//! The one error type at the command boundary: what happened, what to do, and the exit code.

use std::fmt;

use crate::capture::CaptureError;
use crate::ledger::{LedgerError, LockError};

/// `EX_TEMPFAIL`: the ledger stayed locked for the whole wait.
pub const EXIT_BUSY: u8 = 75;

#[derive(Debug)]
pub struct CliError {
    pub code: u8,
    pub message: String,
    pub hint: Option<String>,
    /// stdout was closed by its reader (`peat events | head`): not an error to report.
    pub broken_pipe: bool,
}

impl CliError {
    /// A user or data error (exit 1).
    pub fn user(message: impl Into<String>) -> CliError {
        CliError {
            code: 1,
            message: message.into(),
            hint: None,
            broken_pipe: false,
        }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> CliError {
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
            LedgerError::Lock(LockError::Busy { .. }) => CliError {
                code: EXIT_BUSY,
                message: e.to_string(),
                hint: Some(
                    "Another peat process is writing (a bulk import can take minutes). Retry shortly, or raise PEAT_LOCK_WAIT_SECS."
                        .into(),
                ),
                broken_pipe: false,
            },
            LedgerError::Missing(ref p) => CliError::user(e.to_string()).hint(format!(
                "Nothing has been captured here yet. `peat import` captures the transcripts already on this machine; `peat capture FILE` one transcript. (Looked at {}; set PEAT_DB to use another ledger.)",
                p.display()
            )),
            LedgerError::Store { .. } | LedgerError::Corrupt { .. } => {
                CliError::user(e.to_string()).hint(
                    "The store was left as it is. If it stays broken, move the directory aside and run `peat import` to rebuild it from the transcripts.",
                )
            }
            LedgerError::Lock(LockError::Io { .. }) | LedgerError::Create { .. } => {
                CliError::user(e.to_string())
            }
            LedgerError::Redact(_) => CliError::user(e.to_string()).hint(
                "Nothing was written: peat stores nothing it cannot redact. Fix the file named above (`peat redact --check FILE` tries the rules on a file).",
            ),
        }
    }
}

impl From<CaptureError> for CliError {
    fn from(e: CaptureError) -> CliError {
        match e {
            CaptureError::Ledger(l) => l.into(),
            CaptureError::NoSession(_) => CliError::user(e.to_string())
                .hint("Name the session it belongs to with --session ID."),
            CaptureError::NotATranscript(_) => CliError::user(e.to_string()).hint(
                "peat reads Claude Code transcripts (~/.claude/projects/*/*.jsonl) and Codex rollouts (~/.codex/sessions/**/rollout-*.jsonl[.zst]).",
            ),
            CaptureError::Io { .. } => CliError::user(e.to_string()),
        }
    }
}

impl From<crate::views::ViewError> for CliError {
    fn from(e: crate::views::ViewError) -> CliError {
        match e {
            crate::views::ViewError::Ledger(l) => l.into(),
            crate::views::ViewError::Embed(e) => e.into(),
            other => CliError::user(other.to_string()).hint(
                "The views are derived from the ledger and can be rebuilt: run `peat rebuild`. If the views database itself will not open, move the `views` folder inside the store (.peat/db, unless PEAT_DB names another) aside: peat rebuilds it from the ledger on the next read.",
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
        CliError::from(LedgerError::Redact(e))
    }
}
