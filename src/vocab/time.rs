//! Instants as the ledger stores them (ms since the epoch) and their ISO-8601 spelling.
//!
//! Nothing here reads the wall clock: "now" is always passed in by the command layer.

use jiff::Timestamp;

/// Milliseconds since the Unix epoch of an ISO-8601 / RFC 3339 instant
/// (`2026-08-10T19:18:11.311Z`, with any offset or fraction). `None` if it is not one.
pub(crate) fn parse_iso_ms(s: &str) -> Option<i64> {
    s.trim()
        .parse::<Timestamp>()
        .ok()
        .map(Timestamp::as_millisecond)
}

/// The UTC ISO-8601 spelling of `ms`, with milliseconds: `2026-08-10T19:18:11.311Z`.
pub(crate) fn format_iso_ms(ms: i64) -> String {
    match Timestamp::from_millisecond(ms) {
        Ok(t) => t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        Err(_) => ms.to_string(),
    }
}

/// `ms` as a date and minute in `tz` (`2026-08-10 21:18`), for people reading listings.
pub(crate) fn local_minute(ms: i64, tz: &jiff::tz::TimeZone) -> String {
    match Timestamp::from_millisecond(ms) {
        Ok(t) => t
            .to_zoned_datetime(tz.clone())
            .strftime("%Y-%m-%d %H:%M")
            .to_string(),
        Err(_) => ms.to_string(),
    }
}

/// How long before `now_ms` the instant `ts_ms` was: `<1h`, `5h`, `3d`, `2y`. Past a day it
/// counts calendar days in `tz` (the context's, which the views count days in), as the
/// brief labels days (`3d ago`), so one session has one age everywhere it is listed.
pub(crate) fn age(now_ms: i64, ts_ms: i64, tz: &jiff::tz::TimeZone) -> String {
    let h = (now_ms - ts_ms).max(0) / 3_600_000;
    let date = |ms: i64| {
        Timestamp::from_millisecond(ms)
            .ok()
            .map(|t| t.to_zoned_datetime(tz.clone()).date())
    };
    let days = match (date(now_ms), date(ts_ms)) {
        (Some(a), Some(b)) if h >= 24 => crate::vocab::window::days_between(b, a).max(1),
        _ => h / 24,
    };
    match h {
        0 => "<1h".to_string(),
        1..=23 => format!("{h}h"),
        _ if days < 730 => format!("{days}d"),
        _ => format!("{}y", days / 365),
    }
}

/// The last millisecond of the local calendar day `date` (`YYYY-MM-DD`).
pub(crate) fn end_of_local_day(date: &str, tz: &jiff::tz::TimeZone) -> Option<i64> {
    date.parse().ok().map(|d| day_end_ms(d, tz))
}

/// The local date of `ms` in `tz`.
pub(crate) fn local_date(ms: i64, tz: &jiff::tz::TimeZone) -> jiff::civil::Date {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.to_zoned_datetime(tz.clone()).date())
        .unwrap_or_default()
}

/// The first millisecond of the local day `d`.
pub(crate) fn day_start_ms(d: jiff::civil::Date, tz: &jiff::tz::TimeZone) -> i64 {
    d.to_zoned_datetime(tz.clone())
        .map(|z| z.timestamp().as_millisecond())
        .unwrap_or(i64::MIN)
}

/// The last millisecond of the local day `d`.
pub(crate) fn day_end_ms(d: jiff::civil::Date, tz: &jiff::tz::TimeZone) -> i64 {
    match d.tomorrow() {
        Ok(next) => day_start_ms(next, tz).saturating_sub(1),
        Err(_) => i64::MAX,
    }
}

/// What a moment may be written as, everywhere peat takes one (`--since`, `asof`, `zoom`):
/// for the error that says a value is none of them.
pub(crate) const MOMENT_GRAMMAR: &str = "a number of days like 3, a duration like 90min, 12h, 3d or 2w, a date like 2026-11-01, a time like 2026-11-01T14:30, today, yesterday, \"3 days ago\", \"last week\", 1m (a month) or a weekday like monday";

/// The instant a `--since` value names, relative to `now_ms`: a count of days (`3`), a
/// duration back from now (`90min`, `12h`, `3d`, `2w`), a date or a local time
/// (`2026-11-01`, `2026-11-01T14:30`, in `tz`), an instant (`2026-11-01T14:30:00Z`), or any
/// day [`parse_day`] reads (`yesterday`, `monday`, `last week`, `1m`), from its start: one
/// grammar with `asof` and `zoom`.
pub(crate) fn parse_since(spec: &str, now_ms: i64, tz: &jiff::tz::TimeZone) -> Result<i64, String> {
    let spec = spec.trim();
    const HOUR: i64 = 3_600_000;
    if let Ok(days) = spec.parse::<i64>() {
        return Ok(now_ms - days * 24 * HOUR);
    }
    // `m` is a month, as `asof 1m` reads it; minutes are spelt out.
    for (suffix, per) in [
        ("min", 60_000),
        ("h", HOUR),
        ("d", 24 * HOUR),
        ("w", 7 * 24 * HOUR),
    ] {
        if let Some(n) = spec.strip_suffix(suffix)
            && let Ok(n) = n.trim().parse::<i64>()
        {
            return Ok(now_ms - n * per);
        }
    }
    if let Ok(t) = spec.parse::<jiff::Timestamp>() {
        return Ok(t.as_millisecond());
    }
    if let Ok(t) = spec.parse::<jiff::civil::DateTime>()
        && let Ok(z) = t.to_zoned_datetime(tz.clone())
    {
        return Ok(z.timestamp().as_millisecond());
    }
    let day = parse_day(spec, local_date(now_ms, tz))
        .map_err(|_| format!("not a time: {spec:?} (want {MOMENT_GRAMMAR})"))?;
    Ok(day_start_ms(day, tz))
}

/// The local day `spec` names, relative to `today`: a date (`2026-07-10`), `today`,
/// `yesterday`, a count back (`3d`, `2w`, `1m`, `3 days ago`, `2 weeks`, `a month ago`,
/// `last week`), or a weekday (`monday`, `last fri`: the latest one before today).
pub(crate) fn parse_day(spec: &str, today: jiff::civil::Date) -> Result<jiff::civil::Date, String> {
    use jiff::ToSpan;
    let want = "want a date like 2026-07-10, today, yesterday, 3d, 2w, 1m, \"3 days ago\", \"last week\" or a weekday like monday";
    let lower = spec.trim().to_ascii_lowercase();
    if let Some(why) = crate::vocab::window::invalid_date(&lower) {
        return Err(why);
    }
    if let Ok(d) = lower.parse::<jiff::civil::Date>() {
        return Ok(d);
    }
    let words: Vec<&str> = lower
        .split_whitespace()
        .filter(|w| *w != "ago" && *w != "last")
        .collect();
    let back = |span: jiff::Span| today.checked_sub(span).map_err(|e| e.to_string());
    // `3d`, `3 d`, `3 days`, `a week`, `week` (with `last`): a count and a unit.
    let (count, unit) = match words.as_slice() {
        ["today"] | ["now"] => return Ok(today),
        ["yesterday"] => return back(1.day()),
        [w] => match w.find(|c: char| !c.is_ascii_digit()) {
            Some(0) => ("1", *w),
            Some(i) => w.split_at(i),
            None => return Err(format!("not a day: {spec:?} ({want})")),
        },
        [n, u] => (if *n == "a" || *n == "an" { "1" } else { *n }, *u),
        _ => return Err(format!("not a day: {spec:?} ({want})")),
    };
    let n: i64 = count
        .parse()
        .map_err(|_| format!("not a day: {spec:?} ({want})"))?;
    let unit = unit.trim_end_matches('s');
    match unit {
        "d" | "day" => back(n.days()),
        "w" | "wk" | "week" => back((7 * n).days()),
        "m" | "mo" | "month" => back(n.months()),
        "y" | "yr" | "year" => back(n.years()),
        _ => match weekday(unit) {
            Some(wd) if count == "1" => {
                let mut d = back(1.day())?;
                while d.weekday() != wd {
                    d = back_from(d)?;
                }
                Ok(d)
            }
            _ => Err(format!("not a day: {spec:?} ({want})")),
        },
    }
}

fn back_from(d: jiff::civil::Date) -> Result<jiff::civil::Date, String> {
    d.yesterday().map_err(|e| e.to_string())
}

/// A weekday by its name or its first three letters.
fn weekday(w: &str) -> Option<jiff::civil::Weekday> {
    use jiff::civil::Weekday::*;
    let all = [
        ("monday", Monday),
        ("tuesday", Tuesday),
        ("wednesday", Wednesday),
        ("thursday", Thursday),
        ("friday", Friday),
        ("saturday", Saturday),
        ("sunday", Sunday),
    ];
    all.iter()
        .find(|(name, _)| w.len() >= 3 && name.starts_with(w))
        .map(|(_, d)| *d)
}

/// The system's time zone, read straight from its TZif file: jiff's own lookup first lists
/// the whole zoneinfo tree (about 1 ms, a fifth of a one-shot read). What this does not
/// recognise (a POSIX rule in `TZ`, a zone file outside a `zoneinfo` folder) is left to
/// jiff. `tz_var` is the `TZ` environment variable.
pub(crate) fn system_zone(tz_var: Option<&std::ffi::OsStr>) -> jiff::tz::TimeZone {
    zone_from_file(tz_var).unwrap_or_else(jiff::tz::TimeZone::system)
}

/// Where the zoneinfo files live when `TZ` names a zone.
const ZONEINFO: &str = "/usr/share/zoneinfo";

fn zone_from_file(tz_var: Option<&std::ffi::OsStr>) -> Option<jiff::tz::TimeZone> {
    let (name, path) = match tz_var {
        Some(var) => {
            let var = var.to_str()?;
            let var = var.strip_prefix(':').unwrap_or(var);
            if var == "UTC" {
                return Some(jiff::tz::TimeZone::UTC);
            }
            if var.starts_with('/') {
                (zone_name(var)?, std::path::PathBuf::from(var))
            } else {
                // A zone name: letters, digits and `/_+-`, never `..` (TZ is not a path).
                let plain = var
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"/_+-".contains(&b));
                if var.is_empty() || !plain || var.split('/').any(|p| p.is_empty()) {
                    return None;
                }
                (var.to_string(), std::path::Path::new(ZONEINFO).join(var))
            }
        }
        None => {
            let link = std::fs::read_link("/etc/localtime").ok()?;
            (
                zone_name(link.to_str()?)?,
                std::path::PathBuf::from("/etc/localtime"),
            )
        }
    };
    let bytes = std::fs::read(path).ok()?;
    jiff::tz::TimeZone::tzif(&name, &bytes).ok()
}

/// The zone a zoneinfo path names: what follows its `zoneinfo/`.
fn zone_name(path: &str) -> Option<String> {
    let (_, name) = path.rsplit_once("zoneinfo/")?;
    (!name.is_empty()).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_system_zone_read_from_its_file_is_the_zone_jiff_finds() {
        if !std::path::Path::new(ZONEINFO)
            .join("Europe/Paris")
            .is_file()
        {
            // A build sandbox without the zone database: nothing to compare.
            return crate::testing::skip(&format!("no zone database under {ZONEINFO}"), false);
        }
        let at = [0i64, 1_700_000_000_000, 1_720_000_000_000];
        for var in [
            "Europe/Paris",
            ":America/New_York",
            "Asia/Kolkata",
            "UTC",
            "Etc/UTC",
        ] {
            let ours = zone_from_file(Some(std::ffi::OsStr::new(var)))
                .unwrap_or_else(|| panic!("{var} was not read from its file"));
            let jiffs = jiff::tz::TimeZone::get(var.trim_start_matches(':')).unwrap();
            assert_eq!(ours.iana_name(), jiffs.iana_name(), "{var}");
            for ms in at {
                let t = jiff::Timestamp::from_millisecond(ms).unwrap();
                assert_eq!(ours.to_offset(t), jiffs.to_offset(t), "{var} at {ms}");
            }
        }
    }

    #[test]
    fn a_tz_that_is_not_a_plain_zone_name_is_left_to_jiff() {
        for var in [
            "../../etc/passwd",
            "EST+5",
            "Europe//Paris",
            "",
            "No/Such_Zone",
        ] {
            assert!(
                zone_from_file(Some(std::ffi::OsStr::new(var))).is_none(),
                "{var:?} was read as a zone file"
            );
        }
        assert_eq!(
            zone_name("/usr/share/zoneinfo/Etc/UTC").as_deref(),
            Some("Etc/UTC")
        );
        assert_eq!(
            zone_name("../zoneinfo/Europe/Paris").as_deref(),
            Some("Europe/Paris")
        );
        assert_eq!(zone_name("/etc/localtime"), None);
    }

    use super::*;

    #[test]
    fn a_day_can_be_named_the_ways_people_type_it() {
        use jiff::civil::date;
        let today = date(2026, 11, 30); // a Monday
        let day = |s: &str| parse_day(s, today).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(day("2026-07-10"), date(2026, 7, 10));
        assert_eq!(day("today"), today);
        assert_eq!(day("Yesterday"), date(2026, 11, 29));
        assert_eq!(day("3d"), date(2026, 11, 27));
        assert_eq!(day("3 days ago"), date(2026, 11, 27));
        assert_eq!(day("2w"), date(2026, 11, 16));
        assert_eq!(day("last week"), date(2026, 11, 23));
        assert_eq!(day("a month ago"), date(2026, 10, 30));
        assert_eq!(day("1m"), date(2026, 10, 30));
        assert_eq!(day("monday"), date(2026, 11, 23));
        assert_eq!(day("last fri"), date(2026, 11, 27));
        assert!(
            parse_day("2026-13-01", today)
                .unwrap_err()
                .contains("no month 13")
        );
        for bad in ["soon", "3x", "fr", "the day before", ""] {
            assert!(
                parse_day(bad, today).unwrap_err().contains("want a date"),
                "{bad}"
            );
        }
    }

    #[test]
    fn ages_read_like_a_person_says_them() {
        let h = 3_600_000;
        let utc = jiff::tz::TimeZone::UTC;
        let age = |now, ts| age(now, ts, &utc);
        assert_eq!(age(10 * h, 10 * h - 1), "<1h");
        assert_eq!(age(10 * h, 5 * h), "5h");
        assert_eq!(age(100 * h, 28 * h), "3d");
        assert_eq!(age(0, 5), "<1h");
        assert_eq!(age(24 * 800 * h, 0), "2y");
        // 61 hours, but three calendar days back: the brief calls that day `3d ago`.
        assert_eq!(age(3 * 24 * h + 9 * h, 20 * h), "3d");
        assert_eq!(age(2 * 24 * h + 9 * h, 20 * h), "2d");
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

    const UTC: jiff::tz::TimeZone = jiff::tz::TimeZone::UTC;

    #[test]
    fn since_accepts_days_durations_and_dates() {
        let now = 10 * 86_400_000;
        assert_eq!(parse_since("3", now, &UTC), Ok(7 * 86_400_000));
        assert_eq!(parse_since("12h", now, &UTC), Ok(now - 12 * 3_600_000));
        assert_eq!(parse_since("1w", now, &UTC), Ok(3 * 86_400_000));
        // A date starts at its midnight in the zone given.
        assert_eq!(parse_since("1970-01-02", now, &UTC), Ok(86_400_000));
        let plus_two = jiff::tz::TimeZone::fixed(jiff::tz::offset(2));
        assert_eq!(
            parse_since("1970-01-02", now, &plus_two),
            Ok(86_400_000 - 2 * 3_600_000)
        );
        assert!(
            parse_since("yesterday-ish", now, &UTC)
                .unwrap_err()
                .contains("12h")
        );
    }

    #[test]
    fn since_reads_every_day_asof_and_zoom_read_from_its_start() {
        // 1970-01-10 12:00 UTC, a Saturday.
        let now = 9 * 86_400_000 + 12 * 3_600_000;
        let day = |n: i64| n * 86_400_000;
        assert_eq!(parse_since("yesterday", now, &UTC), Ok(day(8)));
        assert_eq!(parse_since("today", now, &UTC), Ok(day(9)));
        assert_eq!(parse_since("monday", now, &UTC), Ok(day(4)));
        assert_eq!(parse_since("3 days ago", now, &UTC), Ok(day(6)));
        assert_eq!(parse_since("last week", now, &UTC), Ok(day(2)));
        // `m` is a month, as `asof 1m` reads it; minutes are spelt out.
        assert_eq!(parse_since("90min", now, &UTC), Ok(now - 90 * 60_000));
        assert_eq!(parse_since("1m", now, &UTC), Ok(-22 * 86_400_000));
        assert_eq!(
            parse_since("1970-01-05T06:30", now, &UTC),
            Ok(day(4) + 6 * 3_600_000 + 30 * 60_000)
        );
        assert_eq!(
            parse_since("1970-01-05T06:30:00+02:00", now, &UTC),
            Ok(day(4) + 4 * 3_600_000 + 30 * 60_000)
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
