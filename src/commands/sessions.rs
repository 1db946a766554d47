use clap::Args;
use std::io::Write;

use crate::cli::Ctx;
use crate::error::CliError;
use crate::ledger::Mode;
use crate::session::summarize_all;
use crate::ui::clip;

/// List the sessions in the ledger, newest first
///
/// Each line: id, when it ran, where, how much work, what the person first asked, and the
/// command that reads the whole session.
#[derive(Args, Debug)]
pub struct SessionsArgs {}

pub fn run(ctx: &Ctx, _args: &SessionsArgs) -> Result<u8, CliError> {
    let ledger = ctx.open(Mode::Existing)?;
    let all = summarize_all(&ledger)?;
    drop(ledger);
    if ctx.json {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, &all).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(0);
    }
    let mut out = ctx.ui.pager();
    for s in &all {
        let when = s
            .start_ms
            .map_or_else(|| "?".to_string(), crate::time::local_minute);
        let agent = s.agent.map_or("?", |a| a.label());
        let mut work = format!("{} tools", s.tools);
        if s.failed_tools > 0 {
            work.push_str(&format!(" ({} failed)", s.failed_tools));
        }
        if !s.files.is_empty() {
            work.push_str(&format!(" · {} files", s.files.len()));
        }
        if !s.commits.is_empty() {
            work.push_str(&format!(" · {} commits", s.commits.len()));
        }
        let asked = s
            .first_prompt
            .as_ref()
            .map(|p| clip(&p.text, 70))
            .unwrap_or_default();
        writeln!(
            out,
            "{} {} {} {} · {work}  {}  {}",
            ctx.ui.accent(s.session.short()),
            ctx.ui.dim(&when),
            agent,
            ctx.ui.safe(&s.place()),
            ctx.ui.safe(&asked),
            ctx.ui.dim(&format!("▸ peat show {}", s.session.short()))
        )?;
    }
    out.finish()?;
    ctx.ui.note(&format!("({} sessions)", all.len()));
    Ok(0)
}
