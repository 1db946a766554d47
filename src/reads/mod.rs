//! The reads: each answers one kind of question from the views (and, for commits and files,
//! the repository), and returns values for the command line to print. A read never writes
//! the ledger and never opens the views itself: the caller hands it the views it opened.

pub mod blame;
pub mod brief;
pub mod commits;
pub mod files;
pub mod ladder;
pub mod log;
pub mod recall;
pub mod resolve;
pub mod vcs;
