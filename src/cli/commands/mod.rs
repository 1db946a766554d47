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

/// A read's `--json` object with how many recorded changes its answer does not show yet:
/// `behind` is 0 when caught up, more while a writer beside the read was still folding them
/// (the stderr note says so too). Array outputs keep their shape and only the note says it.
#[derive(serde::Serialize)]
pub struct Behind<'a, T: serde::Serialize> {
    #[serde(flatten)]
    pub answer: &'a T,
    pub behind: u64,
}
