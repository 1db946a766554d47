//! One file per verb: its arguments (the doc comment is its help) and its printing.
//! The logic lives in the library modules they call.

pub(crate) mod asof;
pub(crate) mod blame;
pub(crate) mod brief;
pub(crate) mod capture;
pub(crate) mod compact;
pub(crate) mod diff;
pub(crate) mod dispatch;
pub(crate) mod doctor;
pub(crate) mod events;
pub(crate) mod export;
pub(crate) mod file;
pub(crate) mod hook;
pub(crate) mod import;
pub(crate) mod log;
pub(crate) mod mcp;
pub(crate) mod model;
pub(crate) mod obs;
pub(crate) mod rebuild;
pub(crate) mod recall;
pub(crate) mod redact;
pub(crate) mod restore;
pub(crate) mod resume;
pub(crate) mod sessions;
pub(crate) mod setup;
pub(crate) mod show;
pub(crate) mod skill;
pub(crate) mod subjects;
pub(crate) mod trace;
pub(crate) mod trailer;
pub(crate) mod zoom;
