use clap::Args;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::capture::{self, CaptureError, CaptureOptions};
use crate::cli::Ctx;
use crate::error::CliError;
use crate::ledger::{Mode, Written};

/// Capture every transcript on this machine (or under the given folders)
///
/// Without folders, reads ~/.claude/projects (or $CLAUDE_CONFIG_DIR/projects) and
/// ~/.codex/sessions and ~/.codex/archived_sessions (or under $CODEX_HOME). Idempotent and
/// incremental: a transcript already captured is only read from where it was left.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Folders to search for transcripts (*.jsonl, *.jsonl.zst), recursively
    #[arg(value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
}

/// The ledger is reopened this often during a long import, so hooks can get in between.
const HOLD_AT_MOST: Duration = Duration::from_secs(1);

pub fn run(ctx: &Ctx, args: &ImportArgs) -> Result<u8, CliError> {
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
    let mut files = Vec::new();
    for root in &roots {
        walk(root, &mut files);
    }
    files.sort();
    let bar = ctx.ui.progress(files.len() as u64, "importing");
    let opts = CaptureOptions::default();
    let mut total = Written::default();
    let (mut events, mut skipped, mut not_transcripts, mut failed) = (0usize, 0u64, 0usize, 0usize);
    let mut sessions = std::collections::BTreeSet::new();
    let mut ledger = None;
    let mut opened = Instant::now();
    for file in &files {
        if ledger.is_none() || opened.elapsed() > HOLD_AT_MOST {
            if let Some(l) = ledger.take() {
                crate::ledger::Ledger::sync(&l)?;
            }
            ledger = Some(ctx.open(Mode::Create)?);
            opened = Instant::now();
        }
        let Some(l) = ledger.as_mut() else { continue };
        match capture::capture_file(l, file, &opts) {
            Ok(r) => {
                total += r.written;
                events += r.events;
                skipped += r.skipped;
                if let Some(s) = r.session {
                    sessions.insert(s);
                }
            }
            Err(CaptureError::NotATranscript(_)) => not_transcripts += 1,
            Err(e) => {
                let e = CliError::from(e);
                if e.code != 1 {
                    return Err(e);
                }
                failed += 1;
                match &bar {
                    Some(b) => b.suspend(|| eprintln!("{e}")),
                    None => eprintln!("{e}"),
                }
            }
        }
        if let Some(b) = &bar {
            b.inc(1);
        }
    }
    let ledger = match ledger {
        Some(l) => l,
        None => ctx.open(Mode::Create)?,
    };
    ledger.sync()?;
    if let Some(b) = &bar {
        b.set_message("indexing");
    }
    super::capture::catch_up_views(ctx, &ledger, ctx.bulk_model_slot()?)?;
    drop(ledger);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mut line = format!(
        "imported {} transcripts ({} sessions): {events} events ({} new, {} revised)",
        files.len() - not_transcripts,
        sessions.len(),
        total.new,
        total.replaced
    );
    if skipped > 0 {
        line.push_str(&format!("; {skipped} bad lines skipped"));
    }
    if not_transcripts > 0 {
        line.push_str(&format!("; {not_transcripts} files were not transcripts"));
    }
    if failed > 0 {
        line.push_str(&format!("; {failed} files could not be read"));
    }
    ctx.ui.note(&line);
    if files.is_empty() {
        let looked: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
        ctx.ui
            .note(&format!("no transcripts found under {}", looked.join(", ")));
    }
    Ok(if failed > 0 { 1 } else { 0 })
}

fn default_roots(ctx: &Ctx) -> Vec<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let home = ctx.home.clone().unwrap_or_default();
    let claude = env("CLAUDE_CONFIG_DIR").unwrap_or_else(|| home.join(".claude"));
    let codex = env("CODEX_HOME").unwrap_or_else(|| home.join(".codex"));
    [
        claude.join("projects"),
        codex.join("sessions"),
        codex.join("archived_sessions"),
    ]
    .into_iter()
    .filter(|p| p.is_dir())
    .collect()
}

/// Every `*.jsonl` and `*.jsonl.zst` below `dir`, not following links to folders.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            walk(&path, out);
        } else if kind.is_file() || kind.is_symlink() && path.is_file() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.ends_with(".jsonl") || name.ends_with(".jsonl.zst") {
                out.push(path);
            }
        }
    }
}
