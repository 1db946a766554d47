use clap::Args;
use serde::Serialize;
use std::io::Write;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::listing::{ListArgs, more_line, sized_json};
use crate::cli::shared::made_line;
use crate::cli::ui::clip;
use crate::reads::commits::{MadeCommit, made_by, same_commit};
use crate::reads::ladder::noun;
use crate::reads::log::{Entry, Placed, SessionLog, session_log};
use crate::views::handle::Handles;
use crate::views::steps::Step;

/// Show what a session did, in order
///
/// Each prompt, the tool calls it led to (files touched with the lines each change added and
/// removed, commands run, failures), the commits made and the closing messages, each line
/// ending in the command that shows that step whole. Subagent sessions are nested under the
/// call that started them (the harness's compaction agent at its compaction). A run of more
/// than 4 tool steps in a row is one line with their count and the command that shows them;
/// `--full` shows every step, and texts whole. `--limit` and `--since` bound the steps (no
/// limit by default); `--json` steps carry previews of long texts (`cut`, `chars`).
#[derive(Args, Debug)]
pub(crate) struct LogArgs {
    /// A session id or a unique prefix of one
    #[arg(value_name = "SESSION")]
    pub(crate) session: String,
    #[command(flatten)]
    pub(crate) list: ListArgs,
}

/// A run of tool steps longer than this is folded into one line.
const RUN_SHOWN: usize = 4;

/// A log with the commits made in its session.
#[derive(Serialize)]
struct Logged<'a> {
    #[serde(flatten)]
    log: &'a SessionLog,
    /// The commits made in the session, each with the route that tied it (as `peat COMMIT`
    /// answers for it), oldest first.
    made_commits: &'a [MadeCommit],
}

pub(crate) fn run(ctx: &Ctx, args: &LogArgs) -> Result<u8, CliError> {
    let since = args.list.since_ms(ctx.now_ms, &ctx.tz)?;
    let (ledger, views, _model) = ctx.read_views()?;
    let session = crate::cli::shared::resolve_in_views(ctx, &views, &args.session)?;
    let mut log = session_log(&views, &session)?;
    // The commits its steps record, before `--since` or `--limit` leave any out.
    let stepped: Vec<String> = log
        .entries
        .iter()
        .filter_map(|e| match &e.step {
            Step::Commit { hash, .. } => Some(hash.clone()),
            _ => None,
        })
        .collect();
    log.entries.retain(|e| since.is_none_or(|t| e.ts_ms >= t));
    let total = log.entries.len();
    if let Some(n) = args.list.limit_or(None) {
        log.entries.truncate(n);
    }
    let made = made_by(&views, std::slice::from_ref(&session), Some(&ctx.cwd))?;
    let behind = views.behind();
    // Printed once the views close.
    let handles = Handles::new(&views.tables).keep([&log.session]);
    drop(views);
    drop(ledger);
    let made_commits = made.of(&session);
    if ctx.json {
        let mut out = std::io::stdout().lock();
        let answer = crate::cli::shared::Behind {
            answer: &Logged {
                log: &log,
                made_commits,
            },
            behind,
        };
        let sized = sized_json(ctx, &answer, Some("entries"), args.list.full, "steps")
            .map_err(std::io::Error::from)?;
        serde_json::to_writer(&mut out, &sized).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(0);
    }
    let mut out = ctx.ui.pager();
    print_log(ctx, &mut out, &log, &handles, (0, args.list.full))?;
    if let Some(more) = more_line(ctx, total - log.entries.len(), "step", "") {
        writeln!(out, "{more}")?;
    }
    // The commits its steps do not show: its own commands did not record them (tied by a
    // trailer, the workspace or their lines).
    let unstepped: Vec<&MadeCommit> = made_commits
        .iter()
        .filter(|c| !stepped.iter().any(|h| same_commit(h, &c.hash)))
        .collect();
    if !unstepped.is_empty() {
        writeln!(out, "\ncommits made in it that it did not run itself:")?;
        for c in unstepped {
            let when = c.ts_ms.map_or_else(
                || "?".to_string(),
                |t| crate::vocab::time::local_minute(t, &ctx.tz),
            );
            writeln!(out, "{} {}", ctx.ui.dim(&when), made_line(ctx, c))?;
        }
    }
    out.finish()?;
    Ok(0)
}

/// Print `log` at `depth` (subagents nest), its texts whole and no run folded when `full`.
fn print_log(
    ctx: &Ctx,
    out: &mut impl Write,
    log: &SessionLog,
    handles: &Handles,
    (depth, full): (usize, bool),
) -> Result<(), CliError> {
    let ui = &ctx.ui;
    let indent = "    ".repeat(depth);
    let r = &log.rollup;
    let mut head = format!("== log {}", handles.of(&log.session));
    if let Some(a) = r.agent {
        head.push_str(&format!(" · {}", a.label()));
    }
    head.push_str(&format!(" · {}", r.place()));
    if let Some(b) = &r.branch {
        head.push_str(&format!(" · {b}"));
    }
    head.push_str(&format!(
        " · {} · {}",
        noun(r.prompts, "prompt"),
        noun(r.tools, "tool call")
    ));
    if r.failed_tools > 0 {
        head.push_str(&format!(" ({} failed)", r.failed_tools));
    }
    head.push_str(&format!(" · {}", noun(r.files.len() as i64, "file")));
    let models = edit_models(&log.entries);
    if !models.is_empty() {
        head.push_str(&format!(" · edits by {}", models.join(", ")));
    }
    let several_models = models.len() > 1;
    if log.placed == Some(Placed::Time) {
        // Recorded before calls named the agent they started: where it sits is a guess.
        head.push_str(" · placed by time: no recorded call names it");
    }
    head.push_str(" ==");
    writeln!(out, "{indent}{}", ui.bold(&ui.safe(&head)))?;
    let short = handles.of(&log.session);
    let mut at = 0;
    while at < log.entries.len() {
        let run = log.entries[at..]
            .iter()
            .take_while(|e| is_tool_step(e))
            .count();
        if !full && run > RUN_SHOWN {
            print_run(ctx, out, &log.entries, at..at + run, &short, &indent)?;
            at += run;
            continue;
        }
        let e = &log.entries[at];
        print_entry(ctx, out, e, &short, (&indent, full, several_models))?;
        for sub in &e.subagents {
            print_log(ctx, out, sub, handles, (depth + 1, full))?;
        }
        at += 1;
    }
    for sub in &log.unplaced_subagents {
        print_log(ctx, out, sub, handles, (depth + 1, full))?;
    }
    Ok(())
}

/// A step a run of tool work folds: a call or the edit it made, that started no subagent
/// (whose nested log the fold would hide).
fn is_tool_step(e: &Entry) -> bool {
    matches!(e.step, Step::Tool { .. } | Step::Edit { .. }) && e.subagents.is_empty()
}

/// One line for the tool steps `run` of `entries`: how many calls of which tools, how many
/// failed, how many edits, and the command that shows exactly those steps (from the first
/// one's instant, as many as reach the last).
fn print_run(
    ctx: &Ctx,
    out: &mut impl Write,
    entries: &[Entry],
    run: std::ops::Range<usize>,
    short: &str,
    indent: &str,
) -> Result<(), CliError> {
    let steps = &entries[run.clone()];
    let mut tools: Vec<(&str, usize)> = Vec::new();
    let (mut failed, mut edits) = (0, 0);
    for e in steps {
        match &e.step {
            Step::Tool { tool, ok, .. } => {
                failed += usize::from(!ok);
                match tools.iter_mut().find(|(t, _)| t == tool) {
                    Some((_, n)) => *n += 1,
                    None => tools.push((tool, 1)),
                }
            }
            _ => edits += 1,
        }
    }
    let calls: usize = tools.iter().map(|(_, n)| n).sum();
    let mut said = format!(
        "{}: {}",
        noun(calls as i64, "tool call"),
        tools
            .iter()
            .map(|(t, n)| if *n == 1 {
                t.to_string()
            } else {
                format!("{t} ×{n}")
            })
            .collect::<Vec<_>>()
            .join(", ")
    );
    if failed > 0 {
        said.push_str(&format!(" ({failed} failed)"));
    }
    if edits > 0 {
        said.push_str(&format!(" · {}", noun(edits, "edit")));
    }
    let first = &steps[0];
    // `--since` keeps every step from that instant: those before the run at the same
    // instant come first, so the limit counts them too.
    let before = entries[..run.start]
        .iter()
        .filter(|e| e.ts_ms >= first.ts_ms)
        .count();
    let when = crate::vocab::time::local_minute(first.ts_ms, &ctx.tz);
    let time = when.rsplit(' ').next().unwrap_or(&when).to_string();
    writeln!(
        out,
        "{indent}{}   … {}  {}",
        ctx.ui.dim(&time),
        ctx.ui.preview(&said),
        ctx.ui.dim(&format!(
            "▸ peat log {short} --full --since {} --limit {}",
            crate::vocab::time::format_iso_ms(first.ts_ms),
            before + steps.len()
        ))
    )?;
    Ok(())
}

/// The models the entries' edits name, in the order they were first used.
fn edit_models(entries: &[Entry]) -> Vec<&str> {
    let mut models: Vec<&str> = Vec::new();
    for e in entries {
        if let Step::Edit { model: Some(m), .. } = &e.step
            && !models.contains(&m.as_str())
        {
            models.push(m);
        }
    }
    models
}

fn print_entry(
    ctx: &Ctx,
    out: &mut impl Write,
    e: &Entry,
    short: &str,
    (indent, full, several_models): (&str, bool, bool),
) -> Result<(), CliError> {
    let ui = &ctx.ui;
    // A preview's length, or the whole text when `full`.
    let clip = |text: &str, n: usize| clip(text, if full { usize::MAX } else { n });
    let when = crate::vocab::time::local_minute(e.ts_ms, &ctx.tz);
    let time = when.rsplit(' ').next().unwrap_or(&when).to_string();
    // What a step says, in two parts: what names it (a path, a hash), which stays whole, and
    // its prose, which a terminal may shorten.
    let (mark, name, prose) = match &e.step {
        Step::Prompt { text, harness } => (
            if *harness { "·" } else { "❯" },
            String::new(),
            clip(&text.replace('\n', " "), 120),
        ),
        Step::Tool {
            tool, detail, ok, ..
        } => (
            if *ok { "  $" } else { "  ✗" },
            String::new(),
            clip(&format!("{tool} {}", detail.replace('\n', " ")), 110),
        ),
        Step::Edit {
            path,
            op,
            failed,
            size,
            model,
        } => {
            let op = crate::vocab::event::serde_plain(op);
            let failed = if *failed { " (failed)" } else { "" };
            // The head names the session's one model; with several, each edit names its own.
            let model = match model {
                Some(m) if several_models => format!(" · {m}"),
                _ => String::new(),
            };
            (
                "  ✎",
                format!(
                    "{} {op} +{} −{}{failed}{model}",
                    crate::cli::shared::short_path(ctx, path),
                    size.added,
                    size.removed
                ),
                String::new(),
            )
        }
        Step::Commit { hash, message, .. } => (
            "  ●",
            format!("commit {} ", hash.chars().take(10).collect::<String>()),
            clip(message.lines().next().unwrap_or(""), 100),
        ),
        Step::Closing { text } => ("◂", String::new(), clip(&text.replace('\n', " "), 160)),
        Step::Compaction => ("  ~", "context compacted".to_string(), String::new()),
        Step::Obs { subject, text } => (
            "  ◆",
            String::new(),
            clip(&format!("{subject}: {text}"), 120),
        ),
    };
    writeln!(
        out,
        "{indent}{} {mark} {}{}  {}",
        ui.dim(&time),
        ui.safe(&name),
        ui.preview(&prose),
        ui.dim(&format!("▸ peat show {short} {}", e.seq))
    )?;
    Ok(())
}
