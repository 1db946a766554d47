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

/// `ms` as a date and minute in `tz` (`2026-08-10 21:18`), for people reading listings.
pub fn local_minute(ms: i64, tz: &jiff::tz::TimeZone) -> String {
    match Timestamp::from_millisecond(ms) {
        Ok(t) => t
            .to_zoned_datetime(tz.clone())
            .strftime("%Y-%m-%d %H:%M")
            .to_string(),
        Err(_) => ms.to_string(),
    }
}

/// How long before `now_ms` the instant `ts_ms` was: `<1h`, `5h`, `3d`, `2y`.
pub fn age(now_ms: i64, ts_ms: i64) -> String {
    let h = (now_ms - ts_ms).max(0) / 3_600_000;
    match h {
        0 => "<1h".to_string(),
        1..=23 => format!("{h}h"),
        _ if h < 24 * 730 => format!("{}d", h / 24),
        _ => format!("{}y", h / (24 * 365)),
    }
}

/// The last millisecond of the local calendar day `date` (`YYYY-MM-DD`).
pub fn end_of_local_day(date: &str, tz: &jiff::tz::TimeZone) -> Option<i64> {
    let d: jiff::civil::Date = date.parse().ok()?;
    let next = d.tomorrow().ok()?.to_zoned_datetime(tz.clone()).ok()?;
    Some(next.timestamp().as_millisecond() - 1)
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
    fn ages_read_like_a_person_says_them() {
        let h = 3_600_000;
        assert_eq!(age(10 * h, 10 * h - 1), "<1h");
        assert_eq!(age(10 * h, 5 * h), "5h");
        assert_eq!(age(100 * h, 28 * h), "3d");
        assert_eq!(age(0, 5), "<1h");
        assert_eq!(age(24 * 800 * h, 0), "2y");
    }

    #[test]
    fn a_local_day_ends_at_its_last_millisecond() {
        let utc = jiff::tz::TimeZone::UTC;
        assert_eq!(end_of_local_day("1970-01-01", &utc), Some(86_400_000 - 1));
        let plus2 = jiff::tz::TimeZone::fixed(jiff::tz::offset(2));
        assert_eq!(
            end_of_local_day("1970-01-02", &plus2),
            Some(2 * 86_400_000 - 2 * 3_600_000 - 1)
        );
        assert_eq!(end_of_local_day("2026-13-01", &utc), None);
    }

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
