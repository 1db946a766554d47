use clap::Args;
use serde::Serialize;
use std::collections::BTreeSet;
use std::io::Write;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::shared::{attribution_error, parse_moment};
use crate::cli::ui::clip;
use crate::reads::attribution::{Attributed, Origin, When, attribute};
use crate::reads::blame::{LineOrigin, Placement};
use crate::reads::files::{FileEdit, Prompt, Prompts, Wanted};
use crate::reads::ladder::noun;
use crate::reads::vcs::{FileHistory, LineCommit};
use crate::views::handle::Handles;
use crate::vocab::event::SessionId;

/// Show which session and prompt last wrote each line of a file
///
/// Every line of the file as it is now (committed or not), with the recorded edit that last
/// wrote it: the session, the moment, the prompt the edit answered, and the command that shows
/// the edit. Lines no recorded edit wrote are never guessed: in a git or jj repository they
/// name the commit that brought them (from before the record, or committed by hand), or say
/// they were changed by hand and not committed. A whole-file write keeps the origin of the
/// lines it left as they were. `--at` shows the file as it stood at a past moment: the
/// repository's file at the last commit before it, with the recorded edits made after that
/// commit applied in order; it never shows a line written later, and marks the lines nothing
/// can settle as uncertain.
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
    origin: Origin,
    /// The commit that brought the line, when no recorded edit wrote it.
    commit: Option<&'a LineCommit>,
}

/// One recorded edit of the file, for `--json`.
#[derive(Serialize)]
struct JsonEdit {
    #[serde(flatten)]
    edit: FileEdit,
    /// Whether the edit was placed on the file's history.
    placed: bool,
    /// If not, why.
    placement: Placement,
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
    // The repository, read-only: what the file was at a moment, and who committed a line.
    // Who committed each line now is nearly always asked (a file's lines from before the
    // record are most of it): asked at once, the tool's run overlaps reading the record.
    let mut past = FileHistory::of(&abs);
    if let (Some(history), true, None) = (&past, exists, &args.at) {
        history.annotate_in_background();
    }
    // The views answer, beside a writer too; `--at SESSION:SEQ` reads that event's time
    // from their copy of the ledger (`EventSource`).
    let (_ledger, views, _model) = ctx.read_views()?;
    let handles = Handles::new(&views.tables);
    let moment = args
        .at
        .as_deref()
        .map(|when| parse_moment(ctx, &views, when, "--at"))
        .transpose()?;
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
    let when = match &moment {
        Some(moment) => When::At(moment, exists.then_some(current.as_str())),
        None => When::Now(&current),
    };
    let attributed = attribute(&views, &wanted, &mut past, when)
        .map_err(|e| attribution_error(&views, e, &args.file, args.at.as_deref()))?;
    let Some(attributed) = attributed else {
        ctx.ui.note(&format!(
            "peat: no recorded edit touched {}: every line is a person's or from before the record",
            args.file
        ));
        return Ok(1);
    };
    let (edits, result) = (&attributed.edits, &attributed.blame);
    let mut prompts = Prompts::default();
    let mut described = Vec::with_capacity(edits.len());
    for (i, e) in edits.iter().enumerate() {
        let placement = result
            .placement
            .get(i)
            .copied()
            .unwrap_or(Placement::Missing);
        described.push(JsonEdit {
            placed: placement == Placement::Placed,
            placement,
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
            "recorded_paths": attributed.paths,
            "lines": shown.iter().map(|(n, text, origin)| JsonLine {
                line: *n,
                text: text.strip_suffix('\n').unwrap_or(text),
                edit: match origin { LineOrigin::Edit(i) => Some(*i), _ => None },
                origin: Origin::of(*origin, &attributed),
                commit: match origin { LineOrigin::Commit(c) => result.commits.get(*c), _ => None },
            }).collect::<Vec<_>>(),
            "edits": described,
            "origins": origin_counts(&shown, &attributed),
            "behind": views.behind(),
        });
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, &doc).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(0);
    }
    print_text(ctx, args, &shown, &described, &attributed, &handles)?;
    Ok(0)
}

fn print_text(
    ctx: &Ctx,
    args: &BlameArgs,
    shown: &[(usize, &str, LineOrigin)],
    edits: &[JsonEdit],
    attributed: &Attributed,
    handles: &Handles,
) -> Result<(), CliError> {
    let ui = &ctx.ui;
    let mut out = ui.pager();
    let sessions: BTreeSet<&SessionId> = edits.iter().map(|e| &e.edit.session).collect();
    let head = format!(
        "== blame {}{} · {} · {} by {} ==\n{}",
        args.file,
        args.at
            .as_deref()
            .map_or(String::new(), |a| format!(" at {a}")),
        noun(shown.len() as i64, "line"),
        noun(edits.len() as i64, "edit"),
        noun(sessions.len() as i64, "session"),
        summary(shown, edits, attributed),
    );
    writeln!(out, "{}", ui.bold(&ui.safe(&head)))?;
    let width = shown.last().map_or(1, |(n, _, _)| n.to_string().len());
    let mut last: Option<LineOrigin> = None;
    for (n, text, origin) in shown {
        if last != Some(*origin) {
            writeln!(
                out,
                "{}",
                origin_line(ctx, *origin, edits, attributed, handles)
            )?;
            last = Some(*origin);
        }
        let text = text.strip_suffix('\n').unwrap_or(text);
        writeln!(
            out,
            "  {} {}",
            ui.dim(&format!("{n:>width$} │")),
            ui.code(text)
        )?;
    }
    out.finish()?;
    Ok(())
}

/// How many of the shown lines have each kind of origin (those with none left out): the
/// text header's counts, for `--json`.
fn origin_counts(
    shown: &[(usize, &str, LineOrigin)],
    attributed: &Attributed,
) -> std::collections::BTreeMap<Origin, usize> {
    let mut counts = std::collections::BTreeMap::new();
    for (_, _, o) in shown {
        *counts.entry(Origin::of(*o, attributed)).or_insert(0) += 1;
    }
    counts
}

/// The header's second part: how many lines each kind of origin has (only the kinds present),
/// then, one sentence each, the edits that could not be placed and what happened to them.
fn summary(
    shown: &[(usize, &str, LineOrigin)],
    edits: &[JsonEdit],
    attributed: &Attributed,
) -> String {
    let counts = origin_counts(shown, attributed);
    let count = |kind: Origin| counts.get(&kind).copied().unwrap_or(0) as i64;
    let kinds = [
        (Origin::Edit, "by recorded edits"),
        (Origin::BeforeRecord, "from before the record"),
        (Origin::CommittedByHand, "committed by hand"),
        (Origin::Uncommitted, "changed by hand, not committed"),
        (Origin::Unexplained, "unexplained"),
        (Origin::Uncertain, "uncertain"),
    ];
    let parts: Vec<String> = kinds
        .iter()
        .filter_map(|(kind, said)| {
            let n = count(*kind);
            (n > 0 || *kind == Origin::Edit).then(|| format!("{} {said}", noun(n, "line")))
        })
        .collect();
    let mut text = format!("   {}", parts.join(" · "));
    let reasons = [
        (
            Placement::Missing,
            "not placed: the text written is no longer where it was written (changed since by something the record does not hold)",
        ),
        (
            Placement::Ambiguous,
            "not placed: the text is in the file, but not in exactly one place the edit could have been made",
        ),
        (
            Placement::NotLines,
            "not placed: no lines changed (a notebook cell, or a delete of a file that exists again)",
        ),
        (
            Placement::Behind,
            "not placed: older than an edit that was not, so what the file held then is unknown",
        ),
        (
            Placement::Overwritten,
            "not placed: older than a whole-file write, and no repository says what that write replaced",
        ),
        (Placement::Later, "after that moment, not applied"),
    ];
    for (why, said) in reasons {
        let n = edits.iter().filter(|e| e.placement == why).count();
        if n > 0 {
            text.push_str(&format!("\n   {} {said}", noun(n as i64, "edit")));
        }
    }
    text
}

/// The line that heads a run of lines from one origin.
fn origin_line(
    ctx: &Ctx,
    origin: LineOrigin,
    edits: &[JsonEdit],
    attributed: &Attributed,
    handles: &Handles,
) -> String {
    let ui = &ctx.ui;
    let committed = |c: &LineCommit| {
        let short: String = c.hash.chars().take(8).collect();
        format!(
            "{short} {} · {}",
            c.author,
            crate::vocab::time::local_minute(c.ts_ms, &ctx.tz)
        )
    };
    let i = match origin {
        LineOrigin::Edit(i) => i,
        LineOrigin::Commit(c) => {
            let said = match Origin::of(origin, attributed) {
                Origin::BeforeRecord => "before the record",
                _ => "committed by hand",
            };
            return ui.dim(&ui.safe(&format!(
                "[{said}: {}]",
                committed(&attributed.blame.commits[c])
            )));
        }
        LineOrigin::Uncommitted => {
            return ui.dim("[changed by hand, not committed: no recorded edit wrote these lines]");
        }
        LineOrigin::Unexplained => {
            return ui.dim(
                "[unexplained: no recorded edit wrote these lines, and no repository says who did]",
            );
        }
        LineOrigin::Uncertain => {
            return ui.dim(
                "[uncertain: the record and the repository cannot settle these lines as of then]",
            );
        }
    };
    let e = &edits[i];
    let when = crate::vocab::time::local_minute(e.edit.ts_ms, &ctx.tz);
    let by = e
        .edit
        .model
        .as_ref()
        .map_or(String::new(), |m| format!(" · {m}"));
    let tag = format!(
        "[{} · {} · {when}{by}]",
        handles.of(&e.edit.session),
        crate::vocab::time::age(ctx.now_ms, e.edit.ts_ms, &ctx.tz),
    );
    let prompt = e.prompt.as_ref().map_or_else(
        || "(no prompt before it)".to_string(),
        |p| format!("\"{}\"", ui.preview(&clip(&p.text.replace('\n', " "), 72))),
    );
    format!(
        "{} {prompt}  {}",
        ui.accent(&ui.safe(&tag)),
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
