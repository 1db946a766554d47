use clap::Args;
use serde::Serialize;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::listing::{ListArgs, more_line_with};
use crate::cli::ui::clip;
use crate::reads::files::{FileEdit, Prompt, Prompts, Wanted, edits_of, recorded_history};
use crate::views::Views;
use crate::views::handle::Handles;
use crate::vocab::event::{SessionId, TouchOp};

/// How many edits the reading lists unless told.
const SHOWN: usize = 20;

/// List the recorded edits of a file or directory, present here or not
///
/// Newest first, each with its session, age, what it did, the prompt that led to it and the
/// command that shows it. A path is found by its exact recording and by its path relative to
/// the root of each recorded session (edits made in another checkout, or to a file deleted
/// since), directories included, and under the names git or jj say it had before a rename.
/// `peat PATH` is the same when PATH looks like a path; `peat blame FILE` says which edit
/// wrote each line. The newest 20 edits (`--limit 0`: every one).
#[derive(Args, Debug)]
pub(crate) struct FileArgs {
    /// The file or directory (it need not exist here)
    #[arg(value_name = "PATH")]
    pub(crate) path: String,
    #[command(flatten)]
    pub(crate) list: ListArgs,
}

/// One recorded edit, as the listing shows it.
#[derive(Serialize)]
struct Listed {
    #[serde(flatten)]
    edit: FileEdit,
    age: String,
    prompt: Option<Prompt>,
    show: String,
}

pub(crate) fn run(ctx: &Ctx, args: &FileArgs) -> Result<u8, CliError> {
    let since = args.list.since_ms(ctx.now_ms, &ctx.tz)?;
    let (ledger, views, _model) = ctx.read_views()?;
    let wanted = crate::cli::shared::wanted(ctx, &args.path);
    let paths = recorded_history(&views, &wanted)?;
    let mut edits = edits_of(&views, &paths)?;
    let only = crate::cli::shared::in_scope(ctx, &views)?;
    edits.retain(|e| {
        crate::views::session::admitted(only.as_ref(), &e.session)
            && since.is_none_or(|t| e.ts_ms >= t)
    });
    drop(ledger);
    if edits.is_empty() {
        if ctx.json {
            writeln!(
                std::io::stdout(),
                "{}",
                serde_json::json!({ "touches": [], "behind": views.behind() })
            )?;
        }
        ctx.ui
            .note(&format!("peat: no recorded edit touched {}", args.path));
        return Ok(1);
    }
    edits.reverse();
    print(ctx, &views, (&args.path, &args.list), &wanted, edits)
}

/// Print `edits` (newest first) of the path typed as `shown`, as many as `list` keeps.
fn print(
    ctx: &Ctx,
    views: &Views,
    (shown, list): (&str, &ListArgs),
    wanted: &Wanted,
    edits: Vec<FileEdit>,
) -> Result<u8, CliError> {
    let handles = Handles::new(&views.tables);
    let mut prompts = Prompts::default();
    let all = edits.len();
    let sessions = edits
        .iter()
        .map(|e| &e.session)
        .collect::<BTreeSet<&SessionId>>()
        .len();
    let kept = list.limit_or(Some(SHOWN)).unwrap_or(all);
    let mut listed = Vec::with_capacity(kept.min(all));
    for e in edits.into_iter().take(kept) {
        listed.push(Listed {
            age: crate::vocab::time::age(ctx.now_ms, e.ts_ms, &ctx.tz),
            prompt: prompts.answered_by(views, &e.session, e.seq)?,
            show: format!("peat show {} {}", handles.of(&e.session), e.seq),
            edit: e,
        });
    }
    if ctx.json {
        let mut out = std::io::stdout().lock();
        let doc = serde_json::json!({ "touches": listed, "behind": views.behind() });
        let sized = crate::cli::listing::sized_json(ctx, &doc, Some("touches"), list.full, "edits")
            .map_err(std::io::Error::from)?;
        serde_json::to_writer(&mut out, &sized).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(0);
    }
    let ui = &ctx.ui;
    let mut out = ui.out();
    for l in &listed {
        let e = &l.edit;
        let mut tag = format!("{} · {}", handles.of(&e.session), l.age);
        if let Some(model) = &e.model {
            tag.push_str(&format!(" · {model}"));
        }
        if e.failed {
            tag.push_str(" · failed");
        }
        let mut what = op_label(e.op);
        if e.path != wanted.abs {
            what.push(' ');
            what.push_str(&crate::cli::shared::short_path(ctx, &e.path));
        }
        let prompt = l.prompt.as_ref().map_or(String::new(), |p| {
            let text = clip(&p.text, if list.full { usize::MAX } else { 60 });
            format!("  \"{}\"", ui.preview(&text))
        });
        writeln!(
            out,
            "  {} {}{prompt}  {}",
            ui.dim(&ui.safe(&format!("[{tag}]"))),
            ui.safe(&what),
            ui.dim(&format!("▸ {}", l.show))
        )?;
    }
    let aside = format!(" ({sessions} sessions in all)");
    // Spelled as `peat file`: bare `peat PATH` takes no `--limit`.
    let rest = crate::cli::budget::rerun(
        &["peat".into(), "file".into(), shown.to_string()],
        "--limit",
        Some("0"),
    );
    if let Some(more) = more_line_with(ctx, all - listed.len(), ("edit", &aside), &rest) {
        writeln!(out, "  {more}")?;
    }
    if Path::new(&wanted.abs).is_file() {
        writeln!(
            out,
            "  {}",
            ui.dim(&format!(
                "▸ peat blame {shown}   (which edit wrote each line)"
            ))
        )?;
    }
    out.finish()?;
    Ok(0)
}

fn op_label(op: TouchOp) -> String {
    crate::vocab::event::serde_plain(&op).replace('_', "-")
}
