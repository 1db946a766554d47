use clap::{Args, Subcommand};
use serde_json::Value;
use std::io::Write;
use std::path::Path;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::hook::install::{self, Harness, Outcome};
use crate::cli::hook::mcp_entry;
use crate::cli::hook::{self, EVENTS};
use crate::cli::shared::{self, shown};
use crate::ledger::Mode;

/// The hook every harness moment runs (reads the harness's JSON on stdin)
///
/// SessionStart records this workspace's current session and prints the previous closing
/// message here; Stop, PreCompact and SessionEnd capture the transcript in a detached
/// process. It always exits 0, prints nothing but SessionStart's lines, and logs its own
/// failures to .peat/hook.log. `peat hook install` wires it into Claude Code or Codex.
#[derive(Args, Debug, Default)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct HookArgs {
    /// Act as this event, whatever stdin's hook_event_name says
    #[arg(long, value_name = "NAME")]
    pub(crate) event: Option<String>,

    #[command(subcommand)]
    pub(crate) command: Option<HookCommand>,
}

#[derive(Subcommand, Debug)]
pub(crate) enum HookCommand {
    Install(InstallArgs),
}

/// Wire `peat hook` into this project's Claude Code (or Codex) settings, and lay the skill
///
/// Merges into .claude/settings.json (--local: .claude/settings.local.json; --codex:
/// .codex/hooks.json) at the repository root, keeping every other setting and every other
/// tool's hooks, and replacing older peat entries. Running it again changes nothing. Also
/// writes the skill (.claude/skills/peat/SKILL.md, or .agents/skills/peat/SKILL.md for
/// Codex) and creates the ledger if there is none, so the hooks record from now on.
#[derive(Args, Debug, Default)]
pub(crate) struct InstallArgs {
    /// Codex: .codex/hooks.json and .agents/skills (trust the hook once in Codex's /hooks)
    #[arg(long, conflicts_with = "local")]
    pub(crate) codex: bool,
    /// Claude Code's uncommitted .claude/settings.local.json
    #[arg(long)]
    pub(crate) local: bool,
    /// Only say whether the hooks and skill are in place, for every agent installed here or
    /// found on this machine (or the one --codex or --local names); exit 1 if not
    #[arg(long, conflicts_with = "print")]
    pub(crate) check: bool,
    /// Print the settings fragment instead of writing anything
    #[arg(long)]
    pub(crate) print: bool,
}

pub(crate) fn run(ctx: &Ctx, args: &HookArgs) -> Result<u8, CliError> {
    match &args.command {
        Some(HookCommand::Install(a)) => run_install(ctx, a),
        None => {
            let out = hook::run(ctx, args.event.as_deref());
            if !out.is_empty() {
                // The harness may have stopped listening: nothing to do about it.
                let mut stdout = std::io::stdout().lock();
                let _ = stdout.write_all(out.as_bytes());
                let _ = stdout.flush();
            }
            Ok(0)
        }
    }
}

fn harness_of(a: &InstallArgs) -> Harness {
    if a.codex {
        Harness::Codex
    } else {
        Harness::Claude { local: a.local }
    }
}

fn run_install(ctx: &Ctx, a: &InstallArgs) -> Result<u8, CliError> {
    let harness = harness_of(a);
    let entry = install::entry(&install::this_hook_command(ctx));
    if a.print {
        let mut out = std::io::stdout().lock();
        out.write_all(install::render(&install::snippet(&entry)).as_bytes())?;
        return Ok(0);
    }
    let root = shared::install_root(ctx);
    if a.check {
        return check(ctx, a, &root, &entry);
    }
    ensure_ledger(ctx)?;
    install_harness(ctx, harness, &root, &entry)?;
    Ok(0)
}

/// Create the ledger if there is none, so the hooks record from the first session on.
/// Returns whether it was created.
pub(crate) fn ensure_ledger(ctx: &Ctx) -> Result<bool, CliError> {
    if crate::ledger::recorded(&ctx.location.store) {
        return Ok(false);
    }
    drop(ctx.open(Mode::Create)?);
    ctx.ui.note(&format!(
        "✓ {}: ledger created",
        shown(ctx, &ctx.location.store)
    ));
    Ok(true)
}

/// Merge the hooks and lay the skill for one harness, saying what changed on stderr.
pub(crate) fn install_harness(
    ctx: &Ctx,
    harness: Harness,
    root: &Path,
    entry: &Value,
) -> Result<(), CliError> {
    let config = harness.config_path(root);
    let skill = harness.skill_path(root);
    // Hooks installed for every project (home-manager's module does this) already run here:
    // a second set would capture every moment twice.
    let user = shared::user_level(ctx, harness);
    if user.has_hooks() {
        ctx.ui.note(&format!(
            "= {}: peat hook installed at user level; nothing added to {}",
            shown(ctx, &user.config),
            shown(ctx, &config)
        ));
        if install::read_config(&config)
            .ok()
            .flatten()
            .is_some_and(|v| install::runs_peat_on_every_event(&v))
        {
            ctx.ui.warn(&format!(
                "{} also runs peat hook, so each moment is captured twice: remove peat's entries from one of them.",
                shown(ctx, &config)
            ));
        }
    } else {
        match install::install_config(&config, entry).map_err(CliError::user)? {
            Outcome::Written => ctx.ui.note(&format!(
                "✓ {}: peat hook on {}",
                shown(ctx, &config),
                EVENTS.join(", ")
            )),
            Outcome::Current => ctx
                .ui
                .note(&format!("= {}: already current", shown(ctx, &config))),
        }
    }
    if let Some(at) = user.current_skill() {
        ctx.ui.note(&format!(
            "= {}: the skill is installed at user level",
            shown(ctx, at)
        ));
    } else {
        match install::install_skill(&skill).map_err(CliError::user)? {
            Outcome::Written => ctx.ui.note(&format!("✓ {}: written", shown(ctx, &skill))),
            Outcome::Current => ctx
                .ui
                .note(&format!("= {}: already current", shown(ctx, &skill))),
        }
    }
    mcp_entry::register(ctx, harness).map_err(CliError::user)?;
    notes(ctx, harness, root);
    Ok(())
}

/// What the person must still know: Codex's trust step, and where Claude Code must start.
fn notes(ctx: &Ctx, harness: Harness, root: &Path) {
    match harness {
        Harness::Codex => ctx.ui.note(
            "  Codex runs no hook until it is trusted: open /hooks in the Codex CLI and trust it (again after any change to .codex/hooks.json).",
        ),
        Harness::Claude { .. } => {
            if ctx.cwd != root {
                ctx.ui.note(&format!(
                    "  Claude Code reads project settings only in the folder it starts in: start it in {}.",
                    root.display()
                ));
            }
            for dir in install::shadowing_claude_dirs(&ctx.cwd, root) {
                ctx.ui.warn(&format!(
                    "{} has its own .claude/: a session started there does not run these hooks.",
                    dir.display()
                ));
            }
        }
    }
    if let Some(off) = hook::paused_by(&ctx.location) {
        ctx.ui.warn(&format!(
            "hooks are paused by {}: remove it to record.",
            off.display()
        ));
    }
}

/// Say whether the hooks and skill are in place: for the harness named (`--codex`,
/// `--local`), else for every agent installed here or found on this machine, and whether
/// there is a ledger for them to record into. Exit 1, naming the fix, when anything is not.
fn check(ctx: &Ctx, a: &InstallArgs, root: &Path, entry: &Value) -> Result<u8, CliError> {
    let harnesses = if a.codex || a.local {
        vec![harness_of(a)]
    } else {
        shared::agents(root, (&ctx.claude_home, &ctx.codex_home), true)
    };
    let mut problems = Vec::new();
    for harness in harnesses {
        let wiring = shared::wiring(ctx, harness, root, entry)?;
        for line in wiring.ok {
            ctx.ui.note(&format!("✓ {line}"));
        }
        problems.extend(wiring.missing);
        match mcp_entry::check(ctx, harness).map_err(CliError::user)? {
            Ok(line) => ctx.ui.note(&format!("✓ {line}")),
            Err(missing) => problems.push(missing),
        }
        notes(ctx, harness, root);
    }
    if crate::ledger::recorded(&ctx.location.store) {
        ctx.ui.note(&format!(
            "✓ {}: ledger present",
            shown(ctx, &ctx.location.store)
        ));
    } else {
        problems.push(format!(
            "{}: no ledger, so the hooks record nothing — run: peat hook install",
            shown(ctx, &ctx.location.store)
        ));
    }
    if problems.is_empty() {
        return Ok(0);
    }
    let last = problems.pop().unwrap_or_default();
    for p in problems {
        ctx.ui.warn(&p);
    }
    Err(CliError::not_found(last))
}
