use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::shared::attribution_error;
use crate::reads::attribution::{Attributed, When, attribute};
use crate::reads::files::Wanted;
use crate::reads::trace::{Header, Traced, record};
use crate::reads::vcs::{FileHistory, Repo, commit_diff, resolve_commit, revision_name};
use crate::views::Views;
use crate::vocab::diff::added_numbered;

/// Export what peat attributes as an Agent Trace record (JSON)
///
/// Agent Trace (v0.1.0) is the open format tools exchange attribution in: files, the
/// conversations that wrote their lines, line ranges with content hashes, and the revision the
/// line numbers refer to. `peat trace FILE` traces every line of the file as it is now (the
/// revision is the commit the working copy sits on; `metadata."dev.peat".differs` says
/// whether the file differs from it). `peat trace COMMIT` traces the lines the commit added,
/// in each file it changed, as the commit holds them (a git hash or prefix, or a jj change
/// id).
///
/// Lines a recorded edit wrote are `ai`, one conversation per session (`peat://session/ID`,
/// with the model that made its edits as `provider/model`, where the transcript names it, and
/// the prompts its edits answered as related `prompt` links); lines blame says a person
/// wrote (committed with no recorded edit behind them, or changed and not committed) are
/// `human`; lines from before the record, or that nothing settles, are `unknown`. Each range
/// carries `sha256:` of its lines joined by newlines. What peat adds to the spec is under
/// `dev.peat`. The record is printed indented; `--json` prints it on one line. Exit 1 when no
/// recorded edit touched what was asked (the record then lists no file).
#[derive(Args, Debug)]
pub(crate) struct TraceArgs {
    /// A file, or a commit (hash, prefix or jj change id)
    #[arg(value_name = "FILE|COMMIT")]
    pub(crate) target: String,
}

pub(crate) fn run(ctx: &Ctx, args: &TraceArgs) -> Result<u8, CliError> {
    let path = ctx.cwd.join(&args.target);
    if path.exists() && !path.is_file() {
        return Err(CliError::user(format!(
            "{} is a directory: trace takes a file or a commit",
            args.target
        ))
        .hint("Name one file (`peat trace src/main.rs`) or a commit by its hash."));
    }
    let (_ledger, views, _model) = ctx.read_views()?;
    let traced = if path.is_file() {
        trace_file(ctx, &views, &args.target)?
    } else if let Some(commit) = resolve_commit(&ctx.cwd, &args.target) {
        trace_commit(ctx, &views, &args.target, &commit)?
    } else {
        return Err(CliError::user(format!(
            "{} is neither a file here nor a commit of this repository",
            args.target
        ))
        .hint(
            "Give a file that exists, or a commit's hash (7 to 40 hex digits) or jj change id.",
        ));
    };
    let header = Header {
        id: random_id()?,
        now_ms: ctx.now_ms,
        revision: traced.revision,
        detail: traced.detail,
    };
    let files: Vec<Traced<'_>> = traced
        .files
        .iter()
        .map(|(path, attributed, lines)| Traced {
            path: path.clone(),
            attributed,
            lines: lines.clone(),
        })
        .collect();
    let trace = record(&views, &files, header)?;
    for path in &traced.unrecorded {
        ctx.ui.note(&format!(
            "peat: no recorded edit touched {path}: it is not in the record"
        ));
    }
    let mut out = std::io::stdout().lock();
    if ctx.json {
        serde_json::to_writer(&mut out, &trace).map_err(std::io::Error::from)?;
    } else {
        serde_json::to_writer_pretty(&mut out, &trace).map_err(std::io::Error::from)?;
    }
    writeln!(out)?;
    // Nothing attributed is nothing found, as for every read; the record still says so.
    Ok(if traced.files.is_empty() { 1 } else { 0 })
}

/// What was traced, before it becomes a record.
struct Gathered {
    /// Each file's path in the record, its attribution, and the lines traced (`None`: all).
    files: Vec<(String, Attributed, Option<Vec<usize>>)>,
    /// Files asked about that no recorded edit touched.
    unrecorded: Vec<String>,
    revision: Option<(crate::vocab::event::Vcs, String)>,
    detail: serde_json::Value,
}

fn trace_file(ctx: &Ctx, views: &Views, typed: &str) -> Result<Gathered, CliError> {
    let wanted = Wanted {
        dir: false,
        ..crate::cli::shared::wanted(ctx, typed)
    };
    let abs = PathBuf::from(&wanted.abs);
    let current = std::fs::read_to_string(&abs).map_err(|e| {
        CliError::user(format!("cannot read {typed} as text: {e}"))
            .hint("Trace reads text files; `peat FILE` lists the recorded edits of any file.")
    })?;
    let mut past = FileHistory::of(&abs);
    if let Some(history) = &past {
        history.annotate_in_background();
    }
    let repo = Repo::of_file(&abs);
    let record_path = repo
        .as_ref()
        .map(|(_, rel)| rel.clone())
        .or_else(|| wanted.rel.clone())
        .unwrap_or_else(|| wanted.abs.clone());
    let sits_on = past.as_ref().and_then(FileHistory::sitting_on);
    let revision = match (&repo, &sits_on) {
        (Some((repo, _)), Some(then)) => Some(revision_name(repo, &then.commit)),
        _ => None,
    };
    let mut detail = serde_json::json!({
        "traced": "file",
        "target": typed,
        "behind": views.behind(),
    });
    if let Some(then) = &sits_on {
        detail["commit"] = then.commit.clone().into();
        detail["differs"] = (then.text != current).into();
    }
    let attributed = attribute(views, &wanted, &mut past, When::Now(&current))
        .map_err(|e| attribution_error(views, e, typed, None))?;
    let (files, unrecorded) = match attributed {
        Some(a) => (vec![(record_path, a, None)], Vec::new()),
        None => (Vec::new(), vec![record_path]),
    };
    Ok(Gathered {
        files,
        unrecorded,
        revision,
        detail,
    })
}

fn trace_commit(
    ctx: &Ctx,
    views: &Views,
    typed: &str,
    commit: &crate::reads::vcs::Resolved,
) -> Result<Gathered, CliError> {
    let (repo, diff) = commit_diff(&ctx.cwd, &commit.hash).ok_or_else(|| {
        CliError::user(format!("cannot read what commit {typed} changed"))
            .hint("git (or jj) could not show it: check `git show --stat` on it.")
    })?;
    let ts_ms = commit.ts_ms.unwrap_or(ctx.now_ms);
    let mut files = Vec::new();
    let mut unrecorded = Vec::new();
    for (rel, added) in added_numbered(&diff) {
        let Some(rel) = rel.filter(|p| p != "/dev/null") else {
            continue;
        };
        if added.is_empty() {
            continue;
        }
        let abs = repo.root.join(&rel);
        let Some(history) = FileHistory::of(&abs) else {
            unrecorded.push(rel);
            continue;
        };
        let then = history.committed(&commit.hash, ts_ms);
        let mut past = Some(history);
        let wanted = Wanted {
            dir: false,
            ..crate::cli::shared::wanted(ctx, &path_text(&abs))
        };
        match attribute(views, &wanted, &mut past, When::Committed(&then))
            .map_err(|e| attribution_error(views, e, &rel, Some(typed)))?
        {
            Some(a) => files.push((rel, a, Some(added.iter().map(|(n, _)| *n).collect()))),
            None => unrecorded.push(rel),
        }
    }
    Ok(Gathered {
        files,
        unrecorded,
        revision: Some(revision_name(&repo, &commit.hash)),
        detail: serde_json::json!({
            "traced": "commit",
            "target": typed,
            "commit": commit.hash,
            "subject": commit.subject,
            "behind": views.behind(),
        }),
    })
}

fn path_text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// A random (version 4) UUID, the record's id.
fn random_id() -> Result<uuid::Uuid, CliError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| CliError::user(format!("no randomness for the record's id: {e}")))?;
    Ok(uuid::Builder::from_random_bytes(bytes).into_uuid())
}
