//! One file per verb: its arguments (the doc comment is its help) and its printing.
//! The logic lives in the library modules they call.

pub mod asof;
pub mod blame;
pub mod brief;
pub mod capture;
pub mod compact;
pub mod dispatch;
pub mod doctor;
pub mod events;
pub mod file;
pub mod hook;
pub mod import;
pub mod log;
pub mod model;
pub mod obs;
pub mod rebuild;
pub mod recall;
pub mod redact;
pub mod sessions;
pub mod setup;
pub mod show;
pub mod skill;
pub mod subjects;
pub mod trailer;
pub mod zoom;
