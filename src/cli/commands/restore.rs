use clap::Args;
use serde::Serialize;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::shared::{moment_error, parse_moment, resolve_in_views};
use crate::ledger::{Ledger, Mode, WriteSet};
use crate::reads::files::FileEdit;
use crate::reads::moment::{Moment, MomentError};
use crate::reads::restore::{FilePlan, PlanError, TOOL, plan_file, restored, restores};
use crate::reads::span::Span;
use crate::views::Views;
use crate::views::handle::Handles;
use crate::vocab::change::{Before, BlobId, Change};
use crate::vocab::event::{
    Agent, Envelope, Event, EventId, RESTORE_PREFIX, Seq, SessionId, TouchOp,
};

/// Put files back as they stood at a moment, and undo that
///
/// Use it for "that was working five minutes ago" and "go back to before the refactor": the
/// file is rebuilt as `peat blame --at` sees it (the repository's file at the last commit
/// before the moment, with the recorded edits made since applied in order), for any session
/// and any day. It prints the diff it would apply and writes only with `--yes` (or when you
/// answer `y` at a terminal); unconfirmed, it exits 1 having written nothing. A deleted file
/// comes back; a file that did not exist then is deleted.
///
/// Nothing is lost: the file's content before is kept in the ledger, and the restore is
/// recorded as a session of its own (`peat log` and `peat FILE` show it; blame gives each line
/// it put back to the edit or commit that first wrote it). `peat restore --undo` puts back
/// exactly the bytes the last restore replaced (`--undo ID` one restore).
/// A file with lines no recorded edit or commit explains (typed by hand, or written by a
/// shell command not committed) is refused, naming them; `--force` restores it anyway, still
/// keeping its content first.
///
/// `--session SESSION --before` restores every file a session touched as it stood before the
/// session started (`--turn SESSION:SEQ`: before that turn); files someone else changed since
/// are listed and left alone unless named after the options.
#[derive(Args, Debug)]
pub(crate) struct RestoreArgs {
    /// The files to restore; with --session or --turn, files to restore even though someone
    /// else changed them since
    #[arg(value_name = "FILE")]
    pub(crate) files: Vec<String>,
    /// The moment: a day (YYYY-MM-DD: its end), an instant (2026-08-10T19:18:11Z), a session
    /// (after its last event) or SESSION:SEQ (just after that event)
    #[arg(long, value_name = "WHEN", conflicts_with_all = ["before", "undo"])]
    pub(crate) at: Option<String>,
    /// Just before the event SESSION:SEQ; with --session, before the session started (no
    /// value then)
    #[arg(long, value_name = "SESSION:SEQ", num_args = 0..=1)]
    pub(crate) before: Option<Option<String>>,
    /// Every file this session and its subagents touched, as it stood before it started (with
    /// --before)
    #[arg(long, value_name = "SESSION", conflicts_with_all = ["turn", "at", "undo"])]
    pub(crate) session: Option<String>,
    /// Every file this turn (the prompt SEQ falls under) and the subagents it started touched,
    /// as it stood before it
    #[arg(long, value_name = "SESSION:SEQ", conflicts_with_all = ["at", "before", "undo"])]
    pub(crate) turn: Option<String>,
    /// Put back what the last restore replaced (or the restore ID)
    #[arg(long, value_name = "ID", num_args = 0..=1)]
    pub(crate) undo: Option<Option<String>>,
    /// Apply without asking
    #[arg(long, short = 'y')]
    pub(crate) yes: bool,
    /// Restore a file even though it has lines the record cannot explain (they are kept in
    /// the ledger first)
    #[arg(long)]
    pub(crate) force: bool,
}

/// What is asked for, its moment parsed.
enum Ask {
    Files(Moment, Vec<String>),
    Span(Span, Vec<String>),
    Undo(SessionId),
}

/// What happens to one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Action {
    Write,
    Create,
    Delete,
    /// It already holds what it held then.
    Unchanged,
    /// Someone else changed it since, and it was not named.
    ChangedSince,
}

/// One file of the plan, for `--json` and the text.
#[derive(Serialize)]
struct Planned {
    path: String,
    action: Action,
    certain: bool,
    /// Lines of the file now no recorded edit or commit explains.
    unexplained: Vec<(usize, String)>,
    /// The sessions that changed it since.
    changed_since: Vec<String>,
    /// The recorded edits applied to make it.
    edits: Vec<FileEdit>,
    diff: String,
    #[serde(skip)]
    plan: FilePlan,
}

pub(crate) fn run(ctx: &Ctx, args: &RestoreArgs) -> Result<u8, CliError> {
    let root = project_root(ctx);
    // Planned from the views without the writer lock: an agent's hook never waits for a
    // person reading a diff.
    let (ledger, views, _model) = ctx.read_views()?;
    let ask = ask(ctx, &views, args)?;
    let (label, planned) = plan(ctx, &views, &ledger, &root, &ask, args.force)?;
    let session = restore_session(&views, ctx.now_ms)?;
    drop(views);
    drop(ledger);

    let writes: Vec<&Planned> = planned
        .iter()
        .filter(|p| matches!(p.action, Action::Write | Action::Create | Action::Delete))
        .collect();
    if !ctx.json {
        print_plan(ctx, &label, &planned)?;
    }
    if writes.is_empty() {
        if ctx.json {
            print_json(&label, &planned, None)?;
        }
        ctx.ui
            .note("peat: nothing to restore: each file already holds what it held then, or was left alone");
        return Ok(0);
    }
    if !confirmed(ctx, args.yes)? {
        if ctx.json {
            print_json(&label, &planned, None)?;
        }
        ctx.ui.note(
            "peat: nothing written: run it again with --yes to apply this diff (a restore is undone with `peat restore --undo`)",
        );
        return Ok(1);
    }

    // The writer lock, taken as capture takes it, only now that the person has said yes.
    let mut ledger = ctx.open(Mode::Create)?;
    for p in &writes {
        if read_now(&p.plan.path)? != p.plan.now {
            return Err(CliError::user(format!(
                "{} changed while the restore was being confirmed: nothing written",
                p.path
            ))
            .hint("Run the restore again to see the diff against what it holds now."));
        }
    }
    let command = std::iter::once("peat".to_string())
        .chain(std::env::args().skip(1))
        .collect::<Vec<_>>()
        .join(" ");
    let mut set = record(ctx, &session, &root, &command, &label, &writes);
    crate::redact::apply::write_set(ctx.redactor().get()?, &mut set);
    // A file holding what the store's rules keep out (a key, a token) cannot be kept whole
    // for an undo: it is never overwritten, --force or not.
    for p in &writes {
        if let Some(now) = &p.plan.now
            && !set.blobs.iter().any(|(id, _)| *id == BlobId::of(now))
        {
            return Err(CliError::user(format!(
                "{} holds text the store's redaction rules keep out (a key or a token): the ledger cannot keep it whole, so a restore could not be undone: nothing written",
                p.path
            ))
            .hint("Commit it or copy it elsewhere first; git or jj keeps it, and then restore."));
        }
    }
    ledger.write(set)?;
    for p in &writes {
        apply(&p.plan).map_err(|e| {
            CliError::user(format!("cannot write {}: {e}", p.path)).hint(format!(
                "The content it had is kept: `peat restore --undo {}` puts back every file this restore changed.",
                session
            ))
        })?;
    }
    drop(ledger);
    if ctx.json {
        print_json(&label, &planned, Some(&session))?;
    }
    ctx.ui.note(&format!(
        "peat: restored {} as recorded in {session}; `peat restore --undo` puts back what was there",
        crate::reads::ladder::noun(writes.len() as i64, "file"),
    ));
    Ok(0)
}

/// The repository's root, or with none the project's (the folder holding the desk).
fn project_root(ctx: &Ctx) -> PathBuf {
    let root = ctx
        .location
        .root
        .clone()
        .or_else(|| ctx.location.desk.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| ctx.cwd.clone());
    std::fs::canonicalize(&root).unwrap_or(root)
}

fn ask(ctx: &Ctx, views: &Views, args: &RestoreArgs) -> Result<Ask, CliError> {
    let event = |text: &str, flag: &str| -> Result<EventId, CliError> {
        match parse_moment(ctx, views, text, flag)? {
            Moment::After(id) => Ok(id),
            _ => Err(
                CliError::user(format!("{flag} takes SESSION:SEQ, not {text:?}"))
                    .hint("`peat show SESSION` lists a session's events with their seqs."),
            ),
        }
    };
    let no_event = |id: &EventId| moment_error(views, MomentError::NoEvent(id.clone()));
    if let Some(undo) = &args.undo {
        let session = match undo {
            Some(id) => resolve_in_views(ctx, views, id)?,
            None => restores(views)?.pop().ok_or_else(|| {
                CliError::not_found("no restore is recorded: there is nothing to undo")
            })?,
        };
        return Ok(Ask::Undo(session));
    }
    if let Some(t) = &args.turn {
        let id = event(t, "--turn")?;
        if views.tables.envelope(&id)?.is_none() {
            return Err(no_event(&id));
        }
        let span = Span::turn(views, id.session, id.seq)?;
        return Ok(Ask::Span(span, args.files.clone()));
    }
    if let Some(s) = &args.session {
        let mut named = args.files.clone();
        match &args.before {
            None => {
                return Err(
                    CliError::user("--session restores to before the session started")
                        .hint(format!("Write `peat restore --session {s} --before`.")),
                );
            }
            // `--session S --before FILE`: the word after --before is a file.
            Some(Some(file)) => named.push(file.clone()),
            Some(None) => {}
        }
        let session = resolve_in_views(ctx, views, s)?;
        return Ok(Ask::Span(Span::whole(views, session)?, named));
    }
    if args.files.is_empty() {
        return Err(CliError::user("restore what?").hint(
            "Name a file with --at WHEN or --before SESSION:SEQ, or give --session SESSION --before, --turn SESSION:SEQ or --undo.",
        ));
    }
    let moment = match (&args.at, &args.before) {
        (Some(when), _) => parse_moment(ctx, views, when, "--at")?,
        (None, Some(Some(b))) => Moment::Before(event(b, "--before")?),
        _ => {
            return Err(CliError::user("restore to when?")
                .hint("Give --at WHEN (a day, an instant, SESSION:SEQ) or --before SESSION:SEQ."));
        }
    };
    Ok(Ask::Files(moment, args.files.clone()))
}

/// The plan: each file, what it holds now and what it will hold. Files outside the root,
/// files that cannot be rebuilt and files with lines nothing explains (without `force`)
/// fail the whole plan: nothing is written.
fn plan(
    ctx: &Ctx,
    views: &Views,
    ledger: &Ledger,
    root: &Path,
    ask: &Ask,
    force: bool,
) -> Result<(String, Vec<Planned>), CliError> {
    let handles = Handles::new(&views.tables);
    let (label, plans, named): (String, Vec<FilePlan>, Vec<PathBuf>) = match ask {
        Ask::Files(moment, files) => {
            let mut plans = Vec::new();
            for f in files {
                let wanted = inside(ctx, root, f)?;
                plans.push(plan_one(views, &wanted, moment, f)?);
            }
            (describe(moment, &handles), plans, Vec::new())
        }
        Ask::Span(span, named) => {
            let first = span.first(views)?.ok_or_else(|| {
                CliError::user(format!(
                    "session {} has no event",
                    handles.of(&span.session)
                ))
            })?;
            let moment = Moment::Before(first.clone());
            let mut plans = Vec::new();
            for abs in span.touched(views)? {
                let typed = abs.to_string_lossy().into_owned();
                // A session may have written outside this project: never restored from here.
                let Ok(wanted) = inside(ctx, root, &typed) else {
                    ctx.ui.note(&format!(
                        "peat: left alone: {typed} is outside {}",
                        root.display()
                    ));
                    continue;
                };
                plans.push(plan_one(views, &wanted, &moment, &typed)?);
            }
            let named = named
                .iter()
                .map(|f| inside(ctx, root, f).map(|w| PathBuf::from(w.abs)))
                .collect::<Result<_, _>>()?;
            let what = match (span.from, span.to) {
                (None, None) => format!("session {}", handles.of(&span.session)),
                _ => format!("turn {}:{}", handles.of(&span.session), first.seq),
            };
            (format!("as before {what} started"), plans, named)
        }
        Ask::Undo(session) => {
            let files = restored(views, session)?.ok_or_else(|| {
                CliError::user(format!("{} is not a restore", handles.of(session)))
                    .hint("`peat sessions` lists restores as sessions named restore-….")
            })?;
            let mut plans = Vec::new();
            for f in files {
                let typed = f.path.to_string_lossy().into_owned();
                let wanted = inside(ctx, root, &typed)?;
                let path = PathBuf::from(&wanted.abs);
                let now = read_now(&path)?;
                if now.as_deref() != f.after.as_ref().map(String::as_bytes) && !force {
                    return Err(CliError::user(format!(
                        "{typed} changed since restore {}: undoing it would lose that change",
                        handles.of(session)
                    ))
                    .hint("`--force` undoes it anyway (its content now is kept first)."));
                }
                let then = match f.before {
                    Some(id) => Some(ledger.blob(&id)?.ok_or_else(|| {
                        CliError::user(format!("the ledger has lost what {typed} held before"))
                    })?),
                    None => None,
                };
                plans.push(FilePlan {
                    path,
                    now,
                    then,
                    certain: true,
                    unexplained: Vec::new(),
                    applied: Vec::new(),
                    later: Vec::new(),
                    to: Moment::Before(f.touch),
                });
            }
            (
                format!("undoing {}", handles.of(session)),
                plans,
                Vec::new(),
            )
        }
    };
    let mut out = Vec::new();
    let mut refused = Vec::new();
    for plan in plans {
        let path = shown(root, &plan.path);
        let others: Vec<&FileEdit> = match ask {
            Ask::Span(span, _) if !named.contains(&plan.path) => plan
                .later
                .iter()
                .filter(|e| !span.is_its(&e.session))
                .collect(),
            _ => Vec::new(),
        };
        let changed_since: Vec<String> = others.iter().map(|e| handles.of(&e.session)).collect();
        let action = if !changed_since.is_empty() {
            Action::ChangedSince
        } else if plan.now == plan.then {
            Action::Unchanged
        } else if plan.then.is_none() {
            Action::Delete
        } else if plan.now.is_none() {
            Action::Create
        } else {
            Action::Write
        };
        if !plan.unexplained.is_empty() && !force && action != Action::ChangedSince {
            refused.push((path.clone(), plan.unexplained.clone()));
        }
        out.push(Planned {
            edits: plan.applied.clone(),
            diff: diff(&path, &plan),
            path,
            action,
            certain: plan.certain,
            unexplained: plan.unexplained.clone(),
            changed_since,
            plan,
        });
    }
    if !refused.is_empty() {
        let lines: Vec<String> = refused
            .iter()
            .flat_map(|(p, ls)| ls.iter().map(move |(n, t)| format!("  {p}:{n}: {t}")))
            .collect();
        return Err(CliError::user(format!(
            "{} the record cannot explain (typed by hand, or written by a command it does not hold); a restore would lose them:\n{}",
            crate::reads::ladder::noun(lines.len() as i64, "line"),
            lines.join("\n")
        ))
        .hint("Commit or save them first, or run it again with --force (the file's content now is kept in the ledger first)."));
    }
    Ok((label, out))
}

fn plan_one(
    views: &Views,
    wanted: &crate::reads::files::Wanted,
    moment: &Moment,
    typed: &str,
) -> Result<FilePlan, CliError> {
    plan_file(views, wanted, moment).map_err(|e| match e {
        PlanError::Moment(e) => moment_error(views, e),
        PlanError::NotText => CliError::user(format!("{typed} is not a text file"))
            .hint("Restore rebuilds text files from their recorded edits."),
        PlanError::NoRecord => CliError::not_found(format!("no recorded edit touched {typed}"))
            .hint("The repository's own history (git restore, jj restore) brings back files no session edited."),
        PlanError::Unknown => CliError::user(format!("the record cannot tell what {typed} held then"))
            .hint("It is in no git or jj repository, no whole write of the file precedes that moment, and the edits since cannot be undone from its text now."),
    })
}

/// `typed` as a file inside `root`, refused when it (or, through a symlink, what it points
/// to) lies outside.
fn inside(ctx: &Ctx, root: &Path, typed: &str) -> Result<crate::reads::files::Wanted, CliError> {
    let wanted = crate::cli::shared::wanted(ctx, typed);
    let abs = PathBuf::from(&wanted.abs);
    // The nearest folder that exists, with its symlinks resolved: a path not there yet is
    // written under it.
    let mut existing = abs.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        let Some(parent) = existing.parent() else {
            break;
        };
        rest.push(existing.file_name().unwrap_or_default().to_owned());
        existing = parent;
    }
    let mut real = std::fs::canonicalize(existing).unwrap_or_else(|_| existing.to_path_buf());
    real.extend(rest.iter().rev());
    if !real.starts_with(root) || rest.iter().any(|c| c == "..") {
        return Err(CliError::user(format!(
            "{typed} is outside {} : restore writes only inside it",
            root.display()
        ))
        .hint("Run it from the project the file belongs to."));
    }
    if abs.is_dir() {
        return Err(CliError::user(format!("{typed} is a directory"))
            .hint("Name its files, or use --session SESSION --before for a session's files."));
    }
    Ok(crate::reads::files::Wanted {
        abs: real.to_string_lossy().into_owned(),
        dir: false,
        ..wanted
    })
}

fn shown(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

fn describe(moment: &Moment, handles: &Handles) -> String {
    match moment {
        Moment::Instant(ms) => format!("as at {}", crate::vocab::time::format_iso_ms(*ms)),
        Moment::After(id) => format!("as just after {}:{}", handles.of(&id.session), id.seq),
        Moment::Before(id) => format!("as just before {}:{}", handles.of(&id.session), id.seq),
        Moment::EndOf(s) => format!("as at the end of session {}", handles.of(s)),
    }
}

/// The unified diff from the file now to the file restored.
fn diff(path: &str, plan: &FilePlan) -> String {
    let text = |b: &Option<Vec<u8>>| {
        b.as_deref()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .unwrap_or_default()
    };
    let (old, new) = (text(&plan.now), text(&plan.then));
    let from = match plan.now {
        Some(_) => format!("a/{path}"),
        None => "/dev/null".to_string(),
    };
    let to = match plan.then {
        Some(_) => format!("b/{path}"),
        None => "/dev/null".to_string(),
    };
    similar::TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(3)
        .header(&from, &to)
        .to_string()
}

fn print_plan(ctx: &Ctx, label: &str, planned: &[Planned]) -> Result<(), CliError> {
    let ui = &ctx.ui;
    let mut out = ui.out();
    writeln!(out, "{}", ui.bold(&format!("== restore {label} ==")))?;
    for p in planned {
        let said = match p.action {
            Action::Write => "rewritten".to_string(),
            Action::Create => "brought back".to_string(),
            Action::Delete => "deleted (it did not exist then)".to_string(),
            Action::Unchanged => "unchanged (it already holds that)".to_string(),
            Action::ChangedSince => format!(
                "left alone: changed since by {} (name it to restore it anyway)",
                p.changed_since.join(", ")
            ),
        };
        writeln!(out, "{}", ui.safe(&format!("{}: {said}", p.path)))?;
        if !p.certain {
            writeln!(
                out,
                "  (some lines are uncertain: `peat blame {} --at …` shows which)",
                ui.safe(&p.path)
            )?;
        }
        if matches!(p.action, Action::Write | Action::Create | Action::Delete) {
            write!(out, "{}", ui.safe(&p.diff))?;
        }
    }
    out.finish()?;
    Ok(())
}

fn print_json(
    label: &str,
    planned: &[Planned],
    session: Option<&SessionId>,
) -> Result<(), CliError> {
    let doc = serde_json::json!({
        "moment": label,
        "files": planned,
        "applied": session.is_some(),
        "restore": session,
    });
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, &doc).map_err(std::io::Error::from)?;
    writeln!(out)?;
    Ok(())
}

/// `--yes`, or a `y` typed at a terminal.
fn confirmed(ctx: &Ctx, yes: bool) -> Result<bool, CliError> {
    if yes {
        return Ok(true);
    }
    if ctx.json || !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Ok(false);
    }
    eprint!("Apply this restore? [y/N] ");
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

/// A session id for this restore no recorded session has.
fn restore_session(views: &Views, now_ms: i64) -> Result<SessionId, CliError> {
    let base = format!("{RESTORE_PREFIX}{now_ms:013}");
    let mut id = SessionId(base.clone());
    let mut n = 2;
    while views.tables.session(&id)?.is_some() {
        id = SessionId(format!("{base}-{n}"));
        n += 1;
    }
    Ok(id)
}

fn read_now(path: &Path) -> Result<Option<Vec<u8>>, CliError> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The restore as events of its own session: the command as its prompt, then per file a
/// `restore` tool call, its output holding the file's bytes before (when there was a file),
/// and the touch that wrote it.
fn record(
    ctx: &Ctx,
    session: &SessionId,
    root: &Path,
    command: &str,
    label: &str,
    writes: &[&Planned],
) -> WriteSet {
    let mut set = WriteSet::default();
    let ts = ctx.now_ms;
    let mut put = |seq: Seq, kind: Event| set.event(seq, Envelope::new(session.clone(), ts, kind));
    put(
        Seq::at_line(0, 0),
        Event::SessionMeta {
            cwd: root.to_string_lossy().into_owned(),
            branch: None,
            agent: Some(Agent::Peat),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
            parent: None,
            subagent: None,
        },
    );
    put(
        Seq::at_line(1, 0),
        Event::UserMsg {
            text: command.to_string(),
            harness: false,
            context: None,
        },
    );
    let mut blobs: Vec<(BlobId, Vec<u8>)> = Vec::new();
    for (k, p) in writes.iter().enumerate() {
        let line = 2 + k as u64;
        let call = Seq::at_line(line, 0);
        let path = p.plan.path.to_string_lossy().into_owned();
        put(
            call,
            Event::ToolCall {
                tool: TOOL.to_string(),
                detail: format!("{} {label}", p.path),
                ok: true,
                agent: None,
            },
        );
        let before = p.plan.now.as_ref().map(|bytes| {
            let id = BlobId::of(bytes);
            blobs.push((id, bytes.clone()));
            id
        });
        let bytes = p.plan.now.as_ref().map_or(0, |b| b.len() as u64);
        put(
            Seq::at_line(line, 1),
            Event::ToolOutput {
                call,
                excerpt: match before {
                    Some(_) => format!("kept its {bytes} bytes before the restore"),
                    None => "there was no file".to_string(),
                },
                output: before,
                bytes,
            },
        );
        let (op, change) = match (&p.plan.then, &p.plan.now) {
            (None, _) => (TouchOp::PatchDelete, Change::Delete),
            (Some(then), now) => {
                let content = String::from_utf8_lossy(then).into_owned();
                let before = match now {
                    Some(now) => Before::between(&String::from_utf8_lossy(now), &content),
                    None => Before::Nothing,
                };
                (
                    TouchOp::Write,
                    Change::Write {
                        content,
                        before: Some(before),
                    },
                )
            }
        };
        let (id, bytes) = change.to_blob();
        blobs.push((id, bytes));
        put(
            Seq::at_line(line, 2),
            Event::FileTouch {
                path,
                op,
                change: Some(id),
                failed: false,
                more: Vec::new(),
                restores: Some(p.plan.to.clone()),
                model: None,
            },
        );
    }
    set.blobs = blobs;
    set
}

/// Write `plan.then` in place of the file, atomically: a temporary file in the same folder,
/// with the file's permissions, renamed over it; or delete it.
fn apply(plan: &FilePlan) -> std::io::Result<()> {
    let path = &plan.path;
    let Some(then) = &plan.then else {
        return match std::fs::remove_file(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            r => r,
        };
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".peat-restore-")
        .tempfile_in(dir)?;
    tmp.write_all(then)?;
    tmp.as_file().sync_all()?;
    if let Ok(meta) = std::fs::metadata(path) {
        std::fs::set_permissions(tmp.path(), meta.permissions())?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
