use clap::Args;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::shared::resolve_in_views;
use crate::views::Views;
use crate::views::handle::Handles;
use crate::vocab::event::{Agent, SessionId};

/// Print the command that resumes a session in its own harness and folder
///
/// `cd '<folder>' && claude --resume <id>` for a Claude Code session, `codex resume <id>` for
/// Codex. A subagent cannot be resumed apart from the session that started it: that session
/// is resumed. `--exec` runs the command there, with this terminal.
#[derive(Args, Debug)]
pub(crate) struct ResumeArgs {
    /// The session (an id, a prefix, or a handle from `peat sessions`)
    pub(crate) session: String,
    /// Run it: the harness starts in the session's folder, in this terminal
    #[arg(long)]
    pub(crate) exec: bool,
}

/// How to resume a session.
#[derive(Debug, Serialize)]
struct Resume {
    /// The session asked about.
    session: SessionId,
    /// The session resumed: the one asked about, or the one that started it (a subagent).
    resumes: SessionId,
    agent: &'static str,
    cwd: String,
    argv: Vec<String>,
    /// The whole command, for a shell.
    command: String,
}

pub(crate) fn run(ctx: &Ctx, args: &ResumeArgs) -> Result<u8, CliError> {
    let (_ledger, views, _model) = ctx.read_views()?;
    let asked = resolve_in_views(ctx, &views, &args.session)?;
    let handles = Handles::new(&views.tables);
    let resume = plan(&views, &handles, asked)?;
    // The harness may run for hours: the views are not held open under it.
    let handles = handles.keep([&resume.session, &resume.resumes]);
    drop(views);
    if args.exec {
        return exec(&resume);
    }
    let mut out = std::io::stdout().lock();
    if ctx.json {
        serde_json::to_writer(&mut out, &resume).map_err(std::io::Error::from)?;
        writeln!(out)?;
    } else {
        if resume.resumes != resume.session {
            ctx.ui.note(&format!(
                "peat: {} is a subagent: resuming {}, the session that started it",
                handles.of(&resume.session),
                handles.of(&resume.resumes)
            ));
        }
        writeln!(out, "{}", resume.command)?;
    }
    Ok(0)
}

/// The session `asked` resumes as (its top session), and the command that does it.
fn plan(views: &Views, handles: &Handles, asked: SessionId) -> Result<Resume, CliError> {
    let mut top = asked.clone();
    let mut rollup = views.tables.session(&top)?.unwrap_or_default();
    // A subagent's parent may itself be one (a Codex thread spawned by a spawned thread).
    let mut hops = 0;
    while let Some(parent) = rollup.parent.clone() {
        let Some(up) = views.tables.session(&parent)? else {
            return Err(CliError::not_found(format!(
                "{} is a subagent of {parent}, which the record does not hold",
                handles.of(&top)
            ))
            .hint("A subagent is resumed through the session that started it: capture that session first (`peat import`)."));
        };
        top = parent;
        rollup = up;
        hops += 1;
        if hops > 64 {
            break;
        }
    }
    let agent = rollup.agent.ok_or_else(|| {
        CliError::user(format!(
            "the record does not say which harness ran {}",
            handles.of(&top)
        ))
        .hint("Its transcript named no harness; resume it from the harness itself.")
    })?;
    let argv = agent.resume(top.as_str()).ok_or_else(|| {
        CliError::user(format!(
            "{} was run by {}, which has no command to resume a session",
            handles.of(&top),
            agent.label()
        ))
        .hint(hint_for(agent))
    })?;
    let cwd = rollup.cwd.ok_or_else(|| {
        CliError::user(format!(
            "the record does not say which folder {} ran in",
            handles.of(&top)
        ))
        .hint(format!("Run `{}` in that folder.", quoted(&argv)))
    })?;
    let command = format!("cd {} && {}", quote(&cwd), quoted(&argv));
    Ok(Resume {
        session: asked,
        resumes: top,
        agent: agent.label(),
        cwd,
        argv,
        command,
    })
}

/// What to do about a session its harness cannot resume.
fn hint_for(agent: Agent) -> &'static str {
    match agent {
        Agent::Peat => "It is a restore: `peat restore --undo ID` undoes it.",
        _ => {
            "Start the harness in the session's folder and pick the session there; `peat log SESSION` shows what it did."
        }
    }
}

/// Run the command in the session's folder with this terminal, and exit as it exits.
fn exec(r: &Resume) -> Result<u8, CliError> {
    let dir = PathBuf::from(&r.cwd);
    if !dir.is_dir() {
        return Err(CliError::user(format!(
            "{} ran in {}, which is not a folder here any more",
            r.resumes, r.cwd
        ))
        .hint("Resume it where that folder is, or recreate it (a worktree, a clone)."));
    }
    let (program, rest) = r
        .argv
        .split_first()
        .expect("a resume command has a program");
    let status = std::process::Command::new(program)
        .args(rest)
        .current_dir(&dir)
        .status()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => CliError::not_found(format!(
                "{program} is not on PATH: it is what resumes a {} session",
                r.agent
            ))
            .hint(format!(
                "Install {program}, or run `{}` where it is.",
                r.command
            )),
            _ => CliError::from(e),
        })?;
    Ok(status.code().map_or(1, |c| u8::try_from(c).unwrap_or(1)))
}

/// `s` quoted for a POSIX shell where it needs it.
fn quote(s: &str) -> String {
    shlex::try_quote(s).map_or_else(|_| s.to_string(), |q| q.into_owned())
}

fn quoted(argv: &[String]) -> String {
    argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_quoted_so_a_shell_reads_it_back_whole() {
        for dir in [
            "/home/dev/acme",
            "/home/dev/acme api",
            "/it's \"here\"",
            "/a$b`c`",
        ] {
            let line = format!("cd {}", quote(dir));
            assert_eq!(
                shlex::split(&line),
                Some(vec!["cd".to_string(), dir.to_string()])
            );
        }
        assert_eq!(quote("/home/dev/acme"), "/home/dev/acme");
    }
}
