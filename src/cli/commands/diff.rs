use clap::Args;
use serde::Serialize;
use std::io::Write;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::shared::{moment_error, no_event, resolve_in_views};
use crate::cli::ui::clip;
use crate::reads::diff::{Cause, FileDiff, NetDiff, NetHunk, net_diff};
use crate::reads::files::{FileEdit, Prompt, Prompts};
use crate::reads::ladder::noun;
use crate::reads::span::Span;
use crate::views::Views;
use crate::views::handle::Handles;
use crate::views::source::EventSource;
use crate::vocab::event::{EventId, Seq, SessionId};

/// Show the net change a session made, per file, as one unified diff
///
/// The whole session, one turn of it (`SESSION:SEQ`: the prompt at or before SEQ and the
/// steps it led to, up to the next prompt), or a range of its steps (`SESSION A..B`). The
/// edits of the subagents those steps started (placed as `peat log` places them) are theirs.
///
/// Net means: for each file the steps touched, the file as it stood just before their first
/// change to it against the file as it stood just after their last change to it, with
/// everything that happened in between. Both are the file as it stood at that moment,
/// reconstructed as `blame --at` does (the repository's file at the last commit before the
/// moment, with the recorded edits made since applied in order); a file that did not exist
/// is `/dev/null`. When another session's edit, or a change by hand the repository dates,
/// landed in between, its lines are in the diff and a note under the file says so.
///
/// Paths are relative to the repository's root (else the session's directory), as `git diff`
/// prints them. Each hunk ends in the command that shows the step and prompt behind it.
#[derive(Args, Debug)]
pub(crate) struct DiffArgs {
    /// A session id or a unique prefix of one; SESSION:SEQ for the turn holding SEQ
    #[arg(value_name = "SESSION")]
    pub(crate) session: String,
    /// Only steps A to B (seqs, inclusive): `4..9`, `4..`, `..9`, or `7` for one step
    #[arg(value_name = "SEQ..SEQ")]
    pub(crate) range: Option<String>,
    /// Per file, the lines added and removed (`+N -M`), and the total, instead of the diff
    #[arg(long)]
    pub(crate) stat: bool,
}

/// What made a hunk's lines, for `--json`: the cause, and for a recorded edit the prompt it
/// answered and the command that shows it.
#[derive(Serialize)]
struct JsonCause<'a> {
    #[serde(flatten)]
    cause: &'a Cause,
    handle: Option<String>,
    prompt: Option<Prompt>,
    show: Option<String>,
}

pub(crate) fn run(ctx: &Ctx, args: &DiffArgs) -> Result<u8, CliError> {
    let (_ledger, views, _model) = ctx.read_views()?;
    let (span, turn) = span_of(ctx, &views, args)?;
    // A turn opens with its prompt (none when the seq came before the session's first).
    let asked = span
        .from
        .filter(|_| turn)
        .and_then(|seq| views.cited(&span.session, seq));
    let diff = net_diff(&views, &span).map_err(|e| moment_error(&views, e))?;
    let handles = Handles::new(&views.tables);
    let mut prompts = Prompts::default();
    let mut described = |c: &Cause| -> Result<Described, CliError> {
        Ok(match c {
            Cause::Edit { edit, .. } => {
                let handle = handles.of(&edit.session);
                Described {
                    show: Some(format!("peat show {handle} {}", edit.seq)),
                    handle: Some(handle),
                    prompt: prompts.answered_by(&views, &edit.session, edit.seq)?,
                }
            }
            Cause::Outside { .. } => Described::default(),
        })
    };
    let mut said: Vec<Vec<Vec<Described>>> = Vec::new();
    let mut notes: Vec<Vec<Described>> = Vec::new();
    for f in &diff.files {
        said.push(
            f.hunks
                .iter()
                .map(|h| h.causes.iter().map(&mut described).collect())
                .collect::<Result<_, _>>()?,
        );
        notes.push(
            f.between
                .iter()
                .map(&mut described)
                .collect::<Result<_, _>>()?,
        );
    }
    let handle = handles.of(&span.session);
    let code = if diff.files.is_empty() { 1 } else { 0 };
    if ctx.json {
        let files: Vec<serde_json::Value> = diff
            .files
            .iter()
            .zip(&said)
            .zip(&notes)
            .map(|((f, said), notes)| json_file(f, said, notes))
            .collect();
        let doc = serde_json::json!({
            "session": span.session,
            "handle": handle,
            "from": span.from,
            "to": span.to,
            "prompt": asked,
            "files": files,
            "unchanged": diff.unchanged,
            "unknown": diff.unknown,
            "behind": views.behind(),
        });
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, &doc).map_err(std::io::Error::from)?;
        writeln!(out)?;
        return Ok(code);
    }
    if diff.files.is_empty() {
        ctx.ui.note(&format!(
            "peat: {} changed no file",
            spanned(&handle, &span, turn)
        ));
        left_out_notes(ctx, &diff);
        return Ok(code);
    }
    let mut out = ctx.ui.pager();
    let head = header(&handle, &span, turn, &diff);
    writeln!(out, "{}", ctx.ui.bold(&ctx.ui.safe(&head)))?;
    if let Some(p) = &asked {
        let ui = &ctx.ui;
        writeln!(
            out,
            "\"{}\"  {}",
            ui.preview(&clip(&p.text.replace('\n', " "), 72)),
            ui.dim(&format!("▸ peat show {handle} {}", p.seq))
        )?;
    }
    if args.stat {
        print_stat(ctx, &mut out, &diff)?;
    } else {
        for ((f, said), notes) in diff.files.iter().zip(&said).zip(&notes) {
            print_file(ctx, &mut out, &span, f, said, notes)?;
        }
    }
    out.finish()?;
    left_out_notes(ctx, &diff);
    Ok(code)
}

/// A cause in words a reader can follow: the session's handle, the prompt, the command.
#[derive(Default)]
struct Described {
    handle: Option<String>,
    prompt: Option<Prompt>,
    show: Option<String>,
}

/// The steps asked about: the session, its turn, or a range of its steps; and whether they
/// are a turn.
fn span_of(ctx: &Ctx, views: &Views, args: &DiffArgs) -> Result<(Span, bool), CliError> {
    let (prefix, turn) = match args.session.rsplit_once(':') {
        Some((s, n)) => match n.parse::<u32>() {
            Ok(n) => (s, Some(Seq(n))),
            Err(_) => {
                return Err(CliError::user(format!(
                    "not a session or SESSION:SEQ: {:?}",
                    args.session
                ))
                .hint("Give a session id (or a prefix of one), or SESSION:SEQ for one turn."));
            }
        },
        None => (args.session.as_str(), None),
    };
    let session = resolve_in_views(ctx, views, prefix)?;
    if let Some(seq) = turn {
        let id = EventId {
            session: session.clone(),
            seq,
        };
        if EventSource::of(views).get(&id)?.is_none() {
            return Err(no_event(&id, views.behind(), &Handles::new(&views.tables)));
        }
    }
    match (turn, &args.range) {
        (Some(_), Some(_)) => Err(CliError::user(
            "SESSION:SEQ names a turn: a range of steps cannot be given with it",
        )
        .hint("Give `peat diff SESSION:SEQ` for the turn, or `peat diff SESSION A..B` for steps A to B.")),
        (Some(seq), None) => Ok((Span::turn(views, session, seq)?, true)),
        (None, Some(range)) => {
            let (from, to) = parse_range(range)?;
            Ok((Span::of(views, session, from, to)?, false))
        }
        (None, None) => Ok((Span::whole(views, session)?, false)),
    }
}

/// `A..B`, `A..`, `..B` or `A` (seqs, inclusive).
fn parse_range(s: &str) -> Result<(Option<Seq>, Option<Seq>), CliError> {
    let bad = || {
        CliError::user(format!("not a range of steps: {s:?}"))
            .hint("Give A..B (steps A to B, by seq, inclusive), A.., ..B, or one seq.")
    };
    let seq = |t: &str| match t.trim() {
        "" => Ok(None),
        t => t.parse::<u32>().map(|n| Some(Seq(n))).map_err(|_| bad()),
    };
    let (from, to) = match s.split_once("..") {
        Some((a, b)) => (seq(a)?, seq(b)?),
        None => {
            let one = seq(s)?.ok_or_else(bad)?;
            (Some(one), Some(one))
        }
    };
    if let (Some(a), Some(b)) = (from, to)
        && a > b
    {
        return Err(bad());
    }
    Ok((from, to))
}

/// `session 3f6c2a9e`, `turn 3f6c2a9e:49` (a turn, by its prompt), `steps 3f6c2a9e 4..9`.
fn spanned(handle: &str, span: &Span, turn: bool) -> String {
    let end = |s: Option<Seq>| s.map_or(String::new(), |s| s.to_string());
    match (span.from, span.to) {
        (Some(from), _) if turn => format!("turn {handle}:{from}"),
        (None, None) => format!("session {handle}"),
        (from, to) => format!("steps {handle} {}..{}", end(from), end(to)),
    }
}

/// `== diff session 3f6c2a9e · 2 files · +5 -1 ==`.
fn header(handle: &str, span: &Span, turn: bool, diff: &NetDiff) -> String {
    let added: usize = diff.files.iter().map(|f| f.added).sum();
    let removed: usize = diff.files.iter().map(|f| f.removed).sum();
    format!(
        "== diff {} · {} · +{added} -{removed} ==",
        spanned(handle, span, turn),
        noun(diff.files.len() as i64, "file"),
    )
}

/// The files the steps edited that the diff leaves out, said on stderr: those that ended as
/// they began, and those whose states nothing could tell.
fn left_out_notes(ctx: &Ctx, diff: &NetDiff) {
    let said = [
        (&diff.unchanged, "ended as they began"),
        (
            &diff.unknown,
            "left out: neither the record nor a repository can tell what they held",
        ),
    ];
    for (paths, why) in said {
        if !paths.is_empty() {
            ctx.ui
                .note(&format!("peat: edited, {why}: {}", paths.join(", ")));
        }
    }
}

/// One line per file, `path | +N -M`, then the totals as `git diff --stat` words them.
fn print_stat(ctx: &Ctx, out: &mut impl Write, diff: &NetDiff) -> Result<(), CliError> {
    let ui = &ctx.ui;
    let width = diff
        .files
        .iter()
        .map(|f| f.path.chars().count())
        .max()
        .unwrap_or(0);
    for f in &diff.files {
        let path = ui.safe(&f.path);
        let pad = width - f.path.chars().count();
        writeln!(
            out,
            " {path}{} | +{} -{}",
            " ".repeat(pad),
            f.added,
            f.removed
        )?;
    }
    let added: usize = diff.files.iter().map(|f| f.added).sum();
    let removed: usize = diff.files.iter().map(|f| f.removed).sum();
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    writeln!(
        out,
        " {}, {}, {}",
        plural(diff.files.len(), "file changed", "files changed"),
        plural(added, "insertion(+)", "insertions(+)"),
        plural(removed, "deletion(-)", "deletions(-)")
    )?;
    Ok(())
}

/// A file as `git diff` prints it, each hunk followed by the steps behind it, and a note for
/// whatever else landed in between.
fn print_file(
    ctx: &Ctx,
    out: &mut impl Write,
    span: &Span,
    f: &FileDiff,
    said: &[Vec<Described>],
    notes: &[Described],
) -> Result<(), CliError> {
    let ui = &ctx.ui;
    let path = &f.path;
    let from = if f.created {
        "/dev/null".to_string()
    } else {
        format!("a/{path}")
    };
    let to = if f.deleted {
        "/dev/null".to_string()
    } else {
        format!("b/{path}")
    };
    // The diff's own lines are kept whole on a terminal, as code is: only the lines that name
    // a step are fitted.
    for head in [
        format!("diff --git a/{path} b/{path}"),
        format!("--- {from}"),
        format!("+++ {to}"),
    ] {
        writeln!(out, "{}", ui.bold(&ui.code(&head)))?;
    }
    for (h, said) in f.hunks.iter().zip(said) {
        print_hunk(ctx, out, h)?;
        for line in cause_lines(ctx, span, &h.causes, said) {
            writeln!(out, "{line}")?;
        }
    }
    for line in note_lines(ctx, span, &f.between, notes) {
        writeln!(out, "{line}")?;
    }
    if f.uncertain {
        writeln!(
            out,
            "{}",
            ui.warning("note: some lines of it are uncertain (an edit could not be placed on what the file held): `peat blame FILE --at SESSION:SEQ` shows which")
        )?;
    }
    Ok(())
}

fn print_hunk(ctx: &Ctx, out: &mut impl Write, h: &NetHunk) -> Result<(), CliError> {
    let ui = &ctx.ui;
    writeln!(out, "{}", ui.accent(&ui.code(&h.header())))?;
    for l in &h.lines {
        writeln!(out, "{}", ui.code(&format!("{}{}", l.op.mark(), l.text)))?;
        if l.no_newline {
            writeln!(out, "{}", ui.code("\\ No newline at end of file"))?;
        }
    }
    Ok(())
}

/// The lines under a hunk that name its causes: one per prompt its steps answered, in the
/// order they were made (`[steps 18, 50 · 09:06] "prompt"  ▸ peat show 3f6c2a9e 18`, the first
/// step's command closing it), and one per change outside the record.
fn cause_lines(ctx: &Ctx, span: &Span, causes: &[Cause], said: &[Described]) -> Vec<String> {
    let ui = &ctx.ui;
    // The steps of one session (in the span or not) that answered one prompt; a change
    // outside the record has no key, and a line of its own.
    type Key<'a> = Option<(&'a SessionId, bool, Option<Seq>)>;
    type Members<'a> = Vec<(&'a Cause, &'a Described)>;
    let mut groups: Vec<(Key, Members)> = Vec::new();
    for (c, d) in causes.iter().zip(said) {
        let key = match c {
            Cause::Edit { edit, in_span } => {
                Some((&edit.session, *in_span, d.prompt.as_ref().map(|p| p.seq)))
            }
            Cause::Outside { .. } => None,
        };
        match groups.iter_mut().find(|(k, _)| key.is_some() && *k == key) {
            Some((_, members)) => members.push((c, d)),
            None => groups.push((key, vec![(c, d)])),
        }
    }
    groups
        .into_iter()
        .map(|(_, members)| {
            let (edit, in_span, d) = match members[0] {
                (Cause::Edit { edit, in_span }, d) => (edit, in_span, d),
                (
                    Cause::Outside {
                        after_ms,
                        before_ms,
                    },
                    _,
                ) => {
                    return ui.dim(&format!(
                        "[changed outside the record between {} and {}]",
                        crate::vocab::time::local_minute(*after_ms, &ctx.tz),
                        crate::vocab::time::local_minute(*before_ms, &ctx.tz)
                    ));
                }
            };
            let edits: Vec<&FileEdit> = members
                .iter()
                .filter_map(|(c, _)| match c {
                    Cause::Edit { edit, .. } => Some(edit),
                    Cause::Outside { .. } => None,
                })
                .collect();
            let whose = match (in_span, edit.session == span.session) {
                (true, true) => String::new(),
                (true, false) => format!("subagent {}: ", d.handle.as_deref().unwrap_or_default()),
                (false, true) => "outside the range: ".to_string(),
                (false, false) => format!(
                    "another session's: {} ",
                    d.handle.as_deref().unwrap_or_default()
                ),
            };
            let tag = format!(
                "[{whose}{} · {}]",
                seqs(&edits),
                crate::vocab::time::local_minute(edit.ts_ms, &ctx.tz)
            );
            let prompt = d.prompt.as_ref().map_or_else(
                || "(no prompt before it)".to_string(),
                |p| format!("\"{}\"", ui.preview(&clip(&p.text.replace('\n', " "), 72))),
            );
            format!(
                "{} {prompt}  {}",
                ui.accent(&tag),
                ui.dim(&format!("▸ {}", d.show.as_deref().unwrap_or_default()))
            )
        })
        .collect()
}

/// `step 18`, `steps 18, 50, 82`, or past four, `40 steps: 18, 50 … 1266`.
fn seqs(edits: &[&FileEdit]) -> String {
    let all: Vec<String> = edits.iter().map(|e| e.seq.to_string()).collect();
    match all.as_slice() {
        [one] => format!("step {one}"),
        few if few.len() <= 4 => format!("steps {}", few.join(", ")),
        many => format!(
            "{} steps: {}, {} … {}",
            many.len(),
            many[0],
            many[1],
            many[many.len() - 1]
        ),
    }
}

/// The notes under a file for what else changed it between the span's first and last change
/// to it: one per session whose edits landed in between, one per change outside the record.
fn note_lines(ctx: &Ctx, span: &Span, between: &[Cause], said: &[Described]) -> Vec<String> {
    let ui = &ctx.ui;
    let mut sessions: Vec<(&SessionId, Vec<&FileEdit>, &Described)> = Vec::new();
    let mut lines = Vec::new();
    for (cause, d) in between.iter().zip(said) {
        match cause {
            Cause::Edit { edit, .. } => {
                match sessions.iter_mut().find(|(s, _, _)| **s == edit.session) {
                    Some((_, edits, _)) => edits.push(edit),
                    None => sessions.push((&edit.session, vec![edit], d)),
                }
            }
            Cause::Outside {
                after_ms,
                before_ms,
            } => lines.push(format!(
                "note: changed outside the record in between (by hand or by a shell command, committed between {} and {}): its lines are in this diff",
                crate::vocab::time::local_minute(*after_ms, &ctx.tz),
                crate::vocab::time::local_minute(*before_ms, &ctx.tz)
            )),
        }
    }
    let edited = sessions.into_iter().map(|(session, edits, d)| {
        let whose = match (*session == span.session, edits.len()) {
            (true, 1) => "a step of this session outside the range",
            (true, _) => "steps of this session outside the range",
            (false, 1) => "an edit by another session",
            (false, _) => "edits by another session",
        };
        format!(
            "note: {whose} landed in between ({} {} · {}): its lines are in this diff  ▸ {}",
            d.handle.as_deref().unwrap_or_default(),
            seqs(&edits),
            crate::vocab::time::local_minute(edits[0].ts_ms, &ctx.tz),
            d.show.as_deref().unwrap_or_default()
        )
    });
    let mut all: Vec<String> = edited.collect();
    all.extend(lines);
    all.into_iter().map(|l| ui.warning(&l)).collect()
}

fn json_file(f: &FileDiff, said: &[Vec<Described>], notes: &[Described]) -> serde_json::Value {
    fn cause<'a>((c, d): (&'a Cause, &Described)) -> JsonCause<'a> {
        JsonCause {
            cause: c,
            handle: d.handle.clone(),
            prompt: d.prompt.clone(),
            show: d.show.clone(),
        }
    }
    let hunks: Vec<serde_json::Value> = f
        .hunks
        .iter()
        .zip(said)
        .map(|(h, said)| {
            serde_json::json!({
                "header": h.header(),
                "old_start": h.old_start,
                "old_lines": h.old_lines,
                "new_start": h.new_start,
                "new_lines": h.new_lines,
                "lines": h.lines,
                "steps": h.causes.iter().zip(said).map(cause).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({
        "path": f.path,
        "recorded_paths": f.recorded,
        "created": f.created,
        "deleted": f.deleted,
        "uncertain": f.uncertain,
        "added": f.added,
        "removed": f.removed,
        "steps": f.steps,
        "hunks": hunks,
        "between": f.between.iter().zip(notes).map(cause).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_of_steps_is_inclusive_and_either_end_may_be_open() {
        assert_eq!(parse_range("4..9").unwrap(), (Some(Seq(4)), Some(Seq(9))));
        assert_eq!(parse_range("4..").unwrap(), (Some(Seq(4)), None));
        assert_eq!(parse_range("..9").unwrap(), (None, Some(Seq(9))));
        assert_eq!(parse_range("7").unwrap(), (Some(Seq(7)), Some(Seq(7))));
        assert!(parse_range("9..4").is_err());
        assert!(parse_range("a..b").is_err());
        assert!(parse_range("").is_err());
    }

    #[test]
    fn many_steps_under_one_prompt_are_counted_and_their_first_and_last_named() {
        let edit = |seq: u32| FileEdit {
            session: SessionId("s".into()),
            seq: Seq(seq),
            ts_ms: 0,
            op: crate::vocab::event::TouchOp::Edit,
            path: "/f".into(),
            failed: false,
            model: None,
            change: None,
        };
        let edits: Vec<FileEdit> = [18, 50, 82, 114, 146].map(edit).into();
        let refs: Vec<&FileEdit> = edits.iter().collect();
        assert_eq!(seqs(&refs[..1]), "step 18");
        assert_eq!(seqs(&refs[..4]), "steps 18, 50, 82, 114");
        assert_eq!(seqs(&refs), "5 steps: 18, 50 … 146");
    }
}
