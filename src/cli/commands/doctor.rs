use clap::Args;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use crate::cli::ctx::Ctx;
use crate::cli::error::{CliError, EXIT_ERROR};
use crate::cli::hook::install;
use crate::cli::shared;
use crate::ledger::{Ledger, Mode, damage};
use crate::views::Views;
use crate::views::audit::{self, Digests, Finding, Rows, STUCK, Version, digest};
use crate::vocab::change::BlobId;
use crate::vocab::event::EventId;

/// Verify the ledger and the views, and say exactly what to run
///
/// Reads every envelope (each must parse), the whole change feed (each entry must parse,
/// in order, and the newest version of every event must be the one stored), and every blob
/// an edit points to. Then checks the views against the ledger: that they open, were
/// folded from this ledger, hold its sessions, that their copy of every event (what
/// `show` and `events` read) is the version the ledger holds, and that they keep every
/// version a revision replaced (what `asof` reads) as the feed does, with the blobs those
/// versions name. Changes nothing but the note
/// that makes every read mention a damaged ledger. Exits 0 when all is well, 2 when
/// something is not. Also reports the hooks' wiring for every agent installed here or found
/// on this machine, as `peat hook install --check` does (which exits 1 on it; the wiring does
/// not change this exit status, which is the store's).
#[derive(Args, Debug)]
pub(crate) struct DoctorArgs {}

/// Problems listed per part; past this many only the count grows.
const LISTED: usize = 20;

/// One count of what was checked.
#[derive(Debug, Serialize)]
pub(crate) struct Checked {
    pub(crate) what: &'static str,
    pub(crate) count: u64,
}

#[derive(Debug, Default, Serialize)]
pub(crate) struct Part {
    pub(crate) ok: bool,
    /// What was checked, as counts.
    pub(crate) checked: Vec<Checked>,
    /// How many problems were found (only the first few are listed).
    pub(crate) problems: u64,
    pub(crate) listed: Vec<String>,
}

impl Part {
    fn problem(&mut self, what: String) {
        self.problems += 1;
        if self.listed.len() < LISTED {
            self.listed.push(what);
        }
    }
}

#[derive(Debug, Serialize)]
pub(crate) struct Report {
    pub(crate) store: PathBuf,
    /// Why this store: PEAT_DB, a redirect, the project's own, the user-level one.
    pub(crate) store_why: String,
    /// Where the user-level ledger is (or would be).
    pub(crate) user_store: Option<PathBuf>,
    /// Which sessions reads answer from here, and why.
    pub(crate) scope: String,
    pub(crate) ledger: Part,
    pub(crate) views: Part,
    /// What to run, in order; empty when nothing is wrong.
    pub(crate) run: Vec<String>,
    pub(crate) hooks: Hooks,
}

/// The hooks' wiring: what is in place, and what is not with the command that fixes it.
#[derive(Debug, Serialize)]
pub(crate) struct Hooks {
    pub(crate) ok: bool,
    pub(crate) agents: Vec<&'static str>,
    pub(crate) in_place: Vec<String>,
    pub(crate) missing: Vec<String>,
}

fn hooks(ctx: &Ctx) -> Result<Hooks, CliError> {
    let root = shared::install_root(ctx);
    let hook = install::HookCommand::of(ctx);
    let mut h = Hooks {
        ok: true,
        agents: Vec::new(),
        in_place: Vec::new(),
        missing: Vec::new(),
    };
    let home = ctx.home.as_deref();
    for harness in shared::agents(&root, (&ctx.claude_home, &ctx.codex_home), home, false) {
        h.agents.push(harness.agent_name());
        let w = shared::wiring(ctx, harness, &root, &hook)?;
        h.in_place.extend(w.ok);
        h.missing.extend(w.missing);
    }
    h.ok = h.missing.is_empty();
    Ok(h)
}

pub(crate) fn run(ctx: &Ctx, _args: &DoctorArgs) -> Result<u8, CliError> {
    let ledger = ctx.open(Mode::Existing)?;
    let mut ledger_part = Part::default();
    let (last, digests) = check_ledger(&ledger, &mut ledger_part);
    let mut views_part = Part::default();
    check_views(ctx, &ledger, (last, digests.as_ref()), &mut views_part);
    ledger_part.ok = ledger_part.problems == 0;
    views_part.ok = views_part.problems == 0;

    let store = ledger.path().to_path_buf();
    let mut run = Vec::new();
    if !ledger_part.ok {
        let first = ledger_part.listed.first().cloned().unwrap_or_default();
        damage::record(&store, &first, "peat doctor");
        run.push(format!(
            "cp -a {0} {0}.bak   # keep a copy first: observations and closing messages exist only in the ledger",
            store.display()
        ));
        run.push(
            "peat import   # captures again every transcript still on this machine; what it rewrites is mended"
                .into(),
        );
        run.push("peat doctor   # then check again".into());
    } else {
        damage::clear(&store);
        if !views_part.ok {
            run.push("peat rebuild   # folds the views again from the ledger".into());
        }
    }
    let report = Report {
        store,
        store_why: ctx.location.why(),
        user_store: ctx.location.user.clone(),
        scope: ctx.scope.describe(),
        ledger: ledger_part,
        views: views_part,
        run,
        hooks: hooks(ctx)?,
    };
    if ctx.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, &report).map_err(std::io::Error::from)?;
        std::io::Write::write_all(&mut out, b"\n")?;
    } else {
        print_report(ctx, &report)?;
    }
    Ok(if report.run.is_empty() { 0 } else { EXIT_ERROR })
}

fn print_report(ctx: &Ctx, r: &Report) -> Result<(), CliError> {
    use std::io::Write;
    let mut out = ctx.ui.out();
    writeln!(out, "store {}", r.store.display())?;
    writeln!(out, "    why: {}", r.store_why)?;
    writeln!(out, "    reads: {}", r.scope)?;
    for (name, part) in [("ledger", &r.ledger), ("views", &r.views)] {
        let counts: Vec<String> = part
            .checked
            .iter()
            .map(|c| format!("{} {}", c.count, c.what))
            .collect();
        let mark = if part.ok { "✓" } else { "✗" };
        writeln!(out, "{mark} {name}: {}", counts.join(", "))?;
        for p in &part.listed {
            writeln!(out, "    {}", ctx.ui.safe(p))?;
        }
        if part.problems > part.listed.len() as u64 {
            writeln!(out, "    … {} problems in all", part.problems)?;
        }
    }
    let mark = if r.hooks.ok { "✓" } else { "✗" };
    match r.hooks.agents.is_empty() {
        true => writeln!(
            out,
            "✓ hooks: no agent found on this machine or in this project"
        )?,
        false => writeln!(out, "{mark} hooks: {}", r.hooks.agents.join(", "))?,
    }
    for line in r.hooks.missing.iter().chain(&r.hooks.in_place) {
        writeln!(out, "    {}", ctx.ui.safe(line))?;
    }
    if r.run.is_empty() && !r.hooks.ok {
        writeln!(
            out,
            "the store is well; the hooks are not: each line marked above says what to run"
        )?;
    } else if r.run.is_empty() {
        writeln!(out, "all is well: nothing to run")?;
    } else {
        writeln!(out, "run:")?;
        for line in &r.run {
            writeln!(out, "  {line}")?;
        }
    }
    Ok(())
}

/// `SESSION SEQ`, as `peat show` takes it.
fn named(id: &EventId) -> String {
    format!("event {} {}", id.session, id.seq)
}

/// Verify the ledger; returns its last LSN as the feed says, and every event's digest by id
/// when they all read.
fn check_ledger(ledger: &Ledger, part: &mut Part) -> (u64, Option<Copies>) {
    let mut stored: Digests<EventId> = HashMap::new();
    let mut blobs: Vec<(EventId, BlobId)> = Vec::new();
    let mut sessions = HashSet::new();
    let mut failing = 0;
    let mut sessions_events = 0;
    for item in ledger.events() {
        match item {
            Ok((id, env)) => {
                failing = 0;
                sessions_events += 1;
                blobs.extend(env.kind.change_blobs().into_iter().map(|b| (id.clone(), b)));
                sessions.insert(id.session.clone());
                stored.insert(id, digest(&env));
            }
            Err(e) => {
                part.problem(format!("event: {e}"));
                failing += 1;
                if failing >= STUCK {
                    break;
                }
            }
        }
    }
    let events_whole = part.problems == 0;
    let mut newest: Digests<EventId> = HashMap::new();
    let mut past: Digests<(EventId, u64)> = HashMap::new();
    let mut last = 0;
    let mut entries = 0;
    let before_feed = part.problems;
    failing = 0;
    for change in ledger.changes_after(0) {
        match change {
            Ok(c) => {
                failing = 0;
                entries += 1;
                if c.lsn <= last {
                    part.problem(format!("feed entry {} follows {last}: out of order", c.lsn));
                }
                last = last.max(c.lsn);
                if let Some(old) = &c.old {
                    past.insert((c.id.clone(), c.lsn), digest(old));
                }
                newest.insert(c.id, digest(&c.new));
            }
            Err(e) => {
                part.problem(format!("feed: {e}"));
                failing += 1;
                if failing >= STUCK {
                    break;
                }
            }
        }
    }
    // Past versions are compared only with a feed that read whole.
    let feed_whole = part.problems == before_feed;
    if !events_whole {
        // Events that did not read would all show up as missing: say it once.
        part.problem("the feed was not compared with the events: they did not all read".into());
        newest.clear();
        stored.clear();
    }
    let digests = events_whole.then(|| Copies {
        events: stored.clone(),
        past: feed_whole.then_some(past),
    });
    for (id, d) in &newest {
        match stored.get(id) {
            None => part.problem(format!(
                "the feed names {}, which the ledger does not hold",
                named(id)
            )),
            Some(s) if s != d => part.problem(format!(
                "{} differs from its newest version in the feed",
                named(id)
            )),
            Some(_) => {}
        }
    }
    let unfed = stored.keys().filter(|k| !newest.contains_key(*k)).count();
    if unfed > 0 {
        part.problem(format!("{unfed} events have no entry in the feed"));
    }
    for (id, blob) in &blobs {
        match ledger.blob(blob) {
            Ok(Some(_)) => {}
            Ok(None) => part.problem(format!(
                "the edit {} points to blob {blob}, which is missing",
                named(id)
            )),
            Err(e) => part.problem(format!("blob {blob} (edit {}): {e}", named(id))),
        }
    }
    part.checked = vec![
        Checked {
            what: "events read",
            count: sessions_events,
        },
        Checked {
            what: "sessions",
            count: sessions.len() as u64,
        },
        Checked {
            what: "feed entries",
            count: entries,
        },
        Checked {
            what: "blobs",
            count: blobs.len() as u64,
        },
    ];
    (last, digests)
}

/// What the views' copies must equal: every event's current version's digest, and every
/// version a revision replaced (`None`: the feed did not read whole, so they are not
/// compared).
struct Copies {
    events: Digests<EventId>,
    past: Option<Digests<(EventId, u64)>>,
}

/// A finding of [`audit`] as a problem line.
fn worded(finding: &Finding) -> String {
    let version = |v: &Version| match v {
        Version::Event(id) => named(id),
        Version::Past(id, lsn) => format!("{} (change {lsn})", named(id)),
    };
    match finding {
        Finding::Unreadable(Rows::Events, e) => format!("the views' copy of the events: {e}"),
        Finding::Unreadable(Rows::Past, e) => format!("the views' past versions: {e}"),
        Finding::Extra(v @ Version::Event(_)) => {
            format!(
                "the views hold a copy of {}, which the ledger does not",
                version(v)
            )
        }
        Finding::Extra(v @ Version::Past(..)) => format!(
            "the views keep a past version of {} the feed does not",
            version(v)
        ),
        Finding::Differs(v @ Version::Event(_)) => format!(
            "the views' copy of {} is not the version the ledger holds",
            version(v)
        ),
        Finding::Differs(v @ Version::Past(..)) => {
            format!(
                "the views' past version of {} is not the feed's",
                version(v)
            )
        }
        Finding::Missing(Rows::Events, n) => {
            format!("{n} recorded events are missing from the views' copy")
        }
        Finding::Missing(Rows::Past, n) => {
            format!("{n} of the versions revisions replaced are missing from the views")
        }
        Finding::BlobMissing(blob, v) => format!(
            "the views lack blob {blob}, which a past version of {} names",
            version(v)
        ),
    }
}

/// Compare the views' past versions (what `asof` reads) with the feed's (see
/// [`audit::past`]); returns how many were read.
fn check_past(
    views: &Views,
    ledger: &Ledger,
    past: &Digests<(EventId, u64)>,
    part: &mut Part,
) -> u64 {
    audit::past(views, ledger, past, &mut |f| part.problem(worded(&f)))
}

/// Compare the views' copy of the events (what `show` and `events` read) with the ledger's
/// `digests` (see [`audit::events`]); returns how many were read.
fn check_copies(views: &Views, digests: &Digests<EventId>, part: &mut Part) -> u64 {
    audit::events(views, digests, &mut |f| part.problem(worded(&f)))
}

/// Check the views against the ledger whose feed ends at `last` (with `digests`, each event's
/// as [`check_ledger`] read it), changing nothing.
fn check_views(
    ctx: &Ctx,
    ledger: &Ledger,
    (last, digests): (u64, Option<&Copies>),
    part: &mut Part,
) {
    let views = match Views::peek(ledger, ctx.tz.clone(), crate::views::VIEWS_WAIT) {
        Ok(Some(v)) => v,
        Ok(None) => {
            part.problem(
                "the views are missing, or were folded from another ledger or past its end".into(),
            );
            return;
        }
        Err(e) => {
            part.problem(format!("the views do not open: {e}"));
            return;
        }
    };
    let applied = match views.tables.applied() {
        Ok(a) => a.min(views.keyword.applied_lsn()),
        Err(e) => {
            part.problem(format!("the views do not read: {e}"));
            return;
        }
    };
    part.checked = vec![
        Checked {
            what: "changes applied",
            count: applied,
        },
        Checked {
            what: "changes recorded",
            count: last,
        },
    ];
    if applied > last {
        part.problem(format!(
            "the views reach change {applied}, past the ledger's last ({last})"
        ));
        return;
    }
    if applied < last {
        // Not damage: the next read catches up.
        return;
    }
    let in_views: HashSet<String> = match views.tables.all_sessions() {
        Ok(all) => all.into_iter().map(|(s, _)| s.0).collect(),
        Err(e) => {
            part.problem(format!("the sessions view does not read: {e}"));
            return;
        }
    };
    let in_ledger: HashSet<String> = match ledger.sessions() {
        Ok(all) => all.into_iter().map(|s| s.0).collect(),
        Err(e) => {
            part.problem(format!("the ledger's sessions do not read: {e}"));
            return;
        }
    };
    for s in in_ledger.difference(&in_views) {
        part.problem(format!(
            "session {s} is recorded but missing from the views"
        ));
    }
    for s in in_views.difference(&in_ledger) {
        part.problem(format!("session {s} is in the views but not recorded"));
    }
    if let Some(file) = crate::views::closings::read(ledger) {
        match crate::views::closings::agrees(&file, &views) {
            Ok(true) => {}
            Ok(false) => part.problem(format!(
                "{} (the closing messages SessionStart announces) does not list what the views hold",
                crate::views::closings::FILE
            )),
            Err(e) => part.problem(format!("the closing messages do not read: {e}")),
        }
    }
    if let Some(digests) = digests {
        let copies = check_copies(&views, &digests.events, part);
        part.checked.push(Checked {
            what: "event copies",
            count: copies,
        });
        if let Some(past) = &digests.past {
            let past = check_past(&views, ledger, past, part);
            part.checked.push(Checked {
                what: "past versions",
                count: past,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::{Access, WriteSet};
    use crate::views::ModelSlot;
    use crate::views::fault::{self, Fault};
    use crate::vocab::event::{Envelope, Event, Seq, SessionId};

    fn said(text: &str) -> Envelope {
        Envelope::new(
            SessionId("s".into()),
            1_000,
            Event::Said { text: text.into() },
        )
    }

    fn write(ledger: &mut Ledger, events: &[(u32, &str)]) {
        let mut set = WriteSet::default();
        for (seq, text) in events {
            set.event(Seq(*seq), said(text));
        }
        ledger.write(set).unwrap();
    }

    /// The problems `check_copies` finds in views caught up with `ledger`.
    fn problems(ledger: &Ledger) -> Vec<String> {
        let mut model = ModelSlot::new(None, || unreachable!("no model"));
        let views = Views::open(ledger, &mut model, jiff::tz::TimeZone::UTC, &mut |_| {}).unwrap();
        let digests: Digests<EventId> = ledger
            .events()
            .map(|e| e.map(|(id, env)| (id, digest(&env))).unwrap())
            .collect();
        let mut part = Part::default();
        assert_eq!(check_copies(&views, &digests, &mut part), 2);
        part.listed
    }

    /// The problems `check_past` finds in views caught up with `ledger`.
    fn past_problems(ledger: &Ledger) -> Vec<String> {
        let mut model = ModelSlot::new(None, || unreachable!("no model"));
        let views = Views::open(ledger, &mut model, jiff::tz::TimeZone::UTC, &mut |_| {}).unwrap();
        let mut part = Part::default();
        let (_, copies) = check_ledger(ledger, &mut part);
        assert_eq!(part.listed, Vec::<String>::new());
        let past = copies.unwrap().past.unwrap();
        check_past(&views, ledger, &past, &mut part);
        part.listed
    }

    #[test]
    fn doctor_finds_a_revision_whose_old_version_the_views_did_not_keep() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = crate::ledger::open_for_test(dir.path());
        write(&mut ledger, &[(0, "first"), (1, "second")]);
        write(&mut ledger, &[(1, "second, revised")]);
        assert_eq!(past_problems(&ledger), Vec::<String>::new());
        write(&mut ledger, &[(0, "first, revised")]);
        let found = {
            // Broken on purpose: the catch-up keeps no old version.
            let _broken = fault::inject(Fault::DropPastVersions);
            past_problems(&ledger)
        };
        assert_eq!(
            found,
            ["1 of the versions revisions replaced are missing from the views"]
        );
    }

    #[test]
    fn doctor_finds_a_copy_of_an_event_the_views_did_not_revise() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = Ledger::open(
            dir.path(),
            Access {
                mode: Mode::Create,
                wait: std::time::Duration::from_secs(5),
                who: "test",
                on_wait: &mut || {},
            },
        )
        .unwrap();
        write(&mut ledger, &[(0, "first"), (1, "second")]);
        assert_eq!(problems(&ledger), Vec::<String>::new());
        write(&mut ledger, &[(1, "second, revised")]);
        let found = {
            // Broken on purpose: the fold keeps the old version's copy.
            let _broken = fault::inject(Fault::KeepOldEnvelopes);
            problems(&ledger)
        };
        assert_eq!(
            found,
            ["the views' copy of event s 1 is not the version the ledger holds"]
        );
    }
}
