use clap::Args;
use std::io::Write;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::listing::{ListArgs, more_line};
use crate::cli::shared::Row;
use crate::cli::ui::clip;
use crate::views::handle::Handles;
use crate::views::source::{EventSource, StoredEnvelope};
use crate::vocab::event::{Event, EventId};

/// List raw ledger events, oldest first
///
/// With --json, one JSON object per line (NDJSON): session, seq, ts_ms, ts, v, event. While
/// a capture holds the store, the views' copy of the events answers, and stderr says how many
/// recorded changes it does not show yet. `--limit N` keeps the first N (every one by
/// default), `--full` prints summaries whole.
#[derive(Args, Debug)]
pub(crate) struct EventsArgs {
    /// Only this session (an id or a unique prefix of one)
    #[arg(long, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// Only events of this kind
    #[arg(long, value_name = "KIND", value_parser = clap::builder::PossibleValuesParser::new(Event::TAGS))]
    pub(crate) kind: Option<String>,
    #[command(flatten)]
    pub(crate) list: ListArgs,
}

/// One event as `--json` prints it (`events`, one per line; `show SESSION SEQ`).
pub(crate) fn run(ctx: &Ctx, args: &EventsArgs) -> Result<u8, CliError> {
    let since = args.list.since_ms(ctx.now_ms, &ctx.tz)?;
    // The views' copy of the events answers, beside a writer too (see `EventSource`).
    let (ledger, views, _model) = ctx.read_views()?;
    let session = match &args.session {
        Some(prefix) => Some(crate::cli::shared::resolve_in_views(ctx, &views, prefix)?),
        None => None,
    };
    // Read as the views hold them: a kind is decoded only to be filtered or summarised,
    // and `--json` copies its bytes.
    let held = EventSource::of(&views)
        .event_bytes(session.as_ref())
        .collect::<Result<Vec<_>, _>>()?;
    let mut rows: Vec<(&EventId, StoredEnvelope<'_>)> = Vec::new();
    // A session named is already resolved in the scope (or past its default, by its id).
    let only = match &session {
        Some(_) => None,
        None => crate::cli::shared::in_scope(ctx, &views)?,
    };
    for (id, bytes) in &held {
        if !crate::views::session::admitted(only.as_ref(), &id.session) {
            continue;
        }
        let stored = StoredEnvelope::parse(bytes)?;
        let kind_fits = match &args.kind {
            Some(k) => stored.event()?.tag() == k,
            None => true,
        };
        if kind_fits && since.is_none_or(|t| stored.ts_ms >= t) {
            rows.push((id, stored));
        }
    }
    // Printed once the views close; `--json` prints none.
    let handles = match ctx.json {
        true => Handles::without_views(),
        false => Handles::new(&views.tables).keep(rows.iter().map(|(id, _)| &id.session)),
    };
    drop(views);
    drop(ledger);
    rows.sort_by(|a, b| {
        (a.1.ts_ms, &a.0.session, a.0.seq).cmp(&(b.1.ts_ms, &b.0.session, b.0.seq))
    });
    let total = rows.len();
    if let Some(n) = args.list.limit_or(None) {
        rows.truncate(n);
    }
    let mut out = if ctx.json {
        crate::cli::ui::Out::stdout()
    } else {
        ctx.ui.pager()
    };
    for (id, stored) in &rows {
        if ctx.json {
            let row = Row::with(&id.session, id.seq, stored.ts_ms, stored.v, stored.kind);
            serde_json::to_writer(&mut out, &row).map_err(std::io::Error::from)?;
            writeln!(out)?;
        } else {
            let event = stored.event()?;
            let summary = clip(
                &event.summary(),
                if args.list.full { usize::MAX } else { 150 },
            );
            writeln!(
                out,
                "{} {} {:>10}  {:<9} {}",
                ctx.ui
                    .dim(&crate::vocab::time::local_minute(stored.ts_ms, &ctx.tz)),
                handles.of(&id.session),
                id.seq.to_string(),
                event.tag(),
                ctx.ui.preview(&summary)
            )?;
        }
    }
    if let Some(more) = more_line(ctx, total - rows.len(), "event", "")
        && !ctx.json
    {
        writeln!(out, "{more}")?;
    }
    out.finish()?;
    if !ctx.json {
        ctx.ui.note(&format!("({total} events)"));
    }
    Ok(0)
}
