//! (Being written.)
pub mod keyword;
