use clap::Args;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::cli::commands::hook::{ensure_ledger, install_harness};
use crate::cli::commands::import::Found;
use crate::cli::ctx::Ctx;
use crate::cli::error::CliError;
use crate::cli::hook::install;
use crate::cli::shared::{install_root, shown};
use crate::embed::artifacts::{self, Resolution};
use crate::embed::fetch;

/// Set peat up in this project: ledger, hooks, model, the transcripts so far, the brief
///
/// Creates the ledger, wires `peat hook` into the agents present (Claude Code, Codex; Claude
/// Code when neither is found), fetches the pinned embedding model (or says how), captures
/// this project's existing transcripts, and shows the brief. Safe to run again: what is
/// already in place is left as it is.
#[derive(Args, Debug, Default)]
pub(crate) struct SetupArgs {
    /// Don't fetch the embedding model (search stays keyword-only until `peat model fetch`)
    #[arg(long)]
    pub(crate) no_model: bool,
}

pub(crate) fn run(ctx: &Ctx, args: &SetupArgs) -> Result<u8, CliError> {
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
    let entry = install::entry(&install::this_hook_command(ctx));
    for harness in crate::cli::shared::agents(&root, (claude_home, codex_home), true) {
        install_harness(ctx, harness, &root, &entry)?;
    }

    if args.no_model {
        ctx.ui.note(
            "- model: not fetched (--no-model); search is keyword-only until `peat model fetch`",
        );
    } else {
        fetch_model(ctx);
    }

    let found = project_transcripts(&root, claude_home, codex_home);
    let done = super::import::import_files(ctx, found)?;
    ctx.ui.note(&format!("✓ {} of this project", done.line()));

    // A project with no past sessions has no brief yet: the next step is an agent's
    // session here, not another setup.
    if !ctx.json && crate::cli::commands::brief::assemble(ctx, 1)?.events == 0 {
        ctx.ui.note(
            "\nNothing to brief yet: this project has no past agent sessions.\nStart Claude Code or Codex here; the hooks record the session as it runs, and `peat` briefs you on it (the next session starts with it too).",
        );
        return Ok(0);
    }
    // Set up is done whatever the brief found.
    crate::cli::commands::brief::run(ctx, &crate::cli::commands::brief::BriefArgs::default())
        .map(|_| 0)
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

/// This project's transcripts: Claude Code session folders whose cwd is `root` or under it
/// (found by Claude Code's folder name, confirmed by a recorded cwd when the name is only a
/// prefix), and Codex rollouts whose first line (`session_meta`) names a cwd under `root`;
/// with the folders that could not be read on the way.
pub(crate) fn project_transcripts(root: &Path, claude_home: &Path, codex_home: &Path) -> Found {
    let roots = root_forms(root);
    let mut ours = Found::default();
    let projects = claude_home.join("projects");
    let slugs: Vec<String> = roots
        .iter()
        .map(|r| crate::cli::hook::claude_slug(r))
        .collect();
    if let Ok(dirs) = std::fs::read_dir(&projects) {
        for dir in dirs.flatten() {
            let name = dir.file_name().to_string_lossy().into_owned();
            let path = dir.path();
            if !path.is_dir() {
                continue;
            }
            // Claude Code cuts long names at 200 characters and appends a hash.
            let exact = slugs.contains(&name);
            let prefix = slugs
                .iter()
                .any(|s| name.starts_with(&s[..s.len().min(200)]));
            if !exact && !prefix {
                continue;
            }
            let mut found = Found::default();
            found.walk(&path);
            ours.unreadable.extend(found.unreadable);
            let this_project = exact
                || found
                    .files
                    .iter()
                    .find_map(|f| first_value(f, "cwd"))
                    .is_some_and(|cwd| under(&cwd, &roots));
            if this_project {
                ours.files.extend(found.files);
            }
        }
    }
    for dir in ["sessions", "archived_sessions"] {
        let mut found = Found::default();
        found.walk(&codex_home.join(dir));
        ours.unreadable.extend(found.unreadable);
        ours.files.extend(found.files.into_iter().filter(|f| {
            let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
            name.is_some_and(|n| n.starts_with("rollout-"))
                && rollout_cwd(f).is_some_and(|cwd| under(&cwd, &roots))
        }));
    }
    ours
}

/// `root` as given and as the file system resolves it (a harness records either).
fn root_forms(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.to_path_buf()];
    if let Ok(real) = std::fs::canonicalize(root)
        && real != root
    {
        out.push(real);
    }
    out
}

fn under(cwd: &str, roots: &[PathBuf]) -> bool {
    let cwd = Path::new(cwd);
    roots.iter().any(|r| cwd.starts_with(r))
}

/// The cwd a Codex rollout's first line (`session_meta`) records.
fn rollout_cwd(path: &Path) -> Option<String> {
    let line = first_line(path)?;
    let v: serde_json::Value = serde_json::from_str(&line).ok()?;
    let meta = if v.get("type").and_then(|t| t.as_str()) == Some("session_meta") {
        v.get("payload")?
    } else {
        &v
    };
    meta.get("cwd")?.as_str().map(str::to_string)
}

/// The first string `key` in the first 50 lines of a transcript (Claude Code's `cwd`).
fn first_value(path: &Path, key: &str) -> Option<String> {
    let reader = open_text(path)?;
    for line in reader.lines().take(50) {
        let line = line.ok()?;
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line)
            && let Some(s) = v.get(key).and_then(|c| c.as_str())
            && !s.is_empty()
        {
            return Some(s.to_string());
        }
    }
    None
}

/// The first line of a transcript, read no further than 1 MiB.
fn first_line(path: &Path) -> Option<String> {
    let reader = open_text(path)?;
    let mut line = String::new();
    reader.take(1 << 20).read_line(&mut line).ok()?;
    Some(line)
}

/// A transcript for reading lines, decompressing a `.zst` rollout.
fn open_text(path: &Path) -> Option<Box<dyn BufRead>> {
    let file = std::fs::File::open(path).ok()?;
    if path.extension().is_some_and(|e| e == "zst") {
        let decoder = zstd::stream::read::Decoder::new(file).ok()?;
        Some(Box::new(BufReader::new(decoder)))
    } else {
        Some(Box::new(BufReader::new(file)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn only_this_projects_transcripts_are_chosen() {
        let t = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(t.path()).unwrap();
        let root = base.join("acme-api");
        fs::create_dir_all(&root).unwrap();
        let claude = base.join("claude");
        let codex = base.join("codex");
        let slug = crate::cli::hook::claude_slug(&root);
        let line = |cwd: &Path| format!("{{\"type\":\"user\",\"cwd\":\"{}\"}}\n", cwd.display());
        let write = |p: PathBuf, text: String| {
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, text).unwrap();
            p
        };
        let here = write(claude.join(format!("projects/{slug}/a.jsonl")), line(&root));
        let sub = write(
            claude.join(format!("projects/{slug}-src/b.jsonl")),
            line(&root.join("src")),
        );
        // A sibling whose name starts the same: `acme-api-old` is not under `acme-api`.
        write(
            claude.join(format!("projects/{slug}-old/c.jsonl")),
            line(&base.join("acme-api-old")),
        );
        write(
            claude.join("projects/-elsewhere/d.jsonl"),
            line(Path::new("/elsewhere")),
        );
        let meta = |cwd: &Path| {
            format!(
                "{{\"timestamp\":\"2026-05-04T10:15:02.311Z\",\"type\":\"session_meta\",\"payload\":{{\"id\":\"x\",\"cwd\":\"{}\"}}}}\n",
                cwd.display()
            )
        };
        let rollout = write(
            codex.join("sessions/2026/05/04/rollout-2026-05-04T10-15-02-x.jsonl"),
            meta(&root),
        );
        write(
            codex.join("sessions/2026/05/04/rollout-2026-05-04T11-00-00-y.jsonl"),
            meta(Path::new("/elsewhere")),
        );
        let zst = codex.join("archived_sessions/rollout-2026-05-01T10-00-00-z.jsonl.zst");
        fs::create_dir_all(zst.parent().unwrap()).unwrap();
        fs::write(
            &zst,
            zstd::encode_all(meta(&root.join("lib")).as_bytes(), 3).unwrap(),
        )
        .unwrap();

        let mut got = project_transcripts(&root, &claude, &codex).files;
        got.sort();
        let mut want = vec![here, sub, rollout, zst];
        want.sort();
        assert_eq!(got, want);
    }
}
