use clap::Args;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::capture::{self, CaptureError, CaptureOptions, Place};
use crate::cli::ctx::Ctx;
use crate::cli::error::{CliError, EXIT_ERROR};
use crate::cli::scope::Project;
use crate::cli::sweep::Index;
use crate::cli::transcripts::{Found, of_project};
use crate::ledger::{Ledger, Mode, Written};
use crate::redact::StoreRedactor;

/// Capture every transcript on this machine (or under the given folders)
///
/// Without folders, reads ~/.claude/projects (or $CLAUDE_CONFIG_DIR/projects),
/// ~/.codex/sessions and ~/.codex/archived_sessions (or under $CODEX_HOME),
/// ~/.cursor/projects, ~/.copilot/session-state, ~/.pi/agent/sessions (or
/// $PI_CODING_AGENT_DIR/sessions), ~/.qwen/projects (or under $QWEN_RUNTIME_DIR or
/// $QWEN_HOME), ~/.factory/sessions, Gemini CLI's ~/.gemini/tmp (or
/// $GEMINI_CLI_HOME/.gemini/tmp), OpenCode's ~/.local/share/opencode/opencode.db and
/// storage/session (or under $XDG_DATA_HOME), Goose's ~/.local/share/goose/sessions/sessions.db
/// (or under $XDG_DATA_HOME or $GOOSE_PATH_ROOT/data), this project's Crush database,
/// .crush/crush.db, Cline's tasks (~/.cline/data/tasks, or under $CLINE_DATA_DIR or
/// $CLINE_DIR/data, and the VS Code extension's globalStorage/saoudrizwan.claude-dev/tasks),
/// Amp's threads (~/.local/share/amp/threads, or under $XDG_DATA_HOME, and the VS Code
/// extension's globalStorage/sourcegraph.amp/threads3), and this repository's
/// .aider.chat.history.md (in its main checkout and each worktree). Idempotent and
/// incremental: a transcript already captured is only read from where it was left, and one
/// whose length and modification time are as the last import (or hook's sweep) saw them is
/// not opened. Into a repository's own ledger it
/// captures only that project's sessions (its worktrees and jj workspaces included; of a
/// database holding many projects' sessions, those whose folder is in it) unless given
/// --all; a user-level ledger (`peat setup --user`) takes every project's.
#[derive(Args, Debug)]
pub(crate) struct ImportArgs {
    /// Folders to search for transcripts (*.jsonl, *.jsonl.zst, Gemini CLI's
    /// chats/session-*.json, opencode.db, Goose's sessions/sessions.db, crush.db, Cline's
    /// api_conversation_history.json, Amp's threads/T-*.json, .aider.chat.history.md),
    /// recursively
    #[arg(value_name = "DIR")]
    pub(crate) dirs: Vec<PathBuf>,
    /// Every project's sessions, even into this repository's own ledger
    #[arg(long)]
    pub(crate) all: bool,
}

/// How often a long import makes what it wrote durable (the journal, not its tables).
const SYNC_EVERY: Duration = Duration::from_secs(1);

pub(crate) fn run(ctx: &Ctx, args: &ImportArgs) -> Result<u8, CliError> {
    let roots = if args.dirs.is_empty() {
        default_roots(ctx)
    } else {
        for d in &args.dirs {
            if !d.is_dir() {
                return Err(
                    CliError::user(format!("{} is not a folder", d.display())).hint(
                        "Give folders that hold transcripts, or no argument for the usual places.",
                    ),
                );
            }
        }
        args.dirs.clone()
    };
    let done = if args.dirs.is_empty() {
        // The known roots are swept: only what changed since the last sweep is read.
        import_files(ctx, Importing::Known { all: args.all })?
    } else {
        let mut found = Found::default();
        for root in &roots {
            found.walk(root);
        }
        let project = taken_project(ctx, args.all);
        let (found, elsewhere) = this_projects(found, project.as_ref());
        let mut done = import_files(ctx, Importing::Files(found, project.as_ref()))?;
        done.elsewhere += elsewhere;
        done
    };
    ctx.ui.note(&done.line());
    if done.elsewhere > 0 {
        ctx.ui.note(&format!(
            "left out {} of other projects: this is {}'s own ledger; `peat import --all` takes them too, or `peat setup --user` keeps every project in one user-level ledger",
            crate::reads::ladder::noun(done.elsewhere as i64, "session"),
            ctx.location.root.as_deref().unwrap_or(&ctx.cwd).display()
        ));
    }
    // A folder that could not be read may hold transcripts: "none found" would be a guess.
    if done.files == 0 && done.unreadable == 0 && done.unchanged == 0 {
        let looked: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
        ctx.ui
            .note(&format!("no transcripts found under {}", looked.join(", ")));
    }
    Ok(if done.failed > 0 || done.unreadable > 0 {
        EXIT_ERROR
    } else {
        0
    })
}

/// Every transcript under the known roots, OpenCode's database among them.
fn known_transcripts(ctx: &Ctx) -> Found {
    let mut found = Found::default();
    for root in default_roots(ctx) {
        found.walk(&root);
    }
    // OpenCode's data folder also holds its snapshots (whole git stores): its database
    // is taken by name, never found by walking there.
    let db = ctx.opencode_data.join(crate::cli::transcripts::OPENCODE_DB);
    if db.is_file() {
        found.files.push(db);
    }
    found.files.extend(named_databases(ctx));
    found.files.extend(aider_histories(ctx));
    found
}

/// The project whose sessions this ledger takes: a repository's own ledger takes that
/// project's unless `all`; any other ledger (`None`) every project's.
fn taken_project(ctx: &Ctx, all: bool) -> Option<Project> {
    if all || !ctx.location.reason.project_own() {
        return None;
    }
    ctx.location.root.as_deref().and_then(Project::of)
}

/// The transcripts of `found` that `project` takes (all of them for none), and how many
/// of other projects it leaves out.
fn this_projects(found: Found, project: Option<&Project>) -> (Found, usize) {
    match project {
        Some(project) => of_project(found, project),
        None => (found, 0),
    }
}

/// Sweep the known roots into the open `ledger`: every transcript that changed since the
/// last sweep (by a stat of each), of this ledger's projects unless `all`. What the hook's
/// capture runs after the transcripts it was given, so a session no hook announced is
/// caught up by the next one that fires.
pub(crate) fn sweep(
    ctx: &Ctx,
    ledger: &mut Ledger,
    redactor: &StoreRedactor,
    all: bool,
) -> Result<Imported, CliError> {
    let mut index = Index::load(ledger)?;
    let known = known_transcripts(ctx);
    let seen = known.files.len();
    let changed = index.changed(known, all);
    let before: Vec<PathBuf> = changed.files.clone();
    let project = taken_project(ctx, all);
    let (found, elsewhere) = this_projects(changed, project.as_ref());
    // Another project's transcript is not read again until it changes (or `--all` asks).
    for file in before.iter().filter(|f| !found.files.contains(f)) {
        index.leave_out(file);
    }
    let mut done = Imported {
        elsewhere,
        unchanged: seen - before.len(),
        ..Imported::default()
    };
    let project = project.as_ref();
    capture_each(
        ctx,
        ledger,
        redactor,
        found,
        project,
        &mut done,
        Some(&mut index),
    )?;
    index.save(ledger, redactor)?;
    Ok(done)
}

/// What [`import_files`] did.
#[derive(Debug, Default)]
pub(crate) struct Imported {
    pub(crate) files: usize,
    pub(crate) not_transcripts: usize,
    pub(crate) failed: usize,
    pub(crate) sessions: usize,
    pub(crate) events: usize,
    pub(crate) written: Written,
    pub(crate) skipped: u64,
    /// Folders the walk could not read (each warned about).
    pub(crate) unreadable: usize,
    /// Transcripts of other projects left out.
    pub(crate) elsewhere: usize,
    /// Transcripts a sweep did not read: unchanged since the last one.
    pub(crate) unchanged: usize,
}

impl Imported {
    /// `imported 3 transcripts (3 sessions): 161 events (161 new, 0 revised)` and what
    /// was skipped.
    pub(crate) fn line(&self) -> String {
        let mut line = format!(
            "imported {} transcripts ({} sessions): {} events ({} new, {} revised)",
            self.files - self.not_transcripts,
            self.sessions,
            self.events,
            self.written.new,
            self.written.replaced
        );
        if self.skipped > 0 {
            line.push_str(&format!("; {} bad lines skipped", self.skipped));
        }
        if self.not_transcripts > 0 {
            line.push_str(&format!(
                "; {} files were not transcripts",
                self.not_transcripts
            ));
        }
        if self.failed > 0 {
            line.push_str(&format!("; {} files could not be read", self.failed));
        }
        if self.unreadable > 0 {
            line.push_str(&format!("; {} folders could not be read", self.unreadable));
        }
        if self.unchanged > 0 {
            line.push_str(&format!(
                "; {} unchanged since the last import",
                self.unchanged
            ));
        }
        line
    }
}

/// What an import reads.
pub(crate) enum Importing<'a> {
    /// These files, each database's sessions only where `project` holds them when it is
    /// given (the files themselves are chosen already).
    Files(Found, Option<&'a Project>),
    /// The known roots, swept: this ledger's project's sessions, every project's for `all`.
    Known { all: bool },
}

/// Capture what is being imported into one open ledger, then bring the views up to date.
///
/// The ledger stays open for the whole import: every opening replays fjall's journal (up to
/// 64 MB), and reopening it every second to let hooks in cost a third of the import's CPU on
/// a busy machine while letting nobody in (the lock was taken back within microseconds, and
/// flock is not fair). A hook waits for the import as it waits for any capture.
pub(crate) fn import_files(ctx: &Ctx, what: Importing<'_>) -> Result<Imported, CliError> {
    let redactor = ctx.redactor();
    let mut ledger = ctx.open(Mode::Create)?;
    let done = match what {
        Importing::Known { all } => sweep(ctx, &mut ledger, &redactor, all)?,
        Importing::Files(found, project) => {
            let mut done = Imported::default();
            capture_each(ctx, &mut ledger, &redactor, found, project, &mut done, None)?;
            done
        }
    };
    ledger.sync()?;
    crate::cli::shared::catch_up_views(ctx, &ledger, ctx.model_slot()?)?;
    Ok(done)
}

/// Capture the `found` files (sorted first) into the open ledger, a database's sessions
/// only where `project` holds them when it is given, making what was written durable every
/// second, counting into `done`; each file captured (or found to be no transcript) is
/// settled in the sweep's `index`, and a database whose capture left out other projects'
/// sessions is kept as left out (read again when it changes, or for `--all`). A folder or
/// file that cannot be read is reported on stderr and counted; the rest go on.
fn capture_each(
    ctx: &Ctx,
    ledger: &mut Ledger,
    redactor: &StoreRedactor,
    found: Found,
    project: Option<&Project>,
    done: &mut Imported,
    mut index: Option<&mut Index>,
) -> Result<(), CliError> {
    for unreadable in &found.unreadable {
        ctx.ui.warn(&format!("cannot read {unreadable}"));
    }
    let mut files = found.files;
    files.sort();
    files.dedup();
    let bar = ctx.ui.progress(files.len() as u64, "importing");
    let opts = CaptureOptions {
        place: project.map(place_of),
        ..CaptureOptions::default()
    };
    done.files += files.len();
    done.unreadable += found.unreadable.len();
    let mut sessions = std::collections::BTreeSet::new();
    let mut synced = Instant::now();
    for file in &files {
        if synced.elapsed() > SYNC_EVERY {
            ledger.sync()?;
            synced = Instant::now();
        }
        // Whether the file is done with, and whether sessions of it were left out.
        let settled = match capture::capture_file(ledger, redactor, file, &opts) {
            Ok(r) => {
                done.written += r.written;
                done.events += r.events;
                done.skipped += r.skipped;
                done.elsewhere += r.left_out;
                sessions.extend(r.session.into_iter().chain(r.others));
                Some(r.left_out > 0)
            }
            Err(CaptureError::NotATranscript(_)) => {
                done.not_transcripts += 1;
                Some(false)
            }
            // The store failing (busy, full, damaged) stops the import; a bad file does not.
            Err(e @ (CaptureError::Ledger(_) | CaptureError::Redact(_))) => return Err(e.into()),
            Err(e) => {
                let e = CliError::from(e);
                done.failed += 1;
                match &bar {
                    Some(b) => b.suspend(|| crate::cli::ui::stderr_line(&e.to_string())),
                    None => crate::cli::ui::stderr_line(&e.to_string()),
                }
                None
            }
        };
        match (settled, index.as_deref_mut()) {
            (Some(false), Some(index)) => index.settle(file),
            (Some(true), Some(index)) => index.leave_out(file),
            _ => {}
        }
        if let Some(b) = &bar {
            b.inc(1);
        }
    }
    done.sessions += sessions.len();
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(())
}

/// The place a database's sessions are taken from in `project`'s own ledger: its folders,
/// its worktrees and jj workspaces.
fn place_of(project: &Project) -> Place {
    let project = project.clone();
    let seen = RefCell::new(HashMap::new());
    Place::new(move |dir| project.holds(dir, &mut seen.borrow_mut()))
}

/// The databases of harnesses whose folders are not walked: Goose's (beside its backups),
/// and Crush's in this project (`.crush/crush.db`: Crush keeps one in each project).
fn named_databases(ctx: &Ctx) -> Vec<PathBuf> {
    let project = ctx.location.root.as_deref().unwrap_or(&ctx.cwd);
    [
        ctx.goose_sessions.join(crate::cli::transcripts::GOOSE_DB),
        project
            .join(crate::capture::crush::DATA_DIR)
            .join(crate::capture::crush::DB),
    ]
    .into_iter()
    .filter(|p| p.is_file())
    .collect()
}

/// Aider keeps its history in the folder it ran in, the repository's root: this
/// project's (the ledger's, else the current folder's), in its main checkout and each
/// worktree, each once however its path is spelled.
fn aider_histories(ctx: &Ctx) -> Vec<PathBuf> {
    let dir = ctx.location.root.as_deref().unwrap_or(&ctx.cwd);
    let Some(project) = Project::of(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = Vec::new();
    for root in &project.roots {
        let file = root.join(crate::capture::aider::HISTORY_FILE);
        let real = std::fs::canonicalize(&file).ok();
        let seen = files.iter().any(|f| std::fs::canonicalize(f).ok() == real);
        if real.is_some() && !seen {
            files.push(file);
        }
    }
    files
}

fn default_roots(ctx: &Ctx) -> Vec<PathBuf> {
    [
        ctx.claude_home.join("projects"),
        ctx.codex_home.join("sessions"),
        ctx.codex_home.join("archived_sessions"),
        ctx.cursor_home.join("projects"),
        ctx.copilot_home.join("session-state"),
        ctx.pi_dir.join("sessions"),
        ctx.qwen_dir.join("projects"),
        ctx.factory_home.join("sessions"),
        ctx.gemini_home.join("tmp"),
        // OpenCode's sessions before 1.2; the rest of its storage is messages and parts,
        // read from each session.
        ctx.opencode_data.join("storage/session"),
    ]
    .into_iter()
    .chain(ctx.cline_dirs.iter().map(|d| d.join("tasks")))
    .chain(ctx.amp_dirs.iter().cloned())
    .filter(|p| p.is_dir())
    .collect()
}
