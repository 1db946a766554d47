//! Instants as the ledger stores them (ms since the epoch) and their ISO-8601 spelling.
//!
//! Nothing here reads the wall clock: "now" is always passed in by the command layer.

use jiff::Timestamp;

/// Milliseconds since the Unix epoch of an ISO-8601 / RFC 3339 instant
/// (`2026-08-10T19:18:11.311Z`, with any offset or fraction). `None` if it is not one.
pub fn parse_iso_ms(s: &str) -> Option<i64> {
    s.trim()
        .parse::<Timestamp>()
        .ok()
        .map(Timestamp::as_millisecond)
}

/// The UTC ISO-8601 spelling of `ms`, with milliseconds: `2026-08-10T19:18:11.311Z`.
pub fn format_iso_ms(ms: i64) -> String {
    match Timestamp::from_millisecond(ms) {
        Ok(t) => t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        Err(_) => ms.to_string(),
    }
}

/// The UTC calendar date of `ms`: `2026-08-10`.
pub fn utc_date(ms: i64) -> String {
    match Timestamp::from_millisecond(ms) {
        Ok(t) => t.strftime("%Y-%m-%d").to_string(),
        Err(_) => ms.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_timestamps_round_trip() {
        let ms = parse_iso_ms("2026-08-10T19:18:11.311Z").unwrap();
        assert_eq!(ms, 1_786_389_491_311);
        assert_eq!(format_iso_ms(ms), "2026-08-10T19:18:11.311Z");
        assert_eq!(utc_date(ms), "2026-08-10");
        assert_eq!(parse_iso_ms("2026-08-10T21:18:11.311+02:00"), Some(ms));
        assert_eq!(
            parse_iso_ms("2025-09-25T01:22:20Z"),
            Some(1_758_763_340_000)
        );
        assert_eq!(parse_iso_ms("garbage"), None);
        assert_eq!(parse_iso_ms(""), None);
        for ms in [0, 1, 999, 1_786_389_491_311, 4_102_444_800_000] {
            assert_eq!(parse_iso_ms(&format_iso_ms(ms)), Some(ms));
        }
    }
}
