//! peat: the record of what coding agents did.
//!
//! Hooks capture every Claude Code and Codex session into one append-only ledger; every
//! read is a view over it. `main.rs` only calls [`cli::run`]. The layers, lowest first, and
//! the one way data flows through them are in `ARCHITECTURE.md`.

pub mod capture;
pub mod cli;
pub mod embed;
#[cfg(test)]
mod layers;
pub mod ledger;
pub(crate) mod reads;
pub(crate) mod redact;
#[doc(hidden)]
pub mod testing;
pub(crate) mod views;
pub mod vocab;
