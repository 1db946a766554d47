use clap::Args;
use serde::Serialize;
use std::io::Write;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::reads::recall::{Query, recall};
use crate::views::handle::Handles;

/// Answer as of the end of a past day
///
/// The record as it stood then: every event's newest version at or before the end of that
/// local day. Without words, says what it held (events, sessions, days, the newest
/// session), read from today's views and the versions revisions replaced, replaying only
/// that session. With words, searches today's lanes for the texts at or before that moment;
/// when an event revised since had another version then, the past is folded through the
/// same pipeline into a scratch store instead, and searched there. Like every read, it
/// never waits for a capture, answering from the views as they stand and saying how far
/// behind they are.
#[derive(Args, Debug)]
pub(crate) struct AsofArgs {
    /// The day (local time): YYYY-MM-DD, today, yesterday, 3d, 2w, 1m, "3 days ago",
    /// "last week", or a weekday (monday: the latest one before today)
    #[arg(value_name = "DAY")]
    pub(crate) date: String,
    /// What to look for, as of that day
    #[arg(value_name = "WORDS")]
    pub(crate) words: Vec<String>,
    /// How many hits
    #[arg(long, default_value_t = 12, value_name = "N")]
    pub(crate) limit: usize,
}

#[derive(Serialize)]
struct Summary {
    date: String,
    cutoff_ms: i64,
    events: usize,
    sessions: usize,
    days: usize,
    last_session: Option<crate::views::session::SessionSummary>,
    /// Recorded changes the views did not show yet (0 unless a capture was running).
    behind: u64,
}

pub(crate) fn run(ctx: &Ctx, args: &AsofArgs) -> Result<u8, CliError> {
    let today = crate::cli::shared::today(ctx);
    let day = crate::vocab::time::parse_day(&args.date, today).map_err(|why| {
        CliError::user(why)
            .hint("For example `peat asof 2026-07-10`, `peat asof yesterday` or `peat asof 2w`.")
    })?;
    if day > today {
        return Err(CliError::user(format!(
            "{day} is in the future (today is {today}): asof reads the record as it stood on a past day"
        ))
        .hint("For the record as it stands now, run `peat` (the brief) or `peat recall WORDS`."));
    }
    let date = day.to_string();
    let words = args.words.join(" ");
    let search = !words.trim().is_empty();
    // A search's query is embedded (by the resident embedder, or a model loading on a
    // thread of its own) while the past is read.
    let (ledger, views, mut model) = match search {
        true => ctx.read_views_to_search(words.trim())?,
        false => ctx.read_views()?,
    };
    drop(ledger);
    let behind = views.behind();
    let scratch = tempfile::Builder::new()
        .prefix("peat-asof-")
        .tempdir()
        .map_err(|e| CliError::user(format!("cannot make a scratch folder for the replay: {e}")))?;
    let handles = Handles::listed(&views.tables.session_ids()?);
    let tally = crate::views::asof::Tally::at(&views, day)?;
    if search {
        return searched(
            ctx,
            args,
            (views, &mut model),
            tally,
            (&date, behind),
            &scratch,
            &handles,
        );
    }
    // The end of the day in the zone the counts were made in, as the search's.
    let cutoff = tally.cutoff_ms();
    let only = ctx.scope.sessions(&views.tables)?;
    let held = tally.held(&views, only.as_ref(), scratch.path(), &mut model)?;
    drop(views);
    let head = format!("== peat · as of {date} · {} events ==", held.events);
    if held.events == 0 && only.is_none() && !ctx.json {
        return Ok(nothing_by(ctx, &head, &date));
    }
    let summary = Summary {
        date: date.clone(),
        cutoff_ms: cutoff,
        events: held.events,
        sessions: held.sessions,
        days: held.days,
        last_session: held.last,
        behind,
    };
    if ctx.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, &summary).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(u8::from(summary.events == 0));
    }
    let mut out = ctx.ui.out();
    writeln!(out, "{}", ctx.ui.bold(&head))?;
    writeln!(
        out,
        "{} sessions over {} days",
        summary.sessions, summary.days
    )?;
    if let Some(s) = &summary.last_session {
        let short = handles.of(&s.session);
        let age = s
            .rollup
            .end_ms
            .map(|t| crate::vocab::time::age(cutoff, t, &ctx.tz))
            .unwrap_or_default();
        let agent = s.rollup.agent.map_or("?", |a| a.label());
        writeln!(
            out,
            "last session ({}, {agent}, {age} before): {}",
            s.rollup.place(),
            ctx.ui.dim(&format!("▸ peat show {short}"))
        )?;
        if let Some(c) = &s.closing {
            writeln!(
                out,
                "  {}",
                ctx.ui.preview(&crate::cli::ui::clip(&c.text, 400))
            )?;
        }
    }
    out.finish()?;
    Ok(0)
}

/// `asof` with words: today's lanes searched for the texts at or before the cutoff when
/// they are the past's texts (see `Tally::searchable_today`); otherwise the past replayed
/// into `scratch`, then searched.
fn searched(
    ctx: &Ctx,
    args: &AsofArgs,
    (views, model): (crate::views::Views, &mut crate::views::ModelSlot),
    tally: crate::views::asof::Tally,
    (date, behind): (&str, u64),
    scratch: &tempfile::TempDir,
    handles: &Handles,
) -> Result<u8, CliError> {
    let cutoff = tally.cutoff_ms();
    let (views, events, until_ms) = if tally.searchable_today() {
        (views, tally.events(), Some(cutoff))
    } else {
        let copied = crate::views::asof::copy_past(&views, cutoff, scratch.path(), true)?;
        let queued = views.vectors.queued()?;
        drop(views);
        let past = crate::views::asof::replay(copied, model, ctx.tz.clone())?;
        // The fold took every vector it could from the copy of the store's cache. What it
        // queued is either still queued in the store too (its embedding pass will cache it:
        // the search says so meanwhile), or a version since revised, which no pass will
        // ever embed: embed those now, for this search.
        if queued == 0 {
            past.views.embed_queued(model, 256)?;
        }
        (past.views, past.events, None)
    };
    let head = format!("== peat · as of {date} · {events} events ==");
    if events == 0 && !ctx.json {
        return Ok(nothing_by(ctx, &head, date));
    }
    let q = Query {
        words: args.words.join(" "),
        limit: args.limit,
        filter: crate::views::rows::TextFilter {
            sessions: ctx.scope.sessions(&views.tables)?,
            until_ms,
            ..Default::default()
        },
        ..Query::default()
    };
    let result = recall(&views, model, &q)?;
    if !ctx.json {
        println!("{}", ctx.ui.bold(&head));
    }
    super::recall::print(ctx, &result, cutoff, (behind, false), handles)
}

/// Before the record starts there is nothing to read: say so, and exit 1. (Under --json the
/// answer says it, 0 events: the output stays one document.)
fn nothing_by(ctx: &Ctx, head: &str, date: &str) -> u8 {
    ctx.ui.note(&format!(
        "{head}\nthe record starts after {date}: nothing was captured by then"
    ));
    1
}
