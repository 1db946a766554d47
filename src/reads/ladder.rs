//! The ladder: bounded reading over unbounded history.
//!
//! Rung 0 is the days view (one row per local calendar day). Every coarser rung is a pure
//! read-time regrouping of those rows: nothing is stored, so `asof` and a changed time zone
//! cost nothing. The windows are calendar ones (ISO weeks, months, quarters, years) so that
//! a band's name doubles as the command that reads it.

use jiff::civil::Date;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use crate::views::tables::{DayStats, SessionDay};
use crate::vocab::window::{self, Window};

/// One day of the days view as the ladder reads it: its counts, and the names of the
/// sessions and files it touched, borrowed from the stored row where possible (a brief
/// decodes every day of the record, so this is the hot path).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub(crate) struct Day<'a> {
    #[serde(default)]
    pub(crate) events: i64,
    #[serde(default)]
    pub(crate) prompts: i64,
    #[serde(default)]
    pub(crate) tools: i64,
    #[serde(default)]
    pub(crate) fails: i64,
    #[serde(default)]
    pub(crate) commits: i64,
    #[serde(default)]
    pub(crate) obs: i64,
    /// The sessions active that day, each with what it did of the day.
    #[serde(default, borrow, deserialize_with = "map_pairs")]
    pub(crate) sessions: Vec<(Cow<'a, str>, SessionDay)>,
    /// Touches per file that day.
    #[serde(default, borrow, deserialize_with = "map_pairs")]
    pub(crate) files: Vec<(Cow<'a, str>, i64)>,
}

impl<'a> Day<'a> {
    /// Read a stored [`DayStats`] row.
    pub(crate) fn decode(bytes: &'a [u8]) -> Result<Day<'a>, serde_json::Error> {
        serde_json::from_slice(bytes)
    }
}

impl<'a> From<&'a DayStats> for Day<'a> {
    fn from(d: &'a DayStats) -> Day<'a> {
        Day {
            events: d.events,
            prompts: d.prompts,
            tools: d.tools,
            fails: d.fails,
            commits: d.commits,
            obs: d.obs,
            sessions: d
                .sessions
                .iter()
                .map(|(k, n)| (Cow::Borrowed(k.as_str()), *n))
                .collect(),
            files: d
                .files
                .iter()
                .map(|(k, n)| (Cow::Borrowed(k.as_str()), *n))
                .collect(),
        }
    }
}

/// A string borrowed from the input unless it had to be unescaped.
struct Name<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Name<'de>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Name<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Owned(s.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

fn map_pairs<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Vec<(Cow<'de, str>, T)>, D::Error> {
    struct V<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
        type Value = Vec<(Cow<'de, str>, T)>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a map of counts")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::with_capacity(m.size_hint().unwrap_or(0));
            while let Some((Name(k), n)) = m.next_entry::<Name, T>()? {
                out.push((k, n));
            }
            Ok(out)
        }
    }
    d.deserialize_map(V(std::marker::PhantomData))
}

/// One day of the days view, dated.
pub(crate) type DayRow<'a> = (Date, &'a Day<'a>);

/// The default number of bands the brief shows (`brief --periods`, `PEAT_BRIEF_BUDGET`).
pub(crate) const DEFAULT_BUDGET: usize = 8;

/// What a span of days holds, summed over its day rows.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct Tally {
    pub(crate) events: i64,
    pub(crate) prompts: i64,
    pub(crate) tools: i64,
    pub(crate) fails: i64,
    pub(crate) commits: i64,
    pub(crate) obs: i64,
    /// Distinct sessions active in the span.
    pub(crate) sessions: usize,
    /// The one or two files that dominate the span's edits (each at least a quarter of all
    /// touches), as short paths.
    pub(crate) files: Vec<String>,
}

impl Tally {
    /// Sum the rows of `days` (oldest first) that fall in `start ..= end`.
    pub(crate) fn of(days: &[DayRow], start: Date, end: Date) -> Tally {
        let rows = within(days, start, end);
        let mut t = Tally::default();
        let mut sessions: HashSet<&str> = HashSet::new();
        let mut files: HashMap<&str, i64> = HashMap::new();
        for (_, d) in rows {
            t.events += d.events;
            t.prompts += d.prompts;
            t.tools += d.tools;
            t.fails += d.fails;
            t.commits += d.commits;
            t.obs += d.obs;
            sessions.extend(d.sessions.iter().map(|(s, _)| s.as_ref()));
            for (f, n) in &d.files {
                *files.entry(f.as_ref()).or_insert(0) += n;
            }
        }
        t.sessions = sessions.len();
        t.files = dominant(&files);
        t
    }

    /// Nothing happened in the span that a reader would count.
    pub(crate) fn is_quiet(&self) -> bool {
        self.tools + self.commits + self.obs + self.prompts == 0
    }
}

/// The rows of `days` (oldest first) in `start ..= end`.
pub(crate) fn within<'r, 'a>(days: &'r [DayRow<'a>], start: Date, end: Date) -> &'r [DayRow<'a>] {
    let lo = days.partition_point(|(d, _)| *d < start);
    let hi = days.partition_point(|(d, _)| *d <= end);
    &days[lo..hi.max(lo)]
}

/// The top two files by touches, kept only if each has at least a quarter of all touches.
fn dominant(files: &HashMap<&str, i64>) -> Vec<String> {
    let total: i64 = files.values().sum();
    let mut top: Vec<(&str, i64)> = files.iter().map(|(f, n)| (*f, *n)).collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut out: Vec<String> = Vec::new();
    for (f, n) in top.into_iter().take(2) {
        let short = short_path(f);
        // Two checkouts' `src/main.rs` read the same shortened: name it once.
        if n > 0 && n * 4 >= total && !out.contains(&short) {
            out.push(short);
        }
    }
    out
}

/// `…/<dir>/<file>`: enough of a path to recognise it.
pub(crate) fn short_path(path: &str) -> String {
    let parts: Vec<&str> = path.trim_end_matches('/').rsplitn(3, '/').collect();
    match parts.as_slice() {
        [file, dir, rest] if !rest.is_empty() => format!("…/{dir}/{file}"),
        _ => path.to_string(),
    }
}

fn date_str<S: Serializer>(d: &Date, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(d)
}

/// One rung of the ladder: a calendar window, its counts, and the command that reads it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Band {
    /// `w33`, `jul`, `q2`, `2025`, `earlier`.
    pub(crate) label: String,
    /// The days it covers when the label alone does not say: `aug 10–14`.
    pub(crate) span: Option<String>,
    /// `peat 2026-w33`, `peat 2026-07`, `peat 2026-q3`, `peat 2026`, `peat A..B`.
    pub(crate) handle: String,
    #[serde(serialize_with = "date_str")]
    pub(crate) start: Date,
    #[serde(serialize_with = "date_str")]
    pub(crate) end: Date,
    #[serde(flatten)]
    pub(crate) tally: Tally,
}

/// The bands before `frontier`, newest first: they tile `oldest ..= frontier - 1` exactly,
/// where `oldest` is the first row of `days` (oldest first). Two ISO weeks, two months, two
/// quarters, then years, and once `budget` is reached one band for everything earlier.
/// `today` only decides whether a label needs its year.
pub(crate) fn bands(days: &[DayRow], frontier: Date, budget: usize, today: Date) -> Vec<Band> {
    let Some(&(oldest, _)) = days.first() else {
        return Vec::new();
    };
    let Ok(mut end) = frontier.yesterday() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if end < oldest {
        return out;
    }
    let this_year = |d: Date, s: String| {
        if d.year() == today.year() {
            s
        } else {
            format!("{s} {}", d.year())
        }
    };
    let mut rung = 0;
    loop {
        if out.len() + 1 >= budget {
            let w = window::days(oldest, end);
            out.push(Band {
                label: "earlier".into(),
                // `oct 26 – dec 31` read in 2026 would be taken for this year's (a span
                // across years already names both).
                span: Some(match oldest.year() == end.year() {
                    true => this_year(end, window::span_label(oldest, end)),
                    false => window::span_label(oldest, end),
                }),
                handle: w.handle(),
                start: oldest,
                end,
                tally: Tally::of(days, oldest, end),
            });
            break;
        }
        let unit = match rung {
            0 | 1 => window::week_of(end),
            2 | 3 => window::month_of(end),
            4 | 5 => window::quarter_of(end),
            _ => window::year_of(end),
        };
        let start = unit.start.max(oldest);
        let clipped = start != unit.start || end != unit.end;
        let (label, span) = match rung {
            0 | 1 => (
                this_year(end, format!("w{}", end.iso_week_date().week())),
                Some(window::span_label(start, end)),
            ),
            2 | 3 => (
                this_year(end, window::month_name(end.month()).to_string()),
                clipped.then(|| window::span_label(start, end)),
            ),
            4 | 5 => (
                this_year(end, format!("q{}", window::quarter(end))),
                clipped.then(|| window::span_label(start, end)),
            ),
            _ => (
                end.year().to_string(),
                clipped.then(|| window::span_label(start, end)),
            ),
        };
        out.push(Band {
            label,
            span,
            handle: unit.handle(),
            start,
            end,
            tally: Tally::of(days, start, end),
        });
        if start <= oldest {
            break;
        }
        match start.yesterday() {
            Ok(d) => end = d,
            Err(_) => break,
        }
        rung += 1;
    }
    out
}

/// A part of a window one rung finer, as zoom lists it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Child {
    pub(crate) label: String,
    pub(crate) window: Window,
}

/// The parts of `start ..= end` one rung finer: days for a week or less, ISO weeks for a
/// month or less, months up to two years, years beyond. A single day has none (zoom lists
/// its sessions). A part cut by the window's edge is named by its days, so its handle reads
/// exactly what its line counts; one cut only by `today` keeps its calendar name.
pub(crate) fn children(start: Date, end: Date, today: Date) -> Vec<Child> {
    let n = window::days_between(start, end) + 1;
    if n <= 1 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut d = start;
    while d <= end {
        let unit = if n <= 7 {
            window::day(d)
        } else if n <= 31 {
            window::week_of(d)
        } else if n <= 731 {
            window::month_of(d)
        } else {
            window::year_of(d)
        };
        let (s, e) = (unit.start.max(start), unit.end.min(end));
        let whole = s == unit.start && (e == unit.end || e == today);
        let span = window::span_label(s, e);
        let label = match unit.kind {
            window::Kind::Day => span.clone(),
            window::Kind::Week => format!("w{} · {span}", e.iso_week_date().week()),
            window::Kind::Month | window::Kind::Year => {
                let name = match unit.kind {
                    window::Kind::Month => {
                        format!("{} {}", window::month_name(s.month()), s.year())
                    }
                    _ => s.year().to_string(),
                };
                if whole {
                    name
                } else {
                    format!("{name} · {span}")
                }
            }
            _ => span.clone(),
        };
        let window = if whole {
            Window { end: e, ..unit }
        } else {
            window::days(s, e)
        };
        out.push(Child { label, window });
        match e.tomorrow() {
            Ok(next) => d = next,
            Err(_) => break,
        }
    }
    out
}

/// Counts as people read them: `812`, `3.7k`, `14k`.
/// A count with its noun, singular for one: `1 event`, `3 prompts`.
pub(crate) fn noun(n: i64, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// As [`noun`], the count in thousands when large: `1 tool`, `3.7k tools`.
pub(crate) fn knoun(n: i64, word: &str) -> String {
    format!("{} {word}{}", knum(n), if n == 1 { "" } else { "s" })
}

pub(crate) fn knum(n: i64) -> String {
    if n >= 10_000 {
        format!("{}k", n / 1000)
    } else if n >= 1000 {
        // Tenths, rounded down like the thousands above: 9,999 is 9.9k, not 10.0k.
        let tenths = n / 100;
        format!("{}.{}k", tenths / 10, tenths % 10)
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    fn stats(tools: i64, session: &str) -> DayStats {
        DayStats {
            events: tools,
            tools,
            sessions: [(
                session.to_string(),
                SessionDay {
                    events: tools,
                    tools,
                    ..SessionDay::default()
                },
            )]
            .into(),
            ..DayStats::default()
        }
    }

    /// One row per day from `from` to `to`, each with one tool call.
    fn every_day(from: Date, to: Date) -> Vec<(Date, DayStats)> {
        from.series(jiff::Span::new().days(1))
            .take_while(|d| *d <= to)
            .map(|d| (d, stats(1, &format!("s{}", d.month()))))
            .collect()
    }

    fn days(v: &[(Date, DayStats)]) -> Vec<(Date, Day<'_>)> {
        v.iter().map(|(d, s)| (*d, Day::from(s))).collect()
    }

    fn rows<'a>(v: &'a [(Date, Day<'a>)]) -> Vec<DayRow<'a>> {
        v.iter().map(|(d, s)| (*d, s)).collect()
    }

    /// Bands are newest first, contiguous, and cover `oldest ..= frontier - 1` exactly.
    fn assert_tiles(bands: &[Band], oldest: Date, frontier: Date) {
        assert_eq!(bands.first().unwrap().end, frontier.yesterday().unwrap());
        assert_eq!(bands.last().unwrap().start, oldest);
        for pair in bands.windows(2) {
            assert_eq!(
                pair[1].end.tomorrow().unwrap(),
                pair[0].start,
                "gap or overlap between {:?} and {:?}",
                pair[0].label,
                pair[1].label
            );
        }
        for b in bands {
            assert!(b.start <= b.end, "{b:?}");
        }
    }

    fn labels(bands: &[Band]) -> Vec<String> {
        bands
            .iter()
            .map(|b| match &b.span {
                Some(s) => format!("{} · {s}", b.label),
                None => b.label.clone(),
            })
            .collect()
    }

    #[test]
    fn an_earlier_band_in_a_past_year_says_its_year() {
        let data = every_day(date(2025, 10, 26), date(2026, 11, 29));
        let data = days(&data);
        let b = bands(&rows(&data), date(2026, 11, 28), 8, date(2026, 11, 30));
        let last = labels(&b).pop().unwrap();
        assert_eq!(last, "earlier · oct 26 – dec 31 2025");
    }

    #[test]
    fn two_weeks_two_months_two_quarters_then_years_then_earlier() {
        let data = every_day(date(2022, 3, 10), date(2026, 8, 19));
        let data = days(&data);
        let days = rows(&data);
        let frontier = date(2026, 8, 15); // a Saturday
        let b = bands(&days, frontier, 8, date(2026, 8, 20));
        assert_tiles(&b, date(2022, 3, 10), frontier);
        assert_eq!(
            labels(&b),
            [
                "w33 · aug 10–14",
                "w32 · aug 3–9",
                "aug · aug 1–2",
                "jul",
                "q2",
                "q1",
                "2025",
                "earlier · mar 10 2022 – dec 31 2024",
            ]
        );
        let handles: Vec<&str> = b.iter().map(|b| b.handle.as_str()).collect();
        assert_eq!(
            handles,
            [
                "peat 2026-w33",
                "peat 2026-w32",
                "peat 2026-08",
                "peat 2026-07",
                "peat 2026-q2",
                "peat 2026-q1",
                "peat 2025",
                "peat 2022-03-10..2024-12-31",
            ]
        );
        // Every day is counted once.
        let total: i64 = b.iter().map(|b| b.tally.tools).sum();
        assert_eq!(
            total,
            data.iter().filter(|(d, _)| *d < frontier).count() as i64
        );
        assert_eq!(b[3].tally.tools, 31);
        assert_eq!(b[4].tally.tools, 91);
    }

    #[test]
    fn weeks_and_quarters_across_the_year_edge() {
        let data = every_day(date(2024, 1, 1), date(2026, 1, 6));
        let data = days(&data);
        let days = rows(&data);
        // 2026-01-02 is a Friday in ISO week 1 of 2026, which began 2025-12-29.
        let frontier = date(2026, 1, 3);
        let b = bands(&days, frontier, 12, date(2026, 1, 6));
        assert_tiles(&b, date(2024, 1, 1), frontier);
        assert_eq!(
            labels(&b),
            [
                "w1 · dec 29 2025 – jan 2 2026",
                "w52 2025 · dec 22–28",
                "dec 2025 · dec 1–21",
                "nov 2025",
                "q4 2025 · oct 1–31",
                "q3 2025",
                "2025 · jan 1 – jun 30",
                "2024",
            ]
        );
        assert_eq!(b[0].handle, "peat 2026-w01");
        assert_eq!(b[1].handle, "peat 2025-w52");
        assert_eq!(b[4].handle, "peat 2025-q4");
    }

    #[test]
    fn a_quarter_edge_inside_the_month_rungs() {
        let data = every_day(date(2026, 1, 15), date(2026, 7, 9));
        let data = days(&data);
        let days = rows(&data);
        let frontier = date(2026, 7, 8); // Wednesday of w28
        let b = bands(&days, frontier, 8, date(2026, 7, 9));
        assert_tiles(&b, date(2026, 1, 15), frontier);
        assert_eq!(
            labels(&b),
            [
                "w28 · jul 6–7",
                "w27 · jun 29 – jul 5",
                "jun · jun 1–28",
                "may",
                "q2 · apr 1–30",
                "q1 · jan 15 – mar 31",
            ]
        );
    }

    #[test]
    fn the_budget_bounds_the_bands_and_the_last_takes_the_rest() {
        let data = every_day(date(2019, 5, 1), date(2026, 8, 19));
        let data = days(&data);
        let days = rows(&data);
        let frontier = date(2026, 8, 17);
        for budget in [1, 3, 5, 8, 12] {
            let b = bands(&days, frontier, budget, date(2026, 8, 20));
            assert_eq!(b.len(), budget, "budget {budget}");
            assert_tiles(&b, date(2019, 5, 1), frontier);
            assert_eq!(b.last().unwrap().label, "earlier");
        }
        let b = bands(&days, frontier, 3, date(2026, 8, 20));
        assert_eq!(b[2].handle, "peat 2019-05-01..2026-08-02");
        // A generous budget ends at the oldest day without an "earlier" band.
        let b = bands(&days, frontier, 40, date(2026, 8, 20));
        assert_tiles(&b, date(2019, 5, 1), frontier);
        assert_eq!(b.last().unwrap().label, "2019");
        assert_eq!(b.last().unwrap().span.as_deref(), Some("may 1 – dec 31"));
    }

    #[test]
    fn short_histories_make_few_bands() {
        let data = every_day(date(2026, 8, 11), date(2026, 8, 19));
        let data = days(&data);
        let days = rows(&data);
        let b = bands(&days, date(2026, 8, 17), 8, date(2026, 8, 20));
        assert_eq!(labels(&b), ["w33 · aug 11–16"]);
        assert!(bands(&days, date(2026, 8, 11), 8, date(2026, 8, 20)).is_empty());
        assert!(bands(&[], date(2026, 8, 11), 8, date(2026, 8, 20)).is_empty());
        // Stored rows decode, escaped names included.
        let d = Day::decode(
            br#"{"events":3,"tools":2,"sessions":{"s1":[3,0,2,0]},"files":{"/a\"b":2},"later":1}"#,
        )
        .unwrap();
        assert_eq!((d.events, d.tools, d.sessions.len()), (3, 2, 1));
        assert_eq!(d.files[0].0, "/a\"b");
    }

    #[test]
    fn tallies_count_distinct_sessions_and_dominant_files() {
        let mut a = stats(3, "s1");
        a.files = [
            ("/r/src/main.rs".to_string(), 6),
            ("/r/b.rs".to_string(), 1),
        ]
        .into();
        let mut b = stats(2, "s1");
        let one = SessionDay {
            events: 1,
            ..SessionDay::default()
        };
        b.sessions.insert("s2".into(), one);
        b.fails = 1;
        b.files = [("/r/c.rs".to_string(), 3)].into();
        let data = vec![(date(2026, 8, 1), a), (date(2026, 8, 2), b)];
        let data = days(&data);
        let t = Tally::of(&rows(&data), date(2026, 8, 1), date(2026, 8, 2));
        assert_eq!((t.tools, t.fails, t.sessions), (5, 1, 2));
        assert_eq!(t.files, ["…/src/main.rs", "/r/c.rs"]);
        assert_eq!(short_path("/home/dev/acme/src/main.rs"), "…/src/main.rs");
        assert_eq!(short_path("src/main.rs"), "src/main.rs");
    }

    #[test]
    fn children_are_one_rung_finer() {
        let today = date(2026, 8, 20);
        let kids = |s, e| -> Vec<(String, String)> {
            children(s, e, today)
                .into_iter()
                .map(|c| (c.label, c.window.handle()))
                .collect()
        };
        assert!(kids(date(2026, 8, 14), date(2026, 8, 14)).is_empty());
        let week = kids(date(2026, 8, 10), date(2026, 8, 16));
        assert_eq!(week.len(), 7);
        assert_eq!(week[4], ("aug 14".into(), "peat 2026-08-14".into()));
        let month = kids(date(2026, 7, 1), date(2026, 7, 31));
        assert_eq!(
            month,
            [
                (
                    "w27 · jul 1–5".to_string(),
                    "peat 2026-07-01..2026-07-05".to_string()
                ),
                ("w28 · jul 6–12".into(), "peat 2026-w28".into()),
                ("w29 · jul 13–19".into(), "peat 2026-w29".into()),
                ("w30 · jul 20–26".into(), "peat 2026-w30".into()),
                (
                    "w31 · jul 27–31".into(),
                    "peat 2026-07-27..2026-07-31".into()
                ),
            ]
        );
        // A year so far: its months, the current one ending today under its own name.
        let year = kids(date(2026, 1, 1), today);
        assert_eq!(year.len(), 8);
        assert_eq!(year[7], ("aug 2026".into(), "peat 2026-08".into()));
        let q = kids(date(2025, 10, 1), date(2025, 12, 31));
        assert_eq!(q[2], ("dec 2025".into(), "peat 2025-12".into()));
        let long = kids(date(2023, 6, 1), date(2026, 8, 20));
        assert_eq!(
            long[0],
            (
                "2023 · jun 1 – dec 31".into(),
                "peat 2023-06-01..2023-12-31".into()
            )
        );
        assert_eq!(long[3], ("2026".into(), "peat 2026".into()));
    }

    #[test]
    fn knum_reads_like_a_person_says_it() {
        assert_eq!(knum(0), "0");
        assert_eq!(knum(999), "999");
        assert_eq!(knum(3_712), "3.7k");
        assert_eq!(knum(9_999), "9.9k");
        assert_eq!(knum(14_200), "14k");
    }
}
