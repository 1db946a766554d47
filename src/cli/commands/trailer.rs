use clap::Args;
use std::io::Write;

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::reads::commits::TRAILER;

/// Print the commit trailer that ties a commit to this session
///
/// `Peat-Session: <id>` for the session the agent runs in (as the SessionStart hook wrote it
/// to `.peat/current-session`). An agent that commits adds it with
/// `git commit --trailer "$(peat trailer)"`; `peat COMMIT` then names the session first,
/// before any other route.
#[derive(Args, Debug)]
pub(crate) struct TrailerArgs {}

pub(crate) fn run(ctx: &Ctx, _args: &TrailerArgs) -> Result<u8, CliError> {
    let session = crate::cli::shared::current_session(ctx)?;
    if ctx.json {
        let doc = serde_json::json!({ "key": TRAILER, "value": session, "trailer": format!("{TRAILER}: {session}") });
        writeln!(std::io::stdout(), "{doc}")?;
    } else {
        writeln!(std::io::stdout(), "{TRAILER}: {session}")?;
    }
    Ok(0)
}
