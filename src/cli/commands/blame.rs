use clap::Args;
use serde::Serialize;
use std::collections::BTreeSet;
use std::io::Write;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::ui::clip;
use crate::reads::blame::{Blame, LineOrigin, blame, blame_at};
use crate::reads::files::{
    FileEdit, Prompt, Prompts, Wanted, applied_changes, edits_of, recorded_paths,
    under_earlier_names,
};
use crate::reads::ladder::noun;
use crate::views::handle::Handles;
use crate::views::source::EventSource;
use crate::vocab::change::Change;
use crate::vocab::event::{EventId, Seq, SessionId};

/// Show which session and prompt last wrote each line of a file
///
/// Every line of the file as it is now (committed or not), with the recorded edit that last
/// wrote it: the session, the moment, the prompt the edit answered, and the command that shows
/// the edit. Lines no recorded edit explains are marked so (a person's edit, or code from
/// before the record); they are never guessed. The recorded edits are placed on the file
/// from its current text backwards; `--at` shows the file as it stood at a past moment.
/// Edits recorded under the file's earlier names count too, for every rename git or jj
/// knows (committed, or staged in git's index).
/// `peat FILE:LINE` is the same for one line.
#[derive(Args, Debug)]
pub(crate) struct BlameArgs {
    /// The file (it may no longer exist with --at)
    #[arg(value_name = "FILE")]
    pub(crate) file: String,
    /// Only lines A to B (1-based, inclusive): `-L 10,20`, or `-L 42` for one line
    #[arg(short = 'L', value_name = "A,B")]
    pub(crate) lines: Option<String>,
    /// The file as it stood at a past moment: a day (YYYY-MM-DD: its end), an instant
    /// (2026-08-10T19:18:11Z), a session (after its last event) or SESSION:SEQ (just after
    /// that event)
    #[arg(long, value_name = "WHEN")]
    pub(crate) at: Option<String>,
}

/// One attributed line, for `--json`.
#[derive(Serialize)]
struct JsonLine<'a> {
    line: usize,
    text: &'a str,
    /// Index into `edits`; null: no recorded edit explains the line.
    edit: Option<usize>,
}

/// One recorded edit of the file, for `--json`.
#[derive(Serialize)]
struct JsonEdit {
    #[serde(flatten)]
    edit: FileEdit,
    /// Whether the edit was placed on the file's history.
    placed: bool,
    prompt: Option<Prompt>,
    show: String,
}

pub(crate) fn run(ctx: &Ctx, args: &BlameArgs) -> Result<u8, CliError> {
    let range = args.lines.as_deref().map(parse_range).transpose()?;
    let path = ctx.cwd.join(&args.file);
    let exists = path.is_file();
    if !exists && path.exists() {
        return Err(
            CliError::user(format!("{} is not a file", args.file)).hint(format!(
                "`peat {}` lists the recorded edits under it.",
                args.file
            )),
        );
    }
    // A file, never a directory: one that is not a file now was refused above.
    let wanted = Wanted {
        dir: false,
        ..crate::cli::shared::wanted(ctx, &args.file)
    };
    let abs = std::path::PathBuf::from(&wanted.abs);
    // The views answer, beside a writer too; `--at SESSION:SEQ` reads that event's time
    // from their copy of the ledger (`EventSource`).
    let (_ledger, views, _model) = ctx.read_views()?;
    let source = EventSource::of(&views);
    let handles = Handles::new(&views.tables);
    let current = if exists {
        std::fs::read_to_string(&abs).map_err(|e| {
            CliError::user(format!("cannot read {} as text: {e}", args.file))
                .hint("Blame reads text files; `peat FILE` lists the recorded edits of any file.")
        })?
    } else if args.at.is_none() {
        return Err(CliError::user(format!("{} does not exist here", args.file)).hint(format!(
            "`peat blame {} --at DATE` shows it as it stood then; `peat file {}` lists its recorded edits.",
            args.file, args.file
        )));
    } else {
        String::new()
    };
    let attribute = |paths: &std::collections::BTreeSet<String>| -> Result<Option<(Vec<FileEdit>, Blame)>, CliError> {
        let (edits, changes): (Vec<FileEdit>, Vec<Change>) =
            applied_changes(&views, paths)?.into_iter().unzip();
        // Edits recorded before their changes were kept explain no line, but they did happen.
        if edits.is_empty() && !edits_of(&views, paths)?.iter().any(|e| !e.failed) {
            return Ok(None);
        }
        let result = match &args.at {
            None => blame(&current, &changes),
            Some(when) => {
                let cut = cut_at(ctx, source, &views, &edits, when)?;
                blame_at(exists.then_some(current.as_str()), &changes, cut).ok_or_else(|| {
                    CliError::user(format!(
                        "the record cannot tell what {} held at {when}",
                        args.file
                    ))
                    .hint("No whole write of the file precedes that moment, and the edits since cannot be undone from its text now.")
                })?
            }
        };
        Ok(Some((edits, result)))
    };
    let mut paths = recorded_paths(&views, &wanted)?;
    let first = attribute(&paths);
    let explained = |r: &Result<Option<(Vec<FileEdit>, Blame)>, CliError>| matches!(r, Ok(Some((_, b))) if b.lines.iter().all(|l| matches!(l, LineOrigin::Edit(_))));
    // The file's edits under the names it had before a rename count too. They are looked
    // for (two git or jj processes, most of a blame's time) only when the edits under its
    // name now leave a line unexplained: the last edit to write a line is what blame names,
    // and edits under an earlier name came before every edit under this one.
    let attributed = if explained(&first) {
        first
    } else {
        let known = paths.len();
        paths.extend(under_earlier_names(&views, &wanted)?);
        match paths.len() > known {
            true => attribute(&paths),
            false => first,
        }
    };
    let Some((edits, result)) = attributed? else {
        ctx.ui.note(&format!(
            "peat: no recorded edit touched {}: every line is a person's or from before the record",
            args.file
        ));
        return Ok(1);
    };
    let mut prompts = Prompts::default();
    let mut described = Vec::with_capacity(edits.len());
    for (i, e) in edits.iter().enumerate() {
        described.push(JsonEdit {
            placed: result.placed.get(i).copied().unwrap_or(false),
            prompt: prompts.answered_by(&views, &e.session, e.seq)?,
            show: format!("peat show {} {}", handles.of(&e.session), e.seq),
            edit: e.clone(),
        });
    }
    let lines: Vec<&str> = result.text.split_inclusive('\n').collect();
    let (from, to) = match range {
        Some((a, b)) => (a.max(1), b.min(lines.len())),
        None => (1, lines.len()),
    };
    if range.is_some() && from > to {
        return Err(CliError::user(format!(
            "{} has {} lines: -L {} is outside it",
            args.file,
            lines.len(),
            args.lines.as_deref().unwrap_or_default()
        )));
    }
    let shown: Vec<(usize, &str, LineOrigin)> = (from..=to)
        .map(|n| (n, lines[n - 1], result.lines[n - 1]))
        .collect();
    if ctx.json {
        let doc = serde_json::json!({
            "file": wanted.abs,
            "at": args.at,
            "recorded_paths": paths,
            "lines": shown.iter().map(|(n, text, origin)| JsonLine {
                line: *n,
                text: text.strip_suffix('\n').unwrap_or(text),
                edit: match origin { LineOrigin::Edit(i) => Some(*i), LineOrigin::Unexplained => None },
            }).collect::<Vec<_>>(),
            "edits": described,
            "behind": views.behind(),
        });
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, &doc).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(0);
    }
    print_text(ctx, args, &shown, &described, &result, &handles)?;
    Ok(0)
}

fn print_text(
    ctx: &Ctx,
    args: &BlameArgs,
    shown: &[(usize, &str, LineOrigin)],
    edits: &[JsonEdit],
    result: &Blame,
    handles: &Handles,
) -> Result<(), CliError> {
    let ui = &ctx.ui;
    let mut out = ui.pager();
    let sessions: BTreeSet<&SessionId> = edits.iter().map(|e| &e.edit.session).collect();
    let unexplained = shown
        .iter()
        .filter(|(_, _, o)| *o == LineOrigin::Unexplained)
        .count();
    let placed = result.placed.iter().filter(|p| **p).count();
    let mut head = format!(
        "== blame {}{} · {} · {} by {} · {} unexplained ==",
        args.file,
        args.at
            .as_deref()
            .map_or(String::new(), |a| format!(" at {a}")),
        noun(shown.len() as i64, "line"),
        noun(edits.len() as i64, "edit"),
        noun(sessions.len() as i64, "session"),
        noun(unexplained as i64, "line"),
    );
    if placed < edits.len() {
        head.push_str(&format!(
            "\n   {} could not be placed on the file (changed by hand since, or older than one that was)",
            noun((edits.len() - placed) as i64, "edit")
        ));
    }
    writeln!(out, "{}", ui.bold(&ui.safe(&head)))?;
    let width = shown.last().map_or(1, |(n, _, _)| n.to_string().len());
    let mut last: Option<LineOrigin> = None;
    for (n, text, origin) in shown {
        if last != Some(*origin) {
            writeln!(out, "{}", origin_line(ctx, *origin, edits, handles))?;
            last = Some(*origin);
        }
        let text = text.strip_suffix('\n').unwrap_or(text);
        writeln!(
            out,
            "  {} {}",
            ui.dim(&format!("{n:>width$} │")),
            ui.safe(text)
        )?;
    }
    out.finish()?;
    Ok(())
}

/// The line that heads a run of lines from one origin.
fn origin_line(ctx: &Ctx, origin: LineOrigin, edits: &[JsonEdit], handles: &Handles) -> String {
    let ui = &ctx.ui;
    let LineOrigin::Edit(i) = origin else {
        return ui.dim("[unexplained: no recorded edit wrote these lines]");
    };
    let e = &edits[i];
    let when = crate::vocab::time::local_minute(e.edit.ts_ms, &ctx.tz);
    let tag = format!(
        "[{} · {} · {}]",
        handles.of(&e.edit.session),
        crate::vocab::time::age(ctx.now_ms, e.edit.ts_ms, &ctx.tz),
        when
    );
    let prompt = e.prompt.as_ref().map_or_else(
        || "(no prompt before it)".to_string(),
        |p| format!("\"{}\"", clip(&p.text.replace('\n', " "), 72)),
    );
    format!(
        "{} {}  {}",
        ui.accent(&tag),
        ui.safe(&prompt),
        ui.dim(&format!("▸ {}", e.show))
    )
}

/// `A,B` or `A` (1-based, inclusive).
fn parse_range(s: &str) -> Result<(usize, usize), CliError> {
    let bad = || {
        CliError::user(format!("not a line range: {s:?}"))
            .hint("Give -L A,B (lines A to B, from 1) or -L N for one line.")
    };
    let num = |t: &str| t.trim().parse::<usize>().ok().filter(|n| *n > 0);
    match s.split_once(',') {
        Some((a, b)) => {
            let (a, b) = (num(a).ok_or_else(bad)?, num(b).ok_or_else(bad)?);
            if a > b {
                return Err(bad());
            }
            Ok((a, b))
        }
        None => num(s).map(|n| (n, n)).ok_or_else(bad),
    }
}

/// How many of `edits` (ledger order) had happened at the moment `when` names.
fn cut_at(
    ctx: &Ctx,
    source: EventSource<'_>,
    views: &crate::views::Views,
    edits: &[FileEdit],
    when: &str,
) -> Result<usize, CliError> {
    let by_time = |ms: i64| edits.iter().filter(|e| e.ts_ms <= ms).count();
    if let Some(ms) = crate::vocab::time::end_of_local_day(when, &ctx.tz) {
        return Ok(by_time(ms));
    }
    if let Some(ms) = crate::vocab::time::parse_iso_ms(when) {
        return Ok(by_time(ms));
    }
    let (prefix, seq) = match when.rsplit_once(':') {
        Some((s, n)) if n.parse::<u32>().is_ok() => (s, n.parse::<u32>().ok()),
        _ => (when, None),
    };
    let session = crate::cli::shared::resolve_in_views(views, prefix).map_err(|e| {
        e.hint("--at takes a day (YYYY-MM-DD), an instant (2026-08-10T19:18:11Z), a session, or SESSION:SEQ.")
    })?;
    let handles = Handles::new(&views.tables);
    match seq {
        Some(seq) => {
            let id = EventId {
                session: session.clone(),
                seq: Seq(seq),
            };
            let env = source.get(&id)?.ok_or_else(|| {
                let err =
                    CliError::user(format!("session {} has no event {seq}", handles.of(&session)));
                match views.behind() {
                    0 => err.hint(format!("`peat show {}` lists its events.", handles.of(&session))),
                    n => err.hint(format!(
                        "A capture is still writing ({n} recorded changes not shown yet): run it again once that finishes."
                    )),
                }
            })?;
            let key = (env.ts_ms, &session, seq);
            Ok(edits
                .iter()
                .filter(|e| (e.ts_ms, &e.session, e.seq) <= key)
                .count())
        }
        None => {
            let rollup = views
                .tables
                .session(&session)?
                .ok_or_else(|| CliError::user(format!("no session {}", handles.of(&session))))?;
            Ok(rollup.end_ms.map_or(0, by_time))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ranges_are_one_based_and_inclusive() {
        assert_eq!(parse_range("10,20").unwrap(), (10, 20));
        assert_eq!(parse_range("42").unwrap(), (42, 42));
        assert!(parse_range("0").is_err());
        assert!(parse_range("5,3").is_err());
        assert!(parse_range("a,b").is_err());
    }
}
