//! What every command works with, resolved once from the process and its environment: the
//! store, "now", the time zone, the lock wait, where the harnesses keep their files. Nothing
//! below this module reads those settings from the environment itself.

use std::path::PathBuf;
use std::time::Duration;

use crate::cli::error::CliError;
use crate::cli::scope::{Scope, ScopeArgs};
use crate::cli::ui::Ui;
use crate::ledger::{self, Access, Ledger, Location, Mode};
use crate::redact::StoreRedactor;
use crate::views::{ModelSlot, Views};

/// How long a writer waits for the lock unless `PEAT_LOCK_WAIT_SECS` says otherwise.
const DEFAULT_LOCK_WAIT_SECS: u64 = 120;

/// What every command works with, resolved once: no verb reads the environment itself.
#[derive(Clone)]
pub(crate) struct Ctx {
    pub(crate) ui: Ui,
    pub(crate) json: bool,
    pub(crate) cwd: PathBuf,
    pub(crate) home: Option<PathBuf>,
    pub(crate) location: Location,
    /// The sessions every read answers from (see [`crate::cli::scope`]).
    pub(crate) scope: Scope,
    /// "Now", read once here (or pinned by `PEAT_NOW` for reproducible output).
    pub(crate) now_ms: i64,
    pub(crate) lock_wait: Duration,
    /// What this process is doing, for the lock's holder line.
    pub(crate) who: String,
    /// The command line as given: a read's last line repeats it with what shows more.
    pub(crate) argv: Vec<String>,
    /// The time zone calendar days are counted in.
    pub(crate) tz: jiff::tz::TimeZone,
    /// Where Claude Code keeps its files: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
    pub(crate) claude_home: PathBuf,
    /// Where Codex keeps its files: `$CODEX_HOME`, else `~/.codex`.
    pub(crate) codex_home: PathBuf,
    /// Where Cursor keeps its files: `~/.cursor` (it reads no variable to move them).
    pub(crate) cursor_home: PathBuf,
    /// Where Copilot CLI keeps its files: `~/.copilot`.
    pub(crate) copilot_home: PathBuf,
    /// Where Pi's coding agent keeps its files: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`.
    pub(crate) pi_dir: PathBuf,
    /// Where Factory droid keeps its files: `~/.factory` (it reads no variable to move them).
    pub(crate) factory_home: PathBuf,
    /// Where Qwen Code keeps its sessions: `$QWEN_RUNTIME_DIR`, else `$QWEN_HOME`, else
    /// `~/.qwen` (qwen-code's `Storage.getRuntimeBaseDir`).
    pub(crate) qwen_dir: PathBuf,
    /// Where Gemini CLI keeps its files: `$GEMINI_CLI_HOME/.gemini` (the variable stands for
    /// the home folder, as the harness reads it), else `~/.gemini`.
    pub(crate) gemini_home: PathBuf,
    /// Where OpenCode keeps its database: `$XDG_DATA_HOME/opencode`, else
    /// `~/.local/share/opencode`.
    pub(crate) opencode_data: PathBuf,
    /// Where Goose keeps its sessions database: `$GOOSE_PATH_ROOT/data/sessions` when that
    /// is an absolute path, else `$XDG_DATA_HOME/goose/sessions`, else
    /// `~/.local/share/goose/sessions`.
    pub(crate) goose_sessions: PathBuf,
    /// Where Cline keeps its tasks: the CLI's data folder (`$CLINE_DATA_DIR`, else
    /// `$CLINE_DIR/data`, else `~/.cline/data`) and the VS Code extension's global storage
    /// (`saoudrizwan.claude-dev`, where VS Code keeps it on Linux and on macOS).
    pub(crate) cline_dirs: Vec<PathBuf>,
    /// Where Amp kept its threads: `$XDG_DATA_HOME/amp/threads`, else
    /// `~/.local/share/amp/threads`, and the VS Code extension's older
    /// `globalStorage/sourcegraph.amp/threads3` (on Linux and on macOS).
    pub(crate) amp_dirs: Vec<PathBuf>,
    /// `$PEAT_BRIEF_BUDGET` as given: bare `peat` does not go through clap's env handling.
    pub(crate) brief_budget: Option<String>,
    /// Where the pinned model and runtime are looked for (`PEAT_DATA_DIR`, XDG, a build's
    /// built-in copy).
    pub(crate) model_lookup: crate::embed::Lookup,
    /// The interpreter that runs pip: `$PEAT_PYTHON`, else `python3`.
    pub(crate) python: std::ffi::OsString,
    /// `PEAT_NOW` named a valid instant: `now_ms` is pinned, and detached work is given it.
    pub(crate) now_pinned: bool,
    /// Capture-time redaction is on (`PEAT_REDACT=off`, a benchmark switch, turns it off).
    pub(crate) redact: bool,
    /// This binary, if it is still where it ran from (an upgrade may have replaced it);
    /// else `peat` on PATH.
    pub(crate) exe: PathBuf,
    /// `$PATH`, `$NIX_STORE_DIR` and `$USER`: where a hook command finds a stable name for
    /// this binary (see `hook::install::stable_exe`).
    pub(crate) path_var: Option<std::ffi::OsString>,
    pub(crate) nix_store_dir: Option<PathBuf>,
    pub(crate) user: Option<String>,
    /// Claude Code set `CLAUDE_PROJECT_DIR`: a hook without a transcript is still Claude's.
    pub(crate) claude_hook_env: bool,
    /// This process is a hook's detached work, its stderr going to the hook log (see
    /// `ui::LOG_TAG_VAR`): what it starts in turn writes there too.
    pub(crate) in_hook_log: bool,
    /// `PEAT_EMBED_IDLE_SECS`: whether searches use a resident embedder, and how long one
    /// waits for a search.
    pub(crate) residency: crate::embed::resident::Residency,
}

impl Ctx {
    /// Resolve the context; an invalid environment value is an error.
    pub(crate) fn resolve(
        json: bool,
        budget: Option<usize>,
        scope: &ScopeArgs,
    ) -> Result<Ctx, CliError> {
        let (ctx, mut problems) = Ctx::resolve_lenient(json, budget, scope)?;
        match problems.is_empty() {
            true => Ok(ctx),
            false => Err(problems.remove(0)),
        }
    }

    /// Resolve the context, taking the default for an invalid environment value and
    /// returning what was wrong: a hook must still run, and say so in its log. `budget` is
    /// `--budget` (or `PEAT_BUDGET`, which clap reads for it).
    pub(crate) fn resolve_lenient(
        json: bool,
        budget: Option<usize>,
        scope: &ScopeArgs,
    ) -> Result<(Ctx, Vec<CliError>), CliError> {
        let mut problems = Vec::new();
        let cwd = std::env::current_dir()
            .map_err(|e| CliError::user(format!("cannot read the current directory: {e}")))?;
        let env_db = std::env::var_os("PEAT_DB").map(PathBuf::from);
        let model_lookup = crate::embed::Lookup::from_process();
        // The user-level ledger sits in peat's data directory, beside the model.
        let user_store = model_lookup.data_dir.as_ref().map(|d| d.join("db"));
        let location = ledger::locate(&cwd, env_db.as_deref(), user_store.as_deref());
        let scope = Scope::resolve(scope, &location, &cwd)?;
        let now = jiff::Timestamp::now().as_millisecond();
        let pinned = match std::env::var("PEAT_NOW") {
            Ok(s) => crate::vocab::time::parse_iso_ms(&s).or_else(|| {
                problems.push(
                    CliError::user(format!("PEAT_NOW is not an ISO-8601 instant: {s:?}"))
                        .hint("Use a form like 2026-08-10T19:18:11Z, or unset it."),
                );
                None
            }),
            Err(_) => None,
        };
        let now_ms = pinned.unwrap_or(now);
        let lock_wait = match std::env::var("PEAT_LOCK_WAIT_SECS") {
            Ok(s) => Duration::from_secs(s.trim().parse().unwrap_or_else(|_| {
                problems.push(
                    CliError::user(format!(
                        "PEAT_LOCK_WAIT_SECS is not a number of seconds: {s:?}"
                    ))
                    .hint("Set it to a whole number like 30, or unset it for the default (120)."),
                );
                DEFAULT_LOCK_WAIT_SECS
            })),
            Err(_) => Duration::from_secs(DEFAULT_LOCK_WAIT_SECS),
        };
        // `args()` would panic on a word that is not UTF-8 (a file's name may not be).
        let argv: Vec<String> = std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let who: Vec<String> = argv.iter().take(3).cloned().collect();
        let residency = crate::embed::resident::Residency::from_process().unwrap_or_else(|e| {
            problems.push(CliError::user(e).hint(
                "Set it to a whole number of seconds (0 turns the resident embedder off), or unset it for the default (900).",
            ));
            crate::embed::resident::Residency::default()
        });
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let dir = |k: &str, default: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .unwrap_or_else(|| home.clone().unwrap_or_default().join(default))
        };
        let ctx = Ctx {
            claude_home: dir("CLAUDE_CONFIG_DIR", ".claude"),
            codex_home: dir("CODEX_HOME", ".codex"),
            cursor_home: home.clone().unwrap_or_default().join(".cursor"),
            copilot_home: home.clone().unwrap_or_default().join(".copilot"),
            pi_dir: dir("PI_CODING_AGENT_DIR", ".pi/agent"),
            factory_home: home.clone().unwrap_or_default().join(".factory"),
            qwen_dir: std::env::var_os("QWEN_RUNTIME_DIR")
                .filter(|v| !v.is_empty())
                .map_or_else(|| dir("QWEN_HOME", ".qwen"), PathBuf::from),
            gemini_home: dir("GEMINI_CLI_HOME", "").join(".gemini"),
            opencode_data: dir("XDG_DATA_HOME", ".local/share").join("opencode"),
            goose_sessions: std::env::var_os("GOOSE_PATH_ROOT")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map_or_else(
                    || dir("XDG_DATA_HOME", ".local/share").join("goose"),
                    |root| root.join("data"),
                )
                .join("sessions"),
            cline_dirs: {
                let home = home.clone().unwrap_or_default();
                let cli = std::env::var_os("CLINE_DATA_DIR")
                    .filter(|v| !v.is_empty())
                    .map_or_else(|| dir("CLINE_DIR", ".cline").join("data"), PathBuf::from);
                let extension = ["User/globalStorage", "saoudrizwan.claude-dev"].join("/");
                vec![
                    cli,
                    home.join(".config/Code").join(&extension),
                    home.join("Library/Application Support/Code")
                        .join(&extension),
                ]
            },
            amp_dirs: {
                let home = home.clone().unwrap_or_default();
                let extension = "User/globalStorage/sourcegraph.amp/threads3";
                vec![
                    dir("XDG_DATA_HOME", ".local/share").join("amp/threads"),
                    home.join(".config/Code").join(extension),
                    home.join("Library/Application Support/Code")
                        .join(extension),
                ]
            },
            brief_budget: std::env::var("PEAT_BRIEF_BUDGET").ok(),
            model_lookup,
            python: std::env::var_os("PEAT_PYTHON")
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| "python3".into()),
            ui: Ui::detect(
                std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
                    || std::env::var("TERM").is_ok_and(|t| t == "dumb"),
                std::env::var("COLUMNS").ok().as_deref(),
                budget,
                &argv,
            ),
            json,
            cwd,
            home,
            location,
            scope,
            now_ms,
            lock_wait,
            who: who.join(" "),
            argv,
            tz: crate::vocab::time::system_zone(std::env::var_os("TZ").as_deref()),
            now_pinned: pinned.is_some(),
            redact: std::env::var(crate::redact::SWITCH_ENV).map_or(true, |v| v.trim() != "off"),
            exe: std::env::current_exe()
                .ok()
                .filter(|p| p.is_file())
                .unwrap_or_else(|| PathBuf::from("peat")),
            path_var: std::env::var_os("PATH"),
            nix_store_dir: std::env::var_os("NIX_STORE_DIR").map(PathBuf::from),
            user: std::env::var("USER").ok().filter(|u| !u.is_empty()),
            claude_hook_env: std::env::var_os("CLAUDE_PROJECT_DIR").is_some(),
            in_hook_log: std::env::var_os(crate::cli::ui::LOG_TAG_VAR).is_some(),
            residency,
        };
        Ok((ctx, problems))
    }

    /// This context with the user-level ledger for its store, read whole: what
    /// `peat setup --user` makes and fills. `None` when there is no data directory (no HOME).
    pub(crate) fn at_user_store(&self) -> Option<Ctx> {
        let user = self.location.user.clone()?;
        let mut ctx = self.clone();
        ctx.location.store = user;
        ctx.location.reason = ledger::locate::Reason::User;
        ctx.scope = Scope::whole(self.scope.agent);
        Some(ctx)
    }

    /// This command again with `flag value` (a switch: `None`) in place of its own: the
    /// command a list's last line gives for the rest.
    pub(crate) fn rerun(&self, flag: &str, value: Option<&str>) -> String {
        crate::cli::budget::rerun(&self.argv, flag, value)
    }

    /// Open the ledger, waiting for the lock as configured.
    /// The redactor for what this process writes into the store (off under
    /// [`crate::redact::SWITCH_ENV`]).
    pub(crate) fn redactor(&self) -> StoreRedactor {
        if self.redact {
            StoreRedactor::new(&self.location.store)
        } else {
            StoreRedactor::off(&self.location.store)
        }
    }

    pub(crate) fn open(&self, mode: Mode) -> Result<Ledger, CliError> {
        self.somewhere()?;
        let ui = self.ui;
        let wait = self.lock_wait;
        // When the wait began, to say when it ended: a log that only ever says "waiting"
        // reads as a hook that hung.
        let began = std::cell::Cell::new(None);
        let mut on_wait = || {
            if began.get().is_none() {
                began.set(Some(std::time::Instant::now()));
            }
            ui.note(&format!(
                "peat: the ledger is busy (another peat process); waiting up to {}s…",
                wait.as_secs()
            ))
        };
        let ledger = Ledger::open(
            &self.location.store,
            Access {
                mode,
                wait: self.lock_wait,
                who: &self.who,
                on_wait: &mut on_wait,
            },
        )?;
        if let Some(began) = began.get() {
            ui.note(&format!(
                "peat: the ledger is free again after {:.1}s; going on",
                began.elapsed().as_secs_f64()
            ));
        }
        self.opened(ledger, mode)
    }

    /// Refuse to read or make a ledger outside any repository when there is no user-level
    /// one: a ledger made in whatever folder the command ran from would hold sessions no
    /// later command finds. Says where it would go and how to choose.
    pub(crate) fn somewhere(&self) -> Result<(), CliError> {
        if self.location.reason != ledger::locate::Reason::Nowhere
            || ledger::recorded(&self.location.store)
        {
            return Ok(());
        }
        let user = self.location.user.as_ref().map_or_else(
            || "the user's data directory".to_string(),
            |u| u.display().to_string(),
        );
        Err(CliError::user(format!(
            "no ledger here: {} is in no repository, and there is no user-level ledger",
            self.cwd.display()
        ))
        .hint(format!(
            "Run `peat setup --user` to keep one ledger for every project at {user}, or run peat inside a repository (its ledger goes in .peat/db at its root), or set PEAT_DB to a ledger's folder. Nothing was written (it would have gone to {}).",
            self.location.store.display()
        )))
    }

    /// A damaged ledger is mentioned by every read.
    fn warn_damage(&self, ledger: &Ledger) {
        if let Some(damage) = ledger::damage::noted(ledger.path()) {
            self.ui.warn(&format!(
                "the ledger is damaged: {damage}. Answers may miss what the damaged part held; `peat doctor` says what to run."
            ));
        }
    }

    /// Say what a newly locked `ledger` needs said, and bring an older store up to date.
    fn opened(&self, ledger: Ledger, mode: Mode) -> Result<Ledger, CliError> {
        self.warn_damage(&ledger);
        if ledger.tightened > 0 {
            self.ui.note(&format!(
                "peat: the store at {} was open to other users: {} files and folders made private",
                self.location.store.display(),
                ledger.tightened
            ));
        }
        let mut ledger = ledger;
        if mode == Mode::Create && crate::redact::retro::needs_upgrade(&ledger)? {
            let ui = self.ui;
            let mut model = self.model_slot()?;
            ui.note(&crate::redact::retro::upgrade_note(&ledger));
            let r = crate::redact::Redactor::for_store(ledger.path())?;
            crate::redact::retro::run(&mut ledger, &r, &mut model, self.tz.clone(), &mut |l| {
                ui.note(l)
            })?;
        }
        Ok(ledger)
    }
}

impl Ctx {
    /// The embedding model, if installed (loaded only when something needs it), set up
    /// for a few texts at a time.
    pub(crate) fn model_slot(&self) -> Result<ModelSlot, CliError> {
        Ok(ModelSlot::installed(
            crate::embed::Profile::OneShot,
            self.model_lookup.clone(),
            self.residency,
        )?)
    }

    /// The embedding model set up for embedding many texts (the embedding pass).
    pub(crate) fn bulk_model_slot(&self) -> Result<ModelSlot, CliError> {
        Ok(ModelSlot::installed(
            crate::embed::Profile::Bulk,
            self.model_lookup.clone(),
            self.residency,
        )?)
    }

    /// Open the views for a read that needs nothing else: caught up when the store is free;
    /// while a writer holds it, as they stand, saying on stderr how far behind they are.
    /// Only when they cannot be served as they stand (never built, being rebuilt, damaged)
    /// does the read wait for the writer, as [`Ctx::open_views`] does.
    ///
    /// The ledger returned beside the views may lack the store lock: reading its database
    /// then fails at once as busy, never waits. Whole events are read through
    /// [`crate::views::source::EventSource`], which then reads the views' copy of them;
    /// [`Views::behind`] says how far behind the answer is.
    pub(crate) fn read_views(&self) -> Result<(Ledger, Views, ModelSlot), CliError> {
        self.read_views_with(self.model_slot()?)
    }

    /// [`Ctx::read_views`] for a search that will embed `query`: the model loads (or the
    /// resident embedder embeds it) meanwhile, on a thread of its own.
    pub(crate) fn read_views_to_search(
        &self,
        query: &str,
    ) -> Result<(Ledger, Views, ModelSlot), CliError> {
        self.read_views_with(self.prefetched_model(query)?)
    }

    fn read_views_with(
        &self,
        mut model: ModelSlot,
    ) -> Result<(Ledger, Views, ModelSlot), CliError> {
        self.somewhere()?;
        let access = Access {
            mode: Mode::Existing,
            wait: Duration::ZERO,
            who: &self.who,
            on_wait: &mut || {},
        };
        let why = match Ledger::open(&self.location.store, access) {
            Ok(ledger) => {
                let ledger = self.opened(ledger, Mode::Existing)?;
                match self.caught_up(&ledger, &mut model) {
                    Ok(views) => return Ok((ledger, views, model)),
                    // Catching up writes; a read needs none of it. With no room left, the
                    // views answer as they stand.
                    // The same measure by which the views took the failure for the disk's,
                    // not damage, and so kept them.
                    Err(e) => match crate::ledger::space::short_of_room(&self.location.store) {
                        Some(free) => {
                            drop(ledger);
                            let why = Stale::NoRoom {
                                failed: e.message.clone(),
                                free,
                            };
                            return self.as_they_stand(model, why).map_err(|_| e);
                        }
                        _ => return Err(e),
                    },
                }
            }
            Err(ledger::LedgerError::Lock(ledger::LockError::Busy { holder, .. })) => {
                Stale::Busy(holder)
            }
            // Let the waiting open say what is wrong.
            Err(_) => return self.open_views_with(model),
        };
        self.as_they_stand(model, why)
    }

    /// The views as they stand, not caught up, for a read that cannot catch them up (`why`),
    /// saying how far behind they are. Views that cannot be served as they stand, or fail to
    /// open (damage is repaired only by the store's holder), are waited for.
    fn as_they_stand(
        &self,
        model: ModelSlot,
        why: Stale,
    ) -> Result<(Ledger, Views, ModelSlot), CliError> {
        let ledger = Ledger::open_beside_writer(&self.location.store, &self.who)?;
        self.warn_damage(&ledger);
        let Ok(Some((views, behind))) =
            Views::beside_writer(&ledger, model.id.as_deref(), self.tz.clone())
        else {
            drop(ledger);
            return self.open_views_with(model);
        };
        if behind > 0 {
            let (cause, then) = match &why {
                Stale::Busy(holder) => (
                    format!("the store is busy, {holder}"),
                    "run it again once that finishes to see them",
                ),
                Stale::NoRoom { failed, free } => (
                    format!(
                        "the views could not be brought up to date ({failed}), and the disk holding {} is full ({} KB free)",
                        self.location.store.display(),
                        free / 1024
                    ),
                    "free some room and run it again to see them",
                ),
            };
            self.ui.note(&format!(
                "peat: {cause}: this answer is from the views as they stand, {behind} recorded changes behind; {then}."
            ));
        }
        Ok((ledger, views, model))
    }

    /// Open the ledger and its views, caught up. A rebuild says so on stderr.
    pub(crate) fn open_views(&self) -> Result<(Ledger, Views, ModelSlot), CliError> {
        self.open_views_with(self.model_slot()?)
    }

    /// The one-shot model, already loading on a thread of its own.
    fn prefetched_model(&self, query: &str) -> Result<ModelSlot, CliError> {
        let mut model = self.model_slot()?;
        model.prefetch(query);
        Ok(model)
    }

    fn open_views_with(&self, model: ModelSlot) -> Result<(Ledger, Views, ModelSlot), CliError> {
        self.with_views(self.open(Mode::Existing)?, model)
    }

    /// The views of the locked `ledger`, caught up (rebuilt if they must be).
    fn with_views(
        &self,
        ledger: Ledger,
        mut model: ModelSlot,
    ) -> Result<(Ledger, Views, ModelSlot), CliError> {
        let views = self.caught_up(&ledger, &mut model)?;
        Ok((ledger, views, model))
    }

    fn caught_up(&self, ledger: &Ledger, model: &mut ModelSlot) -> Result<Views, CliError> {
        let ui = self.ui;
        let views =
            crate::views::stamp::open_recovering(ledger, model, self.tz.clone(), &mut |line| {
                ui.note(line)
            })?;
        Ok(views)
    }
}

/// Why a read answers from views it could not catch up.
enum Stale {
    /// A writer holds the ledger (as it names itself).
    Busy(String),
    /// Catching up failed (`failed` says how) with `free` bytes left on the store's disk.
    NoRoom { failed: String, free: u64 },
}
