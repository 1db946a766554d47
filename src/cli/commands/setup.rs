use clap::Args;
use std::path::Path;

use crate::cli::commands::hook::{ensure_ledger, install_harness};
use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::hook::install;
use crate::cli::scope::Project;
use crate::cli::shared::{install_root, shown};
use crate::cli::transcripts::project_transcripts;
use crate::embed::artifacts::{self, Resolution};
use crate::embed::fetch;

/// Set peat up in this project: ledger, hooks, model, the transcripts so far, the brief
///
/// Creates the ledger, wires `peat hook` into the agents present (Claude Code, Codex; Claude
/// Code when neither is found), fetches the pinned embedding model (or says how), captures
/// this project's existing transcripts, and shows the brief. Safe to run again: what is
/// already in place is left as it is.
///
/// With --user: once for every project and every agent. One ledger in the user's data
/// directory ($PEAT_DATA_DIR, else $XDG_DATA_HOME/peat, else ~/.local/share/peat), the hooks
/// and skill in each agent's user-level settings, and every transcript on this machine.
/// A repository with a ledger of its own keeps using it; every other one records into the
/// user-level ledger, and its reads show its own sessions unless given --all-projects.
#[derive(Args, Debug, Default)]
pub(crate) struct SetupArgs {
    /// Don't fetch the embedding model (search stays keyword-only until `peat model fetch`)
    #[arg(long)]
    pub(crate) no_model: bool,
    /// Set up one user-level ledger and user-level hooks for every project and every agent
    #[arg(long)]
    pub(crate) user: bool,
}

pub(crate) fn run(ctx: &Ctx, args: &SetupArgs) -> Result<u8, CliError> {
    if args.user {
        return run_user(ctx, args);
    }
    let root = install_root(ctx);
    ctx.ui.note(&format!("peat: setting up {}", root.display()));
    if !ensure_ledger(ctx)? {
        ctx.ui.note(&format!(
            "= {}: ledger present",
            shown(ctx, &ctx.location.store)
        ));
    }

    if let Some(root) = &ctx.location.root {
        ignore_desk(ctx, root);
    }

    let (claude_home, codex_home) = (&ctx.claude_home, &ctx.codex_home);
    let hook = install::HookCommand::of(ctx);
    let home = ctx.home.as_deref();
    for harness in crate::cli::shared::agents(&root, (claude_home, codex_home), home, true) {
        install_harness(ctx, harness, &root, &hook)?;
    }

    if args.no_model {
        ctx.ui.note(
            "- model: not fetched (--no-model); search is keyword-only until `peat model fetch`",
        );
    } else {
        fetch_model(ctx);
    }

    let project = Project::of(&root).unwrap_or_else(|| Project::at(&root));
    let found = project_transcripts(&project, claude_home, codex_home);
    let what = super::import::Importing::Files(found, Some(&project));
    let done = super::import::import_files(ctx, what)?;
    ctx.ui.note(&format!("✓ {} of this project", done.line()));

    // A project with no past sessions has no brief yet: the next step is an agent's
    // session here, not another setup.
    if !ctx.json && crate::cli::commands::brief::assemble(ctx, 1)?.events == 0 {
        ctx.ui.note(
            "\nNothing to brief yet: this project has no past agent sessions.\nStart an agent here (Claude Code, Codex, Gemini CLI, Cursor, Copilot CLI, …); its hooks record the session as it runs, and `peat` briefs you on it (the next session starts with it too).",
        );
        return Ok(0);
    }
    // Set up is done whatever the brief found.
    crate::cli::commands::brief::run(ctx, &crate::cli::commands::brief::BriefArgs::default())
        .map(|_| 0)
}

/// `peat setup --user`: the user-level ledger, every agent's user-level hooks and skill,
/// the model, and every transcript on this machine.
fn run_user(ctx: &Ctx, args: &SetupArgs) -> Result<u8, CliError> {
    let Some(user) = ctx.at_user_store() else {
        return Err(CliError::user("no user data directory: HOME is not set")
            .hint("Set HOME, or PEAT_DATA_DIR to the folder the user-level ledger goes in."));
    };
    ctx.ui.note(&format!(
        "peat: setting up the user-level ledger at {}",
        user.location.store.display()
    ));
    if !ensure_ledger(&user)? {
        ctx.ui.note(&format!(
            "= {}: ledger present",
            user.location.store.display()
        ));
    }
    let hook = install::HookCommand::of(ctx);
    let home = ctx.home.clone().unwrap_or_default();
    let homes = (ctx.claude_home.as_path(), ctx.codex_home.as_path());
    for harness in crate::cli::shared::agents(&home, homes, Some(&home), true) {
        let at = crate::cli::shared::user_level(ctx, harness);
        let config = install::install_for(harness, &at.config, &hook).map_err(CliError::user)?;
        let skill = match at.current_skill() {
            Some(_) => install::Outcome::Current,
            None => install::install_skill(&at.skills[0]).map_err(CliError::user)?,
        };
        for (path, outcome) in [(&at.config, config), (&at.skills[0], skill)] {
            let mark = match outcome {
                install::Outcome::Written => "✓ written",
                install::Outcome::Current => "= already current",
            };
            ctx.ui.note(&format!("{mark}: {}", path.display()));
        }
        crate::cli::hook::mcp_entry::register(ctx, harness).map_err(CliError::user)?;
        if harness == install::Harness::Codex {
            ctx.ui.note(
                "  Codex runs no hook until it is trusted: open /hooks in the Codex CLI and trust it.",
            );
        }
    }
    if args.no_model {
        ctx.ui.note(
            "- model: not fetched (--no-model); search is keyword-only until `peat model fetch`",
        );
    } else {
        fetch_model(ctx);
    }
    let every = super::import::ImportArgs {
        dirs: Vec::new(),
        all: true,
    };
    let code = super::import::run(&user, &every)?;
    if ctx.location.reason.project_own() && crate::ledger::recorded(&ctx.location.store) {
        ctx.ui.note(&format!(
            "  This repository keeps its own ledger ({}), which its hooks and reads go on using; every project without one uses the user-level ledger.",
            ctx.location.store.display()
        ));
    }
    Ok(code)
}

/// The store holds everything the agents saw: `.peat/` goes into the repository's
/// `.gitignore` unless something already ignores it (git's own answer where git is
/// installed, else a `.peat` line in the file). Best effort: a failure is said, not fatal.
fn ignore_desk(ctx: &Ctx, root: &Path) {
    let by_git = std::process::Command::new("git")
        .args(["-C"])
        .arg(root)
        .args(["check-ignore", "-q", ".peat/"])
        .stderr(std::process::Stdio::null())
        .status()
        .ok()
        .and_then(|s| s.code())
        .filter(|c| *c == 0 || *c == 1);
    let file = root.join(".gitignore");
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let listed = text
        .lines()
        .any(|l| matches!(l.trim(), ".peat" | ".peat/" | "/.peat" | "/.peat/"));
    if by_git == Some(0) || listed {
        return;
    }
    let mut add = String::new();
    if !text.is_empty() && !text.ends_with('\n') {
        add.push('\n');
    }
    add.push_str(".peat/\n");
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .and_then(|mut f| std::io::Write::write_all(&mut f, add.as_bytes()));
    match written {
        Ok(()) => ctx.ui.note(&format!(
            "✓ {}: .peat/ added (the record stays out of commits)",
            shown(ctx, &file)
        )),
        Err(e) => ctx.ui.warn(&format!(
            "could not add .peat/ to {}: {e}; add it by hand",
            file.display()
        )),
    }
}

/// Install the pinned model if it is not; on failure, say exactly how to do it later.
fn fetch_model(ctx: &Ctx) {
    let later = "  search is keyword-only until then; to fetch it later: peat model fetch";
    let lock = match crate::embed::pinned() {
        Ok(l) => l,
        Err(e) => {
            ctx.ui.warn(&format!("the model cannot be fetched: {e}"));
            ctx.ui.note(later);
            return;
        }
    };
    let lookup = ctx.model_lookup.clone();
    if let Ok(Resolution::Found(_)) = artifacts::resolve(lock, &lookup) {
        ctx.ui
            .note(&format!("= model {}: already installed", lock.model.id));
        return;
    }
    let bytes = lock.installed_size(&crate::embed::lock::this_platform());
    let megabytes = (bytes + 500_000) / 1_000_000;
    ctx.ui.note(&format!(
        "peat: fetching the model {} (once, {megabytes} MB)…",
        lock.model.id
    ));
    let python = ctx.python.clone();
    match fetch::fetch(lock, &lookup, &python, &mut |line| {
        ctx.ui.note(&format!("  {line}"))
    }) {
        Ok(_) => match artifacts::resolve(lock, &lookup) {
            Ok(Resolution::Found(_)) => ctx.ui.note(&format!(
                "✓ model {}: installed; the semantic lane is on",
                lock.model.id
            )),
            _ => {
                ctx.ui.warn("the model is still missing a file for this platform: `peat model status` says which.");
                ctx.ui.note(later);
            }
        },
        Err(e) => {
            ctx.ui.warn(&format!("the model could not be fetched: {e}"));
            if let Some(h) = e.hint() {
                ctx.ui.note(&format!("  {h}"));
            }
            ctx.ui.note(later);
        }
    }
}
