//! A note beside the ledger that it was found damaged, so every later read says so.
//!
//! Reads answer from the views and do not scan the ledger: without this note, damage found
//! by one command (`peat doctor`, a capture that met a bad block) would go unmentioned by
//! the next. `peat doctor` writes it when it finds damage and removes it when the ledger
//! verifies clean.

use std::path::Path;

const NOTE: &str = "ledger.damaged";

/// Record that the ledger at `store` is damaged: `what` says how, `by` which command found it.
pub(crate) fn record(store: &Path, what: &str, by: &str) {
    let when = jiff::Timestamp::now().strftime("%Y-%m-%d %H:%M UTC");
    let first = what.lines().next().unwrap_or(what);
    // Best effort: failing to leave the note must not hide the error being reported.
    let _ = std::fs::write(
        store.join(NOTE),
        format!("{first} (found by {by}, {when})\n"),
    );
}

/// The recorded damage, if any.
pub(crate) fn noted(store: &Path) -> Option<String> {
    let text = std::fs::read_to_string(store.join(NOTE)).ok()?;
    Some(text.trim().to_string()).filter(|t| !t.is_empty())
}

/// The ledger verified clean: forget any earlier note.
pub(crate) fn clear(store: &Path) {
    let _ = std::fs::remove_file(store.join(NOTE));
}
