//! One file per verb: its arguments (the doc comment is its help) and its printing.
//! The logic lives in the library modules they call.

pub mod asof;
pub mod capture;
pub mod events;
pub mod import;
pub mod model;
pub mod rebuild;
pub mod recall;
pub mod sessions;
pub mod show;
