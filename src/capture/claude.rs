//! Claude Code session transcripts. (Being written.)
use super::{Emit, FileHints, TranscriptParser};
use crate::event::SessionId;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Claude {}

impl Claude {
    pub fn new(_hints: &FileHints) -> Claude {
        Claude {}
    }
}

impl TranscriptParser for Claude {
    fn line(&mut self, _line: u64, _value: &serde_json::Value, _out: &mut Emit) {}
    fn flush(&self, _out: &mut Emit) {}
    fn session(&self) -> Option<SessionId> {
        None
    }
    fn last_ts(&self) -> i64 {
        0
    }
}
