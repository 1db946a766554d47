//! Helpers for the tests (the library's unit tests and `tests/cli`), not for peat itself.

use std::io::Write;

/// A test that cannot run says so where the suite's reader sees it (written to stderr
/// directly, past the harness's output capture), and fails instead when the run requires
/// it: under `CI=true`, or when `required` (e.g. `PEAT_REQUIRE_MODEL=1`). The caller
/// returns right after.
#[track_caller]
pub fn skip(reason: &str, required: bool) {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let at = std::panic::Location::caller();
    assert!(
        !(ci || required),
        "{at}: this test cannot run, and this run requires it: {reason}"
    );
    let _ = writeln!(std::io::stderr(), "SKIP ({at}): {reason}");
}
