use clap::Args;
use std::io::Write;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::ui::clip;
use crate::reads::ladder::noun;
use crate::views::handle::Handles;

/// List the sessions in the ledger, newest first
///
/// Each line: id, when it ran, where, how much work, what the person first asked, and the
/// command that reads the whole session.
#[derive(Args, Debug)]
pub(crate) struct SessionsArgs {}

pub(crate) fn run(ctx: &Ctx, _args: &SessionsArgs) -> Result<u8, CliError> {
    let (ledger, views, _model) = ctx.read_views()?;
    let all = views.summaries()?;
    drop(views);
    drop(ledger);
    if ctx.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, &all).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(0);
    }
    // Every recorded session is listed: their handles come from the list.
    let handles = Handles::listed(all.iter().map(|s| &s.session));
    let mut out = ctx.ui.pager();
    for s in &all {
        let r = &s.rollup;
        let when = r.start_ms.map_or_else(
            || "?".to_string(),
            |t| crate::vocab::time::local_minute(t, &ctx.tz),
        );
        let agent = r.agent.map_or("?", |a| a.label());
        let mut work = noun(r.tools, "tool");
        if r.failed_tools > 0 {
            work.push_str(&format!(" ({} failed)", r.failed_tools));
        }
        if !r.files.is_empty() {
            work.push_str(&format!(" · {}", noun(r.files.len() as i64, "file")));
        }
        if !r.commits.is_empty() {
            work.push_str(&format!(" · {}", noun(r.commits.len() as i64, "commit")));
        }
        let asked = s
            .first_prompt
            .as_ref()
            .map(|p| clip(&p.text, 70))
            .unwrap_or_default();
        writeln!(
            out,
            "{} {} {} {} · {work}  {}  {}",
            ctx.ui.accent(&handles.of(&s.session)),
            ctx.ui.dim(&when),
            agent,
            ctx.ui.safe(&r.place()),
            ctx.ui.safe(&asked),
            ctx.ui
                .dim(&format!("▸ peat show {}", handles.of(&s.session)))
        )?;
    }
    out.finish()?;
    ctx.ui
        .note(&format!("({})", noun(all.len() as i64, "session")));
    Ok(0)
}
