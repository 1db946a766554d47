//! What the commands share, as jj's `cli_util` holds it: finding a session by prefix, the
//! `--json` shape of one event, today's date, paths as listings show them. A command file
//! calls this module and the library, never another command file's helpers.

use serde::Serialize;
use std::path::Path;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::views::Views;
use crate::views::handle::NoSession;
use crate::vocab::event::{Event, Seq, SessionId};

/// A read's `--json` object with how many recorded changes its answer does not show yet:
/// `behind` is 0 when caught up, more while a writer beside the read was still folding them
/// (the stderr note says so too). Array outputs keep their shape and only the note says it.
#[derive(Serialize)]
pub(crate) struct Behind<'a, T: Serialize> {
    #[serde(flatten)]
    pub(crate) answer: &'a T,
    pub(crate) behind: u64,
}

/// One event as `--json` prints it. Its kind is the decoded [`Event`], or (for `events`,
/// which prints many) the bytes the views hold for it, copied as they are.
#[derive(Serialize)]
pub(crate) struct Row<'a, E: Serialize + ?Sized = Event> {
    pub(crate) session: &'a SessionId,
    pub(crate) seq: Seq,
    pub(crate) ts_ms: i64,
    pub(crate) ts: String,
    pub(crate) v: u16,
    pub(crate) event: &'a E,
}

impl<'a> Row<'a> {
    pub(crate) fn of(seq: Seq, env: &'a crate::vocab::event::Envelope) -> Row<'a> {
        Row::with(&env.session, seq, env.ts_ms, env.v, &env.kind)
    }
}

impl<'a, E: Serialize + ?Sized> Row<'a, E> {
    pub(crate) fn with(
        session: &'a SessionId,
        seq: Seq,
        ts_ms: i64,
        v: u16,
        event: &'a E,
    ) -> Row<'a, E> {
        Row {
            session,
            seq,
            ts_ms,
            ts: crate::vocab::time::format_iso_ms(ts_ms),
            v,
            event,
        }
    }
}

/// The session a prefix names among the sessions the views know (no ledger read), or an
/// error that says what to type instead.
pub(crate) fn resolve_in_views(views: &Views, prefix: &str) -> Result<SessionId, CliError> {
    let all = views.tables.session_ids()?;
    explain(prefix, crate::views::handle::pick(all, prefix))
}

fn explain(prefix: &str, found: Result<SessionId, NoSession>) -> Result<SessionId, CliError> {
    match found {
        Ok(s) => Ok(s),
        Err(NoSession::None) => Err(
            CliError::not_found(format!("no session matches {prefix:?}"))
                .hint("`peat sessions` lists every session."),
        ),
        Err(NoSession::Ambiguous(many)) => {
            let names: Vec<&str> = many.iter().take(6).map(SessionId::as_str).collect();
            Err(CliError::user(format!(
                "{prefix:?} matches {} sessions: {}",
                many.len(),
                names.join(", ")
            ))
            .hint("Give more characters of the id."))
        }
    }
}

/// Today's local date: the day windows are read relative to.
pub(crate) fn today(ctx: &Ctx) -> jiff::civil::Date {
    crate::reads::brief::local_date(ctx.now_ms, &ctx.tz)
}

/// A recorded path as listings show it: relative to this repository when inside it.
pub(crate) fn short_path(ctx: &Ctx, p: &str) -> String {
    ctx.location
        .root
        .as_deref()
        .and_then(|r| {
            let r = std::fs::canonicalize(r).unwrap_or_else(|_| r.to_path_buf());
            Path::new(p)
                .strip_prefix(r)
                .ok()
                .map(|x| x.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| p.to_string())
}
