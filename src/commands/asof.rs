use clap::Args;
use serde::Serialize;
use std::io::Write;

use crate::cli::Ctx;
use crate::error::CliError;
use crate::recall::{Query, recall};

/// Answer as of the end of a past day
///
/// Folds every ledger event up to the end of that local day through the same pipeline into
/// a scratch store, with "now" pinned to that moment: the record as it stood then. With
/// words, searches it; without, says what it held.
#[derive(Args, Debug)]
pub struct AsofArgs {
    /// The day, YYYY-MM-DD (local time)
    #[arg(value_name = "DATE")]
    pub date: String,
    /// What to look for, as of that day
    #[arg(value_name = "WORDS")]
    pub words: Vec<String>,
    /// How many hits
    #[arg(long, default_value_t = 12, value_name = "N")]
    pub limit: usize,
}

#[derive(Serialize)]
struct Summary {
    date: String,
    cutoff_ms: i64,
    events: usize,
    sessions: usize,
    days: usize,
    last_session: Option<crate::session::SessionSummary>,
}

pub fn run(ctx: &Ctx, args: &AsofArgs) -> Result<u8, CliError> {
    let cutoff = crate::time::end_of_local_day(&args.date, &ctx.tz).ok_or_else(|| {
        CliError::user(format!("not a date: {:?}", args.date))
            .hint("Give a day as YYYY-MM-DD, e.g. `peat asof 2026-07-10`.")
    })?;
    let (ledger, views, mut model) = ctx.open_views()?;
    let scratch = tempfile::Builder::new()
        .prefix("peat-asof-")
        .tempdir()
        .map_err(|e| CliError::user(format!("cannot make a scratch folder for the replay: {e}")))?;
    let past = crate::asof::fold_until(
        &ledger,
        &views,
        cutoff,
        scratch.path(),
        &mut model,
        ctx.tz.clone(),
    )?;
    drop(views);
    drop(ledger);
    let head = format!("== peat · as of {} · {} events ==", args.date, past.events);
    if past.events == 0 {
        ctx.ui.note(&format!(
            "{head}\nthe record starts after {}: nothing was captured by then",
            args.date
        ));
        return Ok(1);
    }
    let words = args.words.join(" ");
    if !words.trim().is_empty() {
        let q = Query {
            words,
            limit: args.limit,
            ..Query::default()
        };
        let result = recall(&past.views, &mut model, &q)?;
        if !ctx.json {
            println!("{}", ctx.ui.bold(&head));
        }
        return super::recall::print(ctx, &result, cutoff);
    }
    let sessions = past.views.tables.all_sessions()?;
    let days = past.views.tables.all_days()?;
    let last = past.views.summaries()?.into_iter().next();
    let summary = Summary {
        date: args.date.clone(),
        cutoff_ms: cutoff,
        events: past.events,
        sessions: sessions.len(),
        days: days.len(),
        last_session: last,
    };
    let mut out = std::io::stdout().lock();
    if ctx.json {
        serde_json::to_writer(&mut out, &summary).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(0);
    }
    writeln!(out, "{}", ctx.ui.bold(&head))?;
    writeln!(
        out,
        "{} sessions over {} days",
        summary.sessions, summary.days
    )?;
    if let Some(s) = &summary.last_session {
        let short = s.session.short();
        let age = s
            .rollup
            .end_ms
            .map(|t| crate::time::age(cutoff, t))
            .unwrap_or_default();
        writeln!(
            out,
            "last session ({}, {age} before): {}",
            s.rollup.place(),
            ctx.ui.dim(&format!("▸ peat show {short}"))
        )?;
        if let Some(c) = &s.closing {
            writeln!(out, "  {}", ctx.ui.safe(&crate::ui::clip(&c.text, 400)))?;
        }
    }
    Ok(0)
}
