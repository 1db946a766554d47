//! peat: the record of what coding agents did.
//!
//! Hooks capture every Claude Code and Codex session into one append-only ledger; every
//! read is a view over it. `main.rs` only calls [`cli::run`].

pub mod asof;
pub mod blame;
pub mod brief;
pub mod capture;
pub mod change;
pub mod cli;
pub mod commands;
pub mod commits;
pub mod ctx;
pub mod diff;
pub mod embed;
pub mod error;
pub mod event;
pub mod files;
pub mod handle;
pub mod hook;
pub mod ladder;
pub mod ledger;
pub mod log;
pub mod recall;
pub mod redact;
pub mod resolve;
pub mod session;
#[doc(hidden)]
pub mod testing;
pub mod time;
pub mod ui;
pub mod vcs;
pub mod views;
pub mod window;
