//! The vocabulary every layer speaks: events and their envelopes, what an edit wrote and its
//! diff, instants, and the windows of time a person can name. Plain data and pure functions:
//! nothing here opens a store, reads the clock or knows that a view exists.

pub mod change;
pub(crate) mod diff;
pub mod event;
pub(crate) mod time;
pub(crate) mod window;
