mod render;

use clap::Args;
use std::io::Write;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::reads::brief::{self, Brief, Here};
use crate::reads::ladder::DEFAULT_BUDGET;

/// Print the brief: what is going on, what happened lately, and where to read further
///
/// Sessions active in the last hour, the most recent days, then further-back calendar periods
/// (two weeks, two months, two quarters, years, and one for everything earlier), the
/// last session's closing message, the files touched lately and the newest observations.
/// Every line ends in the command that reads it. What bare `peat` prints.
///
/// The text comes from a minijinja template; put one in .peat/brief.tmpl beside the
/// repository to change it (`--json` shows the fields it sees).
#[derive(Args, Debug, Default)]
pub(crate) struct BriefArgs {
    /// How many further-back periods to show [default: 8]
    #[arg(long, value_name = "N", env = "PEAT_BRIEF_BUDGET")]
    pub(crate) periods: Option<usize>,
}

pub(crate) fn run(ctx: &Ctx, args: &BriefArgs) -> Result<u8, CliError> {
    let budget = match args.periods {
        Some(n) => n,
        // Bare `peat` does not go through clap's env handling.
        None => match &ctx.brief_budget {
            Some(s) => s.trim().parse().map_err(|_| {
                CliError::user(format!(
                    "PEAT_BRIEF_BUDGET is not a number of periods: {s:?}"
                ))
                .hint("Set it to a count like 8, or unset it.")
            })?,
            None => DEFAULT_BUDGET,
        },
    };
    let (brief, behind) = assemble_behind(ctx, budget)?;
    // Nothing recorded here yet is nothing found, as for every read.
    let code = if brief.events == 0 { 1 } else { 0 };
    if ctx.json {
        let mut out = std::io::stdout().lock();
        let answer = crate::cli::shared::Behind {
            answer: &brief,
            behind,
        };
        serde_json::to_writer(&mut out, &answer).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(code);
    }
    let text = render::source(&ctx.location.desk)
        .and_then(|(src, origin)| render::render(&brief, &src, origin.as_deref(), ctx.ui))
        .map_err(|e| {
            CliError::user(format!("template error in {}: {}", e.origin, e.detail)).hint(
                "Fix the template, or move it aside to use the built-in brief; `peat brief --json` shows the fields it can use.",
            )
        })?;
    let mut out = ctx.ui.out();
    out.write_all(text.as_bytes())?;
    out.finish()?;
    Ok(code)
}

/// The brief of this desk's record; an empty one when nothing was ever captured.
pub(crate) fn assemble(ctx: &Ctx, budget: usize) -> Result<Brief, CliError> {
    assemble_behind(ctx, budget).map(|(brief, _)| brief)
}

/// [`assemble`], with how many recorded changes the views it read do not show yet.
fn assemble_behind(ctx: &Ctx, budget: usize) -> Result<(Brief, u64), CliError> {
    ctx.somewhere()?;
    if !crate::ledger::recorded(&ctx.location.store) {
        let empty = Brief {
            today: brief::local_date(ctx.now_ms, &ctx.tz).to_string(),
            ..Brief::default()
        };
        return Ok((empty, 0));
    }
    let (ledger, views, _model) = ctx.read_views()?;
    let root = ctx.location.root.clone().unwrap_or_else(|| ctx.cwd.clone());
    let only = crate::cli::shared::in_scope(ctx, &views)?;
    let here = Here {
        now_ms: ctx.now_ms,
        tz: &ctx.tz,
        root: &root,
        cwd: &ctx.cwd,
        budget,
        only: only.as_ref(),
    };
    let brief = brief::assemble(&views, &here)?;
    let behind = views.behind();
    drop(views);
    drop(ledger);
    Ok((brief, behind))
}
