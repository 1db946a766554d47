//! Capture one transcript file into the ledger. (Being written.)
pub struct CaptureOptions;
pub struct CaptureError;
pub struct Receipt;
pub fn capture_file() {}
