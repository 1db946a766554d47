//! The brief: what `peat` prints, and what a session-start hook hands the next agent.
//!
//! Assembled from the views alone (days, sessions, texts, subjects), never from a scan of
//! the ledger, so it costs the same on a thousand events as on a million. "Now" and the
//! time zone are inputs. The command line renders a [`Brief`] as text through `brief.tmpl`.

pub(crate) mod zoom;

use jiff::civil::Date;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::reads::ladder::{self, Band, DayRow, Tally};
use crate::views::handle::Handles;
use crate::views::session::{SessionSet, admitted};
use crate::views::tables::{SessionDay, Table, Tables};
use crate::views::{ViewError, Views};
use crate::vocab::event::{Agent, Basis, EventId, Seq, SessionId};
use crate::vocab::time::age;
use crate::vocab::window;

/// How long after its last event a session still counts as active.
const ACTIVE_MS: i64 = 3_600_000;
const ACTIVE_SHOWN: usize = 6;
/// How many of the most recent active days the brief lists one by one.
const DAYS_SHOWN: usize = 3;
const DAY_FILES: usize = 4;
const FILES_SHOWN: usize = 5;
const SUBJECTS_SHOWN: usize = 5;

/// Everything the brief says, as the template sees it and `--json` prints it. Texts are
/// whole here; the template clips them.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct Brief {
    /// The local date of "now": `2026-07-20`.
    pub(crate) today: String,
    /// Events in the record (0: nothing captured yet).
    pub(crate) events: i64,
    /// Sessions whose last event is within the hour, newest first.
    pub(crate) active: Vec<Active>,
    /// The most recent days with activity, newest first.
    pub(crate) days: Vec<Day>,
    /// The ladder: everything before those days, in calendar bands, newest first.
    pub(crate) further: Vec<Band>,
    /// The newest session with a closing message, on this desk if there is one.
    pub(crate) last_session: Option<LastSession>,
    /// The files most touched over the days shown, with the sessions that touched them.
    pub(crate) files: Vec<FileLine>,
    /// The subjects observed most recently, with their current claims.
    pub(crate) subjects: Vec<SubjectLine>,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct Active {
    /// Where it runs: the last component of its working directory.
    pub(crate) place: String,
    /// The agent that runs it, as `--agent` names it.
    pub(crate) agent: Option<&'static str>,
    pub(crate) session: SessionId,
    pub(crate) short: String,
    pub(crate) age: String,
    pub(crate) commits: usize,
    pub(crate) handle: String,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct Day {
    /// `today`, `yesterday`, `3d ago`.
    pub(crate) day: String,
    pub(crate) date: String,
    #[serde(flatten)]
    pub(crate) tally: Tally,
    pub(crate) handle: String,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct LastSession {
    /// The last component of its working directory.
    #[serde(rename = "where")]
    pub(crate) place: String,
    pub(crate) cwd: Option<String>,
    /// The agent that ran it, as `--agent` names it.
    pub(crate) agent: Option<&'static str>,
    /// It ran on this desk (under its root).
    pub(crate) here: bool,
    pub(crate) session: SessionId,
    pub(crate) seq: Seq,
    pub(crate) age: String,
    pub(crate) branch: Option<String>,
    /// Its closing message, whole.
    pub(crate) text: String,
    pub(crate) handle: String,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct FileLine {
    pub(crate) path: String,
    /// Relative to the working directory when under it, else `…/<dir>/<file>`.
    pub(crate) short: String,
    pub(crate) touches: i64,
    /// Short ids of the sessions shown that touched it.
    pub(crate) sessions: Vec<String>,
    pub(crate) handle: String,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct SubjectLine {
    pub(crate) subject: String,
    pub(crate) count: i64,
    pub(crate) cited: i64,
    pub(crate) uncited: bool,
    pub(crate) age: String,
    pub(crate) text: String,
    /// `@0123abcd` (`+` when the tree was dirty): the commit it was asserted against.
    pub(crate) basis: Option<String>,
    pub(crate) handle: String,
}

/// What the brief needs to know about where it is asked from.
pub(crate) struct Here<'a> {
    pub(crate) now_ms: i64,
    pub(crate) tz: &'a jiff::tz::TimeZone,
    /// This desk's root (or the working directory outside a repository).
    pub(crate) root: &'a Path,
    /// The working directory, for handles that name files.
    pub(crate) cwd: &'a Path,
    /// The number of ladder bands.
    pub(crate) budget: usize,
    /// The sessions in the read's scope (`None`: every session).
    pub(crate) only: Option<&'a SessionSet>,
}

pub(crate) use crate::vocab::time::{day_end_ms, day_start_ms, local_date};

/// Every row of the days view with its date, oldest first, undecoded.
pub(crate) fn day_rows(tables: &Tables) -> Result<Vec<(Date, fjall::Slice)>, ViewError> {
    let mut out = Vec::new();
    for row in tables.scan(Table::Days, b"") {
        let (k, v) = row?;
        if let Some(d) = std::str::from_utf8(&k)
            .ok()
            .and_then(|k| k.parse::<Date>().ok())
        {
            out.push((d, v));
        }
    }
    Ok(out)
}

/// Decode the rows [`day_rows`] read.
pub(crate) fn decode_days(
    raw: &[(Date, fjall::Slice)],
) -> Result<Vec<(Date, ladder::Day<'_>)>, ViewError> {
    raw.iter()
        .map(|(d, v)| {
            ladder::Day::decode(v)
                .map(|day| (*d, day))
                .map_err(|e| ViewError::Corrupt(e.to_string()))
        })
        .collect()
}

/// The part of a session's rollup the brief and zoom read; the rest of the row is skipped
/// unparsed.
#[derive(Clone, Debug, Default, Deserialize)]
pub(crate) struct Head {
    #[serde(default)]
    pub(crate) cwd: Option<String>,
    #[serde(default)]
    pub(crate) agent: Option<Agent>,
    #[serde(default)]
    pub(crate) branch: Option<String>,
    #[serde(default)]
    pub(crate) parent: Option<SessionId>,
    #[serde(default)]
    pub(crate) start_ms: Option<i64>,
    #[serde(default)]
    pub(crate) end_ms: Option<i64>,
    #[serde(default)]
    pub(crate) tools: i64,
    /// The (time, seq) of its closing message: the newest, the Stop hook's winning a tie.
    #[serde(default, rename = "finals", deserialize_with = "newest_pair")]
    pub(crate) closing: Option<(i64, u32)>,
}

impl Head {
    /// The last component of the working directory.
    pub(crate) fn place(&self) -> String {
        place(self.cwd.as_deref())
    }

    fn decode(bytes: &[u8]) -> Result<Head, ViewError> {
        serde_json::from_slice(bytes).map_err(|e| ViewError::Corrupt(e.to_string()))
    }
}

/// The greatest `[time, seq]` pair of a list, without keeping the list.
fn newest_pair<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<(i64, u32)>, D::Error> {
    struct Newest;
    impl<'de> serde::de::Visitor<'de> for Newest {
        type Value = Option<(i64, u32)>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list of [time, seq] pairs")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut s: A,
        ) -> Result<Self::Value, A::Error> {
            let mut best = None;
            while let Some(p) = s.next_element::<(i64, u32)>()? {
                best = best.max(Some(p));
            }
            Ok(best)
        }
    }
    d.deserialize_seq(Newest)
}

/// The last component of a working directory: where a session ran, in a word.
pub(crate) fn place(cwd: Option<&str>) -> String {
    let cwd = cwd.unwrap_or("?");
    cwd.trim_end_matches('/')
        .rsplit('/')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or(cwd)
        .to_string()
}

/// Session heads read on demand and kept for the rest of the command.
pub(crate) struct Heads<'t> {
    tables: &'t Tables,
    cache: HashMap<String, Option<Head>>,
}

impl<'t> Heads<'t> {
    pub(crate) fn new(tables: &'t Tables) -> Heads<'t> {
        Heads {
            tables,
            cache: HashMap::new(),
        }
    }

    pub(crate) fn get(&mut self, session: &str) -> Result<Option<&Head>, ViewError> {
        if !self.cache.contains_key(session) {
            let head = match self.tables.get_raw(Table::Sessions, session.as_bytes())? {
                Some(v) => Some(Head::decode(&v)?),
                None => None,
            };
            self.cache.insert(session.to_string(), head);
        }
        Ok(self.cache.get(session).and_then(Option::as_ref))
    }
}

/// The handle among `handles` of the session whose id is `session` (see [`Handles::of`]).
pub(crate) fn short(handles: &Handles, session: &str) -> String {
    handles.of(&SessionId(session.to_string()))
}

/// `today`, `yesterday`, `3d ago` (a day after `today`, as its date).
fn day_label(d: Date, today: Date) -> String {
    match window::days_between(d, today) {
        0 => "today".into(),
        1 => "yesterday".into(),
        n if n > 1 => format!("{n}d ago"),
        _ => d.to_string(),
    }
}

/// The `n` most touched files of `files`, most first (then by name).
fn top_files(files: &BTreeMap<&str, i64>, n: usize) -> Vec<(String, i64)> {
    let mut top: Vec<(&str, i64)> = files.iter().map(|(f, n)| (*f, *n)).collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    top.into_iter()
        .take(n)
        .map(|(f, n)| (f.to_string(), n))
        .collect()
}

/// `cwd` is `root` or below it, compared by path components (so `/code/herald-1a` is not
/// under `/code/herald`).
fn is_under(cwd: &str, roots: &[PathBuf]) -> bool {
    let cwd = Path::new(cwd);
    roots.iter().any(|r| cwd.starts_with(r))
}

/// How a subject is read back: by name when bare `peat NAME` reads it unambiguously.
pub(crate) fn subject_handle(subject: &str, today: Date) -> String {
    let plain = !subject.is_empty()
        && subject
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    let hexish = subject.len() >= 6 && subject.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    if plain && !hexish && window::parse(subject, today).is_none() {
        format!("▸ peat {subject}")
    } else {
        format!(
            "▸ peat recall --subject '{}'",
            subject.replace('\'', r"'\''")
        )
    }
}

/// `@0123abcd`, with `+` when the tree had uncommitted changes.
pub(crate) fn basis_label(b: &Basis) -> String {
    let short: String = b.commit.chars().take(8).collect();
    format!("@{short}{}", if b.dirty { "+" } else { "" })
}

/// Assemble the brief from the views.
pub(crate) fn assemble(views: &Views, here: &Here) -> Result<Brief, ViewError> {
    let tables = &views.tables;
    let today = local_date(here.now_ms, here.tz);
    let raw = day_rows(tables)?;
    let mut owned = decode_days(&raw)?;
    if let Some(only) = here.only {
        owned = scoped_days(tables, owned, only)?;
    }
    let days: Vec<DayRow> = owned.iter().map(|(d, s)| (*d, s)).collect();
    let shown = &days[days.len().saturating_sub(DAYS_SHOWN)..];
    let mut brief = Brief {
        today: today.to_string(),
        events: days.iter().map(|(_, s)| s.events).sum(),
        ..Brief::default()
    };
    let mut heads = Heads::new(tables);
    let handles = Handles::new(tables);

    // Active: sessions seen on the local days the last hour spans.
    let since = local_date(here.now_ms - ACTIVE_MS, here.tz);
    let mut active = Vec::new();
    let until = local_date(here.now_ms + ACTIVE_MS, here.tz);
    let recent: BTreeSet<&str> = ladder::within(&days, since, until)
        .iter()
        .flat_map(|(_, s)| s.sessions.iter().map(|(s, _)| s.as_ref()))
        .collect();
    // Every session's commits, by the one resolution (see [`crate::reads::commits`]): the
    // brief names and counts the commits `peat COMMIT`, `show` and `zoom` do, in every
    // period (a commit of lines a session wrote days before is counted where it was made).
    let mut ids = tables.session_ids()?;
    ids.retain(|s| admitted(here.only, s));
    let made = crate::reads::commits::made_by(views, &ids, Some(here.cwd))?;
    for s in recent {
        let Some(h) = heads.get(s)? else { continue };
        let Some(end) = h.end_ms else { continue };
        // Within the hour either side: a session a moment ahead of this clock is active too.
        if h.parent.is_none() && (end - here.now_ms).abs() <= ACTIVE_MS {
            let commits = made.of(&SessionId(s.to_string())).len();
            let agent = h.agent.map(Agent::label);
            active.push((end, s.to_string(), (h.place(), agent), commits));
        }
    }
    active.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    brief.active = active
        .into_iter()
        .take(ACTIVE_SHOWN)
        .map(|(end, s, (place, agent), commits)| Active {
            place,
            agent,
            short: short(&handles, &s),
            age: age(here.now_ms, end, here.tz),
            commits,
            handle: format!("▸ peat show {}", short(&handles, &s)),
            session: SessionId(s),
        })
        .collect();

    // The most recent days, one by one.
    for (d, s) in shown.iter().rev() {
        let mut tally = Tally::of(std::slice::from_ref(&(*d, *s)), *d, *d);
        tally.commits =
            made.count_between(day_start_ms(*d, here.tz), day_end_ms(*d, here.tz)) as i64;
        let files: BTreeMap<&str, i64> = s.files.iter().map(|(f, n)| (f.as_ref(), *n)).collect();
        tally.files = Vec::new();
        for (f, _) in top_files(&files, DAY_FILES) {
            let short = ladder::short_path(&f);
            if !tally.files.contains(&short) {
                tally.files.push(short);
            }
        }
        brief.days.push(Day {
            day: day_label(*d, today),
            date: d.to_string(),
            tally,
            handle: format!("▸ peat {d}"),
        });
    }

    // The ladder tiles everything before the oldest day shown.
    let frontier = shown.first().map_or(today, |(d, _)| *d);
    brief.further = ladder::bands(&days, frontier, here.budget, today)
        .into_iter()
        .map(|mut b| {
            b.handle = format!("▸ {}", b.handle);
            b.tally.commits = made
                .count_between(day_start_ms(b.start, here.tz), day_end_ms(b.end, here.tz))
                as i64;
            b
        })
        .filter(|b| !b.tally.is_quiet())
        .collect();

    brief.last_session = last_session(tables, &mut heads, &handles, &days, here)?;

    // Files touched over the days shown, and which of those days' sessions touched them.
    brief.files = files_of(tables, &handles, shown, here.cwd, FILES_SHOWN)?;

    // The subjects observed most recently.
    let mut subjects = tables.all_subjects()?;
    subjects.sort_by(|a, b| b.1.last_ms.cmp(&a.1.last_ms).then(a.0.cmp(&b.0)));
    brief.subjects = subjects
        .into_iter()
        .take(SUBJECTS_SHOWN)
        .map(|(name, s)| SubjectLine {
            handle: subject_handle(&name, today),
            count: s.count,
            cited: s.cited,
            uncited: s.cited == 0,
            age: age(here.now_ms, s.last_ms, here.tz),
            text: s.text,
            basis: s.basis.as_ref().map(basis_label),
            subject: name,
        })
        .collect();
    Ok(brief)
}

/// The days as a scoped read sees them: only the sessions in `only`, the files they
/// touched, and the day's counts as what those sessions did that day. A day none of them
/// was active on is left out. Observations and commits stay the day's: the days view
/// keeps them per day, not per session.
pub(crate) fn scoped_days<'a>(
    tables: &Tables,
    days: Vec<(Date, ladder::Day<'a>)>,
    only: &SessionSet,
) -> Result<Vec<(Date, ladder::Day<'a>)>, ViewError> {
    // Each session's rollup: the files it touched.
    let mut rollups: HashMap<String, crate::views::session::SessionRollup> = HashMap::new();
    for (_, d) in &days {
        for (s, _) in &d.sessions {
            let id = SessionId(s.to_string());
            if only.contains(&id) && !rollups.contains_key(s.as_ref()) {
                rollups.insert(s.to_string(), tables.session(&id)?.unwrap_or_default());
            }
        }
    }
    let mut out = Vec::new();
    for (date, mut d) in days {
        d.sessions.retain(|(s, _)| rollups.contains_key(s.as_ref()));
        if d.sessions.is_empty() {
            continue;
        }
        let mine: Vec<&crate::views::session::SessionRollup> = d
            .sessions
            .iter()
            .filter_map(|(s, _)| rollups.get(s.as_ref()))
            .collect();
        d.files
            .retain(|(f, _)| mine.iter().any(|r| r.files.contains_key(f.as_ref())));
        let sum = |f: fn(&SessionDay) -> i64| d.sessions.iter().map(|(_, n)| f(n)).sum();
        (d.events, d.prompts, d.tools, d.fails) = (
            sum(|n| n.events),
            sum(|n| n.prompts),
            sum(|n| n.tools),
            sum(|n| n.fails),
        );
        out.push((date, d));
    }
    Ok(out)
}

/// The `n` files most touched over `rows`, with the sessions that touched them, as the
/// brief and a window's zoom list them.
pub(crate) fn files_of(
    tables: &Tables,
    handles: &Handles,
    rows: &[DayRow],
    cwd: &Path,
    n: usize,
) -> Result<Vec<FileLine>, ViewError> {
    let mut touches: BTreeMap<&str, i64> = BTreeMap::new();
    let mut sessions: BTreeSet<&str> = BTreeSet::new();
    for (_, s) in rows {
        for (f, n) in &s.files {
            *touches.entry(f.as_ref()).or_insert(0) += n;
        }
        sessions.extend(s.sessions.iter().map(|(s, _)| s.as_ref()));
    }
    let top = top_files(&touches, n);
    let mut by_file: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    if !top.is_empty() {
        for s in &sessions {
            let Some(rollup) = tables.session(&SessionId(s.to_string()))? else {
                continue;
            };
            for (f, _) in &top {
                if rollup.files.contains_key(f) {
                    by_file.entry(f).or_default().insert(short(handles, s));
                }
            }
        }
    }
    Ok(top
        .iter()
        .map(|(f, n)| FileLine {
            short: shown_path(f, cwd),
            path: f.clone(),
            touches: *n,
            sessions: by_file
                .get(f.as_str())
                .map(|s| s.iter().cloned().collect())
                .unwrap_or_default(),
            handle: format!("▸ peat {}", file_arg(f, cwd)),
        })
        .collect())
}

/// A file for people: relative to the working directory when under it, else shortened.
pub(crate) fn shown_path(path: &str, cwd: &Path) -> String {
    match Path::new(path).strip_prefix(cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
        _ => ladder::short_path(path),
    }
}

/// A file as an argument: relative to the working directory when under it.
pub(crate) fn file_arg(path: &str, cwd: &Path) -> String {
    let rel = Path::new(path)
        .strip_prefix(cwd)
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| path.to_string());
    if rel
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '-' | '_' | '+' | ',' | '@'))
    {
        rel
    } else {
        format!("'{}'", rel.replace('\'', r"'\''"))
    }
}

/// The newest session with a closing message whose working directory is under this desk's
/// root; failing that, the newest anywhere (`here: false`). Subagents speak through their
/// parent and are passed over.
///
/// First walks the newest days: a session first met on day D ended on D, so once a day
/// yields a candidate here, no older day can hold a newer one. A desk quiet for longer than
/// the walk allows is settled by one sequential pass over every session instead.
fn last_session(
    tables: &Tables,
    heads: &mut Heads,
    handles: &Handles,
    days: &[DayRow],
    here: &Here,
) -> Result<Option<LastSession>, ViewError> {
    let mut roots = vec![here.root.to_path_buf()];
    if let Ok(c) = here.root.canonicalize()
        && c != here.root
    {
        roots.push(c);
    }
    let mut best = Best::default();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut walked_all = true;
    for (_, stats) in days.iter().rev() {
        // Only between days: a day is read whole, so a candidate from it is the newest.
        if seen.len() >= WALK_SESSIONS {
            walked_all = false;
            break;
        }
        for (s, _) in &stats.sessions {
            if seen.insert(s.as_ref())
                && let Some(h) = heads.get(s)?
                && admitted(here.only, &SessionId(s.to_string()))
            {
                best.offer(s, h, &roots);
            }
        }
        if best.here.is_some() {
            break;
        }
    }
    if best.here.is_none() && !walked_all {
        // Rows that do not even mention this desk's root are skipped unparsed once the
        // newest session anywhere is known.
        let needles: Vec<Vec<u8>> = roots
            .iter()
            .filter_map(|r| serde_json::to_string(&r.to_string_lossy()).ok())
            .map(|q| q.trim_end_matches('"').as_bytes().to_vec())
            .collect();
        for row in tables.scan(Table::Sessions, b"") {
            let (k, v) = row?;
            if best.any.is_some()
                && !needles
                    .iter()
                    .any(|n| memchr::memmem::find(&v, n).is_some())
            {
                continue;
            }
            let s = String::from_utf8_lossy(&k);
            if !admitted(here.only, &SessionId(s.to_string())) {
                continue;
            }
            best.offer(&s, &Head::decode(&v)?, &roots);
        }
    }
    let (pick, is_here) = match (best.here, best.any) {
        (Some(b), _) => (b, true),
        (None, Some(b)) => (b, false),
        (None, None) => return Ok(None),
    };
    let (end, session, seq) = pick;
    let id = EventId {
        session: SessionId(session.clone()),
        seq: Seq(seq),
    };
    let text = tables.text(&id)?.map(|r| r.text).unwrap_or_default();
    let Some(h) = heads.get(&session)? else {
        return Ok(None);
    };
    Ok(Some(LastSession {
        place: h.place(),
        cwd: h.cwd.clone(),
        agent: h.agent.map(Agent::label),
        here: is_here,
        age: age(here.now_ms, end, here.tz),
        branch: h.branch.clone(),
        text,
        handle: format!("▸ peat show {} {}", short(handles, &session), id.seq),
        session: id.session,
        seq: id.seq,
    }))
}

/// How many sessions the newest-days walk reads one by one before a full pass is cheaper.
const WALK_SESSIONS: usize = 64;

/// The newest closed session here and anywhere: (end, session, closing seq).
#[derive(Default)]
struct Best {
    here: Option<(i64, String, u32)>,
    any: Option<(i64, String, u32)>,
}

impl Best {
    fn offer(&mut self, session: &str, h: &Head, roots: &[PathBuf]) {
        if h.parent.is_some() {
            return;
        }
        let Some((ts, seq)) = h.closing else { return };
        let end = h.end_ms.unwrap_or(ts);
        let newer = |b: &Option<(i64, String, u32)>| {
            b.as_ref()
                .is_none_or(|b| (end, session) > (b.0, b.1.as_str()))
        };
        let cand = || Some((end, session.to_string(), seq));
        if h.cwd.as_deref().is_some_and(|c| is_under(c, roots)) && newer(&self.here) {
            self.here = cand();
        }
        if newer(&self.any) {
            self.any = cand();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::civil::date;

    #[test]
    fn desks_compare_by_path_components() {
        let roots = [PathBuf::from("/code/herald")];
        assert!(is_under("/code/herald", &roots));
        assert!(is_under("/code/herald/src", &roots));
        assert!(!is_under("/code/herald-1a", &roots));
        assert!(!is_under("/code", &roots));
    }

    #[test]
    fn subjects_that_read_as_something_else_are_named_explicitly() {
        let today = date(2026, 7, 20);
        assert_eq!(subject_handle("fold-hnsw", today), "▸ peat fold-hnsw");
        assert_eq!(
            subject_handle("2026", today),
            "▸ peat recall --subject '2026'"
        );
        assert_eq!(
            subject_handle("deadbeef", today),
            "▸ peat recall --subject 'deadbeef'"
        );
        assert_eq!(
            subject_handle("it's odd", today),
            r"▸ peat recall --subject 'it'\''s odd'"
        );
    }

    #[test]
    fn days_are_labelled_relative_to_today() {
        let today = date(2026, 7, 20);
        assert_eq!(day_label(today, today), "today");
        assert_eq!(day_label(date(2026, 7, 19), today), "yesterday");
        assert_eq!(day_label(date(2026, 7, 2), today), "18d ago");
        assert_eq!(day_label(date(2026, 7, 21), today), "2026-07-21");
    }

    #[test]
    fn local_days_follow_the_time_zone() {
        let plus2 = jiff::tz::TimeZone::fixed(jiff::tz::offset(2));
        // 2026-07-19T23:00Z is already the 20th two hours east.
        let ms = crate::vocab::time::parse_iso_ms("2026-07-19T23:00:00Z").unwrap();
        assert_eq!(local_date(ms, &plus2), date(2026, 7, 20));
        assert_eq!(local_date(ms, &jiff::tz::TimeZone::UTC), date(2026, 7, 19));
        let d = date(2026, 7, 20);
        assert_eq!(
            day_end_ms(d, &plus2) - day_start_ms(d, &plus2),
            86_400_000 - 1
        );
    }

    #[test]
    fn files_are_named_relative_to_the_working_directory() {
        let cwd = Path::new("/home/dev/acme");
        assert_eq!(file_arg("/home/dev/acme/src/a.rs", cwd), "src/a.rs");
        assert_eq!(file_arg("/etc/hosts", cwd), "/etc/hosts");
        assert_eq!(file_arg("/home/dev/acme/my file.rs", cwd), "'my file.rs'");
    }
}
