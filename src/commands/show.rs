use clap::Args;
use serde::Serialize;
use std::io::Write;

use crate::change::Change;
use crate::cli::Ctx;
use crate::error::CliError;
use crate::event::{Event, EventId, Seq, SessionId};
use crate::ledger::Ledger;
use crate::session::{NoSession, SessionSummary, resolve_prefix};
use crate::ui::clip;
use crate::views::Views;

/// Show a session, or one event of it in full
///
/// With a session id (or a unique prefix): where and when it ran, what the person asked,
/// what the agent said last, the files and commits. With a SEQ as well: that one event,
/// whole, with what its edit wrote.
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// A session id or a unique prefix of one
    #[arg(value_name = "SESSION")]
    pub session: String,
    /// One event of the session, by seq
    #[arg(value_name = "SEQ")]
    pub seq: Option<u32>,
}

/// How many of the person's prompts the overview lists.
const PROMPTS_SHOWN: usize = 20;

pub fn run(ctx: &Ctx, args: &ShowArgs) -> Result<u8, CliError> {
    // The views answer a session's overview; the ledger opens only for one event whole.
    let (ledger, views, _model) = ctx.open_views()?;
    let session = resolve_in_views(&views, &args.session)?;
    match args.seq {
        Some(seq) => show_event(
            ctx,
            &ledger,
            EventId {
                session,
                seq: Seq(seq),
            },
        ),
        None => show_session(ctx, &views, session),
    }
}

/// The session a prefix names, or an error that says what to type instead.
pub fn resolve(ledger: &Ledger, prefix: &str) -> Result<SessionId, CliError> {
    explain(prefix, resolve_prefix(ledger, prefix)?)
}

/// As [`resolve`], among the sessions the views know: no ledger read.
pub fn resolve_in_views(views: &Views, prefix: &str) -> Result<SessionId, CliError> {
    let all = views
        .tables
        .all_sessions()?
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    explain(prefix, crate::session::pick(all, prefix))
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

#[derive(Serialize)]
struct SessionView<'a> {
    #[serde(flatten)]
    summary: &'a SessionSummary,
    prompts_list: Vec<crate::session::Cited>,
}

fn show_session(ctx: &Ctx, views: &Views, session: SessionId) -> Result<u8, CliError> {
    let rollup = views.tables.session(&session)?.unwrap_or_default();
    let prompts: Vec<crate::session::Cited> = rollup
        .prompt_seqs
        .iter()
        .filter_map(|&seq| views.cited(&session, Seq(seq)))
        .collect();
    let summary = views.summary(session.clone(), rollup);
    let mut out = std::io::stdout().lock();
    if ctx.json {
        let view = SessionView {
            summary: &summary,
            prompts_list: prompts,
        };
        serde_json::to_writer(&mut out, &view).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(0);
    }
    let ui = &ctx.ui;
    let short = session.short();
    let mut head = format!(
        "== session {session} == {}",
        summary.rollup.cwd.as_deref().unwrap_or("?")
    );
    if let Some(b) = &summary.rollup.branch {
        head.push_str(&format!(" · {b}"));
    }
    if let Some(a) = summary.rollup.agent {
        head.push_str(&format!(" · {}", a.label()));
    }
    writeln!(out, "{}", ui.bold(&ui.safe(&head)))?;
    if let (Some(a), Some(b)) = (summary.rollup.start_ms, summary.rollup.end_ms) {
        writeln!(
            out,
            "ran {} – {}",
            crate::time::local_minute(a, &ctx.tz),
            crate::time::local_minute(b, &ctx.tz)
        )?;
    }
    let mut work = format!(
        "{} events · {} prompts · {} tools",
        summary.rollup.events, summary.rollup.prompts, summary.rollup.tools
    );
    if summary.rollup.failed_tools > 0 {
        work.push_str(&format!(" ({} failed)", summary.rollup.failed_tools));
    }
    work.push_str(&format!(
        " · {} files · {} commits",
        summary.rollup.files.len(),
        summary.rollup.commits.len()
    ));
    if summary.rollup.compactions > 0 {
        work.push_str(&format!(" · compacted {}x", summary.rollup.compactions));
    }
    writeln!(out, "{work}")?;
    if let Some(p) = &summary.rollup.parent {
        writeln!(
            out,
            "subagent of {}  {}",
            p,
            ui.dim(&format!("▸ peat show {}", p.short()))
        )?;
    }
    if !prompts.is_empty() {
        writeln!(out, "\nthe person asked:")?;
        for p in prompts.iter().take(PROMPTS_SHOWN) {
            writeln!(
                out,
                "  {}  {}",
                ui.safe(&clip(&p.text, 160)),
                ui.dim(&format!("▸ peat show {short} {}", p.seq))
            )?;
        }
        if prompts.len() > PROMPTS_SHOWN {
            writeln!(
                out,
                "  … {} more  {}",
                prompts.len() - PROMPTS_SHOWN,
                ui.dim(&format!("▸ peat events --session {short} --kind user"))
            )?;
        }
    }
    if let Some(c) = &summary.closing {
        writeln!(out, "\nclosing message:")?;
        writeln!(
            out,
            "  {}  {}",
            ui.safe(&clip(&c.text, 400)),
            ui.dim(&format!("▸ peat show {short} {}", c.seq))
        )?;
    }
    if !summary.rollup.files.is_empty() {
        writeln!(out, "\nfiles:")?;
        for f in summary.rollup.files.keys().take(12) {
            writeln!(out, "  {}", ui.safe(f))?;
        }
        if summary.rollup.files.len() > 12 {
            writeln!(
                out,
                "  … {} more  {}",
                summary.rollup.files.len() - 12,
                ui.dim(&format!("▸ peat events --session {short} --kind file"))
            )?;
        }
    }
    if !summary.rollup.commits.is_empty() {
        writeln!(
            out,
            "\ncommits: {}",
            summary
                .rollup
                .commits
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(" ")
        )?;
    }
    writeln!(
        out,
        "\n{}",
        ui.dim(&format!("▸ peat events --session {short}"))
    )?;
    Ok(0)
}

#[derive(Serialize)]
struct EventView<'a> {
    #[serde(flatten)]
    row: super::events::Row<'a>,
    /// What the edit wrote, for a file touch.
    #[serde(skip_serializing_if = "Option::is_none")]
    change: Option<Change>,
}

fn show_event(ctx: &Ctx, ledger: &Ledger, id: EventId) -> Result<u8, CliError> {
    let Some(env) = ledger.get(&id)? else {
        return Err(
            CliError::not_found(format!("session {} has no event {}", id.session, id.seq)).hint(
                format!(
                    "`peat events --session {}` lists its events.",
                    id.session.short()
                ),
            ),
        );
    };
    let change = match &env.kind {
        Event::FileTouch {
            change: Some(blob), ..
        } => ledger
            .blob(blob)?
            .and_then(|b| serde_json::from_slice::<Change>(&b).ok()),
        _ => None,
    };
    let view = EventView {
        row: super::events::Row::of(id.seq, &env),
        change,
    };
    let mut out = std::io::stdout().lock();
    if ctx.json {
        serde_json::to_writer(&mut out, &view).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(0);
    }
    let ui = &ctx.ui;
    writeln!(
        out,
        "{}",
        ui.bold(&format!(
            "event ({}, {}) · {} · {} · v{}",
            id.session,
            id.seq,
            env.kind.tag(),
            crate::time::local_minute(env.ts_ms, &ctx.tz),
            env.v
        ))
    )?;
    let body = serde_json::to_string_pretty(&env.kind).map_err(std::io::Error::from)?;
    writeln!(out, "{}", ui.safe(&body))?;
    if let Some(c) = &view.change {
        writeln!(out, "\nwhat the edit wrote:")?;
        let body = serde_json::to_string_pretty(c).map_err(std::io::Error::from)?;
        writeln!(out, "{}", ui.safe(&body))?;
    }
    writeln!(
        out,
        "\n{}",
        ui.dim(&format!("▸ peat show {}", id.session.short()))
    )?;
    Ok(0)
}
