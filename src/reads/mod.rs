//! The reads: each answers one kind of question from the views (and, for commits and files,
//! the repository), and returns values for the command line to print. A read never writes
//! the ledger and never opens the views itself: the caller hands it the views it opened.

pub(crate) mod attribution;
pub(crate) mod blame;
pub(crate) mod brief;
pub(crate) mod commits;
pub(crate) mod diff;
pub(crate) mod export;
pub(crate) mod files;
pub(crate) mod ladder;
pub(crate) mod log;
pub(crate) mod moment;
pub(crate) mod recall;
pub(crate) mod resolve;
pub(crate) mod restore;
pub(crate) mod span;
pub(crate) mod trace;
pub(crate) mod vcs;
