use clap::Args;
use std::io::Write;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;

/// Print the agent skill (SKILL.md): when to look something up, and how far to trust it
///
/// `peat hook install` lays the same file where Claude Code (.claude/skills/peat/) or
/// Codex (.agents/skills/peat/) discovers it.
#[derive(Args, Debug, Default)]
pub(crate) struct SkillArgs {}

pub(crate) fn run(_ctx: &Ctx, _args: &SkillArgs) -> Result<u8, CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(crate::cli::hook::install::SKILL.as_bytes())?;
    out.flush()?;
    Ok(0)
}
