use clap::{Args, Subcommand};
use std::io::Write;
use std::path::Path;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::hook;
use crate::cli::hook::install::{self, Harness, Outcome};
use crate::cli::hook::mcp_entry;
use crate::cli::shared::{self, shown};
use crate::ledger::Mode;

/// The hook every harness moment runs (reads the harness's JSON on stdin)
///
/// SessionStart records this workspace's current session and prints the previous closing
/// message here (as JSON where the harness reads context so: Gemini CLI, Qwen Code, Cursor,
/// Copilot CLI, Cline); the end of a turn (Stop, AfterAgent, agentStop, Cline's
/// TaskComplete), compaction and the end of a session capture the transcript in a detached
/// process, which then sweeps every known root for sessions no hook announced (Goose's
/// hooks name no transcript: its capture is the sweep). It always exits 0, prints nothing
/// but SessionStart's lines (and Cline's `{"cancel":false}`), and logs its own failures to
/// .peat/hook.log. `peat hook install` wires it into Claude Code, Codex, Gemini CLI, Qwen
/// Code, Cursor, Copilot CLI, Factory droid, Goose or Cline.
#[derive(Args, Debug, Default)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct HookArgs {
    /// Act as this event, whatever stdin's hook_event_name says
    #[arg(long, value_name = "NAME")]
    pub(crate) event: Option<String>,

    /// The harness that runs this hook (claude, codex, gemini, qwen, cursor, copilot, droid,
    /// opencode, goose, cline), whatever its payload suggests; a name peat does not know is
    /// ignored
    #[arg(long, value_name = "NAME")]
    pub(crate) agent: Option<String>,

    #[command(subcommand)]
    pub(crate) command: Option<HookCommand>,
}

#[derive(Subcommand, Debug)]
pub(crate) enum HookCommand {
    Install(InstallArgs),
}

/// Wire `peat hook` into this project's Claude Code (or another agent's) settings, and lay
/// the skill
///
/// Merges into .claude/settings.json (--local: .claude/settings.local.json; --codex:
/// .codex/hooks.json; --agent gemini: .gemini/settings.json, qwen: .qwen/settings.json,
/// cursor: .cursor/hooks.json, copilot: .github/hooks/peat.json, droid:
/// .factory/settings.json, goose: the plugin .agents/plugins/peat/hooks/hooks.json) at the
/// repository root, keeping every other setting and every other tool's hooks, and replacing
/// older peat entries. Running it again changes nothing. Also writes the skill where that
/// agent discovers skills (.claude/skills/peat/SKILL.md, .agents/skills for Codex,
/// .gemini/skills, .qwen/skills, .cursor/skills, .github/skills, .factory/skills,
/// .goose/skills, .cline/skills) and creates the ledger if there is none, so the hooks
/// record from now on. OpenCode (--agent opencode) gets a plugin, .opencode/plugins/peat.js,
/// that runs the hook when a session goes idle; Cline (--agent cline) a script under each
/// of its hooks' names in .clinerules/hooks (one of the user's own there is left alone, and
/// said); Pi takes extensions, not hooks: its sessions are caught up by the sweep every
/// other hook's capture runs (and by `peat import`).
#[derive(Args, Debug, Default)]
pub(crate) struct InstallArgs {
    /// Codex: .codex/hooks.json and .agents/skills (trust the hook once in Codex's /hooks)
    #[arg(long, conflicts_with = "local")]
    pub(crate) codex: bool,
    /// Claude Code's uncommitted .claude/settings.local.json
    #[arg(long)]
    pub(crate) local: bool,
    /// Another agent: gemini, qwen, cursor, copilot, droid, goose, opencode (a plugin) or
    /// cline (scripts); claude and codex as above
    #[arg(long, value_name = "NAME", conflicts_with_all = ["codex", "local"])]
    pub(crate) agent: Option<String>,
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
            let agent = args
                .agent
                .as_deref()
                .map(hook::Agent::named)
                .unwrap_or_default();
            let out = hook::run(ctx, args.event.as_deref(), agent);
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

fn harness_of(a: &InstallArgs) -> Result<Harness, CliError> {
    if let Some(name) = &a.agent {
        return Harness::named(name).ok_or_else(|| {
            CliError::user(format!("no hooks for an agent named {name:?}")).hint(
                "Name one of claude, codex, gemini, qwen, cursor, copilot, droid, goose, opencode, cline. Pi takes no hooks: `peat import` and every other agent's hook catch its sessions up.",
            )
        });
    }
    Ok(if a.codex {
        Harness::Codex
    } else {
        Harness::Claude { local: a.local }
    })
}

fn run_install(ctx: &Ctx, a: &InstallArgs) -> Result<u8, CliError> {
    let harness = harness_of(a)?;
    let hook = install::HookCommand::of(ctx);
    if a.print {
        let mut out = std::io::stdout().lock();
        out.write_all(install::printed(harness, &hook).as_bytes())?;
        return Ok(0);
    }
    let root = shared::install_root(ctx);
    if a.check {
        return check(ctx, a, &root, &hook);
    }
    ensure_ledger(ctx)?;
    install_harness(ctx, harness, &root, &hook)?;
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
    hook: &install::HookCommand,
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
        if install::runs_peat(harness, &config) {
            ctx.ui.warn(&format!(
                "{} also runs peat hook, so each moment is captured twice: remove peat's entries from one of them.",
                shown(ctx, &config)
            ));
        }
    } else {
        match install::install_for(harness, &config, hook).map_err(CliError::user)? {
            Outcome::Written => ctx.ui.note(&format!(
                "✓ {}: peat hook on {}",
                shown(ctx, &config),
                harness.moments()
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
        Harness::Other(_) | Harness::OpenCode | Harness::Cline => {}
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
fn check(
    ctx: &Ctx,
    a: &InstallArgs,
    root: &Path,
    hook: &install::HookCommand,
) -> Result<u8, CliError> {
    let harnesses = if a.codex || a.local || a.agent.is_some() {
        vec![harness_of(a)?]
    } else {
        let home = ctx.home.as_deref();
        shared::agents(root, (&ctx.claude_home, &ctx.codex_home), home, true)
    };
    let mut problems = Vec::new();
    for harness in harnesses {
        let wiring = shared::wiring(ctx, harness, root, hook)?;
        for line in wiring.ok {
            ctx.ui.note(&format!("✓ {line}"));
        }
        problems.extend(wiring.missing);
        match mcp_entry::check(ctx, harness).map_err(CliError::user)? {
            Some(Ok(line)) => ctx.ui.note(&format!("✓ {line}")),
            Some(Err(missing)) => problems.push(missing),
            None => {}
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
