use clap::Args;
use serde::Serialize;
use std::io::Write;

use crate::ctx::Ctx;
use crate::error::CliError;
use crate::event::{Envelope, Event, Seq, SessionId};
use crate::ui::clip;
use crate::views::source::EventSource;

/// List raw ledger events, oldest first
///
/// With --json, one JSON object per line (NDJSON): session, seq, ts_ms, ts, v, event. While
/// a capture holds the store, the views' copy of the events answers, and stderr says how many
/// recorded changes it does not show yet.
#[derive(Args, Debug)]
pub struct EventsArgs {
    /// Only this session (an id or a unique prefix of one)
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Only events of this kind
    #[arg(long, value_name = "KIND", value_parser = clap::builder::PossibleValuesParser::new(Event::TAGS))]
    pub kind: Option<String>,
    /// Only events since: days (3), a duration (12h, 3d, 2w) or a date (2026-11-01)
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
}

/// One event as `--json` prints it (`events`, one per line; `show SESSION SEQ`).
#[derive(Serialize)]
pub struct Row<'a> {
    pub session: &'a SessionId,
    pub seq: Seq,
    pub ts_ms: i64,
    pub ts: String,
    pub v: u16,
    pub event: &'a Event,
}

impl<'a> Row<'a> {
    pub fn of(seq: Seq, env: &'a crate::event::Envelope) -> Row<'a> {
        Row {
            session: &env.session,
            seq,
            ts_ms: env.ts_ms,
            ts: crate::time::format_iso_ms(env.ts_ms),
            v: env.v,
            event: &env.kind,
        }
    }
}

pub fn run(ctx: &Ctx, args: &EventsArgs) -> Result<u8, CliError> {
    let since = match &args.since {
        Some(s) => Some(crate::time::parse_since(s, ctx.now_ms, &ctx.tz).map_err(CliError::user)?),
        None => None,
    };
    // The views' copy of the events answers, beside a writer too (see `EventSource`).
    let (ledger, views, _model) = ctx.read_views()?;
    let keep = |env: &Envelope| {
        args.kind.as_deref().is_none_or(|k| env.kind.tag() == k)
            && since.is_none_or(|t| env.ts_ms >= t)
    };
    let session = match &args.session {
        Some(prefix) => Some(super::show::resolve_in_views(&views, prefix)?),
        None => None,
    };
    let mut rows: Vec<(Seq, Envelope)> = Vec::new();
    for item in EventSource::of(&views).events(session.as_ref()) {
        let (id, env) = item?;
        if keep(&env) {
            rows.push((id.seq, env));
        }
    }
    if !ctx.json {
        crate::handle::learn(rows.iter().map(|(_, env)| &env.session));
    }
    drop(views);
    drop(ledger);
    rows.sort_by(|a, b| (a.1.ts_ms, &a.1.session, a.0).cmp(&(b.1.ts_ms, &b.1.session, b.0)));
    let mut out = if ctx.json {
        crate::ui::Out::stdout()
    } else {
        ctx.ui.pager()
    };
    for (seq, env) in &rows {
        if ctx.json {
            let row = Row::of(*seq, env);
            serde_json::to_writer(&mut out, &row).map_err(std::io::Error::from)?;
            writeln!(out)?;
        } else {
            let summary = clip(&env.kind.summary(), 150);
            writeln!(
                out,
                "{} {} {:>10}  {:<9} {}",
                ctx.ui.dim(&crate::time::local_minute(env.ts_ms, &ctx.tz)),
                env.session.short(),
                seq.0,
                env.kind.tag(),
                ctx.ui.safe(&summary)
            )?;
        }
    }
    out.finish()?;
    if !ctx.json {
        ctx.ui.note(&format!("({} events)", rows.len()));
    }
    Ok(0)
}
