use clap::Args;
use serde::Serialize;
use std::io::Write;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::listing::{ListArgs, more_line, sized_json};
use crate::cli::ui::clip;
use crate::reads::commits::{MadeCommit, made_by};
use crate::reads::ladder::noun;
use crate::views::handle::Handles;
use crate::views::session::SessionSummary;
use crate::vocab::event::SessionId;

/// List the sessions in the ledger, newest first
///
/// Each line: id, when it ran, where, how much work, what the person first asked, and the
/// command that reads the whole session. The newest 20 (`--limit 0`: every one); `--since`
/// keeps those active since then. `--json` entries carry previews of the first prompt and
/// closing message (a cut one marked `cut`, with its whole length in `chars`), whole with
/// `--full`.
#[derive(Args, Debug)]
pub(crate) struct SessionsArgs {
    #[command(flatten)]
    pub(crate) list: ListArgs,
}

/// How many sessions the list shows unless told.
const DEFAULT_LIMIT: usize = 20;

/// A session as `--json` lists it: its summary, and the commits made in it.
#[derive(Serialize)]
struct Listed<'a> {
    #[serde(flatten)]
    summary: &'a SessionSummary,
    /// Each with the route that tied it, as `peat COMMIT` answers for it.
    made_commits: &'a [MadeCommit],
}

pub(crate) fn run(ctx: &Ctx, args: &SessionsArgs) -> Result<u8, CliError> {
    let since = args.list.since_ms(ctx.now_ms, &ctx.tz)?;
    let (ledger, views, _model) = ctx.read_views()?;
    let only = crate::cli::shared::in_scope(ctx, &views)?;
    let mut all = views.summaries()?;
    all.retain(|s| {
        crate::views::session::admitted(only.as_ref(), &s.session)
            && since.is_none_or(|t| s.rollup.end_ms.or(s.rollup.start_ms) >= Some(t))
    });
    let total = all.len();
    if let Some(n) = args.list.limit_or(Some(DEFAULT_LIMIT)) {
        all.truncate(n);
    }
    let ids: Vec<SessionId> = all.iter().map(|s| s.session.clone()).collect();
    let made = made_by(&views, &ids, Some(&ctx.cwd))?;
    drop(views);
    drop(ledger);
    if ctx.json {
        let listed: Vec<Listed> = all
            .iter()
            .map(|s| Listed {
                summary: s,
                made_commits: made.of(&s.session),
            })
            .collect();
        let sized = sized_json(ctx, &listed, None, args.list.full, "sessions")
            .map_err(std::io::Error::from)?;
        if total > all.len() {
            ctx.ui.note(&format!(
                "({} of {total} sessions; `{}` lists every one)",
                all.len(),
                ctx.rerun("--limit", Some("0"))
            ));
        }
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, &sized).map_err(std::io::Error::from)?;
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
        let commits = made.of(&s.session).len();
        if commits > 0 {
            work.push_str(&format!(" · {}", noun(commits as i64, "commit")));
        }
        let asked = s
            .first_prompt
            .as_ref()
            .map(|p| clip(&p.text, if args.list.full { usize::MAX } else { 70 }))
            .unwrap_or_default();
        writeln!(
            out,
            "{} {} {} {} · {work}  {}  {}",
            ctx.ui.accent(&handles.of(&s.session)),
            ctx.ui.dim(&when),
            agent,
            ctx.ui.safe(&r.place()),
            ctx.ui.preview(&asked),
            ctx.ui
                .dim(&format!("▸ peat show {}", handles.of(&s.session)))
        )?;
    }
    if let Some(more) = more_line(ctx, total - all.len(), "session", "") {
        writeln!(out, "{more}")?;
    }
    out.finish()?;
    ctx.ui.note(&format!("({})", noun(total as i64, "session")));
    if let Some(lift) = ctx.scope.lift_hint() {
        ctx.ui.note(&format!("peat: this list shows {lift}"));
    }
    Ok(0)
}
