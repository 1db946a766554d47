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

/// `ms` as a local date and minute (`2026-08-10 21:18`), for people reading listings.
pub fn local_minute(ms: i64) -> String {
    match Timestamp::from_millisecond(ms) {
        Ok(t) => t
            .to_zoned_datetime(jiff::tz::TimeZone::system())
            .strftime("%Y-%m-%d %H:%M")
            .to_string(),
        Err(_) => ms.to_string(),
    }
}

/// The instant a `--since` value names, relative to `now_ms`: a count of days (`3`), a
/// duration (`12h`, `3d`, `2w`), or a local date (`2026-11-01`, from its start).
pub fn parse_since(spec: &str, now_ms: i64) -> Result<i64, String> {
    let spec = spec.trim();
    const HOUR: i64 = 3_600_000;
    let unit = |c: char| match c {
        'm' => Some(60_000),
        'h' => Some(HOUR),
        'd' => Some(24 * HOUR),
        'w' => Some(7 * 24 * HOUR),
        _ => None,
    };
    if let Ok(days) = spec.parse::<i64>() {
        return Ok(now_ms - days * 24 * HOUR);
    }
    if let Some(last) = spec.chars().last()
        && let Some(per) = unit(last)
        && let Ok(n) = spec[..spec.len() - 1].parse::<i64>()
    {
        return Ok(now_ms - n * per);
    }
    if let Ok(date) = spec.parse::<jiff::civil::Date>()
        && let Ok(z) = date.to_zoned_datetime(jiff::tz::TimeZone::system())
    {
        return Ok(z.timestamp().as_millisecond());
    }
    Err(format!(
        "not a time: {spec:?} (want a number of days like 3, a duration like 12h, 3d or 2w, or a date like 2026-11-01)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_accepts_days_durations_and_dates() {
        let now = 10 * 86_400_000;
        assert_eq!(parse_since("3", now), Ok(7 * 86_400_000));
        assert_eq!(parse_since("12h", now), Ok(now - 12 * 3_600_000));
        assert_eq!(parse_since("1w", now), Ok(3 * 86_400_000));
        assert!(parse_since("1970-01-02", now).is_ok());
        assert!(
            parse_since("yesterday-ish", now)
                .unwrap_err()
                .contains("12h")
        );
    }

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
