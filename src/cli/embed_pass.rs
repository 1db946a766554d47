//! The background embedding pass as the commands start it: its lock (`embed.lock`), whether
//! one is at work, starting one after a write or a search, and what a search says meanwhile.
//! `peat model embed` is the pass itself.

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::reads::ladder::noun;

/// The lock one embedding pass holds (`<store>/embed.lock`), beside the ledger's.
pub(crate) fn pass_lock(store: &std::path::Path) -> Result<std::fs::File, CliError> {
    let path = store.join("embed.lock");
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| pass_lock_error("open", &path, e))
}

/// The embedding pass's lock could not be opened or taken: say which file and why (a
/// permission problem is not a closed pipe).
pub(crate) fn pass_lock_error(what: &str, path: &std::path::Path, e: std::io::Error) -> CliError {
    CliError::user(format!("cannot {what} {}: {e}", path.display()))
}

/// After a write from a terminal: start the embedding pass, and say so.
pub(crate) fn start_pass_after_write(ctx: &Ctx, queued: usize) {
    if start_pass(ctx, queued) && ctx.ui.stderr_tty {
        ctx.ui.note(&format!(
            "peat: embedding {} in the background for the semantic lane (`peat model status` shows the backlog)",
            noun(queued as i64, "text")
        ));
    }
}

/// What a search says while texts wait for the embedding pass.
pub(crate) fn backlog_note(queued: usize, running: bool) -> String {
    let texts = if queued == 1 { "text is" } else { "texts are" };
    let what = if running {
        "the embedding pass is at work"
    } else {
        "`peat model embed` embeds them"
    };
    format!("peat: {queued} {texts} not embedded yet, found by keywords only ({what})")
}

/// Whether an embedding pass is at work on `store` now.
pub(crate) fn pass_running(store: &std::path::Path) -> bool {
    pass_lock(store).is_ok_and(|f| matches!(f.try_lock(), Err(std::fs::TryLockError::WouldBlock)))
}

/// After a write, or a search that found texts waiting: start the embedding pass in the
/// background when texts wait and none is at work (a rebuild a read made, after `peat
/// model fetch`, queues everything). Its stderr is the hook log when this process writes there (a hook's capture),
/// else nowhere (`peat model status` shows the backlog; `peat model embed` the errors).
/// Returns whether a pass is at work now (already, or just started).
pub(crate) fn start_pass(ctx: &Ctx, queued: usize) -> bool {
    let store = &ctx.location.store;
    if queued == 0 {
        return false;
    }
    if pass_running(store) {
        return true;
    }
    let exe = &ctx.exe;
    let into_hook_log = ctx.in_hook_log;
    let started = crate::cli::hook::spawn_niced(exe, |cmd| {
        cmd.args(["model", "embed", "--background"])
            .env("PEAT_DB", store)
            .stderr(if into_hook_log {
                std::process::Stdio::inherit()
            } else {
                std::process::Stdio::null()
            });
    });
    match started {
        Ok(_) => true,
        Err(e) => {
            ctx.ui.warn(&format!(
                "cannot start the embedding pass ({e}): {queued} texts wait; run `peat model embed`"
            ));
            false
        }
    }
}
