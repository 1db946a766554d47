//! peat: the record of what coding agents did.
//!
//! Hooks capture every Claude Code and Codex session into one append-only ledger; every
//! read is a view over it. `main.rs` only calls [`cli::run`].

pub mod capture;
pub mod change;
pub mod event;
pub mod time;
