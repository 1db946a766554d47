//! The window grammar: the calendar spans a person or an agent can name.
//!
//! `2026`, `2026-07`, `2026-08-14`, `[2026-]w33`, `[2026-]q3`, and `a..b` between any two of
//! them. Strict: anything else is not a window (and so, for bare `peat WORDS`, is search
//! words). Days are local calendar days; "today" is passed in, never read here.

use jiff::civil::{Date, ISOWeekDate, Weekday};

/// What a window was named as; it decides the label, the key and the children.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Day,
    Week,
    Month,
    Quarter,
    Year,
    Range,
}

/// A span of local calendar days, `start ..= end`, with the names it goes by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Window {
    pub(crate) kind: Kind,
    /// The first day.
    pub(crate) start: Date,
    /// The last day, inclusive. A month, quarter or year that has begun ends today.
    pub(crate) end: Date,
    /// For people: `aug 14 2026`, `w33 2026`, `jul 2026`, `q3 2026`, `2026`, `a – b`.
    pub(crate) label: String,
    /// Its canonical spelling, what `peat KEY` reads again: `2026-w33`, `2026-07`, …
    pub(crate) key: String,
}

impl Window {
    /// The command that reads this window: `peat 2026-w33`.
    pub(crate) fn handle(&self) -> String {
        format!("peat {}", self.key)
    }

    /// The days it covers, spelled for people: `aug 10–16`.
    pub(crate) fn span(&self) -> String {
        span_label(self.start, self.end)
    }
}

/// What to print when an argument is not a window.
pub(crate) const WANT: &str = "want w33, 2026-w33, 2026-07, 2026-08-14, q3, 2026, or a..b";

/// Read `s` as a window, relative to the local date `today`. `None` if it is not one.
pub(crate) fn parse(s: &str, today: Date) -> Option<Window> {
    let s = s.trim().to_ascii_lowercase();
    if let Some((a, b)) = s.split_once("..") {
        let a = single(a, today)?;
        let b = single(b, today)?;
        if a.start > b.end {
            return None;
        }
        return Some(Window {
            kind: Kind::Range,
            start: a.start,
            end: b.end,
            label: format!("{} – {}", a.label, b.label),
            key: format!("{}..{}", a.key, b.key),
        });
    }
    single(&s, today)
}

/// Why `s`, shaped like a date (`2026-13-01`, `2026-00`, or either side of `a..b`), names
/// no day: `None` when it is a window or not date-shaped at all. A mistyped date must be
/// said, not searched for.
pub(crate) fn invalid_date(s: &str) -> Option<String> {
    let s = s.trim();
    if let Some((a, b)) = s.split_once("..") {
        return invalid_date(a).or_else(|| invalid_date(b));
    }
    let parts: Vec<&str> = s.split('-').collect();
    let num = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_digit());
    let (y, m, d) = match parts.as_slice() {
        [y, m] if num(y, 4) && num(m, 2) => (y, m, "01"),
        [y, m, d] if num(y, 4) && num(m, 2) && num(d, 2) => (y, m, *d),
        _ => return None,
    };
    let (y, m, d): (i16, i8, i8) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    match Date::new(y, m, d) {
        Ok(_) => None,
        Err(_) if !(1..=12).contains(&m) => Some(format!(
            "{s} is not a date: there is no month {m} (months run 01 to 12)"
        )),
        Err(_) => {
            let last = Date::new(y, m, 1).ok()?.days_in_month();
            Some(format!(
                "{s} is not a date: {} {y} has {last} days",
                month_name(m)
            ))
        }
    }
}

/// The window between two days, as a range handle would name it: `2026-05-29..2026-08-02`.
pub(crate) fn days(start: Date, end: Date) -> Window {
    if start == end {
        return day(start);
    }
    Window {
        kind: Kind::Range,
        start,
        end,
        label: span_label(start, end),
        key: format!("{start}..{end}"),
    }
}

/// One day as a window.
pub(crate) fn day(d: Date) -> Window {
    Window {
        kind: Kind::Day,
        start: d,
        end: d,
        label: format!("{} {} {}", month_name(d.month()), d.day(), d.year()),
        key: d.to_string(),
    }
}

/// The ISO week holding `d`, unclamped.
pub(crate) fn week_of(d: Date) -> Window {
    let w = d.iso_week_date();
    let monday = monday_of(d);
    let sunday = monday.saturating_add(jiff::Span::new().days(6));
    Window {
        kind: Kind::Week,
        start: monday,
        end: sunday,
        label: format!("w{} {}", w.week(), w.year()),
        key: format!("{}-w{:02}", w.year(), w.week()),
    }
}

/// The month holding `d`, unclamped.
pub(crate) fn month_of(d: Date) -> Window {
    Window {
        kind: Kind::Month,
        start: d.first_of_month(),
        end: d.last_of_month(),
        label: format!("{} {}", month_name(d.month()), d.year()),
        key: format!("{}-{:02}", d.year(), d.month()),
    }
}

/// The quarter holding `d`, unclamped.
pub(crate) fn quarter_of(d: Date) -> Window {
    let q = quarter(d);
    let into = (d.month() as i64 - 1) % 3;
    let start = d
        .first_of_month()
        .saturating_sub(jiff::Span::new().months(into));
    let end = start
        .saturating_add(jiff::Span::new().months(2))
        .last_of_month();
    Window {
        kind: Kind::Quarter,
        start,
        end,
        label: format!("q{q} {}", d.year()),
        key: format!("{}-q{q}", d.year()),
    }
}

/// The year holding `d`, unclamped.
pub(crate) fn year_of(d: Date) -> Window {
    Window {
        kind: Kind::Year,
        start: d.first_of_year(),
        end: d.last_of_year(),
        label: d.year().to_string(),
        key: d.year().to_string(),
    }
}

/// The quarter (1..=4) `d` falls in.
pub(crate) fn quarter(d: Date) -> i32 {
    (d.month() as i32 - 1) / 3 + 1
}

/// The Monday of `d`'s ISO week.
pub(crate) fn monday_of(d: Date) -> Date {
    let back = d.weekday().to_monday_zero_offset() as i64;
    d.saturating_sub(jiff::Span::new().days(back))
}

/// Whole days from `a` to `b` (negative if `b` is earlier).
pub(crate) fn days_between(a: Date, b: Date) -> i64 {
    b.duration_since(a).as_secs() / 86_400
}

/// `jan` … `dec`.
pub(crate) fn month_name(m: i8) -> &'static str {
    const NAMES: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    NAMES[(m.clamp(1, 12) - 1) as usize]
}

/// Days spelled for people: `aug 14`, `aug 10–15`, `aug 10 – sep 2`, `dec 29 2025 – jan 4 2026`.
pub(crate) fn span_label(start: Date, end: Date) -> String {
    let (ms, me) = (month_name(start.month()), month_name(end.month()));
    if start == end {
        format!("{ms} {}", start.day())
    } else if start.year() != end.year() {
        format!(
            "{ms} {} {} – {me} {} {}",
            start.day(),
            start.year(),
            end.day(),
            end.year()
        )
    } else if start.month() == end.month() {
        format!("{ms} {}–{}", start.day(), end.day())
    } else {
        format!("{ms} {} – {me} {}", start.day(), end.day())
    }
}

/// A period that has begun ends today; one wholly in the future keeps its full span.
fn clamp(mut w: Window, today: Date) -> Window {
    if w.start <= today && w.end > today {
        w.end = today;
    }
    w
}

fn digits(s: &str, min: usize, max: usize) -> Option<i32> {
    if s.len() < min || s.len() > max || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn year(s: &str) -> Option<i16> {
    let y = digits(s, 4, 4)?;
    i16::try_from(y).ok().filter(|y| (1..=9998).contains(y))
}

fn single(s: &str, today: Date) -> Option<Window> {
    let parts: Vec<&str> = s.split('-').collect();
    match parts.as_slice() {
        [y] if y.len() == 4 => {
            let y = year(y)?;
            Some(clamp(year_of(Date::new(y, 1, 1).ok()?), today))
        }
        [y, m] if m.len() == 2 && m.bytes().all(|b| b.is_ascii_digit()) => {
            let y = year(y)?;
            let m = digits(m, 2, 2)?;
            let d = Date::new(y, i8::try_from(m).ok()?, 1).ok()?;
            Some(clamp(month_of(d), today))
        }
        [y, d] if d.starts_with('w') => week(Some(year(y)?), &d[1..], today),
        [y, d] if d.starts_with('q') => quarter_window(Some(year(y)?), &d[1..], today),
        [w] if w.starts_with('w') => week(None, &w[1..], today),
        [q] if q.starts_with('q') => quarter_window(None, &q[1..], today),
        [y, m, d] => {
            let y = year(y)?;
            let m = digits(m, 2, 2)?;
            let d = digits(d, 2, 2)?;
            Some(day(Date::new(
                y,
                i8::try_from(m).ok()?,
                i8::try_from(d).ok()?,
            )
            .ok()?))
        }
        _ => None,
    }
}

fn week(y: Option<i16>, n: &str, today: Date) -> Option<Window> {
    let n = i8::try_from(digits(n, 1, 2)?).ok()?;
    if !(1..=53).contains(&n) {
        return None;
    }
    let monday = |y: i16| {
        ISOWeekDate::new(y, n, Weekday::Monday)
            .ok()
            .map(|w| w.date())
    };
    let start = match y {
        Some(y) => monday(y)?,
        None => {
            let this = today.iso_week_date().year();
            match monday(this) {
                Some(d) if d <= today => d,
                _ => monday(this - 1)?,
            }
        }
    };
    Some(clamp(week_of(start), today))
}

fn quarter_window(y: Option<i16>, n: &str, today: Date) -> Option<Window> {
    let n = digits(n, 1, 1)?;
    if !(1..=4).contains(&n) {
        return None;
    }
    let y = match y {
        Some(y) => y,
        None if n > quarter(today) => today.year() - 1,
        None => today.year(),
    };
    let d = Date::new(y, (n * 3 - 2) as i8, 1).ok()?;
    Some(clamp(quarter_of(d), today))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    const TODAY: Date = date(2026, 8, 20);

    #[test]
    fn a_mistyped_date_is_named_not_searched() {
        assert_eq!(
            invalid_date("2026-13-01").as_deref(),
            Some("2026-13-01 is not a date: there is no month 13 (months run 01 to 12)")
        );
        assert_eq!(
            invalid_date("2026-02-30").as_deref(),
            Some("2026-02-30 is not a date: feb 2026 has 28 days")
        );
        assert!(invalid_date("2026-07..2026-00").is_some());
        for fine in [
            "2026-02-28",
            "2026-07",
            "2026",
            "w33",
            "rate",
            "1042",
            "a-b-c",
        ] {
            assert_eq!(invalid_date(fine), None, "{fine}");
        }
    }

    fn w(s: &str) -> Window {
        parse(s, TODAY).unwrap_or_else(|| panic!("{s} should be a window"))
    }

    fn span(s: &str) -> (String, String) {
        let w = w(s);
        (w.start.to_string(), w.end.to_string())
    }

    #[test]
    fn days_are_validated() {
        assert_eq!(
            span("2026-08-14"),
            ("2026-08-14".into(), "2026-08-14".into())
        );
        assert_eq!(w("2026-08-14").label, "aug 14 2026");
        assert_eq!(w("2026-08-14").handle(), "peat 2026-08-14");
        assert_eq!(span("2024-02-29").0, "2024-02-29");
        for bad in [
            "2026-02-30",
            "2025-02-29",
            "2026-13-01",
            "2026-00-10",
            "2026-08-32",
            "2026-8-14",
        ] {
            assert_eq!(parse(bad, TODAY), None, "{bad}");
        }
    }

    #[test]
    fn months_and_years_end_today_once_begun() {
        assert_eq!(span("2026-07"), ("2026-07-01".into(), "2026-07-31".into()));
        assert_eq!(span("2026-08"), ("2026-08-01".into(), "2026-08-20".into()));
        assert_eq!(w("2026-07").label, "jul 2026");
        assert_eq!(w("2026-07").key, "2026-07");
        assert_eq!(span("2025"), ("2025-01-01".into(), "2025-12-31".into()));
        assert_eq!(span("2026"), ("2026-01-01".into(), "2026-08-20".into()));
        // Wholly in the future: the full (empty) span.
        assert_eq!(span("2027"), ("2027-01-01".into(), "2027-12-31".into()));
        for bad in ["2026-13", "2026-00", "202", "20266", "0000", "2026-7"] {
            assert_eq!(parse(bad, TODAY), None, "{bad}");
        }
    }

    #[test]
    fn iso_weeks() {
        assert_eq!(span("2026-w33"), ("2026-08-10".into(), "2026-08-16".into()));
        assert_eq!(w("2026-w33").label, "w33 2026");
        assert_eq!(w("2026-w33").key, "2026-w33");
        assert_eq!(w("2026-W5").key, "2026-w05");
        // ISO week 1 of 2026 starts in 2025.
        assert_eq!(span("2026-w01"), ("2025-12-29".into(), "2026-01-04".into()));
        // 2026 has 53 ISO weeks; 2027 does not.
        assert_eq!(span("2026-w53"), ("2026-12-28".into(), "2027-01-03".into()));
        assert_eq!(parse("2027-w53", TODAY), None);
        // Bare: this ISO year, unless the week has not begun.
        assert_eq!(span("w33"), ("2026-08-10".into(), "2026-08-16".into()));
        assert_eq!(span("w34"), ("2026-08-17".into(), "2026-08-20".into()));
        assert_eq!(span("w35"), ("2025-08-25".into(), "2025-08-31".into()));
        for bad in ["w0", "w54", "w", "w333", "2026-w54", "wk3", "w-3"] {
            assert_eq!(parse(bad, TODAY), None, "{bad}");
        }
    }

    #[test]
    fn bare_week_on_the_year_edge() {
        // 2027-01-02 is in ISO week 53 of 2026.
        let today = date(2027, 1, 2);
        let w53 = parse("w53", today).unwrap();
        assert_eq!((w53.start, w53.end), (date(2026, 12, 28), today));
        let w1 = parse("w1", today).unwrap();
        assert_eq!(w1.start, date(2025, 12, 29));
    }

    #[test]
    fn quarters() {
        assert_eq!(span("2026-q2"), ("2026-04-01".into(), "2026-06-30".into()));
        assert_eq!(span("q3"), ("2026-07-01".into(), "2026-08-20".into()));
        assert_eq!(span("q4"), ("2025-10-01".into(), "2025-12-31".into()));
        assert_eq!(w("q1").label, "q1 2026");
        assert_eq!(w("Q4").key, "2025-q4");
        for bad in ["q0", "q5", "q", "q12", "2026-q5"] {
            assert_eq!(parse(bad, TODAY), None, "{bad}");
        }
    }

    #[test]
    fn ranges() {
        let r = w("2026-05-29..2026-08-02");
        assert_eq!(r.kind, Kind::Range);
        assert_eq!((r.start, r.end), (date(2026, 5, 29), date(2026, 8, 2)));
        assert_eq!(r.handle(), "peat 2026-05-29..2026-08-02");
        assert_eq!(r.label, "may 29 2026 – aug 2 2026");
        assert_eq!(
            span("2026-w30..2026-08"),
            ("2026-07-20".into(), "2026-08-20".into())
        );
        assert_eq!(span("q1..q2"), ("2026-01-01".into(), "2026-06-30".into()));
        assert_eq!(span("2026-08-14..2026-08-14").0, "2026-08-14");
        for bad in [
            "2026-08..2026-07",
            "2026-08-14..",
            "..2026",
            "2026..2026..2026",
            "2026-08-14...2026-08-15",
        ] {
            assert_eq!(parse(bad, TODAY), None, "{bad}");
        }
    }

    #[test]
    fn not_windows() {
        for bad in [
            "",
            "fold",
            "36f96b8d",
            "1042x",
            "2026-08-14t",
            "week33",
            "-2026",
            "2026-",
        ] {
            assert_eq!(parse(bad, TODAY), None, "{bad}");
        }
        // A bare four-digit number is a year.
        assert!(parse("1042", TODAY).is_some());
    }

    #[test]
    fn spans_read_naturally() {
        assert_eq!(span_label(date(2026, 8, 14), date(2026, 8, 14)), "aug 14");
        assert_eq!(
            span_label(date(2026, 8, 10), date(2026, 8, 15)),
            "aug 10–15"
        );
        assert_eq!(
            span_label(date(2026, 8, 10), date(2026, 9, 2)),
            "aug 10 – sep 2"
        );
        assert_eq!(
            span_label(date(2025, 12, 29), date(2026, 1, 4)),
            "dec 29 2025 – jan 4 2026"
        );
        assert_eq!(days_between(date(2025, 12, 29), date(2026, 1, 4)), 6);
        assert_eq!(monday_of(date(2026, 1, 1)), date(2025, 12, 29));
    }
}
