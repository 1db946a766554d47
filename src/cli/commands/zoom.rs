use clap::Args;
use std::io::Write;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::listing::{ListArgs, more_line};
use crate::cli::ui::clip;
use crate::reads::brief::zoom::{self, Zoom};
use crate::reads::ladder::knum;
use crate::vocab::window::{self, Window};

/// Read a window of time: its counts, its parts, and what was said in it
///
/// A day (2026-08-14), an ISO week (w33, 2026-w33), a month (2026-07), a quarter (q3,
/// 2026-q3), a year (2026), or a range between two of them (2026-05-29..2026-08-02). Prints
/// the window's counts, its parts one rung finer (a day lists its sessions), the newest
/// closing messages and compaction summaries in it, and its observations; each line ends in
/// the command that reads it. Without a window: today. A day can also be named as
/// yesterday, 3d (three days ago), monday. Bare `peat WINDOW` does the same. `--since` keeps
/// the sessions, messages and observations since then; `--limit N` the newest N of each, and
/// the N files touched most (every one the window shows by default); `--full` prints their
/// texts whole.
#[derive(Args, Debug)]
pub(crate) struct ZoomArgs {
    /// The window: w33, 2026-w33, 2026-07, 2026-08-14, q3, 2026, a..b, or a day named
    /// as today, yesterday, 3d, monday
    #[arg(value_name = "WINDOW", default_value = "today")]
    pub(crate) window: String,
    /// Print the `== window ==` title (bare `peat WINDOW` prints its own).
    #[arg(skip = true)]
    pub(crate) titled: bool,
    #[command(flatten)]
    pub(crate) list: ListArgs,
}

pub(crate) fn run(ctx: &Ctx, args: &ZoomArgs) -> Result<u8, CliError> {
    let today = crate::reads::brief::local_date(ctx.now_ms, &ctx.tz);
    let w = match window::parse(&args.window, today) {
        Some(w) => w,
        None => match crate::vocab::time::parse_day(&args.window, today) {
            Ok(d) => window::day(d),
            Err(_) => {
                let why = window::invalid_date(&args.window)
                    .unwrap_or_else(|| format!("not a window: {:?}", args.window));
                return Err(CliError::user(format!("{why} ({})", window::WANT)).hint(
                    "`peat` shows the recent days and further-back periods, each with the window that reads it.",
                ));
            }
        },
    };
    show(ctx, &w, args.titled, &args.list)
}

/// Print the zoom of `w` (what bare `peat WINDOW` runs), with its title or under another's,
/// its lists bounded by `list`.
pub(crate) fn show(ctx: &Ctx, w: &Window, titled: bool, list: &ListArgs) -> Result<u8, CliError> {
    let since = list.since_ms(ctx.now_ms, &ctx.tz)?;
    let (ledger, views, _model) = ctx.read_views()?;
    let only = crate::cli::shared::in_scope(ctx, &views)?;
    let mut z = zoom::assemble(&views, w, ctx.now_ms, &ctx.tz, &ctx.cwd, only.as_ref())?;
    let left = bound(&mut z, since, list.limit_or(None));
    let behind = views.behind();
    drop(views);
    drop(ledger);
    if ctx.json {
        let mut out = std::io::stdout().lock();
        let answer = crate::cli::shared::Behind { answer: &z, behind };
        serde_json::to_writer(&mut out, &answer).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(0);
    }
    let mut out = ctx.ui.pager();
    print(ctx, &z, (titled, list.full), &mut out)?;
    if let Some(more) = more_line(ctx, left, "item", "") {
        writeln!(out, "\n{more}")?;
    }
    out.finish()?;
    Ok(0)
}

/// Keep the sessions, messages and observations of `z` active since `since`, and of each (and
/// of the files touched most) the first `limit` (the newest; the most touched); returns how
/// many the limit left out.
fn bound(z: &mut Zoom, since: Option<i64>, limit: Option<usize>) -> usize {
    if let Some(t) = since {
        z.sessions
            .retain(|s| s.end_ms.or(s.start_ms).is_some_and(|end| end >= t));
        z.texts.retain(|x| x.ts_ms >= t);
        z.observations.retain(|o| o.ts_ms >= t);
    }
    let Some(n) = limit else {
        return 0;
    };
    let left = z.sessions.len().saturating_sub(n)
        + z.files.len().saturating_sub(n)
        + z.texts.len().saturating_sub(n)
        + z.observations.len().saturating_sub(n);
    // Sessions are listed earliest first: the newest are the last.
    let from = z.sessions.len().saturating_sub(n);
    z.sessions.drain(..from);
    z.files.truncate(n);
    z.texts.truncate(n);
    z.observations.truncate(n);
    left
}

/// `812 tools (3 fail) · 2 commits · 3 sessions · 1 obs`, leaving out what is zero.
fn counts(ctx: &Ctx, t: &crate::reads::ladder::Tally, sessions: bool) -> String {
    let plural = crate::reads::ladder::knoun;
    let mut s = plural(t.tools, "tool");
    if t.fails > 0 {
        s.push_str(&format!(
            " ({})",
            ctx.ui.warning(&format!("{} fail", knum(t.fails)))
        ));
    }
    if t.commits > 0 {
        s.push_str(&format!(" · {}", plural(t.commits, "commit")));
    }
    if sessions && t.sessions > 0 {
        s.push_str(&format!(" · {}", plural(t.sessions as i64, "session")));
    }
    if t.obs > 0 {
        s.push_str(&format!(" · {} obs", t.obs));
    }
    s
}

/// A compaction summary without the harness's preamble ("This session is being continued
/// from a previous conversation…"), so a clipped line shows the summary itself.
fn gist(text: &str) -> &str {
    const PREAMBLE: &str = "This session is being continued from a previous conversation";
    match text.find("Summary:") {
        Some(i) if text.trim_start().starts_with(PREAMBLE) => &text[i + "Summary:".len()..],
        _ => text,
    }
}

/// Print `z`, with its title when `titled`, its texts whole when `full`.
fn print(
    ctx: &Ctx,
    z: &Zoom,
    (titled, full): (bool, bool),
    out: &mut impl Write,
) -> Result<(), CliError> {
    let ui = &ctx.ui;
    let clip = |text: &str, n: usize| clip(text, if full { usize::MAX } else { n });
    let mut head = format!("== {}", z.window.label);
    if let Some(span) = &z.window.span {
        head.push_str(&format!(" · {span}"));
    }
    head.push_str(" ==");
    let counts_line = counts(ctx, &z.totals, true);
    match titled {
        true => writeln!(out, "{} {counts_line}", ui.bold(&head))?,
        // Under `== window KEY ==`: the label, since the key alone does not say the days.
        false => writeln!(out, "{} · {counts_line}", z.window.label)?,
    }
    if z.totals.events == 0 {
        writeln!(
            out,
            "\nnothing recorded in this window  {}",
            ui.dim("▸ peat")
        )?;
        return Ok(());
    }
    if !z.children.is_empty() {
        writeln!(out, "\nwithin:")?;
        for c in &z.children {
            let mut line = format!("  [{}] {}", c.label, counts(ctx, &c.tally, true));
            if !c.tally.files.is_empty() {
                line.push_str(&format!(" · {}", ui.safe(&c.tally.files.join(", "))));
            }
            writeln!(out, "{line}  {}", ui.dim(&c.handle))?;
        }
    }
    if !z.sessions.is_empty() {
        writeln!(out, "\nsessions:")?;
        for s in &z.sessions {
            let mut line = format!(
                "  [{}] {}–{} {}",
                ui.accent(&s.short),
                s.from,
                s.to,
                ui.safe(&s.place)
            );
            if let Some(a) = s.agent {
                line.push_str(&format!(" · {a}"));
            }
            if let Some(b) = &s.branch {
                line.push_str(&format!(" · {}", ui.safe(b)));
            }
            line.push_str(&format!(
                " · {}",
                crate::reads::ladder::knoun(s.tools, "tool")
            ));
            if s.commits > 0 {
                let n = s.commits;
                line.push_str(&format!(
                    " · {}",
                    crate::reads::ladder::noun(n as i64, "commit")
                ));
            }
            writeln!(out, "{line}  {}", ui.dim(&s.handle))?;
        }
    }
    if !z.files.is_empty() {
        writeln!(out, "\nfiles touched most:")?;
        for f in &z.files {
            let by = match f.sessions.is_empty() {
                true => String::new(),
                false => format!(" — {}", f.sessions.join(", ")),
            };
            writeln!(
                out,
                "  {} ({}){by}  {}",
                ui.safe(&f.short),
                crate::reads::ladder::knoun(f.touches, "edit"),
                ui.dim(&ui.safe(&f.handle))
            )?;
        }
    }
    if !z.texts.is_empty() {
        writeln!(out, "\nclosing messages:")?;
        for t in &z.texts {
            writeln!(
                out,
                "  {} {}  {}",
                ui.dim(&format!("[{} · {} · {}]", t.kind, t.age, ui.safe(&t.place))),
                ui.preview(&clip(gist(&t.text), 180)),
                ui.dim(&t.handle)
            )?;
        }
    }
    if !z.observations.is_empty() {
        writeln!(out, "\nobservations:")?;
        for o in &z.observations {
            let cited = if o.cited { " · cited" } else { " · uncited" };
            writeln!(
                out,
                "  [{} · {}{cited}] {}  {}",
                ui.accent(&ui.safe(&o.subject)),
                o.age,
                ui.preview(&clip(&o.text, 160)),
                ui.dim(&o.handle)
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::gist;

    #[test]
    fn a_summary_is_shown_without_the_harness_preamble() {
        let t = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary:\n1. Primary Request";
        assert_eq!(gist(t).trim_start(), "1. Primary Request");
        assert_eq!(gist("Summary: plain"), "Summary: plain");
    }
}
